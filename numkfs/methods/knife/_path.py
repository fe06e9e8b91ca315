"""The KNIFE feature path over λ2 (paper Algorithm 2) and the one-vs-rest paths
on one shared grid (:mod:`numkfs.methods.knife`): the default grid's top,
the warm-started walk with its refinement, and the path's record."""
from __future__ import annotations

import numpy as np

from ..._preprocessing import ResponseUnits
from ..._progress import progress_bar
from ..._threads import method_threads
from ..._constraints import declares
from ..._validation import check_random_state, warn_not_converged
from ...model_selection import refine_walk
from ...paths import SELECTION_TOL, FeaturePath, support_mask
from ._fit import _best_start, _starts
from ._input import _prepare
from ._problem import AUTO_EXTEND_MAX, KNIFE_CONSTRAINTS, _FitState

def _lambda2_top(model, st):
    """Smallest λ2 at which the w-step from the state ``st`` returns w = 0."""
    if not np.any(st.w > 0):
        return 0.0
    act, A, u0, c = model.wstep_data(st.K, st.alpha, st.a0, st.w, 0.0)
    g0 = A.T @ model.loss.gradient(model.y, u0) + c
    return max(0.0, float(np.max(-g0)))


def _lambda2_floor(model, st, tol):
    r"""A λ2 below which no fit warm-started from the state ``st`` (a fit at λ2 = 0) zeroes every weight.

    A fit never increases its objective, so one at λ2 that ends at w = 0
    has :math:`F(0) \le f(st) + \lambda_2 \sum_j w_j`, with :math:`F(0)`
    the objective of the constant kernel (the α-step at w = 0, which does
    not depend on λ2): λ2 is at least :math:`(F(0) - f(st)) / \sum_j w_j`.
    Returned a little below that (the α-step at w = 0 is solved to its
    tolerance, the fits' objectives compared in floating point); 0 when
    ``st`` has no weight."""
    total = float(st.w.sum())
    if total <= 0.0:
        return 0.0
    zero = model.fit(np.zeros_like(st.w), 0.0, alpha=st.alpha, a0=st.a0, max_iter=1, tol=tol, polish=False)
    slack = 1e-8 * max(1.0, abs(zero.objective), abs(st.objective))
    return max(0.0, (zero.objective - st.objective - slack) / total)


#: At most this many doublings of the top search (the last value is returned unverified).
_TOP_DOUBLINGS = 60


def _find_top(model, st, max_iter, tol):
    """λ2 at which every weight is zero, from the state ``st`` (see the module docstring).

    The linearised top :func:`_lambda2_top` doubled until the warm-started
    fit zeroes every weight; the doublings that stay below
    :func:`_lambda2_floor` (whose fits cannot zero every weight) are skipped
    without a fit: the same top, without the fits that fail by
    construction (on unstandardised wide data the linearised top is of the
    size of round-off, far below the answer).  A linearised
    top of exactly 0 while weights are non-zero (every kernel derivative
    zero: rows so far apart that the kernel is the identity) starts the
    search at the floor (1 when the floor is 0 too), verified as any other
    start; 1 is returned unchecked only when ``st`` has no weight."""
    if not np.any(st.w > 0):
        return 1.0
    top = _lambda2_top(model, st)
    floor = _lambda2_floor(model, st, tol)
    if top <= 0:
        top = floor if floor > 0 else 1.0
    skipped = 0
    while skipped < _TOP_DOUBLINGS and top < floor:
        top *= 2.0  # exact in floating point: the values the fits below would have been probed at
        skipped += 1
    for _ in range(_TOP_DOUBLINGS - skipped):  # verify: the warm-started fit at `top` must zero every weight
        probe = model.fit(st.w, top, alpha=st.alpha, a0=st.a0, max_iter=max_iter, tol=tol, K=st.K)
        if not np.any(probe.w > 0):
            break
        top *= 2.0
    return top


