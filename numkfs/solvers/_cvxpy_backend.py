"""The common part of every backend reached through CVXPY.

A backend module (``ecos.py``, ``scs.py``, ``clarabel.py``) only declares
data: the CVXPY solver name, the Python module it needs, how to install it,
whether it is an interior-point or first-order method, its default
tolerances and how a single tolerance ``tol`` maps to its own options.
"""
from __future__ import annotations

import functools
import importlib.util
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ._base import SolverResult, Status, as_problem, variables_by_name

__all__ = ["CvxpyBackend", "CVXPY_STATUS_MAP"]

#: CVXPY's status strings (already mapped from each backend's codes by
#: CVXPY's own STATUS_MAP) to numkfs's statuses.
CVXPY_STATUS_MAP = {
    "optimal": Status.OPTIMAL,
    "optimal_inaccurate": Status.INACCURATE,
    "infeasible": Status.INFEASIBLE,
    "infeasible_inaccurate": Status.FAILED,
    "unbounded": Status.UNBOUNDED,
    "unbounded_inaccurate": Status.FAILED,
    "user_limit": Status.FAILED,
    "solver_error": Status.FAILED,
}


@functools.lru_cache(maxsize=None)
def cvxpy_installed_solvers() -> frozenset:
    """CVXPY's installed solvers, asked once per process (the call costs ~50 ms)."""
    import cvxpy as cp

    return frozenset(cp.installed_solvers())


@dataclass
class CvxpyBackend:
    """A conic backend reached through CVXPY.

    Attributes
    ----------
    name : str
        numkfs name (also the CVXPY solver name unless ``cvxpy_name`` is set).
    module : str
        Python module that must be importable.
    install : str
        How to install it (shown when it is missing).
    method : str
        ``"interior point"`` or ``"first order"``.
    default_tol : float
        Tolerance used when the caller gives none.
    tol_options : callable
        ``tol -> dict`` of the backend's own options.
    supports_warm_start : bool
    """

    name: str
    module: str
    install: str
    method: str
    default_tol: float
    tol_options: Callable[[float], dict]
    supports_warm_start: bool = False
    cvxpy_name: str | None = None
    extra_options: dict = field(default_factory=dict)

    @property
    def solver_name(self) -> str:
        return self.cvxpy_name or self.name

    def is_installed(self) -> bool:
        return self.solver_name in cvxpy_installed_solvers() and importlib.util.find_spec(self.module) is not None

    def version(self) -> str:
        try:
            from importlib.metadata import version

            return version(self.module)
        except Exception:  # pragma: no cover - metadata missing
            mod = importlib.import_module(self.module)
            return str(getattr(mod, "__version__", "?"))

    def options(self, tol: float | None) -> dict:
        opts = dict(self.extra_options)
        opts.update(self.tol_options(self.default_tol if tol is None else tol))
        return opts

    def solve(self, problem, *, tol: float | None = None, warm_start: bool = True, verbose: bool = False, **options) -> SolverResult:
        """Solve through CVXPY and map the outcome to a :class:`SolverResult`."""
        spec = as_problem(problem)
        prob = spec.cvxpy_problem
        opts = self.options(tol)
        opts.update(options)
        t0 = time.perf_counter()
        message = ""
        # cvxpy's own warnings ("Solution may be inaccurate", ...) do not reach the user: the status says
        # it, numkfs checks every answer and warns once itself (or falls back); they go into the message
        with warnings.catch_warnings(record=True) as raised:
            warnings.simplefilter("always")
            try:
                prob.solve(solver=self.solver_name, warm_start=warm_start and self.supports_warm_start,
                           verbose=verbose, **opts)
                status = CVXPY_STATUS_MAP.get(prob.status, Status.FAILED)
            except Exception as exc:  # cvxpy.error.SolverError and backend crashes
                status = Status.FAILED
                message = f"{type(exc).__name__}: {exc}"
        notes = list(dict.fromkeys(str(w.message).strip() for w in raised))
        if notes:
            message = "; ".join(([message] if message else []) + notes)
        wall = time.perf_counter() - t0
        stats = getattr(prob, "solver_stats", None)
        solve_time = getattr(stats, "solve_time", None) if stats is not None else None
        if solve_time is None or not np.isfinite(solve_time):
            solve_time = wall
        iterations = getattr(stats, "num_iters", None) if stats is not None else None
        solution = {}
        if status in (Status.OPTIMAL, Status.INACCURATE):
            solution = {
                name: (None if v.value is None else np.array(v.value, dtype=float))
                for name, v in variables_by_name(prob).items()
            }
            if any(val is None for val in solution.values()):
                status, solution = Status.FAILED, {}
        objective, violation = spec.evaluate(solution) if solution else (np.nan, np.nan)
        return SolverResult(
            solver=self.name,
            status=status,
            objective=objective,
            solution=solution,
            iterations=None if iterations is None else int(iterations),
            solve_time=float(solve_time),
            setup_time=float(max(wall - solve_time, 0.0)),
            max_violation=violation,
            tolerance=self.tol_options(self.default_tol if tol is None else tol),
            message=message or str(prob.status),
        )
