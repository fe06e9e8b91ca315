r"""KNIFE: kernel iterative feature extraction (Allen, weighted kernels).

Problem (paper eq. 2, the KNIFE user guide (``docs/guide/knife.md``)):

.. math::

    \min_{\alpha, \alpha_0, w}\; f(\alpha, w) = L(y, K_w\alpha + \alpha_0)
        + \lambda_1 \alpha^\top K_w \alpha + \lambda_2 \textstyle\sum_j w_j,
    \qquad 0 \le w_j \le 1,

with a feature-weighted kernel :math:`K_w` (:mod:`numkfs.kernels.weighted`,
weights squared inside the kernel) and an intercept :math:`\alpha_0` for
the classification losses only.

Algorithm (paper Algorithms 1 and 3), one iteration from :math:`(\alpha, w)`:

1. α-step: :math:`\alpha = \arg\min L(y, K_w\alpha + \alpha_0) + \lambda_1
   \alpha^\top K_w\alpha`; squared loss: :math:`(K_w + \lambda_1 I)\alpha = y`
   by Cholesky (a growing ridge guard if the factorisation fails
   numerically); smooth classification losses: Newton/IRLS on
   :math:`(\alpha, \alpha_0)` with an Armijo line search.
2. w-step: minimise the linearised surrogate
   :math:`L(y, u^0 + A w) + \lambda_1 \alpha^\top A w + \lambda_2 1^\top w`
   over the box, :math:`A = \sum_j \alpha_j \partial k/\partial w`,
   :math:`u^0 = K_w\alpha + \alpha_0 - A w_{\mathrm{prev}}` (so the n x n
   matrix B of the paper is never formed), with the native solver
   (:mod:`numkfs.solvers.native.knife_wstep`) or a CVXPY backend.
3. If :math:`f(\alpha, w_{\mathrm{new}}) > f(\alpha, w_{\mathrm{prev}})`,
   backtrack on :math:`w_{\mathrm{prev}} + s (w_{\mathrm{new}} -
   w_{\mathrm{prev}})`, :math:`s = 1/2, 1/4, \dots` (the line search of the
   paper's Algorithm 3, by backtracking as the paper allows); if no
   :math:`s \ge 2^{-30}` decreases :math:`f` the point is stationary and the
   fit stops.

4. Extrapolation: :math:`(w, \alpha, \alpha_0) + t\,\Delta` along the
   iteration's displacement Δ, the weights clipped to the box, kept only if
   it lowers f (t doubles after a success, up to 64, and shrinks to a
   quarter, at least 1/2, after a failure).  The plain alternation creeps
   where the weights move in a nearly fixed direction (breast cancer: 100
   iterations at a relative decrease of ~3e-6 each, ending 3e-3 above the
   limit).
5. After 8 iterations without convergence the fit is finished by L-BFGS-B
   on the reduced objective :math:`F(w) = \min_{\alpha,\alpha_0} f` over the
   box on the active features (:meth:`_Knife.reduced_objective`): by the
   envelope theorem :math:`\nabla F = A^\top\nabla_u L + \lambda_1
   A^\top\alpha + \lambda_2`, the w-step surrogate's gradient, so its
   box-KKT points are the alternation's fixed points.  Same stopping rule
   (L-BFGS-B's ``ftol = tol``); its iterations count in ``n_iter``.

The module switches ``_EXTRAPOLATE = False`` and ``_POLISH_AFTER = None``
run the paper's plain alternation (tests compare against it).

The objective is recorded after every α-step, w-step, accepted
extrapolation and improving L-BFGS-B point (``objective_history``); by
construction it never increases.  The returned α is the α-step's answer
for the returned weights.

Decisions where the paper and the user guide leave room:

* The box is :math:`0 \le w \le 1` (the paper writes :math:`w < 1`, which
  has no minimiser in general; the closed box is the standard reading).
* Losses are sums (not means), so the paper's default :math:`\lambda_1 = 1`
  applies; :math:`\gamma = 1/p` by default, p counting every column of X.
  The weights lie in [0, 1], so they can widen the kernel of a feature but
  not narrow it beyond :math:`\gamma`: with few features kept, 1/p is too
  wide a kernel (a sine of one feature among 30 is fitted as almost
  linear).  ``gamma="auto"`` (the CV estimators' default) fits each path
  point with :math:`\gamma = 1/s`, s the number of features selected at its
  warm start (growing by at most :data:`AUTO_GAMMA_GROWTH` per point).
* Weights that reach exactly 0 stay 0 (:math:`\partial k/\partial w_k
  \propto w_k`, "sticky"), and kernels and A are computed on the active
  features only.  Weights below ``1e-12`` are set to 0.  The linearised
  w-step can put a weight on the bound 0 even at λ2 = 0 (the objective
  still decreases, so the step is accepted); such a weight then stays 0.
  Random restarts (``n_restarts``) are the remedy the paper recommends.
* The λ2 path starts at 0 and its top is *found*: at the λ2 = 0 solution
  the w-step surrogate has :math:`w = 0` as minimiser exactly when
  :math:`\lambda_2 \ge \max_k -\partial_k S(0)` (its KKT condition at 0);
  that value is then verified by a warm-started fit and doubled until every
  weight is zero.  The path has exactly ``n_lambdas`` points: once every
  weight is zero the remaining points are that model (copied, not refitted);
  if the warm-started path still has non-zero weights at the top, its last
  point keeps them (the walk does not continue past the grid).

Speed without changing the iterates (tested against a no-shortcut mode,
``_FAST = False``): the Newton α-step factorises only the rows with
curvature (for the hinge losses, the margin violators); the weight step runs
its coordinate descent on the n x p factor instead of the p x p matrix when
n < p; one-vs-rest problems share their λ2 = 0 fits between the top search
and the path (:func:`knife_ovr_paths`); K α is computed once per (K, α), in
the kernel's own pass when the kernel is formed
(:func:`~numkfs.kernels.weighted.weighted_kernel_product`).  The α-step's
Newton loop stops when its predicted decrease is below the rounding of the
objective (at a constant kernel, w = 0, it used to run to its limit).

Linear kernel and eq. 4 (the garrote user guide, ``docs/guide/garrote.md``).  With :math:`K_w = X\,\mathrm{diag}(w^2)X^\top`
and :math:`\tilde\beta = \mathrm{diag}(w^2) X^\top \alpha`, the squared-loss
objective is

.. math::

    f = \|y - X\tilde\beta\|^2 + \lambda_1 \sum_j \tilde\beta_j^2 / w_j^2
        + \lambda_2 \sum_j w_j ,

i.e., with :math:`v = w^2`, :math:`\|y - X\tilde\beta\|^2 + \lambda_1
\sum_j \tilde\beta_j^2/v_j + \lambda_2 \sum_j \sqrt{v_j}`.  Eq. 4 (the
jointly convex ``quad_over_lin`` form) has :math:`\lambda_2 \sum_j v_j`
instead: it is KNIFE with weights entering the kernel *linearly*, not the
paper's squared weights, so the two problems have different solutions at
the same :math:`(\lambda_1, \lambda_2)` (KNIFE's profile penalty is
:math:`\propto |\tilde\beta_j|^{2/3}`, eq. 4's is lasso/ridge-like).  What
holds exactly (tested in ``tests/test_knife.py``): (i) at λ2 = 0 both are
ridge regression; (ii) for fixed w the α-step of KNIFE and the β̃-step of
eq. 4 with :math:`v = w^2` give the same fitted values and the same
data-plus-ridge value; (iii) a KNIFE stationary point :math:`w^*` is the
global solution of eq. 4 with the reweighted penalty
:math:`\sum_j \lambda_2/(2 w_j^*)\, v_j` (the tangent of the concave
:math:`\lambda_2\sqrt{v_j}` at :math:`v_j^* = w_j^{*2}`), with
:math:`v_j = 0` imposed where :math:`w^*_j = 0`.
"""
from __future__ import annotations

