"""KNIFE: monotone objective, KKT conditions, solver agreement, the linear-kernel
relation to MATH.md eq. 4, sticky zeros, the path, estimators and input errors.

One-vs-rest problems skip the restart of ``gamma="auto"``'s scale search:
``knife_ovr_paths`` (and the one-vs-rest fold walks of ``KNIFEClassifierCV``) settle each
problem's λ2 = 0 scale by the rounds alone: each problem's path is ``knife_path``'s on the same
grid with ``AUTO_GAMMA_RESTART`` off, point for point; binary problems keep the restart; and on
a seeded three-class problem the CV selects what it selected with the restart.
"""
import importlib
import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from numkfs.datasets._knife import make_orange, make_sinusoid
from numkfs.estimators._knife import KNIFEClassifier, KNIFERegressor
from numkfs.estimators._knife_cv import KNIFEClassifierCV, KNIFERegressorCV
from numkfs.kernels.weighted import weighted_kernel
from numkfs.losses import get_loss
from numkfs.methods.knife import (KNIFEGridWalk, knife, knife_gradient_w, knife_lambda2_max, knife_objective,
                                  knife_ovr_paths, knife_path, lambda_min_ratio_for, path_decision_function)
from numkfs.solvers import solve
from numkfs.solvers.native.knife_wstep import KnifeWeightStep, solve_knife_wstep


def _std(X):
    return (X - X.mean(0)) / X.std(0)


@pytest.fixture(scope="module")
def sinusoid():
    X, y, s = make_sinusoid(60, random_state=1)
    return _std(X), y - y.mean(), s


@pytest.fixture(scope="module")
def orange():
    X, y, s = make_orange(60, random_state=0)
    return _std(X), y, s


def _projected(g, w):
    g = np.where((w <= 0) & (g > 0), 0.0, g)
    return np.where((w >= 1) & (g < 0), 0.0, g)


# --------------------------------------------------------------------------
# the algorithm


@pytest.mark.parametrize("kernel,loss", [("rbf", "squared"), ("poly", "squared"), ("linear", "squared"),
                                         ("rbf", "squared_hinge"), ("poly", "huberized_hinge"),
                                         ("rbf", "logistic")])
def test_objective_history_is_monotone_and_matches_objective(sinusoid, orange, kernel, loss):
    X, y, _ = sinusoid if loss == "squared" else orange
    res = knife(X, y, kernel=kernel, loss=loss, lambda2=2.0, n_restarts=2, random_state=0, max_iter=60)
    h = res.objective_history
    assert len(h) >= 3
    assert np.all(np.diff(h) <= 0.0)
    assert h[-1] == res.objective
    f = knife_objective(X, y, res.weights, res.alpha, res.intercept, kernel=kernel, loss=loss, lambda2=2.0)
    assert f == pytest.approx(res.objective, rel=1e-10)
    assert res.objective == pytest.approx(res.restart_objectives.min())


@pytest.mark.parametrize("kernel,loss,lam2", [("rbf", "squared", 20.0), ("linear", "squared", 20.0),
                                              ("rbf", "squared_hinge", 1.0), ("rbf", "huberized_hinge", 0.5)])
def test_kkt_at_returned_solution(sinusoid, orange, kernel, loss, lam2):
    """α is optimal for w (exactly), and w satisfies the KKT conditions of the
    w-step linearised at the returned point, i.e. of f in w over the box."""
    X, y, _ = sinusoid if loss == "squared" else orange
    res = knife(X, y, kernel=kernel, loss=loss, lambda2=lam2, random_state=0, tol=1e-13, max_iter=3000)
    w, a, b = res.weights, res.alpha, res.intercept
    assert np.any(w > 0)
    K = weighted_kernel(X, w, kernel, gamma=1 / X.shape[1])
    L = get_loss(loss)
    g = L.gradient(y, K @ a + b)
    # α-step stationarity: g + 2 λ1 α = 0 (and 1ᵀg = 0 with an intercept)
    assert np.max(np.abs(g + 2 * a)) < 1e-8 * max(1, np.max(np.abs(g)))
    if loss != "squared":
        assert abs(g.sum()) < 1e-8 * max(1, np.max(np.abs(g)))
    gw = knife_gradient_w(X, y, w, a, b, kernel=kernel, loss=loss, lambda2=lam2)
    scale = max(1.0, float(np.max(np.abs(gw - lam2))))
    assert np.max(np.abs(_projected(gw, w))) < 5e-5 * scale
    # the weight-step problem linearised at (α, w) has w as a KKT point
    from numkfs.methods.knife._problem import _Knife

    m = _Knife(X, y, kernel=kernel, loss=loss, lambda1=1.0, gamma=1 / X.shape[1],
               degree=2, coef0=1.0, delta=1.0, solver="native")
    act, A, u0, c = m.wstep_data(K, a, b, w, lam2)
    prob = KnifeWeightStep(loss, y, A, u0, c)
    assert prob.kkt_residual(w[act]) < 5e-5 * scale


