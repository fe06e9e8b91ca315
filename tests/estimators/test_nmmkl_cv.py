"""NMMKLSelectorCV: m chosen by the held-out score of a linear SVM on each
fold's NMMKL selection (NMMKL's default kept a fixed 10)."""
import numpy as np
import pytest
from sklearn.datasets import make_classification

from numkfs import NMMKLSelector, NMMKLSelectorCV, select
from numkfs._cv_scoring import linear_svm_scores
from numkfs.methods.nmmkl import default_m_grid, nmmkl_path
from numkfs.model_selection import choose_index, make_cv


@pytest.fixture(scope="module")
def informative():
    """5 informative features of 30, the rest noise (shuffle=False: the first 5; two of them, 0 and 3,
    carry little linear signal, so NMMKL's linear kernels rank them low)."""
    X, y = make_classification(n_samples=200, n_features=30, n_informative=5, n_redundant=0, shuffle=False,
                               random_state=0)
    return X, y


def test_cv_scores_are_the_folds_linear_svm_scores(informative):
    """Each fold: the NMMKL selections of its training rows, scored on its
    held-out rows by the linear SVM, exactly as computed by hand."""
    X, y = informative
    grid = [2, 5, 9]
    est = NMMKLSelectorCV(grid=grid, cv=3).fit(X, y)
    for k, (tr, te) in enumerate(make_cv(3, y, classifier=True).split(X, y)):
        fp = nmmkl_path(X[tr], y[tr], grid)
        np.testing.assert_array_equal(est.cv_scores_[:, k], linear_svm_scores(X, y, tr, te, fp.extra["selection"]))
    full = nmmkl_path(X, y, grid)
    np.testing.assert_array_equal(est.path_.extra["selection"], full.extra["selection"])
    assert est.best_index_ == choose_index(est.path_, "best")
    assert est.n_features_to_select_ == grid[est.best_index_] == est.n_features_selected_


def test_one_m_is_nmmkl_selector(informative):
    X, y = informative
    cv = NMMKLSelectorCV(grid=[4], cv=3).fit(X, y)
    one = NMMKLSelector(n_features_to_select=4).fit(X, y)
    np.testing.assert_array_equal(cv.get_support(), one.get_support())
    np.testing.assert_allclose(cv.scores_, one.scores_, rtol=1e-6, atol=1e-9 * np.max(one.scores_))


def test_linear_svm_scores_closed_forms():
    """A separable column: accuracy 1 and hinge loss 0 when the margin is wide;
    an empty selection is NaN."""
    X = np.column_stack([np.r_[-np.ones(10) * 5, np.ones(10) * 5], np.zeros(20) + np.arange(20) % 3])
    y = np.r_[np.zeros(10), np.ones(10)]
    tr, te = np.r_[0:8, 10:18], np.r_[8:10, 18:20]
    acc, none = linear_svm_scores(X, y, tr, te, [np.array([True, False]), np.array([False, False])], "accuracy")
    assert acc == 1.0 and np.isnan(none)
    # standardised on the training rows the column is ±1 exactly, so the SVM's margin is at most 1 and the
    # decision values of the held-out rows, equal to the training ones, have hinge loss max(0, 1 - |f|) <= 1
    (h,) = linear_svm_scores(X, y, tr, te, [np.array([True, False])])
    assert -1.0 <= h <= 0.0


@pytest.mark.parametrize("seed", [0, 2])
def test_finds_the_linear_features(seed):
    """A linear truth NMMKL's linear kernels represent: 3 of 30 features.
    The 1se rule keeps exactly them; the best m keeps them all (the fixed
    m = min(p // 2, 10) that ``select`` used to keep had 7 false positives)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((200, 30))
    y = np.sign(X[:, :3] @ np.array([2.0, -1.5, 1.0]) + 0.7 * rng.standard_normal(200))
    one_se = NMMKLSelectorCV(cv=5, cv_rule="1se").fit(X, y)
    assert np.flatnonzero(one_se.get_support()).tolist() == [0, 1, 2]
    best = NMMKLSelectorCV(cv=5).fit(X, y)
    assert best.get_support()[:3].all()


def test_default_grid_and_bad_grids():
    assert default_m_grid(3).tolist() == [1, 2, 3]
    g = default_m_grid(2000)
    assert g[0] == 1 and g[-1] == 2000 and len(g) <= 20 and np.all(np.diff(g) > 0)
    X, y = make_classification(n_samples=40, n_features=4, random_state=0)
    for bad in ([0, 2], [1, 5], [1.5], []):
        with pytest.raises(ValueError, match="grid must hold whole numbers of features in \\[1, 4\\]"):
            NMMKLSelectorCV(grid=bad, cv=2).fit(X, y)


@pytest.mark.filterwarnings("ignore:selecting 3 features:UserWarning")  # tied φ at the requested m
def test_select_chooses_m_by_cv_and_keeps_a_requested_m(informative):
    X, y = informative
    res = select(X, y, "nmmkl", cv=3, cv_rule="best")
    est = NMMKLSelectorCV(cv=3, cv_rule=res.cv_rule).fit(X, y)
    assert res.n_selected == est.n_features_to_select_
    np.testing.assert_array_equal(res.selected, est.get_support())
    assert res.score == pytest.approx(est.path_.mean_cv_score[est.best_index_], rel=1e-12)
    # the default, "2pct", is read off the same path: the sparsest m within 2 % of the best CV loss
    default = select(X, y, "nmmkl", cv=3)
    mean = est.path_.mean_cv_score
    assert default.cv_rule == "2pct" and mean[default.index] >= mean.max() - 0.02 * abs(mean.max())
    assert default.n_selected == min(est.path_.n_selected()[mean >= mean.max() - 0.02 * abs(mean.max())])
    np.testing.assert_array_equal(default.selected, est.path_.selected(default.index))
    fixed = select(X, y, "nmmkl", n_features=3, cv=3)
    assert fixed.n_selected == 3 and fixed.cv_rule == "n_features"


def test_nmmkl_path_default_grid_is_every_m():
    X, y = make_classification(n_samples=40, n_features=4, random_state=0)
    assert nmmkl_path(X, y).grid.tolist() == [1.0, 2.0, 3.0, 4.0]  # the default grid: every m
