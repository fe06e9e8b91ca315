r"""Box-constrained convex QP, solved natively by coordinate descent.

.. math::

    \min_{l \le w \le u} \tfrac12 w^\top Q w + c^\top w

with ``Q`` symmetric positive semi-definite.  This is KNIFE's weight step
for squared loss and any other box QP in numkfs.  Exact coordinate
minimisation with the gradient kept up to date costs O(p) per coordinate;
a sweep is O(p²).  Convergence is declared when the projected-gradient
(KKT) residual is below ``tol`` times the scale of the problem.
"""
from __future__ import annotations

import time

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ..._jit import jit
from .._base import ConvexProblem, SolverResult, Status
from ..registry import register_native, register_native_check

__all__ = ["BoxQP", "solve_box_qp", "solve_budget_qp", "box_qp_kkt_residual", "default_max_sweeps"]


@jit(inline=True)
def _projected_gradient_norm(w, g, lo, hi):
    """Max-abs projected gradient (the KKT residual of the box), inlined into its callers."""
    r = 0.0
    for j in range(w.shape[0]):
        gj = g[j]
        if w[j] <= lo[j] and gj > 0.0:
            gj = 0.0
        elif w[j] >= hi[j] and gj < 0.0:
            gj = 0.0
        a = abs(gj)
        if a > r:
            r = a
    return r


@jit(inline=True)
def _gradient(Q, c, w, g):
    """``g = Q @ w + c`` by loops, inlined into its callers: Numba's ``@`` calls BLAS
    through a wrapper that takes half a second to compile, for a p x p product of a few
    microseconds, and a helper of its own would be one more compilation."""
    p = w.shape[0]
    for j in range(p):
        s = c[j]
        for k in range(p):
            s += Q[j, k] * w[k]
        g[j] = s


@jit
def _box_qp_cd(Q, c, lo, hi, w, g, tol, max_sweeps, scale):
    """Coordinate descent in place on ``w`` until the KKT residual is at most
    ``tol * scale``; ``g`` (p) is workspace, left holding the gradient at ``w``.
    Returns (sweeps, kkt residual)."""
    p = w.shape[0]
    _gradient(Q, c, w, g)
    sweeps = 0
    while True:
        res = _projected_gradient_norm(w, g, lo, hi)
        if sweeps >= max_sweeps or res <= tol * scale:
            break
        sweeps += 1
        for j in range(p):
            qjj = Q[j, j]
            if qjj <= 0.0:
                # linear in w_j: go to the bound the gradient points to
                if g[j] > 0.0:
                    new = lo[j]
                elif g[j] < 0.0:
                    new = hi[j]
                else:
                    new = w[j]
            else:
                new = w[j] - g[j] / qjj
                if new < lo[j]:
                    new = lo[j]
                elif new > hi[j]:
                    new = hi[j]
            d = new - w[j]
            if d != 0.0:
                w[j] = new
                for k in range(p):
                    g[k] += d * Q[k, j]
    return sweeps, res


def box_qp_kkt_residual(Q, c, lo, hi, w) -> float:
    """Max-abs projected gradient of the box QP at ``w`` (0 at the optimum)."""
    g = Q @ w + c
    g = np.where((w <= lo) & (g > 0), 0.0, g)
    g = np.where((w >= hi) & (g < 0), 0.0, g)
    return float(np.max(np.abs(g))) if g.size else 0.0


def default_max_sweeps(p: int) -> int:
    """Sweep limit of :func:`solve_box_qp` for ``p`` variables: 200 + 20 p.

    Solves that converge at all need a few dozen sweeps and active-set
    iterations; the limit only stops pathological ones, after O(p³) work.
    """
    return 200 + 20 * int(p)


_USE_JIT = True  # the active-set method in Numba (False: the NumPy reference below, same steps)

_CD_CHUNK = 20  # coordinate-descent sweeps before the active-set method takes over


