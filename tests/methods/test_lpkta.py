"""Generalized lp-KTA: closed forms, Newton residuals, Theorem 2, Lemma 1, estimators."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import brentq
from sklearn.datasets import load_diabetes, load_wine

import numkfs
from numkfs import LpKTAClassifier, LpKTAClassifierCV, LpKTASelector, LpKTASelectorCV, lpkta_selection_path, select
from numkfs.datasets._lpkta import make_dorothea_like, make_madelon_like
from numkfs.methods.lpkta import (
    GeneralizedKL,
    SquaredEuclidean,
    default_p_grid,
    lpkta_objective,
    lpkta_path,
    lpkta_weights,
)
from numkfs.model_selection import target_type
from numkfs.solvers.native.lpkta_newton import path_derivatives

GRID = default_p_grid()
RNG = np.random.default_rng(0)
A = np.concatenate([RNG.uniform(0.0, 3.0, 400), [-0.5, 0.0, 1e-9, 50.0, 1.0, 1.0 + 1e-12]])
LAM1, LAM2 = 0.7, 1.0


def G(eta, a, p, lam1, lam2, br):
    """The optimality function in numpy (Euclidean or KL)."""
    if br.code == 0:
        d1 = 2.0 * (eta - br.x0)
    else:
        d1 = np.log(eta / br.x0)
    return lam1 * d1 + lam2 * p * eta ** (p - 1.0) - a


def test_closed_forms_euclidean_p2_and_p1():
    eta, info = lpkta_weights(A, GRID, bregman_weight=LAM1, lp_weight=LAM2, eps=0.0)
    # p = 2: η = a / (2 (λ1 + λ2)) for a > 0
    np.testing.assert_allclose(eta[0], np.maximum(A, 0) / (2 * (LAM1 + LAM2)), rtol=1e-13, atol=1e-300)
    # p = 1: η = max(0, (a - λ2) / (2 λ1)); |G| <= 1e-14 · (terms ~ 1) bounds the
    # absolute error by ~1e-14 / (2 λ1) where a - λ2 cancels (a = 1 + 1e-12)
    np.testing.assert_allclose(eta[-1], np.maximum(0.0, (A - LAM2) / (2 * LAM1)), rtol=1e-12, atol=3e-14)
    assert np.all(eta >= 0)


@pytest.mark.parametrize("bregman", [SquaredEuclidean(), SquaredEuclidean(0.3), GeneralizedKL(), GeneralizedKL(0.5)])
@pytest.mark.parametrize("predictor", ["warm", "first", "second"])
def test_newton_solution_satisfies_G_zero(bregman, predictor):
    eta, info = lpkta_weights(A, GRID, bregman_weight=LAM1, lp_weight=LAM2, bregman=bregman, eps=1e-3,
                              predictor=predictor)
    assert np.all(eta >= 0)
    for k, p in enumerate(GRID):
        act = eta[k] > 0
        r = G(eta[k, act], A[act], p, LAM1, LAM2, bregman) / (np.abs(A[act]) + LAM1 + LAM2)
        assert np.max(np.abs(r)) < 1e-12, (k, p)
    assert info["max_G_residual"] < 1e-12
    # a weight is zero exactly when eliminated or at its exact zero
    zero = A <= bregman.zero_gradient(LAM1)
    assert np.all(eta[:, zero] == 0)


def test_kl_matches_bracketed_root():
    br = GeneralizedKL(1.0)
    eta, _ = lpkta_weights(A, GRID, bregman_weight=LAM1, lp_weight=LAM2, bregman=br, eps=0.0)
    for k in (0, 37, 99):
        p = GRID[k]
        for i in (0, 5, 403, 404):
            u = brentq(lambda u: G(np.exp(u), A[i], p, LAM1, LAM2, br), -690.0, 690.0, xtol=1e-14,
                       rtol=1e-15, maxiter=500)
            assert abs(eta[k, i] - np.exp(u)) <= 1e-12 * np.exp(u)


def test_all_predictors_give_the_same_path():
    paths = [lpkta_weights(A, GRID, bregman_weight=LAM1, lp_weight=LAM2, eps=1e-3, predictor=o)[0]
             for o in ("warm", "first", "second")]
    np.testing.assert_allclose(paths[0], paths[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(paths[0], paths[2], rtol=1e-12, atol=1e-15)


def test_path_derivatives_match_finite_differences():
    grid = np.linspace(1.8, 1.2, 7)
    for br in (SquaredEuclidean(), GeneralizedKL()):
        h = 1e-4
        for p in grid:
            e0, _ = lpkta_weights(A[:50], [p + h, p, p - h], bregman_weight=LAM1, lp_weight=LAM2, bregman=br, eps=0.0)
            u = np.log(e0[:, (e0 > 0).all(0)])
            logx0 = np.log(br.x0) if br.x0 > 0 else 0.0
            v = np.array([path_derivatives(ui, p, LAM1, LAM2, br.code, br.x0, logx0) for ui in u[1]])
            fd1 = (u[0] - u[2]) / (2 * h)
            fd2 = (u[0] - 2 * u[1] + u[2]) / h**2
            np.testing.assert_allclose(v[:, 0], fd1, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(v[:, 1], fd2, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("eps", [0.0, 1e-3, 0.2])
@pytest.mark.parametrize("bregman", ["euclidean", "kl"])
def test_theorem2_monotonicity_and_nested_supports(eps, bregman):
    eta, _ = lpkta_weights(A, GRID, bregman_weight=LAM1, lp_weight=LAM2, bregman=bregman, eps=eps)
    for k in range(len(GRID) - 1):
        cur, nxt = eta[k], eta[k + 1]
        low = (cur > 0) & (cur < np.exp(-1))
        high = cur > np.exp(-1.0 / GRID[k])
        assert np.all(nxt[low] <= cur[low] * (1 + 1e-13)), k
        assert np.all(nxt[high] >= cur[high] * (1 - 1e-13)), k
    n_sel = (eta > 0).sum(axis=1)
    assert np.all(np.diff(n_sel) <= 0)
    # once eliminated, never back
    assert np.all((eta[1:] > 0) <= (eta[:-1] > 0))


@pytest.mark.parametrize("bregman", [SquaredEuclidean(), SquaredEuclidean(0.05), GeneralizedKL(0.01)])
def test_lemma1_bound_approximate_vs_exact(bregman):
    eps = 0.02
    exact, _ = lpkta_weights(A, GRID, bregman_weight=LAM1, lp_weight=LAM2, bregman=bregman, eps=0.0)
    approx, info = lpkta_weights(A, GRID, bregman_weight=LAM1, lp_weight=LAM2, bregman=bregman, eps=eps)
    dev = np.array([lpkta_objective(approx[k], A, p, LAM1, LAM2, bregman)
                    - lpkta_objective(exact[k], A, p, LAM1, LAM2, bregman) for k, p in enumerate(GRID)])
    # each objective is a sum of 3 x len(A) terms: its round-off is at most len(A) ε times the sum of
    # their magnitudes (KL near p = 1 makes η ~ x0 exp(a/λ1), objectives ~ 1e16: absolute slack means nothing)
    scale = np.array([LAM1 * np.abs(bregman.value(e)).sum() + LAM2 * np.sum(e**p) + np.abs(e * A).sum()
                      for e, p in zip(exact, GRID)])
    roundoff = 3 * A.size * np.finfo(float).eps * scale
    bound = info["lemma1_bound"]
    assert np.all(dev >= -roundoff)  # the exact path is optimal
    assert np.all(dev <= bound * (1 + 1e-9) + roundoff)
    assert np.all(bound <= info["lemma1_bound_paper"] + 1e-15)
    assert dev.max() > 0  # the approximation did eliminate something
    # where the approximate path keeps a feature, it is on the exact path
    keep = approx > 0
    np.testing.assert_allclose(approx[keep], exact[keep], rtol=1e-12)


@pytest.mark.parametrize("bregman,x0", [("euclidean", 0.0), ("euclidean", 0.2), ("kl", 1.0)])
def test_native_newton_agrees_with_conic_solver(bregman, x0):
    from numkfs.solvers import cross_check
    from numkfs.solvers.native.lpkta_newton import LpKTAProblem

    a = np.concatenate([RNG.uniform(-0.5, 3.0, 25), [0.0]])
    prob = LpKTAProblem(a, 1.37, LAM1, LAM2, bregman=bregman, x0=x0)
    table = cross_check(prob, ["native", "CLARABEL"])
    rows = {r["solver"]: r for r in table.rows}
    assert rows["native"]["status"] == "optimal"
    nat, cla = rows["native"]["objective"], rows["CLARABEL"]["objective"]
    # the native answer is at least as good as the interior-point one, and they agree
    assert nat <= cla + 1e-9 and abs(nat - cla) <= 1e-6 * (1 + abs(nat))


def test_parameter_errors():
    with pytest.raises(ValueError, match="eps"):
        lpkta_weights(A, GRID, bregman_weight=1.0, lp_weight=1.0, eps=0.5)
    with pytest.raises(ValueError, match="decreasing"):
        lpkta_weights(A, [1.0, 2.0], bregman_weight=1.0, lp_weight=1.0)
    with pytest.raises(ValueError, match=">= 1"):
        lpkta_weights(A, [2.0, 0.5], bregman_weight=1.0, lp_weight=1.0)
    with pytest.raises(ValueError, match="bregman_weight"):
        lpkta_weights(A, GRID, bregman_weight=0.0, lp_weight=1.0)
    with pytest.raises(ValueError, match="bregman"):
        lpkta_weights(A, GRID, bregman_weight=1.0, lp_weight=1.0, bregman="hellinger")
    with pytest.raises(ValueError, match="x0"):
        GeneralizedKL(0.0)


def test_lpkta_path_on_data_dense_and_sparse():
    X, y, support = make_madelon_like(300, 60, random_state=1)
    path = lpkta_path(X, y)
    assert path.grid_name == "p" and path.weights.shape == (101, 60)
    a = path.extra["alignments"]
    lam1, lam2 = path.extra["bregman_weight"], path.extra["lp_weight"]
    np.testing.assert_allclose(path.weights[0], np.where(a / (2 * (lam1 + lam2)) >= 1e-3, a / (2 * (lam1 + lam2)), 0), rtol=1e-12)
    for k in (0, 40, 100):
        assert path.objective[k] == pytest.approx(
            lpkta_objective(path.weights[k], a, path.grid[k], lam1, lam2), rel=1e-12, abs=1e-12)
    # the features kept to the end are informative ones
    assert support[path.selected(len(path) - 1)].all()
    assert np.all(np.diff(path.n_selected()) <= 0)
    Xs, ys, sup = make_dorothea_like(200, 3000, density=0.02, n_informative=10, random_state=2)
    ps = lpkta_path(Xs, ys, bregman_weight=1.0, lp_weight=2.0)
    pd = lpkta_path(Xs.toarray(), ys, bregman_weight=1.0, lp_weight=2.0)
    np.testing.assert_allclose(ps.weights, pd.weights, rtol=1e-9, atol=1e-14)


def test_constant_feature_warns_and_gets_zero():
    from numkfs._validation import ConstantFeatureWarning

    X, y, _ = make_madelon_like(100, 6, n_informative=2, n_redundant=1, random_state=5)
    X[:, 2] = 7.0
    with pytest.warns(ConstantFeatureWarning, match=r"\[2\]"):
        path = lpkta_path(X, y)
    assert np.all(path.weights[:, 2] == 0) and path.extra["alignments"][2] == 0


def test_feature_selection_curve_and_plot():
    import matplotlib

    matplotlib.use("Agg")
    X, y, support = make_madelon_like(240, 30, n_redundant=5, random_state=3)
    curve = lpkta_selection_path(X, y, cv=3, n_points=6, spacing="p", random_state=0)
    assert curve.scores.shape == (6, 3)
    assert np.all(np.diff(curve.n_selected) <= 0)
    assert 0 <= curve.baseline <= 1
    # the selected kernel beats the all-features uniform kernel on this XOR problem
    assert curve.accuracy.max() > curve.baseline
    ax = curve.plot()
    assert len(ax.lines) >= 1
    Xte, yte, _ = make_madelon_like(240, 30, n_redundant=5, random_state=3)
    held = lpkta_selection_path(X, y, test=(Xte, yte), n_points=8, baseline=False)
    assert held.scores.shape[1] == 1 and held.baseline is None
    # count spacing: from all features to the fewest, roughly log-spaced
    ns = held.n_selected
    assert ns[0] == held.path.n_selected()[0] and ns[-1] == held.path.n_selected()[-1]
    assert len(ns) <= 10 and np.all(np.diff(ns) < 0)


def test_selector_and_classifier_behaviour():
    X, y, support = make_madelon_like(300, 40, n_redundant=5, random_state=4)
    sel = LpKTASelector(n_features_to_select=8).fit(X, y)
    assert sel.get_support().sum() == 8 == sel.n_features_selected_
    sel_p = LpKTASelector(p=1.5).fit(X, y)
    assert sel_p.p_ == pytest.approx(1.5)
    # nested supports along the path: the point with the smaller p selects a subset
    i, j = sorted([sel.index_, sel_p.index_])
    assert np.all(sel.path_.selected(j) <= sel.path_.selected(i))
    # n_features_to_select: the first point from p = 1 with at least 8 features, its 8 largest η
    ns = sel.path_.n_selected()
    assert ns[sel.index_] >= 8 and (sel.index_ == len(ns) - 1 or ns[sel.index_ + 1] < 8)
    eta = sel.path_.weights[sel.index_]
    assert eta[sel.get_support()].min() >= eta[~sel.get_support()].max()
    clf = LpKTAClassifier().fit(X[:200], y[:200])
    assert support[clf.support_mask_].all()
    assert clf.score(X[200:], y[200:]) > 0.75
    Xs = sp.csr_matrix(X)
    clf_s = LpKTAClassifier().fit(Xs[:200], y[:200])
    np.testing.assert_allclose(clf_s.decision_function(Xs[200:]), clf.decision_function(X[200:]), atol=1e-8)
    cv_sel = LpKTASelectorCV(cv=3, grid=np.linspace(2, 1, 11), scoring="accuracy", random_state=0).fit(X, y)
    assert cv_sel.cv_scores_.shape == (11, 3)
    sizes = cv_sel.path_.cv_fold_sizes  # the mean pools the folds: weighted by their test rows
    mean = cv_sel.cv_scores_ @ sizes / sizes.sum()
    np.testing.assert_allclose(cv_sel.path_.mean_cv_score, mean, rtol=1e-14)
    assert mean[cv_sel.best_index_] >= mean.max() - 1e-12
    # the same scores as the selection curve over every point (one way to cross-validate the kernel model)
    curve = lpkta_selection_path(X, y, cv=3, grid=np.linspace(2, 1, 11), n_points=None, baseline=False,
                                   scoring="accuracy")
    np.testing.assert_array_equal(curve.scores, cv_sel.cv_scores_)
    np.testing.assert_allclose(curve.score, mean, rtol=1e-14)


def test_classifier_cv_chooses_p_then_fits_the_svm():
    """LpKTAClassifierCV: the point of LpKTASelectorCV (hinge loss of the SVM on
    the folds), then LpKTAClassifier's SVM at that point."""
    X, y, support = make_madelon_like(240, 20, n_redundant=4, random_state=6)
    grid = np.linspace(2, 1, 21)
    clf = LpKTAClassifierCV(cv=3, grid=grid, cv_rule="1se").fit(X[:160], y[:160])
    sel = LpKTASelectorCV(cv=3, grid=grid, cv_rule="1se").fit(X[:160], y[:160])
    assert clf.best_index_ == sel.best_index_ and clf.path_.score_name == "neg_hinge_loss"
    np.testing.assert_array_equal(clf.cv_scores_, sel.cv_scores_)
    fixed = LpKTAClassifier(p=clf.p_, grid=grid).fit(X[:160], y[:160])
    np.testing.assert_allclose(clf.decision_function(X[160:]), fixed.decision_function(X[160:]), rtol=1e-12)
    assert support[clf.support_mask_].all() and clf.score(X[160:], y[160:]) > 0.75
    for est in (LpKTASelector(), LpKTAClassifier()):  # the estimators without CV take no cv
        assert not {"cv", "cv_rule", "scoring", "n_jobs", "random_state"} & set(est.get_params())


