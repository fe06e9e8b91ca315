r"""Native solver of the knockoff SDP (:class:`~numkfs.solvers.knockoff_sdp.KnockoffSDP`).

A primal log-barrier method with Newton steps (Boyd & Vandenberghe,
*Convex Optimization*, 11.3): for growing t it maximises

.. math::

    t \sum_j s_j + \log\det G(s) + \sum_j \log s_j + \sum_j \log(1 - s_j),
    \qquad G(s) = 2\Sigma - \operatorname{diag}(s),

whose gradient is :math:`t - \operatorname{diag}(G^{-1}) + 1/s - 1/(1 - s)` and
whose Hessian is :math:`-(G^{-1} \circ G^{-1}) - \operatorname{diag}(1/s^2 + 1/(1-s)^2)`:
p variables, so a Newton step costs two p x p factorisations, and memory is a
few p x p arrays.  At a centred point the duality gap is at most m / t with
m = 3p (the barrier's parameter); t grows tenfold per stage until m / t is at
most ``tol`` times :math:`\max(1, \sum_j s_j)`.  Every iterate is strictly
feasible (G positive definite, checked by a Cholesky factorisation in the line
search).  :func:`knockoff_sdp_duality_gap` evaluates the dual bound of the
point :math:`\Lambda = G^{-1}/t` independently.

Each Newton step costs O(p^3) time and O(p^2) memory, where a conic solver's
factorisation of the semidefinite cone (CLARABEL through CVXPY) grows like
p^4 in memory.
"""
from __future__ import annotations

import time

import numpy as np

from ..._threads import limit_threads
from .._base import SolverResult, Status
from ..knockoff_sdp import KnockoffSDP
from ..registry import register_native, register_native_check

__all__ = ["knockoff_sdp_duality_gap", "solve_knockoff_sdp"]

#: Newton decrement below which a point counts as centred.
CENTRED = 1e-9
EPS = float(np.finfo(float).eps)


def knockoff_sdp_duality_gap(correlation, s, mu):
    """Dual bound minus :math:`\\sum_j s_j` at the dual point :math:`\\Lambda = \\mu (2\\Sigma - \\operatorname{diag}(s))^{-1}`.

    Any :math:`\\Lambda \\succeq 0` bounds the SDP from above by
    :math:`2\\langle\\Lambda, \\Sigma\\rangle + \\sum_j \\max(0, 1 - \\Lambda_{jj})`
    (the Lagrangian maximised over the box); only :math:`\\operatorname{diag}(\\Lambda)`
    is computed, as :math:`\\langle\\Lambda, G\\rangle = \\mu p`.  Near the optimum
    G is nearly singular and this loses digits (about eps times its condition number).

    Parameters
    ----------
    correlation : ndarray of shape (p, p)
        Σ.
    s : ndarray of shape (p,)
        A point of the box with :math:`2\\Sigma - \\operatorname{diag}(s)` positive definite.
    mu : float
        Scale of the dual point (> 0).

    Returns
    -------
    float
        Dual bound minus :math:`\\sum_j s_j` (an upper bound on how far
        :math:`\\sum_j s_j` is below the optimum), or +inf when
        :math:`2\\Sigma - \\operatorname{diag}(s)` is not positive definite.
    """
    s = np.asarray(s, dtype=float)
    try:
        L = np.linalg.cholesky(2.0 * correlation - np.diag(s))
    except np.linalg.LinAlgError:
        return np.inf
    Li = np.linalg.solve(L, np.eye(len(s)))  # G⁻¹ = Liᵀ Li
    lam_diag = mu * np.einsum("ij,ij->j", Li, Li)
    # 2<Λ, Σ> = <Λ, G> + Σ_j Λ_jj s_j and <Λ, G> = μ p exactly: only diag(Λ) is computed
    # (the full product loses digits when G is nearly singular)
    bound = mu * len(s) + float(lam_diag @ s) + float(np.maximum(0.0, 1.0 - lam_diag).sum())
    return bound - float(np.sum(s))


