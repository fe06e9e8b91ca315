r"""NMMKL: non-monotonic top-m feature selection by an MKL relaxation
(Xu, Jin, Ye, Lyu & King, ICML 2009; the NMMKL user guide (``docs/guide/nmmkl.md``)).

For ``m`` features the method solves the QCQP (paper eq. 8)

.. math::

    \max_{\alpha, \rho, \nu}\ 2\alpha^\top\mathbf 1 - \tau\alpha^\top\alpha - m\rho - \mathbf 1^\top\nu
    \quad\text{s.t.}\quad \alpha^\top y = 0,\ 0 \le \alpha \le C,\ \nu \ge 0,\
    (\alpha\circ y)^\top K_i(\alpha\circ y) \le \rho + \nu_i,

the dual of :math:`\min_{0\le p\le 1, 1^\top p = m} \omega(p)` (``ω`` the SVM
dual value with kernel :math:`\sum_i p_i K_i + \tau I`), scores every
feature by :math:`\phi_i = (\alpha\circ y)^\top K_i(\alpha\circ y)` and
selects the ``m`` largest (Algorithm 1).  Because the scores depend on
``m``, the selected sets are not nested (:func:`nmmkl_path` shows it).

Decisions where this module goes beyond or differs from the paper
------------------------------------------------------------------
* **Ties.**  At the optimum the features of the paper's set ``B`` (eq. 11)
  all have :math:`\phi_i = \rho`; the paper (Theorem 5) allows any ``m`` of
  the ranked list.  In practice ``B`` is large (hundreds of features at
  ``n = 400``), so the rule "top m of φ" is decided by rounding noise.  We
  rank by φ and break ties (``|φ_i - ρ| ≤ tie_tol · ρ``) by the relaxed
  selection :math:`p_i` (the multiplier of feature i's constraint, the
  primal variable of (7)); it is one of the discrete solutions Theorem 5
  allows, and the one closest to the relaxed optimum.
* **p.**  ``p`` is the multiplier of the quadratic constraints (the native
  interior-point solver returns it; for the CVXPY backends it is read from
  the constraint's dual value).  The paper recovers it from the KKT
  conditions by the linear program (15); :func:`recover_p` solves that LP
  (HiGHS) and reports the KKT residual; both are returned.
* **Non-linear per-feature kernels** (``kernel="rbf"``), which the paper
  leaves open (§4, "we leave this as an open problem"): ``K_i`` is the
  Gaussian kernel of feature ``i`` alone, replaced by a pivoted-Cholesky
  factor :math:`Z_iZ_i^\top` with :math:`\operatorname{tr}(K_i - Z_iZ_i^\top)
  \le` ``rank_tol`` :math:`\cdot n` (:mod:`numkfs.kernels.lowrank`); the
  constraint becomes :math:`\lVert Z_i^\top(\alpha\circ y)\rVert^2 \le \rho + \nu_i`.
  The model is additive (:math:`f = \sum_i f_i(x_i)`), so it detects
  features acting through non-monotone functions (``y = sign(x_0² − x_1²)``,
  an XOR pattern in the rotated coordinates ``x_0 ± x_1``) that linear
  selection cannot see; it cannot see pure product interactions such as
  ``sign(x_0 x_1)``.
* **Multiclass** (not in the paper): one-vs-rest, one QCQP per class.
  ``multiclass="vote"`` ranks features by the number of classes whose
  selection contains them, ties broken by ``Σ_k φ_i^{(k)}/ρ^{(k)}``;
  ``multiclass="sum"`` ranks by that sum alone.  Each class's φ is divided
  by its threshold ρ so that classes with large margins do not dominate.
* **Standardisation.**  As in the paper's experiments, features are
  centred and scaled to unit variance (on the data passed) unless
  ``standardize=False``.
"""
from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass, field

import numpy as np