import contextlib
import numbers
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.optimize

from .._linalg import rows_matvec
from .._progress import progress_bar
from .._threads import SERIAL_MAX_SAMPLES as _SERIAL_MAX_SAMPLES, limit_threads, thread_limits
from .._validation import (Interval, NoneOr, Options, check_binary_labels, check_random_state,
                           check_X, check_y, constant_columns, validate_params, warn_not_converged)
from ..kernels.weighted import KERNELS, weight_gradient_matrix, weighted_kernel, weighted_kernel_product
from ..losses import get_loss
from ..model_selection import parallel_map, refine_walk
from ..paths import SELECTION_TOL, FeaturePath, support_mask
from ..solvers.native.knife_wstep import KnifeWeightStep, knife_wstep_kkt_residual, solve_knife_wstep

__all__ = ["knife", "knife_path", "knife_ovr_paths", "knife_lambda2_max", "KNIFEResult", "knife_objective", "knife_gradient_w",
           "path_decision_function", "REGRESSION_LOSSES", "CLASSIFICATION_LOSSES", "KNIFE_CONSTRAINTS"]

REGRESSION_LOSSES = ("squared",)
CLASSIFICATION_LOSSES = ("squared_hinge", "huberized_hinge", "logistic")

#: Fits with at most this many samples run single-threaded (numkfs's thread
#: policy, :data:`numkfs._threads.SERIAL_MAX_SAMPLES`).
SERIAL_MAX_SAMPLES = _SERIAL_MAX_SAMPLES["knife"]

#: Weights at or below this are set to exactly zero (and stay there).
ZERO_TOL = 1e-12

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
    "n_lambdas": [Interval(numbers.Integral, 2, None, closed="left")],
    "lambda_min_ratio": [Interval(numbers.Real, 0, 1, closed="neither")],
    "max_refine": [Interval(numbers.Integral, 0, None, closed="left"), NoneOr],
    "approximation": [Options(("exact", "nystroem", "auto"))],
    "n_components": [Interval(numbers.Integral, 1, None, closed="left"), NoneOr],
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

#: how many (K, α, Kα) triples :meth:`_Knife.k_alpha` remembers (two: an iteration's point and its
#: extrapolated point; each holds its n x n K alive)
_KA_CACHE = 2

_SOLVERS = ("auto", "native", "ECOS", "SCS", "CLARABEL")

#: Module switch for tests: False runs every fit without the shortcuts (see ``_Knife.fast``).
_FAST = True
#: Module switch for tests: False runs the paper's plain alternation, without extrapolation.
_EXTRAPOLATE = True
#: Longest extrapolation, in units of one iteration's displacement.
_EXTRAPOLATION_MAX = 64.0
#: Iterations of the alternation after which an unconverged fit is finished by L-BFGS-B on the
#: reduced objective (None: never; the paper's alternation to the end, kept for tests).
_POLISH_AFTER = 8


def _check_solver(solver, caller):
    names = [solver] if isinstance(solver, str) else list(solver)
    for s in names:
        if not isinstance(s, str) or s.upper() not in {x.upper() for x in _SOLVERS}:
            raise ValueError(f"The 'solver' parameter of {caller} must be one of {list(_SOLVERS)} "
                             f"(or a list of them). Got {solver!r} instead.")


