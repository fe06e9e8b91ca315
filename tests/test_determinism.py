"""Determinism: same ``random_state`` -> same answer (across runs and n_jobs),
inputs never modified, fitted estimators survive pickling."""
import hashlib
import pickle

import numpy as np
import pandas as pd
import pytest
from conftest import make, names, task_of
from test_properties import ENTRIES, ENTRY

from numkfs.estimators import COSSORegressorCV
from numkfs.methods.knife import knife, knife_path


def _data(task, seed=0, n=24, p=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    if task == "reg":
        return X, X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.standard_normal(n)
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    y[0], y[1] = 0, 1
    return X, y


def _digest(a):
    if isinstance(a, (pd.DataFrame, pd.Series)):
        return hashlib.sha256(pd.util.hash_pandas_object(a, index=True).values.tobytes()
                              + str(list(getattr(a, "columns", []))).encode()).hexdigest()
    a = np.asarray(a)
    return hashlib.sha256(a.tobytes() + str((a.dtype, a.shape, a.flags.f_contiguous)).encode()).hexdigest()


@pytest.mark.parametrize("name", [e.name for e in ENTRIES])
@pytest.mark.parametrize("layout", ["C", "F", "dataframe"])
def test_inputs_never_modified(name, layout):
    entry = ENTRY[name]
    X, y = _data(entry.task, seed=1)
    X[:, 2] = 1.0  # a constant column: methods zero its weight, must not touch X
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "dataframe":
        X, y = pd.DataFrame(X, columns=list("abcde")), pd.Series(y)
    before = (_digest(X), _digest(y))
    entry.run(X, y)
    assert (_digest(X), _digest(y)) == before


@pytest.mark.parametrize("name", [e.name for e in ENTRIES])
def test_same_answer_on_repeat(name):
    """Two runs (random_state fixed where it exists) give bit-identical answers."""
    entry = ENTRY[name]
    X, y = _data(entry.task, seed=2)
    a = entry.run(X, y)["output"]
    b = entry.run(X, y)["output"]
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _fit_out(est, X, y):
    est.fit(X, y)
    return est.predict(X) if hasattr(est, "predict") else est.transform(X)


# KNIFE is the one method that draws from random_state: the starting weights of its restarts after
# the first (w = 1) and its Nyström landmarks.  The fitted attribute that shows the draw: the
# objective of every start, the fold-by-fold scores of the CV estimators through landmarks.
_LANDMARKS = {"cv": 3, "approximation": "nystroem", "n_components": 10}
RANDOM_DRAWS = {"KNIFERegressor": ({"n_restarts": 3}, "restart_objectives_"),
                "KNIFEClassifier": ({"n_restarts": 3}, "restart_objectives_"),
                "KNIFERegressorCV": (_LANDMARKS, "cv_scores_"),
                # the continuous held-out loss: accuracies on 10-row folds are too coarse to tell two draws apart
                "KNIFEClassifierCV": ({**_LANDMARKS, "scoring": "neg_loss"}, "cv_scores_")}


def _three_fits(name, seeds, **params):
    X, y = _data("reg" if task_of(name) == "regression" else "clf", seed=3, n=30)
    fits = [make(name, **params, **({} if s is None else {"random_state": s})) for s in seeds]
    return fits, [_fit_out(est, X, y) for est in fits]


@pytest.mark.parametrize("name", list(RANDOM_DRAWS))
def test_random_state_fixes_the_random_choices(name):
    """The same seed gives the same draw and the same answer; another seed another draw."""
    params, drawn = RANDOM_DRAWS[name]
    fits, outs = _three_fits(name, (7, 7, 8), **params)
    a, b, c = (np.asarray(getattr(est, drawn)) for est in fits)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(a, b)
    # different starts end within the fits' tolerance (1e-6 relative) of one another, not bit-equal
    assert a.shape != c.shape or not np.allclose(a, c, rtol=1e-9, atol=0.0), f"seeds 7 and 8 drew the same {drawn}"


@pytest.mark.parametrize("name", names(cv=True))
def test_random_state_unused_where_nothing_is_drawn(name):
    """Documented as unused (an int cv gives unshuffled folds; KNIFE's one start is w = 1 and its
    kernel exact): any seed, the same fit."""
    fits, outs = _three_fits(name, (7, 8, None), cv=3)
    for est, out in zip(fits[1:], outs[1:]):
        np.testing.assert_array_equal(out, outs[0])
        np.testing.assert_array_equal(est.cv_scores_, fits[0].cv_scores_)


@pytest.mark.parametrize("name", names(cv=True))
def test_shuffled_folds_follow_the_splitters_seed(name):
    """A shuffling splitter: its seed fixes the fold assignment, another seed gives other folds."""
    from sklearn.model_selection import KFold, StratifiedKFold

    split = KFold if task_of(name) == "regression" else StratifiedKFold
    X, y = _data("reg" if task_of(name) == "regression" else "clf", seed=3, n=30)
    fits = [make(name, cv=split(3, shuffle=True, random_state=s)).fit(X, y) for s in (7, 7, 8)]
    a, b, c = (est.cv_scores_ for est in fits)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c), "seeds 7 and 8 of the splitter gave the same fold scores"


