r"""NMMKL's QCQP (Xu, Jin, Ye, Lyu & King 2009, eq. 8) and a native solver for it.

The relaxed selection problem is

.. math::

    \min_{0 \le p \le 1,\ \mathbf 1^\top p = m} \omega(p), \qquad
    \omega(p) = \max_{\alpha^\top y = 0,\ 0 \le \alpha \le C}
        2\alpha^\top\mathbf 1 - (\alpha\circ y)^\top\Big(\sum_i p_i K_i + \tau I\Big)(\alpha\circ y),

and its dual, the QCQP solved by the conic backends, is

.. math::

    \max_{\alpha, \rho, \nu}\ 2\alpha^\top\mathbf 1 - \tau\alpha^\top\alpha - m\rho - \mathbf 1^\top\nu
    \quad\text{s.t.}\quad \alpha^\top y = 0,\ 0 \le \alpha \le C,\ \nu \ge 0,\
    \phi_i(\alpha) \le \rho + \nu_i,

with :math:`\phi_i(\alpha) = \lVert Z_i^\top(\alpha\circ y)\rVert^2` where
:math:`K_i = Z_i Z_i^\top`.  For linear per-feature kernels :math:`Z_i` is the
column :math:`x_i`; for non-linear ones it is a low-rank factor (pivoted
Cholesky, :mod:`numkfs.kernels.lowrank`).  All factors are stored side by side
in one ``n x R`` matrix ``Z`` with ``offsets`` (length ``d + 1``) marking the
columns of each feature.

Native method (``"nmmkl_qcqp"``, registered below)
---------------------------------------------------
Eliminating :math:`\rho, \nu` gives the concave dual
:math:`g(\alpha) = 2\alpha^\top 1 - \tau\lVert\alpha\rVert^2 - \mathrm{top}_m(\phi(\alpha))`
(sum of the ``m`` largest :math:`\phi_i`), and the min–max theorem gives
:math:`\min_p \omega(p) = \max_\alpha g(\alpha)`.  :math:`\omega` is convex and,
because :math:`\tau > 0` makes the SVM dual strictly concave, differentiable
with :math:`\partial\omega/\partial p_i = -\phi_i(\alpha^*(p))` (Danskin).  The
native solver minimises :math:`\omega` over the capped simplex by spectral
projected gradient (Barzilai–Borwein steps, non-monotone Armijo search,
Birgin–Martínez–Raydan 2000); every evaluation of :math:`\omega` is an SVM
dual solved by SMO (LIBSVM's second-order working-set selection, Fan, Chen &
Lin 2005) in Numba, warm-started from the previous :math:`\alpha`.  The kernel
``Z diag(p) Zᵀ`` is updated by a BLAS product over the features whose weight
changed only.  It stops on the certified duality gap

.. math::

    \omega(p) - g(\alpha^*(p)) = \mathrm{top}_m(\phi) - p^\top\phi \le
    \mathrm{tol}\cdot\max(1, |g|),

and returns the point :math:`(\alpha, \rho = \phi_{(m)}, \nu = (\phi - \rho)_+)`,
which is feasible for the QCQP, together with :math:`p`.
"""
from __future__ import annotations

import time

import numpy as np

from ..._jit import jit
from .._base import ConvexProblem, SolverResult, Status
from ..registry import register_native

__all__ = [
    "NMMKLProblem",
    "solve_nmmkl",
    "svm_dual_smo",
    "project_capped_simplex",
    "group_sq_norms",
    "top_m_sum",
]


# ---------------------------------------------------------------------------
# Numba kernels


