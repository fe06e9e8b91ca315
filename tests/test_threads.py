"""The one thread policy (numkfs._threads): the table, the context manager
restoring the previous settings (also when blocks overlap in several
threads), task counts, and the callers using it."""
import contextlib
import math
import re
import threading
from pathlib import Path

import numba
import numpy as np
import pytest

from numkfs._threads import (BLAS_SERIAL_MAX_SAMPLES, SERIAL_MAX_SAMPLES, limit_threads, parallel_tasks, set_threads,
                             thread_limits, thread_policy, threads_per_worker)


def test_policy_table():
    big = BLAS_SERIAL_MAX_SAMPLES + 1
    assert thread_limits("knife", SERIAL_MAX_SAMPLES["knife"]) == (1, 1)
    assert thread_limits("KNIFE", max(SERIAL_MAX_SAMPLES["knife"], BLAS_SERIAL_MAX_SAMPLES) + 1) == (None, None)
    assert thread_limits("l1kr", 999) == (1, 1) and thread_limits("l1kr", 1000) == (None, 1)
    assert thread_limits("l1kr", big) == (None, None)
    assert thread_limits("cosso", 10**6) == (None, 1)
    # every method, known or not, runs small linear algebra on one BLAS thread
    assert thread_limits("unknown", 10) == (None, 1) and thread_limits("unknown", big) == (None, None)
    assert thread_limits("lpkta", BLAS_SERIAL_MAX_SAMPLES) == (None, 1)


def test_set_threads_pins_and_restores():
    old = set_threads(numba=1)
    try:
        assert thread_limits("knife", 10**6) == (1, None)
        assert set_threads(2) == {"numba": 1, "blas": None}
        assert thread_limits("cosso", 10) == (2, 2)
    finally:
        set_threads(**old)
    assert thread_limits("knife", 10**6) == (None, None)
    import numkfs

    assert numkfs.set_threads is set_threads


@pytest.mark.parametrize("kwargs", [{"n_threads": math.inf}, {"n_threads": math.nan}, {"n_threads": [1]},
                                    {"n_threads": True}, {"n_threads": -1}, {"n_threads": 0}, {"n_threads": 1.5},
                                    {"n_threads": "2"}, {"numba": math.inf}, {"numba": 0}, {"blas": [1]},
                                    {"blas": math.nan}])
def test_set_threads_refuses_clearly(kwargs):
    # inf gave OverflowError, nan and [1] int()'s own messages
    (name, value), = kwargs.items()
    with pytest.raises(ValueError, match=rf"The '{name}' parameter of set_threads must be an int in the range "
                                         rf"\[1, inf\) or None\. Got {re.escape(repr(value))} instead"):
        set_threads(**kwargs)
    assert thread_limits("knife", 10**6) == (None, None)  # the pins untouched


def blas_threads():
    """The thread count of each BLAS threadpoolctl finds, as the calling thread sees it."""
    from threadpoolctl import threadpool_info

    return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]


@contextlib.contextmanager
def blas_at_least_two():
    """Every BLAS that can be on at least two threads (the counts yielded), so
    that one left at one thread shows; the previous counts restored after.  Set
    directly: inside a threadpoolctl block, OpenBLAS would take limits from
    the block's thread only, and the fits' threads could not change it."""
    from threadpoolctl import ThreadpoolController

    libs = ThreadpoolController().select(user_api="blas").lib_controllers
    if not libs:
        pytest.skip("no BLAS seen by threadpoolctl")

    def set_counts(counts):
        for lib, n in zip(libs, counts):
            lib.set_num_threads(n)
            release = getattr(type(lib), "clear_controlling_thread", None)  # threadpoolctl >= 3.8
            if release is not None:
                release()

    before = [lib.num_threads for lib in libs]
    set_counts([max(2, n) for n in before])
    try:
        now = blas_threads()
        if max(now) < 2:  # (a single-threaded build, e.g. SCS's OpenBLAS, stays at 1 whatever is asked)
            pytest.skip("the BLAS runs on one thread only here")
        yield now
    finally:
        set_counts(before)


