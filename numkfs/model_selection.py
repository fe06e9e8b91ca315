"""Cross-validation over a path, shared by every ``*CV`` estimator.

A method gives a ``fold_fn(train_index, test_index) -> scores`` that fits its
path on the training rows and returns one score per path point (higher is
better) on the test rows.  :func:`cross_val_path` runs the folds (in
parallel with joblib when ``n_jobs`` asks for it) and stacks the scores as
``(n_points, n_folds)``, the layout of :attr:`FeaturePath.cv_scores`.

Thread policy: each joblib worker limits Numba to
``max(1, n_cores // n_workers)`` threads, so joblib workers and Numba
threads never oversubscribe the cores.
"""
from __future__ import annotations

import contextlib
import os

import numpy as np

__all__ = ["cross_val_path", "make_cv", "numba_threads_for", "parallel_map", "show_progress"]


_PROGRESS = {"on": False}


@contextlib.contextmanager
def show_progress(on: bool = True):
    """Within this block every cross-validation shows a tqdm progress bar over
    its folds (on stderr).  The command line turns it on unless ``-q``.

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


def make_cv(cv, y, *, classifier: bool, random_state=None):
    """An sklearn splitter: an int gives (Stratified)KFold with shuffling."""
    from sklearn.model_selection import KFold, StratifiedKFold

    if isinstance(cv, (int, np.integer)):
        if cv < 2:
            raise ValueError(f"cv must be at least 2 folds; got {cv}.")
        seed = None if random_state is None else np.random.default_rng(random_state).integers(2**31 - 1)
        if classifier:
            return StratifiedKFold(int(cv), shuffle=True, random_state=seed)
        return KFold(int(cv), shuffle=True, random_state=seed)
    return cv


def numba_threads_for(n_workers: int) -> int:
    """Numba threads per worker so that workers × threads ≤ cores."""
    return max(1, (os.cpu_count() or 1) // max(1, n_workers))


def _with_threads(n_threads, fn, *args):
    """``fn(*args)`` with Numba limited to ``n_threads`` threads."""
    import numba

    old = numba.get_num_threads()
    numba.set_num_threads(min(n_threads, numba.config.NUMBA_NUM_THREADS))
    try:
        return fn(*args)
    finally:
        numba.set_num_threads(old)


def cross_val_path(fold_fn, X, y, cv=5, *, classifier: bool = False, n_jobs=None, random_state=None) -> np.ndarray:
    """Scores of a path on each CV fold.

    Parameters
    ----------
    fold_fn : callable
        ``fold_fn(train_index, test_index) -> array (n_points,)``.
    X, y : arrays
        Only used to make the splits.
    cv : int or splitter
    classifier : bool
        Stratify the folds.
    n_jobs : int, optional
        joblib workers over folds (``None`` = 1; works under
        ``joblib.parallel_backend("dask")`` too).

    Returns
    -------
    ndarray of shape (n_points, n_folds)
    """
    from joblib import Parallel, delayed, effective_n_jobs

    splitter = make_cv(cv, y, classifier=classifier, random_state=random_state)
    splits = list(splitter.split(X, y))
    n_workers = min(effective_n_jobs(n_jobs), len(splits))
    threads = numba_threads_for(n_workers)
    if _PROGRESS["on"]:
        from tqdm.auto import tqdm

        splits = tqdm(splits, desc="CV folds", leave=False)
    scores = Parallel(n_jobs=n_jobs)(delayed(_with_threads)(threads, fold_fn, tr, te) for tr, te in splits)
    scores = [np.asarray(s, dtype=float) for s in scores]
    lengths = {len(s) for s in scores}
    if len(lengths) != 1:
        raise RuntimeError(f"folds returned different numbers of path points: {sorted(lengths)}")
    return np.column_stack(scores)


def parallel_map(fn, items, n_jobs=None) -> list:
    """``[fn(item) for item in items]``, over joblib workers when ``n_jobs``
    asks for more than one (same thread policy as :func:`cross_val_path`;
    runs on a Dask cluster under ``joblib.parallel_backend("dask")``).

    The order of the results is the order of ``items``, so whatever is chosen
    from them (e.g. the best of several random starts) does not depend on
    ``n_jobs``.
    """
    from joblib import Parallel, delayed, effective_n_jobs

    items = list(items)
    n_workers = min(effective_n_jobs(n_jobs), len(items))
    if n_workers <= 1:
        return [fn(item) for item in items]
    threads = numba_threads_for(n_workers)
    return Parallel(n_jobs=n_jobs)(delayed(_with_threads)(threads, fn, item) for item in items)
