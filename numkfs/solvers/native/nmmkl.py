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
columns of each feature.  Eliminating ρ and ν gives the concave dual

.. math::

    g(\alpha) = 2\alpha^\top 1 - \tau\lVert\alpha\rVert^2 - \mathrm{top}_m(\phi(\alpha))

(``top_m``: sum of the ``m`` largest entries), and :math:`\min_p \omega(p) =
\max_\alpha g(\alpha)` (min–max theorem).

Native method (``"nmmkl_qcqp"``, registered below)
---------------------------------------------------
A primal–dual interior-point method (Mehrotra predictor–corrector) written
for this QCQP, inside a working set of features.

* Newton systems.  Slacks ``s = ρ + ν − φ(α)`` and multipliers ``z`` (of
  φ_i ≤ ρ + ν_i — these are the relaxed selection ``p`` of (5)), ``ζ``
  (ν ≥ 0), ``λ, μ`` (the box) are eliminated in closed form: ν only enters
  its own constraint, so its Hessian block is diagonal.  What remains is an
  ``(n + 2)``-square symmetric system in ``(Δα, Δρ, Δδ)`` whose α-block
  ``2τI + Σ_i z_i ∇²φ_i + Σ_i ẽ_i ∇φ_i∇φ_iᵀ + D_box`` is ONE GEMM
  ``Aᵀ diag(w) A`` (``A`` the R x n matrix of the rows of ``Zᵀ diag(y)``),
  O(n² R) per iteration and independent of ``R`` in memory beyond ``A``.
  20–30 iterations reach a relative duality gap of 1e-9.
* Working set.  Features whose φ_i stays below ρ have p_i = 0 and drop
  out of the problem; the QCQP restricted to a working set ``W`` is optimal
  for all features when no feature outside ``W`` has φ_i > ρ at its
  solution.  ``W`` starts with the ``2m + 100`` features of largest φ at a
  balanced interior α and grows by the violators and near-violators
  (φ_i > 0.8 ρ), at most doubling per round, warm-starting α.  With
  n = 400 the final ``W`` holds a few hundred features whatever ``d``.
* Output.  ``α`` is made exactly feasible (yᵀα = 0, box) and the returned
  point is ``(α, ρ = φ_(m), ν = (φ − ρ)_+)``, feasible for the QCQP by
  construction, with the objective ``g(α)`` above, and ``p = z``.

Spectral projected gradient on ``ω(p)`` with an SMO inner solver (the
other natural method, using ``∂ω/∂p_i = −φ_i``) is not used: at the
optimum hundreds of features are tied (φ_i = ρ, the set ``B`` of the
paper) and it needs hundreds of outer iterations, each an SVM solve, far
slower than a conic solver.  :func:`svm_dual_smo` (LIBSVM's
SMO with second-order working-set selection) is kept for single SVM duals:
``ω`` of a discrete selection (Theorem 6).

