r"""scikit-learn selector for NMMKL (:mod:`numkfs.methods.nmmkl`)."""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._targets import check_class_labels, check_real
from .._constraints import Interval, NoneOr, Options
from .._validation import check_X
from ..methods.nmmkl import NMMKL_CONSTRAINTS, nmmkl
from ._base import NumkfsEstimator

__all__ = ["NMMKLSelector"]


def _check_input(est, X, y):
    """``(X, y)`` as arrays: scikit-learn's own checks first (their messages
    are part of the estimator contract), then numkfs's (which name the bad
    column); class labels only."""
    name = type(est).__name__
    if y is None:
        raise ValueError(f"{name} requires y to be passed, but the target y is None.")
    check_real(X, "X", name)
    check_real(y, "y", name)
    validate_data(est, X, reset=True, dtype=np.float64, ensure_all_finite=False)
    X_arr = check_X(X, caller=name)
    y_arr = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    if y_arr.ndim == 2 and y_arr.shape[1] == 1:
        warnings.warn(f"{name}: a column-vector y was passed when a 1-D array was expected; it is raveled.",
                      DataConversionWarning, stacklevel=3)
        y_arr = y_arr.ravel()
    check_class_labels(y_arr, name)
    check_classification_targets(y_arr)
    return X_arr, y_arr


class _NMMKLSupport(SelectorMixin):
    """What both NMMKL selectors share: the support is ``support_``; dense
    input, a target required."""

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.target_tags.required = True
        return tags


