"""The linear garrote on wide data: n = 30 rows, p = 300 ... 10,000.

Random Gaussian X with 5 true features (β = 3, -2, 2, 1.5, -1.5; noise sd
0.5).  Timed with numkfs's defaults: ``garrote_path(X, y)`` (100 λ2 values
down to 1e-3 λ2_max) and ``select(X, y, method="garrote")`` (the λ2 path on
all rows plus 5-fold CV, 51 points each with λ2 = 0 appended), and
``numkfs select`` on a CSV of the widest size (a new process: import and
Numba cache load included).

*after*: the native solver as shipped (p > n: the working-set solver in the
residual form with the strong rule and exact solves on the active
partition).  *before*: the Gram-matrix coordinate descent of numkfs <= 0.1,
still reachable with ``numkfs.solvers.native.garrote.NATIVE_ALGORITHM =
"gram"``; it is run where it finishes within a few minutes (p <= 1,000,
``--before-max``); the larger sizes quote the time recorded for it
(``quoted``).  Each time is the best of a few runs (CPU
seconds of this process: the machine is shared); ``solves`` counts the
native solves, ``ratio`` is the time over the time at p = 300 with the same
solver and the done-when target is garrote and select at 30 x 3,000 within
20x their time at 30 x 300.

Usage: ``python benchmarks/garrote_wide.py [--quick] [--before-max P]``
(quick: no p = 10,000, no before runs); writes
``benchmarks/results/garrote_wide.md``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from _common import best_time, markdown_table, save

import numkfs.solvers.native.garrote as native
from numkfs import select
from numkfs.methods.garrote import garrote_path

N = 30


def make_data(p, n=N, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:5] = [3.0, -2.0, 2.0, 1.5, -1.5]
    return X, X @ beta + 0.5 * rng.standard_normal(n)


class _Count:
    """Counts the native solves (both algorithms) and their sweeps."""

    def __init__(self):
        self.solves = 0
        self._orig = (native.solve_linear_garrote, native.solve_linear_garrote_wide)

    def __enter__(self):
        gram, wide = self._orig

        def g(*a, **k):
            self.solves += 1
            return gram(*a, **k)

        def w(*a, **k):
            self.solves += 1
            return wide(*a, **k)

        native.solve_linear_garrote, native.solve_linear_garrote_wide = g, w
        return self

    def __exit__(self, *exc):
        native.solve_linear_garrote, native.solve_linear_garrote_wide = self._orig


def run(fn, X, y, algorithm, budget):
    native.NATIVE_ALGORITHM = algorithm
    try:
        with _Count() as c:
            fn(X, y)  # warm (compiled kernels, first-call costs) and count
        solves = c.solves
        wall, cpu, out = best_time(fn, X, y, min_repeat=1 if budget == 0 else 2, budget=budget, cpu=True)
    finally:
        native.NATIVE_ALGORITHM = "auto"
    return wall, cpu, solves, out


def time_cli(p):
    X, y = make_data(p)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, f"wide_{p}.csv")
        header = ",".join([f"x{j}" for j in range(p)] + ["y"])
        np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="")
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "numkfs.cli", "select", path, "--method", "garrote", "-q"],
                             capture_output=True, text=True, timeout=600)
        wall = time.perf_counter() - t0
    return wall, out.returncode


def main(quick=False, before_max=1000):
    ps = [300, 1000, 3000] if quick else [300, 1000, 3000, 10000]
    fns = {"garrote_path": lambda X, y: garrote_path(X, y),
           "select": lambda X, y: select(X, y, method="garrote")}
    garrote_path(*make_data(50), n_grid=3)  # compile / load the kernels of both algorithms
    native.NATIVE_ALGORITHM = "gram"
    garrote_path(*make_data(50), n_grid=3)
    native.NATIVE_ALGORITHM = "auto"
    quoted = {("select", 3000): "> 900"}
    before_max = {"garrote_path": max(before_max, 3000), "select": before_max}
    rows, after, before = [], {}, {}
    for name, fn in fns.items():
        for p in ps:
            X, y = make_data(p)
            wall, cpu, solves, out = run(fn, X, y, "auto", budget=2.0)
            after[name, p] = cpu
            b_cpu = b_solves = float("nan")
            if not quick and p <= before_max[name]:
                _, b_cpu, b_solves, b_out = run(fn, X, y, "gram", budget=0)
                before[name, p] = b_cpu
            path = out if name == "garrote_path" else out.path
            sel = int(path.n_selected()[-1]) if name == "garrote_path" else len(out.selected)
            rows.append([name, p, solves, wall, cpu, cpu / after[name, ps[0]],
                         b_cpu if (name, p) in before else quoted.get((name, p), "-"),
                         (before[name, p] / before[name, ps[0]]) if (name, p) in before and (name, ps[0]) in before
                         else "-",
                         (before[name, p] / cpu) if (name, p) in before else "-", sel])
            print(rows[-1], flush=True)
    cli_wall, rc = time_cli(3000)
    verdict = {name: after[name, 3000] / after[name, 300] for name in fns}
    met = all(v <= 20 for v in verdict.values())
    body = (
        f"n = {N}, Gaussian X, 5 true features; CPU seconds of this process, best of >= 2 runs after a warm-up "
        f"(before: one run).  `solves`: native solves per call (after; the before solver makes the same number).  "
        f"`selected`: features with w > 1e-5 at the path's smallest λ2 (garrote_path) or chosen by select.\n\n"
        + markdown_table(["call", "p", "solves", "after wall (s)", "after CPU (s)", "after / p=300",
                          "before CPU (s)", "before / p=300", "speed-up", "selected"], rows)
        + f"\n\n`numkfs select` on a 30 x 3,000 CSV (new process, import included): {cli_wall:.1f} s wall "
        f"(exit {rc}); before: killed at 300 s.\n\n"
        f"Done-when (30 x 3,000 within 20x of 30 x 300): garrote_path {verdict['garrote_path']:.1f}x, "
        f"select {verdict['select']:.1f}x: {'met' if met else 'NOT met'}."
    )
    save("garrote_wide", "Linear garrote on wide data (n = 30)", body)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--before-max", type=int, default=1000,
                    help="largest p at which select is run with the old Gram solver (default 1000)")
    a = ap.parse_args()
    main(a.quick, a.before_max)