@contextlib.contextmanager
def _numba_threads_for(n: int):
    """Problems up to :data:`SERIAL_MAX_SAMPLES` samples run serially (Numba
    and BLAS): a parallel region costs more than its work there, and on a
    shared machine the threads wait for each other (measured 7x slower at
    n = 1000 with two threads on the loaded 2-core test machine,
    benchmarks/results/knife_speed.md)."""
    import threading

    numba_threads, blas_threads = thread_limits("knife", n)
    if threading.current_thread() is not threading.main_thread():
        blas_threads = None  # process-wide: the CV estimators limit BLAS around their pool of fold threads
    with limit_threads(numba_threads, blas_threads):
        yield


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
        from ..solvers import solve

        if self._problem is None:
            self._problem = KnifeWeightStep(self.loss, self.y, A, u0, c, w0=wa)
        else:
            self._problem.set_data(A, u0, c, w0=wa)
        if isinstance(solver, str) and solver.lower() == "auto":
            solver = ["CLARABEL", "ECOS", "SCS"]
        res = solve(self._problem, solver=solver, tol=1e-9)
        return np.asarray(res.solution["w"], dtype=float)

    # -- one KNIFE fit from a start ---------------------------------------------
    def fit(self, w, lambda2, *, alpha=None, a0=0.0, max_iter=100, tol=1e-6, K=None):
        """KNIFE from the start ``w`` (and ``alpha``, ``a0``); ``K``: the kernel at ``w`` if known
        (a warm start from a fitted state)."""
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
        n_alternate = max_iter if _POLISH_AFTER is None else min(max_iter, _POLISH_AFTER)
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
        if not converged and n_iter < max_iter and np.any(w > 0):
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
        act, A, _, c = self.wstep_data(K, alpha, a0, w, lambda2)
        grad = np.full(w.shape, float(lambda2))
        if act.size:
            u = self.k_alpha(K, alpha) + a0  # the α-step's own K α (remembered)
            grad[act] = A.T @ self.loss.gradient(self.y, u) + c
        return f, grad, K, alpha, a0

    def _polish(self, st, lambda2, budget, tol):
        """Finish a fit by L-BFGS-B on F over the box, on the features still active.

        The alternation's fixed points are the box-KKT points of F (the
        w-step's surrogate has F's gradient at the current point), so this
        ends where the alternation would, in far fewer steps when the
        alternation creeps.  Stops when an iteration lowers F by at most
        ``tol * max(1, |F|)`` (the alternation's rule) or after ``budget``
        iterations; every point it evaluates has its optimal α (the α-step
        warm-started at the best point so far, not at the last trial point,
        which may be far off), and the best one is returned (so the objective
        never increases)."""
        act = np.flatnonzero(st.w > 0.0)
        p = st.w.size
        best = {"f": st.objective, "state": st}
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
                st.history.append(f)
            return f, grad[act]

        res = scipy.optimize.minimize(fun, st.w[act], jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * act.size,
                                      options={"maxiter": budget, "maxfun": 2 * budget, "ftol": tol, "gtol": 0.0})
        st.n_iter += int(res.nit)
        # status 1: the iteration limit; 2: no further decrease along the quasi-Newton direction
        # (stationary to rounding, as the alternation's failed line search)
        st.converged = res.status != 1
        if best["state"] is not st:
            st.w, st.K, st.alpha, st.a0 = best["state"]
            st.objective = best["f"]
        return st

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


# --------------------------------------------------------------------------
# results


@dataclass
class KNIFEResult:
    """The outcome of :func:`knife`.

    Attributes
    ----------
    weights : ndarray (p,)
        Feature weights w in [0, 1].
    alpha : ndarray (n,)
        Kernel coefficients.
    intercept : float
        α0 (0 for regression).
    objective : float
        f(α, w) at the returned point.
    objective_history : ndarray
        f after every α-step and w-step of the best start (non-increasing).
    n_iter : int
        Outer iterations of the best start.
    converged : bool
    restart_objectives : ndarray
        Final objective of every start (the best one is returned).
    classes : ndarray or None
        Original labels for classification (``classes[1]`` is +1).
    params : dict
        kernel, gamma, degree, coef0, loss, lambda1, lambda2, delta.
    X_fit : ndarray
        The training data (needed to predict).
    """

    weights: np.ndarray
    alpha: np.ndarray
    intercept: float
    objective: float
    objective_history: np.ndarray
    n_iter: int
    converged: bool
    restart_objectives: np.ndarray
    classes: np.ndarray | None
    params: dict
    X_fit: np.ndarray = field(repr=False)
    n_line_searches: int = 0

    def decision_function(self, X):
        """:math:`K_w(X, X_{fit})\\alpha + \\alpha_0` for new points."""
        return _decision(self.X_fit, X, self.weights, self.alpha, self.intercept, self.params)

    def predict(self, X):
        d = self.decision_function(X)
        if self.classes is None:
            return d
        return np.where(d > 0, self.classes[1], self.classes[0])


def _decision(X_fit, X, w, alpha, a0, params):
    X = np.asarray(X, dtype=float)
    if params.get("landmarks") is not None:  # Nyström: K_w(X, landmarks) beta
        X_fit = X_fit[params["landmarks"]]
    act = np.flatnonzero(w > 0)
    Xa = np.ascontiguousarray(X[:, act])
    Ya = np.ascontiguousarray(X_fit[:, act])
    Kx = weighted_kernel(Xa, w[act], params["kernel"], Y=Ya, gamma=float(params["gamma"]),
                         degree=params["degree"], coef0=params["coef0"])
    return Kx @ alpha + a0


def path_decision_function(path: FeaturePath, X_fit, X, index=None):
    """Decision values of the models along a KNIFE path for new points.

    Parameters
    ----------
    path : FeaturePath
        From :func:`knife_path` (its ``extra`` holds α, α0 and the kernel).
    X_fit : ndarray (n, p)
        The training data of the path.
    X : ndarray (m, p)
        Data, one row per sample and one column per feature.
    index : int, optional
        One path point; default every point.

    Returns
    -------
    ndarray (m,) for one point, else (m, n_points)
    """
    params = path.extra["params"]
    gammas = path.extra.get("gamma", np.full(path.n_points, params["gamma"]))
    X_fit = np.asarray(X_fit, dtype=float)
    idx = range(path.n_points) if index is None else [index]
    out = np.column_stack([_decision(X_fit, X, path.weights[i], path.extra["alpha"][i],
                                     path.extra["intercept"][i], {**params, "gamma": gammas[i]}) for i in idx])
    return out[:, 0] if index is not None else out


