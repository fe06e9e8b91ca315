"""KNIFE CV with ``cv_max_samples``: λ2 chosen on a subsample's path (λ1 and
the grid scaled to the subsample's size), the chosen point refitted on every
row with λ2 scaled back (the CV at 10^6 rows)."""
import re

import numpy as np
import pytest

from numkfs import KNIFEClassifierCV, KNIFERegressorCV
from numkfs.datasets import make_orange, make_sinusoid
from numkfs.kernels import weighted_kernel
from numkfs.losses import get_loss
from numkfs.methods.knife import knife_objective

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
