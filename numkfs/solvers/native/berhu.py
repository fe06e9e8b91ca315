r"""The berHu-penalised least squares: the native solvers of the linear garrote.

The linear garrote (:mod:`numkfs.solvers.native.garrote`, kind
``"linear_garrote"``) with w eliminated.

*Native solver: eliminate w, then coordinate descent on β̃.*  For fixed
:math:`b = \tilde\beta_j` the weight problem
:math:`\min_{0 \le w \le 1} \lambda_1 b^2 / w + \lambda_2 w` is solved by
:math:`w^\star = \min(1, |b| / \kappa)` with :math:`\kappa = \sqrt{\lambda_2 /
\lambda_1}` (the unconstrained minimiser is :math:`\sqrt{\lambda_1/\lambda_2}
|b|`, and the function is convex in w, so clipping to the box is exact).
Substituting gives a separable penalty, the *reverse Huber* ("berHu")
function

.. math::

    \rho(b) = \min_{0 \le w \le 1} \frac{\lambda_1 b^2}{w} + \lambda_2 w =
    \begin{cases} 2\mu |b| & |b| \le \kappa \\
                  \lambda_1 b^2 + \lambda_2 & |b| > \kappa \end{cases},
    \qquad \mu = \sqrt{\lambda_1 \lambda_2},

which is convex and continuously differentiable away from 0 (both pieces
and their slopes agree at :math:`|b| = \kappa`: value :math:`2\lambda_2`,
slope :math:`2\mu`).  Partial minimisation of a jointly convex function
keeps convexity, so :math:`\min_\beta \|y - X\beta\|^2 + \sum_j \rho(\beta_j)`
is the same convex problem and every minimiser gives the garrote optimum
with :math:`w_j = \min(1, |\tilde\beta_j|/\kappa)`.  One coordinate, with
:math:`a = \|x_j\|^2` and :math:`z = x_j^\top(y - X\beta) + a \beta_j`,
minimises :math:`a b^2 - 2 z b + \rho(b)`; its subgradient condition gives
the closed form

.. math::

    b = \begin{cases} 0 & |z| \le \mu \\
        \operatorname{sign}(z)(|z| - \mu)/a & \mu < |z| \le (a + \lambda_1)\kappa \\
        z / (a + \lambda_1) & |z| > (a + \lambda_1)\kappa \end{cases}

(the two thresholds coincide: :math:`\mu + a\kappa = (a+\lambda_1)\kappa`
because :math:`\mu = \lambda_1\kappa`).  The loop works on the Gram matrix
:math:`X^\top X` (O(p) per coordinate) and stops when the subgradient (KKT)
residual :math:`\max_j \operatorname{dist}(x_j^\top r, \partial\rho(\beta_j)/2)`
is below ``tol`` times :math:`\max(1, \|X^\top y\|_\infty)`.  On wide
data (p > n) the same iteration runs in the residual form, O(n) per
coordinate, over a working set seeded by the strong rule, with an exact
solve on the active partition and the same KKT test over all p features
(:func:`solve_linear_garrote_wide`); no p x p matrix is formed.  As a
by-product, :math:`\tilde\beta = 0` is optimal iff :math:`|x_j^\top y| \le \mu`
for all j, i.e. iff :math:`\lambda_2 \ge \max_j (x_j^\top y)^2 / \lambda_1`
(:func:`garrote_lambda2_max`).  At :math:`\lambda_2 = 0` the problem is ridge
regression and w = 1.  A per-feature penalty :math:`\lambda_2 \sum_j \pi_j w_j`
(``penalty_weights``, an adaptive garrote) only replaces λ2 by
:math:`\lambda_2 \pi_j` in μ and κ coordinate by coordinate.
"""
from __future__ import annotations

import numpy as np

from ..._jit import jit

__all__ = [
    "berhu_penalty",
    "garrote_lambda2_max",
    "garrote_weights",
    "solve_linear_garrote",
    "solve_linear_garrote_wide",
    "garrote_duality_gap",
]


# --------------------------------------------------------------------------
# closed forms


