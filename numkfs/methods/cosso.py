r"""COSSO: component selection and smoothing in additive kernel models.

Lin & Zhang (2006, Ann. Statist.), the method the KNIFE paper compares
against.  The model is additive, :math:`f(x) = b + \sum_j f_j(x_j)`, with one
reproducing kernel :math:`K_j` per feature, and COSSO penalises the sum of
component norms :math:`\sum_j \|P^j f\|`.  In its equivalent form with
weights :math:`\theta_j \ge 0` and, by the representer theorem,
:math:`f_j = \theta_j K_j c`, the problem solved for a budget M is

.. math::

    \min_{b,\, c,\, \theta}\; J = \frac1n \|y - b1 - K_\theta c\|^2
    + \lambda_0\, c^\top K_\theta c
    \quad\text{s.t.}\quad \theta \ge 0,\ \textstyle\sum_j \theta_j \le M,
    \qquad K_\theta = \sum_j \theta_j K_j .

The algorithm.  Lin & Zhang alternate two exact block minimisations:

1. *kernel-ridge step* (θ fixed): :math:`(K_\theta + n\lambda_0 I)c + b1 = y`,
   :math:`1^\top c = 0` (Cholesky), the exact minimiser of J over (b, c);
2. *garrote step* (b, c fixed): with :math:`G[:, j] = K_j c`,
   :math:`\min_\theta \frac1n\|y - b1 - G\theta\|^2 + \lambda_0 (G^\top c)^\top\theta`
   over :math:`\theta \ge 0,\ \sum\theta \le M`: the non-negative garrote
   (:func:`numkfs.methods.garrote.garrote_step`, solved through the registry,
   natively by default), the exact minimiser of J over θ.

With step 1 exact, the problem is the minimisation over
:math:`\{\theta \ge 0, \sum\theta \le M\}` of the profiled objective
:math:`V(\theta) = \min_{b,c} J = \lambda_0\, y^\top P y`,
:math:`P = A^{-1} - A^{-1}11^\top A^{-1}/(1^\top A^{-1}1)`,
:math:`A = K_\theta + n\lambda_0 I`.  V is convex (with :math:`f_j = \theta_j K_j c`,
:math:`J = \frac1n\|y - b - \sum_j f_j\|^2 + \lambda_0 \sum_j \|f_j\|^2_{H_j}/\theta_j`
is jointly convex in (b, f, θ), and V is its partial minimum), with gradient
:math:`\nabla V = -\lambda_0 G^\top c` and Hessian :math:`2\lambda_0 G^\top P G`.
The garrote step is the minimiser of the quadratic model of V with the
Hessian replaced by :math:`\frac2n G^\top G \succeq 2\lambda_0 G^\top PG`, a
majoriser that overestimates the curvature by up to :math:`1/(n\lambda_0)`
times: with the small λ0 GCV chooses the plain alternation crawls (hundreds
of alternations short of convergence at p = 50, n = 20).  By default
(``accelerate=True``) each iteration therefore takes the projected Newton
step, the minimiser of the exact quadratic model over the same set (a garrote
step on :math:`P^{1/2}G`), with a backtracking line search on V, and falls
back to the garrote step when that gives no decrease; J never increases
beyond its round-off (:attr:`COSSOFit.objective_history`): where J's change
is below n ε J, the full Newton step is taken when it lowers the duality
gap, which stays accurate there (otherwise the stall at J's round-off would
decide convergence, and on which BLAS kernel the sums ran).  ``accelerate=False`` runs the plain
alternation.  Both stop on the Frank-Wolfe duality gap
:math:`\lambda_0(M\max_j a_j - \sum_j \theta_j a_j)`, :math:`a_j = c^\top K_j c`,
an upper bound on :math:`J - J^\star`: at most ``tol`` times J.
Only the n x p matrix G and the n x n sum :math:`K_\theta` are formed
(:mod:`numkfs.kernels.additive`, recomputing the per-feature kernels), never
an n x n x p array.

Tuning follows COSSO: λ0 is chosen by generalised cross-validation of the
kernel-ridge fit with every θ_j = 1 (``lambda0=None``, :func:`cosso_lambda0`),
then M by K-fold CV (5 folds, COSSO's default) along the warm-started path of
budgets :func:`cosso_path` (:class:`numkfs.COSSORegressorCV`; this module
does not cross-validate).

Relaxation.  With λ0 fixed, the budget M sets both which components enter
and how much all of them are shrunk: at a budget that holds only the true
components their fit is far smoother than the data ask, so a CV score of the
path's own fits keeps lowering its error by letting noise components in (on
the KNIFE sinusoid every point with 5 to 20 components scores within one
standard error).  :func:`cosso_relax` separates the two, as the relaxed
lasso does (Meinshausen 2007): it keeps the path's θ (which components, in
what proportion) and refits the kernel ridge on :math:`K_\theta` with λ0
re-chosen by GCV on the same rows.  :class:`numkfs.COSSORegressorCV` scores
and predicts with these refits by default (``relax=True``).

Decisions.  Inputs are rescaled to [0, 1] with the training minimum and
range for the Sobolev kernel (test points are clipped to [0, 1], i.e. the
components are extended as constants beyond the training range, since the
Sobolev kernel formula is only positive definite on [0, 1]); for the rbf
kernel they are standardised.  Lin & Zhang also describe a "one-step"
update (ridge, garrote, ridge): ``accelerate=False, max_iter=1``.

Uniqueness.  When p > n, θ is in general not unique: V depends on θ through
:math:`K_\theta` only, and moving θ along a direction δ with
:math:`\sum_j \delta_j K_j c = 0` and :math:`\sum_j\delta_j = 0` (at least
p - n - 1 of them) leaves c, b, J and the fitted values at the training
points unchanged.  J and the training fit are unique; θ, its support and
predictions at new points are those of the optimal point the iteration
reaches from its (deterministic) start.  The active-set steps end at points
with few non-zero θ_j (fewer than n in the cases measured), where θ is
locally unique, so it moves only by round-off when X changes by round-off.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from numbers import Integral, Real

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh, solve_triangular
from sklearn.exceptions import ConvergenceWarning

from .._constraints import BOOL, GRID, SOLVER, Interval, NoneOr, Options, declares
from .._validation import NumericalWarning, check_memory, check_X_y, warn_not_converged
from ..kernels.additive import ADDITIVE_KERNELS, additive_gram, additive_kc, sobolev_kernel
from ..model_selection import refine_walk
from ..paths import SELECTION_TOL, FeaturePath, support_mask
from ..solvers.native.garrote import GarroteStep
from .garrote import garrote_step

__all__ = ["COSSOFit", "cosso", "cosso_path", "cosso_gcv_lambda0", "cosso_lambda0", "cosso_relax", "default_Ms"]

_CONSTRAINTS = {
    "kernel": [Options(ADDITIVE_KERNELS)],
    "gamma": [Interval(Real, 0, None, closed="neither")],
    "lambda0": [Interval(Real, 0, None, closed="neither"), NoneOr],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "n_grid": [Interval(Integral, 1, None, closed="left")],
    "max_refine": [Interval(Integral, 0, None, closed="left"), NoneOr],
    "M": [Interval(Real, 0, None, closed="neither")],
    "solver": SOLVER,
    "accelerate": BOOL,
    "grid": GRID,
}


# --------------------------------------------------------------------------
# input scaling


@dataclass
class _Scaling:
    kernel: str
    shift: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, X, kernel):
        if kernel == "sobolev":
            lo = X.min(axis=0)
            rng = X.max(axis=0) - lo
        else:
            lo = X.mean(axis=0)
            rng = X.std(axis=0)
        return cls(kernel, lo, np.where(rng > 0, rng, 1.0))

    def transform(self, X):
        Z = (X - self.shift) / self.scale
        if self.kernel == "sobolev":
            np.clip(Z, 0.0, 1.0, out=Z)
        return np.ascontiguousarray(Z)


# --------------------------------------------------------------------------
# the two steps


def _ridge_factor(K, y, nlam):
    """(K + nλ0 I) c + b 1 = y, 1ᵀc = 0; returns (c, b, L) with L the lower
    Cholesky factor of the matrix solved.

    Safeguard: when K + nλ0 I is numerically singular (duplicated samples
    with a tiny λ0, so round-off makes it indefinite) the ridge is raised to
    1e-10 · max(1, max diag K), with a :class:`NumericalWarning`.
    """
    n = y.shape[0]
    A = K + nlam * np.eye(n)
    try:
        f = cho_factor(A, lower=True, check_finite=False)
    except LinAlgError:
        ridge = max(nlam, 1e-10 * max(1.0, float(np.max(np.diag(K)))))
        warnings.warn(
            f"COSSO: the kernel matrix K + n*lambda0*I (n*lambda0 = {nlam:.1e}) is numerically singular "
            f"(duplicated samples or lambda0 too small); its ridge was raised to {ridge:.1e}.",
            NumericalWarning, stacklevel=4)
        f = cho_factor(K + ridge * np.eye(n), lower=True, check_finite=False)
    U = cho_solve(f, np.column_stack([y, np.ones(n)]), check_finite=False)
    b = U[:, 0].sum() / U[:, 1].sum()
    return U[:, 0] - b * U[:, 1], float(b), np.tril(f[0])


def _ridge_step(K, y, nlam):
    """(K + nλ0 I) c + b 1 = y, 1ᵀc = 0 (see :func:`_ridge_factor`); returns (c, b)."""
    c, b, _ = _ridge_factor(K, y, nlam)
    return c, b


def _objective(y, b, G, c, theta, lambda0):
    r = y - b - G @ theta
    return float(r @ r / y.shape[0] + lambda0 * (c @ G) @ theta)


@dataclass
class COSSOFit:
    """A fitted COSSO model for one budget M.

    Attributes
    ----------
    theta : ndarray (p,)
        Component weights (θ_j = 0: feature j is dropped).
    c : ndarray (n,)
        Kernel coefficients; :math:`f_j = \\theta_j K_j c`.
    intercept : float
    lambda0, M : float
    kernel : str
    gamma : float
    objective_history : list of float
        J at the start and after every iteration: non-increasing.
    n_iter : int
        Iterations run.
    converged : bool
        Whether the duality gap ``gap`` reached ``tol`` times J.
    gap : float
        The Frank-Wolfe duality gap at the returned point, an upper bound on
        :math:`J - J^\\star` (J* the minimum over θ for this M).
    stalled : bool
        The iteration stopped before ``max_iter`` because no step lowered J
        any more (round-off); converged if the gap is within max(tol, 1e-9) J.
    """

    theta: np.ndarray
    c: np.ndarray
    intercept: float
    lambda0: float
    M: float
    kernel: str
    gamma: float
    objective_history: list = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False
    gap: float = np.nan
    stalled: bool = False
    _scaling: _Scaling | None = field(default=None, repr=False)
    _Z: np.ndarray | None = field(default=None, repr=False)

    @property
    def objective(self) -> float:
        return self.objective_history[-1] if self.objective_history else np.nan

    def components(self, X) -> np.ndarray:
        """The fitted components :math:`f_j(x_j)` at the rows of ``X`` (m x p)."""
        Z = self._scaling.transform(np.asarray(X, dtype=float))
        return additive_kc(Z, self._Z, self.c, kernel=self.kernel, gamma=self.gamma) * self.theta

    def predict(self, X) -> np.ndarray:
        """:math:`b + \\sum_j f_j(x_j)` at the rows of ``X``."""
        return self.intercept + self.components(X).sum(axis=1)


@dataclass
class _Point:
    """The kernel-ridge solution at θ: c, b, G = [K_j c], J = V(θ), L (Cholesky factor)."""

    theta: np.ndarray
    c: np.ndarray
    b: float
    G: np.ndarray
    J: float
    L: np.ndarray


def _ridge_fit(Z, y, theta, kernel, gamma, lambda0) -> _Point:
    """Kernel-ridge step at θ: the exact minimiser over (b, c), i.e. V(θ)."""
    K = additive_gram(Z, None, theta, kernel=kernel, gamma=gamma)
    c, b, L = _ridge_factor(K, y, y.shape[0] * lambda0)
    G = additive_kc(Z, Z, c, kernel=kernel, gamma=gamma)
    return _Point(theta, c, b, G, _objective(y, b, G, c, theta, lambda0), L)


#: Relative duality gap accepted when no step lowers J any more (J is computed to about 1e-12 relative;
#: the Newton iteration stalls at gaps of 1e-12 to 1e-11 J).
_ROUNDOFF_GAP = 1e-9


def _j_roundoff(pt, n) -> float:
    """Round-off of J at a point: J sums n squared residuals of a ridge solve, so n ε J times the
    condition number of the ridge system K_θ + nλ0 I, estimated from its Cholesky factor's diagonal
    (a lower bound on the condition number, exact for a diagonal system)."""
    diag = np.abs(np.diag(pt.L))
    kappa = (float(np.max(diag)) / float(np.min(diag))) ** 2 if diag.size and np.min(diag) > 0.0 else 1.0
    return n * np.finfo(float).eps * kappa * abs(pt.J)


def _gap(pt, lambda0, M) -> float:
    r"""Frank-Wolfe duality gap of V at θ: :math:`\nabla V^\top\theta - \min_{s \in S}\nabla V^\top s`
    with :math:`\nabla V = -\lambda_0 a`, :math:`a_j = c^\top K_j c \ge 0`, S = {θ ≥ 0, Σθ ≤ M}."""
    a = pt.G.T @ pt.c
    return max(float(lambda0 * (M * max(float(np.max(a, initial=0.0)), 0.0) - a @ pt.theta)), 0.0)


def _garrote_update(pt, y, lambda0, M, solver, step):
    """Lin & Zhang's garrote step: the exact minimiser of J over θ with (b, c) fixed.

    Posed divided by σ = max|∇V| (G and y - b by √σ), as the Newton step is: the same minimiser, with
    a linear term of order 1 whatever the units of y, so that the solver's tolerances mean the same
    for y and for 1000 y."""
    d = lambda0 * (pt.G.T @ pt.c)
    sigma = float(np.max(np.abs(d), initial=0.0))
    root = np.sqrt(sigma) if sigma > 0.0 else 1.0
    theta, _ = garrote_step(pt.G / root, (y - pt.b) / root, d / root ** 2, M=M, theta0=pt.theta, solver=solver,
                            problem=step)
    return theta


def _newton_update(pt, lambda0, M, solver, step):
    r"""Projected Newton step on the profiled objective V(θ) = min_{b,c} J.

    :math:`\nabla V = -\lambda_0 G^\top c` and :math:`\nabla^2 V = 2\lambda_0 G^\top P G`,
    :math:`P = A^{-1} - A^{-1}11^\top A^{-1}/(1^\top A^{-1}1)`, :math:`A = K_\theta + n\lambda_0 I = LL^\top`;
    :math:`P = B^\top B` with :math:`B = (I - uu^\top/u^\top u) L^{-1}`, :math:`u = L^{-1}1`.  The
    quadratic model is minimised over {θ ≥ 0, Σθ ≤ M} as a garrote step
    :math:`\|\tilde z - \tilde G\theta\|^2 + \tilde d^\top\theta` with :math:`\tilde G = \sqrt{\lambda_0/\sigma}\, BG`,
    :math:`\tilde z = \tilde G\theta`, :math:`\tilde d = \nabla V/\sigma` (σ = max|∇V| keeps it O(1)).
    """
    n = pt.c.shape[0]
    u = solve_triangular(pt.L, np.ones(n), lower=True, check_finite=False)
    BG = solve_triangular(pt.L, pt.G, lower=True, check_finite=False)
    BG -= np.outer(u, (u @ BG) / (u @ u))
    grad = -lambda0 * (pt.G.T @ pt.c)
    sigma = float(np.max(np.abs(grad), initial=0.0))
    if not sigma > 0.0:
        return None, grad
    Gt = np.sqrt(lambda0 / sigma) * BG
    theta, _ = garrote_step(Gt, Gt @ pt.theta, grad / sigma, M=M, theta0=pt.theta, solver=solver, problem=step)
    return theta, grad


def _alternate(Z, y, kernel, gamma, lambda0, M, theta, max_iter, tol, solver, step, newton=True, newton_step=None):
    r"""Minimise J for budget M from θ on scaled inputs Z; returns a COSSOFit.

    J is minimised exactly over (b, c) at every θ (the kernel-ridge step), so
    the problem is the minimisation of the profiled objective
    :math:`V(\theta) = \min_{b,c} J`, convex in θ (a partial minimum of
    :math:`\frac1n\|y - b - \sum_j f_j\|^2 + \lambda_0\sum_j \|f_j\|^2/\theta_j`,
    jointly convex in (b, f, θ)), over {θ ≥ 0, Σθ ≤ M}.

    Each iteration (``newton=True``) takes a projected Newton step with
    the exact Hessian of V and a backtracking (Armijo) line search; when
    that gives no decrease, Lin & Zhang's garrote step (the same quadratic
    model with the majorising Hessian :math:`\frac2n G^\top G`, so J never
    increases).  Where J's change is within its round-off (n ε J times the
    ridge system's condition, :func:`_j_roundoff`), the full
    Newton step is accepted when it lowers the duality gap.  ``newton=False`` runs Lin & Zhang's plain alternation
    (ridge step, garrote step), which slows to a crawl when λ0 is small
    (the majoriser then overestimates the curvature by orders of magnitude).

    Stopping: the Frank-Wolfe duality gap (:func:`_gap`), an upper bound on
    :math:`V(\theta) - V^\star`, is at most ``tol * J`` (converged), or no
    step decreases J any more (the round-off floor: converged when the gap
    is within ``max(tol, 1e-9) * J`` there), or ``max_iter`` iterations.
    """
    pt = _ridge_fit(Z, y, theta, kernel, gamma, lambda0)
    history = [pt.J]
    gap = _gap(pt, lambda0, M)
    it = 0
    stalled = False
    while gap > tol * pt.J and it < max_iter:
        it += 1
        new = None
        if newton:
            theta_n, grad = _newton_update(pt, lambda0, M, solver, newton_step)
            if theta_n is not None:
                d = theta_n - pt.theta
                slope = float(grad @ d)
                t = 1.0
                j_roundoff = _j_roundoff(pt, y.shape[0])
                while slope < 0.0 and t > 1e-10:
                    cand = _ridge_fit(Z, y, np.maximum(pt.theta + t * d, 0.0), kernel, gamma, lambda0)
                    if cand.J <= pt.J + 1e-4 * t * slope:
                        new = cand
                        break
                    if t == 1.0 and cand.J <= pt.J + j_roundoff and _gap(cand, lambda0, M) < gap:
                        # J's change is below its own round-off (V - V* ~ gap² is unresolvable there,
                        # on some BLAS long before the gap reaches tol): the full Newton step is taken
                        # when it lowers the duality gap, which is computed to full accuracy
                        new = cand
                        break
                    t *= 0.25
        if new is None:
            cand = _ridge_fit(Z, y, _garrote_update(pt, y, lambda0, M, solver, step), kernel, gamma, lambda0)
            if cand.J < pt.J:
                new = cand
        if new is None:
            stalled = True  # no step decreases J: the round-off floor
            break
        pt = new
        history.append(pt.J)
        gap = _gap(pt, lambda0, M)
    converged = gap <= max(tol, _ROUNDOFF_GAP if stalled else 0.0) * pt.J
    return COSSOFit(theta=pt.theta, c=pt.c, intercept=pt.b, lambda0=lambda0, M=float(M), kernel=kernel,
                    gamma=gamma, objective_history=history, n_iter=it, converged=bool(converged), gap=gap,
                    stalled=stalled, _Z=Z)


def cosso_gcv_lambda0(K, y, grid=None) -> tuple[float, np.ndarray, np.ndarray]:
    r"""λ0 minimising GCV of the kernel-ridge fit with intercept on kernel ``K``.

    With :math:`A = K + n\lambda_0 I`, the residual is
    :math:`y - \hat y = n\lambda_0 P y`, :math:`P = A^{-1} - A^{-1}11^\top
    A^{-1}/(1^\top A^{-1} 1)`, and
    :math:`\mathrm{GCV} = n\|(I - S)y\|^2 / \mathrm{tr}(I - S)^2` with
    :math:`I - S = n\lambda_0 P`; one eigendecomposition of K serves the
    whole grid.  Returns ``(lambda0, grid, gcv)``.
    """
    return _gcv(K, y, grid)[:3]


def _gcv(K, y, grid=None):
    """:func:`cosso_gcv_lambda0`'s ``(lambda0, grid, gcv)`` and ``(c, b)``, the kernel-ridge solution at
    that λ0 from the same eigendecomposition (c = P y, b = 1ᵀA⁻¹y / 1ᵀA⁻¹1)."""
    n = y.shape[0]
    check_memory(2 * 8.0 * n * n, f"The eigendecomposition of the {n} x {n} kernel matrix (GCV of lambda0)")
    ev, U = eigh(K, check_finite=False)
    ev = np.maximum(ev, 0.0)
    if grid is None:
        grid = np.geomspace(1e-7, 10.0, 57) * max(ev.max(), 1e-12) / n
    uy, u1 = U.T @ y, U.T @ np.ones(n)
    scores = np.empty(len(grid))
    for k, lam in enumerate(grid):
        dinv = 1.0 / (ev + n * lam)
        s11 = u1 @ (dinv * u1)
        Py = U @ (dinv * uy) - (U @ (dinv * u1)) * ((u1 @ (dinv * uy)) / s11)
        trP = dinv.sum() - (u1 @ (dinv * dinv * u1)) / s11
        resid = n * lam * Py
        scores[k] = n * (resid @ resid) / (n * lam * trP) ** 2
    lam = float(grid[int(np.argmin(scores))])
    dinv = 1.0 / (ev + n * lam)
    b = (u1 @ (dinv * uy)) / (u1 @ (dinv * u1))
    c = U @ (dinv * (uy - b * u1))
    return lam, np.asarray(grid), scores, c, float(b)


@declares({}, data=("fit", "y"))
def cosso_relax(fit: COSSOFit, y) -> COSSOFit:
    r"""The kernel-ridge refit of a COSSO fit on its own θ, with λ0 re-chosen by GCV.

    With :math:`K_\theta = \sum_j \theta_j K_j` on the fit's training rows,
    λ0 minimises :func:`cosso_gcv_lambda0` and (b, c) solve the kernel-ridge
    step at that λ0: the COSSO objective's minimiser over (b, c) with θ
    fixed.  The components and their proportions are the fit's; only the
    overall smoothing is chosen again (only λ0 / Σθ matters, so the budget
    itself drops out).  A fit with every θ_j = 0 is returned as it is.

    Parameters
    ----------
    fit : COSSOFit
        A fit of :func:`cosso` or :func:`cosso_path` (``extra["models"]``).
    y : array-like of shape (n_samples,)
        The target values the fit was computed on.

    Returns
    -------
    COSSOFit
        θ, M, kernel and iteration record of ``fit``; ``lambda0``, ``c``,
        ``intercept`` of the refit and ``objective_history`` its objective J
        alone.

    References
    ----------
    Y. Lin and H. H. Zhang, "Component selection and smoothing in
    multivariate nonparametric regression", Annals of Statistics
    34(5):2272-2297, 2006.

    N. Meinshausen, "Relaxed lasso", Computational Statistics & Data
    Analysis 52(1):374-393, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(60, 3))
    >>> y = np.sin(2 * np.pi * X[:, 0]) + 0.1 * rng.standard_normal(60)
    >>> fit = cosso(X, y, M=0.5)
    >>> relaxed = cosso_relax(fit, y)
    >>> bool(np.array_equal(relaxed.theta, fit.theta)), relaxed.lambda0 != fit.lambda0
    (True, True)
    """
    Z = fit._Z
    y = np.asarray(y, dtype=float).ravel()
    if y.shape[0] != Z.shape[0]:
        raise ValueError(f"cosso_relax: y has {y.shape[0]} values; the fit was computed on {Z.shape[0]} rows.")
    if not np.all(np.isfinite(y)):
        raise ValueError("cosso_relax: y contains NaN or infinity.")
    if not np.any(fit.theta > 0):
        return fit
    K = additive_gram(Z, None, fit.theta, kernel=fit.kernel, gamma=fit.gamma)
    lambda0, _, _, c, b = _gcv(K, y)  # (b, c) from GCV's eigendecomposition: no second factorisation
    G = additive_kc(Z, Z, c, kernel=fit.kernel, gamma=fit.gamma)
    return replace(fit, c=c, intercept=b, lambda0=lambda0,
                   objective_history=[_objective(y, b, G, c, fit.theta, lambda0)])


def _prepare(X, y, kernel, gamma, lambda0):
    scaling = _Scaling.fit(X, kernel)
    Z = scaling.transform(X)
    if lambda0 is None:
        K1 = additive_gram(Z, None, None, kernel=kernel, gamma=gamma)
        lambda0 = cosso_gcv_lambda0(K1, y - np.mean(y))[0]  # the fit has an intercept: y's offset drops out
    return scaling, Z, float(lambda0)


def _path_fits(X, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate=True, max_refine=0):
    """The COSSO fits along the budgets ``Ms`` (warm-started), with at most ``max_refine`` budgets
    inserted where the support jumps (:func:`numkfs.model_selection.refine_walk`); each fit's
    budget is its ``M``."""
    # One BLAS thread: the n x n Cholesky per alternation is small, and
    # threaded BLAS on a shared machine is many times slower than one
    # thread there.  Parallelism is over CV folds (n_jobs).
    from .._threads import method_threads

    with method_threads("cosso", X.shape[0]):
        return _path_fits_serial(X, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate, max_refine)


def _path_fits_serial(X, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate, max_refine):
    # the intercept absorbs y's mean: the fits are those of the centred y, whose J (a sum of squared
    # residuals) is then computed to its own relative accuracy; with an offset (y + 1e6) J's round-off
    # would be that of y's squares, and the descent would stall there short of tol
    offset = float(np.mean(y))
    y = y - offset
    scaling, Z, lambda0 = _prepare(X, y, kernel, gamma, lambda0)
    const = np.all(Z == Z[:1], axis=0)
    if const.any() and not const.all():
        # a constant feature has K_j c = 0 (1ᵀc = 0): θ_j is a flat direction of the garrote step,
        # which leaves the native step's budget multiplier undetermined; it gets θ_j = 0.
        keep = np.flatnonzero(~const)
        fits = _alternate_path(Z[:, keep], y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate,
                               max_refine)
        for fit in fits:
            theta = np.zeros(Z.shape[1])
            theta[keep] = fit.theta
            fit.theta, fit._Z = theta, Z
    else:
        fits = _alternate_path(Z, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate, max_refine)
    for fit in {id(f): f for f in fits}.values():
        fit._scaling = scaling
        fit.intercept = fit.intercept + offset
    return fits


def _alternate_path(Z, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate, max_refine=0):
    n, p = Z.shape
    step = GarroteStep(np.zeros((n, p)), np.zeros(n), np.zeros(p), scale=1.0 / n, M=float(Ms[0]))
    newton_step = GarroteStep(np.zeros((n, p)), np.zeros(n), np.zeros(p), scale=1.0, M=float(Ms[0]))

    def fit_at(previous, M):
        """COSSO at budget M, warm-started from the previous budget's θ (scaled into the budget)."""
        theta = np.full(p, min(1.0, M / p)) if previous is None else previous.theta
        if theta.sum() > M:
            theta = theta * (M / theta.sum())
        return _alternate(Z, y, kernel, gamma, lambda0, float(M), theta, max_iter, tol, solver, step, accelerate,
                          newton_step)

    _, fits, _ = refine_walk(fit_at, [float(M) for M in Ms], fit_at(None, float(Ms[0])), max_inserted=max_refine,
                             support=lambda fit: support_mask(fit.theta, SELECTION_TOL["cosso"]))
    return fits


