"""The KNIFE CV estimators.

* ``cv_max_samples``: λ2 chosen on a subsample's path (λ1 and the grid scaled to the
  subsample's size), the chosen point refitted on every row with λ2 scaled back (the CV at
  10^6 rows).
* The low end of the default grid is refined when the CV chose λ2 = 0 and the first positive
  point scored more than one standard error worse (``low_end_grid`` decides,
  ``_KNIFEPathCV._cv_refine``: a second pass over λ2 = 0 and the inserted points, spliced into
  the first path); the first point of a ``gamma="auto"`` path is the single fit at λ2 = 0 (its
  scale settled on its own support); ``lambda_min_ratio="auto"`` follows the number of rows.
* The folds are walked in stages and stop once no later point can be chosen: a fold's path
  walked in stages (``KNIFEGridWalk``) is ``knife_path(grid=...)`` point for point; the CV with
  ``early_stopping`` chooses the point the CV over the whole grid chooses, its path is the whole
  path's first points, and it stops at the first stage end where ``stop_early`` says so.  The
  full-data path on the default grid is walked only as far (``knife_path``'s ``stop``): its
  points are the unstopped path's first ones.
"""
import importlib
import re

import numpy as np
import pytest
from sklearn.datasets import make_classification

from numkfs import KNIFEClassifierCV, KNIFERegressorCV
from numkfs.datasets import make_orange, make_sinusoid
from numkfs.estimators._cv import EARLY_STOP_POINTS, stop_early
from numkfs.estimators._knife_cv import LOW_END_FRACTIONS, low_end_grid
from numkfs.kernels import weighted_kernel
from numkfs.losses import get_loss
from numkfs.methods.knife import KNIFEGridWalk, knife, knife_objective, knife_ovr_paths, knife_path
from numkfs.model_selection import refine_walk
from numkfs.paths import FeaturePath


N, M = 240, 120


@pytest.fixture(scope="module")
def sinusoid():
    return make_sinusoid(n_samples=N, n_features=8, random_state=0)


@pytest.fixture(scope="module")
def fitted(sinusoid):
    X, y, _ = sinusoid
    X0 = X.copy()
    est = KNIFERegressorCV(n_grid=6, cv=3, cv_max_samples=M, random_state=0).fit(X, y)
    assert np.array_equal(X, X0)  # the input is not modified
    return est


def test_chosen_lambda2_is_scaled_back_to_every_row(fitted):
    est = fitted
    assert est.cv_n_samples_ == M
    # the subsample's path is the full problem per row: λ1 and λ2 times n_sub / n
    assert est.path_.extra["params"]["lambda1"] == pytest.approx(est.lambda1 * M / N, rel=1e-15)
    assert est.lambda2_ == pytest.approx(est.path_.grid[est.best_index_] * N / M, rel=1e-14)
    assert est.cv_scores_.shape == (est.path_.n_points, 3)


def test_final_model_is_fitted_on_every_row(fitted, sinusoid):
    """The stored objective is KNIFE's objective on all n rows at the scaled
    λ2 and the full λ1, and α is the exact ridge solution there."""
    est = fitted
    X, y, _ = sinusoid
    assert est.X_fit_.shape == (N, X.shape[1]) and est.alpha_.shape == (N,)
    Xs, yc = est.scaler_.transform(X), y - y.mean()
    assert est.intercept_ == pytest.approx(y.mean(), rel=1e-15)
    f = knife_objective(Xs, yc, est.feature_weights_, est.alpha_, lambda1=est.lambda1, lambda2=est.lambda2_,
                        gamma=est.gamma_)
    assert est.objective_ == pytest.approx(f, rel=1e-10)
    K = weighted_kernel(Xs, est.feature_weights_, "rbf", gamma=est.gamma_)
    g = get_loss("squared").gradient(yc, K @ est.alpha_)
    # α-step stationarity g + 2 λ1 α = 0; cond(K + λ1 I) <= 1 + n / λ1 times machine epsilon
    assert np.max(np.abs(g + 2 * est.lambda1 * est.alpha_)) < (1 + N / est.lambda1) * 1e-13 * np.max(np.abs(g))
    pred = est.predict(X)
    assert pred == pytest.approx(K @ est.alpha_ + y.mean(), rel=1e-12, abs=1e-12 * np.max(np.abs(pred)))


def test_finds_the_sinusoid_features_from_half_the_rows(fitted, sinusoid):
    assert np.array_equal(fitted.get_support(), sinusoid[2])


def test_enough_rows_is_the_ordinary_cv(sinusoid):
    X, y, _ = sinusoid
    a = KNIFERegressorCV(n_grid=5, cv=3, random_state=0).fit(X, y)
    b = KNIFERegressorCV(n_grid=5, cv=3, cv_max_samples=N, random_state=0).fit(X, y)
    assert a.cv_n_samples_ == b.cv_n_samples_ == N
    assert a.lambda2_ == b.lambda2_
    np.testing.assert_array_equal(a.feature_weights_, b.feature_weights_)
    np.testing.assert_array_equal(a.alpha_, b.alpha_)


def test_a_grid_of_your_own_is_in_the_full_data_scale(sinusoid):
    X, y, _ = sinusoid
    grid = np.array([0.0, 5.0, 50.0, 500.0])
    est = KNIFERegressorCV(grid=grid, cv=3, cv_max_samples=M, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.path_.grid, grid * M / N, rtol=1e-15)
    assert np.min(np.abs(grid - est.lambda2_)) <= 1e-14 * grid[-1]


