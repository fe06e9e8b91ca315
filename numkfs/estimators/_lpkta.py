"""scikit-learn estimators for Generalized lp-KTA (:mod:`numkfs.methods.lpkta`).

* :class:`LpKTASelector`: a feature selector; the path point is chosen by
  ``p`` or by ``n_features_to_select`` (exactly that many features);
  default: the end of the path (p = 1).
* :class:`LpKTASelectorCV`: the point chosen by K-fold cross-validation of
  a kernel model on the learned kernel (an SVM for class labels, kernel
  ridge regression for a continuous target), by the selection contract of
  :mod:`numkfs.model_selection`.
* :class:`LpKTAClassifier`: the selector followed by an SVM
  (scikit-learn ``SVC``, precomputed kernel) on the learned kernel
  :math:`\\sum_i \\eta_i \\tilde K_i`.
* :class:`LpKTAClassifierCV`: the point chosen by cross-validation, then
  the SVM.

The CV estimators share the one ``fit`` of every numkfs ``*CV`` estimator
(:class:`~numkfs.estimators._cv.PathCVMixin`): on each fold the alignments
and the path are recomputed on the training rows and the kernel model
(``numkfs.estimators._lpkta_scoring``) is scored on the held-out rows.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._threads import limit_threads, thread_limits
from .._targets import check_class_labels, target_type
from .._constraints import N_JOBS, RANDOM_STATE, InstanceOf, Interval, NoneOr, Options
from ..kernels.alignment import combined_kernel, feature_alignments
from ..kernels.lowrank import learned_kernel_features
from ..methods.lpkta import LPKTA_CONSTRAINTS, lpkta_path
from ..model_selection import CV_RULES, index_for_count
from . import _lpkta_scoring as _scoring
from ._base import NumkfsEstimator, WeightSelectorMixin, validate_data_named
from ._cv import PathCVMixin, cv_data
from ._lpkta_scoring import KERNEL_MODEL_SCORINGS, LowRankKernelModel, fold_path, kernel_model_scores, svm_kernel_scale

__all__ = ["LpKTASelector", "LpKTASelectorCV", "LpKTAClassifier", "LpKTAClassifierCV"]

_ACCEPT_SPARSE = ["csc", "csr", "coo"]

#: The lp-KTA estimators' ``target``: how y enters the alignments (:func:`~numkfs.kernels.alignment.feature_alignments`).
TARGETS = ("auto", "binary", "multiclass", "regression")

#: lpkta_path's constraints (but its Newton tolerance) and the grid
_CONSTRAINTS = {
    **{k: v for k, v in LPKTA_CONSTRAINTS.items() if k != "tol"},
    "grid": [NoneOr, InstanceOf((np.ndarray, list, tuple), "an array of decreasing p values")],
}

_SELECTOR_CONSTRAINTS = {
    **_CONSTRAINTS,
    "p": [NoneOr, Interval(numbers.Real, 1, None, closed="left")],
    "n_features_to_select": [NoneOr, Interval(numbers.Integral, 1, None, closed="left")],
}

_C = [Interval(numbers.Real, 0, None, closed="neither")]

#: A classifier's targets: class labels.
_CLASS_TARGETS = [Options(TARGETS[:3])]

_CV_CONSTRAINTS = {
    "cv": [Interval(numbers.Integral, 2, None, closed="left"), InstanceOf((object,), "a cross-validation splitter")],
    "cv_rule": [Options(set(CV_RULES))],
    "scoring": [NoneOr, Options(set(KERNEL_MODEL_SCORINGS))],
    "n_jobs": N_JOBS,
    "random_state": RANDOM_STATE,
    "C": _C,
}


class LpKTASelector(WeightSelectorMixin, NumkfsEstimator):
    r"""Feature selection by the Generalized lp-KTA path.

    Kernel weights solve, at the chosen p,

    .. math::

        \min_{\eta \ge 0}\ \lambda_1 \sum_i B_F(\eta_i)
        + \lambda_2 \sum_i \eta_i^p - \sum_i \eta_i\, y^\top \tilde K_i y ;

    features with :math:`\eta_i > 0` are selected.  To choose the point by
    cross-validation, use :class:`LpKTASelectorCV`.

    Parameters
    ----------
    kernel : {"rbf", "linear"}
        Per-feature base kernel.
    gamma : None, float or array
        RBF bandwidths (default :math:`1/\operatorname{var}(x_i)` per feature).
    bregman_weight, lp_weight : float, optional
        :math:`\lambda_1` and :math:`\lambda_2`, the weights of the Bregman
        term and of the lp term; default :math:`\max_i a_i / 2` each.
    bregman : {"euclidean", "kl"} or Bregman
        The Bregman divergence :math:`B_F` of the penalty (by name or object).
    x0 : float, optional
        Centre of the Bregman divergence.
    p : float, optional
        Choose the path point nearest to this p.
    n_features_to_select : int, optional
        Select exactly this many features: walking from p = 1 towards p = 2,
        the first point with at least this many features, ranked by η
        (:func:`numkfs.model_selection.index_for_count`; a warning says so
        when the path or ties force another count).
    grid : array, optional
        The p values of the path (strictly decreasing, in [1, ∞)); default
        ``n_grid`` values from 2 down to 1.
    n_grid : int, default=101
        Number of p values of the default grid (101: 2, 1.99, ..., 1).
    eps : float in [0, 1/e)
        Juncture elimination threshold.
    predictor : {"warm", "first", "second"}
        Predictor of the per-feature path tracker.
    alignment_method : {"auto", "exact", "fgt"}, default="auto"
        Alignments by the exact O(n²) pair loop or the O(n) fast Gauss
        transform (``"auto"``: the transform from 1,024 rows), see
        :func:`~numkfs.kernels.alignment.feature_alignments`.
    alignment_rtol : float, default=1e-10
        Relative tolerance of the fast Gauss transform.
    target : {"auto", "binary", "multiclass", "regression"}, default="auto"
        How y enters the alignments: class labels (±1, or one-hot for more
        than two classes) or a real response (centred); ``"auto"``: by
        :func:`numkfs.model_selection.target_type`.  A score from 0 to 4 is
        five classes under ``"auto"``; ``"regression"`` treats it as a number
        (what :func:`numkfs.select` passes for ``task="regression"``).

    Attributes
    ----------
    path_ : FeaturePath
        With ``chosen_index`` and ``cv_rule`` (``"fixed"`` or ``"n_features"``).
    feature_weights_ : ndarray (n_features,)
        η at the chosen point (only the requested number of features
        non-zero with ``n_features_to_select``).
    p_ : float
    alignments_ : ndarray (n_features,)
    best_index_ : int
        The chosen point (``path_.chosen_index``).
    cv_scores_ : None
        No cross-validation here (see :class:`LpKTASelectorCV`).
    n_features_selected_ : int
    converged_ : bool
        Whether every per-feature Newton corrector met its tolerance.
    n_features_in_ : int

    References
    ----------
    P. Jawanpuria, M. Varma and J. S. Nath, "On p-norm path following in
    multiple kernel learning for non-linear feature selection", ICML 2014.

    Examples
    --------
    >>> from numkfs.datasets import make_madelon_like
    >>> from numkfs import LpKTASelector
    >>> X, y, support = make_madelon_like(200, 30, n_redundant=5, random_state=0)
    >>> sel = LpKTASelector(n_features_to_select=5).fit(X, y)
    >>> bool(support[sel.get_support()].all())
    True
    """

    _method = "lpkta"

    _parameter_constraints = _SELECTOR_CONSTRAINTS

    path = staticmethod(lpkta_path)

    def __init__(self, kernel="rbf", *, gamma=None, bregman_weight=None, lp_weight=None, bregman="euclidean",
                 x0=None, p=None, n_features_to_select=None, grid=None, n_grid=101, eps=1e-3,
                 predictor="second", alignment_method="auto", alignment_rtol=1e-10, target="auto"):
        self.kernel = kernel
        self.gamma = gamma
        self.bregman_weight = bregman_weight
        self.lp_weight = lp_weight
        self.bregman = bregman
        self.x0 = x0
        self.p = p
        self.n_features_to_select = n_features_to_select
        self.grid = grid
        self.n_grid = n_grid
        self.eps = eps
        self.predictor = predictor
        self.alignment_method = alignment_method
        self.alignment_rtol = alignment_rtol
        self.target = target

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # -- shared by every lp-KTA estimator ----------------------------------
    def _path_params(self):
        """Keyword arguments of :func:`numkfs.lpkta_path`."""
        return dict(
            kernel=self.kernel, gamma=self.gamma, bregman_weight=self.bregman_weight, lp_weight=self.lp_weight,
            bregman=self.bregman, x0=self.x0, grid=self.grid, n_grid=self.n_grid, eps=self.eps,
            predictor=self.predictor, alignment_method=self.alignment_method, alignment_rtol=self.alignment_rtol,
            target=self.target,
        )

    def _alignments(self, X, y):
        """``(X, alignments, details)``: sparse X as CSC, the alignments on all its rows."""
        if sp.issparse(X):
            X = sp.csc_matrix(X, dtype=np.float64)
        a, det = feature_alignments(X, y, kernel=self.kernel, gamma=self.gamma, return_details=True,
                                    method=self.alignment_method, rtol=self.alignment_rtol, target=self.target)
        return X, a, det

    def _store_point(self, path, k, a, det, weights=None):
        """The fitted attributes at point ``k`` of ``path``."""
        self.path_ = path
        self.alignments_ = a
        self.traces_ = det.traces
        self.gamma_ = det.gamma
        self.index_ = k
        self.best_index_ = k
        self.cv_scores_ = path.cv_scores
        self.p_ = float(path.grid[k])
        self.feature_weights_ = (path.weights[k] if weights is None else weights).copy()
        # the per-feature Newton correctors stop on a relative gradient residual
        self.converged_ = bool(path.extra.get("max_G_residual", 0.0) <= 1e-8)

    def _fit_path(self, X, y):
        """The path on all the rows and the point chosen by ``p`` or
        ``n_features_to_select``; returns X (sparse as CSC)."""
        self._validate_params()
        kw = self._path_params()
        X, a, det = self._alignments(X, y)
        path = lpkta_path(X, y, alignments=a, feature_names=getattr(self, "feature_names_in_", None), **kw)
        weights = None
        if getattr(self, "n_features_to_select", None) is not None:
            k, mask = index_for_count(path, self.n_features_to_select)
            weights = np.where(mask, path.weights[k], 0.0)
            path.chosen_index, path.cv_rule, path.chosen_support = k, "n_features", mask
        else:
            p_wanted = getattr(self, "p", None)
            k = len(path) - 1 if p_wanted is None else int(np.argmin(np.abs(path.grid - p_wanted)))
            path.chosen_index, path.cv_rule = k, "fixed"
        self._store_point(path, k, a, det, weights)
        return X

    def fit(self, X, y):
        """Compute the path on (X, y) and choose a point.

        Parameters
        ----------
        X : array-like or sparse of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.
        y : array-like of shape (n_samples,)
            Target values: the response, or the class labels of a classifier.

        Returns
        -------
        self
        """
        X, y = validate_data_named(self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64,
                                   ensure_min_samples=2)
        self._fit_path(X, y)
        return self


class _LpKTAPathCV(PathCVMixin):
    """The cross-validation hooks of the lp-KTA ``*CV`` estimators: on each
    fold the alignments and the path on the training rows, the kernel model
    on the learned kernel scored on the held-out rows."""

    path = staticmethod(lpkta_path)
    _cv_grid_param = "grid"
    _cv_method = "lp-KTA"

    # the constructor of both CV estimators (the same parameters)
    def __init__(self, kernel="rbf", *, gamma=None, bregman_weight=None, lp_weight=None, bregman="euclidean",
                 x0=None, grid=None, n_grid=101, cv=5, cv_rule="best", scoring=None, C=1.0, eps=1e-3,
                 predictor="second", random_state=None, n_jobs=None, alignment_method="auto",
                 alignment_rtol=1e-10, target="auto"):
        self.kernel = kernel
        self.gamma = gamma
        self.bregman_weight = bregman_weight
        self.lp_weight = lp_weight
        self.bregman = bregman
        self.x0 = x0
        self.grid = grid
        self.n_grid = n_grid
        self.cv = cv
        self.cv_rule = cv_rule
        self.scoring = scoring
        self.C = C
        self.eps = eps
        self.predictor = predictor
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.alignment_method = alignment_method
        self.alignment_rtol = alignment_rtol
        self.target = target

    def _cv_validate(self, X, y):
        return validate_data_named(self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64,
                                   ensure_min_samples=2)

    def _cv_data(self, X, y):
        X, y = self._cv_validate(X, y)
        regression = (target_type(y) if self.target == "auto" else self.target) == "regression"
        scoring = self.scoring or ("neg_mean_squared_error" if regression else "neg_hinge_loss")
        if regression != (scoring == "neg_mean_squared_error"):
            raise ValueError(f"{type(self).__name__}: scoring={scoring!r} does not fit a "
                             f"{'continuous' if regression else 'class-label'} target.")
        kw = self._path_params()
        X, a, det = self._alignments(X, y)
        # the folds take rows: CSR
        X_split = sp.csr_matrix(X) if sp.issparse(X) else X
        return cv_data(X, y, scoring=scoring, stratify=not regression, X_split=X_split, y_split=np.asarray(y),
                       kw=kw, a=a, det=det)

    def _cv_path_params(self, data, outer, *, full):
        if not full:
            return dict(data.kw)
        return dict(data.kw, alignments=data.a, feature_names=getattr(self, "feature_names_in_", None))

    def _cv_threads(self, data):
        return limit_threads(*thread_limits("lpkta", data.X.shape[0]))

    def _cv_fold_scores(self, data, train, test, grid, outer):
        Xtr, ytr, Xte, yte = self._cv_fold_data(data, train, test)
        path, traces = fold_path(Xtr, ytr, dict(data.kw, grid=grid))
        return kernel_model_scores(Xtr, ytr, Xte, yte, path, np.arange(len(path)), self.kernel, self.gamma, self.C,
                                   traces=traces, scoring=data.scoring)

    def _cv_store(self, data, paths, values, k, i):
        self._store_point(paths[k], i, data.a, data.det)


class LpKTASelectorCV(_LpKTAPathCV, LpKTASelector):
    r"""Feature selection by the Generalized lp-KTA path, with the point on
    the path chosen by K-fold cross-validation.

    On every fold the alignments and the path are recomputed on the training
    rows; a kernel model on the learned kernel :math:`\sum_i \eta_i \tilde
    K_i` (an SVM for class labels, kernel ridge regression for a continuous
    target) is scored on the held-out rows at every p, and the point is
    chosen by ``cv_rule`` (:func:`numkfs.model_selection.choose_index`).

    Parameters
    ----------
    kernel, gamma, bregman_weight, lp_weight, bregman, x0
        As in :class:`LpKTASelector`.
    grid, n_grid, eps, predictor, alignment_method, alignment_rtol, target
        As in :class:`LpKTASelector`; the target also sets the kernel model
        scored on the folds (kernel ridge regression for ``"regression"``).
    cv : int or splitter, default=5
        Folds (stratified for class labels).
    cv_rule : {"best", "1se", "1pct", "2pct"}, default="best"
        ``"best"``: the highest mean score; ``"1se"``: the sparsest point
        within one standard error of it.
        ``"1pct"``, ``"2pct"``: the sparsest point whose mean CV loss is at most 1 or 2 %
        above the best (:func:`numkfs.model_selection.choose_from_scores`).
    scoring : {"neg_hinge_loss", "accuracy", "neg_mean_squared_error"}, optional
        Default ``"neg_hinge_loss"`` (the SVM's own loss on the held-out
        rows) for class labels, ``"neg_mean_squared_error"`` for a continuous
        target.
    C : float, default=1.0
        Penalty of the kernel model scored on the folds (SVM ``C``; kernel
        ridge penalty ``1/C``).
    n_jobs : int, optional
        joblib workers over the CV folds.
    random_state : int, RandomState, Generator or None
        Unused: an int ``cv`` gives unshuffled (Stratified)KFold, as in
        scikit-learn, and a splitter carries its own seed.

    Attributes
    ----------
    path_ : FeaturePath
        With ``cv_scores``, ``score_name``, ``cv_rule`` and ``chosen_index``.
    best_index_ : int
    cv_scores_ : ndarray of shape (n_points, n_folds)
    feature_weights_ : ndarray of shape (n_features,)
        η at the chosen point.
    p_ : float
    alignments_ : ndarray (n_features,)
    n_features_selected_ : int
    converged_ : bool

    References
    ----------
    P. Jawanpuria, M. Varma and J. S. Nath. On p-norm path following in
    multiple kernel learning for non-linear feature selection. *ICML*, 2014.

    Examples
    --------
    >>> from numkfs import LpKTASelectorCV
    >>> from numkfs.datasets import make_madelon_like
    >>> X, y, support = make_madelon_like(120, 12, n_redundant=3, random_state=0)
    >>> sel = LpKTASelectorCV(cv=3, random_state=0).fit(X, y)
    >>> sel.cv_scores_.shape, sel.path_.score_name
    ((101, 3), 'neg_hinge_loss')
    """

    _parameter_constraints = {**_CONSTRAINTS, **_CV_CONSTRAINTS}


class LpKTAClassifier(ClassifierMixin, LpKTASelector):
    r"""Generalized lp-KTA selection followed by an SVM on the learned kernel.

    The SVM (``sklearn.svm.SVC``, precomputed kernel, penalty ``C``; the
    kernel is rescaled to trace n) uses

    .. math::

        k(x, x') = \sum_{i:\ \eta_i > 0} \eta_i\, \tilde k_i(x, x')

    with each :math:`\tilde k_i` centred and trace-normalised on the
    training data.  The point of the path is chosen by ``p`` or
    ``n_features_to_select`` (default: p = 1); to choose it by
    cross-validation, use :class:`LpKTAClassifierCV`.

    Parameters
    ----------
    kernel : {"rbf", "linear"}
        Per-feature base kernel.
    gamma : None, float or array
        RBF bandwidths (default :math:`1/\operatorname{var}(x_i)` per feature).
    bregman_weight, lp_weight : float, optional
        :math:`\lambda_1` and :math:`\lambda_2`, the weights of the Bregman
        term and of the lp term; default :math:`\max_i a_i / 2` each.
    bregman : {"euclidean", "kl"} or Bregman
        The Bregman divergence :math:`B_F` of the penalty (by name or object).
    x0 : float, optional
        Centre of the Bregman divergence.
    p : float, optional
        Choose the path point nearest to this p.
    n_features_to_select : int, optional
        Select exactly this many features: walking from p = 1 towards p = 2,
        the first point with at least this many features, ranked by η
        (:func:`numkfs.model_selection.index_for_count`; a warning says so
        when the path or ties force another count).
    C : float, default=1.0
        Penalty ``C`` of the SVM.
    grid : array, optional
        The p values of the path; default ``n_grid`` values from 2 down to 1.
    n_grid : int, default=101
        Number of p values of the default grid.
    eps : float in [0, 1/e)
        Juncture elimination threshold.
    predictor : {"warm", "first", "second"}
        Predictor of the per-feature path tracker.
    alignment_method : {"auto", "exact", "fgt"}, default="auto"
        Alignments by the exact O(n²) pair loop or the O(n) fast Gauss
        transform (``"auto"``: the transform from 1,024 rows), see
        :func:`~numkfs.kernels.alignment.feature_alignments`.
    alignment_rtol : float, default=1e-10
        Relative tolerance of the fast Gauss transform.
    target : {"auto", "binary", "multiclass"}, default="auto"
        How the class labels enter the alignments (:class:`LpKTASelector`).

    Attributes
    ----------
    svm_ : sklearn.svm.SVC or LowRankKernelModel
        ``SVC`` on the precomputed learned kernel; above 2,000 rows
        (``LOWRANK_MIN_SAMPLES`` of ``numkfs.estimators._lpkta_scoring``), a
        linear SVM (squared hinge loss, the same C) on low-rank features of
        that kernel (:func:`numkfs.kernels.lowrank.learned_kernel_features`),
        so memory stays O(n R) instead of n².
    low_rank_ : bool
        Whether the low-rank form was used.
    kernel_scale_ : float
        The factor that brings the learned kernel to trace n.
    classes_ : ndarray
    support_mask_ : ndarray of bool
        Features used by the kernel.
    path_, feature_weights_, p_, alignments_, best_index_, converged_
        As in :class:`LpKTASelector`.

    References
    ----------
    P. Jawanpuria, M. Varma and J. S. Nath, "On p-norm path following in
    multiple kernel learning for non-linear feature selection", ICML 2014.

    Examples
    --------
    >>> from numkfs.datasets import make_madelon_like
    >>> from numkfs import LpKTAClassifier
    >>> X, y, _ = make_madelon_like(300, 30, n_redundant=5, random_state=0)
    >>> clf = LpKTAClassifier().fit(X[:200], y[:200])
    >>> clf.score(X[200:], y[200:]) > 0.7
    True
    """

    _parameter_constraints = {**_SELECTOR_CONSTRAINTS, "C": _C, "target": _CLASS_TARGETS}

    def __init__(self, kernel="rbf", *, gamma=None, bregman_weight=None, lp_weight=None, bregman="euclidean",
                 x0=None, p=None, n_features_to_select=None, C=1.0, grid=None, n_grid=101, eps=1e-3,
                 predictor="second", alignment_method="auto", alignment_rtol=1e-10, target="auto"):
        super().__init__(kernel=kernel, gamma=gamma, bregman_weight=bregman_weight, lp_weight=lp_weight,
                         bregman=bregman, x0=x0, p=p, n_features_to_select=n_features_to_select, grid=grid,
                         n_grid=n_grid, eps=eps, predictor=predictor, alignment_method=alignment_method,
                         alignment_rtol=alignment_rtol, target=target)
        self.C = C

    def _validate_classes(self, X, y):
        X, y = validate_data_named(self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64,
                                   ensure_min_samples=2)
        y = column_or_1d(y, warn=True)
        check_class_labels(y, type(self).__name__)
        check_classification_targets(y)
        if np.unique(y).shape[0] < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes in y; found 1 class.")
        return X, y

    def fit(self, X, y):
        """Fit the path, choose the point, then fit the SVM.

        Parameters
        ----------
        X : array-like or sparse of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
        """
        X, y = self._validate_classes(X, y)
        X = self._fit_path(X, y)
        return self._fit_svm(X, y)

    def _fit_svm(self, X, y):
        """The SVM on the learned kernel at the chosen point (``feature_weights_``)."""
        from sklearn.svm import SVC

        mask = self.feature_weights_ > 0
        self.support_mask_ = mask
        self._Xsel = X[:, mask] if mask.any() else X[:, :0]
        self._eta = self.feature_weights_[mask]
        self._gsel = self.gamma_[mask] if self.gamma_ is not None else None
        self._tr = self.traces_[mask]
        # the threshold as it is now (tests and benchmarks move it)
        self.low_rank_ = X.shape[0] > _scoring.LOWRANK_MIN_SAMPLES and self._eta.size > 0
        if self.low_rank_:
            Phi, self._features = learned_kernel_features(self._Xsel, self._eta, kernel=self.kernel,
                                                          gamma=self._gsel, traces=self._tr)
            self.svm_ = LowRankKernelModel(self.C, regression=False).fit(Phi, y)
            self.kernel_scale_, self.classes_ = self.svm_.kernel_scale, self.svm_.classes_
            return self
        K, self._centering = self._kernel(None)
        self.kernel_scale_ = svm_kernel_scale(K)
        self.svm_ = SVC(kernel="precomputed", C=self.C).fit(K * self.kernel_scale_, y)
        self.classes_ = self.svm_.classes_
        return self

    def _kernel(self, Y):
        n = self._Xsel.shape[0]
        if self._eta.size == 0:
            K = np.zeros((n if Y is None else Y.shape[0], n))
            return (K, None) if Y is None else K
        kw = dict(kernel=self.kernel, gamma=self._gsel, traces=self._tr)
        if Y is None:
            return combined_kernel(self._Xsel, self._eta, return_centering=True, **kw)
        return combined_kernel(self._Xsel, self._eta, Y, centering=self._centering, **kw)

    def _test_kernel(self, X):
        return self._kernel(self._selected_columns(X)) * self.kernel_scale_

    def _selected_columns(self, X):
        check_is_fitted(self, "svm_")
        X = validate_data_named(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64, reset=False)
        if sp.issparse(X):
            X = sp.csc_matrix(X)
        return X[:, self.support_mask_] if self.support_mask_.any() else X[:, :0]

    def decision_function(self, X):
        """SVM decision values on the learned kernel.

        Parameters
        ----------
        X : array-like or sparse of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        if getattr(self, "low_rank_", False):
            return self.svm_.decision_function(self._features.transform(self._selected_columns(X)))
        K = self._test_kernel(X)
        return self.svm_.decision_function(K)

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like or sparse of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if getattr(self, "low_rank_", False):
            return self.svm_.predict(self._features.transform(self._selected_columns(X)))
        K = self._test_kernel(X)
        return self.svm_.predict(K)


