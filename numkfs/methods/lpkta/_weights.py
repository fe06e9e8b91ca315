"""lp-KTA's path of weights for given alignments (no data): the input
checks, and the report on the per-feature Newton path
(:func:`numkfs.solvers.native.lpkta_newton.newton_path`): objective,
junctures, Lemma 1 bounds."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ...solvers.native.lpkta_newton import newton_path
from ._bregman import _bregman

__all__ = ["lpkta_weights"]

_PREDICTORS = {"warm": 0, "first": 1, "second": 2, 0: 0, 1: 1, 2: 2}


def _check_alignments(a, caller, feature_names=None):
    """Refuse non-finite alignments, naming the features that have them.

    One NaN alignment would make every point of the path NaN (the
    threshold default λ1 = λ2 = max(a)/2 and every Newton solve take it
    in), and an infinite one would be reported as a bad ``lambda1``."""
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size == 0:
        return
    def name(j):
        return f"{feature_names[j]!r} (index {j})" if feature_names is not None else f"index {j}"
    shown = ", ".join(f"{name(j)}: {a[j]}" for j in bad[:10])
    more = "" if bad.size <= 10 else f", ... ({bad.size} in all)"
    raise ValueError(f"{caller}: the alignments must be finite; {bad.size} of {a.size} feature(s) have a "
                     f"non-finite alignment: {shown}{more}.  Alignments passed as 'alignments=' must be the "
                     "finite per-feature values of numkfs.kernels.alignment.feature_alignments.")


def _check_grid(grid):
    g = np.asarray(grid, dtype=float).ravel()
    if g.size == 0:
        raise ValueError("the grid of p values must not be empty.")
    bad = g[~(np.isfinite(g) & (g >= 1.0))]
    if bad.size:
        raise ValueError(f"the grid's p values must be finite and >= 1; got {float(bad[0])!r}.")
    if g.size > 1 and not np.all(np.diff(g) < 0):
        raise ValueError("the grid of p values must be strictly decreasing (the path goes from p0 down to pe).")
    return g


def lpkta_weights(a, grid, *, bregman_weight, lp_weight, bregman="euclidean", x0=None, eps=1e-3,
                  predictor="second", tol=1e-14, max_iter=100):
    r"""The path of weights :math:`\eta(p)` for given alignments (no data).

    Parameters
    ----------
    a : array of shape (n_features,)
        The alignments.
    grid : array
        The p values, strictly decreasing, in [1, ∞).
    bregman_weight, lp_weight : float
        :math:`\lambda_1 > 0` and :math:`\lambda_2 \ge 0`, the weights of the
        Bregman term and of the lp term.
    bregman : {"euclidean", "kl"} or Bregman
    x0 : float, optional
        Centre of the Bregman divergence.
    eps : float in [0, 1/e)
        Juncture elimination threshold.
    predictor : {"warm", "first", "second"}
    tol : float
        Relative tolerance of the Newton corrector.
    max_iter : int
        Newton steps per point and feature.

    Returns
    -------
    eta : ndarray (n_points, n_features)
    info : dict
        ``objective`` (per point), ``juncture_p`` (per feature, NaN if never eliminated),
        ``newton_iterations`` (total), ``max_G_residual``,
        ``lemma1_bound`` and ``lemma1_bound_paper`` (per point).
    """
    lambda1, lambda2 = bregman_weight, lp_weight
    a = np.ascontiguousarray(a, dtype=float)
    _check_alignments(a, "lpkta_weights")
    g = _check_grid(grid)
    br = _bregman(bregman, x0)
    if not (isinstance(lambda1, numbers.Real) and lambda1 > 0 and np.isfinite(lambda1)):
        raise ValueError(f"bregman_weight must be a positive float; got {lambda1!r}.")
    if not (isinstance(lambda2, numbers.Real) and lambda2 >= 0 and np.isfinite(lambda2)):
        raise ValueError(f"lp_weight must be a non-negative float; got {lambda2!r}.")
    if not (0.0 <= eps < math.exp(-1.0)):
        raise ValueError(f"eps must be in [0, 1/e) for the monotonicity theorem to hold; got {eps!r}.")
    if predictor not in _PREDICTORS:
        raise ValueError(f"predictor must be 'warm', 'first' or 'second'; got {predictor!r}.")
    d = a.shape[0]
    P = g.shape[0]
    eta, junct, stats, obj = newton_path(a, g, float(lambda1), float(lambda2), br.code, br.x0, float(eps),
                                         _PREDICTORS[predictor], float(tol), int(max_iter))
    zero_grad = float(br.zero_gradient(lambda1))
    nnz = np.count_nonzero(eta, axis=1)
    objective = obj.sum(axis=0) + lambda1 * float(br.value(0.0)) * (d - nnz)
    # features that left the path at their exact zero are not approximations
    left = ~np.isnan(junct)
    at_zero = a <= zero_grad + lambda2 * (np.where(left, junct, 2.0) <= 1.0)
    by_eps = np.sort(junct[left & ~at_zero])[::-1]  # decreasing juncture p
    r_elim = np.searchsorted(-by_eps, -g, side="right") if eps > 0 else np.zeros(P, int)
    term = np.array([br.elimination_term(eps, pk, lambda1, lambda2) for pk in g])
    info = {
        "juncture_p": junct,
        "newton_iterations": int(stats[:, 0].sum()),
        "safeguarded_solves": int(stats[:, 1].sum()),
        "max_G_residual": float(stats[:, 2].max()),  # relative: |G| / (|a| + λ1 + λ2)
        "lemma1_bound": r_elim * term,
        "lemma1_bound_paper": d * term if eps > 0 else np.zeros(P),
        "n_eliminated": r_elim,
        "objective": objective,
    }
    return eta, info
