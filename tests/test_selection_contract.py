"""The selection contract: every method turns its path into features the same way.

Regression tests for the defects the contract guards against (each fails
without it) and one parametrised test that runs the contract over every
cross-validating estimator.
"""
import re
import warnings

import numpy as np
import pytest
from conftest import ids, make, methods, names, task_of
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

import numkfs
from numkfs import FeaturePath, select
from numkfs.model_selection import (GridEdgeWarning, choose_index, cross_val_path, cv_mean_se, index_for_count,
                                    make_cv, path_scores, target_type)
from numkfs.solvers import available_solvers

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


def test_path_support_is_the_estimators_support(garrote_data):
    X, y = garrote_data
    est = numkfs.GarroteRegressorCV(n_grid=10, cv=3, solver="CLARABEL" if CONIC else "native",
                                    random_state=0).fit(X, y)
    assert np.array_equal(est.get_support(), est.path_.selected(est.best_index_))
    assert est.path_.chosen_index == est.best_index_
    res = select(X, y, "garrote", cv=3, solver="CLARABEL" if CONIC else "native", n_grid=10)
    assert np.array_equal(res.selected, res.path.selected(res.index))


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


@pytest.mark.parametrize("method,k", [("lpkta", 5), ("garrote", 3)])
def test_select_n_features_exact(method, k):
    if method == "lpkta":
        X, y = load_breast_cancer(return_X_y=True)
        kw = dict(grid=np.linspace(2, 1, 11))
    else:
        X, y = load_diabetes(return_X_y=True)
        kw = dict(n_grid=15)
    res = select(X, y, method, n_features=k, cv=3, **kw)
    assert res.n_selected == k == int(res.selected.sum())
    assert res.cv_rule == "n_features" and res.path.chosen_index == res.index
    assert f"selected {k} of {X.shape[1]}" in res.summary()
    # the k largest weights of the chosen point
    w = np.abs(res.path.weights[res.index])
    assert w[res.selected].min() >= w[~res.selected].max()


def test_index_for_count_warns_when_the_path_cannot_reach_k():
    W = np.array([[0.5, 0.2, 0.0], [0.4, 0.0, 0.0]])
    path = FeaturePath([1.0, 2.0], W)
    with pytest.warns(UserWarning, match="selects at most 2"):
        i, mask = index_for_count(path, 3)
    assert i == 0 and mask.sum() == 2
    tie = FeaturePath([1.0, 2.0], np.array([[0.5, 0.3, 0.3], [0.5, 0.0, 0.0]]))
    with pytest.warns(UserWarning, match="tie"):
        i, mask = index_for_count(tie, 2)
    assert i == 0 and mask.tolist() == [True, True, False]


# --------------------------------------------------------------------------
# the rule: best and 1se, ties to the sparser point whichever way the grid runs


def _toy_path(reverse):
    W = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    S = np.array([[-1.00, -1.10], [-1.00, -1.10], [-1.08, -1.10], [-3.0, -3.1]])
    grid = np.array([0.1, 1.0, 10.0, 100.0])
    if reverse:
        W, S, grid = W[::-1], S[::-1], grid[::-1]
    return FeaturePath(grid, W, cv_scores=S)


@pytest.mark.parametrize("reverse", [False, True])
def test_choose_index_ties_and_1se(reverse):
    path = _toy_path(reverse)
    best, one_se = choose_index(path, "best"), choose_index(path, "1se")
    # points 0 and 1 tie at mean -1.05: the sparser (2 features) wins
    assert path.n_selected()[best] == 2
    # se of the best point's folds = 0.05: mean -1.09 >= -1.05 - 0.05, so the 1-feature point qualifies
    assert path.n_selected()[one_se] == 1
    with pytest.raises(ValueError, match="cv_rule must be one of"):
        choose_index(path, "min")


