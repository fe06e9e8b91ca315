"""numkfs's default against the feature selectors a user would otherwise reach for.

Three parts, each kept in its own JSON under ``benchmarks/results/``
(``peers_<part>.json``); every run rebuilds ``benchmarks/results/peers.md``
(the whole file) from the parts it finds, so running one part keeps the
others' last tables.

Part ``simulations``: public simulations with a known truth, seeds 0-4 by
default,

* ``sinusoid``: ``numkfs.datasets.make_sinusoid(100, 20)`` (regression, 5 true);
* ``friedman1``: ``sklearn.datasets.make_friedman1(200, 15, noise=1)``
  (regression, 5 true and 10 noise features);
* ``classification``: ``sklearn.datasets.make_classification(300, 30,
  n_informative=5, n_redundant=0, shuffle=False)`` (5 true);
* ``xor``: 400 x 20 standard normal features, y = 1 when x0 x1 > 0 (2 true);

and every selector with the settings its documentation recommends:

* ``knife``: ``numkfs.select(X, y)``, every default (KNIFE, its CV);
* ``boruta``: ``BorutaPy(RandomForest{Regressor,Classifier}(max_depth=7,
  n_jobs=-1), n_estimators="auto")`` (Boruta's README); confirmed features;
* ``permutation``: ``HistGradientBoosting{Regressor,Classifier}()`` fitted on
  70 % of the rows and ``sklearn.inspection.permutation_importance``
  (10 repeats) on the other 30 %: a feature is selected when its mean
  importance exceeds twice its standard deviation;
* ``hsic``: ``pyHSICLasso.HSICLasso`` (``regression`` or ``classification``),
  told the true number of features (its API requires a count);
* ``mrmr``: ``mrmr.mrmr_regression`` / ``mrmr_classif`` (``mrmr-selection``),
  told the true number of features;
* ``knockpy``: ``knockpy.KnockoffFilter()`` (its defaults: Gaussian model-X
  knockoffs, lasso statistic) at ``fdr=0.2``;
* ``leshy``: ``arfs.feature_selection.allrelevant.Leshy(LGBM{Regressor,
  Classifier}(), n_estimators=100, importance="shap")`` (the ``arfs``
  package: Boruta with LightGBM and SHAP importance); accepted features.
  ``n_estimators`` is fixed at LightGBM's default, 100: Leshy's ``"auto"``
  gives a negative number of boosting rounds on a few hundred rows.  arfs
  3.0 needs pandas < 2.3, so Leshy runs in its own environment: the Python
  named by the environment variable ``NUMKFS_LESHY_PYTHON`` (e.g. a venv
  with ``pip install "arfs==3.0.*" "pandas<2.3" lightgbm``; this script and
  numkfs on its ``PYTHONPATH``), else this one.

Each (selector, data set) runs in a fresh Python process (imports and
compilation are not timed; numkfs's Numba kernels are warmed by a small
call first) under a wall-time cap (``--cap``), so one slow peer cannot eat
the budget: the seeds it did not finish are reported as timed out.

Part ``sizes``: on the size simulation, n rows of p standard normal
features and

    y = 2 sin(x0) + x1² + exp(x2 / 2) + x3 x4 + ε,   ε ~ N(0, 1),

(five true features) KNIFE's default, Boruta, permutation importance and
Leshy, each in a fresh process; ``--selectors knife_exact_1se`` adds KNIFE with the
exact kernel and the ``1se`` rule, for comparison with the default's wide-data
settings (the exact kernel with more features than landmarks, the ``1pct``
rule).

Part ``real``: the real data sets of ``benchmarks/common_learner.py``
(ozone, raw diabetes, breast_cancer, ionosphere, sonar, WPBC, colon), 10
train/test splits; every numkfs method that does the task (its ``select()``
default), the peers, an L1 model and all features, each selection judged by
one common downstream learner (a standardised RBF SVC/SVR tuned by CV)
refitted on it (see that module).

Timing: ``time.process_time`` of the selector's process (all its threads).
A hit: every true feature selected, with at most one false one.  A peer
that is not installed or fails has its row say why.

Usage::

    python benchmarks/peers.py --part simulations            # 4 data sets x 5 seeds
    python benchmarks/peers.py --part simulations --seeds 0 1 --cap 300
    python benchmarks/peers.py --part simulations --seeds 2 3 4 --merge   # add seeds to the last run
    python benchmarks/peers.py --part sizes --sizes 1000x50 4000x40 --seeds 0
    python benchmarks/peers.py --part sizes --sizes 100000x50 --size-cap 7200 --merge
    python benchmarks/peers.py --part real --splits 10       # 7 real data sets x 10 splits
    python benchmarks/peers.py --part real --real-data colon --merge   # redo one data set
    python benchmarks/peers.py --part render                 # rebuild peers.md only
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
TRUE = [0, 1, 2, 3, 4]
SIZE_SELECTORS = ("knife", "boruta", "permutation", "leshy")
#: numkfs's other methods, each by its ``select()`` default (its own CV and rule)
NUMKFS_METHODS = ("lpkta", "l1kr", "garrote", "cosso", "nmmkl")
#: KNIFE's "how sure" selections: ``select(X, y, stability=True)`` and ``select(X, y, fdr=0.2)``
NUMKFS_TRUST = ("knife_stability", "knife_fdr")
SIM_SELECTORS = ("knife", *NUMKFS_TRUST, *NUMKFS_METHODS, "boruta", "permutation", "leshy", "hsic", "mrmr",
                 "knockpy")
DATASETS = ("sinusoid", "friedman1", "classification", "xor")
DATASET_TASKS = {"sinusoid": "regression", "friedman1": "regression", "classification": "classification",
                 "xor": "classification"}
DATASET_LABELS = {
    "sinusoid": "sinusoid 100 x 20",
    "friedman1": "Friedman #1 200 x 15",
    "classification": "make_classification 300 x 30",
    "xor": "XOR 400 x 20",
}
SELECTOR_LABELS = {
    "knife": "KNIFE (numkfs `select()` default)",
    "knife_stability": "KNIFE, stability selection (`select(stability=True)`)",
    "knife_fdr": "KNIFE, knockoffs (`select(fdr=0.2)`)",
    "knife_exact_1se": "KNIFE, exact kernel and 1se rule (`select(approximation=\"exact\", cv_rule=\"1se\")`)",
    "lpkta": "lp-KTA (`select(method=\"lpkta\")`)",
    "l1kr": "L1KR (`select(method=\"l1kr\")`)",
    "garrote": "garrote (`select(method=\"garrote\")`)",
    "cosso": "COSSO (`select(method=\"cosso\")`)",
    "nmmkl": "NMMKL (`select(method=\"nmmkl\")`)",
    "boruta": "Boruta (random forest, max_depth 7)",
    "leshy": "Leshy (arfs: LightGBM, SHAP importance)",
    "permutation": "permutation importance of gradient boosting",
    "hsic": "HSIC Lasso, told the true count",
    "mrmr": "mRMR, told the true count",
    "knockpy": "knockpy (model-X knockoffs, fdr 0.2)",
    "l1": "L1 model (LassoCV / L1-logistic CV)",
    "all": "all features",
}


def simulate(n, p, seed):
    """The size simulation (five true features, noise standard deviation 1)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = 2 * np.sin(X[:, 0]) + X[:, 1] ** 2 + np.exp(X[:, 2] / 2) + X[:, 3] * X[:, 4] + rng.standard_normal(n)
    return X, y


