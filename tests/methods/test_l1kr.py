"""L1KR path tracking: KKT residuals on the path, no better point nearby
(L-BFGS-B at the same D), Lemma 1, a path that turns back in D, the
estimator contract."""
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize

from numkfs.datasets._friedman import make_friedman_noise
from numkfs.estimators import L1KRRegressor, L1KRRegressorCV
from numkfs.kernels.ard import _reference_dK, ard_grad_columns, ard_kernel
from numkfs.methods.l1kr import (
    EVENT_E1,
    l1kr_model_predict,
    l1kr_kkt_residual,
    l1kr_path,
    l1kr_path_at,
    l1kr_predict,
)


@pytest.fixture(scope="module")
def friedman():
    X, y, support = make_friedman_noise(1, n_samples=60, random_state=3)
    return X, y, support


@pytest.fixture(scope="module")
def path_lambda(friedman):
    X, y, support = friedman
    return l1kr_path(X, y, lambda1=1e-2, max_iter=1500, true_support=support)


@pytest.fixture(scope="module")
def path_C(friedman):
    X, y, _ = friedman
    return l1kr_path(X, y, fix="norm_bound", norm_bound=1.0, D_max=15.0, max_iter=1500)


def _turning_problem():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(40, 3))
    y = 10 * (X[:, 0] - 0.5) ** 2 + 2 * X[:, 1] + 0.5 * rng.standard_normal(40)
    return X, y


@pytest.mark.parametrize("which", ["path_lambda", "path_C"])
def test_kkt_residual_at_every_stored_point(which, request):
    path = request.getfixturevalue(which)
    assert path.extra["finished"] in ("stationary point", "D_max")
    res = np.array([l1kr_kkt_residual(path, i) for i in range(path.n_points)])
    assert res.max() < 1e-8, (res.argmax(), res.max())
    assert np.all(path.weights >= 0)
    # several features entered through E1 events, each located exactly
    ev = path.extra["event"]
    assert (ev == EVENT_E1).sum() >= 3


def test_stops_at_stationary_point(path_lambda):
    assert path_lambda.extra["max_gradient"][-1] < 1e-6 * 1.0001
    assert path_lambda.extra["max_gradient"][0] > 1e-3


def test_first_feature_is_lemma1(friedman, path_lambda, path_C):
    X, y, _ = friedman
    Xs = (X - X.mean(0)) / np.linalg.norm(X - X.mean(0), axis=0)
    yc = y - y.mean()
    alpha0 = yc / np.linalg.norm(yc) / 1e-2
    beta0 = np.zeros(X.shape[1])
    g0 = [alpha0 @ _reference_dK(Xs, beta0, i) @ alpha0 for i in range(X.shape[1])]
    i_star = int(np.argmax(np.abs(g0)))
    assert np.argmax(np.abs(g0)) == np.argmax(np.abs(Xs.T @ yc))  # 2 (x_iᵀα)² at β = 0
    for path in (path_lambda, path_C):
        assert path.extra["events"][0] == (0, "start", i_star)
        # the first stretch of the path has only that feature
        first = path.weights[1]
        assert np.flatnonzero(first) == [i_star]


def _objective_lambda(Xs, ys, beta, lam):
    K = ard_kernel(Xs, beta)
    n = K.shape[0]
    alpha = np.linalg.solve(K - K.mean(0, keepdims=True) + lam * np.eye(n), ys)
    g = alpha @ ard_grad_columns(Xs, beta, alpha, K)
    return lam * ys @ alpha, -lam * g  # value (= ||r||² + λαᵀKα) and gradient


def _best_crossing(path, i):
    """Is stored point i the lowest-objective crossing of the path at its D?"""
    G, O = path.grid, path.objective
    D = G[i]
    segs = np.flatnonzero((np.minimum(G[:-1], G[1:]) <= D) & (D <= np.maximum(G[:-1], G[1:])))
    t = np.where(G[segs + 1] != G[segs], (D - G[segs]) / np.where(G[segs + 1] != G[segs], G[segs + 1] - G[segs], 1), 0)
    best = ((1 - t) * O[segs] + t * O[segs + 1]).min()
    return O[i] <= best + 1e-9 * abs(best)


def test_no_better_point_nearby_lbfgsb(path_lambda):
    """As the paper: a local optimiser (L-BFGS-B) at the same ||β||₁ = D,
    started at the path point and at perturbed points near it, finds no
    lower objective.  The path winds back and forth in D, so it crosses some
    budgets several times (Figure 2 of the paper); the points checked are
    the best crossing at their D, the one ``l1kr_path_at`` returns (other
    crossings may be saddle points of the constrained problem)."""
    path = path_lambda
    ex = path.extra
    Xs, ys, lam = ex["X_train"], ex["y_train"], ex["lam_fixed"]
    rng = np.random.default_rng(0)
    # points with several active features, away from events
    cand = np.flatnonzero((ex["n_active"] >= 2) & (ex["event"] == 0) & (path.grid > 0.5))
    best = np.array([_best_crossing(path, i) for i in cand])
    assert (~best).sum() > 0  # the path does cross some D several times
    picks = cand[best][np.linspace(0, best.sum() - 1, 5).astype(int)]
    for i in picks:
        beta_p, D = path.weights[i], path.grid[i]
        obj_p = path.objective[i]
        f0, _ = _objective_lambda(Xs, ys, beta_p, lam)
        assert abs(f0 - obj_p) < 1e-9 * max(1, abs(obj_p))

        def fun(b):
            s = b.sum()
            beta = D * b / s
            f, gb = _objective_lambda(Xs, ys, beta, lam)
            # chain rule through beta = D b / Σb
            grad = D * (gb / s - (gb @ b) / s**2)
            return f, grad

        starts = [beta_p / D]
        for scale in (1e-3, 1e-2):
            b = beta_p / D + scale * rng.uniform(size=beta_p.size) / beta_p.size
            starts.append(b / b.sum())
        for b0 in starts:
            r = minimize(fun, b0, jac=True, method="L-BFGS-B", bounds=[(0, None)] * b0.size,
                         options={"ftol": 1e-14, "gtol": 1e-10, "maxiter": 500})
            assert r.fun >= obj_p - 1e-7 * abs(obj_p), (i, D, r.fun, obj_p)


