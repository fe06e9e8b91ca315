r"""Per-feature predictor--corrector path of Generalized lp-KTA (Numba).

For every active feature, at every p of the grid,

.. math::

    G(\eta, p) = \lambda_1 (F'(\eta) - F'(x_0)) + \lambda_2 p \eta^{p-1} - a = 0 .

* Predictor: warm start (order 0), :math:`\eta - \Delta p\, \eta'` (order 1)
  or with :math:`+\tfrac12 \Delta p^2 \eta''` (order 2), from the implicit
  function theorem: :math:`\eta' = -G_p / G_\eta`,
  :math:`\eta'' = -(G_{\eta\eta}\eta'^2 + 2 G_{\eta p}\eta' + G_{pp}) / G_\eta`
  (applied to :math:`u = \log\eta`: :math:`u' = \eta'/\eta`,
  :math:`u'' = \eta''/\eta - u'^2`).
* Corrector: Newton's method in :math:`u = \log \eta`.  :math:`G(e^u, p)` is
  convex and increasing in ``u`` for both Bregman divergences (exponentials
  of ``u`` plus a linear term), so Newton converges from any start right of
  the root and overshoots at most once from the left.  The iterate is
  :math:`\eta = e^u > 0`: it never leaves :math:`\eta \ge 0`.
* Speed: the corrector runs a fixed number of Newton steps on all active
  features at once, branch-free, with :func:`~numkfs.kernels.fastexp.fast_exp`
  (vectorised over features, ``prange``); then the residual is evaluated and
  any feature with :math:`|G| >` ``tol`` · scale is re-solved by the
  safeguarded scalar Newton (:func:`newton_log`: a bracket
  :math:`[u_{lo}, u_{hi}]` with :math:`G(u_{lo}) < 0 < G(u_{hi})`, a step
  leaving it is replaced by bisection).  At p0 every feature goes through
  the safeguarded solver.
* Juncture elimination: a weight below ``eps`` is set to 0 for the rest of
  the path and the feature leaves the active set (Theorem 2: below
  :math:`e^{-1}` a weight only decreases as p does).  ``eps = 0`` follows
  the exact path (a weight is 0 only at its exact zero, or on underflow).

Bregman divergences are identified by an integer code here (0: squared
Euclidean, 1: generalised KL); :func:`bregman_terms`, :func:`upper_bracket`
and :func:`zero_gradient` are the places to add a third (with its Python
class in :mod:`numkfs.methods.lpkta`).  :func:`newton_path` runs the kernel
over chunks of features; lp-KTA's path (:func:`numkfs.methods.lpkta.lpkta_weights`,
:func:`numkfs.methods.lpkta.lpkta_path`) checks the input and reports on it.
"""
from __future__ import annotations

import math

import numpy as np

from ..._jit import jit, pjit, prange
from ..._threads import parallel_tasks
from ...kernels.fastexp import fast_exp

__all__ = [
    "BREGMAN_CODES",
    "LpKTAProblem",
    "newton_path",
    "upper_bracket",
    "zero_gradient",
    "lpkta_path_kernel",
    "bregman_terms",
    "bregman_value",
    "lpkta_G",
    "newton_log",
    "path_derivatives",
]

EUCLIDEAN = 0
KL = 1


@jit(inline=True)
def bregman_terms(code, u, eta, x0, logx0):
    """(F'(η) - F'(x0), η F''(η), η² F'''(η)) at η = e^u for Bregman ``code``."""
    if code == 0:  # F = x²
        return 2.0 * (eta - x0), 2.0 * eta, 0.0
    # code 1: F = x log x - x
    return u - logx0, 1.0, -1.0


@jit(inline=True)
def bregman_value(code, u, eta, x0, logx0):
    """B_F(η) at η = e^u for Bregman ``code``."""
    if code == 0:
        return (eta - x0) * (eta - x0)
    return eta * (u - logx0) - eta + x0


@jit
def lpkta_G(eta, p, a, lam1, lam2, code, x0):
    """G(η, p) and ∂G/∂η at η > 0 (reference evaluation, libm)."""
    u = math.log(eta)
    d1, d2, _ = bregman_terms(code, u, eta, x0, math.log(x0) if x0 > 0 else 0.0)
    pw = eta ** (p - 1.0)
    g = lam1 * d1 + lam2 * p * pw - a
    gd = (lam1 * d2 + lam2 * p * (p - 1.0) * pw) / eta
    return g, gd


