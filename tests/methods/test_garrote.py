"""Linear garrote (jointly convex linear KNIFE): closed forms, KKT, solver
agreement, the equivalence with the alternating linear-KNIFE fixed point and
with numkfs.methods.knife, the path and the estimator."""
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import numkfs
from numkfs.estimators._garrote import GarroteRegressor, GarroteRegressorCV
from numkfs.methods.garrote import garrote_path, garrote_relax, garrote_step
from numkfs.model_selection import GridEdgeWarning, make_cv
from numkfs.solvers import cross_check, solve
from numkfs.solvers.native.boxqp import solve_box_qp
from numkfs.solvers.native.garrote import (GarroteStep, LinearGarrote, berhu_penalty, garrote_lambda2_max,
                                           garrote_weights)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n, p = 80, 8
    X = rng.standard_normal((n, p))
    X[:, 5] = 0.7 * X[:, 0] + 0.3 * X[:, 5]  # correlated features
    X -= X.mean(0)
    y = X @ np.array([3.0, -2.0, 1.0, 0.5, 0, 0, 0, 0]) + rng.standard_normal(n)
    return X, y - y.mean()


def _kkt_residual(X, y, beta, lam1, lam2):
    """numpy subgradient check of min ||y - Xb||² + Σ ρ(b_j) (independent of the Numba loop)."""
    z = X.T @ (y - X @ beta)
    mu, kappa = np.sqrt(lam1 * lam2), np.sqrt(lam2 / lam1)
    r = np.where(beta == 0, np.maximum(np.abs(z) - mu, 0),
                 np.where(np.abs(beta) <= kappa, np.abs(z - mu * np.sign(beta)), np.abs(z - lam1 * beta)))
    return r.max()


# --------------------------------------------------------------------------
# closed forms


def test_berhu_is_the_minimum_over_w():
    rng = np.random.default_rng(1)
    for lam1, lam2 in [(1.0, 4.0), (0.3, 0.05), (2.0, 50.0)]:
        b = rng.standard_normal(12) * 3 * np.sqrt(lam2 / lam1)
        for bj, rho, wj in zip(b, berhu_penalty(b, lam1, lam2), garrote_weights(b, lam1, lam2)):
            opt = minimize_scalar(lambda w: lam1 * bj**2 / w + lam2 * w, bounds=(1e-12, 1.0), method="bounded",
                                  options={"xatol": 1e-12})
            assert rho == pytest.approx(opt.fun, rel=1e-7)
            assert wj == pytest.approx(opt.x, abs=1e-5)
            assert rho == pytest.approx(lam1 * bj**2 / max(wj, 1e-300) + lam2 * wj, rel=1e-12)


def test_native_solution_satisfies_kkt_and_weights(data):
    X, y = data
    lam1 = 1.0
    lmax = garrote_lambda2_max(X, y, lam1)
    prob = LinearGarrote(X, y, lam1, 0.0)
    for frac in [0.0, 0.01, 0.1, 0.5]:
        prob.update(lambda2=frac * lmax)
        res = solve(prob, "native", fallback=False)
        b, w = res["beta"], res["w"]
        assert _kkt_residual(X, y, b, lam1, frac * lmax) < 1e-8 * np.abs(X.T @ y).max()
        expect = np.ones_like(w) if frac == 0 else np.minimum(1, np.abs(b) * np.sqrt(lam1 / (frac * lmax)))
        assert np.array_equal(w, expect)
        assert res.objective == pytest.approx(prob.reduced_objective(b), rel=1e-12)
    # λ2 = 0 is ridge regression
    prob.update(lambda2=0.0)
    b = solve(prob, "native", fallback=False)["beta"]
    assert np.allclose(b, np.linalg.solve(X.T @ X + lam1 * np.eye(X.shape[1]), X.T @ y), atol=1e-9)


