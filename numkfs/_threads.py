"""The one thread policy of numkfs: when Numba's parallel loops and the BLAS
run on several threads, and how parallel work is cut into tasks.

Every decision about threads goes through this module (no method, CV or
distributed driver holds a threshold of its own):

* :func:`thread_limits` gives, per method and problem size, the Numba and
  BLAS thread counts a fit runs with (``None``: leave the current setting).
  Small problems run serially: a parallel region or a threaded BLAS call
  costs more than its work there, and on a shared machine the threads wait
  for each other, so that a small fit on a loaded machine takes many times
  longer on several threads than on one (KNIFE, L1KR's QR, COSSO's
  Cholesky factorisations).
* :func:`threads_per_worker`: joblib or Dask workers each get
  ``cores // workers`` Numba threads, so workers × threads never
  oversubscribe the cores.
* :func:`limit_threads` applies a choice inside a ``with`` block and
  restores the previous one, also when blocks overlap in several threads:
  Numba's thread count belongs to the calling thread, but the BLAS's is
  one setting for the whole process, so the blocks share it (the first to
  enter saves it, the last to leave restores it, and the smallest limit of
  the blocks still open is in force in between).
* :func:`parallel_tasks`: how many tasks a ``prange`` loop over ``n_items``
  items is cut into.
* :func:`parallel_or_serial`: the parallel form of a kernel or its serial
  twin (:func:`numkfs._jit.serial_twin`), by size and thread count.
"""
from __future__ import annotations

import collections
import contextlib
import os
import sys
import threading
from numbers import Integral

from ._registry import METHOD_ROWS

__all__ = ["BLAS_SERIAL_MAX_SAMPLES", "PARALLEL_MIN_ROWS", "SERIAL_MAX_SAMPLES", "limit_threads",
           "parallel_or_serial", "parallel_tasks", "set_threads", "thread_limits", "thread_policy",
           "threads_per_worker"]

#: Fits on at most this many rows run BLAS on one thread, whatever the
#: method: their matrices factorise in milliseconds, where waking BLAS
#: threads (which spin while they wait) costs more than it saves.
BLAS_SERIAL_MAX_SAMPLES = 2000

#: Row-parallel kernels with a serial twin (:func:`parallel_or_serial`) run
#: serially on fewer rows than this: below it KNIFE's fits run on one
#: thread anyway (``SERIAL_MAX_SAMPLES["knife"]``), where the serial form
#: is faster than the parallel one on one thread and compiles in a fraction
#: of its time.
PARALLEL_MIN_ROWS = 2000

#: The user's pins (:func:`set_threads`); ``None``: the policy decides.
_PINNED = {"numba": None, "blas": None}

#: Per method: fits on at most this many samples run with one Numba thread
#: and one BLAS thread; ``0`` means BLAS always single-threaded while Numba
#: keeps its setting (the method's parallelism is over CV folds instead).
#: Each method's ``serial_max_samples`` and ``thread_variants`` in the method
#: registry (``numkfs._registry``), where the measurements are cited.
SERIAL_MAX_SAMPLES = {**{name: row.serial_max_samples for name, row in METHOD_ROWS.items()
                         if row.serial_max_samples is not None},
                      **{name: limit for row in METHOD_ROWS.values() for name, limit in row.thread_variants.items()}}


def thread_limits(method: str, n_samples: int) -> tuple:
    """``(numba_threads, blas_threads)`` for a fit of ``method`` on
    ``n_samples`` rows (``None``: leave that setting as it is).

    Examples
    --------
    >>> from numkfs._threads import thread_limits
    >>> thread_limits("knife", 500), thread_limits("knife", 5000), thread_limits("lpkta", 500)
    ((1, 1), (None, None), (None, 1))
    """
    limit = SERIAL_MAX_SAMPLES.get(str(method).lower())
    if limit is None:
        numba_threads, blas_threads = None, None
    elif limit == 0:
        numba_threads, blas_threads = None, 1
    else:
        numba_threads, blas_threads = (1, 1) if n_samples <= limit else (None, None)
    if n_samples <= BLAS_SERIAL_MAX_SAMPLES:
        blas_threads = 1
    pin_n, pin_b = _PINNED["numba"], _PINNED["blas"]
    return (numba_threads if pin_n is None else pin_n), (blas_threads if pin_b is None else pin_b)