def _random_wstep(rng, loss, n=50, p=8):
    A = rng.standard_normal((n, p))
    y = rng.standard_normal(n) if loss == "squared" else np.sign(rng.standard_normal(n))
    u0 = 0.5 * rng.standard_normal(n)
    c = 3 * rng.standard_normal(p)
    return y, A, u0, c


@pytest.mark.parametrize("loss", ["squared", "squared_hinge", "huberized_hinge", "logistic"])
def test_native_and_cvxpy_weight_steps_agree(loss):
    """Native and conic weight steps reach the same optimum: to 1e-6 in w for
    CLARABEL (tol 1e-12) and SCS (tol 1e-10); ECOS, the least accurate
    interior-point backend here, to 1e-5 at tol 1e-10.  A backend that reports
    an inaccurate solve (CLARABEL on some exponential-cone problems) is not
    compared, but at least two backends must answer every problem."""
    from numkfs.solvers import SolverError

    rng = np.random.default_rng(11)
    for _ in range(3):
        y, A, u0, c = _random_wstep(rng, loss)
        w, _, kkt = solve_knife_wstep(loss, y, A, u0, c, tol=1e-12)
        prob = KnifeWeightStep(loss, y, A, u0, c)
        assert prob.kkt_residual(w) < 1e-7
        assert 0 < np.sum((w > 0) & (w < 1))  # not a trivial corner solution
        answered = 0
        for solver, tol, agree in [("CLARABEL", 1e-12, 1e-6), ("SCS", 1e-10, 1e-6), ("ECOS", 1e-10, 1e-5)]:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = solve(prob, solver=solver, tol=tol, fallback=False)
            except SolverError:
                continue
            answered += 1
            assert np.max(np.abs(res["w"] - w)) < agree, solver
            assert prob.evaluate({"w": w})[0] <= res.objective + 1e-9 * max(1, abs(res.objective))
        assert answered >= 2


def test_native_weight_step_is_registered():
    rng = np.random.default_rng(2)
    y, A, u0, c = _random_wstep(rng, "logistic")
    prob = KnifeWeightStep("logistic", y, A, u0, c)
    res = solve(prob, solver="native", fallback=False)
    assert res.solver == "native" and res.ok
    w, _, _ = solve_knife_wstep("logistic", y, A, u0, c)
    assert np.allclose(res["w"], w, atol=1e-10)


@pytest.mark.parametrize("solver", ["CLARABEL", "SCS"])
def test_knife_with_conic_weight_steps_matches_native(sinusoid, solver):
    X, y, _ = sinusoid
    X, y = X[:40], y[:40]
    kw = dict(lambda2=20.0, w0=np.full(10, 0.6), n_restarts=1, max_iter=8, tol=0.0)
    a = knife(X, y, solver="native", **kw)
    b = knife(X, y, solver=solver, **kw)
    assert np.allclose(a.weights, b.weights, atol=1e-5)
    assert a.objective == pytest.approx(b.objective, rel=1e-7)


# --------------------------------------------------------------------------
# linear kernel and MATH.md eq. 4