def test_lambda2_max_closed_form(data):
    """β̃ = 0 is optimal iff |x_jᵀy| ≤ sqrt(λ1 λ2) for all j, i.e. λ2 ≥ max_j (x_jᵀy)²/λ1;
    checked with an independent conic solver on both sides of the threshold."""
    X, y = data
    for lam1 in [0.5, 3.0]:
        lmax = garrote_lambda2_max(X, y, lam1)
        assert lmax == pytest.approx(np.max((X.T @ y) ** 2) / lam1)
        prob = LinearGarrote(X, y, lam1, lmax * (1 + 1e-9))
        res = solve(prob, "native", fallback=False)
        assert np.all(res["w"] == 0) and np.all(res["beta"] == 0)  # exact zeros just above
        prob.update(lambda2=lmax * (1 - 1e-9))
        assert solve(prob, "native", fallback=False)["w"].max() > 0  # ... and not just below
        # an independent conic solver finds no point better than β̃ = 0 above the
        # threshold (its answer is only ~1e-4-close to 0 there: the kink is flat) ...
        f0 = y @ y
        prob.update(lambda2=lmax * (1 + 1e-2))
        res = solve(prob, "CLARABEL", fallback=False)
        assert res.objective >= f0 * (1 - 1e-10)
        assert np.max(res["w"]) < 1e-5
        # ... and a strictly better one below it, led by the feature of max |x_jᵀy|
        prob.update(lambda2=lmax * 0.9)
        for solver in ["native", "CLARABEL"]:
            res = solve(prob, solver, fallback=False)
            w = res["w"]
            assert w.max() > 1e-4 and res.objective < f0 * (1 - 1e-9)
            assert int(np.argmax(w)) == int(np.argmax(np.abs(X.T @ y)))  # the first feature in


def test_solvers_agree_cross_check(data):
    """native, CLARABEL (1e-9), ECOS (1e-8) and SCS (1e-9) on the QR-compressed form."""
    X, y = data
    lmax = garrote_lambda2_max(X, y, 1.0)
    for frac in [0.005, 0.05, 0.3]:
        prob = LinearGarrote(X, y, 1.0, frac * lmax)
        table = cross_check(prob, ["native", "CLARABEL", "ECOS", "SCS"])
        assert table.reference == "native"
        for row in table.rows:
            assert row["status"] == "optimal", (frac, row)
            assert row["same_selection"] is True, (frac, row)
            assert row["solution_distance"] < 1e-3, (frac, row)
        assert abs(table["CLARABEL"]["objective_gap"]) < 1e-9
        # interior point ECOS and first-order SCS stop less precisely near w_j -> 0
        assert abs(table["ECOS"]["objective_gap"]) < 1e-5
        assert abs(table["SCS"]["objective_gap"]) < 1e-4
        # the native answer is never worse than a conic one
        assert all(r["objective_gap"] >= -1e-12 for r in table.rows)


def test_qr_compression_keeps_the_objective(data):
    X, y = data
    sol = {}
    for compress in [True, False]:
        prob = LinearGarrote(X, y, 1.0, 0.05 * garrote_lambda2_max(X, y, 1.0), compress=compress)
        res = solve(prob, "CLARABEL", fallback=False)
        cvx_value = prob.cvxpy_problem.value
        assert cvx_value == pytest.approx(res.objective, rel=1e-7)  # the compressed objective is exact
        sol[compress] = res["beta"]
    assert np.allclose(sol[True], sol[False], atol=1e-6)


# --------------------------------------------------------------------------
# equivalence with linear KNIFE


def _alternating_linear_knife(X, y, lam1, lam2, n_iter=20000, tol=1e-13):
    """Self-contained reference: block descent on KNIFE with weights entering the
    linear kernel linearly, K_v = X diag(v) Xᵀ (paper eq. 3 with W = diag(v)).
    α-step: (K_v + λ1 I) α = y; v-step: min ||y - X diag(β) v||² + Σ (λ1 β_j² + λ2) v_j,
    0 ≤ v ≤ 1, with β = Xᵀα (a box QP)."""
    n, p = X.shape
    v = np.ones(p)
    f_old = np.inf
    for _ in range(n_iter):
        alpha = np.linalg.solve(X @ (v[:, None] * X.T) + lam1 * np.eye(n), y)
        beta = X.T @ alpha
        Gb = X * beta
        Q = 2 * Gb.T @ Gb
        c = -2 * Gb.T @ y + lam1 * beta**2 + lam2
        v, _, _ = solve_box_qp(Q, c, 0.0, 1.0, v, tol=1e-13)
        r = y - Gb @ v
        f = r @ r + lam1 * np.sum(v * beta**2) + lam2 * v.sum()
        if f_old - f <= tol * f:
            break
        f_old = f
    return v * beta, v, f


