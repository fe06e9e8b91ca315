"""The solver registry: backends agree, errors are clear, failures fall back.

Faults are injected through the methods: a faulty backend is put in
``numkfs.solvers.registry.BACKENDS`` (or in place of a native solver) with ``monkeypatch``; the
methods (NMMKL, the garrote path, COSSO, their estimators) must then either give the same
answer as with a healthy backend (after a :class:`SolverFallbackWarning` naming the faulty one)
or raise a :class:`SolverError` listing what each backend said, and keep nothing from a failed
solve.
"""
import warnings

import cvxpy as cp
import numpy as np
import pytest

import numkfs
from numkfs import solvers
from numkfs.estimators._cosso import COSSORegressor
from numkfs.estimators._garrote import GarroteRegressor
from numkfs.estimators._nmmkl import NMMKLSelector
from numkfs.methods.garrote import garrote_path
from numkfs.methods.nmmkl import nmmkl, nmmkl_path
from numkfs.solvers import (BoxQP, SolverError, SolverFallbackWarning, SolverNotInstalledError, SolverResult, Status,
                            available_solvers, cross_check, registry, solve, solve_box_qp)
from numkfs.solvers._cvxpy_backend import CvxpyBackend
from numkfs.solvers.native.boxqp import box_qp_kkt_residual
from numkfs.solvers.native.garrote import LinearGarrote
from numkfs.solvers.native.nmmkl import NMMKLProblem
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


MODES = ["raise", "failed", "inaccurate", "wrong", "nan"]


class Faulty:
    """A backend misbehaving in a chosen way on the calls listed in ``bad_calls`` (all by default).

    On other calls it delegates to ``good`` (a healthy backend name), so a
    fault can be injected in the middle of a path.
    """

    def __init__(self, mode, name=None, bad_calls=None, good="CLARABEL"):
        self.mode = mode
        self.name = name or f"FAULTY-{mode}"
        self.method = "test"
        self.calls = 0
        self.bad_calls = bad_calls
        self.good = BACKENDS[good]

    def is_installed(self):
        return True

    def solve(self, problem, **kw):
        self.calls += 1
        if self.bad_calls is not None and self.calls not in self.bad_calls:
            res = self.good.solve(problem, **kw)
            res.solver = self.name
            return res
        variables = {v.name(): v for v in problem.cvxpy_problem.variables()}
        # a crashed backend may leave garbage in the CVXPY variables: it must not leak anywhere
        for v in variables.values():
            v.value = np.full(v.shape, 7.0)
        if self.mode == "raise":
            raise RuntimeError("boom")
        if self.mode == "failed":
            return SolverResult(self.name, Status.FAILED, message="numerical trouble")
        garbage = {name: np.full(v.shape, 5.0) for name, v in variables.items()}
        if self.mode == "inaccurate":
            return SolverResult(self.name, Status.INACCURATE, objective=0.0, solution=garbage)
        if self.mode == "nan":
            nan = {name: np.full(v.shape, np.nan) for name, v in variables.items()}
            return SolverResult(self.name, Status.OPTIMAL, objective=np.nan, solution=nan)
        # "wrong": claims optimal at an infeasible point; numkfs's own check must catch it
        obj, viol = problem.evaluate(garbage)
        return SolverResult(self.name, Status.OPTIMAL, objective=obj, solution=garbage, max_violation=viol)


class FaultyNative(Faulty):
    """The same faults in place of a native solver (the registry's NativeSolver interface)."""

    def __init__(self, mode, kind):
        super().__init__(mode, name="native")
        self.kind = kind
        self.default_tol = 1e-10

    def version(self):
        return "faulty"


def _data(seed=0, n=30, p=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y_reg = X[:, 0] - 2 * X[:, 1] + 0.1 * rng.standard_normal(n)
    y_clf = np.where(X[:, 0] + 0.5 * X[:, 2] + 0.2 * rng.standard_normal(n) > 0, 1, -1)
    return X, y_reg, y_clf


@pytest.mark.parametrize("mode", MODES)
def test_nmmkl_falls_back_from_faulty_backend(mode, monkeypatch):
    X, _, y = _data()
    faulty = Faulty(mode)
    monkeypatch.setitem(BACKENDS, faulty.name, faulty)
    ref = nmmkl(X, y, 2, solver="CLARABEL")
    with pytest.warns(SolverFallbackWarning, match=f"solver {faulty.name} returned"):
        res = nmmkl(X, y, 2, solver=faulty.name)
    assert faulty.calls == 1
    np.testing.assert_array_equal(res.support, ref.support)
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)
    assert np.all(np.isfinite(res.alpha))


