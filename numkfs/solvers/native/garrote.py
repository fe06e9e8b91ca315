r"""The linear garrote (jointly convex linear KNIFE) and the non-negative garrote step.

Two convex problems with CVXPY formulations and native Numba solvers.

**Linear garrote** (kind ``"linear_garrote"``; the garrote user guide, ``docs/guide/garrote.md``; KNIFE paper eq. 4)

.. math::

    \min_{\tilde\beta,\, 0 \le w \le 1}\;
    \|y - X\tilde\beta\|^2 + \lambda_1 \sum_j \frac{\tilde\beta_j^2}{w_j}
    + \lambda_2 \sum_j w_j ,

with :math:`\tilde\beta_j^2 / 0 = 0` if :math:`\tilde\beta_j = 0` and
:math:`+\infty` otherwise (the perspective of the square, ``quad_over_lin``).
The CVXPY form compresses the least-squares term by a thin QR factorisation
:math:`X = QR` (n > p): :math:`\|y - X\beta\|^2 = \|R\beta - Q^\top y\|^2 +
(\|y\|^2 - \|Q^\top y\|^2)`, a p x p instead of an n x p block.

*Native solver*: the reverse-Huber (berHu) coordinate descent of
:mod:`numkfs.solvers.native.berhu` (w eliminated in closed form).

**Garrote step** (kind ``"garrote_step"``): the weight step shared by COSSO
and the alternating form of linear KNIFE,

.. math::

    \min_\theta\; s\|z - G\theta\|^2 + d^\top\theta
    \quad \text{s.t.}\quad 0 \le \theta \le u,\; \textstyle\sum_j \theta_j \le M,

with ``G[:, j] = K_j c`` (COSSO) or ``x_j β_j`` (linear KNIFE).  Without
the budget it is a box QP (:func:`numkfs.solvers.solve_box_qp`).  With the
budget and no upper bound (COSSO) the native solver is a primal active-set
method with the budget in the working set
(:func:`~numkfs.solvers.native.boxqp.solve_budget_qp`), checked by its KKT
residual.  Otherwise (or if that check fails) it finds the multiplier :math:`\nu \ge 0` of
:math:`\sum\theta \le M` by a safeguarded secant search: :math:`S(\nu) =
\sum_j \theta_j(\nu)`, the sum at the box-QP solution with linear term
:math:`d + \nu 1`, is non-increasing and piecewise linear in ν, so the
secant step is exact once both bracket ends share a linear piece, and a
final interpolation between the bracket solutions meets the budget.
"""
from __future__ import annotations

import time

import numpy as np

from ..._validation import check_memory
from .._base import ConvexProblem, SolverResult, Status
from ..registry import check_data, register_native, register_native_check
from .berhu import (berhu_penalty, garrote_duality_gap, garrote_lambda2_max, garrote_weights,
                    solve_linear_garrote, solve_linear_garrote_wide)
from .boxqp import solve_box_qp, solve_budget_qp

__all__ = [
    "LinearGarrote",
    "GarroteStep",
    "berhu_penalty",
    "garrote_lambda2_max",
    "garrote_weights",
    "solve_linear_garrote",
    "solve_linear_garrote_wide",
    "garrote_duality_gap",
    "solve_garrote_step",
]


# --------------------------------------------------------------------------
# problems


class _StoredParameters(ConvexProblem):
    """Parameter values kept on the problem, so the native solver never needs
    the CVXPY formulation (building it is deferred until a conic backend asks)."""

    _param_names: tuple = ()

    def update(self, **values) -> None:
        for name, value in values.items():
            if name not in self._param_names:
                raise KeyError(f"{type(self).__name__} has no parameter {name!r}; it has {sorted(self._param_names)}.")
            self._values[name] = value
        if self._cvxpy_problem is not None:
            params = {p.name(): p for p in self._cvxpy_problem.parameters()}
            for name, value in values.items():
                if name in params:
                    params[name].value = value

    def _param(self, name: str, shape=(), **kw):
        import cvxpy as cp

        return cp.Parameter(shape, name=name, value=self._values[name], **kw)