#: Defaults of the fitting keywords of :func:`knife` (shared with :func:`knife_lambda2_max`).
_FIT_DEFAULTS = dict(kernel="rbf", loss="squared", lambda1=1.0, gamma=None, degree=2, coef0=1.0, delta=1.0,
                     n_restarts=1, solver="auto", max_iter=100, tol=1e-6, approximation="exact", n_components=None)


def knife_lambda2_max(X, y, *, random_state=None, **params) -> float:
    r"""The top of the default λ2 grid of :func:`knife_path` (found, not guessed).

    KNIFE is fitted at λ2 = 0; the smallest λ2 for which the linearised
    w-step at that solution returns w = 0 is :math:`\max_k -\partial_k S(0)`
    (the KKT condition of the surrogate at 0); it is verified by a
    warm-started fit and doubled until every weight is zero.

    Parameters
    ----------
    X, y, random_state
        As in :func:`knife`.
    **params
        The fitting keywords of :func:`knife` (kernel, loss, lambda1, gamma,
        degree, coef0, delta, n_restarts, solver, max_iter, tol).
    """
    caller = "knife_lambda2_max"
    unknown = sorted(set(params) - set(_FIT_DEFAULTS))
    if unknown:
        raise TypeError(f"{caller} got unexpected keyword argument(s) {unknown}; "
                        f"it accepts {sorted(_FIT_DEFAULTS)} and random_state.")
    params = {**_FIT_DEFAULTS, **params}
    X, y_pm, classes, const, model, public = _prepare(X, y, {**params, "random_state": random_state}, caller)
    rng = check_random_state(random_state)
    with method_threads("knife", X.shape[0], blas_in_threads=False):
        st, _ = _best_start(model, _starts(rng, X.shape[1], const, params["n_restarts"], None), 0.0,
                            params["max_iter"], params["tol"])
        return float(_find_top(model, st, params["max_iter"], params["tol"])) * model.y_scale**2


def _zero_state(st, lambda2):
    """The fit at ``lambda2`` warm-started from a state whose weights are all zero.

    With every weight zero the kernel no longer depends on w, the w-step
    returns w = 0 (zeros are sticky) and the α-step from the previous
    (optimal) α returns it: the fit would reproduce ``st`` (the λ2 term is
    λ2 · 0).  No iteration is run (``n_iter = 0``)."""
    return _FitState(w=st.w.copy(), alpha=st.alpha.copy(), a0=st.a0, K=st.K, objective=st.objective, n_iter=0,
                     converged=True, n_line_searches=0, history=[st.objective], gamma=st.gamma)


class _PathRecorder:
    """The per-point arrays of a KNIFE path."""

    def __init__(self):
        self.grid, self.rows, self.alphas, self.a0s, self.objs, self.iters, self.conv, self.gammas = (
            [] for _ in range(8))
        self.n_inserted = 0

    def drop_first(self):
        """Without the first point (a walk continued from it records it again)."""
        for name in ("grid", "rows", "alphas", "a0s", "objs", "iters", "conv", "gammas"):
            del getattr(self, name)[0]

    def add(self, lam, st):
        self.gammas.append(st.gamma)
        self.grid.append(float(lam))
        self.rows.append(st.w.copy())
        self.alphas.append(st.alpha.copy())
        self.a0s.append(st.a0)
        self.objs.append(st.objective)
        self.iters.append(st.n_iter)
        self.conv.append(st.converged)


