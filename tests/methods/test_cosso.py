"""COSSO: additive kernels against numpy, the two exact block steps, a monotone
objective, the joint optimality conditions, GCV, recovery of an additive truth
and the estimator contract."""
import warnings
from dataclasses import replace

import numpy as np
import pytest
from conftest import make
from sklearn.exceptions import ConvergenceWarning

from numkfs.estimators._cosso import COSSORegressor, COSSORegressorCV
from numkfs.kernels.additive import additive_gram, additive_kc, feature_kernel, sobolev_kernel
from numkfs.methods.cosso import _ridge_step, cosso, cosso_gcv_lambda0, cosso_lambda0, cosso_path, cosso_relax
from numkfs.model_selection import choose_index
from numkfs.solvers import cross_check
from numkfs.solvers.native.boxqp import solve_budget_qp
from numkfs.solvers.native.garrote import GarroteStep


def _g(X):
    """Lin & Zhang (2006) example 1 components on [0, 1]."""
    t = 2 * np.pi * X
    g3 = np.sin(t[:, 2]) / (2 - np.sin(t[:, 2]))
    g4 = (0.1 * np.sin(t[:, 3]) + 0.2 * np.cos(t[:, 3]) + 0.3 * np.sin(t[:, 3]) ** 2
          + 0.4 * np.cos(t[:, 3]) ** 3 + 0.5 * np.sin(t[:, 3]) ** 3)
    return np.column_stack([5 * X[:, 0], 3 * (2 * X[:, 1] - 1) ** 2, 4 * g3, 6 * g4])


@pytest.fixture(scope="module")
def additive():
    rng = np.random.default_rng(0)
    n, p = 150, 7
    X = rng.uniform(size=(n, p))
    y = _g(X).sum(1) + rng.standard_normal(n)
    return X, y


# --------------------------------------------------------------------------
# kernels


def _sobolev_numpy(s, t):
    k1 = lambda x: x - 0.5  # noqa: E731
    k2 = lambda x: (k1(x) ** 2 - 1 / 12) / 2  # noqa: E731
    k4 = lambda x: (k1(x) ** 4 - k1(x) ** 2 / 2 + 7 / 240) / 24  # noqa: E731
    return k1(s) * k1(t) + k2(s) * k2(t) - k4(np.abs(s - t))


def test_additive_kernels_match_numpy():
    rng = np.random.default_rng(1)
    X1, X2 = rng.uniform(size=(13, 4)), rng.uniform(size=(9, 4))
    theta, c = rng.uniform(size=4), rng.standard_normal(9)
    for kernel, k in [("sobolev", _sobolev_numpy), ("rbf", lambda s, t: np.exp(-0.7 * (s - t) ** 2))]:
        Ks = [k(X1[:, j][:, None], X2[:, j][None, :]) for j in range(4)]
        for j in range(4):
            assert np.allclose(feature_kernel(X1[:, j], X2[:, j], kernel=kernel, gamma=0.7), Ks[j], atol=1e-14)
        assert np.allclose(additive_gram(X1, X2, theta, kernel=kernel, gamma=0.7),
                           sum(t * K for t, K in zip(theta, Ks)), atol=1e-13)
        assert np.allclose(additive_kc(X1, X2, c, kernel=kernel, gamma=0.7),
                           np.column_stack([K @ c for K in Ks]), atol=1e-13)
    assert np.allclose(sobolev_kernel(X1[:, 0][:, None], X2[:, 0][None, :]), _sobolev_numpy(X1[:, :1], X2[:, 0]))
    # the Sobolev kernel is positive semi-definite on [0, 1] and integrates to 0 (no constants)
    x = np.linspace(0, 1, 201)
    K = feature_kernel(x)
    assert np.linalg.eigvalsh(K).min() > -1e-12
    assert np.abs(np.trapezoid(K, x, axis=0)).max() < 1e-4


