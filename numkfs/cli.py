"""The ``numkfs`` command line (also ``python -m numkfs``)."""
from __future__ import annotations

import argparse
import sys
import warnings

__all__ = ["main"]


class CLIError(Exception):
    """One clear line for the user, exit status 2."""


def _cmd_solvers(args) -> int:
    from . import solvers

    rows = solvers.available_solvers(check=True)
    heads = ["solver", "method", "version", "installed", "works"]
    table = [[r["name"], r["method"], r["version"], "yes" if r["installed"] else f"no ({r['install']})",
              {True: "yes", False: "NO", None: "-"}[r["works"]] + (f" ({r['error']})" if r.get("error") else "")]
             for r in rows]
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(heads)]
    print("  ".join(h.ljust(w) for h, w in zip(heads, widths)))
    print("  ".join("-" * w for w in widths))
    for t in table:
        print("  ".join(c.ljust(w) for c, w in zip(t, widths)))
    return 0 if all(r["works"] is not False for r in rows if r["installed"]) else 1


def _int_at_least(lo: int, too_small: str):
    """An argparse type: a whole number >= ``lo``; ``too_small`` words the
    refusal of a smaller one (formatted with the value ``v``)."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {lo}, got {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(too_small.format(v=v))
        return v

    return parse


_positive_int = _int_at_least(1, "must be >= 1, got {v}")
_folds = _int_at_least(2, "needs at least 2 folds, got {v}")

#: The largest ``--seed``: numpy's and scikit-learn's random states take seeds below 2**32.
MAX_SEED = 2**32 - 1


def _seed(text):
    """An argparse type: a random seed, a whole number in [0, :data:`MAX_SEED`]."""
    v = _int_at_least(0, "must be >= 0, got {v}")(text)
    if v > MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SEED} (2**32 - 1), got {v}")
    return v


def _check_output(path, flag):
    """Refuse an output path that cannot be written, before any computation."""
    import os

    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CLIError(f"{flag} {path}: is a directory; give a file name")
    if not os.path.isdir(folder):
        raise CLIError(f"{flag} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise CLIError(f"{flag} {path}: not writable")


def _check_plot(path, flag="--plot"):
    """Refuse a plot file matplotlib cannot write (no matplotlib, or an
    extension it does not know), before any computation.  A name without an
    extension is written as PNG under that very name (:func:`_save_plot`)."""
    import os

    if path is None:
        return
    _check_output(path, flag)
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise CLIError(f"{flag} needs matplotlib: pip install matplotlib") from None
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    formats = FigureCanvasBase.get_supported_filetypes()
    if ext and ext not in formats:
        raise CLIError(f"{flag} {path}: cannot write a .{ext} file; give a name ending in "
                       f"{', '.join('.' + f for f in sorted(formats))} (no extension: PNG)")


def _save_plot(fig, path, flag="--plot"):
    """Write ``fig`` to ``path`` (a name without an extension as PNG under that very name, where
    matplotlib would add .png) and say so."""
    import os

    import matplotlib.pyplot as plt

    try:
        fig.savefig(path, dpi=120, format=None if os.path.splitext(path)[1] else "png")
    except OSError as exc:
        raise CLIError(f"{flag} {path}: cannot write: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
    print(f"\nplot written to {path}")


def _quiet_warnings():
    """``-q``: hide warnings, except that a solver falling back to another
    (:class:`~numkfs.solvers.SolverFallbackWarning`) is still said, as one
    line ``numkfs: note: ...`` on stderr per distinct message.  Call inside
    ``warnings.catch_warnings()``, which restores the filters and
    ``warnings.showwarning``; :func:`main` does, around the whole command."""
    from .solvers.registry import SolverFallbackWarning

    shown = set()

    def note(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        if text not in shown:
            shown.add(text)
            print(f"numkfs: note: {text}", file=sys.stderr)

    warnings.simplefilter("ignore")
    warnings.simplefilter("always", SolverFallbackWarning)
    warnings.showwarning = note


def _load(args):
    from ._data_io import DataError, read_table

    try:
        return read_table(args.data, args.target)
    except DataError as exc:
        raise CLIError(str(exc)) from None


def _cmd_select(args) -> int:
    import json

    from .selection import METHODS, select

    if args.method not in METHODS:
        raise CLIError(f"unknown method {args.method!r}; choose one of {', '.join(METHODS)}")
    _check_plot(args.plot)
    _check_output(args.json, "--json")
    X, y, names, target, task = _load(args)
    tasks = METHODS[args.method]
    if args.task is None and task is None and len(tasks) == 1 and (tasks[0] == "classification"
                                                                   or y.dtype.kind in "fiu"):
        # a method that does one task reads a numeric CSV column as that task's target (class codes 1, 2, 3
        # for a classifier; a count for a regression method), instead of guessing from the values
        task = tasks[0]
    if args.n_features is not None and args.n_features > X.shape[1]:
        raise CLIError(f"--n-features {args.n_features}: the data has only {X.shape[1]} features")
    if args.cv > X.shape[0] and not (args.stability or args.fdr is not None):  # --stability/--fdr: no CV runs
        raise CLIError(f"--cv {args.cv}: more folds than the {X.shape[0]} rows of the data")
    task = args.task or task
    controlled = _controlled_params(args)
    from .model_selection import show_progress

    try:
        with show_progress(not args.quiet):
            res = select(X, y, args.method, task=task, n_features=args.n_features, cv=args.cv,
                         cv_rule=args.cv_rule, scoring=args.scoring, feature_names=names,
                         random_state=args.seed, verbose=not args.quiet, **controlled)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc).splitlines()[0].replace("fewer folds (cv)", "fewer folds (--cv)")) from None
    print(f"data: {args.data} ({X.shape[0]} samples, {X.shape[1]} features), target: {target}")
    print(res.summary())
    print()
    print(res.table(max_rows=None if args.all else TABLE_ROWS))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        if "stability" in res.extra:
            ax = res.estimator.plot()  # the stability path, threshold and region
        elif res.path is not None:
            ax = res.path.plot(mark=res.index)  # every method's chosen point, on its own path
        else:
            from .plotting import plot_weights

            ax = plot_weights(res.weights, res.feature_names, selected=res.selected)
            kn = res.extra.get("knockoffs")
            if kn is not None:  # the statistics (or e-values) and the knockoff+ threshold
                ax.set_xlabel(f"knockoff {kn['statistic']} (selected: >= threshold)")
                if kn["threshold"] < float("inf"):  # knockoff+'s T, or e-BH's p / (q k) on the e-values
                    ax.axvline(kn["threshold"], color="C3", lw=1, ls="--")
        ax.figure.tight_layout()
        _save_plot(ax.figure, args.plot)
    if args.json:
        from .model_selection import default_cv_rule

        params = {"method": args.method, "task": res.task, "n_features": args.n_features, "cv": args.cv,
                  "cv_rule": default_cv_rule(args.method, args.cv_rule), "scoring": args.scoring,
                  "seed": args.seed, "target": target}
        if args.stability or args.fdr is not None:
            params.update(stability=args.stability, fdr=args.fdr, n_resamples=args.n_resamples,
                          threshold=args.threshold)
        doc = dict(res.to_dict(), data=args.data, target=target, n_samples=int(X.shape[0]),
                   n_features=int(X.shape[1]), seed=args.seed, parameters=params, command=_command(args),
                   date=_utc_now(), versions=versions(), path=_path_json(res.path))
        from .selection import json_safe

        text = json.dumps(json_safe(doc), indent=2, allow_nan=False)
        try:
            with open(args.json, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise CLIError(f"--json {args.json}: cannot write: {exc.strerror or exc}") from None
        print(f"results written to {args.json}")
    return 0


def _controlled_params(args) -> dict:
    """select()'s keywords for ``--stability`` / ``--fdr`` (refusing the
    combinations that do not apply before any computation)."""
    if args.stability and args.fdr is not None:
        raise CLIError("--stability and --fdr are two ways of selecting; give one of them")
    if (args.stability or args.fdr is not None) and args.n_features is not None:
        raise CLIError("--n-features does not apply with --stability or --fdr")
    if not args.stability and (args.n_resamples is not None or args.threshold is not None):
        raise CLIError("--n-resamples and --threshold belong to --stability")
    if args.stability:
        out = {"stability": True}
        if args.n_resamples is not None:
            out["n_resamples"] = args.n_resamples
        if args.threshold is not None:
            out["threshold"] = args.threshold
        return out
    return {} if args.fdr is None else {"fdr": args.fdr}


def _open_unit(flag):
    """An argparse type: a float strictly between 0 and 1."""
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
        if not 0 < v < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be in (0, 1), got {v:g}")
        return v

    return parse


def _threshold(text):
    """An argparse type: a selection-probability threshold in (0.5, 1]."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0.5, 1], got {text!r}") from None
    if not 0.5 < v <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0.5, 1], got {v:g}")
    return v