def _walk(models, starts, grid, *, max_iter, tol, stop_at_zero=False, bar=None, max_refine=0,
          extend_to_zero=False, stop=None):
    """Warm-started fits along ``grid`` of one or several problems (one-vs-rest) on the same grid;
    ``starts[k]`` is problem k's fit at ``grid[0]``.  Returns one :class:`_PathRecorder` per problem.

    ``max_refine``: at most this many points inserted where the support (of
    all problems together) jumps (:func:`numkfs.model_selection.refine_walk`).
    ``extend_to_zero``: a path still selecting features at the end of the
    grid is continued by doubling λ2 (at most :data:`AUTO_EXTEND_MAX` times)
    until every weight is zero (``gamma="auto"``, whose top moves with the
    bandwidth).  ``stop(grid) -> bool``: called after every point but the
    first with the λ2 values walked so far (the continuation included); True
    ends the walk there."""

    last = {"from": None}
    stopped = []

    def check(values, states):
        if stop is not None and stop(np.asarray(values, dtype=float)):
            stopped.append(True)
            return True
        return False

    def release(states):
        """A walk steps only from its last accepted point (or again from the same one, to insert
        a point before a jump): the kernels of the points it has left are dropped, so that one
        n x n kernel per problem is held for the previous point, not one per grid point."""
        if last["from"] is not None and last["from"] is not states:
            for state in last["from"]:
                state.K = None
        last["from"] = states

    def step(states, lam):
        release(states)
        new = []
        for model, state in zip(models, states):
            if model.fast and not np.any(state.w > 0):
                new.append(_zero_state(state, lam))
            else:
                new.append(model.refit(state, lam, max_iter=max_iter, tol=tol))
        if bar is not None:
            bar.update(1)
        return new

    def support(states):
        return np.any([support_mask(state.w, SELECTION_TOL["knife"]) for state in states], axis=0)

    def all_zero(states):
        return not any(np.any(state.w > 0) for state in states)

    values, states, n_in = refine_walk(step, grid, list(starts), support=support, max_inserted=max_refine,
                                       stop=all_zero if stop_at_zero else None, check=check)
    if extend_to_zero and not stopped and not all_zero(states[-1]) and values[-1] > 0:
        more = values[-1] * 2.0 ** np.arange(0, AUTO_EXTEND_MAX + 1)
        walked = list(values)
        v2, s2, n2 = refine_walk(step, more, states[-1], support=support, max_inserted=max_refine - n_in,
                                 stop=all_zero, check=lambda v, s: check(walked + v[1:], None))
        values, states, n_in = values + v2[1:], states + s2[1:], n_in + n2
    recs = []
    for k in range(len(models)):
        rec = _PathRecorder()
        for lam, point in zip(values, states):
            rec.add(lam, point[k])
        rec.n_inserted = n_in
        rec.last = states[-1][k]  # where a walk in stages goes on from (KNIFEGridWalk)
        recs.append(rec)
    return recs


#: ``lambda_min_ratio="auto"``: 1e-3 on up to this many rows, ``1e-3 * AUTO_MIN_RATIO_ROWS / n`` on more.
AUTO_MIN_RATIO_ROWS = 10_000


def lambda_min_ratio_for(lambda_min_ratio, n_samples):
    """The default grid's smallest positive λ2 as a fraction of its top.

    A number is returned as it is; ``"auto"`` is 1e-3 on up to
    :data:`AUTO_MIN_RATIO_ROWS` rows and ``1e-3 * AUTO_MIN_RATIO_ROWS /
    n_samples`` on more.  The loss is a sum over the rows, so the top (the
    λ2 that zeroes every weight) grows in proportion to n, while the λ2
    that removes the noise features grows more slowly: on the sinusoid
    simulation (5 true features of 20, a Nyström basis) the CV chose 1e-3
    of the top at 10^4 rows, 1e-4 at 10^5 and 3e-5 to 7e-5 at 10^6 (through
    a subsample).  A fixed fraction leaves that point below the grid as n
    grows; ``"auto"`` keeps it inside.

    Parameters
    ----------
    lambda_min_ratio : float in (0, 1) or "auto"
        The fraction, or ``"auto"``.
    n_samples : int
        The rows of the problem the grid is for.

    Returns
    -------
    float

    Examples
    --------
    >>> from numkfs.methods.knife import lambda_min_ratio_for
    >>> lambda_min_ratio_for("auto", 300), lambda_min_ratio_for("auto", 100_000), lambda_min_ratio_for(0.01, 10**6)
    (0.001, 0.0001, 0.01)
    """
    if isinstance(lambda_min_ratio, str):
        return 1e-3 * min(1.0, AUTO_MIN_RATIO_ROWS / max(int(n_samples), 1))
    return float(lambda_min_ratio)


