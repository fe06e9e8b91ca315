"""scikit-learn estimators for L1KR (:func:`numkfs.methods.l1kr.l1kr_path`):
:class:`L1KRRegressor` (the model at one budget D of the path traced at one
ridge penalty λ₁) and :class:`L1KRRegressorCV` (the budget D, and λ₁, chosen
by cross-validation)."""
from __future__ import annotations

import functools
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._threads import limit_threads, thread_limits
from .._constraints import BOOL, N_JOBS, RANDOM_STATE, InstanceOf, Interval, NoneOr, Options
from ..methods.l1kr import (
    CV_MAX_ANGLE,
    CV_TOL,
    FIX_OPTIONS,
    L1KR_KERNELS,
    l1kr_model_predict,
    l1kr_objective,
    l1kr_path,
    l1kr_path_at,
    l1kr_predict,
    l1kr_prune,
)
from ..model_selection import (
    CV_RULES,
    GridEdgeWarning,
    check_grid_edge,
    choose_index,
    cross_val_path,
    make_cv,
    path_scores,
)
from ..paths import FeaturePath
from ._base import NumkfsEstimator, WeightSelectorMixin, validate_data_named
from ._cv import PathCVMixin, as_grid, cv_data, stop_early

__all__ = ["L1KRRegressor", "L1KRRegressorCV"]

#: Largest number of times the λ₁ grid is extended when CV chooses one of its ends.
MAX_LAMBDA_EXTENSIONS = 2


_POSITIVE = [Interval(Real, 0, None, closed="neither")]
_COMMON = {
    "kernel": [Options(L1KR_KERNELS)],
    "degree": [Interval(Integral, 1, None)],
    "fix": [Options(FIX_OPTIONS)],
    "lambda1": _POSITIVE,
    "norm_bound": _POSITIVE,
    "gradient_tol": [Interval(Real, 0, 1, closed="neither")],
    "prune_tol": [Interval(Real, 0, 1, closed="left")],
    "D_max": [Interval(Real, 0, None, closed="neither"), NoneOr],
    "max_iter": [Interval(Integral, 1, None)],
}