def dataset(name, seed):
    """One public simulation: ``(X, y, true feature indices, task)``."""
    if name == "sinusoid":
        from numkfs.datasets import make_sinusoid

        X, y, s = make_sinusoid(100, 20, random_state=seed)
        return X, y, np.flatnonzero(s).tolist(), "regression"
    if name == "friedman1":
        from sklearn.datasets import make_friedman1

        X, y = make_friedman1(200, 15, noise=1.0, random_state=seed)
        return X, y, TRUE, "regression"
    if name == "classification":
        from sklearn.datasets import make_classification

        X, y = make_classification(300, 30, n_informative=5, n_redundant=0, shuffle=False, random_state=seed)
        return X, y, TRUE, "classification"
    if name == "xor":
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((400, 20))
        return X, (X[:, 0] * X[:, 1] > 0).astype(int), [0, 1], "classification"
    raise ValueError(f"unknown data set {name!r}; use one of {DATASETS}")


def warm_numkfs():
    """Compile (or load from the cache) numkfs's kernels outside the timed region."""
    import numkfs

    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 3))
    numkfs.select(X, rng.standard_normal(30), n_grid=4)
    numkfs.select(X, (X[:, 0] > 0).astype(int), n_grid=4)


def fit_select(selector, X, y, task, k, seed):
    """Run one selector: ``(selected indices, note)``.  ``k``: the true count (HSIC Lasso, mRMR)."""
    clf = task == "classification"
    if selector == "knife":
        import numkfs

        res = numkfs.select(X, y, random_state=seed)
        est = res.estimator
        return np.flatnonzero(res.selected), (f"approximation_={est.approximation_}, CV on "
                                              f"{getattr(est, 'cv_n_samples_', X.shape[0])} rows")
    if selector == "knife_exact_1se":  # what closed 1,000 x 500 before the default did (kept to compare)
        import numkfs

        res = numkfs.select(X, y, random_state=seed, approximation="exact", cv_rule="1se")
        return np.flatnonzero(res.selected), "approximation='exact', cv_rule='1se'"
    if selector in NUMKFS_TRUST:
        import numkfs

        how = dict(stability=True) if selector == "knife_stability" else dict(fdr=0.2)
        res = numkfs.select(X, y, "knife", random_state=seed, **how)
        return np.flatnonzero(res.selected), res.score_text()
    if selector in NUMKFS_METHODS:
        import numkfs

        res = numkfs.select(X, y, selector, random_state=seed)
        return np.flatnonzero(res.selected), f"cv_rule={res.cv_rule}"
    if selector == "boruta":
        from boruta import BorutaPy
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

        Forest = RandomForestClassifier if clf else RandomForestRegressor
        rf = Forest(max_depth=7, n_jobs=-1, random_state=seed)
        bor = BorutaPy(rf, n_estimators="auto", random_state=seed).fit(X, y)
        return np.flatnonzero(bor.support_), f"{bor.n_features_} confirmed"
    if selector == "leshy":
        import pandas as pd
        from arfs.feature_selection.allrelevant import Leshy
        from lightgbm import LGBMClassifier, LGBMRegressor

        model = (LGBMClassifier if clf else LGBMRegressor)(random_state=seed, verbose=-1)
        fs = Leshy(model, n_estimators=100, importance="shap", random_state=seed, verbose=0)
        fs.fit(pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]), y)
        support = np.flatnonzero(fs.get_support())
        return support, f"{support.size} accepted, n_estimators=100"
    if selector == "permutation":
        from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
        from sklearn.inspection import permutation_importance
        from sklearn.model_selection import train_test_split

        GB = HistGradientBoostingClassifier if clf else HistGradientBoostingRegressor
        Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y if clf else None)
        gb = GB(random_state=seed).fit(Xa, ya)
        imp = permutation_importance(gb, Xb, yb, n_repeats=10, random_state=seed)
        return np.flatnonzero(imp.importances_mean > 2 * imp.importances_std), "mean > 2 sd"
    if selector == "hsic":
        from pyHSICLasso import HSICLasso

        h = HSICLasso()
        # class labels as integer codes (pyHSICLasso takes numbers only; its delta kernel compares them)
        target = np.unique(y, return_inverse=True)[1].astype(float) if clf else np.asarray(y, dtype=float)
        h.input(np.asarray(X, dtype=float), target)
        (h.classification if clf else h.regression)(k)
        return np.asarray(h.get_index(), dtype=int), f"num_feat={k}"
    if selector == "mrmr":
        import pandas as pd
        from mrmr import mrmr_classif, mrmr_regression

        fn = mrmr_classif if clf else mrmr_regression
        chosen = fn(X=pd.DataFrame(X), y=pd.Series(y), K=k, show_progress=False)
        return np.asarray(sorted(chosen), dtype=int), f"K={k}"
    if selector == "l1":
        from sklearn.linear_model import LassoCV, LogisticRegressionCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        model = (LogisticRegressionCV(penalty="l1", solver="saga", cv=5, max_iter=5000, random_state=seed) if clf
                 else LassoCV(cv=5, random_state=seed))
        fitted = make_pipeline(StandardScaler(), model).fit(X, y)[-1]
        return np.flatnonzero(np.any(np.atleast_2d(fitted.coef_) != 0, axis=0)), "non-zero coefficients"
    if selector == "knockpy":
        try:
            from knockpy import KnockoffFilter
        except ImportError as e:
            # 1.3.5 ships only a source package; its metadata needs a newer setuptools than the
            # environment's, and its five Cython extensions and jlc-choldate must be compiled
            raise RuntimeError("knockpy is not installed (a source package; its build did not finish "
                               "in 30 min on the benchmark machine)") from e

        np.random.seed(seed)  # knockpy draws its knockoffs from numpy's global generator
        rej = KnockoffFilter().forward(X=X, y=y, fdr=0.2)
        return np.flatnonzero(rej), "gaussian knockoffs, lasso statistic"
    raise ValueError(f"unknown selector {selector!r}")