def test_knife_restarts_depend_on_random_state_only():
    X, y = _data("reg", seed=4, n=30)
    fits = [knife(X, y, lambda2=0.05, n_restarts=3, max_iter=30, random_state=s) for s in (5, 5, 6)]
    # three starts drawn from the seed: the same seed, the same three fits and the same winner
    np.testing.assert_array_equal(fits[0].restart_objectives, fits[1].restart_objectives)
    np.testing.assert_array_equal(fits[0].weights, fits[1].weights)
    # the first start is w = 1 whatever the seed; another seed, other random starts after it
    assert fits[0].restart_objectives[0] == fits[2].restart_objectives[0]
    assert np.all(fits[0].restart_objectives[1:] != fits[2].restart_objectives[1:])
    w = [knife_path(X, y, n_grid=4, n_restarts=3, max_iter=30, random_state=s).weights for s in (5, 5)]
    np.testing.assert_array_equal(w[0], w[1])


# the same fit whatever n_jobs: parallel CV folds, parallel KNIFE restarts
N_JOBS_CASES = {"COSSORegressorCV": {"cv": 3}, "L1KRRegressorCV": {"cv": 3}, "KNIFERegressorCV": {"cv": 3},
                "KNIFERegressor-restarts": {"n_restarts": 3, "lambda2": 5.0}}


@pytest.mark.parametrize("case", list(N_JOBS_CASES))
def test_same_answer_across_n_jobs(case):
    X, y = _data("reg", seed=5, n=30)
    fits = [make(case.split("-")[0], random_state=0, n_jobs=nj, **N_JOBS_CASES[case]) for nj in (None, 1, 2)]
    outs = [_fit_out(est, X, y) for est in fits]
    # KNIFE's restarts are whole fits in the workers: bit for bit; CV scores to round-off
    same = (np.testing.assert_array_equal if case.endswith("restarts")
            else lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12))
    for est, o in zip(fits[1:], outs[1:]):
        same(o, outs[0])
        same(est.feature_weights_, fits[0].feature_weights_)
        if hasattr(est, "objective_"):
            same(est.objective_, fits[0].objective_)


def test_cosso_path_cv_scores_same_across_n_jobs():
    X, y = _data("reg", seed=6, n=30)
    paths = [COSSORegressorCV(n_grid=4, cv=3, max_iter=30, random_state=1, n_jobs=nj).fit(X, y).path_
             for nj in (1, 2)]
    np.testing.assert_allclose(paths[0].cv_scores, paths[1].cv_scores, rtol=1e-10)
    np.testing.assert_allclose(paths[0].weights, paths[1].weights, rtol=1e-10)


@pytest.mark.parametrize("name", [e.name for e in ENTRIES if e.kind != "path"])
def test_pickle_roundtrip_identical_predictions(name):
    entry = ENTRY[name]
    X, y = _data(entry.task, seed=8)
    est = make(name).fit(X, y)
    est2 = pickle.loads(pickle.dumps(est))
    X_new = np.random.default_rng(9).standard_normal((7, X.shape[1]))
    for Z in (X, X_new):
        a = est.predict(Z) if entry.kind == "predict" else est.transform(Z)
        b = est2.predict(Z) if entry.kind == "predict" else est2.transform(Z)
        np.testing.assert_array_equal(a, b)
        assert a.shape[0] == Z.shape[0]
        if entry.kind == "transform":  # the selected columns of Z, unchanged
            np.testing.assert_array_equal(a, Z[:, est.get_support()])
        elif entry.task == "clf":  # labels seen in training
            assert set(np.unique(a)) <= set(np.unique(y))
        else:
            assert np.all(np.isfinite(a))


def test_knife_estimators_are_reproducible_with_their_defaults():
    """KNIFE draws the starting weights of its restarts after the first (w = 1) at random. Its
    default random_state is None, as scikit-learn's: with the default single start from w = 1, the
    exact kernel and unshuffled folds two fits still agree to the last bit; with more starts an int
    seed makes two fits agree and None draws fresh starts each fit."""
    from numkfs import KNIFEClassifier, KNIFEClassifierCV, KNIFERegressor, KNIFERegressorCV
    from numkfs.datasets import make_sinusoid

    for cls in (KNIFERegressor, KNIFEClassifier, KNIFERegressorCV, KNIFEClassifierCV):
        assert cls().get_params()["random_state"] is None, cls.__name__
    X, y, _ = make_sinusoid(n_samples=40, random_state=1)
    a = KNIFERegressorCV(n_grid=6, cv=3).fit(X, y)
    b = KNIFERegressorCV(n_grid=6, cv=3).fit(X, y)
    assert a.best_index_ == b.best_index_
    np.testing.assert_array_equal(a.feature_weights_, b.feature_weights_)
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)
    # an int: the same uniform starts after the first in every fit
    c, d = (KNIFERegressor(lambda2=1.0, random_state=3, max_iter=2, n_restarts=2).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(c.restart_objectives_, d.restart_objectives_)
    # None: fresh uniform starts after the first per fit (two fits stop at different iterates)
    c = KNIFERegressor(lambda2=1.0, max_iter=2, n_restarts=2).fit(X, y)
    d = KNIFERegressor(lambda2=1.0, max_iter=2, n_restarts=2).fit(X, y)
    assert c.restart_objectives_[0] == d.restart_objectives_[0]
    assert c.restart_objectives_[1] != d.restart_objectives_[1]