@jit
def _smo(K, y, tau, C, alpha, G, eps, max_iter):
    """LIBSVM SMO in place on ``alpha``/``G`` for min ½αᵀQα − 1ᵀα,
    Q_ij = y_i y_j K_ij + τ δ_ij, yᵀα = 0, 0 ≤ α ≤ C.  ``G = Qα − 1`` on entry.

    Returns (iterations, m(α) − M(α)) — the maximal KKT violation.
    """
    n = y.shape[0]
    it = 0
    viol = np.inf
    while it < max_iter:
        gmax = -np.inf
        i = -1
        for t in range(n):
            if y[t] > 0.0:
                if alpha[t] < C:
                    v = -G[t]
                    if v >= gmax:
                        gmax = v
                        i = t
            else:
                if alpha[t] > 0.0:
                    v = G[t]
                    if v >= gmax:
                        gmax = v
                        i = t
        if i < 0:
            viol = 0.0
            break
        qdi = K[i, i] + tau
        gmax2 = -np.inf
        j = -1
        obj_min = np.inf
        for t in range(n):
            if y[t] > 0.0:
                if alpha[t] > 0.0:
                    gd = gmax + G[t]
                    if G[t] >= gmax2:
                        gmax2 = G[t]
                    if gd > 0.0:
                        quad = qdi + K[t, t] + tau - 2.0 * K[i, t]
                        if quad <= 1e-12:
                            quad = 1e-12
                        od = -(gd * gd) / quad
                        if od <= obj_min:
                            obj_min = od
                            j = t
            else:
                if alpha[t] < C:
                    gd = gmax - G[t]
                    if -G[t] >= gmax2:
                        gmax2 = -G[t]
                    if gd > 0.0:
                        quad = qdi + K[t, t] + tau - 2.0 * K[i, t]
                        if quad <= 1e-12:
                            quad = 1e-12
                        od = -(gd * gd) / quad
                        if od <= obj_min:
                            obj_min = od
                            j = t
        viol = gmax + gmax2
        if viol < eps or j < 0:
            break
        it += 1
        ai = alpha[i]
        aj = alpha[j]
        quad = qdi + K[j, j] + tau - 2.0 * K[i, j]
        if quad <= 1e-12:
            quad = 1e-12
        if y[i] != y[j]:
            delta = (-G[i] - G[j]) / quad
            diff = ai - aj
            ni = ai + delta
            nj = aj + delta
            if diff > 0.0:
                if nj < 0.0:
                    nj = 0.0
                    ni = diff
            else:
                if ni < 0.0:
                    ni = 0.0
                    nj = -diff
            if diff > 0.0:
                if ni > C:
                    ni = C
                    nj = C - diff
            else:
                if nj > C:
                    nj = C
                    ni = C + diff
        else:
            delta = (G[i] - G[j]) / quad
            s = ai + aj
            ni = ai - delta
            nj = aj + delta
            if s > C:
                if ni > C:
                    ni = C
                    nj = s - C
            else:
                if nj < 0.0:
                    nj = 0.0
                    ni = s
            if s > C:
                if nj > C:
                    nj = C
                    ni = s - C
            else:
                if ni < 0.0:
                    ni = 0.0
                    nj = s
        dai = ni - ai
        daj = nj - aj
        alpha[i] = ni
        alpha[j] = nj
        yi = y[i]
        yj = y[j]
        for k in range(n):
            G[k] += y[k] * (yi * K[i, k] * dai + yj * K[j, k] * daj)
        G[i] += tau * dai
        G[j] += tau * daj
    return it, viol


@jit
def _gradient(K, y, tau, alpha):
    """G = Qα − 1 with Q = D_y K D_y + τ I."""
    n = y.shape[0]
    G = np.empty(n)
    for k in range(n):
        s = 0.0
        for t in range(n):
            s += K[k, t] * y[t] * alpha[t]
        G[k] = y[k] * s + tau * alpha[k] - 1.0
    return G


