"""KNIFE's fast paths give the answers of the plain computation,
and KNIFE's huberized hinge, convergence and path length are right.

References are computed in the test by an independent slow path: the module
switch ``numkfs.methods.knife._problem._FAST = False`` runs every fit with dense n x n
Newton systems, p x p weight-step matrices and every path point fitted (the
code before the shortcuts); the factored coordinate descent is checked
against the dense one and against CVXPY.
"""
import importlib
import sys
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from numkfs.datasets import make_sinusoid
from numkfs.datasets._knife import make_orange
from numkfs.kernels.weighted import weighted_kernel
from numkfs.losses import get_loss
from numkfs.methods.knife import knife, knife_ovr_paths, knife_path
from numkfs.solvers.native.boxqp import solve_box_qp
from numkfs.solvers.native.knife_wstep import (knife_wstep_kkt_residual, solve_box_qp_factored,
                                               solve_knife_wstep)

km = sys.modules["numkfs.methods.knife"]
#: the problem module: the module switches (_FAST, _EXTRAPOLATE, _POLISH_AFTER) and the steps
kprob = importlib.import_module("numkfs.methods.knife._problem")
kpath = importlib.import_module("numkfs.methods.knife._path")
kfit = importlib.import_module("numkfs.methods.knife._fit")
#: the input handling (validates, builds the exact or Nyström problem)
kinput = importlib.import_module("numkfs.methods.knife._input")


def _std(X):
    return (X - X.mean(0)) / X.std(0)


def _both(monkeypatch, fn):
    """fn() with the shortcuts, then without them."""
    fast = fn()
    monkeypatch.setattr(kprob, "_FAST", False)
    slow = fn()
    monkeypatch.setattr(kprob, "_FAST", True)
    return fast, slow


def _same_path(a, b, rtol=1e-6, weights_atol=1e-4):
    assert np.array_equal(a.grid, b.grid) or np.allclose(a.grid, b.grid, rtol=1e-9)
    assert a.n_points == b.n_points
    np.testing.assert_allclose(a.objective, b.objective, rtol=rtol, atol=1e-8)
    # the same supports at every point
    assert np.array_equal(a.weights > 0, b.weights > 0)
    np.testing.assert_allclose(a.weights, b.weights, atol=weights_atol)


def _wide_classification(n=24, p=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 > 0, 1.0, -1.0)
    return _std(X), y


@pytest.mark.parametrize("loss", ["squared_hinge", "huberized_hinge", "logistic"])
def test_fast_path_equals_plain_path_classification(monkeypatch, loss):
    X, y, _ = make_orange(60, n_noise=4, random_state=0)
    X = _std(X)
    fast, slow = _both(monkeypatch, lambda: knife_path(X, y, loss=loss, n_grid=12, random_state=0,
                                                       max_iter=200, max_refine=0))
    assert fast.n_points == 12
    _same_path(fast, slow)


def test_fast_path_equals_plain_path_sinusoid(monkeypatch):
    X, y, _ = make_sinusoid(50, random_state=3)
    X = _std(X)
    fast, slow = _both(monkeypatch, lambda: knife_path(X, y - y.mean(), n_grid=15, random_state=0,
                                                       max_refine=0))
    _same_path(fast, slow)


@pytest.mark.parametrize("loss", ["squared", "squared_hinge"])
def test_fast_path_equals_plain_path_wide(monkeypatch, loss):
    # n < p: the weight step runs on the factor (no p x p matrix).  From a random start (the
    # shortcuts are compared on one trajectory): from w = 1, 60 features on 24 rows, the two
    # runs can settle in different, equally stationary corners of this degenerate problem
    monkeypatch.setattr(kfit, "START_WEIGHT", None)
    X, y = _wide_classification()
    if loss == "squared":
        y = X[:, 0] - X[:, 1] ** 2 + 0.1 * np.random.default_rng(1).standard_normal(len(y))
        y = y - y.mean()
    fast, slow = _both(monkeypatch, lambda: knife_path(X, y, loss=loss, n_grid=8, random_state=0, tol=1e-9,
                                                       max_refine=0))
    # 24 rows, 60 weights: F is flat along most directions of w, where a stop at a relative
    # decrease of tol fixes the weights only to about sqrt(tol); the fits stop at tol = 1e-9, well
    # below the objectives' comparison at 1e-6 (at the default 1e-6 the two trajectories' stops
    # were 5e-5 apart in F on y of unit root mean square, the units KNIFE now solves in), and
    # the weights are compared to sqrt(1e-6) as before
    _same_path(fast, slow, weights_atol=10 * np.sqrt(1e-6))


def test_factored_box_qp_equals_dense():
    rng = np.random.default_rng(0)
    for m, p, mu in [(5, 40, 0.0), (12, 30, 1e-3), (30, 10, 0.0)]:
        F = rng.standard_normal((m, p))
        c = rng.standard_normal(p) * 3
        lo, hi = -rng.uniform(0, 1, p), rng.uniform(0, 1, p)
        Q = F.T @ F + mu * np.eye(p)
        w1, s1, r1 = solve_box_qp(Q, c, lo, hi, tol=1e-12)
        w2, s2, r2 = solve_box_qp_factored(F, mu, c, lo, hi, tol=1e-12)
        # the same point (the dense solver switches to a primal active-set method when its
        # coordinate descent is slow, so the iteration counts differ)
        np.testing.assert_allclose(w1, w2, atol=1e-9)
        g = Q @ w2 + c
        g = np.where((w2 <= lo) & (g > 0), 0.0, np.where((w2 >= hi) & (g < 0), 0.0, g))
        assert np.max(np.abs(g)) <= 1e-11 * max(1.0, np.max(np.abs(c)))


