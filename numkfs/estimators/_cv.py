"""The one ``fit`` of every numkfs ``*CV`` estimator.

As scikit-learn's ``LinearModelCV`` does for its linear models, one base
class cross-validates every method's path: the estimator declares its
method's path function as ``path = staticmethod(...)`` and the name of that
function's grid parameter, and :meth:`PathCVMixin.fit`

1. validates the input (:meth:`PathCVMixin._cv_data`),
2. computes the path on all the rows with ``self.path`` (its grid is the
   default grid, refined where the support jumps, or the user's),
3. recomputes ``self.path`` on the training rows of every fold at that
   grid and scores the held-out rows
   (:func:`numkfs.model_selection.cross_val_path`, one score per point;
   the folds are :meth:`PathCVMixin._cv_folds`, e.g. walked in stages
   while the full-data path is traced),
4. lets the method refine the path once, from those scores
   (:meth:`PathCVMixin._cv_refine`, e.g. a second pass over a part of the
   grid; default: none),
5. applies the selection contract's rule once, to the final scores
   (:func:`numkfs.model_selection.record_cv`), and keeps the full-data
   path's chosen point (:meth:`PathCVMixin._cv_store`).

A method with a second hyperparameter cross-validated jointly with the path
(L1KR's ridge λ) lists its values in :meth:`PathCVMixin._cv_outer` and
chooses among the paths in :meth:`PathCVMixin._cv_choose`; one path is
traced and cross-validated for each value.

What differs between methods is data, not control flow: how the rows are
prepared (standardised, centred, encoded), how a fold's path predicts the
held-out rows, and which attributes the chosen point sets.
"""
from __future__ import annotations

import contextlib
from types import SimpleNamespace

import numpy as np

from .._cv_mean import cv_mean_se
from ..model_selection import check_grid_edge, cross_val_path, path_scores, record_cv

__all__ = ["PathCVMixin", "PathFold", "stop_early"]

#: Early stopping of a path's CV (:func:`stop_early`): it stops once the mean
#: CV score over the last ``EARLY_STOP_POINTS`` grid points (all beyond the
#: best point, and reaching at least ``EARLY_STOP_EXTENT`` times its grid
#: value) is below the best mean score by more than ``EARLY_STOP_SE``
#: standard errors of the best point's fold scores.
EARLY_STOP_POINTS, EARLY_STOP_EXTENT, EARLY_STOP_SE = 5, 3.0, 3.0


class PathFold:
    """One CV fold of a ``*CV`` estimator: ``fold(train, test) -> scores``
    (one per grid point, higher is better).  Picklable, so joblib's process
    backends and Dask can run it."""

    def __init__(self, estimator, data, grid, outer=None):
        self.estimator, self.data, self.grid, self.outer = estimator, data, grid, outer

    def __call__(self, train, test):
        return self.estimator._cv_fold_scores(self.data, train, test, self.grid, self.outer)