@jit
def project_capped_simplex(v, m):
    """Euclidean projection of ``v`` onto {0 ≤ p ≤ 1, Σ p = m} (bisection on
    the shift θ of p = clip(v − θ, 0, 1), then exact on the free part)."""
    d = v.shape[0]
    lo = np.min(v) - 1.0
    hi = np.max(v)
    for _ in range(200):
        th = 0.5 * (lo + hi)
        s = 0.0
        for k in range(d):
            x = v[k] - th
            if x > 1.0:
                s += 1.0
            elif x > 0.0:
                s += x
        if s > m:
            lo = th
        else:
            hi = th
        if hi - lo <= 1e-15 * max(1.0, abs(th)):
            break
    th = 0.5 * (lo + hi)
    # exact θ on the set of coordinates strictly inside (0, 1)
    n_free = 0
    s_free = 0.0
    n_one = 0
    for k in range(d):
        x = v[k] - th
        if x >= 1.0:
            n_one += 1
        elif x > 0.0:
            n_free += 1
            s_free += v[k]
    if n_free > 0:
        th2 = (s_free - (m - n_one)) / n_free
        ok = True
        for k in range(d):
            x = v[k] - th
            if 0.0 < x < 1.0:
                x2 = v[k] - th2
                if x2 <= 0.0 or x2 >= 1.0:
                    ok = False
                    break
        if ok:
            th = th2
    p = np.empty(d)
    for k in range(d):
        x = v[k] - th
        p[k] = 1.0 if x > 1.0 else (x if x > 0.0 else 0.0)
    return p


@jit
def group_sq_norms(w, offsets):
    """φ_i = Σ_{c in group i} w_c² for groups [offsets[i], offsets[i+1])."""
    d = offsets.shape[0] - 1
    out = np.empty(d)
    for i in range(d):
        s = 0.0
        for c in range(offsets[i], offsets[i + 1]):
            s += w[c] * w[c]
        out[i] = s
    return out


def top_m_sum(phi: np.ndarray, m: float) -> float:
    """Σ of the m largest entries (m may be fractional: linear interpolation,
    which is what min over ρ of mρ + Σ(φ − ρ)_+ gives)."""
    phi = np.sort(np.asarray(phi, dtype=float))[::-1]
    k = int(np.floor(m))
    s = float(phi[:k].sum())
    if m > k and k < phi.size:
        s += (m - k) * float(phi[k])
    return s