@pytest.mark.parametrize("seed", range(4))
def test_factored_box_qp_converges_on_badly_scaled_wide_problem(seed):
    # the Newton steps of the weight step on unstandardised wide data (colon, 62 x 2000):
    # columns of F of norms 1e-2 to 1e2, more coordinates free at the solution than F has rows, and
    # the ridge mu = 1e-10 max diag of the Newton model.  Coordinate descent alone had not reached
    # the tolerance after 100,000 sweeps; with the steps over the free set it needs a few hundred
    rng = np.random.default_rng(seed)
    m, p = 20, 200
    F = rng.standard_normal((m, p)) * 10.0 ** rng.uniform(-2, 2, p)
    w = rng.uniform(0, 1, p)  # the current weights: the step d is boxed to [-w, 1 - w]
    c = 0.3 * (F.T @ rng.standard_normal(m)) + 0.1 * rng.standard_normal(p)
    mu = 1e-10 * np.max(np.sum(F * F, axis=0))
    tol = 1e-10
    d, sweeps, res = solve_box_qp_factored(F, mu, c, -w, 1.0 - w, tol=tol, max_sweeps=2000)
    assert sweeps < 2000
    assert np.all(d >= -w) and np.all(d <= 1.0 - w)
    g = F.T @ (F @ d) + mu * d + c  # the projected gradient, recomputed
    g = np.where((d <= -w) & (g > 0), 0.0, np.where((d >= 1.0 - w) & (g < 0), 0.0, g))
    assert np.max(np.abs(g)) <= tol * max(1.0, np.max(np.abs(c)))
    assert res == pytest.approx(np.max(np.abs(g)), abs=1e-12 * np.max(np.abs(c)))


@pytest.mark.parametrize("loss", ["squared", "squared_hinge", "logistic"])
def test_factored_wstep_matches_dense_and_cvxpy(loss):
    rng = np.random.default_rng(2)
    n, p = 15, 50
    A = rng.standard_normal((n, p))
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0) if loss != "squared" else rng.standard_normal(n)
    u0 = 0.3 * rng.standard_normal(n)
    c = rng.uniform(-0.5, 2.0, p)
    L = get_loss(loss)
    wf, _, kf = solve_knife_wstep(L, y, A, u0, c, tol=1e-11, factored=True)
    wd, _, kd = solve_knife_wstep(L, y, A, u0, c, tol=1e-11, factored=False)
    assert knife_wstep_kkt_residual(L, y, A, u0, c, wf) <= 1e-8
    np.testing.assert_allclose(wf, wd, atol=1e-6)
    pytest.importorskip("cvxpy")
    from numkfs.solvers import solve
    from numkfs.solvers.native.knife_wstep import KnifeWeightStep

    res = solve(KnifeWeightStep(L, y, A, u0, c), solver=["CLARABEL", "ECOS", "SCS"], tol=1e-9)
    f = lambda w: L.value(y, u0 + A @ w) + c @ w  # noqa: E731
    assert f(wf) <= f(np.asarray(res.solution["w"])) + 1e-6 * max(1.0, abs(f(wf)))


def test_huberized_hinge_is_not_the_zero_model():
    # at α = 0 every margin is in the linear part of the huberized hinge (δ <= 1);
    # the α-step used to stop there (α = 0, intercept 0) and call it converged
    rng = np.random.default_rng(0)
    X = rng.standard_normal((41, 5))
    y = np.r_[np.ones(21), -np.ones(20)]
    X[:21, 0] += 1.5
    for delta in (1.0, 0.5):
        res = knife(X, y, loss="huberized_hinge", delta=delta, lambda2=1.0, random_state=0)
        assert np.max(np.abs(res.alpha)) > 1e-3
        # the zero model has objective n_plus... (every sample on the linear part): 41 (1 - δ/2) + λ2 Σw
        assert res.objective < 41 * (1 - delta / 2)
        # the α-step optimality (gradient of the α-problem, K-preconditioned) at the returned point
        K = weighted_kernel(X, res.weights, "rbf", gamma=1 / 5)
        L = get_loss("huberized_hinge", delta=delta)
        g = L.gradient(y, K @ res.alpha + res.intercept)
        assert abs(g.sum()) <= 1e-6 * len(y)
        np.testing.assert_allclose(K @ (g + 2.0 * res.alpha), 0.0, atol=1e-6)


def test_nonconvergence_warns_and_is_recorded():
    X, y, _ = make_sinusoid(40, random_state=0)
    X = _std(X)
    with pytest.warns(ConvergenceWarning, match=r"KNIFE did not converge at lambda2=3"):
        res = knife(X, y - y.mean(), lambda2=3.0, max_iter=1, random_state=0)
    assert res.converged is False
    with pytest.warns(ConvergenceWarning, match=r"path points \(lambda2="):
        path = knife_path(X, y - y.mean(), n_grid=5, max_iter=1, random_state=0, max_refine=0)
    conv = path.extra["converged"]
    assert conv.dtype == bool and conv.shape == (5,) and not conv.all()
    assert np.all(path.extra["n_iter"][~conv] == 1)
    if hasattr(path, "converged") and path.converged is not None:
        assert np.array_equal(path.converged, conv)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        knife_path(X, y - y.mean(), n_grid=5, random_state=0, max_iter=2000)  # converges: no warning