from .._constraints import BOOL, GRID, N_JOBS, SOLVER, Interval, NoneOr, Options, declares
from .._validation import check_X, check_binary_labels, check_y, constant_columns
from .._preprocessing import Standardizer
from ..kernels.lowrank import rbf_feature_factors
from ..model_selection import parallel_map
from ..paths import FeaturePath
from ..solvers import solve
from ..solvers.native.nmmkl import NMMKLProblem, svm_dual_smo

__all__ = ["nmmkl", "nmmkl_path", "default_m_grid", "NMMKLResult", "recover_p", "theorem6_bound", "nmmkl_factors",
           "NMMKL_CONSTRAINTS"]

NMMKL_CONSTRAINTS = {
    "C": [Interval(numbers.Real, 0, None, closed="neither")],
    "tau": [Interval(numbers.Real, 0, None, closed="neither")],
    "kernel": [Options(("linear", "rbf"))],
    "gamma": [Interval(numbers.Real, 0, None, closed="neither"), Options(("scale",)), NoneOr],
    "rank_tol": [Interval(numbers.Real, 0, 1, closed="left")],
    "tie_tol": [Interval(numbers.Real, 0, None, closed="left")],
    "multiclass": [Options(("vote", "sum"))],
    "standardize": BOOL,
    "max_rank": [Interval(numbers.Integral, 1, None, closed="left"), NoneOr],
    "tol": [Interval(numbers.Real, 0, None, closed="neither"), NoneOr],
    "solver": SOLVER,
    # at most the number of features: checked with the data
    "m": [Interval(numbers.Integral, 1, None)],
    "kkt": BOOL,
    "return_bound": BOOL,
}

#: :func:`nmmkl_path`'s constraints: :data:`NMMKL_CONSTRAINTS` and the path's own.
_PATH_CONSTRAINTS = {
    **NMMKL_CONSTRAINTS,
    "n_grid": [Interval(numbers.Integral, 1, None, closed="left")],
    "weights": [Options(("selection", "p"))],
    "n_jobs": N_JOBS,
    "grid": GRID,
}


@dataclass
class NMMKLResult:
    """What :func:`nmmkl` returns.

    Attributes
    ----------
    support : ndarray of bool, shape (n_features,)
        The ``m`` selected features.
    scores : ndarray, shape (n_features,)
        φ (binary) or the merged one-vs-rest score (multiclass).
    phi : ndarray, shape (n_features,) or (n_classes, n_features)
    p : ndarray
        Relaxed selection (constraint multipliers), same shape as ``phi``.
    p_lp : ndarray or None
        p recovered by the paper's LP (15) (binary, when ``kkt=True``).
    kkt_residual : float or None
        Largest violation of the KKT conditions of (7) at ``(α, p_lp)``.
    alpha, rho, nu : the QCQP solution (binary) or lists of them.
    objective : float or ndarray
        QCQP value (= ω at the relaxed optimum).
    tie_set : ndarray of bool
        The paper's set B: features with φ within ``tie_tol`` of ρ.
    bound : dict or None
        Theorem 6 quantities (``return_bound=True``), see :func:`theorem6_bound`.
    solver_result : SolverResult or list of them
    classes : ndarray
    """

    support: np.ndarray
    scores: np.ndarray
    phi: np.ndarray
    p: np.ndarray
    alpha: object
    rho: object
    nu: object
    objective: object
    tie_set: np.ndarray
    solver_result: object
    classes: np.ndarray
    m: int
    p_lp: np.ndarray | None = None
    kkt_residual: float | None = None
    bound: dict | None = None
    extra: dict = field(default_factory=dict)

    @property
    def selected(self) -> np.ndarray:
        """Indices of the selected features."""
        return np.flatnonzero(self.support)


# --------------------------------------------------------------------------
# building blocks


def nmmkl_factors(X, kernel="linear", gamma="scale", rank_tol=1e-6, max_rank=None):
    """Per-feature kernel factors ``(Z, offsets)`` (``offsets=None`` for linear)."""
    if kernel == "linear":
        return X, None
    return rbf_feature_factors(X, gamma=gamma, tol=rank_tol, max_rank=max_rank)


