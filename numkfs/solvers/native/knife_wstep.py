r"""KNIFE's weight step: a smooth convex loss of an affine map over a box.

.. math::

    \min_{0 \le w \le 1}\; S(w) = \sum_i \ell\bigl(y_i, u^0_i + (A w)_i\bigr) + c^\top w

with ``A`` the n x p matrix of kernel derivatives, ``u0 = K_w α (+ α0) - A
w_prev`` and ``c = λ1 Aᵀα + λ2 1`` (see :mod:`numkfs.methods.knife`).

* Squared loss: a box QP, ``½ wᵀ(2AᵀA)w + (c - 2Aᵀ(y - u0))ᵀw``, solved by
  the native coordinate descent :func:`numkfs.solvers.native.boxqp.solve_box_qp`.
* When A has fewer (curvature) rows than columns (wide data, n < p), the
  same coordinate descent runs on the factor instead of the p x p matrix
  (:func:`solve_box_qp_factored`): ``Q = FᵀF + μI`` is never formed, the
  residual ``F w`` is kept up to date and each coordinate costs O(n)
  instead of O(p) — the same iterates in exact arithmetic.
* Smooth classification losses (squared hinge, huberized hinge, logistic):
  projected Newton — each step minimises the second-order model
  ``½ dᵀ(AᵀDA + μI)d + ∇Sᵀd`` over the shifted box by the same coordinate
  descent, then an Armijo backtracking line search on ``S`` along the
  (feasible) segment.  For the piecewise-quadratic hinge losses the
  generalised Hessian is used (semi-smooth Newton).  Stops when the
  projected gradient (the KKT residual of the box) is below ``tol`` times
  the scale of the problem.

:class:`KnifeWeightStep` is the same problem as a
:class:`~numkfs.solvers.ConvexProblem` (CVXPY formulation with
Parameters, so that ECOS, SCS and CLARABEL solve it through the registry
and ``cross_check`` compares them with the native solver).
"""
from __future__ import annotations

import time

import numpy as np

from ..._jit import jit
from ...losses import get_loss
from .._base import ConvexProblem, SolverResult, Status
from ..registry import check_data, register_native, register_native_check
from .boxqp import _CD_CHUNK, _projected_gradient_norm, box_qp_kkt_residual, solve_box_qp

__all__ = ["KnifeWeightStep", "solve_knife_wstep", "knife_wstep_kkt_residual", "solve_box_qp_factored"]


@jit
def _factored_gradient(FT, r, mu, w, c, g):
    """``g = Fᵀ r + μ w + c`` (the gradient of the factored box QP, ``r = F w``), in place."""
    p, m = FT.shape
    for j in range(p):
        s = 0.0
        for i in range(m):
            s += FT[j, i] * r[i]
        g[j] = s + mu * w[j] + c[j]


@jit
def _box_qp_cd_factored(FT, mu, c, lo, hi, w, tol, max_sweeps):
    """Coordinate descent of :func:`numkfs.solvers.native.boxqp.solve_box_qp`
    (same order, same exact coordinate minimisation, same stopping rule) on
    ``Q = FᵀF + μI`` given ``FT = Fᵀ`` (p x m): the residual ``r = F w`` is
    kept instead of the gradient.  Returns (sweeps, kkt residual)."""
    p, m = FT.shape
    r = np.zeros(m)
    qdiag = np.empty(p)
    for j in range(p):
        s = 0.0
        wj = w[j]
        for i in range(m):
            f = FT[j, i]
            s += f * f
            r[i] += f * wj
        qdiag[j] = s + mu
    scale = 1.0
    for j in range(p):
        a = abs(c[j])
        if a > scale:
            scale = a
    g = np.empty(p)
    _factored_gradient(FT, r, mu, w, c, g)
    res = _projected_gradient_norm(w, g, lo, hi)
    sweeps = 0
    while sweeps < max_sweeps and res > tol * scale:
        sweeps += 1
        for j in range(p):
            s = 0.0
            for i in range(m):
                s += FT[j, i] * r[i]
            gj = s + mu * w[j] + c[j]
            qjj = qdiag[j]
            if qjj <= 0.0:
                if gj > 0.0:
                    new = lo[j]
                elif gj < 0.0:
                    new = hi[j]
                else:
                    new = w[j]
            else:
                new = w[j] - gj / qjj
                if new < lo[j]:
                    new = lo[j]
                elif new > hi[j]:
                    new = hi[j]
            d = new - w[j]
            if d != 0.0:
                w[j] = new
                for i in range(m):
                    r[i] += d * FT[j, i]
        _factored_gradient(FT, r, mu, w, c, g)
        res = _projected_gradient_norm(w, g, lo, hi)
    return sweeps, res


