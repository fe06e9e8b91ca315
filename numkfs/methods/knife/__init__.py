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

The module switches ``_EXTRAPOLATE = False`` and ``_POLISH_AFTER = None`` of
:mod:`numkfs.methods.knife._problem`
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
  warm start (growing by at most :data:`AUTO_GAMMA_GROWTH` per point); its
  first point is the single fit under ``"auto"``, whose scale is refitted
  until it settles on the features that fit selects, then fitted once more
  from w = 1 at that scale and refitted from the union of both fits'
  weights (a weight the wide kernel of 1/p zeroed comes back if the
  narrow one wants it).
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
  weight is zero.  Doublings below :math:`(F(0) - f^*)/\sum_j w^*_j` are
  not fitted (a fit never increases its objective, so none that starts at
  the λ2 = 0 solution :math:`(w^*, f^*)` can end at the constant model's
  :math:`F(0)` below that λ2): the same top without the fits that cannot
  succeed.  The path has exactly ``n_grid`` points: once every
  weight is zero the remaining points are that model (copied, not refitted);
  if the warm-started path still has non-zero weights at the top, its last
  point keeps them (the walk does not continue past the grid).

Speed without changing the iterates (tested against a no-shortcut mode,
``_problem._FAST = False``): the Newton α-step factorises only the rows with
curvature (for the hinge losses, the margin violators); the weight step runs
its coordinate descent on the n x p factor instead of the p x p matrix when
n < p; one-vs-rest problems share their λ2 = 0 fits between the top search
and the path (:func:`knife_ovr_paths`); K α is computed once per (K, α), in
the kernel's own pass when the kernel is formed
(:func:`~numkfs.kernels.weighted.weighted_kernel_product`).  The α-step's
Newton loop stops when its predicted decrease is below the rounding of the
objective (at a constant kernel, w = 0, it would otherwise run to its limit).

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
holds exactly (tested in ``tests/methods/test_knife.py``): (i) at λ2 = 0 both are
ridge regression; (ii) for fixed w the α-step of KNIFE and the β̃-step of
eq. 4 with :math:`v = w^2` give the same fitted values and the same
data-plus-ridge value; (iii) a KNIFE stationary point :math:`w^*` is the
global solution of eq. 4 with the reweighted penalty
:math:`\sum_j \lambda_2/(2 w_j^*)\, v_j` (the tangent of the concave
:math:`\lambda_2\sqrt{v_j}` at :math:`v_j^* = w_j^{*2}`), with
:math:`v_j = 0` imposed where :math:`w^*_j = 0`.
"""
from ._fit import KNIFEResult, knife, knife_gradient_w, knife_objective, shared_starts
from ._nystroem import (APPROXIMATIONS, AUTO_EXACT_MAX_SAMPLES, AUTO_EXACT_MAX_SAMPLES_CLASSIFICATION,
                        AUTO_EXACT_MAX_SAMPLES_WIDE,
                        DEFAULT_N_COMPONENTS, LIVE_KERNELS, MIN_COMPONENTS, ROWS_PER_COMPONENT,
                        default_n_components, knife_model, memory_estimate, resolve_approximation)
from ._path import KNIFEGridWalk, knife_lambda2_max, knife_ovr_paths, knife_path, lambda_min_ratio_for
from ._predict import knife_decision_function, path_decision_function
from ._problem import (AUTO_EXTEND_MAX, AUTO_GAMMA_GROWTH, AUTO_GAMMA_ROUND_TOL, AUTO_GAMMA_ROUNDS,
                       CLASSIFICATION_LOSSES, KNIFE_CONSTRAINTS, REGRESSION_LOSSES, SERIAL_MAX_SAMPLES, ZERO_TOL,
                       knife_wstep_problem)

__all__ = ["knife", "knife_path", "knife_ovr_paths", "KNIFEGridWalk", "knife_lambda2_max", "lambda_min_ratio_for",
           "KNIFEResult", "knife_objective", "knife_gradient_w", "knife_decision_function", "path_decision_function",
           "knife_wstep_problem", "shared_starts",
           "REGRESSION_LOSSES", "CLASSIFICATION_LOSSES", "KNIFE_CONSTRAINTS",
           # the Nyström model (numkfs.methods.knife._nystroem)
           "APPROXIMATIONS", "AUTO_EXACT_MAX_SAMPLES", "AUTO_EXACT_MAX_SAMPLES_CLASSIFICATION",
           "AUTO_EXACT_MAX_SAMPLES_WIDE", "DEFAULT_N_COMPONENTS", "LIVE_KERNELS", "MIN_COMPONENTS",
           "ROWS_PER_COMPONENT", "default_n_components", "knife_model", "memory_estimate", "resolve_approximation"]
