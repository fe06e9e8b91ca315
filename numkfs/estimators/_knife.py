r"""scikit-learn estimators for KNIFE (:mod:`numkfs.methods.knife`).

* :class:`KNIFERegressor`, :class:`KNIFEClassifier`: one fit at
  :math:`(\lambda_1, \lambda_2)`;
* :class:`KNIFERegressorCV`, :class:`KNIFEClassifierCV`
  (:mod:`numkfs.estimators._knife_cv`): the λ2 path (paper Algorithm 2)
  with λ2 chosen by K-fold cross-validation, each fold standardised on its
  own training rows, scores per fold kept in ``path_.cv_scores``, the point
  chosen by ``cv_rule``; the model returned is the full-data path's point
  at the chosen λ2.

All of them standardise X inside (the stored ``scaler_``; the paper assumes
standardised features) and select features through ``feature_weights_``
(``transform``, ``get_support``).  The regressors centre y (the paper's
regression model has no intercept).  The classifiers fit an intercept and
handle more than two classes one-vs-rest (one weight vector per class;
``feature_weights_`` is the largest weight of each feature over the
classes, ``class_feature_weights_`` holds them all).
"""
from __future__ import annotations

import contextlib
import warnings

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._targets import check_class_labels, check_real
from .._constraints import BOOL, N_JOBS, RANDOM_STATE, Options
from .._validation import ConstantFeatureWarning, check_X, check_y, constant_columns
from ..methods.knife import (CLASSIFICATION_LOSSES, KNIFE_CONSTRAINTS, REGRESSION_LOSSES, knife,
                             knife_decision_function)
from ._base import NumkfsEstimator, Standardizer, WeightSelectorMixin

__all__ = ["KNIFERegressor", "KNIFEClassifier"]


_COMMON = {k: KNIFE_CONSTRAINTS[k] for k in
           ("kernel", "lambda1", "gamma", "degree", "coef0", "n_restarts", "max_iter", "tol")}
_COMMON["solver"] = KNIFE_CONSTRAINTS["solver"]
_COMMON["verbose"] = BOOL
_COMMON["approximation"] = KNIFE_CONSTRAINTS["approximation"]
_COMMON["n_components"] = KNIFE_CONSTRAINTS["n_components"]
_COMMON["random_state"] = RANDOM_STATE


def _constant_columns_named_once(fit):
    """``fit`` with the constant-column warning given once, by the estimator,
    naming the columns by their feature names: the same warning from the
    method's own functions (``knife``, ``knife_path``, ``knife_ovr_paths``,
    on the whole data and on each fold, with column indices) is ignored."""
    import functools

    @functools.wraps(fit)
    def wrapper(self, X, y):
        with constant_columns_named_once():
            return fit(self, X, y)

    return wrapper


