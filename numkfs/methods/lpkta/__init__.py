r"""Generalized lp-KTA: the p-norm feature selection path (Jawanpuria, Varma & Nath).

One base kernel per feature, centred and trace-normalised, with alignments
:math:`a_i = y^\top \tilde K_i y` (:func:`numkfs.kernels.alignment.feature_alignments`).
The kernel weights solve, for :math:`1 \le p \le 2`,

.. math::

    \min_{\eta \ge 0}\ \lambda_1 \sum_i B_F(\eta_i) + \lambda_2 \sum_i \eta_i^p
    - \sum_i \eta_i a_i ,

(:math:`\lambda_1` is ``bregman_weight``, :math:`\lambda_2` is ``lp_weight``)
which separates by feature: :math:`\eta_i = 0` iff
:math:`\lambda_1 (F'(0) - F'(x_0)) + \lambda_2 [p = 1] - a_i \ge 0`, otherwise
:math:`G_i(\eta_i, p) = \lambda_1 (F'(\eta_i) - F'(x_0)) + \lambda_2 p \eta_i^{p-1} - a_i = 0`.
The path in p (from ``p0 = 2`` down to ``pe = 1``, ``n_grid = 101`` points,
step 0.01, by default) is
followed by a predictor (warm start, first or second order) and a
safeguarded Newton corrector per feature
(the kernels of :mod:`numkfs.solvers.native.lpkta_newton`, driven by
:func:`lpkta_weights`), eliminating a feature for the
rest of the path once its weight falls below ``eps`` < 1/e (juncture
points; exact when ``eps = 0``).

Decisions where the user guide / the paper leave room:

* Bregman divergences: squared Euclidean :math:`B = (\eta - x_0)^2`
  (default :math:`x_0 = 0`, the paper's experiments) and generalised KL
  :math:`B = \eta \log(\eta / x_0) - \eta + x_0` (default :math:`x_0 = 1`;
  its weights are never exactly 0 since :math:`F'(0) = -\infty`, so
  selection comes from juncture elimination only, as for Euclidean with
  :math:`x_0 = 0` and :math:`p > 1`).
* Lemma 1 bound: eliminating a feature whose exact weight is
  :math:`\eta^* < \epsilon` changes its term of the objective by exactly
  :math:`\lambda_1 \eta^{*2} + \lambda_2 (p-1) \eta^{*p}` (Euclidean, any
  :math:`x_0`) or :math:`\lambda_1 \eta^* + \lambda_2 (p-1)\eta^{*p}` (KL),
  so the deviation at p is at most ``r_elim(p) * (λ1 ε² + λ2 (p-1) ε^p)``
  (KL: ``λ1 ε``) with ``r_elim(p)`` the number of features eliminated by
  then; the paper states it with r = all features. Both are reported
  (``extra["lemma1_bound"]``, ``extra["lemma1_bound_paper"]``).
* Default weights (``None``): :math:`\lambda_1 = \lambda_2 = \max_i a_i / 2`,
  so that at p = 2 (Euclidean, x0 = 0) the best feature has weight 1/2 and
  at p = 1 the features with :math:`a_i > \max a / 2` remain.
* At p = 1 exactly the problem is the (non-smooth) l1 one; its solution is
  the closed form :math:`\max(0, \cdot)` reached by the same corrector.

The kernel models on the learned kernel :math:`\sum_i \eta_i \tilde K_i`
(the SVM of :class:`~numkfs.LpKTAClassifier`, the scores of
:class:`~numkfs.LpKTASelectorCV` and :func:`~numkfs.lpkta_selection_path`)
live with the estimators (``numkfs.estimators._lpkta_scoring``): a method
module computes the path only.
"""
from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from ..._threads import thread_policy
from ..._constraints import GRID, InstanceOf, Interval, NoneOr, Options, declares
from ..._validation import ConstantFeatureWarning
from ...kernels.alignment import feature_alignments, resolve_gamma
from ...paths import FeaturePath
from ._bregman import BREGMAN_DIVERGENCES, Bregman, GeneralizedKL, SquaredEuclidean, _bregman
from ._weights import _check_alignments, _check_grid, lpkta_weights

__all__ = [
    "Bregman",
    "SquaredEuclidean",
    "GeneralizedKL",
    "BREGMAN_DIVERGENCES",
    "lpkta_path",
    "lpkta_weights",
    "lpkta_objective",
    "default_p_grid",
    "LPKTA_CONSTRAINTS",
]