class LinearGarrote(_StoredParameters):
    r"""The linear garrote / jointly convex linear KNIFE (variables ``"beta"``, ``"w"``).

    .. math::

        \min_{\tilde\beta,\, 0 \le w \le 1}\; \|y - X\tilde\beta\|^2
        + \lambda_1 \sum_j \tilde\beta_j^2 / w_j + \lambda_2 \sum_j w_j

    ``lambda1`` and ``lambda2`` are CVXPY Parameters (change them with
    :meth:`update`); the least-squares term is QR-compressed when n > p.
    The data are used as given (centre them first for an intercept).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Data, one row per sample and one column per feature.
    y : ndarray of shape (n,)
        Target values: the response, or the class labels of a classifier.
    lambda1 : float > 0
    lambda2 : float >= 0
    compress : bool
        Use the QR compression in the CVXPY form (default True).
    penalty_weights : ndarray of shape (p,), optional
        Per-feature factors π_j ≥ 0 of the weight penalty,
        :math:`\lambda_2 \sum_j \pi_j w_j` (an adaptive garrote; default 1).
    """

    kind = "linear_garrote"
    _param_names = ("lambda1", "lambda2")

    def __init__(self, X, y, lambda1: float = 1.0, lambda2: float = 0.0, *, compress: bool = True,
                 penalty_weights=None):
        super().__init__()
        self.X = np.ascontiguousarray(X, dtype=float)
        self.y = np.ascontiguousarray(y, dtype=float).ravel()
        if lambda1 <= 0:
            raise ValueError(f"LinearGarrote: lambda1 must be > 0; got {lambda1}.")
        self.compress = compress
        p = self.X.shape[1]
        self.penalty_weights = (np.ones(p) if penalty_weights is None
                                else np.asarray(penalty_weights, dtype=float).ravel().copy())
        if self.penalty_weights.shape != (p,) or np.any(~(self.penalty_weights >= 0)):
            raise ValueError(f"LinearGarrote: penalty_weights must be {p} values >= 0.")
        self.q = self.X.T @ self.y
        self._H = self._XT = self._col_sq = None
        self._values = {"lambda1": float(lambda1), "lambda2": float(lambda2)}
        #: β̃ of the last native solve, the warm start of the next one.
        self.beta_warm = None
        #: (β̃, μ, Xᵀr) of the last wide solve: the sequential strong rule of the next one.
        self._strong_ref = None

    @property
    def H(self) -> np.ndarray:
        """The Gram matrix XᵀX (p x p), formed on first use (only the Gram solver uses it)."""
        if self._H is None:
            p = self.X.shape[1]
            check_memory(8.0 * p * p, f"The {p} x {p} Gram matrix X^T X of the linear garrote")
            self._H = self.X.T @ self.X
        return self._H

    @property
    def XT(self) -> np.ndarray:
        """Xᵀ, C-contiguous (one feature per row), for the wide solver."""
        if self._XT is None:
            self._XT = np.ascontiguousarray(self.X.T)
            self._col_sq = np.einsum("ji,ji->j", self._XT, self._XT)
        return self._XT

    @property
    def lambda1(self) -> float:
        return float(self._values["lambda1"])

    @property
    def lambda2(self) -> float:
        return float(self._values["lambda2"])

    @property
    def lambda2_vector(self) -> np.ndarray:
        """The per-feature penalty λ2 π_j."""
        return self.lambda2 * self.penalty_weights

    @property
    def size(self) -> int:
        return 2 * self.X.shape[1]

    def build(self):
        import cvxpy as cp

        n, p = self.X.shape
        if self.compress and n > p:
            Q, R = np.linalg.qr(self.X, mode="reduced")
            A, b = R, Q.T @ self.y
            offset = max(float(self.y @ self.y - b @ b), 0.0)
        else:
            A, b, offset = self.X, self.y, 0.0
        beta = cp.Variable(p, name="beta")
        w = cp.Variable(p, name="w")
        lam1 = self._param("lambda1", nonneg=True)
        lam2 = self._param("lambda2", nonneg=True)
        qol = cp.hstack([cp.quad_over_lin(beta[j], w[j]) for j in range(p)])
        objective = cp.sum_squares(A @ beta - b) + offset + lam1 * cp.sum(qol) + lam2 * (self.penalty_weights @ w)
        return cp.Problem(cp.Minimize(objective), [w >= 0, w <= 1])

    def evaluate(self, solution):
        """Objective and box violation at ``solution``.

        A coordinate returned with ``w_j <= 0`` (a conic solver's round-off;
        counted in the violation) is evaluated at its best feasible weight
        ``min(1, |β̃_j|/κ)``, i.e. its term is ``ρ(β̃_j)``: without this an
        answer such as ``w_j = -1e-12, β̃_j = 1e-13`` would score +inf.
        """
        beta = np.asarray(solution["beta"], dtype=float).ravel()
        w = np.asarray(solution["w"], dtype=float).ravel()
        r = self.y - self.X @ beta
        pos = w > 0.0
        l2 = self.lambda2_vector
        terms = berhu_penalty(beta, self.lambda1, l2)  # w_j <= 0: its best feasible w_j
        wp = np.where(pos, w, 1.0)
        terms = np.where(pos, self.lambda1 * beta * beta / wp + l2 * w, terms)
        obj = float(r @ r + terms.sum())
        viol = max(0.0, float(np.max(-w, initial=0.0)), float(np.max(w - 1.0, initial=0.0)))
        return obj, viol

    def reduced_objective(self, beta) -> float:
        """``||y - Xβ̃||² + Σ ρ(β̃_j)``: the objective with w at its optimum for ``beta``."""
        r = self.y - self.X @ np.asarray(beta, dtype=float)
        return float(r @ r + berhu_penalty(beta, self.lambda1, self.lambda2_vector).sum())

    def selected(self, solution):
        w = np.asarray(solution["w"], dtype=float)
        return w > 1e-5


