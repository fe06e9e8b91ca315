"""scikit-learn estimators for L1KR (:func:`numkfs.methods.l1kr.l1kr_path`):
:class:`L1KRRegressorCV` (the path point chosen by cross-validation) and
:class:`L1KRRegressor` (its former name, kept one release)."""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import RegressorMixin

from .._validation import Interval, NoneOr, Options, InstanceOf
from ._base import NumkfsEstimator, WeightSelectorMixin, validate_data_named

__all__ = ["L1KRRegressorCV", "L1KRRegressor"]

#: Largest number of times the λ grid is extended when CV chooses one of its ends.
MAX_LAMBDA_EXTENSIONS = 2


class L1KRRegressorCV(WeightSelectorMixin, RegressorMixin, NumkfsEstimator):
    r"""ARD kernel ridge regression on the L1KR feature-selection path, with
    the path point (and λ) chosen by K-fold cross-validation.

    .. math::

        \min_{\alpha, \beta \ge 0, \alpha_0} \|y - K(\beta)\alpha - \alpha_0 1\|^2
        + \lambda \alpha^\top K(\beta) \alpha
        \quad\text{s.t.}\quad \|\beta\|_1 \le D

    (``fix="lambda"``; with ``fix="C"`` the constraint ``αᵀKα ≤ C`` replaces
    the penalty, as in the paper).  The path in D is traced by homotopy
    (:func:`~numkfs.methods.l1kr.l1kr_path`); every CV fold traces its own
    path, scored on a common grid of D
    (:func:`~numkfs.methods.l1kr.l1kr_cv_path`; a fold's path on n_train
    rows is traced with the equivalent λ and read at ``D · n_train / n``,
    the same kernel in the units of X).  The default grid follows the
    events of the path on all of the data (the D where features enter or
    leave), refined until no two consecutive points differ in support by
    more than ``max(2, a quarter of the larger support)``, with at most
    ``n_grid`` points; the paths are traced in stages and stop once the CV
    can no longer choose a further point (early stopping).  The point chosen
    by ``cv_rule``
    (:func:`numkfs.model_selection.choose_index`) is taken on the path of
    all the data.  The model at each grid point drops the features it does
    not need (:func:`~numkfs.methods.l1kr.l1kr_prune`: removing them, with α
    refitted, raises the ridge objective by less than ``prune_tol`` of
    ``Σ (y - ȳ)²``), in every fold alike; the selected features are those
    with β > 0 in that model.

    When several λ are given and CV chooses the smallest or the largest, the
    λ grid is extended (geometrically, up to twice) beyond that end; if the
    choice is still at the end, or at the end of a D range limited by
    ``D_max``, a :class:`~numkfs.model_selection.GridEdgeWarning` names the
    parameter to widen.

    Parameters
    ----------
    kernel : {"rbf", "poly"}, default="rbf"
        ARD Gaussian (``"gaussian"``, the paper's name, is an alias) or
        normalised ARD polynomial kernel.
    degree : int, default=2
        Degree of the normalised polynomial kernel.
    fix : {"lambda", "C"}, default="lambda"
        Which of λ (ridge penalty) and C (RKHS-norm bound) is held fixed.
    lam : float or sequence of float, default=0.01
        Ridge penalty λ (for centred, unit-norm y) when ``fix="lambda"``.
        With several values, one path per λ is traced (and per fold, on the
        same folds) and CV chooses (λ, D) jointly.
    C : float, default=1.0
        Bound on αᵀKα (units of ``||y - ȳ||²``) when ``fix="C"``.
    gradient_tol : float, default=1e-6
        Stop the path when the projected gradient is below ``gradient_tol``.
    prune_tol : float, default=1e-3
        Features whose joint removal from a grid point's model costs less
        than this fraction of ``Σ (y - ȳ)²`` in the ridge objective are
        dropped (:func:`~numkfs.methods.l1kr.l1kr_prune`); 0 keeps every
        feature with β > 0.
    D_max : float, optional
        Stop every path at ``||β||₁ = D_max``.
    max_steps : int, default=3000
        Continuation-step budget of each path.
    cv : int or CV splitter, default=5
        Folds: an int gives unshuffled ``KFold`` (as in scikit-learn); pass
        e.g. ``KFold(5, shuffle=True, random_state=0)`` to shuffle.
    cv_rule : {"best", "1se"}, default="best"
        How the CV scores choose the point
        (:func:`numkfs.model_selection.choose_index`).
    scoring : {"neg_mean_squared_error"}, default="neg_mean_squared_error"
        The CV score (higher is better), in the squared units of y.
    n_grid : int, default=50
        Upper bound on the number of points of the default D grid, which
        follows the events of the path on all of the data and refines where
        the support jumps (:func:`~numkfs.methods.l1kr.l1kr_cv_path`);
        ignored with ``D_grid``.
    D_grid : array-like of shape (n_points,), optional
        An explicit grid of budgets ``||β||₁`` (in the units of the path on
        all of the data), the same for every λ; passed to
        :func:`~numkfs.methods.l1kr.l1kr_cv_path`.  The paths are traced to
        its largest value (or ``D_max``).
    n_jobs : int, optional
        joblib workers over CV folds.
    random_state : int, Generator or None
        Unused: an int ``cv`` gives unshuffled folds, and a splitter carries
        its own seed.
    eps : float, optional
        Deprecated name of ``gradient_tol``; accepted with a
        ``FutureWarning`` until the next release.

    Attributes
    ----------
    path_ : FeaturePath
        The D grid of the chosen λ: the model at each D (β of the full-data
        path, pruned), ``cv_scores``, ``chosen_index``, ``cv_rule``,
        ``score_name`` and ``converged``.
    full_path_ : FeaturePath
        The path traced on all the training data (events, arc length...).
    cv_paths_ : list of FeaturePath
        One D grid per λ tried (``lambdas_``).
    lambdas_ : ndarray
        Every λ tried, in the order traced (the given ones, then extensions).
    best_index_ : int
        The chosen point of ``path_``.
    cv_scores_ : ndarray of shape (n_points, n_folds)
        The CV scores of ``path_``.
    converged_ : ndarray of bool of shape (n_points,)
        Per point of ``path_``: the full-data path reached it, between points
        that satisfy the KKT system to the tracker's tolerance.
    D_ : float
        The chosen budget ||β||₁.
    feature_weights_ : ndarray of shape (n_features,)
        β at ``D_`` (on columns centred and scaled to unit norm), the
        unneeded features removed (``prune_tol``).
    n_features_selected_ : int
        Number of features with β > 0 in ``feature_weights_``.
    lambda_ : float
        λ at the chosen point.
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
    >>> est = L1KRRegressorCV(cv=3, n_grid=10, D_max=20.0, random_state=0).fit(X, y)
    >>> est.predict(X[:2]).shape
    (2,)
    """

    _method = "l1kr"

    _parameter_constraints = {
        "kernel": [Options(["rbf", "gaussian", "poly"])],
        "degree": [Interval(Integral, 1, None)],
        "fix": [Options(["lambda", "C"])],
        "lam": [Interval(Real, 0, None, closed="neither"), InstanceOf((list, tuple, np.ndarray), "a sequence of floats")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "gradient_tol": [Interval(Real, 0, 1, closed="neither")],
        "prune_tol": [Interval(Real, 0, 1, closed="left")],
        "D_max": [Interval(Real, 0, None, closed="neither"), NoneOr],
        "max_steps": [Interval(Integral, 1, None)],
        "cv": [Interval(Integral, 2, None), InstanceOf((object,), "a CV splitter")],
        "cv_rule": [Options(["best", "1se"])],
        "scoring": [Options(["neg_mean_squared_error"])],
        "n_grid": [Interval(Integral, 2, None)],
        "D_grid": [InstanceOf((list, tuple, np.ndarray), "an array-like of budgets"), NoneOr],
        "n_jobs": [Interval(Integral, None, None), NoneOr],
        "random_state": [Interval(Integral, 0, None), NoneOr, InstanceOf((np.random.Generator,), "a Generator")],
        "eps": [Interval(Real, 0, 1, closed="neither"), NoneOr],
    }

    def __init__(self, kernel="rbf", degree=2, fix="lambda", lam=0.01, C=1.0, gradient_tol=1e-6,
                 prune_tol=1e-3, D_max=None, max_steps=3000, cv=5, cv_rule="best",
                 scoring="neg_mean_squared_error", n_grid=50, D_grid=None, n_jobs=None, random_state=None,
                 eps=None):
        self.kernel = kernel
        self.degree = degree
        self.fix = fix
        self.lam = lam
        self.C = C
        self.gradient_tol = gradient_tol
        self.prune_tol = prune_tol
        self.D_max = D_max
        self.max_steps = max_steps
        self.cv = cv
        self.cv_rule = cv_rule
        self.scoring = scoring
        self.n_grid = n_grid
        self.D_grid = D_grid
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.eps = eps

    # ------------------------------------------------------------------
    def _lambda_grid(self):
        if self.fix != "lambda":
            return np.array([1.0])
        lams = np.atleast_1d(np.asarray(self.lam, dtype=float)).ravel()
        if lams.size == 0 or not np.all(np.isfinite(lams)) or not np.all(lams > 0):
            raise ValueError(f"The 'lam' parameter of {type(self).__name__} must be a positive finite float or a "
                             f"non-empty sequence of them; got {self.lam!r}.")
        return lams

    def fit(self, X, y):
        """Trace the path(s), cross-validate (λ,) D, keep the chosen point.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.
        y : array-like of shape (n_samples,)
            Target values: the response, or the class labels of a classifier.

        Returns
        -------
        self
        """
        from ..methods.l1kr import _renamed_eps, l1kr_cv_path, l1kr_objective
        from ..model_selection import check_grid_edge, choose_index, make_cv

        self._validate_params()
        gradient_tol = _renamed_eps(self.gradient_tol, self.eps, type(self).__name__)
        X, y = validate_data_named(self, X, y, y_numeric=True, dtype=np.float64, ensure_min_samples=2)
        names = getattr(self, "feature_names_in_", None)
        lams = self._lambda_grid()
        make_cv(self.cv, y, classifier=False)  # refuses more folds than rows, with a clear message
        seed = self.random_state
        if seed is None or isinstance(seed, np.random.Generator):
            seed = int(np.random.default_rng(seed).integers(2**31 - 1))  # the same folds for every λ

        def run(lam):
            return l1kr_cv_path(
                X, y, self.kernel, degree=self.degree, fix=self.fix, lam=float(lam), C=self.C,
                gradient_tol=gradient_tol, prune_tol=self.prune_tol, D_max=self.D_max,
                max_steps=self.max_steps, n_grid=self.n_grid, D_grid=self.D_grid, cv=self.cv, n_jobs=self.n_jobs,
                random_state=seed,
                feature_names=names,
            )

        tried = [float(v) for v in lams]
        cv_paths = [run(v) for v in tried]
        k, idx = _choose_lambda(cv_paths, self.cv_rule, choose_index)
        if len(set(tried)) >= 2:
            # CV chose an end of the λ grid: extend it beyond that end
            for _ in range(MAX_LAMBDA_EXTENSIONS):
                grid = np.unique(tried)
                lam_k = tried[k]
                if lam_k == grid[0]:
                    new = lam_k * grid[0] / grid[1]
                elif lam_k == grid[-1]:
                    new = lam_k * grid[-1] / grid[-2]
                else:
                    break
                tried.append(float(new))
                cv_paths.append(run(new))
                k, idx = _choose_lambda(cv_paths, self.cv_rule, choose_index)
            grid = np.unique(tried)
            if tried[k] in (grid[0], grid[-1]):
                side = "smallest" if tried[k] == grid[0] else "largest"
                from ..model_selection import GridEdgeWarning

                warnings.warn(f"{type(self).__name__}: cross-validation chose the {side} λ tried ({tried[k]:.4g}, "
                              f"after extending the grid {MAX_LAMBDA_EXTENSIONS} times); the score may still "
                              "improve beyond it: widen the grid with 'lam'.", GridEdgeWarning, stacklevel=2)
        self.lambdas_ = np.asarray(tried)
        self.cv_paths_ = cv_paths
        path = cv_paths[k]
        path.cv_rule = self.cv_rule
        path.chosen_index = idx
        full = path.extra["full_path"]
        if idx == path.n_points - 1 and full.extra["finished"] == "D_max":
            check_grid_edge(path, idx, parameter="D_max")
        self.path_ = path
        self.full_path_ = full
        self.best_index_ = int(idx)
        self.cv_scores_ = path.cv_scores
        self.converged_ = np.asarray(path.extra["converged"], dtype=bool)
        self.D_ = float(path.grid[idx])
        self.feature_weights_ = path.weights[idx].copy()  # β at D_, pruned
        self.lambda_ = float(path.extra["lambda"][idx])
        _, _, self.dual_coef_ = l1kr_objective(full, self.feature_weights_, self.lambda_)
        return self

    def predict(self, X):
        """Kernel ridge prediction at the chosen path point.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        from sklearn.utils.validation import check_is_fitted

        from ..methods.l1kr import _predict_one

        check_is_fitted(self, "dual_coef_")
        X = validate_data_named(self, X, reset=False, dtype=np.float64)
        full = self._traced_path()
        ex = full.extra
        Z = (X - ex["x_mean"]) / ex["x_scale"]
        return _predict_one(full, Z, self.feature_weights_, self.dual_coef_)

    def _traced_path(self):
        return self.full_path_


def _choose_lambda(cv_paths, rule, choose_index):
    """(which λ, which point): ``rule`` over every (λ, D) pair.  ``"best"``:
    the highest mean score (ties to the sparser point, then the larger λ);
    ``"1se"``: the sparsest point within one standard error of the overall
    best, ties to the higher score, then the larger λ."""
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
    s = cv_paths[best_k].cv_scores[ib]
    s = s[np.isfinite(s)]
    se = float(np.std(s, ddof=1) / np.sqrt(s.size)) if s.size > 1 else 0.0
    thr = float(mean[best_k][ib]) - se
    cands = [(int(p.n_selected()[i]), -float(mean[q][i]), -lam[q], q, i)
             for q, p in enumerate(cv_paths) for i in range(p.n_points) if mean[q][i] >= thr]
    if not cands:
        return best_k, ib
    _, _, _, q, i = min(cands)
    return q, i


class L1KRRegressor(L1KRRegressorCV):
    """Former name of :class:`L1KRRegressorCV` (the same estimator: the path
    point is chosen by cross-validation); fitting it warns
    ``FutureWarning``.  It will be removed in the next release.

    The attributes keep their former meaning: ``path_`` is the traced path
    (``full_path_`` of :class:`L1KRRegressorCV`) and ``cv_path_`` the D grid
    with the CV scores (``path_`` of :class:`L1KRRegressorCV`).

    Parameters
    ----------
    kernel, degree, fix, lam, C, gradient_tol, prune_tol, D_max, max_steps, cv, cv_rule, scoring, n_grid, \
D_grid, n_jobs, random_state, eps
        As in :class:`L1KRRegressorCV`.

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> import warnings
    >>> from numkfs.datasets import make_friedman_noise
    >>> from numkfs.estimators import L1KRRegressor
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     est = L1KRRegressor(cv=3, n_grid=10, D_max=20.0, random_state=0).fit(X, y)
    >>> est.predict(X[:2]).shape
    (2,)
    """

    def fit(self, X, y):
        """As :meth:`L1KRRegressorCV.fit`, with a ``FutureWarning``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.
        y : array-like of shape (n_samples,)
            Target values: the response, or the class labels of a classifier.

        Returns
        -------
        self
        """
        warnings.warn("L1KRRegressor was renamed L1KRRegressorCV (it chooses the path point by cross-validation, "
                      "like scikit-learn's *CV estimators); L1KRRegressor will be removed in the next release.",
                      FutureWarning, stacklevel=2)
        super().fit(X, y)
        self.cv_path_ = self.path_
        self.path_ = self.full_path_
        return self
