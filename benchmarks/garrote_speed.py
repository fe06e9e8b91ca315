"""Linear garrote path: native berHu coordinate descent against CVXPY backends.

A 100-point λ2 path at n = 1000, p = 200 (λ1 = 1, 20 true features).  The
native solver runs the whole path (warm starts, Numba compiled beforehand).
The CVXPY backends solve the QR-compressed formulation, built once with
Parameters; because a full path takes them tens of seconds each, they are
timed on a subset of the path points (spread over the whole path) and their
path time is extrapolated per point: setup (build + first
canonicalisation) + 100 x the mean time per point.  The objective gap is
(native - backend) / max(1, |backend|) at those points: negative means the
native answer is better.  One extra row solves the *uncompressed* form
(n x p least-squares block) with the fastest backend on two points, to show
what the QR compression buys.

Usage: ``python benchmarks/garrote_speed.py [--quick]`` (quick: 3 subset
points, no uncompressed row); writes ``benchmarks/results/garrote_speed.md``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from _common import markdown_table, save

from numkfs.methods.garrote import garrote_path
from numkfs.solvers import get_backend
from numkfs.solvers.native.garrote import LinearGarrote, garrote_lambda2_max


def make_data(n=1000, p=200, k=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X -= X.mean(0)
    beta = np.zeros(p)
    beta[:k] = rng.choice([-1, 1], k) * rng.uniform(0.5, 2.0, k)
    y = X @ beta + 2.0 * rng.standard_normal(n)
    return X, y - y.mean()


def time_backend(X, y, lam1, grid, idx, solver, compress=True):
    t0 = time.perf_counter()
    prob = LinearGarrote(X, y, lam1, float(grid[idx[0]]), compress=compress)
    prob.cvxpy_problem  # build
    build = time.perf_counter() - t0
    backend = get_backend(solver)
    per_point, objs, first, statuses = [], [], None, set()
    for i in idx:
        prob.update(lambda2=float(grid[i]))
        t0 = time.perf_counter()
        res = backend.solve(prob)
        dt = time.perf_counter() - t0
        statuses.add(str(res.status))
        if first is None:
            first = dt  # includes the first canonicalisation
        else:
            per_point.append(dt)
        objs.append(res.objective)
    mean_pt = float(np.mean(per_point)) if per_point else first
    return {"setup": build + max(first - mean_pt, 0.0), "per_point": mean_pt, "objective": np.array(objs),
            "status": "/".join(sorted(statuses))}


def main(quick: bool = False):
    X, y = make_data()
    n, p = X.shape
    lam1, n_points = 1.0, 100
    lmax = garrote_lambda2_max(X, y, lam1)
    grid = lmax * np.geomspace(1.0, 1e-3, n_points)
    idx = np.array([0, 49, 99]) if quick else np.linspace(0, n_points - 1, 6).round().astype(int)

    garrote_path(X[:50, :5], y[:50], lam1, n_grid=3)  # compile the Numba loop
    t0 = time.perf_counter()
    path = garrote_path(X, y, lam1, grid, fit_intercept=False, solver="native")
    t_native = time.perf_counter() - t0
    native_obj = path.objective[idx]

    rows, backends = [], {}
    for solver in ["CLARABEL", "ECOS", "SCS"]:
        r = time_backend(X, y, lam1, grid, idx, solver)
        r["path"] = r["setup"] + n_points * r["per_point"]
        gap = (native_obj - r["objective"]) / np.maximum(1.0, np.abs(r["objective"]))
        r["gap_max"], r["gap_min"] = float(gap.max()), float(gap.min())
        backends[solver] = r
    # the fastest backend whose answers were all accurate
    ok = [s for s in backends if backends[s]["status"] == "optimal"] or list(backends)
    fastest = min(ok, key=lambda s: backends[s]["path"])
    rows.append(["native (berHu CD, Numba)", "measured, 100 points", "optimal", t_native,
                 t_native / n_points * 1e3, 1.0, "-", "-"])
    for s, r in backends.items():
        rows.append([f"{s} (CVXPY, QR-compressed)", f"extrapolated from {len(idx)} points", r["status"], r["path"],
                     r["per_point"] * 1e3, r["path"] / t_native, r["gap_max"], r["gap_min"]])
    if not quick:
        r = time_backend(X, y, lam1, grid, idx[[2, 3]], fastest, compress=False)
        path_u = r["setup"] + n_points * r["per_point"]
        rows.append([f"{fastest} (CVXPY, uncompressed n x p)", "extrapolated from 2 points", r["status"], path_u,
                     r["per_point"] * 1e3, path_u / t_native, "-", "-"])

    speedup = backends[fastest]["path"] / t_native
    worst_gap = max(abs(backends[fastest]["gap_max"]), abs(backends[fastest]["gap_min"]))
    body = (
        f"n = {n}, p = {p}, λ1 = {lam1}, {n_points} λ2 values log-spaced from λ2_max = {lmax:.4g} "
        f"down to 1e-3 λ2_max; {int(path.n_selected()[-1])} features selected at the end of the path.\n"
        f"CVXPY backends timed on path points {idx.tolist()} (problem built once, Parameters) and "
        f"extrapolated per point; tolerances: CLARABEL 1e-9, ECOS numkfs default, SCS 1e-9; native KKT 1e-10.\n"
        f"Objective gap = (native - backend) / max(1, |backend|) at those points (max, min).\n\n"
        + markdown_table(["solver", "timing", "status", "path time (s)", "ms / point", "x native", "gap max", "gap min"], rows)
        + f"\n\nNative is {speedup:.0f}x faster than the fastest accurate CVXPY backend ({fastest}); "
        f"largest |objective gap| to it {worst_gap:.1e} "
        f"(target: >= 20x, gap < 1e-6: {'met' if speedup >= 20 and worst_gap < 1e-6 else 'NOT met'})."
    )
    save("garrote_speed", "Linear garrote path: native vs CVXPY", body)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    main(ap.parse_args().quick)
