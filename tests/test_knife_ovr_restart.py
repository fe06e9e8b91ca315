"""One-vs-rest KNIFE problems skip the restart of ``gamma="auto"``'s scale search.

``knife_ovr_paths`` (and the one-vs-rest fold walks of ``KNIFEClassifierCV``) settle each
problem's λ2 = 0 scale by the rounds alone: each problem's path is ``knife_path``'s on the same
grid with ``AUTO_GAMMA_RESTART`` off, point for point; binary problems keep the restart; and on
a seeded three-class problem the CV selects what it selected with the restart.
"""
import importlib

import numpy as np
import pytest
from sklearn.datasets import make_classification

from numkfs import KNIFEClassifierCV
from numkfs.methods.knife import KNIFEGridWalk, knife_ovr_paths, knife_path

kfit = importlib.import_module("numkfs.methods.knife._fit")
kpath = importlib.import_module("numkfs.methods.knife._path")


def _std(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


@pytest.fixture(scope="module")
def three_classes():
    X, y = make_classification(n_samples=90, n_features=12, n_informative=3, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    return _std(X), y


def _targets(y):
    return [np.where(y == k, 1.0, -1.0) for k in np.unique(y)]


def _same(a, b):
    """The same fits from the same states, up to rounding (the shared λ2 = 0 fit of the default grid
    is reached by a different sequence of kernel evaluations)."""
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(a.extra["gamma"], b.extra["gamma"])  # 1 / a count: exact
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-10)


def test_ovr_paths_are_the_paths_without_the_restart(three_classes, monkeypatch):
    X, y = three_classes
    kw = dict(loss="squared_hinge", gamma="auto", lambda1=3.0, random_state=0)
    grid = np.concatenate([[0.0], np.geomspace(0.1, 30.0, 5)])
    ovr = knife_ovr_paths(X, _targets(y), grid=grid, **kw)
    with_restart = knife_ovr_paths(X, _targets(y), grid=grid, gamma_restart=True, **kw)
    default_grid = knife_ovr_paths(X, _targets(y), n_grid=4, max_refine=0, **kw)
    for k, t in enumerate(_targets(y)):
        # the λ2 = 0 scale moved off 1/p: the restart would run
        assert ovr[k].extra["gamma"][0] > 1.0 / X.shape[1]
        _same(with_restart[k], knife_path(X, t, grid=grid, **kw))
        _same(KNIFEGridWalk(X, t, grid, gamma_restart=False, **kw).walk(grid.size), ovr[k])
    monkeypatch.setattr(kfit, "AUTO_GAMMA_RESTART", False)
    for k, t in enumerate(_targets(y)):
        _same(ovr[k], knife_path(X, t, grid=grid, **kw))
        _same(default_grid[k], knife_path(X, t, grid=default_grid[k].grid, **kw))
    # the restart moved at least one problem's fit: the flag is not a no-op here
    assert any(not np.array_equal(a.weights, b.weights) for a, b in zip(ovr, with_restart))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_cv_skips_the_restart_for_one_vs_rest_only(three_classes, monkeypatch, n_classes):
    X, y = three_classes
    if n_classes == 2:
        X, y = X[y < 2], y[y < 2]
    seen = []
    real = kpath._best_start

    def spy(*args, restart=True, **kw):
        seen.append(restart)
        return real(*args, restart=restart, **kw)

    monkeypatch.setattr(kpath, "_best_start", spy)
    KNIFEClassifierCV(n_grid=4, cv=3, random_state=0).fit(X, y)
    problems = 1 if n_classes == 2 else n_classes
    # one λ2 = 0 fit per problem on the full data and on each of the 3 folds (per pass: the low end may
    # be walked once more); with one problem the full data's first point is also asked for once more, where
    # the folds start from
    first = 1 if problems == 1 else 0
    assert len(seen) in (4 * problems + first, 8 * problems + first)
    assert all(seen) if n_classes == 2 else not any(seen)


def test_skipping_the_restart_keeps_the_multiclass_selection(three_classes, monkeypatch):
    X, y = three_classes
    kw = dict(n_grid=10, cv=3, random_state=0)
    skipped = KNIFEClassifierCV(**kw).fit(X, y)
    real = kpath._best_start
    monkeypatch.setattr(kpath, "_best_start", lambda *a, restart=True, **k: real(*a, **k))  # the restart always
    restarted = KNIFEClassifierCV(**kw).fit(X, y)
    np.testing.assert_array_equal(skipped.feature_weights_ > 0, restarted.feature_weights_ > 0)
    assert skipped.n_features_selected_ == restarted.n_features_selected_
    np.testing.assert_array_equal(skipped.predict(X), restarted.predict(X))