#: :func:`lpkta_path`'s constraints (its data, grid and alignments aside); the estimators' too.
LPKTA_CONSTRAINTS = {
    "kernel": [Options(("rbf", "linear"))],
    "gamma": [NoneOr, Interval(Real, 0, None, closed="neither"), Options(("scale",)),
              InstanceOf((np.ndarray, list, tuple), "an array of positive floats")],
    "bregman_weight": [NoneOr, Interval(Real, 0, None, closed="neither")],
    "lp_weight": [NoneOr, Interval(Real, 0, None, closed="left")],
    "bregman": [Options(BREGMAN_DIVERGENCES), InstanceOf((Bregman,), "a Bregman instance")],
    "x0": [NoneOr, Interval(Real, 0, None, closed="left")],
    "n_grid": [Interval(Integral, 2, None, closed="left")],
    "eps": [Interval(Real, 0, float(np.exp(-1.0)), closed="left")],
    "predictor": [Options(("warm", "first", "second"))],
    "target": [Options(("auto", "binary", "multiclass", "regression"))],
    "tol": [Interval(Real, 0, None, closed="neither")],
    "alignment_method": [Options(("auto", "exact", "fgt"))],
    "alignment_rtol": [Interval(Real, 1e-14, 1, closed="left")],
    # strictly decreasing, in [1, inf): checked with the grid
    "grid": GRID,
}


def target_for_task(task, y) -> str:
    """The ``target`` of the lp-KTA estimators and :func:`numkfs.lpkta_path`
    for a task given by name: ``"regression"``, or ``"binary"`` /
    ``"multiclass"`` by the number of classes in y (``"auto"`` for None)."""
    if task is None:
        return "auto"
    if task == "regression":
        return "regression"
    return "binary" if np.unique(np.asarray(y)).size == 2 else "multiclass"


def lpkta_path_settings(settings, *, selector, task, y, params, purpose):
    """lp-KTA's path settings for a resampling selector (its row's
    ``path_settings``): ``target="auto"`` becomes the target of the task
    given (:func:`target_for_task`), not one inferred again from y."""
    out = dict(settings)
    if out.get("target", "auto") == "auto":
        out["target"] = target_for_task(task, y)
    return out


# ----------------------------------------------------------------------------
# the path


def default_p_grid(p0: float = 2.0, pe: float = 1.0, step: float = 0.01) -> np.ndarray:
    """``p0, p0 - step, ..., pe`` (``pe`` included).

    Parameters
    ----------
    p0, pe : float
        First and last value.
    step : float
        Spacing.

    Returns
    -------
    ndarray
        ``lpkta_path``'s default grid is ``default_p_grid()``, the same as
        ``np.linspace(2, 1, n_grid)`` with ``n_grid = 101``.
    """
    n = int(round((p0 - pe) / step))
    return np.linspace(p0, pe, n + 1)


def _default_grid(n_grid):
    """``n_grid`` values from 2 down to 1 (101: 2, 1.99, ..., 1, as :func:`default_p_grid`)."""
    return np.linspace(2.0, 1.0, int(n_grid))


def lpkta_objective(eta, a, p, bregman_weight, lp_weight, bregman="euclidean", x0=None):
    r"""Objective :math:`\lambda_1 \sum B_F(\eta_i) + \lambda_2 \sum \eta_i^p - \sum \eta_i a_i`.

    Parameters
    ----------
    eta : array of shape (n_features,)
        Kernel weights.
    a : array of shape (n_features,)
        Alignments.
    p : float
        The norm's exponent.
    bregman_weight, lp_weight : float
        :math:`\lambda_1` (Bregman term) and :math:`\lambda_2` (lp term).
    bregman : {"euclidean", "kl"} or Bregman
    x0 : float, optional
        Centre of the Bregman divergence.

    Returns
    -------
    float
    """
    br = _bregman(bregman, x0)
    eta = np.asarray(eta, dtype=float)
    return float(bregman_weight * br.value(eta).sum() + lp_weight * np.sum(eta**p) - eta @ np.asarray(a, float))


def _default_lambda(a):
    m = float(np.max(a)) if a.size else 0.0
    return m / 2.0 if m > 0 else 1.0