def score(support, true):
    n_true = len(set(np.asarray(support).tolist()) & set(true))
    n_false = len(support) - n_true
    return dict(true=n_true, n_true_features=len(true), false=n_false,
                hit=bool(n_true == len(true) and n_false <= 1))


def timed(selector, X, y, task, k, seed):
    c0, t0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        support, note = fit_select(selector, X, y, task, k, seed)
    return support, note, time.process_time() - c0, time.perf_counter() - t0


def run_size(selector, n, p, seed):
    """One selector on the size simulation, in this process: a dict with the selection and CPU seconds."""
    X, y = simulate(n, p, seed)
    if selector.startswith("knife"):
        warm_numkfs()
    support, note, cpu, wall = timed(selector, X, y, "regression", len(TRUE), seed)
    return dict(selector=selector, n=n, p=p, seed=seed, **score(support, TRUE), cpu=cpu, wall=wall, note=note)


def runs_on(selector, name, task=None):
    """Whether ``selector`` does the task of data set ``name`` (numkfs's methods do one task or both)."""
    if selector not in NUMKFS_METHODS:
        return True
    from numkfs._registry import METHOD_ROWS

    return (task or DATASET_TASKS[name]) in METHOD_ROWS[selector].tasks


def run_simulation(selector, name, seeds):
    """One selector on one simulation over ``seeds``, in this process; prints one JSON line per seed."""
    if selector == "knife" or selector in NUMKFS_TRUST or selector in NUMKFS_METHODS:
        warm_numkfs()
    for seed in seeds:
        X, y, true, task = dataset(name, seed)
        support, note, cpu, wall = timed(selector, X, y, task, len(true), seed)
        print(json.dumps(dict(selector=selector, data=name, seed=seed, **score(support, true),
                              cpu=cpu, wall=wall, note=note, selected=np.asarray(support).tolist())), flush=True)