def test_cv_mean_se_weights_folds_by_size():
    """Closed forms: accuracy weighted by fold size is the pooled accuracy of all held-out rows;
    the standard error is cv.glmnet's, and equal folds give the plain mean and std / sqrt(K)."""
    sizes = np.array([10, 9, 9, 9, 9])
    correct = np.array([[8, 7, 6, 9, 4], [7, 8, 6, 9, 4]])  # the same 34 rows right, in other folds
    S = correct / sizes
    mean, se = cv_mean_se(S, sizes)
    np.testing.assert_allclose(mean, [34 / 46, 34 / 46], rtol=1e-15)
    w = sizes / sizes.sum()
    np.testing.assert_allclose(se, np.sqrt((S - mean[:, None]) ** 2 @ w / 4), rtol=1e-14)
    plain = np.nanmean(S, axis=1)
    assert plain[0] != plain[1]  # the plain mean tells them apart by which fold a row fell in
    m1, s1 = cv_mean_se(S)
    np.testing.assert_allclose(m1, plain, rtol=1e-15)
    np.testing.assert_allclose(s1, np.std(S, axis=1, ddof=1) / np.sqrt(5), rtol=1e-13)
    # a fold that could not score a point is left out of its mean and of its K
    Sn = S.copy()
    Sn[0, 4] = np.nan
    m2, s2 = cv_mean_se(Sn, sizes)
    np.testing.assert_allclose(m2[0], 30 / 37, rtol=1e-15)
    np.testing.assert_allclose(s2[0], np.sqrt((S[0, :4] - 30 / 37) ** 2 @ sizes[:4] / 37 / 3), rtol=1e-14)
    with pytest.raises(ValueError, match="fold_sizes"):
        cv_mean_se(S, [10, 9])


def test_cv_mean_se_at_any_magnitude_of_the_scores():
    """Mean squared errors of a y in units of 1e±100 are of order 1e±200: the standard error must not
    square them into inf or 0.  Scores times 2^k give the same bits times 2^k (k within the normal
    range); times 10^k, the same to a few ulps."""
    S = np.array([[0.31, 0.27, 0.4, 0.29, 0.35], [1.2, 0.9, 1.1, 1.0, 1.3]])
    sizes = [10, 9, 9, 9, 9]
    mean, se = cv_mean_se(S, sizes)
    for k in (-1000, -600, 600, 1000):
        m2, s2 = cv_mean_se(np.ldexp(S, k), sizes)
        np.testing.assert_array_equal(m2, np.ldexp(mean, k))
        np.testing.assert_array_equal(s2, np.ldexp(se, k))
    for e in (-250, -200, 200, 250):
        m2, s2 = cv_mean_se(S * 10.0**e, sizes)
        np.testing.assert_allclose(m2 / 10.0**e, mean, rtol=1e-14)
        np.testing.assert_allclose(s2 / 10.0**e, se, rtol=1e-13)  # the deviations lose a few ulps to the mean


def test_choose_index_pools_unequal_folds():
    """Two points that classify the same rows correctly tie, and the sparser wins; the plain mean
    of fold accuracies would keep the dense point (KNIFE on colon: 725 genes for 12)."""
    sizes = np.array([10, 9, 9, 9, 9])
    S = np.array([[7, 8, 6, 9, 4], [8, 7, 6, 9, 4]]) / sizes
    W = np.array([[1.0] * 6, [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]])
    assert choose_index(FeaturePath([0.0, 1.0], W, cv_scores=S), "best") == 0  # unweighted: 0.7422 > 0.7400
    path = FeaturePath([0.0, 1.0], W, cv_scores=S, cv_fold_sizes=sizes)
    assert choose_index(path, "best") == 1
    with pytest.raises(ValueError, match="cv_fold_sizes"):
        FeaturePath([0.0, 1.0], W, cv_scores=S, cv_fold_sizes=[10, 9])