def set_threads(n_threads=None, *, numba=None, blas=None):
    """Pin the threads numkfs's fits use, overriding its size-based policy.

    By default numkfs runs small problems on one thread (Numba and BLAS)
    and larger ones on every thread, and gives joblib or Dask workers
    ``cores // workers`` Numba threads each.  Pinning is for a machine
    shared with other work, or one where a measured choice beats the
    policy.  The environment variables ``NUMBA_NUM_THREADS`` and
    ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS``,
    set before Python starts, cap the thread pools themselves;
    ``OMP_WAIT_POLICY`` (numkfs sets ``PASSIVE`` unless you set it) decides
    whether idle Numba threads spin or sleep.

    Parameters
    ----------
    n_threads : int or None, default=None
        Threads for both Numba and the BLAS (shorthand for
        ``numba=n_threads, blas=n_threads``).  ``None`` with no other
        argument returns to the policy.
    numba : int or None, default=None
        Numba threads for numkfs's parallel loops (clipped to
        ``NUMBA_NUM_THREADS``); ``None``: the policy decides.
    blas : int or None, default=None
        BLAS threads inside numkfs's fits; ``None``: the policy decides.

    Returns
    -------
    dict
        The previous pins, ``{"numba": ..., "blas": ...}`` (pass them back
        as keywords to restore).

    Examples
    --------
    >>> import numkfs
    >>> old = numkfs.set_threads(1)          # every fit on one thread
    >>> old
    {'numba': None, 'blas': None}
    >>> numkfs.set_threads(**old)            # back to the policy
    {'numba': 1, 'blas': 1}
    """
    from ._constraints import Interval, NoneOr, validate_params

    positive = [Interval(Integral, 1, None), NoneOr]
    validate_params({"n_threads": n_threads, "numba": numba, "blas": blas},
                    {"n_threads": positive, "numba": positive, "blas": positive}, "set_threads")
    if n_threads is not None:
        numba = blas = n_threads
    old = dict(_PINNED)
    _PINNED.update(numba=None if numba is None else int(numba), blas=None if blas is None else int(blas))
    return old


def thread_policy(method: str):
    """Decorator: run a method's public function under :func:`thread_limits`
    for its data (the rows of its first argument, ``X``)."""
    import functools

    def wrap(fn):
        @functools.wraps(fn)
        def run(X, *args, **kwargs):
            shape = getattr(X, "shape", None)
            n = int(shape[0]) if shape is not None and len(shape) else len(X)
            with limit_threads(*thread_limits(method, n)):
                return fn(X, *args, **kwargs)

        return run

    return wrap