def test_kernel_errors():
    with pytest.raises(ValueError, match="Unknown additive kernel"):
        additive_gram(np.zeros((2, 2)), kernel="poly")
    with pytest.raises(ValueError, match="same number of columns"):
        additive_kc(np.zeros((2, 2)), np.zeros((2, 3)), np.zeros(2))


# --------------------------------------------------------------------------
# the steps and the objective


def test_ridge_step_is_the_exact_minimiser(additive):
    X, y = additive
    K = additive_gram(X, None, np.linspace(0.2, 1.0, X.shape[1]))
    n, lam0 = len(y), 1e-3
    c, b = _ridge_step(K, y, n * lam0)
    assert abs(c.sum()) < 1e-10 * np.abs(c).max()
    # gradient of J = (1/n)||y - b - Kc||² + λ0 cᵀKc in (c, b) vanishes
    r = y - b - K @ c
    assert np.abs(-2 / n * K @ r + 2 * lam0 * K @ c).max() < 1e-10
    assert abs(r.sum()) < 1e-9


def test_objective_non_increasing_and_same_fixed_point(additive):
    X, y = additive
    X, y = X[:80], y[:80]
    fits = {True: cosso(X, y, M=2.0, tol=1e-10, max_iter=2000)}
    assert fits[True].converged and fits[True].gap <= 1e-10 * fits[True].objective
    # the plain alternation's decrease of J falls under round-off (after ~1,900 alternations
    # here) while its duality gap is still ~5e-7 J: it stops there and says so
    with pytest.warns(ConvergenceWarning, match=r"no step lowers the objective J any more .* duality gap is still"):
        fits[False] = cosso(X, y, M=2.0, accelerate=False, tol=1e-10, max_iter=2000)
    assert fits[False].stalled and not fits[False].converged and fits[False].n_iter < 2000
    for fit in fits.values():
        h = np.array(fit.objective_history)
        assert len(h) > 5
        assert np.all(np.diff(h) <= 1e-12 * h[0])
        assert fit.theta.sum() <= 2.0 * (1 + 1e-10)
    assert fits[True].n_iter < fits[False].n_iter
    assert fits[True].objective == pytest.approx(fits[False].objective, rel=1e-6)
    assert np.allclose(fits[True].theta, fits[False].theta, atol=2e-3)


def test_joint_optimality_conditions(additive):
    """At the joint optimum r = y - b - Gθ = nλ0 c, so the garrote-step gradient
    is -λ0 cᵀK_j c + ν: every θ_j > 0 has the same cᵀK_j c = ν/λ0, every θ_j = 0 a
    smaller one (ν > 0 when the budget binds)."""
    X, y = additive
    fit = cosso(X, y, M=0.5, tol=0.0, max_iter=5000)  # until J stops decreasing
    assert fit.converged and fit.stalled and fit.gap <= 1e-9 * fit.objective
    G = additive_kc(fit._Z, fit._Z, fit.c)  # the inputs scaled to [0, 1]
    a = G.T @ fit.c
    on = fit.theta > 1e-8
    assert fit.theta.sum() == pytest.approx(0.5, rel=1e-9)
    assert np.ptp(a[on]) < 1e-4 * a[on].max()
    assert np.all(a[~on] <= a[on].min() * (1 + 1e-4))
    r = y - fit.intercept - G @ fit.theta
    assert np.allclose(r, len(y) * fit.lambda0 * fit.c, atol=1e-8 * np.abs(y).max())


def test_garrote_step_solvers_agree_on_cosso_data(additive):
    X, y = additive
    fit = cosso(X, y, M=1.0, max_iter=3)
    G = additive_kc(X, X, fit.c)
    n = len(y)
    step = GarroteStep(G, y - fit.intercept, fit.lambda0 * (G.T @ fit.c), scale=1 / n, M=0.3)
    table = cross_check(step, ["native", "CLARABEL", "ECOS", "SCS"])
    assert table.agree(1e-6), table
    assert table.results["native"]["theta"].sum() == pytest.approx(0.3, rel=1e-10)


