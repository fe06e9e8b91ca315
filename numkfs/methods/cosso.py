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

The alternating algorithm of Lin & Zhang, repeated to convergence:

1. *kernel-ridge step* (θ fixed): :math:`(K_\theta + n\lambda_0 I)c + b1 = y`,
   :math:`1^\top c = 0` (Cholesky), the exact minimiser of J over (b, c);
2. *garrote step* (b, c fixed): with :math:`G[:, j] = K_j c`,
   :math:`\min_\theta \frac1n\|y - b1 - G\theta\|^2 + \lambda_0 (G^\top c)^\top\theta`
   over :math:`\theta \ge 0,\ \sum\theta \le M`: the non-negative garrote
   (:func:`numkfs.methods.garrote.garrote_step`, solved through the registry,
   natively by default), the exact minimiser of J over θ.

Each step minimises J exactly over its block, so J never increases
(:attr:`COSSOFit.objective_history`).  Plain alternation converges slowly
(hundreds of alternations, like EM); by default the garrote step is
over-relaxed, θ + ω(θ' - θ) with ω > 1 accepted only when the following
ridge step gives J no larger than the plain garrote step did, which keeps J
monotone and the fixed points unchanged (``accelerate=False`` switches it
off; measured 5-10x fewer alternations on the KNIFE sinusoid).  Only the n x p matrix G and the
n x n sum :math:`K_\theta` are formed (:mod:`numkfs.kernels.additive`,
recomputing the per-feature kernels), never an n x n x p array.

Tuning follows COSSO: λ0 is chosen by generalised cross-validation of the
kernel-ridge fit with every θ_j = 1 (``lambda0=None``), then M by K-fold CV
(5 folds, COSSO's default) along a warm-started path of budgets.

Decisions.  Inputs are rescaled to [0, 1] with the training minimum and
range for the Sobolev kernel (test points are clipped to [0, 1], i.e. the
components are extended as constants beyond the training range, since the
Sobolev kernel formula is only positive definite on [0, 1]); for the rbf
kernel they are standardised.  Lin & Zhang also describe a "one-step"
update (ridge, garrote, ridge); here the steps are repeated until the
relative decrease of J is below ``tol`` (``max_iter=1`` gives one-step).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh

from .._validation import (Interval, NoneOr, NumericalWarning, Options, check_memory, check_X_y, validate_params,
                           warn_not_converged)
from ..kernels.additive import ADDITIVE_KERNELS, additive_gram, additive_kc, sobolev_kernel
from ..model_selection import cross_val_path
from ..paths import FeaturePath
from ..solvers.native.garrote import GarroteStep
from .garrote import garrote_step

__all__ = ["COSSOFit", "cosso", "cosso_path", "cosso_gcv_lambda0", "default_Ms"]

_CONSTRAINTS = {
    "kernel": [Options(ADDITIVE_KERNELS)],
    "gamma": [Interval(Real, 0, None, closed="neither")],
    "lambda0": [Interval(Real, 0, None, closed="neither"), NoneOr],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "n_Ms": [Interval(Integral, 1, None, closed="left")],
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


def _ridge_step(K, y, nlam):
    """(K + nλ0 I) c + b 1 = y, 1ᵀc = 0.

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
            NumericalWarning, stacklevel=3)
        f = cho_factor(K + ridge * np.eye(n), lower=True, check_finite=False)
    U = cho_solve(f, np.column_stack([y, np.ones(n)]), check_finite=False)
    b = U[:, 0].sum() / U[:, 1].sum()
    return U[:, 0] - b * U[:, 1], float(b)


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
        J after every half-step (ridge, garrote, ridge, ...): non-increasing.
    n_iter : int
        Alternations run.
    converged : bool
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


def _ridge_fit(Z, y, theta, kernel, gamma, lambda0):
    """Kernel-ridge step at θ: returns (c, b, G, J)."""
    K = additive_gram(Z, None, theta, kernel=kernel, gamma=gamma)
    c, b = _ridge_step(K, y, y.shape[0] * lambda0)
    G = additive_kc(Z, Z, c, kernel=kernel, gamma=gamma)
    return c, b, G, _objective(y, b, G, c, theta, lambda0)


def _max_step(theta, direction, M):
    """Largest s with θ + s d ≥ 0 and Σ(θ + s d) ≤ M."""
    s = np.inf
    neg = direction < 0
    if neg.any():
        s = float(np.min(theta[neg] / -direction[neg]))
    total = direction.sum()
    if total > 0:
        s = min(s, max(M - theta.sum(), 0.0) / total)
    return s


def _alternate(Z, y, kernel, gamma, lambda0, M, theta, max_iter, tol, solver, step, extrapolate):
    """COSSO's alternating algorithm on scaled inputs Z; returns a COSSOFit.

    Over-relaxation (``extrapolate``): after a garrote step θ → θ', the ridge
    step is tried at θ + ω(θ' - θ) (ω > 1, kept feasible) and accepted only
    if J there is not above J(θ', c, b) after the garrote step; otherwise
    the ridge step is taken at θ'.  Every recorded J is thus still
    non-increasing, and the fixed points are those of the plain
    alternation; ω doubles after a success and is reset after a failure.
    """
    history = []
    converged = False
    c, b, G, J = _ridge_fit(Z, y, theta, kernel, gamma, lambda0)
    history.append(J)
    omega = 2.0
    it = 0
    for it in range(1, max_iter + 1):
        theta_new, _ = garrote_step(G, y - b, lambda0 * (G.T @ c), M=M, theta0=theta, solver=solver,
                                    problem=step)
        J_half = _objective(y, b, G, c, theta_new, lambda0)
        history.append(J_half)
        fit = None
        if extrapolate:
            d = theta_new - theta
            w = min(omega, _max_step(theta, d, M))
            if w > 1.0:
                th_ext = np.maximum(theta + w * d, 0.0)
                cand = _ridge_fit(Z, y, th_ext, kernel, gamma, lambda0)
                if cand[3] <= J_half:
                    fit, theta_new = cand, th_ext
                    omega = min(2.0 * omega, 1e3)
                else:
                    omega = 2.0
        if fit is None:
            fit = _ridge_fit(Z, y, theta_new, kernel, gamma, lambda0)
        theta = theta_new
        c, b, G, J = fit
        history.append(J)
        if history[-3] - history[-1] <= tol * max(abs(history[-1]), 1e-300):
            converged = True
            break
    return COSSOFit(theta=theta, c=c, intercept=b, lambda0=lambda0, M=float(M), kernel=kernel, gamma=gamma,
                    objective_history=history, n_iter=it, converged=converged, _Z=Z)


def cosso_gcv_lambda0(K, y, grid=None) -> tuple[float, np.ndarray, np.ndarray]:
    r"""λ0 minimising GCV of the kernel-ridge fit with intercept on kernel ``K``.

    With :math:`A = K + n\lambda_0 I`, the residual is
    :math:`y - \hat y = n\lambda_0 P y`, :math:`P = A^{-1} - A^{-1}11^\top
    A^{-1}/(1^\top A^{-1} 1)`, and
    :math:`\mathrm{GCV} = n\|(I - S)y\|^2 / \mathrm{tr}(I - S)^2` with
    :math:`I - S = n\lambda_0 P`; one eigendecomposition of K serves the
    whole grid.  Returns ``(lambda0, grid, gcv)``.
    """
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
    return float(grid[int(np.argmin(scores))]), np.asarray(grid), scores


def _prepare(X, y, kernel, gamma, lambda0):
    scaling = _Scaling.fit(X, kernel)
    Z = scaling.transform(X)
    if lambda0 is None:
        K1 = additive_gram(Z, None, None, kernel=kernel, gamma=gamma)
        lambda0 = cosso_gcv_lambda0(K1, y)[0]
    return scaling, Z, float(lambda0)


def _path_fits(X, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate=True):
    # One BLAS thread: the n x n Cholesky per alternation is small, and
    # threaded BLAS on a shared 2-core machine measured 5-60x slower
    # (n = 200-1000) than one thread.  Parallelism is over CV folds (n_jobs).
    from .._threads import method_threads

    with method_threads("cosso", X.shape[0]):
        return _path_fits_serial(X, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate)


def _path_fits_serial(X, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate):
    scaling, Z, lambda0 = _prepare(X, y, kernel, gamma, lambda0)
    const = np.all(Z == Z[:1], axis=0)
    if const.any() and not const.all():
        # a constant feature has K_j c = 0 (1ᵀc = 0): θ_j is a flat direction of the garrote step,
        # which leaves the native step's budget multiplier undetermined; it gets θ_j = 0.
        keep = np.flatnonzero(~const)
        fits = _alternate_path(Z[:, keep], y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate)
        for fit in fits:
            theta = np.zeros(Z.shape[1])
            theta[keep] = fit.theta
            fit.theta, fit._Z = theta, Z
    else:
        fits = _alternate_path(Z, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate)
    for fit in fits:
        fit._scaling = scaling
    return fits


def _alternate_path(Z, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver, accelerate):
    n, p = Z.shape
    step = GarroteStep(np.zeros((n, p)), np.zeros(n), np.zeros(p), scale=1.0 / n, M=float(Ms[0]))
    theta = np.full(p, min(1.0, float(Ms[0]) / p))
    fits = []
    for M in Ms:
        if theta.sum() > M:
            theta = theta * (M / theta.sum())
        fit = _alternate(Z, y, kernel, gamma, lambda0, float(M), theta, max_iter, tol, solver, step, accelerate)
        fits.append(fit)
        theta = fit.theta
    return fits


def _warn_unconverged(fits, max_iter, stacklevel=4):
    """One ConvergenceWarning naming the budgets M whose alternation stopped at max_iter."""
    bad = [f.M for f in fits if not f.converged]
    if bad:
        where = "M=" + ", ".join(f"{m:.3g}" for m in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        warn_not_converged("COSSO", max_iter=max_iter, where=where, what="alternations",
                           hint="increase max_iter or loosen tol (the weights theta may still move)",
                           stacklevel=stacklevel)


def _check(X, y, kernel, gamma, lambda0, max_iter, tol, caller):
    X, y = check_X_y(X, y, caller=caller)
    validate_params({"kernel": kernel, "gamma": gamma, "lambda0": lambda0, "max_iter": max_iter, "tol": tol},
                    _CONSTRAINTS, caller)
    return X, y


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
        Alternations (``max_iter=1``: Lin & Zhang's one-step update) and the
        relative decrease of J below which they stop.
    solver : str or list
        Backend of the garrote step (:func:`numkfs.solvers.solve`).
    accelerate : bool
        Over-relax the garrote step (accepted only when J does not increase;
        same fixed points, typically 5-10x fewer alternations).

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
    X, y = _check(X, y, kernel, gamma, lambda0, max_iter, tol, "cosso")
    if not (np.isfinite(M) and M > 0):
        raise ValueError(f"cosso: M must be a float > 0; got {M!r}.")
    fit = _path_fits(X, y, [float(M)], kernel, gamma, lambda0, max_iter, tol, solver, accelerate)[0]
    _warn_unconverged([fit], max_iter, stacklevel=4)
    return fit


def default_Ms(X, lambda0: float, *, kernel: str = "sobolev", n_Ms: int = 25) -> np.ndarray:
    r"""Budgets log-spaced from :math:`M_0 = n\lambda_0 / \max_j \mathrm{tr} K_j` to 1.5 p.

    Only :math:`\lambda_0 / M` matters for the fitted function (θ → sθ
    with λ0 → sλ0 leaves f unchanged), and the fit is negligible until
    :math:`\sum_j \theta_j K_j` is comparable to :math:`n\lambda_0 I`, i.e. until
    M is of order :math:`M_0`; Σθ = p (every θ_j = 1, the GCV fit) is near
    the other end.  On the KNIFE sinusoid the sparse part of the path (the
    five true components only) lies at 20-100 M_0, far below the fixed
    grid [0.1, 1.5 p] one might take by default.

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
    return np.geomspace(lo, 1.5 * p, n_Ms)


def cosso_path(X, y, Ms=None, *, kernel: str = "sobolev", gamma: float = 1.0, lambda0: float | None = None,
               n_Ms: int = 25, cv=5, max_iter: int = 200, tol: float = 1e-6, solver="auto", n_jobs=None,
               random_state=None, feature_names=None, true_support=None) -> FeaturePath:
    r"""COSSO along increasing budgets M (warm-started), with K-fold CV of M.

    Parameters
    ----------
    X, y, kernel, gamma, lambda0, max_iter, tol, solver
        As in :func:`cosso`; λ0 (GCV on all the data when None) is shared
        by every fold.
    Ms : array-like, optional
        Budgets, solved in increasing order (default :func:`default_Ms`).
    n_Ms : int, default=25
        Number of default budgets (ignored when ``Ms`` is given).
    cv : int, splitter or None
        Folds for :func:`numkfs.model_selection.cross_val_path` (COSSO's
        default 5); ``None`` skips CV.  Scores are minus the test MSE.
    n_jobs, random_state
        joblib workers over folds; seed of the fold shuffling.
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
        M, ``cv_scores`` (n_Ms, n_folds) and ``extra["models"]`` the
        :class:`COSSOFit` per M (``extra["lambda0"]``, ``extra["n_iter"]``).
    """
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    X, y = _check(X, y, kernel, gamma, lambda0, max_iter, tol, "cosso_path")
    validate_params({"n_Ms": n_Ms}, _CONSTRAINTS, "cosso_path")
    if lambda0 is None:
        lambda0 = _prepare(X, y, kernel, gamma, None)[2]
    Ms = default_Ms(X, lambda0, kernel=kernel, n_Ms=n_Ms) if Ms is None else np.sort(np.asarray(Ms, dtype=float).ravel())
    if Ms.size == 0 or not np.all(np.isfinite(Ms)) or np.any(Ms <= 0):
        raise ValueError(f"cosso_path: Ms must be finite and > 0; got {Ms!r}.")
    fits = _path_fits(X, y, Ms, kernel, gamma, lambda0, max_iter, tol, solver)
    _warn_unconverged(fits, max_iter, stacklevel=4)
    scores = None
    if cv is not None:
        def fold_fn(train, test):
            fold = _path_fits(X[train], y[train], Ms, kernel, gamma, lambda0, max_iter, tol, solver)
            return [-float(np.mean((f.predict(X[test]) - y[test]) ** 2)) for f in fold]

        scores = cross_val_path(fold_fn, X, y, cv, classifier=False, n_jobs=n_jobs, random_state=random_state)
    return FeaturePath(
        grid=Ms, weights=np.array([f.theta for f in fits]), grid_name="M", feature_names=feature_names,
        objective=np.array([f.objective for f in fits]), method="cosso", cv_scores=scores,
        true_support=true_support,
        extra={"models": fits, "lambda0": float(lambda0), "n_iter": np.array([f.n_iter for f in fits]),
               "kernel": kernel, "gamma": float(gamma)},
    )