@jit(inline=True)
def _G_u(u, p, a, lam1, lam2, code, x0, logx0):
    """G and dG/du at u = log η (fast exp; vectorisable)."""
    eta = fast_exp(u)
    pw = fast_exp((p - 1.0) * u)
    d1, d2, _ = bregman_terms(code, u, eta, x0, logx0)
    g = lam1 * d1 + lam2 * p * pw - a
    gu = lam1 * d2 + lam2 * p * (p - 1.0) * pw
    return g, gu


@jit(inline=True)
def _G_rel(u, p, a, lam1, lam2, code, x0, logx0):
    """|G| relative to the magnitude of its terms (its rounding floor is ~1e-16)."""
    eta = fast_exp(u)
    pw = fast_exp((p - 1.0) * u)
    d1, _, _ = bregman_terms(code, u, eta, x0, logx0)
    t1 = lam1 * d1
    t2 = lam2 * p * pw
    g = t1 + t2 - a
    return abs(g) / (abs(t1) + abs(t2) + abs(a) + 1e-300)


@jit(inline=True)
def path_derivatives(u, p, lam1, lam2, code, x0, logx0):
    """(du/dp, d²u/dp²) along the solution curve at (η = e^u, p)."""
    eta = fast_exp(u)
    pw1 = fast_exp((p - 1.0) * u)
    _, e_d2, e2_d3 = bregman_terms(code, u, eta, x0, logx0)
    # η-derivatives scaled: H_e = η G_η, H_ee = η² G_ηη, H_ep = η G_ηp
    h_e = lam1 * e_d2 + lam2 * p * (p - 1.0) * pw1
    g_p = lam2 * pw1 * (1.0 + p * u)
    h_ee = lam1 * e2_d3 + lam2 * p * (p - 1.0) * (p - 2.0) * pw1
    h_ep = lam2 * pw1 * ((2.0 * p - 1.0) + p * (p - 1.0) * u)
    g_pp = lam2 * pw1 * u * (2.0 + p * u)
    v1 = -g_p / h_e  # = η'/η = u'
    # η''/η = -(H_ee v1² + 2 H_ep v1 + G_pp) / H_e ; u'' = η''/η - u'²
    v2 = -(h_ee * v1 * v1 + 2.0 * h_ep * v1 + g_pp) / h_e
    return v1, v2 - v1 * v1


@jit
def newton_log(u, p, a, lam1, lam2, code, x0, logx0, u_hi, tol, max_iter):
    """Safeguarded Newton in u = log η for G = 0 on (-inf, u_hi).

    Returns (u, iterations, relative |G| at the returned u)."""
    u_lo = -np.inf
    if not (u < u_hi):
        u = u_hi - 1.0
    it = 0
    g = np.inf
    while it < max_iter:
        g, gu = _G_u(u, p, a, lam1, lam2, code, x0, logx0)
        if g > 0.0:
            u_hi = u
        elif g < 0.0:
            u_lo = u
        else:
            return u, it, 0.0
        if _G_rel(u, p, a, lam1, lam2, code, x0, logx0) <= tol or u < -800.0:
            break
        it += 1
        new = u - g / gu
        if not (new > u_lo and new < u_hi):
            new = 0.5 * (u_lo + u_hi) if u_lo > -np.inf else u_hi - max(1.0, u_hi - u)
        if new == u:
            break
        u = new
    return u, it, _G_rel(u, p, a, lam1, lam2, code, x0, logx0)


@jit
def _predict(ua, uh, p, p_prev, lam1, lam2, code, x0, logx0, order):
    """Predictor on all active features of a chunk (flat loop: vectorises)."""
    m = ua.shape[0]
    dp = p - p_prev
    for j in range(m):
        u = ua[j]
        v1, v2 = path_derivatives(u, p_prev, lam1, lam2, code, x0, logx0)
        step = dp * v1
        if order >= 2:
            step += 0.5 * dp * dp * v2
        u = u + step
        ua[j] = u if u < uh[j] else uh[j]


@jit
def _newton_step(ua, aa, uh, p, lam1, lam2, code, x0, logx0):
    """One Newton step in u on all active features of a chunk (vectorises)."""
    m = ua.shape[0]
    for j in range(m):
        u = ua[j]
        g, gu = _G_u(u, p, aa[j], lam1, lam2, code, x0, logx0)
        u = u - g / gu
        ua[j] = u if u < uh[j] else uh[j]


