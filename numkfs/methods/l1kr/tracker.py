"""The tracker of the L1KR path: predictor-corrector (or ODE) steps,
events located and solved, the points recorded."""
from __future__ import annotations

import math
import time
import warnings

import numpy as np

from ..._progress import report
from ..._validation import NumericalWarning, warn_not_converged
from ...kernels.ard import ard_grad_columns
from ...paths import FeaturePath
from .system import (
    FIX_NAMES,
    EVENT_DMAX,
    EVENT_E1,
    EVENT_NAMES,
    EVENT_NONE,
    EVENT_START,
    EVENT_STOP,
    POLISH_MAX_ITER,
    PathDegeneracyWarning,
    PathTrackingError,
    _decode_event,
    _event_functions,
    _event_tol,
    _first_event,
    _mp_step,
    _newton_square,
    _norm,
    _one_feature_C_start,
    _standardize,
    _System,
    _tangent_and_corrector,
    _tol,
    _trial_residual,
)


def _l1kr_trace(X, y, kernel, degree, fix, lam, C, gradient_tol, D_max, max_steps, tol, integrator, tangent, h0,
                max_angle, feature_names, true_support, verbose):
    """The tracker as a generator: it yields the path traced so far (a
    :class:`~numkfs.paths.FeaturePath`) when it stops.  Where it stopped at
    ``D_max``, ``send(D)`` with a larger D resumes it from that point (the
    point stays on the path, as an ordinary one) and yields again at the next
    stop; any other stop is final.  ``l1kr_path(grid=..., n_grid=...)``
    traces its paths in stages this way (:class:`_StagedPath`)."""
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
                   degree=int(degree), fix=FIX_NAMES[fix], lam_fixed=float(lam), C_fixed=float(C), integrator=integrator)
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
            finished = "max_iter"
            rec.rows[-1]["converged"] = False
            warn_not_converged("L1KR", max_iter=max_steps, what="continuation steps", where=_where(rec), limit="max_iter",
                               hint="increase max_iter or set D_max (the path ends there, short of a "
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
        resid = sysm.y - Ka + Ka.sum() / Ka.size
        loss = float(resid @ resid)
        quad = float(alpha @ Ka)
        obj = loss + (lam * quad if sysm.fix == "lambda" else 0.0)
        gP = info["g"][P]
        eta = float(gP.sum() / gP.size)
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
        reads.  For the Gaussian kernel with the LU factors the whole
        iteration is one compiled call (:meth:`_System.correct`)."""
        sysm = self.sysm
        if qr[0] == "lu" and sysm.compiled_correct:
            return sysm.correct(zp, P, qr[1], self.tol, self.max_newton)
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


def _set_contract_fields(path, **fields):
    """Set the selection-contract fields that this FeaturePath has."""
    for k, v in fields.items():
        if hasattr(path, k) or k in getattr(type(path), "__dataclass_fields__", {}):
            setattr(path, k, v)