def _select(phi, p, m, tie_tol):
    """Top ``m`` of φ; ties with the m-th value (relative ``tie_tol``) broken by p."""
    d = phi.size
    order = np.argsort(-phi, kind="stable")
    rho = phi[order[m - 1]]
    band = tie_tol * max(abs(rho), np.finfo(float).tiny)
    above = phi > rho + band
    ties = np.abs(phi - rho) <= band
    support = above.copy()
    need = m - int(above.sum())
    if need > 0:
        cand = np.flatnonzero(ties)
        key = np.lexsort((-phi[cand], -p[cand]))
        support[cand[key[:need]]] = True
    if support.sum() != m:  # cannot happen unless φ has NaN
        support = np.zeros(d, dtype=bool)
        support[order[:m]] = True
    return support, ties


def _constraint_duals(problem: NMMKLProblem):
    """p from the CVXPY problem's last solve (dual of φ_i ≤ ρ + ν_i), or None."""
    cons = problem.cvxpy_problem.constraints[-1]
    val = cons.dual_value
    return None if val is None else np.clip(np.asarray(val, dtype=float).ravel(), 0.0, 1.0)


def recover_p(problem: NMMKLProblem, alpha, *, tie_tol=1e-6, alpha_tol=1e-6):
    r"""Recover the primal selection p from α by the paper's LP (eq. 15).

    With :math:`A = \{\phi_i > \rho\}` (``p_i = 1``), :math:`C = \{\phi_i < \rho\}`
    (``p_i = 0``) and the tied set ``B`` free in [0, 1], find p with
    :math:`\mathbf 1^\top p = m` and δ such that the stationarity of the SVM
    dual holds,

    .. math::

        r_j(p, \delta) = y_j\Big[\sum_i p_i K_i(\alpha\circ y)\Big]_j + \tau\alpha_j - 1 - \delta y_j
        \ \begin{cases} = 0 & 0 < \alpha_j < C\\ \ge 0 & \alpha_j = 0\\ \le 0 & \alpha_j = C,\end{cases}

    minimising the total violation (an LP, solved by HiGHS).

    Returns
    -------
    p : ndarray of shape (n_features,)
    residual : float
        Largest remaining violation (0 up to rounding at an exact optimum),
        relative to 1 (the scale of the linear term of the SVM dual).
    """
    from scipy.optimize import linprog

    a = np.asarray(alpha, dtype=float)
    y = problem.y
    n = y.size
    d = problem.n_features
    m = problem.m
    C = problem.C
    phi = problem.phi(a)
    k = int(round(m))
    rho = np.sort(phi)[::-1][k - 1]
    band = tie_tol * max(abs(rho), np.finfo(float).tiny)
    A_set = phi > rho + band
    B_set = np.abs(phi - rho) <= band
    v = problem.Z.T @ (a * y)
    # column i of M: y ∘ (Z_i Z_iᵀ (α∘y)) = y ∘ K_i (α∘y)
    if problem.linear:
        M = (problem.Z * v) * y[:, None]
    else:
        M = np.empty((n, d))
        for i in range(d):
            sl = slice(problem.offsets[i], problem.offsets[i + 1])
            M[:, i] = y * (problem.Z[:, sl] @ v[sl])
    base = M[:, A_set].sum(axis=1) + problem.tau * a - 1.0
    MB = M[:, B_set]
    nb = MB.shape[1]
    free = (a > alpha_tol * C) & (a < C - alpha_tol * C)
    lower = a <= alpha_tol * C
    upper = a >= C - alpha_tol * C
    # variables: p_B (nb), δ (1), e⁺ (n), e⁻ (n); r = MB p_B + base − δ y
    nv = nb + 1 + 2 * n
    cost = np.zeros(nv)
    cost[nb + 1:] = 1.0
    # equality rows: r − e⁺ + e⁻ = 0 on free; sum p_B = m − |A|
    A_eq = np.zeros((n + 1, nv))
    b_eq = np.zeros(n + 1)
    A_eq[:n, :nb] = MB
    A_eq[:n, nb] = -y
    A_eq[:n, nb + 1:nb + 1 + n] = -np.eye(n)
    A_eq[:n, nb + 1 + n:] = np.eye(n)
    b_eq[:n] = -base
    A_eq[n, :nb] = 1.0
    b_eq[n] = m - A_set.sum()
    bounds = [(0.0, 1.0)] * nb + [(None, None)]
    # e⁺ may be positive except where α = C (r ≤ 0 there); e⁻ except where α = 0 (r ≥ 0)
    bounds += [(0.0, None) for _ in range(n)]
    bounds += [(0.0, None) for _ in range(n)]
    cost_plus = np.where(upper, 1.0, np.where(free, 1.0, 0.0))
    cost_minus = np.where(lower, 1.0, np.where(free, 1.0, 0.0))
    cost[nb + 1:nb + 1 + n] = cost_plus
    cost[nb + 1 + n:] = cost_minus
    res = linprog(cost, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    p = A_set.astype(float)
    if res.status != 0:
        return p, np.inf
    p[B_set] = res.x[:nb]
    viol = res.x[nb + 1:nb + 1 + n] * cost_plus + res.x[nb + 1 + n:] * cost_minus
    return p, float(np.max(viol, initial=0.0))


def theorem6_bound(problem: NMMKLProblem, p_hat, support, tie_set, *, objective=None):
    r"""Theorem 6 of the paper and an a-posteriori bound.

    .. math::

        \frac{\omega(\tilde p)}{\omega(p^*)} \le
        \frac{1}{1 - \lambda_{\max}(M^{-1/2} B M^{-1/2})},\quad
        M = \sum_i \hat p_i K_i + \tau I,\ B = \sum_{j \in B} \hat p_j K_j

    (with the label scaling of the paper, which does not change λ_max).
    ``ω(p̃)`` of the discrete selection is computed (SVM dual, SMO), which
    gives the always-valid a-posteriori ratio ``ω(p̃)/ω(p̂) ≥ ω(p̃)/ω(p*)``.

    Returns
    -------
    dict with ``lambda_max``, ``theorem6`` (the ratio bound, inf when
    λ_max ≥ 1), ``omega_selected``, ``omega_relaxed``, ``a_posteriori``.
    """
    from scipy.linalg import eigh

    Z, off, tau = problem.Z, problem.offsets, problem.tau
    counts = np.diff(off)
    n = Z.shape[0]

    def kernel(weights):
        w = np.repeat(np.sqrt(np.maximum(weights, 0.0)), counts)
        Zw = Z * w
        return Zw @ Zw.T

    M = kernel(p_hat) + tau * np.eye(n)
    Bm = kernel(np.where(tie_set, p_hat, 0.0))
    lam = float(eigh(Bm, M, eigvals_only=True, subset_by_index=[n - 1, n - 1])[0]) if tie_set.any() else 0.0
    K_sel = kernel(support.astype(float))
    _, omega_sel, _, _ = svm_dual_smo(K_sel, problem.y, problem.C, tau)
    omega_rel = float(objective) if objective is not None else np.nan
    return {"lambda_max": lam, "theorem6": (1.0 / (1.0 - lam)) if lam < 1 else np.inf,
            "omega_selected": omega_sel, "omega_relaxed": omega_rel,
            "a_posteriori": omega_sel / omega_rel if omega_rel > 0 else np.nan}


# --------------------------------------------------------------------------
# the method


def _prepare(X, y, caller, standardize):
    X = check_X(X, caller=caller)
    y = check_y(y, X.shape[0], caller=caller, numeric=False)
    constant = constant_columns(X, caller=caller)
    if standardize:
        X = Standardizer().fit_transform(X)
    X = np.where(constant[None, :], 0.0, X) if constant.any() else X
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"{caller} needs at least two classes in y; found {classes.size}.")
    from .._targets import check_class_labels

    check_class_labels(y, caller)  # a classification method: class labels only
    return X, y, classes


