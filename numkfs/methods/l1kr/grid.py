"""The D grids of an L1KR path: the path traced in stages, the default grid
that follows its events (``l1kr_path(n_grid=...)``) and the path read at a
grid (``l1kr_path(grid=...)``), the model at each grid point pruned."""
from __future__ import annotations

import math

import numpy as np

from ..._threads import limit_threads
from ...model_selection import support_jump
from ...paths import FeaturePath
from .evaluate import _grid_models, _path_at
from .tracker import _l1kr_trace, _set_contract_fields

#: KKT tolerance and largest tangent angle of the paths :class:`~numkfs.L1KRRegressorCV`
#: traces (on all the rows and in every fold) (``l1kr_path``'s defaults are 1e-10 and 0.15).  The CV
#: reads each path at its grid points by linear interpolation between
#: stored points, whose error (the chord against the arc, about
#: ``h θ / 8`` for a step h turning by θ) is 1e-4 to 1e-3 of β on the 200 x 50
#: problem of ``benchmarks/busy.py`` at either setting; a KKT residual of 1e-8
#: moves β by about 1e-7 of itself there, far below it and below what the
#: fold scores resolve.  ``tests/methods/test_l1kr.py`` checks the CV's paths against
#: a tight trace at the grid points, at fewer evaluations than the defaults.
CV_TOL, CV_MAX_ANGLE = 1e-8, 0.3

#: Budget D of the first stage of the tracing of the default grid (``n_grid``), per row
#: of the data (β of the same kernel grows like n, see :class:`~numkfs.L1KRRegressorCV`).
FIRST_STAGE_D = 1e-4

#: Growth of the budget from one stage of the tracing of the default grid (``n_grid``) to
#: the next (the paths resume where they stopped, so stages cost only the
#: point at each stage's end).
STAGE_GROWTH = math.sqrt(10.0)

#: Halvings (in log D) of an interval of the default grid whose end points'
#: supports differ by more than :func:`~numkfs.model_selection.support_jump` allows.
REFINE_DEPTH = 4


class _StagedPath:
    """An L1KR path traced in stages of increasing ``D_max``
    (:func:`_l1kr_trace` resumed at each stage's end).

    ``path`` is the path traced so far, ``reached`` the largest D it has
    reached, ``done`` whether it can go no further (stationary point,
    ``D_max`` of the user, or a tracker limit).  ``args`` are the arguments
    of :func:`_l1kr_trace` (from :func:`~numkfs.methods.l1kr.path._path_arguments`),
    ``D_cap`` the largest D it may reach (None: no cap).  Pickled without the
    running tracer: resumed after unpickling, it retraces from β = 0."""

    def __init__(self, args, limits, D_cap):
        import inspect

        self.limits = limits
        self.args = dict(zip(inspect.signature(_l1kr_trace).parameters, args))
        self.D_cap = D_cap
        self.gen = self.path = None
        self.done = False

    def __getstate__(self):
        return dict(self.__dict__, gen=None, path=None, done=False)

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


def _gridded(full, D_grid, betas, lams, used, *, user_grid, prune_tol, stopped_early, trace=None, read=None):
    """The FeaturePath of a path read at a grid (see :func:`l1kr_path`)."""
    conv = full.extra["converged"]
    converged = conv[used[:, 0]] & conv[used[:, 1]]
    extra = {"lambda": lams, "full_path": full, "converged": converged, "user_grid": user_grid,
             "prune_tol": float(prune_tol), "stopped_early": stopped_early, "used": used}
    if trace is not None:
        extra["trace"] = trace
        extra["read"] = np.ones(D_grid.size, dtype=bool) if read is None else read
    for key in ("X_train", "y_train", "x_mean", "x_scale", "y_mean", "y_scale", "kernel", "degree", "fix",
                "lam_fixed", "C_fixed"):
        extra[key] = full.extra[key]
    out = FeaturePath(grid=D_grid, weights=betas, grid_name="D", feature_names=full.feature_names,
                      method="L1KR (grid)", extra=extra, true_support=full.true_support, tol=0.0)
    _set_contract_fields(out, converged=converged)
    return out


def _read_grid(args, limits, D_grid, D_max, prune_tol, resume):
    """``l1kr_path(grid=...)``: the path traced to ``D_max`` (default: the
    grid's largest value) and read at ``D_grid``; with ``resume`` (an earlier
    such path on the same data) its trace is continued and only the grid
    points it did not read are read (all of them where the path turned back
    below the D it had reached)."""
    reach = float(D_grid.max()) if D_max is None else float(D_max)
    reach = max(reach, 1e-12)
    prev = None
    if resume is not None:
        trace = resume.extra["trace"]
        if trace.path is not None:
            prev = resume
    else:
        trace = _StagedPath(args, limits, None)
    turned = trace.advance(reach)
    full = trace.path
    read = np.ones(D_grid.size, dtype=bool)
    n = D_grid.size
    betas, lams, used = np.empty((n, full.weights.shape[1])), np.empty(n), np.empty((n, 2), dtype=int)
    if prev is not None and not turned:
        old = {float(D): k for k, D in enumerate(prev.grid)}
        for k, D in enumerate(D_grid):
            j = old.get(float(D))
            if j is not None:
                betas[k], lams[k], used[k] = prev.weights[j], prev.extra["lambda"][j], prev.extra["used"][j]
                read[k] = False
    if read.any():
        betas[read], lams[read], used[read] = _grid_models(full, D_grid[read], prune_tol)
    return _gridded(full, D_grid, betas, lams, used, user_grid=True, prune_tol=prune_tol, stopped_early=False,
                    trace=trace, read=read)


def _event_grid(args, limits, D_max, n, n_grid, prune_tol, stop, keep):
    """``l1kr_path(n_grid=...)``: the path traced in stages (to ``D_max`` at
    most), read on the grid that follows its events (see :func:`l1kr_path`);
    ``n`` rows."""
    full_sp = _StagedPath(args, limits, D_max)
    ratio = 10.0 ** (10.0 / n_grid)
    models = {}  # D -> (β, λ, used) of the pruned model on the full-data path
    grid = []
    stage = FIRST_STAGE_D * n
    stopped = False
    while True:
        turned = full_sp.advance(stage)
        full = full_sp.path
        reach = full_sp.reached
        if turned:  # the path came back below where it had been read: read it again
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
        if stop is not None:
            stopped = bool(stop(np.array(grid), reach))
        if full_sp.done or stopped:
            break
        stage = max(stage, reach) * STAGE_GROWTH
    D_grid = np.array(grid)
    betas = np.array([models[D][0] for D in grid])
    lams = np.array([models[D][1] for D in grid])
    used = np.array([models[D][2] for D in grid])
    if D_grid.size > n_grid:
        protect = set() if keep is None else {int(i) for i in keep(D_grid, betas)}
        kept = _merge_grid(D_grid, betas > 0, None, protect, n_grid)
        D_grid, betas, lams, used = D_grid[kept], betas[kept], lams[kept], used[kept]
    return _gridded(full_sp.path, D_grid, betas, lams, used, user_grid=False, prune_tol=prune_tol,
                    stopped_early=stopped and not full_sp.done)