@jit
def _residual(ua, aa, p, lam1, lam2, code, x0, logx0, res):
    """|G| relative to its terms on all active features (vectorises)."""
    m = ua.shape[0]
    for j in range(m):
        res[j] = _G_rel(ua[j], p, aa[j], lam1, lam2, code, x0, logx0)


@jit
def _path_chunk(a, p_grid, lam1, lam2, code, x0, zero_grad, u_hi, eps, order, tol, max_iter,
                n_fixed, out, junct, lo, hi, stats, obj):
    """Algorithm 1 of the paper (with safeguards) for features lo..hi-1;
    ``obj[k]`` gets the objective terms of the non-zero weights at point k."""
    P = p_grid.shape[0]
    logx0 = math.log(x0) if x0 > 0 else 0.0
    d = hi - lo
    idx = np.empty(d, dtype=np.int64)
    for j in range(d):
        idx[j] = lo + j
        junct[lo + j] = np.nan
    m = d
    ua = np.empty(d)
    aa = np.empty(d)
    uh = np.empty(d)
    res = np.empty(d)
    n_iter = 0
    n_safe = 0
    rmax = 0.0
    for k in range(P):
        p = p_grid[k]
        # exact zeros: the optimality condition of η = 0 (p-independent for p > 1)
        lam_at0 = lam2 if p <= 1.0 else 0.0
        w = 0
        for j in range(m):
            i = idx[j]
            if zero_grad + lam_at0 - a[i] >= 0.0:
                junct[i] = p
            else:
                idx[w] = i
                ua[w] = ua[j]
                w += 1
        m = w
        for j in range(m):
            aa[j] = a[idx[j]]
            uh[j] = u_hi[idx[j]]
        if k == 0:
            for j in range(m):
                u, it, r = newton_log(uh[j] - 1.0, p, aa[j], lam1, lam2, code, x0, logx0, uh[j],
                                      tol, max_iter)
                ua[j] = u
                res[j] = r
                n_iter += it
        else:
            if order >= 1:
                _predict(ua[:m], uh[:m], p, p_grid[k - 1], lam1, lam2, code, x0, logx0, order)
            for _ in range(n_fixed):
                _newton_step(ua[:m], aa[:m], uh[:m], p, lam1, lam2, code, x0, logx0)
            _residual(ua[:m], aa[:m], p, lam1, lam2, code, x0, logx0, res[:m])
            n_iter += n_fixed * m
            for j in range(m):
                if not (res[j] <= tol) or not np.isfinite(ua[j]):
                    u0 = ua[j] if (np.isfinite(ua[j]) and ua[j] < uh[j]) else uh[j] - 1.0
                    u, it, r = newton_log(u0, p, aa[j], lam1, lam2, code, x0, logx0,
                                          uh[j], tol, max_iter)
                    ua[j] = u
                    res[j] = r
                    n_iter += it
                    n_safe += 1
        # juncture elimination and output
        w = 0
        ok = 0.0
        for j in range(m):
            i = idx[j]
            u = ua[j]
            eta = fast_exp(u)
            if eta < eps or eta == 0.0:
                junct[i] = p
                continue
            out[k, i] = eta
            ok += lam1 * bregman_value(code, u, eta, x0, logx0) + lam2 * eta * fast_exp((p - 1.0) * u) - aa[j] * eta
            if res[j] > rmax:
                rmax = res[j]
            idx[w] = i
            ua[w] = ua[j]
            w += 1
        m = w
        obj[k] = ok
    stats[0] = n_iter
    stats[1] = n_safe
    stats[2] = rmax


