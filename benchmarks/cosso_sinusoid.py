"""COSSO on the KNIFE paper's sinusoid simulation (Table 1 reports COSSO 7.01).

x ~ N(0, I_10), β = [6, -4, 3, 2, -2, 0, ...], y = sin(x) β + N(0, 1); train
100, test 1000 (``numkfs.datasets._knife.make_sinusoid``).  COSSO with the
Sobolev (cubic spline) kernel, λ0 by GCV with every θ_j = 1, M by 5-fold CV
(COSSO's defaults, :class:`numkfs.COSSORegressorCV`), each point scored by
its relaxed refit (``relax=True``, the default) and by the path's own fit
(``relax=False``, Lin & Zhang's CV).

:func:`fit_cosso` (one split) and :func:`cosso_sinusoid` (replicates) are
importable, so ``benchmarks/knife_paper.py`` can report COSSO's row on its
own replicates; run as a script this prints and saves the table over 5
replicates to ``benchmarks/results/cosso_sinusoid.md``.

Usage: ``python benchmarks/cosso_sinusoid.py [--replicates N] [--kernel sobolev|rbf]``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

#: KNIFE paper, Table 1 (50 replicates): COSSO training error, test error,
#: % true features and % noise features selected.
PAPER_COSSO = {"train_mse": 2.2851, "test_mse": 7.0126, "pct_true": 94.0, "pct_noise": 31.7}


def fit_cosso(X, y, X_test, y_test, true_support=None, *, kernel: str = "sobolev", cv: int = 5,
              random_state=None, selection_tol: float = 0.0, relax: bool = True) -> dict:
    """Fit COSSO (λ0 by GCV, M by ``cv``-fold CV) on one train/test split.

    For ``benchmarks/knife_paper.py``: call it on each replicate's data.
    Returns ``test_mse``, ``train_mse``, ``pct_true``/``pct_noise`` (when
    ``true_support`` is given; θ_j > ``selection_tol`` counts as selected),
    ``M``, ``lambda0``, ``seconds``.
    """
    from numkfs.estimators._cosso import COSSORegressorCV

    t0 = time.perf_counter()
    est = COSSORegressorCV(kernel=kernel, cv=cv, relax=relax, random_state=random_state).fit(X, y)
    out = {"seconds": time.perf_counter() - t0,
           "test_mse": float(np.mean((est.predict(X_test) - y_test) ** 2)),
           "train_mse": float(np.mean((est.predict(X) - y) ** 2)), "M": est.M_, "lambda0": est.lambda0_,
           "pct_true": np.nan, "pct_noise": np.nan}
    if true_support is not None:
        sel = est.feature_weights_ > selection_tol
        out["pct_true"] = 100.0 * sel[true_support].mean()
        out["pct_noise"] = 100.0 * sel[~true_support].mean()
    return out


def cosso_sinusoid(n_replicates: int = 5, *, n_train: int = 100, n_test: int = 1000, kernel: str = "sobolev",
                   cv: int = 5, random_state: int = 0, selection_tol: float = 0.0, relax: bool = True) -> dict:
    """:func:`fit_cosso` on ``n_replicates`` independent sinusoid data sets.

    Returns a dict of per-replicate arrays (the keys of :func:`fit_cosso`).
    """
    from numkfs.datasets._knife import make_sinusoid

    rng = np.random.default_rng(random_state)
    rows = []
    for _ in range(n_replicates):
        seed = int(rng.integers(2**31 - 1))
        X, y, support = make_sinusoid(n_train, random_state=seed)
        Xt, yt, _ = make_sinusoid(n_test, random_state=seed + 1)
        rows.append(fit_cosso(X, y, Xt, yt, support, kernel=kernel, cv=cv, random_state=seed,
                              selection_tol=selection_tol, relax=relax))
    return {k: np.array([r[k] for r in rows]) for k in rows[0]}


NOTE = (
    "The sinusoid is additive, so COSSO's model is correctly specified, and its test MSE here is far below "
    "the paper's 7.01 (Bayes error 1.0).  The paper ran the R package `cosso` (Zhang & Lin 2010) with its "
    "own settings, which we have not reproduced.  It is not the handling of test points outside the "
    "training range (17 % of test rows have one): numkfs clips them to [0, 1] for the Sobolev kernel; "
    "evaluating the kernel formula unclipped changed replicate 0's test MSE from 1.557 to 1.551.  "
    "Selection: the path has a region where exactly the five true components are active, but there the "
    "components are strongly shrunk, and 5-fold CV of the path's own fits (relax=False) prefers the larger "
    "budgets where the noise components are small but non-zero (COSSO has one parameter for both sparsity "
    "and shrinkage, like the lasso).  Scoring each budget by its relaxed refit (the same θ, λ0 re-chosen by "
    "GCV: `numkfs.methods.cosso_relax`) separates the two, as the relaxed lasso does."
)


def _rows(name, res):
    def ms(a):
        return f"{a.mean():.3f} ({a.std(ddof=1) / np.sqrt(len(a)):.3f})" if len(a) > 1 else f"{a.mean():.3f}"

    return [name, ms(res["train_mse"]), ms(res["test_mse"]), ms(res["pct_true"]), ms(res["pct_noise"]),
            f"{res['seconds'].mean():.1f}"]


def main(n_replicates: int = 5, kernel: str = "sobolev"):
    from _common import markdown_table, save

    runs = {relax: cosso_sinusoid(n_replicates, kernel=kernel, relax=relax) for relax in (True, False)}
    rows = [
        _rows("numkfs COSSO, relaxed CV (default)", runs[True]),
        _rows("numkfs COSSO, relax=False", runs[False]),
        ["paper (Table 1, 50 reps)", f"{PAPER_COSSO['train_mse']}", f"{PAPER_COSSO['test_mse']}",
         f"{PAPER_COSSO['pct_true']}", f"{PAPER_COSSO['pct_noise']}", ""],
    ]
    per_rep = markdown_table(
        ["replicate", "relax", "test MSE", "train MSE", "M (CV)", "λ0", "% true", "% noise", "seconds"],
        [[i, str(relax), float(res["test_mse"][i]), float(res["train_mse"][i]), float(res["M"][i]),
          float(res["lambda0"][i]), float(res["pct_true"][i]), float(res["pct_noise"][i]), float(res["seconds"][i])]
         for relax, res in runs.items() for i in range(n_replicates)])
    body = (
        f"{n_replicates} replicates, train 100, test 1000; kernel {kernel!r}, λ0 by GCV (θ = 1), M by 5-fold CV "
        "over 25 budgets log-spaced from n λ0 / max_j tr K_j to 1.5 p (numkfs.methods.cosso.default_Ms); "
        "a feature is selected when θ_j > 0.  Mean (standard error).  λ0 in the per-replicate table: with "
        "relax, that of the chosen point's refit (re-chosen by GCV); without, the shared GCV value.\n\n"
        + markdown_table(["method", "train MSE", "test MSE", "% true features", "% noise features",
                          "seconds per fit"], rows)
        + "\n\nPer replicate:\n\n" + per_rep
        + "\n\n" + NOTE
    )
    save("cosso_sinusoid", "COSSO on the KNIFE sinusoid simulation", body)
    return runs[True]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicates", type=int, default=5)
    ap.add_argument("--kernel", default="sobolev", choices=["sobolev", "rbf"])
    a = ap.parse_args()
    main(a.replicates, a.kernel)
