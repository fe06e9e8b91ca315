"""Solver faults injected through the methods: fall back or a clear error,
and nothing kept from a failed solve.

A faulty backend is put in ``numkfs.solvers.registry.BACKENDS`` (or in
place of a native solver) with ``monkeypatch``; the methods (NMMKL, the
garrote path, COSSO, their estimators) must then either give the same
answer as with a healthy backend (after a :class:`SolverFallbackWarning`
naming the faulty one) or raise a :class:`SolverError` listing what each
backend said.
"""
import warnings

import numpy as np
import pytest

from numkfs.estimators._cosso import COSSORegressor
from numkfs.estimators._garrote import GarroteRegressor
from numkfs.estimators._nmmkl import NMMKLSelector
from numkfs.methods.garrote import garrote_path
from numkfs.methods.nmmkl import nmmkl, nmmkl_path
from numkfs.solvers import BoxQP, SolverError, SolverFallbackWarning, SolverResult, Status, solve, solve_box_qp
from numkfs.solvers import registry
from numkfs.solvers.native.garrote import LinearGarrote
from numkfs.solvers.native.nmmkl import NMMKLProblem
from numkfs.solvers.registry import BACKENDS

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