def _default_grid(top, n_grid, lambda_min_ratio, n_samples):
    """0, then ``n_grid - 1`` log-spaced values ending at ``top`` (just ``top`` when n_grid = 2), the
    smallest :func:`lambda_min_ratio_for` ``(lambda_min_ratio, n_samples)`` times ``top``."""
    if n_grid == 2:
        return np.array([0.0, top])
    ratio = lambda_min_ratio_for(lambda_min_ratio, n_samples)
    return np.concatenate([[0.0], np.geomspace(ratio * top, top, n_grid - 1)])


def _checked_grid(grid, caller):
    """A λ2 grid given by the caller, as a flat float array; a clear error unless it is non-empty,
    non-decreasing and of finite values >= 0."""
    grid = np.asarray(grid, dtype=float).ravel()
    if grid.size == 0 or np.any(~np.isfinite(grid)) or np.any(grid < 0) or np.any(np.diff(grid) < 0):
        raise ValueError(f"{caller}: grid must be a non-empty, non-decreasing array of finite values >= 0.")
    return grid


def _warn_path_not_converged(rec, max_iter, units, label="KNIFE"):
    bad = [lam for lam, c in zip(units.to_user(rec.grid), rec.conv) if not c]
    if bad:
        shown = ", ".join(f"{v:.4g}" for v in bad[:5]) + (", ..." if len(bad) > 5 else "")
        warn_not_converged(label, max_iter=max_iter, stacklevel=4,
                           where=f"{len(bad)} of {len(rec.grid)} path points (lambda2={shown})")


def _to_path(rec, units, *, top, public, classes, feature_names, true_support):
    """The recorded walk as a :class:`~numkfs.paths.FeaturePath`, in the user's units (``units``:
    :class:`~numkfs._preprocessing.ResponseUnits`; α and the intercept times y's scale, λ2 and the objective times its square)."""
    s = units.scale
    extra = {"alpha": np.asarray(rec.alphas) * s, "intercept": np.asarray(rec.a0s) * s,
             "n_iter": np.asarray(rec.iters), "converged": np.asarray(rec.conv, dtype=bool),
             "lambda2_top": float(top) * units.s2, "params": public,
             "classes": classes, "gamma": np.asarray(rec.gammas, dtype=float), "n_inserted": int(rec.n_inserted)}
    path = FeaturePath(grid=units.to_user(rec.grid), weights=np.asarray(rec.rows), grid_name="lambda2",
                       feature_names=feature_names, objective=np.asarray(rec.objs) * units.s2, method="KNIFE",
                       extra=extra, true_support=true_support, converged=extra["converged"])
    return path