def test_path_scores_closed_forms():
    y = np.array(["a", "b", "b"])
    D = np.array([[2.0, -1.0], [0.5, 1.0], [-1.0, 3.0]])  # positive means "b"
    classes = np.array(["a", "b"])
    acc = path_scores(y, D, "accuracy", classes=classes)
    np.testing.assert_allclose(acc, [1 / 3, 1.0])  # predictions b, b, a then a, b, b
    hinge = path_scores(y, D, "neg_loss", classes=classes, loss="hinge")
    # margins (-2, 0.5, -1) and (1, 1, 3): hinge losses (3, 0.5, 2) and (0, 0, 0)
    np.testing.assert_allclose(hinge, [-5.5 / 3, 0.0])
    ll = path_scores(y, D, "neg_log_loss", classes=classes)
    np.testing.assert_allclose(ll[1], -np.mean(np.log1p(np.exp(-np.array([1.0, 1.0, 3.0])))))


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


# --------------------------------------------------------------------------
# folds


def test_make_cv_refuses_impossible_folds():
    with pytest.raises(ValueError, match="only 30 rows"):
        make_cv(50, np.zeros(30), classifier=False)
    with pytest.raises(ValueError, match=r"rarest class \(1\) has only 2 row\(s\): use at most 2 folds"):
        make_cv(3, np.array([0] * 10 + [1] * 2), classifier=True)
    with pytest.raises(ValueError, match=r"rarest class \('b'\) has only 1 row\(s\): each class needs 2 rows or more"):
        make_cv(2, np.array(["a"] * 10 + ["b"]), classifier=True)  # no number of folds would do
    with pytest.raises(ValueError, match="splitter"):
        make_cv("bogus", np.zeros(30), classifier=False)


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
# one contract over every CV estimator


def test_the_registry_holds_every_public_estimator():
    """tests/conftest.py's registry, which every estimator list of the tests comes from."""
    import numkfs.estimators as E
    from conftest import ESTIMATORS, VARIANTS, checked

    assert sorted(ESTIMATORS) == sorted(E.__all__)
    assert all(type(est) is getattr(E, name) for name, est in ESTIMATORS.items())
    every = checked("")
    assert len(every) == len(ESTIMATORS) + len(VARIANTS) and len(set(ids(every))) == len(every)


@pytest.fixture(scope="module")
def cv_data():
    from numkfs.datasets import make_sinusoid

    Xr, yr, _ = make_sinusoid(n_samples=48, random_state=0)
    Xc, yc = load_breast_cancer(return_X_y=True)
    return {"regression": (Xr, yr), "classification": (Xc[::8, :8], yc[::8])}


CV_ESTIMATORS = [make(name, cv=3) for name in names(cv=True)]


# The registry's grids are tiny: the chosen point may sit at a grid's edge (GridEdgeWarning,
# seen for COSSO's M and L1KR's D), which does not bear on the contract; any other warning is shown.
@pytest.mark.filterwarnings("ignore::numkfs.model_selection.GridEdgeWarning")
@pytest.mark.parametrize("estimator", CV_ESTIMATORS, ids=ids(CV_ESTIMATORS))
def test_contract_over_every_cv_estimator(estimator, cv_data):
    name = type(estimator).__name__
    X, y = cv_data[task_of(name)]
    if name.startswith("L1KR"):
        X = X[:, :5]  # the slowest path: fewer features
    est = clone(estimator).set_params(cv_rule="best").fit(X, y)
    sparse = clone(estimator).set_params(cv_rule="1se").fit(X, y)
    path = est.path_
    n_points = path.n_points
    # the same fitted attributes everywhere
    for attr in ("path_", "best_index_", "cv_scores_", "feature_weights_", "n_features_selected_", "converged_"):
        assert hasattr(est, attr), (name, attr)
    assert est.cv_scores_.shape == path.cv_scores.shape and est.cv_scores_.shape[0] == n_points
    assert est.cv_scores_.shape[1] == 3
    assert path.cv_rule == "best" and sparse.path_.cv_rule == "1se"
    assert path.score_name in ("neg_mean_squared_error", "neg_log_loss", "neg_hinge_loss", "accuracy") or \
        path.score_name.startswith("neg_")
    # the chosen point is the rule's, and the support is the path's support there
    assert est.best_index_ == path.chosen_index == choose_index(path, "best")
    assert sparse.best_index_ == choose_index(sparse.path_, "1se")
    assert np.array_equal(est.get_support(), path.selected(est.best_index_))
    assert est.n_features_selected_ == int(est.get_support().sum())
    # 1se never selects more than best, and its mean score is within one SE of the best
    assert sparse.n_features_selected_ <= est.n_features_selected_
    # the folds' test sizes, the weights of the mean score, are those of the folds that were run
    splits = make_cv(3, y, classifier=task_of(name) == "classification").split(X, y)
    np.testing.assert_array_equal(path.cv_fold_sizes, [len(te) for _, te in splits])
    mean = path.mean_cv_score
    assert mean[est.best_index_] == pytest.approx(np.nanmax(mean))
    assert np.size(est.converged_) in (1, n_points)


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


