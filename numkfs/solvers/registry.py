"""The solver registry: which backends exist, which one ``auto`` picks, and
the fall-back from an inaccurate or failed solve to the next backend.

Rule of ``solver="auto"`` (backed by ``benchmarks/results/solvers.md``):

1. the native Numba solver registered for the problem's ``kind``, if any;
2. for problems with at most :data:`LARGE_PROBLEM_SIZE` scalar variables,
   the interior-point backends CLARABEL then ECOS (accurate to 1e-9 and
   fastest there), then SCS;
3. for larger problems SCS at tolerance 1e-9 first (its per-iteration cost
   grows linearly where the interior-point factorisations do not), then
   CLARABEL and ECOS.

Only installed backends are tried.  Every backend's answer is checked by
numkfs (status *and* constraint violation at the returned point); an answer
that is not accurate makes the registry warn, naming both backends, and try
the next one; a backend that raises an exception counts as a failed solve
(its exception is named in the warning).  When none succeeds a
:class:`SolverError` lists what each said.  A wrong answer is never returned silently.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import clarabel as _clarabel
from . import ecos as _ecos
from . import scs as _scs
from ._base import ConvexProblem, SolverError, SolverNotInstalledError, SolverResult, Status, as_problem
from ._cvxpy_backend import CvxpyBackend, cvxpy_installed_solvers

__all__ = [
    "BACKENDS",
    "LARGE_PROBLEM_SIZE",
    "SolverFallbackWarning",
    "available_solvers",
    "get_backend",
    "register_backend",
    "register_native",
    "native_solvers",
    "solver_order",
    "solve",
]

#: Problems with more scalar variables than this go to SCS first.
LARGE_PROBLEM_SIZE = 800

#: Constraint violation above which an "optimal" answer counts as inaccurate.
VIOLATION_TOL = 1e-6

#: CVXPY-reached backends by name, in preference order for small problems.
BACKENDS: dict[str, CvxpyBackend] = {
    b.name: b for b in (_clarabel.BACKEND, _ecos.BACKEND, _scs.BACKEND)
}


class SolverFallbackWarning(UserWarning):
    """A backend's answer was not accurate; the next backend was tried."""


@dataclass
class NativeSolver:
    """A native (Numba) solver for one problem kind.

    ``function(problem, tol=..., warm_start=...) -> SolverResult``.
    """

    kind: str
    function: Callable[..., SolverResult]
    method: str
    default_tol: float

    name = "native"

    def is_installed(self) -> bool:
        return True

    def version(self) -> str:
        from .. import __version__

        return f"numkfs {__version__}"

    def solve(self, problem, *, tol=None, warm_start=True, verbose=False, **options) -> SolverResult:
        res = self.function(problem, tol=self.default_tol if tol is None else tol, warm_start=warm_start, **options)
        if not np.isfinite(res.max_violation) and res.solution:
            res.objective, res.max_violation = problem.evaluate(res.solution)
        return res


_NATIVE: dict[str, NativeSolver] = {}


def register_backend(backend: CvxpyBackend) -> None:
    """Add (or replace) a CVXPY-reached backend."""
    BACKENDS[backend.name] = backend


def register_native(kind: str, *, method: str, default_tol: float = 1e-10):
    """Decorator registering a native solver for problems of ``kind``."""

    def deco(function):
        _NATIVE[kind] = NativeSolver(kind, function, method, default_tol)
        return function

    return deco


def native_solvers() -> dict[str, NativeSolver]:
    """The registered native solvers by problem kind."""
    return dict(_NATIVE)


def get_backend(name: str, kind: str | None = None):
    """The backend called ``name`` (case-insensitive); ``"native"`` needs ``kind``.

    Raises
    ------
    SolverNotInstalledError
        The backend is known but not installed (the message says how to
        install it).
    ValueError
        Unknown name, or no native solver for ``kind``.
    """
    key = name.upper()
    if key == "NATIVE":
        if kind not in _NATIVE:
            raise ValueError(
                f"There is no native solver for problems of kind {kind!r}; native solvers exist for "
                f"{sorted(_NATIVE) or 'no kind'}. Use solver='auto' or a conic backend."
            )
        return _NATIVE[kind]
    by_upper = {k.upper(): k for k in BACKENDS}
    if key in by_upper:
        b = BACKENDS[by_upper[key]]
        if not b.is_installed():
            raise SolverNotInstalledError(
                f"The solver {b.name!r} is not installed. Install it with `{b.install}`."
            )
        return b
    installed = cvxpy_installed_solvers()
    if key in installed:  # any other conic solver CVXPY knows
        return CvxpyBackend(key, module="cvxpy", install="", method="(CVXPY)", default_tol=np.nan,
                            tol_options=lambda tol: {})
    raise ValueError(
        f"Unknown solver {name!r}. Known: 'auto', 'native', {sorted(BACKENDS)} and the other solvers "
        f"CVXPY has installed: {sorted(installed - set(BACKENDS))}."
    )