def _failed_row(note, **keys):
    return dict(keys, true=None, false=None, hit=None, cpu=float("nan"), wall=float("nan"), note=note)


def _rows_from(stdout):
    if isinstance(stdout, bytes):
        stdout = stdout.decode(errors="replace")
    return [json.loads(ln) for ln in (stdout or "").splitlines() if ln.startswith("{")]


def _last_error(stderr):
    if isinstance(stderr, bytes):
        stderr = stderr.decode(errors="replace")
    lines = [ln for ln in (stderr or "").strip().splitlines() if ln.strip()]
    return (lines or ["no output"])[-1][:160]


def _python(selector):
    """The interpreter that runs ``selector``: Leshy's own environment (``NUMKFS_LESHY_PYTHON``) or this one."""
    return os.environ.get("NUMKFS_LESHY_PYTHON", sys.executable) if selector == "leshy" else sys.executable


def _children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def fresh_size(selector, n, p, seed, cap=None):
    """:func:`run_size` in a fresh Python process; a failure (not installed, crashed) as a row saying why.

    With ``cap`` (wall seconds) a run still going at the cap is stopped, and its row gives the CPU
    seconds it had used (imports and compilation included): a lower bound on what it needs."""
    c0, t0 = _children_cpu(), time.perf_counter()
    try:
        out = subprocess.run([_python(selector), __file__, "--one-size", selector, str(n), str(p), str(seed)],
                             capture_output=True, text=True, timeout=cap)
    except subprocess.TimeoutExpired:
        cpu, wall = _children_cpu() - c0, time.perf_counter() - t0
        row = _failed_row(f"stopped at the {cap:.0f} s wall cap, not finished: needs more than "
                          f"{cpu:.0f} CPU s", selector=selector, n=n, p=p, seed=seed)
        return dict(row, cpu=cpu, wall=wall, stopped=True)
    rows = _rows_from(out.stdout)
    if out.returncode == 0 and rows:
        return rows[-1]
    return _failed_row(f"failed: {_last_error(out.stderr)}", selector=selector, n=n, p=p, seed=seed)