@declares(KNIFE_CONSTRAINTS, data=("X", "y", "feature_names", "true_support"))
def knife_path(
    X,
    y,
    *,
    kernel: str = "rbf",
    loss: str = "squared",
    lambda1: float = 1.0,
    grid=None,
    n_grid: int = 100,
    lambda_min_ratio: float | str = "auto",
    max_refine: int | None = None,
    gamma: float | str | None = None,
    degree: int = 2,
    coef0: float = 1.0,
    delta: float = 1.0,
    n_restarts: int = 1,
    solver="auto",
    max_iter: int = 100,
    tol: float = 1e-6,
    stop_at_zero: bool = False,
    stop=None,
    feature_names=None,
    true_support=None,
    random_state=None,
    verbose: bool = False,
    approximation: str = "exact",
    n_components: int | None = None,
) -> FeaturePath:
    r"""KNIFE feature path (paper Algorithm 2): λ2 from 0 upward with warm starts.

    The problem of :func:`knife` is solved for a grid of λ2 at fixed λ1,
    each point warm-started from the previous one; zero weights stay zero
    (sticky), so features only leave the model.  Once every weight is zero
    the remaining points are that same model (the fit would reproduce it;
    it is copied, with ``n_iter`` 0).

    Parameters
    ----------
    X, y, kernel, loss, lambda1, degree, coef0, delta, solver, max_iter, tol
        As in :func:`knife`.
    gamma : float, "auto" or None, default=None
        RBF scale: a number is used at every point; None is 1/p (p every
        column of X); ``"auto"`` follows the selected features: each point
        is fitted with 1 / (the number of features selected at its warm
        start, the previous point); the first point is :func:`knife`'s
        single fit under ``"auto"`` (from 1/p, refitted at the scale of its
        selected features until that no longer changes).  The scale of
        each point is in ``extra["gamma"]``.
    grid : array, optional
        Increasing λ2 values; the path has one point per value.  Default:
        0 then ``n_grid - 1`` log-spaced values from
        ``lambda_min_ratio * top`` to ``top``, where ``top`` is found (the
        smallest λ2 at which the warm-started fit from the λ2 = 0 solution
        zeroes every weight, see the module docstring), refined where the
        support jumps (``max_refine``).  Warm starts along the path can keep
        a feature slightly beyond ``top`` (the problem is not convex); the
        path then ends with non-zero weights, except with ``gamma="auto"``,
        whose path continues by doubling λ2 (at most
        :data:`AUTO_EXTEND_MAX` times) until every weight is zero.
    n_grid : int, default=100
        Number of points of the default grid before refinement.
    lambda_min_ratio : float in (0, 1) or "auto", default="auto"
        Smallest positive λ₂ of the default grid as a fraction of ``top``;
        ``"auto"``: 1e-3 on up to 10^4 rows, 10 / n on more (``top`` grows
        in proportion to n, the λ2 that removes the noise features more
        slowly; :func:`lambda_min_ratio_for`).
    max_refine : int, optional
        At most this many points are inserted into the default grid where
        two consecutive points' supports differ by more than ``max(2, a
        quarter of the larger)`` features
        (:func:`numkfs.model_selection.refine_walk`); default
        ``n_grid``, so a default path has at most ``2 * n_grid``
        points (plus the continuation of ``gamma="auto"``).  0 keeps the
        grid as it is.  A given ``grid`` is never refined.
    n_restarts : int
        Starts at the first grid point: w = 1 (every feature in), then
        ``n_restarts - 1`` random ones; the best starts the path.
    stop_at_zero : bool, default=False
        End the path at the first point where every weight is zero (fewer
        points than the grid).
    stop : callable, optional
        ``stop(grid) -> bool``, called after every point but the first with
        the λ2 values of the points walked so far (an array; they are
        final, inserted points included): True ends the path there.  The KNIFE CV
        estimators stop their full-data path once their folds can no longer
        choose a later point (``early_stopping``).
    feature_names, true_support : optional
        Stored on the path (plots highlight the true support); feature names
        default to the columns of a DataFrame X.
    random_state : int, Generator or None
        Seed or generator for everything random; an int makes the result reproducible.
    verbose : bool
        A tqdm progress bar over the grid.
    approximation, n_components
        As in :func:`knife` (one set of landmarks for the whole path).

    Returns
    -------
    FeaturePath
        ``grid_name="lambda2"``, ``objective`` per point and in ``extra``:
        ``alpha`` (n_points, n), ``intercept``, ``n_iter``, ``converged``
        (bool per point; a point that stopped at ``max_iter`` also raises a
        ``ConvergenceWarning``), ``lambda2_top`` and ``params`` (kernel and
        loss settings).

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.

    Examples
    --------
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs.methods.knife import knife_path
    >>> X, y, support = make_sinusoid(n_samples=60, random_state=0)
    >>> path = knife_path(X, y, n_grid=10, random_state=0)
    >>> path.n_points
    10
    """
    caller = "knife_path"
    params = dict(kernel=kernel, loss=loss, lambda1=lambda1, gamma=gamma, degree=degree, coef0=coef0,
                  delta=delta, n_restarts=n_restarts, max_iter=max_iter, tol=tol, solver=solver,
                  n_grid=n_grid, lambda_min_ratio=lambda_min_ratio, max_refine=max_refine,
                  approximation=approximation, n_components=n_components, random_state=random_state)
    if feature_names is None and hasattr(X, "columns"):  # a DataFrame names its features
        feature_names = [str(c) for c in X.columns]
    X, y_pm, classes, const, model, public = _prepare(X, y, params, caller)
    rng = check_random_state(random_state)
    user_grid = grid is not None
    if user_grid:
        grid = _checked_grid(grid, caller)
    units = ResponseUnits(model.y_scale, grid)
    with method_threads("knife", X.shape[0], blas_in_threads=False):
        values = units.to_model(grid) if user_grid else None  # λ2 in the model's units
        st, _ = _best_start(model, _starts(rng, X.shape[1], const, n_restarts, None),
                            values[0] if user_grid else 0.0, max_iter, tol)
        top = np.nan
        if not user_grid:
            top = _find_top(model, st, max_iter, tol)
            values = _default_grid(top, n_grid, lambda_min_ratio, X.shape[0])
        bar = progress_bar(len(values), desc="KNIFE path", unit="λ2", show=bool(verbose))
        bar.update(1)
        refine = 0 if user_grid else (n_grid if max_refine is None else int(max_refine))
        rec, = _walk([model], [st], values, max_iter=max_iter, tol=tol, stop_at_zero=stop_at_zero,
                     bar=bar, max_refine=refine, extend_to_zero=not user_grid and model.gamma_rule is not None,
                     stop=None if stop is None else (lambda values: stop(units.to_user(values))))
        bar.close()
    _warn_path_not_converged(rec, max_iter, units)
    public["lambda2"] = None
    return _to_path(rec, units, top=top, public=public, classes=classes, feature_names=feature_names,
                    true_support=true_support)


