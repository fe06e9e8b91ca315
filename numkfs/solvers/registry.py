"""The solver registry: which backends exist, which one ``auto`` picks, and
the fall-back from an inaccurate or failed solve to the next backend.

Rule of ``solver="auto"`` (``benchmarks/solvers.py`` measures the backends
on numkfs's problems; see the solvers guide):

1. the native Numba solver registered for the problem's ``kind``, if any;
2. for problems with at most :data:`LARGE_PROBLEM_SIZE` scalar variables,
   the interior-point backends CLARABEL then ECOS (accurate to 1e-9 and
   fastest there), then SCS;
3. for larger problems SCS at tolerance 1e-9 first (its per-iteration cost
   grows linearly where the interior-point factorisations do not), then
   CLARABEL and ECOS.

Interior-point backends are left out of the order for a semidefinite cone
of side above :data:`INTERIOR_POINT_SDP_MAX_SIDE` (their factorisation of
the cone grows like the side to the fourth power: CLARABEL needed 1.5 GB at
side 100 and 23 GB at side 300); named explicitly, they still run.

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
    "INTERIOR_POINT_SDP_MAX_SIDE",
    "LARGE_PROBLEM_SIZE",
    "SolverFallbackWarning",
    "available_solvers",
    "get_backend",
    "register_backend",
    "register_native",
    "register_native_check",
    "native_solvers",
    "run_backend",
    "check_answer",
    "solver_order",
    "solve",
]

#: Problems with more scalar variables than this go to SCS first.
LARGE_PROBLEM_SIZE = 800

#: Largest side of a semidefinite cone ``auto`` hands to an interior-point
#: backend (its memory grows like the side**4: a fraction of a GB at this side).
INTERIOR_POINT_SDP_MAX_SIDE = 64

#: Constraint violation above which an "optimal" answer counts as inaccurate.
VIOLATION_TOL = 1e-6

#: CVXPY-reached backends by name, in preference order for small problems.
BACKENDS: dict[str, CvxpyBackend] = {
    b.name: b for b in (_clarabel.BACKEND, _ecos.BACKEND, _scs.BACKEND)
}


#: Other solvers CVXPY can use, and how to install them (said when one is asked for but missing).
OTHER_CVXPY_SOLVERS = {
    "MOSEK": "pip install mosek` (it needs a licence: https://www.mosek.com/, free for academics",
    "GUROBI": "pip install gurobipy` (it needs a licence: https://www.gurobi.com/",
    "CVXOPT": "pip install cvxopt",
    "OSQP": "pip install osqp",
    "PIQP": "pip install piqp",
    "PROXQP": "pip install proxsuite",
    "SCIP": "pip install pyscipopt",
    "COPT": "pip install coptpy",
    "XPRESS": "pip install xpress",
    "CPLEX": "pip install cplex",
    "GLPK": "pip install cvxopt",
    "HIGHS": "pip install highspy",
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
        return self.function(problem, tol=self.default_tol if tol is None else tol, warm_start=warm_start, **options)


_NATIVE: dict[str, NativeSolver] = {}


def register_backend(backend: CvxpyBackend) -> None:
    """Add (or replace) a CVXPY-reached backend.

    Parameters
    ----------
    backend : CvxpyBackend
        The backend; it is stored under ``backend.name``, replacing any
        backend of that name.
    """
    BACKENDS[backend.name] = backend


def register_native(kind: str, *, method: str, default_tol: float = 1e-10):
    """Decorator registering a native solver for problems of ``kind``.

    Parameters
    ----------
    kind : str
        The :attr:`ConvexProblem.kind` the decorated function solves; it
        replaces any native solver registered for that kind.
    method : str
        Short description of the algorithm, shown in solver tables.
    default_tol : float, default=1e-10
        Tolerance passed to the function when :func:`solve` gets ``tol=None``.

    Returns
    -------
    callable
        The decorator; it returns the function unchanged.
    """

    def deco(function):
        _NATIVE[kind] = NativeSolver(kind, function, method, default_tol)
        return function

    return deco


def native_solvers() -> dict[str, NativeSolver]:
    """The registered native solvers by problem kind."""
    return dict(_NATIVE)


def get_backend(name: str, kind: str | None = None):
    """The backend called ``name`` (case-insensitive); ``"native"`` needs ``kind``.

    Parameters
    ----------
    name : str
        ``"native"``, a registered backend name, or any other solver name
        CVXPY has installed (case-insensitive).
    kind : str or None, default=None
        Problem kind whose native solver ``"native"`` means; ignored for
        other names.

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
    if key in OTHER_CVXPY_SOLVERS and key not in installed:
        raise SolverNotInstalledError(
            f"The solver {key!r} is not installed. Install it with `{OTHER_CVXPY_SOLVERS[key]}"
            f"{')' if '(' in OTHER_CVXPY_SOLVERS[key] else '`'}; numkfs reaches it through CVXPY."
        )
    if key in installed:  # any other conic solver CVXPY knows
        return CvxpyBackend(key, module="cvxpy", install="", method="(CVXPY)", default_tol=np.nan,
                            tol_options=lambda tol: {})
    raise ValueError(
        f"Unknown solver {name!r}. Known: 'auto', 'native', {sorted(BACKENDS)} and the other solvers "
        f"CVXPY has installed: {sorted(installed - set(BACKENDS))}."
    )