@pjit
def lpkta_path_kernel(a, p_grid, lam1, lam2, code, x0, zero_grad, u_hi, eps, order, tol,
                      max_iter, n_fixed, n_chunks, out, junct, stats, obj):
    """The whole path: one parallel region over chunks of features, each
    chunk following Algorithm 1 with vectorised predictor/corrector loops.

    Parameters
    ----------
    a : (d,) alignments
    p_grid : (P,) strictly decreasing values of p >= 1
    zero_grad : float
        λ1 (F'(0) - F'(x0)) (``-inf`` for KL): η = 0 iff
        ``zero_grad + λ2·[p == 1] - a >= 0``.
    u_hi : (d,) log of upper brackets (G > 0 there for every p)
    eps : elimination threshold (0: exact path)
    order : predictor order 0, 1 or 2
    n_fixed : Newton steps applied to every active feature per point
    out : (P, d) weights, zero on entry
    junct : (d,) p at which a feature left the path (NaN if never)
    stats : (n_chunks, 3) Newton iterations, safeguarded re-solves,
        largest relative |G| of a returned weight
    obj : (n_chunks, P) objective terms of the non-zero weights per chunk
    """
    d = a.shape[0]
    for c in prange(n_chunks):
        lo = (c * d) // n_chunks
        hi = ((c + 1) * d) // n_chunks
        _path_chunk(a, p_grid, lam1, lam2, code, x0, zero_grad, u_hi, eps, order, tol, max_iter,
                    n_fixed, out, junct, lo, hi, stats[c], obj[c])


# ----------------------------------------------------------------------------
# the Newton bracket and the path of weights over chunks of features (the
# driver of lpkta_path_kernel; numkfs.methods.lpkta.lpkta_weights checks the
# input and reports on the path)

#: the code of each Bregman divergence by name (``LpKTAProblem``'s ``bregman``)
BREGMAN_CODES = {"euclidean": EUCLIDEAN, "kl": KL}

#: Newton steps applied to every active feature per point, by predictor order
_N_FIXED = {0: 4, 1: 3, 2: 2}


def zero_gradient(code, lam1, x0):
    r""":math:`\lambda_1 (F'(0) - F'(x_0))` of the Bregman divergence ``code``."""
    if code == EUCLIDEAN:
        return -2.0 * lam1 * x0
    if code == KL:
        return -np.inf
    raise ValueError(f"unknown Bregman divergence code {code!r}.")


def upper_bracket(code, a, lam1, x0):
    r"""Points where :math:`G > 0` for every p (Newton's upper bracket) for alignments ``a``."""
    if code == EUCLIDEAN:
        return (x0 + np.maximum(a, 0.0) / (2.0 * lam1)) * (1.0 + 1e-12) + 1e-300
    if code == KL:
        return np.minimum(x0 * np.exp(np.minimum(np.maximum(a, 0.0) / lam1, 690.0)), 1e300) * (1.0 + 1e-12)
    raise ValueError(f"unknown Bregman divergence code {code!r}.")


def newton_path(a, grid, lam1, lam2, code, x0, eps, order, tol, max_iter):
    """The weights at every p of ``grid`` for alignments ``a`` (checked by the caller).

    Parameters
    ----------
    a : ndarray of shape (d,)
    grid : ndarray of shape (P,)
        Strictly decreasing p values in [1, ∞).
    lam1, lam2 : float
        Weights of the Bregman and the lp term.
    code : int
        The Bregman divergence (:data:`EUCLIDEAN`, :data:`KL`).
    x0 : float
        Its centre.
    eps : float
        Juncture elimination threshold.
    order : int
        Predictor order 0, 1 or 2.
    tol : float
        Relative tolerance of the corrector.
    max_iter : int
        Newton steps per point and feature.

    Returns
    -------
    eta : ndarray of shape (P, d)
    junct : ndarray of shape (d,)
        p at which a feature left the path (NaN if never).
    stats : ndarray of shape (n_chunks, 3)
        Newton iterations, safeguarded re-solves, largest relative |G| per chunk.
    obj : ndarray of shape (n_chunks, P)
        Objective terms of the non-zero weights per chunk.
    """
    a = np.ascontiguousarray(a, dtype=float)
    d = a.shape[0]
    P = grid.shape[0]
    eta = np.zeros((P, d))
    junct = np.empty(d)
    n_chunks = parallel_tasks(d, per_thread=8, min_items=512)
    stats = np.zeros((n_chunks, 3))
    obj = np.zeros((n_chunks, P))
    u_hi = np.log(np.ascontiguousarray(upper_bracket(code, a, lam1, x0), dtype=float))
    zero_grad = float(zero_gradient(code, lam1, x0))
    args = (a, grid, lam1, lam2, code, x0, zero_grad, u_hi, eps, order, tol, max_iter, _N_FIXED[order])
    if n_chunks == 1:
        # one chunk (fewer than 1,024 features): the chunk itself, without the parallel
        # region, whose compilation would be most of a first small fit's
        _path_chunk(*args, eta, junct, 0, d, stats[0], obj[0])
    else:
        lpkta_path_kernel(*args, n_chunks, eta, junct, stats, obj)
    return eta, junct, stats, obj


