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

from ..._jit import jit
from .._base import ConvexProblem, SolverResult, Status
from ..registry import register_native

__all__ = ["BoxQP", "solve_box_qp", "box_qp_kkt_residual"]


@jit
def _projected_gradient_norm(w, g, lo, hi):
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


@jit
def _box_qp_cd(Q, c, lo, hi, w, tol, max_sweeps):
    """Coordinate descent in place on ``w``; returns (sweeps, kkt residual)."""
    p = w.shape[0]
    g = Q @ w + c
    scale = 1.0
    for j in range(p):
        a = abs(c[j])
        if a > scale:
            scale = a
    res = _projected_gradient_norm(w, g, lo, hi)
    sweeps = 0
    while sweeps < max_sweeps and res > tol * scale:
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
        res = _projected_gradient_norm(w, g, lo, hi)
    return sweeps, res


def box_qp_kkt_residual(Q, c, lo, hi, w) -> float:
    """Max-abs projected gradient of the box QP at ``w`` (0 at the optimum)."""
    g = Q @ w + c
    g = np.where((w <= lo) & (g > 0), 0.0, g)
    g = np.where((w >= hi) & (g < 0), 0.0, g)
    return float(np.max(np.abs(g))) if g.size else 0.0


def solve_box_qp(Q, c, lo, hi, w0=None, *, tol: float = 1e-10, max_sweeps: int = 100_000):
    """Solve the box QP natively; return ``(w, sweeps, kkt_residual)``."""
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    c = np.ascontiguousarray(c, dtype=np.float64)
    p = c.shape[0]
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float64), (p,)).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float64), (p,)).copy()
    if np.any(lo > hi):
        raise ValueError("box QP: a lower bound exceeds its upper bound.")
    w = np.clip(np.zeros(p) if w0 is None else np.array(w0, dtype=np.float64), lo, hi)
    sweeps, res = _box_qp_cd(Q, c, lo, hi, w, float(tol), int(max_sweeps))
    return w, int(sweeps), float(res)


class BoxQP(ConvexProblem):
    r"""``min ½ wᵀQw + cᵀw`` over ``lo ≤ w ≤ hi`` (variable named ``"w"``).

    The CVXPY form uses ``Q = FᵀF`` through ``sum_squares(F w)`` when a factor
    ``F`` is given (better conditioned and DPP-friendly), else ``quad_form``.
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


@register_native("box_qp", method="coordinate descent (Numba)")
def _native_box_qp(problem: BoxQP, *, tol, warm_start=True, max_sweeps=100_000):
    t0 = time.perf_counter()
    w, sweeps, res = solve_box_qp(problem.Q, problem.c, problem.lo, problem.hi,
                                  problem.w0 if warm_start else None, tol=tol, max_sweeps=max_sweeps)
    elapsed = time.perf_counter() - t0
    obj, viol = problem.evaluate({"w": w})
    scale = max(1.0, float(np.max(np.abs(problem.c), initial=0.0)))
    status = Status.OPTIMAL if res <= tol * scale else Status.INACCURATE
    return SolverResult(solver="native", status=status, objective=obj, solution={"w": w},
                        iterations=sweeps, solve_time=elapsed, max_violation=viol,
                        tolerance={"kkt": tol}, message=f"KKT residual {res:.1e}")
