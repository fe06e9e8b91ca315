"""Property tests (hypothesis): every public estimator and ``select()`` on
odd but legal-looking inputs.

Shapes with n in {1, 2, 3} and p >> n, dtypes and memory layouts, every
scipy.sparse format, DataFrames with numeric, nullable, categorical and
object columns, targets as lists, arrays and pandas Series with odd
indexes, and the label kinds scikit-learn accepts.  Each outcome must be a
fitted model (finite predictions / a support of the right length) or a
ValueError/TypeError whose message names the parameter, the column or the
data at fault, within a time budget.  Anything else (another exception,
NaN in a result, a message naming nothing) fails.

The examples are few (``max_examples``) and the grids tiny, so the file
runs in about a minute; ``benchmarks/robustness.py`` runs many more.

The thread limits (``numkfs._threads.limit_threads``) get their own
property: blocks opened and left in any order by several threads keep each
thread's Numba count and the process's BLAS count right, and leave them as
they found them.
"""
from __future__ import annotations

import contextlib
import functools
import re
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

hypothesis = pytest.importorskip("hypothesis")
pd = pytest.importorskip("pandas")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from conftest import make, methods, names, task_of  # noqa: E402

#: seconds one fit (or select call) may take, Numba compilation excluded (warmed up below)
TIME_BUDGET = 60.0

#: an error message must name what is wrong: the data, a column, a parameter...
NAMED = re.compile(r"\b(X|y|column|columns|feature|features|sample|samples|class|classes|label|labels|target|cv|"
                   r"folds?|rows?|dtype|values?|sparse|n_features\w*|M|m|lambda\w*|gamma|kernel|support)\b|'[^']+'")


def estimators():
    """name -> (factory, task): every public estimator, the registry's small instance
    (``tests/conftest.py``: tiny grids, so each fit is fast)."""
    return {name: (functools.partial(make, name), task_of(name)) for name in names()}


SELECT_METHODS = methods()
SELECT_PARAMS = {"knife": {"n_grid": 4, "max_iter": 15}, "l1kr": {"n_grid": 3, "D_max": 2.0, "max_iter": 200},
                 "garrote": {"n_grid": 5}, "cosso": {"n_grid": 3, "max_iter": 20},
                 "lpkta": {"grid": np.linspace(2, 1, 5)}, "nmmkl": {}}