def _capped(args, cap, what):
    """``peers.py *args`` in a fresh process capped at ``cap`` wall seconds: (its JSON rows, why it
    stopped early or None); ``what`` names the runs in the time-out message.  ``args[1]`` is the
    selector (:func:`_python` chooses its interpreter)."""
    try:
        out = subprocess.run([_python(args[1]), __file__, *args], capture_output=True, text=True,
                             timeout=cap)
        return _rows_from(out.stdout), None if out.returncode == 0 else f"failed: {_last_error(out.stderr)}"
    except subprocess.TimeoutExpired as e:
        return _rows_from(e.stdout), f"timed out: over the {cap:.0f} s wall cap for {what}"


def fresh_simulation(selector, name, seeds, cap):
    """:func:`run_simulation` in a fresh process capped at ``cap`` wall seconds; missing seeds say why."""
    rows, why = _capped(["--one-simulation", selector, name, *map(str, seeds)], cap, f"{len(seeds)} seeds")
    done = {r["seed"] for r in rows}
    rows += [_failed_row(why or "no output", selector=selector, data=name, seed=s) for s in seeds if s not in done]
    return rows


def _fmt(v, nd=0):
    return "-" if v is None or (isinstance(v, float) and v != v) else v


def render_simulations(part):
    from _common import markdown_table

    rows = part["rows"]
    seeds = sorted({r["seed"] for r in rows})
    summary = []
    for sel in SIM_SELECTORS:
        mine = [r for r in rows if r["selector"] == sel]
        if not mine:
            continue
        ok = [r for r in mine if r["hit"] is not None]
        cells = [SELECTOR_LABELS[sel]]
        for name in DATASETS:
            d = [r for r in ok if r["data"] == name]
            n_all = len([r for r in mine if r["data"] == name])
            cells.append(f"{sum(r['hit'] for r in d)}/{n_all}" if d else "-")
        cells.append(f"{sum(r['hit'] for r in ok)}/{len(mine)}" if ok else "-")
        cells.append(f"{np.mean([r['false'] for r in ok]):.1f}" if ok else "-")
        cells.append(float(np.mean([r["cpu"] for r in ok])) if ok else float("nan"))
        fails = sorted({r["note"] for r in mine if r["hit"] is None})
        cells.append("; ".join(fails) if fails else "")
        summary.append(cells)
    head = (["selector"] + [DATASET_LABELS[d] for d in DATASETS]
            + ["hits", "mean false", "mean CPU s", "failures"])
    detail = []
    for name in DATASETS:
        for sel in SIM_SELECTORS:
            d = [r for r in rows if r["data"] == name and r["selector"] == sel]
            ok = [r for r in d if r["hit"] is not None]
            if not d:
                continue
            n_true = ok[0]["n_true_features"] if ok else "-"
            detail.append([DATASET_LABELS[name], sel, len(d), len(ok),
                           f"{np.mean([r['true'] for r in ok]):.1f}/{n_true}" if ok else "-",
                           f"{np.mean([r['false'] for r in ok]):.1f}" if ok else "-",
                           sum(r["hit"] for r in ok) if ok else "-",
                           float(np.mean([r["cpu"] for r in ok])) if ok else float("nan"),
                           float(np.mean([r["wall"] for r in ok])) if ok else float("nan")])
    return ("## Simulations\n\n"
            f"{part['machine']}. `{part['command']}`: seeds {', '.join(map(str, seeds))} "
            f"({len(seeds)} per data set"
            + ("" if len(seeds) >= 5 else "; fewer than the 5 planned, to keep the run within its time budget")
            + f"), each (selector, data set) in a fresh process under a {part['cap']:.0f} s wall cap. "
            "A hit: every true feature selected, with at most one false one. CPU s: the selector's "
            "process time (all threads) per data set, imports and compilation excluded; a peer's one-time "
            "set-up inside its first call (worker pools, lazy imports) counts in the first seed.\n\n"
            "Hits per data set (of the seeds run), with the mean number of false features and the mean "
            "CPU seconds over all data sets:\n\n"
            + markdown_table(head, summary)
            + "\n\nPer data set and selector (means over the seeds that finished):\n\n"
            + markdown_table(["data", "selector", "seeds", "finished", "true", "false", "hits", "CPU s", "wall s"],
                             detail))