def knife_objective(X, y, w, alpha, intercept=0.0, *, kernel="rbf", loss="squared", lambda1=1.0,
                    lambda2=0.0, gamma=None, degree=2, coef0=1.0, delta=1.0) -> float:
    """The KNIFE objective f(α, w) (for checks; y in ±1 for classification)."""
    X = np.asarray(X, dtype=float)
    gamma = 1.0 / X.shape[1] if gamma is None else gamma
    w = np.asarray(w, dtype=float)
    K = weighted_kernel(X, w, kernel, gamma=gamma, degree=degree, coef0=coef0)
    Ka = K @ alpha
    L = get_loss(loss, delta=delta)
    return L.value(np.asarray(y, float), Ka + intercept) + lambda1 * float(alpha @ Ka) + lambda2 * float(w.sum())


def knife_gradient_w(X, y, w, alpha, intercept=0.0, *, kernel="rbf", loss="squared", lambda1=1.0,
                     lambda2=0.0, gamma=None, degree=2, coef0=1.0, delta=1.0) -> np.ndarray:
    r"""Gradient of f in w: :math:`A^\top \ell'(u) + \lambda_1 A^\top\alpha + \lambda_2`."""
    X = np.asarray(X, dtype=float)
    gamma = 1.0 / X.shape[1] if gamma is None else gamma
    w = np.asarray(w, dtype=float)
    K = weighted_kernel(X, w, kernel, gamma=gamma, degree=degree, coef0=coef0)
    A = weight_gradient_matrix(X, w, alpha, K, kernel, gamma=gamma, degree=degree, coef0=coef0)
    L = get_loss(loss, delta=delta)
    u = K @ alpha + intercept
    return A.T @ L.gradient(np.asarray(y, float), u) + lambda1 * (A.T @ alpha) + lambda2


# --------------------------------------------------------------------------
# input handling shared by knife and knife_path


def _prepare(X, y, params, caller):
    validate_params(params, KNIFE_CONSTRAINTS, caller)
    _check_solver(params["solver"], caller)
    X = check_X(X, caller=caller)
    loss = params["loss"]
    if loss in CLASSIFICATION_LOSSES:
        y = check_y(y, X.shape[0], caller=caller, numeric=False)
        y_pm, classes = check_binary_labels(y, caller=caller)
    else:
        y_pm, classes = check_y(y, X.shape[0], caller=caller), None
    const = constant_columns(X, caller=caller)
    auto = isinstance(params["gamma"], str)  # "auto"
    gamma = 1.0 / X.shape[1] if params["gamma"] is None or auto else float(params["gamma"])
    from .knife_nystroem import knife_model  # it subclasses _Knife

    # the exact kernel (memory checked for n x n) or the Nyström basis (issue #26)
    model = knife_model(X, y_pm, approximation=params.get("approximation", "exact"),
                        n_components=params.get("n_components"), random_state=params.get("random_state"),
                        caller=caller, kernel=params["kernel"], loss=loss, lambda1=params["lambda1"], gamma=gamma,
                        degree=params["degree"], coef0=params["coef0"], delta=params["delta"],
                        solver=params["solver"], fast=_FAST, extrapolate=_EXTRAPOLATE)
    if auto and params["kernel"] == "rbf":
        model.gamma_rule = "support"
    public = {"kernel": params["kernel"], "gamma": gamma, "degree": int(params["degree"]),
              "coef0": float(params["coef0"]), "loss": loss, "lambda1": float(params["lambda1"]),
              "delta": float(params["delta"])}
    landmarks = getattr(model, "landmarks", None)  # rows of X the Nyström basis uses (None: exact)
    public.update(approximation="exact" if landmarks is None else "nystroem", landmarks=landmarks)
    return X, y_pm, classes, const, model, public


def _starts(rng, p, const, n_restarts, w0):
    starts = []
    if w0 is not None:
        w0 = np.broadcast_to(np.asarray(w0, dtype=float), (p,)).copy()
        if np.any((w0 < 0) | (w0 > 1)) or not np.all(np.isfinite(w0)):
            raise ValueError("KNIFE: w0 must lie in [0, 1].")
        starts.append(w0)
    while len(starts) < n_restarts:
        starts.append(rng.uniform(0.0, 1.0, p))
    for s in starts:
        s[const] = 0.0
    return starts


class _FitFrom:
    """``model.fit(start, ...)`` as a picklable callable (for joblib workers)."""

    def __init__(self, model, lambda2, max_iter, tol):
        self.model, self.lambda2, self.max_iter, self.tol = model, lambda2, max_iter, tol

    def __call__(self, start):
        return self.model.fit(start, self.lambda2, max_iter=self.max_iter, tol=self.tol)


def _best_start(model, starts, lambda2, max_iter, tol, n_jobs=None):
    """Fit from every start (in parallel with ``n_jobs``); return (best state,
    objective of every start).  The first start with the lowest objective
    wins, whatever ``n_jobs`` is."""
    states = parallel_map(_FitFrom(model, lambda2, max_iter, tol), starts, n_jobs)
    objs = [st.objective for st in states]
    return states[int(np.argmin(objs))], objs


