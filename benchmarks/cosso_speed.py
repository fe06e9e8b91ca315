"""COSSO at p >> n: ``select(X, y, method="cosso")`` (default 5-fold CV of M).

The wide case: X 20 x p standard normal (rng seed 2), y = x0 + 0.1 noise,
p = 50 and 200 (10 n).  GCV picks a tiny λ0 (~4e-8) there, where Lin &
Zhang's alternation crawls.  Per shape the table gives the wall time of
``select()`` (Numba compiled beforehand, best of ``--repeat`` runs), the
number of COSSO fits it ran (25 budgets x (1 + 5 folds)), their iterations
(total and max), how many stopped unconverged, and the largest final
duality gap relative to J (``COSSOFit.gap``; not available before the gap
existed).  One more column per shape: the objective J at M = 1 of a single
``cosso(X, y, 1.0)`` fit.

``--baseline-src DIR`` also runs this script on another numkfs source tree
(e.g. ``git archive <commit> numkfs | tar -x -C DIR``) in a subprocess and
adds its rows, labelled ``--baseline-label``: the before/after comparison
comes from the same machine and the same minutes.

Usage: ``python benchmarks/cosso_speed.py [--repeat 3] [--baseline-src DIR
--baseline-label TEXT]``; writes ``benchmarks/results/cosso_speed.md``.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np


def issue_data(p):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(20)


def measure(p, repeat):
    """Time select(method="cosso") and count the fits' iterations (spying on the per-budget solve)."""
    from numkfs import select

    C = importlib.import_module("numkfs.methods.cosso")
    X, y = issue_data(p)
    fits = []
    orig = C._alternate

    def spy(*a, **k):
        f = orig(*a, **k)
        fits.append(f)
        return f

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        C.cosso(X[:, :5], y, 1.0, max_iter=3)  # compile
        C._alternate = spy
        try:
            best = np.inf
            for _ in range(repeat):
                fits.clear()
                t = time.perf_counter()
                res = select(X, y, method="cosso")
                best = min(best, time.perf_counter() - t)
            run = list(fits)
            J1 = C.cosso(X, y, 1.0).objective
        finally:
            C._alternate = orig
    it = np.array([f.n_iter for f in run])
    gaps = [getattr(f, "gap", np.nan) / f.objective for f in run]
    support = np.flatnonzero(np.asarray(res.support if hasattr(res, "support") else res.selected)).tolist()
    return {"p": p, "seconds": best, "fits": len(run), "iter_total": int(it.sum()), "iter_max": int(it.max()),
            "unconverged": int(sum(not f.converged for f in run)), "max_gap_rel": float(np.nanmax(gaps))
            if not np.all(np.isnan(gaps)) else float("nan"), "J_M1": float(J1), "support": support}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ps", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--json", action="store_true", help="print the measurements as JSON (used for the baseline)")
    ap.add_argument("--baseline-src", default=None)
    ap.add_argument("--baseline-label", default="baseline")
    ap.add_argument("--baseline-timeout", type=float, default=1800)
    args = ap.parse_args()
    rows = [measure(p, args.repeat) for p in args.ps]
    if args.json:
        print(json.dumps(rows))
        return
    base = []
    if args.baseline_src:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline_src))
        out = subprocess.run([sys.executable, __file__, "--json", "--repeat", "1", "--ps", *map(str, args.ps)],
                             env=env, capture_output=True, text=True, timeout=args.baseline_timeout)
        if out.returncode != 0:
            raise SystemExit(out.stderr[-3000:])
        base = json.loads(out.stdout.strip().splitlines()[-1])

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _common import markdown_table, save

    import numkfs

    headers = ["code", "p", "select() s", "fits", "iterations", "max iter", "unconverged", "max gap / J",
               "J at M=1", "support"]

    def row(label, r):
        return [label, r["p"], r["seconds"], r["fits"], r["iter_total"], r["iter_max"], r["unconverged"],
                r["max_gap_rel"], r["J_M1"], str(r["support"][:12]) + (" ..." if len(r["support"]) > 12 else "")]

    table = [row(f"{args.baseline_label} (1 run)", r) for r in base]
    table += [row(f"this tree (best of {args.repeat})", r) for r in rows]
    body = (
        f"n = 20, p in {args.ps}, rng seed 2, y = x0 + 0.1 N(0, 1); `select(X, y, method=\"cosso\")` "
        f"with its defaults (GCV λ0, 25 budgets M, 5-fold CV), Numba compiled beforehand. numkfs from "
        f"{os.path.dirname(numkfs.__file__)}. 'iterations': alternations (before) or Newton iterations (now) "
        f"over all fits; 'unconverged': fits stopped at max_iter = 200 (or stalled with the gap above tol); "
        f"'max gap / J': the largest final Frank-Wolfe duality gap relative to J (an upper bound on the "
        f"relative distance to the optimum; '-' where the code did not compute it). 'J at M=1': objective of "
        f"`cosso(X, y, 1.0)` (lower is better; the problem is convex in (b, f, θ)).\n\n"
        + markdown_table(headers, table)
        + "\n\nThe machine was shared (2 cores, another session benchmarking): seconds are indicative; the "
          "baseline and this tree ran in the same minutes."
    )
    save("cosso_speed", "COSSO at p >> n: select(method='cosso')", body)


if __name__ == "__main__":
    main()
