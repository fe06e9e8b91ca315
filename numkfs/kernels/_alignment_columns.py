"""Target encoding, bandwidths and column statistics of the per-feature alignments.

The centred target :math:`Z = HY` (:func:`alignment_target`), the RBF
bandwidth rule (:func:`resolve_gamma`), the column moments the alignments
and :func:`~numkfs.kernels.alignment.combined_kernel` need, and how the
loops over blocks of columns are cut (:func:`_n_blocks`, serial or parallel
by :func:`_column_loops`).  See :mod:`numkfs.kernels.alignment`.
"""
from __future__ import annotations

import numbers

import numba
import numpy as np
import scipy.sparse as sp

from .._jit import pjit, prange, serial_twin
from .._threads import parallel_or_serial
from .._targets import check_real, target_type
from .._validation import check_X, check_y

#: Most columns per parallel task in the dense kernels (work arrays allocated
#: once per block, contiguous reads of a block's values in each row).
FEATURE_BLOCK = 32

#: The loops over blocks of columns run in their serial twins
#: (:func:`numkfs._jit.serial_twin`) below ``_threads.PARALLEL_MIN_ROWS *
#: SERIAL_ENTRIES_PER_ROW`` entries: ``_dense_moments`` on n d values (128,000),
#: ``_rbf_sums_dense`` on d n²/2 pairs of samples counted
#: SERIAL_PAIRS_PER_ENTRY to an entry (2 million pairs, a few milliseconds of
#: work): about where the parallel loops start to pay for their threads on a
#: loaded machine.  The serial forms compile in a fraction of the parallel
#: forms' time.
SERIAL_ENTRIES_PER_ROW = 64
SERIAL_PAIRS_PER_ENTRY = 16