class PathCVMixin:
    """Cross-validation of a method's path: the ``fit`` of every ``*CV`` estimator.

    Subclasses set

    * ``path``: the method's path function, as a ``staticmethod``;
    * ``_cv_grid_param``: the name of its grid parameter (``"grid"`` in every method);
    * ``_cv_method``: the method's name for messages;

    and implement :meth:`_cv_data`, :meth:`_cv_path_params`,
    :meth:`_cv_predict` (or :meth:`_cv_fold_scores`) and :meth:`_cv_store`.
    What a method adds to the loop (its folds, a refinement of the first
    pass, a second hyperparameter...) it declares in the hooks with
    defaults; the loop itself (:meth:`fit`, :meth:`_cv_one_path`,
    :meth:`_cv_pass`, :meth:`_cv_scores`) is not overridden.
    """

    path = None
    _cv_grid_param = ""
    _cv_method = ""
    #: joblib's soft hint for the fold workers ("threads" when the folds release the GIL)
    _cv_prefer = None
    #: the fewest training rows the method can fit
    _cv_min_train = 2

    # -- the one fit ---------------------------------------------------
    def fit(self, X, y):
        """Compute the path, cross-validate it and keep the chosen point.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.
        y : array-like of shape (n_samples,)
            Target values: the response, or the class labels of a classifier.

        Returns
        -------
        self
            The fitted estimator.
        """
        with self._cv_fit_context():
            self._validate_params()
            data = self._cv_data(X, y)
            values = list(self._cv_outer(data))
            paths = [self._cv_one_path(data, v) for v in values]
            while True:
                k, i = self._cv_choose(paths, values)
                more = self._cv_extend(paths, values, k)
                if more is None:
                    break
                values.append(more)
                paths.append(self._cv_one_path(data, more))
            self._cv_store(data, paths, values, k, i)
        return self

    def _cv_one_path(self, data, outer):
        """The full-data path at one outer value and its CV scores
        (:meth:`_cv_pass`), refined once (:meth:`_cv_refine`); the rule then
        chooses its point, once, on the final scores (:func:`record_cv`)."""
        path, scores, sizes = self._cv_pass(data, outer)
        refined = self._cv_refine(data, outer, path, scores, sizes)
        if refined is not None:
            path, scores, sizes = refined
        record_cv(path, scores, rule=self.cv_rule, score_name=data.scoring, fold_sizes=sizes)
        return path

    def _cv_pass(self, data, outer, **full):
        """One pass: the path on all the rows (:meth:`_cv_full_path` with
        ``full``) and its held-out scores (:meth:`_cv_scores`), as
        ``(path, scores, fold_sizes)``; no point chosen."""
        path = self._cv_full_path(data, outer, **full)
        return (path, *self._cv_scores(data, outer, path.grid))

    def _cv_scores(self, data, outer, grid):
        """``(scores, fold_sizes)``: the folds (:meth:`_cv_folds`) scored at
        ``grid`` (:func:`numkfs.model_selection.cross_val_path`)."""
        with self._cv_threads(data):
            return cross_val_path(self._cv_folds(data, outer, grid), data.X_split, data.y_split, self.cv,
                                  classifier=data.stratify, n_jobs=self.n_jobs,
                                  random_state=getattr(self, "random_state", None), prefer=self._cv_prefer,
                                  method=self._cv_method, min_train=self._cv_min_train)

    # -- hooks with defaults ---------------------------------------------
    def _cv_fit_context(self):
        """Context around the whole fit (e.g. a warning filter; default: none)."""
        return contextlib.nullcontext()

    def _cv_outer(self, data):
        """Values of a second hyperparameter, one path each (default: one path)."""
        return [None]

    def _cv_choose(self, paths, values):
        """(which path, which point): the contract's rule on the only path."""
        return 0, int(paths[0].chosen_index)

    def _cv_extend(self, paths, values, k):
        """A further outer value to try after choosing path ``k``, or None."""
        return None

    def _cv_full_path(self, data, outer):
        """The path on all the rows (default: ``self.path`` with the full-data
        parameters; e.g. several one-vs-rest paths combined into one)."""
        return self.path(data.X, data.y, **self._cv_path_params(data, outer, full=True))

    def _cv_folds(self, data, outer, grid):
        """The folds of one pass: ``folds(train, test) -> scores`` at ``grid``
        (default: :class:`PathFold`, each fold's path computed at ``grid``;
        e.g. folds walked in stages, which keep what they walked)."""
        return PathFold(self, data, grid, outer)

    def _cv_refine(self, data, outer, path, scores, fold_sizes):
        """A refined pass, from the first one's scores: ``(path, scores,
        fold_sizes)`` in place of the first pass's, or None (default: none).
        The rule chooses on what this returns, once."""
        return None

    def _cv_threads(self, data):
        """Context for the folds (e.g. a Numba thread limit)."""
        return contextlib.nullcontext()

    def _cv_fold_scores(self, data, train, test, grid, outer):
        """Scores of one fold: the path on the training rows at ``grid``,
        predicted on the held-out rows (:meth:`_cv_predict`)."""
        Xtr, ytr, Xte, yte = self._cv_fold_data(data, train, test)
        params = self._cv_path_params(data, outer, full=False)
        params[self._cv_grid_param] = grid
        fp = self.path(Xtr, ytr, **params)
        decision = self._cv_predict(data, fp, Xtr, Xte, ytr)
        return path_scores(yte, decision, data.scoring, **data.score_kw)

    def _cv_fold_data(self, data, train, test):
        """``(X_train, y_train, X_test, y_test)`` of a fold (default: the rows as given)."""
        X, y = data.X_split, data.y_split
        return X[train], y[train], X[test], y[test]

    def _cv_check_edge(self, path, i):
        """Warn when a user's grid is chosen at its edge."""
        if getattr(self, self._cv_grid_param, None) is not None:
            check_grid_edge(path, i, parameter=self._cv_grid_param, stacklevel=5)

    # -- hooks every subclass implements --------------------------------
    def _cv_data(self, X, y):  # pragma: no cover - abstract
        """Validate the input; return :func:`cv_data`."""
        raise NotImplementedError

    def _cv_path_params(self, data, outer, *, full):  # pragma: no cover - abstract
        """Keyword arguments of ``self.path`` (``full``: the full-data path,
        which also takes the default grid's parameters and feature names)."""
        raise NotImplementedError

    def _cv_predict(self, data, path, X_train, X_test, y_train):  # pragma: no cover - abstract
        """Decision values of every path point on the held-out rows."""
        raise NotImplementedError

    def _cv_store(self, data, paths, values, k, i):  # pragma: no cover - abstract
        """Set the fitted attributes from point ``i`` of ``paths[k]``."""
        raise NotImplementedError


