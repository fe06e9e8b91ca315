r"""The linear garrote: KNIFE with a linear kernel in its jointly convex form.

.. math::

    \min_{\tilde\beta,\, 0 \le w \le 1}\;
    \|y - X\tilde\beta\|^2 + \lambda_1 \sum_j \frac{\tilde\beta_j^2}{w_j}
    + \lambda_2 \sum_j w_j

(the garrote user guide, ``docs/guide/garrote.md``; KNIFE paper eq. 4), solved along a λ2 path with warm starts,
through the solver registry: the native berHu coordinate descent
(:mod:`numkfs.solvers.native.garrote`) by default, or any conic backend on
the QR-compressed CVXPY form (``solver="CLARABEL"``, ``"ECOS"``, ``"SCS"``).

Decision (paper vs the user guide).  Eq. (4) is the linear kernel with the
weights entering *linearly*, :math:`k_w(x, x') = \sum_j w_j x_j x'_j`
(paper eq. 3 with :math:`W = \mathrm{diag}(w)`, :math:`\tilde\beta = W\beta`,
:math:`\beta^\top W \beta = \sum_j \tilde\beta_j^2 / w_j`).  That is the
problem solved here.  With the weights entering squared, as in KNIFE's
feature-weighted kernels (the kernel table of the KNIFE user guide, ``docs/guide/knife.md``; paper §2.1), the same substitution
gives :math:`\lambda_1 \sum_j \tilde\beta_j^2 / w_j^2`, which is not jointly
convex; eliminating w there gives the non-convex bridge penalty
:math:`\tfrac32 \lambda_2 (2\lambda_1/\lambda_2)^{1/3} |\tilde\beta_j|^{2/3}`
instead of the convex berHu penalty of the garrote.  So the garrote equals
the fixed point of the alternating (α-step / w-step) linear KNIFE with
linearly entering weights, i.e. squared-weight KNIFE with :math:`v = w^2`
as its weights and penalty :math:`\lambda_2 \sum_j v_j`.  What links the
garrote to numkfs's (squared-weight) KNIFE exactly: a KNIFE stationary point
:math:`w^*` solves the garrote restricted to the support of :math:`w^*` with
the adaptive penalty :math:`\sum_j \lambda_2/(2 w^*_j)\, v_j`
(``penalty_weights``), returning :math:`v = w^{*2}` (tested in
``tests/methods/test_garrote.py``).

The same non-negative garrote step (:class:`~numkfs.solvers.native.garrote.GarroteStep`,
:func:`garrote_step`) is the w-step of that alternating form (``G[:, j] =
x_j β_j``, ``d_j = λ1 β_j² + λ2``, ``0 ≤ w ≤ 1``) and the θ-step of COSSO
(:mod:`numkfs.methods.cosso`).

Relaxation.  λ2 decides both which weights are zero and how far the others
are below 1, i.e. how much their coefficients are shrunk beyond the ridge
λ1.  :func:`garrote_relax` keeps a point's support and refits the garrote
at λ2 = 0 on it, which is ridge regression (λ1) on those columns: the
relaxed lasso's refit (Meinshausen 2007) for the garrote.
:class:`numkfs.GarroteRegressorCV` scores and predicts with these refits by
default (``relax=True``).
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .._preprocessing import ResponseUnits, Standardizer, response_scale
from .._threads import thread_policy
from .._constraints import BOOL, GRID, SOLVER, Interval, NoneOr, declares
from .._validation import check_X_y, constant_columns
from ..model_selection import refine_walk
from ..paths import SELECTION_TOL, FeaturePath, support_mask
from ..solvers import solve
from ..solvers.native.garrote import GarroteStep, LinearGarrote, garrote_lambda2_max

__all__ = ["garrote_path", "garrote_relax", "garrote_step", "garrote_lambda2_max"]

_PATH_CONSTRAINTS = {
    "lambda1": [Interval(Real, 0, None, closed="neither")],
    "n_grid": [Interval(Integral, 1, None, closed="left")],
    "lambda_min_ratio": [Interval(Real, 0, 1, closed="neither")],
    "tol": [Interval(Real, 0, None, closed="neither"), NoneOr],
    "max_refine": [Interval(Integral, 0, None, closed="left"), NoneOr],
    "fit_intercept": BOOL,
    "standardize": BOOL,
    "grid": GRID,
    "solver": SOLVER,
}


#: garrote_relax's tol is the support threshold (weights > tol), not a solver tolerance: 0 is allowed.
_RELAX_CONSTRAINTS = {**_PATH_CONSTRAINTS, "tol": [Interval(Real, 0, None, closed="left")]}


def _center(X, y, fit_intercept: bool):
    if fit_intercept:
        x_mean, y_mean = X.mean(axis=0), float(y.mean())
        return X - x_mean, y - y_mean, x_mean, y_mean
    return X, y, np.zeros(X.shape[1]), 0.0


def _scaled(X, standardize: bool):
    """``(X / scale, scale)``: with ``standardize`` the columns divided by
    their standard deviations (1 for a constant column), else X itself (not
    copied) and ones."""
    if not standardize:
        return X, np.ones(X.shape[1])
    scale = Standardizer(center=False).fit(X).scale_
    return X / scale, scale


@declares(_PATH_CONSTRAINTS, data=("X", "y", "penalty_weights", "feature_names", "true_support"))
@thread_policy("garrote")
def garrote_path(
    X,
    y,
    lambda1: float = 1.0,
    grid=None,
    *,
    n_grid: int = 100,
    lambda_min_ratio: float = 1e-3,
    fit_intercept: bool = True,
    standardize: bool = False,
    solver: str | list = "auto",
    tol: float | None = None,
    penalty_weights=None,
    max_refine: int | None = None,
    feature_names=None,
    true_support=None,
) -> FeaturePath:
    r"""The linear-garrote feature path over λ2 (warm-started).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Target values: the response, or the class labels of a classifier.
    lambda1 : float > 0
        Ridge parameter (KNIFE's default 1).
    grid : array-like, optional
        λ2 values, solved in the order given.  Default: ``n_grid``
        values log-spaced from :math:`\lambda_{2,\max} = \max_j (x_j^\top
        y)^2/\lambda_1` (every weight 0) down to ``lambda_min_ratio`` times it.
    n_grid : int
        Number of λ2 values of the default grid.
    lambda_min_ratio : float in (0, 1)
        Smallest λ2 of the default grid relative to :math:`\lambda_{2,\max}`
        (the name KNIFE uses for the same thing).
    fit_intercept : bool
        Centre X and y (an unpenalised intercept).
    standardize : bool, default=False
        Solve the garrote on X's columns divided by their standard
        deviations (on the rows given), so that λ1, the grid and the
        selection do not depend on the units of X; ``"coef"`` is given
        back in X's units.  False solves eq. (4) on X as given (λ1 is then
        on the scale of :math:`X^\top X`).  The estimators standardise by
        default.
    solver : str or list
        ``"auto"`` (native first), ``"native"`` or a conic backend name
        (see :func:`numkfs.solvers.solve`).
    tol : float, optional
        Solver tolerance (each backend's numkfs default when None).
    penalty_weights : array-like of shape (n_features,), optional
        Factors π_j > 0 of an adaptive weight penalty
        :math:`\lambda_2 \sum_j \pi_j w_j` (default 1).
    max_refine : int, optional
        At most this many λ2 values are inserted where two consecutive
        points' supports differ by more than ``max(2, a quarter of the
        larger)`` features (:func:`numkfs.model_selection.refine_walk`), so
        the path has at most ``len(grid) + max_refine`` points.  Default:
        ``n_grid`` for the default grid, 0 (solved as given) for
        ``grid``.
    feature_names, true_support : optional
        Passed to the :class:`~numkfs.paths.FeaturePath`.

    Returns
    -------
    FeaturePath
        ``weights`` are the w, ``grid_name="lambda2"``; ``extra`` holds
        ``"coef"`` (β̃ per point, in the units of X), ``"intercept"``,
        ``"lambda1"``, ``"lambda2_max"``, ``"x_scale"`` (the divisors of
        X's columns: ones unless ``standardize``), ``"solver"`` (backend
        per point) and ``"solve_time"``.

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013 (eq. 4, the linear garrote).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 5))
    >>> y = 3 * X[:, 0] + rng.standard_normal(50)
    >>> path = garrote_path(X, y, n_grid=20)
    >>> int(path.n_selected()[0]), bool(path.selected(-1)[0])   # λ2 = λ2_max: none; small λ2: x0
    (0, True)
    """
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    X, y = check_X_y(X, y, caller="garrote_path")
    if max_refine is None:
        max_refine = n_grid if grid is None else 0
    constant_columns(X, caller="garrote_path", feature_names=feature_names)
    Xs, x_scale = _scaled(X, standardize)
    Xc, yc, x_mean, y_mean = _center(Xs, y, fit_intercept)
    _check_scale(Xc, yc, lambda1, "garrote_path")
    # solved on y in units of its root mean square, the answers given back in y's units (β̃ times s,
    # λ2 and the objective times s²): the solvers' stopping rules do not depend on the units of y
    s = response_scale(yc)
    yc = yc / s
    l2max = garrote_lambda2_max(Xc, yc, lambda1, penalty_weights)
    user_grid = grid is not None
    if user_grid:
        grid = np.atleast_1d(np.asarray(grid, dtype=float)).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid < 0):
            raise ValueError(f"garrote_path: the λ2 values (grid) must be finite and >= 0; got {grid!r}.")
    units = ResponseUnits(s, grid)
    top = l2max if l2max > 0 else 1.0
    values = units.to_model(grid) if user_grid else top * np.geomspace(1.0, lambda_min_ratio, n_grid)

    problem = LinearGarrote(Xc, yc, lambda1, float(values[0]), penalty_weights=penalty_weights)

    def step(previous, l2):
        """The point at ``l2``, warm-started from the previous point's β̃."""
        problem.update(lambda2=float(l2))
        if previous is not None:
            problem.beta_warm = previous[0].copy()
        res = solve(problem, solver, tol=tol)
        return res["beta"], np.clip(res["w"], 0.0, 1.0), res.objective, res.solver, res.solve_time

    values, states, _ = refine_walk(step, values, step(None, values[0]), max_inserted=max_refine,
                                    support=lambda state: support_mask(state[1], SELECTION_TOL["garrote"]))
    # back in y's units (the values of a grid you give as given, not their round trip)
    values = units.to_user(values)
    B, W = s * np.array([st[0] for st in states]), np.array([st[1] for st in states])
    intercept = y_mean - B @ x_mean  # x_mean of the standardised columns: the same as in X's units
    B = B / x_scale
    obj = s**2 * np.array([st[2] for st in states], dtype=float)
    used, times = [st[3] for st in states], np.array([st[4] for st in states], dtype=float)
    return FeaturePath(
        grid=values, weights=W, grid_name="lambda2", feature_names=feature_names, objective=obj,
        method="garrote", tol=1e-6, true_support=true_support,
        extra={"coef": B, "intercept": intercept, "lambda1": float(lambda1), "x_scale": x_scale,
               "lambda2_max": l2max * s**2, "solver": used, "solve_time": times},
    )