def _eq4(X, y, lam1, pen, fixed_v=None):
    """min ||y - Xb||² + lam1 Σ b_j²/v_j + Σ pen_j v_j, 0 ≤ v ≤ 1 (or v fixed)."""
    import cvxpy as cp

    n, p = X.shape
    b = cp.Variable(p)
    if fixed_v is not None:
        obj = cp.sum_squares(y - X @ b) + lam1 * cp.sum(cp.multiply(1.0 / fixed_v, cp.square(b)))
        cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")
        return b.value, fixed_v
    v = cp.Variable(p)
    obj = cp.sum_squares(y - X @ b) + lam1 * sum(cp.quad_over_lin(b[j], v[j]) for j in range(p)) + pen @ v
    cp.Problem(cp.Minimize(obj), [v >= 0, v <= 1]).solve(solver="CLARABEL")
    return b.value, v.value


def test_linear_kernel_lambda2_zero_is_ridge_and_eq4(sinusoid):
    """At λ2 = 0 both problems are ridge regression: w = 1 is optimal (the
    profile objective does not increase in any weight), so KNIFE started at
    w = 1 stays there and its fit is ridge's; eq. 4 gives ridge too."""
    X, y, _ = sinusoid
    res = knife(X, y, kernel="linear", lambda2=0.0, w0=np.ones(X.shape[1]), tol=1e-14, max_iter=50)
    assert np.all(res.weights == 1.0)
    coef = np.linalg.solve(X.T @ X + np.eye(X.shape[1]), X.T @ y)
    ridge = X @ coef
    fitted = weighted_kernel(X, res.weights, "linear") @ res.alpha
    assert np.allclose(fitted, ridge, atol=1e-10 * np.abs(ridge).max())
    assert res.objective == pytest.approx(np.sum((y - ridge) ** 2) + coef @ coef, rel=1e-10)
    b, v = _eq4(X, y, 1.0, np.zeros(X.shape[1]))
    assert np.allclose(X @ b, ridge, atol=1e-5 * np.abs(ridge).max())


def test_linear_kernel_fixed_weights_alpha_step_is_eq4_beta_step(sinusoid):
    X, y, _ = sinusoid
    w = np.linspace(0.2, 1.0, X.shape[1])
    K = weighted_kernel(X, w, "linear")
    alpha = np.linalg.solve(K + np.eye(len(y)), y)
    b, _ = _eq4(X, y, 1.0, None, fixed_v=w ** 2)
    assert np.allclose(K @ alpha, X @ b, atol=1e-6 * np.abs(y).max())
    # β̃ = diag(w²) Xᵀα and the data + ridge parts coincide
    assert np.allclose(w ** 2 * (X.T @ alpha), b, atol=1e-6 * np.abs(b).max())
    knife_part = np.sum((y - K @ alpha) ** 2) + alpha @ K @ alpha
    eq4_part = np.sum((y - X @ b) ** 2) + np.sum(b ** 2 / w ** 2)
    assert knife_part == pytest.approx(eq4_part, rel=1e-7)


def test_linear_kernel_solution_solves_reweighted_eq4(sinusoid):
    """KNIFE (linear kernel, squared loss) at (λ1, λ2) with weights w* is the
    global solution of the jointly convex eq. 4 with penalty Σ λ2/(2 w*_j) v_j
    on the support of w*, with v = w*² (the tangent of the concave λ2 √v)."""
    X, y, _ = sinusoid
    lam2 = 60.0
    res = knife(X, y, kernel="linear", lambda2=lam2, random_state=0, tol=1e-14, max_iter=5000)
    w = res.weights
    act = w > 0
    assert 0 < act.sum() < X.shape[1]
    b, v = _eq4(X[:, act], y, 1.0, lam2 / (2 * w[act]))
    assert np.allclose(v, w[act] ** 2, atol=2e-3)
    fitted = weighted_kernel(X, w, "linear") @ res.alpha
    assert np.allclose(X[:, act] @ b, fitted, atol=2e-3 * np.abs(fitted).max())
    # KNIFE's objective written in eq. 4's variables (β̃, v = w²) with λ2 Σ √v
    f_eq4_vars = np.sum((y - X[:, act] @ b) ** 2) + np.sum(b ** 2 / v) + lam2 * np.sum(np.sqrt(v))
    assert f_eq4_vars == pytest.approx(res.objective, rel=1e-5)
    # ...whereas plain eq. 4 at the same (λ1, λ2) is a different problem
    b4, v4 = _eq4(X, y, 1.0, np.full(X.shape[1], lam2))
    assert np.max(np.abs(v4 - w ** 2)) > 1e-2


