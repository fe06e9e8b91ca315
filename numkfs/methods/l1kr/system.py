"""The KKT system of L1KR on an active set: its Jacobian, tangent, Newton
and event equations (the equations :func:`numkfs.methods.l1kr.l1kr_path`
traces)."""
from __future__ import annotations

import math
import time
import warnings
from numbers import Real

import numpy as np
from scipy.linalg import lapack as _lapack
from scipy.linalg import qr as _qr
from scipy.linalg import solve_triangular

from ..._threads import PARALLEL_MIN_ROWS
from ...kernels.ard import ard_grad_columns, ard_grad_contractions, ard_hessian_contractions, ard_kernel
from . import _loops


#: event codes stored in ``path.extra["event"]``
EVENT_NONE, EVENT_START, EVENT_E1, EVENT_E2, EVENT_STOP, EVENT_DMAX = 0, 1, 2, 3, 4, 5
EVENT_NAMES = {0: "", 1: "start", 2: "E1", 3: "E2", 4: "stationary", 5: "D_max"}

#: Default ``prune_tol`` of :func:`l1kr_path` (read at a grid) and :func:`l1kr_prune`: the
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


#: The ``fix`` option (``extra["fix"]`` of a path) of each of the tracker's
#: codes: ``"lambda"`` (λ fixed) and ``"C"`` (the norm bound fixed).
FIX_NAMES = {"lambda": "lambda1", "C": "norm_bound"}
#: The tracker's code of each ``fix`` option.
FIX_CODES = {v: k for k, v in FIX_NAMES.items()}


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
        #: the data, feature-major (the compiled residual's layout), made at its first use
        self._XT = None
        self._eps_n = math.sqrt(self.n) * np.finfo(float).eps

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
        r1 = Ka - Ka.sum() / Ka.size + lam * alpha - self.y  # Ka.mean(), without its wrapper's cost
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

    def residual(self, z, P, quiet=False):
        """F(z) only (O(n² |P|)).

        For the Gaussian kernel on fewer than ``PARALLEL_MIN_ROWS`` rows
        (where the kernel loops run serially) at a new β (every corrector
        iterate) one compiled call
        (:func:`~numkfs.methods.l1kr._loops._rbf_residual`) computes K, F and
        its rounding floor; K is kept for the evaluations that follow at the
        same point.  ``quiet`` silences numpy's floating-point warnings
        (overflow of a diverging corrector, :func:`_trial_residual`); the
        compiled call raises none."""
        alpha, beta, lam = self.split(z, P)
        c = self._cache.get("K")
        if c is None or not np.array_equal(c[0], beta):
            if self.compiled_correct:
                return self._rbf_residual(z, P, alpha, beta, lam)
        if quiet:
            with np.errstate(over="ignore", invalid="ignore"):
                return self._residual(alpha, beta, lam, P)
        return self._residual(alpha, beta, lam, P)

    def _residual(self, alpha, beta, lam, P):
        K = self._kernel(beta)
        c = self._cache.get("A")
        if c is not None and np.array_equal(c[0], alpha):
            gP = c[2][P]
        else:
            gP = ard_grad_contractions(self.X, beta, alpha, K, self.kernel, self.degree, features=P)
        return self._F(alpha, beta, lam, K, gP, P)[0]

    def _feature_major(self):
        """The data, feature-major (the compiled loops' layout), made at the first use."""
        if self._XT is None:
            self._XT = np.ascontiguousarray(self.X.T)
        return self._XT

    @property
    def compiled_correct(self):
        """Whether the corrector and the residual run compiled (:meth:`correct`,
        :meth:`residual`): the Gaussian kernel on fewer than ``PARALLEL_MIN_ROWS`` rows."""
        return self.kernel == "rbf" and self.n < PARALLEL_MIN_ROWS

    def correct(self, zp, P, lu, tol, max_newton):
        """The tracker's corrector from ``zp`` with the bordered LU factors
        ``lu`` (:func:`~numkfs.methods.l1kr._loops._rbf_correct`).  Returns
        the corrected point (None when the corrections fail), 0.0 and the
        largest contraction of the chord steps, as ``_PCTracker._correct``."""
        n, p = self.n, len(P)
        Pa = np.array(P, dtype=np.int64)
        x2max = float(np.max(self.xmax[Pa])) ** 2 if p else 0.0
        status, z, kappa, K, n_eval = _loops._rbf_correct(
            self._feature_major(), Pa, zp, np.ascontiguousarray(lu[0].T), lu[1], float(self.c), float(self.lam),
            self.fix == "C", self.y, float(self.C), float(tol), self._eps_n, x2max, int(max_newton))
        if status != 0:
            return None, 0.0, kappa
        beta = np.zeros(self.d)
        beta[P] = z[n:n + p]
        self._cache = {"K": (beta, K)}
        return z, 0.0, kappa

    def _rbf_residual(self, z, P, alpha, beta, lam):
        """:meth:`residual` by :func:`~numkfs.methods.l1kr._loops._rbf_residual`."""
        n, p = self.n, len(P)
        Pa = np.array(P, dtype=np.int64)
        F, K, Ka, gP, f1, q = _loops._rbf_residual(self._feature_major(), Pa, z[n:n + p], alpha, float(lam), self.y,
                                                   float(self.C), self.fix == "C")
        self._cache = {"K": (beta.copy(), K)}
        floors = [f1]
        if p > 1:
            floors.append(lam * 4.0 * float(np.max(self.xmax[Pa])) ** 2 * q)
        if self.fix == "C":
            floors.append(q / self.C)
        self.floor = self._eps_n * max(floors)
        return F

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
        # column means as sum / n: the bits of numpy's mean, without its wrapper's cost
        J[:n, :n] = K - K.sum(axis=0, keepdims=True) / n
        J[np.arange(n), np.arange(n)] += lam
        AP = A[:, P]
        J[:n, n : n + p] = AP - AP.sum(axis=0, keepdims=True) / n
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
    up to the hyperplane; LU is several times cheaper here."""
    m, nv = J.shape
    if method == "lu":
        from scipy.linalg import LinAlgWarning, lu_factor

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
            t = _lu_solve(lu, e)
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
        return -_lu_solve(fac, np.concatenate([F, [0.0]]))
    Q1, R1 = fac
    w = solve_triangular(R1, F, trans="T", lower=False, check_finite=False)
    return -(Q1 @ w)


def _lu_solve(lu, b):
    """``scipy.linalg.lu_solve(lu, b, check_finite=False)``: the same LAPACK
    solve (``getrs``), called directly, without the checks and conversions
    of scipy's wrapper, which cost more than the solve at the tracker's
    sizes (it runs several times per step)."""
    x, info = _lapack.dgetrs(lu[0], lu[1], b)
    if info != 0:  # pragma: no cover - getrs fails only on an illegal argument
        raise ValueError(f"getrs: illegal value in argument {-info}")
    return x


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
    silenced here, and only here (the compiled residual of the Gaussian
    kernel raises none)."""
    F = sysm.residual(z, P, quiet=True)
    return F if np.isfinite(F).all() else None


# --------------------------------------------------------------------------
# helpers on a point


def _event_functions(sysm, info, P, z, D_max, stop_abs):
    """Event functions, an event when one goes from < 0 to >= 0:
    E1: λ(g_j - η) for inactive j; E2: -β_i for active i; stationary:
    stop_abs - λη; D_max: D - D_max."""
    g, lam = info["g"], info["lam"]
    gP = g[P]
    eta = gP.sum() / gP.size
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
        z = z + _lu_solve(lu, -Fa)
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