BLAS runs on one thread inside the solver (``n_threads``): at these sizes a
second OpenBLAS thread on a shared machine makes the (n + 2)-square LU
many times slower.
"""
from __future__ import annotations

import time

import numpy as np

from ..._jit import jit
from ..._progress import report
from ..._threads import limit_threads
from ..._validation import check_memory
from .._base import ConvexProblem, SolverResult, Status
from ..registry import check_data, register_native, register_native_check

__all__ = [
    "NMMKLProblem",
    "solve_nmmkl",
    "svm_dual_smo",
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
            pos = y[t] > 0.0
            # I_low: y = +1 above its lower bound, y = -1 below C
            if (alpha[t] > 0.0) if pos else (alpha[t] < C):
                v = G[t] if pos else -G[t]
                gd = gmax + v
                if v >= gmax2:
                    gmax2 = v
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
        A C above :meth:`box_bound` ``= (1 + √n)/τ`` cannot bind and is
        replaced by it (``C`` holds the value solved with, ``C_requested``
        the one given): the solution is the same, and a box of 1e12 against
        α of order one made CLARABEL report the problem unbounded and the
        native solver divide by zero.
    offsets : ndarray of int, optional
        Group boundaries; default one column per feature (linear kernels).
    alpha0 : ndarray, optional
        Warm start of the native solver (a previous α).
    working_set : ndarray of int, optional
        Warm start of the native solver's working set (features of a
        previous solution with φ_i = ρ or p_i > 0).

    Variables are named ``"alpha"``, ``"rho"``, ``"nu"``; the native solver
    adds ``"p"`` (the relaxed selection).
    """

    kind = "nmmkl_qcqp"

    def __init__(self, Z, y, m, C=1.0, tau=0.1, *, offsets=None, alpha0=None, working_set=None):
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
        self.C_requested = float(C)
        self.tau = float(tau)
        if not 0 < self.m <= self.n_features:
            raise ValueError(f"NMMKLProblem: m must be in (0, {self.n_features}]; got {m}.")
        if not (self.C_requested > 0 and self.tau > 0):
            raise ValueError(f"NMMKLProblem: C and tau must be positive; got C={C!r}, tau={tau!r}.")
        self.C = min(self.C_requested, self.box_bound())
        self.working_set = working_set
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

    def box_bound(self) -> float:
        r"""``(1 + √n)/τ``: no optimal α has a component above it, so a box
        ``C`` at or above it does not bind (the hard-margin limit).

        ``g(0) = 0`` and ``top_m(φ) ≥ 0``, so the optimum satisfies
        ``Σ_j (τα_j² − 2α_j) ≤ 0``; each term is at least ``−1/τ``, hence
        ``τα_k² − 2α_k ≤ (n − 1)/τ`` for every k, i.e.
        ``α_k ≤ (1 + √n)/τ``.  The optimum for any larger C is feasible with
        this box, so it is the optimum there too (unique: the objective is
        τ-strongly concave).  The same holds for the SVM dual ω(p)."""
        return (1.0 + np.sqrt(self.y.shape[0])) / self.tau

    def update(self, **values) -> None:
        for k in ("m", "tau"):
            if k in values:
                setattr(self, k, float(values[k]))
        if "C" in values:
            self.C_requested = float(values["C"])
        if "C" in values or "tau" in values:
            self.C = min(self.C_requested, self.box_bound())
            values = dict(values, C=self.C)
        super().update(**values)

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

    def selected(self, solution, tie_tol: float = 1e-6):
        """Top ``m`` of φ, features tied with the m-th (relative ``tie_tol``)
        taken in index order, so that two solvers agreeing on φ to that
        tolerance select the same set (:func:`numkfs.methods.nmmkl.nmmkl`
        breaks the ties by ``p`` instead)."""
        phi = self.phi(solution["alpha"])
        k = int(round(self.m))
        rho = np.sort(phi)[::-1][k - 1]
        band = tie_tol * max(abs(rho), np.finfo(float).tiny)
        mask = phi > rho + band
        tied = np.flatnonzero(np.abs(phi - rho) <= band)
        mask[tied[: k - int(mask.sum())]] = True
        return mask


# ---------------------------------------------------------------------------
# native solver


def _balanced_interior(y, C):
    """A point strictly inside {yᵀα = 0, 0 < α < C} (every α_i ≤ C/2)."""
    n_pos = float(np.sum(y > 0))
    n_neg = float(np.sum(y < 0))
    big = max(n_pos, n_neg)
    return np.where(y > 0, 0.5 * C * n_neg / big, 0.5 * C * n_pos / big)


def _max_step(x, dx):
    """Largest η ≤ 1 keeping x + η dx ≥ 0 (x > 0)."""
    neg = dx < 0
    if not neg.any():
        return 1.0
    return float(min(1.0, np.min(-x[neg] / dx[neg])))


