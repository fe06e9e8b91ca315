"""COSSO: additive kernels against numpy, the two exact block steps, a monotone
objective, the joint optimality conditions, GCV, recovery of an additive truth
and the estimator contract."""
import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from numkfs.estimators._garrote import COSSORegressor, COSSORegressorCV
from numkfs.kernels.additive import additive_gram, additive_kc, feature_kernel, sobolev_kernel
from numkfs.methods.cosso import _ridge_step, cosso, cosso_gcv_lambda0, cosso_path
from numkfs.solvers import cross_check
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
    fits = {acc: cosso(X, y, M=2.0, accelerate=acc, tol=1e-10, max_iter=2000) for acc in [True, False]}
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
    assert fit.converged
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
    est = COSSORegressorCV(n_Ms=8, random_state=0).fit(X, y)
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


def test_path_warm_started_budgets_bind(additive):
    X, y = additive
    path = cosso_path(X, y, Ms=[0.2, 0.5, 1.0], cv=None, kernel="rbf", gamma=2.0)
    assert path.cv_scores is None
    assert np.allclose(path.weights.sum(1), [0.2, 0.5, 1.0], rtol=1e-8)
    assert np.all(np.diff(path.objective) < 0)  # a larger budget fits better


def test_input_errors(additive):
    X, y = additive
    with pytest.raises(ValueError, match="M must be"):
        cosso(X, y, M=0.0)
    with pytest.raises(ValueError, match="'kernel' parameter"):
        cosso(X, y, M=1.0, kernel="poly")
    with pytest.raises(ValueError, match="Ms must be"):
        cosso_path(X, y, Ms=[-1.0], cv=None)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        cosso(X, y[:-1], M=1.0)


@parametrize_with_checks([COSSORegressor(M=1.0, max_iter=30), COSSORegressorCV(n_Ms=3, cv=3, max_iter=10)])
def test_sklearn_contract(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)
