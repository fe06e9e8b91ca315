"""The KNIFE CV estimators walk their folds in stages and stop once no later point can be chosen.

A fold's path walked in stages (``KNIFEGridWalk``) is ``knife_path(grid=...)`` point for point; the CV
with ``early_stopping`` chooses the point the CV over the whole grid chooses, its path is the
whole path's first points, and it stops at the first stage end where ``stop_early`` says so.  The
full-data path on the default grid is walked only as far (``knife_path``'s ``stop``): its points are
the unstopped path's first ones.
"""
import importlib

import numpy as np
import pytest

from numkfs import KNIFEClassifierCV, KNIFERegressorCV
from numkfs.datasets import make_sinusoid
from numkfs.datasets._knife import make_orange
from numkfs.estimators._cv import EARLY_STOP_POINTS, stop_early
from numkfs.methods.knife import KNIFEGridWalk, knife_ovr_paths, knife_path
from numkfs.model_selection import refine_walk

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


def _kkt_residual(X, y, walked):
    """The largest box-KKT violation at λ2 = 0 of a one-point walk's fit on the features it keeps."""
    from numkfs.methods.knife import knife_gradient_w

    w = walked.weights[0]
    g = knife_gradient_w(X, y, w, walked.extra["alpha"][0], walked.extra["intercept"][0],
                         gamma=float(walked.extra["gamma"][0]))
    act = w > 0
    return float(np.max(np.where(w[act] >= 1.0, np.maximum(g[act], 0.0), np.abs(g[act]))))


def test_folds_start_from_the_full_datas_first_point(monkeypatch):
    from numkfs.model_selection import fold_data, make_cv

    X, y, _ = make_sinusoid(120, n_features=12, random_state=1)
    est = KNIFERegressorCV(cv=3, n_grid=20, random_state=0).fit(X, y)
    first = est.path_.weights[0]
    assert 0 < np.count_nonzero(first) < X.shape[1]  # λ2 = 0 already drops features here
    gamma0 = float(est.path_.extra["gamma"][0])
    for train, test in make_cv(3, y, classifier=False, random_state=0).split(X, y):
        Xtr, _ = fold_data(X, train, test)
        ytr = y[train] - y[train].mean()
        warm = KNIFEGridWalk(Xtr, ytr, [0.0], gamma="auto", random_state=0, start=(first, gamma0)).walk(1)
        assert np.all(warm.weights[0][first == 0] == 0)  # a feature the full data dropped stays out
        # as stationary on the fold's own problem (at its own scale) as the fit from w = 1 at 1 / p, the old route
        cold = KNIFEGridWalk(Xtr, ytr, [0.0], gamma="auto", random_state=0).walk(1)
        assert _kkt_residual(Xtr, ytr, warm) <= 2.0 * _kkt_residual(Xtr, ytr, cold)
    # the CV with every fold from w = 1 at the scale 1 / p selects the same features, from the same full-data path
    monkeypatch.setattr(kcv, "FOLDS_FROM_FULL_START", False)
    old = KNIFERegressorCV(cv=3, n_grid=20, random_state=0).fit(X, y)
    np.testing.assert_array_equal(old.get_support(), est.get_support())
    np.testing.assert_array_equal(old.path_.weights[0], first)