def _binary_targets(y, classes, caller):
    if classes.size == 2:
        y_pm, _ = check_binary_labels(y, caller=caller)
        return [y_pm]
    return [np.where(y == c, 1.0, -1.0) for c in classes]


def _solve_binary(Z, offsets, y_pm, m, C, tau, solver, tol, warm=None, problem=None):
    """One QCQP; returns (problem, SolverResult, α, φ, p)."""
    if problem is None:
        problem = NMMKLProblem(Z, y_pm, m, C, tau, offsets=offsets)
    else:
        problem.update(m=float(m), C=float(C), tau=float(tau))
    if warm is not None:
        problem.alpha0, problem.working_set = warm
    res = solve(problem, solver, tol=tol)
    alpha = np.asarray(res["alpha"], dtype=float)
    phi = problem.phi(alpha)
    p = res.solution.get("p")
    if p is None:
        p = _constraint_duals(problem)
    if p is None:
        p, _ = recover_p(problem, alpha)
    return problem, res, alpha, phi, np.asarray(p, dtype=float)


def _merge(phis, rhos, supports, m, rule):
    norm = sum(ph / max(r, np.finfo(float).tiny) for ph, r in zip(phis, rhos))
    if rule == "sum":
        key = norm
        order = np.argsort(-norm, kind="stable")
    else:
        votes = np.sum(supports, axis=0)
        order = np.lexsort((-norm, -votes))
        key = votes + norm / (norm.max() + 1.0)
    support = np.zeros(norm.size, dtype=bool)
    support[order[:m]] = True
    return support, key


