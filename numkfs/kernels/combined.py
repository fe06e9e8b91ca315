r"""The learned kernel :math:`\sum_{\eta_i > 0} \eta_i \tilde K_i` of the
per-feature base kernels (:func:`combined_kernel`, :func:`feature_kernel`),
formed without n x n x d storage.  See :mod:`numkfs.kernels.alignment`.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._jit import jit, pjit, prange, serial_twin
from .._threads import parallel_or_serial
from .._validation import check_memory
from ._alignment_columns import _as_float, _constant_mask, column_moments, resolve_gamma
from ._alignment_sums import rbf_sums_traces
from .fastexp import fast_exp_kernel

# ----------------------------------------------------------------------------
# kernels on a weighted sum of features


@pjit(fast=True)
def _rbf_weighted_sum(TA, TB, w, out):
    """out[a, b] += sum_q w_q exp(-(TA[q, a] - TB[q, b])²)  (TA, TB feature-major)."""
    s, m = TA.shape
    n = TB.shape[1]
    for a in prange(m):
        row = out[a]
        for q in range(s):
            ta = TA[q, a]
            wq = w[q]
            tb = TB[q]
            for b in range(n):
                dl = ta - tb[b]
                row[b] += wq * fast_exp_kernel(-(dl * dl))


@jit(fast=True)
def _rbf_row_upper(T, w, row, a):
    """row[b] += sum_q w_q exp(-(T[q, a] - T[q, b])²) for b >= a."""
    s, n = T.shape
    for q in range(s):
        ta = T[q, a]
        wq = w[q]
        tq = T[q]
        for bb in range(n - a):
            b = a + bb
            dl = ta - tq[b]
            row[b] += wq * fast_exp_kernel(-(dl * dl))


@pjit
def _rbf_weighted_sum_sym(T, w, out):
    """Symmetric version: upper triangle, rows paired (h, n-1-h) for balance, mirrored."""
    n = T.shape[1]
    half = (n + 1) // 2
    for h in prange(half):
        _rbf_row_upper(T, w, out[h], h)
        a2 = n - 1 - h
        if a2 != h:
            _rbf_row_upper(T, w, out[a2], a2)
    for a in prange(n):
        for b in range(a):
            out[a, b] = out[b, a]


# serial twins for kernels on fewer than PARALLEL_MIN_ROWS rows (see _threads.parallel_or_serial)
_rbf_weighted_sum_serial = serial_twin(_rbf_weighted_sum, fast=True)
_rbf_weighted_sum_sym_serial = serial_twin(_rbf_weighted_sum_sym)


def _dense_columns(X, cols):
    if sp.issparse(X):
        return np.asarray(X[:, cols].toarray())
    return X[:, cols]


def _two_valued_sparse(X, cols):
    """For CSC columns, the common non-zero value if the column takes values
    in {0, v} only, else NaN."""
    out = np.full(len(cols), np.nan)
    for q, j in enumerate(cols):
        dat = X.data[X.indptr[j]:X.indptr[j + 1]]
        dat = dat[dat != 0]
        if dat.size == 0:
            out[q] = 0.0
        elif np.all(dat == dat[0]):
            out[q] = dat[0]
    return out


def _raw_rbf_sum(A, B, cols, g, w, symmetric, block=2048):
    """sum_q w_q exp(-g_q (A_q - B_q)²) over the selected columns (not centred)."""
    m, n = A.shape[0], B.shape[0]
    out = np.zeros((m, n))
    cols = np.asarray(cols)
    if len(cols) == 0:
        return out
    rest = np.ones(len(cols), dtype=bool)
    if sp.issparse(A) and sp.issparse(B):
        # columns with values in {0, v} on both sides: indicator algebra by sparse products
        va = _two_valued_sparse(A, cols)
        vb = va if symmetric else _two_valued_sparse(B, cols)
        binary = np.isfinite(va) & np.isfinite(vb) & ((va == vb) | (va == 0) | (vb == 0))
        binary &= ~((va == 0) & (vb == 0))
        if binary.any():
            bc = cols[binary]
            v = np.where(va[binary] != 0, va[binary], vb[binary])
            e = np.exp(-g[binary] * v**2)
            D = w[binary] * (1.0 - e)
            IA = (A[:, bc] != 0).astype(np.float64).tocsr()
            IB = IA if symmetric else (B[:, bc] != 0).astype(np.float64).tocsr()
            qa = IA @ D
            qb = qa if symmetric else IB @ D
            cross = (IA @ sp.diags(D) @ IB.T).toarray()
            out += w[binary].sum() - qa[:, None] - qb[None, :] + 2.0 * cross
            rest = ~binary
    sq = np.sqrt(g[rest])
    wr = np.ascontiguousarray(w[rest])
    rc = cols[rest]
    for s0 in range(0, len(rc), block):
        sl = slice(s0, s0 + block)
        TA = np.ascontiguousarray(_dense_columns(A, rc[sl]).T) * sq[sl, None]
        if symmetric:
            parallel_or_serial(_rbf_weighted_sum_sym, _rbf_weighted_sum_sym_serial, n)(TA, wr[sl], out)
        else:
            TB = np.ascontiguousarray(_dense_columns(B, rc[sl]).T) * sq[sl, None]
            parallel_or_serial(_rbf_weighted_sum, _rbf_weighted_sum_serial, m)(TA, TB, wr[sl], out)
    return out


def feature_kernel(X, i: int, Y=None, *, kernel: str = "rbf", gamma=None, center: bool = True,
                   normalize: bool = True):
    r"""One per-feature base kernel :math:`\tilde K_i` (n x n, or m x n between
    rows of ``Y`` and ``X``), centred and trace-normalised with the
    training statistics of ``X``. A convenience for tests and inspection."""
    eta = np.zeros(X.shape[1])
    eta[i] = 1.0
    return combined_kernel(X, eta, Y, kernel=kernel, gamma=gamma, center=center, normalize=normalize)


def combined_kernel(
    X,
    eta,
    Y=None,
    *,
    kernel: str = "rbf",
    gamma=None,
    traces=None,
    center: bool = True,
    normalize: bool = True,
    centering=None,
    return_centering: bool = False,
):
    r"""The learned kernel :math:`\sum_{\eta_i > 0} \eta_i \tilde K_i`, never n x n x d.

    .. math::

        K = \sum_{i:\ \eta_i > 0} \frac{\eta_i}{\operatorname{tr}(H K_i H)}\, H K_i H

    Only features with :math:`\eta_i > 0` are visited. Sparse columns with
    values in {0, v} are summed by sparse products of indicator matrices;
    other columns by a Numba loop with the fast exp (symmetric: half).

    Parameters
    ----------
    X : array-like or sparse (n_samples, n_features)
        Training data (defines centring and traces).
    eta : array of shape (n_features,)
        Non-negative kernel weights.
    Y : array-like or sparse (m_samples, n_features), optional
        Test points: returns the (m, n) cross kernel :math:`k(y_a, x_b)`
        centred in feature space with the *training* mean.
    kernel : {"rbf", "linear"}
    gamma : as in :func:`feature_alignments` (computed from ``X``).
    traces : array (n_features,), optional
        :math:`\operatorname{tr}(H K_i H)` from :func:`feature_alignments`
        (``return_details=True``); computed for the selected features if absent.
    center, normalize : bool
        Centre (H K H) and divide by the traces.
    centering : tuple, optional
        ``(column_means, total_mean)`` of the uncentred weighted training
        kernel, as returned with ``return_centering=True`` by the training
        call; needed to centre a cross kernel (computed otherwise, which
        costs one training kernel).
    return_centering : bool
        Also return ``centering`` (training call only).

    Returns
    -------
    K : ndarray (n, n) or (m, n)
    centering : tuple, only if ``return_centering``
    """
    if kernel not in ("rbf", "linear"):
        raise ValueError(f"combined_kernel: kernel must be 'rbf' or 'linear'; got {kernel!r}.")
    X = _as_float(X)
    n, d = X.shape
    eta = np.asarray(eta, dtype=float).ravel()
    if eta.shape[0] != d:
        raise ValueError(f"combined_kernel: eta has {eta.shape[0]} entries but X has {d} features.")
    if np.any(eta < 0) or not np.all(np.isfinite(eta)):
        raise ValueError("combined_kernel: eta must be finite and non-negative.")
    if Y is not None:
        Y = _as_float(Y, min_samples=1)
        if Y.shape[1] != d:
            raise ValueError(f"combined_kernel: Y has {Y.shape[1]} features but X has {d}.")
    m = n if Y is None else Y.shape[0]
    check_memory(8.0 * m * n, f"The {m} x {n} combined kernel matrix")
    sel = np.flatnonzero(eta > 0)
    g = resolve_gamma(X, gamma) if kernel == "rbf" else None
    if normalize:
        if traces is None:
            traces = _traces(X, sel, kernel, g)
        else:
            traces = np.asarray(traces, dtype=float)[sel]
        ok = traces > 0
        sel = sel[ok]
        w = eta[sel] / traces[ok]
    else:
        w = eta[sel]
    if kernel == "linear":
        mean = column_moments(X)[0] if center else np.zeros(d)
        XS = _dense_columns(X, sel) - mean[sel]
        if Y is None:
            K = (XS * w) @ XS.T
        else:
            K = (_dense_columns(Y, sel) - mean[sel]) * w @ XS.T
        return (K, None) if return_centering else K
    if Y is None:
        K = _raw_rbf_sum(X, X, sel, g[sel], w, True)
        cent = (K.mean(axis=0), K.mean())
        if center:
            K = K - cent[0][None, :] - cent[0][:, None] + cent[1]
        return (K, cent) if return_centering else K
    K = _raw_rbf_sum(Y, X, sel, g[sel], w, False)
    if center:
        if centering is None:
            Kx = _raw_rbf_sum(X, X, sel, g[sel], w, True)
            centering = (Kx.mean(axis=0), Kx.mean())
        colmean, total = centering
        K = K - K.mean(axis=1)[:, None] - np.asarray(colmean)[None, :] + total
    return K


def _traces(X, sel, kernel, g):
    """tr(H K_i H) for the selected columns."""
    Xs = X[:, sel]
    if kernel == "linear":
        return Xs.shape[0] * column_moments(Xs)[1]
    n = X.shape[0]
    _, tr, _ = rbf_sums_traces(Xs, g[sel], np.zeros((1, n)))
    return np.where(_constant_mask(Xs), 0.0, tr)