def _newton_direction(QFF, gF):
    """``-(Q_FF + δI)⁻¹ g_F`` with δ = 1e-10 max diag: the Newton step on the
    range of Q_FF and a long step along the part of g_F in its null space
    (where the objective decreases linearly until a bound).  None when
    the factorisation fails."""
    delta = 1e-10 * max(float(np.max(np.diag(QFF))), 1e-300)
    try:
        f = cho_factor(QFF + delta * np.eye(QFF.shape[0]), check_finite=False)
    except LinAlgError:
        return None
    return -cho_solve(f, gF, check_finite=False)


@jit(inline=True)
def _free_indices(free, idx):
    """The indices where ``free`` is true, into ``idx[:m]``; returns m."""
    m = 0
    for j in range(free.shape[0]):
        if free[j]:
            idx[m] = j
            m += 1
    return m


@jit(inline=True)
def _lu_solve(A, b, m):
    """Solve ``A[:m, :m] x = b[:m]`` by Gaussian elimination with partial
    pivoting, in place (A overwritten, b becomes x).  Returns False when a
    pivot is exactly zero.  LAPACK getrf/getrs's algorithm (unblocked): for
    the budget QP's indefinite working-set systems.  As
    fast as ``np.linalg.solve`` up to about 20 rows, slower beyond (it does
    not vectorise); the working sets of the budget QP (COSSO's
    selected features) are small.
    """
    for k in range(m):
        piv = k
        amax = abs(A[k, k])
        for i in range(k + 1, m):
            a = abs(A[i, k])
            if a > amax:
                amax = a
                piv = i
        if amax == 0.0:
            return False
        if piv != k:
            for j in range(m):
                t = A[k, j]
                A[k, j] = A[piv, j]
                A[piv, j] = t
            t = b[k]
            b[k] = b[piv]
            b[piv] = t
        inv = 1.0 / A[k, k]
        for i in range(k + 1, m):
            f = A[i, k] * inv
            A[i, k] = f
            for j in range(k + 1, m):
                A[i, j] -= f * A[k, j]
            b[i] -= f * b[k]
    for k in range(m - 1, -1, -1):
        s = b[k]
        for j in range(k + 1, m):
            s -= A[k, j] * b[j]
        b[k] = s / A[k, k]
    return True


@jit(inline=True)
def _free_block(Q, c, w, idx, m, M, g_out):
    """The free variables' block of the Newton system: ``M[a, b] = Q[idx[a], idx[b]]`` and
    ``g_out[a]`` the gradient ``(Q w + c)[idx[a]]`` (the leading m x m block and m entries,
    ``idx[:m]`` the free variables); returns the largest diagonal entry (the ridge scale)."""
    p = w.shape[0]
    dmax = 0.0
    for a in range(m):
        ja = idx[a]
        g = c[ja]
        for b in range(p):
            g += Q[ja, b] * w[b]
        g_out[a] = g
        for b in range(m):
            M[a, b] = Q[ja, idx[b]]
        if M[a, a] > dmax:
            dmax = M[a, a]
    return dmax