class NMMKLSelector(_NMMKLSupport, NumkfsEstimator):
    r"""Non-monotonic selection of ``n_features_to_select`` features (NMMKL).

    Solves the QCQP of Xu et al. (2009, eq. 8)

    .. math::

        \max_{\alpha^\top y = 0,\ 0 \le \alpha \le C}\
        2\alpha^\top\mathbf 1 - \tau\alpha^\top\alpha - \operatorname{top}_m\big(\phi(\alpha)\big),
        \qquad \phi_i = (\alpha\circ y)^\top K_i(\alpha\circ y),

    and keeps the ``m`` features with the largest φ (ties broken by the
    relaxed selection p).  The selection for ``m`` need not contain the one
    for ``m - 1``.

    Parameters
    ----------
    n_features_to_select : int, default=1
        ``m``.
    kernel : {"linear", "rbf"}, default="linear"
        Per-feature kernel; ``"rbf"`` (a Gaussian kernel on each feature,
        by a low-rank factor) extends the paper to additive non-linear models.
    C : float, default=1.0
        SVM box constraint (:math:`0 \le \alpha \le C`).
    tau : float, default=0.1
        The ridge τ of the paper's SVM dual.
    gamma : float or "scale", default="scale"
        RBF bandwidth of every feature (``"scale"``: 1/var).
    rank_tol : float, default=1e-6
        Trace tolerance of the RBF factors.
    standardize : bool, default=True
        Standardise the columns of X before selecting.
    multiclass : {"vote", "sum"}, default="vote"
        How the one-vs-rest selections are merged (more than two classes).
    solver : {"auto", "native", "ECOS", "CLARABEL", "SCS"}, default="auto"
        Backend of the QCQP: ``"auto"`` is the native interior point (see
        :func:`numkfs.solvers.solve`).
    tol : float, optional
        Solver tolerance (default: the backend's).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        φ (binary) or the merged one-vs-rest score.
    p_ : ndarray
        The relaxed selection (per class for multiclass).
    support_ : ndarray of bool
    solver_result_ : SolverResult or list of SolverResult
    solver_ : str
        The backend(s) that solved the QCQP(s).
    converged_ : bool
        Whether every QCQP was solved to the backend's tolerance.
    n_features_selected_ : int
    result_ : NMMKLResult
    classes_ : ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names.

    References
    ----------
    Z. Xu, R. Jin, J. Ye, M. R. Lyu and I. King, "Non-monotonic feature
    selection", ICML 2009.

    Examples
    --------
    >>> from numkfs.datasets import make_nmmkl_toy
    >>> X, y, _ = make_nmmkl_toy(n_samples=300, random_state=0)
    >>> NMMKLSelector(n_features_to_select=2).fit(X, y).get_support().tolist()
    [True, True, False]
    """

    _parameter_constraints = {
        "n_features_to_select": [Interval(numbers.Integral, 1, None)],
        "C": NMMKL_CONSTRAINTS["C"],
        "tau": NMMKL_CONSTRAINTS["tau"],
        "kernel": NMMKL_CONSTRAINTS["kernel"],
        "gamma": NMMKL_CONSTRAINTS["gamma"],
        "rank_tol": NMMKL_CONSTRAINTS["rank_tol"],
        "standardize": NMMKL_CONSTRAINTS["standardize"],
        "multiclass": NMMKL_CONSTRAINTS["multiclass"],
        "solver": [Options(("auto", "native", "ECOS", "CLARABEL", "SCS"))],
        "tol": [Interval(numbers.Real, 0, None, closed="neither"), NoneOr],
    }

    def __init__(self, n_features_to_select=1, *, kernel="linear", C=1.0, tau=0.1, gamma="scale",
                 rank_tol=1e-6, standardize=True, multiclass="vote", solver="auto", tol=None):
        self.n_features_to_select = n_features_to_select
        self.kernel = kernel
        self.C = C
        self.tau = tau
        self.gamma = gamma
        self.rank_tol = rank_tol
        self.standardize = standardize
        self.multiclass = multiclass
        self.solver = solver
        self.tol = tol

    def fit(self, X, y):
        """Solve the QCQP on (X, y) and select the features."""
        self._validate_params()
        name = type(self).__name__
        X_arr, y_arr = _check_input(self, X, y)
        d = X_arr.shape[1]
        if self.n_features_to_select > d:
            raise ValueError(f"{name}: n_features_to_select={self.n_features_to_select} exceeds the "
                             f"{d} features of X.")
        res = nmmkl(X_arr, y_arr, int(self.n_features_to_select), kernel=self.kernel, C=self.C, tau=self.tau,
                    gamma=self.gamma, rank_tol=self.rank_tol, standardize=self.standardize,
                    solver=self.solver, tol=self.tol, multiclass=self.multiclass)
        self.result_ = res
        self.scores_ = res.scores
        self.p_ = res.p
        self.support_ = res.support
        self.solver_result_ = res.solver_result
        self.classes_ = res.classes
        results = res.solver_result if isinstance(res.solver_result, list) else [res.solver_result]
        self.solver_ = ", ".join(sorted({str(r.solver) for r in results}))
        self.converged_ = bool(all(str(r.status) == "optimal" for r in results))
        self.n_features_selected_ = int(np.sum(self.support_))
        return self


def select_readout(estimator, X, selected):
    """What :func:`numkfs.select` reports of a fitted NMMKL estimator (its
    row's ``select_readout``): its weights along the path in m are 0/1
    selections, so its scores φ, which rank the features, are the weights
    (and ``extra["scores"]``)."""
    return np.asarray(estimator.scores_, dtype=float), selected, {"scores": estimator.scores_}


def linear_svm_cv_score(X, y, mask, cv, random_state, scoring):
    """K-fold score of a linear SVM on the selected columns, standardised
    inside each fold (:func:`numkfs.model_selection.fold_data`), on the folds
    of :func:`numkfs.model_selection.cross_val_path` (one score per fold):
    how :func:`numkfs.select` scores NMMKL's top-m selection, by the model of
    its paper (NaN for an empty selection)."""
    from .._cv_scoring import linear_svm_scores
    from ..model_selection import cross_val_path, cv_mean_se

    if not mask.any():
        return float("nan")

    def fold(tr, te):
        return linear_svm_scores(X, y, tr, te, [mask], scoring)

    scores, sizes = cross_val_path(fold, X[:, mask], y, cv, classifier=True, random_state=random_state,
                                   method="the linear SVM that scores NMMKL")
    return float(cv_mean_se(scores, sizes)[0][0])