def test_path_followed_through_a_turn_in_D():
    X, y = _turning_problem()
    path = l1kr_path(X, y, lambda1=1e-2, max_iter=1500)
    D = path.grid
    peak = int(np.argmax(np.maximum.accumulate(D) - D > 0.3))  # first point well past the turn
    assert peak > 0, "the constructed path must turn back in D"
    d_turn = np.maximum.accumulate(D)[peak]
    assert d_turn - D[peak] > 0.3
    # ... and is followed through: it later goes beyond the turning value
    assert D[peak:].max() > d_turn + 1.0
    # on the backward branch the active set is unchanged: a genuine turn of
    # the smooth curve, not an event
    turn_start = int(np.argmax(D[: peak + 1]))
    assert len({tuple(a) for a in path.extra["active"][turn_start:peak + 1]}) == 1
    res = [l1kr_kkt_residual(path, i) for i in range(max(turn_start - 20, 0), min(peak + 20, path.n_points))]
    assert max(res) < 1e-8
    assert path.extra["finished"] == "stationary point"


def test_qr_and_lu_tangents_give_the_same_path(friedman):
    X, y, _ = friedman
    p1 = l1kr_path(X, y, lambda1=1e-2, D_max=5.0, tangent="lu")
    p2 = l1kr_path(X, y, lambda1=1e-2, D_max=5.0, tangent="qr")
    assert [e[1:] for e in p1.extra["events"]] == [e[1:] for e in p2.extra["events"]]
    b1, _ = l1kr_path_at(p1, [1.0, 3.0, 4.9])
    b2, _ = l1kr_path_at(p2, [1.0, 3.0, 4.9])
    assert np.allclose(b1, b2, rtol=1e-3, atol=1e-4)


def test_scipy_integrator_stays_on_the_same_path(friedman):
    """The solve_ivp tracker (RK45 on the tangent ODE + Newton when the
    residual exceeds tol) finds the same events as the PC tracker."""
    X, y, _ = friedman
    p_pc = l1kr_path(X, y, lambda1=1e-2, D_max=0.3)
    p_rk = l1kr_path(X, y, lambda1=1e-2, D_max=0.3, integrator="RK45", max_iter=400)
    assert p_rk.extra["finished"] == "D_max"
    assert [e[1:] for e in p_rk.extra["events"]] == [e[1:] for e in p_pc.extra["events"]]
    assert max(l1kr_kkt_residual(p_rk, i) for i in range(0, p_rk.n_points, 5)) < 1e-8
    assert np.allclose(p_rk.weights[-1], p_pc.weights[-1], atol=1e-6)