def svm_dual_smo(K, y, C, tau, alpha0=None, *, eps=1e-10, max_iter=10_000_000):
    r"""Solve the SVM dual with kernel ``K + τI`` by SMO.

    .. math::

        \omega = \max_{\alpha^\top y = 0,\ 0 \le \alpha \le C}
        2\alpha^\top 1 - (\alpha\circ y)^\top (K + \tau I)(\alpha\circ y)

    Returns ``(alpha, omega, iterations, kkt_violation)``.
    """
    K = np.ascontiguousarray(K, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    alpha = np.zeros(y.shape[0]) if alpha0 is None else np.array(alpha0, dtype=np.float64)
    G = _gradient(K, y, float(tau), alpha)
    it, viol = _smo(K, y, float(tau), float(C), alpha, G, float(eps), int(max_iter))
    omega = float(alpha.sum() - alpha @ G)
    return alpha, omega, int(it), float(viol)


# ---------------------------------------------------------------------------
# the problem


class NMMKLProblem(ConvexProblem):
    r"""The NMMKL QCQP (paper eq. 8) on per-feature kernel factors.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, R)
        Kernel factors side by side: feature ``i`` owns columns
        ``offsets[i]:offsets[i+1]`` and ``K_i = Z_i Z_iᵀ``.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    m : float
        Number of features to select (1 ≤ m ≤ d).
    C, tau : float
        Box bound of α and ridge τ > 0 (CVXPY Parameters ``"C"``, ``"tau"``).
    offsets : ndarray of int, optional
        Group boundaries; default one column per feature (linear kernels).
    p0, alpha0 : ndarray, optional
        Warm start of the native solver.

    Variables are named ``"alpha"``, ``"rho"``, ``"nu"``; the native solver
    adds ``"p"`` (the relaxed selection).
    """

    kind = "nmmkl_qcqp"

    def __init__(self, Z, y, m, C=1.0, tau=0.1, *, offsets=None, p0=None, alpha0=None):
        super().__init__()
        self.Z = np.ascontiguousarray(Z, dtype=np.float64)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        n, R = self.Z.shape
        if self.y.shape != (n,) or not np.all(np.abs(self.y) == 1.0):
            raise ValueError("NMMKLProblem: y must be a vector of ±1 of length n_samples.")
        if offsets is None:
            offsets = np.arange(R + 1)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        if self.offsets[0] != 0 or self.offsets[-1] != R or np.any(np.diff(self.offsets) < 1):
            raise ValueError("NMMKLProblem: offsets must rise from 0 to Z.shape[1] by at least 1.")
        self.n_features = self.offsets.shape[0] - 1
        self.m = float(m)
        self.C = float(C)
        self.tau = float(tau)
        if not 0 < self.m <= self.n_features:
            raise ValueError(f"NMMKLProblem: m must be in (0, {self.n_features}]; got {m}.")
        if self.C <= 0 or self.tau <= 0:
            raise ValueError("NMMKLProblem: C and tau must be positive.")
        self.p0 = p0
        self.alpha0 = alpha0

    @property
    def linear(self) -> bool:
        return self.offsets.shape[0] - 1 == self.Z.shape[1]

    def build(self):
        import cvxpy as cp
        import scipy.sparse as sp

        n, R = self.Z.shape
        d = self.n_features
        alpha = cp.Variable(n, name="alpha", nonneg=False)
        rho = cp.Variable(name="rho")
        nu = cp.Variable(d, name="nu")
        m = cp.Parameter(name="m", nonneg=True, value=self.m)
        C = cp.Parameter(name="C", nonneg=True, value=self.C)
        tau = cp.Parameter(name="tau", nonneg=True, value=self.tau)
        A = (self.Z * self.y[:, None]).T  # R x n: Z_iᵀ(α∘y) = A_i α
        sq = cp.square(A @ alpha)
        if not self.linear:
            G = sp.csr_matrix((np.ones(R), np.repeat(np.arange(d), np.diff(self.offsets)), np.arange(R + 1)),
                              shape=(R, d)).T.tocsr()
            sq = G @ sq
        objective = cp.Maximize(2 * cp.sum(alpha) - tau * cp.sum_squares(alpha) - m * rho - cp.sum(nu))
        constraints = [self.y @ alpha == 0, alpha >= 0, alpha <= C, nu >= 0, sq <= rho + nu]
        return cp.Problem(objective, constraints)

    def update(self, **values) -> None:
        super().update(**values)
        for k in ("m", "C", "tau"):
            if k in values:
                setattr(self, k, float(values[k]))

    # -- evaluation ----------------------------------------------------------
    def phi(self, alpha) -> np.ndarray:
        """φ_i(α) = ‖Z_iᵀ(α∘y)‖²."""
        w = self.Z.T @ (np.asarray(alpha, dtype=float) * self.y)
        return w * w if self.linear else group_sq_norms(w, self.offsets)

    def evaluate(self, solution):
        a = np.asarray(solution["alpha"], dtype=float).ravel()
        rho = float(np.asarray(solution["rho"]).ravel()[0])
        nu = np.asarray(solution["nu"], dtype=float).ravel()
        obj = 2 * a.sum() - self.tau * a @ a - self.m * rho - nu.sum()
        phi = self.phi(a)
        viol = max(float(np.max(-a)), float(np.max(a - self.C)), abs(float(self.y @ a)),
                   float(np.max(-nu)), float(np.max(phi - rho - nu)), 0.0)
        return float(obj), viol

    def dual_value(self, alpha) -> float:
        """g(α) = 2αᵀ1 − τ‖α‖² − top_m(φ(α)): the QCQP objective with ρ, ν eliminated."""
        a = np.asarray(alpha, dtype=float)
        return float(2 * a.sum() - self.tau * a @ a - top_m_sum(self.phi(a), self.m))

    def selected(self, solution):
        phi = self.phi(solution["alpha"])
        k = int(round(self.m))
        mask = np.zeros(phi.size, dtype=bool)
        mask[np.argsort(-phi, kind="stable")[:k]] = True
        return mask


# ---------------------------------------------------------------------------
# native solver


class _KernelState:
    """K(p) = Z diag(p per column) Zᵀ kept up to date by low-rank BLAS updates."""

    def __init__(self, Z, offsets, p):
        self.Z = Z
        self.offsets = offsets
        self.counts = np.diff(offsets)
        self.p = p.copy()
        self.K = self._full(p)
        self.updates = 0

    def _full(self, p):
        w = np.repeat(np.sqrt(np.maximum(p, 0.0)), self.counts)
        Zs = self.Z * w
        return Zs @ Zs.T

    def set(self, p_new):
        dp = p_new - self.p
        ch = np.flatnonzero(dp != 0.0)
        if ch.size == 0:
            return
        if ch.size > 0.3 * dp.size or self.updates >= 200:
            self.K = self._full(p_new)
            self.updates = 0
        else:
            if self.counts.max() == 1:
                cols = ch
                wts = dp[ch]
            else:
                cols = np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in ch])
                wts = np.repeat(dp[ch], self.counts[ch])
            Zc = self.Z[:, cols]
            self.K += (Zc * wts) @ Zc.T
            self.updates += 1
        self.p = p_new.copy()