def _warn_unconverged(fits, max_iter, stacklevel=4):
    """ConvergenceWarnings naming the budgets M whose iteration stopped at max_iter, and
    those that stalled (no step lowered J) with a duality gap above tolerance."""
    def where(ms):
        return "M=" + ", ".join(f"{m:.3g}" for m in ms[:5]) + (f" and {len(ms) - 5} more" if len(ms) > 5 else "")

    bad = [f.M for f in fits if not f.converged and not f.stalled]
    if bad:
        warn_not_converged("COSSO", max_iter=max_iter, where=where(bad), what="iterations",
                           hint="increase max_iter or loosen tol (the weights theta may still move)",
                           stacklevel=stacklevel)
    stuck = [f for f in fits if not f.converged and f.stalled]
    if stuck:
        worst = max(f.gap / max(f.objective, 1e-300) for f in stuck)
        warnings.warn(f"COSSO did not converge at {where([f.M for f in stuck])}: no step lowers the objective J any "
                      f"more (round-off) while the duality gap is still {worst:.1e} J, above tol; loosen tol "
                      f"(accelerate=False stalls earlier than the default Newton steps).", ConvergenceWarning,
                      stacklevel=stacklevel - 1)


@declares(_CONSTRAINTS)
def cosso(X, y, M: float, *, kernel: str = "sobolev", gamma: float = 1.0, lambda0: float | None = None,
          max_iter: int = 200, tol: float = 1e-6, solver="auto", accelerate: bool = True) -> COSSOFit:
    r"""Fit COSSO for one budget M (see the module docstring for the objective).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Target values: the response, or the class labels of a classifier.
    M : float > 0
        Budget :math:`\sum_j \theta_j \le M` (smaller: fewer components).
    kernel : {"sobolev", "rbf"}
        Per-feature kernel: COSSO's second-order Sobolev (cubic spline)
        kernel on [0, 1], or a 1-D rbf :math:`\exp(-\gamma (s - t)^2)` on
        standardised features.
    gamma : float
        rbf width (ignored by the Sobolev kernel).
    lambda0 : float, optional
        Smoothing parameter; default chosen by GCV with every θ_j = 1.
    max_iter, tol : int, float
        Iterations, and the duality gap (an upper bound on J - J*) relative
        to J at which they stop (:attr:`COSSOFit.gap`).  A fit stopped at
        ``max_iter`` warns (``ConvergenceWarning``).
    solver : str or list
        Backend of the garrote step (:func:`numkfs.solvers.solve`).
    accelerate : bool
        Projected Newton steps on the profiled objective (the default), or,
        if False, Lin & Zhang's plain alternation of ridge and garrote steps
        (``max_iter=1``: their one-step update), which can need thousands of
        alternations when λ0 is small.

    Returns
    -------
    COSSOFit

    References
    ----------
    Y. Lin and H. H. Zhang, "Component selection and smoothing in
    multivariate nonparametric regression", Annals of Statistics
    34(5):2272-2297, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(80, 4))
    >>> y = np.sin(2 * np.pi * X[:, 0]) + 0.1 * rng.standard_normal(80)
    >>> fit = cosso(X, y, M=1.0)
    >>> int(np.argmax(fit.theta))
    0
    """
    X, y = check_X_y(X, y, caller="cosso")
    fit = _path_fits(X, y, [float(M)], kernel, gamma, lambda0, max_iter, tol, solver, accelerate)[0]
    _warn_unconverged([fit], max_iter, stacklevel=4)
    return fit


