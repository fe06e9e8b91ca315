"""The native box QP (``numkfs.solvers.native.boxqp``): the active set against CLARABEL on
a singular problem, its Numba loop against the NumPy reference, and COSSO's box QPs
converging within a sweep bound that grows with p."""
from __future__ import annotations

import warnings

import numpy as np
import pytest


def _reg(n=20, p=50, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


def test_cosso_box_qp_solves_converge_within_a_bound_that_scales_with_p(monkeypatch):
    # COSSO on 20 x 50: the native box QP of its garrote step hit 100,000 sweeps
    # (singular Q = G'G with p > n); every QP solve (the budget active set, or the box QPs
    # of the multiplier search if it falls back) must converge within 200 + 20 p iterations
    import numkfs.solvers.native.garrote as native_garrote
    from numkfs.methods.cosso import cosso
    from numkfs.solvers.native.boxqp import box_qp_scale, default_max_sweeps, solve_box_qp, solve_budget_qp

    calls = []

    def spy_box(Q, c, lo, hi, w0=None, **kw):
        w, sweeps, res = solve_box_qp(Q, c, lo, hi, w0, **kw)
        calls.append((sweeps, res / (kw.get("tol", 1e-10) * box_qp_scale(c, w, np.abs(Q)))))
        return w, sweeps, res

    def spy_budget(Q, c, M, w0=None, **kw):
        w, it, res, nu = solve_budget_qp(Q, c, M, w0, **kw)
        calls.append((it, res / (kw.get("tol", 1e-10) * max(1.0, np.abs(c).max()))))
        return w, it, res, nu

    monkeypatch.setattr(native_garrote, "solve_box_qp", spy_box)
    monkeypatch.setattr(native_garrote, "solve_budget_qp", spy_budget)
    X, y = _reg()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cosso(X, y, 1.0, max_iter=3)
        cosso(X, y, 1.0, max_iter=3, accelerate=False)
    sweeps, ratio = np.array(calls).T
    assert len(calls) >= 6
    assert sweeps.max() <= default_max_sweeps(50) == 1200
    assert ratio.max() <= 1.0  # every solve converged (KKT residual within tolerance)


def test_box_qp_active_set_matches_conic_solver_on_singular_problem():
    # rank-20 Q with 50 variables and an upper bound: objective equals CLARABEL's, KKT residual ~ 0
    cp = pytest.importorskip("cvxpy")
    from numkfs.solvers.native.boxqp import box_qp_kkt_residual, solve_box_qp

    rng = np.random.default_rng(3)
    G = rng.standard_normal((20, 50))
    Q = G.T @ G
    c = rng.standard_normal(50) * 5
    w, sweeps, res = solve_box_qp(Q, c, 0.0, 0.3)
    x = cp.Variable(50)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), [x >= 0, x <= 0.3])
    prob.solve("CLARABEL")
    assert 0.5 * w @ Q @ w + c @ w <= prob.value + 1e-7 * abs(prob.value)
    assert box_qp_kkt_residual(Q, c, 0.0, 0.3, w) <= 1e-8 * np.abs(Q).sum(axis=1).max()


def test_box_qp_active_set_numba_matches_numpy_reference(monkeypatch):
    import numkfs.solvers.native.boxqp as bq

    rng = np.random.default_rng(5)
    G = rng.standard_normal((15, 40))
    Q, c = G.T @ G, rng.standard_normal(40) * 3
    w_jit = bq.solve_box_qp(Q, c, 0.0, 0.5)  # bounded: Q is singular, c has a null-space part
    monkeypatch.setattr(bq, "_USE_JIT", False)
    w_np = bq.solve_box_qp(Q, c, 0.0, 0.5)
    np.testing.assert_allclose(w_jit[0], w_np[0], atol=1e-9)
    assert w_jit[1] == w_np[1] > 20  # coordinate descent did not finish: the active set ran
    assert w_jit[2] <= 1e-9 * bq.box_qp_scale(c, w_jit[0], np.abs(Q))