class _Features:
    """φ, ∇φ products and the α-Hessian over the rows of ``A`` grouped by ``offsets``."""

    def __init__(self, A, offsets):
        self.A = A
        self.offsets = offsets
        self.counts = np.diff(offsets)
        self.linear = A.shape[0] == offsets.shape[0] - 1

    def phi(self, a):
        v = self.A @ a
        return (v * v if self.linear else group_sq_norms(v, self.offsets)), v

    def U(self, v):
        """u_i = ∇φ_i = 2 A_iᵀ v_i as columns (group case only)."""
        n = self.A.shape[1]
        d = self.offsets.shape[0] - 1
        if self.linear:
            return None
        Vb = np.zeros((self.A.shape[0], d))
        Vb[np.arange(self.A.shape[0]), np.repeat(np.arange(d), self.counts)] = v
        return 2.0 * (self.A.T @ Vb)

    def Ux(self, v, U, x):  # Σ_i x_i u_i
        return 2.0 * (self.A.T @ (x * v)) if self.linear else U @ x

    def Utx(self, v, U, dx):  # (u_iᵀ dx)_i
        return 2.0 * v * (self.A @ dx) if self.linear else U.T @ dx

    def hessian(self, z, et, v, U):
        """Upper triangle of Σ z_i ∇²φ_i + Σ ẽ_i u_i u_iᵀ (one SYRK)."""
        from scipy.linalg.blas import dsyrk

        if self.linear:
            w = 2.0 * z + 4.0 * et * v * v
            # features far from active weigh nothing in H (w → 0 as the
            # method converges): leaving out those below 1e-12 max(w) makes
            # the Newton step inexact by that relative amount only, while the
            # residuals stay exact
            keep = w > 1e-12 * w.max()
            A = self.A[keep] if not keep.all() else self.A
            H = dsyrk(1.0, (A * np.sqrt(w[keep])[:, None]).T, lower=0)
        else:
            H = dsyrk(1.0, (self.A * np.sqrt(np.repeat(2.0 * z, self.counts))[:, None]).T, lower=0)
            H = dsyrk(1.0, U * np.sqrt(et), beta=1.0, c=H, lower=0, overwrite_c=1)
        return H  # upper triangle only (dsyrk); the Cholesky reads no more