class GarroteStep(_StoredParameters):
    r"""The non-negative garrote step (variable ``"theta"``).

    .. math::

        \min_\theta\; s\,\|z - G\theta\|^2 + d^\top\theta
        \quad\text{s.t.}\quad 0 \le \theta \le u,\ \textstyle\sum_j\theta_j \le M

    ``G``, ``z``, ``d`` (and ``M`` when ``budget=True``) are CVXPY
    Parameters, set with :meth:`update`.

    Parameters
    ----------
    G : ndarray of shape (n, p)
    z : ndarray of shape (n,)
    d : ndarray of shape (p,)
    scale : float
        The factor s of the least-squares term (COSSO: 1/n).
    upper : float
        Upper bound u on every θ_j (``np.inf``: none; linear KNIFE: 1).
    M : float, optional
        The budget; ``None`` drops the constraint Σθ ≤ M.
    """

    kind = "garrote_step"
    _param_names = ("G", "z", "d", "M")

    def __init__(self, G, z, d, *, scale: float = 1.0, upper: float = np.inf, M: float | None = None,
                 theta0=None):
        super().__init__()
        G = np.asarray(G, dtype=float)
        self.shape = G.shape
        self.scale = float(scale)
        self.upper = float(upper)
        self.budget = M is not None
        self._values = {"G": G, "z": np.asarray(z, dtype=float).ravel(),
                        "d": np.asarray(d, dtype=float).ravel(), "M": None if M is None else float(M)}
        #: θ of the last native solve (the warm start of the next one).
        self.theta_warm = None if theta0 is None else np.asarray(theta0, dtype=float)

    def __getattr__(self, name):
        if name in type(self)._param_names and "_values" in self.__dict__:
            return self.__dict__["_values"][name]
        raise AttributeError(name)

    @property
    def size(self) -> int:
        return self.shape[1]

    def build(self):
        import cvxpy as cp

        n, p = self.shape
        theta = cp.Variable(p, name="theta")
        G = self._param("G", (n, p))
        z = self._param("z", (n,))
        d = self._param("d", (p,))
        objective = self.scale * cp.sum_squares(z - G @ theta) + d @ theta
        cons = [theta >= 0]
        if np.isfinite(self.upper):
            cons.append(theta <= self.upper)
        if self.budget:
            cons.append(cp.sum(theta) <= self._param("M", nonneg=True))
        return cp.Problem(cp.Minimize(objective), cons)

    def evaluate(self, solution):
        theta = np.asarray(solution["theta"], dtype=float).ravel()
        r = self.z - self.G @ theta
        obj = float(self.scale * (r @ r) + self.d @ theta)
        viol = max(0.0, float(np.max(-theta, initial=0.0)), float(np.max(theta - self.upper, initial=0.0)))
        if self.budget:
            viol = max(viol, float(theta.sum() - self.M))
        return obj, viol

    def selected(self, solution):
        return np.asarray(solution["theta"], dtype=float) > 1e-6


