"""Whole Generalized lp-KTA path (101 values of p, alignments included) at scale.

Cases: (a) Dorothea-shaped 800 x 100,000 sparse binary, 1 % density;
(b) dense continuous 800 x 10,000; (c) Madelon (2000 x 500, real);
(d) Arcene (100 x 10,000, real).  Seconds per path point (total / 101)
beside the paper's Table 4 (2.4 GHz Xeon, 2013) and beside a plain numpy
implementation measured in the same run (numpy alignments: one n x n kernel
per feature, measured on a column subset and scaled linearly in d, which is
exact for this per-feature cost; numpy path: vectorised Newton over features
per p with the same juncture elimination, measured in full).

Then the peer for non-linear selection in high dimension, pyHSICLasso
(block HSIC Lasso, B=20, M=3), on the same data in the same run: time and
held-out accuracy of an RBF SVM on the 20 selected features.

Usage: python benchmarks/lpkta_scale.py [--quick]
Writes benchmarks/results/lpkta_scale.md.
"""
from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from numkfs.datasets._lpkta import make_dorothea_like, make_madelon_like
from numkfs.methods.lpkta import default_p_grid, lpkta_path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from alignment_kernels import load_csv, numpy_alignments  # noqa: E402

QUICK = "--quick" in sys.argv
HERE = os.path.dirname(os.path.abspath(__file__))
PAPER = {"Dorothea": 12.5, "Madelon": 2.4, "Arcene": 0.3}


def numpy_path(a, grid, lam1, lam2, eps=1e-3, tol=1e-14):
    """Plain numpy: warm-started Newton on all active features at each p
    (squared Euclidean, x0 = 0), juncture elimination below eps."""
    d = a.shape[0]
    eta = np.zeros((len(grid), d))
    active = np.flatnonzero(a > 0)
    x = a[active] / (2 * (lam1 + lam2))
    for k, p in enumerate(grid):
        aa = a[active]
        if p <= 1.0:
            x = np.maximum(0.0, (aa - lam2) / (2 * lam1))
        else:
            for _ in range(100):
                pw = x ** (p - 1.0)
                g = 2 * lam1 * x + lam2 * p * pw - aa
                gd = 2 * lam1 + lam2 * p * (p - 1.0) * pw / x
                xn = x - g / gd
                x = np.where(xn > 0, xn, 0.5 * x)
                if np.all(np.abs(g) <= tol * (np.abs(aa) + lam1 + lam2)):
                    break
        keep = x >= eps
        eta[k, active[keep]] = x[keep]
        active, x = active[keep], x[keep]
    return eta


def best(f, repeat):
    """Best wall time, best process CPU time, and the result."""
    t_best, c_best, out = np.inf, np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        c = time.process_time()
        res = f()
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        if wall < t_best:  # keep the result (and its component timings) of the best run
            t_best, out = wall, res
        c_best = min(c_best, cpu)
    return t_best, c_best, out