def solver_order(problem: ConvexProblem) -> list[str]:
    """The backends ``solver="auto"`` tries for ``problem``, in order.

    Parameters
    ----------
    problem : ConvexProblem
        The problem: its ``kind`` decides whether ``"native"`` comes first,
        its ``size`` whether SCS comes before CLARABEL and ECOS.

    Returns
    -------
    list of str
        The installed backends, in the order they are tried.
    """
    order = ["native"] if problem.kind in _NATIVE else []
    if problem.size <= LARGE_PROBLEM_SIZE:
        order += ["CLARABEL", "ECOS", "SCS"]
    else:
        order += ["SCS", "CLARABEL", "ECOS"]
    big_sdp = _psd_side(problem) > INTERIOR_POINT_SDP_MAX_SIDE
    return [s for s in order if s == "native" or (s in BACKENDS and BACKENDS[s].is_installed()
                                                  and _has_cones(BACKENDS[s], problem)
                                                  and not (big_sdp and BACKENDS[s].method == "interior point"))]


def _psd_side(problem) -> int:
    """The largest side of a semidefinite constraint of ``problem`` (0 when it has none)."""
    from cvxpy.constraints import PSD

    return max((int(c.args[0].shape[0]) for c in problem.cvxpy_problem.constraints if isinstance(c, PSD)),
               default=0)


def _has_cones(backend, problem) -> bool:
    """Whether CVXPY's interface to ``backend`` has a semidefinite cone when
    ``problem`` has a semidefinite constraint (ECOS has none)."""
    from cvxpy.constraints import PSD

    if not any(isinstance(c, PSD) for c in problem.cvxpy_problem.constraints):
        return True
    try:
        from cvxpy.reductions.solvers.defines import SOLVER_MAP_CONIC

        cones = SOLVER_MAP_CONIC[backend.solver_name].SUPPORTED_CONSTRAINTS
    except (ImportError, KeyError, AttributeError):  # an interface CVXPY does not describe: let it try
        return True
    return any(issubclass(c, PSD) or "PSD" in c.__name__ for c in cones)  # PSD or CVXPY's SvecPSD


#: Largest relative KKT residual accepted from an "optimal" answer (problems
#: that can compute one, see :meth:`ConvexProblem.relative_kkt_residual`).
KKT_TOL = 1e-6


def run_backend(backend, problem: ConvexProblem, *, violation_tol: float = VIOLATION_TOL, **kwargs) -> SolverResult:
    """Call ``backend.solve(problem, **kwargs)`` and check its answer.

    The one place where a backend is called: :func:`solve`,
    :func:`~numkfs.solvers.cross_check` and :func:`available_solvers` all go
    through it, so a backend that raises is a failed solve everywhere (its
    exception is named in the message), and every answer, native or conic,
    is checked by :func:`check_answer`.
    """
    name = getattr(backend, "name", str(backend))
    problem = as_problem(problem)
    try:
        res = backend.solve(problem, **kwargs)
    except (MemoryError, KeyboardInterrupt):
        raise
    except Exception as exc:  # a crashing backend counts as a failed solve: fall back, never crash
        return SolverResult(name, Status.FAILED, message=f"raised {type(exc).__name__}: {exc}")
    if not isinstance(res, SolverResult):
        return SolverResult(name, Status.FAILED, message=f"returned a {type(res).__name__}, not a SolverResult")
    return check_answer(problem, res, violation_tol=violation_tol)


