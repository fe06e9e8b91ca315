"""Solve one problem with several backends and compare the answers."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._base import as_problem
from .registry import VIOLATION_TOL, get_backend, run_backend, solver_order

__all__ = ["cross_check", "CrossCheck"]


def _flat(solution: dict, names) -> np.ndarray:
    return np.concatenate([np.ravel(solution[n]) for n in names]) if solution else np.array([])


@dataclass
class CrossCheck:
    """The table :func:`cross_check` returns (one row per backend).

    ``rows`` is a list of dicts with keys ``solver``, ``method``,
    ``tolerance``, ``status``, ``objective``, ``objective_gap`` (relative to
    the reference), ``max_violation``, ``solution_distance`` (max-abs to
    the reference solution), ``selected`` (where the problem selects
    features), ``same_selection``, ``iterations``, ``solve_time``,
    ``setup_time``.  The reference is the first backend whose answer is
    accurate.  A dataclass: each parameter is stored as the attribute of
    the same name.

    Parameters
    ----------
    rows : list of dict, default=[]
        One dict per backend, with the keys listed above.
    reference : str or None, default=None
        Name of the reference backend, or None when no answer was accurate.
    results : dict, default={}
        The :class:`SolverResult` of each backend, by backend name.
    warmup : bool, default=False
        Whether every backend was solved once before the timed solves.
    """

    rows: list = field(default_factory=list)
    reference: str | None = None
    results: dict = field(default_factory=dict)
    warmup: bool = False

    def to_pandas(self):
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover
            raise ImportError("CrossCheck.to_pandas needs pandas: pip install pandas") from exc
        return pd.DataFrame(self.rows).set_index("solver")

    def __getitem__(self, solver: str) -> dict:
        for r in self.rows:
            if r["solver"] == solver:
                return r
        raise KeyError(solver)

    def agree(self, atol: float = 1e-6) -> bool:
        """True when every accurate backend's objective is within ``atol``
        (relative) of the reference and selects the same features."""
        ok = [r for r in self.rows if r["status"] == "optimal"]
        return bool(ok) and all(
            abs(r["objective_gap"]) <= atol and r["same_selection"] is not False for r in ok
        )

    def __repr__(self) -> str:
        cols = [("solver", "{}"), ("tolerance", "{}"), ("status", "{}"), ("objective", "{:.10g}"),
                ("objective_gap", "{:.1e}"), ("max_violation", "{:.1e}"), ("solution_distance", "{:.1e}"),
                ("same_selection", "{}"), ("iterations", "{}"), ("solve_time", "{:.4f}"), ("setup_time", "{:.4f}")]
        heads = ["solver", "tol", "status", "objective", "rel. gap", "violation", "dist.", "same sel.",
                 "iters", "solve s", "setup s"]
        table = []
        for r in self.rows:
            line = []
            for key, fmt in cols:
                v = r.get(key)
                if v is None or (isinstance(v, float) and not np.isfinite(v)):
                    line.append("-")
                else:
                    line.append(fmt.format(v))
            table.append(line)
        widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h) for i, h in enumerate(heads)]
        out = ["  ".join(h.ljust(w) for h, w in zip(heads, widths))]
        out.append("  ".join("-" * w for w in widths))
        out += ["  ".join(c.ljust(w) for c, w in zip(t, widths)) for t in table]
        if self.reference:
            out.append(f"(reference: {self.reference})")
        failed = [f"{r['solver']}: {r['message']}" for r in self.rows if r["status"] != "optimal" and r.get("message")]
        if failed:
            out.append("not optimal: " + "; ".join(failed))
        out.append("(solve times after a warm-up solve: compilation and set-up excluded)" if self.warmup
                   else "(solve times include first-call compilation and set-up)")
        return "\n".join(out)


def cross_check(problem, solvers=None, *, tol: float | dict | None = None, violation_tol: float = VIOLATION_TOL,
                warmup: bool = False) -> CrossCheck:
    """Solve ``problem`` with each backend and tabulate the answers.

    Parameters
    ----------
    problem : cvxpy.Problem or numkfs ConvexProblem
        The problem to solve; each backend solves it from scratch.
    solvers : list of str, optional
        Backends to run (default: every installed backend, native first
        where one exists for the problem's kind).
    tol : float or dict, optional
        One tolerance for all, or ``{solver: tol}``; the table shows what
        each ran at.
    violation_tol : float
        Largest constraint violation accepted from an "optimal" answer.
    warmup : bool, default=False
        Solve once with every backend before the timed solves, so that the
        times exclude first-call costs (Numba compilation, CVXPY's
        canonicalisation); ``CrossCheck.warmup`` records it.

    Returns
    -------
    CrossCheck
        Prints as a table; ``to_pandas()`` gives a DataFrame.

    Notes
    -----
    Every answer is checked by numkfs
    (:func:`numkfs.solvers.registry.check_answer`: objective evaluated by
    numkfs, constraint violation, KKT residual where the problem has one);
    a backend that raises is a ``failed`` row naming its exception.

    Examples
    --------
    >>> import cvxpy as cp
    >>> from numkfs.solvers import cross_check
    >>> x = cp.Variable(2, name="x")
    >>> prob = cp.Problem(cp.Minimize(cp.sum_squares(x - 1)), [cp.sum(x) <= 1, x >= 0])
    >>> table = cross_check(prob, ["CLARABEL", "ECOS"])
    >>> table.agree(1e-6)
    True
    """
    spec = as_problem(problem)
    if solvers is None:
        solvers = solver_order(spec)
    elif isinstance(solvers, str):
        solvers = [solvers]
    solvers = list(solvers)
    if not solvers:
        raise ValueError("cross_check: no solver to run (an empty list); give backend names or None for all.")
    backends = [get_backend(name, spec.kind) for name in solvers]  # unknown / not installed: a clear error first
    if warmup:
        # a first call compiles Numba code and builds CVXPY's canonical form: not what a table of solve times
        # should show; the timed solves below start from the same (cold) point as without warm-up
        for backend in backends:
            run_backend(backend, spec, violation_tol=violation_tol, warm_start=False)
    names = []
    results = {}
    for name, backend in zip(solvers, backends):
        t = tol.get(name) if isinstance(tol, dict) else tol
        res = run_backend(backend, spec, violation_tol=violation_tol, tol=t, warm_start=False)
        results[backend.name] = res
        names.append(backend.name)
    ref = next((n for n in names if results[n].status.value == "optimal"
                and results[n].max_violation <= violation_tol), None)
    var_names = sorted(results[ref].solution) if ref else []
    ref_sel = spec.selected(results[ref].solution) if ref else None
    rows = []
    for n in names:
        r = results[n]
        status = r.status.value
        sel = None
        if r.solution and status != "failed":
            try:
                sel = spec.selected(r.solution)
            except Exception:  # an answer numkfs could not read is not compared
                sel = None
        dist = np.nan
        gap = np.nan
        if ref is not None and r.solution and status != "failed":
            common = [v for v in var_names if v in r.solution and np.size(r.solution[v]) == np.size(results[ref].solution[v])]
            a, b = _flat(r.solution, common), _flat(results[ref].solution, common)
            dist = float(np.max(np.abs(a - b))) if a.size else np.nan
            ref_obj = results[ref].objective
            gap = (r.objective - ref_obj) / max(1.0, abs(ref_obj))
        rows.append({
            "solver": n,
            "method": getattr(get_backend(n, spec.kind), "method", ""),
            "tolerance": _tol_str(r.tolerance),
            "status": status,
            "objective": r.objective,
            "objective_gap": gap,
            "max_violation": r.max_violation,
            "solution_distance": dist,
            "selected": None if sel is None else np.flatnonzero(sel).tolist(),
            "same_selection": None if (sel is None or ref_sel is None) else bool(np.array_equal(sel, ref_sel)),
            "iterations": r.iterations,
            "solve_time": r.solve_time,
            "setup_time": r.setup_time,
            "message": r.message,
        })
    return CrossCheck(rows=rows, reference=ref, results=results, warmup=warmup)


def _tol_str(tol: dict) -> str:
    vals = {v for k, v in tol.items() if "iter" not in k}
    if not vals:
        return "-"
    if len(vals) == 1:
        v = vals.pop()
        return f"{v:.0e}" if isinstance(v, float) else str(v)
    return ",".join(f"{v:.0e}" for v in sorted(vals))
