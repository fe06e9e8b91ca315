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

* ``fix="norm_bound"`` (the paper): unknowns (α, β_P, λ), equations
  ``(HK + λI)α = y``, ``λ (g_{P_k} - g_{P_{k+1}}) = 0``, ``(αᵀKα - C)/C = 0``;
* ``fix="lambda1"`` (users think in ridge penalties): λ is given, C is free,
  unknowns (α, β_P), the same equations without the last one.  Its
  stationary points are those of ``min ||y - Kα - α0||² + λ αᵀKα`` under
  ``||β||₁ ≤ D``.

Both have one unknown more than equations: a curve, traced in arc length
``s`` of (α, β_P[, λ]).  The λ-version's path in β does not depend on the scale
of y, the C-version's does through C; C is therefore expressed for the
unit-norm y (``norm_bound`` in units of ``||y - ȳ||²``).

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
  of ``Σ (y - ȳ)²``; :func:`l1kr_path` read at a grid (``grid``,
  ``n_grid``) reports those pruned models.
* **Events** are located by the paper's interpolating line search
  (regula falsi on the event functions, bisection when it stalls; its
  probes evaluate the event functions, not the Jacobian) to ``LOCATE_RTOL``
  of the step; the event point is then solved exactly with the extra
  equation (paper eq. 9–10), and the search repeated to full accuracy if
  another event function reached 0 first.
  At E2 both directions of the new curve are probed and the one with
  ``g_i < η`` for the leaving feature is kept (Lemma 2).

The implementation is split along its concerns:

* :mod:`~numkfs.methods.l1kr.system`: the KKT system, its Jacobian, tangent,
  Newton and event equations;
* :mod:`~numkfs.methods.l1kr.tracker`: the predictor-corrector (or ODE)
  tracker, events located and solved, the points recorded;
* :mod:`~numkfs.methods.l1kr._loops`: the compiled residual and corrector
  of the Gaussian kernel (the tracker's inner loop);
* :mod:`~numkfs.methods.l1kr.path`: :func:`l1kr_path`;
* :mod:`~numkfs.methods.l1kr.evaluate`: KKT residual, objective, pruning,
  β at budgets D and prediction;
* :mod:`~numkfs.methods.l1kr.grid`: the path traced in stages and read at a
  grid of budgets D, the default grid following its events.

Cross-validation over D (and λ₁) is :class:`numkfs.L1KRRegressorCV`'s.
"""
from __future__ import annotations

from .evaluate import (
    _path_at,
    l1kr_kkt_residual,
    l1kr_model_predict,
    l1kr_objective,
    l1kr_path_at,
    l1kr_predict,
    l1kr_prune,
)
from .grid import CV_MAX_ANGLE, CV_TOL, FIRST_STAGE_D, REFINE_DEPTH, STAGE_GROWTH
from .path import FIX_OPTIONS, l1kr_path
from .system import (
    EVENT_DMAX,
    EVENT_E1,
    EVENT_E2,
    EVENT_NAMES,
    EVENT_NONE,
    EVENT_START,
    EVENT_STOP,
    L1KR_KERNELS,
    POLISH_MAX_ITER,
    PRUNE_TOL,
    PathDegeneracyWarning,
    PathTrackingError,
    _standardize,
    _System,
    _tangent_and_corrector,
)
from .tracker import LOCATE_RTOL, _Recorder

__all__ = ["l1kr_path", "l1kr_kkt_residual", "l1kr_path_at", "l1kr_predict", "l1kr_model_predict", "l1kr_objective",
           "l1kr_prune"]