@contextlib.contextmanager
def constant_columns_named_once():
    """The context of :func:`_constant_columns_named_once` (the CV estimators'
    ``_cv_fit_context``): the methods' own constant-column warnings ignored."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"knife(_path|_ovr_paths)?: ", category=ConstantFeatureWarning)
        yield


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
        check_real(X, "X", name)
        if arr is not None:
            if arr.dtype == object and any(isinstance(v, complex) for v in arr.ravel()):  # a list of lists
                raise ValueError(f"{name}: X holds complex numbers. Complex data not supported: numkfs takes "
                                 "real data.")
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
        from ..methods.knife import resolve_approximation

        self.approximation_ = resolve_approximation(self.approximation, X_arr.shape[0], self.n_components, name,
                                                    self.loss, n_features=X_arr.shape[1])[0]
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
        it no longer changes, once more from w = 1 at that scale, and on
        from the union of both fits' weights
        (:func:`numkfs.methods.knife.knife`).
    degree : int, default=2
        Degree d of the polynomial kernel.
    coef0 : float, default=1.0
        Constant c of the polynomial kernel.
    n_restarts : int, default=1
        Starts: w = 1 (every feature in), then ``n_restarts - 1`` random
        ones (best objective wins).
    solver : {"auto", "native", "ECOS", "SCS", "CLARABEL"}, default="auto"
        Weight-step solver.
    max_iter : int, default=100
        Maximum number of iterations.
    tol : float, default=1e-6
        Convergence tolerance.
    random_state : int, Generator or None, default=None
        Seed or generator for everything random (the restarts after the
        first, which is w = 1, the Nyström landmarks and, in the ``*CV``
        estimators, the folds and the CV subsample); an int makes the
        result reproducible.  ``None``, scikit-learn's default, draws fresh
        ones each fit (:func:`numkfs.select` passes 0); with the default
        ``n_restarts=1`` and the exact kernel a single fit draws nothing.
    verbose : bool, default=False
        Show a progress bar.
    n_jobs : int, optional
        joblib workers over the random starts (the result does not depend on it).
    approximation : {"auto", "exact", "nystroem"}, default="auto"
        The n x n weighted kernel, or the weighted kernel through
        ``n_components`` landmark rows with the weights inside it (O(n m)
        memory; :func:`numkfs.methods.knife.knife`); ``"auto"``: exact up to
        :data:`~numkfs.methods.knife.AUTO_EXACT_MAX_SAMPLES` (800)
        rows for the squared loss and
        :data:`~numkfs.methods.knife.AUTO_EXACT_MAX_SAMPLES_CLASSIFICATION`
        (2,000) for the classification losses, and up to
        :data:`~numkfs.methods.knife.AUTO_EXACT_MAX_SAMPLES_WIDE` (2,000) with more features than
        landmarks; the Nyström form above, so that no default fit factorises an
        n x n kernel on thousands of rows, whose factorisations would take
        most of the fit's time; ``"exact"`` keeps it at every size).
    n_components : int, optional
        Number of Nyström landmarks (at most the number of rows; of a CV
        fold's training rows in the CV estimators); default
        :func:`~numkfs.methods.knife.default_n_components`: one per 40 rows,
        at least 100 and one per feature (all rows when fewer), at most 500.

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
    restart_objectives_ : ndarray (n_restarts,)
        Final objective from every start (the first from w = 1, the others
        random); the lowest one is the fit.
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
                              "lambda2": KNIFE_CONSTRAINTS["lambda2"], "n_jobs": N_JOBS}

    def __init__(self, kernel="rbf", *, loss="squared", lambda1=1.0, lambda2=1.0, gamma=None, degree=2,
                 coef0=1.0, n_restarts=1, solver="auto", max_iter=100, tol=1e-6, random_state=None,
                 verbose=False, n_jobs=None, approximation="auto", n_components=None):
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
        self.restart_objectives_ = np.asarray(res.restart_objectives)
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


def ovr_targets(y, classes):
    """±1 targets: one problem for two classes (+1 = ``classes[1]``), else one per class (one-vs-rest)."""
    if len(classes) == 2:
        return [np.where(y == classes[1], 1.0, -1.0)]
    return [np.where(y == c, 1.0, -1.0) for c in classes]


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
    restart_objectives_ : ndarray (n_problems, n_restarts)
        Final objective from every start of every problem (the first from
        w = 1, the others random).
    n_iter_ : int
        Largest number of iterations over the problems.

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.
    """

    _classifier = True
    _parameter_constraints = {**_COMMON, "loss": [Options(CLASSIFICATION_LOSSES)], "n_jobs": N_JOBS,
                              "lambda2": KNIFE_CONSTRAINTS["lambda2"], "delta": KNIFE_CONSTRAINTS["delta"]}

    def __init__(self, kernel="rbf", *, loss="squared_hinge", lambda1=1.0, lambda2=1.0, gamma=None, degree=2,
                 coef0=1.0, delta=1.0, n_restarts=1, solver="auto", max_iter=100, tol=1e-6,
                 random_state=None, verbose=False, n_jobs=None, approximation="auto", n_components=None):
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
        check_class_labels(y, type(self).__name__)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes in y; found 1: "
                             f"[{self.classes_[0]!r}].")
        return ovr_targets(y, self.classes_)

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
        self.restart_objectives_ = np.array([r.restart_objectives for r in results])
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