def test_equals_alternating_linear_knife_fixed_point(data):
    X, y = data
    lam1 = 1.0
    lmax = garrote_lambda2_max(X, y, lam1)
    for frac in [0.02, 0.2]:
        bt_ref, v_ref, f_ref = _alternating_linear_knife(X, y, lam1, frac * lmax)
        prob = LinearGarrote(X, y, lam1, frac * lmax)
        res = solve(prob, "native", fallback=False)
        assert res.objective == pytest.approx(f_ref, rel=1e-8)
        assert np.allclose(res["beta"], bt_ref, atol=1e-5)
        assert np.allclose(res["w"], v_ref, atol=1e-4)
        assert np.array_equal(res["w"] > 0, v_ref > 1e-8)


def test_shared_garrote_step_is_the_knife_weight_step(data):
    """GarroteStep(upper=1) through the registry = the alternating reference's v-step."""
    X, y = data
    rng = np.random.default_rng(3)
    beta = rng.standard_normal(X.shape[1])
    lam1, lam2 = 1.0, 20.0
    G = X * beta
    d = lam1 * beta**2 + lam2
    v_ref, _, _ = solve_box_qp(2 * G.T @ G, -2 * G.T @ y + d, 0.0, 1.0, None, tol=1e-13)
    for solver in ["native", "CLARABEL"]:
        theta, res = garrote_step(G, y, d, upper=1.0, solver=solver)
        assert np.allclose(theta, v_ref, atol=1e-6), solver
    table = cross_check(GarroteStep(G, y, d, upper=1.0, M=0.5 * v_ref.sum()), ["native", "CLARABEL", "ECOS", "SCS"])
    assert table.agree(1e-6), table
    assert table.results["native"]["theta"].sum() == pytest.approx(0.5 * v_ref.sum(), rel=1e-10)


def test_equals_knife_module_reweighted():
    """numkfs.methods.knife (weights squared in the kernel, MATH.md) at (λ1, λ2) with
    weights w*: the garrote with the adaptive penalty Σ λ2/(2 w*_j) v_j on the
    support of w* (the tangent of KNIFE's λ2 Σ sqrt(v_j), v = w²) returns v = w*²
    and β̃ = w*² ∘ Xᵀα. The plain garrote at the same (λ1, λ2) differs: squared-weight
    KNIFE is not eq. 4 (see numkfs.methods.garrote)."""
    knife_mod = pytest.importorskip("numkfs.methods.knife")
    from numkfs.datasets._knife import make_sinusoid

    X, y, _ = make_sinusoid(60, random_state=1)
    X = (X - X.mean(0)) / X.std(0)
    y = y - y.mean()
    lam1, lam2 = 1.0, 60.0
    res = knife_mod.knife(X, y, kernel="linear", loss="squared", lambda1=lam1, lambda2=lam2, random_state=0,
                          tol=1e-14, max_iter=5000)
    w = res.weights
    act = w > 0
    assert 0 < act.sum() < X.shape[1]
    bt_knife = w[act] ** 2 * (X[:, act].T @ res.alpha)
    path = garrote_path(X[:, act], y, lam1, [lam2], fit_intercept=False, penalty_weights=1 / (2 * w[act]))
    assert np.allclose(path.weights[0], w[act] ** 2, atol=1e-5)
    assert np.allclose(path.extra["coef"][0], bt_knife, atol=1e-5 * np.abs(bt_knife).max())
    plain = garrote_path(X, y, lam1, [lam2], fit_intercept=False)
    assert np.max(np.abs(plain.weights[0] - w**2)) > 1e-2


# --------------------------------------------------------------------------
# the path


