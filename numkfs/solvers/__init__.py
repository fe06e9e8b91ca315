"""The solver registry: ECOS, SCS, CLARABEL (through CVXPY) and native solvers.

>>> from numkfs import solvers
>>> [row["name"] for row in solvers.available_solvers(check=False)][:3]
['CLARABEL', 'ECOS', 'SCS']
"""
# Imported eagerly, not through numkfs._lazy: cross_check is a function and a submodule, and
# importing .native registers the native solvers.
from ._base import ConvexProblem, SolverError, SolverNotInstalledError, SolverResult, Status
from .cross_check import CrossCheck, cross_check
from .registry import (
    BACKENDS,
    LARGE_PROBLEM_SIZE,
    SolverFallbackWarning,
    available_solvers,
    get_backend,
    native_solvers,
    register_backend,
    register_native,
    solve,
    solver_order,
)
from .native import BoxQP, solve_box_qp  # registers the native box-QP solver

__all__ = [
    "BACKENDS",
    "BoxQP",
    "ConvexProblem",
    "CrossCheck",
    "LARGE_PROBLEM_SIZE",
    "SolverError",
    "SolverFallbackWarning",
    "SolverNotInstalledError",
    "SolverResult",
    "Status",
    "available_solvers",
    "cross_check",
    "get_backend",
    "native_solvers",
    "register_backend",
    "register_native",
    "solve",
    "solve_box_qp",
    "solver_order",
]