def test_cv_variants_replace_cv_inside_fixed_point_estimators():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    with pytest.raises(TypeError, match="cv"):  # COSSORegressor fits one budget; COSSORegressorCV chooses it
        numkfs.COSSORegressor(cv=3).fit(X, y)
    Xw, yw = load_wine(return_X_y=True)
    for cls in (numkfs.LpKTASelector, numkfs.LpKTAClassifier):  # their CV variants: LpKTASelectorCV, LpKTAClassifierCV
        with pytest.raises(TypeError, match="cv"):
            cls(cv=3).fit(Xw, yw)


# --------------------------------------------------------------------------
# select()'s rule when none is given: the method's entry of DEFAULT_CV_RULES


def test_default_cv_rules_cover_every_method_with_a_known_rule():
    from numkfs.model_selection import DEFAULT_CV_RULES, SCORINGS, SELECTION_RULES, default_cv_rule
    from numkfs.selection import METHODS

    assert set(DEFAULT_CV_RULES) == set(METHODS) == set(SCORINGS)
    assert set(DEFAULT_CV_RULES.values()) <= set(SELECTION_RULES)
    assert all(default_cv_rule(m.upper()) == r for m, r in DEFAULT_CV_RULES.items())
    assert default_cv_rule("garrote", "best") == "best"
    with pytest.raises(ValueError, match="cv_rule must be one of"):
        select(np.eye(4), np.arange(4.0), "garrote", cv_rule="min")