@pytest.mark.parametrize("n_grid", [2, 7, 40])
def test_path_has_n_grid_points(n_grid):
    X, y, _ = make_sinusoid(40, random_state=0)
    path = knife_path(_std(X), y - y.mean(), n_grid=n_grid, random_state=0, max_refine=0)
    assert path.n_points == n_grid == len(path.grid)
    assert path.grid[-1] == pytest.approx(path.extra["lambda2_top"])


def test_zero_points_are_the_fitted_model(monkeypatch):
    # once every weight is zero the remaining points are copied, not fitted: same values
    X, y, _ = make_sinusoid(40, random_state=0)
    X, y = _std(X), y - y.mean()
    grid = np.r_[0.0, np.geomspace(1.0, 1e4, 9)]
    fast, slow = _both(monkeypatch, lambda: knife_path(X, y, grid=grid, random_state=0))
    assert not np.any(fast.weights[-1] > 0)
    _same_path(fast, slow, rtol=1e-10)
    np.testing.assert_allclose(fast.extra["alpha"], slow.extra["alpha"], atol=1e-8)


def test_ovr_paths_equal_separate_paths():
    X, _, _ = make_orange(50, n_noise=3, random_state=1)
    X = _std(X)
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, len(X))
    labels[np.abs(X[:, 0]) > 1] = 0
    targets = [np.where(labels == k, 1.0, -1.0) for k in range(3)]
    paths = knife_ovr_paths(X, targets, loss="squared_hinge", n_grid=6, random_state=0, max_refine=0)
    tops = [km.knife_lambda2_max(X, t, loss="squared_hinge", random_state=0) for t in targets]
    grid = kpath._default_grid(max(tops), 6, 1e-3, len(X))
    for t, p in zip(targets, paths):
        ref = knife_path(X, t, loss="squared_hinge", grid=grid, random_state=0)
        np.testing.assert_allclose(p.grid, grid, rtol=1e-12)
        _same_path(p, ref, rtol=1e-12)



# --------------------------------------------------------------------------
# extrapolation and the L-BFGS-B finish: the plain alternation's stationary points, reached sooner


def _plain(monkeypatch, fn):
    """fn() with the paper's plain alternation (no extrapolation, no L-BFGS-B finish)."""
    with monkeypatch.context() as m:
        m.setattr(kprob, "_EXTRAPOLATE", False)
        m.setattr(kprob, "_POLISH_AFTER", None)
        return fn()


def _cases():
    X, y, _ = make_sinusoid(60, random_state=0)
    yield "sinusoid", _std(X), y - y.mean(), "squared"
    for loss in ("squared_hinge", "huberized_hinge"):
        X, y, _ = make_orange(60, n_noise=4, random_state=0)
        yield "orange-" + loss, _std(X), y, loss
    X, y = _wide_classification()
    yield "wide", X, y, "squared_hinge"


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: c[0])
def test_extrapolated_path_reaches_the_plain_stationary_points(monkeypatch, case):
    # reference: the paper's plain alternation run to a tight tolerance (its stationary points);
    # the default path (extrapolation, L-BFGS-B finish, default tolerance) ends at the same
    # supports and objectives, in fewer outer iterations than the plain alternation with the
    # default tolerance
    name, X, y, loss = case
    if name == "wide":  # 60 features on 24 rows: compared from a random start (see above)
        monkeypatch.setattr(kfit, "START_WEIGHT", None)
    fast = knife_path(X, y, loss=loss, n_grid=15, random_state=0, max_refine=0)
    tight = _plain(monkeypatch, lambda: knife_path(X, y, loss=loss, grid=fast.grid, random_state=0,
                                                   tol=1e-12, max_iter=20000))
    plain = _plain(monkeypatch, lambda: knife_path(X, y, loss=loss, grid=fast.grid, random_state=0))
    assert tight.converged.all() and fast.converged.all()
    # never above the reference; equal where both end at the same support.  KNIFE is not convex:
    # where the supports differ, the fast path must have found a strictly lower objective
    rel = (fast.objective - tight.objective) / np.maximum(1.0, np.abs(tight.objective))
    assert rel.max() <= 1e-5
    same = np.all((fast.weights > 1e-6) == (tight.weights > 1e-6), axis=1)
    assert same.mean() >= 0.9
    assert np.all(rel[~same] < -1e-3)
    np.testing.assert_allclose(fast.objective[same], tight.objective[same], rtol=1e-5)
    np.testing.assert_allclose(fast.weights[same], tight.weights[same], atol=2e-2)
    assert fast.extra["n_iter"].sum() < 0.75 * plain.extra["n_iter"].sum()


def _model(X, y, loss):
    params = dict(kernel="rbf", loss=loss, lambda1=1.0, gamma=None, degree=2, coef0=1.0, delta=1.0,
                  n_restarts=1, max_iter=100, tol=1e-6, solver="auto")
    return kinput._prepare(X, y, params, "test")[4]