@declares(_RELAX_CONSTRAINTS, data=("X", "y", "weights"))
def garrote_relax(X, y, weights, lambda1: float = 1.0, *, fit_intercept: bool = True, standardize: bool = False,
                  tol: float = SELECTION_TOL["garrote"]) -> tuple[np.ndarray, np.ndarray | float]:
    r"""The garrote at λ2 = 0 on the support of ``weights``: ridge regression (λ1) on those columns.

    At λ2 = 0 every weight of the garrote is 1, so the problem is
    :math:`\min_{\tilde\beta} \|y - X_S\tilde\beta_S - b\|^2 + \lambda_1\|\tilde\beta_S\|^2`
    on the columns S with ``weights > tol`` (the path's support rule), the
    others 0.  Solved in the primal, or the dual when S has more columns than X has rows.
    Several rows of weights (e.g. a whole path) are refitted at once: the data
    are checked and centred once, XᵀX is formed once for the primal solves
    (when their columns together are no more than the rows), and each
    distinct support is solved once.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The training data of the path.
    y : array-like of shape (n_samples,)
        Its target values.
    weights : array-like of shape (n_features,) or (n_points, n_features)
        The garrote weights w of one point (e.g. a row of
        :func:`garrote_path`'s ``weights``), or one row per point.
    lambda1 : float > 0, default=1.0
        Ridge parameter (the path's).
    fit_intercept : bool, default=True
        Centre X and y (an unpenalised intercept), as the path did.
    standardize : bool, default=False
        Refit on X's columns divided by their standard deviations, as the
        path did with ``standardize=True``; ``coef`` in X's units.
    tol : float >= 0, default=1e-6
        Weights above it are the support (``FeaturePath.tol`` of the path).

    Returns
    -------
    coef : ndarray of shape (n_features,) or (n_points, n_features)
        β̃, zero off the support, in the units of X (one row per row of
        ``weights``).
    intercept : float or ndarray of shape (n_points,)

    Raises
    ------
    ValueError
        ``weights`` of the wrong length, or with a NaN, infinite or negative
        entry; ``lambda1`` not > 0; ``tol`` negative, NaN or infinite.

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013 (eq. 4, the linear garrote).

    N. Meinshausen, "Relaxed lasso", Computational Statistics & Data
    Analysis 52(1):374-393, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 4))
    >>> y = 3 * X[:, 0] + 0.1 * rng.standard_normal(50)
    >>> path = garrote_path(X, y, grid=[50.0])
    >>> coef, b = garrote_relax(X, y, path.weights[0])
    >>> np.flatnonzero(coef).tolist(), bool(abs(coef[0]) > abs(path.extra["coef"][0, 0]))  # less shrunk
    ([0], True)
    >>> coefs, bs = garrote_relax(X, y, garrote_path(X, y, n_grid=10).weights)   # every point at once
    >>> coefs.shape, bs.shape
    ((10, 4), (10,))
    """
    X, y = check_X_y(X, y, caller="garrote_relax")
    weights = np.asarray(weights, dtype=float)
    one = weights.ndim <= 1
    W = np.atleast_2d(weights.ravel() if one else weights)
    if W.ndim != 2 or W.shape[1] != X.shape[1]:
        per = "" if one else " per row"
        raise ValueError(f"garrote_relax: weights has {W.shape[-1]} entries{per} for {X.shape[1]} features.")
    bad = ~(np.isfinite(W) & (W >= 0))  # NaN fails both: never silently "not selected"
    if bad.any():
        r, j = np.argwhere(bad)[0]
        where = f"feature {j}" if one else f"row {r}, feature {j}"
        raise ValueError(f"garrote_relax: weights must be finite and >= 0 (garrote weights are in [0, 1]); got "
                         f"{float(W[r, j])!r} at {where} ({int(bad.sum())} such value(s)). Pass the weights of a "
                         f"garrote path, e.g. garrote_path(X, y).weights.")
    Xs, x_scale = _scaled(X, standardize)
    Xc, yc, x_mean, y_mean = _center(Xs, y, fit_intercept)
    supports, which = np.unique(support_mask(W, tol), axis=0, return_inverse=True)
    n = X.shape[0]
    primal = supports.sum(axis=1) <= n
    # XᵀX once on the columns of every primal solve, when they are no more than the rows (at most the
    # dual's n x n); otherwise each support forms its own
    U = np.flatnonzero(supports[primal].any(axis=0))
    G = Xc[:, U].T @ Xc[:, U] if 0 < U.size <= n else None
    pos = np.empty(X.shape[1], dtype=int)
    pos[U] = np.arange(U.size)
    Xty = Xc.T @ yc if primal.any() else None
    fits = np.zeros((supports.shape[0], X.shape[1]))
    for q, mask in enumerate(supports):
        S = np.flatnonzero(mask)
        if not S.size:
            continue
        if primal[q]:
            A = G[np.ix_(pos[S], pos[S])] if G is not None else Xc[:, S].T @ Xc[:, S]
            fits[q, S] = cho_solve(cho_factor(A + lambda1 * np.eye(S.size)), Xty[S])
        else:  # (XᵀX + λI)⁻¹Xᵀ = Xᵀ(XXᵀ + λI)⁻¹
            XS = Xc[:, S]
            fits[q, S] = XS.T @ cho_solve(cho_factor(XS @ XS.T + lambda1 * np.eye(n)), yc)
    coef = fits[np.ravel(which)]
    intercept = y_mean - coef @ x_mean  # in the standardised units, the same in X's
    coef = coef / x_scale
    if one:
        return coef[0], float(intercept[0])
    return coef, intercept


