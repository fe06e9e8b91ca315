r"""scikit-learn estimators for KNIFE (:mod:`numkfs.methods.knife`).

* :class:`KNIFERegressor`, :class:`KNIFEClassifier`: one fit at
  :math:`(\lambda_1, \lambda_2)`;
* :class:`KNIFERegressorCV`, :class:`KNIFEClassifierCV`: the λ2 path
  (paper Algorithm 2) with λ2 chosen by K-fold cross-validation
  (:func:`numkfs.model_selection.cross_val_path`), scores per fold kept in
  ``path_.cv_scores``; the model returned is the full-data path's point at
  the chosen λ2.

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

from .._validation import Interval, NoneOr, Options, check_X, check_y, constant_columns
from ..methods.knife import (CLASSIFICATION_LOSSES, KNIFE_CONSTRAINTS, REGRESSION_LOSSES, knife,
                             knife_lambda2_max, knife_path, path_decision_function)
from ..model_selection import cross_val_path
from ._base import NumkfsEstimator, Standardizer, WeightSelectorMixin

__all__ = ["KNIFERegressor", "KNIFEClassifier", "KNIFERegressorCV", "KNIFEClassifierCV"]


_COMMON = {k: KNIFE_CONSTRAINTS[k] for k in
           ("kernel", "lambda1", "gamma", "degree", "coef0", "n_restarts", "max_iter", "tol")}
_COMMON["solver"] = [Options(("auto", "native", "ECOS", "SCS", "CLARABEL"))]
_COMMON["verbose"] = [Options((True, False))]
_N_JOBS = [NoneOr, Interval(numbers.Integral, None, None)]


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
        return Xs, y_arr

    def _check_predict_input(self, X):
        check_is_fitted(self, "feature_weights_")
        name = type(self).__name__
        self._precheck(X)
        X_arr = check_X(X, caller=name, min_samples=1)
        validate_data(self, X, skip_check_array=True, reset=False)
        return self.scaler_.transform(X_arr)

    def _kernel_params(self):
        return dict(kernel=self.kernel, lambda1=self.lambda1, gamma=self.gamma, degree=self.degree,
                    coef0=self.coef0, solver=self.solver, max_iter=self.max_iter, tol=self.tol)


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
    loss : {"squared"}, default="squared"
    lambda1 : float, default=1.0
    lambda2 : float, default=1.0
    gamma : float, optional
        RBF scale (default 1/p).
    degree : int, default=2
    coef0 : float, default=1.0
    n_restarts : int, default=1
        Random starts (best objective wins).
    solver : {"auto", "native", "ECOS", "SCS", "CLARABEL"}, default="auto"
        Weight-step solver.
    max_iter : int, default=100
    tol : float, default=1e-6
    random_state : int, Generator or None
    verbose : bool, default=False
    n_jobs : int, optional
        joblib workers over the random starts (the result does not depend on it).

    Attributes
    ----------
    feature_weights_ : ndarray (n_features,)
    alpha_ : ndarray (n_samples,)
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

    Examples
    --------
    >>> from numkfs.datasets._knife import make_sinusoid
    >>> from numkfs.estimators._knife import KNIFERegressor
    >>> X, y, support = make_sinusoid(n_samples=80, random_state=0)
    >>> est = KNIFERegressor(lambda2=30.0, random_state=0).fit(X, y)
    >>> est.get_support().shape
    (10,)
    """

    _parameter_constraints = {**_COMMON, "loss": [Options(REGRESSION_LOSSES)],
                              "lambda2": KNIFE_CONSTRAINTS["lambda2"], "n_jobs": _N_JOBS}

    def __init__(self, kernel="rbf", loss="squared", lambda1=1.0, lambda2=1.0, gamma=None, degree=2,
                 coef0=1.0, n_restarts=1, solver="auto", max_iter=100, tol=1e-6, random_state=None,
                 verbose=False, n_jobs=None):
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

    def fit(self, X, y):
        """Fit KNIFE on (X, y); returns self."""
        self._validate_params()
        Xs, y = self._check_fit_input(X, y)
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
        from ..methods.knife import _decision

        return _decision(self.X_fit_, Xs, self.feature_weights_, self.alpha_, 0.0, self._params)

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
    loss : {"squared_hinge", "huberized_hinge", "logistic"}, default="squared_hinge"
    lambda1, lambda2, gamma, degree, coef0, n_restarts, solver, max_iter, tol, random_state, verbose, n_jobs
        As in :class:`KNIFERegressor`.
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
    """

    _classifier = True
    _parameter_constraints = {**_COMMON, "loss": [Options(CLASSIFICATION_LOSSES)], "n_jobs": _N_JOBS,
                              "lambda2": KNIFE_CONSTRAINTS["lambda2"], "delta": KNIFE_CONSTRAINTS["delta"]}

    def __init__(self, kernel="rbf", loss="squared_hinge", lambda1=1.0, lambda2=1.0, gamma=None, degree=2,
                 coef0=1.0, delta=1.0, n_restarts=1, solver="auto", max_iter=100, tol=1e-6,
                 random_state=None, verbose=False, n_jobs=None):
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

    def fit(self, X, y):
        """Fit KNIFE (one-vs-rest for more than two classes); returns self."""
        self._validate_params()
        Xs, y = self._check_fit_input(X, y)
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
        self.gamma_ = self._params["gamma"]
        self.X_fit_ = Xs

    def decision_function(self, X):
        """Decision values: (n,) for two classes (positive means ``classes_[1]``), else (n, n_classes)."""
        from ..methods.knife import _decision

        Xs = self._check_predict_input(X)
        D = np.column_stack([_decision(self.X_fit_, Xs, w, a, b, self._params)
                             for w, a, b in zip(self.class_feature_weights_, self.alpha_, self.intercept_)])
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
       "n_lambdas": KNIFE_CONSTRAINTS["n_lambdas"],
       "lambda_min_ratio": KNIFE_CONSTRAINTS["lambda_min_ratio"],
       "n_jobs": [Interval(numbers.Integral, None, None), NoneOr]}


def _best_index(scores):
    """Highest mean CV score; ties go to the larger λ2 (the sparser model)."""
    mean = np.nanmean(scores, axis=1)
    best = np.nanmax(mean)
    return int(np.flatnonzero(mean >= best - 1e-12 * max(1.0, abs(best)))[-1])


class KNIFERegressorCV(KNIFERegressor):
    r"""KNIFE regression with λ2 chosen on the feature path by K-fold CV.

    The path (paper Algorithm 2) is computed on the whole training set; its
    grid (0, then ``n_lambdas - 1`` log-spaced values up to the λ2 at
    which every weight is zero) is re-used on every fold; the score is the
    negative test mean squared error.  The fitted model is the full-data
    path's point with the best mean score (ties: the larger λ2).

    Parameters
    ----------
    kernel, loss, lambda1, gamma, degree, coef0, n_restarts, solver, max_iter, tol, random_state, verbose
        As in :class:`KNIFERegressor`.
    cv : int or splitter, default=5
    n_lambdas : int, default=100
    lambda_min_ratio : float, default=1e-3
    n_jobs : int, optional
        joblib workers over the folds.

    Attributes
    ----------
    path_ : FeaturePath
        With ``cv_scores`` of shape (n_points, n_folds).
    lambda2_ : float
    best_index_ : int
    cv_scores_ : ndarray (n_points, n_folds)
    (and the attributes of :class:`KNIFERegressor`)
    """

    _parameter_constraints = {**_COMMON, "loss": [Options(REGRESSION_LOSSES)], **_CV}

    def __init__(self, kernel="rbf", loss="squared", lambda1=1.0, gamma=None, degree=2, coef0=1.0,
                 n_restarts=1, solver="auto", max_iter=100, tol=1e-6, cv=5, n_lambdas=100,
                 lambda_min_ratio=1e-3, n_jobs=None, random_state=None, verbose=False):
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
        self.n_lambdas = n_lambdas
        self.lambda_min_ratio = lambda_min_ratio
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y):
        """Compute the path, cross-validate λ2 and keep the chosen point; returns self."""
        self._validate_params()
        Xs, y = self._check_fit_input(X, y)
        self.y_mean_ = float(y.mean())
        yc = y - self.y_mean_
        kw = self._kernel_params()
        path = knife_path(Xs, yc, loss=self.loss, n_lambdas=self.n_lambdas,
                          lambda_min_ratio=self.lambda_min_ratio, n_restarts=self.n_restarts,
                          random_state=self.random_state, verbose=self.verbose,
                          feature_names=getattr(self, "feature_names_in_", None), **kw)
        grid = path.grid

        def fold(train, test):
            # standardise within the fold from the raw data would change the grid's meaning; the
            # fold re-uses the full-data standardisation (as the paper's validation protocol does)
            m = yc[train].mean()
            fp = knife_path(Xs[train], yc[train] - m, loss=self.loss, lambda2_grid=grid,
                            n_restarts=self.n_restarts, random_state=self.random_state, **kw)
            pred = path_decision_function(fp, Xs[train], Xs[test]) + m
            return -np.mean((pred - yc[test][:, None]) ** 2, axis=0)

        scores = cross_val_path(fold, Xs, yc, self.cv, classifier=False, n_jobs=self.n_jobs,
                                random_state=self.random_state)
        path.cv_scores = scores
        self._finish(path, scores, Xs)
        return self

    def _finish(self, path, scores, Xs):
        self.path_ = path
        self.cv_scores_ = scores
        self.best_index_ = _best_index(scores)
        i = self.best_index_
        self.lambda2_ = float(path.grid[i])
        self.feature_weights_ = path.weights[i].copy()
        self.alpha_ = path.extra["alpha"][i].copy()
        self.intercept_ = self.y_mean_
        self.objective_ = float(path.objective[i])
        self.objective_history_ = path.objective.copy()
        self.n_iter_ = int(path.extra["n_iter"][i])
        self.gamma_ = path.extra["params"]["gamma"]
        self._params = path.extra["params"]
        self.X_fit_ = Xs


class KNIFEClassifierCV(KNIFEClassifier):
    r"""KNIFE classification with λ2 chosen on the feature path by K-fold CV.

    As :class:`KNIFERegressorCV`, with the score the test accuracy
    (stratified folds).  With more than two classes, every one-vs-rest
    problem walks the same grid (its top is the largest of the problems'
    tops) and the accuracy of the one-vs-rest vote is scored.

    Parameters
    ----------
    kernel, loss, lambda1, gamma, degree, coef0, delta, n_restarts, solver, max_iter, tol, random_state, verbose
        As in :class:`KNIFEClassifier`.
    cv, n_lambdas, lambda_min_ratio, n_jobs
        As in :class:`KNIFERegressorCV`.

    Attributes
    ----------
    path_ : FeaturePath
        Weights of the binary problem (for one-vs-rest: the largest weight
        of each feature over the classes), with ``cv_scores``.
    paths_ : list of FeaturePath
        One per one-vs-rest problem.
    lambda2_, best_index_, cv_scores_
        As in :class:`KNIFERegressorCV`.
    """

    _parameter_constraints = {**_COMMON, "loss": [Options(CLASSIFICATION_LOSSES)],
                              "delta": KNIFE_CONSTRAINTS["delta"], **_CV}

    def __init__(self, kernel="rbf", loss="squared_hinge", lambda1=1.0, gamma=None, degree=2, coef0=1.0,
                 delta=1.0, n_restarts=1, solver="auto", max_iter=100, tol=1e-6, cv=5, n_lambdas=100,
                 lambda_min_ratio=1e-3, n_jobs=None, random_state=None, verbose=False):
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
        self.n_lambdas = n_lambdas
        self.lambda_min_ratio = lambda_min_ratio
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _paths(self, Xs, problems, grid):
        kw = self._kernel_params()
        common = dict(loss=self.loss, delta=self.delta, n_restarts=self.n_restarts,
                      random_state=self.random_state, **kw)
        if grid is None and len(problems) == 1:
            return [knife_path(Xs, problems[0], n_lambdas=self.n_lambdas,
                               lambda_min_ratio=self.lambda_min_ratio, verbose=self.verbose,
                               feature_names=getattr(self, "feature_names_in_", None), **common)]
        if grid is None:  # one-vs-rest: a shared grid up to the largest top
            top = max(knife_lambda2_max(Xs, yk, **common) for yk in problems)
            grid = np.concatenate([[0.0], np.geomspace(self.lambda_min_ratio * top, top, self.n_lambdas - 1)])
        return [knife_path(Xs, yk, lambda2_grid=grid, **common) for yk in problems]

    def _vote(self, paths, X_train, X_test):
        D = np.stack([path_decision_function(p, X_train, X_test) for p in paths])  # (k, m, n_points)
        if len(paths) == 1:
            return self.classes_[(D[0] > 0).astype(int)]
        return self.classes_[np.argmax(D, axis=0)]

    def fit(self, X, y):
        """Compute the path(s), cross-validate λ2 and keep the chosen point; returns self."""
        self._validate_params()
        Xs, y = self._check_fit_input(X, y)
        problems = self._targets(y)
        paths = self._paths(Xs, problems, None)
        grid = paths[0].grid
        classes = self.classes_

        def fold(train, test):
            ytr = y[train]
            if len(np.unique(ytr)) < len(classes):
                return np.full(len(grid), np.nan)
            probs = [pk[train] for pk in problems]
            fps = self._paths(Xs[train], probs, grid)
            pred = self._vote(fps, Xs[train], Xs[test])
            return np.mean(pred == y[test][:, None], axis=0)

        scores = cross_val_path(fold, Xs, y, self.cv, classifier=True, n_jobs=self.n_jobs,
                                random_state=self.random_state)
        self.paths_ = paths
        W = np.max(np.stack([p.weights for p in paths]), axis=0)
        from ..paths import FeaturePath

        path = FeaturePath(grid=grid, weights=W, grid_name="lambda2", feature_names=paths[0].feature_names,
                           objective=np.sum([p.objective for p in paths], axis=0), method="KNIFE",
                           cv_scores=scores, extra=paths[0].extra if len(paths) == 1 else {})
        self.path_ = path
        self.cv_scores_ = scores
        self.best_index_ = _best_index(scores)
        i = self.best_index_
        self.lambda2_ = float(grid[i])
        self.class_feature_weights_ = np.array([p.weights[i] for p in paths])
        self.feature_weights_ = self.class_feature_weights_.max(axis=0)
        self.alpha_ = np.array([p.extra["alpha"][i] for p in paths])
        self.intercept_ = np.array([p.extra["intercept"][i] for p in paths])
        self.objective_ = np.array([p.objective[i] for p in paths])
        self.objective_history_ = paths[0].objective.copy()
        self.n_iter_ = int(max(p.extra["n_iter"][i] for p in paths))
        self._params = paths[0].extra["params"]
        self.gamma_ = self._params["gamma"]
        self.X_fit_ = Xs
        return self