def test_classifier_subsample_is_stratified_and_refitted():
    X, y, _ = make_orange(n_samples=300, n_noise=3, random_state=0)
    y3 = np.digitize(X[:, 0], [-0.6, 0.6])  # three classes from every row
    est = KNIFEClassifierCV(n_grid=5, cv=3, cv_max_samples=150, random_state=0).fit(X, y3)
    assert est.cv_n_samples_ == 150
    np.testing.assert_array_equal(est.classes_, [0, 1, 2])
    assert est.alpha_.shape == (3, 300) and est.decision_function(X).shape == (300, 3)
    Xs = est.scaler_.transform(X)
    gammas = np.broadcast_to(est.gamma_, (3,))
    for k, c in enumerate(est.classes_):
        yk = np.where(y3 == c, 1.0, -1.0)
        f = knife_objective(Xs, yk, est.class_feature_weights_[k], est.alpha_[k], est.intercept_[k],
                            loss="squared_hinge", lambda1=est.lambda1, lambda2=est.lambda2_, gamma=gammas[k])
        assert est.objective_[k] == pytest.approx(f, rel=1e-10)
    assert est.lambda2_ == pytest.approx(est.path_.grid[est.best_index_] * 2, rel=1e-14)


@pytest.mark.parametrize("value", [1, 0, 2.5])
def test_bad_cv_max_samples_is_named(sinusoid, value):
    X, y, _ = sinusoid
    with pytest.raises((ValueError, TypeError), match="cv_max_samples"):
        KNIFERegressorCV(cv_max_samples=value).fit(X, y)


def test_more_landmarks_than_subsampled_rows_is_named(sinusoid):
    X, y, _ = sinusoid
    with pytest.raises(ValueError, match="n_components=100.*cv_max_samples=50"):
        KNIFERegressorCV(approximation="nystroem", n_components=100, cv_max_samples=50).fit(X, y)


def test_classifier_auto_subsamples_the_exact_kernel_only(monkeypatch):
    """cv_max_samples="auto" (the classifier's default): with more than two classes on
    the exact kernel the CV of cv_max_samples=AUTO_CV_MAX_SAMPLES_CLASSIFICATION, point for point; at
    or below that many rows, through landmarks, and for two classes, the CV on every row."""
    import numkfs.estimators._knife_cv as kcv

    X, y2, _ = make_orange(n_samples=120, n_noise=2, random_state=1)
    y = np.digitize(X[:, 0], [-0.6, 0.6])  # three classes
    monkeypatch.setattr(kcv, "AUTO_CV_MAX_SAMPLES_CLASSIFICATION", 80)
    kw = dict(n_grid=4, cv=3, random_state=0)
    auto = KNIFEClassifierCV(**kw).fit(X, y)
    assert auto.get_params()["cv_max_samples"] == "auto" and auto.cv_n_samples_ == 80
    given = KNIFEClassifierCV(cv_max_samples=80, **kw).fit(X, y)
    assert auto.lambda2_ == given.lambda2_
    np.testing.assert_array_equal(auto.cv_scores_, given.cv_scores_)
    np.testing.assert_array_equal(auto.alpha_, given.alpha_)
    monkeypatch.setattr(kcv, "AUTO_CV_MAX_SAMPLES_CLASSIFICATION", 120)
    every = KNIFEClassifierCV(**kw).fit(X, y)
    none = KNIFEClassifierCV(cv_max_samples=None, **kw).fit(X, y)
    assert every.cv_n_samples_ == none.cv_n_samples_ == 120
    np.testing.assert_array_equal(every.alpha_, none.alpha_)
    monkeypatch.setattr(kcv, "AUTO_CV_MAX_SAMPLES_CLASSIFICATION", 80)
    landmarks = KNIFEClassifierCV(approximation="nystroem", n_components=30, **kw).fit(X, y)
    assert landmarks.cv_n_samples_ == 120
    binary = KNIFEClassifierCV(**kw).fit(X, y2)
    assert binary.cv_n_samples_ == 120


def test_classifier_cv_max_samples_bad_string_is_named():
    X, y, _ = make_orange(n_samples=40, n_noise=1, random_state=0)
    with pytest.raises((ValueError, TypeError), match="cv_max_samples.*'auto'"):
        KNIFEClassifierCV(cv_max_samples="all").fit(X, y)


def test_auto_subsamples_above_the_threshold_like_the_explicit_count(sinusoid, monkeypatch):
    """``cv_max_samples="auto"`` (the default) is every row up to AUTO_CV_MAX_SAMPLES and exactly
    ``cv_max_samples=AUTO_CV_MAX_SAMPLES`` above it (here the threshold lowered to M so that the
    test runs on 240 rows): the same subsample, λ2 and weights, bit for bit."""
    import numkfs.estimators._knife_cv as knife_cv

    X, y, _ = sinusoid
    assert KNIFERegressorCV().cv_max_samples == "auto"
    monkeypatch.setattr(knife_cv, "AUTO_CV_MAX_SAMPLES", M)
    auto = KNIFERegressorCV(n_grid=6, cv=3, random_state=0).fit(X, y)
    explicit = KNIFERegressorCV(n_grid=6, cv=3, cv_max_samples=M, random_state=0).fit(X, y)
    assert auto.cv_n_samples_ == explicit.cv_n_samples_ == M
    assert auto.lambda2_ == explicit.lambda2_
    np.testing.assert_array_equal(auto.feature_weights_, explicit.feature_weights_)
    np.testing.assert_array_equal(auto.alpha_, explicit.alpha_)
    # at or below the threshold: every row, the ordinary CV
    monkeypatch.setattr(knife_cv, "AUTO_CV_MAX_SAMPLES", N)
    every = KNIFERegressorCV(n_grid=6, cv=3, random_state=0).fit(X, y)
    plain = KNIFERegressorCV(n_grid=6, cv=3, cv_max_samples=None, random_state=0).fit(X, y)
    assert every.cv_n_samples_ == plain.cv_n_samples_ == N
    assert every.lambda2_ == plain.lambda2_
    np.testing.assert_array_equal(every.alpha_, plain.alpha_)


def test_auto_never_subsamples_below_the_landmarks(sinusoid, monkeypatch):
    """With more landmarks than half the threshold, "auto" keeps twice as many rows as landmarks
    (every fold's training part holds at least half of them) rather than failing as an explicit
    count below the landmarks does."""
    import numkfs.estimators._knife_cv as knife_cv

    X, y, _ = sinusoid
    monkeypatch.setattr(knife_cv, "AUTO_CV_MAX_SAMPLES", 50)
    est = KNIFERegressorCV(approximation="nystroem", n_components=100, n_grid=4, cv=3, random_state=0).fit(X, y)
    assert est.cv_n_samples_ == 200