def _factored_objective(F, mu, c, w):
    """``½ wᵀ(FᵀF + μI)w + cᵀw``."""
    r = F @ w
    return 0.5 * float(r @ r) + 0.5 * mu * float(w @ w) + float(c @ w)


@jit
def _projected_search(F, FS, mu, c_s, x0, d, lo_s, hi_s, r0):
    """The first local minimiser of the factored box QP along the projected path
    ``x(t) = clip(x0 + t d)`` of the free coordinates (the others held), ``t >= 0``.

    On each piece between two consecutive breakpoints (the ``t`` at which a
    coordinate reaches its bound and stays there) the objective is a
    quadratic in ``t``; its slope and curvature at the piece's start come
    from running sums over the coordinates still moving (``q = F_M d_M``
    drops one column per breakpoint), O(m) each, so the pieces up to the
    minimiser are visited in O(m) each (the generalised Cauchy point of
    L-BFGS-B, with the exact Hessian ``FᵀF + μI``).  ``r0 = F w`` at the
    start; ``F`` is not used (the free columns are ``FS``).  Returns the free
    coordinates' new values (those whose breakpoint was passed exactly on
    their bound) and the number of them on a bound."""
    m, s = FS.shape
    room = np.empty(s)
    for k in range(s):
        if d[k] > 0.0:
            room[k] = max((hi_s[k] - x0[k]) / d[k], 0.0)
        elif d[k] < 0.0:
            room[k] = max((lo_s[k] - x0[k]) / d[k], 0.0)
        else:
            room[k] = np.inf
    order = np.argsort(room, kind="mergesort")  # stable: ties in index order
    q = np.zeros(m)  # F_M d_M of the coordinates still moving
    for k in range(s):
        for i in range(m):
            q[i] += FS[i, k] * d[k]
    r = r0.copy()  # F x at the start of the piece
    a = 0.0
    b = 0.0
    cd = 0.0
    for k in range(s):
        a += x0[k] * d[k]
        b += d[k] * d[k]
        cd += c_s[k] * d[k]
    T = 0.0
    t = 0.0
    for piece in range(s + 1):
        slope = mu * (a + T * b) + cd
        curv = mu * b
        for i in range(m):
            slope += r[i] * q[i]
            curv += q[i] * q[i]
        end = room[order[piece]] if piece < s else np.inf
        if slope >= 0.0:
            t = T
            break
        if curv > 0.0 and T - slope / curv < end:
            t = T - slope / curv
            break
        if not end < np.inf:  # no bound left ahead, no minimum: the start of the last piece
            t = T
            break
        j = order[piece]  # coordinate j reaches its bound at `end` and stops
        for i in range(m):
            r[i] += (end - T) * q[i]
            q[i] -= FS[i, j] * d[j]
        a -= x0[j] * d[j]
        b -= d[j] * d[j]
        cd -= c_s[j] * d[j]
        T = end
    x = np.empty(s)
    n_hit = 0
    for k in range(s):
        if room[k] <= t:
            x[k] = hi_s[k] if d[k] > 0.0 else lo_s[k]
            n_hit += 1
        else:
            x[k] = min(max(x0[k] + t * d[k], lo_s[k]), hi_s[k])
    return x, n_hit