def test_n_grid_101_is_the_former_default_grid():
    X, y, _ = make_madelon_like(80, 8, n_redundant=2, random_state=7)
    # n_grid = 101 is the former default grid, value for value
    np.testing.assert_array_equal(lpkta_path(X, y, n_grid=101).grid, default_p_grid())
    assert len(lpkta_path(X, y, n_grid=11).grid) == 11


def test_scoring_models_above_the_low_rank_threshold_match_the_exact_ones(monkeypatch):
    """Above LOWRANK_MIN_SAMPLES the kernel models run on low-rank features: kernel
    ridge regression is the exact one (push-through identity) to the factors' tolerance;
    the SVM is LinearSVC's squared-hinge optimum on Φ; LpKTAClassifier keeps O(n R)."""
    import numkfs.estimators._lpkta_scoring as lp
    from sklearn.svm import LinearSVC

    from numkfs.kernels.lowrank import learned_kernel_features

    rng = np.random.default_rng(0)
    X = rng.standard_normal((260, 6))
    f = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
    yr, yc = f + 0.2 * rng.standard_normal(260), np.where(f > np.median(f), 1, -1)
    y3 = np.digitize(f, np.quantile(f, [1 / 3, 2 / 3]))
    path = lpkta_path(X[:200], yr[:200])
    idx = [0, 50, 100]
    args = (X[:200], yr[:200], X[200:], yr[200:], path, idx, "rbf", None, 1.0)
    exact = lp.kernel_model_scores(*args, scoring="neg_mean_squared_error")
    monkeypatch.setattr(lp, "LOWRANK_MIN_SAMPLES", 50)
    low = lp.kernel_model_scores(*args, scoring="neg_mean_squared_error")
    np.testing.assert_allclose(low, exact, rtol=1e-5)
    # the classifier: the decision values of LinearSVC on the same features
    clf = LpKTAClassifier(C=2.0).fit(X[:200], yc[:200])
    assert clf.low_rank_ and isinstance(clf.svm_, lp.LowRankKernelModel)
    eta = clf.feature_weights_[clf.support_mask_]
    Phi, fm = learned_kernel_features(X[:200][:, clf.support_mask_], eta, gamma=clf.gamma_[clf.support_mask_],
                                      traces=clf.traces_[clf.support_mask_])
    s = np.sqrt(200 / np.sum(Phi * Phi))
    ref = LinearSVC(C=2.0, dual=False, intercept_scaling=10.0, tol=1e-12, max_iter=10_000).fit(Phi * s, yc[:200])
    dec = ref.decision_function(fm.transform(X[200:][:, clf.support_mask_]) * s)
    np.testing.assert_allclose(clf.decision_function(X[200:]), dec, atol=1e-5 * np.abs(dec).max())
    assert np.array_equal(clf.predict(X[200:]), np.where(dec > 0, 1, -1))
    # three classes: one-vs-rest decision values, labels from their argmax
    clf3 = LpKTAClassifier().fit(X[:200], y3[:200])
    d3 = clf3.decision_function(X[200:])
    assert d3.shape == (60, 3) and np.array_equal(clf3.predict(X[200:]), clf3.classes_[d3.argmax(1)])
    assert clf3.score(X[200:], y3[200:]) > 0.5  # chance is 1/3


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_alignments_are_refused_by_feature(bad):
    """One NaN alignment made all 101 path points NaN,
    silently; +inf was refused as a bad 'lambda1', -inf accepted.  Each is
    refused, naming the alignments and the features that have them."""
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(30, 4)), columns=["u", "v", "w", "x"])
    y = np.sign(X["u"].to_numpy())
    a = np.array([0.3, bad, 0.1, bad])
    with pytest.raises(ValueError, match=r"lpkta_path: the alignments must be finite; 2 of 4 feature\(s\) "
                                         r"have a non-finite alignment: 'v' \(index 1\): -?(nan|inf), "
                                         r"'x' \(index 3\): -?(nan|inf)\."):
        lpkta_path(X, y, alignments=a)
    with pytest.raises(ValueError, match=r"lpkta_weights: the alignments must be finite; .*index 1: -?(nan|inf)"):
        lpkta_weights(a, [2.0, 1.0], bregman_weight=0.1, lp_weight=0.1)
    # the finite alignments still give a finite path
    path = lpkta_path(X, y, alignments=np.where(np.isfinite(a), a, 0.0))
    assert np.all(np.isfinite(path.weights)) and path.weights[-1, 0] > 0