def test_extrapolated_fit_is_monotone_and_ends_with_an_alpha_step():
    # a creeping fit (breast-cancer-like: many correlated features) with few iterations: the
    # history never increases, and the returned α is the α-step's answer at the returned weights
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((80, 4))
    X = _std(np.hstack([Z, Z @ rng.standard_normal((4, 8)) + 0.3 * rng.standard_normal((80, 8))]))
    y = np.where(Z[:, 0] + Z[:, 1] ** 2 - 1 > 0, 1.0, -1.0)
    model = _model(X, y, "squared_hinge")
    for max_iter in (3, 7, 200):
        st = model.fit(np.full(X.shape[1], 0.5), 2.0, max_iter=max_iter, tol=1e-9)
        h = np.asarray(st.history)
        assert np.all(np.diff(h) <= 1e-12 * np.abs(h[:-1]))
        K = model.kernel_matrix(st.w)
        np.testing.assert_allclose(st.objective, model.objective(K, st.alpha, st.a0, st.w, 2.0), rtol=1e-12)
        alpha, a0 = model.alpha_step(K, st.alpha, st.a0)
        np.testing.assert_allclose(model.objective(K, alpha, a0, st.w, 2.0), st.objective, rtol=1e-9)
    assert st.n_extrapolated > 0


@pytest.mark.parametrize("loss", ["squared", "squared_hinge", "logistic"])
def test_reduced_objective_gradient_is_the_finite_difference(loss):
    # F(w) = min over α of f: its gradient (envelope theorem) against central differences
    X, y, _ = make_orange(40, n_noise=2, random_state=1)
    X = _std(X)
    y = X[:, 0] + np.sin(X[:, 1]) if loss == "squared" else y
    model = _model(X, y, loss)
    w = np.linspace(0.3, 0.9, X.shape[1])
    w[2] = 0.0
    alpha, a0 = np.zeros(len(y)), 0.0
    F, grad, _, alpha, a0 = model.reduced_objective(w, 0.7, alpha, a0)
    h = 1e-6
    for k in range(X.shape[1]):
        if w[k] == 0.0:
            assert grad[k] == pytest.approx(0.7)  # ∂K/∂w_k = 0 at w_k = 0: only λ2
            continue
        e = np.zeros_like(w)
        e[k] = h
        fp = model.reduced_objective(w + e, 0.7, alpha, a0)[0]
        fm = model.reduced_objective(w - e, 0.7, alpha, a0)[0]
        assert grad[k] == pytest.approx((fp - fm) / (2 * h), rel=1e-5, abs=1e-6 * max(1.0, abs(F)))


def test_finished_fit_satisfies_the_box_kkt_conditions():
    # a fit the alternation alone leaves creeping: the L-BFGS-B finish ends at a KKT point of F
    # over the box on the active features (projected gradient ~ 0)
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((80, 4))
    X = _std(np.hstack([Z, Z @ rng.standard_normal((4, 8)) + 0.3 * rng.standard_normal((80, 8))]))
    y = np.where(Z[:, 0] + Z[:, 1] ** 2 - 1 > 0, 1.0, -1.0)
    model = _model(X, y, "squared_hinge")
    st = model.fit(np.full(X.shape[1], 0.5), 2.0, max_iter=500, tol=1e-13)
    assert st.converged and st.n_iter > kprob._POLISH_AFTER
    _, grad, _, _, _ = model.reduced_objective(st.w, 2.0, st.alpha, st.a0)
    act = st.w > 0
    pg = np.where(st.w[act] >= 1.0, np.maximum(grad[act], 0.0), grad[act])  # at 1 only a positive gradient counts
    assert np.max(np.abs(pg)) <= 1e-4 * max(1.0, np.max(np.abs(grad)))
    assert np.all(grad[~act] >= 0.0)


@pytest.mark.parametrize("n", [60, 600])
def test_alpha_step_on_the_constant_kernel_stops_at_its_closed_form(monkeypatch, n):
    # every weight zero (L-BFGS-B's first trial point often is): K = 1 1ᵀ, every row a margin
    # violator.  The optimum is 1ᵀα = 0, α0 = mean(y), f = Σ (y_i - ȳ)².  The Newton loop must stop
    # there in a few factorisations: the old test of Σ g_i against max |g_i| never passed at
    # n = 600 (a sum of n terms rounds at n · eps · max |g|), and it ran its 100 full n x n
    # Cholesky factorisations (7 s at n = 1797; here at n = 600).
    import scipy.linalg

    rng = np.random.default_rng(0)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    K = np.ones((n, n))
    calls = []
    real = scipy.linalg.cho_factor
    monkeypatch.setattr(scipy.linalg, "cho_factor", lambda *a, **k: calls.append(1) or real(*a, **k))
    loss = get_loss("squared_hinge")
    alpha0 = 0.01 * rng.standard_normal(n)
    start = alpha0.copy()
    alpha, a0, Ka = kprob._newton_alpha(K, y, loss, 1.0, alpha0, -0.2)
    assert len(calls) <= 4
    assert a0 == pytest.approx(y.mean(), abs=1e-9)
    assert abs(alpha.sum()) <= 1e-9
    f = loss.value(y, Ka + a0) + float(alpha @ Ka)
    assert f == pytest.approx(float(((y - y.mean()) ** 2).sum()), rel=1e-12)
    # the returned K α is the product (updated along the steps: rounding relative to Σ_j |K_ij α_j|)
    np.testing.assert_allclose(Ka, K @ alpha, atol=1e-12 * float(np.max(np.abs(K) @ np.abs(alpha))) + 1e-15)
    np.testing.assert_array_equal(alpha0, start)  # the start is not modified


