"""Cross-validation as numkfs does it: folds too small for a method are named as
folds, a scoring a method does not offer is refused by every method, integer
folds are unshuffled and the CV estimators reproducible by default, a given
splitter is used as given."""
import numpy as np
import pytest
from conftest import methods

import numkfs
from numkfs import select
from numkfs.model_selection import make_cv


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