def _column_loops(parallel, serial, entries):
    """The parallel loop over blocks of columns or its serial twin, for
    ``entries`` values (see :data:`SERIAL_ENTRIES_PER_ROW`)."""
    return parallel_or_serial(parallel, serial, entries // SERIAL_ENTRIES_PER_ROW)


def _n_blocks(d):
    """Parallel tasks over d columns: blocks of at most FEATURE_BLOCK
    columns, at least 8 per thread, a multiple of the thread count, sizes
    differing by at most one column (no thread left with an extra block)."""
    nt = numba.get_num_threads()
    nb = max(-(-d // FEATURE_BLOCK), 8 * nt)
    nb = -(-nb // nt) * nt
    return int(max(1, min(nb, d)))


# ----------------------------------------------------------------------------
# targets and bandwidths


def alignment_target(y, target: str = "auto"):
    r"""The centred target matrix :math:`Z = H Y` of the alignments.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Target values: the response, or the class labels of a classifier.
    target : {"auto", "binary", "multiclass", "regression"}
        ``"auto"`` uses :func:`numkfs.model_selection.target_type`:
        two classes -> binary (±1), more -> multiclass (one-hot),
        continuous (or float with many whole values) -> regression.

    Returns
    -------
    Z : ndarray of shape (n_samples, r)
        ``r = 1`` for binary and regression, ``r = c`` for ``c`` classes.
    kind : str
    classes : ndarray or None
    """

    y = np.asarray(y)
    check_real(y, "y", "feature_alignments")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if target == "auto":
        try:
            target = target_type(y)
        except ValueError as exc:
            raise ValueError(f"feature_alignments: {exc}") from None
    if target == "binary":
        classes = np.unique(y)
        if len(classes) != 2:
            raise ValueError(
                f"feature_alignments: target='binary' needs exactly two classes; found {len(classes)}."
            )
        Y = np.where(y == classes[1], 1.0, -1.0)[:, None]
    elif target == "multiclass":
        classes, inv = np.unique(y, return_inverse=True)
        Y = np.zeros((y.shape[0], len(classes)))
        Y[np.arange(y.shape[0]), inv] = 1.0
    elif target == "regression":
        classes = None
        Y = check_y(y, caller="feature_alignments")[:, None]
    else:
        raise ValueError(
            "feature_alignments: target must be 'auto', 'binary', 'multiclass' or 'regression';"
            f" got {target!r}."
        )
    Z = Y - Y.mean(axis=0)
    return np.ascontiguousarray(Z), target, classes


@pjit
def _dense_moments(X, nb, mean, var, spread):
    """Column means, (population) variances and ``max_k |x_ki - x_0i|`` (0 for
    a constant column) of a C-ordered finite ``X``, by ``nb`` blocks of columns:
    two passes over contiguous row segments into task-local accumulators
    (no aliasing with the outputs, so the row loops vectorise), no temporary
    of the size of X."""
    n, d = X.shape
    for b in prange(nb):
        i0 = b * d // nb
        w = (b + 1) * d // nb - i0
        mu = np.zeros(w)
        sq = np.zeros(w)
        spr = np.zeros(w)
        x0 = X[0, i0:i0 + w].copy()
        for k in range(n):
            row = X[k, i0:i0 + w]
            for i in range(w):
                xv = row[i]
                mu[i] += xv
                dv = abs(xv - x0[i])
                spr[i] = dv if dv > spr[i] else spr[i]  # (Numba's max() does not vectorise)
        for i in range(w):
            mu[i] /= n
        for k in range(n):
            row = X[k, i0:i0 + w]
            for i in range(w):
                dv = row[i] - mu[i]
                sq[i] += dv * dv
        for i in range(w):
            mean[i0 + i] = mu[i]
            var[i0 + i] = sq[i] / n
            spread[i0 + i] = spr[i]


_dense_moments_serial = serial_twin(_dense_moments)


def column_moments(X):
    """Mean and (population) variance of every column, dense or CSC."""
    n = X.shape[0]
    if sp.issparse(X):
        mean = np.asarray(X.sum(axis=0)).ravel() / n
        nnz = np.diff(X.indptr)
        col = np.repeat(np.arange(X.shape[1]), nnz)
        sq = np.bincount(col, weights=(X.data - mean[col]) ** 2, minlength=X.shape[1])
        var = (sq + (n - nnz) * mean**2) / n
        return mean, var
    mean, var, _ = _dense_column_stats(X)
    return mean, var


def dense_stats(X):
    """Mean, (population) variance and ``max |x - x_0|`` of every dense column."""
    d = X.shape[1]
    mean = np.empty(d)
    var = np.empty(d)
    spread = np.empty(d)
    X = np.ascontiguousarray(X, dtype=np.float64)
    loops = _column_loops(_dense_moments, _dense_moments_serial, X.size)
    loops(X, _n_blocks(d), mean, var, spread)
    return mean, var, spread


def _dense_column_stats(X):
    """Mean, (population) variance and constancy of every dense column."""
    mean, var, spread = dense_stats(X)
    return mean, var, spread == 0.0


def resolve_gamma(X, gamma=None) -> np.ndarray:
    r"""Per-feature RBF bandwidths :math:`\gamma_i` (see the module's bandwidth rule).

    ``None`` or ``"scale"``: :math:`1/\operatorname{var}(x_i)` (1 for a
    constant column); a positive float: the same for every feature; an
    array of ``n_features`` positive floats: as given.
    """
    return resolve_gamma_given_var(X, gamma)


def resolve_gamma_given_var(X, gamma=None, var=None):
    """:func:`resolve_gamma`, given the column variances when already known."""
    d = X.shape[1]
    if gamma is None or (isinstance(gamma, str) and gamma == "scale"):
        if var is None:
            _, var = column_moments(X)
        return np.where(var > 0, 1.0 / np.where(var > 0, var, 1.0), 1.0)
    if isinstance(gamma, str):
        raise ValueError(f"gamma must be None, 'scale', a positive float or an array; got {gamma!r}.")
    if isinstance(gamma, numbers.Real):
        if not (np.isfinite(gamma) and gamma > 0):
            raise ValueError(f"gamma must be positive and finite; got {gamma!r}.")
        return np.full(d, float(gamma))
    g = np.asarray(gamma, dtype=float).ravel()
    if g.shape[0] != d:
        raise ValueError(f"gamma has {g.shape[0]} entries but X has {d} features.")
    if not np.all(np.isfinite(g) & (g > 0)):
        raise ValueError("gamma must contain positive finite values only.")
    return g.copy()


def _constant_mask(X):
    """Columns with a single value (vectorised also for sparse input)."""
    if sp.issparse(X):
        return (X.max(axis=0).toarray() == X.min(axis=0).toarray()).ravel()
    return _dense_column_stats(X)[2]


def _as_float(X, min_samples=2):
    if sp.issparse(X):
        X = sp.csc_matrix(X, dtype=np.float64)
        if not np.all(np.isfinite(X.data)):
            return check_X(X, caller="feature_alignments", accept_sparse=True)
        return X
    # read-only from here on: no defensive copy of a possibly large X
    return check_X(X, caller="feature_alignments", accept_sparse=False, min_samples=min_samples, copy=False)