def cv_data(X, y, *, scoring, stratify=False, X_split=None, y_split=None, score_kw=None, **extra):
    """The validated data of one CV fit.

    Parameters
    ----------
    X, y : ndarray
        The full-data path's input.
    scoring : str
        The CV score's name (:data:`numkfs.model_selection.SCORINGS`).
    stratify : bool, default=False
        Stratified folds (classification).
    X_split, y_split : ndarray, optional
        The rows the folds are cut from, when they differ from ``X``/``y``
        (e.g. raw rows that each fold standardises on its training part).
    score_kw : dict, optional
        Extra arguments of :func:`numkfs.model_selection.path_scores`.
    **extra
        Anything the estimator's hooks need (class labels, means...).

    Returns
    -------
    types.SimpleNamespace
    """
    return SimpleNamespace(X=X, y=y, scoring=scoring, stratify=bool(stratify),
                           X_split=X if X_split is None else X_split, y_split=y if y_split is None else y_split,
                           score_kw=dict(score_kw or {}), **extra)


def as_grid(values) -> np.ndarray:
    """A user's grid as a flat float array."""
    return np.asarray(values, dtype=float).ravel()


def stop_early(grid, scores, fold_sizes=None) -> bool:
    """Whether the CV can no longer choose a point beyond the ``grid`` values scored so far.

    True once the last :data:`EARLY_STOP_POINTS` points lie beyond the best
    one, the grid reaches :data:`EARLY_STOP_EXTENT` times the best point's
    value, and their mean score is below the best by more than
    :data:`EARLY_STOP_SE` standard errors of the best point's fold scores
    (the folds weighted by their sizes,
    :func:`numkfs.model_selection.cv_mean_se`).  L1KR's staged tracing and
    the KNIFE estimators' staged folds stop so.

    Parameters
    ----------
    grid : array of shape (n_points,)
        The grid values scored so far, increasing.
    scores : array of shape (n_points, n_folds)
        Their fold scores (higher is better).
    fold_sizes : array of shape (n_folds,), optional
        The held-out rows of each fold.

    Returns
    -------
    bool
    """
    mean, se = cv_mean_se(scores, fold_sizes)
    b = int(np.nanargmax(mean))
    if len(grid) - 1 - b < EARLY_STOP_POINTS or grid[-1] < EARLY_STOP_EXTENT * grid[b]:
        return False
    return float(np.mean(mean[-EARLY_STOP_POINTS:])) < mean[b] - EARLY_STOP_SE * float(se[b])