def test_select_reads_the_support_of_the_model_fitted_on_every_row():
    """``select()`` reports the support of the model it returns (fitted on
    every row), not the subsample path's point: on this seed the best point
    keeps two noise features (x5, x13) which the fit on all 240 rows drops
    (the 10^5-row size run reported two such features; "best"
    is given, since select()'s own rule for KNIFE may choose a sparser point)."""
    import numkfs

    X, y, truth = make_sinusoid(n_samples=240, n_features=20, random_state=0)
    res = numkfs.select(X, y, "knife", cv_rule="best", cv_max_samples=120, n_grid=10, cv=3, random_state=0)
    est = res.estimator
    assert est.cv_n_samples_ == 120
    subsample_point = est.path_.selected(est.best_index_)
    assert np.flatnonzero(subsample_point & ~truth).size > 0  # what the test guards against
    assert np.array_equal(res.selected, est.get_support())
    assert np.array_equal(res.selected, truth)
    assert np.all(res.weights[~res.selected] == 0.0)


def test_classifier_auto_grid_is_coarser_on_the_auto_subsample_only(monkeypatch):
    """n_grid="auto" (the classifier's default): AUTO_N_GRID_CLASSIFICATION points when
    cv_max_samples="auto" takes its subsample of one-vs-rest problems (the CV of that n_grid, point
    for point), else 100: every row, a count given, landmarks, two classes."""
    import numkfs.estimators._knife_cv as kcv

    X, y2, _ = make_orange(n_samples=120, n_noise=2, random_state=1)
    y = np.digitize(X[:, 0], [-0.6, 0.6])  # three classes
    monkeypatch.setattr(kcv, "AUTO_CV_MAX_SAMPLES_CLASSIFICATION", 80)
    monkeypatch.setattr(kcv, "AUTO_N_GRID_CLASSIFICATION", 5)
    auto = KNIFEClassifierCV(cv=3, random_state=0).fit(X, y)
    given = KNIFEClassifierCV(n_grid=5, cv=3, random_state=0).fit(X, y)
    assert auto.get_params()["n_grid"] == "auto" and auto.cv_n_samples_ == 80
    np.testing.assert_array_equal(auto.path_.grid, given.path_.grid)
    np.testing.assert_array_equal(auto.cv_scores_, given.cv_scores_)
    np.testing.assert_array_equal(auto.alpha_, given.alpha_)
    seen, real = [], kcv.cv_data

    class Seen(Exception):
        pass

    def spy(*args, **kw):
        seen.append(kw["n_grid"])
        raise Seen  # the grid's size is all this test needs

    monkeypatch.setattr(kcv, "cv_data", spy)
    for kw, yy in [({}, y), (dict(cv_max_samples=None), y), (dict(cv_max_samples=80), y),
                   (dict(approximation="nystroem", n_components=30), y), ({}, y2)]:
        with pytest.raises(Seen):
            KNIFEClassifierCV(cv=3, random_state=0, **kw).fit(X, yy)
    assert seen == [5, 100, 100, 100, 100]
    monkeypatch.setattr(kcv, "cv_data", real)
    with pytest.raises((ValueError, TypeError), match="n_grid"):
        KNIFEClassifierCV(n_grid="coarse").fit(X, y)


def _rare_class_data(rare=5):
    r = np.random.default_rng(1)
    X = r.standard_normal((620, 4))
    y = np.digitize(X[:, 0], [-0.6, 0.6])
    y[:rare] = 3
    return X, y


def test_classifier_auto_subsample_keeps_the_rows_of_a_rare_class():
    # the 500-row stratified draw kept 4 of the 5 rows of class 3, and the 5 folds refused "the rarest class
    # (3) has only 4 row(s)", the subsample's count quoted as the data's; every row fitted
    X, y = _rare_class_data()
    est = KNIFEClassifierCV(n_grid=3, max_iter=20, random_state=0).fit(X, y)
    assert est.cv_n_samples_ == 500 and est.alpha_.shape == (4, 620)
    idx = est._class_subsample(y, 500, 7)
    assert idx.size == 500 and np.all(np.diff(idx) > 0) and np.sum(y[idx] == 3) == 5


def test_classifier_subsample_is_the_stratified_draw_when_no_class_is_short():
    from sklearn.model_selection import train_test_split

    X, y = _rare_class_data(rare=40)
    est = KNIFEClassifierCV(cv=5)
    expected = np.sort(train_test_split(np.arange(620), train_size=500, random_state=7, stratify=y)[0])
    np.testing.assert_array_equal(est._class_subsample(y, 500, 7), expected)


def test_classifier_subsample_of_a_one_row_class_reaches_the_folds_check():
    # a class of one row gave scikit-learn's train_test_split message; now the folds say what is wrong
    X, y = _rare_class_data(rare=1)
    with pytest.raises(ValueError, match=r"^cv=5 stratified folds but the rarest class \(3\) has only 1 row\(s\)"):
        KNIFEClassifierCV(n_grid=3, max_iter=20).fit(X, y)


def test_classifier_cv_max_samples_too_small_for_the_folds_is_named():
    # cv_max_samples=2 with 3 classes: scikit-learn's "The train_size = 2 should be greater or equal to the
    # number of classes = 3"
    X, y = _rare_class_data(rare=0)
    with pytest.raises(ValueError, match=re.escape("KNIFEClassifierCV: cv_max_samples=2 rows cannot hold the cv=5 "
                                                   "stratified folds of 3 classes (5 row(s) of each, or every row "
                                                   "of a smaller class); give cv_max_samples=15 or more")):
        KNIFEClassifierCV(n_grid=3, cv_max_samples=2).fit(X, y)
    assert KNIFEClassifierCV(cv=5, cv_max_samples=15)._class_subsample(y, 15, 0).size == 15