@pytest.mark.parametrize("binding", [True, False])
def test_budget_qp_matches_conic_solver_on_singular_problem(binding):
    # the θ-step's QP: rank-20 Q with 60 variables, θ >= 0, Σθ <= M, one active-set solve;
    # a garrote-step-like linear term d - G'z with d > 0 keeps it bounded without the budget
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(4)
    G = rng.standard_normal((20, 60))
    Q, c = G.T @ G, rng.uniform(0.5, 1.5, 60) - G.T @ (3 * rng.standard_normal(20))
    total = solve_budget_qp(Q, c, 1e6)[0].sum()  # Σθ without the budget
    M = 0.3 * total if binding else 3.0 * total
    w, it, res, nu = solve_budget_qp(Q, c, M)
    x = cp.Variable(60)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(Q)) + c @ x), [x >= 0, cp.sum(x) <= M])
    prob.solve("CLARABEL")
    assert w.min() >= 0.0 and w.sum() <= M * (1 + 1e-12)
    assert 0.5 * w @ Q @ w + c @ w <= prob.value + 1e-8 * abs(prob.value)
    assert res <= 1e-10 * np.abs(c).max()
    assert (nu > 0) == binding  # the multiplier of the budget
    g = Q @ w + c + nu  # KKT: zero on the support, >= 0 off it
    assert np.abs(g[w > 0]).max() <= 1e-9 and g[w == 0].min() >= -1e-9


def _issue_data(p=50):
    """A wide case: 20 x p, y = x0 + noise (GCV picks λ0 ~ 4e-8 here)."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(20)


def _conic_cosso_objective(fit, y, M):
    """J at the θ a conic solver finds for the jointly convex form of COSSO on the same scaled
    inputs: min (1/n)||y - b - Σ_j U_j β_j||² + λ0 Σ_j ||β_j||²/θ_j over θ >= 0, Σθ <= M,
    with K_j = U_j U_jᵀ (f_j = U_j β_j, ||f_j||² = ||β_j||²); scaled by 1/λ0 and θ = M θ'."""
    cp = pytest.importorskip("cvxpy")
    from numkfs.methods.cosso import _ridge_fit

    n, p = fit._Z.shape
    Us = []
    for j in range(p):
        ev, U = np.linalg.eigh(feature_kernel(fit._Z[:, j]))
        keep = ev > 1e-12 * ev.max()
        Us.append(U[:, keep] * np.sqrt(ev[keep]))
    th, b = cp.Variable(p, nonneg=True), cp.Variable()
    betas = [cp.Variable(U.shape[1]) for U in Us]
    resid = y - b - sum(U @ be for U, be in zip(Us, betas))
    pen = sum(cp.quad_over_lin(be, th[j]) for j, be in enumerate(betas)) / M
    cp.Problem(cp.Minimize(cp.sum_squares(resid) / (n * fit.lambda0) + pen), [cp.sum(th) <= 1]).solve("CLARABEL")
    return _ridge_fit(fit._Z, y, M * np.maximum(th.value, 0.0), fit.kernel, fit.gamma, fit.lambda0).J


@pytest.mark.parametrize("M", [1e-3, 1.0])
def test_converged_objective_equals_a_conic_solve_of_the_jointly_convex_form(M):
    # at p = 2.5 n with the tiny GCV λ0 the alternation stopped unconverged at max_iter
    # (200); the Newton iteration must reach the optimum: J equal to CLARABEL's on the jointly
    # convex (b, f, θ) form, and within the duality gap it reports
    X, y = _issue_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = cosso(X, y, M)
    assert fit.converged and fit.n_iter <= 30 and fit.gap <= 1e-6 * fit.objective
    J_ref = _conic_cosso_objective(fit, y, M)
    assert fit.objective - J_ref <= fit.gap  # the gap bounds J - J*, and J* <= J_ref
    assert J_ref - fit.objective <= 1e-7 * fit.objective  # and the conic solver finds no better point
    assert fit.theta.sum() == pytest.approx(M, rel=1e-9)


