"""Folds: the splitter of an int ``cv`` (:func:`make_cv`), the check that
each fold can be fitted (:func:`check_folds`), the preprocessing fitted on
a fold's training rows only (:func:`fold_data`) and the run of a path's
folds (:func:`cross_val_path`).
:mod:`numkfs.model_selection` states the contract and exports these names.
"""
from __future__ import annotations

import numpy as np

from ._parallel import _PROGRESS, _with_threads, numba_threads_for


__all__ = ["check_folds", "cross_val_path", "fold_data", "make_cv"]


def make_cv(cv, y, *, classifier: bool, random_state=None):
    """A scikit-learn splitter: an int gives unshuffled (Stratified)KFold.

    As scikit-learn does (:func:`sklearn.model_selection.check_cv`), an
    integer ``cv`` gives contiguous, unshuffled folds, so a fit is the same
    every time by default.  To shuffle, pass a splitter that shuffles, e.g.
    ``KFold(5, shuffle=True, random_state=0)``.

    Parameters
    ----------
    cv : int or splitter
        Number of folds (at least 2 and at most the number of rows, or of the
        rarest class's rows for classification), or any object with ``split``.
    y : array-like
        The target (its length and, for classification, its class counts).
    classifier : bool
        Stratify the folds.
    random_state : object, optional
        Ignored (unshuffled folds need no seed); kept so that callers can
        pass their ``random_state`` along.

    Returns
    -------
    a splitter

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import make_cv
    >>> [te.tolist() for _, te in make_cv(3, np.arange(6.0), classifier=False).split(np.zeros((6, 1)))]
    [[0, 1], [2, 3], [4, 5]]
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    if isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv must be at least 2 folds; got {cv}.")
        if cv > len(y):
            raise ValueError(f"cv={cv} folds but only {len(y)} rows: use at most {len(y)} folds.")
        if classifier:
            labels, counts = np.unique(np.asarray(y), return_counts=True)
            if cv > counts.min():
                few, k = labels[np.argmin(counts)].item(), int(counts.min())
                fix = f"use at most {k} folds" if k > 1 else "each class needs 2 rows or more; add rows or drop it"
                raise ValueError(f"cv={cv} stratified folds but the rarest class ({few!r}) has only {k} row(s): {fix}.")
            return StratifiedKFold(int(cv))
        return KFold(int(cv))
    if not hasattr(cv, "split") or isinstance(cv, str):
        raise ValueError(f"cv must be an int (number of folds) or a splitter with a split method; got {cv!r}.")
    return cv


def check_folds(splits, y=None, *, method: str | None = None, min_train: int = 2, classifier: bool = False):
    """Refuse a fold too small for the method, naming the fold.

    Parameters
    ----------
    splits : list of (train, test) index arrays
        The folds, as a splitter's ``split`` gives them.
    y : array-like, optional
        The target (a classifier's training rows must hold two classes).
    method : str, optional
        The method's name, for the message.
    min_train : int, default=2
        The fewest training rows the method can fit.
    classifier : bool, default=False
        Whether each training fold needs at least two classes.

    Raises
    ------
    ValueError
        E.g. ``"fold 1 of 2 has 1 training sample; garrote needs at least 2:
        use fewer folds (cv) or give more rows."``

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import check_folds
    >>> check_folds([(np.arange(3), np.arange(3, 5))], method="garrote")
    """
    who = method or "the method"
    n = len(splits)
    for f, (tr, te) in enumerate(splits, start=1):
        n_tr = int(np.sum(tr)) if np.asarray(tr).dtype == bool else len(tr)
        n_te = int(np.sum(te)) if np.asarray(te).dtype == bool else len(te)
        if n_tr < min_train:
            raise ValueError(f"fold {f} of {n} has {n_tr} training sample{'s' if n_tr != 1 else ''}; {who} needs "
                             f"at least {min_train}: use fewer folds (cv) or give more rows.")
        if n_te < 1:
            raise ValueError(f"fold {f} of {n} has no test rows: use fewer folds (cv) or give more rows.")
        if classifier and y is not None and np.unique(np.asarray(y)[tr]).size < 2:
            raise ValueError(f"fold {f} of {n} has one class in its {n_tr} training rows; {who} needs two: "
                             "use fewer folds (cv), a stratified splitter, or give more rows.")


def fold_data(X, train, test, *, standardize: bool = True):
    """Training and test rows of one fold, preprocessed with statistics of
    the training rows only (no information from the held-out rows leaks
    into the fit).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    train, test : array-like of int or bool
        Row indices (or boolean masks) of the training and held-out rows.
    standardize : bool, default=True
        Centre and scale with the training rows' means and standard
        deviations (:class:`numkfs._preprocessing.Standardizer`).

    Returns
    -------
    X_train, X_test : ndarrays

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import fold_data
    >>> X = np.arange(8.0).reshape(4, 2)
    >>> Xtr, Xte = fold_data(X, [0, 1], [3])
    >>> Xtr[:, 0].tolist(), Xte[:, 0].tolist()
    ([-1.0, 1.0], [5.0])
    """
    from ._preprocessing import Standardizer

    Xtr, Xte = X[train], X[test]
    if not standardize:
        return Xtr, Xte
    sc = Standardizer().fit(Xtr)
    return sc.transform(Xtr), sc.transform(Xte)


def cross_val_path(fold_fn, X, y, cv=5, *, classifier: bool = False, n_jobs=None, random_state=None,
                   prefer=None, method: str | None = None, min_train: int = 2) -> np.ndarray:
    """Scores of a path on each CV fold.

    Parameters
    ----------
    fold_fn : callable
        ``fold_fn(train_index, test_index) -> array (n_points,)``.
    X, y : arrays
        Only used to make the splits.
    cv : int or splitter
        Number of cross-validation folds, or a scikit-learn splitter.
    classifier : bool
        Stratify the folds.
    n_jobs : int, optional
        joblib workers over folds (``None`` = 1; works under
        ``joblib.parallel_backend("dask")`` too).
    random_state : object, optional
        Ignored: an int ``cv`` gives unshuffled folds (:func:`make_cv`); a
        splitter carries its own seed.
    prefer : {None, "threads", "processes"}
        joblib's soft hint for the default backend (a backend set by the
        user with ``joblib.parallel_config`` wins).  ``"threads"`` suits
        folds whose work releases the GIL (Numba ``nogil`` kernels, BLAS,
        LAPACK): no worker processes to start, import numkfs in and load
        the compiled functions into.
    method : str, optional
        The method's name, for the message of a fold too small to fit
        (:func:`check_folds`).
    min_train : int, default=2
        The fewest training rows the method can fit.

    Returns
    -------
    scores : ndarray of shape (n_points, n_folds)
    fold_sizes : ndarray of int of shape (n_folds,)
        Test rows per fold, the folds' weights in :func:`cv_mean_se`.
    """
    from joblib import Parallel, delayed, effective_n_jobs

    splitter = make_cv(cv, y, classifier=classifier, random_state=random_state)
    splits = list(splitter.split(X, y))
    check_folds(splits, y, method=method, min_train=min_train, classifier=classifier)
    sizes = np.array([len(te) for _, te in splits], dtype=np.int64)
    n_workers = min(effective_n_jobs(n_jobs), len(splits))
    threads = numba_threads_for(n_workers)
    if _PROGRESS["on"]:
        from tqdm.auto import tqdm

        splits = tqdm(splits, desc="CV folds", leave=False)
    scores = Parallel(n_jobs=n_jobs, prefer=prefer)(delayed(_with_threads)(threads, fold_fn, tr, te)
                                                    for tr, te in splits)
    scores = [np.asarray(s, dtype=float) for s in scores]
    lengths = {len(s) for s in scores}
    if len(lengths) != 1:
        raise RuntimeError(f"folds returned different numbers of path points: {sorted(lengths)}")
    return np.column_stack(scores), sizes
