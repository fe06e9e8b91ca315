"""Robustness battery: every estimator and path function on bad input.

Runs the battery of ``tests/test_properties.py`` (the same entry points,
input kinds and judging, imported from there, not copied) with more seeds
per input kind, plus random shapes / column scales / memory orders /
dtypes.  Each run is classified as

* **ok**: a finite answer of the right shape (and, where an equivalent
  clean float64 input exists -- float32, int, DataFrame, sparse, Fortran
  order, other label types -- the same answer as on it; constant columns
  get weight 0; DataFrame names are kept);
* **clear error**: a ValueError/TypeError whose message names the problem
  (NaN/inf naming the column, one class, sparse refused, ...);
* **other**: anything else (another exception, a message that does not
  name the problem, a wrong or non-finite answer, an expected error not
  raised).

Three more batteries follow the estimators' one:

* ``select()`` over every method on the property suite's inputs
  (``tests/test_properties.py``: n in {1, 2, 3, 8, 12}, p up to 40, dtypes,
  layouts, every sparse format, DataFrames with nullable / categorical /
  object / string columns, list / Series / odd-index targets, every label
  kind), judged as there;
* fuzzed CSV files through the command line (``numkfs select``), judged
  as: a result (status 0) or one line on stderr and status 2; a traceback
  or another status is "other";
* every method on a 20 x 200 problem in a subprocess with a time limit
  (a run over it is a **hang**).

Every case is timed; one over ``--budget`` seconds also counts as a hang.

Usage: ``python benchmarks/robustness.py [--quick]`` (quick: 2 seeds per
kind and 5 random shapes per entry, 60 select cases, 100 CSV files; full:
5 and 25, 300 and 600); writes ``benchmarks/results/robustness.md`` with
the counts (cases tried, ok, clear errors, wrong outcomes, hangs) per
battery, per entry point and input kind, and the distinct "other" outcomes.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from _common import markdown_table, save

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_properties import ENTRIES, KINDS, make_input, random_case, run_case  # noqa: E402


def _select_battery(n_cases, budget):
    """select() on the property suite's inputs; returns Counter(status), details."""
    import warnings

    import test_properties as T

    from numkfs import select

    rng = np.random.default_rng(19)
    counts, other = Counter(), Counter()
    containers = ["C", "F", "noncontig", "list", "coo", "csr", "csc", "lil", "dok", "bsr", "dia", "frame",
                  "frame_nullable", "frame_categorical", "frame_object", "frame_strings"]
    kinds = ["float", "int01", "pm1", "three", "strings", "bool", "constant", "nan"]
    for _ in range(n_cases):
        method = str(rng.choice(T.SELECT_METHODS))
        n, p = int(rng.choice([1, 2, 3, 8, 12])), int(rng.choice([1, 3, 40]))
        X = rng.standard_normal((n, p))
        signal = X[:, 0] + 0.3 * rng.standard_normal(n)
        kind = str(rng.choice(kinds))
        y = {"float": signal, "int01": (signal > np.median(signal)).astype(int),
             "pm1": np.where(signal > np.median(signal), 1, -1),
             "three": np.arange(n) % 3, "strings": np.where(signal > np.median(signal), "yes", "no"),
             "bool": signal > np.median(signal), "constant": np.ones(n),
             "nan": np.where(np.arange(n) == 0, np.nan, signal)}[kind]
        Xw = T._wrap_X(X, str(rng.choice(containers)), rng)
        yw = T._wrap_y(y, str(rng.choice(["array", "list", "series", "series_odd_index", "column"])))
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = select(Xw, yw, method, cv=2, n_features=1 if method == "nmmkl" else None,
                             **T.SELECT_PARAMS[method])
            ok = (res.weights.shape == (p,) and np.all(np.isfinite(res.weights)))
            status = "ok" if ok else "other"
            detail = "" if ok else "non-finite or wrongly shaped weights"
        except (ValueError, TypeError) as exc:
            named = bool(T.NAMED.search(str(exc)))
            status = "clear error" if named else "other"
            detail = "" if named else f"{type(exc).__name__}: {str(exc)[:120]}"
        except Exception as exc:  # noqa: BLE001 - what the battery is for
            status, detail = "other", f"{type(exc).__name__}: {str(exc)[:120]}"
        if time.perf_counter() - t0 > budget:
            status, detail = "hang", f"{time.perf_counter() - t0:.0f} s"
        counts[status] += 1
        if detail:
            other[f"{method}, {kind}: {detail}"] += 1
    return counts, other


