"""numkfs's default against the feature selectors a user would otherwise reach for (issue #46).

Part ``sizes`` (the only part so far): on the simulation of issue #46,
n rows of p standard normal features and

    y = 2 sin(x0) + x1² + exp(x2 / 2) + x3 x4 + ε,   ε ~ N(0, 1),

(five true features), each selector in a fresh process (so that neither
pays for the other's imports, compilation or warm caches... except
numkfs's Numba cache on disk, warmed by one small call first), timed by
``time.process_time`` of that process (all its threads):

* ``knife``: ``numkfs.select(X, y)``, every default (KNIFE, its CV);
* ``boruta``: ``BorutaPy(RandomForestRegressor(max_depth=7, n_jobs=-1),
  n_estimators="auto")`` (the settings Boruta's README recommends);
* ``permutation``: ``HistGradientBoostingRegressor()`` fitted on 70 % of the
  rows and ``sklearn.inspection.permutation_importance`` (10 repeats) on the
  other 30 %: a feature is selected when its mean importance exceeds twice
  its standard deviation.

A hit: every true feature selected, with at most one false one.  A peer
that is not installed has its row say so.  Results go to
``benchmarks/results/peers.md`` (the whole file, rebuilt from the run).

Usage::

    python benchmarks/peers.py                       # sizes 1000x50, 4000x40 (seed 0)
    python benchmarks/peers.py --sizes 1000x50 10000x50 --seeds 0 1 2
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings

import numpy as np

TRUE = [0, 1, 2, 3, 4]
SELECTORS = ("knife", "boruta", "permutation")


def simulate(n, p, seed):
    """The simulation of issue #46 (five true features, noise standard deviation 1)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = 2 * np.sin(X[:, 0]) + X[:, 1] ** 2 + np.exp(X[:, 2] / 2) + X[:, 3] * X[:, 4] + rng.standard_normal(n)
    return X, y


def run_one(selector, n, p, seed):
    """One selector on one data set, in this process: a dict with the selection and CPU seconds."""
    X, y = simulate(n, p, seed)
    if selector == "knife":
        import numkfs

        rng = np.random.default_rng(1)
        numkfs.select(rng.standard_normal((30, 3)), rng.standard_normal(30), n_grid=4)  # warm the kernels
    c0, t0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if selector == "knife":
            res = numkfs.select(X, y, random_state=seed)
            support, note = np.flatnonzero(res.selected), f"approximation_={res.estimator.approximation_}"
        elif selector == "boruta":
            from boruta import BorutaPy
            from sklearn.ensemble import RandomForestRegressor

            rf = RandomForestRegressor(max_depth=7, n_jobs=-1, random_state=seed)
            bor = BorutaPy(rf, n_estimators="auto", random_state=seed).fit(X, y)
            support, note = np.flatnonzero(bor.support_), f"{bor.n_features_} confirmed"
        else:
            from sklearn.ensemble import HistGradientBoostingRegressor
            from sklearn.inspection import permutation_importance
            from sklearn.model_selection import train_test_split

            Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, random_state=seed)
            gb = HistGradientBoostingRegressor(random_state=seed).fit(Xa, ya)
            imp = permutation_importance(gb, Xb, yb, n_repeats=10, random_state=seed)
            support = np.flatnonzero(imp.importances_mean > 2 * imp.importances_std)
            note = "mean > 2 sd"
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    true = len(set(support.tolist()) & set(TRUE))
    false = len(support) - true
    return dict(selector=selector, n=n, p=p, seed=seed, true=true, false=false,
                hit=bool(true == len(TRUE) and false <= 1), cpu=cpu, wall=wall, note=note)


def run_fresh(selector, n, p, seed):
    """:func:`run_one` in a fresh Python process; a failure (not installed, crashed) as a row saying why."""
    out = subprocess.run([sys.executable, __file__, "--one", selector, str(n), str(p), str(seed)],
                         capture_output=True, text=True)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode == 0 and lines:
        return json.loads(lines[-1])
    err = (out.stderr.strip().splitlines() or ["no output"])[-1]
    return dict(selector=selector, n=n, p=p, seed=seed, true=None, false=None, hit=None, cpu=float("nan"),
                wall=float("nan"), note=f"failed: {err[:120]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["1000x50", "4000x40"], help="NxP, e.g. 4000x40")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--one", nargs=4, metavar=("SELECTOR", "N", "P", "SEED"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        sel, n, p, seed = args.one
        print(json.dumps(run_one(sel, int(n), int(p), int(seed))))
        return 0
    from _common import markdown_table, save

    rows = []
    for size in args.sizes:
        n, p = (int(v) for v in size.lower().split("x"))
        for seed in args.seeds:
            for sel in SELECTORS:
                r = run_fresh(sel, n, p, seed)
                rows.append(r)
                print(r, flush=True)
    table = markdown_table(
        ["rows x features", "seed", "selector", "true (of 5)", "false", "hit", "CPU s", "wall s", "note"],
        [[f"{r['n']} x {r['p']}", r["seed"], r["selector"], "-" if r["true"] is None else r["true"],
          "-" if r["false"] is None else r["false"], "-" if r["hit"] is None else ("yes" if r["hit"] else "no"),
          r["cpu"], r["wall"], r["note"]] for r in rows])
    ratio = []
    for size in args.sizes:
        n, p = (int(v) for v in size.lower().split("x"))
        k = [r["cpu"] for r in rows if (r["n"], r["p"], r["selector"]) == (n, p, "knife")]
        b = [r["cpu"] for r in rows if (r["n"], r["p"], r["selector"]) == (n, p, "boruta")]
        if k and b and np.all(np.isfinite(k + b)):
            ratio.append(f"- {n} x {p}: KNIFE's default used {np.sum(k) / np.sum(b):.2f}x Boruta's CPU "
                         f"({np.sum(k):.0f} s against {np.sum(b):.0f} s over {len(k)} seed(s)).")
    body = ("y = 2 sin(x0) + x1² + exp(x2/2) + x3·x4 + N(0, 1) noise on standard normal features; each "
            "selector in a fresh process, CPU seconds of that process (all threads). A hit: all five true "
            "features with at most one false one. `python benchmarks/peers.py --sizes "
            + " ".join(args.sizes) + " --seeds " + " ".join(map(str, args.seeds)) + "`.\n\n"
            + table + "\n\n" + "\n".join(ratio))
    save("peers", "numkfs's default against Boruta and permutation importance (issue #46)", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