@jit
def _cholesky_solve(M, v):
    """``M⁻¹ v`` for a symmetric positive definite ``M`` (overwritten by its Cholesky factor), in place
    on ``v``; False (``v`` undefined) when ``M`` is not numerically positive definite."""
    k = M.shape[0]
    for j in range(k):
        sj = M[j, j]
        for l in range(j):
            sj -= M[j, l] * M[j, l]
        if not sj > 0.0:
            return False
        dj = np.sqrt(sj)
        M[j, j] = dj
        for i in range(j + 1, k):
            si = M[i, j]
            for l in range(j):
                si -= M[i, l] * M[j, l]
            M[i, j] = si / dj
    for i in range(k):
        si = v[i]
        for l in range(i):
            si -= M[i, l] * v[l]
        v[i] = si / M[i, i]
    for i in range(k - 1, -1, -1):
        si = v[i]
        for l in range(i + 1, k):
            si -= M[l, i] * v[l]
        v[i] = si / M[i, i]
    return True


@jit
def _free_objective(FS, r0, mu, c_s, x0, x):
    """The factored box QP's objective with the free coordinates at ``x`` (``F w`` from ``r0``: only
    the free columns change)."""
    m, s = FS.shape
    f = 0.0
    for i in range(m):
        ri = r0[i]
        for k in range(s):
            ri += FS[i, k] * (x[k] - x0[k])
        f += ri * ri
    f *= 0.5
    for k in range(s):
        f += 0.5 * mu * x[k] * x[k] + c_s[k] * x[k]
    return f


@jit
def _subspace_step(F, mu, c, lo, hi, w, r0):
    """One step towards the minimiser of the factored box QP over its free
    coordinates (strictly inside the box), the others held, in place on ``w``.

    The minimiser over the free set S solves ``(F_SᵀF_S + μI) w_S = -b``
    (``b`` the gradient of the held part on S), through an |S| x |S| or, when
    S has more coordinates than F rows, an m x m Cholesky factorisation
    (Woodbury), with the ridge of the dense active-set method
    (:func:`numkfs.solvers.native.boxqp._newton_direction`) when μ is
    below it (a candidate only: kept when it lowers the objective).  The
    step goes along the projected path towards it, to the first local
    minimum on the way (:func:`_projected_search`: every coordinate whose
    bound is passed on the way is put on it exactly, so that the free set
    can shrink by many coordinates in one step) or, when that is lower, to
    the projection of the minimiser onto the box.  Returns 0 (``w``
    unchanged) when nothing was gained, 2 when ``w`` is the (projected)
    minimiser, 1 when coordinates were put on their bounds on the way (the
    free set shrank: a next step goes on from there).  ``r0 = F w``, kept up
    to date in place (the O(mp) product is not recomputed at every step).
    Compiled: a Newton model of the weight step on wide data takes dozens of
    these steps, each on a few hundred coordinates."""
    m, p = F.shape
    free = np.empty(p, dtype=np.int64)
    s = 0
    for j in range(p):
        if w[j] > lo[j] and w[j] < hi[j]:
            free[s] = j
            s += 1
    if s == 0:
        return 0
    free = free[:s]
    FS = np.empty((m, s))
    x0 = np.empty(s)
    c_s = np.empty(s)
    lo_s = np.empty(s)
    hi_s = np.empty(s)
    for k in range(s):
        j = free[k]
        x0[k], c_s[k], lo_s[k], hi_s[k] = w[j], c[j], lo[j], hi[j]
        for i in range(m):
            FS[i, k] = F[i, j]
    held = np.zeros(m)  # F w - F_S w_S: the held coordinates' part
    for i in range(m):
        hi_ = r0[i]
        for k in range(s):
            hi_ -= FS[i, k] * x0[k]
        held[i] = hi_
    bvec = np.empty(s)
    top = 0.0
    for k in range(s):
        bk = c_s[k]
        nk = 0.0
        for i in range(m):
            bk += FS[i, k] * held[i]
            nk += FS[i, k] * FS[i, k]
        bvec[k] = bk
        top = max(top, nk)
    ridge = max(mu, 1e-10 * max(top, 1e-300))
    target = np.empty(s)
    if s <= m:
        H = np.empty((s, s))
        for k in range(s):
            for l in range(k + 1):
                hkl = 0.0
                for i in range(m):
                    hkl += FS[i, k] * FS[i, l]
                H[k, l] = hkl
                H[l, k] = hkl
            H[k, k] += ridge
        v = bvec.copy()
        if not _cholesky_solve(H, v):
            return 0
        for k in range(s):
            target[k] = -v[k]
    else:  # Woodbury: (F_SᵀF_S + ρI)⁻¹ b = (b - F_Sᵀ (F_S F_Sᵀ + ρI)⁻¹ F_S b) / ρ
        M = np.empty((m, m))
        for i in range(m):
            for l in range(i + 1):
                mil = 0.0
                for k in range(s):
                    mil += FS[i, k] * FS[l, k]
                M[i, l] = mil
                M[l, i] = mil
            M[i, i] += ridge
        z = np.zeros(m)
        for i in range(m):
            zi = 0.0
            for k in range(s):
                zi += FS[i, k] * bvec[k]
            z[i] = zi
        if not _cholesky_solve(M, z):
            return 0
        for k in range(s):
            tk = bvec[k]
            for i in range(m):
                tk -= FS[i, k] * z[i]
            target[k] = -tk / ridge
    for k in range(s):
        if not np.isfinite(target[k]):
            return 0
    on_the_way, n_hit = _projected_search(F, FS, mu, c_s, x0, target - x0, lo_s, hi_s, r0)
    projected = np.empty(s)
    for k in range(s):
        projected[k] = min(max(target[k], lo_s[k]), hi_s[k])
    f_best = _free_objective(FS, r0, mu, c_s, x0, x0)
    status = 0
    f1 = _free_objective(FS, r0, mu, c_s, x0, on_the_way)
    best = x0
    if f1 < f_best:
        best, f_best, status = on_the_way, f1, (1 if n_hit > 0 else 2)
    f2 = _free_objective(FS, r0, mu, c_s, x0, projected)
    if f2 < f_best:
        best, f_best, status = projected, f2, 2
    if status == 0:
        return 0
    for k in range(s):
        dk = best[k] - x0[k]
        if dk != 0.0:
            w[free[k]] = best[k]
            for i in range(m):
                r0[i] += FS[i, k] * dk
    return status