class LpKTAClassifierCV(_LpKTAPathCV, LpKTAClassifier):
    r"""Generalized lp-KTA with the point on the path chosen by K-fold
    cross-validation, followed by an SVM on the learned kernel.

    The point is chosen as by :class:`LpKTASelectorCV` (on every fold the
    alignments and the path on the training rows, the SVM on the learned
    kernel scored on the held-out rows, ``cv_rule``); the fitted classifier
    is :class:`LpKTAClassifier`'s SVM on all the rows at that point.

    Parameters
    ----------
    kernel, gamma, bregman_weight, lp_weight, bregman, x0
        As in :class:`LpKTAClassifier`.
    grid, n_grid, eps, predictor, alignment_method, alignment_rtol, target
        As in :class:`LpKTAClassifier`.
    cv : int or splitter, default=5
        Folds (stratified).
    cv_rule : {"best", "1se", "1pct", "2pct"}, default="best"
        ``"best"``: the highest mean score; ``"1se"``: the sparsest point
        within one standard error of it.
        ``"1pct"``, ``"2pct"``: the sparsest point whose mean CV loss is at most 1 or 2 %
        above the best (:func:`numkfs.model_selection.choose_from_scores`).
    scoring : {"neg_hinge_loss", "accuracy"}, optional
        The held-out score of the SVM; default ``"neg_hinge_loss"``.
    C : float, default=1.0
        Penalty ``C`` of the SVM, on the folds and in the final fit.
    n_jobs : int, optional
        joblib workers over the CV folds.
    random_state : int, RandomState, Generator or None
        Unused: an int ``cv`` gives unshuffled StratifiedKFold, as in
        scikit-learn, and a splitter carries its own seed.

    Attributes
    ----------
    path_ : FeaturePath
        With ``cv_scores``, ``score_name``, ``cv_rule`` and ``chosen_index``.
    best_index_ : int
    cv_scores_ : ndarray of shape (n_points, n_folds)
    p_ : float
    feature_weights_ : ndarray of shape (n_features,)
    svm_, low_rank_, kernel_scale_, classes_, support_mask_
        As in :class:`LpKTAClassifier`.

    References
    ----------
    P. Jawanpuria, M. Varma and J. S. Nath. On p-norm path following in
    multiple kernel learning for non-linear feature selection. *ICML*, 2014.

    Examples
    --------
    >>> from numkfs import LpKTAClassifierCV
    >>> from numkfs.datasets import make_madelon_like
    >>> X, y, _ = make_madelon_like(180, 12, n_redundant=3, random_state=0)
    >>> clf = LpKTAClassifierCV(cv=3).fit(X[:120], y[:120])
    >>> clf.cv_scores_.shape, bool(clf.score(X[120:], y[120:]) > 0.7)
    ((101, 3), True)
    """

    _parameter_constraints = {**_CONSTRAINTS, **_CV_CONSTRAINTS, "target": _CLASS_TARGETS}

    _cv_validate = LpKTAClassifier._validate_classes

    def _cv_store(self, data, paths, values, k, i):
        super()._cv_store(data, paths, values, k, i)
        self._fit_svm(data.X, data.y)


def select_settings(settings, *, task, y):
    """The keyword arguments :func:`numkfs.select` gives lp-KTA's estimator
    (its row's ``select_settings``): ``target`` for the task given, not one
    inferred again from y, unless given."""
    from ..methods.lpkta import target_for_task

    out = dict(settings)
    out.setdefault("target", target_for_task(task, y))
    return out
