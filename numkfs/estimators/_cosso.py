r"""scikit-learn estimators for COSSO (:mod:`numkfs.methods.cosso`).

* :class:`COSSORegressor`: an additive kernel model with component weights θ
  (``feature_weights_``) at a budget M.
* :class:`COSSORegressorCV`: COSSO with M chosen by K-fold CV.

Both are predictors and feature selectors (``get_support``, ``transform``):
a feature is selected when its weight is above the method's selection
tolerance (:data:`numkfs.paths.SELECTION_TOL`), whichever solver found it.
They share the garrote estimators' parameter constraints and input handling
(:mod:`numkfs.estimators._garrote`).
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._constraints import BOOL, N_JOBS, RANDOM_STATE, SOLVER, InstanceOf, Interval, NoneOr, Options
from ..kernels.additive import ADDITIVE_KERNELS
from ..methods.cosso import cosso, cosso_lambda0, cosso_path, cosso_relax
from ..model_selection import check_grid_edge
from ._base import NumkfsEstimator, WeightSelectorMixin
from ._cv import PathCVMixin, as_grid, cv_data
from ._garrote import _CV, _CV_RULE, _fit_input, _validated

__all__ = ["COSSORegressor", "COSSORegressorCV"]


class COSSORegressor(WeightSelectorMixin, RegressorMixin, NumkfsEstimator):
    r"""COSSO: additive kernel regression with component selection, at one budget M.

    .. math::

        \min_{b, c, \theta}\; \frac1n \|y - b1 - K_\theta c\|^2
        + \lambda_0 c^\top K_\theta c
        \quad\text{s.t.}\quad \theta \ge 0,\ \textstyle\sum_j\theta_j \le M,
        \qquad K_\theta = \sum_j \theta_j K_j,

    fitted by Lin & Zhang's alternating kernel-ridge / non-negative-garrote
    algorithm; equivalent to penalising :math:`\sum_j \|P^j f\|`.  To choose
    M by cross-validation use :class:`COSSORegressorCV`.

    Parameters
    ----------
    M : float > 0, optional
        Budget on Σθ (smaller: fewer components).  Default ``None``: half the
        number of features, p / 2.  Σθ = p is the fit with every θ_j = 1 at
        which λ0 is chosen (GCV), so p / 2 makes the budget bind and drop
        components while keeping the smoothing GCV chose for the full model;
        it lies inside the default grid of :class:`COSSORegressorCV`
        (:func:`numkfs.methods.cosso.default_Ms`, up to 1.5 p), near the
        budgets its 5-fold CV of the path's own fits (``relax=False``)
        chose on the KNIFE sinusoid (0.23 p to 0.96 p, median 0.4 p, over
        five replicates), where every component is kept.  The best budget
        is data-dependent: choose it by CV when it matters (by default
        :class:`COSSORegressorCV` scores relaxed refits, and its budgets
        keep far fewer components).
    kernel : {"sobolev", "rbf"}, default="sobolev"
        Per-feature kernel (COSSO's cubic-spline Sobolev kernel on inputs
        scaled to [0, 1], or a 1-D rbf on standardised inputs).
    gamma : float, default=1.0
        rbf width.
    lambda0 : float, optional
        Smoothing parameter; default by GCV with every θ_j = 1
        (:func:`numkfs.methods.cosso.cosso_lambda0`).
    max_iter, tol : int, float
        Iterations, and the duality gap relative to the objective at which
        they stop (see :func:`numkfs.methods.cosso.cosso`).
    solver : str or list, default="auto"
        Backend of the garrote step.

    Attributes
    ----------
    feature_weights_ : ndarray (n_features,)
        θ; selected features have θ_j > 0.
    intercept_ : float
    dual_coef_ : ndarray (n_samples,)
        c.
    lambda0_, M_ : float
        The smoothing parameter and the budget used.
    n_iter_ : int
        Alternations run.
    converged_ : bool
    model_ : COSSOFit
        The fitted model (components, objective history).

    References
    ----------
    Y. Lin and H. H. Zhang, "Component selection and smoothing in
    multivariate nonparametric regression", Annals of Statistics
    34(5):2272-2297, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import COSSORegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(80, 4))
    >>> y = np.sin(2 * np.pi * X[:, 0]) + 0.1 * rng.standard_normal(80)
    >>> est = COSSORegressor().fit(X, y)   # M = p / 2 = 2
    >>> est.M_, int(np.argmax(est.feature_weights_))
    (2.0, 0)
    """

    _method = "cosso"

    _parameter_constraints = {
        "M": [Interval(Real, 0, None, closed="neither"), NoneOr],
        "kernel": [Options(ADDITIVE_KERNELS)],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "lambda0": [Interval(Real, 0, None, closed="neither"), NoneOr],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "solver": SOLVER,
    }

    def __init__(self, M: float | None = None, *, kernel: str = "sobolev", gamma: float = 1.0,
                 lambda0: float | None = None, max_iter: int = 200, tol: float = 1e-6, solver="auto"):
        self.M = M
        self.kernel = kernel
        self.gamma = gamma
        self.lambda0 = lambda0
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver

    def fit(self, X, y):
        """Fit COSSO at the budget ``M`` (p / 2 when None).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self
        """
        X, y = _fit_input(self, X, y)
        M = 0.5 * X.shape[1] if self.M is None else self.M
        self._store(cosso(X, y, M, **self._opts()))
        self.converged_ = bool(self.model_.converged)
        return self

    def _opts(self):
        return dict(kernel=self.kernel, gamma=self.gamma, lambda0=self.lambda0, max_iter=self.max_iter,
                    tol=self.tol, solver=self.solver)

    def _store(self, model):
        self.model_ = model
        self.M_ = model.M
        self.lambda0_ = model.lambda0
        self.feature_weights_ = model.theta.copy()
        self.intercept_ = model.intercept
        self.dual_coef_ = model.c.copy()
        self.n_iter_ = model.n_iter

    def predict(self, X):
        """:math:`b + \\sum_j \\theta_j (K_j c)(x)`."""
        check_is_fitted(self, "model_")
        X = _validated(self, X, reset=False)
        return self.model_.predict(X)


class COSSORegressorCV(PathCVMixin, COSSORegressor):
    r"""COSSO with the budget M chosen by K-fold cross-validation.

    The path over increasing budgets (:func:`numkfs.cosso_path`) is computed
    on all the rows and, on every fold, on the training rows (inputs scaled
    inside the fold) at the same budgets; the held-out rows are scored by
    negative mean squared error and the point chosen by ``cv_rule``
    (:func:`numkfs.model_selection.choose_index`).  The smoothing parameter
    λ0, when not given, is chosen once by GCV on all the rows with every
    θ_j = 1 (:func:`numkfs.methods.cosso.cosso_lambda0`) and shared by the
    folds, as in Lin & Zhang (2006).  With ``relax=True`` (the default) each
    point is scored, and the chosen one predicts, by its relaxed refit
    (:func:`numkfs.methods.cosso_relax`: the same θ, λ0 re-chosen by
    GCV on the same training rows), so that the score measures which
    components a budget keeps rather than how much the fixed λ0 shrinks
    them.  A choice at the smallest budget while
    features are already in, or at the largest while the budget still binds,
    raises :class:`~numkfs.model_selection.GridEdgeWarning`.

    Parameters
    ----------
    grid : array-like, optional
        Budgets M to cross-validate (default: ``n_grid`` values from
        :func:`numkfs.methods.cosso.default_Ms`).
    kernel : {"sobolev", "rbf"}, default="sobolev"
        Per-feature kernel.
    gamma : float, default=1.0
        rbf width.
    lambda0 : float, optional
        Smoothing parameter (default by GCV).
    n_grid : int, default=25
        Number of default budgets (before refinement: at most ``n_grid``
        more are inserted where the support jumps, see
        :func:`numkfs.cosso_path`).
    cv : int or splitter, default=5
        Folds: an int gives unshuffled ``KFold`` (as in scikit-learn); pass
        e.g. ``KFold(5, shuffle=True, random_state=0)`` to shuffle.
    cv_rule : {"best", "1se", "1pct", "2pct"}, default="best"
        How the point is chosen from the CV scores.
        ``"1pct"``, ``"2pct"``: the sparsest point whose mean CV loss is at most 1 or 2 %
        above the best (:func:`numkfs.model_selection.choose_from_scores`).
    relax : bool, default=True
        Score every point, and predict with the chosen one, by the
        kernel-ridge refit on its θ with λ0 re-chosen by GCV
        (:func:`numkfs.methods.cosso_relax`).  ``False`` scores the
        path's own fits at the shared λ0: their error falls as noise
        components enter, since a small budget also shrinks the true ones,
        so the CV keeps noise components that the relaxed score leaves out
        (see the selection guide).  The refits cost one eigendecomposition
        of the training rows' kernel per budget and fold, a share of the
        fit's time that grows with n.
    max_iter : int, default=200
        Iterations per budget.
    tol : float, default=1e-6
        Duality gap relative to the objective at which the iterations stop
        (see :func:`numkfs.methods.cosso.cosso`).
    solver : str or list, default="auto"
        Backend of the garrote step.
    n_jobs : int, optional
        joblib workers over the folds.
    random_state : int, optional
        Unused: an int ``cv`` gives unshuffled folds, and a splitter carries
        its own seed.  Kept for :func:`numkfs.select`'s uniform interface.

    Attributes
    ----------
    path_ : FeaturePath
        Over M, with ``cv_scores``, ``score_name``, ``cv_rule``, ``chosen_index``.
    best_index_ : int
    cv_scores_ : ndarray of shape (n_points, n_folds)
    feature_weights_ : ndarray of shape (n_features,)
        θ at the chosen M.
    M_, lambda0_, intercept_, dual_coef_, n_iter_, model_
        As in :class:`COSSORegressor`, at the chosen M; with ``relax=True``
        those of the relaxed refit (``lambda0_`` the re-chosen λ0,
        ``path_.extra["lambda0"]`` the shared one).
    n_features_selected_ : int
    converged_ : ndarray of bool of shape (n_points,)

    References
    ----------
    Y. Lin and H. H. Zhang. Component selection and smoothing in
    multivariate nonparametric regression. *Annals of Statistics*,
    34(5):2272-2297, 2006.

    Examples
    --------
    >>> from numkfs import COSSORegressorCV
    >>> from numkfs.datasets import make_sinusoid
    >>> X, y, truth = make_sinusoid(n_samples=60, random_state=0)
    >>> est = COSSORegressorCV(n_grid=6, cv=3, max_iter=30, random_state=0).fit(X, y)
    >>> est.path_.n_points  # 6 budgets, 2 inserted where the support jumped
    8
    >>> est.path_.cv_scores.shape
    (8, 3)
    """

    _parameter_constraints = {
        **COSSORegressor._parameter_constraints,
        "grid": [NoneOr, InstanceOf((np.ndarray, list, tuple), "an array of budgets > 0")],
        "n_grid": [Interval(Integral, 1, None, closed="left")],
        "cv": _CV,
        "cv_rule": _CV_RULE,
        "relax": BOOL,
        "n_jobs": N_JOBS,
        "random_state": RANDOM_STATE,
    }
    _parameter_constraints.pop("M")

    def __init__(self, *, grid=None, kernel: str = "sobolev", gamma: float = 1.0, lambda0: float | None = None,
                 n_grid: int = 25, cv=5, cv_rule: str = "best", relax: bool = True, max_iter: int = 200,
                 tol: float = 1e-6, solver="auto", n_jobs=None, random_state=None):
        self.grid = grid
        self.kernel = kernel
        self.gamma = gamma
        self.lambda0 = lambda0
        self.n_grid = n_grid
        self.cv = cv
        self.cv_rule = cv_rule
        self.relax = relax
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.n_jobs = n_jobs
        self.random_state = random_state

    path = staticmethod(cosso_path)
    _cv_grid_param = "grid"
    _cv_method = "COSSO"

    def _cv_data(self, X, y):
        X, y = _fit_input(self, X, y)
        # λ0 by GCV on all the rows, shared by the folds (Lin & Zhang)
        lambda0 = cosso_lambda0(X, y, kernel=self.kernel, gamma=self.gamma) if self.lambda0 is None else self.lambda0
        return cv_data(X, y, scoring="neg_mean_squared_error",
                       grid=None if self.grid is None else as_grid(self.grid), n_grid=self.n_grid, lambda0=lambda0)

    def _cv_path_params(self, data, outer, *, full):
        opts = dict(kernel=self.kernel, gamma=self.gamma, lambda0=data.lambda0, max_iter=self.max_iter,
                    tol=self.tol, solver=self.solver)
        if not full:
            return opts
        # the default grid (default_Ms) is built on all the rows; the folds walk the full path's grid
        return {**opts, "grid": data.grid, "n_grid": data.n_grid,
                "feature_names": getattr(self, "feature_names_in_", None)}

    def _cv_predict(self, data, path, X_train, X_test, y_train):
        # (n_test, n_points) in column-major order: path_scores then sums each column as a contiguous
        # vector, as np.mean of one point's squared errors does (the same rounding)
        return np.array([self._model(m, y_train).predict(X_test) for m in path.extra["models"]]).T

    def _model(self, fit, y):
        """The point's predictor: its relaxed refit with ``relax``, else the path's fit."""
        return cosso_relax(fit, y) if self.relax else fit

    def _cv_store(self, data, paths, values, k, i):
        path = paths[k]
        models = path.extra["models"]
        path.converged = np.array([m.converged for m in models], dtype=bool)
        open_top = path.weights[-1].sum() >= path.grid[-1] * (1 - 1e-6)  # the budget still binds at the largest M
        open_bottom = np.any(path.selected(0))  # features already in at the smallest M
        if (i == path.n_points - 1 and open_top) or (i == 0 and open_bottom):
            check_grid_edge(path, i, parameter="grid", stacklevel=4)
        self.path_ = path
        self.best_index_ = i
        self.cv_scores_ = path.cv_scores
        self._store(self._model(models[i], data.y))
        self.converged_ = path.converged.copy()
