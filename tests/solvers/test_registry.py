"""The solver registry: backends agree, errors are clear, failures fall back."""
import cvxpy as cp
import numpy as np
import pytest

from numkfs import solvers
from numkfs.solvers import (
    BoxQP,
    SolverError,
    SolverFallbackWarning,
    SolverNotInstalledError,
    SolverResult,
    Status,
    cross_check,
    solve,
    solve_box_qp,
)
from numkfs.solvers._cvxpy_backend import CvxpyBackend
from numkfs.solvers.native.boxqp import box_qp_kkt_residual
from numkfs.solvers.registry import BACKENDS, register_backend


def random_box_qp(n=40, p=12, seed=0):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, p))
    Q = F.T @ F
    c = rng.standard_normal(p) * 10
    return Q, c, F


def qcqp(seed=1, d=6, n=15):
    """A small NMMKL-like QCQP: max 2 1ᵀa - τ aᵀa - m ρ - Σν, (a∘y)ᵀK_i(a∘y) ≤ ρ + ν_i."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(rng.standard_normal(n))
    y[0], y[1] = 1, -1
    a = cp.Variable(n, name="alpha")
    rho = cp.Variable(name="rho")
    nu = cp.Variable(d, name="nu")
    cons = [a @ y == 0, a >= 0, a <= 1.0, nu >= 0]
    cons += [cp.square(X[:, i] @ cp.multiply(a, y)) <= rho + nu[i] for i in range(d)]
    return cp.Problem(cp.Maximize(2 * cp.sum(a) - 0.1 * cp.sum_squares(a) - 2 * rho - cp.sum(nu)), cons)


def test_native_box_qp_kkt_and_agrees_with_conic_backends():
    Q, c, F = random_box_qp()
    w, sweeps, res = solve_box_qp(Q, c, 0.0, 1.0)
    assert box_qp_kkt_residual(Q, c, np.zeros(12), np.ones(12), w) < 1e-8
    assert 0 < np.sum((w > 0) & (w < 1))  # some interior, some at bounds: a non-trivial test
    assert np.sum((w == 0) | (w == 1)) > 0
    table = cross_check(BoxQP(Q, c, 0.0, 1.0, factor=F), ["native", "ECOS", "CLARABEL", "SCS"])
    assert table.reference == "native"
    for name in ("ECOS", "CLARABEL"):
        assert table[name]["status"] == "optimal"
        assert abs(table[name]["objective_gap"]) < 1e-6
        assert table[name]["solution_distance"] < 1e-5
    assert abs(table["SCS"]["objective_gap"]) < 1e-5  # SCS at its numkfs tolerance (1e-9)
    assert table.agree(1e-5)
    text = repr(table)
    assert "native" in text and "ECOS" in text and "rel. gap" in text


def test_box_qp_closed_form_diagonal():
    # separable: w_j = clip(-c_j / q_j, 0, 1)
    q = np.array([2.0, 1.0, 4.0, 0.5])
    c = np.array([-1.0, 3.0, -10.0, -0.25])
    w, _, _ = solve_box_qp(np.diag(q), c, 0.0, 1.0)
    np.testing.assert_allclose(w, np.clip(-c / q, 0, 1), atol=1e-14)


def test_cross_check_qcqp_backends_agree():
    table = cross_check(qcqp(), ["ECOS", "CLARABEL", "SCS"])
    assert table["ECOS"]["status"] == "optimal" and table["CLARABEL"]["status"] == "optimal"
    assert abs(table["CLARABEL"]["objective_gap"]) < 1e-6
    assert table["CLARABEL"]["solution_distance"] < 1e-4
    assert abs(table["SCS"]["objective_gap"]) < 1e-5
    assert table["ECOS"]["max_violation"] < 1e-7
    pd = pytest.importorskip("pandas")
    df = table.to_pandas()
    assert list(df.index) == ["ECOS", "CLARABEL", "SCS"]


def test_solve_returns_evaluated_objective():
    prob = qcqp()
    res = solve(prob, "CLARABEL")
    assert res.ok and res.solver == "CLARABEL"
    prob.solve(solver="ECOS")
    assert abs(res.objective - prob.value) < 1e-6 * max(1, abs(prob.value))
    assert res.solve_time > 0 and res.setup_time >= 0


def test_auto_order_native_and_size_rule():
    Q, c, F = random_box_qp()
    assert solvers.solver_order(BoxQP(Q, c))[0] == "native"
    small = qcqp()
    assert solvers.solver_order(solvers._base.as_problem(small))[:2] == ["CLARABEL", "ECOS"]
    x = cp.Variable(solvers.LARGE_PROBLEM_SIZE + 1, name="x")
    big = cp.Problem(cp.Minimize(cp.sum_squares(x)), [x >= 1])
    assert solvers.solver_order(solvers._base.as_problem(big))[0] == "SCS"


def test_unknown_and_missing_solvers_are_clear():
    with pytest.raises(ValueError, match="Unknown solver 'NOPE'"):
        solve(qcqp(), "NOPE")
    with pytest.raises(ValueError, match="no native solver for problems of kind 'generic'"):
        solve(qcqp(), "native")
    fake = CvxpyBackend(name="FAKESOLVER", module="numkfs_fake_solver_module", install="pip install fakesolver",
                        method="interior point", default_tol=1e-8, tol_options=lambda t: {})
    register_backend(fake)
    try:
        with pytest.raises(SolverNotInstalledError, match="Install it with `pip install fakesolver`"):
            solve(qcqp(), "FAKESOLVER")
    finally:
        del BACKENDS["FAKESOLVER"]


class _Faulty:
    """A backend that misbehaves in a chosen way."""

    def __init__(self, mode):
        self.mode = mode
        self.name = f"FAULTY-{mode}"
        self.method = "test"
        self.calls = 0

    def is_installed(self):
        return True

    def solve(self, problem, **kw):
        self.calls += 1
        if self.mode == "raise":
            return SolverResult(self.name, Status.FAILED, message="RuntimeError: boom")
        if self.mode == "inaccurate":
            return SolverResult(self.name, Status.INACCURATE, objective=0.0, solution={"w": np.zeros(12)})
        # claims optimal but returns an infeasible point: must be caught by numkfs's own check
        sol = {"w": np.full(12, 5.0)}
        obj, viol = problem.evaluate(sol)
        return SolverResult(self.name, Status.OPTIMAL, objective=obj, solution=sol, max_violation=viol)


@pytest.mark.parametrize("mode", ["raise", "inaccurate", "wrong"])
def test_fallback_warns_naming_both(mode, monkeypatch):
    Q, c, F = random_box_qp()
    faulty = _Faulty(mode)
    monkeypatch.setitem(BACKENDS, faulty.name, faulty)
    with pytest.warns(SolverFallbackWarning, match=f"solver {faulty.name} returned .*falling back to native"):
        res = solve(BoxQP(Q, c, factor=F), faulty.name)
    assert res.solver == "native" and res.ok
    w_ref, _, _ = solve_box_qp(Q, c, 0.0, 1.0)
    np.testing.assert_allclose(res["w"], w_ref, atol=1e-8)


def test_no_fallback_raises_with_details(monkeypatch):
    Q, c, F = random_box_qp()
    faulty = _Faulty("wrong")
    monkeypatch.setitem(BACKENDS, faulty.name, faulty)
    with pytest.raises(SolverError, match="constraint violation 4.00e\\+00"):
        solve(BoxQP(Q, c), faulty.name, fallback=False)


def test_parameters_resolve_without_rebuilding():
    Q, c, F = random_box_qp()

    class ParamQP(BoxQP):
        kind = "param_qp_test"

        def build(self):
            w = cp.Variable(12, name="w")
            self.c_par = cp.Parameter(12, name="c")
            self.c_par.value = self.c
            return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(self.factor @ w) + self.c_par @ w), [w >= 0, w <= 1])

        def evaluate(self, solution):
            self.c = self.c_par.value
            return super().evaluate(solution)

    prob = ParamQP(Q, c, factor=F)
    first = prob.cvxpy_problem
    for scale in (1.0, 0.5, 2.0):
        prob.update(c=c * scale)
        res = solve(prob, "CLARABEL")
        w_ref, _, _ = solve_box_qp(Q, c * scale, 0.0, 1.0)
        np.testing.assert_allclose(res["w"], w_ref, atol=1e-6)
    assert prob.cvxpy_problem is first
    with pytest.raises(KeyError, match="no parameter 'gamma'"):
        prob.update(gamma=1.0)


def test_available_solvers_all_work():
    rows = solvers.available_solvers(check=True)
    names = {r["name"] for r in rows}
    assert {"ECOS", "SCS", "CLARABEL", "native:box_qp"} <= names
    assert all(r["works"] for r in rows if r["name"] in ("ECOS", "SCS", "CLARABEL"))


def test_cli_solvers(capsys):
    from numkfs.cli import main

    assert main(["solvers"]) == 0
    out = capsys.readouterr().out
    assert "ECOS" in out and "CLARABEL" in out and "works" in out