def solve_nmmkl(Z, y, m, C, tau, *, offsets=None, p0=None, alpha0=None, tol=1e-9,
                max_iter=2000, smo_eps=None, memory=10, verbose=False):
    """Minimise ω(p) over the capped simplex (see the module docstring).

    Returns a dict with ``alpha``, ``p``, ``phi``, ``rho``, ``nu``,
    ``objective`` (g(α), the QCQP value), ``omega`` (ω(p)), ``gap``,
    ``iterations``, ``smo_iterations``, ``converged``.
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n, R = Z.shape
    offsets = np.arange(R + 1) if offsets is None else np.asarray(offsets, dtype=np.int64)
    d = offsets.shape[0] - 1
    linear = d == R
    m = float(m)
    eps = 1e-10 if smo_eps is None else float(smo_eps)

    def phi_of(alpha):
        w = Z.T @ (alpha * y)
        return w * w if linear else group_sq_norms(w, offsets)

    alpha = np.zeros(n) if alpha0 is None else np.clip(np.array(alpha0, dtype=np.float64), 0.0, C)
    if alpha0 is not None and abs(alpha @ y) > 1e-12:
        alpha = np.zeros(n)
    smo_total = 0

    def svm(state, alpha):
        nonlocal smo_total
        a = alpha.copy()
        G = _gradient(state.K, y, tau, a)
        it, _ = _smo(state.K, y, tau, C, a, G, eps, 10_000_000)
        smo_total += it
        return a, float(a.sum() - a @ G)

    if p0 is None:
        p = np.full(d, m / d)
    else:
        p = project_capped_simplex(np.asarray(p0, dtype=np.float64), m)
    state = _KernelState(Z, offsets, p)
    alpha, f = svm(state, alpha)
    phi = phi_of(alpha)
    if p0 is None and m < d:
        # first move: the top-m vertex of the gradient at the uniform point
        # (the selection rule applied to the MKL solution with equal weights)
        p_try = np.zeros(d)
        p_try[np.argsort(-phi, kind="stable")[: int(np.floor(m))]] = 1.0
        if m > np.floor(m):
            p_try[np.argsort(-phi, kind="stable")[int(np.floor(m))]] = m - np.floor(m)
        state.set(p_try)
        a_try, f_try = svm(state, alpha)
        if f_try < f:
            p, alpha, f = p_try, a_try, f_try
            phi = phi_of(alpha)
        else:
            state.set(p)
    history = [f]
    # spectral step: scale so that the first step moves p by about one unit
    s = 1.0 / max(float(np.max(np.abs(phi))), 1e-300)
    gamma = 1e-4
    it = 0
    converged = False
    gap = np.inf
    while True:
        topm = top_m_sum(phi, m)
        gval = 2 * alpha.sum() - tau * alpha @ alpha - topm
        gap = topm - float(p @ phi)
        if verbose:
            print(f"it {it:4d}  omega {f:.12g}  g {gval:.12g}  gap {gap:.2e}  step {s:.2e}")
        if gap <= tol * max(1.0, abs(gval)):
            converged = True
            break
        if it >= max_iter:
            break
        it += 1
        direction = project_capped_simplex(p + s * phi, m) - p
        slope = -float(phi @ direction)  # gᵀd with g = −φ (≤ 0)
        if slope >= 0.0:
            # no descent direction at this step: the gap is rounding noise
            converged = gap <= 1e3 * tol * max(1.0, abs(gval))
            break
        f_ref = max(history[-memory:])
        t = 1.0
        while True:
            p_new = p + t * direction
            np.clip(p_new, 0.0, 1.0, out=p_new)
            state.set(p_new)
            a_new, f_new = svm(state, alpha)
            if f_new <= f_ref + gamma * t * slope or t < 1e-10:
                break
            # safeguarded quadratic interpolation
            denom = 2.0 * (f_new - f - t * slope)
            t_q = -slope * t * t / denom if denom > 0 else 0.5 * t
            t = min(max(t_q, 0.1 * t), 0.5 * t)
        phi_new = phi_of(a_new)
        sp_ = p_new - p
        sg = -(phi_new - phi)
        sy = float(sp_ @ sg)
        s = float(sp_ @ sp_) / sy if sy > 0 else 1e10 * s
        s = min(max(s, 1e-12 / max(float(np.max(np.abs(phi_new))), 1e-300)), 1e12)
        p, alpha, phi, f = p_new, a_new, phi_new, f_new
        history.append(f)
    order = np.argsort(-phi, kind="stable")
    k = int(np.floor(m))
    rho = float(phi[order[k - 1]]) if k >= 1 else float(phi[order[0]])
    if m > k and k < d:
        rho = float(phi[order[k]])
    nu = np.maximum(phi - rho, 0.0)
    objective = float(2 * alpha.sum() - tau * alpha @ alpha - m * rho - nu.sum())
    return {"alpha": alpha, "p": p, "phi": phi, "rho": rho, "nu": nu, "objective": objective,
            "omega": f, "gap": float(gap), "iterations": it, "smo_iterations": smo_total,
            "converged": converged}


@register_native("nmmkl_qcqp", method="projected gradient on p + SMO (Numba)", default_tol=1e-9)
def _native_nmmkl(problem: NMMKLProblem, *, tol, warm_start=True, max_iter=2000, verbose=False):
    t0 = time.perf_counter()
    out = solve_nmmkl(problem.Z, problem.y, problem.m, problem.C, problem.tau, offsets=problem.offsets,
                      p0=problem.p0 if warm_start else None, alpha0=problem.alpha0 if warm_start else None,
                      tol=tol, max_iter=max_iter, verbose=verbose)
    elapsed = time.perf_counter() - t0
    solution = {"alpha": out["alpha"], "rho": np.array(out["rho"]), "nu": out["nu"], "p": out["p"]}
    obj, viol = problem.evaluate(solution)
    status = Status.OPTIMAL if out["converged"] else Status.INACCURATE
    return SolverResult(solver="native", status=status, objective=obj, solution=solution,
                        iterations=out["iterations"], solve_time=elapsed, max_violation=viol,
                        tolerance={"gap": tol, "smo": 1e-10},
                        message=f"duality gap {out['gap']:.1e} after {out['iterations']} iterations "
                                f"({out['smo_iterations']} SMO steps)")