def solver_order(problem: ConvexProblem) -> list[str]:
    """The backends ``solver="auto"`` tries for ``problem``, in order."""
    order = ["native"] if problem.kind in _NATIVE else []
    if problem.size <= LARGE_PROBLEM_SIZE:
        order += ["CLARABEL", "ECOS", "SCS"]
    else:
        order += ["SCS", "CLARABEL", "ECOS"]
    return [s for s in order if s == "native" or (s in BACKENDS and BACKENDS[s].is_installed())]


def _accurate(res: SolverResult, violation_tol: float) -> bool:
    if res.status is not Status.OPTIMAL:
        return False
    if not np.isfinite(res.objective):
        return False
    return bool(np.isfinite(res.max_violation) and res.max_violation <= violation_tol)


def solve(
    problem,
    solver: str | list[str] = "auto",
    *,
    tol: float | None = None,
    fallback: bool = True,
    warm_start: bool = True,
    violation_tol: float = VIOLATION_TOL,
    verbose: bool = False,
    **options,
) -> SolverResult:
    """Solve a convex problem through the registry.

    Parameters
    ----------
    problem : ConvexProblem or cvxpy.Problem
    solver : str or list of str
        ``"auto"`` (see the module docstring), ``"native"``, a backend name,
        or a list of names to try in order.
    tol : float, optional
        Tolerance passed to every backend (each maps it to its own options);
        default: each backend's own numkfs default (1e-9 for the conic ones).
    fallback : bool
        When a backend's answer is not accurate, warn and try the next one
        (the rest of the ``auto`` order after a named solver).
    violation_tol : float
        Largest constraint violation accepted from an "optimal" answer.

    Returns
    -------
    SolverResult
        From the first backend whose answer is accurate.

    Raises
    ------
    SolverError
        No backend gave an accurate answer (the message lists each one's).
    """
    spec = as_problem(problem)
    auto = isinstance(solver, str) and solver.lower() == "auto"
    if auto:
        # a native solver goes first; the rest of the order (which needs the
        # problem's size, i.e. its CVXPY formulation) is worked out only if
        # the native answer is not accurate
        names = ["native"] if spec.kind in _NATIVE else solver_order(spec)
    else:
        names = [solver] if isinstance(solver, str) else list(solver)
    complete = not fallback or (auto and spec.kind not in _NATIVE)
    tried: list[SolverResult] = []
    backend = get_backend(names[0], spec.kind)
    i = 0
    while True:
        try:
            res = backend.solve(spec, tol=tol, warm_start=warm_start, verbose=verbose, **options)
        except (MemoryError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a crashing backend counts as a failed solve: fall back, never crash
            res = SolverResult(getattr(backend, "name", str(backend)), Status.FAILED,
                               message=f"raised {type(exc).__name__}: {exc}")
        if res.status is Status.OPTIMAL and res.solution and not np.isfinite(res.max_violation):
            res.objective, res.max_violation = spec.evaluate(res.solution)
        if _accurate(res, violation_tol):
            return res
        if res.status is Status.OPTIMAL:
            res.status = Status.INACCURATE
            res.message = (res.message + "; " if res.message else "") + (
                f"constraint violation {res.max_violation:.2e} > {violation_tol:.0e}"
            )
        tried.append(res)
        if not fallback:
            break
        if i + 1 == len(names) and not complete:
            names += [s for s in solver_order(spec) if s.upper() not in {n.upper() for n in names}]
            complete = True
        if i + 1 == len(names):
            break
        i += 1
        nxt = get_backend(names[i], spec.kind)
        warnings.warn(
            f"solver {backend.name} returned '{res.status}' ({res.message}); falling back to {nxt.name}.",
            SolverFallbackWarning,
            stacklevel=2,
        )
        backend = nxt
    detail = "; ".join(f"{r.solver}: {r.status} ({r.message})" for r in tried)
    raise SolverError(f"No solver returned an accurate solution for this {spec.kind} problem. {detail}")


def available_solvers(check: bool = True) -> list[dict]:
    """Every backend with its version and whether it solves a tiny problem.

    Returns a list of dicts with keys ``name``, ``method``, ``installed``,
    ``version``, ``works`` (None when ``check`` is False), ``install``.
    """
    rows = []
    tiny = _tiny_problem() if check else None
    for b in BACKENDS.values():
        installed = b.is_installed()
        row = {"name": b.name, "method": b.method, "installed": installed,
               "version": b.version() if installed else "-", "install": b.install, "works": None}
        if installed and check:
            res = b.solve(tiny, warm_start=False)
            row["works"] = bool(_accurate(res, VIOLATION_TOL) and abs(res.objective - 0.5) < 1e-6)
        rows.append(row)
    for kind, nat in sorted(_NATIVE.items()):
        rows.append({"name": f"native:{kind}", "method": nat.method, "installed": True,
                     "version": nat.version(), "install": "", "works": None})
    return rows


def _tiny_problem():
    """min (x1-1)² + (x2-1)² s.t. x1 + x2 <= 1, x >= 0: optimum 0.5 at (0.5, 0.5)."""
    import cvxpy as cp

    x = cp.Variable(2, name="x")
    return cp.Problem(cp.Minimize(cp.sum_squares(x - 1)), [cp.sum(x) <= 1, x >= 0])