@jit
def _active_set_jit(Q, c, lo, hi, w, free, tol, max_iter, idx, L, work):
    """Numba form of :func:`_active_set` (same steps); ``w`` and ``free`` updated in place.
    Workspace from the caller: ``idx`` (p integers), ``L`` (p x p) and ``work`` (3 x p).
    Returns (iterations, kkt residual).

    One loop, each pass computing the gradient at ``w``, then either a Newton step on the
    free set (at most p + 1 per iteration) or the KKT check and the coordinate freed.
    Loops only, no helper, array method, allocation, ``np.linalg`` or ``@``: each of those
    is a compilation of its own on first use (a helper called with a count that starts at
    0 compiles twice, for the literal 0 and for int64), and Numba's compile time grows
    with the lines of code, and this function is compiled by the first KNIFE fit
    (``benchmarks/startup.py`` measures it).  The working-set system is solved by a Cholesky
    factorisation written out (row by row, in ``L``): numkfs's working sets are at most
    p x p (p features), where it is as fast as LAPACK."""
    p = w.shape[0]
    g = work[0]
    d = work[1]
    cand = work[2]
    it = 1
    inner = 0  # Newton steps in this iteration (at most p + 1)
    res = np.inf
    while True:
        # the gradient at w and the scale max(1, |c|, |Q||w|) of box_qp_scale
        scale = 1.0
        for j in range(p):
            gj = c[j]
            s = 0.0
            for k in range(p):
                gj += Q[j, k] * w[k]
                s += abs(Q[j, k]) * abs(w[k])
            g[j] = gj
            if abs(c[j]) > scale:
                scale = abs(c[j])
            if s > scale:
                scale = s
        m = 0
        for j in range(p):
            if free[j]:
                idx[m] = j
                m += 1
        if inner <= p and m > 0:
            # a step of the minimisation over the free set F = idx[:m]; inner = p + 1 ends it
            inner += 1
            dmax = 0.0
            for a in range(m):
                ja = idx[a]
                for b in range(m):
                    L[a, b] = Q[ja, idx[b]]
                d[a] = -g[ja]
                if L[a, a] > dmax:
                    dmax = L[a, a]
            delta = 1e-10 * max(dmax, 1e-300)
            ok = True
            for i in range(m):
                L[i, i] += delta
                for j in range(i + 1):
                    s = 0.0
                    for k in range(j):
                        s += L[i, k] * L[j, k]
                    s = L[i, j] - s
                    if i != j:
                        L[i, j] = s / L[j, j]
                    elif s > 0.0:
                        L[i, i] = np.sqrt(s)
                    else:
                        ok = False  # not positive definite even with the ridge
                        break
                if not ok:
                    break
            if not ok:
                inner = p + 1  # as the NumPy form's failed cho_factor
                continue
            for i in range(m):
                s = 0.0
                for k in range(i):
                    s += L[i, k] * d[k]
                d[i] = (d[i] - s) / L[i, i]
            for i in range(m - 1, -1, -1):
                s = d[i]
                for k in range(i + 1, m):
                    s -= L[k, i] * d[k]
                d[i] = s / L[i, i]
            slope = 0.0
            curv = 0.0
            for a in range(m):
                slope += g[idx[a]] * d[a]
                s = 0.0
                for b in range(m):
                    s += Q[idx[a], idx[b]] * d[b]
                curv += d[a] * s
            t = -slope / curv if curv > 0.0 else np.inf
            kmin = -1  # the first bound met along d, at step tmin
            tmin = np.inf
            for a in range(m):
                ja = idx[a]
                tb = np.inf
                if d[a] > 0.0:
                    tb = (hi[ja] - w[ja]) / d[a]
                elif d[a] < 0.0:
                    tb = (lo[ja] - w[ja]) / d[a]
                if tb < tmin:
                    tmin = tb
                    kmin = a
            if not slope < 0.0 or not (tmin < t or t < np.inf):
                inner = p + 1
                continue
            interior = not tmin < t  # the minimiser over F is inside the box
            step = t
            if not interior:
                step = tmin
                if t < np.inf:
                    # the projected Newton step, taken when it lowers the objective
                    for j in range(p):
                        cand[j] = w[j]
                    for a in range(m):
                        ja = idx[a]
                        cand[ja] = min(max(w[ja] + t * d[a], lo[ja]), hi[ja])
                    fc = 0.0
                    fw = 0.0
                    for j in range(p):
                        sc = 0.0
                        sw = 0.0
                        for k in range(p):
                            sc += Q[j, k] * cand[k]
                            sw += Q[j, k] * w[k]
                        fc += cand[j] * (0.5 * sc + c[j])
                        fw += w[j] * (0.5 * sw + c[j])
                    if fc < fw:
                        step = t
            for a in range(m):
                ja = idx[a]
                w[ja] = min(max(w[ja] + step * d[a], lo[ja]), hi[ja])
            if step < t:
                jk = idx[kmin]
                w[jk] = lo[jk] if d[kmin] < 0.0 else hi[jk]
            if interior:
                inner = p + 1
                continue
            for a in range(m):  # coordinates that reached a bound leave F
                ja = idx[a]
                if w[ja] <= lo[ja] or w[ja] >= hi[ja]:
                    free[ja] = False
            continue
        # the KKT residual, and the bound coordinate whose gradient violates the KKT
        # conditions most
        res = 0.0
        jbest = -1
        vbest = 0.0
        for j in range(p):
            gj = g[j]
            lower = w[j] <= lo[j]
            upper = w[j] >= hi[j]
            if not ((lower and gj > 0.0) or (upper and gj < 0.0)) and abs(gj) > res:
                res = abs(gj)
            v = 0.0
            if lower and gj < 0.0:
                v = -gj
            elif upper and gj > 0.0:
                v = gj
            if not free[j] and v > vbest:
                vbest = v
                jbest = j
        if res <= tol * scale or jbest < 0 or it >= max_iter:
            break
        it += 1
        inner = 0
        free[jbest] = True
    return it, res