def test_raising_backend_is_named_in_the_warning(monkeypatch):
    rng = np.random.default_rng(3)
    F = rng.standard_normal((20, 6))
    Q, c = F.T @ F, rng.standard_normal(6) * 5
    faulty = Faulty("raise")
    monkeypatch.setitem(BACKENDS, faulty.name, faulty)
    with pytest.warns(SolverFallbackWarning, match="raised RuntimeError: boom.*falling back to native"):
        res = solve(BoxQP(Q, c, factor=F), faulty.name)
    np.testing.assert_allclose(res["w"], solve_box_qp(Q, c, 0.0, 1.0)[0], atol=1e-8)
    with pytest.raises(SolverError, match="raised RuntimeError: boom"):
        solve(BoxQP(Q, c, factor=F), faulty.name, fallback=False)


@pytest.mark.parametrize("mode", MODES)
def test_estimator_with_ecos_named_faulty_backend(mode, monkeypatch):
    """``solver="ECOS"`` reaching a faulty backend: the estimator still fits the right answer."""
    X, _, y = _data(1)
    ref = NMMKLSelector(2, solver="CLARABEL").fit(X, y)
    monkeypatch.setitem(BACKENDS, "ECOS", Faulty(mode, name="ECOS"))
    with pytest.warns(SolverFallbackWarning, match="solver ECOS returned"):
        est = NMMKLSelector(2, solver="ECOS").fit(X, y)
    np.testing.assert_array_equal(est.get_support(), ref.get_support())


@pytest.mark.parametrize("mode", MODES)
def test_garrote_path_falls_back_from_faulty_backend(mode, monkeypatch):
    X, y, _ = _data(2)
    faulty = Faulty(mode)
    monkeypatch.setitem(BACKENDS, faulty.name, faulty)
    ref = garrote_path(X, y, n_grid=6, solver="native")
    with pytest.warns(SolverFallbackWarning, match=f"solver {faulty.name} returned"):
        path = garrote_path(X, y, n_grid=6, solver=faulty.name)
    assert faulty.calls == 6
    np.testing.assert_allclose(path.weights, ref.weights, atol=1e-6)
    np.testing.assert_allclose(path.extra["coef"], ref.extra["coef"], atol=1e-6)
    assert set(path.extra["solver"]) == {"native"}


@pytest.mark.parametrize("mode", MODES)
def test_faulty_native_solver_falls_back_to_conic(mode, monkeypatch):
    """A native solver that misbehaves: the registry's conic backends give the answer."""
    X, y, _ = _data(3)
    ref = garrote_path(X, y, n_grid=4, solver="CLARABEL")
    monkeypatch.setitem(registry._NATIVE, "linear_garrote", FaultyNative(mode, "linear_garrote"))
    with pytest.warns(SolverFallbackWarning, match="solver native returned"):
        path = garrote_path(X, y, n_grid=4, solver="auto")
    np.testing.assert_allclose(path.weights, ref.weights, atol=1e-6)
    assert "native" not in path.extra["solver"]


@pytest.mark.parametrize("mode", ["raise", "wrong", "nan"])
def test_every_backend_faulty_gives_clear_error(mode, monkeypatch):
    X, y_reg, y_clf = _data(4)
    for name in list(BACKENDS):
        monkeypatch.setitem(BACKENDS, name, Faulty(mode, name=name))
    for kind in ("linear_garrote", "nmmkl_qcqp", "garrote_step"):
        monkeypatch.setitem(registry._NATIVE, kind, FaultyNative(mode, kind))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverFallbackWarning)
        with pytest.raises(SolverError, match="No solver returned an accurate solution.*CLARABEL.*ECOS.*SCS"):
            garrote_path(X, y_reg, n_grid=3)
        with pytest.raises(SolverError, match="nmmkl_qcqp problem"):
            nmmkl(X, y_clf, 2)
        with pytest.raises(SolverError, match="No solver returned an accurate solution"):
            GarroteRegressor(lambda2=0.1).fit(X, y_reg)
        with pytest.raises(SolverError, match="No solver returned an accurate solution"):
            COSSORegressor(M=1.0, max_iter=5).fit(X[:, :3], y_reg)