def knife(
    X,
    y,
    *,
    kernel: str = "rbf",
    loss: str = "squared",
    lambda1: float = 1.0,
    lambda2: float = 0.0,
    gamma: float | None = None,
    degree: int = 2,
    coef0: float = 1.0,
    delta: float = 1.0,
    n_restarts: int = 1,
    solver="auto",
    max_iter: int = 100,
    tol: float = 1e-6,
    w0=None,
    random_state=None,
    n_jobs=None,
    approximation: str = "exact",
    n_components: int | None = None,
) -> KNIFEResult:
    r"""Fit KNIFE at one :math:`(\lambda_1, \lambda_2)`.

    .. math::

        \min_{\alpha, \alpha_0, 0 \le w \le 1} L(y, K_w\alpha + \alpha_0)
        + \lambda_1 \alpha^\top K_w\alpha + \lambda_2 \textstyle\sum_j w_j

    Parameters
    ----------
    X : array (n, p)
        Data; the paper assumes standardised columns (the estimators
        standardise, this function uses X as given).
    y : array (n,)
        Response (regression) or two class labels (classification losses).
    kernel : {"rbf", "linear", "poly"}
    loss : {"squared", "squared_hinge", "huberized_hinge", "logistic"}
    lambda1 : float > 0
        Ridge penalty on α (paper default 1 for summed losses).
    lambda2 : float >= 0
        L1 penalty on the weights.
    gamma : float, "auto" or None
        RBF scale; None: 1/p (p every column of X).  ``"auto"``: the scale
        of the selected features: after the fit at 1/p, refit warm-started
        with 1 / (number of selected features) (growing by at most
        :data:`AUTO_GAMMA_GROWTH` per refit), at most
        :data:`AUTO_GAMMA_ROUNDS` times, until it no longer changes; the
        scale used is ``params["gamma"]`` of the result.
    degree, coef0 : int, float
        Polynomial kernel :math:`(\sum_j w_j^2 x_j x'_j + c)^d`.
    delta : float
        Width of the huberized hinge.
    n_restarts : int
        Random starts :math:`w^{(0)} \sim U(0, 1)^p` (after ``w0`` if given);
        the lowest objective wins.
    solver : "auto", "native", "ECOS", "SCS", "CLARABEL" or a list
        Weight-step solver; "auto" is the native Numba solver (with a conic
        fall-back when it is not accurate).
    max_iter, tol : int, float
        Outer iterations; stop when an iteration decreases f by less than
        ``tol * max(1, |f|)``.
    w0 : array (p,), optional
        A starting point in [0, 1] (used as the first start).
    random_state : int, Generator or None
        Seed or generator for everything random; an int makes the result reproducible.
    n_jobs : int, optional
        joblib workers over the random starts (results do not depend on it).
    approximation : {"exact", "nystroem", "auto"}, default="exact"
        ``"exact"``: the n x n weighted kernel.  ``"nystroem"``: the
        weighted kernel through ``n_components`` landmark rows drawn
        uniformly with ``random_state``, the weights inside both kernel
        blocks (:mod:`numkfs.methods.knife_nystroem`; O(n m) memory, no
        n x n array); ``alpha`` then has one coefficient per landmark and
        ``params["landmarks"]`` holds their rows.  ``"auto"``: exact up to
        :data:`~numkfs.methods.knife_nystroem.AUTO_EXACT_MAX_SAMPLES` rows.
        The choice made is ``params["approximation"]``.
    n_components : int, optional
        Number of landmarks m, 1 <= m <= n; default
        ``min(n, DEFAULT_N_COMPONENTS)`` (500).

    Returns
    -------
    KNIFEResult

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs.methods.knife import knife
    >>> X, y, support = make_sinusoid(n_samples=60, random_state=0)
    >>> res = knife(X, y, lambda2=20.0, random_state=0)
    >>> bool(np.all(np.diff(res.objective_history) <= 1e-9 * abs(res.objective)))
    True
    """
    caller = "knife"
    params = dict(kernel=kernel, loss=loss, lambda1=lambda1, lambda2=lambda2, gamma=gamma, degree=degree,
                  coef0=coef0, delta=delta, n_restarts=n_restarts, max_iter=max_iter, tol=tol, solver=solver,
                  approximation=approximation, n_components=n_components, random_state=random_state)
    X, y_pm, classes, const, model, public = _prepare(X, y, params, caller)
    rng = check_random_state(random_state)
    with _numba_threads_for(X.shape[0]):
        best, objs = _best_start(model, _starts(rng, X.shape[1], const, n_restarts, w0), float(lambda2),
                                 max_iter, tol, n_jobs)
        for _ in range(AUTO_GAMMA_ROUNDS if model.gamma_rule else 0):
            if model.gamma_for(best.w, best.gamma) == best.gamma:
                break
            best = model.refit(best, float(lambda2), max_iter=max_iter, tol=tol)
    public["gamma"] = best.gamma
    if not best.converged:
        warn_not_converged("KNIFE", max_iter=max_iter, where=f"lambda2={float(lambda2):.4g}")
    public["lambda2"] = float(lambda2)
    return KNIFEResult(weights=best.w, alpha=best.alpha, intercept=best.a0, objective=best.objective,
                       objective_history=np.asarray(best.history), n_iter=best.n_iter,
                       converged=best.converged, restart_objectives=np.asarray(objs), classes=classes,
                       params=public, X_fit=X, n_line_searches=best.n_line_searches)


def _lambda2_top(model, st):
    """Smallest λ2 at which the w-step from the state ``st`` returns w = 0."""
    if not np.any(st.w > 0):
        return 0.0
    act, A, u0, c = model.wstep_data(st.K, st.alpha, st.a0, st.w, 0.0)
    g0 = A.T @ model.loss.gradient(model.y, u0) + c
    return max(0.0, float(np.max(-g0)))