def test_select_without_a_rule_uses_the_methods_declared_rule():
    # the KNIFE sinusoid (5 true features of 20): COSSO's best CV point on its path's own fits
    # (relax=False) keeps noise features, its 1se point (the declared default) far fewer; select() with
    # no rule must be the 1se fit exactly
    from numkfs.datasets import make_sinusoid
    from numkfs.model_selection import DEFAULT_CV_RULES

    X, y, truth = make_sinusoid(n_samples=100, n_features=20, random_state=0)
    assert DEFAULT_CV_RULES["cosso"] == "1se"
    default = select(X, y, "cosso", relax=False)
    one_se = select(X, y, "cosso", cv_rule="1se", relax=False)
    best = select(X, y, "cosso", cv_rule="best", relax=False)
    assert default.cv_rule == default.path.cv_rule == "1se"
    assert default.index == one_se.index and np.array_equal(default.selected, one_se.selected)
    np.testing.assert_array_equal(default.weights, one_se.weights)
    # the two rules read the same path and scores, and differ here
    np.testing.assert_array_equal(best.path.cv_scores, one_se.path.cv_scores)
    assert best.index == choose_index(best.path, "best") and one_se.index == choose_index(best.path, "1se")
    assert default.n_selected < best.n_selected
    # the 1se point: within one standard error of the best mean score, and it keeps every true feature
    S = best.path.cv_scores
    mean, se = np.nanmean(S, axis=1), np.nanstd(S, axis=1, ddof=1) / np.sqrt(S.shape[1])
    assert mean[default.index] >= mean[best.index] - se[best.index]
    assert default.selected[truth].all()
    # KNIFE's declared rule for selection is "1pct" (its estimators keep "best", the rule for
    # prediction): select() with no rule fits with it, and its point is the sparsest whose mean CV loss
    # is within 1 % of the best; here it keeps exactly the five true features
    from numkfs import KNIFERegressorCV

    assert DEFAULT_CV_RULES["knife"] == "1pct" and KNIFERegressorCV().cv_rule == "best"
    knife = select(X, y)
    assert knife.method == "knife" and knife.cv_rule == knife.path.cv_rule == "1pct"
    assert knife.index == knife.estimator.best_index_ == choose_index(knife.path, "1pct")
    mean = knife.path.mean_cv_score  # minus the MSE
    within = mean >= mean.max() - 0.01 * abs(mean.max())
    assert within[knife.index] and not np.any(within & (knife.path.n_selected() < knife.n_selected))
    np.testing.assert_array_equal(knife.selected, truth)
    # the garrote's "2pct", the sparsest point within 2 % of the best CV loss (an estimator rule since
    # select() fits GarroteRegressorCV with it)
    assert DEFAULT_CV_RULES["garrote"] == "2pct"
    garrote = select(X, y, "garrote")
    mean = garrote.path.mean_cv_score
    assert garrote.cv_rule == "2pct" and mean[garrote.index] >= 1.02 * mean.max()  # scores are minus the MSE
    assert not np.any((mean >= 1.02 * mean.max()) & (garrote.path.n_selected() < garrote.n_selected))
    # with its relaxed CV (the default) the garrote's best point is exactly the truth here
    np.testing.assert_array_equal(garrote.selected, truth)


def test_cli_cv_rule_default_is_the_methods_rule(tmp_path):
    import json

    from numkfs.cli import build_parser, main

    assert build_parser().parse_args(["select", "ozone"]).cv_rule is None
    js = tmp_path / "out.json"
    # COSSO's declared rule, "1se", is not the estimators' default
    assert main(["select", "ozone", "--method", "cosso", "--cv", "3", "--json", str(js), "-q"]) == 0
    res = json.loads(js.read_text())
    assert res["cv_rule"] == res["parameters"]["cv_rule"] == "1se"


# --------------------------------------------------------------------------
# classification of a continuous target: one refusal, whatever the route


def _continuous_target(n=40):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 4))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


CONTINUOUS = re.escape("y looks continuous (40 distinct real values in 40 samples); pass class labels.")


@pytest.mark.parametrize("route", [{}, {"fdr": 0.2}, {"stability": True}], ids=["cv", "fdr", "stability"])
@pytest.mark.parametrize("method", methods(task="classification"))
def test_select_refuses_classification_of_a_continuous_target_by_every_route(method, route):
    # with fdr, KNIFE and lp-KTA fitted 40 one-row classes and selected 0 features; the CV route gave
    # scikit-learn's "Unknown label type", stability selection "subsamples of 0 rows"
    X, y = _continuous_target()
    with pytest.raises(ValueError, match="^select: " + CONTINUOUS + "$"):
        select(X, y, method, task="classification", **route)


@pytest.mark.parametrize("name", [n for n in names() if "Classifier" in n or n.startswith("NMMKL")])
def test_classifiers_refuse_a_continuous_target_in_numkfs_words(name):
    X, y = _continuous_target()
    with pytest.raises(ValueError, match=f"^{name}: " + CONTINUOUS + "$"):
        make(name).fit(X, y)


@pytest.mark.parametrize("selector", ["StabilitySelection", "KnockoffFilter"])
def test_resampling_selectors_refuse_a_continuous_target_for_classification(selector):
    X, y = _continuous_target()
    with pytest.raises(ValueError, match=f"^{selector}: " + CONTINUOUS + "$"):
        getattr(numkfs, selector)("knife", task="classification").fit(X, y)