class L1KRRegressor(WeightSelectorMixin, RegressorMixin, NumkfsEstimator):
    r"""ARD kernel ridge regression at one point of the L1KR feature-selection path.

    .. math::

        \min_{\alpha, \beta \ge 0, \alpha_0} \|y - K(\beta)\alpha - \alpha_0 1\|^2
        + \lambda_1 \alpha^\top K(\beta) \alpha
        \quad\text{s.t.}\quad \|\beta\|_1 \le D

    (``fix="lambda1"``; with ``fix="norm_bound"`` the constraint
    ``αᵀKα ≤ C`` replaces the penalty, as in the paper).  The path in D is
    traced by homotopy at the ridge penalty ``lambda1``
    (:func:`~numkfs.methods.l1kr.l1kr_path`) from β = 0 to its stationary
    point (or ``D_max``), and the model is the path's point at the budget
    ``D``: by default the end of the traced path (the stationary point, or
    ``D_max`` when given).  The features the model does not need are then
    dropped (:func:`~numkfs.methods.l1kr.l1kr_prune`: removing them, with α
    refitted, raises the ridge objective by less than ``prune_tol`` of
    ``Σ (y - ȳ)²``); the selected features are those with β > 0.  To choose
    D (and λ₁) by cross-validation use :class:`L1KRRegressorCV`.

    Parameters
    ----------
    kernel : {"rbf", "poly"}, default="rbf"
        ARD Gaussian (``"gaussian"``, the paper's name, is an alias) or
        normalised ARD polynomial kernel (the β are its bandwidths).
    degree : int, default=2
        Degree of the normalised polynomial kernel.
    fix : {"lambda1", "norm_bound"}, default="lambda1"
        Which of λ₁ (ridge penalty) and C (RKHS-norm bound) is held fixed.
    lambda1 : float, default=0.01
        Ridge penalty λ₁ (for centred, unit-norm y) when ``fix="lambda1"``.
    norm_bound : float, default=1.0
        Bound on αᵀKα (units of ``||y - ȳ||²``) when ``fix="norm_bound"``.
    gradient_tol : float, default=1e-6
        Stop the path when the projected gradient is below ``gradient_tol``.
    prune_tol : float, default=1e-3
        Features whose joint removal from the model costs less than this
        fraction of ``Σ (y - ȳ)²`` in the ridge objective are dropped
        (:func:`~numkfs.methods.l1kr.l1kr_prune`); 0 keeps every feature
        with β > 0.
    D : float, optional
        The budget ``||β||₁`` of the model, in the units of the path
        (β on columns centred and scaled to unit norm); β is interpolated
        along the path there (:func:`~numkfs.methods.l1kr.l1kr_path_at`;
        beyond the traced path, its end).  Default: the end of the traced
        path.
    D_max : float, optional
        Stop the path at ``||β||₁ = D_max``.
    max_iter : int, default=3000
        Continuation-step budget of the path.

    Attributes
    ----------
    path_ : FeaturePath
        The traced path (events, arc length...).
    D_ : float
        The budget of the model.
    feature_weights_ : ndarray of shape (n_features,)
        β at ``D_`` (on columns centred and scaled to unit norm), the
        unneeded features removed (``prune_tol``).
    n_features_selected_ : int
        Number of features with β > 0 in ``feature_weights_``.
    lambda_ : float
        λ₁ at the model's point (``lambda1`` when it is fixed).
    dual_coef_ : ndarray of shape (n_samples,)
        α (for the standardised y).
    converged_ : bool
        Every point of the traced path satisfies the KKT system to the
        tracker's tolerance (False when it stopped at a limit: ``max_iter``,
        a step underflow, a singular Jacobian).
    n_iter_ : int
        Continuation steps of the traced path (at most ``max_iter``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has column names.

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs.datasets import make_friedman_noise
    >>> from numkfs.estimators import L1KRRegressor
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> est = L1KRRegressor(D=15.0, D_max=20.0).fit(X, y)
    >>> est.D_, est.predict(X[:2]).shape
    (15.0, (2,))
    """

    _method = "l1kr"

    _parameter_constraints = {**_COMMON, "D": [Interval(Real, 0, None, closed="left"), NoneOr]}

    def __init__(self, kernel="rbf", *, degree=2, fix="lambda1", lambda1=0.01, norm_bound=1.0, gradient_tol=1e-6,
                 prune_tol=1e-3, D=None, D_max=None, max_iter=3000):
        self.kernel = kernel
        self.degree = degree
        self.fix = fix
        self.lambda1 = lambda1
        self.norm_bound = norm_bound
        self.gradient_tol = gradient_tol
        self.prune_tol = prune_tol
        self.D = D
        self.D_max = D_max
        self.max_iter = max_iter

    def fit(self, X, y):
        """Trace the path at ``lambda1`` and keep its point at ``D``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_data_named(self, X, y, y_numeric=True, dtype=np.float64, ensure_min_samples=2)
        path = l1kr_path(X, y, self.kernel, degree=self.degree, fix=self.fix, lambda1=float(self.lambda1),
                         norm_bound=self.norm_bound, gradient_tol=self.gradient_tol, D_max=self.D_max,
                         max_iter=self.max_iter, feature_names=getattr(self, "feature_names_in_", None))
        if self.D is None:
            beta, lam, D = path.weights[-1].copy(), float(path.extra["lambda"][-1]), float(path.grid[-1])
        else:
            betas, lams = l1kr_path_at(path, [self.D])
            beta, lam, D = betas[0], float(lams[0]), float(self.D)
        self.path_ = path
        self.D_ = D
        self.feature_weights_ = l1kr_prune(path, beta, lam, self.prune_tol)[0]
        self.lambda_ = lam
        _, _, self.dual_coef_ = l1kr_objective(path, self.feature_weights_, self.lambda_)
        self.converged_ = bool(path.converged.all())
        self.n_iter_ = int(path.extra["n_steps"])
        return self

    def predict(self, X):
        """Kernel ridge prediction of the fitted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions, in the units of y.
        """
        check_is_fitted(self, "dual_coef_")
        X = validate_data_named(self, X, reset=False, dtype=np.float64)
        return l1kr_model_predict(self._traced_path(), X, self.feature_weights_, self.dual_coef_)

    def _traced_path(self):
        return self.path_


class L1KRRegressorCV(PathCVMixin, L1KRRegressor):
    r"""ARD kernel ridge regression on the L1KR feature-selection path, with
    the path point (and λ₁) chosen by K-fold cross-validation.

    .. math::

        \min_{\alpha, \beta \ge 0, \alpha_0} \|y - K(\beta)\alpha - \alpha_0 1\|^2
        + \lambda_1 \alpha^\top K(\beta) \alpha
        \quad\text{s.t.}\quad \|\beta\|_1 \le D

    (``fix="lambda1"``; with ``fix="norm_bound"`` the constraint ``αᵀKα ≤ C``
    replaces the penalty, as in the paper).  The path in D is traced by
    homotopy on all the rows and read at a grid of D
    (:func:`~numkfs.methods.l1kr.l1kr_path` with ``n_grid``); every CV fold
    traces its own path (:func:`~numkfs.methods.l1kr.l1kr_path` with
    ``grid``), with the equivalent λ₁ on n_train rows (``λ₁ · n_train / n``;
    with ``fix="norm_bound"``, ``C · n / n_train``), and reads it at
    ``D · n_train / n``, the same kernel in the units of X (columns are
    scaled to unit norm on the rows each path is traced on, so the same
    kernel has β ∝ n).  The default grid follows the events of the path on
    all of the data (the D where features enter or leave), refined until no
    two consecutive points differ in support by more than
    ``max(2, a quarter of the larger support)``, with at most ``n_grid``
    points.  The paths are traced in stages, every fold's path resumed where
    it stopped, and with ``early_stopping`` tracing stops once the CV can no
    longer choose a further point: the mean CV score over the last
    ``EARLY_STOP_POINTS`` points, beyond the best one and at least
    ``EARLY_STOP_EXTENT`` times its D, is below the best by more than
    ``EARLY_STOP_SE`` standard errors.  The point chosen by ``cv_rule``
    (:func:`numkfs.model_selection.choose_index`) is taken on the path of
    all the data.  The model at each grid point drops the features it does
    not need (:func:`~numkfs.methods.l1kr.l1kr_prune`: removing them, with α
    refitted, raises the ridge objective by less than ``prune_tol`` of
    ``Σ (y - ȳ)²``), in every fold alike; the selected features are those
    with β > 0 in that model.

    When several λ₁ are given and CV chooses the smallest or the largest,
    the λ₁ grid is extended (geometrically, up to twice) beyond that end; if
    the choice is still at the end, or at the end of a D range limited by
    ``D_max``, a :class:`~numkfs.model_selection.GridEdgeWarning` names the
    parameter to widen.

    Parameters
    ----------
    kernel : {"rbf", "poly"}, default="rbf"
        ARD Gaussian (``"gaussian"``, the paper's name, is an alias) or
        normalised ARD polynomial kernel.
    degree : int, default=2
        Degree of the normalised polynomial kernel.
    fix : {"lambda1", "norm_bound"}, default="lambda1"
        Which of λ₁ (ridge penalty) and C (RKHS-norm bound) is held fixed.
    lambda1 : float or sequence of float, default=0.01
        Ridge penalty λ₁ (for centred, unit-norm y) when ``fix="lambda1"``.
        With several values, one path per λ₁ is traced (and per fold, on
        the same folds) and CV chooses (λ₁, D) jointly.
    norm_bound : float, default=1.0
        Bound on αᵀKα (units of ``||y - ȳ||²``) when ``fix="norm_bound"``.
    gradient_tol : float, default=1e-6
        Stop the path when the projected gradient is below ``gradient_tol``.
    prune_tol : float, default=1e-3
        Features whose joint removal from a grid point's model costs less
        than this fraction of ``Σ (y - ȳ)²`` in the ridge objective are
        dropped (:func:`~numkfs.methods.l1kr.l1kr_prune`); 0 keeps every
        feature with β > 0.
    D_max : float, optional
        Stop every path at ``||β||₁ = D_max``.
    max_iter : int, default=3000
        Continuation-step budget of each path.
    cv : int or CV splitter, default=5
        Folds: an int gives unshuffled ``KFold`` (as in scikit-learn); pass
        e.g. ``KFold(5, shuffle=True, random_state=0)`` to shuffle.
    cv_rule : {"best", "1se", "1pct", "2pct"}, default="best"
        How the CV scores choose the point
        (:func:`numkfs.model_selection.choose_index`).
        ``"1pct"``, ``"2pct"``: the sparsest point whose mean CV loss is at most 1 or 2 %
        above the best (:func:`numkfs.model_selection.choose_from_scores`).
    scoring : {"neg_mean_squared_error"}, default="neg_mean_squared_error"
        The CV score (higher is better), in the squared units of y.
    n_grid : int, default=50
        Upper bound on the number of points of the default D grid (and its
        density, ``n_grid / 10`` points per decade between events), which
        follows the events of the path on all of the data and refines where
        the support jumps; ignored with ``grid``.
    grid : array-like of shape (n_points,), optional
        An explicit grid of budgets ``||β||₁`` (in the units of the path on
        all of the data), the same for every λ₁, used as given.  The paths
        are traced to its largest value (or ``D_max``), without early
        stopping.
    early_stopping : bool, default=True
        Stop tracing once the CV can no longer choose a further point (see
        above); False traces every path to its stationary point (or
        ``D_max``).
    n_jobs : int, optional
        joblib workers over CV folds (threads by default: the fold paths are
        resumed from stage to stage, which a process-based backend cannot
        do, so there each stage retraces them).
    random_state : int, RandomState, Generator or None
        Unused: an int ``cv`` gives unshuffled folds, and a splitter carries
        its own seed.

    Attributes
    ----------
    path_ : FeaturePath
        The D grid of the chosen λ₁: the model at each D (β of the full-data
        path, pruned), ``cv_scores``, ``chosen_index``, ``cv_rule``,
        ``score_name`` and ``converged``.
    full_path_ : FeaturePath
        The path traced on all the training data (events, arc length...).
    cv_paths_ : list of FeaturePath
        One D grid per λ₁ tried (``lambdas_``).
    lambdas_ : ndarray
        Every λ₁ tried, in the order traced (the given ones, then extensions).
    best_index_ : int
        The chosen point of ``path_``.
    cv_scores_ : ndarray of shape (n_points, n_folds)
        The CV scores of ``path_``.
    converged_ : ndarray of bool of shape (n_points,)
        Per point of ``path_``: the full-data path reached it, between points
        that satisfy the KKT system to the tracker's tolerance.
    n_iter_ : int
        Continuation steps of the path traced on all the data (for the chosen
        λ₁; at most ``max_iter``).
    D_ : float
        The chosen budget ||β||₁.
    feature_weights_ : ndarray of shape (n_features,)
        β at ``D_`` (on columns centred and scaled to unit norm), the
        unneeded features removed (``prune_tol``).
    n_features_selected_ : int
        Number of features with β > 0 in ``feature_weights_``.
    lambda_ : float
        λ₁ at the chosen point.
    dual_coef_ : ndarray of shape (n_samples,)
        α (for the standardised y).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has column names.

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs.datasets import make_friedman_noise
    >>> from numkfs.estimators import L1KRRegressorCV
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> est = L1KRRegressorCV(cv=3, n_grid=10, D_max=20.0).fit(X, y)
    >>> est.predict(X[:2]).shape
    (2,)
    """

    _parameter_constraints = {
        **_COMMON,
        "lambda1": [*_POSITIVE, InstanceOf((list, tuple, np.ndarray), "a sequence of floats")],
        "cv": [Interval(Integral, 2, None), InstanceOf((object,), "a CV splitter")],
        "cv_rule": [Options(CV_RULES)],
        "scoring": [Options(["neg_mean_squared_error"])],
        "n_grid": [Interval(Integral, 2, None)],
        "grid": [InstanceOf((list, tuple, np.ndarray), "an array-like of budgets"), NoneOr],
        "early_stopping": BOOL,
        "n_jobs": N_JOBS,
        "random_state": RANDOM_STATE,
    }

    path = staticmethod(l1kr_path)
    _cv_grid_param = "grid"
    _cv_method = "L1KR"
    #: the fold paths are resumed stage by stage: threads keep them
    _cv_prefer = "threads"

    def __init__(self, kernel="rbf", *, degree=2, fix="lambda1", lambda1=0.01, norm_bound=1.0, gradient_tol=1e-6,
                 prune_tol=1e-3, D_max=None, max_iter=3000, cv=5, cv_rule="best",
                 scoring="neg_mean_squared_error", n_grid=50, grid=None, early_stopping=True, n_jobs=None,
                 random_state=None):
        self.kernel = kernel
        self.degree = degree
        self.fix = fix
        self.lambda1 = lambda1
        self.norm_bound = norm_bound
        self.gradient_tol = gradient_tol
        self.prune_tol = prune_tol
        self.D_max = D_max
        self.max_iter = max_iter
        self.cv = cv
        self.cv_rule = cv_rule
        self.scoring = scoring
        self.n_grid = n_grid
        self.grid = grid
        self.early_stopping = early_stopping
        self.n_jobs = n_jobs
        self.random_state = random_state

    # -- PathCVMixin hooks ------------------------------------------------
    def _cv_data(self, X, y):
        name = type(self).__name__
        fix, lambda1, norm_bound, max_iter, grid = self.fix, self.lambda1, self.norm_bound, self.max_iter, self.grid
        X, y = validate_data_named(self, X, y, y_numeric=True, dtype=np.float64, ensure_min_samples=2)
        if fix == "lambda1":
            lambdas = np.atleast_1d(np.asarray(lambda1, dtype=float)).ravel()
            if lambdas.size == 0 or not np.all(np.isfinite(lambdas)) or not np.all(lambdas > 0):
                raise ValueError(f"The 'lambda1' parameter of {name} must be a positive finite float or a "
                                 f"non-empty sequence of them; got {lambda1!r}.")
        else:
            lambdas = np.array([1.0])
        make_cv(self.cv, y, classifier=False)  # refuses more folds than rows, with a clear message
        return cv_data(X, y, scoring=self.scoring, fix=fix, lambdas=[float(v) for v in lambdas],
                       norm_bound=norm_bound, max_iter=max_iter, grid=None if grid is None else as_grid(grid),
                       folds={})

    def _cv_outer(self, data):
        """The λ₁ values, one path each."""
        self._n_lambdas_given = len(data.lambdas)  # for _cv_extend
        return list(data.lambdas)

    def _cv_path_params(self, data, outer, *, full):
        """``l1kr_path``'s arguments at λ₁ = ``outer`` (a fold scales λ₁ or C
        and D by its share of the rows, :class:`_L1KRFolds`)."""
        params = dict(kernel=self.kernel, degree=self.degree, fix=data.fix, lambda1=float(outer),
                      norm_bound=data.norm_bound, gradient_tol=self.gradient_tol, max_iter=data.max_iter,
                      prune_tol=self.prune_tol, tol=CV_TOL, max_angle=CV_MAX_ANGLE)
        if full:
            params["feature_names"] = getattr(self, "feature_names_in_", None)
        return params

    def _cv_full_path(self, data, outer):
        """The full-data path read at the grid; the default grid's tracing is
        staged and scores the folds at every stage (:class:`_L1KRFolds`)."""
        folds = data.folds[outer] = _L1KRFolds(self, data, outer)
        params = self._cv_path_params(data, outer, full=True)
        if data.grid is not None:
            reach = float(data.grid.max()) if self.D_max is None else float(self.D_max)
            folds.reach = reach = max(reach, 1e-12)
            return self.path(data.X, data.y, grid=data.grid, D_max=reach, **params)
        return self.path(data.X, data.y, n_grid=self.n_grid, D_max=self.D_max, stop=folds.stop, keep=folds.keep,
                         **params)

    def _cv_fold_scores(self, data, train, test, grid, outer):
        """The fold's scores at ``grid`` (its staged path, :class:`_L1KRFolds`)."""
        return data.folds[outer].fold(train, test, grid)

    def _cv_choose(self, paths, values):
        return _choose_lambda(paths, self.cv_rule)

    def _cv_extend(self, paths, values, k):
        """A λ₁ beyond the end of the grid CV chose (at most
        ``MAX_LAMBDA_EXTENSIONS`` times), or None."""
        n_given = self._n_lambdas_given
        if len(set(values[:n_given])) < 2:
            return None
        grid = np.unique(values)
        lam_k = values[k]
        if lam_k not in (grid[0], grid[-1]):
            return None
        if len(values) - n_given < MAX_LAMBDA_EXTENSIONS:
            return float(lam_k * grid[0] / grid[1] if lam_k == grid[0] else lam_k * grid[-1] / grid[-2])
        side = "smallest" if lam_k == grid[0] else "largest"
        warnings.warn(f"{type(self).__name__}: cross-validation chose the {side} λ tried ({lam_k:.4g}, after "
                      f"extending the grid {MAX_LAMBDA_EXTENSIONS} times); the score may still improve beyond "
                      "it: widen the grid with 'lambda1'.", GridEdgeWarning, stacklevel=3)
        return None

    def _cv_store(self, data, paths, values, k, i):
        path = paths[k]
        path.chosen_index = i
        for v, p in zip(values, paths):
            p.extra["fold_steps"] = data.folds[v].fold_steps() if v in data.folds else []
        full = path.extra["full_path"]
        if i == path.n_points - 1 and full.extra["finished"] == "D_max":
            check_grid_edge(path, i, parameter="D_max", stacklevel=4)
        self.lambdas_ = np.asarray(values, dtype=float)
        self.cv_paths_ = paths
        self.path_ = path
        self.full_path_ = full
        self.best_index_ = int(i)
        self.cv_scores_ = path.cv_scores
        self.converged_ = np.asarray(path.extra["converged"], dtype=bool)
        self.D_ = float(path.grid[i])
        self.feature_weights_ = path.weights[i].copy()  # β at D_, pruned
        self.lambda_ = float(path.extra["lambda"][i])
        _, _, self.dual_coef_ = l1kr_objective(full, self.feature_weights_, self.lambda_)
        self.n_iter_ = int(full.extra["n_steps"])

    def _traced_path(self):
        return self.full_path_