@declares(_CONSTRAINTS)
def cosso_lambda0(X, y, *, kernel: str = "sobolev", gamma: float = 1.0) -> float:
    r"""COSSO's default smoothing parameter λ0: GCV of the kernel-ridge fit with every θ_j = 1.

    The inputs are scaled as :func:`cosso` scales them (to [0, 1] for the
    Sobolev kernel, standardised for the rbf kernel), the kernel is
    :math:`\sum_j K_j` and λ0 minimises :func:`cosso_gcv_lambda0` over its
    grid: the value :func:`cosso` and :func:`cosso_path` use with
    ``lambda0=None``.  :class:`numkfs.COSSORegressorCV` computes it once on
    all the rows and gives it to every fold, as in Lin & Zhang (2006).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Target values.
    kernel : {"sobolev", "rbf"}, default="sobolev"
        Per-feature kernel.
    gamma : float, default=1.0
        rbf width (ignored by the Sobolev kernel).

    Returns
    -------
    float

    References
    ----------
    Y. Lin and H. H. Zhang, "Component selection and smoothing in
    multivariate nonparametric regression", Annals of Statistics
    34(5):2272-2297, 2006.
    """
    X, y = check_X_y(X, y, caller="cosso_lambda0")
    return _prepare(X, y, kernel, gamma, None)[2]