def test_alpha_step_returns_its_k_alpha_and_the_cache_never_goes_stale():
    X, y, _ = make_orange(50, n_noise=2, random_state=2)
    model = _model(_std(X), y, "squared_hinge")
    w = np.linspace(0.2, 1.0, X.shape[1])
    K = model.kernel_matrix(w)
    alpha, a0 = model.alpha_step(K, np.zeros(len(y)), 0.0)
    np.testing.assert_allclose(model.k_alpha(K, alpha), K @ alpha, rtol=1e-12, atol=1e-12)
    # same α values in a new array, another K with the same α, a changed α: never a stale product
    np.testing.assert_array_equal(model.k_alpha(K, alpha.copy()), model.k_alpha(K, alpha))
    K2 = model.kernel_matrix(w * 0.5)
    np.testing.assert_allclose(model.k_alpha(K2, alpha), K2 @ alpha, rtol=1e-12, atol=1e-12)
    beta = alpha.copy()
    beta[0] += 1.0
    np.testing.assert_allclose(model.k_alpha(K, beta), K @ beta, rtol=1e-12, atol=1e-12)
    f = model.objective(K, alpha, a0, w, 0.3)
    f_ref = model.loss.value(model.y, K @ alpha + a0) + float(alpha @ K @ alpha) + 0.3 * w.sum()
    assert f == pytest.approx(f_ref, rel=1e-12)