# ----------------------------------------------------------------------------
# the problem at one p, for any backend (cross-checks against conic solvers)

from .._base import ConvexProblem, SolverResult, Status  # noqa: E402
from ..registry import register_native, register_native_check  # noqa: E402


class LpKTAProblem(ConvexProblem):
    r"""Generalized lp-KTA at one p (variable named ``"eta"``).

    .. math::

        \min_{\eta \ge 0}\ \lambda_1 \sum_i B_F(\eta_i) + \lambda_2 \sum_i \eta_i^p
        - a^\top \eta

    ``bregman`` is ``"euclidean"`` (:math:`(\eta - x_0)^2`) or ``"kl"``
    (:math:`\eta \log(\eta/x_0) - \eta + x_0`). The CVXPY form uses
    ``power(eta, p)`` (power cone) and ``-entr`` for KL; the native solver
    is the safeguarded Newton of this module (exact, no elimination).
    """

    kind = "lpkta"

    def __init__(self, a, p, lambda1, lambda2, bregman="euclidean", x0=None):
        super().__init__()
        self.a = np.asarray(a, dtype=float).ravel()
        self.p = float(p)
        self.lambda1 = float(lambda1)
        self.lambda2 = float(lambda2)
        if bregman not in ("euclidean", "kl"):
            raise ValueError(f"LpKTAProblem: bregman must be 'euclidean' or 'kl'; got {bregman!r}.")
        self.bregman = bregman
        self.x0 = float((0.0 if bregman == "euclidean" else 1.0) if x0 is None else x0)

    def build(self):
        import cvxpy as cp

        eta = cp.Variable(self.a.shape[0], nonneg=True, name="eta")
        if self.bregman == "euclidean":
            breg = cp.sum_squares(eta - self.x0)
        else:
            breg = cp.sum(-cp.entr(eta)) - np.log(self.x0) * cp.sum(eta) - cp.sum(eta) + self.x0 * eta.size
        obj = self.lambda1 * breg + self.lambda2 * cp.sum(cp.power(eta, self.p, approx=False)) - self.a @ eta
        return cp.Problem(cp.Minimize(obj))

    def value(self, eta):
        eta = np.asarray(eta, dtype=float)
        if self.bregman == "euclidean":
            b = (eta - self.x0) ** 2
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                b = np.where(eta > 0, eta * np.log(np.where(eta > 0, eta, 1.0) / self.x0), 0.0) - eta + self.x0
        return float(self.lambda1 * b.sum() + self.lambda2 * np.sum(np.maximum(eta, 0) ** self.p) - self.a @ eta)

    def evaluate(self, solution):
        eta = np.asarray(solution["eta"], dtype=float)
        return self.value(eta), float(max(0.0, -eta.min(initial=0.0)))

    def selected(self, solution):
        return np.asarray(solution["eta"]) > 0


@register_native("lpkta", method="safeguarded Newton per feature (Numba)", default_tol=1e-14)
def _native_lpkta(problem: LpKTAProblem, *, tol, warm_start=True, max_iter=200):
    import time

    t0 = time.perf_counter()
    eta, _, stats, _ = newton_path(problem.a, np.array([problem.p]), problem.lambda1, problem.lambda2,
                                   BREGMAN_CODES[problem.bregman], problem.x0, eps=0.0, order=2, tol=float(tol),
                                   max_iter=int(max_iter))
    elapsed = time.perf_counter() - t0
    w = eta[0]
    obj, viol = problem.evaluate({"eta": w})
    res = float(stats[:, 2].max())
    status = Status.OPTIMAL if res <= max(tol, 1e-15) * 10 else Status.INACCURATE
    return SolverResult(solver="native", status=status, objective=obj, solution={"eta": w},
                        iterations=int(stats[:, 0].sum()), solve_time=elapsed, max_violation=viol,
                        tolerance={"relative |G|": tol}, message=f"max relative |G| {res:.1e}")


@register_native_check("lpkta")
def _lpkta_check():
    return LpKTAProblem(np.array([0.5, -0.2, 1.5]), 1.5, 1.0, 0.3), None