def threads_per_worker(n_workers: int) -> int:
    """Numba threads per worker so that workers × threads ≤ cores."""
    return max(1, (os.cpu_count() or 1) // max(1, int(n_workers)))


@contextlib.contextmanager
def limit_threads(numba_threads: int | None = None, blas_threads: int | None = None):
    """Run a block with at most ``numba_threads`` Numba threads and
    ``blas_threads`` BLAS threads (``None``: unchanged); the previous
    settings are restored on exit.

    Numba's count is the calling thread's own, so it is saved and restored
    per block.  The BLAS's count is one setting for the whole process, so
    blocks open at the same time in several threads share it
    (:class:`_SharedBlasLimit`): fits run from joblib threads leave the
    BLAS as they found it, whatever order they start and finish in."""
    import numba

    old = numba.get_num_threads()
    try:
        if numba_threads is not None:
            numba.set_num_threads(max(1, min(int(numba_threads), numba.config.NUMBA_NUM_THREADS)))
        if blas_threads is None:
            yield
        else:
            with _BLAS_LIMIT.limit(int(blas_threads)):
                yield
    finally:
        numba.set_num_threads(old)


class _SharedBlasLimit:
    """The BLAS thread limits of the :func:`limit_threads` blocks open in any
    thread.

    A BLAS's thread count is process-wide (OpenBLAS on pthreads, MKL, BLIS):
    a block that saves it on entry and restores it on exit is wrong once
    blocks overlap in several threads (the second block saves the first's
    limit, the first restores the original, then the second restores the
    first's limit for good: after fits in joblib threads, every later BLAS
    call of the program ran on one thread).  So each library's setting is
    reference-counted under one lock: the first block to enter saves the
    setting, the smallest limit of the blocks open is in force, and the last
    block to leave restores the saved setting.  An OpenBLAS on the OpenMP
    threading layer (outside Windows) keeps a count per thread, so its
    blocks are counted per thread.
    """

    def __init__(self):
        self._lock = threading.Lock()
        #: (library path, thread id or None) -> its :class:`_LibraryLimits`
        self._libraries = {}

    @contextlib.contextmanager
    def limit(self, n_threads: int):
        """A block with at most ``n_threads`` BLAS threads (while no other
        open block asks for fewer)."""
        keys = self._enter(n_threads)
        try:
            yield
        finally:
            self._leave(keys, n_threads)

    def _enter(self, n_threads):
        with self._lock:
            keys = []
            try:
                for lib in _blas_libraries():
                    key = (lib.filepath, threading.get_ident() if self._per_thread(lib) else None)
                    entry = self._libraries.get(key)
                    if entry is None:
                        before = lib.num_threads
                        if before is None:  # a library whose count cannot be read cannot be restored
                            continue
                        entry = self._libraries[key] = _LibraryLimits(lib, before)
                    entry.open[n_threads] += 1
                    keys.append(key)
                    entry.apply(min(entry.open))
            except BaseException:
                self._release(keys, n_threads)
                raise
            return keys

    def _leave(self, keys, n_threads):
        with self._lock:
            self._release(keys, n_threads)

    def _release(self, keys, n_threads):
        for key in keys:
            entry = self._libraries[key]
            entry.open[n_threads] -= 1
            if entry.open[n_threads] == 0:
                del entry.open[n_threads]
            if entry.open:
                entry.apply(min(entry.open))
            else:
                del self._libraries[key]
                entry.apply(entry.before)

    @staticmethod
    def _per_thread(lib) -> bool:
        return (lib.internal_api == "openblas" and getattr(lib, "threading_layer", None) == "openmp"
                and sys.platform != "win32")

    def _after_fork(self):
        self._lock = threading.Lock()  # a fork while another thread held it must not leave it held


def _loaded_objects():
    """How many shared objects the process has loaded (``dl_iterate_phdr`` of
    the C library, a fraction of a millisecond), or ``None`` where it cannot
    be counted."""
    global _COUNT_OBJECTS
    if _COUNT_OBJECTS is None:
        _COUNT_OBJECTS = _object_counter()
    return _COUNT_OBJECTS()


def _object_counter():
    """A function that counts the loaded shared objects (``None`` from it
    when the platform has no ``dl_iterate_phdr``)."""
    import ctypes

    try:
        iterate = ctypes.CDLL(None).dl_iterate_phdr
    except (AttributeError, OSError, TypeError):  # no dl_iterate_phdr (Windows, macOS)
        return lambda: None
    count = [0]

    @ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
    def one(info, size, data):
        count[0] += 1
        return 0

    def counter():
        count[0] = 0
        iterate(one, None)
        return count[0]

    return counter


_COUNT_OBJECTS = None
#: (shared objects loaded at the last scan, the BLAS libraries it found)
_BLAS_SCAN = (None, None)


def _blas_libraries():
    """threadpoolctl's controllers of the BLAS libraries loaded in this
    process.  A scan (``ThreadpoolController()``) reads ``/proc/self/maps``
    and opens every library it lists, which takes longer than the BLAS calls
    of a small fit; so the scan is kept, and made again only when the count
    of loaded shared objects has changed since (a BLAS loaded later, as
    scipy's is, is then found and limited too).  Where the objects cannot
    be counted, every call scans.  Callers hold :class:`_SharedBlasLimit`'s
    lock."""
    from threadpoolctl import ThreadpoolController

    global _BLAS_SCAN
    loaded = _loaded_objects()
    scanned, libraries = _BLAS_SCAN
    if libraries is None or loaded is None or loaded != scanned:
        libraries = ThreadpoolController().select(user_api="blas").lib_controllers
        _BLAS_SCAN = (loaded, libraries)
    return libraries


class _LibraryLimits:
    """One BLAS library (threadpoolctl's controller ``lib``) under open
    blocks: its count ``before`` the first of them, the count of open blocks
    per limit (``open``) and the count set ``now``."""

    __slots__ = ("lib", "before", "open", "now")

    def __init__(self, lib, before: int):
        self.lib, self.before, self.open, self.now = lib, before, collections.Counter(), before

    def apply(self, n_threads: int):
        """Set the library's count to ``n_threads`` (if it is not that already)."""
        if self.now == n_threads:
            return
        self.lib.set_num_threads(n_threads)
        self.now = n_threads
        # threadpoolctl >= 3.8 lets only the thread that set OpenBLAS's count last set it again until that
        # thread lets go; the lock of _SharedBlasLimit already keeps the threads from fighting, so let go at once
        release = getattr(type(self.lib), "clear_controlling_thread", None)
        if release is not None:
            release()


_BLAS_LIMIT = _SharedBlasLimit()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_BLAS_LIMIT._after_fork)