def _find_top(model, st, max_iter, tol):
    """λ2 at which every weight is zero, from the state ``st`` (see the module docstring)."""
    top = _lambda2_top(model, st)
    if top <= 0:
        return 1.0
    for _ in range(60):  # verify: the warm-started fit at `top` must zero every weight
        probe = model.fit(st.w, top, alpha=st.alpha, a0=st.a0, max_iter=max_iter, tol=tol, K=st.K)
        if not np.any(probe.w > 0):
            break
        top *= 2.0
    return top


#: Defaults of the fitting keywords of :func:`knife` (shared with :func:`knife_lambda2_max`).
_FIT_DEFAULTS = dict(kernel="rbf", loss="squared", lambda1=1.0, gamma=None, degree=2, coef0=1.0, delta=1.0,
                     n_restarts=1, solver="auto", max_iter=100, tol=1e-6, approximation="exact", n_components=None)


def knife_lambda2_max(X, y, *, random_state=None, **params) -> float:
    r"""The top of the default λ2 grid of :func:`knife_path` (found, not guessed).

    KNIFE is fitted at λ2 = 0; the smallest λ2 for which the linearised
    w-step at that solution returns w = 0 is :math:`\max_k -\partial_k S(0)`
    (the KKT condition of the surrogate at 0); it is verified by a
    warm-started fit and doubled until every weight is zero.

    Parameters
    ----------
    X, y, random_state
        As in :func:`knife`.
    **params
        The fitting keywords of :func:`knife` (kernel, loss, lambda1, gamma,
        degree, coef0, delta, n_restarts, solver, max_iter, tol).
    """
    caller = "knife_lambda2_max"
    unknown = sorted(set(params) - set(_FIT_DEFAULTS))
    if unknown:
        raise TypeError(f"{caller} got unexpected keyword argument(s) {unknown}; "
                        f"it accepts {sorted(_FIT_DEFAULTS)} and random_state.")
    params = {**_FIT_DEFAULTS, **params}
    X, y_pm, classes, const, model, public = _prepare(X, y, {**params, "random_state": random_state}, caller)
    rng = check_random_state(random_state)
    with _numba_threads_for(X.shape[0]):
        st, _ = _best_start(model, _starts(rng, X.shape[1], const, params["n_restarts"], None), 0.0,
                            params["max_iter"], params["tol"])
        return float(_find_top(model, st, params["max_iter"], params["tol"]))


def _zero_state(st, lambda2):
    """The fit at ``lambda2`` warm-started from a state whose weights are all zero.

    With every weight zero the kernel no longer depends on w, the w-step
    returns w = 0 (zeros are sticky) and the α-step from the previous
    (optimal) α returns it: the fit would reproduce ``st`` (the λ2 term is
    λ2 · 0).  No iteration is run (``n_iter = 0``)."""
    return _FitState(w=st.w.copy(), alpha=st.alpha.copy(), a0=st.a0, K=st.K, objective=st.objective, n_iter=0,
                     converged=True, n_line_searches=0, history=[st.objective], gamma=st.gamma)


class _PathRecorder:
    """The per-point arrays of a KNIFE path."""

    def __init__(self):
        self.grid, self.rows, self.alphas, self.a0s, self.objs, self.iters, self.conv, self.gammas = (
            [] for _ in range(8))
        self.n_inserted = 0

    def add(self, lam, st):
        self.gammas.append(st.gamma)
        self.grid.append(float(lam))
        self.rows.append(st.w.copy())
        self.alphas.append(st.alpha.copy())
        self.a0s.append(st.a0)
        self.objs.append(st.objective)
        self.iters.append(st.n_iter)
        self.conv.append(st.converged)


def _walk(models, starts, grid, *, max_iter, tol, stop_at_zero=False, bar=None, max_refine=0,
          extend_to_zero=False):
    """Warm-started fits along ``grid`` of one or several problems (one-vs-rest) on the same grid;
    ``starts[k]`` is problem k's fit at ``grid[0]``.  Returns one :class:`_PathRecorder` per problem.

    ``max_refine``: at most this many points inserted where the support (of
    all problems together) jumps (:func:`numkfs.model_selection.refine_walk`).
    ``extend_to_zero``: a path still selecting features at the end of the
    grid is continued by doubling λ2 (at most :data:`AUTO_EXTEND_MAX` times)
    until every weight is zero (``gamma="auto"``, whose top moves with the
    bandwidth)."""

    def step(states, lam):
        new = []
        for model, state in zip(models, states):
            if model.fast and not np.any(state.w > 0):
                new.append(_zero_state(state, lam))
            else:
                new.append(model.refit(state, lam, max_iter=max_iter, tol=tol))
        if bar is not None:
            bar.update(1)
        return new

    def support(states):
        return np.any([support_mask(state.w, SELECTION_TOL["knife"]) for state in states], axis=0)

    def all_zero(states):
        return not any(np.any(state.w > 0) for state in states)

    values, states, n_in = refine_walk(step, grid, list(starts), support=support, max_inserted=max_refine,
                                       stop=all_zero if stop_at_zero else None)
    if extend_to_zero and not all_zero(states[-1]) and values[-1] > 0:
        more = values[-1] * 2.0 ** np.arange(0, AUTO_EXTEND_MAX + 1)
        v2, s2, n2 = refine_walk(step, more, states[-1], support=support, max_inserted=max_refine - n_in,
                                 stop=all_zero)
        values, states, n_in = values + v2[1:], states + s2[1:], n_in + n2
    recs = []
    for k in range(len(models)):
        rec = _PathRecorder()
        for lam, point in zip(values, states):
            rec.add(lam, point[k])
        rec.n_inserted = n_in
        recs.append(rec)
    return recs


def _default_grid(top, n_lambdas, lambda_min_ratio):
    """0, then ``n_lambdas - 1`` log-spaced values ending at ``top`` (just ``top`` when n_lambdas = 2)."""
    if n_lambdas == 2:
        return np.array([0.0, top])
    return np.concatenate([[0.0], np.geomspace(lambda_min_ratio * top, top, n_lambdas - 1)])