def run_case(name, X, y, sub):
    grid = default_p_grid()
    P = len(grid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lpkta_path(X[:, :10], y)  # warm-up
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant columns in the real data
        t_tot, c_tot, path = best(lambda: lpkta_path(X, y), 2)
    t_al = path.extra["time_alignments"]
    t_pa = path.extra["time_path"]
    a = path.extra["alignments"]
    lam1, lam2 = path.extra["lambda1"], path.extra["lambda2"]
    d = X.shape[1]
    sub = min(sub, d)
    t0 = time.perf_counter()
    a_np = numpy_alignments(X[:, :sub], y)
    t_al_np = (time.perf_counter() - t0) * d / sub
    t0 = time.perf_counter()
    eta_np = numpy_path(a, grid, lam1, lam2)
    t_pa_np = time.perf_counter() - t0
    err_a = np.max(np.abs(a[:sub] - a_np) / np.maximum(np.abs(a_np), 1e-300))
    err_p = np.max(np.abs(eta_np - path.weights))
    import numba

    row = dict(name=name, shape=f"{X.shape[0]} x {d}" + (" sparse" if sp.issparse(X) else ""),
               t_tot=t_tot, c_tot=c_tot / numba.get_num_threads(), t_al=t_al, t_pa=t_pa, per_point=t_tot / P, paper=PAPER.get(name.split()[0].split("-")[0]),
               np_tot=t_al_np + t_pa_np, np_al=t_al_np, np_pa=t_pa_np, sub=sub, err_a=err_a, err_p=err_p,
               n_sel=(path.n_selected()[0], path.n_selected()[-1]), iters=path.extra["newton_iterations"],
               safe=path.extra["safeguarded_solves"], resid=path.extra["max_G_residual"])
    print(f"{name:28s} total {t_tot:7.3f} s (alignments {t_al:.3f}, path {t_pa:.3f}) "
          f"= {t_tot / P * 1e3:.1f} ms/point | numpy {row['np_tot']:.1f} s "
          f"({row['np_tot'] / t_tot:.0f}x) | selected {row['n_sel'][0]} -> {row['n_sel'][1]}", flush=True)
    return row


def hsic_comparison(n_train=400, d=2000, k=20):
    """pyHSICLasso against lp-KTA: same data, time and held-out accuracy."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from numkfs.estimators._lpkta import LpKTAClassifier, LpKTASelector

    X, y, support = make_madelon_like(2 * n_train, d, quantize=False, random_state=7)
    Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]

    def heldout(idx):
        clf = make_pipeline(StandardScaler(), SVC(kernel="rbf", C=1.0)).fit(Xtr[:, idx], ytr)
        return clf.score(Xte[:, idx], yte)

    rows = []
    LpKTASelector(n_features_to_select=k).fit(Xtr[:, :20], ytr)  # warm-up
    t0 = time.perf_counter()
    sel = LpKTASelector(n_features_to_select=k).fit(Xtr, ytr)
    t_kta = time.perf_counter() - t0
    idx = np.flatnonzero(sel.get_support())
    clf = LpKTAClassifier(n_features_to_select=k).fit(Xtr, ytr)
    rows.append(("numkfs lp-KTA (whole path, 101 p)", t_kta, len(idx), int(support[idx].sum()), heldout(idx),
                 clf.score(Xte, yte)))
    try:
        from pyHSICLasso import HSICLasso
    except Exception as exc:  # pragma: no cover - optional peer
        print(f"pyHSICLasso not available ({exc}); comparison skipped.")
        rows.append(("pyHSICLasso", np.nan, 0, 0, np.nan, np.nan))
        return rows, X.shape
    import contextlib
    import io

    h = HSICLasso()
    h.input(Xtr, ytr)
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        h.classification(k, B=20, M=3, n_jobs=2)
    t_h = time.perf_counter() - t0
    idx_h = np.asarray(h.get_index(), dtype=int)
    rows.append(("pyHSICLasso (block, B=20, M=3)", t_h, len(idx_h), int(support[idx_h].sum()), heldout(idx_h),
                 np.nan))
    for r in rows:
        print(f"{r[0]:38s} {r[1]:7.2f} s  {r[2]} features ({r[3]} true)  held-out SVM acc {r[4]:.3f}", flush=True)
    return rows, (n_train, d)


def main():
    import numba

    rng = np.random.default_rng(0)
    rows = []
    Xd, yd, _ = make_dorothea_like(800, 20_000 if QUICK else 100_000, density=0.01, random_state=0)
    rows.append(run_case("Dorothea-shaped", Xd, yd, 100))
    n, d = 800, (2000 if QUICK else 10_000)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 + 0.5 * rng.normal(size=n) > 2.0, 1.0, -1.0)
    rows.append(run_case("dense continuous", X, y, 40))
    Xm, ym = load_csv("madelon_train.csv")
    rows.append(run_case("Madelon", Xm, ym, 10))
    Xa, ya = load_csv("arcene_train.csv")
    rows.append(run_case("Arcene", Xa, ya, 1000))
    hrows, hshape = hsic_comparison(200 if QUICK else 400, 1000 if QUICK else 2000)

    P = len(default_p_grid())
    lines = [
        "# Generalized lp-KTA: the whole path at scale",
        "",
        f"`python benchmarks/lpkta_scale.py{' --quick' if QUICK else ''}`: {numba.get_num_threads()} Numba threads, "
        f"{os.cpu_count()} cores, shared machine (load average at the end {os.getloadavg()[0]:.1f}; "
        "other jobs were running, so absolute times are pessimistic; ratios are same-run).",
        f"Path: p = 2, 1.99, ..., 1 ({P} points), squared Euclidean, x0 = 0, eps = 1e-3, second-order "
        "predictor, default λ1 = λ2 = max(a)/2, rbf kernels with γ_i = 1/var(x_i). Times include the alignments "
        "(best of 2 runs).",
        "",
        "numpy baseline: alignments by one n x n `np.exp` kernel per feature, timed on the first `cols` columns "
        "and scaled linearly to d (exactly linear work); path by vectorised numpy Newton per p, timed in full.",
        "",
        "CPU s / thread: process CPU time of the whole path divided by the Numba threads, about the wall "
        "time on otherwise idle cores.",
        "",
        "| data | shape | numkfs total (s) | CPU s / thread | alignments (s) | path (s) | s / point | paper Table 4 s / point "
        "| numpy total (s) | numpy / numkfs | cols timed for numpy | max rel. diff a | max abs diff η | "
        "selected p=2 → p=1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        paper = "—" if r["paper"] is None else f"{r['paper']}"
        lines.append(
            f"| {r['name']} | {r['shape']} | {r['t_tot']:.3f} | {r['c_tot']:.3f} | {r['t_al']:.3f} | {r['t_pa']:.3f} | "
            f"{r['per_point']:.4f} | {paper} | {r['np_tot']:.1f} | {r['np_tot'] / r['t_tot']:.0f}x | {r['sub']} | "
            f"{r['err_a']:.1e} | {r['err_p']:.1e} | {r['n_sel'][0]} → {r['n_sel'][1]} |")
    lines += [
        "",
        f"Newton statistics: " + "; ".join(
            f"{r['name']}: {r['iters']} iterations, {r['safe']} safeguarded re-solves, max relative |G| "
            f"{r['resid']:.1e}" for r in rows),
        "",
        f"## Peer: pyHSICLasso on the same data ({hshape[0]} train x {hshape[1]} features, Madelon-like "
        "continuous, 20 relevant features, same number of held-out rows)",
        "",
        "Held-out accuracy: an RBF SVM (standardised, C = 1) on the 20 selected features, same for both;",
        "for lp-KTA also its own SVM on the learned kernel (LpKTAClassifier).",
        "",
        "| method | time (s) | features | true among them | held-out acc. (RBF SVM on selected) | LpKTAClassifier acc. |",
        "|---|---|---|---|---|---|",
    ]
    for r in hrows:
        own = "—" if np.isnan(r[5]) else f"{r[5]:.3f}"
        lines.append(f"| {r[0]} | {r[1]:.2f} | {r[2]} | {r[3]} | {r[4]:.3f} | {own} |")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "lpkta_scale.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