@jit
def _budget_active_set_jit(Q, c, M, w, free, on_budget, tol, max_iter, idx, A, work):
    """Primal active-set method for ``min ½wᵀQw + cᵀw`` over ``w ≥ 0, Σw ≤ M``
    from the feasible ``w`` (updated in place, with ``free``).

    The working set is the free coordinates F plus, when ``on_budget``, the
    budget as an equality Σ_F w = M.  Each inner step solves the (δ-ridged)
    equality-constrained Newton system on F, moves to its solution or to the
    first bound / the budget met; the outer step then drops the budget when
    its multiplier is negative, else frees the bound coordinate with the most
    negative multiplier.  Workspace from the caller (allocations inside would be compilations
    of their own): ``idx`` (p integers), ``A`` (p + 1 x p + 1) and ``work`` (3 x p + 1).
    Returns (iterations, kkt residual, budget multiplier).
    """
    p = w.shape[0]
    it = 0
    nu = 0.0
    res = np.inf
    r = work[0]
    g = work[1]
    sol = work[2]
    while it < max_iter:
        it += 1
        for _ in range(2 * p + 2):
            m = _free_indices(free, idx)
            if m == 0:
                nu = 0.0
                break
            # the working-set system [Q_FF + δI, 1; 1ᵀ, 0] [x; ν] = [-g_F; 0] (without the
            # budget row and column when it is inactive) by LU with partial pivoting, the
            # algorithm of LAPACK's gesv: a Schur complement through a Cholesky of the
            # δ-ridged Q_FF loses digits when Q is singular
            k = m + 1 if on_budget else m
            dmax = _free_block(Q, c, w, idx, m, A, r)
            delta = 1e-10 * max(dmax, 1e-300)
            for a in range(m):
                r[a] = -r[a]  # r = -g_F, the right-hand side
                sol[a] = r[a]
                A[a, a] += delta
                A[a, m] = 1.0
                A[m, a] = 1.0
            A[m, m] = 0.0
            sol[m] = 0.0
            if not _lu_solve(A, sol, k):
                raise np.linalg.LinAlgError("budget QP: singular working-set system")
            nu = sol[m] if on_budget else 0.0
            slope = 0.0
            dsum = 0.0
            for a in range(m):
                slope -= r[a] * sol[a]
                dsum += sol[a]
            if not slope < 0.0:
                break  # optimal on the face already
            t = 1.0
            kmin = -1
            for a in range(m):
                if sol[a] < 0.0:
                    tb = -w[idx[a]] / sol[a]
                    if tb < t:
                        t = tb
                        kmin = a
            hit_budget = False
            if not on_budget and dsum > 0.0:
                total = 0.0
                for j in range(p):
                    total += w[j]
                tb = (M - total) / dsum
                if tb < t:
                    t = max(tb, 0.0)
                    kmin = -1
                    hit_budget = True
            for a in range(m):
                ja = idx[a]
                w[ja] = max(w[ja] + t * sol[a], 0.0)
                if w[ja] <= 0.0:
                    w[ja] = 0.0
                    free[ja] = False
            if kmin >= 0:
                w[idx[kmin]] = 0.0
                free[idx[kmin]] = False
                continue
            if hit_budget:
                on_budget = True
                continue
            break
        # multipliers: ν from the free coordinates, λ_j = g_j + ν for the bound ones
        _gradient(Q, c, w, g)
        if on_budget:
            m = _free_indices(free, idx)
            if m > 0:
                nu = 0.0
                for a in range(m):
                    nu -= g[idx[a]]
                nu /= m
        else:
            nu = 0.0
        res = 0.0
        scale = 1.0
        for j in range(p):
            gj = g[j] + (nu if nu > 0.0 else 0.0)
            if not free[j] and gj > 0.0:
                gj = 0.0
            if abs(gj) > res:
                res = abs(gj)
            if abs(c[j]) > scale:
                scale = abs(c[j])
        if on_budget and nu < 0.0:
            on_budget = False  # the budget pushes the wrong way: release it
            continue
        if res <= tol * scale:
            break
        jbest = -1
        vbest = 0.0
        for j in range(p):
            if free[j]:
                continue
            v = -(g[j] + nu)
            if v > vbest:
                vbest = v
                jbest = j
        if jbest < 0:
            break
        free[jbest] = True
    return it, res, nu