# --------------------------------------------------------------------------
# sticky zeros, restarts, the path


def test_sticky_zeros(sinusoid):
    X, y, _ = sinusoid
    w0 = np.full(10, 0.7)
    w0[[2, 7]] = 0.0
    res = knife(X, y, lambda2=0.0, w0=w0, random_state=0)
    assert res.weights[2] == 0.0 and res.weights[7] == 0.0
    assert np.all(res.weights[[0, 1]] > 0)
    path = knife_path(X, y, n_grid=25, random_state=0)
    W = path.weights
    for j in range(W.shape[1]):
        z = np.flatnonzero(W[:, j] == 0.0)
        if z.size:
            assert np.all(W[z[0]:, j] == 0.0)  # once zero, zero for every larger λ2


def test_path_top_is_found_and_grid(sinusoid):
    X, y, s = sinusoid
    path = knife_path(X, y, n_grid=30, random_state=0, true_support=s)
    assert path.grid[0] == 0.0 and np.all(np.diff(path.grid) > 0)
    assert len(path) == 30  # exactly n_grid points
    top = path.extra["lambda2_top"]
    assert path.grid[-1] == pytest.approx(top, rel=1e-12)
    assert knife_lambda2_max(X, y, random_state=0) == pytest.approx(top, rel=1e-12)
    with pytest.raises(TypeError, match="unexpected keyword"):
        knife_lambda2_max(X, y, lambda2=1.0)
    # the grid itself: [0, geomspace(lambda_min_ratio * top, top, 29)] (the old "<= top or len > 30"
    # held whatever the grid's top was)
    import inspect

    ratio = lambda_min_ratio_for(inspect.signature(knife_path).parameters["lambda_min_ratio"].default, len(y))
    assert ratio == 1e-3  # "auto" on fewer than 10^4 rows
    np.testing.assert_allclose(path.grid, np.concatenate([[0.0], np.geomspace(ratio * top, top, 29)]), rtol=1e-12)
    # an objective along the path, models that predict
    assert path.objective.shape == (len(path),)
    D = path_decision_function(path, X, X)
    assert D.shape == (len(y), len(path))
    if not np.any(path.weights[-1] > 0):
        assert np.allclose(D[:, -1], 0.0)  # rbf with all weights zero and λ1 > 0: α ⟂ 1 ... prediction 0
    # a user grid is walked completely, also past the all-zero point
    grid = np.array([0.0, 1.0, 10.0, 10 * top])
    p2 = knife_path(X, y, grid=grid, random_state=0)
    assert np.array_equal(p2.grid, grid)
    ax = path.plot()
    assert len(ax.lines) == X.shape[1]


def test_path_with_verbose_progress_bar(sinusoid, capsys):
    import inspect

    X, y, _ = sinusoid
    path = knife_path(X[:30], y[:30], n_grid=5, random_state=0, verbose=True, max_refine=0)
    # n_grid=5: λ2 = 0, then 4 log-spaced values up to the top; stop_at_zero is off, so all 5 are walked
    assert len(path) == 5
    top = path.extra["lambda2_top"]
    ratio = lambda_min_ratio_for(inspect.signature(knife_path).parameters["lambda_min_ratio"].default, 30)
    np.testing.assert_allclose(path.grid, np.concatenate([[0.0], np.geomspace(ratio * top, top, 4)]), rtol=1e-12)
    # the bar counts those 5 points, and showing it does not change the path
    assert "5/5" in capsys.readouterr().err
    quiet = knife_path(X[:30], y[:30], n_grid=5, random_state=0, max_refine=0)
    np.testing.assert_array_equal(path.weights, quiet.weights)


# --------------------------------------------------------------------------
# estimators