def _pd_qcqp(A, offsets, y, m, C, tau, alpha0, *, tol=1e-9, max_iter=100, check=None, check_tol=1e-2):
    """Primal–dual interior point (Mehrotra predictor–corrector) for the QCQP
    on the features of ``A`` (rows Z_iᵀ diag(y), grouped by ``offsets``).

    Unknowns: α, ρ, ν, slacks s = ρ + ν − φ(α), multipliers z (of φ ≤ ρ + ν,
    i.e. the relaxed selection p), ζ (ν ≥ 0), λ, μ (the box) and δ (yᵀα = 0).
    ν, s, z, ζ, λ, μ are eliminated from each Newton system; what remains is
    an (n + 2)-square symmetric system whose α-block is one GEMM.

    ``check(alpha, rho)``, if given, is called once, when the relative gap
    first falls below ``check_tol``; if it returns False the method stops
    there (the working set must grow) with ``converged = None``.

    Returns (alpha, rho, nu, z, iterations, converged).
    """
    import scipy.linalg as sla

    R, n = A.shape
    d = offsets.shape[0] - 1
    F = _Features(A, offsets)
    alpha = alpha0.copy()
    phi, v = F.phi(alpha)
    k = max(1, min(d, int(np.ceil(m))))
    rho = float(np.sort(phi)[::-1][k - 1])
    nu = np.maximum(phi - rho, 0.0) + 1.0
    s = rho + nu - phi
    z = np.full(d, m / d)
    zeta = np.maximum(1.0 - z, 0.1)
    lam = np.ones(n)
    mub = np.ones(n)
    delta = 0.0
    n_ineq = 2 * d + 2 * n
    converged = False
    best = (np.inf, alpha, rho, nu, z)
    it = 0
    for it in range(1, max_iter + 1):
        U = F.U(v)
        slack_hi = C - alpha
        r_a = -2.0 + 2.0 * tau * alpha + F.Ux(v, U, z) - lam + mub + delta * y
        r_r = m - z.sum()
        r_n = 1.0 - z - zeta
        r_p = phi - rho - nu + s
        r_e = float(y @ alpha)
        gap = float(z @ s + zeta @ nu + lam @ alpha + mub @ slack_hi)
        mu = gap / n_ineq
        obj = 2.0 * alpha.sum() - tau * alpha @ alpha - m * rho - nu.sum()
        scale = max(1.0, abs(obj))
        res = max(np.max(np.abs(r_a)), abs(r_r), np.max(np.abs(r_n)), np.max(np.abs(r_p)) / max(1.0, rho),
                  abs(r_e))
        if gap <= tol * scale and res <= 1e-7:
            converged = True
            break
        # near the end rounding in the ill-conditioned H makes the residuals
        # stall or grow while the gap keeps falling: remember the best iterate
        # and accept it when within a factor 100 of both targets
        score = max(gap / (tol * scale), res / 1e-7)
        if score < best[0]:
            best = (score, alpha.copy(), rho, nu.copy(), z.copy())
        near_done = best[0] <= 100.0
        if check is not None and gap <= check_tol * scale and res <= check_tol:
            ok = check(alpha, rho)
            check = None
            if not ok:
                converged = None
                break
        e = z / s
        b = zeta / nu
        et = e * b / (e + b)
        H = F.hessian(z, et, v, U)
        with np.errstate(divide="ignore", invalid="ignore"):  # an α or slack at 0 to round-off: stop below
            barrier = lam / alpha + mub / slack_hi
        if not np.all(np.isfinite(barrier)):
            break  # the iterate left the interior: the best point so far, or the registry's fallback
        H[np.diag_indices(n)] += 2.0 * tau + barrier
        Ue = F.Ux(v, U, et)
        # bordered system [[H, B], [Bᵀ, D]] with B = [−Ue, y], D = diag(Σẽ, 0):
        # Cholesky of the SPD block H, then a 2 x 2 Schur complement
        try:
            cho = sla.cho_factor(H, lower=False, check_finite=False)
        except (ValueError, np.linalg.LinAlgError):
            break
        Bord = np.column_stack([-Ue, y])
        HiB = sla.cho_solve(cho, Bord, check_finite=False)
        S2 = np.array([[et.sum(), 0.0], [0.0, 0.0]]) - Bord.T @ HiB

        def direction(t_s, t_n, t_l, t_m):
            # complementarity targets: z s → t_s, ζ ν → t_n, λ α → t_l, μ (C − α) → t_m
            ra = r_a + lam - mub - t_l / alpha + t_m / slack_hi  # λ, μ eliminated
            beta = (t_s - z * (s - r_p)) / s  # Δz = e(uᵀΔα − Δρ − Δν) + β
            gam = beta + t_n / nu - zeta - r_n
            kap = beta - e * gam / (e + b)
            r1 = -ra - F.Ux(v, U, kap)
            r2 = np.array([-(r_r - kap.sum()), -r_e])
            Hir1 = sla.cho_solve(cho, r1, check_finite=False)
            x2 = np.linalg.solve(S2, r2 - Bord.T @ Hir1)
            da = Hir1 - HiB @ x2
            dr = x2[0]
            q = F.Utx(v, U, da) - dr
            dnu = (e * q + gam) / (e + b)
            dz = e * (q - dnu) + beta
            ds = (t_s - z * s - s * dz) / z
            dze = (t_n - zeta * nu - zeta * dnu) / nu
            dl = (t_l - lam * alpha - lam * da) / alpha
            dm = (t_m - mub * slack_hi + mub * da) / slack_hi
            return da, dr, dnu, dz, ds, dze, dl, dm, x2[1]

        zero_d = np.zeros(d)
        zero_n = np.zeros(n)
        da, dr, dnu, dz, ds, dze, dl, dm, dd = direction(zero_d, zero_d, zero_n, zero_n)
        eta_p = min(_max_step(s, ds), _max_step(nu, dnu), _max_step(alpha, da), _max_step(slack_hi, -da))
        eta_d = min(_max_step(z, dz), _max_step(zeta, dze), _max_step(lam, dl), _max_step(mub, dm))
        eta = min(eta_p, eta_d)
        gap_aff = float((z + eta * dz) @ (s + eta * ds) + (zeta + eta * dze) @ (nu + eta * dnu)
                        + (lam + eta * dl) @ (alpha + eta * da) + (mub + eta * dm) @ (slack_hi - eta * da))
        sigma = min(1.0, (gap_aff / gap) ** 3)
        sm = sigma * mu
        da, dr, dnu, dz, ds, dze, dl, dm, dd = direction(
            sm - ds * dz, sm - dnu * dze, sm - da * dl, sm + da * dm)
        eta_p = min(_max_step(s, ds), _max_step(nu, dnu), _max_step(alpha, da), _max_step(slack_hi, -da))
        eta_d = min(_max_step(z, dz), _max_step(zeta, dze), _max_step(lam, dl), _max_step(mub, dm))
        eta = min(1.0, 0.99 * min(eta_p, eta_d))
        if near_done and (np.min(alpha) < 1e-13 * C or np.min(slack_hi) < 1e-13 * C):
            break  # one more step would leave only rounding in the box slacks
        if not (np.all(np.isfinite(da)) and np.isfinite(dr) and np.isfinite(eta)):
            break  # numerical breakdown
        alpha = alpha + eta * da
        rho += eta * dr
        nu = nu + eta * dnu
        s = s + eta * ds
        z = z + eta * dz
        zeta = zeta + eta * dze
        lam = lam + eta * dl
        mub = mub + eta * dm
        delta += eta * dd
        phi, v = F.phi(alpha)
    if converged is False and best[0] <= 100.0:
        _, alpha, rho, nu, z = best
        converged = True
    return alpha, rho, nu, z, it, converged


