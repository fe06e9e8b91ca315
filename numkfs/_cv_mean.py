"""A path point's mean CV score and its standard error, the folds weighted
by their sizes as ``cv.glmnet`` weights them; re-exported by
:mod:`numkfs.model_selection`, whose rules (:func:`~numkfs.model_selection.choose_index`)
and :class:`~numkfs.paths.FeaturePath` read them from here.
"""
import numpy as np

__all__ = ["cv_mean_se"]


def cv_mean_se(scores, fold_sizes=None):
    """Mean CV score and its standard error per point, folds weighted by size.

    As ``cv.glmnet``: the mean of the fold scores weighted by the folds'
    test sizes, and the standard error
    ``sqrt(sum_k w_k (s_k - mean)^2 / sum_k w_k / (K - 1))`` over the ``K``
    folds that scored the point (NaN scores are left out).  For a score
    that is a mean over the held-out rows (accuracy, a mean loss) the
    weighted mean is the score of all held-out rows pooled.  Equal folds
    (or ``fold_sizes=None``) give the plain mean and
    ``std(ddof=1) / sqrt(K)``.  The squares are taken in units of a power of
    two, so scores of any magnitude (the mean squared error of a y in units
    of 1e100) give a finite standard error, and scores times ``2**k`` give
    it times ``2**k`` to the last bit.

    Parameters
    ----------
    scores : array-like of shape (n_points, n_folds)
        Fold scores (:attr:`FeaturePath.cv_scores`), NaN where a fold could
        not score a point.
    fold_sizes : array-like of shape (n_folds,), optional
        Test rows per fold (:attr:`FeaturePath.cv_fold_sizes`); default:
        equal weights.

    Returns
    -------
    mean : ndarray of shape (n_points,)
        NaN for a point no fold scored.
    se : ndarray of shape (n_points,)
        0 for a point fewer than two folds scored.

    Examples
    --------
    >>> from numkfs.model_selection import cv_mean_se
    >>> mean, se = cv_mean_se([[0.8, 0.9, 1.0]], fold_sizes=[10, 9, 9])
    >>> round(float(mean[0]), 3), round(float(se[0]), 3)
    (0.896, 0.058)
    """
    S = np.atleast_2d(np.asarray(scores, dtype=float))
    if fold_sizes is None:
        w = np.ones(S.shape[1])
    else:
        w = np.asarray(fold_sizes, dtype=float).ravel()
        if w.shape != (S.shape[1],) or not np.all(w > 0):
            raise ValueError(f"fold_sizes must hold one positive size per fold ({S.shape[1]}); got {fold_sizes!r}.")
        w = w / w.max()  # equal folds: weights exactly 1, the plain mean to the last bit
    valid = np.isfinite(S)
    W = np.where(valid, w, 0.0)
    total = W.sum(axis=1)
    k = valid.sum(axis=1)
    denom = np.where(total > 0, total, 1.0)
    with np.errstate(invalid="ignore"):
        mean = np.where(total > 0, np.sum(np.where(valid, S, 0.0) * W, axis=1) / denom, np.nan)
        dev = np.where(valid, S - mean[:, None], 0.0)
        # the squares in units of a power of two near each point's largest deviation: the same bits as
        # without it (scaling by 2^e is exact), but no overflow or underflow for scores of any magnitude
        # (the mean squared error of a y in units of 1e100 or 1e-90)
        big = np.max(np.abs(dev), axis=1)
        unit = np.ldexp(1.0, np.frexp(np.where((big > 0) & np.isfinite(big), big, 1.0))[1])
        var = np.sum(W * (dev / unit[:, None]) ** 2, axis=1) / denom / np.maximum(k - 1, 1)
    se = np.where(k > 1, np.sqrt(var) * unit, 0.0)
    return mean, se