#: start with the subspace steps when at most this many times m coordinates are free
_SUBSPACE_FIRST = 2.0


def solve_box_qp_factored(F, mu, c, lo, hi, w0=None, *, tol: float = 1e-10, max_sweeps: int = 100_000):
    """The box QP ``min ½ wᵀ(FᵀF + μI)w + cᵀw`` over ``lo ≤ w ≤ hi`` without forming
    ``FᵀF``; return ``(w, sweeps, kkt_residual)`` as
    :func:`~numkfs.solvers.native.boxqp.solve_box_qp` does (each sweep costs
    O(mp) instead of O(p²) for F of shape (m, p)).

    Coordinate descent (the iterates of the dense solver's) for a chunk of
    sweeps; when that did not converge and μ > 0 (a strictly convex
    problem, e.g. the Newton model of a classification loss), a step to the minimiser over the
    free coordinates (:func:`_subspace_step`), then the next chunk, and so
    on.  Coordinate descent alone crawls when the free coordinates' columns
    of F are (nearly) dependent, e.g. more free coordinates than rows of F
    or columns of very different norms: the directions of curvature μ or
    little more are those a sweep hardly moves along (on unstandardised
    wide data, tens of thousands of sweeps per Newton step of the weight
    step); the subspace step solves them directly, as the dense
    solver's active-set method does.  When at most ``2 m`` coordinates
    (:data:`_SUBSPACE_FIRST` times the rows of F) are strictly inside the
    box at the start, the subspace steps come first: a warm-started Newton
    model (its zero weights on their bound) is then solved in a few
    factorisations, without a chunk of sweeps over every coordinate first.

    Parameters
    ----------
    F : ndarray of shape (m, p)
    mu : float >= 0
    c : ndarray of shape (p,)
    lo, hi : float or ndarray of shape (p,)
        Bounds.
    w0 : ndarray of shape (p,), optional
        Start (clipped to the box); default 0.
    tol : float
        Stop when the projected gradient is below ``tol * max(1, max|c|)``.
    max_sweeps : int
        Coordinate-descent sweeps plus subspace steps.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.solvers.native.knife_wstep import solve_box_qp_factored
    >>> F = np.array([[1.0, 1.0, 0.0]])
    >>> w, sweeps, kkt = solve_box_qp_factored(F, 0.0, np.array([-1.0, 0.0, 1.0]), 0.0, 1.0)
    >>> np.round(w, 6).tolist(), kkt < 1e-9
    ([1.0, 0.0, 0.0], True)
    """
    F = np.asarray(F, dtype=np.float64)
    FT = np.ascontiguousarray(F.T)
    c = np.ascontiguousarray(c, dtype=np.float64)
    p = c.shape[0]
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (p,)).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (p,)).copy()
    w = np.clip(np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64), lo, hi)
    mu, tol, max_sweeps = float(mu), float(tol), int(max_sweeps)
    total = 0
    F = np.ascontiguousarray(F)
    if mu > 0.0 and np.count_nonzero((w > lo) & (w < hi)) <= _SUBSPACE_FIRST * F.shape[0]:
        total += _subspace_steps(F, mu, c, lo, hi, w)
    while True:
        # μ = 0 (the squared loss's own problem, not a Newton model): coordinate descent alone, whose
        # point among the minimisers of a singular Q the squared-loss paths are tested with
        chunk = min(_CD_CHUNK, max_sweeps - total) if mu > 0.0 else max_sweeps
        sweeps, res = _box_qp_cd_factored(FT, mu, c, lo, hi, w, tol, chunk)
        total += int(sweeps)
        if sweeps < chunk or total >= max_sweeps or mu <= 0.0:  # converged, or out of sweeps
            break
        # steps over the free set, each one fewer free coordinate, until its minimiser (as the dense
        # solver's active-set method; a step costs a factorisation of at most m x m, less than a sweep)
        total += _subspace_steps(F, mu, c, lo, hi, w)
    return w, int(total), float(res)