def _csv_battery(n_files, budget, folder):
    """Fuzzed CSV files through ``numkfs select`` (in process)."""
    import contextlib
    import io
    import warnings

    from test_data_io import _fuzz_csv

    from numkfs.cli import main

    rng = np.random.default_rng(600)
    counts, other = Counter(), Counter()
    for i in range(n_files):
        f = Path(folder) / f"fuzz{i}.csv"
        f.write_text(_fuzz_csv(rng), encoding="utf-8")
        err = io.StringIO()
        t0 = time.perf_counter()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rc = main(["select", str(f), "--method", str(rng.choice(["garrote", "knife", "nmmkl"])),
                           "--cv", "2", "-q"])
            e = err.getvalue()
            if rc == 0 and not e:
                status, detail = "ok", ""
            elif rc == 2 and e.startswith("numkfs: error: ") and e.count("\n") == 1:
                status, detail = "clear error", ""
            else:
                status, detail = "other", f"status {rc}: {e[:120]!r}"
        except SystemExit as exc:  # argparse
            status, detail = ("clear error", "") if exc.code == 2 else ("other", f"exit {exc.code}")
        except Exception as exc:  # noqa: BLE001 - a traceback
            status, detail = "other", f"traceback {type(exc).__name__}: {str(exc)[:120]}"
        if time.perf_counter() - t0 > budget:
            status, detail = "hang", f"{time.perf_counter() - t0:.0f} s"
        counts[status] += 1
        if detail:
            other[detail] += 1
    return counts, other


