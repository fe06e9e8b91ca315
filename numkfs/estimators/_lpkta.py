"""scikit-learn estimators for Generalized lp-KTA (:mod:`numkfs.methods.lpkta`).

* :class:`LpKTASelector`: a feature selector; the path point is chosen by
  ``p``, by ``n_features_to_select`` or by cross-validated SVM accuracy
  (``cv``); default: the end of the path (p = 1).
* :class:`LpKTAClassifier`: the selector followed by an SVM
  (scikit-learn ``SVC``, precomputed kernel) on the learned kernel
  :math:`\\sum_i \\eta_i \\tilde K_i`.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .._validation import Interval, InstanceOf, NoneOr, Options
from ..kernels.alignment import combined_kernel, feature_alignments
from ..methods.lpkta import (
    Bregman,
    _check_grid,
    default_p_grid,
    feature_selection_path,
    lpkta_path,
    svm_kernel_scale,
)
from ._base import NumkfsEstimator, WeightSelectorMixin, validate_data_named

__all__ = ["LpKTASelector", "LpKTAClassifier"]

_ACCEPT_SPARSE = ["csc", "csr", "coo"]

_CONSTRAINTS = {
    "kernel": [Options({"rbf", "linear"})],
    "gamma": [NoneOr, Interval(numbers.Real, 0, None, closed="neither"), Options({"scale"}),
              InstanceOf((np.ndarray, list, tuple), "an array of positive floats")],
    "lambda1": [NoneOr, Interval(numbers.Real, 0, None, closed="neither")],
    "lambda2": [NoneOr, Interval(numbers.Real, 0, None, closed="left")],
    "bregman": [Options({"euclidean", "kl"}), InstanceOf((Bregman,), "a Bregman instance")],
    "x0": [NoneOr, Interval(numbers.Real, 0, None, closed="left")],
    "p": [NoneOr, Interval(numbers.Real, 1, None, closed="left")],
    "n_features_to_select": [NoneOr, Interval(numbers.Integral, 1, None, closed="left")],
    "cv": [NoneOr, Interval(numbers.Integral, 2, None, closed="left"),
           InstanceOf((object,), "a cross-validation splitter")],
    "C": [Interval(numbers.Real, 0, None, closed="neither")],
    "p_grid": [NoneOr, InstanceOf((np.ndarray, list, tuple), "an array of decreasing p values")],
    "eps": [Interval(numbers.Real, 0, float(np.exp(-1.0)), closed="left")],
    "predictor": [Options({"warm", "first", "second"})],
    "n_jobs": [NoneOr, Interval(numbers.Integral, None, None)],
}


class LpKTASelector(WeightSelectorMixin, NumkfsEstimator):
    r"""Feature selection by the Generalized lp-KTA path.

    Kernel weights solve, at the chosen p,

    .. math::

        \min_{\eta \ge 0}\ \lambda_1 \sum_i B_F(\eta_i)
        + \lambda_2 \sum_i \eta_i^p - \sum_i \eta_i\, y^\top \tilde K_i y ;

    features with :math:`\eta_i > 0` are selected.

    Parameters
    ----------
    kernel : {"rbf", "linear"}
        Per-feature base kernel.
    gamma : None, float or array
        RBF bandwidths (default :math:`1/\operatorname{var}(x_i)` per feature).
    lambda1, lambda2 : float, optional
        Default :math:`\max_i a_i / 2`.
    bregman : {"euclidean", "kl"} or Bregman
    x0 : float, optional
        Centre of the Bregman divergence.
    p : float, optional
        Choose the path point nearest to this p.
    n_features_to_select : int, optional
        Choose the first point (largest p) with at most this many features.
    cv : int or splitter, optional
        Choose the point of best cross-validated SVM accuracy (classification).
    C : float
        SVM penalty used with ``cv``.
    p_grid : array, optional
        Default 2, 1.99, ..., 1.
    eps : float in [0, 1/e)
        Juncture elimination threshold.
    predictor : {"warm", "first", "second"}
    random_state : None or int
        Seeds the CV splits.
    n_jobs : int, optional
        joblib workers over the CV folds.

    Attributes
    ----------
    path_ : FeaturePath
    feature_weights_ : ndarray (n_features,)
        η at the chosen point.
    p_ : float
    alignments_ : ndarray (n_features,)
    curve_ : SelectionCurve or None
        CV accuracy along the path (when ``cv`` is given).
    n_features_in_ : int

    Examples
    --------
    >>> from numkfs.datasets._lpkta import make_madelon_like
    >>> from numkfs.estimators._lpkta import LpKTASelector
    >>> X, y, support = make_madelon_like(200, 30, n_redundant=5, random_state=0)
    >>> sel = LpKTASelector(n_features_to_select=5).fit(X, y)
    >>> bool(support[sel.get_support()].all())
    True
    """

    _method = "lpkta"

    _parameter_constraints = dict(_CONSTRAINTS, random_state=[NoneOr, Interval(numbers.Integral, 0, None)])

    path = staticmethod(lpkta_path)

    def __init__(self, kernel="rbf", gamma=None, lambda1=None, lambda2=None, bregman="euclidean",
                 x0=None, p=None, n_features_to_select=None, cv=None, C=1.0, p_grid=None, eps=1e-3,
                 predictor="second", random_state=None, n_jobs=None):
        self.n_jobs = n_jobs
        self.kernel = kernel
        self.gamma = gamma
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.bregman = bregman
        self.x0 = x0
        self.p = p
        self.n_features_to_select = n_features_to_select
        self.cv = cv
        self.C = C
        self.p_grid = p_grid
        self.eps = eps
        self.predictor = predictor
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _fit_path(self, X, y):
        self._validate_params()
        grid = default_p_grid() if self.p_grid is None else _check_grid(self.p_grid)
        if sp.issparse(X):
            X = sp.csc_matrix(X, dtype=np.float64)
        a, det = feature_alignments(X, y, kernel=self.kernel, gamma=self.gamma, return_details=True)
        kw = dict(kernel=self.kernel, gamma=self.gamma, lambda1=self.lambda1, lambda2=self.lambda2,
                  bregman=self.bregman, x0=self.x0, p_grid=grid, eps=self.eps,
                  predictor=self.predictor)
        path = lpkta_path(X, y, alignments=a, **kw)
        self.curve_ = None
        if self.cv is not None:
            kw.pop("p_grid")
            self.curve_ = feature_selection_path(X, y, p_grid=grid, cv=self.cv, C=self.C, n_points=None,
                                                 baseline=False, random_state=self.random_state,
                                                 n_jobs=self.n_jobs, **kw)
            k = self.curve_.best_index
        elif self.n_features_to_select is not None:
            ok = np.flatnonzero(path.n_selected() <= self.n_features_to_select)
            k = int(ok[0]) if ok.size else len(path) - 1
        elif self.p is not None:
            k = int(np.argmin(np.abs(path.grid - self.p)))
        else:
            k = len(path) - 1
        self.path_ = path
        self.alignments_ = a
        self.traces_ = det.traces
        self.gamma_ = det.gamma
        self.index_ = k
        self.p_ = float(path.grid[k])
        self.feature_weights_ = path.weights[k].copy()
        return X

    def fit(self, X, y):
        """Compute the path on (X, y) and choose a point.

        Parameters
        ----------
        X : array-like or sparse of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data_named(self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64,
                             ensure_min_samples=2)
        self._fit_path(X, y)
        return self