# --------------------------------------------------------------------------
# numerical trouble


def _reg_data(seed=0, n=20, p=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


@pytest.mark.parametrize("kw", [dict(lp_weight=1e8), dict(eps=0.0), dict(bregman_weight=1e-10),
                                dict(bregman="kl", lp_weight=1e6)],
                         ids=["lp_weight_huge", "eps0", "bregman_weight_tiny", "kl_eta_to_0"])
def test_lpkta_newton_near_eta_zero(kw):
    """η driven to 0 (huge lp weight λ2, no juncture threshold, KL at its boundary): finite, non-negative weights."""
    from numkfs.methods.lpkta import lpkta_path

    X, y = _reg_data(4)
    path = lpkta_path(X, (y > 0).astype(int), grid=np.linspace(2, 1, 21), **kw)
    assert np.all(np.isfinite(path.weights)) and np.all(path.weights >= 0)


# --------------------------------------------------------------------------
# lp-KTA on a regression target is scored as regression


def test_lpkta_regression_target_is_scored_as_regression():
    X, y = load_diabetes(return_X_y=True)
    assert target_type(y) == "regression"  # whole-number floats, 214 distinct values
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no "least populated class has only 1 member"
        res = select(X[:200], y[:200], "lpkta", cv=3, grid=np.linspace(2, 1, 11))
    assert res.task == "regression"
    assert res.score_name == "neg_mean_squared_error"
    assert "R^2" not in res.summary() and "mean squared error" in res.summary()
    # a real regression score: better than predicting the training mean (MSE = var(y) ~ 5900)
    assert -res.score < 0.8 * np.var(y[:200])


def test_lpkta_classification_scores_are_named():
    X, y = load_wine(return_X_y=True)
    sel = numkfs.LpKTASelectorCV(cv=3, grid=np.linspace(2, 1, 6), random_state=0).fit(X, y)
    assert sel.path_.score_name == "neg_hinge_loss"
    acc = numkfs.LpKTASelectorCV(cv=3, grid=np.linspace(2, 1, 6), scoring="accuracy", random_state=0).fit(X, y)
    assert acc.path_.score_name == "accuracy"
    assert np.all((acc.cv_scores_ >= 0) & (acc.cv_scores_ <= 1)) and np.all(sel.cv_scores_ <= 0)


# --------------------------------------------------------------------------
# a requested count is honoured exactly


def test_lpkta_selector_returns_exactly_k():
    X, y = load_wine(return_X_y=True)
    sel = numkfs.LpKTASelector(n_features_to_select=5).fit(X, y)
    assert sel.get_support().sum() == 5 == sel.transform(X).shape[1]
    # the path reports the same chosen support (and its plot says 5, not the point's 7)
    assert np.array_equal(sel.path_.support(), sel.get_support())
    assert sel.path_.selected(sel.best_index_).sum() > 5
    import matplotlib.pyplot as plt

    ax = sel.path_.plot()
    notes = [t.get_text() for t in ax.texts if t.get_gid() == "numkfs-chosen"]
    plt.close(ax.figure)
    assert len(notes) == 1 and "5 features" in notes[0]