def method_threads(method: str, n_samples: int, *, blas_in_threads: bool = True, workers: int = 1):
    """:func:`limit_threads` with the policy of :func:`thread_limits`.

    ``blas_in_threads=False``: called from a thread other than the main
    thread (a joblib thread running a CV fold), leave the BLAS setting
    alone: its limit is process-wide, so the caller limits BLAS around its
    pool of threads instead (KNIFE's CV estimators).  ``workers``: the
    block runs that many threads that each call BLAS (the caller's pool),
    so BLAS gets at most :func:`threads_per_worker` threads."""
    numba_threads, blas_threads = thread_limits(method, n_samples)
    if workers > 1:
        per_worker = threads_per_worker(workers)
        blas_threads = per_worker if blas_threads is None else min(blas_threads, per_worker)
    if not blas_in_threads:
        import threading

        if threading.current_thread() is not threading.main_thread():
            blas_threads = None
    return limit_threads(numba_threads, blas_threads)


def parallel_tasks(n_items: int, *, per_thread: int = 4, min_items: int = 1) -> int:
    """Tasks for a ``prange`` loop over ``n_items`` items: ``per_thread``
    tasks per Numba thread (load balance), each of at least ``min_items``
    items (task overhead), at least one."""
    import numba

    return int(max(1, min(n_items // max(1, min_items), per_thread * numba.get_num_threads())))


def parallel_or_serial(parallel, serial, n_rows: int):
    """``parallel`` (a :func:`numkfs._jit.pjit` kernel) or its serial twin
    ``serial`` for a loop over ``n_rows`` rows: the serial one below
    :data:`PARALLEL_MIN_ROWS` rows or on one Numba thread.  Only the form
    that runs gets compiled."""
    if n_rows < PARALLEL_MIN_ROWS:
        return serial
    import numba

    return parallel if numba.get_num_threads() > 1 else serial
