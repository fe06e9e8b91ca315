"""The per-feature RBF pair sums and traces of the alignments, by the exact
pair loop (:mod:`numkfs.kernels._alignment_exact`), the fast Gauss transform
(:mod:`numkfs.kernels._alignment_fgt`) or, for columns of small spread, the
column moments; and the linear kernel's closed form.  See
:mod:`numkfs.kernels.alignment`.
"""
from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from ._alignment_columns import (
    SERIAL_PAIRS_PER_ENTRY,
    _column_loops,
    _n_blocks,
    column_moments,
    dense_stats,
)
from ._alignment_exact import (
    PAD,
    SMALL_DISTINCT,
    SORT_MIN_SAMPLES,
    TIE_PROBE,
    _rbf_sums_csc,
    _rbf_sums_csc_serial,
    _rbf_sums_dense,
    _rbf_sums_dense_serial,
)
from ._alignment_fgt import _fgt_sums_csc, _fgt_sums_csc_serial
from ._hsic_fgt import NUMPY_BUFFER_BYTES, _fgt_hsic_dense, _fgt_hsic_dense_serial
from .fastexp import LOG2E
from .fgt import DIRECT_MAX, FGT_H, _ring_size, fgt_order

#: ``method="auto"`` uses the fast Gauss transform for columns with at least
#: this many entries (rows; non-zeros + 1 for sparse columns), the exact pair
#: loop below (crossover measured by ``benchmarks/lpkta_scale.py``).
FGT_MIN_SAMPLES = 1024
#: Largest feature-major buffer of a dense FGT task (values).
FGT_BLOCK_VALUES = 1 << 22
#: The transform's work per value in entries of ``_column_loops`` (about
#: what ``2 * SERIAL_PAIRS_PER_ENTRY`` pairs of the exact loop cost): below
#: its threshold the FGT kernels run in their serial twins, which a first
#: call compiles in a fraction of the parallel forms' time.
FGT_ENTRIES_PER_VALUE = 2


def check_alignment_method(method, rtol, caller="feature_alignments"):
    if method not in ("auto", "exact", "fgt"):
        raise ValueError(f"{caller}: method must be 'auto', 'exact' or 'fgt'; got {method!r}.")
    if method != "exact":
        try:
            fgt_order(float(rtol))
        except (TypeError, ValueError):
            raise ValueError(f"{caller}: rtol must be a float in [1e-14, 1); got {rtol!r}.") from None


def _fgt_min_entries(method):
    """Columns with at least this many entries go to the fast Gauss transform."""
    return {"exact": np.iinfo(np.int64).max, "fgt": 0, "auto": FGT_MIN_SAMPLES}[method]