def test_path_at_p_over_n_converges_everywhere_with_monotone_objectives():
    # 92 of 150 fits of select(method="cosso") at 20 x 50 ran 200 alternations unconverged
    X, y = _issue_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        path = cosso_path(X, y)
    fits = path.extra["models"]
    assert all(f.converged for f in fits) and path.extra["n_iter"].max() <= 30
    assert all(f.gap <= 1e-6 * f.objective for f in fits)
    for f in fits:
        assert np.all(np.diff(f.objective_history) <= 1e-12 * f.objective_history[0])
    assert np.all(np.diff(path.objective) < 0)  # a larger budget fits better
    assert np.allclose(path.weights.sum(1), path.grid, rtol=1e-8)  # every budget binds at the optimum


def test_fit_is_stable_under_a_1e_15_relative_change_of_X():
    # a 1e-15 relative change of X moved θ by 8e-3 (J by 3e-2, predictions at new
    # points by 4e-2, the support changed): the fits were unconverged.  Converged, J, θ, the
    # support and predictions move by round-off only.
    X, y = _issue_data()
    Xt = np.random.default_rng(9).standard_normal((100, X.shape[1]))
    base = cosso(X, y, 1.0)
    pred = base.predict(Xt)
    for seed in range(3):
        E = np.random.default_rng(100 + seed).standard_normal(X.shape)
        fit = cosso(X * (1 + 1e-15 * E), y, 1.0)
        assert abs(fit.objective - base.objective) <= 1e-10 * base.objective
        assert np.abs(fit.theta - base.theta).max() <= 1e-8
        assert np.array_equal(fit.theta > 1e-6, base.theta > 1e-6)
        assert np.abs(fit.predict(Xt) - pred).max() <= 1e-8 * np.abs(pred).max()
    # and what select() reports: the chosen point, the support and the predictions
    est0 = COSSORegressorCV(random_state=0).fit(X, y)
    est1 = COSSORegressorCV(random_state=0).fit(X * (1 + 1e-15 * E), y)
    assert est0.best_index_ == est1.best_index_
    assert np.array_equal(est0.get_support(), est1.get_support())
    assert np.abs(est0.predict(Xt) - est1.predict(Xt)).max() <= 1e-8 * np.abs(est0.predict(Xt)).max()