class _L1KRFolds:
    """The CV folds of one λ₁ of :class:`L1KRRegressorCV`: per fold (its
    held-out rows) the path on its training rows, read at the grid with
    ``l1kr_path(grid=..., resume=...)`` (resumed from stage to stage), and
    the scores of the grid points read so far."""

    def __init__(self, estimator, data, outer):
        self.estimator, self.data = estimator, data
        self.params = estimator._cv_path_params(data, outer, full=False)
        self.states = {}
        self.reach = None
        self.last = None  # (scores, fold sizes) of the grid so far

    def fold(self, train, test, grid, reach=None):
        """Scores of one fold at ``grid`` (units of the full-data path), its
        path traced on to ``reach`` (default: the last stage's, or the user
        grid's)."""
        data, est = self.data, self.estimator
        X, y = data.X, data.y
        st = self.states.setdefault(test.tobytes(), {"path": None, "scores": {}})
        if reach is None:
            if st["path"] is not None and all(D in st["scores"] for D in grid):
                return np.array([st["scores"][D] for D in grid])
            reach = self.reach
        r = len(train) / X.shape[0]
        kw = dict(self.params)
        if data.fix == "lambda1":
            # the problem equivalent to the full-data one on n_train rows
            kw["lambda1"] = kw["lambda1"] * r
        else:
            kw["norm_bound"] = kw["norm_bound"] / r
        target = reach if est.D_max is None else min(reach, est.D_max)
        # columns are scaled to unit norm, so a standardised value is ~
        # 1/sqrt(n): the same kernel (in the units of X) has β ∝ n.  The grid
        # is in the units of the full-data path; a fold's path is read at the
        # equivalent budget D·n_train/n.
        gp = est.path(X[train], y[train], grid=np.asarray(grid) * r, D_max=max(target * r, 1e-300),
                      resume=st["path"], **kw)
        st["path"] = gp
        read = np.flatnonzero(gp.extra["read"])
        if read.size:
            with limit_threads(*thread_limits("l1kr", len(train))):
                pred = l1kr_predict(gp, X[test], index=read)
            for D, s in zip(np.asarray(grid)[read], path_scores(y[test], pred.T, data.scoring)):
                st["scores"][D] = float(s)
        return np.array([st["scores"][D] for D in grid])

    def stop(self, grid, reach):
        """``l1kr_path``'s ``stop``: score the folds at the grid so far; early
        stopping (:func:`_stop_early`)."""
        est, data = self.estimator, self.data
        self.reach = reach
        self.last = cross_val_path(functools.partial(self.fold, grid=grid, reach=reach), data.X_split,
                                   data.y_split, est.cv, n_jobs=est.n_jobs, prefer=est._cv_prefer,
                                   method=est._cv_method, min_train=est._cv_min_train)
        return est.early_stopping and stop_early(grid, *self.last)

    def keep(self, grid, weights):
        """``l1kr_path``'s ``keep``: the points the CV rules choose."""
        probe = FeaturePath(grid=grid, weights=weights, cv_scores=self.last[0], cv_fold_sizes=self.last[1])
        return {choose_index(probe, "best"), choose_index(probe, "1se")}

    def fold_steps(self):
        """Continuation steps of each fold's path."""
        return [int(st["path"].extra["full_path"].extra["n_steps"]) for st in self.states.values()
                if st["path"] is not None]


def _choose_lambda(cv_paths, rule):
    """(which λ₁, which point): ``rule`` over every (λ₁, D) pair.  ``"best"``:
    the highest mean score (ties to the sparser point, then the larger λ₁);
    ``"1se"``: the sparsest point within one standard error of the overall
    best, ties to the higher score, then the larger λ₁."""
    picks = [choose_index(p, rule) for p in cv_paths]
    if len(cv_paths) == 1:
        return 0, picks[0]
    lam = [float(p.extra["lam_fixed"]) for p in cv_paths]
    mean = [p.mean_cv_score for p in cv_paths]
    best_k = max(range(len(cv_paths)), key=lambda q: (np.nanmax(mean[q]), lam[q]))
    if rule == "best":
        i = choose_index(cv_paths[best_k], "best")
        return best_k, i
    ib = int(np.nanargmax(mean[best_k]))
    thr = float(mean[best_k][ib]) - float(cv_paths[best_k].cv_standard_error[ib])
    cands = [(int(p.n_selected()[i]), -float(mean[q][i]), -lam[q], q, i)
             for q, p in enumerate(cv_paths) for i in range(p.n_points) if mean[q][i] >= thr]
    if not cands:
        return best_k, ib
    _, _, _, q, i = min(cands)
    return q, i