@declares(LPKTA_CONSTRAINTS, data=("X", "y", "alignments", "feature_names"))
@thread_policy("lpkta")
def lpkta_path(
    X,
    y,
    kernel: str = "rbf",
    gamma=None,
    bregman_weight: float | None = None,
    lp_weight: float | None = None,
    bregman="euclidean",
    grid=None,
    *,
    n_grid: int = 101,
    x0: float | None = None,
    eps: float = 1e-3,
    predictor: str = "second",
    target: str = "auto",
    tol: float = 1e-14,
    alignments=None,
    feature_names=None,
    alignment_method: str = "auto",
    alignment_rtol: float = 1e-10,
) -> FeaturePath:
    r"""Generalized lp-KTA feature selection path over p.

    .. math::

        \eta(p) = \arg\min_{\eta \ge 0}\ \lambda_1 \sum_i B_F(\eta_i)
        + \lambda_2 \sum_i \eta_i^p - \sum_i \eta_i\, y^\top \tilde K_i y

    Parameters
    ----------
    X : array-like or scipy.sparse of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Labels (binary: the paper; multiclass and regression: see
        :mod:`numkfs.kernels.alignment`).
    kernel : {"rbf", "linear"}
        Per-feature base kernel.
    gamma : None, float or array
        RBF bandwidths (default :math:`1/\operatorname{var}(x_i)`).
    bregman_weight, lp_weight : float, optional
        :math:`\lambda_1` and :math:`\lambda_2`, the weights of the Bregman
        term and of the lp term; default :math:`\max_i a_i / 2` each.
    bregman : {"euclidean", "kl"} or Bregman
    grid : array, optional
        The p values: strictly decreasing, in [1, ∞); default ``n_grid``
        values from 2 down to 1.
    n_grid : int, default=101
        Number of p values of the default grid (101: 2, 1.99, ..., 1).
    x0 : float, optional
        Centre of the Bregman divergence (0 Euclidean, 1 KL).
    eps : float in [0, 1/e)
        Juncture elimination threshold; 0 follows the exact path.
    predictor : {"warm", "first", "second"}
        Predictor order (the paper's experiments: first). All give the same
        path (the corrector converges to ``tol``); the second-order one
        needs the fewest Newton steps (2 per point and feature).
    target : {"auto", "binary", "multiclass", "regression"}
    tol : float
        Newton stops when :math:`|G_i| \le` tol · (:math:`|a_i| + \lambda_1 + \lambda_2`).
    alignments : array, optional
        Precomputed alignments (skips the kernel pass).
    feature_names : sequence of str, optional
        Names of the features, stored on the result.
    alignment_method : {"auto", "exact", "fgt"}
        Alignments by the exact pair loop or the fast Gauss transform
        (O(n) per feature, relative error at most ``alignment_rtol``), see
        :func:`~numkfs.kernels.alignment.feature_alignments`.
    alignment_rtol : float
        Tolerance of the fast Gauss transform.

    Returns
    -------
    FeaturePath
        ``grid`` = p, ``weights`` = η, ``objective`` per p; ``extra`` holds
        ``alignments``, ``lemma1_bound``, ``juncture_p``, timings and
        Newton statistics.

    References
    ----------
    P. Jawanpuria, M. Varma and J. S. Nath, "On p-norm path following in
    multiple kernel learning for non-linear feature selection", ICML 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.methods.lpkta import lpkta_path
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 6)); y = np.sign(X[:, 0] ** 2 - 0.5)
    >>> path = lpkta_path(X, y)
    >>> path.grid[[0, -1]].tolist(), int(path.selected(len(path) - 1).argmax())
    ([2.0, 1.0], 0)
    """
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    t0 = time.perf_counter()
    if sp.issparse(X):
        X = sp.csc_matrix(X)
    else:
        X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X)
    gam = None
    if alignments is None:
        a, det = feature_alignments(X, y, kernel=kernel, gamma=gamma, target=target, return_details=True,
                                    method=alignment_method, rtol=alignment_rtol)
        gam = det.gamma
        if det.constant.any():
            idx = np.flatnonzero(det.constant)
            names = ", ".join(str(feature_names[j]) if feature_names is not None else str(j) for j in idx[:10])
            more = "" if len(idx) <= 10 else f", ... ({len(idx)} in all)"
            warnings.warn(f"lpkta_path: feature(s) [{names}{more}] are constant; they get weight 0.",
                          ConstantFeatureWarning, stacklevel=2)
    else:
        a = np.asarray(alignments, dtype=float).ravel()
        if a.shape[0] != X.shape[1]:
            raise ValueError(f"alignments has {a.shape[0]} entries but X has {X.shape[1]} features.")
    _check_alignments(a, "lpkta_path", feature_names)
    t1 = time.perf_counter()
    lam1 = _default_lambda(a) if bregman_weight is None else bregman_weight
    lam2 = _default_lambda(a) if lp_weight is None else lp_weight
    grid = _default_grid(n_grid) if grid is None else _check_grid(grid)
    br = _bregman(bregman, x0)
    eta, info = lpkta_weights(a, grid, bregman_weight=lam1, lp_weight=lam2, bregman=br, eps=eps,
                              predictor=predictor, tol=tol)
    t2 = time.perf_counter()
    objective = info.pop("objective")
    extra = dict(info)
    extra.update(
        alignments=a, bregman_weight=float(lam1), lp_weight=float(lam2), eps=float(eps), predictor=predictor,
        bregman=br.name, x0=br.x0, kernel=kernel,
        gamma=(gam if gam is not None else resolve_gamma(X, gamma)) if kernel == "rbf" else None,
        time_alignments=t1 - t0, time_path=t2 - t1,
    )
    return FeaturePath(grid, eta, grid_name="p", feature_names=feature_names, objective=objective,
                       method="lpkta", extra=extra, tol=0.0)