def check_answer(problem: ConvexProblem, res: SolverResult, *, violation_tol: float = VIOLATION_TOL,
                 kkt_tol: float = KKT_TOL) -> SolverResult:
    """numkfs's own check of a backend's answer (native and conic alike).

    The objective and the largest constraint violation are evaluated by
    numkfs at the returned point (whatever the backend said).  A native
    solver's status is its own verdict, not a solver library's: where the
    problem computes a KKT residual (:meth:`ConvexProblem.relative_kkt_residual`)
    it must be at most ``kkt_tol``.  (Interior-point answers sit slightly
    inside their bounds, where a projected-gradient residual does not apply;
    they are judged by their solver's status and the violation.)  A solution that cannot be evaluated
    (a variable missing or of the wrong shape, non-finite entries) makes the
    answer ``FAILED``; an "optimal" answer failing a check becomes
    ``INACCURATE``, with the reason appended to its message.
    """
    def note(msg):
        res.message = (res.message + "; " if res.message else "") + msg

    if not res.solution:
        if res.status is Status.OPTIMAL:
            res.status = Status.FAILED
            note("no solution returned")
        res.objective, res.max_violation = np.nan, np.nan
        return res
    try:
        obj, viol = problem.evaluate(res.solution)
    except Exception as exc:  # wrong shape, missing variable, garbage
        res.status, res.objective, res.max_violation = Status.FAILED, np.nan, np.nan
        note(f"its solution could not be evaluated ({type(exc).__name__}: {exc})")
        return res
    res.objective, res.max_violation = float(obj), float(viol)
    if res.status is not Status.OPTIMAL:
        return res
    bad = None
    if not all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in res.solution.values()):
        bad = "non-finite entries in the solution"
    elif not np.isfinite(res.objective):
        bad = "non-finite objective at the solution"
    elif not (np.isfinite(res.max_violation) and res.max_violation <= violation_tol):
        bad = f"constraint violation {res.max_violation:.2e} > {violation_tol:.0e}"
    elif res.solver == "native":
        try:
            kkt = problem.relative_kkt_residual(res.solution)
        except Exception as exc:
            kkt, bad = None, f"its KKT residual could not be evaluated ({type(exc).__name__}: {exc})"
        if kkt is not None and not kkt <= kkt_tol:
            bad = f"relative KKT residual {kkt:.1e} > {kkt_tol:.0e} (checked by numkfs)"
    if bad:
        res.status = Status.INACCURATE
        note(bad)
    return res


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
        The problem to solve (a plain CVXPY problem is wrapped).
    solver : str or list of str, default="auto"
        ``"auto"`` (see the module docstring), ``"native"``, a backend name,
        or a list of names to try in order.
    tol : float, optional
        Tolerance passed to every backend (each maps it to its own options);
        default: each backend's own numkfs default (1e-9 for the conic ones).
    fallback : bool, default=True
        When a backend's answer is not accurate, warn and try the next one
        (the rest of the ``auto`` order after a named solver).
    warm_start : bool, default=True
        Let a native solver start from the problem's starting point (when
        it has one) and pass CVXPY's ``warm_start`` to conic backends that
        support it.
    violation_tol : float
        Largest constraint violation accepted from an "optimal" answer.
    verbose : bool, default=False
        Passed to CVXPY's ``solve`` (the backend prints its log); native
        solvers ignore it.
    **options
        Extra keyword options passed to every backend's ``solve`` (for a
        conic backend they override its tolerance options in CVXPY's
        ``solve``).

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
    names = _solver_names(solver, spec)
    auto = isinstance(solver, str) and solver.lower() == "auto"
    complete = not fallback or (auto and spec.kind not in _NATIVE)
    tried: list[SolverResult] = []
    backend = get_backend(names[0], spec.kind)
    i = 0
    while True:
        res = run_backend(backend, spec, violation_tol=violation_tol, tol=tol, warm_start=warm_start,
                          verbose=verbose, **options)
        if _accurate(res, violation_tol):
            return res
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


def _solver_names(solver, spec) -> list[str]:
    """The backend names to try, in order; a clear error for an empty or odd ``solver``."""
    if isinstance(solver, str):
        if solver.lower() == "auto":
            # a native solver goes first; the rest of the order (which needs the
            # problem's size, i.e. its CVXPY formulation) is worked out only if
            # the native answer is not accurate
            names = ["native"] if spec.kind in _NATIVE else solver_order(spec)
            if not names:
                raise SolverError(f"No solver is installed for this {spec.kind} problem; install one with "
                                  f"`pip install clarabel`.")
            return names
        return [solver]
    try:
        names = list(solver)
    except TypeError:
        raise TypeError(f"solver must be a backend name or a list of names; got {type(solver).__name__}.") from None
    if not names:
        raise ValueError("solver is an empty list; give at least one backend name, or 'auto'.")
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise TypeError(f"solver names must be strings; got {bad[0]!r}.")
    return names