def _warn_path_not_converged(rec, max_iter, label="KNIFE"):
    bad = [lam for lam, c in zip(rec.grid, rec.conv) if not c]
    if bad:
        shown = ", ".join(f"{v:.4g}" for v in bad[:5]) + (", ..." if len(bad) > 5 else "")
        warn_not_converged(label, max_iter=max_iter, stacklevel=4,
                           where=f"{len(bad)} of {len(rec.grid)} path points (lambda2={shown})")


def _to_path(rec, *, top, public, classes, feature_names, true_support):
    extra = {"alpha": np.asarray(rec.alphas), "intercept": np.asarray(rec.a0s), "n_iter": np.asarray(rec.iters),
             "converged": np.asarray(rec.conv, dtype=bool), "lambda2_top": float(top), "params": public,
             "classes": classes, "gamma": np.asarray(rec.gammas, dtype=float), "n_inserted": int(rec.n_inserted)}
    path = FeaturePath(grid=np.asarray(rec.grid), weights=np.asarray(rec.rows), grid_name="lambda2",
                       feature_names=feature_names, objective=np.asarray(rec.objs), method="KNIFE",
                       extra=extra, true_support=true_support, converged=extra["converged"])
    return path


def knife_path(
    X,
    y,
    *,
    kernel: str = "rbf",
    loss: str = "squared",
    lambda1: float = 1.0,
    lambda2_grid=None,
    n_lambdas: int = 100,
    lambda_min_ratio: float = 1e-3,
    max_refine: int | None = None,
    gamma: float | str | None = None,
    degree: int = 2,
    coef0: float = 1.0,
    delta: float = 1.0,
    n_restarts: int = 1,
    solver="auto",
    max_iter: int = 100,
    tol: float = 1e-6,
    stop_at_zero: bool = False,
    feature_names=None,
    true_support=None,
    random_state=None,
    verbose: bool = False,
    approximation: str = "exact",
    n_components: int | None = None,
) -> FeaturePath:
    r"""KNIFE feature path (paper Algorithm 2): λ2 from 0 upward with warm starts.

    The problem of :func:`knife` is solved for a grid of λ2 at fixed λ1,
    each point warm-started from the previous one; zero weights stay zero
    (sticky), so features only leave the model.  Once every weight is zero
    the remaining points are that same model (the fit would reproduce it;
    it is copied, with ``n_iter`` 0).

    Parameters
    ----------
    X, y, kernel, loss, lambda1, degree, coef0, delta, solver, max_iter, tol
        As in :func:`knife`.
    gamma : float, "auto" or None, default=None
        RBF scale: a number is used at every point; None is 1/p (p every
        column of X); ``"auto"`` follows the selected features: each point
        is fitted with 1 / (the number of features selected at its warm
        start, the previous point), 1/p at the first point.  The scale of
        each point is in ``extra["gamma"]``.
    lambda2_grid : array, optional
        Increasing λ2 values; the path has one point per value.  Default:
        0 then ``n_lambdas - 1`` log-spaced values from
        ``lambda_min_ratio * top`` to ``top``, where ``top`` is found (the
        smallest λ2 at which the warm-started fit from the λ2 = 0 solution
        zeroes every weight, see the module docstring), refined where the
        support jumps (``max_refine``).  Warm starts along the path can keep
        a feature slightly beyond ``top`` (the problem is not convex); the
        path then ends with non-zero weights, except with ``gamma="auto"``,
        whose path continues by doubling λ2 (at most
        :data:`AUTO_EXTEND_MAX` times) until every weight is zero.
    n_lambdas : int
        Number of points of the default grid before refinement.
    lambda_min_ratio : float
        Smallest positive λ₂ of the default grid as a fraction of ``top``.
    max_refine : int, optional
        At most this many points are inserted into the default grid where
        two consecutive points' supports differ by more than ``max(2, a
        quarter of the larger)`` features
        (:func:`numkfs.model_selection.refine_walk`); default
        ``n_lambdas``, so a default path has at most ``2 * n_lambdas``
        points (plus the continuation of ``gamma="auto"``).  0 keeps the
        grid as it is.  A given ``lambda2_grid`` is never refined.
    n_restarts : int
        Random starts at the first grid point (the best starts the path).
    stop_at_zero : bool, default=False
        End the path at the first point where every weight is zero (fewer
        points than the grid).
    feature_names, true_support : optional
        Stored on the path (plots highlight the true support); feature names
        default to the columns of a DataFrame X.
    random_state : int, Generator or None
        Seed or generator for everything random; an int makes the result reproducible.
    verbose : bool
        A tqdm progress bar over the grid.
    approximation, n_components
        As in :func:`knife` (one set of landmarks for the whole path).

    Returns
    -------
    FeaturePath
        ``grid_name="lambda2"``, ``objective`` per point and in ``extra``:
        ``alpha`` (n_points, n), ``intercept``, ``n_iter``, ``converged``
        (bool per point; a point that stopped at ``max_iter`` also raises a
        ``ConvergenceWarning``), ``lambda2_top`` and ``params`` (kernel and
        loss settings).

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.

    Examples
    --------
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs.methods.knife import knife_path
    >>> X, y, support = make_sinusoid(n_samples=60, random_state=0)
    >>> path = knife_path(X, y, n_lambdas=10, random_state=0)
    >>> path.n_points
    10
    """
    caller = "knife_path"
    params = dict(kernel=kernel, loss=loss, lambda1=lambda1, gamma=gamma, degree=degree, coef0=coef0,
                  delta=delta, n_restarts=n_restarts, max_iter=max_iter, tol=tol, solver=solver,
                  n_lambdas=n_lambdas, lambda_min_ratio=lambda_min_ratio, max_refine=max_refine,
                  approximation=approximation, n_components=n_components, random_state=random_state)
    if feature_names is None and hasattr(X, "columns"):  # a DataFrame names its features
        feature_names = [str(c) for c in X.columns]
    X, y_pm, classes, const, model, public = _prepare(X, y, params, caller)
    rng = check_random_state(random_state)
    user_grid = lambda2_grid is not None
    if user_grid:
        grid = np.asarray(lambda2_grid, dtype=float).ravel()
        if grid.size == 0 or np.any(~np.isfinite(grid)) or np.any(grid < 0) or np.any(np.diff(grid) < 0):
            raise ValueError(f"{caller}: lambda2_grid must be a non-empty, non-decreasing array of "
                             f"finite values >= 0.")
    with _numba_threads_for(X.shape[0]):
        lam_first = grid[0] if user_grid else 0.0
        st, _ = _best_start(model, _starts(rng, X.shape[1], const, n_restarts, None), lam_first, max_iter, tol)
        top = np.nan
        if not user_grid:
            top = _find_top(model, st, max_iter, tol)
            grid = _default_grid(top, n_lambdas, lambda_min_ratio)
        bar = progress_bar(len(grid), desc="KNIFE path", unit="λ2", show=bool(verbose))
        bar.update(1)
        refine = 0 if user_grid else (n_lambdas if max_refine is None else int(max_refine))
        rec, = _walk([model], [st], grid, max_iter=max_iter, tol=tol, stop_at_zero=stop_at_zero, bar=bar,
                     max_refine=refine, extend_to_zero=not user_grid and model.gamma_rule is not None)
        bar.close()
    _warn_path_not_converged(rec, max_iter)
    public["lambda2"] = None
    return _to_path(rec, top=top, public=public, classes=classes, feature_names=feature_names,
                    true_support=true_support)


