"""scikit-learn estimator for L1KR (:func:`numkfs.methods.l1kr.l1kr_path`)."""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import RegressorMixin

from .._validation import Interval, NoneOr, Options, InstanceOf
from ._base import NumkfsEstimator, WeightSelectorMixin, validate_data_named

__all__ = ["L1KRRegressor"]


class L1KRRegressor(WeightSelectorMixin, RegressorMixin, NumkfsEstimator):
    r"""ARD kernel ridge regression on the L1KR feature-selection path, with
    the path point chosen by K-fold cross-validation.

    .. math::

        \min_{\alpha, \beta \ge 0, \alpha_0} \|y - K(\beta)\alpha - \alpha_0 1\|^2
        + \lambda \alpha^\top K(\beta) \alpha
        \quad\text{s.t.}\quad \|\beta\|_1 \le D

    (``fix="lambda"``; with ``fix="C"`` the constraint ``αᵀKα ≤ C`` replaces
    the penalty, as in the paper).  The whole path in D is traced by
    homotopy (:func:`~numkfs.methods.l1kr.l1kr_path`); every CV fold traces
    its own path, scored on a common grid of D
    (:func:`~numkfs.methods.l1kr.l1kr_cv_path`; a fold's path on n_train
    rows is read at ``D · n_train / n``, the same kernel in the units of X);
    the D with the best mean score is taken on the path of all the data.

    Parameters
    ----------
    kernel : {"gaussian", "poly"}
    degree : int
        Degree of the normalised polynomial kernel.
    fix : {"lambda", "C"}
    lam : float or sequence of float
        Ridge penalty λ (for centred, unit-norm y) when ``fix="lambda"``.
        With several values, one path per λ is traced (and per fold, on the
        same folds) and CV chooses (λ, D) jointly.
    C : float
        Bound on αᵀKα (units of ``||y - ȳ||²``) when ``fix="C"``.
    eps : float
        Stop the path when the projected gradient is below ``eps``.
    D_max : float, optional
    max_steps : int
        Continuation-step budget of each path.
    cv : int or splitter
    n_grid : int
        Points of the common D grid.
    n_jobs : int, optional
        joblib workers over CV folds.
    random_state : int, optional
        Shuffling of the CV folds.

    Attributes
    ----------
    path_ : FeaturePath
        The traced path on all the training data.
    cv_path_ : FeaturePath
        The D grid with its CV scores (of the chosen λ).
    cv_paths_ : list of FeaturePath
        One per λ.
    D_ : float
        The chosen budget ||β||₁.
    feature_weights_ : ndarray (n_features,)
        β at ``D_`` (on columns centred and scaled to unit norm).
    lambda_ : float
    dual_coef_ : ndarray (n_samples,)
        α (for the standardised y).
    n_features_in_, feature_names_in_

    Examples
    --------
    >>> from numkfs.datasets._friedman import make_friedman_noise
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> est = L1KRRegressor(cv=3, n_grid=10, D_max=20.0).fit(X, y)
    >>> est.predict(X[:2]).shape
    (2,)
    """

    _method = "l1kr"

    _parameter_constraints = {
        "kernel": [Options(["gaussian", "poly"])],
        "degree": [Interval(Integral, 1, None)],
        "fix": [Options(["lambda", "C"])],
        "lam": [Interval(Real, 0, None, closed="neither"), InstanceOf((list, tuple, np.ndarray), "a sequence of floats")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "eps": [Interval(Real, 0, 1, closed="neither")],
        "D_max": [Interval(Real, 0, None, closed="neither"), NoneOr],
        "max_steps": [Interval(Integral, 1, None)],
        "cv": [Interval(Integral, 2, None), InstanceOf((object,), "a CV splitter")],
        "n_grid": [Interval(Integral, 2, None)],
        "n_jobs": [Interval(Integral, None, None), NoneOr],
        "random_state": [Interval(Integral, 0, None), NoneOr, InstanceOf((np.random.Generator,), "a Generator")],
    }

    def __init__(self, kernel="gaussian", degree=2, fix="lambda", lam=0.01, C=1.0, eps=1e-6, D_max=None,
                 max_steps=3000, cv=5, n_grid=50, n_jobs=None, random_state=None):
        self.kernel = kernel
        self.degree = degree
        self.fix = fix
        self.lam = lam
        self.C = C
        self.eps = eps
        self.D_max = D_max
        self.max_steps = max_steps
        self.cv = cv
        self.n_grid = n_grid
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y):
        """Trace the path, cross-validate D, keep the chosen point."""
        from ..methods.l1kr import l1kr_cv_path, l1kr_objective, l1kr_path_at

        self._validate_params()

        X, y = validate_data_named(self, X, y, y_numeric=True, dtype=np.float64)
        names = getattr(self, "feature_names_in_", None)
        cv = self.cv
        if isinstance(cv, (int, np.integer)):
            cv = int(max(2, min(cv, X.shape[0] // 2)))
        lams = np.atleast_1d(np.asarray(self.lam, dtype=float)) if self.fix == "lambda" else np.array([1.0])
        if lams.size == 0 or not np.all(lams > 0):
            raise ValueError(f"The 'lam' parameter of {type(self).__name__} must be positive; got {self.lam!r}.")
        seed = self.random_state
        if seed is None or isinstance(seed, np.random.Generator):
            seed = int(np.random.default_rng(seed).integers(2**31 - 1))  # the same folds for every λ
        self.cv_paths_ = []
        for lam in lams:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                self.cv_paths_.append(l1kr_cv_path(
                    X, y, self.kernel, degree=self.degree, fix=self.fix, lam=float(lam), C=self.C, eps=self.eps,
                    D_max=self.D_max, max_steps=self.max_steps, n_grid=self.n_grid, cv=cv, n_jobs=self.n_jobs,
                    random_state=seed, feature_names=None if names is None else names,
                ))
        k = int(np.argmax([np.nanmax(p.mean_cv_score) for p in self.cv_paths_]))
        self.cv_path_ = self.cv_paths_[k]
        self.path_ = self.cv_path_.extra["full_path"]
        best = self.cv_path_.best_index
        self.D_ = float(self.cv_path_.grid[best])
        betas, lams = l1kr_path_at(self.path_, [self.D_])
        self.feature_weights_ = betas[0]
        self.lambda_ = float(lams[0])
        _, _, self.dual_coef_ = l1kr_objective(self.path_, self.feature_weights_, self.lambda_)
        return self

    def predict(self, X):
        """Kernel ridge prediction at the chosen path point."""
        from sklearn.utils.validation import check_is_fitted

        from ..methods.l1kr import _predict_one


        check_is_fitted(self, "dual_coef_")
        X = validate_data_named(self, X, reset=False, dtype=np.float64)
        ex = self.path_.extra
        Z = (X - ex["x_mean"]) / ex["x_scale"]
        return _predict_one(self.path_, Z, self.feature_weights_, self.dual_coef_)
