"""The KNIFE problem and its two steps (:mod:`numkfs.methods.knife`).

:class:`_Knife` holds what stays fixed during a fit and a path (data,
kernel, loss, λ1) and runs one fit from a start: the α-step
(:func:`_ridge_solve`, :func:`_newton_alpha`), the w-step on the linearised
surrogate, the line search, the extrapolation and the L-BFGS-B finish.
:func:`numkfs.methods.knife._input._prepare` validates a public function's
input and builds the problem.  The module switches ``_FAST``, ``_EXTRAPOLATE`` and
``_POLISH_AFTER`` (tests) live here.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from ..._linalg import rows_matvec
from ..._registry import METHOD_ROWS
from ..._constraints import (BOOL, CALLBACK, GRID, N_JOBS, RANDOM_STATE, Interval, NoneOr, Options, Satisfies,
                             _is_solver)
from ...kernels.weighted import (KERNELS, weight_gradient_matrix, weight_gradient_product, weighted_kernel,
                                weighted_kernel_product)
from ...losses import get_loss
from ...paths import SELECTION_TOL, support_mask
from ...solvers.native.knife_wstep import KnifeWeightStep, knife_wstep_kkt_residual, solve_knife_wstep

REGRESSION_LOSSES = ("squared",)
CLASSIFICATION_LOSSES = ("squared_hinge", "huberized_hinge", "logistic")

#: Fits with at most this many samples run single-threaded (numkfs's thread
#: policy: KNIFE's ``serial_max_samples`` in the method registry, ``numkfs._registry``).
SERIAL_MAX_SAMPLES = METHOD_ROWS["knife"].serial_max_samples

#: Weights at or below this are set to exactly zero (and stay there).
ZERO_TOL = 1e-12

#: The weight-step solvers of KNIFE (any case).
_SOLVERS = ("auto", "native", "ECOS", "SCS", "CLARABEL")


def _is_knife_solver(value) -> bool:
    names = [value] if isinstance(value, str) else value
    return _is_solver(value) and all(s.upper() in {x.upper() for x in _SOLVERS} for s in names)


def _is_lambda2_grid(value) -> bool:
    if not GRID[-1].is_satisfied_by(value):  # a non-empty 1-D vector of finite reals
        return False
    grid = np.asarray(value, dtype=float)
    return bool(np.all(grid >= 0) and np.all(np.diff(grid) >= 0))


#: A λ2 grid given by the caller: the path walks it from the dense end, so its values are >= 0 and
#: non-decreasing (the message is the one :class:`KNIFEGridWalk` gives for the same grid).
LAMBDA2_GRID = [NoneOr, Satisfies(_is_lambda2_grid, "a non-empty, non-decreasing array of finite values >= 0")]


#: Parameter constraints shared by the functions and the estimators.
KNIFE_CONSTRAINTS = {
    "kernel": [Options(KERNELS)],
    "loss": [Options(REGRESSION_LOSSES + CLASSIFICATION_LOSSES)],
    "lambda1": [Interval(numbers.Real, 0, None, closed="neither")],
    "lambda2": [Interval(numbers.Real, 0, None, closed="left")],
    "gamma": [Interval(numbers.Real, 0, None, closed="neither"), Options(("auto",)), NoneOr],
    "degree": [Interval(numbers.Integral, 1, None, closed="left")],
    "coef0": [Interval(numbers.Real, None, None)],
    "delta": [Interval(numbers.Real, 0, None, closed="neither")],
    "n_restarts": [Interval(numbers.Integral, 1, None, closed="left")],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "n_grid": [Interval(numbers.Integral, 2, None, closed="left")],
    "lambda_min_ratio": [Interval(numbers.Real, 0, 1, closed="neither"), Options(("auto",))],
    "max_refine": [Interval(numbers.Integral, 0, None, closed="left"), NoneOr],
    "approximation": [Options(("exact", "nystroem", "auto"))],
    "n_components": [Interval(numbers.Integral, 1, None, closed="left"), NoneOr],
    "solver": [Satisfies(_is_knife_solver, "a str among {" + ", ".join(map(repr, _SOLVERS)) + "} or a non-empty "
                                           "list of them")],
    "random_state": RANDOM_STATE,
    "n_jobs": N_JOBS,
    "grid": LAMBDA2_GRID,
    "stop": CALLBACK,
    "stop_at_zero": BOOL,
    "verbose": BOOL,
}

#: ``gamma="auto"``: a path that still selects features at the top of its
#: default grid is continued by doubling λ2, at most this many times.
AUTO_EXTEND_MAX = 30

#: ``gamma="auto"``: the scale grows by at most this factor from one path
#: point to the next (a larger scale can drop many features at once; the
#: support then shrinks by about a quarter at most per point, as the grids'
#: refinement asks, see :func:`numkfs.model_selection.refine_walk`).
AUTO_GAMMA_GROWTH = 1.25

#: ``gamma="auto"`` in :func:`knife`: at most this many refits with the
#: bandwidth of the selected features.
AUTO_GAMMA_ROUNDS = 30

#: ``gamma="auto"``: the relative tolerance of the rounds of :func:`knife` that move the scale
#: (the fit's own ``tol`` when that is looser); the fit at the scale they settle on uses ``tol``.
AUTO_GAMMA_ROUND_TOL = 1e-4

#: The weight at which :meth:`_Knife.squared_weight_slope` evaluates the slope of F in a squared
#: weight that is zero (small: the slope's relative error is of the order of its square).
SLOPE_WEIGHT = 1e-4

#: how many (K, α, Kα) triples :meth:`_Knife.k_alpha` remembers (two: an iteration's point and its
#: extrapolated point; each holds its n x n K alive)
_KA_CACHE = 2


#: Module switch for tests: False runs every fit without the shortcuts (see ``_Knife.fast``).
_FAST = True
#: Module switch for tests: False runs the paper's plain alternation, without extrapolation.
_EXTRAPOLATE = True
#: Longest extrapolation, in units of one iteration's displacement.
_EXTRAPOLATION_MAX = 64.0
#: Iterations of the alternation after which an unconverged fit is finished by L-BFGS-B on the
#: reduced objective (None: never; the paper's alternation to the end, kept for tests).
_POLISH_AFTER = 8


# --------------------------------------------------------------------------
# the problem: data, kernel, α-step, w-step, objective


class _Knife:
    """Everything that stays fixed during a fit (and a path)."""

    def __init__(self, X, y, *, kernel, loss, lambda1, gamma, degree, coef0, delta, solver,
                 kernel_method="auto", wstep_tol=1e-10, fast=True, extrapolate=True):
        self.X = X
        #: False: no shortcut (dense Newton systems, p x p weight-step matrices, every path point fitted);
        #: the same answers within the solvers' tolerances, kept for tests.
        self.fast = fast
        #: extrapolate every iteration along its displacement (see the module docstring); False: the
        #: paper's plain alternation, kept for tests.
        self.extrapolate = extrapolate
        self.y = y
        self.kernel = kernel
        self.loss = get_loss(loss, delta=delta)
        self.intercept = self.loss.classification
        self.lambda1 = float(lambda1)
        self.gamma = float(gamma)
        #: "support": the rbf scale of each path point is 1 / (features selected at its warm start)
        #: (``gamma="auto"``); None: ``gamma`` throughout.
        self.gamma_rule = None
        self.degree = int(degree)
        self.coef0 = float(coef0)
        self.solver = solver
        self.kernel_method = kernel_method
        self.wstep_tol = wstep_tol
        self._act_key = None
        self._Xa = None
        self._problem = None
        self._ka_cache = []  # the last few (K, α, Kα): see k_alpha
        #: the units of y the problem is solved in (:func:`numkfs._preprocessing.response_scale`; 1 for
        #: classification): y here is the response divided by it, λ2 the user's divided by its square,
        #: α and the intercept the user's divided by it, the objective the user's divided by its square
        self.y_scale = 1.0

    # -- the bandwidth of gamma="auto" ---------------------------------------
    def gamma_for(self, w, current):
        """The rbf scale for a fit warm-started at ``w`` (fitted at scale
        ``current``): 1 / (number of selected features) under
        ``gamma="auto"``, else ``current``."""
        if self.gamma_rule is None:
            return current
        s = int(np.count_nonzero(support_mask(w, SELECTION_TOL["knife"])))
        return min(1.0 / s, AUTO_GAMMA_GROWTH * current) if s > 0 else current

    def refit(self, st, lambda2, *, max_iter, tol):
        """The fit at ``lambda2`` warm-started from the state ``st``, at the
        scale :meth:`gamma_for` gives (the kernel recomputed when it changes)."""
        gamma = self.gamma_for(st.w, st.gamma)
        K = st.K if gamma == st.gamma else None
        self.gamma = gamma
        return self.fit(st.w, lambda2, alpha=st.alpha, a0=st.a0, max_iter=max_iter, tol=tol, K=K)

    # -- kernel on the active set -----------------------------------------
    def active_data(self, w):
        act = np.flatnonzero(w > 0.0)
        key = act.tobytes()
        if key != self._act_key:
            self._act_key = key
            self._Xa = np.ascontiguousarray(self.X[:, act])
        return act, self._Xa

    def kernel_matrix(self, w, alpha=None):
        """K_w; ``alpha`` given: K_w α is taken in the same pass (for :meth:`k_alpha`)."""
        act, Xa = self.active_data(w)
        if alpha is None:
            return weighted_kernel(Xa, w[act], self.kernel, gamma=self.gamma, degree=self.degree,
                                   coef0=self.coef0, method=self.kernel_method)
        K, Ka = weighted_kernel_product(Xa, w[act], alpha, self.kernel, gamma=self.gamma, degree=self.degree,
                                        coef0=self.coef0, method=self.kernel_method)
        self.k_alpha(K, alpha, Ka)
        return K

    # -- K α, computed once per (K, α) ---------------------------------------------
    def k_alpha(self, K, alpha, Ka=None):
        """``K @ alpha``, remembered for the last few (K, α) pairs: an
        iteration asks for it in the objective, the α-step and the w-step
        (each an n x n pass over memory).  ``Ka`` given: store it as the
        product (the α-step's own).  K matrices are never changed in place."""
        for K_c, a_c, Ka_c in self._ka_cache:
            if K_c is K and np.array_equal(a_c, alpha):
                return Ka_c
        if Ka is None:
            Ka = K @ alpha
        self._ka_cache = [(K, alpha.copy(), Ka)] + self._ka_cache[:_KA_CACHE - 1]
        return Ka

    # -- objective ---------------------------------------------------------
    def objective(self, K, alpha, a0, w, lambda2):
        Ka = self.k_alpha(K, alpha)
        return self.loss.value(self.y, Ka + a0) + self.lambda1 * float(alpha @ Ka) + lambda2 * float(w.sum())

    # -- α-step --------------------------------------------------------------
    def alpha_step(self, K, alpha, a0):
        if not self.intercept:
            return _ridge_solve(K, self.y, self.lambda1), 0.0
        alpha, a0, Ka = _newton_alpha(K, self.y, self.loss, self.lambda1, alpha, a0, restrict=self.fast,
                                      Ka=self.k_alpha(K, alpha))
        self.k_alpha(K, alpha, Ka)
        return alpha, a0

    # -- w-step ---------------------------------------------------------------
    def wstep_data(self, K, alpha, a0, w, lambda2):
        act, Xa = self.active_data(w)
        A = weight_gradient_matrix(Xa, w[act], alpha, K, self.kernel, gamma=self.gamma,
                                   degree=self.degree, coef0=self.coef0, method=self.kernel_method)
        u = self.k_alpha(K, alpha) + a0
        u0 = u - A @ w[act]
        c = self.lambda1 * (A.T @ alpha) + lambda2
        return act, A, u0, c

    def w_step(self, K, alpha, a0, w, lambda2):
        act, A, u0, c = self.wstep_data(K, alpha, a0, w, lambda2)
        w_new = np.zeros_like(w)
        if act.size == 0:
            return w_new
        solver = self.solver
        if isinstance(solver, str) and solver.lower() in ("auto", "native"):
            wa, _, _ = solve_knife_wstep(self.loss, self.y, A, u0, c, w[act], tol=self.wstep_tol,
                                       factored=self.fast)
            # checked as the conic answers are: numkfs recomputes the KKT residual at the returned point
            kkt = knife_wstep_kkt_residual(self.loss, self.y, A, u0, c, np.clip(wa, 0.0, 1.0))
            scale = max(1.0, float(np.max(np.abs(c))))
            if kkt > 1e-6 * scale and solver.lower() == "auto":
                # the native answer is not accurate enough: ask the conic backends
                wa = self._conic_wstep(A, u0, c, w[act], "auto")
        else:
            wa = self._conic_wstep(A, u0, c, w[act], solver)
        w_new[act] = np.clip(wa, 0.0, 1.0)
        w_new[w_new <= ZERO_TOL] = 0.0
        return w_new

    def _conic_wstep(self, A, u0, c, wa, solver):
        from ...solvers import solve

        if self._problem is None:
            self._problem = KnifeWeightStep(self.loss, self.y, A, u0, c, w0=wa)
        else:
            self._problem.set_data(A, u0, c, w0=wa)
        if isinstance(solver, str) and solver.lower() == "auto":
            solver = ["CLARABEL", "ECOS", "SCS"]
        res = solve(self._problem, solver=solver, tol=1e-9)
        return np.asarray(res.solution["w"], dtype=float)

    # -- one KNIFE fit from a start ---------------------------------------------
    def fit(self, w, lambda2, *, alpha=None, a0=0.0, max_iter=100, tol=1e-6, K=None, polish=True):
        """KNIFE from the start ``w`` (and ``alpha``, ``a0``); ``K``: the kernel at ``w`` if known
        (a warm start from a fitted state); ``polish=False``: the alternation to the end, without
        the L-BFGS-B finish."""
        n = self.X.shape[0]
        w = np.clip(np.asarray(w, dtype=float), 0.0, 1.0)
        w[w <= ZERO_TOL] = 0.0
        alpha = np.zeros(n) if alpha is None else np.asarray(alpha, dtype=float).copy()
        hist = []
        if K is None:
            K = self.kernel_matrix(w, alpha)
        alpha, a0 = self.alpha_step(K, alpha, a0)
        f = self.objective(K, alpha, a0, w, lambda2)
        hist.append(f)
        converged = False
        n_iter = 0
        n_line_searches = 0
        n_extrapolated = 0
        t = 1.0  # extrapolation length, in units of the last iteration's displacement
        alpha_optimal = True
        n_alternate = max_iter if _POLISH_AFTER is None or not polish else min(max_iter, _POLISH_AFTER)
        for n_iter in range(1, n_alternate + 1):
            f_start = f
            w_prev, alpha_prev, a0_prev = w, alpha, a0
            # w-step on the linearised surrogate
            w_new = self.w_step(K, alpha, a0, w, lambda2)
            K_new = self.kernel_matrix(w_new, alpha)
            f_new = self.objective(K_new, alpha, a0, w_new, lambda2)
            if not f_new <= f:
                # Algorithm 3: backtracking line search along w_new - w
                n_line_searches += 1
                step = w_new - w
                s = 0.5
                accepted = False
                while s >= 2.0 ** -30:
                    w_s = w + s * step
                    w_s[w_s <= ZERO_TOL] = 0.0
                    K_s = self.kernel_matrix(w_s, alpha)
                    f_s = self.objective(K_s, alpha, a0, w_s, lambda2)
                    if f_s <= f:
                        w_new, K_new, f_new, accepted = w_s, K_s, f_s, True
                        break
                    s *= 0.5
                if not accepted:  # no descent along the surrogate's direction: stationary
                    converged = True
                    break
            w, K, f = w_new, K_new, f_new
            hist.append(f)
            # α-step at the new weights
            alpha_new, a0_new = self.alpha_step(K, alpha, a0)
            f_alpha = self.objective(K, alpha_new, a0_new, w, lambda2)
            if f_alpha <= f:
                alpha, a0, f = alpha_new, a0_new, f_alpha
            hist.append(f)
            alpha_optimal = True
            if f_start - f <= tol * max(1.0, abs(f)):
                converged = True
                break
            if self.extrapolate:
                ext = self._extrapolate(w, alpha, a0, f, w_prev, alpha_prev, a0_prev, t, lambda2)
                if ext is None:
                    t = max(0.25 * t, 0.5)
                else:
                    w, K, alpha, a0, f = ext
                    hist.append(f)
                    n_extrapolated += 1
                    alpha_optimal = False
                    t = min(2.0 * t, _EXTRAPOLATION_MAX)
        if not alpha_optimal:  # the last step moved α with w: end with an α-step
            alpha_new, a0_new = self.alpha_step(K, alpha, a0)
            f_alpha = self.objective(K, alpha_new, a0_new, w, lambda2)
            if f_alpha <= f:
                alpha, a0, f = alpha_new, a0_new, f_alpha
                hist.append(f)
        st = _FitState(w=w, alpha=alpha, a0=float(a0), K=K, objective=f, n_iter=n_iter,
                       converged=converged, n_line_searches=n_line_searches, history=hist,
                       n_extrapolated=n_extrapolated, gamma=self.gamma)
        if polish and not converged and n_iter < max_iter and np.any(w > 0):
            st = self._polish(st, lambda2, max_iter - n_iter, tol)
        return st

    # -- the finish: L-BFGS-B on the reduced objective ------------------------------
    def reduced_objective(self, w, lambda2, alpha, a0):
        r""":math:`F(w) = \min_{\alpha, \alpha_0} f(\alpha, \alpha_0, w)` and its gradient.

        The α-step (warm-started at ``alpha``, ``a0``) gives the minimiser;
        by the envelope theorem :math:`\nabla F(w) = A^\top \nabla_u L(y, u)
        + \lambda_1 A^\top\alpha + \lambda_2`, the gradient of the w-step's
        surrogate at ``w`` (zero-weight features: :math:`\lambda_2`).
        Returns ``(F, gradient, K, alpha, a0)``."""
        K = self.kernel_matrix(w, alpha)
        alpha, a0 = self.alpha_step(K, alpha, a0)
        f = self.objective(K, alpha, a0, w, lambda2)
        return f, self.reduced_gradient(K, alpha, a0, w, lambda2), K, alpha, a0

    def reduced_gradient(self, K, alpha, a0, w, lambda2):
        r""":math:`\nabla F(w) = A^\top(\nabla_u L + \lambda_1\alpha) + \lambda_2` at an optimal (α, α0) for w,
        without A itself where A would be formed by BLAS (on wide data forming A at every evaluation
        of the finish costs far more than the one product with a vector that is needed)."""
        act, Xa = self.active_data(w)
        grad = np.full(w.shape, float(lambda2))
        if act.size:
            u = self.k_alpha(K, alpha) + a0  # the α-step's own K α (remembered)
            v = self.loss.gradient(self.y, u) + self.lambda1 * alpha
            grad[act] += weight_gradient_product(Xa, w[act], alpha, v, K, self.kernel, gamma=self.gamma,
                                                 degree=self.degree, coef0=self.coef0, method=self.kernel_method)
        return grad

    def _polish(self, st, lambda2, budget, tol):
        r"""Finish a fit by L-BFGS-B on F over the box, on the features still active.

        The alternation's fixed points are the box-KKT points of F (the
        w-step's surrogate has F's gradient at the current point), so this
        ends where the alternation would, in far fewer steps when the
        alternation creeps.  Stops when an iteration lowers F by at most
        ``tol * max(1, |F|)`` (the alternation's rule) or after ``budget``
        iterations; every point it evaluates has its optimal α (the α-step
        warm-started at the best point so far, not at the last trial point,
        which may be far off), and the best one is returned (so the objective
        never increases).

        A projected L-BFGS-B step can put a weight on the bound 0 in one
        jump.  With λ2 > 0 that is a local minimum in the weight (F grows
        like λ2 w_j away from 0).  With λ2 = 0 it need not be: F is even in
        each weight, so its gradient vanishes at 0 whether or not a larger
        weight is better, and the finish could end in a corner the
        alternation would not reach (and a zero weight stays zero along the
        path).  Every kernel depends on the weights through their squares,
        :math:`F(w) = G(w \circ w)`, so at the corner the Hessian of F in the
        removed weights is diagonal, :math:`2\,\partial G/\partial s_j`
        (:meth:`squared_weight_slope`), and has no terms coupling them with
        the others.  When that slope is positive for every removed feature
        and the optimal coefficients are unique (:attr:`unique_coefficients`),
        the corner is a local minimum (F grows as any of them comes back)
        and the finish's point is kept.  Otherwise the alternation is also
        run on from the same point as the finish (without the finish,
        within the same budget), and the lower objective is kept."""
        act = np.flatnonzero(st.w > 0.0)
        if act.size == 0:
            return st
        first = self._lbfgsb_finish(st, act, lambda2, budget, tol)
        removed = act[first[0][act] == 0.0]
        if lambda2 > 0.0 or removed.size == 0:
            return self._finish_state(st, first)
        if self.unique_coefficients and np.all(self.squared_weight_slope(first[0], first[2], first[3], removed) > 0.0):
            return self._finish_state(st, first)
        alt = self.fit(st.w, lambda2, alpha=st.alpha, a0=st.a0, max_iter=budget, tol=tol, K=st.K, polish=False)
        if alt.objective < first[4]:
            st.n_iter += alt.n_iter
            st.converged = alt.converged
            st.w, st.K, st.alpha, st.a0, st.objective = alt.w, alt.K, alt.alpha, alt.a0, alt.objective
            st.history.extend(alt.history[1:])
            st.n_line_searches += alt.n_line_searches
            st.n_extrapolated += alt.n_extrapolated
            return st
        return self._finish_state(st, (*first[:5], first[5] + alt.n_iter, first[6]))

    @property
    def unique_coefficients(self):
        """Whether the α-step's minimiser is unique at every weight vector: for the rbf kernel
        (strictly positive definite on distinct rows) and for the squared loss (K + λ1 I is).
        Where it is not (the polynomial and linear kernels of a few features with a
        classification loss), F's slope in a squared weight is the least slope over the
        optimal α (Danskin), which the slope at one of them can exceed."""
        return self.kernel == "rbf" or not self.intercept

    def squared_weight_slope(self, w, alpha, a0, features):
        r""":math:`\partial F / \partial s_j`, :math:`s_j = w_j^2`, for the zero-weight ``features``
        at ``w`` (``alpha``, ``a0``: the optimal coefficients at ``w``).

        F depends on the weights through their squares, so :math:`\partial F/\partial w_j
        = 2 w_j\, \partial F/\partial s_j` and the slope in :math:`s_j` is the weight
        gradient at a small weight :data:`SLOPE_WEIGHT` divided by twice that weight, with
        the kernel at that weight and the coefficients optimal at ``w`` (the kernel and the
        optimal coefficients move with the squared weight: the slope's relative error is of
        the order of :data:`SLOPE_WEIGHT` squared).  A positive slope: F
        grows as the feature comes back.  The penalty λ2 is left out (it is the slope of
        :math:`\lambda_2 w_j`, not of :math:`s_j`)."""
        features = np.asarray(features)
        w = np.array(w, dtype=float)
        w[features] = SLOPE_WEIGHT
        cache = self._ka_cache
        try:
            grad = self.reduced_gradient(self.kernel_matrix(w), alpha, a0, w, 0.0)
        finally:
            self._ka_cache = cache  # the fit's remembered products are left as they were
        return grad[features] / (2.0 * SLOPE_WEIGHT)

    def _finish_state(self, st, result):
        """``st`` updated with the finish's ``result`` (its point only if it lowered f)."""
        w, K, alpha, a0, f, nit, status = result
        st.n_iter += nit
        # status 1: the iteration limit; 2: no further decrease along the quasi-Newton direction
        # (stationary to rounding, as the alternation's failed line search)
        st.converged = status != 1
        if f < st.objective:
            st.w, st.K, st.alpha, st.a0, st.objective = w, K, alpha, a0, f
            st.history.append(f)
        return st

    def _lbfgsb_finish(self, st, act, lambda2, budget, tol):
        """L-BFGS-B on F over the box for the features ``act``, from ``st``; returns the best
        point seen: (w, K, α, α0, F, iterations, scipy status)."""
        p = st.w.size
        best = {"f": st.objective, "state": (st.w, st.K, st.alpha, float(st.a0))}
        warm = {"alpha": st.alpha, "a0": st.a0}  # the α of the best point

        def fun(wa):
            w = np.zeros(p)
            w[act] = np.clip(wa, 0.0, 1.0)
            w[w <= ZERO_TOL] = 0.0
            f, grad, K, alpha, a0 = self.reduced_objective(w, lambda2, warm["alpha"], warm["a0"])
            if f < best["f"]:
                warm["alpha"], warm["a0"] = alpha, a0
                best["f"] = f
                best["state"] = (w, K, alpha, float(a0))
            return f, grad[act]

        res = scipy.optimize.minimize(fun, st.w[act], jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * act.size,
                                      options={"maxiter": budget, "maxfun": 2 * budget, "ftol": tol, "gtol": 0.0})
        return (*best["state"], best["f"], int(res.nit), int(res.status))

    def _extrapolate(self, w, alpha, a0, f, w_prev, alpha_prev, a0_prev, t, lambda2):
        """One extrapolated point along the last iteration's displacement.

        ``(w, α, α0) + t · (that displacement)``, the weights clipped to the
        box; returned (w, K, α, α0, f) only when it lowers f, else None."""
        w_e = np.clip(w + t * (w - w_prev), 0.0, 1.0)
        w_e[w_e <= ZERO_TOL] = 0.0
        if np.array_equal(w_e, w):
            return None
        alpha_e = alpha + t * (alpha - alpha_prev)
        a0_e = a0 + t * (a0 - a0_prev)
        K_e = self.kernel_matrix(w_e, alpha_e)
        f_e = self.objective(K_e, alpha_e, a0_e, w_e, lambda2)
        if f_e < f:
            return w_e, K_e, alpha_e, a0_e, f_e
        return None


@dataclass
class _FitState:
    w: np.ndarray
    alpha: np.ndarray
    a0: float
    K: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    n_line_searches: int
    history: list
    n_extrapolated: int = 0
    gamma: float = float("nan")  # the rbf scale of the fit


def _ridge_solve(K, y, lam):
    """(K + lam I)^-1 y by Cholesky, with a growing ridge if it fails numerically."""
    n = K.shape[0]
    M = K.copy()
    ridge = lam
    scale = max(float(np.max(np.abs(np.diag(K)), initial=0.0)), 1.0)
    for attempt in range(12):
        M[np.diag_indices(n)] = np.diag(K) + ridge
        try:
            c = scipy.linalg.cho_factor(M, lower=True, overwrite_a=False, check_finite=False)
            return scipy.linalg.cho_solve(c, y, check_finite=False)
        except np.linalg.LinAlgError:
            ridge = max(ridge * 10.0, 1e-12 * scale)
    raise np.linalg.LinAlgError("KNIFE: the kernel matrix could not be factorised even with a ridge "
                                f"of {ridge:.1e}; the data may contain huge values.")


#: a predicted decrease below this fraction of |f| is rounding (the α-step's Newton loop stops)
_EPS_DECREASE = 4.0 * np.finfo(float).eps


def _newton_alpha(K, y, loss, lam1, alpha, a0, *, tol=1e-10, max_iter=100, restrict=True, Ka=None):
    r"""Newton/IRLS for :math:`\min L(y, K\alpha + \alpha_0) + \lambda_1 \alpha^\top K\alpha`.

    The Newton system :math:`H\Delta = -G`, :math:`H = [[KDK + 2\lambda_1 K,
    KD1], [1^\top DK, 1^\top D1]]`, is solved through the K-preconditioned
    system :math:`(DK + 2\lambda_1 I)\,d\alpha + D1\,d\alpha_0 = -(g +
    2\lambda_1\alpha)`, :math:`1^\top D(K d\alpha + 1 d\alpha_0) = -1^\top g`,
    whose solution solves :math:`H\Delta = -G` even when K is singular.  With
    :math:`S = D^{1/2}` and :math:`v = K d\alpha + 1 d\alpha_0` it reduces to
    one Cholesky factorisation of the SPD matrix :math:`I + SKS/(2\lambda_1)`
    and a scalar equation for :math:`d\alpha_0`.  Armijo backtracking on the
    objective.

    Rows with :math:`D_i = 0` (for the hinge losses: the rows outside the
    margin, usually most of them) make that matrix the identity on their
    rows and columns and the right-hand sides zero there, so only the block
    of the rows with :math:`D_i > 0` is formed and factorised
    (``restrict=True``; ``restrict=False`` factorises the whole n x n
    matrix, the same solution in exact arithmetic: kept for tests).

    When no row has curvature but the gradient is not zero (the huberized
    hinge with every margin in its linear part, e.g. at α = 0 with
    δ <= 1), the Newton matrix is singular in α0; D is then replaced by the
    loss's curvature bound on the rows with a non-zero gradient (a
    majorising quadratic: a descent direction, the Armijo search decides
    the step).

    ``Ka``: ``K @ alpha`` if known.  Returns ``(alpha, a0, K @ alpha)``.
    """
    n = K.shape[0]
    alpha = alpha.copy()
    Ka = K @ alpha if Ka is None else Ka.copy()
    two_l = 2.0 * lam1

    def obj(Ka_, alpha_, a0_):
        return loss.value(y, Ka_ + a0_) + lam1 * float(alpha_ @ Ka_)

    F = obj(Ka, alpha, a0)
    for _ in range(max_iter):
        u = Ka + a0
        g = loss.gradient(y, u)
        D = loss.hessian_diag(y, u)
        r1 = g + two_l * alpha
        r2 = float(g.sum())
        scale = max(1.0, float(np.max(np.abs(g))))
        # r2 is a sum of n terms: its rounding floor grows with sum |g_i|, not with max |g_i|
        if float(np.max(np.abs(r1))) <= tol * scale and abs(r2) <= tol * max(scale, float(np.abs(g).sum())):
            break
        if not np.any(D[g != 0.0] > 0.0):
            D = np.where(g != 0.0, loss.curvature_bound, D)
        S = np.sqrt(D)
        rows = np.flatnonzero(D > 0.0) if restrict else np.arange(n)
        Kr1 = rows_matvec(K, rows, r1)  # (K r1)[rows]; the full K r1 enters v below, with K S z
        Sv = S[rows]
        M = K[np.ix_(rows, rows)] if rows.size < n else K.copy()
        M *= Sv[:, None]
        M *= Sv[None, :] / two_l
        M[np.diag_indices(rows.size)] += 1.0
        rhs = np.column_stack([-Sv * Kr1 / two_l, Sv])
        if rows.size == 0:  # no curvature and no loss gradient: only the ridge acts
            Z = np.zeros((0, 2))
        else:
            try:
                cf = scipy.linalg.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
                Z = scipy.linalg.cho_solve(cf, rhs, check_finite=False)
            except np.linalg.LinAlgError:
                Z = np.linalg.lstsq(M, rhs, rcond=None)[0]
        za, zb = Z[:, 0], Z[:, 1]
        den = float(Sv @ zb)
        db = (-r2 - float(Sv @ za)) / (den + 1e-12 * max(1.0, n * float(np.max(D, initial=0.0))) + 1e-300)
        z = za + db * zb
        # K (r1 + S z): one full product (no n x |rows| copy of K)
        r1_Sz = r1.copy()
        r1_Sz[rows] += Sv * z
        v = -(K @ r1_Sz) / two_l + db
        da = -(r1 + D * v) / two_l
        Kd = v - db  # K @ da
        slope = float(r1 @ Kd) + r2 * db
        if not slope < -_EPS_DECREASE * max(1.0, abs(F)):
            break  # the predicted decrease is below the rounding of F: no step can lower it measurably
        t = 1.0
        while t > 1e-12:
            F_new = obj(Ka + t * Kd, alpha + t * da, a0 + t * db)
            if F_new <= F + 1e-4 * t * slope:
                break
            t *= 0.5
        if t <= 1e-12:
            break
        alpha += t * da
        Ka += t * Kd
        a0 += t * db
        F = F_new
    return alpha, float(a0), Ka

def knife_wstep_problem(X, y, *, kernel="rbf", lambda1=1.0, lambda2=1.0, gamma=None, degree=2, coef0=1.0):
    r"""KNIFE's first weight step from w = 1 as a convex problem every backend solves.

    The squared-loss problem on ``X`` and ``y`` as given (standardise and
    centre them first, as the estimators do): the α-step at w = 1, then the
    w-step's linearised surrogate
    :math:`\|y - u^0 - A w\|^2 + \lambda_1 \alpha^\top A w + \lambda_2 1^\top w`
    over the box (``numkfs cross-check knife-wstep``).

    Parameters
    ----------
    X : ndarray (n, p)
        Data, one row per sample and one column per feature.
    y : ndarray (n,)
        Response.
    kernel : {"rbf", "linear", "poly"}, default="rbf"
        Feature-weighted kernel.
    lambda1, lambda2 : float
        Ridge and weight penalties.
    gamma : float, optional
        RBF scale (default 1/p).
    degree, coef0 : int, float
        Polynomial kernel.

    Returns
    -------
    KnifeWeightStep
        A :class:`~numkfs.solvers.ConvexProblem` (variable ``w``).

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.methods.knife import knife_wstep_problem
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((30, 4))
    >>> problem = knife_wstep_problem(X, X[:, 0] - X[:, 0].mean(), lambda2=0.5)
    >>> type(problem).__name__
    'KnifeWeightStep'
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    gamma = 1.0 / X.shape[1] if gamma is None else float(gamma)
    kn = _Knife(X, y, kernel=kernel, loss="squared", lambda1=lambda1, gamma=gamma, degree=degree,
                coef0=coef0, delta=1.0, solver="auto")
    w = np.ones(X.shape[1])
    K = kn.kernel_matrix(w)
    alpha, a0 = kn.alpha_step(K, np.zeros(X.shape[0]), 0.0)
    act, A, u0, c = kn.wstep_data(K, alpha, a0, w, lambda2)
    return KnifeWeightStep(kn.loss, y, A, u0, c, w0=w[act])