def test_rows_matvec_is_the_selected_rows_of_the_product():
    from numkfs._linalg import rows_matvec

    rng = np.random.default_rng(1)
    K = rng.standard_normal((70, 70))
    x = rng.standard_normal(70)
    for rows in (np.array([], dtype=np.int64), np.array([3]), np.sort(rng.choice(70, 31, replace=False)),
                 np.arange(70)):
        np.testing.assert_allclose(rows_matvec(K, rows, x), (K @ x)[rows], rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------
# the CV estimators: fold-wise preprocessing, the selection contract


def _two_folds(n):
    from sklearn.model_selection import PredefinedSplit

    return PredefinedSplit(np.arange(n) % 2)


def test_regressor_cv_standardises_inside_each_fold():
    # the fold's path is fitted on its training rows standardised with their own
    # statistics (before: with the statistics of all rows, held-out rows included)
    from numkfs import KNIFERegressorCV

    X, y, _ = make_sinusoid(40, random_state=2)
    X = 3.0 * X + 1.0
    X[1::2] += 0.7  # the held-out rows of fold 0 shift the all-row statistics
    cv = _two_folds(len(y))
    est = KNIFERegressorCV(cv=cv, n_grid=5, random_state=0, max_iter=200).fit(X, y)
    train, test = next(cv.split(X, y))
    mu, sd = X[train].mean(0), X[train].std(0)
    Xtr, Xte = (X[train] - mu) / sd, (X[test] - mu) / sd
    m = y[train].mean()
    fp = knife_path(Xtr, y[train] - m, grid=est.path_.grid, random_state=0, max_iter=200, gamma="auto")
    pred = km.path_decision_function(fp, Xtr, Xte) + m
    ref = -np.mean((pred - y[test][:, None]) ** 2, axis=0)
    np.testing.assert_allclose(est.cv_scores_[:, 0], ref, rtol=1e-10)
    # the contract's attributes
    assert est.path_.score_name == "neg_mean_squared_error" and est.path_.cv_rule == "best"
    assert est.best_index_ == est.path_.chosen_index
    assert est.converged_.shape == (est.path_.n_points,) and est.converged_.dtype == bool
    assert est.n_features_selected_ == int(est.path_.selected(est.best_index_).sum())
    np.testing.assert_array_equal(est.feature_weights_, est.path_.weights[est.best_index_])


@pytest.mark.parametrize("scoring", ["neg_loss", "accuracy"])
def test_classifier_cv_scores_are_held_out_losses(scoring):
    from numkfs import KNIFEClassifierCV

    X, y, _ = make_orange(40, n_noise=2, random_state=0)
    labels = np.where(y > 0, "in", "out")
    cv = _two_folds(len(y))
    est = KNIFEClassifierCV(cv=cv, n_grid=4, random_state=0, scoring=scoring, cv_rule="1se").fit(X, labels)
    train, test = next(cv.split(X, labels))
    mu, sd = X[train].mean(0), X[train].std(0)
    Xtr, Xte = (X[train] - mu) / sd, (X[test] - mu) / sd
    ytr = np.where(labels[train] == est.classes_[1], 1.0, -1.0)
    fp = knife_path(Xtr, ytr, loss="squared_hinge", lambda1=est.lambda1, grid=est.path_.grid, random_state=0,
                    gamma="auto")
    D = km.path_decision_function(fp, Xtr, Xte)
    yte = np.where(labels[test] == est.classes_[1], 1.0, -1.0)[:, None]
    if scoring == "neg_loss":
        ref = -np.mean(np.maximum(0.0, 1.0 - yte * D) ** 2, axis=0)
    else:
        ref = np.mean(np.where(D > 0, 1.0, -1.0) == yte, axis=0)
    np.testing.assert_allclose(est.cv_scores_[:, 0], ref, rtol=1e-10)
    assert est.path_.score_name == scoring and est.path_.cv_rule == "1se"
    assert est.best_index_ == est.path_.chosen_index


def test_classifier_cv_threads_give_the_serial_scores_and_restore_blas():
    from threadpoolctl import threadpool_info

    from numkfs import KNIFEClassifierCV

    X, y, _ = make_orange(36, n_noise=2, random_state=3)
    blas_before = [(i["internal_api"], i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]
    a = KNIFEClassifierCV(cv=3, n_grid=4, random_state=0, n_jobs=1).fit(X, y)
    b = KNIFEClassifierCV(cv=3, n_grid=4, random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)
    assert a.best_index_ == b.best_index_
    assert [(i["internal_api"], i["num_threads"]) for i in threadpool_info()
            if i["user_api"] == "blas"] == blas_before


# --------------------------------------------------------------------------
# the first start (w = 1) and a finish that cannot remove a feature by a projected step


def test_first_start_is_every_weight_one():
    # the default start is the unweighted kernel, w = 1, whatever the seed: the fit equals the one
    # from w0 = 1, and a second start (random) can only lower the objective
    X, y, _ = make_sinusoid(50, random_state=3)
    X = _std(X)
    a = knife(X, y, lambda2=5.0, random_state=0)
    b = knife(X, y, lambda2=5.0, random_state=123)
    c = knife(X, y, lambda2=5.0, w0=np.ones(X.shape[1]))
    assert a.objective == b.objective == c.objective
    np.testing.assert_array_equal(a.weights, c.weights)
    two = knife(X, y, lambda2=5.0, n_restarts=2, random_state=0)
    assert two.restart_objectives[0] == a.objective and two.objective <= a.objective


def test_first_start_keeps_the_informative_features_of_the_orange():
    # at λ2 = 0 a random first start loses true features of the skin of the orange for good (a zero
    # weight stays zero); from w = 1 all four are kept, at a lower objective than a random start's
    X, y, truth = make_orange(400, n_noise=8, random_state=0)
    X = _std(X)
    ones = knife(X, y, loss="squared_hinge", lambda2=0.0, gamma=1 / X.shape[1])
    assert np.all(ones.weights[truth] > 0)
    rnd = knife(X, y, loss="squared_hinge", lambda2=0.0, gamma=1 / X.shape[1],
                w0=np.random.default_rng(0).uniform(0, 1, X.shape[1]))
    assert ones.objective <= rnd.objective * (1 + 1e-9)


def test_finish_does_not_remove_a_feature_the_alternation_keeps(monkeypatch):
    # huberized hinge on the orange from w = 1, λ2 = 0: L-BFGS-B's projected steps put feature 4's
    # weight on 0, where its gradient vanishes (it enters squared) although a weight of 0.445 is
    # better; the alternation run on from the same point keeps it, and its lower objective wins
    X, y, _ = make_orange(60, n_noise=4, random_state=0)
    X = _std(X)
    fast = knife(X, y, loss="huberized_hinge", lambda2=0.0)
    with monkeypatch.context() as m:
        m.setattr(kprob, "_EXTRAPOLATE", False)
        m.setattr(kprob, "_POLISH_AFTER", None)
        plain = knife(X, y, loss="huberized_hinge", lambda2=0.0, tol=1e-12, max_iter=20000)
    assert plain.converged and fast.converged
    assert np.array_equal(fast.weights > 0, plain.weights > 0) and 0 < plain.weights[4] < 1
    # both stop within tol = 1e-6 (relative) of the same stationary point
    assert abs(fast.objective - plain.objective) <= 1e-6 * plain.objective
    # and the finish alone (without the check) loses the feature, at a higher objective
    fallback = kprob._Knife._polish

    def finish_only(self, st, lambda2, budget, tol):
        act = np.flatnonzero(st.w > 0.0)
        return self._finish_state(st, self._lbfgsb_finish(st, act, lambda2, budget, tol))

    with monkeypatch.context() as m:
        m.setattr(kprob._Knife, "_polish", finish_only)
        lost = knife(X, y, loss="huberized_hinge", lambda2=0.0)
    assert kprob._Knife._polish is fallback
    assert lost.weights[4] == 0.0 and lost.objective > plain.objective * (1 + 1e-3)


@pytest.mark.parametrize("kernel, approximation", [("rbf", "exact"), ("poly", "exact"), ("linear", "exact"),
                                                    ("rbf", "nystroem")])
def test_squared_weight_slope_is_the_finite_difference_in_the_squared_weight(kernel, approximation):
    # at a zero weight F's gradient vanishes (the weights enter squared); the slope in s_j = w_j²
    # against the one-sided difference (F(w_j = √ε) - F(w_j = 0)) / ε, α re-optimised at both points
    # (the squared loss on the exact kernel and the rbf kernel: the optimal coefficients are unique;
    # the polynomial and linear kernels through fewer landmarks than their feature space's dimension
    # leave them free along the null space of K_mm, and F's slope at a zero weight is then not the
    # slope at one optimal β)
    X, y, _ = make_orange(50, n_noise=3, random_state=2)
    X = _std(X)
    y = X[:, 0] + np.sin(X[:, 1]) - X[:, 2] ** 2 / 2
    y = y - y.mean()
    params = dict(kernel=kernel, loss="squared", lambda1=1.0, gamma=None, degree=2, coef0=1.0, delta=1.0,
                  n_restarts=1, max_iter=100, tol=1e-6, solver="auto", approximation=approximation,
                  n_components=30 if approximation == "nystroem" else None, random_state=0)
    model = kinput._prepare(X, y, params, "test")[4]
    w = np.linspace(0.4, 0.9, X.shape[1])
    zero = np.array([1, 4, 6])
    w[zero] = 0.0
    alpha0 = np.zeros(model.n_components if approximation == "nystroem" else len(y))
    F, _, _, alpha, a0 = model.reduced_objective(w, 0.0, alpha0, 0.0)
    slope = model.squared_weight_slope(w, alpha, a0, zero)
    eps = 1e-6
    for j, s in zip(zero, slope):
        e = w.copy()
        e[j] = np.sqrt(eps)
        Fe = model.reduced_objective(e, 0.0, alpha, a0)[0]
        # the one-sided difference is off by eps times the curvature in s_j (of the order of the slope)
        assert s == pytest.approx((Fe - F) / eps, rel=1e-3, abs=1e-7 * max(1.0, abs(F)) / eps)


def test_finish_keeps_a_corner_where_every_removed_weight_would_raise_f(monkeypatch):
    # λ2 = 0 on the sinusoid: the finish puts noise features on 0, where F's slope in each
    # squared weight is positive (a local minimum); the alternation is not run on, and bringing
    # any removed feature back (a small weight) does raise F
    X, y, _ = make_sinusoid(80, 20, random_state=1)
    X = _std(X)
    model = _model(X, y - y.mean(), "squared")
    seen = []
    real_polish, real_fit = kprob._Knife._polish, kprob._Knife.fit

    def polish(self, st, lambda2, budget, tol):
        w_in = st.w.copy()  # the finish updates st in place
        out = real_polish(self, st, lambda2, budget, tol)
        seen.append((w_in, out.w.copy(), out.alpha.copy(), out.a0, out.objective))
        return out

    alternations = []

    def fit(self, w, lambda2, **kw):
        if not kw.get("polish", True):
            alternations.append(w)
        return real_fit(self, w, lambda2, **kw)

    monkeypatch.setattr(kprob._Knife, "_polish", polish)
    monkeypatch.setattr(kprob._Knife, "fit", fit)
    model.fit(np.ones(X.shape[1]), 0.0, max_iter=100, tol=1e-6)
    cases = [(w_in, w_out, a, a0, f) for w_in, w_out, a, a0, f in seen if np.any((w_in > 0) & (w_out == 0))]
    assert cases and not alternations
    for w_in, w_out, alpha, a0, f in cases:
        removed = np.flatnonzero((w_in > 0) & (w_out == 0))
        assert np.all(model.squared_weight_slope(w_out, alpha, a0, removed) > 0)
        for j in removed:
            e = w_out.copy()
            e[j] = 0.05
            assert model.reduced_objective(e, 0.0, alpha, a0)[0] > f


def test_path_walk_holds_the_kernels_of_the_last_points_only(monkeypatch):
    # every point of the walk used to keep its n x n kernel until the path was built (one-vs-rest
    # on 1,347 digits rows: about 16 GB); the walk steps only from its last accepted point, so the
    # kernels of the points it has left are dropped
    seen = []
    real = kpath.refine_walk

    def spy(*args, **kwargs):
        values, states, n_in = real(*args, **kwargs)
        seen.append([sum(st.K is not None for st in point) for point in states])
        return values, states, n_in

    monkeypatch.setattr(kpath, "refine_walk", spy)
    X, y, _ = make_orange(80, n_noise=6, random_state=0)
    targets = [y, -y, np.where(_std(X)[:, 0] > 0, 1.0, -1.0)]
    paths = knife_ovr_paths(_std(X), targets, loss="squared_hinge", n_grid=15, random_state=0)
    assert len(seen) >= 1 and all(len(held) == paths[0].n_points for held in seen[:1])
    for held in seen:
        assert sum(held[:-2]) == 0  # none of the earlier points keeps a kernel
        assert held[-1] == len(targets)  # the last point does (a walk may go on from it)


# --------------------------------------------------------------------------
# the top of the default grid on unstandardised wide data

def _unstandardised_wide(scale=10.0):
    # 20 x 60 at 10 times unit scale: the kernel at w = 1 is close to the identity, the linearised top
    # (the KKT value at the λ2 = 0 fit) some 2^40 below the top, as on the colon data as shipped
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 60))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    return X * scale, y


