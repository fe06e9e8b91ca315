r"""NMMKL with the number of features chosen by cross-validation.

:class:`NMMKLSelectorCV`: the NMMKL selections over a grid of ``m``
(:func:`numkfs.methods.nmmkl.nmmkl_path`, one QCQP warm-started along the
grid) through the one CV estimator base
(:class:`numkfs.estimators._cv.PathCVMixin`); each fold's selections are
scored by a linear SVM on the selected columns
(:func:`numkfs._cv_scoring.linear_svm_scores`), and ``m`` is chosen by
``cv_rule``.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._constraints import N_JOBS, RANDOM_STATE, InstanceOf, Interval, NoneOr, Options
from .._cv_scoring import linear_svm_scores
from ..methods.nmmkl import default_m_grid, nmmkl_path
from ..model_selection import CV_RULES, SCORINGS
from ._base import NumkfsEstimator
from ._cv import PathCVMixin, as_grid, cv_data
from ._nmmkl import NMMKLSelector, _check_input, _NMMKLSupport

__all__ = ["NMMKLSelectorCV"]


class NMMKLSelectorCV(PathCVMixin, _NMMKLSupport, NumkfsEstimator):
    r"""NMMKL selection with the number of features ``m`` chosen by K-fold CV.

    :class:`NMMKLSelector` keeps a number of features you give.  This
    estimator computes its selections over a grid of ``m`` on all the rows
    (:func:`numkfs.methods.nmmkl.nmmkl_path`: one QCQP, warm-started along
    the grid; the selection for one ``m`` need not contain the one for a
    smaller ``m``), recomputes them on the training rows of every fold, and
    scores each fold's selections on its held-out rows with the model NMMKL
    relaxes, a linear SVM (``LinearSVC(C=1)`` on the selected columns,
    standardised on the fold's training rows).  ``m`` is chosen by
    ``cv_rule`` (:func:`numkfs.model_selection.choose_index`; equal scores
    go to the smaller ``m``) and the selection is the full data's at that
    ``m``.

    Parameters
    ----------
    kernel, C, tau, gamma, rank_tol, standardize, multiclass, solver, tol
        As in :class:`NMMKLSelector`.
    grid : array-like of int, optional
        The values of ``m`` to try, each in [1, n_features], as in
        :func:`~numkfs.methods.nmmkl.nmmkl_path`; default: every ``m`` up to
        ``n_grid`` features, else ``n_grid`` values spaced evenly in log
        ``m`` from 1 to n_features
        (:func:`~numkfs.methods.nmmkl.default_m_grid`).
    n_grid : int, default=20
        Size of the default grid.
    cv : int or splitter, default=5
        Number of stratified folds, or a scikit-learn splitter.
    cv_rule : {"best", "1se", "1pct", "2pct"}, default="best"
        ``"best"``: the highest mean CV score; ``"1se"``: the smallest ``m``
        within one standard error of it.
        ``"1pct"``, ``"2pct"``: the sparsest point whose mean CV loss is at most 1 or 2 %
        above the best (:func:`numkfs.model_selection.choose_from_scores`).
    scoring : {"neg_hinge_loss", "accuracy"}, default="neg_hinge_loss"
        The held-out score of the linear SVM (higher is better).
    n_jobs : int, optional
        joblib workers over the folds.
    random_state : int, RandomState, Generator or None, optional
        Shuffles nothing by itself (integer ``cv`` gives unshuffled
        stratified folds); passed to a splitter that asks for it.

    Attributes
    ----------
    path_ : FeaturePath
        The selections over the grid (``grid_name="m"``, 0/1 weights), with
        ``cv_scores`` (n_points, n_folds), ``score_name``, ``cv_rule`` and
        ``chosen_index``.
    n_features_to_select_ : int
        The chosen ``m``.
    best_index_ : int
        The chosen point (``path_.chosen_index``).
    cv_scores_ : ndarray (n_points, n_folds)
    support_ : ndarray of bool (n_features,)
        The selection at the chosen ``m``.
    feature_weights_ : ndarray (n_features,)
        1 for a selected feature, 0 otherwise.
    scores_ : ndarray (n_features,)
        φ at the chosen ``m`` (binary) or the merged one-vs-rest score.
    converged_ : None
        The path does not record the QCQP solvers' status.
    n_features_selected_ : int
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
    >>> from numkfs import NMMKLSelectorCV
    >>> X, y, _ = make_nmmkl_toy(n_samples=300, random_state=0)
    >>> est = NMMKLSelectorCV(cv=3).fit(X, y)
    >>> est.path_.grid.tolist(), est.cv_scores_.shape
    ([1.0, 2.0, 3.0], (3, 3))
    """

    _parameter_constraints = {
        **{k: v for k, v in NMMKLSelector._parameter_constraints.items() if k != "n_features_to_select"},
        "grid": [InstanceOf((list, tuple, np.ndarray), "an array of numbers of features"), NoneOr],
        "n_grid": [Interval(numbers.Integral, 1, None)],
        "cv": [Interval(numbers.Integral, 2, None, closed="left"), InstanceOf((object,), "a cross-validation splitter")],
        "cv_rule": [Options(CV_RULES)],
        "scoring": [Options(SCORINGS["nmmkl"]["classification"])],
        "n_jobs": N_JOBS,
        "random_state": RANDOM_STATE,
    }

    path = staticmethod(nmmkl_path)
    _cv_grid_param = "grid"
    _cv_method = "NMMKL"

    def __init__(self, *, kernel="linear", C=1.0, tau=0.1, gamma="scale", rank_tol=1e-6, standardize=True,
                 multiclass="vote", solver="auto", tol=None, grid=None, n_grid=20, cv=5, cv_rule="best",
                 scoring="neg_hinge_loss", n_jobs=None, random_state=None):
        self.kernel = kernel
        self.C = C
        self.tau = tau
        self.gamma = gamma
        self.rank_tol = rank_tol
        self.standardize = standardize
        self.multiclass = multiclass
        self.solver = solver
        self.tol = tol
        self.grid = grid
        self.n_grid = n_grid
        self.cv = cv
        self.cv_rule = cv_rule
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.random_state = random_state

    # -- the CV hooks ----------------------------------------------------------
    def _cv_data(self, X, y):
        X, y = _check_input(self, X, y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least two classes in y; found 1: "
                             f"[{self.classes_[0]!r}].")
        d = X.shape[1]
        if self.grid is None:
            grid = default_m_grid(d, self.n_grid)
        else:
            grid = as_grid(self.grid)
            if grid.size == 0 or np.any(grid != np.round(grid)) or np.any((grid < 1) | (grid > d)):
                raise ValueError(f"{type(self).__name__}: grid must hold whole numbers of features in "
                                 f"[1, {d}]; got {self.grid!r}.")
            grid = grid.astype(int)
        return cv_data(X, y, scoring=self.scoring, stratify=True, grid=grid)

    def _cv_path_params(self, data, outer, *, full):
        params = dict(kernel=self.kernel, C=self.C, tau=self.tau, gamma=self.gamma, rank_tol=self.rank_tol,
                      standardize=self.standardize, multiclass=self.multiclass, solver=self.solver, tol=self.tol)
        if full:
            params.update(grid=data.grid, feature_names=getattr(self, "feature_names_in_", None))
        return params

    def _cv_fold_scores(self, data, train, test, grid, outer):
        """The fold's selections at every ``m`` (NaN when a class is missing
        from its training rows), each scored by the linear SVM."""
        X, y = data.X, data.y
        if len(np.unique(y[train])) < len(self.classes_):
            return np.full(len(grid), np.nan)
        params = self._cv_path_params(data, outer, full=False)
        fp = self.path(X[train], y[train], [int(m) for m in grid], **params)
        return linear_svm_scores(X, y, train, test, fp.extra["selection"], self.scoring)

    def _cv_store(self, data, paths, values, k, i):
        path = paths[k]
        self.path_ = path
        self.best_index_ = i
        self.cv_scores_ = path.cv_scores
        self.n_features_to_select_ = int(path.grid[i])
        self.support_ = np.asarray(path.extra["selection"][i], dtype=bool).copy()
        self.feature_weights_ = self.support_.astype(float)
        phi = path.extra["phi"][i] if len(self.classes_) == 2 else path.extra["p"][i]
        self.scores_ = np.asarray(phi, dtype=float).copy()
        self.converged_ = None
        self.n_features_selected_ = int(self.support_.sum())
