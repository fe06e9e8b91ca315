"""The shared grid refinement (``numkfs._grid_refinement``): a support jump is more than
max(2, a quarter) of the features, ``refine_walk`` closes every jump within its budget,
and the default grids of KNIFE (on the colon data), the garrote and COSSO reach every
sparsity level.

Small seeded versions of the targets; the full-size cases (300 x 30, two seeds, the colon
data's estimators) are in ``benchmarks/selection_quality.py``.
"""
import numpy as np
import pytest

from numkfs.datasets import load_dataset, make_sinusoid
from numkfs.methods.knife import knife_path
from numkfs.model_selection import refine_walk, support_jump


def _no_jump(path):
    S = [path.selected(i) for i in range(path.n_points)]
    return [i for i in range(path.n_points - 1) if support_jump(S[i], S[i + 1])]


# --------------------------------------------------------------------------
# the shared refinement


@pytest.mark.filterwarnings("ignore")
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


@pytest.mark.filterwarnings("ignore")
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


@pytest.mark.filterwarnings("ignore")
def test_knife_path_default_grid_on_colon_has_no_support_jump():
    d = load_dataset("colon")
    X = np.asarray(d.data, dtype=float)
    X = (X - X.mean(0)) / X.std(0)
    y = np.where(np.asarray(d.target) == np.unique(d.target)[1], 1.0, -1.0)
    path = knife_path(X, y, loss="squared_hinge", random_state=0)
    assert path.n_points <= 2 * 100
    assert _no_jump(path) == []
    assert path.n_selected()[0] > 100 and path.n_selected()[-1] < 5  # from most genes to a handful


@pytest.mark.filterwarnings("ignore")
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


@pytest.mark.filterwarnings("ignore")
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