def solve_garrote_step(G, z, d, *, scale: float = 1.0, upper: float = np.inf, M: float | None = None,
                       theta0=None, tol: float = 1e-10, max_search: int = 200):
    """Native garrote step; returns ``(theta, nu, box_qp_solves, kkt_residual)``.

    ``nu`` is the multiplier of the budget Σθ ≤ M (0 when it is inactive).
    """
    G = np.asarray(G, dtype=float)
    z = np.asarray(z, dtype=float).ravel()
    Q = 2.0 * scale * (G.T @ G)
    c = np.asarray(d, dtype=float).ravel() - 2.0 * scale * (G.T @ z)
    p = c.shape[0]
    kkt_scale = max(1.0, float(np.max(np.abs(c), initial=0.0)))
    if M is not None and not np.isfinite(upper):
        # the budget and θ ≥ 0 together in one active-set method (the multiplier search
        # below needs a box-QP solve per trial multiplier); checked, else the search runs
        theta, _, res, nu = solve_budget_qp(Q, c, M, theta0, tol=tol)
        if res <= tol * kkt_scale and np.all(np.isfinite(theta)):
            return theta, nu, 1, res
    theta, _, res = solve_box_qp(Q, c, 0.0, upper, theta0, tol=tol)
    solves = 1
    if M is None or theta.sum() <= M:
        return theta, 0.0, solves, res
    # bracket the multiplier: S(lo) > M >= S(hi); at nu >= max(-c) theta = 0
    lo, s_lo, th_lo = 0.0, theta.sum(), theta
    hi = max(float(np.max(-c)), 0.0)
    th_hi, s_hi = np.zeros(p), 0.0
    side = 0
    exact = False
    for _ in range(max_search):
        if side == 2 or side == -2:  # the same end moved twice: bisect
            nu = 0.5 * (lo + hi)
            side = 0
        else:
            nu = lo + (s_lo - M) * (hi - lo) / (s_lo - s_hi)
        th, _, res = solve_box_qp(Q, c + nu, 0.0, upper, th_lo, tol=tol)
        solves += 1
        s = th.sum()
        if abs(s - M) <= 1e-12 * max(1.0, M):
            theta, exact = th, True
            break
        if s > M:
            lo, s_lo, th_lo = nu, s, th
            side = side + 1 if side >= 0 else 1
        else:
            hi, s_hi, th_hi = nu, s, th
            side = side - 1 if side <= 0 else -1
        if hi - lo <= 1e-14 * max(1.0, hi):
            break
        # with p > n the minimisers at the critical multiplier form a face on which Σθ
        # varies: stop as soon as the interpolation of the bracket's ends is optimal
        t = (s_lo - M) / (s_lo - s_hi)
        if _budget_kkt(Q, c, th_lo + t * (th_hi - th_lo), upper, M)[0] <= tol * kkt_scale:
            break
    if not exact:
        # S is linear between the bracket ends once they share a piece:
        # the convex combination meets the budget and stays in the box
        t = (s_lo - M) / (s_lo - s_hi)
        theta = th_lo + t * (th_hi - th_lo)
    s = theta.sum()
    if s > M:
        theta = theta * (M / s)
    res, nu = _budget_kkt(Q, c, theta, upper, M)
    return theta, nu, solves, res


def _budget_kkt(Q, c, theta, upper, M):
    """(KKT residual, multiplier): ν fitted to the free coordinates (the
    residual is minimised over ν ≥ 0, ν = 0 when the budget is slack)."""
    g = Q @ theta + c
    free = (theta > 0.0) & (theta < upper)
    nu = 0.0
    if theta.sum() >= M - 1e-9 * max(1.0, M) and free.any():
        nu = max(0.0, float(np.median(-g[free])))
    g = g + nu
    g = np.where((theta <= 0.0) & (g > 0), 0.0, g)
    g = np.where((theta >= upper) & (g < 0), 0.0, g)
    return float(np.max(np.abs(g), initial=0.0)), nu


# --------------------------------------------------------------------------
# native solvers registered with the registry


#: The native linear-garrote algorithm for ``algorithm="auto"``: ``"auto"``
#: picks the Gram loop when n >= p and the wide solver when p > n;
#: ``"gram"`` or ``"wide"`` forces one (``"gram"`` is the solver of numkfs
#: <= 0.1, kept for comparison: see ``benchmarks/garrote_wide.py``).
NATIVE_ALGORITHM = "auto"


def _garrote_algorithm(problem, algorithm):
    if algorithm == "auto":
        algorithm = NATIVE_ALGORITHM
    if algorithm == "auto":
        n, p = problem.X.shape
        algorithm = "wide" if p > n else "gram"
    if algorithm not in ("gram", "wide"):
        raise ValueError(f"linear garrote: algorithm must be 'auto', 'gram' or 'wide'; got {algorithm!r}.")
    return algorithm