def _check_m(m, d, caller):
    if not isinstance(m, numbers.Integral) or isinstance(m, bool) or not 1 <= m <= d:
        raise ValueError(f"{caller}: m must be an int in [1, {d}] (the number of features); got {m!r}.")
    return int(m)


@declares(NMMKL_CONSTRAINTS)
def nmmkl(X, y, m: int, *, kernel: str = "linear", C: float = 1.0, tau: float = 0.1, gamma="scale",
          rank_tol: float = 1e-6, max_rank: int | None = None, standardize: bool = True,
          solver="auto", tol: float | None = None, tie_tol: float = 1e-6, multiclass: str = "vote",
          kkt: bool = False, return_bound: bool = False) -> NMMKLResult:
    r"""Select ``m`` features by NMMKL (paper Algorithm 1).

    .. math::

        \max_{\alpha^\top y = 0,\ 0 \le \alpha \le C}\
        2\alpha^\top\mathbf 1 - \tau\alpha^\top\alpha - \operatorname{top}_m\big(\phi(\alpha)\big),
        \qquad \phi_i(\alpha) = (\alpha\circ y)^\top K_i (\alpha\circ y),

    (the QCQP (8) with ρ, ν eliminated); the ``m`` features with the largest
    φ are selected (ties broken by the relaxed selection p, see the module
    docstring).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Class labels (two or more classes; more: one-vs-rest).
    m : int
        Number of features to select.
    kernel : {"linear", "rbf"}
        Per-feature kernel (``"rbf"``: Gaussian kernel of each feature, by a
        low-rank factor — beyond the paper).
    C, tau : float
        SVM box bound and the ridge τ of the paper (both > 0).  A C above
        ``(1 + √n)/τ`` cannot bind (no optimal α exceeds it) and is solved
        as that value, with the same result
        (:meth:`~numkfs.solvers.native.nmmkl.NMMKLProblem.box_bound`).
    gamma : float, "scale" or None
        RBF bandwidth per feature (``"scale"``: 1/var).
    rank_tol : float
        Relative trace tolerance of the RBF factors.
    max_rank : int, optional
        Cap on each factor's rank.
    standardize : bool
        Centre and scale the features first (as in the paper).
    solver : str or list
        ``"auto"`` (native interior point), ``"native"``, ``"ECOS"``,
        ``"CLARABEL"``, ``"SCS"`` (see :func:`numkfs.solvers.solve`).
    tol : float, optional
        Solver tolerance (default: the backend's).
    tie_tol : float
        Relative tolerance defining the tied set B.
    multiclass : {"vote", "sum"}
        How one-vs-rest selections are merged.
    kkt : bool
        Also recover p by the paper's LP (15) and report the KKT residual
        (binary problems).
    return_bound : bool
        Compute the Theorem 6 bound and ω of the selection (binary problems).

    Returns
    -------
    NMMKLResult

    References
    ----------
    Z. Xu, R. Jin, J. Ye, M. R. Lyu and I. King, "Non-monotonic feature
    selection", ICML 2009.

    Examples
    --------
    >>> from numkfs.datasets import make_nmmkl_toy
    >>> X, y, _ = make_nmmkl_toy(n_samples=500, random_state=0)
    >>> nmmkl(X, y, 1, C=0.003).selected.tolist(), nmmkl(X, y, 2, C=0.003).selected.tolist()
    ([2], [0, 1])
    """
    caller = "nmmkl"
    X, y, classes = _prepare(X, y, caller, standardize)
    d = X.shape[1]
    m = _check_m(m, d, caller)
    Z, offsets = nmmkl_factors(X, kernel, gamma, rank_tol, max_rank)
    outs = []
    for y_pm in _binary_targets(y, classes, caller):
        problem, res, alpha, phi, p = _solve_binary(Z, offsets, y_pm, m, C, tau, solver, tol)
        support, ties = _select(phi, p, m, tie_tol)
        rho = float(np.sort(phi)[::-1][m - 1])
        outs.append((problem, res, alpha, phi, p, support, ties, rho))
    if len(outs) == 1:
        problem, res, alpha, phi, p, support, ties, rho = outs[0]
        out = NMMKLResult(support=support, scores=phi, phi=phi, p=p, alpha=alpha, rho=rho,
                          nu=np.maximum(phi - rho, 0.0), objective=float(res.objective), tie_set=ties,
                          solver_result=res, classes=classes, m=m)
        if kkt:
            out.p_lp, out.kkt_residual = recover_p(problem, alpha, tie_tol=tie_tol)
        if return_bound:
            out.bound = theorem6_bound(problem, p, support, ties, objective=res.objective)
        return out
    phis = np.array([o[3] for o in outs])
    rhos = [o[7] for o in outs]
    supports = np.array([o[5] for o in outs])
    support, key = _merge(phis, rhos, supports, m, multiclass)
    return NMMKLResult(support=support, scores=key, phi=phis, p=np.array([o[4] for o in outs]),
                       alpha=[o[2] for o in outs], rho=np.array(rhos),
                       nu=[np.maximum(o[3] - o[7], 0.0) for o in outs],
                       objective=np.array([o[1].objective for o in outs]),
                       tie_set=np.array([o[6] for o in outs]), solver_result=[o[1] for o in outs],
                       classes=classes, m=m, extra={"class_supports": supports})


