"""Work over joblib workers without oversubscribing the cores: Numba's
threads per worker (:func:`numba_threads_for`), a map over workers
(:func:`parallel_map`) and the progress bars of the cross-validations
(:func:`show_progress`).  The thread limits themselves are
:mod:`numkfs._threads`'s.
"""
from __future__ import annotations

import contextlib


__all__ = ["numba_threads_for", "parallel_map", "show_progress"]


_PROGRESS = {"on": False}


@contextlib.contextmanager
def show_progress(on: bool = True):
    """Within this block every cross-validation shows a tqdm progress bar over
    its folds (on stderr).  The command line turns it on unless ``-q``.

    Parameters
    ----------
    on : bool, default=True
        Show the bars (False hides them inside the block); the previous
        setting is restored on leaving the block.

    Examples
    --------
    >>> from numkfs.model_selection import show_progress
    >>> with show_progress():
    ...     pass
    """
    old = _PROGRESS["on"]
    _PROGRESS["on"] = bool(on)
    try:
        yield
    finally:
        _PROGRESS["on"] = old


def numba_threads_for(n_workers: int) -> int:
    """Numba threads per worker so that workers × threads ≤ cores
    (:func:`numkfs._threads.threads_per_worker`, the one thread policy).

    Parameters
    ----------
    n_workers : int
        Number of parallel workers that will each run Numba code.

    Returns
    -------
    int
        Numba threads each worker may use (at least 1).
    """
    from ._threads import threads_per_worker

    return threads_per_worker(n_workers)


def _with_threads(n_threads, fn, *args):
    """``fn(*args)`` with Numba limited to ``n_threads`` threads."""
    from ._threads import limit_threads

    with limit_threads(n_threads):
        return fn(*args)


def parallel_map(fn, items, n_jobs=None) -> list:
    """``[fn(item) for item in items]``, over joblib workers when ``n_jobs``
    asks for more than one (same thread policy as :func:`cross_val_path`;
    runs on a Dask cluster under ``joblib.parallel_backend("dask")``).

    The order of the results is the order of ``items``, so whatever is chosen
    from them (e.g. the best of several random starts) does not depend on
    ``n_jobs``.

    Parameters
    ----------
    fn : callable
        Function of one item.
    items : iterable
        The items (consumed into a list first).
    n_jobs : int, optional
        joblib workers (``None`` = 1: a plain loop in this process).

    Returns
    -------
    list
        ``fn(item)`` for each item, in the order of ``items``.
    """
    from joblib import Parallel, delayed, effective_n_jobs

    items = list(items)
    n_workers = min(effective_n_jobs(n_jobs), len(items))
    if n_workers <= 1:
        return [fn(item) for item in items]
    threads = numba_threads_for(n_workers)
    return Parallel(n_jobs=n_jobs)(delayed(_with_threads)(threads, fn, item) for item in items)
