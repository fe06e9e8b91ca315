r"""scikit-learn estimators for the linear garrote (COSSO's are in
:mod:`numkfs.estimators._cosso`).

* :class:`GarroteRegressor`: the linear garrote (jointly convex linear
  KNIFE, :mod:`numkfs.methods.garrote`) at one :math:`(\lambda_1, \lambda_2)`;
  ``coef_`` is β̃, ``feature_weights_`` is w.
* :class:`GarroteRegressorCV`: the garrote's λ2 path with λ2 chosen by
  K-fold cross-validation (the selection contract of
  :mod:`numkfs.model_selection`).
Both are predictors and feature selectors (``get_support``, ``transform``):
a feature is selected when its weight is above the method's selection
tolerance (:data:`numkfs.paths.SELECTION_TOL`), whichever solver found it.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._constraints import BOOL, N_JOBS, RANDOM_STATE, SOLVER, InstanceOf, Interval, NoneOr, Options
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


__all__ = ["GarroteRegressor", "GarroteRegressorCV"]



class _Splitter:
    """Constraint: a scikit-learn CV splitter (anything with ``split``)."""

    def is_satisfied_by(self, value):
        return hasattr(value, "split") and not isinstance(value, str)

    def __str__(self):
        return "a CV splitter"


_CV = [Interval(Integral, 2, None, closed="left"), _Splitter()]
_CV_RULE = [Options(CV_RULES)]
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
    standardize : bool, default=True
        Divide X's columns by their standard deviations before the fit,
        so that λ1, λ2 and the selection do not depend on the units of X
        (the paper assumes standardised features); ``coef_`` is in X's
        units.  False fits eq. (4) on X as given.
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
        "fit_intercept": BOOL,
        "standardize": BOOL,
        "solver": SOLVER,
        "tol": [Interval(Real, 0, None, closed="neither"), NoneOr],
    }

    path = staticmethod(garrote_path)

    def __init__(self, lambda1: float = 1.0, *, lambda2: float = 1.0, fit_intercept: bool = True,
                 standardize: bool = True, solver="auto", tol: float | None = None):
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.fit_intercept = fit_intercept
        self.standardize = standardize
        self.solver = solver
        self.tol = tol

    def fit(self, X, y):
        """Fit the garrote at ``(lambda1, lambda2)``."""
        X, y = _fit_input(self, X, y)
        path = garrote_path(X, y, self.lambda1, [self.lambda2], fit_intercept=self.fit_intercept,
                            standardize=self.standardize, solver=self.solver, tol=self.tol)
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
    standardize : bool, default=True
        As in :class:`GarroteRegressor`: each path (all rows, every fold)
        on X's columns divided by their standard deviations on its own
        rows, so that the selection does not depend on the units of X.
    cv : int or splitter, default=5
        Folds: an int gives unshuffled ``KFold`` (as in scikit-learn); pass
        e.g. ``KFold(5, shuffle=True, random_state=0)`` to shuffle.
    cv_rule : {"best", "1se", "1pct", "2pct"}, default="best"
        ``"best"``: the highest mean score; ``"1se"``: the sparsest point
        within one standard error of it (glmnet's ``lambda.1se``).
        ``"1pct"``, ``"2pct"``: the sparsest point whose mean CV loss is at most 1 or 2 %
        above the best (:func:`numkfs.model_selection.choose_from_scores`).
    relax : bool, default=True
        Score every point, and predict with the chosen one, by the ridge
        refit (λ1) on its support (:func:`numkfs.methods.garrote_relax`).
        ``False`` scores the path's own fits, whose error falls as noise
        features enter, since a large λ2 also shrinks the true ones, so that
        ``"best"`` keeps noise features that the relaxed score leaves out
        (see the selection guide).
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
        "relax": BOOL,
        "n_jobs": N_JOBS,
        "random_state": RANDOM_STATE,
    }
    _parameter_constraints.pop("lambda2")

    def __init__(self, lambda1: float = 1.0, *, grid=None, n_grid: int = 50,
                 lambda_min_ratio: float = 1e-3, fit_intercept: bool = True, standardize: bool = True, cv=5,
                 cv_rule: str = "best", relax: bool = True, solver="auto", tol: float | None = None, n_jobs=None,
                 random_state=None):
        self.lambda1 = lambda1
        self.grid = grid
        self.n_grid = n_grid
        self.lambda_min_ratio = lambda_min_ratio
        self.fit_intercept = fit_intercept
        self.standardize = standardize
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
        opts = dict(lambda1=self.lambda1, fit_intercept=self.fit_intercept, standardize=self.standardize,
                    solver=self.solver, tol=self.tol)
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
        return garrote_relax(X, y, path.weights[index], self.lambda1, fit_intercept=self.fit_intercept,
                             standardize=self.standardize, tol=path.tol)

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