def solve_budget_qp(Q, c, M: float, w0=None, *, tol: float = 1e-10, max_iter: int | None = None):
    """``min ½wᵀQw + cᵀw`` over ``w ≥ 0, Σw ≤ M`` by a primal active-set method.

    The θ-step of COSSO (:mod:`numkfs.solvers.native.garrote`): the budget
    is part of the working set, so one solve replaces a search over the
    budget's multiplier with a box QP per trial.

    Parameters
    ----------
    Q : array-like of shape (p, p)
        Symmetric positive semi-definite (singular allowed: the working-set
        systems get a ridge of 1e-10 max diag Q).
    c : array-like of shape (p,)
        The linear term.
    M : float
        The budget (> 0).
    w0 : array-like of shape (p,), optional
        Starting point, clipped to w ≥ 0 and scaled into the budget
        (default zeros).
    tol : float, default=1e-10
        Stop when the KKT residual is at most ``tol`` times max(1, max|c|).
    max_iter : int, optional
        Outer (working-set) iterations; default :func:`default_max_sweeps` of p.

    Returns
    -------
    w : ndarray of shape (p,)
    iterations : int
    kkt_residual : float
        Max-abs projected gradient of ``Qw + c + ν`` (the caller compares it
        with ``tol`` times max(1, max|c|)).
    nu : float
        The multiplier of the budget (0 when it is slack).
    """
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    c = np.ascontiguousarray(c, dtype=np.float64)
    p = c.shape[0]
    w = np.zeros(p) if w0 is None else np.maximum(np.array(w0, dtype=np.float64), 0.0)
    s = w.sum()
    if s > M:
        w *= M / s
    on_budget = bool(w.sum() >= M * (1.0 - 1e-12)) and M > 0
    free = w > 0.0
    if max_iter is None:
        max_iter = default_max_sweeps(p)
    it, res, nu = _budget_active_set_jit(Q, c, float(M), w, free, on_budget, float(tol), int(max_iter),
                                         np.empty(p, dtype=np.int64), np.empty((p + 1, p + 1)), np.empty((3, p + 1)))
    return w, int(it), float(res), float(nu)