def solve_nmmkl(Z, y, m, C, tau, *, offsets=None, alpha0=None, tol=1e-9, working_set=None,
                max_rounds=20, n_threads=1, verbose=False):
    """Solve the NMMKL QCQP natively (see the module docstring).

    Features are brought in by a working set: the interior-point method solves the
    QCQP restricted to the features in ``W``; a feature outside ``W`` whose
    φ_i exceeds ρ at that solution joins ``W`` and the QCQP is solved again.
    When none does, the restricted optimum is optimal for all features.

    Returns a dict with ``alpha``, ``p``, ``phi``, ``rho``, ``nu``,
    ``objective`` (the QCQP value g(α)), ``iterations`` (Newton steps),
    ``rounds``, ``working_set_size``, ``converged``.  A ``C`` above
    ``(1 + √n)/τ`` cannot bind and is replaced by it
    (:meth:`NMMKLProblem.box_bound`).
    """
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n, R = Z.shape
    C = min(float(C), (1.0 + np.sqrt(n)) / float(tau))
    offsets = np.arange(R + 1) if offsets is None else np.asarray(offsets, dtype=np.int64)
    d = offsets.shape[0] - 1
    linear = d == R
    counts = np.diff(offsets)
    m = float(m)
    A_all = np.ascontiguousarray((Z * y[:, None]).T)

    def phi_of(a):
        v = A_all @ a
        return v * v if linear else group_sq_norms(v, offsets)

    if m >= d:
        # every feature selected: the plain SVM dual (the QCQP's ρ is then
        # unbounded below along the optimal face, which an interior-point
        # method cannot follow); SMO solves it exactly
        a0 = None
        if alpha0 is not None:
            a0 = np.asarray(alpha0, dtype=np.float64)
            if np.any(a0 < 0) or np.any(a0 > C) or abs(a0 @ y) > 1e-12 * max(1.0, a0.sum()):
                a0 = None  # SMO must start feasible
        check_memory(8.0 * Z.shape[0] ** 2, f"The {Z.shape[0]} x {Z.shape[0]} kernel matrix of the SVM dual (m = d)")
        with limit_threads(blas_threads=n_threads):
            alpha, _, it, kkt = svm_dual_smo(Z @ Z.T, y, C, tau, a0, eps=1e-12)
        phi = phi_of(alpha)
        rho = float(phi.min())
        nu = phi - rho
        objective = float(2 * alpha.sum() - tau * alpha @ alpha - m * rho - nu.sum())
        return {"alpha": alpha, "p": np.ones(d), "phi": phi, "rho": rho, "nu": nu, "objective": objective,
                "iterations": it, "rounds": 0, "working_set_size": d, "converged": bool(kkt <= 1e-9)}
    center = _balanced_interior(y, C)
    if alpha0 is not None:
        a0 = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, C)
        if abs(a0 @ y) <= 1e-9 * max(1.0, a0.sum()):
            center = 0.9 * a0 + 0.1 * center
    alpha = center
    phi = phi_of(alpha)
    # the restricted problem needs more than m features (else ρ is unbounded)
    size = d if d <= 200 else min(d, int(2 * np.ceil(m)) + 100)
    W = np.argsort(-phi, kind="stable")[:size]
    if working_set is not None:
        W = np.concatenate([np.asarray(working_set, dtype=np.int64), W])
    W = np.unique(W)
    steps = 0
    rounds = 0
    k = int(np.ceil(m))
    found = {}

    def violators(a, W):
        """Features outside W with φ_i > ρ at α, and the near-violators."""
        ph = phi_of(a)
        outside = np.ones(d, dtype=bool)
        outside[W] = False
        rho_a = float(np.sort(ph[W])[::-1][k - 1])
        viol = np.flatnonzero(outside & (ph > rho_a * (1.0 + 1e-7)))
        near = np.flatnonzero(outside & (ph > 0.8 * rho_a))
        return viol, near, ph

    while True:
        rounds += 1
        if linear:
            A = A_all[W]
            offW = np.arange(W.size + 1)
        else:
            cols = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in W])
            A = A_all[cols]
            offW = np.concatenate([[0], np.cumsum(counts[W])])

        def check(a, r, W=W):
            # at a loose gap: stop early when the working set must grow
            viol, near, ph = violators(a, W)
            found.update(viol=viol, near=near, phi=ph)
            return viol.size == 0

        with limit_threads(blas_threads=n_threads):
            alpha_w, rho_w, nu_w, lam_w, st, ok = _pd_qcqp(A, offW, y, m, C, tau, alpha, tol=tol,
                                                            check=check if d > W.size else None)
        steps += st
        alpha = alpha_w
        if ok is None:  # stopped early by the check
            viol, near, phi = found["viol"], found["near"], found["phi"]
        else:
            viol, near, phi = violators(alpha, W)
        if verbose:
            report("nmmkl", f"round {rounds}: |W| = {W.size}, Newton steps {st}, violators {viol.size}")
        if (viol.size == 0 and ok is not None) or rounds >= max_rounds:
            break
        # add the violators and the features within 20 % of ρ (they tend to
        # violate next), worst first, at most doubling the working set
        extra = near[np.argsort(-phi[near], kind="stable")[: max(50, W.size)]]
        W = np.sort(np.concatenate([W, extra]))
        alpha = 0.95 * alpha + 0.05 * _balanced_interior(y, C)
    # exact feasibility of α against rounding: yᵀα = 0 and the box
    for _ in range(3):
        free = (alpha > 0) & (alpha < C)
        if not free.any():
            break
        alpha[free] -= (alpha @ y) / free.sum() * y[free]
        np.clip(alpha, 0.0, C, out=alpha)
    phi = phi_of(alpha)
    p = np.zeros(d)
    p[W] = lam_w
    order = np.argsort(-phi, kind="stable")
    kf = int(np.floor(m))
    rho = float(phi[order[kf]]) if m > kf else float(phi[order[kf - 1]])
    nu = np.maximum(phi - rho, 0.0)
    objective = float(2 * alpha.sum() - tau * alpha @ alpha - m * rho - nu.sum())
    return {"alpha": alpha, "p": p, "phi": phi, "rho": rho, "nu": nu, "objective": objective,
            "iterations": steps, "rounds": rounds, "working_set_size": int(W.size),
            "converged": bool(viol.size == 0 and ok)}

