r"""L1KR: the feature-selection path of ARD kernel ridge regression by homotopy
(Li & Sminchisescu, AISTATS 2010; the L1KR user guide (``docs/guide/l1kr.md``)).

Problem (paper eq. 1), with columns of X centred and scaled to unit norm and
y centred (here also scaled to unit norm, see below):

.. math::

    \min_{\alpha, \beta \ge 0, \alpha_0} \|y - K(\beta)\alpha - \alpha_0 1\|^2
    \quad\text{s.t.}\quad \alpha^\top K(\beta)\alpha \le C,\ \|\beta\|_1 \le D .

Stationarity gives ``(H K + λ I) α = y`` and ``-∂L/∂β_i = λ g_i`` with
``g_i = αᵀ (∂K/∂β_i) α``.  With β ≥ 0 (the kernels are only positive definite
there) the KKT conditions on the active set P are ``g_i = η = max_j g_j`` for
i in P.  Two versions of the system are traced:

* ``fix="C"`` (the paper): unknowns (α, β_P, λ), equations
  ``(HK + λI)α = y``, ``λ (g_{P_k} - g_{P_{k+1}}) = 0``, ``(αᵀKα - C)/C = 0``;
* ``fix="lambda"`` (users think in ridge penalties): λ is given, C is free,
  unknowns (α, β_P), the same equations without the last one.  Its
  stationary points are those of ``min ||y - Kα - α0||² + λ αᵀKα`` under
  ``||β||₁ ≤ D``.

Both have one unknown more than equations: a curve, traced in arc length
``s`` of (α, β_P[, λ]).  The λ-version's path in β does not depend on the scale
of y, the C-version's does through C; C is therefore expressed for the
unit-norm y (``C`` in units of ``||y - ȳ||²``).

Decisions where the paper is silent or cannot be followed literally
-----------------------------------------------------------------
* **The degenerate kernel at β = 0.**  Both ARD kernels equal ``11ᵀ`` at
  β = 0, so ``H K(0) = 0`` and ``αᵀK(0)α = (1ᵀα)² = 0`` for every centred α:
  the paper's first step "solve (3) with αᵀKα = C at β = 0" has no
  solution.  With λ fixed nothing is degenerate: ``α(0) = y / λ`` and the path
  starts exactly at β = 0.  With C fixed the path leaves β = 0 with λ → 0
  and ``||α|| ~ D^{-1/2}``; the first feature is still the one of Lemma 1,
  computed with the limit direction α ∝ y (both kernels give
  ``g_i(0) ∝ (x_iᵀ y)²``), and the traced path starts at a small
  ``D_0`` on the one-feature branch (λ found by a 1-D root search of
  ``αᵀKα = C``, halving ``D_0`` until no other feature has overtaken the
  first), recorded as the first point.
* **Signs.** Features enter with β ≥ 0, so E1 is ``g_j = η`` (not |g_j|),
  and the stopping test ``max_i |∂L/∂β_i| < ε`` uses the projected
  gradient, ``λ max(η, 0)``; ``gradient_tol`` applies to the loss of the
  centred, unit-norm y.
* **Integrator.**  The paper runs a variable-order Adams–Moulton ODE solver
  on ``ds(α, β, λ)/dt = v`` and corrects only at events.  Here every step is
  a predictor–corrector step (Allgower & Georg): a second-order
  (Adams–Bashforth 2) predictor along the tangent, then Moore–Penrose
  Newton corrections with the chord Jacobian from the same QR that gave the
  tangent (improved by Broyden's rank-one updates between corrections), so that every stored point satisfies the KKT system to ``tol``
  and the tracker cannot drift to another branch.  The step length is
  adapted from the Newton contraction, the corrector distance and the
  angle between consecutive tangents.  ``integrator="RK45"`` (or any
  ``scipy.integrate.solve_ivp`` method) integrates the tangent ODE instead,
  with Newton corrections when the KKT residual exceeds ``tol`` and at
  events; ``benchmarks/l1kr_paper.py`` compares the two.
* **Which features a point selects.**  The path keeps every feature that
  lowers the training objective at all, however little: on noise-free data
  irrelevant features ride along at small β at every D, only 2-20 times
  below relevant features with a linear effect (long length scale), so no
  tolerance on β separates them.  What separates them is what the model
  loses without them: :func:`l1kr_prune` removes the features whose joint
  removal (α refitted) raises the ridge objective by less than ``prune_tol``
  of ``Σ (y - ȳ)²``; :func:`l1kr_cv_path` scores and reports those pruned
  models.
* **Events** are located by the paper's interpolating line search
  (regula falsi on the event functions, bisection when it stalls; its
  probes evaluate the event functions, not the Jacobian) to ``LOCATE_RTOL``
  of the step; the event point is then solved exactly with the extra
  equation (paper eq. 9–10), and the search repeated to full accuracy if
  another event function reached 0 first.
  At E2 both directions of the new curve are probed and the one with
  ``g_i < η`` for the leaving feature is kept (Lemma 2).
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np
from scipy.linalg import qr as _qr
from scipy.linalg import solve_triangular

from .._validation import (
    NumericalWarning,
    Interval,
    NoneOr,
    Options,
    check_memory,
    check_X_y,
    validate_params,
    warn_not_converged,
)
from .._progress import report
from ..model_selection import support_jump
from .._threads import limit_threads, thread_limits
from ..kernels.ard import (
    ard_grad_columns,
    ard_grad_contractions,
    ard_hessian_contractions,
    ard_kernel,
    canonical_kernel,
)
from ..paths import FeaturePath

from numbers import Integral, Real

__all__ = ["l1kr_path", "l1kr_cv_path", "l1kr_kkt_residual", "l1kr_path_at", "l1kr_predict", "l1kr_objective",
           "l1kr_prune"]

#: event codes stored in ``path.extra["event"]``
EVENT_NONE, EVENT_START, EVENT_E1, EVENT_E2, EVENT_STOP, EVENT_DMAX = 0, 1, 2, 3, 4, 5
EVENT_NAMES = {0: "", 1: "start", 2: "E1", 3: "E2", 4: "stationary", 5: "D_max"}

#: Default ``prune_tol`` of :func:`l1kr_cv_path` and :func:`l1kr_prune`: the
#: features whose removal together raises the ridge objective by less than
#: this fraction of ``Σ (y - ȳ)²`` are dropped from a grid point's model.
PRUNE_TOL = 1e-3

#: Newton iterations allowed to solve an event point exactly (paper eq. 9-10).
POLISH_MAX_ITER = 12


class PathTrackingError(RuntimeError):
    """The tracker could not continue the path (e.g. a singular Jacobian)."""


class PathDegeneracyWarning(UserWarning):
    """The path stopped early: the KKT Jacobian became singular, or every
    active feature left (the path returned to β = 0)."""


#: Kernel names of L1KR: ``"rbf"`` (the ARD Gaussian) and ``"poly"``;
#: ``"gaussian"`` (the paper's name) is an alias of ``"rbf"``.
L1KR_KERNELS = ("rbf", "gaussian", "poly")


class _FinitePositive:
    """A finite real number > 0 (``inf`` and NaN refused)."""

    def is_satisfied_by(self, value):
        return (isinstance(value, Real) and not isinstance(value, (bool, np.bool_)) and math.isfinite(value)
                and value > 0)

    def __str__(self):
        return "a finite float > 0"


FINITE_POSITIVE = _FinitePositive()


def _renamed_eps(gradient_tol, eps, caller):
    """``eps`` is the deprecated name of ``gradient_tol`` (one release)."""
    if eps is None:
        return gradient_tol
    warnings.warn(f"{caller}: 'eps' was renamed 'gradient_tol' (the stopping threshold on the projected "
                  "gradient); 'eps' will stop working in the next release.", FutureWarning, stacklevel=3)
    return eps


# --------------------------------------------------------------------------
# the KKT system


class _System:
    """The KKT system of L1KR on an active set P (Python orchestration only)."""

    def __init__(self, Xs, ys, kernel, degree, fix, lam, C, ascale=1.0):
        self.X, self.y = Xs, ys
        self.c = float(ascale)  # z holds c·α so that the α block is O(1)
        self.n, self.d = Xs.shape
        self.kernel, self.degree = kernel, degree
        self.fix, self.lam, self.C = fix, lam, C
        self.n_jac = 0
        self.t_jac = 0.0
        self.xmax = np.max(np.abs(Xs), axis=0) if Xs.size else np.zeros(self.d)
        #: rounding floor of the last F evaluated (see :meth:`_floor`)
        self.floor = 0.0
        #: what was computed at the last point evaluated (see :meth:`_kernel`)
        self._cache = {}
        #: the tracker's tol: a rounding floor known to be below it is not
        #: computed exactly (:meth:`_floor`)
        self.tol = 0.0

    # layout of z: alpha (n), beta_P (|P|), [lambda]
    def split(self, z, P):
        n = self.n
        alpha = z[:n] / self.c
        beta = np.zeros(self.d)
        beta[P] = z[n : n + len(P)]
        lam = z[-1] if self.fix == "C" else self.lam
        return alpha, beta, lam

    def n_eq(self, P):
        return self.n + max(len(P) - 1, 0) + (self.fix == "C")

    def _F(self, alpha, beta, lam, K, gP, P, extra=None):
        Ka = K @ alpha
        r1 = Ka - Ka.mean() + lam * alpha - self.y
        parts = [r1, lam * (gP[:-1] - gP[1:])]
        if self.fix == "C":
            parts.append([(alpha @ Ka - self.C) / self.C])
        self.floor = self._floor(alpha, beta, K, lam, list(P) + ([extra] if extra is not None else []))
        return np.concatenate(parts), Ka

    def _floor(self, alpha, beta, K, lam, feats):
        r"""The rounding floor of F at (α, β, λ): no evaluation of F in
        floating point, on any BLAS, can be trusted below it, so a point
        whose ``|F|`` is under it satisfies the KKT system to working
        precision.

        Each equation is a sum of n products; its rounding error is at most
        ``√n ε`` times the sum of the magnitudes of its terms (the
        probabilistic bound of Higham & Mary, SIAM J. Sci. Comput. 41, 2019;
        the worst case is ``n ε``):

        * ``(HK + λI)α = y``: ``|K||α| + λ|α| + |y|``;
        * ``λ(g_i - g_j)`` with ``g_i = αᵀ(∂K/∂β_i)α``: ``λ |α|ᵀ|∂K/∂β_i||α|``,
          bounded by ``4 max|x_i|² |α|ᵀ|K||α|`` (Gaussian:
          ``|∂K/∂β_i| = (x_ia - x_ib)² K``) or ``(d/T) 2^d max|x_i|² ||α||₁²``
          (polynomial: ``|u| ≤ 2`` on unit-norm columns);
        * ``(αᵀKα - C)/C``: ``|α|ᵀ|K||α| / C``.

        The terms grow like ``1/λ`` (α ≈ y/λ near β = 0): at λ = 1e-6 on
        n = 442 rows the floor of the first block is about 1e-7 of
        ``||y||∞``, above the default ``tol`` = 1e-10."""
        n = self.n
        a = np.abs(alpha)
        if self.kernel == "rbf" and len(feats) > 0:
            # 0 < K <= 1: |K||α| <= ||α||₁ entrywise, so the floor is at most
            # this; where that is below tol (which _tol takes when larger) the
            # product is not needed
            a1 = float(np.sum(a))
            x2 = float(np.max(self.xmax[np.asarray(feats, dtype=int)])) ** 2
            bound = [a1 + float(np.max(lam * a + np.abs(self.y))), lam * 4.0 * x2 * a1 * a1]
            if self.fix == "C":
                bound.append(a1 * a1 / self.C)
            bound = math.sqrt(n) * np.finfo(float).eps * max(bound)
            if bound <= self.tol:
                return bound
        s1 = (K if self.kernel == "rbf" else np.abs(K)) @ a
        q = float(a @ s1)
        floors = [float(np.max(s1 + lam * a + np.abs(self.y))) if n else 0.0]
        if len(feats) > 1:
            x2 = float(np.max(self.xmax[np.asarray(feats, dtype=int)])) ** 2
            if self.kernel == "rbf":
                floors.append(lam * 4.0 * x2 * q)
            else:
                T = 1.0 + float(np.sum(beta))
                floors.append(lam * (self.degree / T) * 2.0**self.degree * x2 * float(np.sum(a)) ** 2)
        if self.fix == "C":
            floors.append(q / self.C)
        return math.sqrt(n) * np.finfo(float).eps * max(floors)

    # Every evaluation at a point reuses what an earlier one at the same
    # point computed: the corrector's last residual and the point's full
    # evaluation share K, an event probe and the polish that follows share
    # the gradient columns, and the E1 polish (features P + [j]) leaves the
    # Hessian contractions of the new active set P + [j].
    def _kernel(self, beta):
        c = self._cache.get("K")
        if c is not None and np.array_equal(c[0], beta):
            return c[1]
        K = ard_kernel(self.X, beta, self.kernel, self.degree)
        self._cache = {"K": (beta.copy(), K)}
        return K

    def _gradients(self, alpha, beta, K):
        """Every column ``(∂K/∂β_i) α`` and ``g_i = αᵀ(∂K/∂β_i)α``."""
        c = self._cache.get("A")
        if c is not None and np.array_equal(c[0], alpha):
            return c[1], c[2]
        A = ard_grad_columns(self.X, beta, alpha, K, self.kernel, self.degree)
        g = alpha @ A
        self._cache["A"] = (alpha.copy(), A, g)
        return A, g

    def _hessian(self, alpha, beta, K, feats):
        """``S`` on ``feats`` (a subset of the features of the last one at
        this point is read from it)."""
        c = self._cache.get("S")
        if c is not None and np.array_equal(c[0], alpha):
            pos = {f: k for k, f in enumerate(c[1])}
            if all(f in pos for f in feats):
                ix = [pos[f] for f in feats]
                return c[2][np.ix_(ix, ix)]
        S = ard_hessian_contractions(self.X, beta, alpha, K, feats, self.kernel, self.degree)
        self._cache["S"] = (alpha.copy(), list(feats), S)
        return S

    def residual(self, z, P):
        """F(z) only (O(n² |P|))."""
        alpha, beta, lam = self.split(z, P)
        K = self._kernel(beta)
        c = self._cache.get("A")
        if c is not None and np.array_equal(c[0], alpha):
            gP = c[2][P]
        else:
            gP = ard_grad_contractions(self.X, beta, alpha, K, self.kernel, self.degree, features=P)
        return self._F(alpha, beta, lam, K, gP, P)[0]

    def light(self, z, P):
        """F, every g_i and the pieces, without the Jacobian (no Hessian
        contractions): what event functions need."""
        alpha, beta, lam = self.split(z, P)
        K = self._kernel(beta)
        A, g = self._gradients(alpha, beta, K)
        F, Ka = self._F(alpha, beta, lam, K, g[P], P)
        return dict(F=F, J=None, g=g, A=A, lam=lam, beta=beta, alpha=alpha, K=K, Ka=Ka, extra_row=None)

    def full(self, z, P, extra=None, hess=None):
        """F, the Jacobian J, every g_i and the pieces (one "Jacobian call").

        ``extra`` (a feature index) adds the row of ``λ(g_extra - g_{P_0})``
        (E1 polish).  ``hess``, ``(features, S)`` from a nearby point (the
        event polish's), supplies the Hessian contractions instead of
        computing them: J then is the Jacobian of that point in its
        ``S`` block, as good for a tangent and a chord as one from the
        start of a step."""
        t0 = time.perf_counter()
        n, p = self.n, len(P)
        alpha, beta, lam = self.split(z, P)
        K = self._kernel(beta)
        A, g = self._gradients(alpha, beta, K)
        feats = list(P) + ([extra] if extra is not None else [])
        if hess is not None:
            pos = {f: k for k, f in enumerate(hess[0])}
            ix = [pos[f] for f in feats]
            S = hess[1][np.ix_(ix, ix)]
        else:
            S = self._hessian(alpha, beta, K, feats)
        gP = g[P]
        F, Ka = self._F(alpha, beta, lam, K, gP, P, extra)
        m = self.n_eq(P)
        nv = n + p + (self.fix == "C")
        J = np.zeros((m, nv))
        J[:n, :n] = K - K.mean(axis=0, keepdims=True)
        J[np.arange(n), np.arange(n)] += lam
        AP = A[:, P]
        J[:n, n : n + p] = AP - AP.mean(axis=0, keepdims=True)
        if p > 1:
            J[n : n + p - 1, :n] = (2.0 * lam) * (AP[:, :-1] - AP[:, 1:]).T
            J[n : n + p - 1, n : n + p] = lam * (S[: p - 1, :p] - S[1:p, :p])
        if self.fix == "C":
            J[:n, -1] = alpha
            J[n : n + p - 1, -1] = gP[:-1] - gP[1:]
            J[m - 1, :n] = 2.0 * Ka / self.C
            J[m - 1, n : n + p] = gP / self.C
        row = None
        if extra is not None:
            row = np.zeros(nv)
            row[:n] = 2.0 * lam * (A[:, extra] - AP[:, 0])
            row[n : n + p] = lam * (S[p, :p] - S[0, :p])
            if self.fix == "C":
                row[-1] = g[extra] - gP[0]
            row[:n] /= self.c
        J[:, :n] /= self.c
        self.n_jac += 1
        self.t_jac += time.perf_counter() - t0
        return dict(F=F, J=J, g=g, A=A, S=S, lam=lam, beta=beta, alpha=alpha, K=K, Ka=Ka, extra_row=row)


def _tangent_and_corrector(J, ref, method="lu"):
    """Tangent (null vector of J, oriented so that ``v · ref > 0``) and a
    solver for the Newton corrections ``δ = -J⁺ F`` (δ ⟂ tangent).

    ``method="qr"``: QR of Jᵀ, the tangent is the last column of Q and
    ``J⁺F = Q₁ R₁⁻ᵀ F`` (the paper).  ``method="lu"``: one LU factorisation
    of the bordered matrix ``[J; refᵀ]``; ``[J; refᵀ] t = e_last`` gives the
    same null vector (already oriented), and solving with ``[F; 0]`` gives
    the Newton step on the hyperplane ⟂ ref.  Identical in exact arithmetic
    up to the hyperplane; LU is 5-10x cheaper here (benchmark)."""
    m, nv = J.shape
    if method == "lu":
        from scipy.linalg import LinAlgWarning, lu_factor, lu_solve

        A = np.vstack([J, ref[None, :]])
        with warnings.catch_warnings():
            # a singular bordered matrix is detected from the pivots below
            # (QR fallback, then PathTrackingError): not a user warning
            warnings.simplefilter("ignore", LinAlgWarning)
            lu = lu_factor(A, check_finite=False)
        piv = np.abs(np.diag(lu[0]))
        if piv.min() > _SINGULAR_PIVOT * piv.max():
            e = np.zeros(nv)
            e[-1] = 1.0
            t = lu_solve(lu, e, check_finite=False)
            v = t / np.linalg.norm(t)
            return v, ("lu", lu)
        # ref (nearly) orthogonal to the null space: fall back to QR
    Q, R = _qr(J.T, mode="full", check_finite=False)
    R1 = R[:m, :m]
    d = np.abs(np.diag(R1))
    if m and d.min() <= _SINGULAR_PIVOT * max(d.max(), 1e-300):
        raise PathTrackingError("the KKT Jacobian is singular (rank-deficient); cannot continue the path")
    v = Q[:, -1].copy()
    if v @ ref < 0:
        v = -v
    return v, ("qr", (Q[:, :m], R1))


def _mp_step(qr, F):
    kind, fac = qr
    if kind == "lu":
        from scipy.linalg import lu_solve

        return -lu_solve(fac, np.concatenate([F, [0.0]]), check_finite=False)
    Q1, R1 = fac
    w = solve_triangular(R1, F, trans="T", lower=False, check_finite=False)
    return -(Q1 @ w)


def _norm(F):
    return float(np.max(np.abs(F))) if F.size else 0.0


def _tol(sysm, tol):
    """The KKT residual required of the point last evaluated: ``tol``, or
    the rounding floor of its equations when that is larger
    (:meth:`_System._floor`; small λ makes α, and with it the floor, large)."""
    return max(tol, sysm.floor)


def _trial_residual(sysm, z, P):
    """F at a trial point of the corrector, or None when it is not finite.

    A diverging Newton correction can reach points where the kernel times α
    overflows; that is the corrector failing (the step is then shortened),
    not something to warn about, so those floating-point warnings are
    silenced here, and only here."""
    with np.errstate(over="ignore", invalid="ignore"):
        F = sysm.residual(z, P)
    return F if np.all(np.isfinite(F)) else None


# --------------------------------------------------------------------------
# helpers on a point


def _event_functions(sysm, info, P, z, D_max, stop_abs):
    """Event functions, an event when one goes from < 0 to >= 0:
    E1: λ(g_j - η) for inactive j; E2: -β_i for active i; stationary:
    stop_abs - λη; D_max: D - D_max."""
    g, lam = info["g"], info["lam"]
    eta = g[P].mean()
    d = sysm.d
    e1 = lam * (g - eta)
    e1[P] = -np.inf
    betaP = z[sysm.n : sysm.n + len(P)]
    e2 = np.full(d, -np.inf)
    e2[P] = -betaP
    D = float(betaP.sum())
    other = np.array([stop_abs - lam * eta, (D - D_max) if D_max is not None else -np.inf])
    return np.concatenate([e1, e2, other])


def _first_event(sysm, info, P, z, D_max, stop_abs, k):
    """Whether event ``k``, solved at ``z``, is the first one on the step:
    no other event function has reached 0 there (else the loose search of
    :func:`_locate_event` is repeated to full accuracy)."""
    E = _event_functions(sysm, info, P, z, D_max, stop_abs)
    E[k] = -np.inf
    return not (E >= 0).any()


def _decode_event(k, d):
    if k < d:
        return EVENT_E1, k
    if k < 2 * d:
        return EVENT_E2, k - d
    return (EVENT_STOP, -1) if k == 2 * d else (EVENT_DMAX, -1)


#: Pivot ratio of an LU factorisation below which a KKT matrix is taken as
#: singular (the bordered tangent system and the QR of Jᵀ).
_SINGULAR_PIVOT = 1e-13


def _factor_nonsingular(A):
    """The LU factors of A, or ``None`` when A is singular to working
    precision: LAPACK's estimate of its reciprocal 1-norm condition number
    at most ``m ε`` (m = its order), where no solve keeps a digit."""
    from scipy.linalg import LinAlgWarning, lapack, lu_factor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinAlgWarning)  # detected from the condition estimate below
        lu = lu_factor(A, check_finite=False)
    rcond, info = lapack.dgecon(lu[0], np.linalg.norm(A, 1), norm="1")
    if info != 0 or not rcond > A.shape[0] * np.finfo(float).eps:
        return None
    return lu


def _event_equation(sysm, info, z, P, kind, idx, D_max):
    """The value of the event equation at ``z`` and its row of the Jacobian
    (the row only when ``info`` holds the Jacobian)."""
    n, p = sysm.n, len(P)
    if kind == EVENT_E1:
        return info["lam"] * (info["g"][idx] - info["g"][P[0]]), info["extra_row"]
    row = np.zeros(z.size)
    if kind == EVENT_E2:
        row[n + P.index(idx)] = 1.0
        return z[n + P.index(idx)], row
    row[n : n + p] = 1.0  # D_max
    return z[n : n + p].sum() - D_max, row


def _event_tol(sysm, kind, tol, z, P, D_max):
    """What the event equation is held to: at E1 (a difference of λg, like
    the rows of F) what F is; at E2 and D_max (equations in β) ``tol`` or
    their rounding floor, a few ulps of the weights."""
    if kind == EVENT_E1:
        return _tol(sysm, tol)
    beta = z[sysm.n : sysm.n + len(P)]
    scale = float(D_max) if kind == EVENT_DMAX else float(np.max(np.abs(beta), initial=0.0))
    return max(tol, 4.0 * len(P) * np.finfo(float).eps * scale)


def _newton_square(sysm, z, P, kind, idx, D_max, tol, max_iter=12):
    """Solve F(z) = 0 plus the event equation (paper eq. 9–10) by Newton's
    method, F to ``tol`` (or its rounding floor) and the event equation to
    :func:`_event_tol`.

    The Jacobian of the first iterate is kept while the residual falls at
    least fourfold per iteration (the event search hands over a point within
    ``LOCATE_RTOL`` of the event, where this chord iteration contracts about
    that much), and refreshed otherwise; the iterates in between need F and
    the event equation only (no Hessian contractions).  Returns the point,
    the residuals of F and of the event equation and the Hessian
    contractions of the last Jacobian, as ``(features, S)`` (features
    P + [idx] at E1, P otherwise), which the tangent after the event
    reuses."""
    from scipy.linalg import lu_solve

    z = z.copy()
    extra = idx if kind == EVENT_E1 else None
    lu, hess, res_prev = None, None, np.inf
    for _ in range(max_iter):
        if lu is None:
            info = sysm.full(z, P, extra=extra)
            hess = (list(P) + ([extra] if extra is not None else []), info["S"])
        else:
            info = sysm.light(z, P)
        val, row = _event_equation(sysm, info, z, P, kind, idx, D_max)
        res_F, res_e = _norm(info["F"]), abs(val)
        if res_F < _tol(sysm, tol) and res_e < _event_tol(sysm, kind, tol, z, P, D_max):
            break
        Fa = np.concatenate([info["F"], [val]])
        res = _norm(Fa)
        if lu is not None and res > 0.25 * res_prev:  # the chord stalls: a fresh Jacobian here
            info = sysm.full(z, P, extra=extra)
            hess = (hess[0], info["S"])
            val, row = _event_equation(sysm, info, z, P, kind, idx, D_max)
            lu = None
        if lu is None:
            lu = _factor_nonsingular(np.vstack([info["J"], row]))
            if lu is None:
                # a singular augmented system: the event is not transversal (e.g. a
                # duplicated column enters with the feature it duplicates), so no
                # Newton step, on any BLAS, can place it
                raise PathTrackingError("the KKT Jacobian with the event equation is singular (rank-deficient) "
                                        f"at the {EVENT_NAMES[kind]} event"
                                        f"{'' if idx < 0 else f' of feature {idx}'}; cannot continue the path")
        z = z + lu_solve(lu, -Fa, check_finite=False)
        res_prev = res
    if kind == EVENT_E2:
        z[sysm.n + P.index(idx)] = 0.0
    return z, res_F, res_e, hess


def _one_feature_C_start(sysm, i0, C):
    """C-version start on the one-feature branch at a small D0 (see module
    docstring).  Returns z and D0."""
    from scipy.optimize import brentq

    n = sysm.n
    P = [i0]

    def alpha_for(D, lam):
        beta = np.zeros(sysm.d)
        beta[i0] = D
        K = ard_kernel(sysm.X, beta, sysm.kernel, sysm.degree)
        HK = K - K.mean(axis=0, keepdims=True)
        a = np.linalg.solve(HK + lam * np.eye(n), sysm.y)
        return a, K

    def phi(loglam, D):
        a, K = alpha_for(D, math.exp(loglam))
        q = a @ K @ a
        return 50.0 if q <= 0 else math.log(q) - math.log(C)

    D = 1e-3 * n  # (x_a - x_b)² ~ 2/n for unit-norm columns: exponent ~ 2e-3
    for _ in range(40):
        lo, hi = -25.0, 10.0
        if phi(lo, D) < 0 or phi(hi, D) > 0:
            D *= 2.0 if phi(lo, D) < 0 else 0.5
            continue
        loglam = brentq(phi, lo, hi, args=(D,), xtol=1e-14)
        lam = math.exp(loglam)
        a, K = alpha_for(D, lam)
        beta = np.zeros(sysm.d)
        beta[i0] = D
        g = a @ ard_grad_columns(sysm.X, beta, a, K, sysm.kernel, sysm.degree)
        if np.argmax(g) == i0:
            return np.concatenate([a, [D], [lam]]), D
        D *= 0.5
    raise PathTrackingError("could not start the C-fixed path: another feature overtakes the first at every D0")


# --------------------------------------------------------------------------
# public API


def _standardize(X, y):
    xm = X.mean(axis=0)
    Xc = X - xm
    xs = np.linalg.norm(Xc, axis=0)
    xs = np.where(xs > 0, xs, 1.0)
    ym = float(y.mean())
    yc = y - ym
    ys = float(np.linalg.norm(yc))
    if ys == 0:
        ys = 1.0
    return Xc / xs, yc / ys, xm, xs, ym, ys


def l1kr_path(
    X,
    y,
    kernel: str = "rbf",
    *,
    degree: int = 2,
    fix: str = "lambda",
    lam: float = 1e-3,
    C: float = 1.0,
    gradient_tol: float = 1e-6,
    eps: float | None = None,
    D_max: float | None = None,
    max_steps: int = 3000,
    tol: float = 1e-10,
    integrator: str = "pc",
    tangent: str = "lu",
    h0: float | None = None,
    max_angle: float = 0.15,
    n_threads: int | None = None,
    feature_names=None,
    true_support=None,
    verbose: bool = False,
) -> FeaturePath:
    r"""Trace the L1KR feature-selection path from β = 0.

    .. math::

        \min_{\alpha, \beta \ge 0} \|y - K(\beta)\alpha - \alpha_0 1\|^2
        + \lambda(\alpha^\top K(\beta)\alpha - C)
        \quad\text{s.t.}\quad \|\beta\|_1 \le D

    with C fixed and λ its multiplier (``fix="C"``, the paper), or λ fixed
    (``fix="lambda"``).  See the module docstring for the algorithm.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Target values: the response, or the class labels of a classifier.
    kernel : {"rbf", "poly"}
        ARD Gaussian (``"rbf"``; ``"gaussian"``, the paper's name, is an
        alias) or normalised ARD polynomial kernel.
    degree : int
        Degree of the polynomial kernel.
    fix : {"lambda", "C"}
        Which of λ (ridge penalty) and C (RKHS-norm bound) is held fixed.
    lam : float
        The ridge penalty when ``fix="lambda"`` (for unit-norm centred y).
    C : float
        The bound on αᵀKα when ``fix="C"``, in units of ``||y - ȳ||²``.
    gradient_tol : float
        Stop when the projected gradient ``max_i |∂L/∂β_i| = λη`` falls below
        ``gradient_tol`` (the loss is that of the unit-norm centred y; the
        paper's ε = 1e-3 on Friedman #1's raw y is about 2e-7 on this scale).
    eps : float, optional
        Deprecated name of ``gradient_tol`` (``eps`` means other things
        elsewhere in numkfs); accepted with a ``FutureWarning`` until the
        next release.
    D_max : float, optional
        Stop when ``||β||₁`` reaches ``D_max`` (the path may turn back in D
        before that).
    max_steps : int
        Budget of accepted continuation steps.
    tol : float
        KKT residual (max-norm of the equations) required at every stored
        point, or their rounding floor where that is larger: ``√n ε`` times
        the magnitude of each equation's terms (``|K||α| + λ|α| + |y|`` for
        ``(HK + λI)α = y``), which grows like ``1/λ`` (about 1e-7 at
        λ = 1e-6 on 442 rows).
    integrator : {"pc", "RK45", "RK23", "DOP853", "LSODA"}
        Predictor–corrector continuation (default) or a
        ``scipy.integrate.solve_ivp`` method on the tangent ODE.
    tangent : {"lu", "qr"}
        How the null vector of the Jacobian and the Newton steps are
        computed: QR of Jᵀ (the paper) or one LU of the bordered Jacobian
        (same vector, cheaper).
    h0 : float, optional
        First arc-length step (finite and > 0); default ``1e-2 (1 + ||z0||)``.
    max_angle : float
        Largest angle (radians) between consecutive tangents in an accepted
        step; the step length is adapted towards a third of it.
    n_threads : int, optional
        Threads for Numba and BLAS inside the tracker.  Default: numkfs's
        thread policy (:mod:`numkfs._threads`), 1 when n < 1000: at n = 200
        the per-call work is too small for threads and on a loaded machine
        threaded BLAS made the QR 100x slower (benchmark).
    feature_names, true_support : optional
        Passed to the :class:`~numkfs.paths.FeaturePath`.
    verbose : bool
        Report each event (through :func:`numkfs._progress.report`: standard
        error and the ``numkfs`` logger by default).

    Returns
    -------
    FeaturePath
        ``grid`` is D = ||β||₁ (not monotone when the path turns back),
        ``weights`` the β (on the standardised columns), ``objective`` the
        training loss ``||y - Kα - α0||²`` of the unit-norm y (plus
        ``λαᵀKα`` when λ is fixed).  ``extra`` holds per point
        ``arc_length``, ``lambda``, ``C`` (= αᵀKα), ``max_gradient``
        (λη), ``n_active``, ``event`` (codes in ``EVENT_NAMES``),
        ``alpha`` (n_points, n), ``active`` (list of index arrays); scalars
        ``n_jacobian_evals``, ``time``, ``time_per_jacobian``, ``n_steps``,
        ``n_rejected``; the list ``events`` of (index, name, feature); and
        the standardisation (``X_train``, ``y_train``, ``x_mean``, ``x_scale``,
        ``y_mean``, ``y_scale``, ``kernel``, ``degree``, ``fix``).
        ``converged`` (also ``extra["converged"]``) is False at a point
        whose KKT residual could not be brought below ``tol`` and at the
        last point when the path stopped at a limit (``max_steps``, step
        underflow, singular Jacobian; ``extra["finished"]`` says which).
        β is exactly 0 for the features not on the active set (``tol`` 0);
        :func:`l1kr_prune` removes the ones the model does not need.

    Warns
    -----
    ConvergenceWarning
        The path stopped at ``max_steps``, the continuation step underflowed,
        or an event point could not be solved to ``tol`` (naming the point).
    PathDegeneracyWarning
        The KKT Jacobian became singular, or every feature left.

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs import l1kr_path
    >>> from numkfs.datasets import make_friedman_noise
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> path = l1kr_path(X, y, D_max=30.0)
    >>> path.extra["events"][0][1]
    'start'
    >>> bool(path.converged.all()), path.extra["finished"]
    (True, 'D_max')
    """
    args, limits = _path_arguments(X, y, kernel, degree, fix, lam, C, gradient_tol, eps, D_max, max_steps, tol,
                                   integrator, tangent, h0, max_angle, n_threads, feature_names, true_support, verbose)
    with limit_threads(*limits):
        return _l1kr_path(*args)


def _path_arguments(X, y, kernel, degree, fix, lam, C, gradient_tol, eps, D_max, max_steps, tol, integrator, tangent,
                    h0, max_angle, n_threads, feature_names, true_support, verbose):
    """:func:`l1kr_path`'s checks: the arguments of :func:`_l1kr_trace` and
    the thread limits to trace under."""
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    X, y = check_X_y(X, y, caller="l1kr_path")
    gradient_tol = _renamed_eps(gradient_tol, eps, "l1kr_path")
    n = X.shape[0]
    # K, the Jacobian's n x n block and its factorisation live at once
    check_memory(3 * 8.0 * n * n, f"The {n} x {n} kernel matrices of l1kr_path")
    validate_params(
        dict(kernel=kernel, degree=degree, fix=fix, lam=lam, C=C, gradient_tol=gradient_tol, D_max=D_max,
             max_steps=max_steps, tol=tol, integrator=integrator, max_angle=max_angle, tangent=tangent,
             n_threads=n_threads, h0=h0),
        {
            "kernel": [Options(L1KR_KERNELS)],
            "degree": [Interval(Integral, 1, None)],
            "fix": [Options(["lambda", "C"])],
            "lam": [FINITE_POSITIVE],
            "C": [FINITE_POSITIVE],
            "gradient_tol": [Interval(Real, 0, 1, closed="neither")],
            "D_max": [Interval(Real, 0, None, closed="neither"), NoneOr],
            "max_steps": [Interval(Integral, 1, None)],
            "tol": [FINITE_POSITIVE],
            "h0": [FINITE_POSITIVE, NoneOr],
            "integrator": [Options(["pc", "RK45", "RK23", "DOP853", "LSODA"])],
            "max_angle": [Interval(Real, 0, 1.5, closed="neither")],
            "tangent": [Options(["lu", "qr"])],
            "n_threads": [Interval(Integral, 1, None), NoneOr],
        },
        "l1kr_path",
    )
    kernel = canonical_kernel(kernel)
    limits = thread_limits("l1kr", n) if n_threads is None else (n_threads, n_threads)
    return (X, y, kernel, degree, fix, lam, C, gradient_tol, D_max, max_steps, tol, integrator, tangent, h0, max_angle,
            feature_names, true_support, verbose), limits


def _l1kr_path(*args):
    """The path of :func:`l1kr_path` after its checks (the first path
    :func:`_l1kr_trace` yields)."""
    return next(_l1kr_trace(*args))


def _l1kr_trace(X, y, kernel, degree, fix, lam, C, gradient_tol, D_max, max_steps, tol, integrator, tangent, h0,
                max_angle, feature_names, true_support, verbose):
    """The tracker as a generator: it yields the path traced so far (a
    :class:`~numkfs.paths.FeaturePath`) when it stops.  Where it stopped at
    ``D_max``, ``send(D)`` with a larger D resumes it from that point (the
    point stays on the path, as an ordinary one) and yields again at the next
    stop; any other stop is final.  :func:`l1kr_cv_path` traces its paths
    in stages this way (:class:`_StagedPath`)."""
    t_start = time.perf_counter()
    Xs, ys, xm, xsc, ym, ysc = _standardize(X, y)
    sysm = _System(Xs, ys, kernel, int(degree), fix, float(lam), float(C))
    sysm.tol = float(tol) * 1e-2  # the event polish's
    n, d = Xs.shape
    rec = _Recorder(sysm)

    # ---- start: Lemma 1 -------------------------------------------------
    if fix == "lambda":
        alpha0 = ys / lam
    else:
        alpha0 = ys.copy()  # the limit direction of α as β -> 0
    beta0 = np.zeros(d)
    K0 = np.ones((n, n))
    g0 = alpha0 @ ard_grad_columns(Xs, beta0, alpha0, K0, kernel, degree)
    i0 = int(np.argmax(g0))
    P = [i0]
    scalars = dict(X_train=Xs, y_train=ys, x_mean=xm, x_scale=xsc, y_mean=ym, y_scale=ysc, kernel=kernel,
                   degree=int(degree), fix=fix, lam_fixed=float(lam), C_fixed=float(C), integrator=integrator)
    if g0[i0] <= 0 or (fix == "lambda" and lam * g0[i0] < gradient_tol):
        # β = 0 is already stationary (e.g. constant y): a one-point path
        z = np.concatenate([alpha0 * lam if fix == "lambda" else np.zeros(n), [0.0]])
        sysm.c = lam if fix == "lambda" else 1.0
        if fix == "C":
            z = np.concatenate([z, [1.0]])
        rec.add(z, P, sysm.full(z, P), 0.0, EVENT_STOP, -1)
        rec.rows[0]["active"] = np.zeros(0, dtype=int)
        scalars.update(n_jacobian_evals=sysm.n_jac, time=time.perf_counter() - t_start, time_per_jacobian=0.0,
                       n_steps=0, n_rejected=0, finished="beta = 0 is stationary")
        yield rec.to_path(method="L1KR", feature_names=feature_names, true_support=true_support, scalars=scalars)
        return
    if fix == "lambda":
        sysm.c = lam
        z = np.concatenate([lam * alpha0, [0.0]])
    else:
        z, _ = _one_feature_C_start(sysm, i0, C)
        sysm.c = z[-1]
        z[:n] *= sysm.c
    info = sysm.full(z, P)
    if _norm(info["F"]) > _tol(sysm, tol):
        raise PathTrackingError(f"start point does not satisfy the KKT system (residual {_norm(info['F']):.2e} > "
                                f"tol={tol:.1e} and > its rounding floor {sysm.floor:.1e})")
    e = np.zeros(z.size)
    e[n] = 1.0
    stop_abs = gradient_tol
    rec.add(z, P, info, 0.0, EVENT_START, i0)
    finished = None
    n_steps = 0
    trk = None

    def snapshot(finished):
        return rec.to_path(
            method="L1KR", feature_names=feature_names, true_support=true_support,
            scalars=dict(
                scalars, n_jacobian_evals=sysm.n_jac, time=time.perf_counter() - t_start,
                time_per_jacobian=sysm.t_jac / max(sysm.n_jac, 1), n_steps=n_steps,
                n_rejected=0 if trk is None else trk.n_rejected,
                finished=finished,
            ),
        )

    try:
        v, qr = _tangent_and_corrector(info["J"], e, tangent)
        tracker = _PCTracker if integrator == "pc" else _ODETracker
        trk = tracker(sysm, tol=tol, max_angle=max_angle, method=integrator, tangent=tangent)
        s = 0.0
        h = h0 if h0 is not None else 1e-2 * (1.0 + np.linalg.norm(z))
        while n_steps < max_steps:
            step = trk.step(z, P, v, qr, h, info)
            if step is None:
                # the tracker's limit: no step down to the smallest step length
                # kept the corrector within tol
                _warn_tracker_stopped(
                    f"the continuation step fell below its minimum ({1e-12 * (1.0 + np.linalg.norm(z)):.1e}) "
                    f"at {_where(rec)}", "loosen tol or raise max_angle")
                rec.rows[-1]["converged"] = False
                finished = "step size underflow"
                break
            z_new, info_new, v_new, qr_new, h_used, h_next = step
            n_steps += 1
            E_old = _event_functions(sysm, info, P, z, D_max, stop_abs)
            E_new = _event_functions(sysm, info_new, P, z_new, D_max, stop_abs)
            crossed = (E_old < 0) & (E_new >= 0)
            if not crossed.any():
                s += trk.arc(z, z_new, h_used)
                z, info, v, qr, h = z_new, info_new, v_new, qr_new, h_next
                trk.accepted(v)
                rec.add(z, P, info, s, EVENT_NONE, -1)
                continue
            # ---- event: interpolating line search on [0, h_used] ----------
            for loose in (True, False):
                z_e, info_e, s_e, k = _locate_event(trk, sysm, z, P, v, qr, h_used, E_old, E_new, z_new, info_new,
                                                    D_max, stop_abs, loose=loose)
                kind, idx = _decode_event(k, d)
                if kind == EVENT_STOP:
                    break
                z_e, res_F, res_e, hess = _newton_square(sysm, z_e, P, kind, idx, D_max, tol * 1e-2,
                                                         max_iter=POLISH_MAX_ITER)
                # the floor of the last polish evaluation
                polished = res_F <= _tol(sysm, tol) and res_e <= _event_tol(sysm, kind, tol, z_e, P, D_max)
                res = max(res_F, res_e)
                info_e = sysm.light(z_e, P)
                if not loose or _first_event(sysm, info_e, P, z_e, D_max, stop_abs, k):
                    break
            s += s_e
            if kind == EVENT_STOP:
                rec.add(z_e, P, info_e, s, EVENT_STOP, -1)
                finished = "stationary point"
                break
            if kind == EVENT_DMAX:
                rec.add(z_e, P, info_e, s, EVENT_DMAX, -1, converged=polished)
            else:
                rec.add(z_e, P, info_e, s, kind, idx, converged=polished)
            if not polished:
                warn_not_converged(
                    "L1KR", max_iter=POLISH_MAX_ITER, what="Newton iterations", limit="the event polish limit",
                    where=f"the {EVENT_NAMES[kind]} event{'' if idx < 0 else f' of feature {idx}'} ({_where(rec)}; "
                          f"KKT residual {res:.1e} > tol={tol:.1e})",
                    hint="the event point is kept and marked converged=False; loosen tol")
            if kind == EVENT_DMAX:
                more = yield snapshot("D_max")
                if more is None or not more > D_max or not polished:
                    finished = "D_max"
                    break
                # resumed (staged tracing): the D_max point becomes an ordinary
                # point, the tangent there is oriented by the one before it
                D_max = float(more)
                rec.rows[-1]["event"], rec.rows[-1]["feature"] = EVENT_NONE, -1
                z, info = z_e, sysm.full(z_e, P, hess=hess)
                v, qr = _tangent_and_corrector(info["J"], v, tangent)
                trk.reset()
                h = max(h_used, 1e-6 * (1.0 + np.linalg.norm(z)))
                continue
            if verbose:
                report("l1kr", f"s={s:.4g} D={z_e[n:n + len(P)].sum():.4g} {EVENT_NAMES[kind]} feature {idx}")
            # ---- update the active set and orient the new tangent -----------
            if kind == EVENT_E1:
                p = len(P)
                z = np.concatenate([z_e[: n + p], [0.0], z_e[n + p :]])
                P = P + [idx]
                info = sysm.full(z, P, hess=hess)
                e = np.zeros(z.size)
                e[n + p] = 1.0
                v, qr = _tangent_and_corrector(info["J"], e, tangent)
            else:
                k_i = P.index(idx)
                if len(P) == 1:
                    warnings.warn("l1kr_path: the last active feature left; the path returned to beta = 0.",
                                  PathDegeneracyWarning, stacklevel=2)
                    finished = "back to beta = 0"
                    break
                z = np.delete(z_e, n + k_i)
                P = [q for q in P if q != idx]
                info = sysm.full(z, P, hess=hess)
                v, qr = _tangent_and_corrector(info["J"], np.delete(v, n + k_i), tangent)
                v = _probe_e2(trk, sysm, z, P, v, qr, idx, max(h_used * 0.1, 1e-8 * (1 + np.linalg.norm(z))))
            trk.reset()
            h = max(h_used * 0.5, 1e-6 * (1.0 + np.linalg.norm(z)))
        else:
            finished = "max_steps"
            rec.rows[-1]["converged"] = False
            warn_not_converged("L1KR", max_iter=max_steps, what="continuation steps", where=_where(rec), limit="max_steps",
                               hint="increase max_steps or set D_max (the path ends there, short of a "
                                    "stationary point)")
    except PathTrackingError as exc:
        # e.g. duplicated columns (two features with identical gradients) or
        # n = 2: the KKT Jacobian loses rank; keep what was traced so far
        warnings.warn(f"l1kr_path: {exc}; the path stops at the last point reached (duplicated or "
                      "degenerate features?).", PathDegeneracyWarning, stacklevel=2)
        finished = "singular Jacobian"
        rec.rows[-1]["converged"] = False
    if finished != "D_max":  # a D_max stop was yielded already
        yield snapshot(finished)


def _where(rec):
    """The last stored path point, for warnings."""
    return f"path point {len(rec.rows) - 1} (D={rec.rows[-1]['D']:.4g})"


def _warn_tracker_stopped(what, hint):
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(f"L1KR did not converge: {what}; the path stops there (the last point is marked "
                  f"converged=False); {hint}.", ConvergenceWarning, stacklevel=4)


#: Relative accuracy to which :func:`_locate_event` brackets an event
#: before the polish solves it exactly (paper eq. 9-10): the event function
#: at the probe is within this fraction of its change over the step, and no
#: other event function changes sign in the bracket.  The polish is Newton's
#: method on the square system, quadratic from there.
LOCATE_RTOL = 1e-3


def _locate_event(trk, sysm, z, P, v, qr, h, E_lo, E_hi, z_hi, info_hi, D_max, stop_abs, max_iter=60, loose=True):
    """The paper's interpolating line search for the first event in (0, h]:
    regula falsi on every crossed event function, the nearest estimate
    probed (predicted on the chord between the bracket ends, corrected; the
    probes evaluate the event functions only, no Jacobian), bisection every
    third probe against stalling.

    With ``loose`` the search ends at the first probe where one event
    function alone changes sign in the bracket and its value is within
    ``LOCATE_RTOL`` of its change over the step (the polish that follows
    solves the event exactly); otherwise it narrows the bracket to 1e-9 of
    the step.  Returns the probe (point, its light evaluation, arc length
    from ``z``) and the index of the event function."""
    lo, hi = 0.0, h
    Elo, Ehi = E_lo, E_hi
    z_lo = z
    spread = np.where(np.isfinite(E_lo), E_hi - np.where(np.isfinite(E_lo), E_lo, 0.0), 0.0)  # -inf: never crosses
    bend = z_hi - z - h * v  # the quadratic through z (tangent v) and the step's end

    def curve(s):
        return z + s * v + (s / h) ** 2 * bend

    stop_k = 2 * sysm.d  # the stationary event: its point must be the far side's
    last_side = 0
    for it in range(max_iter):
        idx = np.flatnonzero((Elo < 0) & (Ehi >= 0))
        q = lo + (hi - lo) * (-Elo[idx]) / (Ehi[idx] - Elo[idx])
        s = float(q.min())
        if last_side != 0 and it % 3 == 2:  # regula falsi stalls: bisect
            s = 0.5 * (lo + hi)
        s = min(max(s, lo + 1e-3 * (hi - lo)), hi - 1e-3 * (hi - lo))
        t = (s - lo) / (hi - lo)
        # predicted on that quadratic, shifted to pass through the corrected bracket ends
        zp = curve(s) + (1.0 - t) * (z_lo - curve(lo)) + t * (z_hi - curve(hi))
        zs, info_s = trk.correct_from(zp, P, qr)
        if zs is None:
            break
        Es = _event_functions(sysm, info_s, P, zs, D_max, stop_abs)
        if ((Elo < 0) & (Es >= 0)).any():
            hi, Ehi, z_hi, info_hi = s, Es, zs, info_s
            last_side = 1
        else:
            lo, Elo, z_lo = s, Es, zs
            last_side = -1
        idx = np.flatnonzero((Elo < 0) & (Ehi >= 0))
        if loose and idx.size == 1 and abs(Es[idx[0]]) <= LOCATE_RTOL * spread[idx[0]] and (
                last_side == 1 or idx[0] != stop_k):
            return zs, info_s, trk.arc(z, zs, s), int(idx[0])
        if hi - lo < 1e-9 * h or np.min(Ehi[idx]) < 1e-12:
            break
    idx = np.flatnonzero((Elo < 0) & (Ehi >= 0))
    # the first event: smallest interpolated crossing
    q = lo + (hi - lo) * (-Elo[idx]) / np.maximum(Ehi[idx] - Elo[idx], 1e-300)
    k = int(idx[np.argmin(q)])
    return z_hi, info_hi, trk.arc(z, z_hi, hi), k


def _probe_e2(trk, sysm, z, P, v, qr, i_left, h_probe):
    """E2: keep the direction of the new curve in which the leaving feature
    has g_i < η (Lemma 2)."""
    vals = []
    for sign in (1.0, -1.0):
        zs, info_s = trk.correct_at(z, P, sign * v, qr, h_probe)
        if zs is None:
            vals.append(np.inf)
            continue
        g, lam = info_s["g"], info_s["lam"]
        vals.append(lam * (g[i_left] - g[P].mean()))
    return v if vals[0] <= vals[1] else -v


class _Recorder:
    def __init__(self, sysm):
        self.sysm = sysm
        self.rows = []

    def add(self, z, P, info, s, event, feature, converged=True):
        sysm = self.sysm
        alpha, beta, lam = sysm.split(z, P)
        Ka = info["Ka"]
        resid = sysm.y - Ka + Ka.mean()
        loss = float(resid @ resid)
        quad = float(alpha @ Ka)
        obj = loss + (lam * quad if sysm.fix == "lambda" else 0.0)
        eta = float(info["g"][P].mean())
        self.rows.append(dict(D=float(beta.sum()), beta=beta, alpha=alpha.copy(), lam=float(lam), C=quad,
                              obj=obj, grad=float(lam * max(eta, 0.0)), s=float(s), event=int(event),
                              feature=int(feature), active=np.array(P, dtype=int), converged=bool(converged)))

    def to_path(self, method, feature_names, true_support, scalars):
        r = self.rows
        bad = [i for i, q in enumerate(r) if not (np.all(np.isfinite(q["beta"])) and np.isfinite(q["D"]))]
        if bad:  # never return non-finite weights: the path ends before the first such point
            i = max(bad[0], 1)
            warnings.warn(f"l1kr_path: non-finite weights at path point {bad[0]}; the path ends at point {i - 1} "
                          "(D={:.4g}) and that point is marked converged=False.".format(r[i - 1]["D"]),
                          NumericalWarning, stacklevel=3)
            r = self.rows = r[:i]
            r[-1]["converged"] = False
        extra = dict(
            arc_length=np.array([q["s"] for q in r]),
            **{"lambda": np.array([q["lam"] for q in r])},
            C=np.array([q["C"] for q in r]),
            max_gradient=np.array([q["grad"] for q in r]),
            n_active=np.array([len(q["active"]) for q in r]),
            event=np.array([q["event"] for q in r]),
            alpha=np.array([q["alpha"] for q in r]),
            active=[q["active"] for q in r],
            events=[(i, EVENT_NAMES[q["event"]], q["feature"]) for i, q in enumerate(r) if q["event"] != 0],
            converged=np.array([q["converged"] for q in r], dtype=bool),
        )
        extra.update(scalars)
        path = FeaturePath(
            grid=np.array([q["D"] for q in r]), weights=np.array([q["beta"] for q in r]), grid_name="D",
            feature_names=feature_names, objective=np.array([q["obj"] for q in r]), method=method,
            extra=extra, tol=0.0, true_support=true_support,
        )
        _set_contract_fields(path, converged=extra["converged"])
        return path


# --------------------------------------------------------------------------
# trackers


class _PCTracker:
    """Predictor (Euler / Adams–Bashforth 2 along the tangent) + Moore–Penrose
    Newton corrector with the chord QR; step control from the Newton
    contraction, the corrector distance and the tangent angle."""

    #: contraction of the chord corrector the step length aims at (an
    #: efficiency choice, not an accuracy one: every point is corrected to
    #: tol; with Broyden's updates 0.5 measured fewer evaluations than 0.25)
    kappa_target = 0.5
    angle_target = 1.0 / 3.0  # of max_angle
    max_newton = 8

    def __init__(self, sysm, tol, max_angle, method="pc", tangent="lu"):
        self.sysm, self.tol, self.max_angle, self.tangent = sysm, tol, max_angle, tangent
        self.n_rejected = 0
        self.v_prev = None
        self.h_prev = None

    def reset(self):
        self.v_prev = None

    def accepted(self, v):
        pass

    def arc(self, z0, z1, h):
        return h

    def _correct(self, zp, P, qr):
        """Newton corrections of the predicted point ``zp`` with the chord
        factorisation ``qr``, improved from step to step by Broyden's
        ("good") rank-one updates of its inverse (Kelley, *Iterative Methods
        for Linear and Nonlinear Equations*, SIAM 1995, alg. brsol: only the
        steps are stored): the chord method contracts linearly, at the rate
        the Jacobian changed over the step; the updates make it superlinear.
        Every step is a combination of chord steps, so it stays on the
        corrector's hyperplane.  Returns the corrected point (None when the
        corrections diverge or do not reach ``tol`` within ``max_newton``),
        the first correction's length and the largest contraction of the
        chord steps (``||J⁺F_{k+1}|| / ||δ_k||``), which the step control
        reads."""
        sysm = self.sysm
        kappa = 0.0
        F = _trial_residual(sysm, zp, P)
        if F is None:
            return None, None, kappa
        if _norm(F) < _tol(sysm, self.tol):
            return zp, 0.0, kappa
        step = _mp_step(qr, F)
        d1 = float(np.linalg.norm(step))
        steps, sq = [], []
        for it in range(self.max_newton):
            zp = zp + step
            if not np.all(np.isfinite(zp)):
                return None, d1, kappa
            steps.append(step)
            sq.append(float(step @ step))
            F = _trial_residual(sysm, zp, P)
            if F is None:
                return None, d1, kappa
            if _norm(F) < _tol(sysm, self.tol):
                return zp, d1, kappa
            w = _mp_step(qr, F)
            if sq[-1] > 0:
                ratio = math.sqrt(float(w @ w) / sq[-1])
                kappa = max(kappa, ratio)
                if ratio > 0.7:
                    return None, d1, kappa
            for j in range(len(steps) - 1):
                if sq[j] > 0:
                    w = w + steps[j + 1] * (float(steps[j] @ w) / sq[j])
            denom = 1.0 - float(steps[-1] @ w) / sq[-1] if sq[-1] > 0 else 1.0
            step = w / denom if denom > 0.1 else w
        return None, d1, kappa

    def correct_at(self, z, P, v, qr, s):
        """Point at arc-length offset s along the tangent, corrected, with
        its event quantities (no Jacobian)."""
        return self.correct_from(z + s * v, P, qr)

    def correct_from(self, zp, P, qr):
        """Correct a predicted point with the chord factorisation; the
        corrected point and its event quantities (:meth:`_System.light`)."""
        zc, _, _ = self._correct(zp, P, qr)
        if zc is None:
            return None, None
        return zc, self.sysm.light(zc, P)

    def step(self, z, P, v, qr, h, info):
        hmin = 1e-12 * (1.0 + np.linalg.norm(z))
        while h > hmin:
            zp = z + h * v
            if self.v_prev is not None and self.h_prev:
                zp = zp + (0.5 * h * h / self.h_prev) * (v - self.v_prev)
            zc, d1, kappa = self._correct(zp, P, qr)
            if zc is None:
                self.n_rejected += 1
                h *= 0.35
                continue
            info_new = self.sysm.full(zc, P)
            try:
                v_new, qr_new = _tangent_and_corrector(info_new["J"], v, self.tangent)
            except PathTrackingError:
                self.n_rejected += 1
                h *= 0.35
                continue
            c = float(v_new @ v)
            angle = math.acos(min(1.0, c))
            if angle > self.max_angle:
                self.n_rejected += 1
                h *= 0.5
                continue
            f = 2.0
            if kappa > 0:
                f = min(f, math.sqrt(self.kappa_target / kappa))
            target = self.max_angle * self.angle_target
            if angle > 0:
                f = min(f, target / angle)
            f = max(f, 0.3)
            self.v_prev, self.h_prev = v, h
            return zc, info_new, v_new, qr_new, h, h * f
        return None


class _ODETracker(_PCTracker):
    """One adaptive step of a ``scipy.integrate`` solver (RK45, RK23, DOP853,
    LSODA) on ``dz/ds = v(z)`` at a time, so that events and the tangent
    orientation are handled as in the PC tracker; a Newton correction
    follows whenever the KKT residual exceeds ``tol``.  The solver is
    restarted from every corrected point (its step size carried over, at
    most doubled); a step whose correction fails is retried with a quarter
    of the step."""

    def __init__(self, sysm, tol, max_angle, method="RK45", tangent="lu"):
        super().__init__(sysm, tol, max_angle, tangent=tangent)
        self.method = method
        self.v_ref = None

    def _rhs(self, P):
        def f(s, z):
            info = self.sysm.full(z, P)
            v, _ = _tangent_and_corrector(info["J"], self.v_ref, self.tangent)
            return v

        return f

    def step(self, z, P, v, qr, h, info):
        import scipy.integrate as si

        cls = {"RK45": si.RK45, "RK23": si.RK23, "DOP853": si.DOP853, "LSODA": si.LSODA}[self.method]
        self.v_ref = v
        hmin = 1e-12 * (1.0 + np.linalg.norm(z))
        while h > hmin:
            sol = cls(self._rhs(P), 0.0, z, t_bound=np.inf, rtol=1e-6, atol=1e-8, first_step=h, max_step=4.0 * h)
            try:
                msg = sol.step()
            except PathTrackingError:
                msg = "singular"
            if sol.status == "failed" or msg is not None:
                self.n_rejected += 1
                h *= 0.25
                continue
            zp = sol.y.copy()
            hs = float(sol.t)
            F = _trial_residual(self.sysm, zp, P)
            if F is None:
                self.n_rejected += 1
                h *= 0.25
                continue
            if _norm(F) > _tol(self.sysm, self.tol):
                zc, _, _ = self._correct(zp, P, qr)
                if zc is None:
                    self.n_rejected += 1
                    h *= 0.25
                    continue
                zp = zc
            info_new = self.sysm.full(zp, P)
            v_new, qr_new = _tangent_and_corrector(info_new["J"], v, self.tangent)
            h_next = getattr(sol, "h_abs", None) or 2.0 * hs  # the solver's proposal for the next step
            return zp, info_new, v_new, qr_new, hs, min(h_next, 4.0 * hs)
        return None


# --------------------------------------------------------------------------
# evaluation along a path


def l1kr_kkt_residual(path: FeaturePath, i: int) -> float:
    """KKT residual of stored point ``i``: max-norm of the equations on its
    active set, of the violations ``λ(g_j - η)_+`` (inactive j) and of
    ``(-β)_+``.  Recomputed from scratch from the stored (α, β, λ)."""
    ex = path.extra
    Xs, ys = ex["X_train"], ex["y_train"]
    sysm = _System(Xs, ys, ex["kernel"], ex["degree"], ex["fix"], ex["lam_fixed"], ex["C_fixed"])
    P = [int(q) for q in ex["active"][i]]
    beta = path.weights[i]
    alpha = ex["alpha"][i]
    lam = ex["lambda"][i]
    z = np.concatenate([alpha, beta[P], [lam] if ex["fix"] == "C" else []])
    info = sysm.full(z, P)
    g = info["g"]
    eta = g[P].mean()
    inact = np.setdiff1d(np.arange(sysm.d), P)
    viol = lam * (g[inact] - eta) if inact.size else np.zeros(0)
    parts = [np.abs(info["F"]), np.maximum(viol, 0.0), np.maximum(-beta, 0.0)]
    return float(max(np.max(p) if p.size else 0.0 for p in parts))


def l1kr_objective(path: FeaturePath, beta, lam) -> tuple:
    """(loss, αᵀKα, α) of the stationary α for β and λ on the standardised
    training data: ``α = (HK(β) + λI)⁻¹ y``."""
    ex = path.extra
    Xs, ys = ex["X_train"], ex["y_train"]
    K = ard_kernel(Xs, beta, ex["kernel"], ex["degree"])
    n = K.shape[0]
    alpha = np.linalg.solve(K - K.mean(axis=0, keepdims=True) + lam * np.eye(n), ys)
    Ka = K @ alpha
    r = ys - Ka + Ka.mean()
    return float(r @ r), float(alpha @ Ka), alpha


def _ridge_objective(path, beta, lam):
    """``min_α ||y - Kα - α0||² + λ αᵀKα = λ yᵀα`` with ``(HKH + λI) α = y``
    (y centred, so α is centred and ``(HK + λI) α = y`` is this symmetric
    positive definite system: one Cholesky)."""
    from scipy.linalg import LinAlgError, lapack

    ex = path.extra
    ys = ex["y_train"]
    K = ard_kernel(ex["X_train"], beta, ex["kernel"], ex["degree"])  # a fresh array: centred in place
    m = K.mean(axis=0)
    K -= m[None, :]
    K -= (m - m.mean())[:, None]
    K.flat[:: K.shape[0] + 1] += lam
    _, alpha, info = lapack.dposv(K, ys, overwrite_a=1)
    if info != 0:
        raise LinAlgError(f"the centred kernel ridge system is not positive definite (LAPACK dposv info={info})")
    return float(lam * (ys @ alpha))


def l1kr_prune(path: FeaturePath, beta, lam, prune_tol: float = PRUNE_TOL) -> tuple:
    r"""Drop the features a point's model does not need.

    At a point (β, λ) of an L1KR path the ridge objective
    ``R(β) = min_α ||y - Kα - α0||² + λ αᵀKα`` (centred, unit-norm y, so
    ``R`` is a fraction of ``Σ (y - ȳ)²``) is recomputed with features
    removed (β_j = 0, α refitted).  Features are removed in increasing order
    of their single-feature cost ``R(β_{-j}) - R(β)`` as long as the joint
    increase stays below ``prune_tol``.

    Why: the path keeps every feature that lowers the training objective at
    all.  On noise-free data (Friedman #1) the irrelevant features enter
    with weights only 2-20 times below those of relevant linear ones, so no
    tolerance on β separates them, while removing all five of them costs
    ~1e-4 of the variance of y and removing any relevant one 5e-2 or more.

    Parameters
    ----------
    path : FeaturePath
        An L1KR path (its ``extra`` holds the standardised training data).
    beta : ndarray of shape (n_features,)
        β at the point (e.g. from :func:`l1kr_path_at`).
    lam : float
        λ at the point.
    prune_tol : float, default=1e-3
        Largest joint increase of the objective, as a fraction of
        ``Σ (y - ȳ)²``; 0 keeps every feature with β > 0.

    Returns
    -------
    beta : ndarray of shape (n_features,)
        β with the removed features set to 0.
    increase : float
        ``R(pruned) - R(β)``, below ``prune_tol``.

    Examples
    --------
    >>> from numkfs import l1kr_path
    >>> from numkfs.datasets import make_friedman_noise
    >>> from numkfs.methods.l1kr import l1kr_path_at, l1kr_prune
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> path = l1kr_path(X, y, lam=0.01, D_max=20.0)
    >>> beta, lam = l1kr_path_at(path, [20.0])
    >>> pruned, increase = l1kr_prune(path, beta[0], lam[0])
    >>> bool(increase < 1e-3 and (pruned > 0).sum() <= (beta[0] > 0).sum())
    True
    """
    beta = np.asarray(beta, dtype=float)
    active = np.flatnonzero(beta > 0)
    if prune_tol <= 0 or active.size == 0:
        return beta.copy(), 0.0
    base = _ridge_objective(path, beta, lam)

    def without(b, j):
        b = b.copy()
        b[j] = 0.0
        return b

    cost = np.array([_ridge_objective(path, without(beta, j), lam) - base for j in active])
    out, increase = beta.copy(), 0.0
    order = np.argsort(cost, kind="stable")
    for k, j in enumerate(active[order]):
        trial = without(out, j)
        inc = float(cost[order[0]]) if k == 0 else _ridge_objective(path, trial, lam) - base  # first: its own cost
        if inc >= prune_tol:
            break
        out, increase = trial, max(inc, 0.0)
    return out, float(increase)


def l1kr_path_at(path: FeaturePath, D) -> tuple:
    """β and λ at budgets ``D`` (array), interpolated linearly along the path.

    Where the path crosses a value of D several times (it turned back), the
    crossing with the lowest interpolated training objective is used (the
    best of the stationary points the path found for that D).  Beyond the
    last point the last point is used (the stationary point, when the path
    ended there).

    Returns
    -------
    beta : ndarray (len(D), n_features); lam : ndarray (len(D),)
    """
    betas, lams, _ = _path_at(path, D)
    return betas, lams


def _path_at(path, D):
    """:func:`l1kr_path_at` and, per D, the stored points it used (i, j)."""
    D = np.atleast_1d(np.asarray(D, dtype=float))
    G, W, O = path.grid, path.weights, path.objective
    L = path.extra["lambda"]
    betas = np.empty((D.size, W.shape[1]))
    lams = np.empty(D.size)
    used = np.empty((D.size, 2), dtype=int)
    lo_seg, hi_seg = np.minimum(G[:-1], G[1:]), np.maximum(G[:-1], G[1:])
    for k, Dk in enumerate(D):
        segs = np.flatnonzero((lo_seg <= Dk) & (Dk <= hi_seg))
        if segs.size == 0:
            j = int(np.argmin(np.abs(G - Dk))) if Dk < G.max() else len(G) - 1
            betas[k], lams[k] = W[j], L[j]
            used[k] = j
            continue
        best = None
        for sgi in segs:
            dg = G[sgi + 1] - G[sgi]
            t = 0.0 if dg == 0 else (Dk - G[sgi]) / dg
            o = (1 - t) * O[sgi] + t * O[sgi + 1]
            if best is None or o < best[0]:
                best = (o, sgi, t)
        _, sgi, t = best
        betas[k] = (1 - t) * W[sgi] + t * W[sgi + 1]
        lams[k] = (1 - t) * L[sgi] + t * L[sgi + 1]
        used[k] = (sgi, sgi + 1)
    return betas, lams, used


def l1kr_predict(path: FeaturePath, X_new, D=None, index=None) -> np.ndarray:
    """Predictions (original units of y) at stored point ``index`` or at
    budgets ``D`` (interpolated with :func:`l1kr_path_at`, α recomputed).

    Returns
    -------
    ndarray of shape (n_D, n_new) (or (n_new,) for one index)
    """
    ex = path.extra
    Z = (np.asarray(X_new, dtype=float) - ex["x_mean"]) / ex["x_scale"]
    if index is not None:
        beta = path.weights[index]
        _, _, alpha = l1kr_objective(path, beta, ex["lambda"][index])
        return _predict_one(path, Z, beta, alpha)
    betas, lams = l1kr_path_at(path, D)
    out = np.empty((betas.shape[0], Z.shape[0]))
    for k in range(betas.shape[0]):
        _, _, alpha = l1kr_objective(path, betas[k], lams[k])
        out[k] = _predict_one(path, Z, betas[k], alpha)
    return out


def _predict_one(path, Z, beta, alpha):
    ex = path.extra
    Xs = ex["X_train"]
    K = ard_kernel(Xs, beta, ex["kernel"], ex["degree"])
    a0 = -float((K @ alpha).mean())  # mean of y_s is 0
    Kz = ard_kernel(Xs, beta, ex["kernel"], ex["degree"], Z=Z)
    return ex["y_mean"] + ex["y_scale"] * (Kz @ alpha + a0)


def _grid_models(path, D, prune_tol):
    """Per budget D: β read on ``path`` (:func:`l1kr_path_at`), pruned
    (:func:`l1kr_prune`), λ and the stored points used."""
    betas, lams, used = _path_at(path, D)
    if prune_tol > 0:
        # small dense solves: the thread policy of the path itself (threaded
        # BLAS on n ~ 100 measured 5x slower on a loaded machine)
        with limit_threads(*thread_limits("l1kr", path.extra["X_train"].shape[0])):
            for k in range(betas.shape[0]):
                betas[k] = l1kr_prune(path, betas[k], lams[k], prune_tol)[0]
    return betas, lams, used


def _predict_betas(path, X_new, betas, lams):
    """Predictions (units of y) of the models (β_k, λ_k), α refitted."""
    ex = path.extra
    Z = (np.asarray(X_new, dtype=float) - ex["x_mean"]) / ex["x_scale"]
    out = np.empty((betas.shape[0], Z.shape[0]))
    for k in range(betas.shape[0]):
        _, _, alpha = l1kr_objective(path, betas[k], lams[k])
        out[k] = _predict_one(path, Z, betas[k], alpha)
    return out


#: KKT tolerance and largest tangent angle of the paths :func:`l1kr_cv_path`
#: traces unless given (``l1kr_path``'s defaults are 1e-10 and 0.15).  The CV
#: reads each path at its grid points by linear interpolation between
#: stored points, whose error (the chord against the arc, about
#: ``h θ / 8`` for a step h turning by θ) is 1e-4 to 1e-3 of β on the 200 x 50
#: problem of ``benchmarks/busy.py`` at either setting; a KKT residual of 1e-8
#: moves β by about 1e-7 of itself there, far below it and below what the
#: fold scores resolve.  ``tests/test_l1kr.py`` checks the CV's paths against
#: a tight trace at the grid points.  1.5-1.9x fewer evaluations.
CV_TOL, CV_MAX_ANGLE = 1e-8, 0.3

#: Budget D of the first stage of :func:`l1kr_cv_path`'s tracing, per row
#: of the data (β of the same kernel grows like n, see ``D_scaling``).
FIRST_STAGE_D = 1e-4

#: Growth of the budget from one stage of :func:`l1kr_cv_path`'s tracing to
#: the next (the paths resume where they stopped, so stages cost only the
#: point at each stage's end).
STAGE_GROWTH = math.sqrt(10.0)

#: Early stopping of :func:`l1kr_cv_path`: tracing stops once the mean CV
#: score over the last ``EARLY_STOP_POINTS`` grid points (all beyond the best
#: point, and reaching at least ``EARLY_STOP_EXTENT`` times its D) is below
#: the best mean score by more than ``EARLY_STOP_SE`` standard errors of the
#: best point's fold scores.
EARLY_STOP_POINTS, EARLY_STOP_EXTENT, EARLY_STOP_SE = 5, 3.0, 3.0

#: Halvings (in log D) of an interval of the default grid whose end points'
#: supports differ by more than :func:`~numkfs.model_selection.support_jump` allows.
REFINE_DEPTH = 4


class _StagedPath:
    """An L1KR path traced in stages of increasing ``D_max``
    (:func:`_l1kr_trace` resumed at each stage's end).

    ``path`` is the path traced so far, ``reached`` the largest D it has
    reached, ``done`` whether it can go no further (stationary point,
    ``D_max`` of the user, or a tracker limit)."""

    def __init__(self, X, y, kernel, kw):
        import inspect

        bound = inspect.signature(l1kr_path).bind(X, y, kernel, **kw)
        bound.apply_defaults()
        args, self.limits = _path_arguments(**bound.arguments)
        self.args = dict(zip(inspect.signature(_l1kr_trace).parameters, args))
        self.D_cap = self.args["D_max"]
        self.gen = self.path = None
        self.done = False

    @property
    def reached(self):
        return 0.0 if self.path is None else float(self.path.grid.max())

    def advance(self, D):
        """Trace on to ``D`` (at most the user's ``D_max``).  Returns whether
        the path came back below the D it had reached before (a turn in D:
        reads of the path at those D may have changed)."""
        D = float(D) if self.D_cap is None else min(float(D), self.D_cap)
        if self.done or (self.path is not None and D <= self.reached):
            return False
        old_points, old_reach = (0, 0.0) if self.path is None else (self.path.n_points, self.reached)
        with limit_threads(*self.limits):
            try:
                if self.gen is None:
                    self.gen = _l1kr_trace(**dict(self.args, D_max=max(D, 1e-300)))
                    self.path = next(self.gen)
                else:
                    self.path = self.gen.send(D)
            except StopIteration:  # the last stop was final (an event point that could not be polished)
                self.done = True
                return False
        self.done = self.path.extra["finished"] != "D_max" or (self.D_cap is not None and D >= self.D_cap)
        return bool(old_points and self.path.grid[old_points - 1:].min() < old_reach * (1 - 1e-12))


class _FixedSplits:
    """The same (train, test) splits every time (a splitter computed once)."""

    def __init__(self, splits):
        self.splits = splits

    def split(self, X=None, y=None, groups=None):
        return iter(self.splits)

    def get_n_splits(self, X=None, y=None, groups=None):
        return len(self.splits)


def _new_grid_points(full, lo, hi, ratio):
    """Candidate budgets in (lo, hi] of the default grid (``lo = 0``: in
    [0, hi]): the D of every event of ``full`` (a feature enters or leaves)
    in the range, ``hi``, and points spaced geometrically (ratio at most
    ``ratio``) between them; an event point is dropped where its neighbours'
    supports on the traced path differ by no more than
    :func:`~numkfs.model_selection.support_jump` allows."""
    G = full.grid
    ev = {float(G[i]) for i, name, _ in full.extra["events"] if name in ("E1", "E2") and lo < G[i] < hi}
    knots = sorted(ev | {float(hi)})
    fill = set()
    a = lo
    for b in knots:
        if a == 0.0:
            fill.update(b / ratio ** k for k in (1, 2))  # the sparse end: two points below the first knot
        elif b / a > ratio:
            m = int(math.ceil(math.log(b / a) / math.log(ratio)))
            fill.update(a * (b / a) ** (k / m) for k in range(1, m))
        a = b
    pts = np.array(sorted(ev | fill | {float(hi)} | ({0.0} if lo == 0.0 else set())))
    betas, _, _ = _path_at(full, pts)
    supp = betas > 0
    keep = np.ones(pts.size, dtype=bool)
    last = None
    for k in range(pts.size):
        if pts[k] in ev and 0 < k < pts.size - 1 and last is not None and not support_jump(supp[last], supp[k + 1]):
            keep[k] = False  # the next point is still close enough in support to the last one kept
            continue
        last = k
    return pts[keep]


def _refine(full, D, models, prune_tol, depth=REFINE_DEPTH):
    """Insert budgets (midpoints in log D, in D next to 0) where the pruned
    models of two consecutive points of the sorted grid ``D`` differ in
    support by more than :func:`~numkfs.model_selection.support_jump` allows, up to ``depth``
    halvings per interval.  ``models`` maps D to (β, λ, used) and is
    completed for the new points."""
    D = list(D)
    for _ in range(depth):
        mids = []
        for a, b in zip(D[:-1], D[1:]):
            if support_jump(models[a][0] > 0, models[b][0] > 0) and b > a * (1 + 1e-9):
                mids.append(math.sqrt(a * b) if a > 0 else b / 4.0)
        if not mids:
            break
        for D_k, (bt, lm, us) in zip(mids, zip(*_grid_models(full, np.array(mids), prune_tol))):
            models[D_k] = (bt, lm, us)
        D = sorted(D + mids)
    return D


def _merge_grid(D, supports, mean, protect, n_max):
    """Indices of at most ``n_max`` of the grid points ``D`` (sorted) to
    keep: the first and last, the ``protect`` ones (the points the CV rules
    choose), and of the others first those whose removal would join
    neighbours whose supports differ beyond :func:`~numkfs.model_selection.support_jump`, then
    those with the widest gap in log D to their neighbours."""
    keep = list(range(len(D)))
    fixed = set(protect) | {0, len(D) - 1}
    tiny = 1e-12 * max(D[-1], 1e-300)
    while len(keep) > n_max:
        best = None
        for q in range(1, len(keep) - 1):
            k = keep[q]
            if k in fixed:
                continue
            a, b = keep[q - 1], keep[q + 1]
            diff = int(np.count_nonzero(supports[a] != supports[b]))
            allowed = max(2.0, max(int(supports[a].sum()), int(supports[b].sum())) / 4.0)
            cost = (max(diff - allowed, 0.0), math.log((D[b] + tiny) / (D[a] + tiny)))
            if best is None or cost < best[0]:
                best = (cost, q)
        if best is None:  # only fixed points left: drop the non-protected ends, then protected ones
            drop = [q for q in (len(keep) - 1, 0) if keep[q] not in set(protect)] or [len(keep) - 1]
            keep.pop(drop[0])
            continue
        keep.pop(best[1])
    return np.array(keep, dtype=int)


def _stop_early(D, scores):
    """Whether the CV can no longer choose a point beyond the grid ``D``
    scored so far (see ``EARLY_STOP_*``)."""
    mean = np.nanmean(scores, axis=1)
    b = int(np.nanargmax(mean))
    if len(D) - 1 - b < EARLY_STOP_POINTS or D[-1] < EARLY_STOP_EXTENT * D[b]:
        return False
    s = scores[b][np.isfinite(scores[b])]
    se = float(np.std(s, ddof=1) / np.sqrt(s.size)) if s.size > 1 else 0.0
    return float(np.mean(mean[-EARLY_STOP_POINTS:])) < mean[b] - EARLY_STOP_SE * se


def l1kr_cv_path(X, y, kernel: str = "rbf", *, n_grid: int = 50, D_grid=None, cv=5, n_jobs=None,
                 random_state=None, D_scaling: str = "n", prune_tol: float = PRUNE_TOL, early_stopping: bool = True,
                 **path_kwargs) -> FeaturePath:
    r"""K-fold cross-validation of the L1KR path on a common grid of D.

    Every fold traces its own path (paths differ per fold); each is scored
    (negative test MSE) on the same grid of budgets D, interpolating along
    its own path with :func:`l1kr_path_at`.

    The default grid follows the events of the path on all of the data
    (the D where a feature enters or leaves, ``path.extra["events"]``):

    * it holds D = 0 and the D of the events, except an event whose
      neighbours' supports differ by no more than
      ``max(2, a quarter of the larger support)``;
    * between them, points spaced geometrically, at most ``n_grid / 10`` per
      decade of D (ratio ``10^(10 / n_grid)``), and two below the first
      event, so that the sparse end, where the supports change within a
      fraction of a decade, and the long stretches without events are both
      covered;
    * where the pruned models (``prune_tol``) of two consecutive points still
      differ in support by more than ``max(2, a quarter of the larger
      support)``, points are inserted in between (halving the interval in
      log D, up to ``REFINE_DEPTH`` times).

    The paths are traced in stages (budgets ``FIRST_STAGE_D · n`` times
    ``STAGE_GROWTH`` to the power k, each path resumed where it stopped) and
    each fold's path only as far as the grid reaches (``D · n_train / n``).
    With ``early_stopping`` tracing stops once the CV can no longer choose a
    further point: the mean CV score over the last ``EARLY_STOP_POINTS``
    points, beyond the best one and at least ``EARLY_STOP_EXTENT`` times its
    D, is below the best by more than ``EARLY_STOP_SE`` standard errors;
    otherwise it goes on to the stationary point of the path on all of the
    data (or ``D_max``).  The grid then holds at most ``n_grid`` points: where
    more were scored, points merge (the ones the CV rules choose, D = 0 and
    the last point are kept; of the others first those whose neighbours stay
    within the support step above, then those in the densest stretch of
    log D).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Target values.
    kernel : {"rbf", "poly"}
        ``"gaussian"`` is an alias of ``"rbf"``.
    n_grid : int, default=50
        Upper bound on the number of points of the default D grid (and its
        density, ``n_grid / 10`` points per decade between events).
    D_grid : array-like of shape (n_points,), optional
        Explicit grid of budgets ``||β||₁ >= 0`` (in the units of the
        full-data path), used as given; the paths are traced to its largest
        value (or ``D_max``), without early stopping.
    cv : int or splitter
        Number of cross-validation folds, or a scikit-learn splitter.
    n_jobs : int, optional
        joblib workers over folds (threads by default: the fold paths are
        resumed from stage to stage, which a process-based backend cannot
        do, so there each stage retraces them).
    random_state : int, optional
        Passed to the splitter (:func:`~numkfs.model_selection.make_cv`).
    D_scaling : {"n", "none"}
        How a fold's path is made comparable with the full-data path.
        Columns are centred and scaled to unit norm on the data each path is
        traced on, so a standardised value scales as ``1/sqrt(n)`` and the
        same kernel in the units of X has ``β ∝ n``; likewise the ridge
        problem on n rows with penalty λ is the one on 2n rows (every row
        twice) with 2λ.  With ``"n"`` (default) the fold's path (n_train
        rows) is traced with ``λ · n_train / n`` (``fix="lambda"``) or
        ``C · n / n_train`` (``fix="C"``) and read at ``D · n_train / n``:
        the problem and the budget equivalent to (λ, D) on the full-data
        path.  ``"none"`` traces every path with the same λ (or C) and reads
        it at the same D (before 2026-11: it chose D in the units of paths
        on (K-1)/K of the data and applied it to the full-data path, a
        kernel ~K/(K-1) times too wide).
    prune_tol : float, default=1e-3
        The model at each grid point drops the features it does not need
        (:func:`l1kr_prune`: together they lower the ridge objective by less
        than ``prune_tol`` of ``Σ (y - ȳ)²``), on the full-data path and on
        every fold's path alike, so the CV scores are those of the pruned
        models.  0 keeps every feature with β > 0 (before 2026-11).
    early_stopping : bool, default=True
        Stop tracing once the CV can no longer choose a further point (see
        above); False traces to the stationary point (or ``D_max``).
    **path_kwargs
        Passed to :func:`l1kr_path`.

    Returns
    -------
    FeaturePath
        On the D grid: interpolated β of the full-data path (pruned),
        ``cv_scores`` (n_points, n_folds) (higher is better), ``score_name``
        ``"neg_mean_squared_error"`` (in the squared units of y),
        ``extra["lambda"]``, ``extra["converged"]`` (per grid point: the
        full-data path reached it, between points that satisfy the KKT
        system to ``tol``), ``extra["full_path"]`` (the path traced on all
        of the data, as far as the CV needed it), ``extra["stopped_early"]``
        (tracing stopped before the stationary point or ``D_max``) and
        ``extra["fold_steps"]`` (continuation steps of each fold's path).

    See Also
    --------
    l1kr_path : the path on one data set.
    numkfs.estimators.L1KRRegressorCV : the estimator built on this.

    Examples
    --------
    >>> from numkfs.datasets import make_friedman_noise
    >>> from numkfs.methods.l1kr import l1kr_cv_path
    >>> X, y, _ = make_friedman_noise(1, n_samples=40, random_state=0)
    >>> cvp = l1kr_cv_path(X, y, lam=0.1, cv=2, n_grid=5, D_max=5.0, random_state=0)
    >>> cvp.cv_scores.shape[1], cvp.n_points <= 5
    (2, True)
    """
    from ..model_selection import choose_index, cross_val_path, make_cv

    X, y = check_X_y(X, y, caller="l1kr_cv_path")
    if D_scaling not in ("n", "none"):
        raise ValueError(f"l1kr_cv_path: D_scaling must be 'n' or 'none'; got {D_scaling!r}.")
    if not (isinstance(prune_tol, Real) and math.isfinite(prune_tol) and prune_tol >= 0):
        raise ValueError(f"l1kr_cv_path: prune_tol must be a finite float >= 0; got {prune_tol!r}.")
    if not (isinstance(n_grid, Integral) and not isinstance(n_grid, bool) and n_grid >= 2):
        raise ValueError(f"l1kr_cv_path: n_grid must be an int >= 2; got {n_grid!r}.")
    user_grid = D_grid is not None
    if user_grid:
        D_grid = np.asarray(D_grid, dtype=float)
        if D_grid.ndim != 1 or D_grid.size == 0 or not np.all(np.isfinite(D_grid)) or np.any(D_grid < 0):
            raise ValueError("l1kr_cv_path: D_grid must be a non-empty 1-D array of finite budgets >= 0; "
                             f"got {D_grid!r}.")
    path_kwargs = dict(path_kwargs)
    # the CV's resolution (see CV_TOL): what the paths it reads are traced to
    path_kwargs.setdefault("tol", CV_TOL)
    path_kwargs.setdefault("max_angle", CV_MAX_ANGLE)
    if "eps" in path_kwargs:
        path_kwargs["gradient_tol"] = _renamed_eps(path_kwargs.get("gradient_tol", 1e-6), path_kwargs.pop("eps"),
                                                   "l1kr_cv_path")
    full_sp = _StagedPath(X, y, kernel, path_kwargs)
    kernel = full_sp.args["kernel"]
    fix = full_sp.args["fix"]
    n_full = X.shape[0]
    fold_kwargs = {k: v for k, v in path_kwargs.items() if k not in ("feature_names", "true_support", "verbose")}
    # the folds, fixed once: every stage scores the same folds
    splits = list(make_cv(cv, y, classifier=False, random_state=random_state).split(X, y))
    splitter = _FixedSplits(splits)
    folds = {}  # per fold (its test rows): its staged path and the scores of the grid points read so far

    def fold_fn(train, test, grid, reach):
        r = len(train) / n_full
        key = test.tobytes()
        st = folds.get(key)
        if st is None:
            kw = dict(fold_kwargs)
            if D_scaling == "n":
                # the problem equivalent to the full-data one on n_train rows
                if fix == "lambda":
                    kw["lam"] = full_sp.args["lam"] * r
                else:
                    kw["C"] = full_sp.args["C"] / r
                if kw.get("D_max") is not None:
                    kw["D_max"] = kw["D_max"] * r
            st = folds[key] = {"path": _StagedPath(X[train], y[train], kernel, kw), "scores": {}}
        scale = r if D_scaling == "n" else 1.0
        if st["path"].advance(reach * scale):
            st["scores"].clear()  # the path turned back below where it had been read: read it again
        todo = np.array([D for D in grid if D not in st["scores"]])
        if todo.size:
            # columns are scaled to unit norm, so a standardised value is
            # ~ 1/sqrt(n): the same kernel (in the units of X) has β ∝ n.  The
            # grid is in the units of the full-data path; a fold's path is read
            # at the equivalent budget D·n_train/n (D_scaling="n").
            p = st["path"].path
            betas_f, lams_f, _ = _grid_models(p, todo * scale, prune_tol)
            with limit_threads(*thread_limits("l1kr", len(train))):
                pred = _predict_betas(p, X[test], betas_f, lams_f)
            for D, s in zip(todo, -((pred - y[test][None, :]) ** 2).mean(axis=1)):
                st["scores"][D] = float(s)
        return np.array([st["scores"][D] for D in grid])

    def score(grid, reach):
        return cross_val_path(lambda tr, te: fold_fn(tr, te, grid, reach), X, y, splitter, n_jobs=n_jobs,
                              prefer="threads", method="L1KR")

    stopped_early = False
    if user_grid:
        user_D_max = path_kwargs.get("D_max")
        reach = float(D_grid.max()) if user_D_max is None else float(user_D_max)
        reach = max(reach, 1e-12)
        full_sp.advance(reach)
        scores = score(D_grid, reach)
        betas, lams, used = _grid_models(full_sp.path, D_grid, prune_tol)
    else:
        ratio = 10.0 ** (10.0 / n_grid)
        models = {}  # D -> (β, λ, used) of the pruned model on the full-data path
        grid = []
        stage = FIRST_STAGE_D * n_full
        while True:
            turned = full_sp.advance(stage)
            full = full_sp.path
            reach = full_sp.reached
            if turned:  # the full-data path came back below where it had been read: read it again
                for D, m in zip(grid, zip(*_grid_models(full, np.array(grid), prune_tol))):
                    models[D] = m
            lo = grid[-1] if grid else 0.0
            if reach > lo or not grid:
                new = _new_grid_points(full, lo, reach, ratio) if reach > 0 else np.array([0.0])
                new = [D for D in new if D not in models]
                if new:
                    for D, m in zip(new, zip(*_grid_models(full, np.array(new), prune_tol))):
                        models[D] = m
                # refine the new stretch only (one that could not be refined stays so)
                grid = sorted(set(grid) | set(_refine(full, grid[-1:] + sorted(new), models, prune_tol)))
            scores = score(np.array(grid), reach)
            if full_sp.done or (early_stopping and _stop_early(np.array(grid), scores)):
                stopped_early = not full_sp.done
                break
            stage = max(stage, reach) * STAGE_GROWTH
        D_grid = np.array(grid)
        betas = np.array([models[D][0] for D in grid])
        lams = np.array([models[D][1] for D in grid])
        used = np.array([models[D][2] for D in grid])
        if D_grid.size > n_grid:
            probe = FeaturePath(grid=D_grid, weights=betas, cv_scores=scores)
            protect = {choose_index(probe, "best"), choose_index(probe, "1se")}
            keep = _merge_grid(D_grid, betas > 0, probe.mean_cv_score, protect, n_grid)
            D_grid, betas, lams, used, scores = D_grid[keep], betas[keep], lams[keep], used[keep], scores[keep]
    full = full_sp.path
    conv = full.extra["converged"]
    converged = conv[used[:, 0]] & conv[used[:, 1]]
    extra = {"lambda": lams, "full_path": full, "converged": converged, "user_grid": user_grid,
             "prune_tol": float(prune_tol), "stopped_early": stopped_early,
             "fold_steps": [int(st["path"].path.extra["n_steps"]) for st in folds.values()]}
    for key in ("X_train", "y_train", "x_mean", "x_scale", "y_mean", "y_scale", "kernel", "degree", "fix",
                "lam_fixed", "C_fixed"):
        extra[key] = full.extra[key]
    out = FeaturePath(grid=D_grid, weights=betas, grid_name="D", feature_names=full.feature_names,
                      method="L1KR (CV grid)", cv_scores=scores, extra=extra, true_support=full.true_support,
                      tol=0.0)
    _set_contract_fields(out, score_name="neg_mean_squared_error", converged=converged)
    return out


def _set_contract_fields(path, **fields):
    """Set the selection-contract fields that this FeaturePath has."""
    for k, v in fields.items():
        if hasattr(path, k) or k in getattr(type(path), "__dataclass_fields__", {}):
            setattr(path, k, v)
