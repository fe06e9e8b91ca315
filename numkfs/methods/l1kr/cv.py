"""Staged tracing of the L1KR path, its event-following D grid and the
cross-validation over it."""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from ..._threads import limit_threads, thread_limits
from ..._validation import check_X_y
from ...model_selection import support_jump
from ...paths import FeaturePath
from .evaluate import _grid_models, _path_at, _predict_betas
from .path import _path_arguments, l1kr_path
from .system import PRUNE_TOL, _renamed_eps
from .tracker import _l1kr_trace, _set_contract_fields


#: KKT tolerance and largest tangent angle of the paths :func:`l1kr_cv_path`
#: traces unless given (``l1kr_path``'s defaults are 1e-10 and 0.15).  The CV
#: reads each path at its grid points by linear interpolation between
#: stored points, whose error (the chord against the arc, about
#: ``h θ / 8`` for a step h turning by θ) is 1e-4 to 1e-3 of β on the 200 x 50
#: problem of ``benchmarks/busy.py`` at either setting; a KKT residual of 1e-8
#: moves β by about 1e-7 of itself there, far below it and below what the
#: fold scores resolve.  ``tests/test_l1kr.py`` checks the CV's paths against
#: a tight trace at the grid points.  1.5-1.9x fewer evaluations.
CV_TOL, CV_MAX_ANGLE = 1e-8, 0.3

#: Budget D of the first stage of :func:`l1kr_cv_path`'s tracing, per row
#: of the data (β of the same kernel grows like n, see ``D_scaling``).
FIRST_STAGE_D = 1e-4

#: Growth of the budget from one stage of :func:`l1kr_cv_path`'s tracing to
#: the next (the paths resume where they stopped, so stages cost only the
#: point at each stage's end).
STAGE_GROWTH = math.sqrt(10.0)

#: Early stopping of :func:`l1kr_cv_path`: tracing stops once the mean CV
#: score over the last ``EARLY_STOP_POINTS`` grid points (all beyond the best
#: point, and reaching at least ``EARLY_STOP_EXTENT`` times its D) is below
#: the best mean score by more than ``EARLY_STOP_SE`` standard errors of the
#: best point's fold scores.
EARLY_STOP_POINTS, EARLY_STOP_EXTENT, EARLY_STOP_SE = 5, 3.0, 3.0

#: Halvings (in log D) of an interval of the default grid whose end points'
#: supports differ by more than :func:`~numkfs.model_selection.support_jump` allows.
REFINE_DEPTH = 4


class _StagedPath:
    """An L1KR path traced in stages of increasing ``D_max``
    (:func:`_l1kr_trace` resumed at each stage's end).

    ``path`` is the path traced so far, ``reached`` the largest D it has
    reached, ``done`` whether it can go no further (stationary point,
    ``D_max`` of the user, or a tracker limit)."""

    def __init__(self, X, y, kernel, kw):
        import inspect

        bound = inspect.signature(l1kr_path).bind(X, y, kernel, **kw)
        bound.apply_defaults()
        args, self.limits = _path_arguments(**bound.arguments)
        self.args = dict(zip(inspect.signature(_l1kr_trace).parameters, args))
        self.D_cap = self.args["D_max"]
        self.gen = self.path = None
        self.done = False

    @property
    def reached(self):
        return 0.0 if self.path is None else float(self.path.grid.max())

    def advance(self, D):
        """Trace on to ``D`` (at most the user's ``D_max``).  Returns whether
        the path came back below the D it had reached before (a turn in D:
        reads of the path at those D may have changed)."""
        D = float(D) if self.D_cap is None else min(float(D), self.D_cap)
        if self.done or (self.path is not None and D <= self.reached):
            return False
        old_points, old_reach = (0, 0.0) if self.path is None else (self.path.n_points, self.reached)
        with limit_threads(*self.limits):
            try:
                if self.gen is None:
                    self.gen = _l1kr_trace(**dict(self.args, D_max=max(D, 1e-300)))
                    self.path = next(self.gen)
                else:
                    self.path = self.gen.send(D)
            except StopIteration:  # the last stop was final (an event point that could not be polished)
                self.done = True
                return False
        self.done = self.path.extra["finished"] != "D_max" or (self.D_cap is not None and D >= self.D_cap)
        return bool(old_points and self.path.grid[old_points - 1:].min() < old_reach * (1 - 1e-12))