def test_cv_path_and_prediction(friedman):
    X, y, support = friedman
    cvp = L1KRRegressorCV(lambda1=1e-2, cv=3, n_grid=12, D_max=60.0).fit(X, y).path_
    assert cvp.cv_scores.shape == (12, 3)
    full = cvp.extra["full_path"]
    best = cvp.best_index
    assert best > 0  # the empty model (D = 0) is not the best
    pred = l1kr_predict(full, X, D=cvp.grid[[best]])[0]
    assert np.mean((pred - y) ** 2) < 0.2 * np.var(y)
    # a stored point predicts the same whether asked by index or by its D:
    # take points the path crosses only once in D (no turn back to that D)
    G = full.grid
    once = [i for i in range(1, full.n_points - 1)
            if G[i] > G[:i].max() and G[i] < G[i + 1:].min()]
    assert len(once) >= 5
    for i in once[:: max(1, len(once) // 5)]:
        by_index = l1kr_predict(full, X[:5], index=i)
        by_D = l1kr_predict(full, X[:5], D=[G[i]])[0]
        assert by_index.shape == (5,)
        assert np.allclose(by_index, by_D, rtol=1e-10, atol=1e-10 * np.abs(by_index).max())
    # ... and between stored points the β are interpolated, not those of a neighbour
    i = once[len(once) // 2]
    mid = l1kr_predict(full, X[:5], D=[0.5 * (G[i] + G[i + 1])])[0]
    assert not np.allclose(mid, l1kr_predict(full, X[:5], index=i), rtol=1e-8)


def test_budget_D_scales_with_n():
    """Columns are scaled to unit norm, so β (and D) of the same kernel grow
    with n: every row of the data twice (2n rows, λ doubled, which is the
    same ridge problem) gives the same path at 2D as the original data at D.
    This is why CV reads a fold's path at D·n_train/n.

    Compared at the events, which both paths solve exactly (to tol = 1e-10,
    no interpolation between stored points, whose spacing differs between
    the two): the same events at D and 2D, the same predictions."""
    X, y, _ = make_friedman_noise(1, n_samples=40, random_state=5)
    p1 = l1kr_path(X, y, lambda1=1e-2, D_max=12.0)
    p2 = l1kr_path(np.vstack([X, X]), np.concatenate([y, y]), lambda1=2e-2, D_max=24.0)
    e1, e2 = p1.extra["events"], p2.extra["events"]
    assert [e[1:] for e in e1] == [e[1:] for e in e2] and len(e1) >= 5
    i1, i2 = [e[0] for e in e1], [e[0] for e in e2]
    assert np.allclose(p2.grid[i2], 2 * p1.grid[i1], rtol=1e-8, atol=1e-12)
    Xq = make_friedman_noise(1, n_samples=15, random_state=6)[0]
    for i, j in zip(i1, i2):
        a, b = l1kr_predict(p1, Xq, index=i), l1kr_predict(p2, Xq, index=j)
        assert np.allclose(a, b, rtol=1e-6, atol=1e-6 * np.abs(a).max())
    # ... and read at the same D they differ (the old CV behaviour)
    D = np.array([0.5, 3.0, 8.0, 11.0])
    a = l1kr_predict(p1, Xq, D=D)
    c = l1kr_predict(p2, Xq, D=D)
    assert np.abs(a - c).max() > 0.05 * np.abs(a).std()


def test_cv_reads_fold_paths_at_the_equivalent_budget():
    X, y, _ = make_friedman_noise(1, n_samples=45, random_state=7)
    from sklearn.model_selection import PredefinedSplit

    tr, te = np.arange(30), np.arange(30, 45)
    splitter = PredefinedSplit(np.r_[np.full(30, -1), np.zeros(15)])  # one fold: train 0..29, test 30..44
    kw = dict(lambda1=1e-2, D_max=15.0)
    G = np.array([0.0, 2.0, 5.0, 9.0, 14.0])
    cvp = L1KRRegressorCV(cv=splitter, grid=G, **kw).fit(X, y).path_
    # the fold's problem is the full-data one on 30 rows: λ·30/45, read at D·30/45
    # (traced as the CV traces its paths)
    from numkfs.methods.l1kr import CV_MAX_ANGLE, CV_TOL

    cv_trace = dict(tol=CV_TOL, max_angle=CV_MAX_ANGLE)
    p = l1kr_path(X[tr], y[tr], lambda1=1e-2 * 30 / 45, D_max=15.0 * 30 / 45, **cv_trace)
    want = -((l1kr_predict(p, X[te], D=G * 30 / 45) - y[te]) ** 2).mean(axis=1)
    assert np.allclose(cvp.cv_scores[:, 0], want, rtol=1e-10)
    # the same path on 30 rows, read at the same D (the CV before 2026-11): other scores
    p_old = l1kr_path(X[tr], y[tr], **kw, **cv_trace)
    want_old = -((l1kr_predict(p_old, X[te], D=G) - y[te]) ** 2).mean(axis=1)
    assert not np.allclose(cvp.cv_scores[1:, 0], want_old[1:], rtol=1e-3)


def test_plot_against_D_and_arc_length(path_lambda):
    import matplotlib

    matplotlib.use("Agg")
    ax = path_lambda.plot()
    assert len(ax.lines) == path_lambda.n_features
    ax2 = path_lambda.plot(x="arc_length")
    assert np.allclose(ax2.lines[0].get_xdata(), path_lambda.extra["arc_length"])


def test_bad_parameters(friedman):
    X, y, _ = friedman
    with pytest.raises(ValueError, match="'fix' parameter of l1kr_path"):
        l1kr_path(X, y, fix="D")
    with pytest.raises(ValueError, match="'lambda1' parameter"):
        l1kr_path(X, y, lambda1=-1.0)


def test_constant_y_gives_one_point_path(friedman):
    X, _, _ = friedman
    p = l1kr_path(X, np.full(X.shape[0], 3.0))
    assert p.n_points == 1 and np.all(p.weights == 0)
    assert np.allclose(l1kr_predict(p, X[:3], index=0), 3.0)


def test_friedman_generator():
    X, y, s = make_friedman_noise(2, n_samples=50, snr=10, random_state=0)
    assert X.shape == (50, 9) and s.sum() == 4 and s[:4].all()
    X1, y1, _ = make_friedman_noise(1, n_samples=50, random_state=0)
    X2, y2, _ = make_friedman_noise(1, n_samples=50, random_state=0)
    assert np.array_equal(X1, X2) and np.array_equal(y1, y2)
    f1 = 10 * np.sin(np.pi * X1[:, 0] * X1[:, 1]) + 20 * (X1[:, 2] - 0.5) ** 2 + 10 * X1[:, 3] + 5 * X1[:, 4]
    assert np.allclose(y1, f1)
    with pytest.raises(ValueError, match="which must be 1, 2 or 3"):
        make_friedman_noise(4)


# --------------------------------------------------------------------------
# the selection contract and reliability


@pytest.mark.slow
def test_default_recovers_friedman1_support_without_noise():
    """Friedman #1 without noise, 5 true + 5 noise features, 200 rows: the
    path keeps the noise features at small β (they lower the training
    objective at the 1e-5 level) at every D, so the CV-chosen point had
    all 10.  Each grid point's model now drops the features whose joint
    removal costs < 1e-3 of Σ(y - ȳ)² (α refitted), in every fold alike:
    exactly x1..x5 remain.  Defaults except cv=3 (time)."""
    X, y, support = make_friedman_noise(1, n_samples=200, random_state=0)
    est = L1KRRegressorCV(cv=3, random_state=0).fit(X, y)
    assert np.array_equal(est.get_support(), support)
    assert est.n_features_selected_ == 5
    # the cause: on the traced path the noise features are not 0 at D_ ...
    raw, lam = l1kr_path_at(est.full_path_, [est.D_])
    assert np.all(raw[0][~support] > 0)
    # ... and a tolerance on β could not separate them robustly
    assert raw[0][~support].max() > 0.05 * raw[0][support].min()
    # the pruned model: removing the noise features costs < prune_tol, and
    # removing any one true feature then costs far more (recomputed here)
    ex = est.full_path_.extra
    Xs, ys = ex["X_train"], ex["y_train"]
    f_raw, _ = _objective_lambda(Xs, ys, raw[0], lam[0])
    f_pruned, _ = _objective_lambda(Xs, ys, est.feature_weights_, lam[0])
    assert 0 <= f_pruned - f_raw < 1e-3
    for j in np.flatnonzero(support):
        b = est.feature_weights_.copy()
        b[j] = 0.0
        assert _objective_lambda(Xs, ys, b, lam[0])[0] - f_raw > 1e-2
    # one support rule: the estimator's is the path's at the chosen point
    assert est.path_.chosen_index == est.best_index_
    assert np.array_equal(est.path_.selected(est.best_index_), est.get_support())
    assert np.array_equal(est.feature_weights_, est.path_.weights[est.best_index_])
    # and that model, on the five features only, still fits: R² > 0.99 in-sample and in CV
    assert np.mean((est.predict(X) - y) ** 2) < 0.01 * np.var(y)
    assert -est.path_.mean_cv_score[est.best_index_] < 0.01 * np.var(y)


@pytest.fixture(scope="module")
def small_cv_fit():
    X, y, support = make_friedman_noise(1, n_samples=50, random_state=4)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        est = L1KRRegressorCV(cv=3, n_grid=8, lambda1=0.1, D_max=30.0, random_state=0).fit(X, y)
    return X, y, est, rec


def test_cv_estimator_contract_attributes(small_cv_fit):
    X, y, est, _ = small_cv_fit
    path = est.path_
    assert path.cv_scores.shape == (8, 3) and est.cv_scores_ is path.cv_scores
    assert path.score_name == "neg_mean_squared_error" and path.cv_rule == "best"
    assert est.best_index_ == path.chosen_index == int(np.argmax(path.mean_cv_score))
    assert est.converged_.shape == (8,) and est.converged_.dtype == bool and est.converged_.all()
    assert np.array_equal(path.converged, est.converged_)
    assert est.n_features_selected_ == path.n_selected()[est.best_index_]
    assert est.full_path_.extra["finished"] in ("stationary point", "D_max")
    # "1se": the sparsest point within one standard error of the best
    est2 = L1KRRegressorCV(cv=3, n_grid=8, lambda1=0.1, D_max=30.0, random_state=0, cv_rule="1se").fit(X, y)
    m, S = est2.path_.mean_cv_score, est2.path_.cv_scores
    b = int(np.argmax(m))
    se = S[b].std(ddof=1) / np.sqrt(S.shape[1])
    ok = np.flatnonzero(m >= m[b] - se)
    ns = est2.path_.n_selected()
    assert ns[est2.best_index_] == ns[ok].min()
    assert m[est2.best_index_] >= m[b] - se


def test_regressor_keeps_one_point_of_the_path(small_cv_fit):
    """L1KRRegressor: the path at one λ₁, the model at D (default: the end
    of the traced path), pruned; at the CV's D it is the CV's model (to the
    CV's looser tracing tolerances)."""
    X, y, est, _ = small_cv_fit
    one = L1KRRegressor(lambda1=0.1, D_max=30.0, D=est.D_).fit(X, y)
    assert one.D_ == est.D_ and one.lambda_ == est.lambda_ and "cv" not in one.get_params()
    assert np.array_equal(one.get_support(), est.get_support())
    assert np.allclose(one.feature_weights_, est.feature_weights_, rtol=1e-2, atol=1e-3 * est.D_)
    assert np.allclose(one.predict(X[:4]), est.predict(X[:4]), rtol=1e-2)
    end = L1KRRegressor(lambda1=0.1, D_max=30.0).fit(X, y)
    assert end.D_ == end.path_.grid[-1] and end.path_.extra["finished"] in ("stationary point", "D_max")
    assert end.n_features_selected_ <= (end.path_.weights[-1] > 0).sum()
    assert np.array_equal(end.predict(X[:3]), l1kr_model_predict(end.path_, X[:3], end.feature_weights_,
                                                                 end.dual_coef_))


def test_gaussian_is_rbf_and_eps_is_gone(friedman):
    """``kernel="gaussian"`` (the paper's name) is the ARD ``"rbf"``; the eps
    alias of gradient_tol is gone (a former name is a TypeError)."""
    X, y, _ = friedman
    p = l1kr_path(X, y, lambda1=1e-2, gradient_tol=1e-4, D_max=3.0)
    q = l1kr_path(X, y, lambda1=1e-2, gradient_tol=1e-4, kernel="gaussian", D_max=3.0)
    assert np.array_equal(p.weights, q.weights) and q.extra["kernel"] == "rbf"
    with pytest.raises(TypeError, match="eps"):
        l1kr_path(X, y, eps=1e-4)
    assert "eps" not in L1KRRegressorCV().get_params() and "eps" not in L1KRRegressor().get_params()
    with pytest.raises(ValueError, match="'kernel' parameter"):
        l1kr_path(X, y, kernel="laplacian")


@pytest.mark.parametrize("h0", [float("inf"), 0.0, -1e-3, float("nan")])
def test_h0_is_validated(friedman, h0):
    """h0=inf hung in the corrector; h0 <= 0 or NaN gave a one-point path."""
    X, y, _ = friedman
    with pytest.raises(ValueError, match="'h0' parameter of l1kr_path must be a finite float > 0"):
        l1kr_path(X, y, h0=h0)


@pytest.mark.parametrize("name", ["tol", "lambda1", "norm_bound"])
def test_step_and_size_parameters_must_be_finite(friedman, name):
    X, y, _ = friedman
    with pytest.raises(ValueError, match=f"'{name}' parameter of l1kr_path must be a finite float > 0"):
        l1kr_path(X, y, **{name: float("inf")})


def test_max_iter_warns_convergence_and_marks_the_point(friedman):
    from sklearn.exceptions import ConvergenceWarning

    X, y, _ = friedman
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        p = l1kr_path(X, y, lambda1=1e-2, max_iter=15)
    conv = [w for w in rec if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1 and "path point 15" in str(conv[0].message) and "within max_iter=15" in str(conv[0].message)
    assert not any(issubclass(w.category, RuntimeWarning) for w in rec)
    assert p.extra["finished"] == "max_iter"
    assert p.converged.tolist() == [True] * 15 + [False]
    # the CV estimator: fold paths warn too (nothing is swallowed), and
    # converged_ is False at the grid points beyond the unconverged end
    with pytest.warns(ConvergenceWarning, match="L1KR did not converge"):
        est = L1KRRegressorCV(cv=2, n_grid=6, lambda1=1e-2, max_iter=15, random_state=0).fit(X, y)
    assert not est.converged_[-1]


def test_a_traced_path_emits_no_runtime_warning(friedman):
    X, y, _ = friedman
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        p = l1kr_path(X, y, fix="norm_bound", norm_bound=1.0, D_max=15.0, max_iter=1500)
    assert p.converged.all()


def test_singular_jacobian_gives_one_clear_warning():
    """A duplicated column makes the KKT Jacobian singular: one
    PathDegeneracyWarning, no LinAlgWarning from the LU that detects it."""
    from numkfs.methods.l1kr import PathDegeneracyWarning

    rng = np.random.default_rng(5)
    X = rng.standard_normal((20, 4))
    y = X[:, 0] + 0.1 * rng.standard_normal(20)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        p = l1kr_path(np.column_stack([X, X[:, 0]]), y, D_max=2.0, max_iter=200)
    assert [w.category for w in rec] == [PathDegeneracyWarning]
    assert p.extra["finished"] == "singular Jacobian" and not p.converged[-1] and p.converged[:-1].all()


def test_cv_at_the_D_max_edge_names_D_max():
    from numkfs.model_selection import GridEdgeWarning

    X, y, _ = make_friedman_noise(1, n_samples=50, random_state=4)
    with pytest.warns(GridEdgeWarning, match="'D_max'"):
        est = L1KRRegressorCV(cv=3, n_grid=6, lambda1=0.1, D_max=1.0, random_state=0).fit(X, y)
    assert est.best_index_ == 5


@pytest.mark.slow
def test_cv_at_the_end_of_the_lambda_grid_extends_it_then_names_lambda1():
    """On diabetes CV picked the largest λ offered, silently.  Now the λ
    grid is extended beyond the chosen end (geometrically, twice); if the
    choice is still at that end, a GridEdgeWarning names 'lambda1'.  Here λ in
    [3, 10] is too large: CV chooses 3, then 0.9, then 0.27.

    With λ in [0.01, 0.1] the evenly spaced D grid (before 2026-12) had no
    point between D = 0 and a D where every feature was in, so the small λ
    could not show their sparse, wide-kernel models and CV preferred ever
    larger λ (10, after two extensions, with a warning).  The grid now
    follows the events of the path: λ = 0.1 at D ≈ 3 scores best, better
    than every point of λ = 1 (one extension, interior: no warning)."""
    from numkfs.datasets import load_dataset
    from numkfs.model_selection import GridEdgeWarning

    d = load_dataset("diabetes_raw")
    idx = np.random.default_rng(0).permutation(d.target.size)[:100]
    X, y = d.data[idx], d.target[idx]
    with pytest.warns(GridEdgeWarning, match="smallest λ tried.*'lambda1'"):
        est = L1KRRegressorCV(lambda1=[3.0, 10.0], cv=3, n_grid=10, random_state=0).fit(X, y)
    assert np.allclose(est.lambdas_, [3.0, 10.0, 0.9, 0.27])
    best = [p.mean_cv_score.max() for p in est.cv_paths_]
    assert best[0] > best[1] and max(best[2:]) > best[0]  # the offered grid's best was at its edge
    assert est.lambda_ == pytest.approx(0.27) and est.path_ is est.cv_paths_[3]
    with warnings.catch_warnings():
        warnings.simplefilter("error", GridEdgeWarning)
        est = L1KRRegressorCV(lambda1=[0.01, 0.1], cv=3, n_grid=10, random_state=0).fit(X, y)
    assert np.allclose(est.lambdas_, [0.01, 0.1, 1.0])
    best = [p.mean_cv_score.max() for p in est.cv_paths_]
    assert best[1] > max(best[0], best[2]) and est.lambda_ == pytest.approx(0.1)


def test_non_finite_points_never_reach_the_path():
    """A tracker step that produced non-finite β (seen once at n = p = 2 by the
    robustness benchmark) ends the path before it, with a warning."""
    from numkfs._validation import NumericalWarning
    from numkfs.methods.l1kr import _Recorder

    rec = _Recorder(sysm=None)
    row = dict(D=0.0, beta=np.zeros(2), alpha=np.zeros(3), lam=0.1, C=0.0, obj=1.0, grad=0.5, s=0.0, event=0,
               feature=-1, active=np.zeros(0, dtype=int), converged=True)
    rec.rows = [row, dict(row, D=0.5, beta=np.array([0.5, 0.0]), s=0.5),
                dict(row, D=np.nan, beta=np.array([np.nan, 1.0]), s=1.0)]
    with pytest.warns(NumericalWarning, match="non-finite weights at path point 2"):
        path = rec.to_path("L1KR", None, None, {})
    assert path.n_points == 2 and np.all(np.isfinite(path.weights))
    assert path.converged.tolist() == [True, False]


def test_small_lambda_starts_within_the_rounding_floor():
    """At λ = 1e-6 on diabetes the start point
    α = y/λ, β = 0 has a KKT residual of 2.3e-10, the rounding of
    ``K α`` with ``||α||₁ ≈ 1.7e7``, and ``l1kr_path`` refused it against
    the absolute ``tol`` = 1e-10.  The residual is held to
    ``√n ε (|K||α| + λ|α| + |y|)`` where that exceeds ``tol``."""
    from sklearn.exceptions import ConvergenceWarning

    from numkfs.datasets import load_dataset

    d = load_dataset("diabetes_raw")
    lam = 1e-6
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        path = l1kr_path(d.data, d.target, lambda1=lam, max_iter=1)
    ys = path.extra["y_train"]
    n = ys.size
    alpha0 = path.extra["alpha"][0]
    assert np.abs(alpha0 - ys / lam).max() <= 4 * np.finfo(float).eps * np.abs(ys / lam).max()
    # at β = 0, K = 11ᵀ and |K||α| = ||α||₁ in every row
    floor = np.sqrt(n) * np.finfo(float).eps * (np.abs(alpha0).sum() + 2 * np.abs(ys).max())
    r0 = l1kr_kkt_residual(path, 0)
    assert 1e-10 < r0 <= floor  # above the old absolute tol, within the rounding of the system


def test_small_lambda_path_is_traced_to_D_max(friedman):
    """At λ = 1e-6 the corrector could not bring the
    residual (rounding floor ~1e-8 here, ``α ≈ y/λ``) below ``tol`` = 1e-10,
    and the path stopped at D ≈ 1e-16 with a step-size underflow.  Now
    it reaches D_max, the same features entering in the same order as at
    λ = 1e-5, and every point is a KKT point to its rounding floor."""
    X, y, _ = friedman
    eps = np.finfo(float).eps
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = l1kr_path(X, y, lambda1=1e-6, D_max=1e-6)
    assert path.extra["finished"] == "D_max" and path.converged.all()
    assert path.grid[-1] == pytest.approx(1e-6, rel=1e-8)
    entered = [f for _, name, f in path.extra["events"] if name in ("start", "E1")]
    assert entered == [3, 4, 1, 0]  # the order of λ = 1e-5 (events at D = 1.1e-7, 3.2e-7, 8.4e-7)
    Xs, ys = path.extra["X_train"], path.extra["y_train"]
    n = ys.size
    for i in range(path.n_points):
        alpha, lam = path.extra["alpha"][i], path.extra["lambda"][i]
        K = ard_kernel(Xs, path.weights[i])
        a = np.abs(alpha)
        # the λ(g_i - g_j) rows: |∂K/∂β_i| ≤ 4 max|x_i|² K on unit-norm columns
        bound = np.sqrt(n) * eps * max(np.max(K @ a + lam * a + np.abs(ys)), 4 * lam * a @ K @ a)
        assert l1kr_kkt_residual(path, i) <= bound


# --------------------------------------------------------------------------
# a CV grid that follows the path's events, and speed


def _support_steps(path):
    """Per pair of consecutive grid points: (|S_k Δ S_k+1|, max(2, larger |S| / 4))."""
    S = path.weights > 0
    return [(int(np.count_nonzero(a != b)), max(2.0, max(a.sum(), b.sum()) / 4.0)) for a, b in zip(S[:-1], S[1:])]


@pytest.mark.slow
def test_default_grid_follows_the_events_on_raw_diabetes():
    """50 evenly spaced D from 0 to the end of the path had every
    feature in at its first point after 0, so CV could not choose a sparse
    model.  The grid now follows the path's events: no two consecutive points
    differ in support by more than max(2, a quarter of the larger support)."""
    from numkfs.datasets import load_dataset

    d = load_dataset("diabetes_raw")
    # what is checked is the full-data path on the default grid, which the number of folds does not change
    est = L1KRRegressorCV(cv=2, random_state=0).fit(d.data, d.target)
    path = est.path_
    assert 10 <= path.n_points <= 50
    steps = _support_steps(path)
    assert all(diff <= allowed for diff, allowed in steps), steps
    counts = path.n_selected()
    assert counts[0] == 0 and counts[1] <= 2  # the sparse end is on the grid
    # the grid holds event budgets of the traced path
    full = est.full_path_
    ev = {full.grid[i] for i, name, _ in full.extra["events"] if name in ("E1", "E2")}
    assert len(ev & set(path.grid)) >= 3


def test_default_grid_is_bounded_by_n_grid_and_keeps_its_ends(friedman):
    """l1kr_path(n_grid=...): the grid that follows the events (the one
    L1KRRegressorCV cross-validates), traced to D_max."""
    from numkfs.methods.l1kr import CV_MAX_ANGLE, CV_TOL

    X, y, _ = friedman
    kw = dict(lambda1=1e-2, D_max=20.0, tol=CV_TOL, max_angle=CV_MAX_ANGLE)
    fine = l1kr_path(X, y, n_grid=50, **kw)
    assert fine.n_points <= 50 and fine.grid[0] == 0.0 and fine.grid[-1] == pytest.approx(20.0)
    assert np.all(np.diff(fine.grid) > 0)
    assert all(diff <= allowed for diff, allowed in _support_steps(fine))
    # n_grid bounds the grid (its events alone are more than 8 points here): points merge, the ends stay
    coarse = l1kr_path(X, y, n_grid=8, **kw)
    ev = {D for i, name, _ in coarse.extra["full_path"].extra["events"] if name == "E1"
          for D in [coarse.extra["full_path"].grid[i]]}
    assert len(ev) > 8
    assert coarse.n_points == 8 and coarse.grid[0] == 0.0 and coarse.grid[-1] == pytest.approx(20.0)
    assert np.all(np.diff(coarse.grid) > 0)


def test_estimator_takes_an_explicit_D_grid(friedman):
    X, y, _ = friedman
    G = np.array([0.0, 0.5, 2.0, 6.0, 15.0])
    est = L1KRRegressorCV(grid=G, lambda1=0.1, cv=3, random_state=0).fit(X, y)
    assert np.array_equal(est.path_.grid, G) and est.cv_scores_.shape == (5, 3)
    from numkfs.methods.l1kr import CV_MAX_ANGLE, CV_TOL

    ref = l1kr_path(X, y, lambda1=0.1, grid=G, tol=CV_TOL, max_angle=CV_MAX_ANGLE)
    assert np.array_equal(est.path_.weights, ref.weights)
    assert est.D_ == G[est.best_index_] and est.full_path_.grid.max() == pytest.approx(15.0)
    with pytest.raises(ValueError, match="grid"):
        l1kr_path(X, y, lambda1=0.1, grid=[0.0, -1.0])


@pytest.mark.slow
def test_early_stopping_keeps_the_choice_and_traces_less():
    """Tracing stops once the last points score more than 3 standard errors
    below the best: the same folds and stages, so the points both runs scored
    have the same scores, and the choice is the one of the path traced to its
    stationary point."""
    from numkfs.datasets import load_dataset

    d = load_dataset("diabetes_raw")
    idx = np.random.default_rng(0).permutation(d.target.size)[:100]
    X, y = d.data[idx], d.target[idx]
    kw = dict(lambda1=0.1, cv=3, random_state=0)
    early = L1KRRegressorCV(**kw).fit(X, y).path_
    whole = L1KRRegressorCV(early_stopping=False, **kw).fit(X, y).path_
    assert early.extra["stopped_early"] and not whole.extra["stopped_early"]
    assert whole.extra["full_path"].extra["finished"] == "stationary point"
    assert early.extra["full_path"].grid.max() < 0.1 * whole.extra["full_path"].grid.max()
    assert sum(early.extra["fold_steps"]) < 0.7 * sum(whole.extra["fold_steps"])
    common = np.isin(whole.grid, early.grid)
    assert common.sum() == early.n_points
    assert np.allclose(whole.cv_scores[common], early.cv_scores, rtol=1e-12)
    assert early.grid[early.best_index] == whole.grid[whole.best_index]


def test_cv_paths_agree_with_a_tight_trace_at_grid_points(friedman):
    """The paths L1KRRegressorCV traces (tol=CV_TOL, max_angle=
    CV_MAX_ANGLE) are read at the grid by linear interpolation between stored
    points.  Between two points whose tangents differ by at most θ the chord
    lies within (segment length) θ / 8 of the arc (the sagitta of an arc
    turning by θ), so β read on the CV's path and on a tight trace (tol=1e-12,
    max_angle=0.05) differ by at most the sum of the two sagittas, plus the
    KKT tolerance's share (1e-6: a residual of 1e-8 moves β by ~1e-7 here)."""
    from numkfs.methods.l1kr import CV_MAX_ANGLE, CV_TOL, _path_at

    X, y, _ = friedman
    fast = l1kr_path(X, y, lambda1=1e-2, D_max=15.0, tol=CV_TOL, max_angle=CV_MAX_ANGLE)
    tight = l1kr_path(X, y, lambda1=1e-2, D_max=15.0, tol=1e-12, max_angle=0.05, max_iter=5000)
    assert fast.extra["n_steps"] < 0.5 * tight.extra["n_steps"]
    assert [e[1:] for e in fast.extra["events"]] == [e[1:] for e in tight.extra["events"]]
    D = np.geomspace(1e-3, 15.0, 40)

    def sagitta(path, theta):
        _, _, used = _path_at(path, D)
        Z = np.hstack([path.extra["lam_fixed"] * path.extra["alpha"], path.weights])  # the tracker's z
        return np.linalg.norm(Z[used[:, 1]] - Z[used[:, 0]], axis=1) * theta / 8

    b_fast, _ = l1kr_path_at(fast, D)
    b_tight, _ = l1kr_path_at(tight, D)
    bound = sagitta(fast, CV_MAX_ANGLE) + sagitta(tight, 0.05) + 1e-6
    assert np.all(np.linalg.norm(b_fast - b_tight, axis=1) <= bound)


def test_grid_reading_resumes_and_stops(friedman):
    """l1kr_path(grid=..., resume=...): the trace goes on from where it
    stopped and only the new grid points are read; l1kr_path(n_grid=...,
    stop=...): the staged tracing ends when stop says so.  A path read at a
    grid pickles (without its running trace)."""
    import pickle

    X, y, _ = friedman
    first = l1kr_path(X, y, lambda1=1e-2, grid=[0.0, 1.0, 2.0])
    assert first.extra["read"].all() and first.extra["full_path"].grid.max() == pytest.approx(2.0)
    more = l1kr_path(X, y, lambda1=1e-2, grid=[0.0, 1.0, 2.0, 4.0], resume=first)
    assert more.extra["read"].tolist() == [False, False, False, True]
    assert np.array_equal(more.weights[:3], first.weights)
    assert more.extra["full_path"].grid.max() == pytest.approx(4.0)
    assert more.extra["full_path"].n_points > first.extra["full_path"].n_points
    again = pickle.loads(pickle.dumps(more))  # the trace is dropped: resuming it retraces from beta = 0
    assert np.array_equal(again.weights, more.weights)
    assert l1kr_path(X, y, lambda1=1e-2, grid=[1.0, 5.0], resume=again).extra["read"].all()
    with pytest.raises(ValueError, match="resume"):
        l1kr_path(X, y, grid=[1.0], resume=first.extra["full_path"])
    seen = []
    short = l1kr_path(X, y, lambda1=1e-2, n_grid=20, stop=lambda grid, reach: seen.append(reach) or len(seen) == 2)
    assert len(seen) == 2 and short.extra["stopped_early"] and short.grid[-1] == pytest.approx(seen[-1])


# --------------------------------------------------------------------------
# numerical trouble


def _reg_data(seed=0, n=20, p=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


def test_l1kr_degenerate_jacobian_duplicated_column():
    from numkfs.methods.l1kr import l1kr_path

    X, y = _reg_data(5)
    with pytest.warns(UserWarning):
        path = l1kr_path(np.column_stack([X, X[:, 0]]), y, D_max=2.0, max_iter=200)
    assert np.all(np.isfinite(path.weights))


# --------------------------------------------------------------------------
# the compiled residual and corrector of the Gaussian kernel


def _system_at(fix, n=30, d=6, seed=0):
    """A KKT system on standardised random data and a point of it: active
    features with positive weights, one at 0 (a feature that has just
    entered) and one slightly negative (a probe past an E2 event)."""
    from numkfs.methods.l1kr import _standardize, _System

    rng = np.random.default_rng(seed)
    Xs, ys, *_ = _standardize(rng.standard_normal((n, d)), rng.standard_normal(n))
    sysm = _System(Xs, ys, "rbf", 2, fix, 0.1, 2.0, ascale=0.1)
    P = [4, 1, 3, 0, 5]
    betaP = np.array([1.5, 0.0, 0.7, -0.01, 2.5])
    z = np.concatenate([0.1 * rng.standard_normal(n), betaP] + ([[0.3]] if fix == "C" else []))
    return sysm, z, P


@pytest.mark.parametrize("fix", ["lambda", "C"])
def test_compiled_residual_is_the_numpy_residual(fix):
    """K bit for bit that of ard_kernel (the same operations in the same
    order); F within twice its rounding floor (each evaluation is within
    one floor of the exact value); the floor itself to rounding."""
    sysm, z, P = _system_at(fix)
    F_fast = sysm.residual(z, P)
    K_fast, floor_fast = sysm._cache["K"][1], sysm.floor
    alpha, beta, lam = sysm.split(z, P)
    assert np.array_equal(K_fast, ard_kernel(sysm.X, beta))
    sysm._cache = {}
    F_ref = sysm._residual(alpha, beta, lam, P)
    assert F_fast.shape == F_ref.shape
    assert np.max(np.abs(F_fast - F_ref)) <= 2.0 * sysm.floor
    assert floor_fast == pytest.approx(sysm.floor, rel=1e-12)


@pytest.mark.parametrize("fix", ["lambda", "C"])
def test_compiled_corrector_reaches_the_python_correctors_point(fix, monkeypatch):
    """From a point predicted off the curve, the compiled corrector and the
    Python one (the same chord-Broyden iteration, with numpy and LAPACK)
    both solve the KKT system to tol on the same hyperplane, at the same
    point (to what tol and the conditioning allow)."""
    from numkfs.methods.l1kr import _standardize, _System, _tangent_and_corrector
    from numkfs.methods.l1kr.tracker import _PCTracker

    X, y, _ = make_friedman_noise(1, n_samples=40, random_state=1)
    path = l1kr_path(X, y, lambda1=1e-2, D_max=2.0)
    i = path.n_points // 2
    P = list(path.extra["active"][i])
    Xs, ys, *_ = _standardize(X, y)
    lam, tol = 1e-2, 1e-10
    z = np.concatenate([lam * path.extra["alpha"][i], path.weights[i][P]] + ([[lam]] if fix == "C" else []))
    rng = np.random.default_rng(0)
    points = []
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(_System, "compiled_correct", property(lambda self: False))
        sysm = _System(Xs, ys, "rbf", 2, fix, lam, path.extra["C"][i], ascale=lam)
        e = np.zeros(z.size)
        e[len(ys)] = 1.0
        v, qr = _tangent_and_corrector(sysm.full(z, P)["J"], e)
        trk = _PCTracker(sysm, tol=tol, max_angle=0.15)
        zc, _, kappa = trk._correct(z + 0.02 * v + 1e-4 * np.random.default_rng(0).standard_normal(z.size), P, qr)
        assert zc is not None and 0 < kappa < 0.7
        sysm._cache = {}
        alpha, beta, lam_z = sysm.split(zc, P)
        assert np.max(np.abs(sysm._residual(alpha, beta, lam_z, P))) < max(tol, sysm.floor) * 1.01
        points.append(zc)
    assert np.max(np.abs(points[0] - points[1])) < 1e-6 * np.max(np.abs(points[1]))