def render_sizes(part):
    from _common import markdown_table

    order = {sel: i for i, sel in enumerate(SIZE_SELECTORS)}
    rows = sorted(part["rows"], key=lambda r: (r["n"], r["p"], r["seed"], order.get(r["selector"], len(order))))
    table = markdown_table(
        ["rows x features", "seed", "selector", "true (of 5)", "false", "hit", "CPU s", "wall s", "note"],
        [[f"{r['n']} x {r['p']}", r["seed"], r["selector"], _fmt(r["true"]), _fmt(r["false"]),
          "-" if r["hit"] is None else ("yes" if r["hit"] else "no"), r["cpu"], r["wall"], r["note"]]
         for r in rows])
    ratio = []
    for n, p in dict.fromkeys((r["n"], r["p"]) for r in rows):
        # over the seeds both ran on (the same data sets)
        cpu = {(r["selector"], r["seed"]): r["cpu"] for r in rows if (r["n"], r["p"]) == (n, p)}
        seeds = sorted({s for sel, s in cpu if sel == "knife"} & {s for sel, s in cpu if sel == "boruta"})
        k, b = [cpu["knife", s] for s in seeds], [cpu["boruta", s] for s in seeds]
        stopped = any(r.get("stopped") for r in rows if (r["n"], r["p"], r["selector"]) == (n, p, "boruta"))
        if k and b and np.all(np.isfinite(k + b)):
            ratio.append(f"- {n} x {p}: KNIFE's default used {'at most ' * stopped}"
                         f"{np.sum(k) / np.sum(b):.2f}x Boruta's CPU ({np.sum(k):.0f} s against "
                         f"{'more than ' * stopped}{np.sum(b):.0f} s over {len(k)} seed(s)"
                         f"{'; Boruta stopped at the cap' * stopped}).")
    return ("## Sizes\n\n"
            f"{part['machine']}. `{part['command']}`. y = 2 sin(x0) + x1² + exp(x2/2) + x3·x4 + N(0, 1) "
            "noise on standard normal features; each selector in a fresh process, CPU seconds of that "
            "process (all threads). A hit: all five true features with at most one false one.\n\n"
            + table + "\n\n" + "\n".join(ratio))


def run_real(selector, name, n_splits, counts=None):
    """One selector on one data set over the splits of ``common_learner``, in this process: one JSON line
    per split."""
    from common_learner import PEERS, TOLD_COUNT, held_out_error, load, splits

    X, y, task = load(name)
    if selector not in PEERS and selector != "all":
        warm_numkfs()
    for i, (tr, te) in enumerate(splits(y, task, n_splits)):
        k = counts[i] if counts else 0
        c0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if selector == "all":
                cols, note = np.arange(X.shape[1]), "every feature"
            elif selector in TOLD_COUNT and k == 0:
                cols, note = np.array([], dtype=int), "told 0 features (KNIFE's count)"
            else:
                cols, note = fit_select(selector, X[tr], y[tr], task, k, i)
            cpu_select = time.process_time() - c0
            err = held_out_error(X, y, tr, te, cols, task)
        print(json.dumps(dict(selector=selector, data=name, split=i, n_features=int(len(cols)), error=err,
                              cpu=cpu_select, note=str(note)[:120],
                              selected=None if selector == "all" else np.asarray(cols).tolist())),
              flush=True)