def _target_path(y_pm, *, Z, offsets, ms, C, tau, solver, tol, tie_tol):
    """The warm-started sequence over ``ms`` for one ±1 target:
    a list of ``(phi, p, rho, support, objective)`` per m."""
    problem, warm, out = None, None, []
    for m in ms:
        problem, res, alpha, phi, p = _solve_binary(Z, offsets, y_pm, m, C, tau, solver, tol, warm=warm,
                                                    problem=problem)
        rho = float(np.sort(phi)[::-1][m - 1])
        support, ties = _select(phi, p, m, tie_tol)
        warm = (alpha, np.flatnonzero((p > 1e-8) | ties))
        out.append((phi, p, rho, support, res.objective))
    return out


def default_m_grid(n_features: int, n_grid: int = 20) -> np.ndarray:
    """The default numbers of features of :func:`nmmkl_path`: every m from 1
    to ``n_features`` when there are at most ``n_grid`` of them, else
    ``n_grid`` values spaced evenly in log m from 1 to ``n_features``
    (rounded, without repeats, so possibly fewer).

    Examples
    --------
    >>> from numkfs.methods.nmmkl import default_m_grid
    >>> default_m_grid(4).tolist(), default_m_grid(100, 5).tolist()
    ([1, 2, 3, 4], [1, 3, 10, 32, 100])
    """
    if n_features <= n_grid:
        return np.arange(1, n_features + 1)
    return np.unique(np.round(np.geomspace(1, n_features, n_grid)).astype(int))