def _csc_entries(X, min_fgt):
    """The work of the sparse kernels on the CSC ``X`` in entries of
    :func:`~numkfs.kernels._alignment_columns._column_loops`: a column of
    ``m`` entries (its non-zeros, plus one for its zeros) costs
    ``FGT_ENTRIES_PER_VALUE * m`` by the transform (at least ``min_fgt``
    entries), its ``m (m - 1) / 2`` pairs counted ``SERIAL_PAIRS_PER_ENTRY``
    to an entry by the pair loop."""
    nnz = np.diff(X.indptr).astype(np.int64)
    m = nnz + (nnz < X.shape[0])
    return int(np.sum(np.where(m >= min_fgt, FGT_ENTRIES_PER_VALUE * m, m * (m - 1) // 2 // SERIAL_PAIRS_PER_ENTRY)))


def _rbf_pair_sums(X, g, ZT, method="exact", rtol=1e-10, shift=None, rows=None, weights=None):
    """(S1, S2, n_entries) for every column of X (dense ndarray or CSC):
    ``method`` as in :func:`feature_alignments`; ``shift``: the dense
    columns' ``_column_shift`` if known.  ``rows``: the HSIC test's row
    moments' tolerance; then also ``(R2, Q)``
    (:func:`numkfs.kernels.rowsums.rbf_row_moments`), taken on the same
    boxes for dense columns through the transform
    (:mod:`numkfs.kernels._hsic_fgt`), NaN for the others.  ``weights``:
    ``ZT``'s rows and a row of ones in one array, if the caller has it
    (``ZT`` its first rows), else made here for the transform."""
    n, d = X.shape
    S1 = np.empty(d)
    S2 = np.empty(d)
    U = np.empty(d, dtype=np.int64)
    R2 = np.full(d, np.nan)
    Q = np.full(d, np.nan)
    if not sp.issparse(X):
        X = np.ascontiguousarray(X, dtype=np.float64)
        shift = _column_shift(X) if shift is None else shift
    min_fgt = _fgt_min_entries(method)
    if (sp.issparse(X) and min_fgt <= n) or (not sp.issparse(X) and n >= min_fgt):
        p, delta = fgt_order(float(rtol))
        fgt = (float(FGT_H), int(p), float(delta), int(DIRECT_MAX))
        nring = _ring_size(FGT_H, delta)
        nat = np.sqrt(g)
        if sp.issparse(X):
            X = sp.csc_matrix(X)
            loops = _column_loops(_fgt_sums_csc, _fgt_sums_csc_serial, _csc_entries(X, min_fgt))
            loops(
                X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, nat, np.sqrt(g * LOG2E), ZT, n,
                SMALL_DISTINCT, fgt, nring, int(min_fgt), S1, S2, U,
            )
        else:
            # tasks of consecutive columns; a task's buffer at most FGT_BLOCK_VALUES values; the
            # serial twin takes every block in one worker
            nt = numba.get_num_threads()
            nb = max(_n_blocks(d), -(-d * n // FGT_BLOCK_VALUES))
            nb = int(min(d, -(-nb // nt) * nt))
            loops = _column_loops(_fgt_hsic_dense, _fgt_hsic_dense_serial, FGT_ENTRIES_PER_VALUE * d * n)
            nw = min(nt, nb) if loops is _fgt_hsic_dense else 1
            W = weights
            if W is None:
                W = np.empty((ZT.shape[0] + 1, n))  # the targets, then the counts
                W[:-1] = ZT
                W[-1] = 1.0
            orders = (0, 0.0, 0, 0.0) if rows is None else _row_orders(rows, p)  # zeros: the sums only
            big = nw * W.nbytes >= NUMPY_BUFFER_BYTES  # the workers' boxed weights: numpy's (huge pages)
            loops(X, shift, nat, W[:-1], W, SMALL_DISTINCT, fgt, nring, orders, nb, nw,
                  np.empty((nw,) + W.shape if big else (nw, 0, 0)), S1, S2, U, R2, Q)
        return (S1, S2, U) if rows is None else (S1, S2, U, R2, Q)
    # base-2 units: exp(-g dl²) = 2**(-(sqrt(g log2 e) dl)²), see fast_exp2_neg
    sq = np.sqrt(g * LOG2E)
    if sp.issparse(X):
        X = sp.csc_matrix(X)
        loops = _column_loops(_rbf_sums_csc, _rbf_sums_csc_serial, _csc_entries(X, np.iinfo(np.int64).max))
        loops(
            X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, sq, ZT, n,
            SMALL_DISTINCT, S1, S2, U,
        )
    else:
        probe = TIE_PROBE if n >= SORT_MIN_SAMPLES else 0
        ZTp = np.zeros((ZT.shape[0], n + PAD))  # zero targets in the pad (see PAD)
        ZTp[:, :n] = ZT
        loops = _column_loops(_rbf_sums_dense, _rbf_sums_dense_serial, d * n * n // 2 // SERIAL_PAIRS_PER_ENTRY)
        loops(X, shift, sq, ZTp, SMALL_DISTINCT, probe, _n_blocks(d), S1, S2, U)
    return (S1, S2, U) if rows is None else (S1, S2, U, R2, Q)


def _row_orders(rtol, p):
    """``(P, delta, Pq, deltaq)`` of the row moments at ``rtol`` (those of
    :func:`numkfs.kernels.rowsums.rbf_row_moments`), checked against the
    statistic's order ``p``, whose box moments they take."""
    from .rowsums import Q_BOX

    P, delta = fgt_order(float(rtol))
    Pq, deltaq = fgt_order(float(rtol), Q_BOX)
    if max(P, Pq) > p:
        raise ValueError(f"row moments at rtol={rtol!r} need order {max(P, Pq)} > the statistic's {p}.")
    return int(P), float(delta), int(Pq), float(deltaq)


def _column_shift(X, mean=None, var=None):
    """The value subtracted from each dense column before it is scaled
    (``_dense_block``): its mean where that exceeds its standard deviation
    (an offset would cost ``log10(|mean|/std)`` digits of every difference),
    else 0, so that columns of sparse data stored dense keep their exact
    zeros (grouped in one entry by ``_compress_zeros``)."""
    if mean is None:
        mean, var = column_moments(X)
    return np.where(np.abs(mean) > np.sqrt(var), mean, 0.0)


#: ``γ (max x - min x)²`` at or below which a column's sums are taken from its
#: moments (``_small_spread_sums``): every pair then has ``γ d² ≤ 1/16``.
SMALL_SPREAD = 1.0 / 16.0
#: Terms of the series of ``1 - exp(-x)`` there: the first omitted one is
#: below ``(1/16)**8 / 9! = 6e-16`` of the sum.
SMALL_SPREAD_TERMS = 8


def _small_spread_sums(Xs, g, mean, Z):
    r"""``(S1, tr)`` of the columns ``Xs`` (n, k), each of them within a
    quarter of a bandwidth (``γ (max - min)² ≤ SMALL_SPREAD``), without the
    cancellation of ``tr = n - S(1)/n``.

    With ``s = √γ (x - mean)`` and ``x_jk = (s_j - s_k)² ≤ 1/16``,

    .. math::

        \sum_{jk} w_j w_k (1 - e^{-x_{jk}})
        = \sum_{m=1}^{8} \frac{(-1)^{m+1}}{m!} \sum_{l=0}^{2m}
          \binom{2m}{l} (-1)^l M_l M_{2m-l},
        \qquad M_l = \sum_j w_j s_j^l,

    so ``tr = (w = 1 sum)/n`` and ``S1 = Σ_q (1ᵀz_q)² - (w = z_q sum)``, in
    O(17 n) per column and target.  The m = 1 term, ``2(M_0 M_2 - M_1²)``,
    is the whole sum to first order and, the column centred, has no
    cancellation; the others are corrections below ``x/2`` of it.  Every
    term to machine precision: at ``γ var = 1e-12`` the loop's
    ``n - S(1)/n`` kept two digits (n = 200), the fast Gauss transform's
    four."""
    from math import comb, factorial

    n, k = Xs.shape
    S = (Xs - mean) * np.sqrt(g)
    W = np.concatenate([np.ones((n, 1)), Z], axis=1)  # weights: the counts, then the targets
    L = 2 * SMALL_SPREAD_TERMS
    M = np.empty((L + 1, W.shape[1], k))
    P = np.ones_like(S)
    for l in range(L + 1):
        M[l] = W.T @ P
        P = P * S
    tot = np.zeros((W.shape[1], k))
    for m in range(1, SMALL_SPREAD_TERMS + 1):
        Tm = sum(comb(2 * m, l) * (-1) ** l * M[l] * M[2 * m - l] for l in range(2 * m + 1))
        tot += (-1) ** (m + 1) / factorial(m) * Tm
    zsum = M[0, 1:]  # 1ᵀz_q
    S1 = np.sum(zsum * zsum - tot[1:], axis=0)
    return S1, tot[0] / n


def rbf_sums_traces(X, g, ZT, method="exact", rtol=1e-10, stats=None, rows=None, weights=None):
    """``(S1, tr, n_entries)`` for every column: ``_rbf_pair_sums`` with
    ``tr = n - S2/n``, except for dense columns within a quarter of a
    bandwidth, whose sums come from their moments (``_small_spread_sums``:
    there ``n - S2/n`` cancels, ``1 - γ var`` of the digits lost).
    ``stats``: ``(mean, var, spread)`` of a dense X if known.  ``rows``:
    as in ``_rbf_pair_sums``, then ``(S1, tr, n_entries, R2, Q)`` (NaN
    where not taken with the sums); ``weights``: as in ``_rbf_pair_sums``."""
    n, d = X.shape
    if rows is not None:
        R2 = np.full(d, np.nan)
        Q = np.full(d, np.nan)
    if sp.issparse(X):
        out = _rbf_pair_sums(X, g, ZT, method, rtol, rows=rows)
        return (out[0], n - out[1] / n) + out[2:]
    X = np.ascontiguousarray(X, dtype=np.float64)
    if stats is None:
        mean, var, spread = dense_stats(X)
    else:
        mean, var, spread = stats
    # spread = max |x - x_0| >= range / 2
    small = (g * (2.0 * spread) ** 2 <= SMALL_SPREAD) & (spread > 0)
    shift = _column_shift(X, mean, var)
    if not small.any():
        out = _rbf_pair_sums(X, g, ZT, method, rtol, shift, rows, weights)
        return (out[0], n - out[1] / n) + out[2:]
    S1 = np.empty(d)
    tr = np.empty(d)
    U = np.full(d, n, dtype=np.int64)
    S1[small], tr[small] = _small_spread_sums(X[:, small], g[small], mean[small], ZT.T)
    rest = ~small
    if rest.any():
        out = _rbf_pair_sums(X[:, rest], g[rest], ZT, method, rtol, shift[rest], rows, weights)
        S1[rest], tr[rest], U[rest] = out[0], n - out[1] / n, out[2]
        if rows is not None:
            R2[rest], Q[rest] = out[3], out[4]
    return (S1, tr, U) if rows is None else (S1, tr, U, R2, Q)


def linear_parts(X, Z):
    """Numerators ||x_cᵀ Z||² and traces ||x_c||² of the linear kernels."""
    n = X.shape[0]
    mean, var = column_moments(X)
    if sp.issparse(X):
        XtZ = np.asarray(X.T @ Z) - np.outer(mean, Z.sum(axis=0))
    else:
        XtZ = (X - mean).T @ Z
    return (XtZ**2).sum(axis=1), n * var
