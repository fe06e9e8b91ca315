"""L1KR's cross-validation with its defaults, before and after the
event-following grid with staged early stopping.

``select(X, y, method="l1kr", random_state=0)`` (``L1KRRegressorCV()``
defaults: λ = 0.01, 5 folds, rule "best") on three training sets, each in a
fresh single-threaded process (``OPENBLAS_NUM_THREADS=1``,
``NUMBA_NUM_THREADS=1``, ``OMP_NUM_THREADS=1``; the Numba cache warmed
first):

* ``200 x 50``: ``y = sin(2 x0) + x1² + x2 + 0.3 ε`` (true features 0-2),
  tested on 2,000 fresh rows of the same law;
* ``Friedman #1``: ``make_friedman_noise(1, n_samples=200, random_state=0)``
  (true features 0-4, five noise features, no noise on y), tested on 2,000
  fresh rows (``random_state=1``);
* ``diabetes raw``: ``load_dataset("diabetes_raw")``, 3/4 of the rows to
  train (a permutation with seed 0), the other 111 to test.

"before" is the code of a git revision (default ``bc365ab``, the last one
with the evenly spaced grid), unpacked with ``git archive`` into a temporary
directory put first on ``PYTHONPATH``; "after" is the working tree.  Columns:
CPU seconds of the whole ``select`` call, the selected features, the test
MSE of the chosen model, the same for ordinary least squares on all
features, the number of CV grid points and the chosen D.

Run: ``python benchmarks/l1kr_cv.py [--before REV] [--only CASE ...]``.
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _common import markdown_table, run_child, save, unpack

CASES = ["200 x 50", "Friedman #1", "diabetes raw"]
TRUE = {"200 x 50": [0, 1, 2], "Friedman #1": [0, 1, 2, 3, 4], "diabetes raw": None}

CHILD = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from sklearn.linear_model import LinearRegression
from numkfs import select
case = sys.argv[1]
if case == "200 x 50":
    def law(rng, n):
        X = rng.standard_normal((n, 50))
        return X, np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] + 0.3 * rng.standard_normal(n)
    X, y = law(np.random.default_rng(0), 200)
    Xt, yt = law(np.random.default_rng(1), 2000)
elif case == "Friedman #1":
    from numkfs.datasets import make_friedman_noise
    X, y, _ = make_friedman_noise(1, n_samples=200, random_state=0)
    Xt, yt, _ = make_friedman_noise(1, n_samples=2000, random_state=1)
else:
    from numkfs.datasets import load_dataset
    d = load_dataset("diabetes_raw")
    idx = np.random.default_rng(0).permutation(d.target.size)
    tr, te = idx[: 3 * d.target.size // 4], idx[3 * d.target.size // 4 :]
    X, y, Xt, yt = d.data[tr], d.target[tr], d.data[te], d.target[te]
select(X[:30, :3], y[:30], method="l1kr", random_state=0, cv=2)  # warm the Numba cache
t, c = time.perf_counter(), time.process_time()
res = select(X, y, method="l1kr", random_state=0)
wall, cpu = time.perf_counter() - t, time.process_time() - c
est = res.estimator
mse = float(np.mean((est.predict(Xt) - yt) ** 2))
ols = float(np.mean((LinearRegression().fit(X, y).predict(Xt) - yt) ** 2))
print(json.dumps({"wall": wall, "cpu": cpu, "selected": [int(j) for j in np.flatnonzero(res.selected)],
                  "mse": mse, "ols": ols, "var": float(np.var(yt)), "n_grid": int(est.path_.n_points),
                  "D": float(est.D_), "D_full_end": float(est.full_path_.grid.max())}))
"""


def run(case: str, pythonpath: str | None, timeout: float = 1800.0) -> dict:
    return run_child(CHILD, [case], pythonpath, timeout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="bc365ab", help="git revision of the 'before' code")
    ap.add_argument("--only", nargs="*", default=CASES)
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "l1kr_cv_bench.json"),
                    help="JSON file of finished runs (re-used, so that a re-run only measures what is missing)")
    ap.add_argument("--fresh", action="store_true", help="measure 'after' again even when cached")
    args = ap.parse_args()
    cache = json.loads(Path(args.cache).read_text()) if Path(args.cache).exists() else {}
    before_dir = None
    for case in args.only:
        for tag in ("before", "after"):
            key = f"{tag}:{args.before if tag == 'before' else 'worktree'}:{case}"
            if key in cache and "error" not in cache[key] and not (args.fresh and tag == "after"):
                continue
            if tag == "before" and before_dir is None:
                before_dir = unpack(args.before)
            cache[key] = run(case, before_dir if tag == "before" else None)
            print(key, cache[key], flush=True)
            Path(args.cache).write_text(json.dumps(cache, indent=1))
    rows = []
    for case in CASES:
        for tag in ("before", "after"):
            r = cache.get(f"{tag}:{args.before if tag == 'before' else 'worktree'}:{case}")
            if r is None:
                continue
            if "error" in r:
                rows.append([case, tag, r["error"]] + [""] * 6)
                continue
            sel = r["selected"]
            truth = TRUE[case]
            found = f"{len(sel)}" if truth is None else f"{len(sel)} ({len(set(sel) & set(truth))}/{len(truth)} true)"
            rows.append([case, tag, round(r["cpu"], 1), found, ", ".join(map(str, sel)) if len(sel) <= 12 else "...",
                         r["mse"], r["ols"], r["n_grid"], r["D"]])
    headers = ["data", "code", "CPU s (1 thread)", "features", "selected", "test MSE", "OLS test MSE",
               "grid points", "chosen D"]
    body = (f"`select(X, y, method=\"l1kr\", random_state=0)` with its defaults, one thread; \"before\" is "
            f"revision `{args.before}`, \"after\" the working tree (`benchmarks/l1kr_cv.py`).\n\n"
            + markdown_table(headers, rows))
    save("l1kr_cv", "L1KR cross-validation: event-following grid, staged tracing", body)


if __name__ == "__main__":
    main()