def _quad(Q, c, w) -> float:
    return float(0.5 * (w @ Q @ w) + c @ w)


def _active_set(Q, c, lo, hi, w, tol, max_iter):
    """Primal active-set method (Lawson-Hanson for a box) from the feasible ``w``.

    The working set F starts as the coordinates strictly inside their
    bounds.  Each iteration minimises over F with the others fixed, moving
    from w to that minimiser projected on the box when that lowers the
    objective, else stopping at the first bound met (coordinates that reach
    a bound leave F, and the minimisation is repeated), then adds the
    bound coordinate whose gradient violates the KKT conditions most.
    Coordinate descent finds a good working set fast but converges
    linearly, very slowly on the singular Q of a garrote step with p > n;
    this finishes in about as many iterations as the working set changes.
    Returns ``(w, iterations, kkt residual)``.
    """
    p = w.shape[0]
    absQ = np.abs(Q)
    free = (w > lo) & (w < hi)
    bounded = np.isfinite(lo) | np.isfinite(hi)
    if np.count_nonzero(free & bounded) > max(10, p // 2):
        # a large working set costs one factorisation per coordinate dropped: start
        # instead from the nearest bounds (Lawson-Hanson), adding coordinates one by one
        to_lo = np.isfinite(lo) & (~np.isfinite(hi) | (w - lo <= hi - w))
        start = np.where(to_lo, lo, np.where(np.isfinite(hi), hi, w))
        w[:] = start
        free = ~bounded
    if _USE_JIT:
        it, res = _active_set_jit(Q, c, lo, hi, w, free, float(tol), int(max_iter), np.empty(p, dtype=np.int64),
                                  np.empty((p, p)), np.empty((3, p)))
        return w, int(it), float(res)
    it = 0
    res = box_qp_kkt_residual(Q, c, lo, hi, w)
    while it < max_iter:
        it += 1
        for _ in range(p + 1):  # minimise over F, dropping coordinates that reach a bound
            idx = np.flatnonzero(free)
            if idx.size == 0:
                break
            gF = Q[idx] @ w + c[idx]
            QFF = Q[np.ix_(idx, idx)]
            d = _newton_direction(QFF, gF)
            if d is None or not float(gF @ d) < 0.0:
                break
            curv = float(d @ QFF @ d)
            t = -float(gF @ d) / curv if curv > 0.0 else np.inf
            wF, loF, hiF = w[idx], lo[idx], hi[idx]
            with np.errstate(divide="ignore", invalid="ignore"):
                t_box = np.where(d > 0, (hiF - wF) / d, np.where(d < 0, (loF - wF) / d, np.inf))
            k = int(np.argmin(t_box))
            if t_box[k] < t:
                if np.isfinite(t):
                    # projected Newton step: accepted when it lowers the objective (drops many
                    # coordinates at once); else the step stops at the first bound met
                    cand = w.copy()
                    cand[idx] = np.clip(wF + t * d, loF, hiF)
                    if _quad(Q, c, cand) < _quad(Q, c, w):
                        w[:] = cand
                        free[idx[(w[idx] <= loF) | (w[idx] >= hiF)]] = False
                        continue
                w[idx] = np.clip(wF + t_box[k] * d, loF, hiF)
                w[idx[k]] = loF[k] if d[k] < 0 else hiF[k]
                free[idx[(w[idx] <= loF) | (w[idx] >= hiF)]] = False
                continue
            if not t < np.inf:
                break
            w[idx] = np.clip(wF + t * d, loF, hiF)
            break
        g = Q @ w + c
        res = box_qp_kkt_residual(Q, c, lo, hi, w)
        if res <= tol * box_qp_scale(c, w, absQ):
            break
        viol = np.where(~free & (w <= lo), np.maximum(-g, 0.0), 0.0)
        viol = np.maximum(viol, np.where(~free & (w >= hi), np.maximum(g, 0.0), 0.0))
        j = int(np.argmax(viol))
        if viol[j] <= 0.0:
            break  # the minimisation over F fell short (round-off): nothing left to add
        free[j] = True
    return w, it, res


def solve_box_qp(Q, c, lo, hi, w0=None, *, tol: float = 1e-10, max_sweeps: int | None = None):
    """Solve the box QP natively; return ``(w, sweeps, kkt_residual)``.

    A few sweeps of coordinate descent, then, if they did not converge,
    a primal active-set method from that point (:func:`_active_set`),
    which finishes where plain coordinate descent needed up to 10⁵
    sweeps (singular Q).  ``max_sweeps`` bounds the sweeps plus
    active-set iterations (each O(p²) plus a factorisation of the working
    set) and defaults to :func:`default_max_sweeps` (it grows with p);
    when it is reached the caller sees a KKT residual above ``tol`` times
    :func:`box_qp_scale`.

    Parameters
    ----------
    Q : array-like of shape (p, p)
        The quadratic term (symmetric positive semidefinite).
    c : array-like of shape (p,)
        The linear term.
    lo, hi : float or array-like of shape (p,)
        Lower and upper bounds (scalars broadcast); ``lo <= hi`` is required.
    w0 : array-like of shape (p,), optional
        Starting point, clipped into the box (default: zeros clipped into
        the box).
    tol : float, default=1e-10
        Stop when the projected-gradient KKT residual is at most ``tol``
        times :func:`box_qp_scale`.
    max_sweeps : int, optional
        Bound on coordinate-descent sweeps plus active-set iterations
        (default: :func:`default_max_sweeps` of p).

    Returns
    -------
    w : ndarray of shape (p,)
        The solution.
    sweeps : int
        Sweeps plus active-set iterations used.
    kkt_residual : float
        The absolute KKT residual at ``w``.
    """
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    c = np.ascontiguousarray(c, dtype=np.float64)
    p = c.shape[0]
    if Q.shape != (p, p):
        raise ValueError(f"box QP: Q must be {p} x {p} (c has {p} entries); got shape {Q.shape}.")
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (p,)).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (p,)).copy()
    if np.any(lo > hi):
        raise ValueError("box QP: a lower bound exceeds its upper bound.")
    if max_sweeps is None:
        max_sweeps = default_max_sweeps(p)
    max_sweeps = int(max_sweeps)
    w = np.clip(np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64), lo, hi)
    absQ = np.abs(Q)
    sweeps, res = _box_qp_cd(Q, c, lo, hi, w, np.empty(p), float(tol), min(_CD_CHUNK, max_sweeps),
                             box_qp_scale(c, w, absQ))
    total = int(sweeps)
    if res > tol * box_qp_scale(c, w, absQ) and total < max_sweeps:
        w, it, res = _active_set(Q, c, lo, hi, w, float(tol), max_sweeps - total)
        total += it
    return w, total, float(res)


