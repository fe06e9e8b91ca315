r"""scikit-learn estimators for the linear garrote and COSSO.

* :class:`GarroteRegressor`: the linear garrote (jointly convex linear
  KNIFE, :mod:`numkfs.methods.garrote`) at one :math:`(\lambda_1, \lambda_2)`;
  ``coef_`` is β̃, ``feature_weights_`` is w.
* :class:`COSSORegressor`: COSSO (:mod:`numkfs.methods.cosso`), an additive
  kernel model with component weights θ (``feature_weights_``), M chosen
  by K-fold CV unless given.

Both are predictors and feature selectors (``get_support``, ``transform``):
a feature is selected when its weight is positive.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import InstanceOf, Interval, NoneOr, Options
from ..kernels.additive import ADDITIVE_KERNELS
from ..methods.cosso import cosso, cosso_path
from ..methods.garrote import garrote_path
from ._base import NumkfsEstimator, WeightSelectorMixin, validate_data_named


def _validated(est, X, y="no_validation", *, reset):
    if isinstance(y, str) and y == "no_validation":
        return validate_data_named(est, X, reset=reset, dtype=np.float64)
    return validate_data_named(est, X, y, reset=reset, y_numeric=True, dtype=np.float64)


__all__ = ["GarroteRegressor", "COSSORegressor"]

_BOOL = InstanceOf((bool, np.bool_), "a bool")
_SOLVER = InstanceOf((str, list, tuple), "a solver name or a list of names")


class GarroteRegressor(WeightSelectorMixin, RegressorMixin, NumkfsEstimator):
    r"""Linear garrote: linear KNIFE in its jointly convex form.

    .. math::

        \min_{\tilde\beta,\, 0 \le w \le 1}\;
        \|y - X\tilde\beta - b\|^2 + \lambda_1 \sum_j \frac{\tilde\beta_j^2}{w_j}
        + \lambda_2 \sum_j w_j

    The optimal weights are :math:`w_j = \min(1, \sqrt{\lambda_1/\lambda_2}
    |\tilde\beta_j|)`; every weight is zero once
    :math:`\lambda_2 \ge \max_j (x_j^\top y)^2/\lambda_1` (centred data).

    Parameters
    ----------
    lambda1 : float > 0
        Ridge parameter (KNIFE's default 1).
    lambda2 : float >= 0
        Weight penalty (larger: fewer features).
    fit_intercept : bool
        Fit an unpenalised intercept b (centre X and y).
    solver : str or list
        ``"auto"`` (native Numba solver first), ``"native"`` or a conic
        backend through CVXPY (``"CLARABEL"``, ``"ECOS"``, ``"SCS"``).
    tol : float, optional
        Solver tolerance.

    Attributes
    ----------
    coef_ : ndarray (n_features,)
        β̃, the linear coefficients.
    intercept_ : float
    feature_weights_ : ndarray (n_features,)
        w in [0, 1]; selected features have w > 0.
    objective_ : float
    solver_ : str
        Backend that produced the answer.
    n_features_in_, feature_names_in_
        As in scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 4))
    >>> y = 2 * X[:, 1] + 0.1 * rng.standard_normal(60)
    >>> GarroteRegressor(lambda2=50.0).fit(X, y).get_support().tolist()
    [False, True, False, False]
    """

    _method = "garrote"

    _parameter_constraints = {
        "lambda1": [Interval(Real, 0, None, closed="neither")],
        "lambda2": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": [_BOOL],
        "solver": [_SOLVER],
        "tol": [Interval(Real, 0, None, closed="neither"), NoneOr],
    }

    path = staticmethod(garrote_path)

    def __init__(self, lambda1: float = 1.0, lambda2: float = 1.0, *, fit_intercept: bool = True,
                 solver="auto", tol: float | None = None):
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.tol = tol

    def fit(self, X, y):
        """Fit the garrote at ``(lambda1, lambda2)``."""
        self._validate_params()
        X, y = _validated(self, X, y, reset=True)
        path = garrote_path(X, y, self.lambda1, [self.lambda2], fit_intercept=self.fit_intercept,
                            solver=self.solver, tol=self.tol)
        self.coef_ = path.extra["coef"][0].copy()
        self.intercept_ = float(path.extra["intercept"][0])
        self.feature_weights_ = path.weights[0].copy()
        self.objective_ = float(path.objective[0])
        self.solver_ = path.extra["solver"][0]
        return self

    def predict(self, X):
        """``X @ coef_ + intercept_``."""
        check_is_fitted(self, "coef_")
        X = _validated(self, X, reset=False)
        return X @ self.coef_ + self.intercept_


class COSSORegressor(WeightSelectorMixin, RegressorMixin, NumkfsEstimator):
    r"""COSSO: additive kernel regression with component selection.

    .. math::

        \min_{b, c, \theta}\; \frac1n \|y - b1 - K_\theta c\|^2
        + \lambda_0 c^\top K_\theta c
        \quad\text{s.t.}\quad \theta \ge 0,\ \textstyle\sum_j\theta_j \le M,
        \qquad K_\theta = \sum_j \theta_j K_j,

    fitted by Lin & Zhang's alternating kernel-ridge / non-negative-garrote
    algorithm; equivalent to penalising :math:`\sum_j \|P^j f\|`.

    Parameters
    ----------
    M : float, optional
        Budget on Σθ; default chosen by ``cv``-fold CV over ``Ms``.
    kernel : {"sobolev", "rbf"}
        Per-feature kernel (COSSO's cubic-spline Sobolev kernel on inputs
        scaled to [0, 1], or a 1-D rbf on standardised inputs).
    gamma : float
        rbf width.
    lambda0 : float, optional
        Smoothing parameter; default by GCV with every θ_j = 1.
    Ms : array-like, optional
        Budgets for CV (default: ``n_Ms`` log-spaced values from the scale where
        the fit starts, n λ0 / max_j tr K_j, to 1.5 p; see
        :func:`numkfs.methods.cosso.default_Ms`).
    n_Ms : int
        Number of default budgets.
    cv : int or splitter
        CV folds (COSSO's default 5).
    max_iter, tol : int, float
        Alternations and their relative stopping tolerance.
    solver : str or list
        Backend of the garrote step.
    n_jobs : int, optional
        joblib workers over folds.
    random_state : int, optional
        Seed of the CV fold shuffling.

    Attributes
    ----------
    feature_weights_ : ndarray (n_features,)
        θ; selected features have θ_j > 0.
    intercept_ : float
    dual_coef_ : ndarray (n_samples,)
        c.
    lambda0_, M_ : float
    n_iter_ : int
        Alternations run at the chosen M.
    model_ : COSSOFit
        The fitted model (components, objective history).
    path_ : FeaturePath or None
        The CV path over M (None when M was given).
    """

    _method = "cosso"

    _parameter_constraints = {
        "M": [Interval(Real, 0, None, closed="neither"), NoneOr],
        "kernel": [Options(ADDITIVE_KERNELS)],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "lambda0": [Interval(Real, 0, None, closed="neither"), NoneOr],
        "Ms": [NoneOr, InstanceOf((np.ndarray, list, tuple), "an array of budgets > 0")],
        "n_Ms": [Interval(Integral, 1, None, closed="left")],
        "cv": [Interval(Integral, 2, None, closed="left"), InstanceOf((object,), "a CV splitter")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "solver": [_SOLVER],
    }

    def __init__(self, M: float | None = None, *, kernel: str = "sobolev", gamma: float = 1.0,
                 lambda0: float | None = None, Ms=None, n_Ms: int = 25, cv=5, max_iter: int = 200,
                 tol: float = 1e-6, solver="auto", n_jobs=None, random_state=None):
        self.M = M
        self.kernel = kernel
        self.gamma = gamma
        self.lambda0 = lambda0
        self.Ms = Ms
        self.n_Ms = n_Ms
        self.cv = cv
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y):
        """Fit COSSO (choosing M by CV unless it is given)."""
        self._validate_params()
        X, y = _validated(self, X, y, reset=True)
        opts = dict(kernel=self.kernel, gamma=self.gamma, lambda0=self.lambda0, max_iter=self.max_iter,
                    tol=self.tol, solver=self.solver)
        if self.M is None:
            path = cosso_path(X, y, self.Ms, n_Ms=self.n_Ms, cv=self.cv, n_jobs=self.n_jobs,
                              random_state=self.random_state, **opts)
            model = path.extra["models"][path.best_index]
        else:
            path, model = None, cosso(X, y, self.M, **opts)
        self.path_ = path
        self.model_ = model
        self.M_ = model.M
        self.lambda0_ = model.lambda0
        self.feature_weights_ = model.theta.copy()
        self.intercept_ = model.intercept
        self.dual_coef_ = model.c.copy()
        self.n_iter_ = model.n_iter
        return self

    def predict(self, X):
        """:math:`b + \\sum_j \\theta_j (K_j c)(x)`."""
        check_is_fitted(self, "model_")
        X = _validated(self, X, reset=False)
        return self.model_.predict(X)