class _FixedSplits:
    """The same (train, test) splits every time (a splitter computed once)."""

    def __init__(self, splits):
        self.splits = splits

    def split(self, X=None, y=None, groups=None):
        return iter(self.splits)

    def get_n_splits(self, X=None, y=None, groups=None):
        return len(self.splits)


def _new_grid_points(full, lo, hi, ratio):
    """Candidate budgets in (lo, hi] of the default grid (``lo = 0``: in
    [0, hi]): the D of every event of ``full`` (a feature enters or leaves)
    in the range, ``hi``, and points spaced geometrically (ratio at most
    ``ratio``) between them; an event point is dropped where its neighbours'
    supports on the traced path differ by no more than
    :func:`~numkfs.model_selection.support_jump` allows."""
    G = full.grid
    ev = {float(G[i]) for i, name, _ in full.extra["events"] if name in ("E1", "E2") and lo < G[i] < hi}
    knots = sorted(ev | {float(hi)})
    fill = set()
    a = lo
    for b in knots:
        if a == 0.0:
            fill.update(b / ratio ** k for k in (1, 2))  # the sparse end: two points below the first knot
        elif b / a > ratio:
            m = int(math.ceil(math.log(b / a) / math.log(ratio)))
            fill.update(a * (b / a) ** (k / m) for k in range(1, m))
        a = b
    pts = np.array(sorted(ev | fill | {float(hi)} | ({0.0} if lo == 0.0 else set())))
    betas, _, _ = _path_at(full, pts)
    supp = betas > 0
    keep = np.ones(pts.size, dtype=bool)
    last = None
    for k in range(pts.size):
        if pts[k] in ev and 0 < k < pts.size - 1 and last is not None and not support_jump(supp[last], supp[k + 1]):
            keep[k] = False  # the next point is still close enough in support to the last one kept
            continue
        last = k
    return pts[keep]


def _refine(full, D, models, prune_tol, depth=REFINE_DEPTH):
    """Insert budgets (midpoints in log D, in D next to 0) where the pruned
    models of two consecutive points of the sorted grid ``D`` differ in
    support by more than :func:`~numkfs.model_selection.support_jump` allows, up to ``depth``
    halvings per interval.  ``models`` maps D to (β, λ, used) and is
    completed for the new points."""
    D = list(D)
    for _ in range(depth):
        mids = []
        for a, b in zip(D[:-1], D[1:]):
            if support_jump(models[a][0] > 0, models[b][0] > 0) and b > a * (1 + 1e-9):
                mids.append(math.sqrt(a * b) if a > 0 else b / 4.0)
        if not mids:
            break
        for D_k, (bt, lm, us) in zip(mids, zip(*_grid_models(full, np.array(mids), prune_tol))):
            models[D_k] = (bt, lm, us)
        D = sorted(D + mids)
    return D


def _merge_grid(D, supports, mean, protect, n_max):
    """Indices of at most ``n_max`` of the grid points ``D`` (sorted) to
    keep: the first and last, the ``protect`` ones (the points the CV rules
    choose), and of the others first those whose removal would join
    neighbours whose supports differ beyond :func:`~numkfs.model_selection.support_jump`, then
    those with the widest gap in log D to their neighbours."""
    keep = list(range(len(D)))
    fixed = set(protect) | {0, len(D) - 1}
    tiny = 1e-12 * max(D[-1], 1e-300)
    while len(keep) > n_max:
        best = None
        for q in range(1, len(keep) - 1):
            k = keep[q]
            if k in fixed:
                continue
            a, b = keep[q - 1], keep[q + 1]
            diff = int(np.count_nonzero(supports[a] != supports[b]))
            allowed = max(2.0, max(int(supports[a].sum()), int(supports[b].sum())) / 4.0)
            cost = (max(diff - allowed, 0.0), math.log((D[b] + tiny) / (D[a] + tiny)))
            if best is None or cost < best[0]:
                best = (cost, q)
        if best is None:  # only fixed points left: drop the non-protected ends, then protected ones
            drop = [q for q in (len(keep) - 1, 0) if keep[q] not in set(protect)] or [len(keep) - 1]
            keep.pop(drop[0])
            continue
        keep.pop(best[1])
    return np.array(keep, dtype=int)


def _stop_early(D, scores):
    """Whether the CV can no longer choose a point beyond the grid ``D``
    scored so far (see ``EARLY_STOP_*``)."""
    mean = np.nanmean(scores, axis=1)
    b = int(np.nanargmax(mean))
    if len(D) - 1 - b < EARLY_STOP_POINTS or D[-1] < EARLY_STOP_EXTENT * D[b]:
        return False
    s = scores[b][np.isfinite(scores[b])]
    se = float(np.std(s, ddof=1) / np.sqrt(s.size)) if s.size > 1 else 0.0
    return float(np.mean(mean[-EARLY_STOP_POINTS:])) < mean[b] - EARLY_STOP_SE * se