def fresh_real(selector, name, n_splits, counts, cap):
    """:func:`run_real` in a fresh process capped at ``cap`` wall seconds."""
    rows, why = _capped(["--one-real", selector, name, str(n_splits), *map(str, counts or [])], cap,
                        f"{n_splits} splits")
    done = {r["split"] for r in rows}
    rows += [dict(selector=selector, data=name, split=i, error=None, n_features=None, cpu=float("nan"),
                  note=why or "no output") for i in range(n_splits) if i not in done]
    return rows


def _kept(part, merge, command):
    """``(rows, commands)`` a run of ``part`` starts from: with ``merge``, the last run's rows and
    commands (this run's command appended), else none."""
    old = RESULTS / f"peers_{part}.json"
    if merge and old.exists():
        kept = json.loads(old.read_text())
        return kept["rows"], kept["command"].split("; ") + [command.strip()]
    return [], [command.strip()]


def run_real_part(args, command):
    """Part ``real``: every selector on every data set (KNIFE first: its counts go to HSIC Lasso and mRMR)."""
    from common_learner import REAL_SELECTORS, REAL_SETS, load

    rows, commands = _kept("real", args.merge, command)
    for name in args.real_data or REAL_SETS:
        task = load(name)[2]
        counts = None
        for sel in args.selectors or REAL_SELECTORS:
            if not runs_on(sel, name, task):
                continue
            if sel in ("hsic", "mrmr") and counts is None:
                knife = [r for r in rows if r["data"] == name and r["selector"] == "knife"]
                counts = [r["n_features"] or 0 for r in sorted(knife, key=lambda r: r["split"])][:args.splits]
            new = fresh_real(sel, name, args.splits, counts if sel in ("hsic", "mrmr") else None, args.cap * 4)
            rows = [r for r in rows if (r["selector"], r["data"]) != (sel, name)] + new
            for r in new:
                print({k: v for k, v in r.items() if k != "selected"}, flush=True)
            save_part("real", "; ".join(commands), rows, splits=args.splits, cap=args.cap * 4)


def render_real(part):
    from _common import markdown_table
    from common_learner import REAL_SETS, judge, summarise

    rows = part["rows"]
    tables = []
    for name in [d for d in REAL_SETS if any(r["data"] == d for r in rows)]:
        summary = summarise(rows, name)
        verdict = judge(summary)
        body = []
        for sel, n, m, se, nf, cpu, fails in summary:
            v = verdict.get(sel)
            label = {"hsic": "HSIC Lasso, told KNIFE's count", "mrmr": "mRMR, told KNIFE's count"}.get(
                sel, SELECTOR_LABELS.get(sel, sel))
            body.append([label, n, "-" if m is None else f"{m:.4g} ± {se:.2g}",
                         "-" if nf is None else f"{nf:.1f}", float("nan") if cpu is None else cpu,
                         "" if v is None else ("met" if v[0] else "NOT met") + f" ({v[1]})", fails])
        tables.append(f"### {name}\n\n" + markdown_table(
            ["selector", "splits", "held-out error (mean ± se)", "features", "CPU s (selection)",
             "target: within 1 se of all features or of the best peer with no more features", "failures"], body))
    return ("## Real data, one common learner\n\n"
            f"{part['machine']}. `{part['command']}`. {part['splits']} random 70/30 splits (stratified for "
            "classes). Every selection is judged by the same downstream learner: a standardised RBF SVC "
            "(classes) or SVR (standardised y), C and γ tuned by 5-fold CV over 25 pairs, refitted on the "
            "selected columns of the training rows (`benchmarks/common_learner.py`). Error: misclassification "
            "rate, or mean squared error in y's units. HSIC Lasso and mRMR are told KNIFE's count on the same "
            "split; `l1`: the non-zero coefficients of LassoCV or L1-logistic CV on standardised X; `all`: "
            "every feature.\n\n" + "\n\n".join(tables))