def available_solvers(check: bool = True) -> list[dict]:
    """Every backend with its version and whether it solves a tiny problem.

    The conic backends solve a two-variable QP; each native solver solves a
    tiny problem of its own kind (:data:`NATIVE_CHECKS`) and must agree with
    the closed-form or conic answer.  A backend that raises is reported as
    not working (``error`` holds its message), never as a crash.

    Parameters
    ----------
    check : bool, default=True
        Solve the tiny problems to fill ``works``; when False, only report
        what is installed (fast).

    Returns
    -------
    list of dict
        One dict per backend with keys ``name``, ``method``, ``installed``,
        ``version``, ``works`` (None when ``check`` is False or nothing
        checks it), ``install`` and ``error``.
    """
    rows = []
    tiny = as_problem(_tiny_problem()) if check else None
    for b in BACKENDS.values():
        try:
            installed = bool(b.is_installed())
            version = b.version() if installed else "-"
        except Exception as exc:  # a broken installation
            installed, version = False, f"error: {type(exc).__name__}"
        row = {"name": b.name, "method": b.method, "installed": installed, "version": version,
               "install": b.install, "works": None, "error": ""}
        if installed and check:
            res = run_backend(b, tiny, warm_start=False)
            row["works"] = bool(_accurate(res, VIOLATION_TOL) and abs(res.objective - 0.5) < 1e-6)
            if not row["works"]:
                row["error"] = f"{res.status}: {res.message}" if res.message else str(res.status)
        rows.append(row)
    for kind, nat in sorted(_NATIVE.items()):
        row = {"name": f"native:{kind}", "method": nat.method, "installed": True,
               "version": nat.version(), "install": "", "works": None, "error": ""}
        if check and kind in NATIVE_CHECKS:
            row["works"], row["error"] = _check_native(kind, nat)
        rows.append(row)
    return rows


#: kind -> function returning a tiny problem of that kind and its optimal objective.
NATIVE_CHECKS: dict[str, Callable] = {}


def register_native_check(kind: str):
    """Decorator: ``function() -> (problem, objective)`` checks the native solver of ``kind``."""

    def deco(function):
        NATIVE_CHECKS[kind] = function
        return function

    return deco


def _check_native(kind, nat) -> tuple[bool, str]:
    try:
        problem, expected = NATIVE_CHECKS[kind]()
    except Exception as exc:
        return False, f"its check problem could not be built ({type(exc).__name__}: {exc})"
    res = run_backend(nat, problem, warm_start=False)
    if not _accurate(res, VIOLATION_TOL):
        return False, f"{res.status}: {res.message}"
    if expected is None:  # compare with the first conic backend that solves it
        for b in BACKENDS.values():
            if b.is_installed():
                ref = run_backend(b, problem, warm_start=False)
                if _accurate(ref, VIOLATION_TOL):
                    expected = ref.objective
                    break
        if expected is None:
            return True, ""
    if not abs(res.objective - expected) <= 1e-6 * max(1.0, abs(expected)):
        return False, f"objective {res.objective:.10g}, expected {expected:.10g}"
    return True, ""


def _tiny_problem():
    """min (x1-1)² + (x2-1)² s.t. x1 + x2 <= 1, x >= 0: optimum 0.5 at (0.5, 0.5)."""
    import cvxpy as cp

    x = cp.Variable(2, name="x")
    return cp.Problem(cp.Minimize(cp.sum_squares(x - 1)), [cp.sum(x) <= 1, x >= 0])


def check_data(n: int = 12, p: int = 4, seed: int = 0):
    """A small regression (X, y) for the native solvers' self-checks (:func:`register_native_check`).

    Parameters
    ----------
    n, p : int
        Rows and columns of X.
    seed : int
        Seed of the normal draws.

    Returns
    -------
    X : ndarray of shape (n, p)
    y : ndarray of shape (n,)
        ``X[:, 0] - 0.5 X[:, 1]`` plus noise of standard deviation 0.1.
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.standard_normal(n)