class KNIFEGridWalk:
    """:func:`knife_path` on a grid you give, walked in stages.

    :meth:`walk` fits the points of ``grid`` before a given index that are
    not fitted yet, each warm-started from the one before (the first from
    :func:`knife_path`'s starts, drawn from ``random_state`` as it draws
    them).  The points are those of ``knife_path(X, y, grid=grid, ...)``,
    whatever the stages: the same fits from the same states.  The KNIFE CV
    estimators walk their folds so, to stop once no later point can be
    chosen (``early_stopping``).

    Parameters
    ----------
    X : array (n, p)
        Data, as in :func:`knife_path`.
    y : array (n,)
        Response or two class labels, as in :func:`knife_path`.
    grid : array
        The λ2 values, non-decreasing, walked as given (no refinement).
    feature_names : list of str, optional
        Names of the columns, for the paths.
    random_state : int, Generator or None
        As in :func:`knife_path`.
    gamma_restart : bool, default=True
        With ``gamma="auto"``, the restart of the first point's scale
        search as in :func:`knife` (False: the rounds alone, as
        :func:`knife_ovr_paths` fits one-vs-rest problems).
    start : tuple (w, gamma), optional
        The first point's fit starts from the weights ``w`` (in [0, 1];
        a zero weight stays zero) at the rbf scale ``gamma`` (with
        ``gamma="auto"`` its rounds go on from there; otherwise ignored),
        instead of :func:`knife_path`'s starts.
    **params
        The fitting keywords of :func:`knife` (kernel, loss, lambda1,
        gamma, degree, coef0, delta, n_restarts, solver, max_iter, tol,
        approximation, n_components).

    Attributes
    ----------
    done : int
        The number of points fitted so far.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs.methods.knife import KNIFEGridWalk, knife_path
    >>> X, y, _ = make_sinusoid(n_samples=40, random_state=0)
    >>> grid = [0.0, 1.0, 10.0, 100.0]
    >>> walk = KNIFEGridWalk(X, y - y.mean(), grid, random_state=0)
    >>> first, rest = walk.walk(2), walk.walk(4)
    >>> whole = knife_path(X, y - y.mean(), grid=grid, random_state=0)
    >>> bool(np.array_equal(np.vstack([first.weights, rest.weights]), whole.weights))
    True
    """

    def __init__(self, X, y, grid, *, feature_names=None, random_state=None, gamma_restart=True, start=None,
                 **params):
        unknown = sorted(set(params) - set(_FIT_DEFAULTS))
        if unknown:
            raise TypeError(f"KNIFEGridWalk got unexpected keyword argument(s) {unknown}.")
        self.params = {**_FIT_DEFAULTS, **params, "random_state": random_state}
        self.grid = _checked_grid(grid, "KNIFEGridWalk")
        self.X, _, self.classes, self.const, self.model, self.public = _prepare(X, y, self.params, "knife_path")
        self._units = ResponseUnits(self.model.y_scale, self.grid)
        self.public["lambda2"] = None
        self.rng = check_random_state(random_state)
        self.feature_names = feature_names
        self.gamma_restart = bool(gamma_restart)
        self.start = None if start is None else (np.asarray(start[0], dtype=float), float(start[1]))
        self.done = 0
        self._last = None

    def extend(self, grid):
        """Walk a longer grid from here on: ``grid`` must begin with the current one.

        For a grid that grows while it is walked (the KNIFE CV estimators'
        folds follow the full-data path as it is walked).

        Parameters
        ----------
        grid : array
            The λ2 values, non-decreasing; its first values are the current
            grid's.
        """
        grid = _checked_grid(grid, "KNIFEGridWalk")
        if grid.size < self.grid.size or not np.array_equal(grid[:self.grid.size], self.grid):
            raise ValueError("KNIFEGridWalk.extend: the new grid must begin with the current one "
                             f"({self.grid.size} values).")
        self.grid = grid
        self._units = ResponseUnits(self.model.y_scale, grid)

    def walk(self, end):
        """Fit the points before index ``end`` not fitted yet.

        Parameters
        ----------
        end : int
            One past the last point to fit (at most the grid's length).

        Returns
        -------
        FeaturePath or None
            The new points only; None when there are none.
        """
        end = min(int(end), self.grid.size)
        if end <= self.done:
            return None
        max_iter, tol = self.params["max_iter"], self.params["tol"]
        grid = self._units.to_model(self.grid)
        with method_threads("knife", self.X.shape[0], blas_in_threads=False):
            if self._last is None:
                w0 = None
                if self.start is not None:
                    w0 = self.start[0]
                    if self.model.gamma_rule is not None:
                        self.model.gamma = self.start[1]
                start, _ = _best_start(self.model, _starts(self.rng, self.X.shape[1], self.const,
                                                           self.params["n_restarts"], w0),
                                       grid[0], max_iter, tol, restart=self.gamma_restart)
                rec, = _walk([self.model], [start], grid[:end], max_iter=max_iter, tol=tol)
            else:
                rec, = _walk([self.model], [self._last], grid[self.done - 1:end], max_iter=max_iter, tol=tol)
                rec.drop_first()
        self._last, self.done = rec.last, end
        _warn_path_not_converged(rec, max_iter, self._units)
        return _to_path(rec, self._units, top=np.nan, public=dict(self.public), classes=self.classes,
                        feature_names=self.feature_names, true_support=None)