def _check_scale(Xc, yc, lambda1, caller):
    """Refuse data and λ1 whose garrote cannot be computed in floating point.

    The garrote of X as given is not scale-invariant (λ1 is on the scale of
    XᵀX): only ``standardize=True`` rescales X, and y is rescaled exactly.
    Its quantities are XᵀX (order n|x|²), Xᵀy, λ1 against n|x|² and
    λ2,max = (xᵀy)²/λ1; when one of them over- or underflows the answer
    would be NaN or all zero with only a RuntimeWarning: a ValueError names
    the scale instead.
    """
    n = max(Xc.shape[0], 1)
    sx = float(np.max(np.abs(Xc), initial=0.0))
    sy = float(np.max(np.abs(yc), initial=0.0))
    if sx == 0.0 or sy == 0.0:
        return  # nothing to select (constant columns / target): handled downstream
    lx, ly, l1 = np.log10(sx) + 0.5 * np.log10(n), np.log10(sy) + 0.5 * np.log10(n), np.log10(lambda1)
    hint = "rescale X and y (standardize=True rescales X) and choose lambda1 on their scale"
    if not (-140 < lx < 140 and -140 < ly < 140):
        raise ValueError(f"{caller}: X or y is too {'large' if max(lx, ly) >= 140 else 'small'} for floating point "
                         f"(max |X| = {sx:.1e}, max |y| = {sy:.1e}): X'X and X'y would over- or underflow; {hint}.")
    if not -100 < l1 - 2 * lx < 100:
        raise ValueError(f"{caller}: lambda1 = {lambda1:.1e} is {10 ** (l1 - 2 * lx):.0e} times the scale of X'X "
                         f"(n max|x|^2 = {10 ** (2 * lx):.1e}): the garrote's arithmetic over- or underflows; "
                         f"{hint}.")
    if not -280 < 2 * (lx + ly) - l1 < 280:
        raise ValueError(f"{caller}: lambda2_max = (x'y)^2 / lambda1 is about {10 ** (2 * (lx + ly) - l1):.0e}, "
                         f"beyond floating point; {hint}.")


