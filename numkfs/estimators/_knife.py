r"""scikit-learn estimators for KNIFE (:mod:`numkfs.methods.knife`).

* :class:`KNIFERegressor`, :class:`KNIFEClassifier`: one fit at
  :math:`(\lambda_1, \lambda_2)`;
* :class:`KNIFERegressorCV`, :class:`KNIFEClassifierCV`: the λ2 path
  (paper Algorithm 2) with λ2 chosen by K-fold cross-validation
  (:func:`numkfs.model_selection.cross_val_path`), each fold standardised
  on its own training rows, scores per fold kept in ``path_.cv_scores``,
  the point chosen by ``cv_rule``; the model returned is the full-data
  path's point at the chosen λ2.

All of them standardise X inside (the stored ``scaler_``; the paper assumes
standardised features) and select features through ``feature_weights_``
(``transform``, ``get_support``).  The regressors centre y (the paper's
regression model has no intercept).  The classifiers fit an intercept and
handle more than two classes one-vs-rest (one weight vector per class;
``feature_weights_`` is the largest weight of each feature over the
classes, ``class_feature_weights_`` holds them all).
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import ConstantFeatureWarning, InstanceOf, Interval, NoneOr, Options, check_X, check_y, constant_columns
from .._threads import method_threads
from ..methods.knife import (CLASSIFICATION_LOSSES, KNIFE_CONSTRAINTS, REGRESSION_LOSSES, knife,
                             knife_decision_function, knife_ovr_paths, knife_path, path_decision_function)
from ..model_selection import CV_RULES, fold_data, path_scores
from ..paths import FeaturePath
from ._base import NumkfsEstimator, Standardizer, WeightSelectorMixin
from ._cv import PathCVMixin, cv_data

__all__ = ["KNIFERegressor", "KNIFEClassifier", "KNIFERegressorCV", "KNIFEClassifierCV"]


_COMMON = {k: KNIFE_CONSTRAINTS[k] for k in
           ("kernel", "lambda1", "gamma", "degree", "coef0", "n_restarts", "max_iter", "tol")}
_COMMON["solver"] = [Options(("auto", "native", "ECOS", "SCS", "CLARABEL"))]
_COMMON["verbose"] = [Options((True, False))]
_COMMON["approximation"] = KNIFE_CONSTRAINTS["approximation"]
_COMMON["n_components"] = KNIFE_CONSTRAINTS["n_components"]
_N_JOBS = [NoneOr, Interval(numbers.Integral, None, None)]


def _constant_columns_named_once(fit):
    """``fit`` with the constant-column warning given once, by the estimator,
    naming the columns by their feature names: the same warning from the
    method's own functions (``knife``, ``knife_path``, ``knife_ovr_paths``,
    on the whole data and on each fold, with column indices) is ignored."""
    import functools

    @functools.wraps(fit)
    def wrapper(self, X, y):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"knife(_path|_ovr_paths)?: ", category=ConstantFeatureWarning)
            return fit(self, X, y)

    return wrapper


class _KNIFEBase(WeightSelectorMixin, NumkfsEstimator):
    """Shared fitting machinery (private)."""

    _method = "knife"

    _classifier = False

    # -- input -------------------------------------------------------------
    def _precheck(self, X):
        """Shape and type errors worded as scikit-learn words them."""
        name = type(self).__name__
        arr = X if hasattr(X, "dtype") and hasattr(X, "shape") and not hasattr(X, "columns") else None
        if arr is None and not hasattr(X, "columns"):
            arr = np.asarray(X, dtype=object) if not hasattr(X, "toarray") else None
        if arr is not None:
            if np.iscomplexobj(arr) or (arr.dtype == object and any(isinstance(v, complex) for v in arr.ravel())):
                raise ValueError(f"{name}: Complex data not supported.")
            if arr.dtype == object:
                arr.astype(np.float64)  # TypeError naming the offending value
            if arr.ndim == 1:
                raise ValueError(f"{name}: expected a 2-D array, got a 1-D array of shape {arr.shape}. "
                                 "Reshape your data either using X.reshape(-1, 1) if it has a single feature "
                                 "or X.reshape(1, -1) if it contains a single sample.")
            if arr.ndim == 2 and arr.shape[1] == 0:
                raise ValueError(f"{name}: 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.")

    def _check_fit_input(self, X, y):
        name = type(self).__name__
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None.")
        self._precheck(X)
        X_arr = check_X(X, caller=name)
        validate_data(self, X, skip_check_array=True, reset=True)
        y_arr = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
        if y_arr.ndim == 2 and y_arr.shape[1] == 1:
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change "
                          "the shape of y to (n_samples,), for example using ravel().",
                          DataConversionWarning, stacklevel=3)
            y_arr = y_arr.ravel()
        y_arr = check_y(y_arr, X_arr.shape[0], caller=name, numeric=not self._classifier)
        self.scaler_ = Standardizer().fit(X_arr)
        Xs = self.scaler_.transform(X_arr)
        self._constant = constant_columns(X_arr, caller=name,
                                          feature_names=getattr(self, "feature_names_in_", None))
        from ..methods.knife_nystroem import resolve_approximation

        self.approximation_ = resolve_approximation(self.approximation, X_arr.shape[0], self.n_components, name)[0]
        return Xs, y_arr, X_arr

    def _check_predict_input(self, X):
        check_is_fitted(self, "feature_weights_")
        name = type(self).__name__
        self._precheck(X)
        X_arr = check_X(X, caller=name, min_samples=1)
        validate_data(self, X, skip_check_array=True, reset=False)
        return self.scaler_.transform(X_arr)

    def _kernel_params(self):
        return dict(kernel=self.kernel, lambda1=self.lambda1, gamma=self.gamma, degree=self.degree,
                    coef0=self.coef0, solver=self.solver, max_iter=self.max_iter, tol=self.tol,
                    approximation=self.approximation_, n_components=self.n_components)


# --------------------------------------------------------------------------
# regression


class KNIFERegressor(RegressorMixin, _KNIFEBase):
    r"""KNIFE kernel ridge regression with feature weights and an L1 penalty.

    .. math::

        \min_{\alpha, 0 \le w \le 1} \|y - K_w\alpha\|^2 + \lambda_1 \alpha^\top K_w\alpha
        + \lambda_2 \textstyle\sum_j w_j

    on standardised X and centred y.

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly"}, default="rbf"
        Feature-weighted kernel.
    loss : {"squared"}, default="squared"
        Loss function.
    lambda1 : float, default=1.0
        Ridge penalty λ₁ on :math:`\alpha^\top K_w \alpha`.
    lambda2 : float, default=1.0
        ℓ₁ penalty λ₂ on the feature weights.
    gamma : float, "auto" or None, default=None
        RBF scale: a number; None is 1/p (p every column); ``"auto"`` refits
        with the scale of the selected features, 1 / (their number), until
        it no longer changes (:func:`numkfs.methods.knife.knife`).
    degree : int, default=2
        Degree d of the polynomial kernel.
    coef0 : float, default=1.0
        Constant c of the polynomial kernel.
    n_restarts : int, default=1
        Random starts (best objective wins).
    solver : {"auto", "native", "ECOS", "SCS", "CLARABEL"}, default="auto"
        Weight-step solver.
    max_iter : int, default=100
        Maximum number of iterations.
    tol : float, default=1e-6
        Convergence tolerance.
    random_state : int, Generator or None, default=0
        Seed or generator for everything random (the weights' starting
        point and restarts); an int makes the result reproducible, so two
        fits with the defaults agree.  ``None`` draws a fresh start each fit.
    verbose : bool, default=False
        Show a progress bar.
    n_jobs : int, optional
        joblib workers over the random starts (the result does not depend on it).
    approximation : {"exact", "nystroem", "auto"}, default="exact"
        The n x n weighted kernel, or the weighted kernel through
        ``n_components`` landmark rows with the weights inside it (O(n m)
        memory; :func:`numkfs.methods.knife.knife`); ``"auto"``: exact up to
        :data:`~numkfs.methods.knife_nystroem.AUTO_EXACT_MAX_SAMPLES` rows.
    n_components : int, optional
        Number of Nyström landmarks (at most the number of rows; of a CV
        fold's training rows in the CV estimators); default
        ``min(n_samples, 500)``.

    Attributes
    ----------
    feature_weights_ : ndarray (n_features,)
    alpha_ : ndarray (n_samples,)
        One coefficient per training row (per landmark with the Nyström
        approximation).
    approximation_ : {"exact", "nystroem"}
        The kernel used (``"auto"`` resolved).
    intercept_ : float
        Mean of the training y.
    objective_ : float
    objective_history_ : ndarray
    n_iter_ : int
    scaler_ : Standardizer
    X_fit_ : ndarray
        Standardised training data (the kernel's second argument in predict).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has feature names.

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.

    Examples
    --------
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs import KNIFERegressor
    >>> X, y, support = make_sinusoid(n_samples=80, random_state=0)
    >>> est = KNIFERegressor(lambda2=30.0, random_state=0).fit(X, y)
    >>> est.get_support().shape
    (10,)
    """

    _parameter_constraints = {**_COMMON, "loss": [Options(REGRESSION_LOSSES)],
                              "lambda2": KNIFE_CONSTRAINTS["lambda2"], "n_jobs": _N_JOBS}

    def __init__(self, kernel="rbf", loss="squared", lambda1=1.0, lambda2=1.0, gamma=None, degree=2,
                 coef0=1.0, n_restarts=1, solver="auto", max_iter=100, tol=1e-6, random_state=0,
                 verbose=False, n_jobs=None, approximation="exact", n_components=None):
        self.approximation = approximation
        self.n_components = n_components
        self.n_jobs = n_jobs
        self.kernel = kernel
        self.loss = loss
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_restarts = n_restarts
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    @_constant_columns_named_once
    def fit(self, X, y):
        """Fit KNIFE on (X, y); returns self."""
        self._validate_params()
        Xs, y, _ = self._check_fit_input(X, y)
        self.y_mean_ = float(y.mean())
        res = knife(Xs, y - self.y_mean_, loss=self.loss, lambda2=self.lambda2, n_restarts=self.n_restarts,
                    random_state=self.random_state, n_jobs=self.n_jobs, **self._kernel_params())
        self._store(res, Xs)
        return self

    def _store(self, res, Xs):
        self.feature_weights_ = res.weights
        self.alpha_ = res.alpha
        self.intercept_ = self.y_mean_
        self.objective_ = res.objective
        self.objective_history_ = res.objective_history
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged
        self.gamma_ = res.params["gamma"]
        self._params = res.params
        self.X_fit_ = Xs

    def _decision(self, Xs):
        return knife_decision_function(self.X_fit_, Xs, self.feature_weights_, self.alpha_, 0.0, self._params)

    def predict(self, X):
        """Predicted responses."""
        return self._decision(self._check_predict_input(X)) + self.intercept_


# --------------------------------------------------------------------------
# classification


def _has_logistic(est):
    return est.loss == "logistic"


class KNIFEClassifier(ClassifierMixin, _KNIFEBase):
    r"""KNIFE kernel classifier (smooth SVM / kernel logistic regression).

    .. math::

        \min_{\alpha, \alpha_0, 0 \le w \le 1} \sum_i \ell(y_i (K_w\alpha + \alpha_0)_i)
        + \lambda_1 \alpha^\top K_w\alpha + \lambda_2 \textstyle\sum_j w_j

    with ℓ the squared hinge, the huberized hinge or the logistic loss, on
    standardised X; more than two classes one-vs-rest.

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly"}, default="rbf"
        Feature-weighted kernel.
    loss : {"squared_hinge", "huberized_hinge", "logistic"}, default="squared_hinge"
        Loss function.
    lambda1, lambda2, gamma, degree, coef0, n_restarts, solver, max_iter, tol, random_state, verbose, n_jobs
        As in :class:`KNIFERegressor`.
    approximation, n_components
        As in :class:`KNIFERegressor` (``approximation_`` the kernel used).
    delta : float, default=1.0
        Width of the huberized hinge.

    Attributes
    ----------
    classes_ : ndarray
    feature_weights_ : ndarray (n_features,)
        Largest weight of each feature over the one-vs-rest problems.
    class_feature_weights_ : ndarray (n_problems, n_features)
    alpha_ : ndarray (n_problems, n_samples)
    intercept_ : ndarray (n_problems,)
    objective_ : ndarray (n_problems,)
    objective_history_ : ndarray or list of ndarray
        The history of the binary problem (a list for one-vs-rest).
    n_iter_ : int
        Largest number of iterations over the problems.

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.
    """

    _classifier = True
    _parameter_constraints = {**_COMMON, "loss": [Options(CLASSIFICATION_LOSSES)], "n_jobs": _N_JOBS,
                              "lambda2": KNIFE_CONSTRAINTS["lambda2"], "delta": KNIFE_CONSTRAINTS["delta"]}

    def __init__(self, kernel="rbf", loss="squared_hinge", lambda1=1.0, lambda2=1.0, gamma=None, degree=2,
                 coef0=1.0, delta=1.0, n_restarts=1, solver="auto", max_iter=100, tol=1e-6,
                 random_state=0, verbose=False, n_jobs=None, approximation="exact", n_components=None):
        self.approximation = approximation
        self.n_components = n_components
        self.n_jobs = n_jobs
        self.kernel = kernel
        self.loss = loss
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.delta = delta
        self.n_restarts = n_restarts
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    def _targets(self, y):
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes in y; found 1: "
                             f"[{self.classes_[0]!r}].")
        if len(self.classes_) == 2:
            return [np.where(y == self.classes_[1], 1.0, -1.0)]
        return [np.where(y == c, 1.0, -1.0) for c in self.classes_]

    @_constant_columns_named_once
    def fit(self, X, y):
        """Fit KNIFE (one-vs-rest for more than two classes); returns self."""
        self._validate_params()
        Xs, y, _ = self._check_fit_input(X, y)
        problems = self._targets(y)
        results = [knife(Xs, yk, loss=self.loss, lambda2=self.lambda2, delta=self.delta,
                         n_restarts=self.n_restarts, random_state=self.random_state, n_jobs=self.n_jobs,
                         **self._kernel_params())
                   for yk in problems]
        self._store(results, Xs)
        return self

    def _store(self, results, Xs):
        self.class_feature_weights_ = np.array([r.weights for r in results])
        self.feature_weights_ = self.class_feature_weights_.max(axis=0)
        self.alpha_ = np.array([r.alpha for r in results])
        self.intercept_ = np.array([r.intercept for r in results])
        self.objective_ = np.array([r.objective for r in results])
        hist = [r.objective_history for r in results]
        self.objective_history_ = hist[0] if len(hist) == 1 else hist
        self.n_iter_ = int(max(r.n_iter for r in results))
        self.converged_ = bool(all(r.converged for r in results))
        self._params = results[0].params
        self._set_gammas([r.params["gamma"] for r in results])
        self._landmarks = [r.params.get("landmarks") for r in results]
        self.X_fit_ = Xs

    def _set_gammas(self, gammas):
        """``gamma_``: one value, or one per one-vs-rest problem when they differ (``gamma="auto"``)."""
        self._gammas = np.asarray(gammas, dtype=float)
        same = np.all(self._gammas == self._gammas[0])
        self.gamma_ = float(self._gammas[0]) if same else self._gammas.copy()

    def decision_function(self, X):
        """Decision values: (n,) for two classes (positive means ``classes_[1]``), else (n, n_classes)."""
        Xs = self._check_predict_input(X)
        D = np.column_stack([knife_decision_function(self.X_fit_, Xs, w, a, b, {**self._params, "gamma": g, "landmarks": lm})
                             for w, a, b, g, lm in zip(self.class_feature_weights_, self.alpha_, self.intercept_,
                                                       self._gammas, self._landmarks)])
        return D[:, 0] if len(self.classes_) == 2 else D

    def predict(self, X):
        """Predicted class labels."""
        D = self.decision_function(X)
        if D.ndim == 1:
            return self.classes_[(D > 0).astype(int)]
        return self.classes_[np.argmax(D, axis=1)]

    @available_if(_has_logistic)
    def predict_proba(self, X):
        """Class probabilities (logistic loss only; one-vs-rest normalised)."""
        D = self.decision_function(X)
        if D.ndim == 1:
            p1 = 1.0 / (1.0 + np.exp(-D))
            return np.column_stack([1.0 - p1, p1])
        P = 1.0 / (1.0 + np.exp(-D))
        return P / P.sum(axis=1, keepdims=True)

    @available_if(_has_logistic)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        return np.log(self.predict_proba(X))


# --------------------------------------------------------------------------
# cross-validated path estimators


class _HasSplit:
    """Constraint: a scikit-learn CV splitter (anything with ``split``)."""

    def is_satisfied_by(self, value):
        return hasattr(value, "split") and not isinstance(value, str)

    def __str__(self):
        return "a CV splitter"


_CV = {"cv": [Interval(numbers.Integral, 2, None, closed="left"), _HasSplit()],
       "cv_rule": [Options(CV_RULES)],
       "n_lambdas": KNIFE_CONSTRAINTS["n_lambdas"],
       "lambda_min_ratio": KNIFE_CONSTRAINTS["lambda_min_ratio"],
       "lambda2_grid": [InstanceOf((list, tuple, np.ndarray), "an array of increasing lambda2 values"), NoneOr],
       "n_jobs": [Interval(numbers.Integral, None, None), NoneOr]}

#: Held-out scores of the classification CV estimator (higher is better).
CLASSIFICATION_SCORINGS = ("accuracy", "neg_loss", "neg_log_loss")


class _KNIFEPathCV(PathCVMixin):
    """The cross-validation hooks both KNIFE CV estimators share (private):
    the path on all the (standardised) rows, each fold standardised on its
    own training rows, the folds on threads under KNIFE's thread policy."""

    _cv_grid_param = "lambda2_grid"
    _cv_method = "KNIFE"
    _cv_prefer = "threads"  # the folds' work releases the GIL: no worker processes to start

    fit = _constant_columns_named_once(PathCVMixin.fit)

    def _cv_threads(self, data):
        # small problems serially (Numba and BLAS); BLAS limited here, around the pool of fold threads
        return method_threads("knife", data.X_split.shape[0], blas_in_threads=False)

    def _cv_path_params(self, data, outer, *, full):
        params = dict(loss=self.loss, n_restarts=self.n_restarts, random_state=self.random_state,
                      **self._kernel_params())
        if self._classifier:
            params["delta"] = self.delta
        if full:
            params.update(n_lambdas=self.n_lambdas, lambda_min_ratio=self.lambda_min_ratio,
                          lambda2_grid=self.lambda2_grid, feature_names=getattr(self, "feature_names_in_", None),
                          verbose=self.verbose)
        return params

    def _cv_fold_data(self, data, train, test):
        """The fold's rows, standardised with its training rows' statistics only."""
        Xtr, Xte = fold_data(data.X_split, train, test)
        return Xtr, data.y_split[train], Xte, data.y_split[test]


class KNIFERegressorCV(_KNIFEPathCV, KNIFERegressor):
    r"""KNIFE regression with λ2 chosen on the feature path by K-fold CV.

    The path (paper Algorithm 2) is computed on the whole training set; its
    grid (0, then ``n_lambdas - 1`` log-spaced values up to the λ2 at
    which every weight is zero, refined where the support jumps by more
    than ``max(2, a quarter of the larger)`` features, at most
    ``2 * n_lambdas`` points, and with ``gamma="auto"`` continued by at most
    30 doublings of λ2 until every weight is zero,
    :func:`numkfs.methods.knife.knife_path`) is re-used on every fold.  By default (``gamma="auto"``) the rbf scale
    follows the selected features: each path point is fitted with
    1 / (the number of features selected at the previous point), on the
    whole data and on each fold alike, so that a model that keeps a few
    features has a kernel as narrow as the 1/p rule gives p features (the
    weights lie in [0, 1] and cannot narrow it themselves).  Each fold is
    standardised with its training rows' statistics only and its y centred
    on its training mean (nothing of the held-out rows leaks into the fold's
    fit); the score is the negative held-out mean squared error.  The point
    is chosen by ``cv_rule`` (:func:`numkfs.model_selection.choose_index`)
    and the fitted model is the full-data path's point there.

    Parameters
    ----------
    kernel, loss, lambda1, degree, coef0, n_restarts, solver, max_iter, tol, random_state, verbose
        As in :class:`KNIFERegressor`.
    approximation, n_components
        As in :class:`KNIFERegressor` (``approximation_`` the kernel used).
    gamma : float, "auto" or None, default="auto"
        RBF scale: ``"auto"`` the scale of the selected features (above,
        ``extra["gamma"]`` of the path per point, ``gamma_`` at the chosen
        point); a number or None (1/p) the same scale at every point.
    cv : int or splitter, default=5
        Number of cross-validation folds, or a scikit-learn splitter.
    cv_rule : {"best", "1se"}, default="best"
        ``"best"``: highest mean CV score; ``"1se"``: the sparsest point
        within one standard error of it.  Ties go to the sparser point.
    scoring : {"neg_mean_squared_error"}, default="neg_mean_squared_error"
        The CV score (higher is better); default: the method's own (see the selection contract in the user guide).
    n_lambdas : int, default=100
        Number of path points.
    lambda_min_ratio : float, default=1e-3
        Smallest positive λ₂ of the grid as a fraction of the largest.
    lambda2_grid : array-like, optional
        An increasing λ2 grid of your own, walked as given (no refinement),
        as in :func:`numkfs.methods.knife.knife_path`; default: the grid
        above.
    n_jobs : int, optional
        joblib workers over the folds: threads by default (the folds' work
        releases the GIL; no worker processes to start), any backend set
        with ``joblib.parallel_config`` (e.g. Dask) otherwise.

    Attributes
    ----------
    path_ : FeaturePath
        With ``cv_scores`` of shape (n_points, n_folds), ``score_name``,
        ``cv_rule``, ``chosen_index`` and ``converged``.
    lambda2_ : float
    gamma_ : float
        The rbf scale of the chosen point.
    best_index_ : int
        The chosen point (``path_.chosen_index``).
    cv_scores_ : ndarray (n_points, n_folds)
    converged_ : ndarray of bool (n_points,)
        Whether the full-data fit converged at each path point.
    n_features_selected_ : int
        Number of features selected at the chosen point.  (And the
        attributes of :class:`KNIFERegressor`.)

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.

    Examples
    --------
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs import KNIFERegressorCV
    >>> X, y, support = make_sinusoid(n_samples=60, random_state=0)
    >>> est = KNIFERegressorCV(n_lambdas=8, cv=3, random_state=0).fit(X, y)
    >>> est.path_.n_points >= 8, est.path_.score_name
    (True, 'neg_mean_squared_error')
    """

    _parameter_constraints = {**_COMMON, "loss": [Options(REGRESSION_LOSSES)], **_CV,
                              "scoring": [Options(("neg_mean_squared_error",))]}

    def __init__(self, kernel="rbf", loss="squared", lambda1=1.0, gamma="auto", degree=2, coef0=1.0,
                 n_restarts=1, solver="auto", max_iter=100, tol=1e-6, cv=5, cv_rule="best",
                 scoring="neg_mean_squared_error", n_lambdas=100, lambda_min_ratio=1e-3, lambda2_grid=None,
                 n_jobs=None, random_state=0, verbose=False, approximation="exact", n_components=None):
        self.approximation = approximation
        self.n_components = n_components
        self.kernel = kernel
        self.loss = loss
        self.lambda1 = lambda1
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_restarts = n_restarts
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.cv = cv
        self.cv_rule = cv_rule
        self.scoring = scoring
        self.n_lambdas = n_lambdas
        self.lambda_min_ratio = lambda_min_ratio
        self.lambda2_grid = lambda2_grid
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    path = staticmethod(knife_path)

    def _cv_data(self, X, y):
        Xs, y, X_raw = self._check_fit_input(X, y)
        y_mean = float(y.mean())
        # the full path on standardised X and centred y; the folds cut from the raw rows
        return cv_data(Xs, y - y_mean, scoring=self.scoring, X_split=X_raw, y_split=y, y_mean=y_mean)

    def _cv_fold_data(self, data, train, test):
        """Standardised on the fold's training rows, y centred on their mean
        (the held-out y too, so that the scores are those of the uncentred
        predictions)."""
        Xtr, ytr, Xte, yte = super()._cv_fold_data(data, train, test)
        m = float(ytr.mean())
        return Xtr, ytr - m, Xte, yte - m

    def _cv_predict(self, data, path, X_train, X_test, y_train):
        return path_decision_function(path, X_train, X_test)

    def _cv_store(self, data, paths, values, k, i):
        path = paths[k]
        Xs = data.X
        self.y_mean_ = data.y_mean
        self.path_ = path
        self.cv_scores_ = path.cv_scores
        self.best_index_ = i
        self.converged_ = np.asarray(path.extra["converged"], dtype=bool).copy()
        self.lambda2_ = float(path.grid[i])
        self.feature_weights_ = path.weights[i].copy()
        self.alpha_ = path.extra["alpha"][i].copy()
        self.intercept_ = self.y_mean_
        self.objective_ = float(path.objective[i])
        self.objective_history_ = path.objective.copy()
        self.n_iter_ = int(path.extra["n_iter"][i])
        self.gamma_ = float(path.extra["gamma"][i])
        self._params = {**path.extra["params"], "gamma": self.gamma_}
        self.X_fit_ = Xs


def _ovr_targets(y, classes):
    """±1 targets: one problem for two classes (+1 = ``classes[1]``), else one per class."""
    if len(classes) == 2:
        return [np.where(y == classes[1], 1.0, -1.0)]
    return [np.where(y == c, 1.0, -1.0) for c in classes]


class KNIFEClassifierCV(_KNIFEPathCV, KNIFEClassifier):
    r"""KNIFE classification with λ2 chosen on the feature path by K-fold CV.

    As :class:`KNIFERegressorCV` (folds standardised on their training rows
    only), with stratified folds and a classification score on the held-out
    rows: by default the accuracy (of the one-vs-rest vote; equal scores go
    to the sparser point), on request the method's own loss
    (``scoring="neg_loss"``, the mean per row of the squared hinge,
    huberized hinge or logistic loss of the margins, summed over the
    one-vs-rest problems) or ``"neg_log_loss"`` (logistic deviance of the
    decision values).  Accuracy is the default by evidence: on seven binary
    data sets it chose models at least as accurate on new data as the
    held-out loss and a Platt-calibrated deviance, with fewer false
    positives (``benchmarks/selection_quality.py``, the selection contract
    in the user guide).  With
    more than two classes every one-vs-rest problem walks the same grid (its
    top is the largest of the problems' tops).

    Parameters
    ----------
    kernel, loss, lambda1, degree, coef0, delta, n_restarts, solver, max_iter, tol, random_state, verbose
        As in :class:`KNIFEClassifier`.
    approximation, n_components
        As in :class:`KNIFERegressor` (``approximation_`` the kernel used).
    gamma, cv, cv_rule, n_lambdas, lambda_min_ratio, lambda2_grid, n_jobs
        As in :class:`KNIFERegressorCV` (``"auto"``: each one-vs-rest
        problem follows its own selected features).
    scoring : {"accuracy", "neg_loss", "neg_log_loss"}, default="accuracy"
        The CV score (higher is better; see the selection contract in the user guide).

    Attributes
    ----------
    path_ : FeaturePath
        Weights of the binary problem (for one-vs-rest: the largest weight
        of each feature over the classes), with ``cv_scores``,
        ``score_name``, ``cv_rule``, ``chosen_index`` and ``converged``.
    paths_ : list of FeaturePath
        One per one-vs-rest problem.
    lambda2_, best_index_, cv_scores_, converged_, n_features_selected_
        As in :class:`KNIFERegressorCV` (``converged_``: every problem
        converged at the point).
    gamma_ : float or ndarray (n_problems,)
        The rbf scale at the chosen point; one per one-vs-rest problem when
        they differ.

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.

    Examples
    --------
    >>> from numkfs.datasets import make_orange
    >>> from numkfs import KNIFEClassifierCV
    >>> X, y, support = make_orange(n_samples=60, n_noise=2, random_state=0)
    >>> est = KNIFEClassifierCV(n_lambdas=6, cv=3, random_state=0).fit(X, y)
    >>> est.path_.score_name, est.cv_scores_.shape == (est.path_.n_points, 3)
    ('accuracy', True)
    """

    _parameter_constraints = {**_COMMON, "loss": [Options(CLASSIFICATION_LOSSES)],
                              "delta": KNIFE_CONSTRAINTS["delta"], **_CV,
                              "scoring": [Options(CLASSIFICATION_SCORINGS)]}

    def __init__(self, kernel="rbf", loss="squared_hinge", lambda1=1.0, gamma="auto", degree=2, coef0=1.0,
                 delta=1.0, n_restarts=1, solver="auto", max_iter=100, tol=1e-6, cv=5, cv_rule="best",
                 scoring="accuracy", n_lambdas=100, lambda_min_ratio=1e-3, lambda2_grid=None, n_jobs=None,
                 random_state=0, verbose=False, approximation="exact", n_components=None):
        self.approximation = approximation
        self.n_components = n_components
        self.kernel = kernel
        self.loss = loss
        self.lambda1 = lambda1
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.delta = delta
        self.n_restarts = n_restarts
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.cv = cv
        self.cv_rule = cv_rule
        self.scoring = scoring
        self.n_lambdas = n_lambdas
        self.lambda_min_ratio = lambda_min_ratio
        self.lambda2_grid = lambda2_grid
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    path = staticmethod(knife_path)

    def _cv_data(self, X, y):
        Xs, y, X_raw = self._check_fit_input(X, y)
        problems = self._targets(y)
        return cv_data(Xs, y, scoring=self.scoring, stratify=True, X_split=X_raw,
                       score_kw=dict(classes=self.classes_, loss=self.loss, delta=self.delta),
                       problems=problems, classes=self.classes_)

    def _cv_full_path(self, data, outer):
        """The binary problem's path, or the one-vs-rest paths on one grid
        (:func:`~numkfs.methods.knife.knife_ovr_paths`) combined into one:
        the largest weight of each feature over the classes."""
        params = self._cv_path_params(data, outer, full=True)
        if len(data.problems) == 1:
            paths = [self.path(data.X, data.problems[0], **params)]
        else:
            params.pop("verbose")
            paths = knife_ovr_paths(data.X, data.problems, **params)
        data.paths = paths
        W = np.max(np.stack([p.weights for p in paths]), axis=0)
        converged = np.all(np.stack([p.extra["converged"] for p in paths]), axis=0)
        gammas = np.stack([p.extra["gamma"] for p in paths])  # (n_problems, n_points)
        return FeaturePath(grid=paths[0].grid, weights=W, grid_name="lambda2", feature_names=paths[0].feature_names,
                           objective=np.sum([p.objective for p in paths], axis=0), method="KNIFE",
                           extra=paths[0].extra if len(paths) == 1 else {"converged": converged, "gamma": gammas},
                           converged=converged)

    def _cv_fold_scores(self, data, train, test, grid, outer):
        """Every problem's path on the fold's training rows at ``grid``
        (NaN scores when a class is missing from them)."""
        if len(np.unique(data.y_split[train])) < len(data.classes):
            return np.full(len(grid), np.nan)
        Xtr, ytr, Xte, yte = self._cv_fold_data(data, train, test)
        params = self._cv_path_params(data, outer, full=False)
        fps = knife_ovr_paths(Xtr, _ovr_targets(ytr, data.classes), lambda2_grid=grid, **params)
        return path_scores(yte, self._cv_predict(data, fps, Xtr, Xte, ytr), data.scoring, **data.score_kw)

    def _cv_predict(self, data, paths, X_train, X_test, y_train):
        D = np.stack([path_decision_function(p, X_train, X_test) for p in paths])  # (k, m, n_points)
        return D[0] if len(paths) == 1 else D

    def _cv_store(self, data, paths, values, k, i):
        path, paths = paths[k], data.paths
        gammas = np.stack([p.extra["gamma"] for p in paths])  # (n_problems, n_points)
        self.paths_ = paths
        self.path_ = path
        self.cv_scores_ = path.cv_scores
        self.best_index_ = i
        self.converged_ = np.asarray(path.converged, dtype=bool).copy()
        self.lambda2_ = float(path.grid[i])
        self.class_feature_weights_ = np.array([p.weights[i] for p in paths])
        self.feature_weights_ = self.class_feature_weights_.max(axis=0)
        self.alpha_ = np.array([p.extra["alpha"][i] for p in paths])
        self.intercept_ = np.array([p.extra["intercept"][i] for p in paths])
        self.objective_ = np.array([p.objective[i] for p in paths])
        self.objective_history_ = paths[0].objective.copy()
        self.n_iter_ = int(max(p.extra["n_iter"][i] for p in paths))
        self._params = paths[0].extra["params"]
        self._set_gammas(gammas[:, i])
        self._landmarks = [p.extra["params"].get("landmarks") for p in paths]
        self.X_fit_ = data.X
