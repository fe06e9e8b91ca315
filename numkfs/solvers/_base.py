"""What every backend returns and what every problem provides.

A backend (``ecos.py``, ``scs.py``, ``clarabel.py``, the native solvers)
turns a :class:`ConvexProblem` (or a plain ``cvxpy.Problem``) into a
:class:`SolverResult` with numkfs's own :class:`Status`.  Statuses of the
backends are mapped by each backend's ``STATUS_MAP``; nothing outside
``solvers/`` looks at a backend's own codes.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = [
    "Status",
    "SolverResult",
    "SolverError",
    "SolverNotInstalledError",
    "ConvexProblem",
]


class Status(str, enum.Enum):
    """numkfs's solve statuses (what a backend's own code maps to).

    A ``str`` enum: ``Status("optimal")`` is ``Status.OPTIMAL`` and each
    member compares equal to (and prints as) its value.

    Attributes
    ----------
    OPTIMAL : str
        ``"optimal"``: solved to tolerance.
    INACCURATE : str
        ``"inaccurate"``: stopped near the optimum, not to tolerance.
    INFEASIBLE : str
        ``"infeasible"``: the problem has no feasible point.
    UNBOUNDED : str
        ``"unbounded"``: the objective is unbounded.
    FAILED : str
        ``"failed"``: an error, the iteration limit without an answer, or
        numerical trouble.
    """

    OPTIMAL = "optimal"
    INACCURATE = "inaccurate"  # stopped near the optimum, not to tolerance
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    FAILED = "failed"  # error, iteration limit without an answer, numerical trouble

    def __str__(self) -> str:  # prints as the plain word in tables
        return self.value


class SolverError(RuntimeError):
    """No backend could solve the problem accurately."""


class SolverNotInstalledError(ImportError):
    """A named backend is not installed (the message says how to install it)."""


@dataclass
class SolverResult:
    """The outcome of one solve.

    A dataclass: each parameter is stored as the attribute of the same name.

    Parameters
    ----------
    solver : str
        Backend name (``"ECOS"``, ``"SCS"``, ``"CLARABEL"``, ``"native"``...).
    status : Status
        numkfs's status of the solve (``Status.OPTIMAL`` only when the answer
        is accurate; :attr:`ok` tests this).
    objective : float
        Objective value in the problem's own sense (min or max), evaluated
        by numkfs at the returned point, not taken from the backend.
    solution : dict
        Variable values (numpy arrays) by variable name; ``result[name]``
        reads one.
    iterations : int or None, default=None
        Iterations the backend reported, or None when it reports none.
    solve_time : float
        Seconds inside the backend.
    setup_time : float
        Seconds spent building / canonicalising the problem.
    max_violation : float
        Largest constraint violation at the returned point.
    tolerance : dict
        The tolerances the backend ran with.
    message : str
        Anything the backend said that a user may need.
    """

    solver: str
    status: Status
    objective: float = np.nan
    solution: dict = field(default_factory=dict)
    iterations: int | None = None
    solve_time: float = np.nan
    setup_time: float = 0.0
    max_violation: float = np.nan
    tolerance: dict = field(default_factory=dict)
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status is Status.OPTIMAL

    def __getitem__(self, name: str) -> np.ndarray:
        return self.solution[name]


class ConvexProblem:
    """A convex problem numkfs can hand to any backend.

    Subclasses build the CVXPY formulation once (:meth:`build`, using
    ``cp.Parameter`` for whatever changes along a path), name their
    variables, and may have a native solver registered for their ``kind``
    with :func:`numkfs.solvers.register_native`.

    Attributes
    ----------
    kind : str
        Problem family (``"box_qp"``, ``"nmmkl_qcqp"``, ...); selects native
        solvers and the ``auto`` rule.
    """

    kind: str = "generic"

    def __init__(self):
        self._cvxpy_problem = None

    # -- formulation ----------------------------------------------------
    def build(self):  # pragma: no cover - abstract
        """Return the ``cvxpy.Problem`` (called once, then cached)."""
        raise NotImplementedError

    @property
    def cvxpy_problem(self):
        if self._cvxpy_problem is None:
            self._cvxpy_problem = self.build()
        return self._cvxpy_problem

    def update(self, **values) -> None:
        """Set parameter values by name (the cached problem is re-used)."""
        params = {p.name(): p for p in self.cvxpy_problem.parameters()}
        for name, value in values.items():
            if name not in params:
                raise KeyError(f"{type(self).__name__} has no parameter {name!r}; it has {sorted(params)}.")
            params[name].value = value

    @property
    def size(self) -> int:
        """Number of scalar variables (used by the ``auto`` rule)."""
        return int(sum(v.size for v in self.cvxpy_problem.variables()))

    # -- evaluation, shared by every backend ------------------------------
    def evaluate(self, solution: dict) -> tuple[float, float]:
        """Objective and maximum constraint violation at ``solution``."""
        return evaluate_cvxpy(self.cvxpy_problem, solution)

    def selected(self, solution: dict) -> np.ndarray | None:
        """Features selected by ``solution`` (None where that does not apply)."""
        return None

    def relative_kkt_residual(self, solution: dict) -> float | None:
        """KKT residual of ``solution`` relative to the problem's scale, or None.

        The registry checks every answer with it (native and conic alike,
        :func:`numkfs.solvers.registry.check_answer`).  The default uses the
        problem's ``kkt_residual(x)`` and ``scale()`` methods when it has
        both and a single variable (as the KNIFE weight step and the box QP
        do); problems without them return None (no KKT check).
        """
        kkt, scale = getattr(self, "kkt_residual", None), getattr(self, "scale", None)
        if not (callable(kkt) and callable(scale)) or len(solution) != 1:
            return None
        (x,) = solution.values()
        return float(kkt(np.asarray(x, dtype=float))) / max(float(scale()), 1e-300)


class _WrappedProblem(ConvexProblem):
    """A plain ``cvxpy.Problem`` seen as a :class:`ConvexProblem`."""

    kind = "generic"

    def __init__(self, problem, selected: Callable[[dict], np.ndarray] | None = None):
        super().__init__()
        self._cvxpy_problem = problem
        self._selected = selected

    def build(self):
        return self._cvxpy_problem

    def selected(self, solution):
        return None if self._selected is None else self._selected(solution)


def as_problem(problem: Any) -> ConvexProblem:
    """Accept a :class:`ConvexProblem` or a ``cvxpy.Problem``."""
    if isinstance(problem, ConvexProblem):
        return problem
    import cvxpy as cp

    if isinstance(problem, cp.Problem):
        return _WrappedProblem(problem)
    raise TypeError(f"expected a numkfs ConvexProblem or a cvxpy.Problem; got {type(problem).__name__}.")


def variables_by_name(problem) -> dict:
    """``{name: Variable}`` for a cvxpy problem, refusing duplicate names."""
    out = {}
    for v in problem.variables():
        name = v.name()
        if name in out and out[name] is not v:
            raise ValueError(f"two variables share the name {name!r}; name them uniquely.")
        out[name] = v
    return out


def evaluate_cvxpy(problem, solution: dict) -> tuple[float, float]:
    """Evaluate objective and max violation of ``problem`` at ``solution``.

    The variables' current values are restored afterwards, so evaluating one
    backend's answer never leaks into another backend's warm start.
    """
    variables = variables_by_name(problem)
    saved = {name: v.value for name, v in variables.items()}
    try:
        for name, v in variables.items():
            if name not in solution or solution[name] is None:
                return np.nan, np.nan
            v.value = np.reshape(np.asarray(solution[name], dtype=float), v.shape)
        obj = float(problem.objective.value)
        viol = 0.0
        for c in problem.constraints:
            r = c.violation()
            viol = max(viol, float(np.max(r)) if np.size(r) else 0.0)
        return obj, viol
    finally:
        for name, v in variables.items():
            v.value = saved[name]
