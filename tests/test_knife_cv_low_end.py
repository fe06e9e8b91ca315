"""KNIFE's CV refines the low end of its default grid when it chose λ2 = 0
and the first positive point scored more than one standard error worse
(``low_end_grid`` decides, ``_KNIFEPathCV._cv_refine``: a second pass over λ2 = 0 and the
inserted points, spliced into the first path); the first point of a ``gamma="auto"``
path is the single fit at λ2 = 0 (its scale settled on its own support);
``lambda_min_ratio="auto"`` follows the number of rows."""
import numpy as np
import pytest

from numkfs import KNIFEClassifierCV, KNIFERegressorCV
from numkfs.datasets import make_orange, make_sinusoid
from numkfs.estimators._knife_cv import LOW_END_FRACTIONS, low_end_grid
from numkfs.methods.knife import knife, knife_path
from numkfs.paths import FeaturePath


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
    # (the full data's first point: for the folds' starts, for the path, for the low end's path)
    assert sorted(fitted) == [60, 60, 60, 60, 60, 60, 90, 90, 90]
    for name in ("weights", "cv_scores", "grid"):
        np.testing.assert_array_equal(getattr(twice.path_, name), getattr(est.path_, name))
    for name in ("alpha", "intercept", "gamma", "objective", "n_iter"):
        np.testing.assert_array_equal(twice.path_.extra.get(name, getattr(twice.path_, name, None)),
                                      est.path_.extra.get(name, getattr(est.path_, name, None)))
