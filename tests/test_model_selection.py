"""Cross-validation as numkfs does it: folds too small for a method are named as
folds, a scoring a method does not offer is refused by every method, integer
folds are unshuffled and the CV estimators reproducible by default, a given
splitter is used as given."""
import numpy as np
import pytest
from conftest import methods

import numkfs
from numkfs import FeaturePath, select
from numkfs.model_selection import choose_index, cv_mean_se, index_for_count, make_cv, path_scores


# --------------------------------------------------------------------------
# folds too small for the method are named as folds


THREE = (np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0]]), np.array([3.0, 4.0, 1.5]))


@pytest.mark.parametrize("method", methods(task="regression"))
def test_a_fold_too_small_is_named(method):
    X, y = THREE
    with pytest.raises(ValueError, match=r"^fold 1 of 2 has 1 training sample; \S+ needs at least 2: "
                                         r"use fewer folds \(cv\) or give more rows"):
        select(X, y, method, task="regression", cv=2)


# --------------------------------------------------------------------------
# a scoring the method does not offer is refused by every method


@pytest.mark.parametrize("method,task,scoring", [
    ("garrote", "regression", "accuracy"), ("cosso", "regression", "accuracy"),
    ("nmmkl", "classification", "neg_log_loss"), ("nmmkl", "classification", "neg_mean_squared_error"),
    ("knife", "classification", "neg_hinge_loss"), ("lpkta", "classification", "neg_log_loss"),
    ("l1kr", "regression", "accuracy"), ("knife", "regression", "r2"),
])
def test_every_method_refuses_a_scoring_it_does_not_offer(method, task, scoring):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    if task == "classification":
        y = (y > 0).astype(int)
    from numkfs.model_selection import SCORINGS

    offered = ", ".join(map(repr, SCORINGS[method][task]))
    with pytest.raises(ValueError, match=f"does not offer scoring={scoring!r}.*it offers {offered}"):
        select(X, y, method, task=task, scoring=scoring, cv=3)


def test_scoring_table_is_what_the_estimators_accept():
    from numkfs.estimators._knife_cv import CLASSIFICATION_SCORINGS
    from numkfs.estimators._lpkta_scoring import KERNEL_MODEL_SCORINGS
    from numkfs.model_selection import SCORINGS

    assert set(SCORINGS["knife"]["classification"]) == set(CLASSIFICATION_SCORINGS)
    assert set(SCORINGS["lpkta"]["classification"]) | set(SCORINGS["lpkta"]["regression"]) \
        == set(KERNEL_MODEL_SCORINGS)
    assert set(SCORINGS) == set(numkfs.selection.METHODS)
    for method, tasks in numkfs.selection.METHODS.items():
        assert set(SCORINGS[method]) == set(tasks)


# --------------------------------------------------------------------------
# reproducible cross-validation by default


def test_int_cv_gives_unshuffled_folds():
    from sklearn.model_selection import KFold, StratifiedKFold

    y = np.arange(20.0)
    got = [te.tolist() for _, te in make_cv(4, y, classifier=False).split(y[:, None])]
    assert got == [te.tolist() for _, te in KFold(4).split(y[:, None])]
    labels = np.arange(20) % 2
    got = [te.tolist() for _, te in make_cv(4, labels, classifier=True, random_state=3).split(y[:, None], labels)]
    assert got == [te.tolist() for _, te in StratifiedKFold(4).split(y[:, None], labels)]


def test_cv_estimator_with_default_random_state_is_reproducible():
    from numkfs.estimators import GarroteRegressorCV, L1KRRegressorCV

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    y = X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(50)
    a, b = (GarroteRegressorCV(n_grid=8).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)
    assert a.best_index_ == b.best_index_
    a, b = (L1KRRegressorCV(n_grid=6, cv=3).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)


def test_a_shuffling_splitter_is_used_as_given():
    from sklearn.model_selection import KFold

    from numkfs.estimators import GarroteRegressorCV

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    y = X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(50)
    plain = GarroteRegressorCV(n_grid=8).fit(X, y)
    shuffled = GarroteRegressorCV(n_grid=8, cv=KFold(5, shuffle=True, random_state=0)).fit(X, y)
    assert not np.allclose(plain.cv_scores_, shuffled.cv_scores_)


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