def knife_ovr_paths(X, targets, *, grid=None, n_grid: int = 100, lambda_min_ratio: float | str = "auto",
                    max_refine: int | None = None, stop=None, feature_names=None, random_state=None,
                    gamma_restart: bool = False, **params) -> list:
    r"""KNIFE paths of several binary problems on the same X on one shared λ2 grid (one-vs-rest).

    Default grid: as in :func:`knife_path`, with ``top`` the largest of the
    problems' tops; each problem's λ2 = 0 fit (from its own start, drawn
    from a fresh ``random_state``, as :func:`knife_path` draws it) is
    computed once and used both for its top and as the path's first point;
    the grid is refined where the support of all problems together (a
    feature selected by any of them) jumps, and walked by every problem.
    The result is the list ``[knife_path(X, t, grid=grid, ...) for t
    in targets]`` without refitting the λ2 = 0 points, and with
    ``gamma="auto"`` without the restart of :func:`knife`'s scale search
    by default (``gamma_restart``).

    Parameters
    ----------
    X : array (n, p)
        Data, one row per sample and one column per feature.
    targets : list of arrays (n,)
        Two-class labels of each problem (e.g. ±1 for one class against
        the rest).
    grid : array, optional
        A shared grid (then nothing is shared but the data).
    n_grid, lambda_min_ratio, max_refine, feature_names, random_state
        As in :func:`knife_path`.
    stop : callable, optional
        As in :func:`knife_path`, on the shared grid: every problem's path
        ends at the same point.  Only with the default grid.
    gamma_restart : bool, default=False
        With ``gamma="auto"``, each problem's λ2 = 0 scale search restarts
        as in :func:`knife` (True), or settles by its rounds alone (False).
        False by default: on many-class data the restart costs a share of
        the fit and moves the selection of a few one-vs-rest λ2 = 0 fits by
        one or two features.
    **params
        The fitting keywords of :func:`knife` (``loss`` a classification loss).

    Returns
    -------
    list of FeaturePath

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs.methods.knife import knife_ovr_paths
    >>> X, _, _ = make_sinusoid(n_samples=45, random_state=0)
    >>> labels = np.arange(45) % 3
    >>> targets = [np.where(labels == k, 1.0, -1.0) for k in range(3)]
    >>> paths = knife_ovr_paths(X, targets, loss="squared_hinge", n_grid=4, max_refine=0, random_state=0)
    >>> [p.n_points for p in paths], bool(np.array_equal(paths[0].grid, paths[2].grid))
    ([4, 4, 4], True)
    """
    caller = "knife_ovr_paths"
    unknown = sorted(set(params) - set(_FIT_DEFAULTS))
    if unknown:
        raise TypeError(f"{caller} got unexpected keyword argument(s) {unknown}.")
    params = {**_FIT_DEFAULTS, **params, "n_grid": n_grid, "lambda_min_ratio": lambda_min_ratio,
              "max_refine": max_refine}
    if grid is not None:
        if stop is not None:
            raise ValueError(f"{caller}: 'stop' needs the default grid (with a grid of your own each problem's "
                             "path is walked on its own).")
        kw = {k: params[k] for k in _FIT_DEFAULTS}
        walks = [KNIFEGridWalk(X, t, grid, feature_names=feature_names, random_state=random_state,
                               gamma_restart=gamma_restart, **kw) for t in targets]
        return [w.walk(w.grid.size) for w in walks]
    setups = []
    for t in targets:
        Xc, y_pm, classes, const, model, public = _prepare(X, t, {**params, "random_state": random_state}, caller)
        rng = check_random_state(random_state)
        with method_threads("knife", Xc.shape[0], blas_in_threads=False):
            st, _ = _best_start(model, _starts(rng, Xc.shape[1], const, params["n_restarts"], None), 0.0,
                                params["max_iter"], params["tol"], restart=gamma_restart)
            top = _find_top(model, st, params["max_iter"], params["tol"])
        setups.append((model, st, top, public, classes))
    top = max(s[2] for s in setups)
    models = [s[0] for s in setups]
    grid = _default_grid(top, n_grid, lambda_min_ratio, models[0].X.shape[0])
    with method_threads("knife", models[0].X.shape[0], blas_in_threads=False):
        recs = _walk(models, [s[1] for s in setups], grid, max_iter=params["max_iter"], tol=params["tol"],
                     max_refine=n_grid if max_refine is None else int(max_refine),
                     extend_to_zero=models[0].gamma_rule is not None, stop=stop)
    paths = []
    for rec, (model, st, _, public, classes) in zip(recs, setups):
        units = ResponseUnits(model.y_scale)  # 1: classification
        _warn_path_not_converged(rec, params["max_iter"], units)
        public["lambda2"] = None
        paths.append(_to_path(rec, units, top=np.nan, public=public, classes=classes, feature_names=feature_names,
                              true_support=None))
    return paths
