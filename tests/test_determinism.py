"""Determinism: same ``random_state`` -> same answer (across runs and n_jobs),
inputs never modified, fitted estimators survive pickling."""
import hashlib
import pickle

import numpy as np
import pandas as pd
import pytest
from test_robustness import ENTRIES, ENTRY, make_estimator

from numkfs.estimators._garrote import COSSORegressorCV
from numkfs.estimators._knife import KNIFERegressor, KNIFERegressorCV
from numkfs.estimators._l1kr import L1KRRegressor
from numkfs.estimators._lpkta import LpKTASelector
from numkfs.methods.cosso import cosso_path
from numkfs.methods.knife import knife_path


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


@pytest.mark.parametrize("make", [
    lambda rs: KNIFERegressor(lambda2=0.05, n_restarts=3, max_iter=30, random_state=rs),
    lambda rs: COSSORegressorCV(n_Ms=4, cv=3, max_iter=30, random_state=rs),
    lambda rs: L1KRRegressor(cv=3, n_grid=4, D_max=2.0, max_steps=200, random_state=rs),
    lambda rs: LpKTASelector(cv=3, p_grid=np.linspace(2, 1, 11), random_state=rs),
], ids=["KNIFERegressor", "COSSORegressor", "L1KRRegressor", "LpKTASelector"])
def test_random_state_fixes_the_answer(make):
    X, y = _data("reg" if "Selector" not in repr(make(0)) else "clf", seed=3, n=30)
    a = _fit_out(make(7), X, y)
    b = _fit_out(make(7), X, y)
    np.testing.assert_array_equal(a, b)


def test_knife_restarts_depend_on_random_state_only():
    X, y = _data("reg", seed=4, n=30)
    w = [knife_path(X, y, n_lambdas=4, n_restarts=3, max_iter=30, random_state=s).weights for s in (5, 5)]
    np.testing.assert_array_equal(w[0], w[1])


@pytest.mark.parametrize("make", [
    lambda nj: COSSORegressorCV(n_Ms=4, cv=3, max_iter=30, random_state=0, n_jobs=nj),
    lambda nj: L1KRRegressor(cv=3, n_grid=4, D_max=2.0, max_steps=200, random_state=0, n_jobs=nj),
    lambda nj: KNIFERegressorCV(n_lambdas=4, cv=3, max_iter=30, random_state=0, n_jobs=nj),
    lambda nj: KNIFERegressor(lambda2=0.05, n_restarts=3, max_iter=30, random_state=0, n_jobs=nj),
], ids=["COSSORegressor", "L1KRRegressor", "KNIFERegressorCV", "KNIFERegressor-restarts"])
def test_same_answer_across_n_jobs(make):
    X, y = _data("reg", seed=5, n=30)
    outs = [_fit_out(make(nj), X, y) for nj in (None, 1, 2)]
    for o in outs[1:]:
        np.testing.assert_allclose(o, outs[0], rtol=1e-10, atol=1e-12)


def test_cosso_path_cv_scores_same_across_n_jobs():
    X, y = _data("reg", seed=6, n=30)
    paths = [cosso_path(X, y, n_Ms=4, cv=3, max_iter=30, random_state=1, n_jobs=nj) for nj in (1, 2)]
    np.testing.assert_allclose(paths[0].cv_scores, paths[1].cv_scores, rtol=1e-10)
    np.testing.assert_allclose(paths[0].weights, paths[1].weights, rtol=1e-10)


@pytest.mark.parametrize("name", [e.name for e in ENTRIES if e.kind != "path"])
def test_pickle_roundtrip_identical_predictions(name):
    entry = ENTRY[name]
    X, y = _data(entry.task, seed=8)
    est = make_estimator(name).fit(X, y)
    est2 = pickle.loads(pickle.dumps(est))
    X_new = np.random.default_rng(9).standard_normal((7, X.shape[1]))
    for Z in (X, X_new):
        a = est.predict(Z) if entry.kind == "predict" else est.transform(Z)
        b = est2.predict(Z) if entry.kind == "predict" else est2.transform(Z)
        np.testing.assert_array_equal(a, b)
        assert np.all(np.isfinite(a)) if entry.task == "reg" else True