def test_top_search_skips_the_doublings_below_its_floor(monkeypatch):
    X, y = _unstandardised_wide()
    fits = []
    real_fit = kprob._Knife.fit

    def counted(self, w, lambda2, **kw):
        fits.append(lambda2)
        return real_fit(self, w, lambda2, **kw)

    monkeypatch.setattr(kprob._Knife, "fit", counted)
    top = km.knife_lambda2_max(X, y, loss="squared_hinge", random_state=0)
    probes = [lam for lam in fits if lam > 0]
    with monkeypatch.context() as m:  # the search before the floor: every doubling fitted
        m.setattr(kpath, "_lambda2_floor", lambda model, st, tol: 0.0)
        fits.clear()
        plain = km.knife_lambda2_max(X, y, loss="squared_hinge", random_state=0)
        plain_probes = [lam for lam in fits if lam > 0]
    assert top == plain  # the same value, bit for bit
    assert len(plain_probes) > 30 and len(probes) <= 2
    # what the top means: the fit warm-started from the λ2 = 0 solution zeroes every weight at the
    # top and not at half of it (a probe that failed, now skipped: the floor is a true lower bound)
    _, _, _, const, model, _ = kinput._prepare(X, y, {**kpath._FIT_DEFAULTS, "loss": "squared_hinge",
                                                       "random_state": 0}, "test")
    st, _ = kfit._best_start(model, kfit._starts(np.random.default_rng(0), X.shape[1], const, 1, None), 0.0,
                             100, 1e-6)
    floor = kpath._lambda2_floor(model, st, 1e-6)
    assert top / 2 < floor <= top
    assert np.any(model.fit(st.w, top / 2, alpha=st.alpha, a0=st.a0, K=st.K).w > 0)
    assert not np.any(model.fit(st.w, top, alpha=st.alpha, a0=st.a0, K=st.K).w > 0)


