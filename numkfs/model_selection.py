"""The selection contract: how a path becomes a chosen point and a support.

Every cross-validating estimator and :func:`numkfs.select` go through this
module, so that every method turns its path into features the same way:

* **Folds.**  :func:`make_cv` gives stratified folds for classification,
  unshuffled for an integer ``cv`` as in scikit-learn (so a fit is
  reproducible by default; pass a shuffling splitter to shuffle);
  :func:`cross_val_path` names a fold too small for the method;
  :func:`fold_data` fits the preprocessing (:class:`numkfs._preprocessing.Standardizer`)
  on the training rows of each fold only.
* **Scores.**  One score per path point and fold, always *higher is better*,
  with its name stored on the path (:attr:`FeaturePath.score_name`):
  regression ``"neg_mean_squared_error"``; classification the method's
  default of :data:`SCORINGS` (KNIFE: ``"accuracy"``, ties to the sparser
  point, chosen by evidence; lp-KTA and NMMKL: the held-out hinge loss),
  the others on request (:func:`path_scores`);
  each method offers the scores of :data:`SCORINGS` and refuses any other
  (:func:`check_scoring`).
* **Mean and standard error.**  A point's CV score is the mean of its
  fold scores weighted by the folds' sizes, and its standard error the
  weighted spread over ``sqrt(n_folds - 1)``, as ``cv.glmnet`` computes them
  (:func:`cv_mean_se`): with folds of unequal size the accuracy is the
  fraction of all held-out rows classified correctly, so two points that
  classify as many rows correctly tie (and the sparser wins) whichever
  folds the rows fell in.  With equal folds these are the plain mean and
  ``std(ddof=1) / sqrt(n_folds)``.
* **Rule.**  :func:`choose_index` with ``cv_rule="best"`` (highest mean
  score) or ``"1se"`` (glmnet's ``lambda.1se``: the sparsest point whose
  mean score is within one standard error of the best); ties go to the
  sparser point whichever way the grid runs.  :func:`numkfs.select` also
  offers the same two on the relaxed refit's scores (``"relaxed_best"``,
  ``"relaxed_1se"``, :mod:`numkfs.relaxed`; :data:`RULES`).  :func:`numkfs.select` uses
  each method's rule of :data:`DEFAULT_CV_RULES` when none is given
  (:func:`default_cv_rule`).  :func:`index_for_count`
  honours a requested number of features exactly, and warns naming the
  features when ties make that count arbitrary (:func:`tied_features`).
* **Support.**  The features with ``|weight| > path.tol`` at the chosen
  point (:func:`numkfs.paths.support_mask`), the same rule in paths,
  estimators, :func:`numkfs.select` and the command line.
* **Grids.**  A default path grid is refined where the support jumps
  (:func:`refine_walk`): between two consecutive points whose supports
  differ by more than ``max(2, a quarter of the larger)`` features
  (:func:`support_jump`) points are inserted, up to a stated number.
* **Edges.**  :func:`check_grid_edge` warns (:class:`GridEdgeWarning`) when the
  chosen point is at an edge of the grid the user can widen.

Cross-validation over a path: a method gives a ``fold_fn(train_index, test_index) -> scores`` that fits its
path on the training rows and returns one score per path point (higher is
better) on the test rows.  :func:`cross_val_path` runs the folds (in
parallel with joblib when ``n_jobs`` asks for it) and stacks the scores as
``(n_points, n_folds)``, the layout of :attr:`FeaturePath.cv_scores`, with
the folds' test sizes (:attr:`FeaturePath.cv_fold_sizes`).

Thread policy: each joblib worker limits Numba to
``max(1, n_cores // n_workers)`` threads, so joblib workers and Numba
threads never oversubscribe the cores.
"""
from __future__ import annotations

from ._cv_mean import cv_mean_se  # a point's mean CV score and standard error
from ._cv_rules import (CV_RULES, DEFAULT_CV_RULES, RULES, SELECTION_RULES, TIE_RTOL, GridEdgeWarning,  # the rule
                        check_grid_edge, choose_from_scores, choose_index, default_cv_rule, index_for_count,
                        record_cv)
from ._cv_scoring import SCORINGS, check_scoring, path_scores  # scores
from ._folds import check_folds, cross_val_path, fold_data, make_cv  # folds
from ._grid_refinement import refine_walk, support_jump  # grids
from ._parallel import numba_threads_for, parallel_map, show_progress  # workers and threads
from ._targets import MAX_FLOAT_CLASSES, target_type  # the rule lives below kernels/
from ._ties import tied_features, warn_ties  # ties at a requested count

__all__ = ["CV_RULES", "DEFAULT_CV_RULES", "MAX_FLOAT_CLASSES", "RULES", "SCORINGS", "SELECTION_RULES", "TIE_RTOL",
           "target_type", "GridEdgeWarning", "check_folds", "check_grid_edge", "check_scoring", "choose_from_scores",
           "choose_index", "cross_val_path", "cv_mean_se", "default_cv_rule", "fold_data", "index_for_count",
           "make_cv", "numba_threads_for", "parallel_map", "path_scores", "record_cv", "refine_walk", "show_progress",
           "support_jump", "tied_features", "warn_ties"]

