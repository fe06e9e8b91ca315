r"""The kernel models on lp-KTA's learned kernel, and the selection curve.

The learned kernel :math:`\sum_i \eta_i \tilde K_i` of a point of an lp-KTA
path (:func:`numkfs.lpkta_path`) feeds a kernel model: an SVM for class
labels (scikit-learn's ``SVC``, precomputed kernel), kernel ridge regression
for a continuous target; above :data:`LOWRANK_MIN_SAMPLES` training rows the
same models on low-rank features of the kernel
(:class:`LowRankKernelModel`).  The kernel is rescaled to trace n
(:func:`svm_kernel_scale`): the paper cross-validates C, which absorbs any
scale; the rescaling makes C = 1 a sensible default along the whole path
(the trace :math:`\sum_i \eta_i` changes with p).

* :class:`~numkfs.LpKTAClassifier` fits the SVM at its chosen point;
* :class:`~numkfs.LpKTASelectorCV` and :class:`~numkfs.LpKTAClassifierCV`
  score the models on held-out rows (:func:`kernel_model_scores`) in their
  cross-validation hooks;
* :func:`lpkta_selection_path` (public as ``numkfs.lpkta_selection_path``)
  gives the held-out score against the fraction of selected features, the
  paper's Figure 1a (:class:`SelectionCurve`), cross-validated through
  :func:`numkfs.model_selection.cross_val_path`.

The methods (:mod:`numkfs.methods.lpkta`) compute paths only; these models
live here, above them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from .._registry import method_row
from .._threads import thread_policy
from .._constraints import BOOL, CV, N_JOBS, RANDOM_STATE, Interval, NoneOr, Options, Satisfies, declares
from ..kernels.alignment import combined_kernel, feature_alignments
from ..kernels.lowrank import learned_kernel_features
from ..methods.lpkta import LPKTA_CONSTRAINTS, lpkta_path
from ..paths import FeaturePath

__all__ = [
    "KERNEL_MODEL_SCORINGS",
    "LOWRANK_MIN_SAMPLES",
    "LowRankKernelModel",
    "SelectionCurve",
    "choose_points",
    "lpkta_selection_path",
    "fold_path",
    "kernel_model_scores",
    "svm_kernel_scale",
]


@dataclass
class SelectionCurve:
    """Held-out score of a kernel model on the learned kernel along an lp-KTA path.

    Returned by :func:`lpkta_selection_path`; its fields are its attributes.

    Parameters
    ----------
    p : ndarray (n_points,)
        The p values of the scored points.
    n_selected : ndarray (n_points,)
        Features selected there (mean over folds when cross-validated).
    fraction : ndarray (n_points,)
        ``n_selected`` over the number of features.
    score : ndarray (n_points,)
        Held-out (or mean CV) score, higher is better, named by ``score_name``.
    scores : ndarray (n_points, n_folds)
        One column per fold (one column for a held-out set).
    baseline : float or None
        Score of the uniform kernel combination (all features, η_i = 1/d).
    path : FeaturePath
        The path on all the training data.
    extra : dict
        Anything else.
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


#: Scores of the kernel model on the learned kernel (higher is better): lp-KTA's scorings of every task.
KERNEL_MODEL_SCORINGS = tuple(sorted({name for names in method_row("lpkta").scorings.values() for name in names}))

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