def knife_ovr_paths(X, targets, *, lambda2_grid=None, n_lambdas: int = 100, lambda_min_ratio: float = 1e-3,
                    max_refine: int | None = None, feature_names=None, random_state=None, **params) -> list:
    r"""KNIFE paths of several binary problems on the same X on one shared λ2 grid (one-vs-rest).

    Default grid: as in :func:`knife_path`, with ``top`` the largest of the
    problems' tops; each problem's λ2 = 0 fit (from its own start, drawn
    from a fresh ``random_state``, as :func:`knife_path` draws it) is
    computed once and used both for its top and as the path's first point;
    the grid is refined where the support of all problems together (a
    feature selected by any of them) jumps, and walked by every problem.
    The result is the list ``[knife_path(X, t, lambda2_grid=grid, ...) for t
    in targets]`` without refitting the λ2 = 0 points.

    Parameters
    ----------
    X : array (n, p)
        Data, one row per sample and one column per feature.
    targets : list of arrays (n,)
        Two-class labels of each problem (e.g. ±1 for one class against
        the rest).
    lambda2_grid : array, optional
        A shared grid (then nothing is shared but the data).
    n_lambdas, lambda_min_ratio, max_refine, feature_names, random_state
        As in :func:`knife_path`.
    **params
        The fitting keywords of :func:`knife` (``loss`` a classification loss).

    Returns
    -------
    list of FeaturePath

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs.methods.knife import knife_ovr_paths
    >>> X, _, _ = make_sinusoid(n_samples=45, random_state=0)
    >>> labels = np.arange(45) % 3
    >>> targets = [np.where(labels == k, 1.0, -1.0) for k in range(3)]
    >>> paths = knife_ovr_paths(X, targets, loss="squared_hinge", n_lambdas=4, max_refine=0, random_state=0)
    >>> [p.n_points for p in paths], bool(np.array_equal(paths[0].grid, paths[2].grid))
    ([4, 4, 4], True)
    """
    caller = "knife_ovr_paths"
    unknown = sorted(set(params) - set(_FIT_DEFAULTS))
    if unknown:
        raise TypeError(f"{caller} got unexpected keyword argument(s) {unknown}.")
    params = {**_FIT_DEFAULTS, **params, "n_lambdas": n_lambdas, "lambda_min_ratio": lambda_min_ratio,
              "max_refine": max_refine}
    if lambda2_grid is not None:
        kw = {k: params[k] for k in _FIT_DEFAULTS}
        return [knife_path(X, t, lambda2_grid=lambda2_grid, feature_names=feature_names, random_state=random_state,
                           **kw) for t in targets]
    setups = []
    for t in targets:
        Xc, y_pm, classes, const, model, public = _prepare(X, t, {**params, "random_state": random_state}, caller)
        rng = check_random_state(random_state)
        with _numba_threads_for(Xc.shape[0]):
            st, _ = _best_start(model, _starts(rng, Xc.shape[1], const, params["n_restarts"], None), 0.0,
                                params["max_iter"], params["tol"])
            top = _find_top(model, st, params["max_iter"], params["tol"])
        setups.append((model, st, top, public, classes))
    top = max(s[2] for s in setups)
    grid = _default_grid(top, n_lambdas, lambda_min_ratio)
    models = [s[0] for s in setups]
    with _numba_threads_for(models[0].X.shape[0]):
        recs = _walk(models, [s[1] for s in setups], grid, max_iter=params["max_iter"], tol=params["tol"],
                     max_refine=n_lambdas if max_refine is None else int(max_refine),
                     extend_to_zero=models[0].gamma_rule is not None)
    paths = []
    for rec, (model, st, _, public, classes) in zip(recs, setups):
        _warn_path_not_converged(rec, params["max_iter"])
        public["lambda2"] = None
        paths.append(_to_path(rec, top=np.nan, public=public, classes=classes, feature_names=feature_names,
                              true_support=None))
    return paths