def garrote_step(G, z, d, *, scale: float = 1.0, upper: float = np.inf, M: float | None = None,
                 theta0=None, solver="auto", tol: float | None = None, problem: GarroteStep | None = None):
    r"""The non-negative garrote step, through the solver registry.

    .. math::

        \min_\theta\; s\|z - G\theta\|^2 + d^\top\theta
        \quad\text{s.t.}\quad 0 \le \theta \le u,\ \textstyle\sum_j \theta_j \le M

    Pass ``problem`` (a :class:`GarroteStep` made once) to re-use its CVXPY
    formulation and warm start along an alternating algorithm.

    Returns
    -------
    theta : ndarray of shape (p,)
    result : SolverResult
    """
    if problem is None:
        problem = GarroteStep(G, z, d, scale=scale, upper=upper, M=M, theta0=theta0)
    else:
        values = {"G": np.asarray(G, dtype=float), "z": np.asarray(z, dtype=float).ravel(),
                  "d": np.asarray(d, dtype=float).ravel()}
        if problem.budget:
            values["M"] = float(M)
        problem.update(**values)
        if theta0 is not None:
            problem.theta_warm = np.asarray(theta0, dtype=float)
    res = solve(problem, solver, tol=tol)
    theta = np.clip(res["theta"], 0.0, problem.upper)
    problem.theta_warm = theta.copy()
    return theta, res