@pytest.mark.parametrize("seed", range(3))
def test_subspace_step_goes_to_the_first_minimum_along_the_projected_path(seed):
    # the step towards the free set's minimiser stopped at the first bound met, one
    # coordinate per step (hundreds of steps per Newton model on raw colon); it now follows the
    # projected path clip(w + t d) to its first local minimum, putting every coordinate it passes on
    # its bound.  Checked against the objective sampled along that path
    from numkfs.solvers.native.knife_wstep import _projected_search

    rng = np.random.default_rng(seed)
    m, p = 15, 80
    F = rng.standard_normal((m, p)) * 10.0 ** rng.uniform(-1, 1, p)
    mu = 1e-6
    c = 0.3 * (F.T @ rng.standard_normal(m)) + rng.standard_normal(p)
    lo, hi = np.zeros(p), np.ones(p)
    w = rng.uniform(0, 1, p)
    g = F.T @ (F @ w) + mu * w + c
    d = -np.linalg.solve(F.T @ F + mu * np.eye(p), g)  # the Newton step: long along F's null space

    def f(x):
        return 0.5 * float((F @ x) @ (F @ x)) + 0.5 * mu * float(x @ x) + float(c @ x)

    x, n_hit = _projected_search(F, F, mu, c, w, d, lo, hi, F @ w)
    assert np.all(x >= lo) and np.all(x <= hi)
    inside = (x > lo) & (x < hi) & (d != 0)
    t_star = float(np.median((x[inside] - w[inside]) / d[inside]))
    np.testing.assert_allclose(x, np.clip(w + t_star * d, lo, hi), atol=1e-9)  # a point of the path
    ts = np.linspace(0.0, 2 * t_star, 4001)
    values = np.array([f(np.clip(w + t * d, lo, hi)) for t in ts])
    first = ts <= t_star
    assert f(x) <= values[first].min() + 1e-9 * abs(f(x))  # lowest on the way to it
    assert f(x) < f(w) and n_hit == np.count_nonzero((x == lo) | (x == hi)) - np.count_nonzero((w == lo) | (w == hi))
    assert n_hit > 1  # more than one coordinate put on its bound in one step
    assert values[~first][0] >= f(x) - 1e-9 * abs(f(x))  # and a minimum: just beyond it f is not lower


def test_top_search_starts_from_the_floor_when_the_linearised_top_is_zero():
    # rows so far apart that the rbf kernel at w = 1 is exactly the identity make every
    # kernel derivative zero, so the linearised top is exactly 0 with every weight 1; the search
    # returned 1.0 unchecked there, below its own floor (2.0): the fit at that "top" kept 4 features
    rng = np.random.default_rng(0)
    X = 1e3 * rng.standard_normal((20, 5))
    y = np.where(np.arange(20) % 2, 1.0, -1.0)
    _, _, _, const, model, _ = kinput._prepare(X, y, {**kpath._FIT_DEFAULTS, "loss": "squared_hinge",
                                                       "random_state": 0}, "test")
    st, _ = kfit._best_start(model, kfit._starts(np.random.default_rng(0), X.shape[1], const, 1, None), 0.0,
                             100, 1e-6)
    assert np.all(st.w == 1.0) and kpath._lambda2_top(model, st) == 0.0
    floor = kpath._lambda2_floor(model, st, 1e-6)
    top = kpath._find_top(model, st, 100, 1e-6)
    assert top >= floor > 1.0
    assert not np.any(model.fit(st.w, top, alpha=st.alpha, a0=st.a0, K=st.K).w > 0)


@pytest.mark.parametrize("seed", range(3))
def test_factored_box_qp_with_few_free_coordinates_starts_with_the_subspace_steps(seed):
    # a warm-started Newton model of the weight step on wide data has few coordinates
    # strictly inside its box (the zero weights sit on their bound): the minimiser over them comes
    # first, no chunk of coordinate-descent sweeps over every coordinate (20 sweeps of O(mp) each,
    # run before at every Newton step); the same minimiser as the dense solver's
    rng = np.random.default_rng(seed)
    m, p = 12, 400
    F = rng.standard_normal((m, p))
    mu = 1e-8
    w = np.zeros(p)
    inside = rng.choice(p, 8, replace=False)
    w[inside] = rng.uniform(0.2, 0.8, 8)
    c = 100.0 + np.abs(rng.standard_normal(p))  # the bound coordinates stay on their bound
    c[inside] = rng.standard_normal(8)
    lo, hi = -w, 1.0 - w
    d, sweeps, res = solve_box_qp_factored(F, mu, c, lo, hi, tol=1e-10)
    Q = F.T @ F + mu * np.eye(p)
    d_dense, _, _ = solve_box_qp(Q, c, lo, hi, tol=1e-12)
    scale = max(1.0, float(np.max(np.abs(c))))
    assert res <= 1e-10 * scale
    assert abs((0.5 * d @ Q @ d + c @ d) - (0.5 * d_dense @ Q @ d_dense + c @ d_dense)) <= 1e-9 * scale
    assert sweeps < 20  # before: at least a full chunk of 20 sweeps, then the subspace steps