def l1kr_cv_path(X, y, kernel: str = "rbf", *, n_grid: int = 50, D_grid=None, cv=5, n_jobs=None,
                 random_state=None, D_scaling: str = "n", prune_tol: float = PRUNE_TOL, early_stopping: bool = True,
                 **path_kwargs) -> FeaturePath:
    r"""K-fold cross-validation of the L1KR path on a common grid of D.

    Every fold traces its own path (paths differ per fold); each is scored
    (negative test MSE) on the same grid of budgets D, interpolating along
    its own path with :func:`l1kr_path_at`.

    The default grid follows the events of the path on all of the data
    (the D where a feature enters or leaves, ``path.extra["events"]``):

    * it holds D = 0 and the D of the events, except an event whose
      neighbours' supports differ by no more than
      ``max(2, a quarter of the larger support)``;
    * between them, points spaced geometrically, at most ``n_grid / 10`` per
      decade of D (ratio ``10^(10 / n_grid)``), and two below the first
      event, so that the sparse end, where the supports change within a
      fraction of a decade, and the long stretches without events are both
      covered;
    * where the pruned models (``prune_tol``) of two consecutive points still
      differ in support by more than ``max(2, a quarter of the larger
      support)``, points are inserted in between (halving the interval in
      log D, up to ``REFINE_DEPTH`` times).

    The paths are traced in stages (budgets ``FIRST_STAGE_D · n`` times
    ``STAGE_GROWTH`` to the power k, each path resumed where it stopped) and
    each fold's path only as far as the grid reaches (``D · n_train / n``).
    With ``early_stopping`` tracing stops once the CV can no longer choose a
    further point: the mean CV score over the last ``EARLY_STOP_POINTS``
    points, beyond the best one and at least ``EARLY_STOP_EXTENT`` times its
    D, is below the best by more than ``EARLY_STOP_SE`` standard errors;
    otherwise it goes on to the stationary point of the path on all of the
    data (or ``D_max``).  The grid then holds at most ``n_grid`` points: where
    more were scored, points merge (the ones the CV rules choose, D = 0 and
    the last point are kept; of the others first those whose neighbours stay
    within the support step above, then those in the densest stretch of
    log D).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Target values.
    kernel : {"rbf", "poly"}
        ``"gaussian"`` is an alias of ``"rbf"``.
    n_grid : int, default=50
        Upper bound on the number of points of the default D grid (and its
        density, ``n_grid / 10`` points per decade between events).
    D_grid : array-like of shape (n_points,), optional
        Explicit grid of budgets ``||β||₁ >= 0`` (in the units of the
        full-data path), used as given; the paths are traced to its largest
        value (or ``D_max``), without early stopping.
    cv : int or splitter
        Number of cross-validation folds, or a scikit-learn splitter.
    n_jobs : int, optional
        joblib workers over folds (threads by default: the fold paths are
        resumed from stage to stage, which a process-based backend cannot
        do, so there each stage retraces them).
    random_state : int, optional
        Passed to the splitter (:func:`~numkfs.model_selection.make_cv`).
    D_scaling : {"n", "none"}
        How a fold's path is made comparable with the full-data path.
        Columns are centred and scaled to unit norm on the data each path is
        traced on, so a standardised value scales as ``1/sqrt(n)`` and the
        same kernel in the units of X has ``β ∝ n``; likewise the ridge
        problem on n rows with penalty λ is the one on 2n rows (every row
        twice) with 2λ.  With ``"n"`` (default) the fold's path (n_train
        rows) is traced with ``λ · n_train / n`` (``fix="lambda"``) or
        ``C · n / n_train`` (``fix="C"``) and read at ``D · n_train / n``:
        the problem and the budget equivalent to (λ, D) on the full-data
        path.  ``"none"`` traces every path with the same λ (or C) and reads
        it at the same D (before 2026-11: it chose D in the units of paths
        on (K-1)/K of the data and applied it to the full-data path, a
        kernel ~K/(K-1) times too wide).
    prune_tol : float, default=1e-3
        The model at each grid point drops the features it does not need
        (:func:`l1kr_prune`: together they lower the ridge objective by less
        than ``prune_tol`` of ``Σ (y - ȳ)²``), on the full-data path and on
        every fold's path alike, so the CV scores are those of the pruned
        models.  0 keeps every feature with β > 0 (before 2026-11).
    early_stopping : bool, default=True
        Stop tracing once the CV can no longer choose a further point (see
        above); False traces to the stationary point (or ``D_max``).
    **path_kwargs
        Passed to :func:`l1kr_path`.

    Returns
    -------
    FeaturePath
        On the D grid: interpolated β of the full-data path (pruned),
        ``cv_scores`` (n_points, n_folds) (higher is better), ``score_name``
        ``"neg_mean_squared_error"`` (in the squared units of y),
        ``extra["lambda"]``, ``extra["converged"]`` (per grid point: the
        full-data path reached it, between points that satisfy the KKT
        system to ``tol``), ``extra["full_path"]`` (the path traced on all
        of the data, as far as the CV needed it), ``extra["stopped_early"]``
        (tracing stopped before the stationary point or ``D_max``) and
        ``extra["fold_steps"]`` (continuation steps of each fold's path).

    See Also
    --------
    l1kr_path : the path on one data set.
    numkfs.estimators.L1KRRegressorCV : the estimator built on this.

    Examples
    --------
    >>> from numkfs.datasets import make_friedman_noise
    >>> from numkfs.methods.l1kr import l1kr_cv_path
    >>> X, y, _ = make_friedman_noise(1, n_samples=40, random_state=0)
    >>> cvp = l1kr_cv_path(X, y, lam=0.1, cv=2, n_grid=5, D_max=5.0, random_state=0)
    >>> cvp.cv_scores.shape[1], cvp.n_points <= 5
    (2, True)
    """
    from ...model_selection import choose_index, cross_val_path, make_cv

    X, y = check_X_y(X, y, caller="l1kr_cv_path")
    if D_scaling not in ("n", "none"):
        raise ValueError(f"l1kr_cv_path: D_scaling must be 'n' or 'none'; got {D_scaling!r}.")
    if not (isinstance(prune_tol, Real) and math.isfinite(prune_tol) and prune_tol >= 0):
        raise ValueError(f"l1kr_cv_path: prune_tol must be a finite float >= 0; got {prune_tol!r}.")
    if not (isinstance(n_grid, Integral) and not isinstance(n_grid, bool) and n_grid >= 2):
        raise ValueError(f"l1kr_cv_path: n_grid must be an int >= 2; got {n_grid!r}.")
    user_grid = D_grid is not None
    if user_grid:
        D_grid = np.asarray(D_grid, dtype=float)
        if D_grid.ndim != 1 or D_grid.size == 0 or not np.all(np.isfinite(D_grid)) or np.any(D_grid < 0):
            raise ValueError("l1kr_cv_path: D_grid must be a non-empty 1-D array of finite budgets >= 0; "
                             f"got {D_grid!r}.")
    path_kwargs = dict(path_kwargs)
    # the CV's resolution (see CV_TOL): what the paths it reads are traced to
    path_kwargs.setdefault("tol", CV_TOL)
    path_kwargs.setdefault("max_angle", CV_MAX_ANGLE)
    if "eps" in path_kwargs:
        path_kwargs["gradient_tol"] = _renamed_eps(path_kwargs.get("gradient_tol", 1e-6), path_kwargs.pop("eps"),
                                                   "l1kr_cv_path")
    full_sp = _StagedPath(X, y, kernel, path_kwargs)
    kernel = full_sp.args["kernel"]
    fix = full_sp.args["fix"]
    n_full = X.shape[0]
    fold_kwargs = {k: v for k, v in path_kwargs.items() if k not in ("feature_names", "true_support", "verbose")}
    # the folds, fixed once: every stage scores the same folds
    splits = list(make_cv(cv, y, classifier=False, random_state=random_state).split(X, y))
    splitter = _FixedSplits(splits)
    folds = {}  # per fold (its test rows): its staged path and the scores of the grid points read so far

    def fold_fn(train, test, grid, reach):
        r = len(train) / n_full
        key = test.tobytes()
        st = folds.get(key)
        if st is None:
            kw = dict(fold_kwargs)
            if D_scaling == "n":
                # the problem equivalent to the full-data one on n_train rows
                if fix == "lambda":
                    kw["lam"] = full_sp.args["lam"] * r
                else:
                    kw["C"] = full_sp.args["C"] / r
                if kw.get("D_max") is not None:
                    kw["D_max"] = kw["D_max"] * r
            st = folds[key] = {"path": _StagedPath(X[train], y[train], kernel, kw), "scores": {}}
        scale = r if D_scaling == "n" else 1.0
        if st["path"].advance(reach * scale):
            st["scores"].clear()  # the path turned back below where it had been read: read it again
        todo = np.array([D for D in grid if D not in st["scores"]])
        if todo.size:
            # columns are scaled to unit norm, so a standardised value is
            # ~ 1/sqrt(n): the same kernel (in the units of X) has β ∝ n.  The
            # grid is in the units of the full-data path; a fold's path is read
            # at the equivalent budget D·n_train/n (D_scaling="n").
            p = st["path"].path
            betas_f, lams_f, _ = _grid_models(p, todo * scale, prune_tol)
            with limit_threads(*thread_limits("l1kr", len(train))):
                pred = _predict_betas(p, X[test], betas_f, lams_f)
            for D, s in zip(todo, -((pred - y[test][None, :]) ** 2).mean(axis=1)):
                st["scores"][D] = float(s)
        return np.array([st["scores"][D] for D in grid])

    def score(grid, reach):
        return cross_val_path(lambda tr, te: fold_fn(tr, te, grid, reach), X, y, splitter, n_jobs=n_jobs,
                              prefer="threads", method="L1KR")

    stopped_early = False
    if user_grid:
        user_D_max = path_kwargs.get("D_max")
        reach = float(D_grid.max()) if user_D_max is None else float(user_D_max)
        reach = max(reach, 1e-12)
        full_sp.advance(reach)
        scores = score(D_grid, reach)
        betas, lams, used = _grid_models(full_sp.path, D_grid, prune_tol)
    else:
        ratio = 10.0 ** (10.0 / n_grid)
        models = {}  # D -> (β, λ, used) of the pruned model on the full-data path
        grid = []
        stage = FIRST_STAGE_D * n_full
        while True:
            turned = full_sp.advance(stage)
            full = full_sp.path
            reach = full_sp.reached
            if turned:  # the full-data path came back below where it had been read: read it again
                for D, m in zip(grid, zip(*_grid_models(full, np.array(grid), prune_tol))):
                    models[D] = m
            lo = grid[-1] if grid else 0.0
            if reach > lo or not grid:
                new = _new_grid_points(full, lo, reach, ratio) if reach > 0 else np.array([0.0])
                new = [D for D in new if D not in models]
                if new:
                    for D, m in zip(new, zip(*_grid_models(full, np.array(new), prune_tol))):
                        models[D] = m
                # refine the new stretch only (one that could not be refined stays so)
                grid = sorted(set(grid) | set(_refine(full, grid[-1:] + sorted(new), models, prune_tol)))
            scores = score(np.array(grid), reach)
            if full_sp.done or (early_stopping and _stop_early(np.array(grid), scores)):
                stopped_early = not full_sp.done
                break
            stage = max(stage, reach) * STAGE_GROWTH
        D_grid = np.array(grid)
        betas = np.array([models[D][0] for D in grid])
        lams = np.array([models[D][1] for D in grid])
        used = np.array([models[D][2] for D in grid])
        if D_grid.size > n_grid:
            probe = FeaturePath(grid=D_grid, weights=betas, cv_scores=scores)
            protect = {choose_index(probe, "best"), choose_index(probe, "1se")}
            keep = _merge_grid(D_grid, betas > 0, probe.mean_cv_score, protect, n_grid)
            D_grid, betas, lams, used, scores = D_grid[keep], betas[keep], lams[keep], used[keep], scores[keep]
    full = full_sp.path
    conv = full.extra["converged"]
    converged = conv[used[:, 0]] & conv[used[:, 1]]
    extra = {"lambda": lams, "full_path": full, "converged": converged, "user_grid": user_grid,
             "prune_tol": float(prune_tol), "stopped_early": stopped_early,
             "fold_steps": [int(st["path"].path.extra["n_steps"]) for st in folds.values()]}
    for key in ("X_train", "y_train", "x_mean", "x_scale", "y_mean", "y_scale", "kernel", "degree", "fix",
                "lam_fixed", "C_fixed"):
        extra[key] = full.extra[key]
    out = FeaturePath(grid=D_grid, weights=betas, grid_name="D", feature_names=full.feature_names,
                      method="L1KR (CV grid)", cv_scores=scores, extra=extra, true_support=full.true_support,
                      tol=0.0)
    _set_contract_fields(out, score_name="neg_mean_squared_error", converged=converged)
    return out