def test_whole_number_codes_stay_classes_for_classification():
    X, _ = _continuous_target(36)
    y = (np.arange(36) % 12).astype(float)  # 12 class codes: more than MAX_FLOAT_CLASSES, still classes
    from numkfs._targets import task_target

    assert task_target(y, "classification").dtype.kind == "i" and target_type(y) == "regression"


def test_target_type_of_values_beyond_int64_is_silent():
    # numpy's "invalid value encountered in cast" leaked from type_of_target for |y| > 9.2e18
    y = np.linspace(-1.0, 1.0, 30) * 1e19
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert target_type(y) == "regression" and target_type(y[:2]) == "regression"


# --------------------------------------------------------------------------
# select()'s own parameters, checked by its constraint table


@pytest.mark.parametrize("kw,message", [
    (dict(n_features=1.5), "The 'n_features' parameter of select must be None or an int in the range [1, inf). "
                           "Got 1.5 instead."),
    (dict(n_features="2"), "The 'n_features' parameter of select must be None or an int"),
    (dict(n_features=True), "The 'n_features' parameter of select must be None or an int"),
    (dict(stability="no"), "The 'stability' parameter of select must be a bool. Got 'no' instead."),
    (dict(verbose="x"), "The 'verbose' parameter of select must be a bool. Got 'x' instead."),
    (dict(feature_names="abcd"), "The 'feature_names' parameter of select must be None or a sequence of names"),
    (dict(feature_names=["a", "b", "a", "c"]), "select: duplicate feature name(s) 'a' in feature_names; rename"),
    (dict(task="regresion"), "The 'task' parameter of select must be None or a str among"),
    (dict(fdr=1.0), "The 'fdr' parameter of select must be None or a float in the range (0.0, 1.0)"),
    (dict(method=None), "unknown method None; choose one of knife, "),
    (dict(method=3), "unknown method 3; choose one of knife, "),
], ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None)
def test_select_refuses_nonsense_in_its_own_parameters(garrote_data, kw, message):
    # n_features=1.5 kept 1, "2" kept 2, stability="no" ran stability selection, "abcd" became four names,
    # duplicate names were accepted, select(X, y, None) was an AttributeError
    X, y = garrote_data
    kw = {"method": "garrote", **kw}
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        select(X, y, kw.pop("method"), **kw)


@pytest.mark.parametrize("method,kw", [("lpkta", {"lambda1": 0.1}), ("garrote", {"bogus": 1}),
                                       ("nmmkl", {"n_features_to_select": 2})])
def test_select_names_a_keyword_the_method_does_not_take(method, kw):
    # lp-KTA's TypeError named its private class _LpKTAPathCV
    X, y = _continuous_target()
    if method == "nmmkl":
        y = (y > 0).astype(int)
    n_features = 2 if method == "nmmkl" else None
    with pytest.raises(TypeError, match=f"^select: method '{method}' has no parameter '{next(iter(kw))}'; its "
                                        "keyword arguments are ") as err:
        select(X, y, method, n_features=n_features, **kw)
    assert "_" + "LpKTA" not in str(err.value) and "'cv'" not in str(err.value)


def test_random_state_does_not_shuffle_integer_folds_as_documented(garrote_data):
    # the docstring said random_state "seeds the folds"; integer folds are contiguous and unshuffled
    X, y = garrote_data
    a, b = select(X, y, "garrote", cv=3, random_state=0), select(X, y, "garrote", cv=3, random_state=7)
    np.testing.assert_array_equal(a.path.cv_scores, b.path.cv_scores)
    doc = " ".join(select.__doc__.split())
    assert "Seeds the folds" not in doc and "an int gives contiguous, unshuffled folds" in doc
    assert "Not the folds of an integer ``cv``: they are unshuffled" in doc