def _subspace_steps(F, mu, c, lo, hi, w):
    """:func:`_subspace_step` until the free set's minimiser (at most one step per coordinate); returns
    the number of steps that moved ``w``."""
    n = 0
    r = F @ w
    for _ in range(w.shape[0]):
        status = _subspace_step(F, mu, c, lo, hi, w, r)
        n += status > 0
        if status != 1:
            break
    return n


def _surrogate(loss, y, A, u0, c, w):
    return loss.value(y, u0 + A @ w) + float(c @ w)


def _surrogate_gradient(loss, y, A, u0, c, w):
    return A.T @ loss.gradient(y, u0 + A @ w) + c


def knife_wstep_kkt_residual(loss, y, A, u0, c, w) -> float:
    """Max-abs projected gradient of the weight-step problem at ``w`` (0 at the optimum)."""
    loss = get_loss(loss)
    w = np.asarray(w, dtype=float)
    return _pg(_surrogate_gradient(loss, np.asarray(y, float), np.asarray(A, float), np.asarray(u0, float),
                                   np.asarray(c, float), w), w)


def _scale(loss, y, A, u0, c):
    g0 = A.T @ loss.gradient(y, u0) if A.size else np.zeros(0)
    return max(1.0, float(np.max(np.abs(c), initial=0.0)), float(np.max(np.abs(g0), initial=0.0)))