def default_Ms(X, lambda0: float, *, kernel: str = "sobolev", n_grid: int = 25) -> np.ndarray:
    r"""Budgets log-spaced from :math:`M_0 = n\lambda_0 / \max_j \mathrm{tr} K_j` to 1.5 p.

    Only :math:`\lambda_0 / M` matters for the fitted function (θ → sθ
    with λ0 → sλ0 leaves f unchanged), and the fit is negligible until
    :math:`\sum_j \theta_j K_j` is comparable to :math:`n\lambda_0 I`, i.e. until
    M is of order :math:`M_0`; Σθ = p (every θ_j = 1, the GCV fit) is near
    the other end.  On the KNIFE sinusoid the sparse part of the path (the
    five true components only) lies at 20-100 M_0, far below the fixed
    grid [0.1, 1.5 p] one might take by default.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    lambda0 : float
        The smoothing parameter.
    kernel : {"sobolev", "rbf"}, default="sobolev"
        Per-feature kernel.
    n_grid : int, default=25
        Number of budgets.

    Returns
    -------
    ndarray of shape (n_grid,)

    References
    ----------
    Y. Lin and H. H. Zhang, "Component selection and smoothing in
    multivariate nonparametric regression", Annals of Statistics
    34(5):2272-2297, 2006.
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    if kernel == "sobolev":
        Z = _Scaling.fit(X, kernel).transform(X)
        trace = float(np.max(sobolev_kernel(Z, Z).sum(axis=0)))
    else:
        trace = float(n)
    lo = min(n * lambda0 / max(trace, 1e-300), 0.1 * p)
    return np.geomspace(lo, 1.5 * p, n_grid)


@declares(_CONSTRAINTS, data=("X", "y", "feature_names", "true_support"))
def cosso_path(X, y, grid=None, *, kernel: str = "sobolev", gamma: float = 1.0, lambda0: float | None = None,
               n_grid: int = 25, max_iter: int = 200, tol: float = 1e-6, solver="auto", max_refine=None,
               feature_names=None, true_support=None) -> FeaturePath:
    r"""COSSO along increasing budgets M (warm-started).

    The path only: :class:`numkfs.COSSORegressorCV` chooses M on it by
    K-fold cross-validation.

    Parameters
    ----------
    X, y, kernel, gamma, lambda0, max_iter, tol, solver
        As in :func:`cosso` (λ0 by GCV, :func:`cosso_lambda0`, when None).
    grid : array-like, optional
        Budgets M, solved in increasing order (default :func:`default_Ms`).
    n_grid : int, default=25
        Number of default budgets (ignored when ``grid`` is given).
    max_refine : int, optional
        At most this many budgets are inserted between two budgets whose
        supports differ by more than ``max(2, a quarter of the larger)``
        features (:func:`numkfs.model_selection.refine_walk`), so the path
        has at most ``len(grid) + max_refine`` points.  Default: ``n_grid``
        for the default grid, 0 for a grid you pass (walked as given).
    feature_names : sequence of str, optional
        Names of the features, stored on the path (default: the columns of a
        DataFrame ``X``).
    true_support : array-like of bool of shape (n_features,), optional
        The known relevant features (simulations), stored on the path for
        reporting; it does not affect the fit.

    Returns
    -------
    FeaturePath
        ``weights`` are θ, ``grid_name="M"``, ``objective`` is J at each
        M and ``extra["models"]`` the :class:`COSSOFit` per M
        (``extra["lambda0"]``, ``extra["n_iter"]``).

    References
    ----------
    Y. Lin and H. H. Zhang, "Component selection and smoothing in
    multivariate nonparametric regression", Annals of Statistics
    34(5):2272-2297, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(60, 4))
    >>> y = np.sin(2 * np.pi * X[:, 0]) + 0.1 * rng.standard_normal(60)
    >>> path = cosso_path(X, y, grid=[0.5, 1.0, 2.0])
    >>> path.grid.tolist(), int(np.argmax(path.weights[0]))
    ([0.5, 1.0, 2.0], 0)
    """
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    X, y = check_X_y(X, y, caller="cosso_path")
    if max_refine is None:
        max_refine = n_grid if grid is None else 0
    if lambda0 is None:
        lambda0 = _prepare(X, y, kernel, gamma, None)[2]
    grid = (default_Ms(X, lambda0, kernel=kernel, n_grid=n_grid) if grid is None
            else np.sort(np.asarray(grid, dtype=float).ravel()))
    if grid.size == 0 or not np.all(np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError(f"cosso_path: the budgets (grid) must be finite and > 0; got {grid!r}.")
    fits = _path_fits(X, y, grid, kernel, gamma, lambda0, max_iter, tol, solver, max_refine=max_refine)
    _warn_unconverged(fits, max_iter, stacklevel=4)
    grid = np.array([f.M for f in fits])
    return FeaturePath(
        grid=grid, weights=np.array([f.theta for f in fits]), grid_name="M", feature_names=feature_names,
        objective=np.array([f.objective for f in fits]), method="cosso", true_support=true_support,
        extra={"models": fits, "lambda0": float(lambda0), "n_iter": np.array([f.n_iter for f in fits]),
               "kernel": kernel, "gamma": float(gamma)},
    )