@register_native("linear_garrote", method="berHu coordinate descent (Numba; working set + exact partition solve "
                 "when p > n)", default_tol=1e-10)
def _native_linear_garrote(problem: LinearGarrote, *, tol, warm_start=True, max_sweeps=100_000,
                           algorithm="auto"):
    t0 = time.perf_counter()
    beta0 = problem.beta_warm if (warm_start and problem.beta_warm is not None) else None
    l2 = problem.lambda2_vector
    extra = ""
    if _garrote_algorithm(problem, algorithm) == "gram":
        beta, w, sweeps, res = solve_linear_garrote(problem.H, problem.q, problem.lambda1, l2,
                                                    beta0, tol=tol, max_sweeps=max_sweeps)
    else:
        XT = problem.XT
        mu = np.sqrt(problem.lambda1 * l2)
        strong = None
        ref = problem._strong_ref
        if beta0 is not None and ref is not None and np.array_equal(ref[0], beta0):
            # sequential strong rule: |x_jᵀr(λ_prev)| >= 2 μ_j - μ_j,prev
            strong = np.abs(ref[2]) >= 2.0 * mu - ref[1]
        beta, w, info = solve_linear_garrote_wide(problem.X, problem.y, problem.lambda1, l2, beta0, tol=tol,
                                                  max_sweeps=max_sweeps, XT=XT, col_sq=problem._col_sq,
                                                  strong=strong)
        sweeps, res = info["sweeps"], info["kkt"]
        problem._strong_ref = (beta.copy(), mu, info["v"].copy())
        tried, accepted = info["polish"]
        extra = (f"; {info['outer']} full checks, working set <= {info['working_set']}, "
                 f"exact partition solves {accepted}/{tried}")
    elapsed = time.perf_counter() - t0
    sol = {"beta": beta, "w": w}
    obj, viol = problem.evaluate(sol)
    scale = max(1.0, float(np.max(np.abs(problem.q), initial=0.0)))
    status = Status.OPTIMAL if res <= tol * scale else Status.INACCURATE
    if status is Status.OPTIMAL and np.all(np.isfinite(beta)):  # never warm-start from a failed solve
        problem.beta_warm = beta.copy()
    return SolverResult(solver="native", status=status, objective=obj, solution=sol, iterations=sweeps,
                        solve_time=elapsed, max_violation=viol, tolerance={"kkt": tol},
                        message=f"KKT residual {res:.1e}{extra}")


@register_native("garrote_step", method="box-QP coordinate descent + multiplier search (Numba)",
                 default_tol=1e-10)
def _native_garrote_step(problem: GarroteStep, *, tol, warm_start=True):
    t0 = time.perf_counter()
    theta0 = problem.theta_warm if warm_start else None
    theta, nu, solves, res = solve_garrote_step(problem.G, problem.z, problem.d, scale=problem.scale,
                                                upper=problem.upper, M=problem.M if problem.budget else None,
                                                theta0=theta0, tol=tol)
    elapsed = time.perf_counter() - t0
    sol = {"theta": theta}
    obj, viol = problem.evaluate(sol)
    # the box-QP solves stop at tol * max|linear term|; allow the interpolation's round-off
    kscale = max(1.0, float(np.max(np.abs(problem.d), initial=0.0)),
                 float(2.0 * problem.scale * np.max(np.abs(problem.G.T @ problem.z), initial=0.0)))
    status = Status.OPTIMAL if res <= 100.0 * tol * kscale else Status.INACCURATE
    if status is Status.OPTIMAL and np.all(np.isfinite(theta)):  # never warm-start from a failed solve
        problem.theta_warm = theta.copy()
    return SolverResult(solver="native", status=status, objective=obj, solution=sol, iterations=solves,
                        solve_time=elapsed, max_violation=viol, tolerance={"kkt": tol},
                        message=f"KKT residual {res:.1e}, budget multiplier {nu:.3g}")


@register_native_check("linear_garrote")
def _linear_garrote_check():
    X, y = check_data()
    return LinearGarrote(X - X.mean(axis=0), y - y.mean(), 1.0, 0.5), None


@register_native_check("garrote_step")
def _garrote_step_check():
    X, y = check_data()
    return GarroteStep(X, y, np.full(X.shape[1], 0.1), scale=1.0 / X.shape[0], M=0.5), None