def test_regressor_and_cv_select_true_features():
    X, y, s = make_sinusoid(100, random_state=3)
    est = KNIFERegressorCV(cv=3, n_grid=20, random_state=0).fit(X, y)
    assert est.cv_scores_.shape == (len(est.path_), 3)
    assert est.path_.cv_scores is est.cv_scores_
    sup = est.get_support()
    assert sup[:5].sum() >= 4 and sup[5:].sum() <= 2
    assert est.transform(X).shape[1] == sup.sum()
    Xt, yt, _ = make_sinusoid(300, random_state=4)
    mse = np.mean((est.predict(Xt) - yt) ** 2)
    assert mse < 6.0  # kernel ridge without selection is about 6 (paper Table 1)


def test_classifier_binary_and_multiclass():
    X, y, s = make_orange(100, random_state=1)
    labels = np.where(y > 0, "skin", "core")
    est = KNIFEClassifier(kernel="poly", lambda2=2.0, random_state=0).fit(X, labels)
    assert set(est.predict(X)) <= {"skin", "core"}
    assert est.decision_function(X).shape == (100,)
    assert not hasattr(est, "predict_proba")  # only for the logistic loss
    from sklearn.datasets import load_iris

    Xi, yi = load_iris(return_X_y=True)
    est = KNIFEClassifier(loss="logistic", lambda2=0.5, random_state=0).fit(Xi, yi)
    assert est.class_feature_weights_.shape == (3, 4)
    P = est.predict_proba(Xi)
    assert np.allclose(P.sum(1), 1.0) and est.score(Xi, yi) > 0.85


def test_classifier_cv_scores_per_fold(orange):
    X, y, _ = orange
    est = KNIFEClassifierCV(kernel="poly", cv=3, n_grid=8, max_iter=30, random_state=0,
                            scoring="accuracy").fit(X, y)
    assert est.cv_scores_.shape == (len(est.path_), 3)
    assert np.all((est.cv_scores_ >= 0) & (est.cv_scores_ <= 1))
    assert est.lambda2_ == est.path_.grid[est.best_index_]
    assert est.path_.score_name == "accuracy"


# --------------------------------------------------------------------------
# input errors


def test_bad_inputs_give_validation_errors(sinusoid):
    X, y, _ = sinusoid
    with pytest.raises(ValueError, match="The 'lambda1' parameter of knife must be a float in the range"):
        knife(X, y, lambda1=0.0)
    with pytest.raises(ValueError, match="The 'kernel' parameter of knife must be"):
        knife(X, y, kernel="sigmoid")
    with pytest.raises(ValueError, match="The 'solver' parameter of knife"):
        knife(X, y, solver="MOSEK2")
    with pytest.raises(ValueError, match="The 'lambda2' parameter of KNIFERegressor"):
        KNIFERegressor(lambda2=-1).fit(X, y)
    with pytest.raises(ValueError, match="The 'loss' parameter of KNIFERegressor"):
        KNIFERegressor(loss="logistic").fit(X, y)
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN in column 2"):
        knife(Xn, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        knife(X, y[:-1])
    with pytest.raises(ValueError, match="needs exactly two classes"):
        knife(X, np.arange(len(y)) % 3, loss="logistic")
    with pytest.raises(ValueError, match="The 'grid' parameter of knife_path must be None or a non-empty, "
                                         "non-decreasing array"):
        knife_path(X, y, grid=[1.0, 0.5])
    with pytest.raises(ValueError, match="w0 must lie in"):
        knife(X, y, w0=np.full(10, 2.0))
    Xc = X.copy()
    Xc[:, 4] = 3.0
    with pytest.warns(UserWarning, match=r"\[4\] are constant"):
        res = knife(Xc, y, lambda2=1.0, random_state=0)
    assert res.weights[4] == 0.0
    before = X.copy()
    knife(X, y, lambda2=1.0, random_state=0)
    assert np.array_equal(X, before)  # inputs are not modified


# --------------------------------------------------------------------------
# generators


def test_generators():
    X, y, s = make_sinusoid(2000, random_state=0)
    resid = y - np.sin(X[:, :5]) @ np.array([6, -4, 3, 2, -2])
    assert abs(resid.std() - 1.0) < 0.05 and s.tolist() == [True] * 5 + [False] * 5
    X, y, s = make_orange(501, n_noise=3, random_state=0)
    assert X.shape == (501, 7) and (y == 1).sum() == 251
    r2 = (X[:, :4] ** 2).sum(1)
    assert np.all((r2[y == 1] >= 9) & (r2[y == 1] <= 16))
    assert abs(np.mean(r2[y == -1]) - 4.0) < 0.5


def test_the_rbf_kernel_ignores_coef0(sinusoid):
    """coef0 is the polynomial kernel's offset: with the rbf kernel any finite coef0 gives the same path,
    to the last bit, down to the point where every weight is zero (where the constant kernel of zero
    weights raised an OverflowError computing coef0 ** degree)."""
    X, y, _ = sinusoid
    X, y = X[:40], y[:40]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        huge = knife_path(X, y, coef0=1e300, n_grid=6, max_refine=0, random_state=0)
    plain = knife_path(X, y, n_grid=6, max_refine=0, random_state=0)
    assert not huge.weights[-1].any()  # the path reaches the kernel of zero weights
    np.testing.assert_array_equal(huge.weights, plain.weights)
    np.testing.assert_array_equal(huge.grid, plain.grid)


@pytest.mark.parametrize("params", [{"coef0": 1e200}, {"coef0": -1e200}, {"degree": 1000}])
def test_a_polynomial_kernel_that_overflows_is_refused_by_name(sinusoid, params):
    """(x.x' + coef0)^degree beyond 1e150 overflows in the fit's products: refused naming coef0 and
    degree, by the functions and the estimators, without a RuntimeWarning (the fit "succeeded" under 33
    of them)."""
    X, y, _ = sinusoid
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"knife: the 'poly' kernel .* with coef0=.* and degree=.*; beyond "
                                             r"1e\+150 .* Give a smaller coef0 or degree"):
            knife(X, y, kernel="poly", **params)
        with pytest.raises(ValueError, match="Give a smaller coef0 or degree"):
            KNIFERegressor(kernel="poly", **params).fit(X, y)
        with pytest.raises(ValueError, match="Give a smaller coef0 or degree"):
            KNIFERegressorCV(kernel="poly", n_grid=4, **params).fit(X, y)


