"""Per-feature RBF alignments: numkfs.kernels.alignment.feature_alignments
against a plain numpy loop over features, and against the same Numba pair
loop with libm's exp (to show what the vectorised fast exp buys).

All in the same run; the numpy and libm baselines are measured on a column
subset and scaled linearly to the full width (cost is exactly linear in d).

Usage: python benchmarks/alignment_kernels.py [--quick]
Writes benchmarks/results/alignment_kernels.md.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np
import scipy.sparse as sp

from _common import best_time, best_times
from numkfs._jit import pjit, prange
from numkfs.kernels.alignment import alignment_target, feature_alignments, resolve_gamma

QUICK = "--quick" in sys.argv
HERE = os.path.dirname(os.path.abspath(__file__))


def numpy_alignments(X, y):
    """The obvious numpy implementation: one n x n kernel per feature, with
    the centring done by the identities zᵀHKHz = zᵀKz (z centred) and
    tr(HKH) = n - 1ᵀK1/n instead of forming HKH (which would be O(n³))."""
    Xd = X.toarray() if sp.issparse(X) else X
    n, d = Xd.shape
    g = resolve_gamma(Xd)
    z = alignment_target(y)[0][:, 0]
    out = np.zeros(d)
    for i in range(d):
        x = Xd[:, i]
        K = np.exp(-g[i] * (x[:, None] - x[None, :]) ** 2)
        s2 = K.sum()
        tr = n - s2 / n
        out[i] = z @ K @ z / tr if tr > 1e-12 else 0.0
    return out


@pjit(fast=True)
def _libm_pairs(T, z, S1, S2):
    d, n = T.shape
    for i in prange(d):
        t = T[i]
        s1 = 0.0
        s2 = 0.0
        for j in range(n - 1):
            a1 = 0.0
            a2 = 0.0
            for kk in range(n - j - 1):
                k = j + 1 + kk
                dl = t[j] - t[k]
                e = np.exp(-(dl * dl))
                a1 += z[k] * e
                a2 += e
            s1 += z[j] * a1
            s2 += a2
        S1[i] = s1
        S2[i] = s2


def libm_alignments(X, y):
    n, d = X.shape
    g = resolve_gamma(X)
    z = alignment_target(y)[0][:, 0]
    T = np.ascontiguousarray(X.T) * np.sqrt(g)[:, None]
    S1 = np.empty(d)
    S2 = np.empty(d)
    _libm_pairs(T, z, S1, S2)
    zz = z @ z
    return (zz + 2 * S1) / (n - (n + 2 * S2) / n)


def load_csv(name):
    """A data set of ../shared/data (beside the checkout); last column is y."""
    path = os.path.join(HERE, "..", "..", "shared", "data", name)
    A = np.loadtxt(path, delimiter=",", skiprows=1)
    return A[:, :-1], A[:, -1]


def main():
    import numba

    rng = np.random.default_rng(0)
    cases = []
    n = 800
    d = 2000 if QUICK else 10_000
    cases.append((f"dense continuous {n} x {d}", rng.normal(size=(n, d)), np.sign(rng.normal(size=n)), 100))
    cases.append(("dense continuous 800 x 2,000", rng.normal(size=(800, 2000)), np.sign(rng.normal(size=800)), 100))
    Xm, ym = load_csv("madelon_train.csv")
    cases.append(("Madelon 2000 x 500 (integer, ties)", Xm, ym, 20))
    Xa, ya = load_csv("arcene_train.csv")
    cases.append(("Arcene 100 x 10,000", Xa, ya, 2000))
    Xb = (rng.random((800, 2000)) < 0.3).astype(float)
    cases.append(("dense binary 800 x 2,000", Xb, np.sign(rng.normal(size=800)), 200))
    Xs = sp.random(800, 100_000, density=0.01, format="csc", random_state=1)
    Xs.data[:] = 1.0
    cases.append(("sparse binary 800 x 100,000 (1 %)", Xs, np.sign(rng.normal(size=800)), 200))

    # warm-up (compilation / cache load)
    feature_alignments(cases[1][1][:50, :5], cases[1][2][:50])
    feature_alignments(Xs[:50, :5], cases[1][2][:50])
    libm_alignments(cases[1][1][:50, :2], cases[1][2][:50])

    rows = []
    for name, X, y, sub in cases:
        d = X.shape[1]
        _, c_fast, a = best_time(feature_alignments, X, y, min_repeat=1, budget=0.0, cpu=True)
        sub = min(sub, d)
        cols = np.arange(sub)
        Xsub = X[:, cols]
        a_np = numpy_alignments(Xsub, y)
        t_fast, t_np = best_times([lambda: feature_alignments(X, y), lambda: numpy_alignments(Xsub, y)],
                                  budget=0.5)
        t_np *= d / sub
        err = np.max(np.abs(a[cols] - a_np) / np.maximum(np.abs(a_np), 1e-300))
        if sp.issparse(X):
            t_libm = np.nan
        else:
            t_l, _ = best_time(libm_alignments, Xsub, y, min_repeat=1, budget=0.0)
            t_libm = t_l * d / sub
        rows.append((name, t_fast, c_fast, t_libm, t_np, t_np / t_fast, err, sub))
        print(f"{name:40s} numkfs {t_fast:8.3f} s  libm-exp {t_libm:8.2f} s  numpy {t_np:8.2f} s"
              f"  ratio {t_np / t_fast:7.1f}x  max rel err {err:.1e}", flush=True)

    lines = [
        "# Per-feature RBF alignments: numkfs vs numpy",
        "",
        f"`python benchmarks/alignment_kernels.py{' --quick' if QUICK else ''}`; "
        f"{numba.get_num_threads()} Numba threads on {os.cpu_count()} cores, shared machine "
        f"(load average at the end: {os.getloadavg()[0]:.1f}); numkfs and numpy: best runs in three interleaved rounds of 0.5 s each (at least one run per round).",
        "",
        "numpy: one n x n kernel per feature (`np.exp` is SIMD in numpy), measured on the first",
        "`cols` columns and scaled linearly to d. libm-exp: the same Numba pair loop as numkfs",
        "but with `np.exp` (libm, one value at a time), also on a subset and scaled.",
        "numkfs: exact, grouped pair sums for columns with ties, CSC closed form for sparse binary.",
        "",
        "CPU s / thread: process CPU time of numkfs divided by the Numba threads, i.e. about the",
        "wall time on otherwise idle cores (the wall times here include waiting for other jobs).",
        "",
        "| case | numkfs wall (s) | numkfs CPU s / thread | Numba + libm exp (s) | numpy (s) | numpy / numkfs (wall) "
        "| max rel. diff vs numpy | cols for baselines |",
        "|---|---|---|---|---|---|---|---|",
    ]
    nt = numba.get_num_threads()
    for name, tf, cf, tl, tn, r, e, sub in rows:
        tl_s = "—" if np.isnan(tl) else f"{tl:.2f}"
        lines.append(f"| {name} | {tf:.3f} | {cf / nt:.3f} | {tl_s} | {tn:.2f} | {r:.0f}x | {e:.1e} | {sub} |")
    big = rows[0]
    lines += [
        "",
        "## Targets",
        "",
        f"- {'PASS' if big[1] < 1.0 else 'FAIL'}: {big[0]} under 1 s on 2 cores (wall {big[1]:.3f} s)",
    ]
    for name, tf, cf, tl, tn, r, e, sub in rows:
        lines.append(f"- {'PASS' if r >= 20 else 'FAIL'}: {name} at least 20x numpy ({r:.0f}x)")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "alignment_kernels.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