def _first_pass(grid):
    return FeaturePath(grid=np.asarray(grid, float), weights=np.ones((len(grid), 3)), grid_name="lambda2")


@pytest.mark.parametrize("drop, refined", [(1.0, True), (0.01, False)])
def test_low_end_is_inserted_only_after_a_steep_drop(drop, refined):
    # fold scores at lambda2 = 0 have mean 0 and a standard error below 0.1; the next point is `drop` lower
    scores = np.array([[0.1, 0.0, -0.1], [0.1 - drop, -drop, -0.1 - drop], [-5.0, -5.0, -5.0]])
    path = _first_pass([0.0, 10.0, 100.0])
    se = FeaturePath(grid=path.grid, weights=path.weights, cv_scores=scores).cv_standard_error[0]
    assert (drop > se) == refined
    grid = low_end_grid(path, scores, None, "best")
    if refined:
        np.testing.assert_array_equal(grid, np.r_[0.0, 10.0 * LOW_END_FRACTIONS])  # the low end only
    else:
        assert grid is None
    assert path.cv_scores is None and path.chosen_index is None  # the rule consulted, nothing recorded


def test_low_end_leaves_other_choices_alone():
    steep = np.array([[0.1, 0.0, -0.1], [-3.0, -3.0, -3.0], [-5.0, -5.0, -5.0]])
    assert low_end_grid(_first_pass([0.0, 10.0, 100.0]), steep[[1, 0, 2]], None, "best") is None  # chose 10
    assert low_end_grid(_first_pass([1.0, 10.0, 100.0]), steep, None, "best") is None  # no lambda2 = 0
    # the rule's choice decides: a steep drop at 10, and 100 (sparser) within one standard error of lambda2 = 0
    path = FeaturePath(grid=np.array([0.0, 10.0, 100.0]), weights=np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0],
                                                                           [1.0, 0.0, 0.0]]), grid_name="lambda2")
    scores = np.array([[0.1, 0.0, -0.1], [-1.0, -1.0, -1.0], [0.0, -0.05, -0.1]])
    np.testing.assert_array_equal(low_end_grid(path, scores, None, "best"), np.r_[0.0, 10.0 * LOW_END_FRACTIONS])
    assert low_end_grid(path, scores, None, "1se") is None  # "1se" chose 100


def test_refine_walks_the_low_end_once_and_leaves_user_grids_alone():
    X, y, _ = make_sinusoid(90, n_features=6, random_state=0)
    est = KNIFERegressorCV(cv=3, n_grid=4, lambda_min_ratio=0.3, random_state=0)
    est._validate_params()
    data = est._cv_data(X, y)
    est._cv_outer(data)
    path, scores, sizes = est._cv_pass(data, None)
    refined = est._cv_refine(data, None, path, scores, sizes)
    assert refined is not None and len(est._cv_problem_paths) == 3  # the first pass, the low end, the spliced
    assert refined[0].n_points == path.n_points + LOW_END_FRACTIONS.size
    np.testing.assert_array_equal(refined[1][1 + LOW_END_FRACTIONS.size:], scores[1:])
    # the same first pass on a grid of your own is walked as given
    mine = KNIFERegressorCV(cv=3, grid=path.grid, random_state=0)
    mine._validate_params()
    data = mine._cv_data(X, y)
    mine._cv_outer(data)
    assert mine._cv_refine(data, None, *mine._cv_pass(data, None)) is None


