"""KNIFE's CV refines the low end of its default grid when it chose λ2 = 0
and the first positive point scored more than one standard error worse
(``_KNIFEPathCV._cv_extend``); and the first point of a ``gamma="auto"``
path is the single fit at λ2 = 0 (its scale settled on its own support)."""
import numpy as np
import pytest

from numkfs import KNIFEClassifierCV, KNIFERegressorCV
from numkfs.datasets import make_orange, make_sinusoid
from numkfs.estimators._knife_cv import LOW_END_FRACTIONS
from numkfs.methods.knife import knife, knife_path
from numkfs.paths import FeaturePath


def _cv_path(grid, scores):
    path = FeaturePath(grid=np.asarray(grid, float), weights=np.ones((len(grid), 3)), grid_name="lambda2")
    path.cv_scores = np.asarray(scores, float)
    path.cv_fold_sizes = None
    path.chosen_index = int(np.argmax(path.mean_cv_score))
    return path


@pytest.mark.parametrize("drop, refined", [(1.0, True), (0.01, False)])
def test_extend_inserts_the_low_end_only_after_a_steep_drop(drop, refined):
    est = KNIFERegressorCV()
    est._cv_default_grid = True
    # fold scores at lambda2 = 0 have mean 0 and a standard error below 0.1; the next point is `drop` lower
    scores = np.array([[0.1, 0.0, -0.1], [0.1 - drop, -drop, -0.1 - drop], [-5.0, -5.0, -5.0]])
    path = _cv_path([0.0, 10.0, 100.0], scores)
    se = path.cv_standard_error[0]
    assert (drop > se) == refined
    grid = est._cv_extend([path], [None], 0)
    if refined:
        np.testing.assert_array_equal(grid, np.r_[0.0, 10.0 * LOW_END_FRACTIONS, 10.0, 100.0])
    else:
        assert grid is None


def test_extend_leaves_other_choices_and_user_grids_alone():
    est = KNIFERegressorCV()
    est._cv_default_grid = True
    steep = np.array([[0.1, 0.0, -0.1], [-3.0, -3.0, -3.0], [-5.0, -5.0, -5.0]])
    assert est._cv_extend([_cv_path([0.0, 10.0, 100.0], steep[[1, 0, 2]])], [None], 0) is None  # chose 10
    assert est._cv_extend([_cv_path([1.0, 10.0, 100.0], steep)], [None], 0) is None  # no lambda2 = 0
    path = _cv_path([0.0, 10.0, 100.0], steep)
    assert est._cv_extend([path, path], [None, np.r_[0.0]], 1) is None  # once
    est._cv_default_grid = False
    assert est._cv_extend([path], [None], 0) is None  # a user's grid is walked as given


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
    # the refined path is the path on that grid: its CV scores are those of a path walked on it
    user = KNIFERegressorCV(cv=3, grid=g, random_state=0).fit(X, y)
    np.testing.assert_allclose(user.path_.cv_scores, est.path_.cv_scores, rtol=1e-10, atol=1e-12)
    assert user.best_index_ == est.best_index_


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