#: Rows of the feature table ``numkfs select`` prints without ``--all``.
TABLE_ROWS = 30

#: The packages whose versions the JSON records (with numkfs's own).
DEPENDENCIES = ("numkfs", "numpy", "scipy", "numba", "scikit-learn", "cvxpy", "clarabel", "ecos", "scs",
                "joblib", "matplotlib")


def versions() -> dict:
    """numkfs's, Python's and the dependencies' versions (None when not installed)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in DEPENDENCIES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def _utc_now() -> str:
    """The time now in UTC, ISO 8601 (``YYYY-MM-DDTHH:MM:SS+00:00``)."""
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _command(args) -> list:
    """The command that was run: ``numkfs`` and its arguments."""
    argv = getattr(args, "argv", None)
    return ["numkfs", *argv] if argv is not None else list(sys.argv)


def _path_json(path):
    """The feature path as JSON: grid, weights, CV scores, the chosen point (None without a path)."""
    import numpy as np

    from .selection import json_safe

    if path is None:
        return None

    def arr(a):
        if a is None:
            return None
        a = np.asarray(a, dtype=float)
        return np.where(np.isfinite(a), a, np.nan).tolist()

    out = {"grid_name": getattr(path, "grid_name", None), "grid": arr(path.grid), "weights": arr(path.weights),
           "feature_names": [str(f) for f in path.feature_names] if path.feature_names is not None else None,
           "cv_scores": arr(getattr(path, "cv_scores", None)),
           "cv_fold_sizes": (None if getattr(path, "cv_fold_sizes", None) is None
                             else [int(v) for v in path.cv_fold_sizes]),
           "score_name": getattr(path, "score_name", None), "cv_rule": getattr(path, "cv_rule", None),
           "chosen_index": getattr(path, "chosen_index", None)}
    return json_safe(out)


def _cmd_cross_check(args) -> int:
    import warnings

    from ._crosscheck_problems import build_problem
    from .solvers import cross_check

    _check_plot(args.plot)
    X, y, names, target, task = _load(args)
    if args.n_features is not None and args.problem != "nmmkl":
        raise CLIError(f"--n-features is the m of the nmmkl problem; the {args.problem} problem has none")
    if args.n_features is not None and args.n_features > X.shape[1]:
        raise CLIError(f"--n-features {args.n_features}: the data has only {X.shape[1]} features")
    kw = {"m": args.n_features} if args.n_features is not None else {}
    try:
        problem = build_problem(args.problem, X, y, **kw)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc).splitlines()[0]) from None
    solvers = args.solvers.split(",") if args.solvers else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            table = cross_check(problem, solvers, warmup=True)
        except (ValueError, ImportError) as exc:
            raise CLIError(str(exc).splitlines()[0]) from None
    print(f"problem: {args.problem} on {args.data} ({X.shape[0]} x {X.shape[1]}), {problem.size} variables")
    print(table)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        from .plotting import plot_cross_check

        ax = plot_cross_check(table)
        _save_plot(ax.figure, args.plot)
    return 0 if table.agree(1e-6) else 1


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .datasets import dataset_names
    from ._registry import CV_RULE_NAMES, METHOD_ROWS  # numpy-free: --help and --version stay light

    parser = argparse.ArgumentParser(prog="numkfs", description="Feature selection in non-linear kernel models.")
    parser.add_argument("--version", action="version", version=f"numkfs {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("solvers", help="list the solver backends, their versions and whether they work")
    p.set_defaults(func=_cmd_solvers)

    shipped = ", ".join(dataset_names())
    p = sub.add_parser("select", help="select features of a CSV file or shipped dataset",
                       description="Select features of a CSV file (header row; the target is the last column "
                                   f"unless --target names it) or of a shipped dataset: {shipped}. "
                                   "The default method is knife.")
    p.add_argument("data", help=f"a CSV file with a header row, or a shipped dataset name ({shipped})")
    p.add_argument("--target", help="response column (default: the last column)")
    methods = [m + (" (default)" if m == "knife" else "") for m in METHOD_ROWS]
    p.add_argument("--method", default="knife", help=f"{', '.join(methods[:-1])} or {methods[-1]}")
    p.add_argument("--task", choices=["regression", "classification"], help="default: inferred from the target")
    p.add_argument("--n-features", type=_positive_int, dest="n_features", help="number of features to select (>= 1)")
    p.add_argument("--cv", type=_folds, default=5, help="cross-validation folds (>= 2, default 5)")
    rules = ", ".join(f"{m} {row.cv_rules['selection']}" for m, row in METHOD_ROWS.items())
    p.add_argument("--cv-rule", choices=CV_RULE_NAMES["selection"], default=None, dest="cv_rule",
                   help="best: the highest mean CV score; 1se: the sparsest point within one standard "
                        "error of it; 1pct, 2pct: the sparsest point within 1%% or 2%% of its loss; relaxed_best, relaxed_1se: "
                        "best and 1se on the scores of each point's "
                        "features refitted without the method's penalty by one kernel ridge "
                        f"(default: the method's rule: {rules})")
    p.add_argument("--scoring", choices=["accuracy"], default=None,
                   help="classification: score by accuracy instead of the default held-out loss")
    p.add_argument("--stability", action="store_true",
                   help="select by stability selection over the method's path (complementary pairs of "
                        "half-samples): prints each feature's selection probability, the stable groups of correlated "
                        "features and the bound on the expected number of false selections")
    p.add_argument("--fdr", type=_open_unit("--fdr"), metavar="Q",
                   help="select by model-X knockoffs at false discovery rate Q (0 < Q < 1; e-BH on the e-values "
                        "of 8 knockoff draws): prints each feature's e-value and the threshold")
    p.add_argument("--n-resamples", type=_positive_int, dest="n_resamples",
                   help="with --stability: complementary pairs (default 20)")
    p.add_argument("--threshold", type=_threshold,
                   help="with --stability: selection-probability threshold in (0.5, 1] (default 0.9)")
    p.add_argument("--seed", type=_seed, default=0,
                   help=f"random seed, 0 to {MAX_SEED} (default 0: a run repeats exactly), of the method's random "
                        "steps and of the --stability subsamples and --fdr knockoffs; the --cv folds are contiguous "
                        "and unshuffled")
    p.add_argument("--plot", help="write the feature path plot here, in the format of its extension (.png, "
                                  ".pdf, .svg...; none: PNG) (with --stability: the stability path)")
    p.add_argument("--json", help="write the results as JSON here (with the versions, date and command)")
    p.add_argument("--all", action="store_true",
                   help=f"print every feature (default: the selected features and the next largest weights, "
                        f"{TABLE_ROWS} rows at most)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars or warnings")
    p.set_defaults(func=_cmd_select)

    problems = [name for row in METHOD_ROWS.values() for name in row.cross_check]  # each method's row
    p = sub.add_parser("cross-check", help="solve one method subproblem with every backend and compare")
    p.add_argument("data", help="a CSV file or a shipped dataset name")
    p.add_argument("--problem", required=True, choices=problems)
    p.add_argument("--target", help="response column (default: the last column)")
    p.add_argument("--solvers", help="comma-separated backends (default: all installed, native first); "
                                     "times exclude first-call compilation (each backend solves once before)")
    p.add_argument("--n-features", type=_positive_int, dest="n_features", help="m for the NMMKL problem (>= 1)")
    p.add_argument("--plot", help="write a bar chart of solve times here, in the format of its extension "
                                  "(.png, .pdf, .svg...; none: PNG)")
    p.set_defaults(func=_cmd_cross_check)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = None if argv is None else [str(a) for a in argv]
    try:
        with warnings.catch_warnings():
            if getattr(args, "quiet", False):  # for the whole command: the data load warns too (dropped rows)
                _quiet_warnings()
            return args.func(args)
    except BrokenPipeError:  # output piped into head & co.
        return 0
    except CLIError as exc:
        print(f"numkfs: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