class LpKTAClassifier(ClassifierMixin, LpKTASelector):
    r"""Generalized lp-KTA selection followed by an SVM on the learned kernel.

    The SVM (``sklearn.svm.SVC``, precomputed kernel, penalty ``C``; the
    kernel is rescaled to trace n, see
    :func:`numkfs.methods.lpkta.svm_kernel_scale`) uses

    .. math::

        k(x, x') = \sum_{i:\ \eta_i > 0} \eta_i\, \tilde k_i(x, x')

    with each :math:`\tilde k_i` centred and trace-normalised on the
    training data.  Parameters are those of :class:`LpKTASelector`
    (``cv`` also chooses the path point by CV accuracy).

    Attributes
    ----------
    svm_ : sklearn.svm.SVC
    classes_ : ndarray
    support_mask_ : ndarray of bool
        Features used by the kernel.

    Examples
    --------
    >>> from numkfs.datasets._lpkta import make_madelon_like
    >>> from numkfs.estimators._lpkta import LpKTAClassifier
    >>> X, y, _ = make_madelon_like(300, 30, n_redundant=5, random_state=0)
    >>> clf = LpKTAClassifier().fit(X[:200], y[:200])
    >>> clf.score(X[200:], y[200:]) > 0.7
    True
    """

    def fit(self, X, y):
        """Fit the path, choose the point, then fit the SVM.

        Returns
        -------
        self
        """
        from sklearn.svm import SVC

        X, y = validate_data_named(self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64,
                             ensure_min_samples=2)
        y = column_or_1d(y, warn=True)
        check_classification_targets(y)
        if np.unique(y).shape[0] < 2:
            raise ValueError("LpKTAClassifier needs at least 2 classes in y; found 1 class.")
        X = self._fit_path(X, y)
        mask = self.feature_weights_ > 0
        self.support_mask_ = mask
        self._Xsel = X[:, mask] if mask.any() else X[:, :0]
        self._eta = self.feature_weights_[mask]
        self._gsel = self.gamma_[mask] if self.gamma_ is not None else None
        self._tr = self.traces_[mask]
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
        check_is_fitted(self, "svm_")
        X = validate_data_named(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64, reset=False)
        if sp.issparse(X):
            X = sp.csc_matrix(X)
        Xs = X[:, self.support_mask_] if self.support_mask_.any() else X[:, :0]
        return self._kernel(Xs) * self.kernel_scale_

    def decision_function(self, X):
        """SVM decision values on the learned kernel."""
        K = self._test_kernel(X)
        return self.svm_.decision_function(K)

    def predict(self, X):
        """Predicted class labels."""
        K = self._test_kernel(X)
        return self.svm_.predict(K)
