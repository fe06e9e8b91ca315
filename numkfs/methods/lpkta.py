r"""Generalized lp-KTA: the p-norm feature selection path (Jawanpuria, Varma & Nath).

One base kernel per feature, centred and trace-normalised, with alignments
:math:`a_i = y^\top \tilde K_i y` (:func:`numkfs.kernels.alignment.feature_alignments`).
The kernel weights solve, for :math:`1 \le p \le 2`,

.. math::

    \min_{\eta \ge 0}\ \lambda_1 \sum_i B_F(\eta_i) + \lambda_2 \sum_i \eta_i^p
    - \sum_i \eta_i a_i ,

which separates by feature: :math:`\eta_i = 0` iff
:math:`\lambda_1 (F'(0) - F'(x_0)) + \lambda_2 [p = 1] - a_i \ge 0`, otherwise
:math:`G_i(\eta_i, p) = \lambda_1 (F'(\eta_i) - F'(x_0)) + \lambda_2 p \eta_i^{p-1} - a_i = 0`.
The path in p (from ``p0 = 2`` down to ``pe = 1``, step 0.01 by default) is
followed by a predictor (warm start, first or second order) and a
safeguarded Newton corrector per feature
(:mod:`numkfs.solvers.native.lpkta_newton`), eliminating a feature for the
rest of the path once its weight falls below ``eps`` < 1/e (juncture
points; exact when ``eps = 0``).

Decisions where the user guide / the paper leave room:

* Bregman divergences: squared Euclidean :math:`B = (\eta - x_0)^2`
  (default :math:`x_0 = 0`, the paper's experiments) and generalised KL
  :math:`B = \eta \log(\eta / x_0) - \eta + x_0` (default :math:`x_0 = 1`;
  its weights are never exactly 0 since :math:`F'(0) = -\infty`, so
  selection comes from juncture elimination only, as for Euclidean with
  :math:`x_0 = 0` and :math:`p > 1`).
* Lemma 1 bound: eliminating a feature whose exact weight is
  :math:`\eta^* < \epsilon` changes its term of the objective by exactly
  :math:`\lambda_1 \eta^{*2} + \lambda_2 (p-1) \eta^{*p}` (Euclidean, any
  :math:`x_0`) or :math:`\lambda_1 \eta^* + \lambda_2 (p-1)\eta^{*p}` (KL),
  so the deviation at p is at most ``r_elim(p) * (λ1 ε² + λ2 (p-1) ε^p)``
  (KL: ``λ1 ε``) with ``r_elim(p)`` the number of features eliminated by
  then; the paper states it with r = all features. Both are reported
  (``extra["lemma1_bound"]``, ``extra["lemma1_bound_paper"]``).
* Default λ's (``None``): :math:`\lambda_1 = \lambda_2 = \max_i a_i / 2`,
  so that at p = 2 (Euclidean, x0 = 0) the best feature has weight 1/2 and
  at p = 1 the features with :math:`a_i > \max a / 2` remain.
* At p = 1 exactly the problem is the (non-smooth) l1 one; its solution is
  the closed form :math:`\max(0, \cdot)` reached by the same corrector.
* The SVM on the learned kernel :math:`\sum_i \eta_i \tilde K_i` (centred
  with the training mean, also for test points) sees it rescaled to trace
  n (:func:`svm_kernel_scale`); the paper cross-validates C, which absorbs
  any scale; the rescaling makes C = 1 a sensible default along the whole
  path (the trace :math:`\sum_i \eta_i` changes with p).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._threads import thread_policy
from .._validation import ConstantFeatureWarning
from ..kernels.alignment import combined_kernel, feature_alignments, resolve_gamma
from ..kernels.lowrank import learned_kernel_features
from ..paths import FeaturePath
from ..solvers.native.lpkta_newton import (  # noqa: F401  (re-exported: the solver owns them)
    BREGMAN_DIVERGENCES,
    Bregman,
    GeneralizedKL,
    SquaredEuclidean,
    _bregman,
    _check_alignments,
    _check_grid,
    lpkta_weights,
)

__all__ = [
    "Bregman",
    "SquaredEuclidean",
    "GeneralizedKL",
    "BREGMAN_DIVERGENCES",
    "lpkta_path",
    "lpkta_weights",
    "lpkta_objective",
    "feature_selection_path",
    "SelectionCurve",
    "default_p_grid",
    "svm_kernel_scale",
]


# ----------------------------------------------------------------------------
# the path


def default_p_grid(p0: float = 2.0, pe: float = 1.0, step: float = 0.01) -> np.ndarray:
    """``p0, p0 - step, ..., pe`` (``pe`` included)."""
    n = int(round((p0 - pe) / step))
    return np.linspace(p0, pe, n + 1)




def lpkta_objective(eta, a, p, lambda1, lambda2, bregman="euclidean", x0=None):
    r"""Objective :math:`\lambda_1 \sum B_F(\eta_i) + \lambda_2 \sum \eta_i^p - \sum \eta_i a_i`."""
    br = _bregman(bregman, x0)
    eta = np.asarray(eta, dtype=float)
    return float(lambda1 * br.value(eta).sum() + lambda2 * np.sum(eta**p) - eta @ np.asarray(a, float))


def _default_lambda(a):
    m = float(np.max(a)) if a.size else 0.0
    return m / 2.0 if m > 0 else 1.0


@thread_policy("lpkta")
def lpkta_path(
    X,
    y,
    kernel: str = "rbf",
    gamma=None,
    lambda1: float | None = None,
    lambda2: float | None = None,
    bregman="euclidean",
    p_grid=None,
    *,
    x0: float | None = None,
    eps: float = 1e-3,
    predictor: str = "second",
    target: str = "auto",
    tol: float = 1e-14,
    alignments=None,
    feature_names=None,
    method: str = "auto",
    rtol: float = 1e-10,
) -> FeaturePath:
    r"""Generalized lp-KTA feature selection path over p.

    .. math::

        \eta(p) = \arg\min_{\eta \ge 0}\ \lambda_1 \sum_i B_F(\eta_i)
        + \lambda_2 \sum_i \eta_i^p - \sum_i \eta_i\, y^\top \tilde K_i y

    Parameters
    ----------
    X : array-like or scipy.sparse of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Labels (binary: the paper; multiclass and regression: see
        :mod:`numkfs.kernels.alignment`).
    kernel : {"rbf", "linear"}
        Per-feature base kernel.
    gamma : None, float or array
        RBF bandwidths (default :math:`1/\operatorname{var}(x_i)`).
    lambda1, lambda2 : float, optional
        Default :math:`\max_i a_i / 2` each.
    bregman : {"euclidean", "kl"} or Bregman
    p_grid : array, optional
        Strictly decreasing values in [1, ∞); default 2, 1.99, ..., 1.
    x0 : float, optional
        Centre of the Bregman divergence (0 Euclidean, 1 KL).
    eps : float in [0, 1/e)
        Juncture elimination threshold; 0 follows the exact path.
    predictor : {"warm", "first", "second"}
        Predictor order (the paper's experiments: first). All give the same
        path (the corrector converges to ``tol``); the second-order one
        needs the fewest Newton steps (2 per point and feature).
    target : {"auto", "binary", "multiclass", "regression"}
    tol : float
        Newton stops when :math:`|G_i| \le` tol · (:math:`|a_i| + \lambda_1 + \lambda_2`).
    alignments : array, optional
        Precomputed alignments (skips the kernel pass).
    feature_names : sequence of str, optional
        Names of the features, stored on the result.
    method : {"auto", "exact", "fgt"}
        Alignments by the exact pair loop or the fast Gauss transform
        (O(n) per feature, relative error at most ``rtol``), see
        :func:`~numkfs.kernels.alignment.feature_alignments`.
    rtol : float
        Tolerance of the fast Gauss transform.

    Returns
    -------
    FeaturePath
        ``grid`` = p, ``weights`` = η, ``objective`` per p; ``extra`` holds
        ``alignments``, ``lemma1_bound``, ``juncture_p``, timings and
        Newton statistics.

    References
    ----------
    P. Jawanpuria, M. Varma and J. S. Nath, "On p-norm path following in
    multiple kernel learning for non-linear feature selection", ICML 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.methods.lpkta import lpkta_path
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 6)); y = np.sign(X[:, 0] ** 2 - 0.5)
    >>> path = lpkta_path(X, y)
    >>> path.grid[[0, -1]].tolist(), int(path.selected(len(path) - 1).argmax())
    ([2.0, 1.0], 0)
    """
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    t0 = time.perf_counter()
    if sp.issparse(X):
        X = sp.csc_matrix(X)
    else:
        X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X)
    gam = None
    if alignments is None:
        a, det = feature_alignments(X, y, kernel=kernel, gamma=gamma, target=target, return_details=True,
                                    method=method, rtol=rtol)
        gam = det.gamma
        if det.constant.any():
            idx = np.flatnonzero(det.constant)
            names = ", ".join(str(feature_names[j]) if feature_names is not None else str(j) for j in idx[:10])
            more = "" if len(idx) <= 10 else f", ... ({len(idx)} in all)"
            warnings.warn(f"lpkta_path: feature(s) [{names}{more}] are constant; they get weight 0.",
                          ConstantFeatureWarning, stacklevel=2)
    else:
        a = np.asarray(alignments, dtype=float).ravel()
        if a.shape[0] != X.shape[1]:
            raise ValueError(f"alignments has {a.shape[0]} entries but X has {X.shape[1]} features.")
    _check_alignments(a, "lpkta_path", feature_names)
    t1 = time.perf_counter()
    lam1 = _default_lambda(a) if lambda1 is None else lambda1
    lam2 = _default_lambda(a) if lambda2 is None else lambda2
    grid = default_p_grid() if p_grid is None else _check_grid(p_grid)
    br = _bregman(bregman, x0)
    eta, info = lpkta_weights(a, grid, lambda1=lam1, lambda2=lam2, bregman=br, eps=eps,
                              predictor=predictor, tol=tol)
    t2 = time.perf_counter()
    objective = info.pop("objective")
    extra = dict(info)
    extra.update(
        alignments=a, lambda1=float(lam1), lambda2=float(lam2), eps=float(eps), predictor=predictor,
        bregman=br.name, x0=br.x0, kernel=kernel,
        gamma=(gam if gam is not None else resolve_gamma(X, gamma)) if kernel == "rbf" else None,
        time_alignments=t1 - t0, time_path=t2 - t1,
    )
    return FeaturePath(grid, eta, grid_name="p", feature_names=feature_names, objective=objective,
                       method="lpkta", extra=extra, tol=0.0)


# ----------------------------------------------------------------------------
# accuracy against the fraction of selected features (the paper's Figure 1a)


@dataclass
class SelectionCurve:
    """Held-out score of a kernel model on the learned kernel along an lp-KTA path.

    Attributes
    ----------
    p : ndarray (n_points,)
    n_selected : ndarray (n_points,)
        Mean over folds when cross-validated.
    fraction : ndarray (n_points,)
    score : ndarray (n_points,)
        Held-out (or mean CV) score, higher is better, named by ``score_name``.
    scores : ndarray (n_points, n_folds)
    baseline : float or None
        Score of the uniform kernel combination (all features, η_i = 1/d).
    path : FeaturePath
        The path on all the training data.
    score_name : str
        ``"accuracy"``, ``"neg_hinge_loss"`` or ``"neg_mean_squared_error"``.
    index : ndarray of int (n_points,)
        The indices of the scored points on ``path``.
    """

    p: np.ndarray
    n_selected: np.ndarray
    fraction: np.ndarray
    score: np.ndarray
    scores: np.ndarray
    baseline: float | None = None
    path: FeaturePath | None = None
    extra: dict = field(default_factory=dict)
    score_name: str = "accuracy"
    index: np.ndarray | None = None

    @property
    def accuracy(self) -> np.ndarray:
        """The mean score when it is an accuracy (``score_name == "accuracy"``)."""
        if self.score_name != "accuracy":
            raise AttributeError(f"this curve holds {self.score_name!r}, not accuracy; read .score.")
        return self.score

    @property
    def best_index(self) -> int:
        """Index (into the curve's points) of the best mean score."""
        return int(np.nanargmax(self.score))

    def plot(self, ax=None, *, label="Gen lp-KTA"):
        """Score against the fraction of selected features
        (:func:`numkfs.plotting.plot_accuracy_vs_fraction`)."""
        from ..plotting import plot_accuracy_vs_fraction

        ax = plot_accuracy_vs_fraction(self.fraction, self.score, ax=ax, label=label, baseline=self.baseline)
        if self.score_name != "accuracy":
            ax.set_ylabel(self.score_name.replace("_", " "))
        return ax


def svm_kernel_scale(K) -> float:
    r"""Factor :math:`n / \operatorname{tr} K` applied to the learned kernel before the SVM.

    :math:`\sum_i \eta_i \tilde K_i` has trace :math:`\sum_i \eta_i` (each
    :math:`\tilde K_i` has trace 1), so its entries are O(1/n) and vary along
    the path.  Rescaling it to trace n (mean diagonal 1, like an RBF kernel)
    gives the SVM penalty C its usual meaning; it is the same as using
    :math:`C' = C\, n / \operatorname{tr} K` on the unscaled kernel."""
    return _trace_n_scale(K.shape[0], float(np.trace(K)))


def _trace_n_scale(n: int, trace: float) -> float:
    """``n / trace`` (1 for a zero kernel): the factor that gives a kernel trace n."""
    return n / trace if trace > 0 else 1.0


#: Scores of the kernel model on the learned kernel (higher is better).
KERNEL_MODEL_SCORINGS = ("accuracy", "neg_hinge_loss", "neg_mean_squared_error")

#: Above this many training rows the kernel model (CV scoring and
#: :class:`~numkfs.estimators.LpKTAClassifier`) runs on low-rank features of
#: the learned kernel (:func:`numkfs.kernels.lowrank.learned_kernel_features`,
#: O(n R) memory; a linear SVM or ridge regression on them) instead of the
#: n x n matrix (O(n²) memory, an SVC whose fit grows faster than n²).
#: Measured in ``benchmarks/lpkta_scoring.py``: the low-rank form is the cheaper
#: from 300 rows on; the exact SVC (the paper's model) is kept where its n x n
#: kernel takes at most 32 MB.
LOWRANK_MIN_SAMPLES = 2000


class LowRankKernelModel:
    r"""A kernel model on :math:`\Phi\Phi^\top \approx \sum_i \eta_i \tilde K_i`
    (:func:`numkfs.kernels.lowrank.learned_kernel_features`), rescaled to
    trace n like :func:`svm_kernel_scale`: ridge regression with penalty
    ``1/C`` on the centred target (the kernel ridge regression of the exact
    model, by the push-through identity) or a linear SVM with penalty ``C``
    (squared hinge loss, one-vs-rest, by Newton's method in the primal:
    :func:`numkfs.solvers.native.linear_svm.squared_hinge_svm`, the optimum
    of scikit-learn's ``LinearSVC``; the exact model's ``SVC`` has the hinge
    loss, one-vs-one, an unpenalised intercept).

    Parameters
    ----------
    C : float
        The penalty (``1/C`` ridge, or the SVM's C).
    regression : bool
        Ridge regression (True) or the linear SVM (False).
    """

    #: The SVM's constant feature: features are O(1) (mean squared norm 1), so
    #: the intercept's weight is penalised about 1/100 as much as in SVC's unpenalised form
    INTERCEPT_SCALING = 10.0

    def __init__(self, C, regression):
        self.C, self.regression = float(C), bool(regression)

    def fit(self, Phi, y, warm_start=None):
        """Fit on the training rows' features ``Phi`` (n_samples, R) and target
        ``y``; ``warm_start``: a model fitted on features of the same shape
        (the SVM starts from its weights)."""
        self.kernel_scale = _trace_n_scale(Phi.shape[0], float(np.sum(Phi * Phi)))  # tr(ΦΦᵀ) = ‖Φ‖²
        Phi = Phi * np.sqrt(self.kernel_scale)
        if self.regression:
            self.mean = float(np.mean(y))
            R = Phi.shape[1]
            self.coef = np.linalg.solve(Phi.T @ Phi + np.eye(R) / self.C, Phi.T @ (y - self.mean))
            return self
        from ..solvers.native.linear_svm import squared_hinge_svm

        self.classes_ = np.unique(y)
        targets = self.classes_[1:] if self.classes_.size == 2 else self.classes_
        W0 = getattr(warm_start, "W", None)
        if W0 is not None and W0.shape != (targets.size, Phi.shape[1] + 1):
            W0 = None
        self.W = np.array([squared_hinge_svm(Phi, np.where(y == c, 1.0, -1.0), self.C,
                                             intercept_scaling=self.INTERCEPT_SCALING,
                                             w0=None if W0 is None else W0[q])[0]
                           for q, c in enumerate(targets)])
        return self

    def predict(self, Phi):
        """Predicted values or labels from the features of new rows."""
        if self.regression:
            return Phi * np.sqrt(self.kernel_scale) @ self.coef + self.mean
        d = self.decision_function(Phi)
        return self.classes_[(d > 0).astype(int)] if d.ndim == 1 else self.classes_[np.argmax(d, axis=1)]

    def decision_function(self, Phi):
        """The SVM's decision values from the features of new rows: shape
        (n,) for two classes (positive: the second class), (n, n_classes)
        one-vs-rest otherwise."""
        Phi = Phi * np.sqrt(self.kernel_scale)
        d = Phi @ self.W[:, :-1].T + self.INTERCEPT_SCALING * self.W[:, -1]
        return d[:, 0] if self.classes_.size == 2 else d


def _lowrank_point_features(Ftr, Fte, fm, eta):
    """The features of the learned kernel for weights ``eta`` from those of
    weight 1 on a superset of its features (columns scaled by √η_i)."""
    scale = np.concatenate([np.full(m.shape[0], np.sqrt(eta[j])) for j, m in zip(fm.features, fm.means)])
    keep = scale > 0
    return Ftr[:, keep] * scale[keep], Fte[:, keep] * scale[keep]


def _kernel_model_scores(Xtr, ytr, Xte, yte, path, idx, kernel, gamma, C, traces=None, scoring="accuracy"):
    """Held-out scores of a kernel model on Σ η_i K̃_i at the path points ``idx``.

    Classification (``"accuracy"``, ``"neg_hinge_loss"``): ``SVC`` with the
    precomputed kernel; the hinge loss is scikit-learn's
    (:func:`sklearn.metrics.hinge_loss`, Crammer-Singer for more than two
    classes).  Regression (``"neg_mean_squared_error"``): kernel ridge
    regression with penalty ``1/C`` on the centred target.  The kernel is
    rescaled to trace n (:func:`svm_kernel_scale`).  Above
    ``LOWRANK_MIN_SAMPLES`` training rows: :class:`LowRankKernelModel`.  With no feature
    selected the model is the constant one (majority class, zero decision
    values, the training mean)."""
    from sklearn.metrics import hinge_loss
    from sklearn.svm import SVC

    regression = scoring == "neg_mean_squared_error"
    labels = None if regression else np.unique(ytr)
    out = np.full(len(idx), np.nan)
    low_rank = Xtr.shape[0] > LOWRANK_MIN_SAMPLES
    if low_rank:
        # the factors do not depend on η: once for every feature any point uses
        used = (path.weights[np.asarray(idx, dtype=int)] > 0).any(axis=0).astype(float)
        Ftr, fm = learned_kernel_features(Xtr, used, kernel=kernel, gamma=gamma, traces=traces)
        Fte = fm.transform(Xte)
        model = None  # the previous point's: its SVM weights start the next one
    for q, k in enumerate(idx):
        eta = path.weights[k]
        if not np.any(eta > 0):
            if regression:
                out[q] = -np.mean((yte - ytr.mean()) ** 2)
            elif scoring == "accuracy":
                vals, counts = np.unique(ytr, return_counts=True)
                out[q] = np.mean(yte == vals[np.argmax(counts)])
            else:
                zero = np.zeros(len(yte)) if len(labels) == 2 else np.zeros((len(yte), len(labels)))
                out[q] = -hinge_loss(yte, zero, labels=labels)
            continue
        if low_rank:
            Ptr, Pte = _lowrank_point_features(Ftr, Fte, fm, eta)
            model = LowRankKernelModel(C, regression).fit(Ptr, ytr, warm_start=model)
            if regression:
                out[q] = -np.mean((model.predict(Pte) - yte) ** 2)
            elif scoring == "accuracy":
                out[q] = np.mean(model.predict(Pte) == yte)
            else:
                out[q] = -hinge_loss(yte, model.decision_function(Pte), labels=labels)
            continue
        Ktr, cent = combined_kernel(Xtr, eta, kernel=kernel, gamma=gamma, traces=traces,
                                    return_centering=True)
        Kte = combined_kernel(Xtr, eta, Xte, kernel=kernel, gamma=gamma, traces=traces,
                              centering=cent)
        s = svm_kernel_scale(Ktr)
        Ktr *= s
        Kte *= s
        if regression:
            m = ytr.mean()
            coef = np.linalg.solve(Ktr + np.eye(Ktr.shape[0]) / C, ytr - m)
            out[q] = -np.mean((Kte @ coef + m - yte) ** 2)
            continue
        clf = SVC(kernel="precomputed", C=C, decision_function_shape="ovr").fit(Ktr, ytr)
        if scoring == "accuracy":
            out[q] = np.mean(clf.predict(Kte) == yte)
        else:
            out[q] = -hinge_loss(yte, clf.decision_function(Kte), labels=labels)
    return out


@thread_policy("lpkta")
def feature_selection_path(
    X,
    y,
    *,
    kernel: str = "rbf",
    gamma=None,
    lambda1=None,
    lambda2=None,
    bregman="euclidean",
    x0=None,
    p_grid=None,
    eps: float = 1e-3,
    predictor: str = "second",
    C: float = 1.0,
    cv=5,
    test=None,
    n_points: int | None = 21,
    spacing: str = "count",
    baseline: bool = True,
    scoring: str = "accuracy",
    n_jobs=None,
    random_state=None,
    method: str = "auto",
    rtol: float = 1e-10,
) -> SelectionCurve:
    r"""Held-out score of a kernel model on :math:`\sum_i \eta_i(p) \tilde K_i` along the lp-KTA path.

    With ``test=(X_test, y_test)`` the path is fitted on ``X, y`` and scored
    on the test set; otherwise ``cv`` folds: on every fold the alignments and
    the path are recomputed on the training rows (so selection never sees
    the held-out rows) and the SVM (scikit-learn ``SVC``, precomputed kernel)
    is scored at the same p values.

    Parameters
    ----------
    n_points : int or None
        Number of path points scored; None: every point.
    spacing : {"count", "p"}
        ``"count"``: points chosen (on the path of all the data) so that the
        numbers of selected features are spaced evenly on a log scale from
        all to the fewest (the interesting end of the path is near p = 1);
        ``"p"``: evenly spaced in p.
    baseline : bool
        Also score the uniform combination :math:`\eta_i = 1/d` (the
        paper's "Uniform").
    scoring : {"accuracy", "neg_hinge_loss", "neg_mean_squared_error"}
        Classification: the SVM's test accuracy (the paper's figure) or its
        hinge loss on the held-out rows; regression targets:
        ``"neg_mean_squared_error"`` of kernel ridge regression (penalty
        ``1/C``) on the learned kernel.  Folds are stratified for the two
        classification scores only.
    Other parameters as in :func:`lpkta_path`.

    Returns
    -------
    SelectionCurve
    """
    from ..model_selection import cross_val_path

    if scoring not in KERNEL_MODEL_SCORINGS:
        raise ValueError(f"feature_selection_path: scoring must be one of {', '.join(KERNEL_MODEL_SCORINGS)}; "
                         f"got {scoring!r}.")
    kw = dict(kernel=kernel, gamma=gamma, lambda1=lambda1, lambda2=lambda2, bregman=bregman, x0=x0,
              p_grid=p_grid, eps=eps, predictor=predictor, method=method, rtol=rtol)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    else:
        X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=float)
    y = np.asarray(y)
    full = lpkta_path(X, y, **kw)
    idx = _choose_points(full, n_points, spacing)
    d = X.shape[1]
    uniform_eta = np.full(d, 1.0 / d)

    def scores_for(Xtr, ytr, Xte, yte):
        path, info_tr = _fold_path(Xtr, ytr, kw)
        s = _kernel_model_scores(Xtr, ytr, Xte, yte, path, idx, kernel, gamma, C, traces=info_tr,
                                 scoring=scoring)
        if baseline:
            u = FeaturePath([0.0], uniform_eta[None, :])
            s = np.append(s, _kernel_model_scores(Xtr, ytr, Xte, yte, u, [0], kernel, gamma, C, traces=info_tr,
                                                  scoring=scoring))
        return s, path.n_selected()[idx]

    counts = []
    if test is not None:
        Xte, yte = test
        Xte = sp.csr_matrix(Xte) if sp.issparse(Xte) else np.asarray(Xte, dtype=float)
        s, c = scores_for(X, y, Xte, np.asarray(yte))
        scores = s[:, None]
        counts.append(c)
    else:
        def fold_fn(tr, te):
            s, c = scores_for(X[tr], y[tr], X[te], y[te])
            counts.append(c)
            return s

        scores = cross_val_path(fold_fn, X, y, cv, classifier=scoring != "neg_mean_squared_error",
                                n_jobs=n_jobs, random_state=random_state, method="lp-KTA")
    base = None
    if baseline:
        base = float(np.mean(scores[-1]))
        scores = scores[:-1]
    n_sel = np.mean(counts, axis=0) if counts else full.n_selected()[idx]
    return SelectionCurve(
        p=full.grid[idx], n_selected=n_sel, fraction=n_sel / d, score=np.nanmean(scores, axis=1),
        scores=scores, baseline=base, path=full, score_name=scoring, index=np.asarray(idx),
    )