def test_path_native_matches_conic_and_is_warm(data):
    X, y = data
    Xs = X + 5.0  # the intercept is handled by centring
    path = garrote_path(Xs, y + 2.0, n_grid=15)
    assert path.grid_name == "lambda2" and path.weights.shape == (15, X.shape[1])
    assert path.n_selected()[0] == 0 and path.n_selected()[-1] >= 4
    assert set(path.extra["solver"]) == {"native"}
    ref = garrote_path(Xs, y + 2.0, grid=path.grid[[3, 9, 14]], solver="CLARABEL")
    assert np.allclose(ref.weights, path.weights[[3, 9, 14]], atol=1e-5)
    assert np.allclose(ref.objective, path.objective[[3, 9, 14]], rtol=1e-8)
    pred = Xs @ path.extra["coef"][9] + path.extra["intercept"][9]
    assert np.allclose(pred.mean(), (y + 2.0).mean())
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = path.plot()
    ax.figure.canvas.draw()
    try:
        # one line per feature, drawn at the grid's λ2 with the path's weights (no chosen point to mark)
        lines = ax.get_lines()
        assert len(lines) == X.shape[1]
        for j, line in enumerate(lines):
            np.testing.assert_array_equal(line.get_xdata(), path.grid)
            np.testing.assert_array_equal(line.get_ydata(), path.weights[:, j])
        # the top axis: ticks at grid points, labelled with the number selected there;
        # the first at the smallest λ2, where the most features are in
        top = ax.numkfs_top_axis
        ticks = top.get_xticks()
        counts = [int(t.get_text()) for t in top.get_xticklabels()]
        at = [int(np.flatnonzero(path.grid == t)[0]) for t in ticks]
        assert len(at) >= 2 and counts == path.n_selected()[at].tolist()
        assert at[0] == int(np.argmin(path.grid)) and counts[0] == path.n_selected()[-1]
    finally:
        plt.close(ax.figure)


def test_input_errors(data):
    X, y = data
    with pytest.raises(ValueError, match="lambda1"):
        garrote_path(X, y, lambda1=0.0)
    with pytest.raises(ValueError, match="grid"):
        garrote_path(X, y, grid=[-1.0])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        garrote_path(X, y[:-1])
    with pytest.raises(ValueError, match="lambda2"):
        GarroteRegressor(lambda2=-1).fit(X, y)


# --------------------------------------------------------------------------
# the estimator


@pytest.mark.parametrize("standardize", [True, False])
def test_estimator_matches_path(data, standardize):
    X, y = data
    l2 = 0.1 * garrote_lambda2_max(X, y, 1.0)
    est = GarroteRegressor(lambda2=l2, standardize=standardize).fit(X, y)
    path = garrote_path(X, y, 1.0, [l2], standardize=standardize)
    assert np.allclose(est.coef_, path.extra["coef"][0])
    assert np.array_equal(est.get_support(), path.selected(0))
    assert est.transform(X).shape[1] == est.get_support().sum()
    assert np.allclose(est.predict(X), X @ est.coef_ + est.intercept_)