@declares(_PATH_CONSTRAINTS, data=("X", "y", "feature_names"))
def nmmkl_path(X, y, grid=None, *, n_grid: int = 20, kernel: str = "linear", C: float = 1.0, tau: float = 0.1,
               gamma="scale", rank_tol: float = 1e-6, max_rank: int | None = None, standardize: bool = True,
               solver="auto", tol: float | None = None, tie_tol: float = 1e-6, multiclass: str = "vote",
               weights: str = "selection", feature_names=None, n_jobs=None) -> FeaturePath:
    r"""NMMKL selections for several ``m``, warm-started, as a :class:`FeaturePath`.

    The QCQP is built once; along the path only the parameter ``m`` changes
    (CVXPY backends re-use the canonicalised problem; the native solver
    starts from the previous α and working set).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Class labels (two or more classes; more: one-vs-rest).
    grid : sequence of int, optional
        Numbers of features m, in the order to compute; default
        :func:`default_m_grid` (every m up to ``n_grid`` features, else
        ``n_grid`` values evenly spaced in log m).
    n_grid : int, default=20
        Size of the default grid.
    kernel : {"linear", "rbf"}, default="linear"
        Per-feature kernel, as in :func:`nmmkl`.
    C, tau : float
        SVM box bound and the ridge τ of the paper (both > 0), as in
        :func:`nmmkl`.
    gamma : float, "scale" or None
        RBF bandwidth per feature (``"scale"``: 1/var).
    rank_tol : float
        Relative trace tolerance of the RBF factors.
    max_rank : int, optional
        Cap on each factor's rank.
    standardize : bool, default=True
        Centre and scale the features first (as in the paper).
    solver : str or list
        Backend(s), as in :func:`nmmkl` (see :func:`numkfs.solvers.solve`).
    tol : float, optional
        Solver tolerance (default: the backend's).
    tie_tol : float
        Relative tolerance defining the tied set B.
    multiclass : {"vote", "sum"}
        How one-vs-rest selections are merged.
    weights : {"selection", "p"}
        Row content of ``path.weights``: the 0/1 selection indicator or the
        relaxed selection p (binary) / the merged score (multiclass).
    n_jobs : int, optional
        joblib workers: over the one-vs-rest classes (each keeps its own
        warm-started sequence over m: identical results), or, for a binary
        problem, over contiguous chunks of ``grid`` (each chunk
        warm-started from its first point: the same answers to the solver
        tolerance).
    feature_names : sequence of str, optional
        Names of the features, stored on the path.

    Returns
    -------
    FeaturePath
        ``grid_name="m"``; ``objective`` the QCQP values; ``extra`` holds
        ``"phi"`` (n_points x n_features, or per class), ``"p"``,
        ``"selection"`` (bool), ``"rho"``, ``"nested"`` (whether the
        selection at each point contains the previous one) and
        ``"non_monotonic"`` (True when some ``S_m ⊄ S_{m'}`` with ``m < m'``).

    References
    ----------
    Z. Xu, R. Jin, J. Ye, M. R. Lyu and I. King, "Non-monotonic feature
    selection", ICML 2009.
    """
    caller = "nmmkl_path"
    names = feature_names
    if names is None and hasattr(X, "columns"):
        names = [str(c) for c in X.columns]
    X, y, classes = _prepare(X, y, caller, standardize)
    d = X.shape[1]
    if grid is None:
        grid = default_m_grid(d, n_grid)
    ms = [_check_m(mv, d, caller) for mv in np.atleast_1d(grid).tolist()]
    if not ms:
        raise ValueError(f"{caller}: grid is empty.")
    Z, offsets = nmmkl_factors(X, kernel, gamma, rank_tol, max_rank)
    targets = _binary_targets(y, classes, caller)
    # one warm-started sequence over m per binary target (one-vs-rest classes
    # are independent: joblib workers with n_jobs), then merged per m
    # a binary problem with n_jobs cuts the m grid into contiguous chunks, each
    # warm-started from its own first (cold) point: same answers to the solver tolerance
    from joblib import effective_n_jobs

    n_chunks = 1 if (n_jobs is None or len(targets) > 1) else min(effective_n_jobs(n_jobs), len(ms))
    chunks = [c for c in np.array_split(np.arange(len(ms)), n_chunks) if c.size]
    tasks = [(targets[k], [ms[i] for i in c]) for k in range(len(targets)) for c in chunks]
    run = functools.partial(_target_path, Z=Z, offsets=offsets, C=C, tau=tau, solver=solver, tol=tol,
                            tie_tol=tie_tol)
    outs = parallel_map(lambda task: run(task[0], ms=task[1]), tasks, n_jobs)
    seqs = [sum(outs[k * len(chunks):(k + 1) * len(chunks)], []) for k in range(len(targets))]
    sel, P, PHI, RHO, OBJ = [], [], [], [], []
    for i, m in enumerate(ms):
        phis, ps, rhos, sups, objs = (list(v) for v in zip(*(seq[i] for seq in seqs)))
        if len(targets) == 1:
            sel.append(sups[0]), P.append(ps[0]), PHI.append(phis[0]), RHO.append(rhos[0]), OBJ.append(objs[0])
        else:
            support, key = _merge(np.array(phis), rhos, np.array(sups), m, multiclass)
            sel.append(support), P.append(key), PHI.append(np.array(phis)), RHO.append(np.array(rhos))
            OBJ.append(float(np.sum(objs)))
    sel = np.array(sel)
    nested = np.array([True] + [bool(np.all(sel[i] <= sel[i + 1]) if ms[i] <= ms[i + 1]
                                     else np.all(sel[i + 1] <= sel[i])) for i in range(len(ms) - 1)])
    order = np.argsort(ms, kind="stable")
    non_mono = any(not np.all(sel[order[i]] <= sel[order[j]])
                   for i in range(len(ms)) for j in range(i + 1, len(ms)) if ms[order[i]] < ms[order[j]])
    W = sel.astype(float) if weights == "selection" else np.array(P)
    return FeaturePath(grid=np.array(ms, dtype=float), weights=W, grid_name="m", feature_names=names,
                       objective=np.array(OBJ), method="nmmkl", tol=0.0 if weights == "selection" else 1e-8,
                       extra={"phi": np.array(PHI), "p": np.array(P), "selection": sel, "rho": np.array(RHO),
                              "nested": nested, "non_monotonic": bool(non_mono), "classes": classes,
                              "kernel": kernel})


def nmmkl_resample_path(row, X, y, settings, *, task, grid, ratio, feature_names):
    """NMMKL's path for a resampling selector (its row's ``resample_path``):
    on the integer grid of m nearest to ``grid`` (default 1, ..., p), the
    path's grid given back in ``grid``'s units."""
    m = np.arange(1, X.shape[1] + 1) if grid is None else grid.round().astype(int)
    path = nmmkl_path(X, y, feature_names=feature_names, **{**settings, "grid": m})
    if grid is not None:
        path.grid = np.asarray(grid, dtype=float)
    return path