def _choose_points(path, n_points, spacing="count"):
    """Indices of the path points to score."""
    P = len(path)
    if n_points is None or n_points >= P:
        return np.arange(P)
    if spacing == "p":
        return np.unique(np.round(np.linspace(0, P - 1, n_points)).astype(int))
    if spacing != "count":
        raise ValueError(f"spacing must be 'count' or 'p'; got {spacing!r}.")
    ns = path.n_selected()
    hi, lo = max(int(ns[0]), 1), max(int(ns[-1]), 1)
    targets = np.unique(np.round(np.geomspace(hi, lo, n_points)))[::-1]
    # first point (largest p) with at most `target` features; counts are non-increasing
    idx = np.searchsorted(-ns, -targets, side="left")
    idx = np.unique(np.clip(np.concatenate([[0], idx, [P - 1]]), 0, P - 1))
    _, first = np.unique(ns[idx], return_index=True)  # one point per distinct count
    return np.sort(idx[first])


def _fold_path(X, y, kw):
    """Path on one training set; also the traces tr(H K_i H) for the SVM kernel."""
    a, det = feature_alignments(X, y, kernel=kw["kernel"], gamma=kw["gamma"], return_details=True,
                                method=kw["method"], rtol=kw["rtol"])
    path = lpkta_path(X, y, alignments=a, **kw)
    return path, det.traces
