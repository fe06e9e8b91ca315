"""Selections that find the features: KNIFE's bandwidth follows
the selected features, default grids reach every sparsity level.

Small seeded versions of the targets; the full-size cases (300 x 30, two
seeds, the colon data's estimators) are in ``benchmarks/selection_quality.py``.
"""
import sys
import warnings

import numpy as np
import pytest
from conftest import make, names
from sklearn.datasets import make_classification

from numkfs import KNIFEClassifierCV, KNIFERegressorCV
from numkfs.datasets import load_dataset, make_sinusoid
from numkfs.methods.knife import knife_path
from numkfs.model_selection import refine_walk, support_jump

km = sys.modules["numkfs.methods.knife"]  # the module (numkfs.methods.knife is also the function's name)


def _sin_square(seed, n=150, p=10):
    """y = [sin(2 x0) + x1^2 - 1 + noise > 0]: x0 matters only through a narrow kernel."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 1 + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _no_jump(path):
    S = [path.selected(i) for i in range(path.n_points)]
    return [i for i in range(path.n_points - 1) if support_jump(S[i], S[i + 1])]


# --------------------------------------------------------------------------
# the shared refinement


def test_support_jump_is_max_two_or_a_quarter():
    base = np.zeros(20, bool)
    base[:12] = True
    for k, jumps in [(2, False), (3, False), (4, True)]:  # a quarter of 12 is 3
        other = base.copy()
        other[:k] = False
        assert support_jump(base, other) is jumps
    small = np.zeros(20, bool)
    small[:2] = True
    assert not support_jump(small, np.zeros(20, bool))  # 2 features may leave at once
    assert support_jump(np.r_[np.ones(3, bool), np.zeros(17, bool)], np.zeros(20, bool))


def test_refine_walk_closes_every_jump_within_its_budget():
    # feature j is selected while lam < 2 ** -(j / 4): 40 features, from a grid of 3 values
    thresholds = 2.0 ** -(np.arange(40) / 4.0)
    calls = []

    def step(state, lam):
        calls.append(lam)
        return thresholds > lam

    grid = [0.0, 1e-3, 1.0]
    vals, states, n_in = refine_walk(step, grid, step(None, 0.0), support=lambda s: s, max_inserted=200)
    assert vals[0] == 0.0 and vals[-1] == 1.0 and np.all(np.diff(vals) > 0)
    assert set(grid) <= set(vals) and len(vals) == len(grid) + n_in
    assert not any(support_jump(a, b) for a, b in zip(states, states[1:]))
    # every inserted point cost one discarded fit, nothing else
    assert len(calls) == 1 + (len(vals) - 1) + n_in
    # the budget bounds the number of points; a zero budget walks the grid as given
    for budget in (0, 3):
        vals, _, n_in = refine_walk(step, grid, step(None, 0.0), support=lambda s: s, max_inserted=budget)
        assert n_in <= budget and len(vals) == len(grid) + n_in


def test_knife_path_default_grid_on_colon_has_no_support_jump():
    d = load_dataset("colon")
    X = np.asarray(d.data, dtype=float)
    X = (X - X.mean(0)) / X.std(0)
    y = np.where(np.asarray(d.target) == np.unique(d.target)[1], 1.0, -1.0)
    path = knife_path(X, y, loss="squared_hinge", random_state=0)
    assert path.n_points <= 2 * 100
    assert _no_jump(path) == []
    assert path.n_selected()[0] > 100 and path.n_selected()[-1] < 5  # from most genes to a handful


# --------------------------------------------------------------------------
# gamma="auto"


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


@pytest.mark.slow
def test_select_finds_every_friedman_feature_among_100_noise_features():
    # select(X, y) (KNIFE) kept 0, 1, 3, 4 on seed 1, x2 lost at the path's first point
    from sklearn.datasets import make_friedman1

    from numkfs import select

    X, y = make_friedman1(n_samples=200, n_features=105, random_state=1)
    selected = set(np.flatnonzero(select(X, y).selected))
    assert set(range(5)) <= selected and len(selected - set(range(5))) <= 1


@pytest.mark.parametrize("seed", [0, 1])
def test_knife_classifier_cv_finds_sine_and_square(seed):
    X, y = _sin_square(seed)
    est = KNIFEClassifierCV(n_grid=20, cv=3).fit(X, y)
    support = set(np.flatnonzero(est.get_support()))
    assert {0, 1} <= support and len(support - {0, 1}) <= 2
    assert est.gamma_ == est.path_.extra["gamma"][est.best_index_] > 1.0 / X.shape[1]


def test_knife_classifier_cv_finds_the_informative_features():
    X, y = make_classification(n_samples=150, n_features=12, n_informative=5, n_redundant=0, shuffle=False,
                               random_state=1)
    support = set(np.flatnonzero(KNIFEClassifierCV(n_grid=20, cv=3).fit(X, y).get_support()))
    assert set(range(5)) <= support and len(support - set(range(5))) <= 2


def test_knife_classifier_cv_keeps_every_informative_feature_from_the_first_start():
    # make_classification(300 x 30, random_state=0) with the defaults: from a random first start
    # the path lost informative features 2 and 3 at λ2 = 0 (a zero weight stays zero) and kept
    # 3 of 5; from w = 1 all five are in the chosen model
    X, y = make_classification(n_samples=300, n_features=30, n_informative=5, n_redundant=0, shuffle=False,
                               random_state=0)
    est = KNIFEClassifierCV().fit(X, y)
    assert set(range(5)) <= set(np.flatnonzero(est.get_support()))
    assert np.all(est.path_.weights[0, :5] > 0)


def test_knife_regressor_cv_finds_exactly_the_sinusoid():
    X, y, truth = make_sinusoid(n_samples=100, n_features=20, random_state=0)
    est = KNIFERegressorCV(n_grid=20, cv=3).fit(X, y)
    np.testing.assert_array_equal(est.get_support(), truth)


def test_knife_grid_is_walked_as_given():
    X, y, _ = make_sinusoid(n_samples=50, n_features=6, random_state=0)
    grid = [0.0, 1.0, 10.0, 100.0]
    est = KNIFERegressorCV(grid=grid, cv=3).fit(X, y)
    np.testing.assert_array_equal(est.path_.grid, grid)
    assert est.cv_scores_.shape == (4, 3)
    with pytest.raises(ValueError, match="'grid'"):
        KNIFERegressorCV(grid="big").fit(X, y)


def test_plot_cv_gamma_draws_the_scores_and_each_points_scale():
    import matplotlib

    matplotlib.use("Agg")
    from numkfs.plotting import plot_cv_gamma

    X, y, _ = make_sinusoid(n_samples=50, n_features=6, random_state=0)
    path = KNIFERegressorCV(n_grid=6, cv=3).fit(X, y).path_
    ax = plot_cv_gamma(path)
    sizes = path.cv_fold_sizes  # 50 rows in 3 folds (17, 17, 16): the mean weights them by size
    assert sorted(sizes.tolist()) == [16, 17, 17]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), path.cv_scores @ sizes / 50, rtol=1e-14)
    np.testing.assert_allclose(ax.gamma_axes.lines[0].get_ydata(), path.extra["gamma"])
    assert f"{path.n_selected()[path.chosen_index]} features" in ax.get_title()
    with pytest.raises(ValueError, match="cross-validated KNIFE path"):
        plot_cv_gamma(knife_path(X, y, n_grid=3, random_state=0))


def test_garrote_default_grid_is_refined_where_the_support_jumps():
    from numkfs import GarroteRegressorCV
    from numkfs.methods.garrote import garrote_path

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 120))
    y = X[:, :10] @ rng.uniform(1, 3, 10) + rng.standard_normal(60)
    coarse = garrote_path(X, y, n_grid=20, max_refine=0)
    fine = garrote_path(X, y, n_grid=20)
    assert _no_jump(coarse) != [] and _no_jump(fine) == []
    assert set(coarse.grid) <= set(fine.grid) and 20 < fine.n_points <= 40
    # the same points where the grids agree (a convex problem: warm starts do not change them)
    at = np.searchsorted(-fine.grid, -coarse.grid)
    np.testing.assert_allclose(fine.weights[at], coarse.weights, atol=1e-6)
    est = GarroteRegressorCV(n_grid=20, cv=3).fit(X, y)
    assert _no_jump(est.path_) == [] and est.cv_scores_.shape == (est.path_.n_points, 3)
    assert est.lambda2_ == est.path_.grid[est.best_index_]


@pytest.mark.parametrize("estimator", names(cv=True))
def test_every_cv_estimator_takes_its_path_functions_grid(estimator):
    """Every CV estimator of the registry (tests/conftest.py) takes the explicit
    grid of its path function, by the same name, ``grid``."""
    import inspect

    import numkfs

    cls = type(make(estimator))
    fn = cls.path
    assert getattr(numkfs, fn.__name__) is fn  # the method's public path function
    assert cls._cv_grid_param == "grid" and "grid" in inspect.signature(fn).parameters
    est = cls()
    assert "grid" in est.get_params() and est.get_params()["grid"] is None  # default: the method's own grid


def test_cosso_default_grid_is_refined_where_the_support_jumps():
    # the sinusoid (100 x 20): the 25 default budgets jump from 9 to 13 selected components between
    # two budgets; refined, no two consecutive points differ by more than max(2, a quarter)
    from numkfs import cosso_path

    X, y, _ = make_sinusoid(n_samples=100, n_features=20, random_state=0)
    raw = cosso_path(X, y, max_refine=0)
    assert raw.n_points == 25 and _no_jump(raw)  # not vacuous: the raw grid jumps
    path = cosso_path(X, y)
    assert _no_jump(path) == [] and 25 < path.n_points <= 50
    assert set(raw.grid) <= set(path.grid)  # the default budgets are all walked, in increasing order
    assert np.all(np.diff(path.grid) > 0)
    given = cosso_path(X, y, grid=raw.grid[8:12])  # a grid you pass is walked as given
    np.testing.assert_array_equal(given.grid, raw.grid[8:12])