def render():
    """Rebuild ``benchmarks/results/peers.md`` from the parts' JSON files."""
    parts = []
    for name, fn in (("simulations", render_simulations), ("sizes", render_sizes), ("real", render_real)):
        path = RESULTS / f"peers_{name}.json"
        if path.exists():
            parts.append(fn(json.loads(path.read_text())))
    text = ("# numkfs's default against the selectors a user would otherwise reach for\n\n"
            "Rebuilt by `python benchmarks/peers.py` from `peers_simulations.json`, `peers_sizes.json` and `peers_real.json` "
            "(each part's last run).\n\n" + "\n\n".join(parts) + "\n")
    (RESULTS / "peers.md").write_text(text)
    print(text)


def save_part(name, command, rows, **extra):
    from _common import machine_line

    RESULTS.mkdir(exist_ok=True)
    data = dict(command=command, machine=machine_line(), rows=rows, **extra)
    (RESULTS / f"peers_{name}.json").write_text(json.dumps(data, indent=1) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("simulations", "sizes", "real", "render"), default="simulations")
    ap.add_argument("--real-data", nargs="+", default=None, help="real: a subset of the data sets")
    ap.add_argument("--splits", type=int, default=10, help="real: number of train/test splits")
    ap.add_argument("--sizes", nargs="+", default=["1000x50", "4000x40"], help="NxP, e.g. 4000x40")
    ap.add_argument("--seeds", nargs="+", type=int, default=None,
                    help="default: 0-4 for simulations, 0 for sizes")
    ap.add_argument("--selectors", nargs="+", default=None, help="a subset of the part's selectors")
    ap.add_argument("--data", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--cap", type=float, default=240.0,
                    help="wall seconds allowed to one (selector, data set) over all seeds (simulations)")
    ap.add_argument("--size-cap", type=float, default=None,
                    help="sizes: wall seconds allowed to one run; a run stopped there reports the CPU "
                         "seconds it had used as a lower bound")
    ap.add_argument("--merge", action="store_true",
                    help="simulations, sizes, real: keep the rows of the last run that this run does not redo "
                         "(e.g. more seeds, another size or data set)")
    ap.add_argument("--one-size", nargs=4, metavar=("SELECTOR", "N", "P", "SEED"), help=argparse.SUPPRESS)
    ap.add_argument("--one-simulation", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--one-real", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one_size:
        sel, n, p, seed = args.one_size
        print(json.dumps(run_size(sel, int(n), int(p), int(seed))))
        return 0
    if args.one_real:
        sel, name, n_splits, *counts = args.one_real
        run_real(sel, name, int(n_splits), [int(c) for c in counts] or None)
        return 0
    if args.one_simulation:
        sel, name, *seeds = args.one_simulation
        run_simulation(sel, name, [int(s) for s in seeds])
        return 0
    command = "python benchmarks/peers.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.part == "simulations":
        seeds = args.seeds if args.seeds is not None else [0, 1, 2, 3, 4]
        rows, commands = _kept("simulations", args.merge, command)
        for name in args.data:
            for sel in args.selectors or SIM_SELECTORS:
                if not runs_on(sel, name):
                    continue
                new = fresh_simulation(sel, name, seeds, args.cap)
                done = {(r["selector"], r["data"], r["seed"]) for r in new}
                rows = [r for r in rows if (r["selector"], r["data"], r["seed"]) not in done] + new
                for r in new:
                    print(r, flush=True)
                save_part("simulations", "; ".join(commands), rows, cap=args.cap)  # an interrupted run keeps these
    elif args.part == "real":
        run_real_part(args, command.strip())
    elif args.part == "sizes":
        seeds = args.seeds if args.seeds is not None else [0]
        rows, commands = _kept("sizes", args.merge, command)
        for size in args.sizes:
            n, p = (int(v) for v in size.lower().split("x"))
            for seed in seeds:
                for sel in args.selectors or SIZE_SELECTORS:
                    r = fresh_size(sel, n, p, seed, cap=args.size_cap)
                    rows = [o for o in rows if (o["selector"], o["n"], o["p"], o["seed"]) != (sel, n, p, seed)] + [r]
                    print(r, flush=True)
                    save_part("sizes", "; ".join(commands), rows)  # an interrupted run keeps these
    render()
    return 0


if __name__ == "__main__":
    sys.exit(main())