@pytest.fixture(scope="module", autouse=True)
def _warm_up():
    """Compile the Numba kernels once, outside the timed examples."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(12)
    labels = np.where(y > 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for factory, task in estimators().values():
            try:
                factory().fit(X, y if task == "regression" else labels)
            except Exception:  # noqa: BLE001 - warm-up only
                pass


# --------------------------------------------------------------------------
# strategies


@st.composite
def data(draw):
    n = draw(st.sampled_from([1, 2, 3, 8, 12]))
    p = draw(st.sampled_from([1, 3, 40]))  # p >> n for the small n
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    signal = X[:, 0] + 0.3 * rng.standard_normal(n)
    dtype = draw(st.sampled_from(["float64", "float32", "int64", "bool"]))
    if dtype == "int64":
        X = np.round(3 * X).astype(np.int64)
    elif dtype == "bool":
        X = X > 0
    else:
        X = X.astype(dtype)
    container = draw(st.sampled_from(["C", "F", "noncontig", "list", "coo", "csr", "csc", "lil", "dok", "bsr",
                                      "dia", "frame", "frame_nullable", "frame_categorical", "frame_object",
                                      "frame_strings"]))
    kind = draw(st.sampled_from(["float", "int01", "pm1", "three", "strings", "bool", "constant", "nan"]))
    if kind == "float":
        y = signal
    elif kind == "int01":
        y = (signal > np.median(signal)).astype(np.int64)
    elif kind == "pm1":
        y = np.where(signal > np.median(signal), 1, -1)
    elif kind == "three":
        y = np.digitize(signal, np.quantile(signal, [1 / 3, 2 / 3])) if n > 2 else np.arange(n) % 3
    elif kind == "strings":
        y = np.where(signal > np.median(signal), "yes", "no")
    elif kind == "bool":
        y = signal > np.median(signal)
    elif kind == "constant":
        y = np.ones(n)
    else:
        y = signal.copy()
        y[0] = np.nan
    y_container = draw(st.sampled_from(["array", "list", "series", "series_odd_index", "column"]))
    return _wrap_X(X, container, rng), _wrap_y(y, y_container), (n, p, dtype, container, kind, y_container)


def _wrap_X(X, container, rng):
    if container == "C":
        return np.ascontiguousarray(X)
    if container == "F":
        return np.asfortranarray(X)
    if container == "noncontig":
        return np.repeat(X, 2, axis=1)[:, ::2]
    if container == "list":
        return X.tolist()
    if container in ("coo", "csr", "csc", "lil", "dok", "bsr", "dia"):
        return getattr(sp, f"{container}_matrix")(X.astype(float))
    names = [f"f{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    if container == "frame_nullable":
        col = pd.array(np.round(np.asarray(X[:, 0], dtype=float) * 3).astype(int), dtype="Int64")
        if rng.random() < 0.5 and X.shape[0] > 1:
            col[0] = pd.NA
        df["f0"] = col
    elif container == "frame_categorical":
        df["f0"] = pd.Categorical(np.round(np.asarray(X[:, 0], dtype=float)))
    elif container == "frame_object":
        df["f0"] = df["f0"].astype(object)
    elif container == "frame_strings":
        df["f0"] = np.where(np.asarray(X[:, 0], dtype=float) > 0, "hi", "lo")
    return df


def _wrap_y(y, container):
    if container == "list":
        return y.tolist()
    if container == "series":
        return pd.Series(y)
    if container == "series_odd_index":
        return pd.Series(y, index=np.arange(len(y))[::-1] * 7 + 100)
    if container == "column":
        return y[:, None]
    return y


def _check_outcome(run, what):
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run()
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        assert msg and NAMED.search(msg), f"{what}: an error naming nothing: {type(exc).__name__}: {msg!r}"
        result = None
    elapsed = time.perf_counter() - t0
    assert elapsed < TIME_BUDGET, f"{what}: {elapsed:.1f} s"
    return result


def _n_rows(X):
    return len(X) if isinstance(X, list) else X.shape[0]


def _n_cols(X):
    return len(X[0]) if isinstance(X, list) else X.shape[1]


@settings(max_examples=90, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(name=st.sampled_from(sorted(estimators())), d=data())
def test_every_estimator_fits_or_refuses_clearly(name, d):
    X, y, what = d
    factory, _ = estimators()[name]
    est = factory()
    fitted = _check_outcome(lambda: est.fit(X, y), (name, what))
    if fitted is None:
        return
    if hasattr(est, "predict"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pred = np.asarray(est.predict(X))
        assert pred.shape[0] == _n_rows(X), (name, what)
        if pred.dtype.kind == "f":
            assert np.all(np.isfinite(pred)), (name, what)
    if hasattr(est, "get_support"):
        support = np.asarray(est.get_support())
        assert support.dtype == bool and support.shape == (_n_cols(X),), (name, what)
    if hasattr(est, "feature_weights_"):
        assert np.all(np.isfinite(np.asarray(est.feature_weights_, dtype=float))), (name, what)


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(method=st.sampled_from(SELECT_METHODS), d=data())
def test_select_gives_a_result_or_refuses_clearly(method, d):
    from numkfs import select

    X, y, what = d
    res = _check_outcome(lambda: select(X, y, method, cv=2, n_features=1 if method == "nmmkl" else None,
                                        **SELECT_PARAMS[method]), (method, what))
    if res is None:
        return
    p = _n_cols(X)
    assert res.weights.shape == (p,) and res.selected.shape == (p,) and len(res.feature_names) == p
    assert np.all(np.isfinite(res.weights)), (method, what)
    if isinstance(X, pd.DataFrame):
        assert list(res.feature_names) == [str(c) for c in X.columns]


# --------------------------------------------------------------------------
# thread limits: blocks nested in a thread and overlapping across threads

#: thread 3 is the test's own (the main thread); 0-2 are pool threads
N_ACTORS = 4
#: an action: (thread, None) leaves that thread's innermost open block, (thread, (numba, blas)) opens one
ACTIONS = st.tuples(st.integers(0, N_ACTORS - 1),
                    st.none() | st.tuples(st.sampled_from([None, 1, 2]), st.sampled_from([None, 1, 2])))


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(actions=st.lists(ACTIONS, max_size=16), closing=st.permutations(range(N_ACTORS)))
def test_thread_limits_nest_and_overlap_across_threads(actions, closing):
    """``limit_threads`` blocks opened and left in any order by four threads:
    while blocks are open, each thread's Numba count is its innermost block's
    and the process-wide BLAS count the smallest open limit; once all are
    left, every count is as before (overlapping blocks left the
    process's BLAS on one thread)."""
    from concurrent.futures import ThreadPoolExecutor

    import numba
    from threadpoolctl import threadpool_info

    from numkfs._threads import limit_threads
    from test_threads import blas_at_least_two, blas_threads

    def numba_count(limit):
        return max(1, min(limit, numba.config.NUMBA_NUM_THREADS))

    with blas_at_least_two() as before, contextlib.ExitStack() as pools:
        workers = [pools.enter_context(ThreadPoolExecutor(1)) for _ in range(N_ACTORS - 1)]

        def on(i, fn):
            return fn() if i == N_ACTORS - 1 else workers[i].submit(fn).result()

        start = [on(i, numba.get_num_threads) for i in range(N_ACTORS)]
        blocks = [[] for _ in range(N_ACTORS)]  # per thread: the open (context, numba limit, blas limit)

        def leave(i):
            block = blocks[i].pop()[0]
            on(i, lambda: block.__exit__(None, None, None))

        def check():
            open_blas = [b for stack in blocks for _, _, b in stack if b is not None]
            libs = [d for d in threadpool_info() if d["user_api"] == "blas"]
            for lib, b in zip(libs, before):
                # an OpenMP OpenBLAS counts per thread, a single-threaded build stays at 1
                if lib.get("threading_layer") != "openmp" and b >= 2:
                    assert lib["num_threads"] == (min(open_blas) if open_blas else b), (actions, blocks)
            for i in range(N_ACTORS):
                limits = [n for _, n, _ in blocks[i] if n is not None]
                want = numba_count(limits[-1]) if limits else start[i]
                assert on(i, numba.get_num_threads) == want, (actions, i)

        try:
            for i, limits in actions:
                if limits is None:
                    if blocks[i]:
                        leave(i)
                else:
                    block = limit_threads(*limits)
                    on(i, block.__enter__)
                    blocks[i].append((block, *limits))
                check()
        finally:
            for i in closing:
                while blocks[i]:
                    leave(i)
        assert blas_threads() == before
        assert [on(i, numba.get_num_threads) for i in range(N_ACTORS)] == start


# --------------------------------------------------------------------------
# the task given is the task used

#: select()'s methods that do regression.
REGRESSION_METHODS = methods(task="regression")


@st.composite
def small_integer_target(draw):
    """X and a target of small whole numbers (a 0-to-k score): classes by default, a number with
    ``task="regression"``."""
    n = draw(st.sampled_from([16, 24]))
    k = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.clip(np.round(X[:, 0] + k / 2 + 0.3 * rng.standard_normal(n)), 0, k).astype(np.int64)
    y[:2] = [0, k]  # at least two values
    container = draw(st.sampled_from(["array", "list", "series", "float"]))
    y = y.astype(float) if container == "float" else _wrap_y(y, container)
    return X, y


@settings(max_examples=10, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(method=st.sampled_from(REGRESSION_METHODS), d=small_integer_target())
def test_select_uses_the_regression_task_it_is_given(method, d):
    # a 0-4 score was five classes to lp-KTA (hinge loss, "rarest class" errors) and to the resampling
    # selectors, whatever task was given
    from numkfs import select

    X, y = d
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = select(X, y, method, task="regression", cv=2, **SELECT_PARAMS[method])
    assert res.task == "regression"
    assert res.score_name == "neg_mean_squared_error" == res.path.score_name
    assert "Classifier" not in type(res.estimator).__name__
    if method == "lpkta":
        assert res.estimator.target == "regression"