def solve_knockoff_sdp(correlation, *, tol=1e-8, max_newton=500, growth=10.0):
    """Solve the knockoff SDP by a barrier method with Newton steps (see the module docstring).

    Parameters
    ----------
    correlation : ndarray of shape (p, p)
        Positive definite, unit diagonal.
    tol : float, default=1e-8
        Relative duality gap to reach: gap <= tol * max(1, sum(s)).
    max_newton : int, default=500
        Newton steps, all stages together.
    growth : float, default=10
        Factor by which the weight t of the objective grows from stage to stage.

    Returns
    -------
    s : ndarray of shape (p,)
    gap : float
        The barrier's bound on the duality gap at a centred point, m / t with
        m = 3p (+inf when Σ is not positive definite or the centring stopped
        short: round-off or ``max_newton``).
    steps : int
        Newton steps taken.
    """
    C = np.asarray(correlation, dtype=float)
    C = 0.5 * (C + C.T)
    p = C.shape[0]
    lam = float(np.linalg.eigvalsh(C)[0])
    if not lam > 0:  # singular Σ: s_j = 0 wherever a null direction of Σ touches j
        return np.zeros(p), np.inf, 0
    s = np.full(p, min(0.5, lam))  # 2Σ - diag(s) has eigenvalues >= lam > 0
    t = 1.0
    steps = 0
    m = 3 * p  # the barrier's parameter: log det (p) and both bounds of the box (2p)
    while True:
        centred = False
        while steps < max_newton:  # centring: Newton on t·Σs + log det G + Σ log s + Σ log(1 - s)
            steps += 1
            Ginv = np.linalg.inv(2.0 * C - np.diag(s))
            grad = t - np.diag(Ginv) + 1.0 / s - 1.0 / (1.0 - s)
            H = Ginv * Ginv + np.diag(1.0 / s ** 2 + 1.0 / (1.0 - s) ** 2)  # minus the Hessian
            step = np.linalg.solve(H, grad)
            decrement = float(grad @ step)
            # centred: the Newton decrement is below CENTRED or below what the
            # barrier's value (of size t Σs) resolves in double precision
            if not decrement > max(CENTRED, 64.0 * EPS * t * max(1.0, float(s.sum()))):
                centred = True
                break
            value = _barrier_value(C, s, t)
            a = 1.0
            while a > 1e-12:  # backtracking inside the domain, Armijo
                trial = s + a * step
                if np.all(trial > 0) and np.all(trial < 1) and \
                        _barrier_value(C, trial, t) >= value + 0.25 * a * decrement:
                    break
                a *= 0.5
            else:  # no ascent left in double precision
                break
            s = trial
        if not centred:
            return s, np.inf, steps
        if m / t <= tol * max(1.0, float(s.sum())):
            return s, m / t, steps
        t *= growth


def _barrier_value(C, s, t):
    """t Σ s + log det(2Σ - diag(s)) + Σ log s + Σ log(1 - s); -inf outside the domain."""
    try:
        L = np.linalg.cholesky(2.0 * C - np.diag(s))
    except np.linalg.LinAlgError:
        return -np.inf
    return t * float(s.sum()) + 2.0 * float(np.log(np.diag(L)).sum()) + float(np.log(s).sum() + np.log1p(-s).sum())


@register_native("knockoff_sdp", method="log-barrier Newton method (numpy; p x p factorisations)",
                 default_tol=1e-8)
def _native_knockoff_sdp(problem: KnockoffSDP, *, tol, warm_start=True):
    t0 = time.perf_counter()
    with limit_threads(blas_threads=1):  # p x p factorisations: threaded BLAS waits more than it works
        s, gap, steps = solve_knockoff_sdp(problem.correlation, tol=tol)
    elapsed = time.perf_counter() - t0
    sol = {"s": s}
    obj, viol = problem.evaluate(sol)
    status = Status.OPTIMAL if gap <= tol * max(1.0, float(s.sum())) else Status.INACCURATE
    return SolverResult(solver="native", status=status, objective=obj, solution=sol, iterations=steps,
                        solve_time=elapsed, max_violation=viol, tolerance={"gap": tol},
                        message=f"duality gap {gap:.1e}")


@register_native_check("knockoff_sdp")
def _knockoff_sdp_check():
    idx = np.arange(6)
    return KnockoffSDP(0.5 ** np.abs(idx[:, None] - idx[None, :])), None
