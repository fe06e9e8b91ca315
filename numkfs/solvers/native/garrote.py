r"""The linear garrote (jointly convex linear KNIFE) and the non-negative garrote step.

Two convex problems with CVXPY formulations and native Numba solvers.

**Linear garrote** (kind ``"linear_garrote"``; the garrote user guide, ``docs/guide/garrote.md``; KNIFE paper eq. 4)

.. math::

    \min_{\tilde\beta,\, 0 \le w \le 1}\;
    \|y - X\tilde\beta\|^2 + \lambda_1 \sum_j \frac{\tilde\beta_j^2}{w_j}
    + \lambda_2 \sum_j w_j ,

with :math:`\tilde\beta_j^2 / 0 = 0` if :math:`\tilde\beta_j = 0` and
:math:`+\infty` otherwise (the perspective of the square, ``quad_over_lin``).
The CVXPY form compresses the least-squares term by a thin QR factorisation
:math:`X = QR` (n > p): :math:`\|y - X\beta\|^2 = \|R\beta - Q^\top y\|^2 +
(\|y\|^2 - \|Q^\top y\|^2)`, a p x p instead of an n x p block.

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

**Garrote step** (kind ``"garrote_step"``): the weight step shared by COSSO
and the alternating form of linear KNIFE,

.. math::

    \min_\theta\; s\|z - G\theta\|^2 + d^\top\theta
    \quad \text{s.t.}\quad 0 \le \theta \le u,\; \textstyle\sum_j \theta_j \le M,

with ``G[:, j] = K_j c`` (COSSO) or ``x_j β_j`` (linear KNIFE).  Without
the budget it is a box QP (:func:`numkfs.solvers.solve_box_qp`).  With the
budget and no upper bound (COSSO) the native solver is a primal active-set
method with the budget in the working set
(:func:`~numkfs.solvers.native.boxqp.solve_budget_qp`), checked by its KKT
residual.  Otherwise (or if that check fails) it finds the multiplier :math:`\nu \ge 0` of
:math:`\sum\theta \le M` by a safeguarded secant search: :math:`S(\nu) =
\sum_j \theta_j(\nu)`, the sum at the box-QP solution with linear term
:math:`d + \nu 1`, is non-increasing and piecewise linear in ν, so the
secant step is exact once both bracket ends share a linear piece, and a
final interpolation between the bracket solutions meets the budget.
"""
from __future__ import annotations

import time

import numpy as np

from ..._jit import jit
from ..._validation import check_memory
from .._base import ConvexProblem, SolverResult, Status
from ..registry import check_data, register_native, register_native_check
from .boxqp import solve_box_qp, solve_budget_qp