def berhu_penalty(beta, lambda1: float, lambda2) -> np.ndarray:
    r"""``ρ(β_j) = min_{0≤w≤1} λ1 β_j²/w + λ2_j w`` element-wise (reverse Huber);
    ``lambda2`` is a scalar or one value per feature."""
    b = np.abs(np.asarray(beta, dtype=float))
    l2 = np.broadcast_to(np.asarray(lambda2, dtype=float), b.shape)
    kappa = np.sqrt(l2 / lambda1)
    lin = 2.0 * np.sqrt(lambda1 * l2) * b
    return np.where(b <= kappa, lin, lambda1 * b * b + l2)


def garrote_weights(beta, lambda1: float, lambda2) -> np.ndarray:
    """The optimal weights ``w_j = min(1, sqrt(λ1/λ2_j) |β̃_j|)`` (1 where λ2_j = 0)."""
    b = np.abs(np.asarray(beta, dtype=float))
    l2 = np.broadcast_to(np.asarray(lambda2, dtype=float), b.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.minimum(1.0, b * np.sqrt(lambda1 / l2))
    return np.where(l2 > 0, w, 1.0)


def garrote_lambda2_max(X, y, lambda1: float, penalty_weights=None) -> float:
    r"""Smallest λ2 at which every weight is zero: :math:`\max_j (x_j^\top y)^2 / (\lambda_1 \pi_j)`."""
    g = np.asarray(X, dtype=float).T @ np.asarray(y, dtype=float)
    g2 = g * g / lambda1
    if penalty_weights is not None:
        pw = np.asarray(penalty_weights, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            g2 = np.where(pw > 0, g2 / pw, 0.0)  # assumes every π_j > 0
    return float(np.max(g2)) if g.size else 0.0


# --------------------------------------------------------------------------
# native coordinate descent on the berHu-penalised least squares


@jit
def _berhu_kkt(H, q, g, beta, lam1, mu, kappa):
    res = 0.0
    for j in range(beta.shape[0]):
        z = q[j] - g[j]
        b = beta[j]
        if b == 0.0:
            r = abs(z) - mu[j]
            if r < 0.0:
                r = 0.0
        elif abs(b) <= kappa[j]:
            r = abs(z - (mu[j] if b > 0.0 else -mu[j]))
        else:
            r = abs(z - lam1 * b)
        if r > res:
            res = r
    return res


@jit
def _berhu_cd(H, q, lam1, mu, kappa, beta, g, tol, max_sweeps):
    """Coordinate descent in place on ``beta`` (``g = H β`` kept up to date, ``mu = √(λ1 λ2)``,
    ``kappa = √(λ2/λ1)``, all from the caller: NumPy's product and array expressions inside
    would be compilations of their own on first use); returns (sweeps, kkt residual)."""
    p = beta.shape[0]
    scale = 1.0
    for j in range(p):
        if abs(q[j]) > scale:
            scale = abs(q[j])
    res = _berhu_kkt(H, q, g, beta, lam1, mu, kappa)
    sweeps = 0
    while sweeps < max_sweeps and res > tol * scale:
        sweeps += 1
        for j in range(p):
            a = H[j, j]
            if a <= 0.0:
                new = 0.0
            else:
                z = q[j] - g[j] + a * beta[j]
                az = abs(z)
                if az <= mu[j]:
                    new = 0.0
                elif az <= (a + lam1) * kappa[j]:
                    new = (az - mu[j]) / a
                    if z < 0.0:
                        new = -new
                else:
                    new = z / (a + lam1)
            d = new - beta[j]
            if d != 0.0:
                beta[j] = new
                for k in range(p):
                    g[k] += d * H[j, k]
        res = _berhu_kkt(H, q, g, beta, lam1, mu, kappa)
    return sweeps, res


def solve_linear_garrote(H, q, lambda1: float, lambda2, beta0=None, *, tol: float = 1e-10,
                         max_sweeps: int = 100_000):
    """Native garrote solve from the Gram matrix ``H = XᵀX`` and ``q = Xᵀy``.

    ``lambda2`` is a scalar or one value per feature (penalty Σ λ2_j w_j).
    Returns ``(beta, w, sweeps, kkt_residual)``.
    """
    H = np.ascontiguousarray(H, dtype=np.float64)
    q = np.ascontiguousarray(q, dtype=np.float64)
    l2 = np.ascontiguousarray(np.broadcast_to(np.asarray(lambda2, dtype=np.float64), q.shape))
    beta = np.zeros(q.shape[0]) if beta0 is None else np.array(beta0, dtype=np.float64)
    lam1 = float(lambda1)
    sweeps, res = _berhu_cd(H, q, lam1, np.sqrt(lam1 * l2), np.sqrt(l2 / lam1), beta, H @ beta, float(tol),
                            int(max_sweeps))
    return beta, garrote_weights(beta, lambda1, l2), int(sweeps), float(res)


# --------------------------------------------------------------------------
# wide data (p > n): residual form, working set, exact solve on the partition
#
# The Gram loop above costs O(p) per coordinate change and needs the p x p
# matrix XᵀX.  On wide data it is also slow to converge: the active features
# number about n, their Gram block is ill-conditioned, and near λ2 = 0 every
# feature is active (ridge with p >> n), so coordinate descent at tol 1e-10
# takes 10^3-10^5 sweeps.  The wide solver instead
#
# * keeps the residual r = y - Xβ̃ (an n-vector): a coordinate update costs
#   O(n) (z = x_jᵀr + a_j β̃_j, r -= Δ x_j), a sweep over a working set W
#   costs O(n |W|), and a full KKT check is one product Xᵀr, O(np);
# * works on W = support ∪ the worst KKT violators (at most twice the
#   support, doubling while violators remain, as celer/skglm do), seeded on
#   a path by the sequential strong rule |x_jᵀr(λ_prev)| ≥ 2μ_j - μ_j,prev
#   (Tibshirani et al. 2012, with μ = sqrt(λ1 λ2) in the role of the lasso's
#   λ), and stops only when the KKT residual over *all* p features is below
#   tol · max(1, ||Xᵀy||_∞), the same test as the Gram loop;
# * solves the KKT system of a partition exactly once coordinate descent
#   has stopped moving features between the three pieces of ρ (zero; linear
#   part 0 < |β̃_j| ≤ κ_j, where x_jᵀr = μ_j sign β̃_j; quadratic part
#   |β̃_j| > κ_j, where x_jᵀr = λ1 β̃_j).  The partition is the one a
#   coordinate update would give at the current point (a semismooth Newton /
#   primal-dual active-set step).  With A = L ∪ Q the non-zero features this
#   is (X_Aᵀ X_A + λ1 D_Q) β̃_A = X_Aᵀ y - μ_L s_L, solved in the |A|
#   unknowns when |A| ≤ n, else in the n-dimensional form
#   M r = y - X_L β̃_L, X_Lᵀ r = μ_L s_L with M = I + X_Q X_Qᵀ/λ1 and
#   β̃_Q = X_Qᵀ r/λ1 (no p x p matrix), with one step of iterative
#   refinement.  The answer is accepted only if its KKT residual over W
#   passes; otherwise a backtracking line search on the objective (convex
#   along the step) takes the best fraction of the step, up to 20 steps, and
#   coordinate descent goes on (it converges from any point).
#
# Every step is O(n) per coordinate, O(np) per full check and O(n²|A|) per
# exact solve, so a path costs about linearly in p.


@jit
def _berhu_kkt_one(z, b, lam1, mu, kappa):
    if b == 0.0:
        r = abs(z) - mu
        return r if r > 0.0 else 0.0
    if abs(b) <= kappa:
        return abs(z - (mu if b > 0.0 else -mu))
    return abs(z - lam1 * b)


@jit
def _berhu_kkt_all(XT, r, beta, lam1, mu, kappa, v, resj):
    """v = Xᵀr and the per-feature KKT residual into ``resj``; returns its max."""
    p, n = XT.shape
    res = 0.0
    for j in range(p):
        s = 0.0
        for i in range(n):
            s += XT[j, i] * r[i]
        v[j] = s
        rj = _berhu_kkt_one(s, beta[j], lam1, mu[j], kappa[j])
        resj[j] = rj
        if rj > res:
            res = rj
    return res


@jit
def _berhu_kkt_set(XT, r, beta, W, lam1, mu, kappa):
    n = XT.shape[1]
    res = 0.0
    for jj in range(W.shape[0]):
        j = W[jj]
        s = 0.0
        for i in range(n):
            s += XT[j, i] * r[i]
        rj = _berhu_kkt_one(s, beta[j], lam1, mu[j], kappa[j])
        if rj > res:
            res = rj
    return res


@jit
def _berhu_piece(b, kappa):
    if b == 0.0:
        return 0
    if abs(b) <= kappa:
        return 1 if b > 0.0 else -1
    return 2 if b > 0.0 else -2


@jit
def _berhu_cd_set(XT, a, r, beta, W, lam1, mu, kappa, tol_abs, max_sweeps, stop_stable):
    """Coordinate descent over the features ``W`` in place on ``beta`` and the
    residual ``r``.  Stops when the KKT residual over W is <= ``tol_abs``,
    after ``max_sweeps`` sweeps, or (``stop_stable`` > 0) once that many
    consecutive sweeps left every feature on its piece of ρ.
    Returns (sweeps, KKT residual over W, consecutive unchanged sweeps)."""
    n = XT.shape[1]
    res = _berhu_kkt_set(XT, r, beta, W, lam1, mu, kappa)
    sweeps = 0
    stable = 0
    while sweeps < max_sweeps and res > tol_abs:
        sweeps += 1
        moved = False
        for jj in range(W.shape[0]):
            j = W[jj]
            aj = a[j]
            b = beta[j]
            if aj <= 0.0:
                new = 0.0
            else:
                z = 0.0
                for i in range(n):
                    z += XT[j, i] * r[i]
                z += aj * b
                az = abs(z)
                if az <= mu[j]:
                    new = 0.0
                elif az <= (aj + lam1) * kappa[j]:
                    new = (az - mu[j]) / aj
                    if z < 0.0:
                        new = -new
                else:
                    new = z / (aj + lam1)
            d = new - b
            if d != 0.0:
                if _berhu_piece(new, kappa[j]) != _berhu_piece(b, kappa[j]):
                    moved = True
                beta[j] = new
                for i in range(n):
                    r[i] -= d * XT[j, i]
        res = _berhu_kkt_set(XT, r, beta, W, lam1, mu, kappa)
        stable = 0 if moved else stable + 1
        if stop_stable > 0 and stable >= stop_stable:
            break
    return sweeps, res, stable


def _partition_solve(XA, y, Qm, fL, lam1, gQ=None):
    """β̃_A with X_Qᵀ(y - X_A β̃) = λ1 β̃_Q + g_Q and X_Lᵀ(y - X_A β̃) = f_L
    (rows of ``XA`` are the features A; ``Qm`` marks Q).  None if singular."""
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    m, n = XA.shape
    try:
        if m <= n:
            G = XA @ XA.T
            G[np.diag_indices(m)] += lam1 * Qm
            rhs = XA @ y
            rhs[~Qm] -= fL
            if gQ is not None:
                rhs[Qm] -= gQ
            try:
                return cho_solve(cho_factor(G, check_finite=False), rhs, check_finite=False)
            except LinAlgError:  # as below: a least-squares step for the line search
                return np.linalg.lstsq(G, rhs, rcond=None)[0]
        XQ, XL = XA[Qm], XA[~Qm]
        c = y if gQ is None else y + XQ.T @ gQ / lam1
        M = XQ.T @ XQ
        M /= lam1
        M[np.diag_indices(n)] += 1.0
        cM = cho_factor(M, check_finite=False)
        r = cho_solve(cM, c, check_finite=False)
        beta = np.empty(m)
        if XL.shape[0]:
            MXL = cho_solve(cM, XL.T, check_finite=False)
            S, t = XL @ MXL, XL @ r - fL
            try:
                bL = cho_solve(cho_factor(S, check_finite=False), t, check_finite=False)
            except LinAlgError:
                # more features on the linear part than X has rank: the partition is
                # wrong; the least-squares step still points the line search the
                # right way and the next partition moves features off that part
                bL = np.linalg.lstsq(S, t, rcond=None)[0]
            r = r - MXL @ bL
            beta[~Qm] = bL
        bQ = XQ @ r
        if gQ is not None:
            bQ -= gQ
        beta[Qm] = bQ / lam1
        return beta
    except (LinAlgError, ValueError):
        return None


def _polish(XT, a, y, r, beta, W, lam1, mu, kappa):
    """The exact minimiser on a partition of W, refined once; None when its
    system is singular.  The partition is that of one coordinate update at
    the current point: with z_j = x_jᵀr + a_j β̃_j, zero if |z_j| <= μ_j,
    linear part with sign z_j if |z_j| <= (a_j + λ1) κ_j, quadratic part
    otherwise (the active set of a semismooth Newton step on the coordinate
    map; at a CD fixed point it is the partition of β̃)."""
    z = XT[W] @ r + a[W] * beta[W]
    az = np.abs(z)
    act = (az > mu[W]) & (a[W] > 0.0)
    A = W[act]
    if A.size == 0:
        return None, A
    Qm = az[act] > (a[A] + lam1) * kappa[A]
    fL = (mu[A] * np.sign(z[act]))[~Qm]
    XA = XT[A]
    b = _partition_solve(XA, y, Qm, fL, lam1)
    if b is None or not np.all(np.isfinite(b)):
        return None, A
    # one step of iterative refinement on the residual of the same equations
    zA = XA @ (y - XA.T @ b)
    e = zA - np.where(Qm, lam1 * b, 0.0)
    e[~Qm] -= fL
    db = _partition_solve(XA, np.zeros_like(y), Qm, -e[~Qm], lam1, gQ=-e[Qm])
    if db is not None and np.all(np.isfinite(db)):
        b = b + db
    return b, A


def _pivot_flat_face(XT, y, beta, r, W, mu, kappa):
    """Move ``beta`` along the null space of its linear-part columns until
    coefficients reach 0, in place (``r`` recomputed); returns whether it moved.

    The features of W with 0 < |β̃_j| <= κ_j sit on the linear part of ρ.  When
    their columns are dependent (more of them than rows less one: with X
    centred on n rows, rank <= n - 1), a null vector d of X_L leaves the loss
    and the quadratic part unchanged and changes the penalty linearly, by
    Σ μ_j sign(β̃_j) d_j: moving the way that does not increase it, up to the
    first coefficient to reach 0 or κ_j, never increases the objective and
    takes one feature off.  Coordinate descent alone crawls along such a face
    (rounded or noise-free wide data), and the partition solve on it is
    singular.  Pivots of the simplex/LARS kind, as in the lasso's
    uniqueness argument (Tibshirani, 2013)."""
    n = XT.shape[1]
    moved = False
    while True:
        bw = beta[W]
        lin = (bw != 0.0) & (np.abs(bw) <= kappa[W])
        L = W[lin]
        if L.size < n - 1:
            break
        # the n + 1 nearest 0 (relative to κ_j): dependent whenever L has more
        # than n, and all of L otherwise; one small SVD a pivot
        if L.size > n + 1:
            L = L[np.argpartition(np.abs(beta[L]) / kappa[L], n)[:n + 1]]
        XL = XT[L].T
        _, sv, Vt = np.linalg.svd(XL, full_matrices=True)
        thr = sv[0] * max(XL.shape) * np.finfo(float).eps if sv.size else 0.0
        rank = int(np.sum(sv > thr))
        if rank == L.size:
            break
        d = Vt[rank]
        bl = beta[L]
        if np.dot(mu[L] * np.sign(bl), d) > 0.0:
            d = -d
        with np.errstate(divide="ignore", invalid="ignore"):
            t_zero = np.where(bl * d < 0.0, -bl / d, np.inf)
            t_kappa = np.where(bl * d > 0.0, (kappa[L] - np.abs(bl)) / np.abs(d), np.inf)
        j = int(np.argmin(t_zero))
        t = min(float(t_zero[j]), float(np.min(t_kappa)))
        if not np.isfinite(t) or t <= 0.0:
            break
        beta[L] = bl + t * d
        if t == t_zero[j]:
            beta[L[j]] = 0.0
        else:  # a coefficient reached κ_j: it leaves the linear part
            k = int(np.argmin(t_kappa))
            beta[L[k]] = np.sign(beta[L[k]]) * kappa[L[k]] * (1.0 + 4.0 * np.finfo(float).eps)
        moved = True
    if moved:
        S = np.flatnonzero(beta)
        r[:] = y - XT[S].T @ beta[S]
    return moved


def _reduced_objective(r, beta, lam1, l2):
    return float(r @ r + berhu_penalty(beta, lam1, l2).sum())


def _newton_phase(XT, a, y, beta, r, W, lam1, l2, mu, kappa, tol_abs, max_steps: int = 20):
    """Exact solves on the partition, each from the partition of the last
    point (a primal-dual active-set / semismooth Newton step), with a
    backtracking line search on the objective (convex along the segment).
    Updates ``beta`` and ``r`` in place.  Returns (KKT met on W, objective
    decreased, number of solves)."""
    f_cur = _reduced_objective(r, beta, lam1, l2)
    progress = False
    for k in range(max_steps):
        b, A = _polish(XT, a, y, r, beta, W, lam1, mu, kappa)
        if b is None:
            return False, progress, k + 1
        new = np.zeros(W.size)
        new[np.searchsorted(W, A)] = b
        d = new - beta[W]  # features of W leaving the partition go to 0
        XW_T = XT[W].T
        cand = beta.copy()
        cand[W] = new
        r_new = y - XW_T @ new
        if _berhu_kkt_set(XT, r_new, cand, W, lam1, mu, kappa) <= tol_abs:
            beta[:], r[:] = cand, r_new
            return True, True, k + 1
        Xd = XW_T @ d
        t, moved = 1.0, False
        for _ in range(6):
            cand[W] = beta[W] + t * d
            r_new = r - t * Xd
            f_new = _reduced_objective(r_new, cand, lam1, l2)
            if f_new < f_cur:
                beta[:], r[:], f_cur, moved = cand, r_new, f_new, True
                break
            t *= 0.5
        if not moved:
            return False, progress, k + 1
        progress = True
    return False, progress, max_steps


#: Sweeps of coordinate descent between exact partition solves when the
#: partition does not settle (doubled after each solve that makes no progress).
#: On rounded or noise-free wide data, fold-centred X has rank n - 1 and more
#: features than that can sit at |x_jᵀr| = μ_j: coordinate descent crawls
#: along the face and they hop on and off it, so the partition never stays
#: put for the solve that would end the crawl.
CD_CHUNK = 1000
#: Failed partition solves in a row (as the doubling ``stop_stable``) before
#: a pivot off a flat face is tried (:func:`_pivot_flat_face`).
PIVOT_AFTER = 8


def solve_linear_garrote_wide(X, y, lambda1: float, lambda2, beta0=None, *, tol: float = 1e-10,
                              max_sweeps: int = 100_000, XT=None, col_sq=None, strong=None,
                              min_working_set: int = 10, max_outer: int = 1000):
    r"""Native garrote solve from the data, for p > n (no p x p matrix).

    Coordinate descent in the residual form over a working set, an exact
    solve on the partition, and a KKT check over all features (see the
    comment above ``_berhu_kkt_one`` in the source).  ``lambda2`` is a scalar or one
    value per feature; ``XT`` (``X.T`` C-contiguous) and ``col_sq``
    (``||x_j||²``) may be passed to reuse them; ``strong``, a boolean mask,
    restricts the first working set's new features (the strong rule).

    Returns
    -------
    beta, w : ndarray of shape (p,)
    info : dict
        ``sweeps`` (coordinate-descent sweeps over working sets), ``kkt``
        (the final residual over all features), ``v`` (Xᵀr at the answer),
        ``outer`` (full checks), ``polish`` (exact solves tried / accepted),
        ``working_set`` (largest size), ``pivots`` (moves off a flat face,
        see ``_pivot_flat_face``).
    """
    XT = np.ascontiguousarray(np.asarray(X, dtype=np.float64).T) if XT is None else XT
    y = np.ascontiguousarray(y, dtype=np.float64)
    p = XT.shape[0]
    a = np.einsum("ji,ji->j", XT, XT) if col_sq is None else col_sq
    l2 = np.ascontiguousarray(np.broadcast_to(np.asarray(lambda2, dtype=np.float64), (p,)))
    lam1 = float(lambda1)
    mu, kappa = np.sqrt(lam1 * l2), np.sqrt(l2 / lam1)
    beta = np.zeros(p) if beta0 is None else np.array(beta0, dtype=np.float64)
    q = XT @ y
    tol_abs = float(tol) * max(1.0, float(np.max(np.abs(q), initial=0.0)))
    v, resj = np.empty(p), np.empty(p)
    sweeps, outer, tried, accepted, ws_max, pivots = 0, 0, 0, 0, 0, 0
    ws = min_working_set
    while True:
        S = np.flatnonzero(beta)
        r = y - XT[S].T @ beta[S]  # afresh at every full check: no drift from the updates
        res = _berhu_kkt_all(XT, r, beta, lam1, mu, kappa, v, resj)
        if res <= tol_abs or sweeps >= max_sweeps or outer >= max_outer:
            break
        outer += 1
        cand = np.flatnonzero(resj > tol_abs)
        cand = cand[beta[cand] == 0.0]
        if strong is not None and outer == 1:
            keep = cand[strong[cand]]
            cand = keep if keep.size else cand
        ws = min(p, max(ws, 2 * S.size))
        k = max(ws - S.size, 1)
        if cand.size > k:
            cand = cand[np.argpartition(-resj[cand], k - 1)[:k]]
        W = np.union1d(S, cand).astype(np.int64)
        ws_max = max(ws_max, W.size)
        ws = 2 * ws
        stop_stable, chunk = 1, CD_CHUNK
        while sweeps < max_sweeps:
            sw, res_w, stable = _berhu_cd_set(XT, a, r, beta, W, lam1, mu, kappa, tol_abs,
                                              min(max_sweeps - sweeps, chunk), stop_stable)
            sweeps += sw
            if res_w <= tol_abs or sweeps >= max_sweeps:
                break
            # the partition settled, or (a degenerate face: features tied at
            # |x_jᵀr| = μ_j hop on and off it at every sweep) the chunk ran out
            done, progress, n_solves = _newton_phase(XT, a, y, beta, r, W, lam1, l2, mu, kappa, tol_abs)
            tried += n_solves
            if done:
                accepted += 1
                break
            if progress:
                stop_stable, chunk = 1, CD_CHUNK
            else:
                if stop_stable >= PIVOT_AFTER and _pivot_flat_face(XT, y, beta, r, W, mu, kappa):
                    pivots += 1  # the solves keep failing: pivot off a flat face
                stop_stable, chunk = 2 * stop_stable, 2 * chunk
    info = {"sweeps": int(sweeps), "kkt": float(res), "v": v, "outer": outer, "polish": (tried, accepted),
            "working_set": int(ws_max), "pivots": pivots}
    return beta, garrote_weights(beta, lam1, l2), info


def garrote_duality_gap(r, y, beta, v, lambda1: float, lambda2) -> float:
    r"""Duality gap of the berHu problem at β̃, with ``r = y - Xβ̃`` and ``v = Xᵀr``.

    The Fenchel dual of :math:`\min_\beta \|y - X\beta\|^2 + \sum_j \rho(\beta_j)`
    is :math:`\max_r\, 2 r^\top y - \|r\|^2 - \sum_j (|x_j^\top r|^2 - \mu_j^2)_+
    /\lambda_1` (from :math:`\rho^*(t) = (t^2 - 4\mu^2)_+/(4\lambda_1)`), here
    evaluated at the primal residual; the gap is >= 0 for every β̃ and 0 at
    the optimum.
    """
    beta = np.asarray(beta, dtype=float)
    l2 = np.broadcast_to(np.asarray(lambda2, dtype=float), beta.shape)
    r, y, v = (np.asarray(t, dtype=float) for t in (r, y, v))
    primal = float(r @ r + berhu_penalty(beta, lambda1, l2).sum())
    dual = float(2.0 * r @ y - r @ r - np.sum(np.maximum(v * v - lambda1 * l2, 0.0)) / lambda1)
    return primal - dual