kfit = importlib.import_module("numkfs.methods.knife._fit")
kpath = importlib.import_module("numkfs.methods.knife._path")


@pytest.fixture(scope="module")
def three_classes():
    X, y = make_classification(n_samples=90, n_features=12, n_informative=3, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    return _std(X), y


def _targets(y):
    return [np.where(y == k, 1.0, -1.0) for k in np.unique(y)]


def _same(a, b):
    """The same fits from the same states, up to rounding (the shared λ2 = 0 fit of the default grid
    is reached by a different sequence of kernel evaluations)."""
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(a.extra["gamma"], b.extra["gamma"])  # 1 / a count: exact
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-10)


def test_ovr_paths_are_the_paths_without_the_restart(three_classes, monkeypatch):
    X, y = three_classes
    kw = dict(loss="squared_hinge", gamma="auto", lambda1=3.0, random_state=0)
    grid = np.concatenate([[0.0], np.geomspace(0.1, 30.0, 5)])
    ovr = knife_ovr_paths(X, _targets(y), grid=grid, **kw)
    with_restart = knife_ovr_paths(X, _targets(y), grid=grid, gamma_restart=True, **kw)
    default_grid = knife_ovr_paths(X, _targets(y), n_grid=4, max_refine=0, **kw)
    for k, t in enumerate(_targets(y)):
        # the λ2 = 0 scale moved off 1/p: the restart would run
        assert ovr[k].extra["gamma"][0] > 1.0 / X.shape[1]
        _same(with_restart[k], knife_path(X, t, grid=grid, **kw))
        _same(KNIFEGridWalk(X, t, grid, gamma_restart=False, **kw).walk(grid.size), ovr[k])
    monkeypatch.setattr(kfit, "AUTO_GAMMA_RESTART", False)
    for k, t in enumerate(_targets(y)):
        _same(ovr[k], knife_path(X, t, grid=grid, **kw))
        _same(default_grid[k], knife_path(X, t, grid=default_grid[k].grid, **kw))
    # the restart moved at least one problem's fit: the flag is not a no-op here
    assert any(not np.array_equal(a.weights, b.weights) for a, b in zip(ovr, with_restart))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_cv_skips_the_restart_for_one_vs_rest_only(three_classes, monkeypatch, n_classes):
    X, y = three_classes
    if n_classes == 2:
        X, y = X[y < 2], y[y < 2]
    seen = []
    real = kpath._best_start

    def spy(*args, restart=True, **kw):
        seen.append(restart)
        return real(*args, restart=restart, **kw)

    monkeypatch.setattr(kpath, "_best_start", spy)
    KNIFEClassifierCV(n_grid=4, cv=3, random_state=0).fit(X, y)
    problems = 1 if n_classes == 2 else n_classes
    # one λ2 = 0 fit per problem on the full data and on each of the 3 folds (per pass: the low end may
    # be walked once more)
    assert len(seen) in (4 * problems, 8 * problems)
    assert all(seen) if n_classes == 2 else not any(seen)