def box_qp_scale(c, w, absQ) -> float:
    """The size of the terms of the gradient ``Qw + c``: max(1, |c|, |Q||w|).

    The KKT residual is compared with ``tol`` times this scale: round-off
    in ``Qw + c`` is of order machine epsilon times it, so a residual
    relative to ``|c|`` alone can be out of reach (large w, singular Q).
    """
    return max(1.0, float(np.max(np.abs(c), initial=0.0)), float(np.max(absQ @ np.abs(w), initial=0.0)))


class BoxQP(ConvexProblem):
    r"""``min ½ wᵀQw + cᵀw`` over ``lo ≤ w ≤ hi`` (variable named ``"w"``).

    The CVXPY form uses ``Q = FᵀF`` through ``sum_squares(F w)`` when a factor
    ``F`` is given (better conditioned and DPP-friendly), else ``quad_form``.

    Parameters
    ----------
    Q : array-like of shape (p, p)
        The quadratic term (symmetric positive semidefinite).
    c : array-like of shape (p,)
        The linear term.
    lo : float or array-like of shape (p,), default=0.0
        Lower bounds (a scalar broadcasts).
    hi : float or array-like of shape (p,), default=1.0
        Upper bounds (a scalar broadcasts).
    factor : array-like of shape (m, p), optional
        A matrix ``F`` with ``Q = FᵀF``, used only by the CVXPY form.
    w0 : array-like of shape (p,), optional
        Starting point for the native solver when it warm-starts.
    """

    kind = "box_qp"

    def __init__(self, Q, c, lo=0.0, hi=1.0, *, factor=None, w0=None):
        super().__init__()
        self.Q = np.asarray(Q, dtype=float)
        self.c = np.asarray(c, dtype=float)
        p = self.c.shape[0]
        self.lo = np.broadcast_to(np.asarray(lo, dtype=float), (p,)).copy()
        self.hi = np.broadcast_to(np.asarray(hi, dtype=float), (p,)).copy()
        self.factor = None if factor is None else np.asarray(factor, dtype=float)
        self.w0 = w0

    def build(self):
        import cvxpy as cp

        w = cp.Variable(self.c.shape[0], name="w")
        if self.factor is not None:
            quad = 0.5 * cp.sum_squares(self.factor @ w)
        else:
            quad = 0.5 * cp.quad_form(w, cp.psd_wrap(0.5 * (self.Q + self.Q.T)))
        return cp.Problem(cp.Minimize(quad + self.c @ w), [w >= self.lo, w <= self.hi])

    def evaluate(self, solution):
        w = np.asarray(solution["w"], dtype=float)
        obj = 0.5 * w @ self.Q @ w + self.c @ w
        viol = max(0.0, float(np.max(self.lo - w, initial=0.0)), float(np.max(w - self.hi, initial=0.0)))
        return float(obj), viol

    def selected(self, solution):
        return np.abs(np.asarray(solution["w"])) > 1e-6

    def kkt_residual(self, w) -> float:
        """Projected-gradient residual at ``w`` (0 at the optimum)."""
        return box_qp_kkt_residual(self.Q, self.c, self.lo, self.hi, np.asarray(w, dtype=float).ravel())

    def relative_kkt_residual(self, solution) -> float:
        """KKT residual at ``solution["w"]`` over the size of the gradient's terms there
        (:func:`box_qp_scale`), the measure the native solver stops on."""
        w = np.asarray(solution["w"], dtype=float).ravel()
        return self.kkt_residual(w) / box_qp_scale(self.c, w, np.abs(self.Q))


@register_native_check("box_qp")
def _box_qp_check():
    """min ½(w1² + w2²) - w1 - 3 w2 over [0, 1]²: optimum (1, 1), objective -3."""
    return BoxQP(np.eye(2), np.array([-1.0, -3.0]), 0.0, 1.0), -3.0


@register_native("box_qp", method="coordinate descent + active set (Numba)")
def _native_box_qp(problem: BoxQP, *, tol, warm_start=True, max_sweeps=None):
    t0 = time.perf_counter()
    w, sweeps, res = solve_box_qp(problem.Q, problem.c, problem.lo, problem.hi,
                                  problem.w0 if warm_start else None, tol=tol, max_sweeps=max_sweeps)
    elapsed = time.perf_counter() - t0
    obj, viol = problem.evaluate({"w": w})
    scale = box_qp_scale(problem.c, w, np.abs(problem.Q))
    status = Status.OPTIMAL if res <= tol * scale else Status.INACCURATE
    return SolverResult(solver="native", status=status, objective=obj, solution={"w": w},
                        iterations=sweeps, solve_time=elapsed, max_violation=viol,
                        tolerance={"kkt": tol}, message=f"KKT residual {res:.1e}")