def test_gcv_matches_explicit_smoother(additive):
    """GCV from one eigendecomposition = GCV from the explicit smoother matrix of the
    bordered system [[K + nλ0 I, 1], [1ᵀ, 0]] [c; b] = [y; 0]."""
    X, y = additive
    X, y = X[:60], y[:60]
    n = len(y)
    K = additive_gram(X)
    grid = np.geomspace(1e-6, 1e-2, 5)
    lam, g, scores = cosso_gcv_lambda0(K, y, grid)
    for lam0, score in zip(grid, scores):
        A = np.block([[K + n * lam0 * np.eye(n), np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
        sol = np.linalg.solve(A, np.vstack([np.eye(n), np.zeros((1, n))]))
        S = K @ sol[:n] + sol[n:]
        r = y - S @ y
        assert score == pytest.approx(n * (r @ r) / np.trace(np.eye(n) - S) ** 2, rel=1e-8)
    assert lam == grid[np.argmin(scores)]


# --------------------------------------------------------------------------
# recovery of the additive truth, the path, the estimator


def test_additive_truth_is_recovered(additive):
    X, y = additive
    est = COSSORegressorCV(n_grid=8, random_state=0).fit(X, y)
    path = est.path_
    assert path.cv_scores.shape == (8, 5) and path.grid_name == "M"
    assert est.M_ == path.grid[np.argmax(path.cv_scores.mean(1))]
    rng = np.random.default_rng(5)
    Xg = rng.uniform(size=(400, X.shape[1]))
    F = _g(Xg)
    C = est.model_.components(Xg)
    for j in range(4):  # each true component, up to its constant
        a, b = C[:, j] - C[:, j].mean(), F[:, j] - F[:, j].mean()
        assert 1 - np.sum((a - b) ** 2) / np.sum(b**2) > 0.9, j
    # noise components are small next to every true one (sd 0.16-0.25 vs 0.99-3.1 here)
    assert C[:, 4:].std(0).max() < 0.35 * C[:, :4].std(0).min()
    assert np.allclose(est.predict(Xg), est.intercept_ + C.sum(1))
    test_mse = np.mean((est.predict(Xg) - F.sum(1)) ** 2)
    assert test_mse < 0.6  # error of the fitted function (noise variance 1; 0.42 here)


def _bordered_ridge(K, y, nlam):
    """(b, c) of [[K + nλ I, 1], [1ᵀ, 0]] [c; b] = [y; 0], solved densely."""
    n = len(y)
    A = np.block([[K + nlam * np.eye(n), np.ones((n, 1))], [np.ones((1, n)), np.zeros((1, 1))]])
    sol = np.linalg.solve(A, np.append(y, 0.0))
    return sol[n], sol[:n], np.linalg.cond(A)


def test_relaxed_refit_is_the_gcv_kernel_ridge_on_the_fits_theta(additive):
    """cosso_relax = kernel ridge on K_θ (θ of the fit) at the λ0 minimising GCV on that kernel,
    solved here by the dense bordered system, and predictions at new rows from it."""
    X, y = additive
    X, y = X[:80], y[:80]
    fit = cosso(X, y, M=1.0, max_iter=100)
    relaxed = cosso_relax(fit, y)
    np.testing.assert_array_equal(relaxed.theta, fit.theta)
    assert relaxed.M == fit.M and relaxed.n_iter == fit.n_iter
    Z = fit._Z
    K = additive_gram(Z, None, fit.theta)
    lam = cosso_gcv_lambda0(K, y)[0]
    assert relaxed.lambda0 == lam and lam != fit.lambda0
    b, c, cond = _bordered_ridge(K, y, len(y) * lam)
    Xn = np.random.default_rng(3).uniform(size=(50, X.shape[1]))
    expected = b + additive_gram(fit._scaling.transform(Xn), Z, fit.theta) @ c
    # both solves are backward stable: agreement to cond(A) ε relative to the scale of y
    tol = 10 * cond * np.finfo(float).eps * np.abs(y).max()
    np.testing.assert_allclose(relaxed.predict(Xn), expected, rtol=0, atol=tol)
    assert relaxed.objective_history == [pytest.approx(
        np.mean((y - b - K @ c) ** 2) + lam * c @ K @ c, rel=1e-8)]


def test_relaxed_refit_depends_on_the_direction_of_theta_only(additive):
    """Only λ0 / |θ| matters, and GCV's grid scales with the kernel: θ and 7θ refit to one function."""
    X, y = additive
    X, y = X[:80], y[:80]
    fit = cosso(X, y, M=1.0, max_iter=100)
    scaled = replace(fit, theta=7.0 * fit.theta)
    a, b = cosso_relax(fit, y), cosso_relax(scaled, y)
    assert b.lambda0 == pytest.approx(7.0 * a.lambda0, rel=1e-12)
    Xn = np.random.default_rng(4).uniform(size=(30, X.shape[1]))
    np.testing.assert_allclose(b.predict(Xn), a.predict(Xn), rtol=1e-8, atol=1e-8 * np.abs(y).max())


def test_relaxed_refit_edges(additive):
    X, y = additive
    X, y = X[:40], y[:40]
    fit = cosso(X, y, M=1.0, max_iter=50)
    empty = replace(fit, theta=np.zeros_like(fit.theta))
    assert cosso_relax(empty, y) is empty  # nothing to refit: the constant model
    with pytest.raises(ValueError, match="y has 39 values; the fit was computed on 40 rows"):
        cosso_relax(fit, y[:-1])
    bad = y.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cosso_relax(fit, bad)


@pytest.mark.filterwarnings("ignore::numkfs.model_selection.GridEdgeWarning")  # a 3-point grid
def test_cv_scores_and_predicts_with_the_relaxed_refits(additive):
    """relax=True: every fold's score is the held-out MSE of cosso_relax on that fold's path, and the
    estimator predicts with the relaxed refit at the chosen budget; relax=False scores the path's fits."""
    X, y = additive
    X, y = X[:90], y[:90]
    grid = [0.05, 0.2, 1.0]
    tr, te = np.arange(30, 90), np.arange(30)  # the first of 3 unshuffled folds
    fold = cosso_path(X[tr], y[tr], grid=grid, lambda0=cosso_lambda0(X, y), max_iter=100)  # λ0 of all the rows
    for relax in (True, False):
        est = COSSORegressorCV(grid=grid, cv=3, relax=relax, max_iter=100).fit(X, y)
        models = [cosso_relax(m, y[tr]) if relax else m for m in fold.extra["models"]]
        expected = [-np.mean((m.predict(X[te]) - y[te]) ** 2) for m in models]
        np.testing.assert_allclose(est.cv_scores_[:, 0], expected, rtol=1e-9)
        chosen = est.path_.extra["models"][est.best_index_]
        reference = cosso_relax(chosen, y) if relax else chosen
        np.testing.assert_array_equal(est.predict(X), reference.predict(X))
        assert est.lambda0_ == reference.lambda0


def test_relaxed_cv_keeps_exactly_the_sinusoids_components():
    """The KNIFE sinusoid (100 x 20, 5 true): the path's own fits score within one standard error
    with 5 to 20 components, so plain CV keeps noise ones; the relaxed refits keep exactly the 5."""
    from numkfs.datasets import make_sinusoid

    X, y, truth = make_sinusoid(n_samples=100, n_features=20, random_state=0)
    est = COSSORegressorCV().fit(X, y)
    for rule in ("best", "1se"):
        np.testing.assert_array_equal(np.flatnonzero(est.path_.selected(choose_index(est.path_, rule))),
                                      np.flatnonzero(truth))


def test_path_warm_started_budgets_bind(additive):
    X, y = additive
    path = cosso_path(X, y, grid=[0.2, 0.5, 1.0], kernel="rbf", gamma=2.0)
    assert path.cv_scores is None  # the path only: COSSORegressorCV cross-validates it
    assert np.allclose(path.weights.sum(1), [0.2, 0.5, 1.0], rtol=1e-8)
    assert np.all(np.diff(path.objective) < 0)  # a larger budget fits better


def test_regressor_default_budget_is_half_the_number_of_features(additive):
    X, y = additive
    est = COSSORegressor(max_iter=50).fit(X, y)
    assert est.M_ == X.shape[1] / 2
    np.testing.assert_array_equal(est.feature_weights_, cosso(X, y, X.shape[1] / 2, max_iter=50).theta)


def test_input_errors(additive):
    X, y = additive
    with pytest.raises(ValueError, match="The .M. parameter of cosso must be"):
        cosso(X, y, M=0.0)
    with pytest.raises(ValueError, match="'kernel' parameter"):
        cosso(X, y, M=1.0, kernel="poly")
    with pytest.raises(ValueError, match="grid"):
        cosso_path(X, y, grid=[-1.0])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        cosso(X, y[:-1], M=1.0)


def test_path_does_not_depend_on_the_units_or_offset_of_y():
    # y + 1e6 (and on other data y x 1e3) warned "did not converge ... no step lowers J" where y did not,
    # with the same fits: J's round-off was that of y's squares, and the fallback garrote step's tolerance
    # was in y's units
    rng = np.random.default_rng(11)
    n, p = int(rng.integers(30, 90)), int(rng.integers(3, 9))
    X = rng.standard_normal((n, p))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.3 * rng.standard_normal(n)
    paths = {}
    for name, a, b in [("y", 1.0, 0.0), ("1e3 y", 1e3, 0.0), ("y + 1e6", 1.0, 1e6), ("1e-3 y", 1e-3, 0.0)]:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            paths[name] = COSSORegressorCV().fit(X, a * y + b).path_
    ref = paths["y"]
    for name, path in paths.items():
        np.testing.assert_array_equal(path.grid, ref.grid)
        # the same θ to the accuracy the fits reach (duality gap at most tol = 1e-6 of J)
        np.testing.assert_allclose(path.weights, ref.weights, rtol=0, atol=1e-5 * np.abs(ref.weights).max())
        assert path.chosen_index == ref.chosen_index


def _reg(n=20, p=50, seed=2):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


def test_cosso_warns_when_alternations_stop_at_max_iter():
    # COSSO stopped unconverged without a warning
    from sklearn.exceptions import ConvergenceWarning

    from numkfs.methods.cosso import cosso

    X, y = _reg(p=5)
    for accelerate in [True, False]:
        with pytest.warns(ConvergenceWarning, match=r"COSSO did not converge at M=1 within max_iter=2 iterations"):
            fit = cosso(X, y, 1.0, max_iter=2, tol=0.0, accelerate=accelerate)
        assert not fit.converged and fit.n_iter == 2 and fit.gap > 0.0


# --------------------------------------------------------------------------
# numerical trouble


def _reg_data(seed=0, n=20, p=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


def test_cosso_singular_ridge_safeguard_warns_and_solves_the_ridged_system():
    from numkfs._validation import NumericalWarning
    from numkfs.kernels.additive import additive_gram
    from numkfs.methods.cosso import _ridge_step, cosso

    X, y = _reg_data()
    Xd, yd = np.vstack([X[:10], X[:10]]), np.concatenate([y[:10], y[:10] + 0.3])  # duplicated samples
    K = additive_gram(Xd / 4 + 0.5)
    with pytest.warns(NumericalWarning, match="numerically singular.*ridge was raised to"):
        c, b = _ridge_step(K, yd, 1e-19)
    ridge = 1e-10 * max(1.0, K.diagonal().max())
    np.testing.assert_allclose((K + ridge * np.eye(20)) @ c + b, yd, atol=1e-6)
    # 1ᵀc = 0 up to the round-off of summing 20 entries of |c| ~ 1e9 (n ε Σ|c|), not an absolute 1e-8
    assert abs(c.sum()) <= c.size * np.finfo(float).eps * np.abs(c).sum()
    with pytest.warns(NumericalWarning, match="duplicated samples or lambda0 too small"):
        pred = cosso(Xd, yd, 2.0, lambda0=1e-20, max_iter=30).predict(Xd)
    assert np.all(np.isfinite(pred))


def test_cosso_constant_column_is_dropped_not_a_flat_direction():
    """A constant feature gives θ_j = 0 and the same fit as without it, with no solver fall-back
    (a constant column leaves the native garrote step's budget multiplier undetermined: 'inaccurate',
    then CLARABEL)."""
    from numkfs.methods.cosso import cosso
    from numkfs.solvers import SolverFallbackWarning

    rng = np.random.default_rng(1)
    X = rng.standard_normal((24, 5))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.standard_normal(24)
    X[:, 2] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", SolverFallbackWarning)
        a = cosso(X, y, 1.0, max_iter=500, tol=1e-12, lambda0=1e-3)
        make("COSSORegressor").fit(X, y)  # GCV lambda0: fell back to CLARABEL before
    X2 = np.delete(X, 2, axis=1)
    b = cosso(X2, y, 1.0, max_iter=500, tol=1e-12, lambda0=1e-3)
    assert a.theta[2] == 0.0
    np.testing.assert_allclose(np.delete(a.theta, 2), b.theta, atol=1e-10)
    np.testing.assert_allclose(a.predict(X), b.predict(X2), atol=1e-10)