def test_skipping_the_restart_keeps_the_multiclass_selection(three_classes, monkeypatch):
    X, y = three_classes
    kw = dict(n_grid=10, cv=3, random_state=0)
    skipped = KNIFEClassifierCV(**kw).fit(X, y)
    real = kpath._best_start
    monkeypatch.setattr(kpath, "_best_start", lambda *a, restart=True, **k: real(*a, **k))  # the restart always
    restarted = KNIFEClassifierCV(**kw).fit(X, y)
    np.testing.assert_array_equal(skipped.feature_weights_ > 0, restarted.feature_weights_ > 0)
    assert skipped.n_features_selected_ == restarted.n_features_selected_
    np.testing.assert_array_equal(skipped.predict(X), restarted.predict(X))


# --------------------------------------------------------------------------
# numerical trouble


def _reg_data(seed=0, n=20, p=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


@pytest.mark.parametrize("gamma", [1e8, 1e-8])
def test_knife_extreme_gamma_finite(gamma):
    from numkfs.estimators._knife import KNIFERegressor

    X, y = _reg_data(3)
    pred = KNIFERegressor(gamma=gamma, lambda2=0.1, max_iter=20, random_state=0).fit(X, y).predict(X)
    assert np.all(np.isfinite(pred))


km = sys.modules["numkfs.methods.knife"]  # the module (numkfs.methods.knife is also the function's name)


def _sin_square(seed, n=150, p=10):
    """y = [sin(2 x0) + x1^2 - 1 + noise > 0]: x0 matters only through a narrow kernel."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 1 + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


# --------------------------------------------------------------------------
# gamma="auto"


@pytest.mark.filterwarnings("ignore")
def test_auto_gamma_follows_the_selected_features():
    X, y = _sin_square(0)
    Xs = (X - X.mean(0)) / X.std(0)
    path = knife_path(Xs, np.where(y > 0, 1.0, -1.0), loss="squared_hinge", gamma="auto", n_grid=20,
                         random_state=0)
    g, ns = path.extra["gamma"], path.n_selected()
    # the first point is the single fit at lambda2 = 0 under gamma="auto": its scale settled on its own support
    assert g[0] == 1.0 / ns[0]
    first = km.knife(Xs, np.where(y > 0, 1.0, -1.0), loss="squared_hinge", lambda2=0.0, gamma="auto",
                     random_state=0)
    assert first.params["gamma"] == g[0]
    np.testing.assert_array_equal(first.weights, path.weights[0])
    # each point: 1 / (features selected at the previous point), growing by at most AUTO_GAMMA_GROWTH
    expected = np.minimum(1.0 / np.maximum(ns[:-1], 1), km.AUTO_GAMMA_GROWTH * g[:-1])
    expected = np.where(ns[:-1] > 0, expected, g[:-1])
    np.testing.assert_allclose(g[1:], expected, rtol=1e-15)
    assert ns[-1] == 0  # continued to the empty model
    # the decision function of each point uses that point's scale
    i = int(np.flatnonzero(ns == 2)[0])
    res = km.knife(Xs, np.where(y > 0, 1.0, -1.0), loss="squared_hinge", lambda2=path.grid[i], gamma=g[i],
                   w0=path.weights[i], max_iter=1)
    params = {**path.extra["params"], "gamma": g[i]}
    d_path = km.path_decision_function(path, Xs, Xs[:5], index=i)
    d_ref = km.knife_decision_function(Xs, Xs[:5], path.weights[i], path.extra["alpha"][i], path.extra["intercept"][i], params)
    np.testing.assert_array_equal(d_path, d_ref)
    assert res.params["gamma"] == g[i]


def _friedman105(seed):
    """Friedman #1 with 100 noise features at 200 rows, X standardised and y centred."""
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=200, n_features=105, random_state=seed)
    return (X - X.mean(0)) / X.std(0), y - y.mean()