def test_regressor_cv_finds_the_optimum_below_the_first_positive_point():
    # a coarse grid (first positive point at 0.3 of the top) over-shrinks at once: the CV chose lambda2 = 0
    # and the inserted points hold a better one
    X, y, _ = make_sinusoid(90, n_features=6, random_state=0)
    est = KNIFERegressorCV(cv=3, n_grid=4, lambda_min_ratio=0.3, random_state=0).fit(X, y)
    g = est.path_.grid
    np.testing.assert_allclose(g[1:1 + LOW_END_FRACTIONS.size], g[1 + LOW_END_FRACTIONS.size] * LOW_END_FRACTIONS,
                               rtol=1e-12)
    mean = est.path_.mean_cv_score
    assert 1 <= est.best_index_ <= LOW_END_FRACTIONS.size
    assert mean[est.best_index_] > mean[0]  # better than the lambda2 = 0 point the first CV chose
    assert est.path_.extra["n_inserted"] >= LOW_END_FRACTIONS.size
    assert est.lambda2_ == g[est.best_index_]
    # the refined path is the second pass's walk of [0, inserted points] followed by the first pass's path from its
    # first positive point on, scores included: each part equals the CV of a user grid walked as given
    k = LOW_END_FRACTIONS.size
    low = KNIFERegressorCV(cv=3, grid=g[:k + 1], random_state=0).fit(X, y)
    first = KNIFERegressorCV(cv=3, grid=np.r_[g[0], g[k + 1:]], random_state=0).fit(X, y)
    for part, sl in ((low, slice(0, k + 1)), (first, slice(k + 1, None))):
        off = 0 if part is low else 1
        np.testing.assert_allclose(part.path_.cv_scores[off:], est.path_.cv_scores[sl], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(part.path_.weights[off:], est.path_.weights[sl], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(part.path_.extra["alpha"][off:], est.path_.extra["alpha"][sl], rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(part.path_.extra["gamma"][off:], est.path_.extra["gamma"][sl], rtol=1e-12)
    # both passes start at the same lambda2 = 0 fit
    np.testing.assert_allclose(first.path_.cv_scores[0], low.path_.cv_scores[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(first.path_.weights[0], low.path_.weights[0], rtol=1e-10, atol=1e-12)
    # the model kept is the spliced path's chosen point
    np.testing.assert_allclose(est.alpha_, est.path_.extra["alpha"][est.best_index_], rtol=0, atol=0)
    assert len(est.converged_) == est.path_.n_points == len(est.path_.extra["n_iter"])


def test_classifier_cv_refines_the_low_end_too():
    X, y, _ = make_orange(90, n_noise=3, random_state=0)
    est = KNIFEClassifierCV(cv=3, n_grid=4, lambda_min_ratio=0.3, random_state=0).fit(X, y)
    g = est.path_.grid
    k = LOW_END_FRACTIONS.size
    np.testing.assert_allclose(g[1:1 + k], g[1 + k] * LOW_END_FRACTIONS, rtol=1e-12)
    assert est.path_.n_points == len(est.cv_scores_) == len(est.converged_)


def test_auto_gamma_path_starts_at_the_single_fit():
    X, y, _ = make_sinusoid(150, n_features=20, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    y = y - y.mean()
    path = knife_path(X, y, gamma="auto", n_grid=4, random_state=0)
    single = knife(X, y, lambda2=0.0, gamma="auto", random_state=0)
    n0 = int(path.n_selected()[0])
    assert n0 < X.shape[1]  # lambda2 = 0 already drops features here: the scale moved off 1/p
    assert path.extra["gamma"][0] == single.params["gamma"] == 1.0 / n0
    np.testing.assert_array_equal(path.weights[0], single.weights)


def test_multiclass_cv_splices_every_one_vs_rest_path():
    from sklearn.datasets import make_classification

    X, y = make_classification(90, n_features=5, n_informative=3, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    est = KNIFEClassifierCV(cv=3, n_grid=4, lambda_min_ratio=0.5, random_state=0).fit(X, y)
    g, k = est.path_.grid, LOW_END_FRACTIONS.size
    assert est.path_.extra["n_inserted"] >= k  # the low end was refined here
    np.testing.assert_allclose(g[1:1 + k], g[1 + k] * LOW_END_FRACTIONS, rtol=1e-12)
    low = KNIFEClassifierCV(cv=3, grid=g[:k + 1], random_state=0).fit(X, y)
    first = KNIFEClassifierCV(cv=3, grid=np.r_[g[0], g[k + 1:]], random_state=0).fit(X, y)
    for part, sl, off in ((low, slice(0, k + 1), 0), (first, slice(k + 1, None), 1)):
        np.testing.assert_allclose(part.path_.cv_scores[off:], est.path_.cv_scores[sl], rtol=1e-10, atol=1e-12)
        for mine, theirs in zip(est.paths_, part.paths_):  # each one-vs-rest problem
            assert mine.n_points == est.path_.n_points
            np.testing.assert_allclose(theirs.weights[off:], mine.weights[sl], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(theirs.extra["intercept"][off:], mine.extra["intercept"][sl], rtol=1e-10,
                                       atol=1e-12)
    i = est.best_index_
    np.testing.assert_array_equal(est.alpha_, np.array([p.extra["alpha"][i] for p in est.paths_]))
    np.testing.assert_array_equal(est.path_.weights[i], np.max([p.weights[i] for p in est.paths_], axis=0))


def test_lambda_min_ratio_auto_follows_the_rows():
    from numkfs.methods.knife import lambda_min_ratio_for

    assert lambda_min_ratio_for("auto", 9_000) == 1e-3
    assert lambda_min_ratio_for("auto", 40_000) == pytest.approx(2.5e-4, rel=1e-15)
    assert lambda_min_ratio_for(0.2, 40_000) == 0.2
    # a path on more than 10^4 rows (a cheap Nystrom basis) starts its default grid at 10 / n of its top
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12_500, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(len(X))
    path = knife_path(X, y, n_grid=3, max_refine=0, approximation="nystroem", n_components=8, random_state=0)
    assert path.grid[1] == pytest.approx(path.extra["lambda2_top"] * 1e-3 * 10_000 / 12_500, rel=1e-12)
    # the CV estimator on a subsample takes "auto" from every row: its grid stands for the full data's
    est = KNIFERegressorCV(approximation="nystroem", n_components=8, n_grid=3, cv=2, cv_max_samples=300,
                           random_state=0).fit(X, y)
    top = est.path_.extra["lambda2_top"]
    assert est.cv_n_samples_ == 300
    assert est.path_.grid[1] == pytest.approx(top * 1e-3 * 10_000 / 12_500, rel=1e-12)


def test_both_passes_share_their_nystroem_landmarks():
    # the spliced points come from two walks; with a Generator (or None) as random_state each walk would draw
    # its own landmarks (and the points' alpha would belong to different bases) unless the fit draws one seed
    X, y, _ = make_sinusoid(90, n_features=6, random_state=0)
    est = KNIFERegressorCV(cv=3, n_grid=4, lambda_min_ratio=0.3, approximation="nystroem", n_components=30,
                           random_state=np.random.default_rng(0)).fit(X, y)
    passes = est._cv_problem_paths
    assert len(passes) == 3  # the first pass, the low end, the spliced path
    first, low = passes[0][0].extra["params"]["landmarks"], passes[1][0].extra["params"]["landmarks"]
    assert first is not None and len(first) == 30
    np.testing.assert_array_equal(first, low)
    np.testing.assert_allclose(passes[0][0].weights[0], passes[1][0].weights[0], rtol=1e-10, atol=1e-12)
    # random_state=None: one seed per fit too (whether or not the low end is refined on these rows)
    est = KNIFERegressorCV(cv=3, n_grid=4, approximation="nystroem", n_components=30, random_state=None)
    est._validate_params()
    data = est._cv_data(X, y)
    est._cv_outer(data)
    a, b = est._cv_full_path(data, None), est._cv_full_path(data, None, grid=np.array([0.0, 1.0]))
    np.testing.assert_array_equal(a.extra["params"]["landmarks"], b.extra["params"]["landmarks"])


kcv = importlib.import_module("numkfs.estimators._knife_cv")


def _std(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


@pytest.mark.parametrize("kw", [dict(gamma="auto"), dict(gamma=None),
                                dict(gamma="auto", approximation="nystroem", n_components=30),
                                dict(loss="squared_hinge", lambda1=3.0)])
def test_grid_walk_in_stages_is_the_path_on_that_grid(kw):
    X, y, _ = make_sinusoid(90, n_features=8, random_state=0)
    X = _std(X)
    y = np.where(y > np.median(y), 1.0, -1.0) if "loss" in kw else y - y.mean()
    grid = np.concatenate([[0.0], np.geomspace(0.05, 200.0, 13)])
    whole = knife_path(X, y, grid=grid, random_state=0, **kw)
    walk = KNIFEGridWalk(X, y, grid, random_state=0, **kw)
    parts = [walk.walk(end) for end in (1, 4, 4, 2, 9, 14, 30)]
    assert [p is None for p in parts] == [False, False, True, True, False, False, True]
    parts = [p for p in parts if p is not None]
    assert [p.n_points for p in parts] == [1, 3, 5, 5]
    # the same fits from the same states: equal to the last bit
    np.testing.assert_array_equal(np.concatenate([p.grid for p in parts]), whole.grid)
    np.testing.assert_array_equal(np.vstack([p.weights for p in parts]), whole.weights)
    np.testing.assert_array_equal(np.vstack([p.extra["alpha"] for p in parts]), whole.extra["alpha"])
    np.testing.assert_array_equal(np.concatenate([p.extra["intercept"] for p in parts]), whole.extra["intercept"])
    np.testing.assert_array_equal(np.concatenate([p.objective for p in parts]), whole.objective)
    np.testing.assert_array_equal(np.concatenate([p.extra["gamma"] for p in parts]), whole.extra["gamma"])


def test_stop_early_needs_points_beyond_the_best_far_enough_and_worse_by_three_se():
    grid = np.concatenate([[0.0], np.geomspace(1.0, 100.0, 11)])
    # fold scores: best at point 2 (mean 1, se 0.1), then falling well below
    best = np.array([0.9, 1.0, 1.1])
    scores = np.vstack([best - 0.5, best - 0.2, best, *[best - 1.0] * 9])
    assert stop_early(grid, scores)
    # fewer than EARLY_STOP_POINTS points beyond the best
    assert not stop_early(grid[:2 + EARLY_STOP_POINTS], scores[:2 + EARLY_STOP_POINTS])
    # the last points within three standard errors of the best (3 se = 0.173)
    assert not stop_early(grid, np.vstack([scores[:3], *[best - 0.15] * 9]))
    # the grid not yet at three times the best point's value
    near = np.concatenate([grid[:3], grid[2] * np.linspace(1.05, 2.9, 9)])
    assert not stop_early(near, scores)


def _check_prefix(stopped, whole):
    n = stopped.path_.n_points
    assert n < whole.path_.n_points  # the rule stopped the folds on these data
    assert n % kcv.CV_STAGE_POINTS == 0
    np.testing.assert_array_equal(stopped.path_.grid, whole.path_.grid[:n])
    np.testing.assert_array_equal(stopped.path_.weights, whole.path_.weights[:n])
    np.testing.assert_array_equal(stopped.cv_scores_, whole.cv_scores_[:n])
    # stopped at the first stage end where the rule says so
    g, sc, sizes = stopped.path_.grid, stopped.cv_scores_, stopped.path_.cv_fold_sizes
    assert stop_early(g, sc, sizes)
    assert not any(stop_early(g[:k], sc[:k], sizes) for k in range(kcv.CV_STAGE_POINTS, n, kcv.CV_STAGE_POINTS))
    assert stopped.best_index_ == whole.best_index_ and stopped.lambda2_ == whole.lambda2_
    np.testing.assert_array_equal(stopped.get_support(), whole.get_support())


def test_regressor_stops_early_at_the_point_the_whole_grid_chooses():
    X, y, _ = make_sinusoid(80, n_features=8, random_state=0)
    kw = dict(n_grid=30, cv=3, random_state=0)
    whole = KNIFERegressorCV(early_stopping=False, **kw).fit(X, y)
    stopped = KNIFERegressorCV(**kw).fit(X, y)
    _check_prefix(stopped, whole)
    np.testing.assert_array_equal(stopped.predict(X), whole.predict(X))


def test_one_vs_rest_classifier_stops_early_with_every_problem_cut_alike():
    X, _, _ = make_orange(90, n_noise=3, random_state=0)
    labels = np.digitize(X[:, 0], [-0.5, 0.5])
    kw = dict(n_grid=30, cv=3, random_state=0)
    whole = KNIFEClassifierCV(early_stopping=False, **kw).fit(X, labels)
    stopped = KNIFEClassifierCV(**kw).fit(X, labels)
    _check_prefix(stopped, whole)
    problems = stopped._cv_problem_paths[-1]
    assert len(problems) == 3 and all(p.n_points == stopped.path_.n_points for p in problems)
    np.testing.assert_array_equal(stopped.decision_function(X), whole.decision_function(X))


@pytest.mark.parametrize("grid", [[], [0.0, 2.0, 1.0], [0.0, np.nan], [-1.0, 1.0]])
def test_grid_walk_refuses_a_grid_knife_path_refuses(grid):
    X, y, _ = make_sinusoid(30, n_features=5, random_state=0)
    with pytest.raises(ValueError, match="non-empty, non-decreasing array of finite values >= 0"):
        KNIFEGridWalk(X, y, grid)
    with pytest.raises(ValueError, match="non-empty, non-decreasing array of finite values >= 0"):
        knife_path(X, y, grid=grid)


def test_refine_walk_check_ends_the_walk_with_its_final_points():
    def step(state, lam):  # feature j is selected while lam < 2 ** -j
        return 2.0 ** -np.arange(12) > lam

    grid = [0.0, 0.02, 0.1, 0.3, 0.6]
    full = refine_walk(step, grid, step(None, 0.0), support=lambda s: s, max_inserted=10)
    seen = []

    def check(values, states):
        seen.append(list(values))
        return len(values) == 4

    vals, states, _ = refine_walk(step, grid, step(None, 0.0), support=lambda s: s, max_inserted=10, check=check)
    assert len(full[0]) > 4 and vals == full[0][:4]  # inserted points included, as in the whole walk
    assert all(np.array_equal(a, b) for a, b in zip(states, full[1]))
    assert seen == [full[0][:k] for k in (2, 3, 4)]  # once per kept point, each a prefix of the whole walk


@pytest.mark.parametrize("kw", [dict(gamma="auto"), dict(gamma=None), dict(gamma="auto", lambda1=30.0)])
def test_knife_path_stop_ends_it_at_the_unstopped_paths_point(kw):
    X, y, _ = make_sinusoid(70, n_features=8, random_state=0)
    X, y = _std(X), y - y.mean()
    whole = knife_path(X, y, n_grid=12, random_state=0, **kw)
    calls = []

    def stop(grid):
        calls.append(grid.copy())
        return grid.size == whole.n_points - 2

    part = knife_path(X, y, n_grid=12, random_state=0, stop=stop, **kw)
    n = whole.n_points - 2
    assert part.n_points == n and [c.size for c in calls] == list(range(2, n + 1))
    np.testing.assert_array_equal(calls[-1], whole.grid[:n])
    np.testing.assert_array_equal(part.grid, whole.grid[:n])
    np.testing.assert_array_equal(part.weights, whole.weights[:n])
    np.testing.assert_array_equal(part.extra["alpha"], whole.extra["alpha"][:n])
    np.testing.assert_array_equal(part.extra["gamma"], whole.extra["gamma"][:n])


def test_knife_ovr_paths_stop_cuts_every_problem_alike():
    X, _, _ = make_orange(60, n_noise=3, random_state=0)
    labels = np.digitize(X[:, 0], [-0.5, 0.5])
    targets = [np.where(labels == k, 1.0, -1.0) for k in range(3)]
    kw = dict(loss="squared_hinge", n_grid=10, random_state=0)
    whole = knife_ovr_paths(X, targets, **kw)
    part = knife_ovr_paths(X, targets, stop=lambda g: g.size == 5, **kw)
    for a, b in zip(part, whole):
        assert a.n_points == 5
        np.testing.assert_array_equal(a.weights, b.weights[:5])
    with pytest.raises(ValueError, match="'stop' needs the default grid"):
        knife_ovr_paths(X, targets, grid=[0.0, 1.0], stop=lambda g: False, **kw)


def test_grid_walk_extended_is_the_path_on_the_longer_grid():
    X, y, _ = make_sinusoid(60, n_features=6, random_state=0)
    X, y = _std(X), y - y.mean()
    grid = np.concatenate([[0.0], np.geomspace(0.05, 200.0, 9)])
    walk = KNIFEGridWalk(X, y, grid[:4], random_state=0)
    first = walk.walk(10)  # at most the grid it has
    assert first.n_points == 4
    walk.extend(grid)
    rest = walk.walk(10)
    whole = knife_path(X, y, grid=grid, random_state=0)
    np.testing.assert_array_equal(np.vstack([first.weights, rest.weights]), whole.weights)
    with pytest.raises(ValueError, match="must begin with the current one"):
        walk.extend(grid[1:])


@pytest.mark.parametrize("classifier", [False, True])
def test_the_full_data_path_is_walked_only_to_the_stop(monkeypatch, classifier):
    """On the default grid the full-data walk stops with the folds: the path it returns (before any
    cut) has the stopped estimator's points, fewer than the whole walk's."""
    walked = []
    if classifier:
        real = kcv.knife_ovr_paths

        def spy(*args, **kw):
            paths = real(*args, **kw)
            walked.append(paths[0].n_points)
            return paths

        monkeypatch.setattr(kcv, "knife_ovr_paths", spy)
        X, _, _ = make_orange(90, n_noise=3, random_state=0)
        y, cls = np.digitize(X[:, 0], [-0.5, 0.5]), KNIFEClassifierCV
    else:
        real = kcv.KNIFERegressorCV.path

        def spy(*args, **kw):
            path = real(*args, **kw)
            walked.append(path.n_points)
            return path

        monkeypatch.setattr(kcv.KNIFERegressorCV, "path", staticmethod(spy))
        X, y, _ = make_sinusoid(80, n_features=8, random_state=0)
        cls = KNIFERegressorCV
    kw = dict(n_grid=30, cv=3, random_state=0)
    stopped = cls(**kw).fit(X, y)
    n_stopped = walked[0]
    walked.clear()
    whole = cls(early_stopping=False, **kw).fit(X, y)
    assert n_stopped == stopped.path_.n_points < walked[0] == whole.path_.n_points


def _sin_square(seed, n=150, p=10):
    """y = [sin(2 x0) + x1^2 - 1 + noise > 0]: x0 matters only through a narrow kernel."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 1 + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("seed", [0, 1])
def test_knife_classifier_cv_finds_sine_and_square(seed):
    X, y = _sin_square(seed)
    est = KNIFEClassifierCV(n_grid=20, cv=3).fit(X, y)
    support = set(np.flatnonzero(est.get_support()))
    assert {0, 1} <= support and len(support - {0, 1}) <= 2
    assert est.gamma_ == est.path_.extra["gamma"][est.best_index_] > 1.0 / X.shape[1]


@pytest.mark.filterwarnings("ignore")
def test_knife_classifier_cv_finds_the_informative_features():
    X, y = make_classification(n_samples=150, n_features=12, n_informative=5, n_redundant=0, shuffle=False,
                               random_state=1)
    support = set(np.flatnonzero(KNIFEClassifierCV(n_grid=20, cv=3).fit(X, y).get_support()))
    assert set(range(5)) <= support and len(support - set(range(5))) <= 2


@pytest.mark.filterwarnings("ignore")
def test_knife_classifier_cv_keeps_every_informative_feature_from_the_first_start():
    # make_classification(300 x 30, random_state=0) with the defaults: from a random first start
    # the path lost informative features 2 and 3 at λ2 = 0 (a zero weight stays zero) and kept
    # 3 of 5; from w = 1 all five are in the chosen model
    X, y = make_classification(n_samples=300, n_features=30, n_informative=5, n_redundant=0, shuffle=False,
                               random_state=0)
    est = KNIFEClassifierCV().fit(X, y)
    assert set(range(5)) <= set(np.flatnonzero(est.get_support()))
    assert np.all(est.path_.weights[0, :5] > 0)


@pytest.mark.filterwarnings("ignore")
def test_knife_regressor_cv_finds_exactly_the_sinusoid():
    X, y, truth = make_sinusoid(n_samples=100, n_features=20, random_state=0)
    est = KNIFERegressorCV(n_grid=20, cv=3).fit(X, y)
    np.testing.assert_array_equal(est.get_support(), truth)


@pytest.mark.filterwarnings("ignore")
def test_knife_grid_is_walked_as_given():
    X, y, _ = make_sinusoid(n_samples=50, n_features=6, random_state=0)
    grid = [0.0, 1.0, 10.0, 100.0]
    est = KNIFERegressorCV(grid=grid, cv=3).fit(X, y)
    np.testing.assert_array_equal(est.path_.grid, grid)
    assert est.cv_scores_.shape == (4, 3)
    with pytest.raises(ValueError, match="'grid'"):
        KNIFERegressorCV(grid="big").fit(X, y)


@pytest.mark.parametrize("kw", [{}, {"approximation": "nystroem", "n_components": 30}])
def test_the_low_end_pass_refits_no_lambda2_zero_start(monkeypatch, kw):
    # the second pass walks lambda2 = 0 again on the full data and on every fold, from the same starts on the same
    # rows: within one fit each of those starts is fitted once, and the answer is the one of fitting it twice
    import contextlib
    import importlib

    KCV = importlib.import_module("numkfs.estimators._knife_cv")
    F = importlib.import_module("numkfs.methods.knife._fit")

    fitted = []
    real = F._fit_best_start
    monkeypatch.setattr(F, "_fit_best_start", lambda model, *a, **k: fitted.append(model.X.shape[0]) or real(
        model, *a, **k))
    X, y, _ = make_sinusoid(90, n_features=6, random_state=0)
    est = KNIFERegressorCV(cv=3, n_grid=4, lambda_min_ratio=0.3, random_state=0, **kw).fit(X, y)
    assert len(est._cv_problem_paths) == 3  # the low end was walked again
    assert sorted(fitted) == [60, 60, 60, 90]  # three folds and the full data, once each
    fitted.clear()
    monkeypatch.setattr(KCV, "shared_starts", contextlib.nullcontext)  # every start fitted again
    twice = KNIFERegressorCV(cv=3, n_grid=4, lambda_min_ratio=0.3, random_state=0, **kw).fit(X, y)
    assert sorted(fitted) == [60, 60, 60, 60, 60, 60, 90, 90]
    for name in ("weights", "cv_scores", "grid"):
        np.testing.assert_array_equal(getattr(twice.path_, name), getattr(est.path_, name))
    for name in ("alpha", "intercept", "gamma", "objective", "n_iter"):
        np.testing.assert_array_equal(twice.path_.extra.get(name, getattr(twice.path_, name, None)),
                                      est.path_.extra.get(name, getattr(est.path_, name, None)))


def test_folds_fit_from_their_own_training_rows(monkeypatch):
    """Every fold walks from its own starts on its training rows, never from a start of the full data's
    fit: a weight KNIFE sets to zero stays zero, so folds started from the full data's first point kept
    out the features that fit dropped on the rows each fold holds out (on make_classification(300, 30)
    seed 2 the CV then chose lambda2 = 0 and 13 features, against 7 from the folds' own starts)."""
    X, y, _ = make_sinusoid(120, n_features=12, random_state=1)
    walks = []
    real = kcv.KNIFEGridWalk

    def recording(X_walk, *args, **kwargs):
        walks.append((X_walk.shape[0], kwargs.get("start")))
        return real(X_walk, *args, **kwargs)

    monkeypatch.setattr(kcv, "KNIFEGridWalk", recording)
    est = KNIFERegressorCV(cv=3, n_grid=20, random_state=0).fit(X, y)
    assert 0 < np.count_nonzero(est.path_.weights[0]) < X.shape[1]  # λ2 = 0 drops features on the full data
    assert len(walks) >= 3  # every fold of every pass
    assert all(n_rows < X.shape[0] and start is None for n_rows, start in walks), walks


@pytest.mark.parametrize("tol, cv_tol, fold_tol", [(1e-6, 1e-4, 1e-4), (1e-3, 1e-4, 1e-3), (1e-6, None, 1e-6)])
def test_folds_fit_at_the_looser_of_tol_and_cv_tol_and_the_path_at_tol(monkeypatch, tol, cv_tol, fold_tol):
    X, y, _ = make_sinusoid(60, n_features=6, random_state=0)
    fold_tols, path_tols = [], []
    real_walk, real_path = kcv.KNIFEGridWalk, KNIFERegressorCV.path

    def walk(*args, **kwargs):
        fold_tols.append(kwargs["tol"])
        return real_walk(*args, **kwargs)

    def path(*args, **kwargs):
        path_tols.append(kwargs["tol"])
        return real_path(*args, **kwargs)

    monkeypatch.setattr(kcv, "KNIFEGridWalk", walk)
    monkeypatch.setattr(KNIFERegressorCV, "path", staticmethod(path))
    KNIFERegressorCV(cv=3, n_grid=5, tol=tol, cv_tol=cv_tol, random_state=0).fit(X, y)
    assert len(fold_tols) >= 3 and set(fold_tols) == {fold_tol}
    assert path_tols and set(path_tols) == {tol}


@pytest.mark.parametrize("cv_tol", [0.0, -1e-4, "loose"])
def test_cv_tol_must_be_positive_or_none(cv_tol):
    X, y, _ = make_sinusoid(30, n_features=5, random_state=0)
    with pytest.raises((ValueError, TypeError), match="cv_tol"):
        KNIFERegressorCV(cv_tol=cv_tol).fit(X, y)