@register_native("nmmkl_qcqp", method="projected gradient on p + SMO (Numba)", default_tol=1e-9)
def _native_nmmkl(problem: NMMKLProblem, *, tol, warm_start=True, verbose=False):
    t0 = time.perf_counter()
    out = solve_nmmkl(problem.Z, problem.y, problem.m, problem.C, problem.tau, offsets=problem.offsets,
                      alpha0=problem.alpha0 if warm_start else None,
                      working_set=problem.working_set if warm_start else None, tol=tol, verbose=verbose)
    elapsed = time.perf_counter() - t0
    solution = {"alpha": out["alpha"], "rho": np.array(out["rho"]), "nu": out["nu"], "p": out["p"]}
    obj, viol = problem.evaluate(solution)
    status = Status.OPTIMAL if out["converged"] else Status.INACCURATE
    return SolverResult(solver="native", status=status, objective=obj, solution=solution,
                        iterations=out["iterations"], solve_time=elapsed, max_violation=viol,
                        tolerance={"gap": tol},
                        message=f"{out['iterations']} Newton steps, {out['rounds']} working-set round(s), "
                                f"|W| = {out['working_set_size']}")


@register_native_check("nmmkl_qcqp")
def _nmmkl_check():
    X, y = check_data()
    return NMMKLProblem(X, np.where(y > 0, 1.0, -1.0), 2.0), None
