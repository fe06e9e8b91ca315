r"""scikit-learn estimators for the linear garrote and COSSO.

* :class:`GarroteRegressor`: the linear garrote (jointly convex linear
  KNIFE, :mod:`numkfs.methods.garrote`) at one :math:`(\lambda_1, \lambda_2)`;
  ``coef_`` is β̃, ``feature_weights_`` is w.
* :class:`GarroteRegressorCV`: the garrote's λ2 path with λ2 chosen by
  K-fold cross-validation (the selection contract of
  :mod:`numkfs.model_selection`).
* :class:`COSSORegressor`: COSSO (:mod:`numkfs.methods.cosso`), an additive
  kernel model with component weights θ (``feature_weights_``) at a budget M.
* :class:`COSSORegressorCV`: COSSO with M chosen by K-fold CV.

All are predictors and feature selectors (``get_support``, ``transform``):
a feature is selected when its weight is above the method's selection
tolerance (:data:`numkfs.paths.SELECTION_TOL`), whichever solver found it.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import RANDOM_STATE, InstanceOf, Interval, NoneOr, Options
from ..kernels.additive import ADDITIVE_KERNELS
from ..methods.cosso import cosso, cosso_lambda0, cosso_path, cosso_relax
from ..methods.garrote import garrote_path, garrote_relax
from ..model_selection import CV_RULES, check_grid_edge
from ._base import NumkfsEstimator, WeightSelectorMixin, validate_data_named
from ._cv import PathCVMixin, as_grid, cv_data


def _validated(est, X, y="no_validation", *, reset):
    if isinstance(y, str) and y == "no_validation":
        return validate_data_named(est, X, reset=reset, dtype=np.float64)
    return validate_data_named(est, X, y, reset=reset, y_numeric=True, dtype=np.float64)


def _fit_input(est, X, y):
    """The preamble of every ``fit`` of this module: the parameters checked
    (the ``*CV`` estimators' :class:`PathCVMixin` ``fit`` checks them before
    calling ``_cv_data``), then X and y validated as float64 and the input
    features recorded (``n_features_in_``, ``feature_names_in_``)."""
    if not isinstance(est, PathCVMixin):
        est._validate_params()
    return _validated(est, X, y, reset=True)


__all__ = ["GarroteRegressor", "GarroteRegressorCV", "COSSORegressor", "COSSORegressorCV"]

_BOOL = InstanceOf((bool, np.bool_), "a bool")
_SOLVER = InstanceOf((str, list, tuple), "a solver name or a list of names")


class _Splitter:
    """Constraint: a scikit-learn CV splitter (anything with ``split``)."""

    def is_satisfied_by(self, value):
        return hasattr(value, "split") and not isinstance(value, str)

    def __str__(self):
        return "a CV splitter"


_CV = [Interval(Integral, 2, None, closed="left"), _Splitter()]
_CV_RULE = [Options(CV_RULES)]
_N_JOBS = [NoneOr, Interval(Integral, None, None)]
_GRID = [NoneOr, InstanceOf((np.ndarray, list, tuple), "an array of grid values")]


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

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013 (eq. 4, the linear garrote).

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
        X, y = _fit_input(self, X, y)
        path = garrote_path(X, y, self.lambda1, [self.lambda2], fit_intercept=self.fit_intercept,
                            solver=self.solver, tol=self.tol)
        self._store(path, 0)
        return self

    def _store(self, path, i):
        self.coef_ = path.extra["coef"][i].copy()
        self.intercept_ = float(path.extra["intercept"][i])
        self.feature_weights_ = path.weights[i].copy()
        self.objective_ = float(path.objective[i])
        self.solver_ = path.extra["solver"][i]
        self.converged_ = True  # every backend's answer is checked by the registry, or it raises

    def predict(self, X):
        """``X @ coef_ + intercept_``."""
        check_is_fitted(self, "coef_")
        X = _validated(self, X, reset=False)
        return X @ self.coef_ + self.intercept_


class GarroteRegressorCV(PathCVMixin, GarroteRegressor):
    r"""The linear garrote with λ2 chosen on its path by K-fold cross-validation.

    The λ2 path (:func:`numkfs.garrote_path`) is computed on all the rows;
    every fold recomputes it on its training rows (centring inside the
    fold) at the same λ2 values and scores the held-out rows (negative mean
    squared error).  The point is chosen by ``cv_rule``
    (:func:`numkfs.model_selection.choose_index`) and the fitted model is the
    full-data path's point there.  With ``relax=True`` (the default) each
    point is scored, and the chosen one predicts, by its relaxed refit
    (:func:`numkfs.methods.garrote_relax`: the garrote at λ2 = 0 on
    the point's support, i.e. ridge regression with λ1 on those columns),
    so that the score measures which features a point keeps rather than how
    much λ2 shrinks them.  The default grid runs from
    :math:`\lambda_{2,\max}` (no feature) down to ``lambda_min_ratio`` times it
    and then to λ2 = 0 (ridge regression on every feature), so both ends of
    the grid are ends of the path, refined where the support jumps by more
    than ``max(2, a quarter of the larger)`` features (at most ``n_grid``
    values inserted, :func:`numkfs.model_selection.refine_walk`); with a
    grid of your own (walked as given), a choice at its edge raises
    :class:`~numkfs.model_selection.GridEdgeWarning`.

    Parameters
    ----------
    lambda1 : float > 0, default=1.0
        Ridge parameter.
    grid : array-like, optional
        λ2 values to cross-validate (default: the grid above).
    n_grid : int, default=50
        Number of positive λ2 values of the default grid.
    lambda_min_ratio : float in (0, 1), default=1e-3
        Smallest positive λ2 of the default grid, relative to
        :math:`\lambda_{2,\max}`.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept.
    cv : int or splitter, default=5
        Folds: an int gives unshuffled ``KFold`` (as in scikit-learn); pass
        e.g. ``KFold(5, shuffle=True, random_state=0)`` to shuffle.
    cv_rule : {"best", "1se"}, default="best"
        ``"best"``: the highest mean score; ``"1se"``: the sparsest point
        within one standard error of it (glmnet's ``lambda.1se``).
    relax : bool, default=True
        Score every point, and predict with the chosen one, by the ridge
        refit (λ1) on its support (:func:`numkfs.methods.garrote_relax`).
        ``False`` scores the path's own fits (the former default), whose
        error falls as noise features enter, since a large λ2 also shrinks
        the true ones: on Friedman #1 with 100 noise features (200 rows)
        ``"best"`` kept 17 noise features, against none relaxed
        (``benchmarks/results/selection_quality.md``).
    solver : str or list, default="auto"
        As in :class:`GarroteRegressor`.
    tol : float, optional
        Solver tolerance.
    n_jobs : int, optional
        joblib workers over the folds.
    random_state : int, optional
        Unused: an int ``cv`` gives unshuffled folds, and a splitter carries
        its own seed.  Kept for :func:`numkfs.select`'s uniform interface.

    Attributes
    ----------
    path_ : FeaturePath
        The full-data path with ``cv_scores`` (n_points, n_folds),
        ``score_name="neg_mean_squared_error"``, ``cv_rule`` and
        ``chosen_index``.
    best_index_ : int
        The chosen point (``path_.chosen_index``).
    cv_scores_ : ndarray of shape (n_points, n_folds)
    lambda2_ : float
        λ2 at the chosen point.
    coef_, intercept_
        The chosen point's linear model: with ``relax=True`` its relaxed
        refit on all the rows, else the full-data path's β̃ and intercept.
    feature_weights_, objective_, solver_
        The full-data path's values at the chosen point.
    n_features_selected_ : int
    converged_ : ndarray of bool of shape (n_points,)
        Per path point (every backend's answer is checked or it raises).

    References
    ----------
    G. I. Allen. Automatic feature selection via weighted kernels and
    regularization. *Journal of Computational and Graphical Statistics*,
    22(2):284-299, 2013 (eq. 4).

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import GarroteRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((80, 6))
    >>> y = 2 * X[:, 1] - X[:, 4] + 0.3 * rng.standard_normal(80)
    >>> est = GarroteRegressorCV().fit(X, y)
    >>> bool(est.get_support()[[1, 4]].all())   # the true features (and small weights on others)
    True
    >>> sparser = GarroteRegressorCV(cv_rule="1se").fit(X, y)   # within one standard error
    >>> sparser.get_support().tolist(), bool(sparser.lambda2_ >= est.lambda2_)
    ([False, True, False, False, True, False], True)
    """

    _parameter_constraints = {
        **GarroteRegressor._parameter_constraints,
        "grid": _GRID,
        "n_grid": [Interval(Integral, 1, None, closed="left")],
        "lambda_min_ratio": [Interval(Real, 0, 1, closed="neither")],
        "cv": _CV,
        "cv_rule": _CV_RULE,
        "relax": [_BOOL],
        "n_jobs": _N_JOBS,
        "random_state": RANDOM_STATE,
    }
    _parameter_constraints.pop("lambda2")

    def __init__(self, lambda1: float = 1.0, *, grid=None, n_grid: int = 50,
                 lambda_min_ratio: float = 1e-3, fit_intercept: bool = True, cv=5, cv_rule: str = "best",
                 relax: bool = True, solver="auto", tol: float | None = None, n_jobs=None, random_state=None):
        self.lambda1 = lambda1
        self.grid = grid
        self.n_grid = n_grid
        self.lambda_min_ratio = lambda_min_ratio
        self.fit_intercept = fit_intercept
        self.cv = cv
        self.cv_rule = cv_rule
        self.relax = relax
        self.solver = solver
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state

    path = staticmethod(garrote_path)
    _cv_grid_param = "grid"
    _cv_method = "garrote"

    def _cv_data(self, X, y):
        X, y = _fit_input(self, X, y)
        return cv_data(X, y, scoring="neg_mean_squared_error", grid=None if self.grid is None else as_grid(self.grid),
                       n_grid=self.n_grid)

    def _cv_path_params(self, data, outer, *, full):
        opts = dict(lambda1=self.lambda1, fit_intercept=self.fit_intercept, solver=self.solver, tol=self.tol)
        if not full:
            return opts
        if data.grid is not None:
            return {**opts, "grid": data.grid, "max_refine": 0,
                    "feature_names": getattr(self, "feature_names_in_", None)}
        top = garrote_path(data.X, data.y, n_grid=1, **opts).extra["lambda2_max"]
        top = top if top > 0 else 1.0
        grid = np.append(top * np.geomspace(1.0, self.lambda_min_ratio, data.n_grid), 0.0)
        # refined where the support jumps (at most n_grid values inserted)
        return {**opts, "grid": grid, "max_refine": data.n_grid,
                "feature_names": getattr(self, "feature_names_in_", None)}

    def _cv_predict(self, data, path, X_train, X_test, y_train):
        coef, intercept = self._models(path, X_train, y_train)
        return X_test @ coef.T + intercept

    def _models(self, path, X, y, index=None):
        """(coef, intercept) of the points ``index`` (default all): the relaxed refits on (X, y) with
        ``relax``, else the path's own."""
        index = np.arange(path.n_points) if index is None else np.atleast_1d(index)
        if not self.relax:
            return path.extra["coef"][index], path.extra["intercept"][index]
        return garrote_relax(X, y, path.weights[index], self.lambda1, fit_intercept=self.fit_intercept, tol=path.tol)

    def _cv_store(self, data, paths, values, k, i):
        path = paths[k]
        path.converged = np.ones(path.n_points, dtype=bool)
        if data.grid is not None:
            check_grid_edge(path, i, parameter="grid", stacklevel=4)
        self.path_ = path
        self.best_index_ = i
        self.cv_scores_ = path.cv_scores
        self.lambda2_ = float(path.grid[i])
        self._store(path, i)
        coef, intercept = self._models(path, data.X, data.y, i)
        self.coef_, self.intercept_ = coef[0], float(intercept[0])
        self.converged_ = path.converged.copy()


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
        "solver": [_SOLVER],
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
    cv_rule : {"best", "1se"}, default="best"
        How the point is chosen from the CV scores.
    relax : bool, default=True
        Score every point, and predict with the chosen one, by the
        kernel-ridge refit on its θ with λ0 re-chosen by GCV
        (:func:`numkfs.methods.cosso_relax`).  ``False`` scores the
        path's own fits at the shared λ0 (the former default): their error
        falls as noise components enter, since a small budget also shrinks
        the true ones (on the KNIFE sinusoid, 100 x 20 with 5 true features,
        5-fold CV with ``"1se"`` keeps 4 noise features where the relaxed
        score keeps none; ``benchmarks/results/selection_quality.md``).
        The refits cost one eigendecomposition of the training rows' kernel
        per budget and fold: on the sinusoid with 10 features the fit took
        1.3 times as long at n = 300 and 3.4 times at n = 1,000 (57 against
        17 CPU s).
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
        "relax": [_BOOL],
        "n_jobs": _N_JOBS,
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