@pytest.mark.filterwarnings("ignore")
def test_auto_gamma_first_point_keeps_the_u_shaped_feature(monkeypatch):
    # seed 1: the fit at 1/105 switches the U-shaped x2 off (it pays only in a narrow kernel)
    # and the warm-started rounds never bring a zero weight back (35 features, x2 not among them); the
    # fit from w = 1 at the rounds' scale keeps it, and the first point goes on from the union
    X, y = _friedman105(1)
    res = km.knife(X, y, lambda2=0.0, gamma="auto", random_state=0)
    assert np.all(res.weights[:5] > 0)
    assert res.params["gamma"] == 1.0 / np.count_nonzero(res.weights > 0)  # the scale settled on its support
    monkeypatch.setattr(sys.modules["numkfs.methods.knife._fit"], "AUTO_GAMMA_RESTART", False)
    rounds = km.knife(X, y, lambda2=0.0, gamma="auto", random_state=0)
    assert rounds.weights[2] == 0 and np.all(rounds.weights[[0, 1, 3, 4]] > 0)  # the rounds alone lose x2


@pytest.mark.filterwarnings("ignore")
def test_auto_gamma_rounds_fit_loosely_and_end_at_tol_on_their_own_scale(monkeypatch):
    # the rounds that move the scale fit to AUTO_GAMMA_ROUND_TOL; the last fit is at tol, at the scale
    # its own support gives, and it is the point the rounds reach with every round fitted at tol
    kprob = sys.modules["numkfs.methods.knife._problem"]
    X, y = _friedman105(1)
    fits = []
    real = kprob._Knife.fit

    def fit(self, w, lambda2, **kw):
        st = real(self, w, lambda2, **kw)
        if kw.get("polish", True):  # not the alternation the finish may run on
            fits.append((self.gamma, kw["tol"]))
        return st

    monkeypatch.setattr(kprob._Knife, "fit", fit)
    res = km.knife(X, y, lambda2=0.0, gamma="auto", tol=1e-6, random_state=0)
    gamma = res.params["gamma"]
    assert gamma == 1.0 / np.count_nonzero(res.weights > 0)
    assert fits[-1] == (gamma, 1e-6)
    loose = [g for g, tol in fits if tol == km.AUTO_GAMMA_ROUND_TOL]
    assert len(loose) >= 3 and all(g > fits[0][0] for g in loose)  # the rounds from the first fit's 1/p on
    monkeypatch.setattr(sys.modules["numkfs.methods.knife._fit"], "AUTO_GAMMA_ROUND_TOL", 1e-6)
    tight = km.knife(X, y, lambda2=0.0, gamma="auto", tol=1e-6, random_state=0)
    assert tight.params["gamma"] == gamma
    np.testing.assert_array_equal(tight.weights > 0, res.weights > 0)
    # each fit stops once an iteration lowers f by less than tol (relative): both ends within that of each other
    assert abs(res.objective - tight.objective) <= 1e-6 * abs(tight.objective)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.slow
def test_select_finds_every_friedman_feature_among_100_noise_features():
    # select(X, y) (KNIFE) kept 0, 1, 3, 4 on seed 1, x2 lost at the path's first point
    from sklearn.datasets import make_friedman1

    from numkfs import select

    X, y = make_friedman1(n_samples=200, n_features=105, random_state=1)
    selected = set(np.flatnonzero(select(X, y).selected))
    assert set(range(5)) <= selected and len(selected - set(range(5))) <= 1