def test_standardize_is_the_garrote_of_the_standardised_columns(data):
    """standardize=True is eq. (4) on X / sd (numpy's population sd): the same weights, objectives and
    intercepts, β̃ divided by sd back in X's units; garrote_relax likewise.  Columns in units 1e-4 to
    1e5 apart give the same weights (the selection does not depend on X's units)."""
    X, y = data
    sd = X.std(axis=0)
    grid = garrote_lambda2_max(X / sd, y, 1.0) * np.array([0.5, 0.1, 0.01])
    ours = garrote_path(X, y, 1.0, grid, standardize=True, tol=1e-12)
    ref = garrote_path(X / sd, y, 1.0, grid, tol=1e-12)
    # both solved to tol 1e-12 on data that differ by round-off (eps x a few): 1e-8 relative
    np.testing.assert_allclose(ours.weights, ref.weights, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.extra["coef"] * sd, ref.extra["coef"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.extra["intercept"], ref.extra["intercept"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.objective, ref.objective, rtol=1e-8)
    np.testing.assert_allclose(ours.extra["x_scale"], sd, rtol=1e-14)
    coef, b = garrote_relax(X, y, ours.weights, 1.0, standardize=True)
    coef_ref, b_ref = garrote_relax(X / sd, y, ours.weights, 1.0)
    np.testing.assert_allclose(coef * sd, coef_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b, b_ref, rtol=1e-10)
    units = 10.0 ** np.linspace(-4, 5, X.shape[1])
    scaled = garrote_path(X * units, y, 1.0, grid, standardize=True, tol=1e-12)
    np.testing.assert_allclose(scaled.weights, ours.weights, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(scaled.extra["coef"] * units, ours.extra["coef"], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_relaxed_refit_is_the_garrote_at_lambda2_zero_on_the_support(data, fit_intercept):
    """garrote_relax = the garrote solved at λ2 = 0 on the support's columns (every weight 1: ridge),
    by the native solver and by a conic one, and the ridge normal equations in closed form."""
    X, y = data
    Xs, ys = (X + 3.0, y + 1.0) if fit_intercept else (X, y)  # the intercept by centring
    path = garrote_path(Xs, ys, grid=[0.3 * garrote_lambda2_max(X, y, 1.0)], fit_intercept=fit_intercept)
    S = path.selected(0)
    assert 0 < S.sum() < X.shape[1]
    coef, b = garrote_relax(Xs, ys, path.weights[0], fit_intercept=fit_intercept)
    assert np.all(coef[~S] == 0)
    for solver in ("native", "CLARABEL"):
        ref = garrote_path(Xs[:, S], ys, grid=[0.0], solver=solver, fit_intercept=fit_intercept)
        np.testing.assert_allclose(ref.weights[0], 1.0, atol=1e-6)
        np.testing.assert_allclose(coef[S], ref.extra["coef"][0], rtol=1e-6, atol=1e-6 * np.abs(coef).max())
    Xc, yc = (Xs[:, S] - Xs[:, S].mean(0), ys - ys.mean()) if fit_intercept else (Xs[:, S], ys)
    A = Xc.T @ Xc + np.eye(S.sum())
    # Cholesky and LU solves of one SPD system: agreement to cond(A) ε
    np.testing.assert_allclose(coef[S], np.linalg.solve(A, Xc.T @ yc),
                               rtol=0, atol=10 * np.linalg.cond(A) * np.finfo(float).eps * np.abs(coef).max())
    if fit_intercept:
        assert b == pytest.approx(ys.mean() - Xs[:, S].mean(0) @ coef[S], rel=1e-12)
    else:
        assert b == 0.0


def test_relaxed_refit_in_the_dual_when_the_support_exceeds_the_rows():
    """More selected columns than rows: Xᵀ(XXᵀ + λ1 I)⁻¹y, the same ridge solution as the primal."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((15, 40))
    y = X[:, :3] @ np.array([2.0, -1.0, 0.5]) + 0.1 * rng.standard_normal(15)
    w = np.r_[np.full(30, 0.5), np.zeros(10)]
    coef, b = garrote_relax(X, y, w, lambda1=0.7)
    Xc = X[:, :30] - X[:, :30].mean(0)
    A = Xc.T @ Xc + 0.7 * np.eye(30)
    np.testing.assert_allclose(coef[:30], np.linalg.solve(A, Xc.T @ (y - y.mean())), rtol=0,
                               atol=10 * np.linalg.cond(A) * np.finfo(float).eps * np.abs(coef).max())
    assert np.all(coef[30:] == 0) and np.isfinite(b)
    empty = garrote_relax(X, y, np.zeros(40))
    assert np.all(empty[0] == 0) and empty[1] == pytest.approx(y.mean())
    with pytest.raises(ValueError, match="weights has 39 entries for 40 features"):
        garrote_relax(X, y, np.zeros(39))


@pytest.mark.parametrize("sizes", [(3, 10, 30), (12, 12, 30)])
def test_relaxed_refits_of_several_points_at_once(sizes):
    """Rows of weights refitted at once: each row the ridge solution on its support, as one row alone
    gives it; a repeated support the same fit; an empty one the mean.  Supports of 3 and 10 columns
    (their union no more than the 15 rows: one XᵀX), of 12 and 12 others (union 24: one each), and
    of 30 (the dual)."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((15, 40)) + 2.0
    y = X[:, :3] @ np.array([2.0, -1.0, 0.5]) + 0.1 * rng.standard_normal(15)
    starts = [0, 5 if sizes[1] == 10 else 20, 0]
    W = np.zeros((5, 40))
    for r, (a, k) in enumerate(zip(starts, sizes)):
        W[r, a:a + k] = rng.uniform(0.1, 1.0, k)
    W[4] = 0.5 * W[0]  # the support of row 0 again
    coefs, bs = garrote_relax(X, y, W, lambda1=0.7)
    assert coefs.shape == (5, 40) and bs.shape == (5,)
    for r in range(5):
        S = np.flatnonzero(W[r] > 0)
        assert np.all(coefs[r, np.setdiff1d(np.arange(40), S)] == 0)
        if not S.size:
            assert bs[r] == pytest.approx(y.mean())
            continue
        Xc = X[:, S] - X[:, S].mean(0)
        K = Xc @ Xc.T + 0.7 * np.eye(15)  # the dual system, well conditioned whatever the support
        expect = Xc.T @ np.linalg.solve(K, y - y.mean())
        A = Xc.T @ Xc + 0.7 * np.eye(S.size)
        atol = 10 * np.linalg.cond(A) * np.finfo(float).eps * np.abs(expect).max()
        np.testing.assert_allclose(coefs[r, S], expect, rtol=0, atol=atol)
        alone = garrote_relax(X, y, W[r], lambda1=0.7)
        np.testing.assert_allclose(alone[0], coefs[r], rtol=0, atol=atol)
        assert bs[r] == pytest.approx(y.mean() - X[:, S].mean(0) @ coefs[r, S], rel=1e-12)
    np.testing.assert_array_equal(coefs[4], coefs[0])
    with pytest.raises(ValueError, match="weights has 39 entries per row for 40 features"):
        garrote_relax(X, y, np.zeros((2, 39)))


@pytest.mark.parametrize("bad, shown", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf"), (-0.2, "-0.2")])
def test_relaxed_refit_refuses_weights_that_are_not_garrote_weights(data, bad, shown):
    """A NaN weight was silently 'not selected' (NaN > tol is False), an infinite or negative
    one taken as a weight; each is refused naming the parameter, the value and where it is."""
    X, y = data
    w = np.full(X.shape[1], 0.5)
    w[3] = bad
    with pytest.raises(ValueError, match=rf"garrote_relax: weights must be finite and >= 0.*got {shown} at feature 3"):
        garrote_relax(X, y, w)
    W = np.full((2, X.shape[1]), 0.5)
    W[1, 6] = bad
    with pytest.raises(ValueError, match=rf"got {shown} at row 1, feature 6"):
        garrote_relax(X, y, W)
    np.testing.assert_array_equal(w[[0, 3]], [0.5, bad])  # the input is not modified


@pytest.mark.parametrize("tol", [-1e-6, np.nan, np.inf])
def test_relaxed_refit_refuses_a_negative_or_non_finite_tol(data, tol):
    X, y = data
    with pytest.raises(ValueError, match=r"'tol' parameter of garrote_relax must be a float in the range \[0.0, inf\)"):
        garrote_relax(X, y, np.full(X.shape[1], 0.5), tol=tol)
    coef, _ = garrote_relax(X, y, np.r_[0.5, np.zeros(X.shape[1] - 1)], tol=0.0)  # 0: every positive weight
    assert np.flatnonzero(coef).tolist() == [0]


@pytest.mark.parametrize("relax", [True, False])
def test_cv_estimator_predicts_with_the_chosen_points_model(data, relax):
    X, y = data
    est = GarroteRegressorCV(n_grid=8, cv=3, relax=relax).fit(X + 1.0, y)
    i = est.best_index_
    w = est.path_.weights[i]
    coef, b = (garrote_relax(X + 1.0, y, w, standardize=True) if relax
               else (est.path_.extra["coef"][i], est.path_.extra["intercept"][i]))
    np.testing.assert_array_equal(est.coef_, coef)
    assert est.intercept_ == b
    np.testing.assert_array_equal(est.feature_weights_, w)
    np.testing.assert_allclose(est.predict(X + 1.0), (X + 1.0) @ coef + b, rtol=1e-12)


# --------------------------------------------------------------------------
# numerical trouble


def _reg_data(seed=0, n=20, p=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


def test_garrote_duplicated_and_rescaled_columns_native_matches_conic():
    """Duplicated column: native == CLARABEL.  A column scaled by 1e6 as well: the native answer is
    never worse than CLARABEL's (which, accepted as 'optimal', can be 4e-5 too high there)."""
    from numkfs.methods.garrote import garrote_path

    X, y = _reg_data(2)
    Xdup = np.column_stack([X, X[:, 0], X[:, 1]])
    a = garrote_path(Xdup, y, n_grid=5, solver="native")
    b = garrote_path(Xdup, y, grid=a.grid, solver="CLARABEL")
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-7)
    Xbad = Xdup * np.array([1, 1, 1, 1, 1, 1e6])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = garrote_path(Xbad, y, n_grid=5, solver="native")
        b = garrote_path(Xbad, y, grid=a.grid, solver="CLARABEL")
    assert np.all(np.isfinite(a.weights)) and set(a.extra["solver"]) == {"native"}
    assert np.all(a.objective <= b.objective * (1 + 1e-9))


@pytest.fixture(scope="module")
def garrote_data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = 2 * X[:, 1] + 0.1 * rng.standard_normal(60)
    return X, y


# --------------------------------------------------------------------------
# grid edges


def test_garrote_cv_grid_runs_to_ridge_and_user_grid_edge_warns(garrote_data):
    X, y = garrote_data
    est = numkfs.GarroteRegressorCV(n_grid=10, cv=3, random_state=0).fit(X, y)
    # 10 positive values and 0, refined where the support jumps (at most n_grid values inserted)
    assert est.path_.grid[-1] == 0.0 and 11 <= est.path_.n_points <= 21
    assert est.path_.grid[0] == pytest.approx(est.path_.extra["lambda2_max"])
    # a user grid whose smallest value is still improving: say which parameter to widen (scored on the
    # path's own fits: every point holds x1 alone, so the relaxed refits would score alike)
    with pytest.warns(GridEdgeWarning, match="'grid'"):
        numkfs.GarroteRegressorCV(grid=[300.0, 200.0, 150.0], cv=3, relax=False, random_state=0).fit(X, y)


@pytest.mark.parametrize("relax", [True, False])
def test_garrote_cv_scores_are_foldwise(garrote_data, relax):
    """Each fold's scores come from the path on the training rows only (standardised by their own
    standard deviations): its points' relaxed refits (ridge on each point's support) or the points
    themselves."""
    from numkfs.methods.garrote import garrote_relax

    X, y = garrote_data
    est = numkfs.GarroteRegressorCV(n_grid=6, cv=3, relax=relax, random_state=0).fit(X, y)
    grid = est.path_.grid
    splits = list(make_cv(3, y, classifier=False, random_state=0).split(X, y))
    for k, (tr, te) in enumerate(splits):
        fp = numkfs.garrote_path(X[tr], y[tr], 1.0, grid, standardize=True)
        if relax:
            fits = [garrote_relax(X[tr], y[tr], w, standardize=True) for w in fp.weights]
            coef, intercept = np.array([f[0] for f in fits]), np.array([f[1] for f in fits])
        else:
            coef, intercept = fp.extra["coef"], fp.extra["intercept"]
        pred = X[te] @ coef.T + intercept
        np.testing.assert_allclose(est.cv_scores_[:, k], -np.mean((pred - y[te][:, None]) ** 2, axis=0))


# --------------------------------------------------------------------------
# one name, one meaning


def test_garrote_lambda_min_ratio_ends_the_default_grid():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(30)
    new = numkfs.garrote_path(X, y, n_grid=5, lambda_min_ratio=1e-2, max_refine=0)
    assert new.grid[-1] == pytest.approx(1e-2 * new.grid[0])
    with pytest.raises(TypeError, match="eps"):  # its former alias 'eps' is gone (lp-KTA's threshold only)
        numkfs.garrote_path(X, y, eps=1e-2)