def solve_knife_wstep(loss, y, A, u0, c, w0=None, *, tol: float = 1e-10, max_iter: int = 200,
                      factored: bool = True):
    """Solve the weight step natively.

    Parameters
    ----------
    loss : str or :class:`numkfs.losses.Loss`
    y : ndarray (n,)
        Targets (±1 for classification losses).
    A : ndarray (n, p)
    u0 : ndarray (n,)
    c : ndarray (p,)
    w0 : ndarray (p,), optional
        Starting point (clipped to the box); default 0.
    tol : float
        Relative tolerance on the projected gradient.
    max_iter : int
        Newton iterations (classification losses).
    factored : bool, default=True
        Run the coordinate descent on the factor of the p x p matrix when A
        has fewer (curvature) rows than columns; ``False`` always forms
        the matrix (the same iterates in exact arithmetic).

    Returns
    -------
    w : ndarray (p,)
    n_iter : int
        Coordinate-descent sweeps (squared loss) or Newton steps.
    kkt : float
        Projected-gradient residual at ``w`` (absolute).
    """
    loss = get_loss(loss)
    A = np.ascontiguousarray(A, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    u0 = np.asarray(u0, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    p = A.shape[1]
    w = np.zeros(p) if w0 is None else np.clip(np.array(w0, dtype=np.float64), 0.0, 1.0)
    if p == 0:
        return w, 0, 0.0
    if loss.name == "squared":
        q = c - 2.0 * (A.T @ (y - u0))
        if factored and A.shape[0] < p:
            w, sweeps, kkt = solve_box_qp_factored(np.sqrt(2.0) * A, 0.0, q, 0.0, 1.0, w, tol=tol)
            return w, sweeps, kkt
        Q = A.T @ A
        Q *= 2.0
        w, sweeps, _ = solve_box_qp(Q, q, 0.0, 1.0, w, tol=tol)
        return w, sweeps, float(box_qp_kkt_residual(Q, q, 0.0, 1.0, w))
    scale = _scale(loss, y, A, u0, c)
    zeros = np.zeros(p)
    n_iter = 0
    f = _surrogate(loss, y, A, u0, c, w)
    kkt = np.inf
    n_flat = 0
    for n_iter in range(1, max_iter + 1):
        u = u0 + A @ w
        g = A.T @ loss.gradient(y, u) + c
        kkt = _pg(g, w)
        if kkt <= tol * scale:
            n_iter -= 1
            break
        D = loss.hessian_diag(y, u)
        # inexact Newton: solve the model to a fraction of the current KKT residual
        sub_tol = max(1e-3 * kkt / max(1.0, float(np.max(np.abs(g)))), 1e-15)
        rows = np.flatnonzero(D > 0.0)
        if factored and rows.size < p:  # wide: coordinate descent on the factor sqrt(D) A
            F = np.sqrt(D[rows])[:, None] * A[rows]
            mu = 1e-10 * max(float(np.max(np.einsum("ij,ij->j", F, F), initial=0.0)), 1e-300) + 1e-14 * scale
            d, _, _ = solve_box_qp_factored(F, mu, g, -w, 1.0 - w, zeros, tol=sub_tol)
        else:
            H = A.T @ (D[:, None] * A)
            mu = 1e-10 * max(float(np.max(np.diag(H))), 1e-300) + 1e-14 * scale
            H[np.diag_indices_from(H)] += mu
            d, _, _ = solve_box_qp(H, g, -w, 1.0 - w, zeros, tol=sub_tol)
        slope = float(g @ d)
        if not slope < 0.0:
            break
        t = 1.0
        while True:
            w_new = np.clip(w + t * d, 0.0, 1.0)
            f_new = _surrogate(loss, y, A, u0, c, w_new)
            if f_new <= f + 1e-4 * t * slope or t < 1e-12:
                break
            # near the optimum the decrease a step promises falls below the rounding of S (a sum
            # of n terms) long before the gradient reaches rounding: there the gradient decides
            if (f_new - f <= 4.0 * y.size * _EPS * max(abs(f), 1.0)
                    and _pg(A.T @ loss.gradient(y, u0 + A @ w_new) + c, w_new) < kkt):
                break
            t *= 0.5
        if t < 1e-12:
            break
        # at the KKT floor of rounding the steps stop changing S: three steps without any
        # decrease end the iteration (instead of running to max_iter with the same point)
        n_flat = n_flat + 1 if not f_new < f else 0
        w, f = w_new, f_new
        if n_flat >= 3:
            break
    u = u0 + A @ w
    kkt = _pg(A.T @ loss.gradient(y, u) + c, w)
    return w, n_iter, float(kkt)


_EPS = float(np.finfo(np.float64).eps)


def _pg(g, w):
    g = np.where((w <= 0.0) & (g > 0.0), 0.0, g)
    g = np.where((w >= 1.0) & (g < 0.0), 0.0, g)
    return float(np.max(np.abs(g), initial=0.0))


class KnifeWeightStep(ConvexProblem):
    r"""KNIFE's weight step (variable ``"w"``), see the module docstring.

    Parameters
    ----------
    loss : str or Loss
    y, A, u0, c : arrays
        Problem data; change them along a fit with :meth:`set_data` (the
        CVXPY problem is built once per shape of ``A``).
    w0 : array, optional
        Warm start for the native solver.
    delta : float
        Width of the huberized hinge.
    """

    kind = "knife_wstep"

    def __init__(self, loss, y, A, u0, c, *, w0=None, delta: float = 1.0):
        super().__init__()
        self.loss = get_loss(loss, delta=delta)
        self.y = np.asarray(y, dtype=float)
        self.w0 = w0
        self.set_data(A, u0, c)

    def set_data(self, A, u0, c, w0=None) -> None:
        """Replace ``A``, ``u0``, ``c`` (same shapes keep the CVXPY problem)."""
        A = np.asarray(A, dtype=float)
        if self._cvxpy_problem is not None and A.shape != self.A.shape:
            self._cvxpy_problem = None
        self.A = A
        self.u0 = np.asarray(u0, dtype=float)
        self.c = np.asarray(c, dtype=float)
        if w0 is not None:
            self.w0 = w0
        if self._cvxpy_problem is not None:
            self._set_parameters()

    def _set_parameters(self):
        params = {p.name(): p for p in self._cvxpy_problem.parameters()}
        if self.loss.classification:
            params["M"].value = self.y[:, None] * self.A
            params["t0"].value = self.y * self.u0
        else:
            params["M"].value = self.A
            params["t0"].value = self.y - self.u0
        params["c"].value = self.c

    def build(self):
        import cvxpy as cp

        n, p = self.A.shape
        w = cp.Variable(p, name="w")
        M = cp.Parameter((n, p), name="M")
        t0 = cp.Parameter(n, name="t0")
        c = cp.Parameter(p, name="c")
        name = self.loss.name
        if name == "squared":
            data = cp.sum_squares(t0 - M @ w)
        elif name == "squared_hinge":
            data = cp.sum_squares(cp.pos(1 - t0 - M @ w))
        elif name == "huberized_hinge":
            d = self.loss.delta
            data = cp.sum(cp.huber(cp.pos(1 - t0 - M @ w), d)) / (2.0 * d)
        elif name == "logistic":
            data = cp.sum(cp.logistic(-(t0 + M @ w)))
        else:  # pragma: no cover - guarded by get_loss
            raise ValueError(f"no CVXPY form for loss {name!r}")
        prob = cp.Problem(cp.Minimize(data + c @ w), [w >= 0, w <= 1])
        self._cvxpy_problem = prob
        self._set_parameters()
        return prob

    def evaluate(self, solution):
        w = np.asarray(solution["w"], dtype=float)
        obj = _surrogate(self.loss, self.y, self.A, self.u0, self.c, w)
        viol = max(0.0, float(np.max(-w, initial=0.0)), float(np.max(w - 1.0, initial=0.0)))
        return float(obj), viol

    def kkt_residual(self, w) -> float:
        """Projected-gradient residual at ``w``."""
        return _pg(_surrogate_gradient(self.loss, self.y, self.A, self.u0, self.c, np.asarray(w, float)),
                   np.asarray(w, float))

    def scale(self) -> float:
        return _scale(self.loss, self.y, self.A, self.u0, self.c)

    def selected(self, solution):
        return np.asarray(solution["w"]) > 1e-6


@register_native("knife_wstep", method="box QP coordinate descent / projected Newton (Numba)")
def _native_knife_wstep(problem: KnifeWeightStep, *, tol, warm_start=True, max_iter=200):
    t0 = time.perf_counter()
    w, it, kkt = solve_knife_wstep(problem.loss, problem.y, problem.A, problem.u0, problem.c,
                                   problem.w0 if warm_start else None, tol=tol, max_iter=max_iter)
    elapsed = time.perf_counter() - t0
    obj, viol = problem.evaluate({"w": w})
    ok = kkt <= max(tol, 1e-12) * problem.scale() * 10
    return SolverResult(solver="native", status=Status.OPTIMAL if ok else Status.INACCURATE,
                        objective=obj, solution={"w": w}, iterations=it, solve_time=elapsed,
                        max_violation=viol, tolerance={"kkt": tol}, message=f"KKT residual {kkt:.1e}")


@register_native_check("knife_wstep")
def _knife_wstep_check():
    X, y = check_data()
    return KnifeWeightStep("squared", y, X, np.zeros_like(y), np.full(X.shape[1], 0.5)), None