def test_blas_limits_overlapping_in_threads_restore_the_setting():
    # A enters, B enters, A leaves, B leaves: B saved A's limit of 1 on entry and restored it on exit for good, so
    # every later BLAS call of the program ran on one thread; in between, A's exit lifted B's limit
    with blas_at_least_two() as before:
        order = [threading.Event() for _ in range(3)]
        seen = {}

        def first():
            with limit_threads(None, 1):
                order[0].set()
                order[1].wait()
                seen["first"] = blas_threads()
            order[2].set()

        def second():
            order[0].wait()
            with limit_threads(None, 1):
                order[1].set()
                order[2].wait()
                seen["second, after the first left"] = blas_threads()

        threads = [threading.Thread(target=f) for f in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        after = blas_threads()
    assert after == before
    one = [1] * len(before)
    assert seen == {"first": one, "second, after the first left": one}


def test_blas_limits_nest_to_the_smallest_open_one():
    with blas_at_least_two() as before:
        with limit_threads(None, 2):
            with limit_threads(None, 1):
                assert blas_threads() == [1] * len(before)
                with limit_threads(None, 2):  # a wider limit inside a narrower one leaves it
                    assert blas_threads() == [1] * len(before)
            assert blas_threads() == [min(2, n) for n in before]
        assert blas_threads() == before
        with pytest.raises(RuntimeError):
            with limit_threads(None, 1):
                raise RuntimeError
        assert blas_threads() == before


@pytest.mark.filterwarnings("ignore")
def test_fits_in_joblib_threads_leave_blas_and_numba_as_found():
    """Lp-KTA, COSSO and garrote CV fits in 4 joblib threads left the process's BLAS on one thread."""
    from joblib import Parallel, delayed

    from conftest import make

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = X[:, 0] + 0.1 * rng.standard_normal(40)

    def fit(name):
        start = numba.get_num_threads()
        make(name).fit(X, y)
        return start, numba.get_num_threads()

    with blas_at_least_two() as before:
        numba_before = numba.get_num_threads()
        counts = Parallel(n_jobs=4, prefer="threads")(
            delayed(fit)(name) for name in ["GarroteRegressorCV", "COSSORegressorCV", "LpKTASelectorCV"] * 4)
        after = blas_threads()
    assert after == before
    assert numba.get_num_threads() == numba_before
    assert all(start == end for start, end in counts)


def test_thread_policy_decorator_limits_blas_for_small_data():
    from threadpoolctl import threadpool_info

    seen = {}

    @thread_policy("lpkta")
    def fit(X, y=None):
        seen["blas"] = [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]
        seen["numba"] = numba.get_num_threads()
        return X

    before = numba.get_num_threads()
    X = np.zeros((50, 3))
    assert fit(X) is X and fit.__name__ == "fit"
    assert seen["blas"] and all(t == 1 for t in seen["blas"])
    assert seen["numba"] == before and numba.get_num_threads() == before
    fit([[0.0]] * 3)  # a list: its length is the row count


def test_numba_threads_sleep_when_idle():
    """libgomp's default spin-wait takes the cores of a busy machine: numkfs
    asks for PASSIVE before Numba loads it, and keeps the user's choice."""
    import os
    import subprocess
    import sys

    code = "import numkfs._jit, os; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "PASSIVE"
    out = subprocess.run([sys.executable, "-c", code], env=dict(env, OMP_WAIT_POLICY="ACTIVE"),
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ACTIVE"


def test_limit_threads_restores_and_clips():
    from threadpoolctl import threadpool_info

    old = numba.get_num_threads()
    blas_before = [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]
    with limit_threads(1, 1):
        assert numba.get_num_threads() == 1
        assert all(d["num_threads"] == 1 for d in threadpool_info() if d["user_api"] == "blas")
    assert numba.get_num_threads() == old
    assert [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"] == blas_before
    with limit_threads(10**6):  # more than Numba has: clipped, not an error
        assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    with pytest.raises(RuntimeError):
        with limit_threads(1):
            raise RuntimeError
    assert numba.get_num_threads() == old


def test_parallel_tasks_and_workers():
    nt = numba.get_num_threads()
    assert parallel_tasks(0) == 1
    assert parallel_tasks(10**6, per_thread=4) == 4 * nt
    assert parallel_tasks(3, per_thread=4) == min(3, 4 * nt)
    assert parallel_tasks(2048, per_thread=8, min_items=512) == min(4, 8 * nt)
    assert threads_per_worker(10**6) == 1


def test_callers_use_the_policy():
    """KNIFE, L1KR, COSSO, the CV driver, Dask blocks and the task counts of
    the ARD and lp-KTA kernels all read it (no threshold of their own; KNIFE's
    limit from its row of the method registry, whose rows the policy reads)."""
    import importlib
    import inspect

    knife, l1kr, cosso, parallel, distributed, ard, lpkta_newton = (importlib.import_module(f"numkfs.{m}") for m in (
        "methods.knife._problem", "methods.l1kr.path", "methods.cosso", "_parallel", "distributed", "kernels.ard",
        "solvers.native.lpkta_newton"))
    nmmkl = importlib.import_module("numkfs.solvers.native.nmmkl")

    assert knife.SERIAL_MAX_SAMPLES == SERIAL_MAX_SAMPLES["knife"]
    for mod in (knife, l1kr, cosso, parallel, distributed, ard, lpkta_newton, nmmkl):
        src = inspect.getsource(mod)
        assert "set_num_threads" not in src and "threadpool_limits" not in src, mod.__name__
        assert "_threads import" in src or (mod is knife and "METHOD_ROWS[\"knife\"].serial_max_samples" in src), \
            mod.__name__
    assert np.isscalar(parallel.numba_threads_for(2))


@pytest.mark.parametrize("approximation, n_jobs", [("exact", 2), ("nystroem", None), ("nystroem", 2)])
def test_knife_cv_limits_blas_around_its_fold_threads(approximation, n_jobs):
    # BLAS's limit is process-wide, so the fits in fold threads leave it alone and the CV sets it around the
    # pool: one BLAS thread with a Nystrom basis (the policy table), at most cores / workers with n_jobs workers
    # (two fold threads with two BLAS threads each made a 10^6-row CV slower than one fold at a time)
    from types import SimpleNamespace

    from threadpoolctl import threadpool_info

    from numkfs import KNIFERegressorCV

    def blas():
        return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]

    if not blas():
        pytest.skip("no BLAS seen by threadpoolctl")
    est = KNIFERegressorCV(approximation=approximation, n_jobs=n_jobs)
    est.approximation_ = approximation
    n = 5_000  # above the rows KNIFE runs serially at
    assert thread_limits("knife", n) == (None, None)
    before = blas()
    with est._cv_threads(SimpleNamespace(X_split=np.empty((n, 3)))):
        inside = blas()
    assert blas() == before
    expected = 1 if approximation == "nystroem" else threads_per_worker(2)
    assert all(t <= expected for t in inside)
    # the shared mechanism: method_threads caps BLAS for a block that runs `workers` BLAS-calling threads
    from numkfs._threads import method_threads

    with method_threads("knife", n, workers=2):
        assert all(t <= threads_per_worker(2) for t in blas())
    assert blas() == before


def test_a_blas_loaded_after_the_first_limit_is_limited_too(tmp_path):
    """The scan of the process's BLAS libraries is kept from one limit to the next (a scan reads
    ``/proc/self/maps`` and opens every library, longer than a small fit's BLAS calls) and made again
    when a shared object has been loaded since: a copy of numpy's OpenBLAS loaded between two limits
    runs on one thread inside the second and on its own count after it."""
    import ctypes
    import shutil

    from threadpoolctl import ThreadpoolController

    from numkfs import _threads

    if _threads._loaded_objects() is None:
        pytest.skip("the loaded shared objects cannot be counted here (no dl_iterate_phdr)")
    with blas_at_least_two():
        with limit_threads(blas_threads=1):  # the first scan
            pass
        scanned = _threads._BLAS_SCAN[1]
        with limit_threads(blas_threads=1):
            assert _threads._BLAS_SCAN[1] is scanned  # nothing loaded since: the scan is kept
        numpy_blas = [lib for lib in scanned if "numpy" in lib.filepath]
        if not numpy_blas:
            pytest.skip("numpy's BLAS is not a library of its own here")
        copy = tmp_path / ("libscipy_openblas64_-copy" + Path(numpy_blas[0].filepath).suffix)
        shutil.copy(numpy_blas[0].filepath, copy)
        ctypes.CDLL(str(copy))
        fresh = ThreadpoolController().select(filepath=str(copy)).lib_controllers
        assert len(fresh) == 1
        fresh[0].set_num_threads(2)
        with limit_threads(blas_threads=1):
            assert _threads._BLAS_SCAN[1] is not scanned
            assert fresh[0].num_threads == 1
        assert fresh[0].num_threads == 2
