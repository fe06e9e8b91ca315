r"""scikit-learn estimators for KNIFE with λ2 chosen by cross-validation.

:class:`KNIFERegressorCV` and :class:`KNIFEClassifierCV`: the λ2 path
(paper Algorithm 2, :func:`numkfs.methods.knife.knife_path`) with λ2 chosen
by K-fold cross-validation through the one CV estimator base
(:class:`numkfs.estimators._cv.PathCVMixin`): each fold standardised on its
own training rows, scores per fold kept in ``path_.cv_scores``, the point
chosen by ``cv_rule``; the model returned is the full-data path's point at
the chosen λ2.  The fitting machinery and the plain estimators are in
:mod:`numkfs.estimators._knife`.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import numbers
from types import SimpleNamespace

import numpy as np
from sklearn.model_selection import train_test_split

from .._registry import method_row
from .._threads import method_threads
from .._constraints import BOOL, N_JOBS, InstanceOf, Interval, NoneOr, Options
from .._validation import check_random_state
from ..methods.knife import (CLASSIFICATION_LOSSES, KNIFE_CONSTRAINTS, REGRESSION_LOSSES, KNIFEGridWalk, knife,
                             knife_ovr_paths, knife_path, lambda_min_ratio_for, path_decision_function,
                             shared_starts)
from ..model_selection import CV_RULES, choose_index, cv_mean_se, fold_data, path_scores
from ..paths import FeaturePath
from ._cv import PathCVMixin, as_grid, cv_data, stop_early
from ._knife import _COMMON, KNIFEClassifier, KNIFERegressor, constant_columns_named_once, ovr_targets

__all__ = ["KNIFERegressorCV", "KNIFEClassifierCV", "CLASSIFICATION_SCORINGS", "AUTO_CV_MAX_SAMPLES",
           "AUTO_CV_MAX_SAMPLES_CLASSIFICATION"]

class _HasSplit:
    """Constraint: a scikit-learn CV splitter (anything with ``split``)."""

    def is_satisfied_by(self, value):
        return hasattr(value, "split") and not isinstance(value, str)

    def __str__(self):
        return "a CV splitter"


_CV = {"cv": [Interval(numbers.Integral, 2, None, closed="left"), _HasSplit()],
       "cv_rule": [Options(CV_RULES)],
       "n_grid": KNIFE_CONSTRAINTS["n_grid"],
       "lambda_min_ratio": KNIFE_CONSTRAINTS["lambda_min_ratio"],
       "grid": [InstanceOf((list, tuple, np.ndarray), "an array of increasing lambda2 values"), NoneOr],
       "n_jobs": N_JOBS,
       "cv_max_samples": [Interval(numbers.Integral, 2, None, closed="left"), Options(("auto",)), NoneOr],
       "early_stopping": BOOL,
       "cv_tol": [Interval(numbers.Real, 0, None, closed="neither"), NoneOr]}

#: The folds of a KNIFE CV walk the path's grid in stages of this many points; with
#: ``early_stopping`` they stop at the end of the first stage after which the CV can no longer
#: choose a later point (:func:`numkfs.estimators._cv.stop_early`).
CV_STAGE_POINTS = 10

#: ``cv_max_samples="auto"``: above this many rows the path and its CV run on a random subsample
#: of this many, and the chosen point is fitted once on every row: the CV on every row grows about
#: linearly with n, and 10^4 rows already find the features of the simulations in the KNIFE guide.
AUTO_CV_MAX_SAMPLES = 10_000

#: Held-out scores of the classification CV estimator (higher is better).
CLASSIFICATION_SCORINGS = method_row("knife").scorings["classification"]

#: ``cv_max_samples="auto"`` (the classifier's default): with more than two classes on the exact
#: kernel, the path and its CV on at most this many rows, then one fit on every row (two classes,
#: or landmarks: the regressor's rule, :data:`AUTO_CV_MAX_SAMPLES`).
AUTO_CV_MAX_SAMPLES_CLASSIFICATION = 500

#: ``KNIFEClassifierCV(n_grid="auto")``: this many grid points with that subsample, else 100 (more
#: points cost more one-vs-rest fits and, on the KNIFE guide's multiclass data, select the same).
AUTO_N_GRID_CLASSIFICATION = 30

#: The points the CV inserts below the first positive λ2 of a default grid
#: (as fractions of it: half-decades from 1e-3 to 10^-0.5) when it chose
#: λ2 = 0 and that first positive point scored more than one standard error
#: worse (:func:`low_end_grid`, :meth:`_KNIFEPathCV._cv_refine`).
LOW_END_FRACTIONS = np.logspace(-3.0, -0.5, 6)


def low_end_grid(path, scores, fold_sizes, rule):
    """The low end of a default grid to walk once more, or None.

    When the contract's ``rule`` would choose λ2 = 0 on ``path`` scored so
    (:func:`~numkfs.model_selection.choose_index`, recording nothing) and
    the grid's first positive point scored more than one standard error
    (of the λ2 = 0 point's fold scores) worse, the best λ2 may lie between
    the two, where the default grid has no point (its refinement follows
    support jumps, not the score).

    Parameters
    ----------
    path : FeaturePath
        The first pass's path.
    scores : ndarray of shape (n_points, n_folds)
        Its CV scores (higher is better).
    fold_sizes : ndarray of shape (n_folds,) or None
        The held-out rows of each fold.
    rule : {"best", "1se", "1pct", "2pct"}
        The contract's rule.

    Returns
    -------
    ndarray or None
        λ2 = 0 and :data:`LOW_END_FRACTIONS` of the first positive value.
    """
    g = path.grid
    if len(g) < 2 or g[0] != 0.0 or g[1] <= 0.0:
        return None
    probe = copy.copy(path)
    probe.cv_scores, probe.cv_fold_sizes = scores, fold_sizes
    if choose_index(probe, rule) != 0:
        return None
    mean, se = cv_mean_se(scores, fold_sizes)
    if not mean[1] < mean[0] - se[0]:
        return None
    return np.concatenate([[0.0], g[1] * LOW_END_FRACTIONS])


#: Per-point entries of a KNIFE path's ``extra``.
_PER_POINT = ("alpha", "intercept", "n_iter", "converged", "gamma")


def _points(path, name):
    """One per-point array of a KNIFE path: ``grid``, ``weights``, ``objective`` or an entry of
    :data:`_PER_POINT` in its ``extra``."""
    return np.asarray(getattr(path, name) if name in ("grid", "weights", "objective") else path.extra[name])


def _with_points(path, points, **extra):
    """``path`` with every per-point array replaced by ``points(name)`` (and ``extra`` entries set)."""
    extra = {**path.extra, **{key: points(key) for key in _PER_POINT if key in path.extra}, **extra}
    return FeaturePath(grid=points("grid"), weights=points("weights"), grid_name="lambda2",
                       feature_names=path.feature_names, objective=points("objective"), method=path.method,
                       extra=extra, true_support=path.true_support, converged=extra["converged"])


def _splice(first, low):
    """The points of ``low`` (a walk of λ2 = 0 and points below ``first``'s first positive λ2),
    then those of ``first`` from its first positive point on."""
    return _with_points(first, lambda name: np.concatenate([_points(low, name), _points(first, name)[1:]]),
                        n_inserted=int(first.extra.get("n_inserted", 0)) + low.n_points - 1)


def _truncated(path, end):
    """The first ``end`` points of a KNIFE path (one problem's)."""
    return _with_points(path, lambda name: _points(path, name)[:end])


class _StagedFolds:
    """The folds of one KNIFE path's CV, walked in stages: per fold (keyed by
    its held-out rows) a :class:`~numkfs.methods.knife.KNIFEGridWalk` per
    problem (one, or one per class) on the fold's training rows, and the
    held-out scores of the points walked so far.  ``folds(train, test,
    end=k)`` walks the fold on to the grid's point ``k`` and returns the
    scores of its first ``k`` points: those of ``knife_path(..., grid=grid)``
    on the fold, point for point.  A fold whose training rows lack a class
    scores NaN."""

    def __init__(self, estimator, data, outer, grid):
        self.estimator, self.data, self.outer, self.grid = estimator, data, outer, np.asarray(grid, dtype=float)
        self.folds = {}

    def __call__(self, train, test, end):
        fold = self.folds.get(test.tobytes())
        if fold is None:
            fold = self.folds[test.tobytes()] = self._start(train, test)
        if fold is None:
            return np.full(end, np.nan)
        est, data = self.estimator, self.data
        for walk in fold["walks"]:
            if walk.grid.size < self.grid.size:  # the full-data path has walked on since
                walk.extend(self.grid)
        new = [walk.walk(end) for walk in fold["walks"]]
        if new[0] is not None:
            decision = est._cv_predict(data, new if est._classifier else new[0], fold["X_train"], fold["X_test"],
                                       fold["y_train"])
            fold["scores"].extend(path_scores(fold["y_test"], decision, data.scoring, **data.score_kw))
        return np.asarray(fold["scores"][:end], dtype=float)

    def _start(self, train, test):
        est, data = self.estimator, self.data
        if est._classifier and len(np.unique(data.y_split[train])) < len(data.classes):
            return None
        Xtr, ytr, Xte, yte = est._cv_fold_data(data, train, test)
        params = est._cv_path_params(data, self.outer, full=False)
        targets = ovr_targets(ytr, data.classes) if est._classifier else [ytr]
        # each fold from its own starts, fitted on its training rows only (a start taken from the full data's
        # fit would carry the rows the fold holds out); one-vs-rest problems without the restart of the scale
        # search, as knife_ovr_paths fits the full data's
        walks = [KNIFEGridWalk(Xtr, t, self.grid, gamma_restart=len(targets) == 1, **params) for t in targets]
        return dict(walks=walks, X_train=Xtr, y_train=ytr, X_test=Xte, y_test=yte, scores=[])


class _KNIFEPathCV(PathCVMixin):
    """The cross-validation hooks both KNIFE CV estimators share (private):
    the path on all the (standardised) rows, each fold standardised on its
    own training rows, the folds on threads under KNIFE's thread policy."""

    _cv_grid_param = "grid"
    _cv_method = "KNIFE"
    _cv_prefer = "threads"  # the folds' work releases the GIL: no worker processes to start

    @contextlib.contextmanager
    def _cv_fit_context(self):
        # the constant-column warning once, by the estimator, naming the columns by their feature names;
        # every λ2 = 0 start fitted once (the low end's second pass walks λ2 = 0 again on the same rows)
        with constant_columns_named_once(), shared_starts():
            yield

    def _cv_threads(self, data):
        """Numba and BLAS threads around the folds.

        Small problems run serially (Numba and BLAS), a Nyström basis with
        one BLAS thread (numkfs's thread policy, :mod:`numkfs._threads`).
        The BLAS limit is process-wide, so it is set here, around the pool
        of fold threads (a fit in a fold thread leaves it alone): with
        ``n_jobs`` workers, at most cores / workers BLAS threads each, as
        Numba's threads are limited per worker (in a thread other than the
        main one the caller owns the BLAS limit)."""
        from joblib import effective_n_jobs

        method = "knife_nystroem" if getattr(self, "approximation_", "exact") == "nystroem" else "knife"
        return method_threads(method, data.X_split.shape[0], blas_in_threads=False,
                              workers=effective_n_jobs(self.n_jobs))

    def _cv_full_path(self, data, outer, grid=None):
        """The path on all the rows, its folds walked in stages of
        :data:`CV_STAGE_POINTS` points (:class:`_StagedFolds`, the pass's
        :meth:`_cv_folds`): of the one problem, or of every one-vs-rest
        problem on one grid combined into one (:meth:`_cv_combine`).

        With ``early_stopping``, after each stage
        :func:`~numkfs.estimators._cv.stop_early` decides whether a later
        point can still be chosen; if not, the folds stop and the path ends
        at the last point they scored (its problems' paths too).  On the
        default grid the stages follow the full-data path as it is walked
        (``knife_path``'s ``stop``), which then stops there too; a grid of
        your own, or ``grid`` (the low end walked once more,
        :meth:`_cv_refine`), is walked in full first."""
        data.staged = _StagedFolds(self, data, outer, [])

        def stop(walked):
            """After every point of the full-data walk: a stage of the folds every
            :data:`CV_STAGE_POINTS` points, and the rule."""
            if walked.size % CV_STAGE_POINTS:
                return False
            return stop_early(walked, *self._cv_scores(data, outer, walked))

        staged = self.early_stopping and data.grid is None and grid is None
        params = self._cv_path_params(data, outer, full=True)
        if grid is not None:  # in the path's own scale
            params["grid"] = grid
        if staged:
            params["stop"] = stop
        problems = getattr(data, "problems", [data.y])
        if len(problems) == 1:
            paths = [self.path(data.X, problems[0], **params)]
        else:
            params.pop("verbose")
            paths = knife_ovr_paths(data.X, problems, **params)
        self._cv_problem_paths.append(paths)
        path = self._cv_combine(paths)
        if self.early_stopping and not staged:
            for end in range(CV_STAGE_POINTS, path.n_points, CV_STAGE_POINTS):
                if stop(path.grid[:end]):  # the same stages, on the walked path's first points
                    self._cv_problem_paths[-1] = [_truncated(p, end) for p in self._cv_problem_paths[-1]]
                    return self._cv_combine(self._cv_problem_paths[-1])
        return path

    def _cv_folds(self, data, outer, grid):
        """The pass's staged folds (:class:`_StagedFolds`), scored at ``grid``
        (the points walked so far, or the path's): each fold walks on from
        where the last stage left it."""
        folds = data.staged
        folds.grid = np.asarray(grid, dtype=float)
        return functools.partial(folds, end=len(folds.grid))

    def _cv_outer(self, data):
        """One path, and one seed for every walk of the fit."""
        self._check_fold_components(data)
        self._cv_problem_paths = []  # per pass: the path of each problem (one, or one per class)
        # one seed for every path of the fit (a Generator or None drawn once): both passes of the low end
        # (_cv_refine) then share their Nystrom landmarks and the folds do not depend on the order they run in
        rs = self.random_state
        self._cv_seed = int(rs) if isinstance(rs, numbers.Integral) else int(
            check_random_state(rs).integers(2**31 - 1))
        return [None]

    def _check_fold_components(self, data):
        """Nyström landmarks are rows of each fold's training part: a clear error naming
        ``n_components`` when a fold has fewer training rows (the method's own check would name
        ``knife_path`` and the fold's row count as if it were the data's)."""
        if getattr(self, "approximation_", "exact") != "nystroem" or self.n_components is None:
            return
        from ..model_selection import make_cv

        splitter = make_cv(self.cv, data.y_split, classifier=data.stratify, random_state=self.random_state)
        fewest = min(len(train) for train, _ in splitter.split(data.X_split, data.y_split))
        if self.n_components > fewest:
            n = data.X_split.shape[0]
            raise ValueError(f"{type(self).__name__}: n_components={self.n_components} Nystroem landmarks are rows "
                             f"of each cross-validation fold's training part, and the smallest has {fewest} of "
                             f"the {n} rows {'sampled' if data.full is not None else 'given'} (cv={self.cv!r}); "
                             f"give n_components <= {fewest}, or fewer folds.")

    def _cv_refine(self, data, outer, path, scores, fold_sizes):
        """The low end of the default grid walked once more, spliced into the path; or None.

        When the contract's rule would choose λ2 = 0 on the first pass
        (:func:`low_end_grid`) and the grid's first positive point scored
        more than one standard error worse, a second pass walks λ2 = 0 and
        :data:`LOW_END_FRACTIONS` of that first positive value (path and
        CV).  The spliced path holds the second pass's points (λ2 = 0, the
        same fit as the first pass's, and the inserted ones) and then the
        first pass's from its first positive point on, with their CV
        scores (the same folds); ``extra["n_inserted"]`` counts the
        inserted points too.  The rule then chooses on it (once, in
        :meth:`~numkfs.estimators._cv.PathCVMixin._cv_one_path`).  The
        points after the inserted ones keep the warm starts of the first
        pass."""
        if data.grid is not None:
            return None
        low = low_end_grid(path, scores, fold_sizes, self.cv_rule)
        if low is None:
            return None
        _, low_scores, _ = self._cv_pass(data, outer, grid=low)
        spliced = [_splice(a, b) for a, b in zip(self._cv_problem_paths[0], self._cv_problem_paths[-1])]
        self._cv_problem_paths.append(spliced)
        return self._cv_combine(spliced), np.concatenate([low_scores, scores[1:]]), fold_sizes

    def _cv_combine(self, paths):
        """The estimator's path from its problems' paths (the one path itself)."""
        return paths[0]

    def _cv_path_params(self, data, outer, *, full):
        params = dict(loss=self.loss, n_restarts=self.n_restarts, random_state=self._cv_seed,
                      **self._kernel_params())
        params["lambda1"] = self.lambda1 * data.ratio  # the full-data problem per row (cv_max_samples)
        if not full and self.cv_tol is not None:  # a fold's fit serves only its held-out scores
            params["tol"] = max(params["tol"], self.cv_tol)
        if self._classifier:
            params["delta"] = self.delta
        if full:
            grid = None if data.grid is None else as_grid(data.grid) * data.ratio
            # "auto" from every row's count: a subsample's grid stands for the full data's (per row)
            n_all = (data.X if data.full is None else data.full.X).shape[0]
            params.update(n_grid=data.n_grid, lambda_min_ratio=lambda_min_ratio_for(self.lambda_min_ratio, n_all),
                          grid=grid,
                          feature_names=getattr(self, "feature_names_in_", None), verbose=self.verbose)
        return params

    def _cv_grid(self):
        """``{"grid": ..., "n_grid": ...}``."""
        return dict(grid=self.grid, n_grid=self.n_grid)

    def _cv_fold_data(self, data, train, test):
        """The fold's rows, standardised with its training rows' statistics only."""
        Xtr, Xte = fold_data(data.X_split, train, test)
        return Xtr, data.y_split[train], Xte, data.y_split[test]

    def _cv_rows(self, Xs, y, X_raw):
        """``(Xs, y, X_raw, rows)``: the rows the path and its CV use.

        All of them, or with ``cv_max_samples`` below the number of rows a
        random subsample of that many (stratified by class for a
        classifier, drawn with ``random_state``).  ``rows`` holds what the
        final fit on every row needs: ``full`` (the whole data, or None)
        and ``ratio`` = n_sub / n, by which λ1 and λ2 are scaled on the
        subsample so that its problem, per row, is the full data's (the
        loss is a sum over the rows)."""
        n, m = Xs.shape[0], self.cv_max_samples
        n_classes = len(np.unique(y)) if self._classifier else 0
        if m == "auto":  # see AUTO_CV_MAX_SAMPLES and AUTO_CV_MAX_SAMPLES_CLASSIFICATION
            if n_classes > 2 and self.approximation_ == "exact":
                m = AUTO_CV_MAX_SAMPLES_CLASSIFICATION  # one-vs-rest on the exact kernel
            elif n > AUTO_CV_MAX_SAMPLES:  # a fold's training part (at least half) holds the landmarks
                m = max(AUTO_CV_MAX_SAMPLES, 2 * (self.n_components or 0))
            else:
                m = None
        # a stratified subsample must leave out at least one row per class: fewer left out is every row
        if m is None or m >= n or n - m < n_classes:
            return Xs, y, X_raw, dict(full=None, ratio=1.0)
        name = type(self).__name__
        if self.approximation_ == "nystroem" and self.n_components is not None and self.n_components > m:
            raise ValueError(f"{name}: n_components={self.n_components} landmarks need at least as many rows "
                             f"as the cross-validation uses; cv_max_samples={m} is fewer.")
        seed = int(check_random_state(self.random_state).integers(2**31 - 1))
        if self._classifier:
            idx = self._class_subsample(y, m, seed)
            if idx is None:
                return Xs, y, X_raw, dict(full=None, ratio=1.0)
        else:
            idx = np.sort(train_test_split(np.arange(n), train_size=m, random_state=seed)[0])
        return Xs[idx], y[idx], X_raw[idx], dict(full=SimpleNamespace(X=Xs, y=y), ratio=idx.size / n)

    def _class_subsample(self, y, m, seed):
        """The rows of a subsample of ``m`` rows stratified by class, in which
        every class has the rows the cross-validation needs (``cv`` of each
        for an int ``cv``, one for a splitter): sorted, or None for every row.

        A stratified draw (scikit-learn's ``train_test_split``, the same draw
        whenever it gives each class those rows) takes about n_c m / n rows
        of a class of n_c.  A class it would leave short keeps the rows the
        folds need (every row of a class that has no more, and of a class of
        one row, which a stratified draw cannot split), drawn with the same
        seed, and the other classes are drawn again from the rest of the
        budget.  When the budget cannot hold them, the subsample grows to
        what they need (or every row) with ``cv_max_samples="auto"``; a
        ``cv_max_samples`` given is refused by name, with the size that
        would do."""
        need = self.cv if isinstance(self.cv, numbers.Integral) else 1
        labels, inv, counts = np.unique(y, return_inverse=True, return_counts=True)
        rows = [np.flatnonzero(inv == c) for c in range(labels.size)]
        # a class kept at its floor: every row up to `need`, else `need` of them (one draw per class)
        floor = [r if r.size <= need else np.sort(np.random.default_rng([seed, c]).choice(r, need, replace=False))
                 for c, r in enumerate(rows)]
        fixed, size = counts < 2, m
        while True:
            kept = np.concatenate([floor[c] for c in np.flatnonzero(fixed)] + [np.zeros(0, dtype=int)])
            rest = np.flatnonzero(~fixed[inv])
            budget, k = size - kept.size, int(np.sum(~fixed))
            if k == 0 or rest.size - budget < k:  # a draw would leave out fewer rows than there are classes
                idx = None
                break
            if budget < k * need:
                size = kept.size + k * need
                continue
            idx = train_test_split(rest, train_size=budget, random_state=seed, stratify=y[rest])[0]
            short = ~fixed & (np.bincount(inv[idx], minlength=labels.size) < np.minimum(counts, need))
            if not short.any():
                idx = np.sort(np.concatenate([kept, idx]))
                break
            fixed |= short
        if size > m and self.cv_max_samples != "auto":
            enough = "None (every row)" if idx is None else f"{size} or more, or None for every row"
            raise ValueError(f"{type(self).__name__}: cv_max_samples={m} rows cannot hold the cv={self.cv!r} "
                             f"stratified folds of {labels.size} classes ({need} row(s) of each, or every row of "
                             f"a smaller class); give cv_max_samples={enough}.")
        return idx

    def _cv_refit_all_rows(self, data, targets):
        """With a subsample (``cv_max_samples``): the chosen point fitted on
        every row, λ2 scaled back by n / n_sub, warm-started from the
        subsample's weights at the chosen point's rbf scale (one
        :func:`~numkfs.methods.knife.knife` fit per problem; ``path_``,
        ``cv_scores_`` and ``converged_`` stay those of the subsample)."""
        self.cv_n_samples_ = int(data.X.shape[0])
        if data.full is None:
            return
        self.lambda2_ = float(self.lambda2_ / data.ratio)
        params = {**self._kernel_params(), "loss": self.loss}
        if self._classifier:
            params["delta"] = self.delta
        W = np.atleast_2d(getattr(self, "class_feature_weights_", self.feature_weights_))
        gammas = np.broadcast_to(np.asarray(self.gamma_, dtype=float), (len(targets),))
        results = [knife(data.full.X, yk, **{**params, "gamma": float(g)}, lambda2=self.lambda2_, w0=w,
                         n_restarts=self.n_restarts, random_state=self.random_state)
                   for yk, w, g in zip(targets, W, gammas)]
        kept = self.converged_, self.objective_history_
        self._store(results if self._classifier else results[0], data.full.X)
        self.converged_, self.objective_history_ = kept


class KNIFERegressorCV(_KNIFEPathCV, KNIFERegressor):
    r"""KNIFE regression with λ2 chosen on the feature path by K-fold CV.

    The path (paper Algorithm 2) is computed on the whole training set; its
    grid (0, then ``n_grid - 1`` log-spaced values up to the λ2 at
    which every weight is zero, refined where the support jumps by more
    than ``max(2, a quarter of the larger)`` features, at most
    ``2 * n_grid`` points, and with ``gamma="auto"`` continued by at most
    30 doublings of λ2 until every weight is zero,
    :func:`numkfs.methods.knife.knife_path`) is re-used on every fold.
    When the CV chooses λ2 = 0 and the grid's first positive point scores
    more than one standard error worse, the best λ2 may lie between the
    two: λ2 = 0 and six points below that first positive value
    (:data:`LOW_END_FRACTIONS` of it, half-decades from 1e-3 to 10^-0.5)
    are then walked once more, on the whole data and on every fold, and
    spliced into the path in place of its λ2 = 0 point; the contract's
    rule chooses again on the spliced path (with a Nyström basis both walks
    use the same landmarks: a ``random_state`` that is not an int is drawn
    into one seed per fit).  By default (``gamma="auto"``) the rbf scale
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
    cv_rule : {"best", "1se", "1pct", "2pct"}, default="best"
        ``"best"``: highest mean CV score; ``"1se"``: the sparsest point within one standard error of
        it; ``"1pct"``, ``"2pct"``: within 1 or 2 % of its loss.  Ties go to the sparser point.
    scoring : {"neg_mean_squared_error"}, default="neg_mean_squared_error"
        The CV score (higher is better); default: the method's own (see the selection contract in the user guide).
    n_grid : int, default=100
        Number of points of the default grid (before its refinement).
    lambda_min_ratio : float in (0, 1) or "auto", default="auto"
        Smallest positive λ₂ of the grid as a fraction of the largest;
        ``"auto"``: 1e-3 on up to 10^4 rows, 10 / n on more, n every row
        also with ``cv_max_samples``
        (:func:`numkfs.methods.knife.lambda_min_ratio_for`).
    grid : array-like, optional
        An increasing λ2 grid of your own, walked as given (no refinement),
        as in :func:`numkfs.methods.knife.knife_path`; default: the grid
        above.
    n_jobs : int, optional
        joblib workers over the folds: threads by default (the folds' work
        releases the GIL; no worker processes to start), any backend set
        with ``joblib.parallel_config`` (e.g. Dask) otherwise.
    cv_max_samples : int, "auto" or None, default="auto"
        At most this many rows for the path and its cross-validation (at
        least 2; None: every row; ``"auto"``: every row up to 10,000
        (``AUTO_CV_MAX_SAMPLES``), and a subsample of 10,000 rows (or of
        twice ``n_components``, if more) above.  The CV on every row grows
        about linearly with the rows, so above 10^4 rows the subsample keeps
        the cost near that of 10^4 rows plus one fit on every row).  With fewer rows than that nothing
        changes, nor for the classifier when the subsample would leave
        out fewer rows than there are classes (a stratified draw leaves
        out at least one of each): every row is used.  With more, a random subsample of ``cv_max_samples`` rows
        (drawn with ``random_state``; stratified by class for the
        classifier) carries the path and the CV, with λ1 and the λ2 grid
        multiplied by n_sub / n: the loss is a sum over the rows, so that is
        the same problem per row.  The chosen point is then fitted once on
        every row at λ2 = (the chosen subsample λ2) x n / n_sub, started
        from the subsample's weights at its rbf scale.  The CV then costs
        what it costs at ``cv_max_samples`` rows, plus one fit on all rows;
        see the KNIFE guide's section on large n.
    early_stopping : bool, default=True
        The folds walk the grid in stages of 10 points and stop once the
        CV can no longer choose a later point: the mean score over the last
        5 points, all beyond the best one and reaching 3 times its λ2, is
        below the best by more than 3 of its standard errors (the rule by
        which :class:`~numkfs.L1KRRegressorCV` stops).  On the default
        grid the path on every row is walked in the same stages and stops
        there too (a ``grid`` you give is walked in full first); ``path_``
        ends at the last point the folds scored, and the rule chooses
        among the points scored.  False: every point of the grid is scored.
    cv_tol : float or None, default=None
        Convergence tolerance of the folds' fits: they stop at the looser of
        ``tol`` and ``cv_tol`` (None: at ``tol``).  The path on all the
        rows, whose chosen point is the fitted model, is fitted at ``tol``.
        A fold's fit serves only its held-out scores, and a looser stop
        takes fewer alternations; where the CV curve is flat the scores it
        leaves can move the chosen point (the KNIFE guide's section on wide
        data).

    Attributes
    ----------
    path_ : FeaturePath
        With ``cv_scores`` of shape (n_points, n_folds), ``score_name``,
        ``cv_rule``, ``chosen_index`` and ``converged``.  With
        ``cv_max_samples`` below the number of rows: the subsample's path,
        its grid in the subsample's scale.
    cv_n_samples_ : int
        The number of rows the path and its CV used.
    lambda2_ : float
        The λ2 of the fitted model (``path_.grid[best_index_]``, times
        n / ``cv_n_samples_`` with a subsample).
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
    >>> est = KNIFERegressorCV(n_grid=8, cv=3, random_state=0).fit(X, y)
    >>> est.path_.n_points >= 8, est.path_.score_name
    (True, 'neg_mean_squared_error')
    """

    _parameter_constraints = {**_COMMON, "loss": [Options(REGRESSION_LOSSES)], **_CV,
                              "scoring": [Options(("neg_mean_squared_error",))]}

    def __init__(self, kernel="rbf", *, loss="squared", lambda1=1.0, gamma="auto", degree=2, coef0=1.0,
                 n_restarts=1, solver="auto", max_iter=100, tol=1e-6, cv=5, cv_rule="best",
                 scoring="neg_mean_squared_error", n_grid=100, lambda_min_ratio="auto", grid=None,
                 n_jobs=None, random_state=None, verbose=False, approximation="auto", n_components=None,
                 cv_max_samples="auto", early_stopping=True, cv_tol=None):
        self.early_stopping = early_stopping
        self.cv_tol = cv_tol
        self.approximation = approximation
        self.n_components = n_components
        self.cv_max_samples = cv_max_samples
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
        self.n_grid = n_grid
        self.lambda_min_ratio = lambda_min_ratio
        self.grid = grid
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    path = staticmethod(knife_path)

    def _cv_data(self, X, y):
        Xs, y, X_raw = self._check_fit_input(X, y)
        y_mean = float(y.mean())
        Xs, y, X_raw, rows = self._cv_rows(Xs, y, X_raw)
        if rows["full"] is not None:
            rows["full"].y = rows["full"].y - y_mean
        # the path on standardised X and centred y; the folds cut from the raw rows
        return cv_data(Xs, y - float(y.mean()), scoring=self.scoring, X_split=X_raw, y_split=y, y_mean=y_mean,
                       **rows, **self._cv_grid())

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
        self._cv_refit_all_rows(data, [] if data.full is None else [data.full.y])


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
    kernel, loss, degree, coef0, delta, n_restarts, solver, max_iter, tol, random_state, verbose
        As in :class:`KNIFEClassifier`.
    lambda1 : float, default=3.0
        The ridge penalty of the α-step (> 0), as in :class:`KNIFEClassifier`,
        whose default is 1.  Chosen by evidence for the cross-validated
        classifier: on ``make_classification`` data it finds the informative
        features with fewer noise features than λ1 = 1, at a held-out error
        as low on real data, with fewer features (see the selection guide).
    approximation, n_components
        As in :class:`KNIFERegressor` (``approximation_`` the kernel used).
    gamma, cv, cv_rule, lambda_min_ratio, grid, n_jobs, early_stopping, cv_tol
        As in :class:`KNIFERegressorCV` (``"auto"``: each one-vs-rest
        problem follows its own selected features; the classes are those
        of every row).
    n_grid : int or "auto", default="auto"
        As in :class:`KNIFERegressorCV`; ``"auto"``: 30 when ``cv_max_samples="auto"``
        takes its subsample (below), else 100 (:data:`AUTO_N_GRID_CLASSIFICATION`; see the
        KNIFE guide).
    cv_max_samples : int or "auto", default="auto"
        As in :class:`KNIFERegressorCV` (None: every row).  ``"auto"``:
        with more than two classes on the exact kernel, at most 500 rows
        (stratified by class) carry the path and its CV of the one-vs-rest
        problems, then the chosen point is fitted once on every row; two
        classes, or landmarks: as the regressor (every row up to 10,000,
        a 10,000-row subsample above; binary fits up to 10,000 rows are
        unchanged).  The subsample is stratified, and a class the draw
        would leave with fewer rows than the folds need (``cv`` for an int
        ``cv``) keeps that many (every row of a class with no more); the
        ``"auto"`` subsample grows to hold them, a smaller
        ``cv_max_samples`` given is refused by name.
        With many classes the one-vs-rest CV on every row costs many times
        an SVC grid search, while 500 rows keep its held-out accuracy (see
        the KNIFE guide).
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
    lambda2_, best_index_, cv_scores_, cv_n_samples_, converged_, n_features_selected_
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
    >>> est = KNIFEClassifierCV(n_grid=6, cv=3, random_state=0).fit(X, y)
    >>> est.path_.score_name, est.cv_scores_.shape == (est.path_.n_points, 3)
    ('accuracy', True)
    """

    _parameter_constraints = {**_COMMON, "loss": [Options(CLASSIFICATION_LOSSES)],
                              "delta": KNIFE_CONSTRAINTS["delta"], **_CV,
                              "n_grid": [*KNIFE_CONSTRAINTS["n_grid"], Options(("auto",))],
                              "scoring": [Options(CLASSIFICATION_SCORINGS)]}

    def __init__(self, kernel="rbf", *, loss="squared_hinge", lambda1=3.0, gamma="auto", degree=2, coef0=1.0,
                 delta=1.0, n_restarts=1, solver="auto", max_iter=100, tol=1e-6, cv=5, cv_rule="best",
                 scoring="accuracy", n_grid="auto", lambda_min_ratio="auto", grid=None, n_jobs=None,
                 random_state=None, verbose=False, approximation="auto", n_components=None,
                 cv_max_samples="auto", early_stopping=True, cv_tol=None):
        self.early_stopping = early_stopping
        self.cv_tol = cv_tol
        self.approximation = approximation
        self.n_components = n_components
        self.cv_max_samples = cv_max_samples
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
        self.n_grid = n_grid
        self.lambda_min_ratio = lambda_min_ratio
        self.grid = grid
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    path = staticmethod(knife_path)

    def _cv_data(self, X, y):
        Xs, y, X_raw = self._check_fit_input(X, y)
        self._targets(y)  # the classes, from every row
        Xs, y, X_raw, rows = self._cv_rows(Xs, y, X_raw)
        problems, grid = ovr_targets(y, self.classes_), self._cv_grid()
        if grid["n_grid"] == "auto":  # see AUTO_N_GRID_CLASSIFICATION
            sub = self.cv_max_samples == "auto" and self.approximation_ == "exact" and rows["full"] is not None
            grid["n_grid"] = AUTO_N_GRID_CLASSIFICATION if sub and len(problems) > 1 else 100
        return cv_data(Xs, y, scoring=self.scoring, stratify=True, X_split=X_raw,
                       score_kw=dict(classes=self.classes_, loss=self.loss, delta=self.delta),
                       problems=problems, classes=self.classes_, **rows, **grid)

    def _cv_combine(self, paths):
        """The binary problem's path, or the one-vs-rest paths combined into
        one: the largest weight of each feature over the classes."""
        if len(paths) == 1:
            return paths[0]
        W = np.max(np.stack([p.weights for p in paths]), axis=0)
        converged = np.all(np.stack([p.extra["converged"] for p in paths]), axis=0)
        gammas = np.stack([p.extra["gamma"] for p in paths])  # (n_problems, n_points)
        return FeaturePath(grid=paths[0].grid, weights=W, grid_name="lambda2", feature_names=paths[0].feature_names,
                           objective=np.sum([p.objective for p in paths], axis=0), method="KNIFE",
                           extra={"converged": converged, "gamma": gammas,
                                  "n_inserted": paths[0].extra.get("n_inserted", 0)}, converged=converged)

    def _cv_predict(self, data, paths, X_train, X_test, y_train):
        D = np.stack([path_decision_function(p, X_train, X_test) for p in paths])  # (k, m, n_points)
        return D[0] if len(paths) == 1 else D

    def _cv_store(self, data, paths, values, k, i):
        path, paths = paths[k], self._cv_problem_paths[-1]
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
        self._cv_refit_all_rows(data, [] if data.full is None else ovr_targets(data.full.y, self.classes_))


#: The λ2 grid :func:`numkfs.select` fits unless given: 40 points keep the command line's main job under a
#: minute.
SELECT_N_GRID = 40


def select_settings(settings, *, task, y):
    """The keyword arguments :func:`numkfs.select` gives KNIFE's CV estimator
    (its row's ``select_settings``): a :data:`SELECT_N_GRID`-point grid
    unless given."""
    out = dict(settings)
    out.setdefault("n_grid", SELECT_N_GRID)
    return out


def select_readout(estimator, X, selected):
    """What :func:`numkfs.select` reports of a fitted KNIFE CV estimator (its
    row's ``select_readout``): its feature weights, and when the path ran on
    a subsample (``cv_max_samples``) and its chosen point was fitted again on
    every row, that model's support, which can keep fewer features than the
    path's point."""
    if getattr(estimator, "cv_n_samples_", None) not in (None, np.shape(X)[0]):
        selected = np.asarray(estimator.get_support(), dtype=bool)
    return np.asarray(estimator.feature_weights_, dtype=float), selected, {}