def _time_limit_battery(limit):
    """Every method on 20 x 200 in a subprocess; over ``limit`` seconds is a hang."""
    import subprocess
    import tempfile

    from test_selection import _BUDGET_SCRIPT

    counts, rows = Counter(), []
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "budget.py"
        script.write_text(_BUDGET_SCRIPT)
        for method in ["cosso", "garrote", "knife", "lpkta", "nmmkl"]:
            t0 = time.perf_counter()
            try:
                out = subprocess.run([sys.executable, str(script), method], capture_output=True, text=True,
                                     timeout=limit)
                status = "ok" if out.returncode == 0 else "other"
            except subprocess.TimeoutExpired:
                status = "hang"
            counts[status] += 1
            rows.append([method, f"{time.perf_counter() - t0:.1f}", status])
    return counts, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds after which a case counts as a hang")
    args = ap.parse_args(argv)
    n_seeds, n_random = (2, 5) if args.quick else (5, 25)
    n_select, n_csv = (60, 100) if args.quick else (300, 600)
    counts = defaultdict(Counter)  # (entry, kind) -> Counter(status)
    others = defaultdict(Counter)  # entry -> Counter(kind: detail)
    t0 = time.perf_counter()
    for entry in ENTRIES:
        for kind in KINDS:
            for seed in range(n_seeds):
                out = run_case(entry, make_input(entry, kind, seed=seed))
                counts[entry.name, kind][out.status] += 1
                if out.status == "other":
                    others[entry.name][f"{kind}: {out.detail.splitlines()[0][:160]}"] += 1
        rng = np.random.default_rng(12345)
        for _ in range(n_random):
            n, p = int(rng.integers(2, 31)), int(rng.integers(1, 11))
            case = random_case(entry, n, p, int(rng.integers(2**16)), int(rng.choice([-8, -3, 0, 3, 8])),
                               str(rng.choice(["C", "F"])), str(rng.choice(["float64", "float32"])))
            out = run_case(entry, case)
            counts[entry.name, "random shape"][out.status] += 1
            if out.status == "other":
                others[entry.name][f"random shape (n={n}, p={p}): {out.detail.splitlines()[0][:160]}"] += 1
    elapsed = time.perf_counter() - t0
    t1 = time.perf_counter()
    sel_counts, sel_other = _select_battery(n_select, args.budget)
    t2 = time.perf_counter()
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        csv_counts, csv_other = _csv_battery(n_csv, args.budget, folder)
    t3 = time.perf_counter()
    lim_counts, lim_rows = _time_limit_battery(150.0)
    t4 = time.perf_counter()

    kinds = KINDS + ["random shape"]
    status = ("ok", "clear error", "other")
    rows = []
    for entry in ENTRIES:
        tot = Counter()
        for k in kinds:
            tot.update(counts[entry.name, k])
        bad = [k for k in kinds if counts[entry.name, k]["other"]]
        rows.append([entry.name, *(tot[s] for s in status), ", ".join(bad) or "-"])
    summary = markdown_table(["entry point", "ok", "clear error", "other", "input kinds with 'other'"], rows)

    grid_rows = []
    for k in kinds:
        cells = []
        for entry in ENTRIES:
            c = counts[entry.name, k]
            cells.append(f"{c['ok']}/{c['clear error']}/{c['other']}" + (" !" if c["other"] else ""))
        grid_rows.append([k, *cells])
    grid = markdown_table(["input kind", *(e.name for e in ENTRIES)], grid_rows)

    detail = []
    for name, c in others.items():
        for what, m in sorted(c.items()):
            detail.append(f"- **{name}** x{m}: {what}")
    total = Counter()
    for c in counts.values():
        total.update(c)
    batteries = [("estimators and path functions (bad input)", total, elapsed),
                 ("select() (property-suite inputs)", sel_counts, t2 - t1),
                 ("numkfs select on fuzzed CSV files", csv_counts, t3 - t2),
                 ("every method on 20 x 200, subprocess, 150 s limit", lim_counts, t4 - t3)]
    count_rows = [[name, sum(c.values()), c["ok"], c["clear error"], c["other"], c["hang"], f"{sec:.0f}"]
                  for name, c, sec in batteries]
    all_c = Counter()
    for _, c, _ in batteries:
        all_c.update(c)
    count_rows.append(["**all**", sum(all_c.values()), all_c["ok"], all_c["clear error"], all_c["other"],
                       all_c["hang"], f"{t4 - t0:.0f}"])
    counts_table = markdown_table(["battery", "cases tried", "ok", "clean errors", "wrong outcomes", "hangs",
                                   "seconds"], count_rows)
    extra_detail = [f"- select() x{m}: {w}" for w, m in sorted(sel_other.items())]
    extra_detail += [f"- CSV x{m}: {w}" for w, m in sorted(csv_other.items())]
    body = (
        "## Counts\n\n" + counts_table + "\n\n"
        f"A case over {args.budget:.0f} s counts as a hang; 'wrong outcomes' are the 'other' outcomes "
        "(listed at the end). The machine was shared (2 cores, several sessions): seconds are indicative.\n\n"
        "## Time limit: every method on 20 x 200 (seconds, including Numba compilation)\n\n"
        + markdown_table(["method", "seconds", "status"], lim_rows) + "\n\n"
        "The runs are `_BUDGET_SCRIPT` of tests/test_selection.py; the cosso row is `cosso(X, y, 1.0)` and "
        "`select(X, y, method=\"cosso\")` (5-fold CV over 25 budgets, 150 fits) on 20 x 200 and on "
        "20 x 50.\n\n"
        f"{n_seeds} seeds per input kind, {n_random} random shapes (n in [2, 30], p in [1, 10], one column "
        f"scaled by 1e-8..1e8, C/F order, float64/float32) per entry point; {sum(total.values())} runs in "
        f"{elapsed:.0f} s: {total['ok']} ok, {total['clear error']} clear errors, {total['other']} other.\n\n"
        "Input kinds: " + ", ".join(KINDS) + " (see `make_input` in tests/test_properties.py).\n\n"
        "## Per entry point\n\n" + summary + "\n\n## Per input kind (ok / clear error / other)\n\n" + grid
        + "\n\n## The 'other' outcomes\n\n" + ("\n".join(detail + extra_detail) or "none") + "\n"
    )
    save("robustness", "Robustness battery (bad input over every entry point)", body)


if __name__ == "__main__":
    main()