def kernel_model_scores(Xtr, ytr, Xte, yte, path, idx, kernel, gamma, C, traces=None, scoring="accuracy"):
    """Held-out scores of a kernel model on Σ η_i K̃_i at the path points ``idx``.

    ``Xtr, ytr``: the training rows; ``Xte, yte``: the held-out rows;
    ``path``: the lp-KTA path on the training rows; ``kernel``, ``gamma``:
    its base kernels; ``C``: the penalty; ``traces``: tr(H K_i H) on the
    training rows (:func:`fold_path`); ``scoring``: one of
    :data:`KERNEL_MODEL_SCORINGS`.  Returns one score per point of ``idx``.

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


def _is_test_set(value) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2


#: :func:`lpkta_selection_path`'s constraints: :func:`~numkfs.lpkta_path`'s and the scoring's own.
_SELECTION_PATH_CONSTRAINTS = {
    **{k: v for k, v in LPKTA_CONSTRAINTS.items() if k != "tol"},
    "C": [Interval(Real, 0, None, closed="neither")],
    "cv": CV,
    "test": [NoneOr, Satisfies(_is_test_set, "a pair (X_test, y_test)")],
    "n_points": [NoneOr, Interval(Integral, 1, None)],
    "spacing": [Options(("count", "p"))],
    "baseline": BOOL,
    "scoring": [Options(KERNEL_MODEL_SCORINGS)],
    "n_jobs": N_JOBS,
    "random_state": RANDOM_STATE,
}


@declares(_SELECTION_PATH_CONSTRAINTS)
@thread_policy("lpkta")
def lpkta_selection_path(
    X,
    y,
    *,
    kernel: str = "rbf",
    gamma=None,
    bregman_weight=None,
    lp_weight=None,
    bregman="euclidean",
    x0=None,
    grid=None,
    n_grid: int = 101,
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
    alignment_method: str = "auto",
    alignment_rtol: float = 1e-10,
) -> SelectionCurve:
    r"""Held-out score of a kernel model on :math:`\sum_i \eta_i(p) \tilde K_i` along the lp-KTA path.

    With ``test=(X_test, y_test)`` the path is fitted on ``X, y`` and scored
    on the test set; otherwise ``cv`` folds: on every fold the alignments and
    the path are recomputed on the training rows (so selection never sees
    the held-out rows) and the SVM (scikit-learn ``SVC``, precomputed kernel)
    is scored at the same p values.

    Parameters
    ----------
    X : array-like or scipy.sparse of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Class labels or a continuous target.
    kernel, gamma, bregman_weight, lp_weight, bregman, x0, grid, n_grid, eps, predictor
        As in :func:`numkfs.lpkta_path`.
    C : float, default=1.0
        Penalty of the kernel model (the SVM's C; ridge penalty ``1/C``).
    cv : int or splitter, default=5
        Folds (:func:`numkfs.model_selection.cross_val_path`; stratified for
        the classification scores), unless ``test`` is given.
    test : tuple (X_test, y_test), optional
        Score on this held-out set instead of cross-validating.
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
    n_jobs : int, optional
        joblib workers over the folds.
    random_state : object, optional
        Unused: an int ``cv`` gives unshuffled folds, and a splitter carries
        its own seed.
    alignment_method, alignment_rtol
        As in :func:`numkfs.lpkta_path`.

    Returns
    -------
    SelectionCurve

    Examples
    --------
    >>> from numkfs import lpkta_selection_path
    >>> from numkfs.datasets import make_madelon_like
    >>> X, y, _ = make_madelon_like(120, 12, n_redundant=3, random_state=0)
    >>> curve = lpkta_selection_path(X, y, cv=3, n_points=4)
    >>> curve.scores.shape[1], curve.score_name
    (3, 'accuracy')
    """
    from ..model_selection import cross_val_path, cv_mean_se

    kw = dict(kernel=kernel, gamma=gamma, bregman=bregman, x0=x0, n_grid=n_grid, eps=eps, predictor=predictor,
              bregman_weight=bregman_weight, lp_weight=lp_weight, grid=grid, alignment_method=alignment_method,
              alignment_rtol=alignment_rtol)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
    else:
        X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=float)
    y = np.asarray(y)
    full = lpkta_path(X, y, **kw)
    idx = choose_points(full, n_points, spacing)
    d = X.shape[1]
    uniform_eta = np.full(d, 1.0 / d)

    def scores_for(Xtr, ytr, Xte, yte):
        path, info_tr = fold_path(Xtr, ytr, kw)
        s = kernel_model_scores(Xtr, ytr, Xte, yte, path, idx, kernel, gamma, C, traces=info_tr,
                                 scoring=scoring)
        if baseline:
            u = FeaturePath([0.0], uniform_eta[None, :])
            s = np.append(s, kernel_model_scores(Xtr, ytr, Xte, yte, u, [0], kernel, gamma, C, traces=info_tr,
                                                  scoring=scoring))
        return s, path.n_selected()[idx]

    counts = []
    if test is not None:
        Xte, yte = test
        Xte = sp.csr_matrix(Xte) if sp.issparse(Xte) else np.asarray(Xte, dtype=float)
        s, c = scores_for(X, y, Xte, np.asarray(yte))
        scores, sizes = s[:, None], None
        counts.append(c)
    else:
        def fold_fn(tr, te):
            s, c = scores_for(X[tr], y[tr], X[te], y[te])
            counts.append(c)
            return s

        scores, sizes = cross_val_path(fold_fn, X, y, cv, classifier=scoring != "neg_mean_squared_error",
                                       n_jobs=n_jobs, random_state=random_state, method="lp-KTA")
    mean = cv_mean_se(scores, sizes)[0]
    base = None
    if baseline:
        base = float(mean[-1])
        scores, mean = scores[:-1], mean[:-1]
    n_sel = np.mean(counts, axis=0) if counts else full.n_selected()[idx]
    return SelectionCurve(
        p=full.grid[idx], n_selected=n_sel, fraction=n_sel / d, score=mean,
        scores=scores, baseline=base, path=full, score_name=scoring, index=np.asarray(idx),
    )


def choose_points(path, n_points, spacing="count"):
    """Indices of the path points to score.

    Parameters
    ----------
    path : FeaturePath
        The path on all the data.
    n_points : int or None
        How many points; None: every point.
    spacing : {"count", "p"}
        As in :func:`lpkta_selection_path`.

    Returns
    -------
    ndarray of int
    """
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


def fold_path(X, y, kw):
    """The path on one training set, and the traces tr(H K_i H) of the kernel models.

    Parameters
    ----------
    X, y : arrays
        The training rows.
    kw : dict
        Keyword arguments of :func:`numkfs.lpkta_path` (``kernel``, ``gamma``,
        ``alignment_method`` and ``alignment_rtol`` also give the alignments).

    Returns
    -------
    path : FeaturePath
    traces : ndarray of shape (n_features,)
    """
    a, det = feature_alignments(X, y, kernel=kw["kernel"], gamma=kw["gamma"], return_details=True,
                                method=kw["alignment_method"], rtol=kw["alignment_rtol"],
                                target=kw.get("target", "auto"))
    path = lpkta_path(X, y, alignments=a, **kw)
    return path, det.traces