__all__ = [
    "LinearGarrote",
    "GarroteStep",
    "berhu_penalty",
    "garrote_lambda2_max",
    "garrote_weights",
    "solve_linear_garrote",
    "solve_linear_garrote_wide",
    "garrote_duality_gap",
    "solve_garrote_step",
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
        ``working_set`` (largest size).
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
    sweeps, outer, tried, accepted, ws_max = 0, 0, 0, 0, 0
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
        stop_stable = 1
        while sweeps < max_sweeps:
            sw, res_w, stable = _berhu_cd_set(XT, a, r, beta, W, lam1, mu, kappa, tol_abs,
                                              max_sweeps - sweeps, stop_stable)
            sweeps += sw
            if res_w <= tol_abs or stable < stop_stable:
                break
            done, progress, n_solves = _newton_phase(XT, a, y, beta, r, W, lam1, l2, mu, kappa, tol_abs)
            tried += n_solves
            if done:
                accepted += 1
                break
            stop_stable = 1 if progress else 2 * stop_stable
    info = {"sweeps": int(sweeps), "kkt": float(res), "v": v, "outer": outer, "polish": (tried, accepted),
            "working_set": int(ws_max)}
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


# --------------------------------------------------------------------------
# problems


class _StoredParameters(ConvexProblem):
    """Parameter values kept on the problem, so the native solver never needs
    the CVXPY formulation (building it is deferred until a conic backend asks)."""

    _param_names: tuple = ()

    def update(self, **values) -> None:
        for name, value in values.items():
            if name not in self._param_names:
                raise KeyError(f"{type(self).__name__} has no parameter {name!r}; it has {sorted(self._param_names)}.")
            self._values[name] = value
        if self._cvxpy_problem is not None:
            params = {p.name(): p for p in self._cvxpy_problem.parameters()}
            for name, value in values.items():
                if name in params:
                    params[name].value = value

    def _param(self, name: str, shape=(), **kw):
        import cvxpy as cp

        return cp.Parameter(shape, name=name, value=self._values[name], **kw)


class LinearGarrote(_StoredParameters):
    r"""The linear garrote / jointly convex linear KNIFE (variables ``"beta"``, ``"w"``).

    .. math::

        \min_{\tilde\beta,\, 0 \le w \le 1}\; \|y - X\tilde\beta\|^2
        + \lambda_1 \sum_j \tilde\beta_j^2 / w_j + \lambda_2 \sum_j w_j

    ``lambda1`` and ``lambda2`` are CVXPY Parameters (change them with
    :meth:`update`); the least-squares term is QR-compressed when n > p.
    The data are used as given (centre them first for an intercept).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Data, one row per sample and one column per feature.
    y : ndarray of shape (n,)
        Target values: the response, or the class labels of a classifier.
    lambda1 : float > 0
    lambda2 : float >= 0
    compress : bool
        Use the QR compression in the CVXPY form (default True).
    penalty_weights : ndarray of shape (p,), optional
        Per-feature factors π_j ≥ 0 of the weight penalty,
        :math:`\lambda_2 \sum_j \pi_j w_j` (an adaptive garrote; default 1).
    """

    kind = "linear_garrote"
    _param_names = ("lambda1", "lambda2")

    def __init__(self, X, y, lambda1: float = 1.0, lambda2: float = 0.0, *, compress: bool = True,
                 penalty_weights=None):
        super().__init__()
        self.X = np.ascontiguousarray(X, dtype=float)
        self.y = np.ascontiguousarray(y, dtype=float).ravel()
        if lambda1 <= 0:
            raise ValueError(f"LinearGarrote: lambda1 must be > 0; got {lambda1}.")
        self.compress = compress
        p = self.X.shape[1]
        self.penalty_weights = (np.ones(p) if penalty_weights is None
                                else np.asarray(penalty_weights, dtype=float).ravel().copy())
        if self.penalty_weights.shape != (p,) or np.any(~(self.penalty_weights >= 0)):
            raise ValueError(f"LinearGarrote: penalty_weights must be {p} values >= 0.")
        self.q = self.X.T @ self.y
        self._H = self._XT = self._col_sq = None
        self._values = {"lambda1": float(lambda1), "lambda2": float(lambda2)}
        #: β̃ of the last native solve, the warm start of the next one.
        self.beta_warm = None
        #: (β̃, μ, Xᵀr) of the last wide solve: the sequential strong rule of the next one.
        self._strong_ref = None

    @property
    def H(self) -> np.ndarray:
        """The Gram matrix XᵀX (p x p), formed on first use (only the Gram solver uses it)."""
        if self._H is None:
            p = self.X.shape[1]
            check_memory(8.0 * p * p, f"The {p} x {p} Gram matrix X^T X of the linear garrote")
            self._H = self.X.T @ self.X
        return self._H

    @property
    def XT(self) -> np.ndarray:
        """Xᵀ, C-contiguous (one feature per row), for the wide solver."""
        if self._XT is None:
            self._XT = np.ascontiguousarray(self.X.T)
            self._col_sq = np.einsum("ji,ji->j", self._XT, self._XT)
        return self._XT

    @property
    def lambda1(self) -> float:
        return float(self._values["lambda1"])

    @property
    def lambda2(self) -> float:
        return float(self._values["lambda2"])

    @property
    def lambda2_vector(self) -> np.ndarray:
        """The per-feature penalty λ2 π_j."""
        return self.lambda2 * self.penalty_weights

    @property
    def size(self) -> int:
        return 2 * self.X.shape[1]

    def build(self):
        import cvxpy as cp

        n, p = self.X.shape
        if self.compress and n > p:
            Q, R = np.linalg.qr(self.X, mode="reduced")
            A, b = R, Q.T @ self.y
            offset = max(float(self.y @ self.y - b @ b), 0.0)
        else:
            A, b, offset = self.X, self.y, 0.0
        beta = cp.Variable(p, name="beta")
        w = cp.Variable(p, name="w")
        lam1 = self._param("lambda1", nonneg=True)
        lam2 = self._param("lambda2", nonneg=True)
        qol = cp.hstack([cp.quad_over_lin(beta[j], w[j]) for j in range(p)])
        objective = cp.sum_squares(A @ beta - b) + offset + lam1 * cp.sum(qol) + lam2 * (self.penalty_weights @ w)
        return cp.Problem(cp.Minimize(objective), [w >= 0, w <= 1])

    def evaluate(self, solution):
        """Objective and box violation at ``solution``.

        A coordinate returned with ``w_j <= 0`` (a conic solver's round-off;
        counted in the violation) is evaluated at its best feasible weight
        ``min(1, |β̃_j|/κ)``, i.e. its term is ``ρ(β̃_j)``: without this an
        answer such as ``w_j = -1e-12, β̃_j = 1e-13`` would score +inf.
        """
        beta = np.asarray(solution["beta"], dtype=float).ravel()
        w = np.asarray(solution["w"], dtype=float).ravel()
        r = self.y - self.X @ beta
        pos = w > 0.0
        l2 = self.lambda2_vector
        terms = berhu_penalty(beta, self.lambda1, l2)  # w_j <= 0: its best feasible w_j
        wp = np.where(pos, w, 1.0)
        terms = np.where(pos, self.lambda1 * beta * beta / wp + l2 * w, terms)
        obj = float(r @ r + terms.sum())
        viol = max(0.0, float(np.max(-w, initial=0.0)), float(np.max(w - 1.0, initial=0.0)))
        return obj, viol

    def reduced_objective(self, beta) -> float:
        """``||y - Xβ̃||² + Σ ρ(β̃_j)``: the objective with w at its optimum for ``beta``."""
        r = self.y - self.X @ np.asarray(beta, dtype=float)
        return float(r @ r + berhu_penalty(beta, self.lambda1, self.lambda2_vector).sum())

    def selected(self, solution):
        w = np.asarray(solution["w"], dtype=float)
        return w > 1e-5


class GarroteStep(_StoredParameters):
    r"""The non-negative garrote step (variable ``"theta"``).

    .. math::

        \min_\theta\; s\,\|z - G\theta\|^2 + d^\top\theta
        \quad\text{s.t.}\quad 0 \le \theta \le u,\ \textstyle\sum_j\theta_j \le M

    ``G``, ``z``, ``d`` (and ``M`` when ``budget=True``) are CVXPY
    Parameters, set with :meth:`update`.

    Parameters
    ----------
    G : ndarray of shape (n, p)
    z : ndarray of shape (n,)
    d : ndarray of shape (p,)
    scale : float
        The factor s of the least-squares term (COSSO: 1/n).
    upper : float
        Upper bound u on every θ_j (``np.inf``: none; linear KNIFE: 1).
    M : float, optional
        The budget; ``None`` drops the constraint Σθ ≤ M.
    """

    kind = "garrote_step"
    _param_names = ("G", "z", "d", "M")

    def __init__(self, G, z, d, *, scale: float = 1.0, upper: float = np.inf, M: float | None = None,
                 theta0=None):
        super().__init__()
        G = np.asarray(G, dtype=float)
        self.shape = G.shape
        self.scale = float(scale)
        self.upper = float(upper)
        self.budget = M is not None
        self._values = {"G": G, "z": np.asarray(z, dtype=float).ravel(),
                        "d": np.asarray(d, dtype=float).ravel(), "M": None if M is None else float(M)}
        #: θ of the last native solve (the warm start of the next one).
        self.theta_warm = None if theta0 is None else np.asarray(theta0, dtype=float)

    def __getattr__(self, name):
        if name in type(self)._param_names and "_values" in self.__dict__:
            return self.__dict__["_values"][name]
        raise AttributeError(name)

    @property
    def size(self) -> int:
        return self.shape[1]

    def build(self):
        import cvxpy as cp

        n, p = self.shape
        theta = cp.Variable(p, name="theta")
        G = self._param("G", (n, p))
        z = self._param("z", (n,))
        d = self._param("d", (p,))
        objective = self.scale * cp.sum_squares(z - G @ theta) + d @ theta
        cons = [theta >= 0]
        if np.isfinite(self.upper):
            cons.append(theta <= self.upper)
        if self.budget:
            cons.append(cp.sum(theta) <= self._param("M", nonneg=True))
        return cp.Problem(cp.Minimize(objective), cons)

    def evaluate(self, solution):
        theta = np.asarray(solution["theta"], dtype=float).ravel()
        r = self.z - self.G @ theta
        obj = float(self.scale * (r @ r) + self.d @ theta)
        viol = max(0.0, float(np.max(-theta, initial=0.0)), float(np.max(theta - self.upper, initial=0.0)))
        if self.budget:
            viol = max(viol, float(theta.sum() - self.M))
        return obj, viol

    def selected(self, solution):
        return np.asarray(solution["theta"], dtype=float) > 1e-6


def solve_garrote_step(G, z, d, *, scale: float = 1.0, upper: float = np.inf, M: float | None = None,
                       theta0=None, tol: float = 1e-10, max_search: int = 200):
    """Native garrote step; returns ``(theta, nu, box_qp_solves, kkt_residual)``.

    ``nu`` is the multiplier of the budget Σθ ≤ M (0 when it is inactive).
    """
    G = np.asarray(G, dtype=float)
    z = np.asarray(z, dtype=float).ravel()
    Q = 2.0 * scale * (G.T @ G)
    c = np.asarray(d, dtype=float).ravel() - 2.0 * scale * (G.T @ z)
    p = c.shape[0]
    kkt_scale = max(1.0, float(np.max(np.abs(c), initial=0.0)))
    if M is not None and not np.isfinite(upper):
        # the budget and θ ≥ 0 together in one active-set method (the multiplier search
        # below needs a box-QP solve per trial multiplier); checked, else the search runs
        theta, _, res, nu = solve_budget_qp(Q, c, M, theta0, tol=tol)
        if res <= tol * kkt_scale and np.all(np.isfinite(theta)):
            return theta, nu, 1, res
    theta, _, res = solve_box_qp(Q, c, 0.0, upper, theta0, tol=tol)
    solves = 1
    if M is None or theta.sum() <= M:
        return theta, 0.0, solves, res
    # bracket the multiplier: S(lo) > M >= S(hi); at nu >= max(-c) theta = 0
    lo, s_lo, th_lo = 0.0, theta.sum(), theta
    hi = max(float(np.max(-c)), 0.0)
    th_hi, s_hi = np.zeros(p), 0.0
    side = 0
    exact = False
    for _ in range(max_search):
        if side == 2 or side == -2:  # the same end moved twice: bisect
            nu = 0.5 * (lo + hi)
            side = 0
        else:
            nu = lo + (s_lo - M) * (hi - lo) / (s_lo - s_hi)
        th, _, res = solve_box_qp(Q, c + nu, 0.0, upper, th_lo, tol=tol)
        solves += 1
        s = th.sum()
        if abs(s - M) <= 1e-12 * max(1.0, M):
            theta, exact = th, True
            break
        if s > M:
            lo, s_lo, th_lo = nu, s, th
            side = side + 1 if side >= 0 else 1
        else:
            hi, s_hi, th_hi = nu, s, th
            side = side - 1 if side <= 0 else -1
        if hi - lo <= 1e-14 * max(1.0, hi):
            break
        # with p > n the minimisers at the critical multiplier form a face on which Σθ
        # varies: stop as soon as the interpolation of the bracket's ends is optimal
        t = (s_lo - M) / (s_lo - s_hi)
        if _budget_kkt(Q, c, th_lo + t * (th_hi - th_lo), upper, M)[0] <= tol * kkt_scale:
            break
    if not exact:
        # S is linear between the bracket ends once they share a piece:
        # the convex combination meets the budget and stays in the box
        t = (s_lo - M) / (s_lo - s_hi)
        theta = th_lo + t * (th_hi - th_lo)
    s = theta.sum()
    if s > M:
        theta = theta * (M / s)
    res, nu = _budget_kkt(Q, c, theta, upper, M)
    return theta, nu, solves, res


def _budget_kkt(Q, c, theta, upper, M):
    """(KKT residual, multiplier): ν fitted to the free coordinates (the
    residual is minimised over ν ≥ 0, ν = 0 when the budget is slack)."""
    g = Q @ theta + c
    free = (theta > 0.0) & (theta < upper)
    nu = 0.0
    if theta.sum() >= M - 1e-9 * max(1.0, M) and free.any():
        nu = max(0.0, float(np.median(-g[free])))
    g = g + nu
    g = np.where((theta <= 0.0) & (g > 0), 0.0, g)
    g = np.where((theta >= upper) & (g < 0), 0.0, g)
    return float(np.max(np.abs(g), initial=0.0)), nu


# --------------------------------------------------------------------------
# native solvers registered with the registry


#: The native linear-garrote algorithm for ``algorithm="auto"``: ``"auto"``
#: picks the Gram loop when n >= p and the wide solver when p > n;
#: ``"gram"`` or ``"wide"`` forces one (``"gram"`` is the solver of numkfs
#: <= 0.1, kept for comparison: see ``benchmarks/garrote_wide.py``).
NATIVE_ALGORITHM = "auto"


def _garrote_algorithm(problem, algorithm):
    if algorithm == "auto":
        algorithm = NATIVE_ALGORITHM
    if algorithm == "auto":
        n, p = problem.X.shape
        algorithm = "wide" if p > n else "gram"
    if algorithm not in ("gram", "wide"):
        raise ValueError(f"linear garrote: algorithm must be 'auto', 'gram' or 'wide'; got {algorithm!r}.")
    return algorithm


@register_native("linear_garrote", method="berHu coordinate descent (Numba; working set + exact partition solve "
                 "when p > n)", default_tol=1e-10)
def _native_linear_garrote(problem: LinearGarrote, *, tol, warm_start=True, max_sweeps=100_000,
                           algorithm="auto"):
    t0 = time.perf_counter()
    beta0 = problem.beta_warm if (warm_start and problem.beta_warm is not None) else None
    l2 = problem.lambda2_vector
    extra = ""
    if _garrote_algorithm(problem, algorithm) == "gram":
        beta, w, sweeps, res = solve_linear_garrote(problem.H, problem.q, problem.lambda1, l2,
                                                    beta0, tol=tol, max_sweeps=max_sweeps)
    else:
        XT = problem.XT
        mu = np.sqrt(problem.lambda1 * l2)
        strong = None
        ref = problem._strong_ref
        if beta0 is not None and ref is not None and np.array_equal(ref[0], beta0):
            # sequential strong rule: |x_jᵀr(λ_prev)| >= 2 μ_j - μ_j,prev
            strong = np.abs(ref[2]) >= 2.0 * mu - ref[1]
        beta, w, info = solve_linear_garrote_wide(problem.X, problem.y, problem.lambda1, l2, beta0, tol=tol,
                                                  max_sweeps=max_sweeps, XT=XT, col_sq=problem._col_sq,
                                                  strong=strong)
        sweeps, res = info["sweeps"], info["kkt"]
        problem._strong_ref = (beta.copy(), mu, info["v"].copy())
        tried, accepted = info["polish"]
        extra = (f"; {info['outer']} full checks, working set <= {info['working_set']}, "
                 f"exact partition solves {accepted}/{tried}")
    elapsed = time.perf_counter() - t0
    sol = {"beta": beta, "w": w}
    obj, viol = problem.evaluate(sol)
    scale = max(1.0, float(np.max(np.abs(problem.q), initial=0.0)))
    status = Status.OPTIMAL if res <= tol * scale else Status.INACCURATE
    if status is Status.OPTIMAL and np.all(np.isfinite(beta)):  # never warm-start from a failed solve
        problem.beta_warm = beta.copy()
    return SolverResult(solver="native", status=status, objective=obj, solution=sol, iterations=sweeps,
                        solve_time=elapsed, max_violation=viol, tolerance={"kkt": tol},
                        message=f"KKT residual {res:.1e}{extra}")


@register_native("garrote_step", method="box-QP coordinate descent + multiplier search (Numba)",
                 default_tol=1e-10)
def _native_garrote_step(problem: GarroteStep, *, tol, warm_start=True):
    t0 = time.perf_counter()
    theta0 = problem.theta_warm if warm_start else None
    theta, nu, solves, res = solve_garrote_step(problem.G, problem.z, problem.d, scale=problem.scale,
                                                upper=problem.upper, M=problem.M if problem.budget else None,
                                                theta0=theta0, tol=tol)
    elapsed = time.perf_counter() - t0
    sol = {"theta": theta}
    obj, viol = problem.evaluate(sol)
    # the box-QP solves stop at tol * max|linear term|; allow the interpolation's round-off
    kscale = max(1.0, float(np.max(np.abs(problem.d), initial=0.0)),
                 float(2.0 * problem.scale * np.max(np.abs(problem.G.T @ problem.z), initial=0.0)))
    status = Status.OPTIMAL if res <= 100.0 * tol * kscale else Status.INACCURATE
    if status is Status.OPTIMAL and np.all(np.isfinite(theta)):  # never warm-start from a failed solve
        problem.theta_warm = theta.copy()
    return SolverResult(solver="native", status=status, objective=obj, solution=sol, iterations=solves,
                        solve_time=elapsed, max_violation=viol, tolerance={"kkt": tol},
                        message=f"KKT residual {res:.1e}, budget multiplier {nu:.3g}")


@register_native_check("linear_garrote")
def _linear_garrote_check():
    X, y = check_data()
    return LinearGarrote(X - X.mean(axis=0), y - y.mean(), 1.0, 0.5), None


@register_native_check("garrote_step")
def _garrote_step_check():
    X, y = check_data()
    return GarroteStep(X, y, np.full(X.shape[1], 0.1), scale=1.0 / X.shape[0], M=0.5), None