def test_fault_mid_path_does_not_poison_warm_starts(monkeypatch):
    """A fault at the 2nd of 4 points: the path equals the healthy one (warm starts come from good solves)."""
    X, _, y = _data(5, n=40, p=6)
    ref = nmmkl_path(X, y, [1, 2, 3, 4], solver="CLARABEL", weights="p")
    faulty = Faulty("wrong", bad_calls={2})
    monkeypatch.setitem(BACKENDS, faulty.name, faulty)
    with pytest.warns(SolverFallbackWarning, match=f"solver {faulty.name} returned"):
        path = nmmkl_path(X, y, [1, 2, 3, 4], solver=faulty.name, weights="p")
    np.testing.assert_array_equal(path.extra["selection"], ref.extra["selection"])
    np.testing.assert_allclose(path.objective, ref.objective, rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_problem_object_solves_correctly_after_a_failed_solve(mode, monkeypatch):
    """Same problem object: failed solve (no fallback) then good solves == a fresh problem's."""
    X, y_reg, y_clf = _data(6)
    faulty = Faulty(mode)
    monkeypatch.setitem(BACKENDS, faulty.name, faulty)

    Z = X / np.sqrt(X.shape[0])
    fresh = solve(NMMKLProblem(Z, y_clf.astype(float), 2.0), "native")
    prob = NMMKLProblem(Z, y_clf.astype(float), 2.0)
    with pytest.raises(SolverError, match=faulty.name):
        solve(prob, faulty.name, fallback=False)
    for backend in ("CLARABEL", "native"):
        again = solve(prob, backend)
        assert again.objective == pytest.approx(fresh.objective, rel=1e-6), backend
        np.testing.assert_allclose(again["alpha"], fresh["alpha"], atol=1e-4)

    g_fresh = solve(LinearGarrote(X - X.mean(0), y_reg - y_reg.mean(), 1.0, 0.5), "native")
    g = LinearGarrote(X - X.mean(0), y_reg - y_reg.mean(), 1.0, 0.5)
    with pytest.raises(SolverError):
        solve(g, faulty.name, fallback=False)
    assert g.beta_warm is None  # nothing was kept from the failed solve
    np.testing.assert_allclose(solve(g, "native")["beta"], g_fresh["beta"], atol=1e-8)
    np.testing.assert_allclose(solve(g, "CLARABEL")["beta"], g_fresh["beta"], atol=1e-5)


def test_native_garrote_keeps_no_warm_start_from_an_inaccurate_solve():
    """The native solver stopped early (inaccurate): its iterate must not become the next warm start."""
    X, y, _ = _data(7)
    Xc, yc = X - X.mean(0), y - y.mean()
    g = LinearGarrote(Xc, yc, 1.0, 0.3)
    with pytest.raises(SolverError, match="native: inaccurate"):
        solve(g, "native", fallback=False, tol=1e-14, max_sweeps=1)
    assert g.beta_warm is None
    good = solve(g, "native")
    np.testing.assert_allclose(good["beta"], solve(LinearGarrote(Xc, yc, 1.0, 0.3), "CLARABEL")["beta"], atol=1e-5)
    np.testing.assert_array_equal(g.beta_warm, good["beta"])  # a good solve is kept


def _reg(n=20, p=50, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


# --------------------------------------------------------------------------
# solver registry trust


class _Liar:
    """A backend: ``mode`` "raise" (crashes), "wrong_x" (a wrong point with the true optimum's
    objective and no violation), "shape" (a solution of the wrong shape)."""

    method = "test"
    install = "pip install nothing"

    def __init__(self, mode):
        self.mode, self.name = mode, f"LIAR-{mode}"

    def is_installed(self):
        return True

    def version(self):
        return "0"

    def solve(self, problem, **kw):
        from numkfs.solvers import SolverResult, Status

        if self.mode == "raise":
            raise RuntimeError("boom")
        if self.mode == "shape":
            return SolverResult(self.name, Status.OPTIMAL, objective=-3.0, solution={"w": np.zeros(5)},
                                max_violation=0.0)
        return SolverResult(self.name, Status.OPTIMAL, objective=-3.0, solution={"w": np.array([0.5, 0.5])},
                            max_violation=0.0)


def _tiny_box_qp():
    from numkfs.solvers import BoxQP

    return BoxQP(np.eye(2), np.array([-1.0, -3.0]), 0.0, 1.0)  # optimum (1, 1), objective -3


@pytest.fixture
def liar(monkeypatch):
    from numkfs.solvers import registry

    def add(mode):
        b = _Liar(mode)
        monkeypatch.setitem(registry.BACKENDS, b.name, b)
        return b.name

    return add


def test_raising_backend_is_a_failed_row_in_cross_check_and_not_working_in_available_solvers(liar):
    # a backend that raised killed cross_check() and available_solvers() (numkfs solvers printed a traceback)
    from numkfs.solvers import available_solvers, cross_check

    name = liar("raise")
    table = cross_check(_tiny_box_qp(), ["native", name, "CLARABEL"])
    assert table[name]["status"] == "failed" and "RuntimeError: boom" in table[name]["message"]
    assert table.reference == "native" and table.agree(1e-6)
    row = next(r for r in available_solvers() if r["name"] == name)
    assert row["works"] is False and "RuntimeError: boom" in row["error"]


def test_objective_is_evaluated_by_numkfs_not_taken_from_the_backend(liar):
    # a backend returning a wrong x with the right objective (and a violation of 0) was reported "agree"
    from numkfs.solvers import cross_check, solve

    name = liar("wrong_x")
    table = cross_check(_tiny_box_qp(), ["native", name])
    assert table[name]["objective"] == pytest.approx(0.5 * 0.5 - 0.5 - 1.5)  # evaluated at (0.5, 0.5)
    assert not table.agree(1e-6)
    assert solve(_tiny_box_qp(), name, fallback=False).objective == pytest.approx(-1.75)


def test_native_answer_with_large_kkt_residual_is_not_accepted(monkeypatch):
    # KNIFE's native w-step (and any native solver) was trusted: an injected KKT residual of 1e3 passed
    from numkfs.solvers import SolverError, SolverResult, Status, solve
    from numkfs.solvers.native.knife_wstep import KnifeWeightStep
    from numkfs.solvers.registry import _NATIVE, NativeSolver

    rng = np.random.default_rng(0)
    A = rng.standard_normal((12, 4))
    problem = KnifeWeightStep("squared", 1e3 * A[:, 0], A, np.zeros(12), np.full(4, 0.5))
    honest = solve(problem, "native", fallback=False)

    def liar(problem, *, tol, warm_start=True):
        w = np.zeros(4)  # feasible, far from optimal: the gradient at 0 is of order 1e3
        obj, viol = problem.evaluate({"w": w})
        return SolverResult("native", Status.OPTIMAL, objective=obj, solution={"w": w}, max_violation=viol)

    monkeypatch.setitem(_NATIVE, "knife_wstep", NativeSolver("knife_wstep", liar, "liar", 1e-10))
    assert problem.relative_kkt_residual({"w": np.zeros(4)}) > 1e-3
    with pytest.raises(SolverError, match="relative KKT residual"):
        solve(problem, "native", fallback=False)
    with pytest.warns(UserWarning, match="falling back"):
        res = solve(problem, "auto")
    assert res.solver != "native" and res.objective == pytest.approx(honest.objective, rel=1e-7)


def test_wrongly_shaped_solution_and_empty_solver_lists_give_clear_errors(liar):
    # a wrongly shaped solution escaped as "cannot reshape"; solve(p, []) and solver=[] gave IndexError
    from numkfs.solvers import SolverError, cross_check, solve

    name = liar("shape")
    with pytest.raises(SolverError, match="could not be evaluated"):
        solve(_tiny_box_qp(), name, fallback=False)
    assert cross_check(_tiny_box_qp(), [name, "native"])[name]["status"] == "failed"
    with pytest.raises(ValueError, match="empty list"):
        solve(_tiny_box_qp(), [])
    with pytest.raises(ValueError, match="empty list"):
        cross_check(_tiny_box_qp(), [])
    from numkfs.methods.garrote import garrote_path

    X, y = _reg(p=4)
    with pytest.raises(ValueError, match="empty list"):
        garrote_path(X, y, solver=[])


def test_available_solvers_checks_every_native_solver():
    # numkfs solvers listed the native solvers without checking them
    from numkfs.solvers import available_solvers
    from numkfs.solvers.registry import native_solvers

    rows = {r["name"]: r for r in available_solvers()}
    for kind in native_solvers():
        assert rows[f"native:{kind}"]["works"] is True, rows[f"native:{kind}"]


def test_knife_native_w_step_answer_is_checked(monkeypatch):
    import importlib

    from numkfs.methods.knife import knife

    knife_mod = importlib.import_module("numkfs.methods.knife._problem")  # where the w-step calls its solver
    X, y = _reg(n=30, p=4)
    ref = knife(X, y, lambda2=0.5, solver="auto")
    monkeypatch.setattr(knife_mod, "solve_knife_wstep",
                        lambda loss, y, A, u0, c, w0, tol, **kw: (np.zeros(A.shape[1]), 1, 0.0))  # lies: KKT 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = knife(X, y, lambda2=0.5, solver="auto")
    np.testing.assert_allclose(res.weights, ref.weights, atol=1e-6)


CONIC = [r["name"] for r in available_solvers(check=False) if r["installed"] and r["name"] in ("CLARABEL", "ECOS", "SCS")]


@pytest.fixture(scope="module")
def garrote_data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = 2 * X[:, 1] + 0.1 * rng.standard_normal(60)
    return X, y


# --------------------------------------------------------------------------
# the support does not depend on the solver


@pytest.mark.parametrize("solver", CONIC)
def test_garrote_support_same_for_every_backend(garrote_data, solver):
    X, y = garrote_data
    ref = numkfs.GarroteRegressor(lambda2=50.0, solver="native").fit(X, y)
    est = numkfs.GarroteRegressor(lambda2=50.0, solver=solver).fit(X, y)
    # the conic backends leave the unused weights at 1e-12..1e-9, not 0
    assert np.abs(est.feature_weights_[[0, 2, 3]]).max() < 1e-6
    assert est.get_support().tolist() == ref.get_support().tolist() == [False, True, False, False]
    path = numkfs.garrote_path(X, y, 1.0, [50.0, 5.0, 0.5], solver=solver)
    native = numkfs.garrote_path(X, y, 1.0, [50.0, 5.0, 0.5], solver="native")
    assert np.array_equal(path.n_selected(), native.n_selected())


@pytest.mark.parametrize("solver", CONIC)
def test_cosso_support_same_for_every_backend(garrote_data, solver):
    X, y = garrote_data
    ref = numkfs.COSSORegressor(M=1.0, solver="native").fit(X, y)
    est = numkfs.COSSORegressor(M=1.0, solver=solver).fit(X, y)
    assert ref.converged_ and est.converged_
    assert np.abs(est.feature_weights_[[0, 2, 3]]).max() < 1e-6
    assert est.get_support().tolist() == ref.get_support().tolist() == [False, True, False, False]


@pytest.mark.parametrize("solver", CONIC)
def test_knife_wstep_support_same_for_every_backend(solver):
    from numkfs.datasets import make_sinusoid

    X, y, _ = make_sinusoid(n_samples=60, random_state=0)
    ref = numkfs.KNIFERegressor(lambda2=20.0, solver="native", random_state=0).fit(X, y)
    est = numkfs.KNIFERegressor(lambda2=20.0, solver=solver, random_state=0).fit(X, y)
    # the alternation stops on a relative objective change of 1e-6: weights agree to about 1e-5
    np.testing.assert_allclose(est.feature_weights_, ref.feature_weights_, atol=1e-4)
    assert est.objective_ == pytest.approx(ref.objective_, rel=1e-6)
    assert est.get_support().tolist() == ref.get_support().tolist()
    assert 0 < ref.n_features_selected_ < X.shape[1]
