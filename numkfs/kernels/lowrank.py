r"""Low-rank factors of kernel matrices by pivoted (incomplete) Cholesky.

For a positive semi-definite ``K`` (n x n) the greedy pivoted Cholesky
decomposition builds ``L`` (n x r) with ``K ≈ L Lᵀ`` one column at a time,
always pivoting on the largest remaining diagonal entry, and stops as soon
as the trace of the residual is small:

.. math::

    \operatorname{tr}(K - L L^\top) \le \mathrm{tol}\cdot\operatorname{tr}(K).

Because the residual ``K - L Lᵀ`` is itself PSD, its trace bounds its
spectral and nuclear norms, so the stated tolerance is a guarantee on the
whole matrix, not only on the diagonal.  Pivots below 1e-13 times the
largest diagonal entry are rounding noise and end the factorisation.  Only ``r`` columns of ``K`` are
ever evaluated: O(n r²) time and O(n r) memory, never the n x n matrix.

:func:`rbf_feature_factors` applies it to the one-dimensional Gaussian
kernel of every feature, ``K_i[a, b] = exp(-γ_i (x_ai - x_bi)²)``, and
returns the factors side by side (``Z``, ``offsets``), the input of NMMKL's
non-linear QCQP (:mod:`numkfs.solvers.native.nmmkl`).
"""
from __future__ import annotations

import numpy as np

from .._jit import jit
from .alignment import resolve_gamma

__all__ = ["pivoted_cholesky", "rbf_feature_factors"]


@jit
def _next_pivot(diag):
    """(remaining trace, largest remaining diagonal entry, its index)."""
    res = 0.0
    j = 0
    best = -1.0
    for i in range(diag.shape[0]):
        if diag[i] > 0.0:
            res += diag[i]
        if diag[i] > best:
            best = diag[i]
            j = i
    return res, best, j


@jit
def _add_column(L, r, j, col, piv, diag):
    """Column r of the factor from the pivot's kernel column ``col``."""
    for i in range(L.shape[0]):
        s = col[i]
        for q in range(r):
            s -= L[i, q] * L[j, q]
        L[i, r] = s / piv
    for i in range(L.shape[0]):
        diag[i] -= L[i, r] * L[i, r]
    diag[j] = 0.0


@jit
def _pivoted_cholesky_dense(K, tol, max_rank):
    n = K.shape[0]
    diag = np.empty(n)
    total = 0.0
    dmax = 0.0
    for i in range(n):
        diag[i] = K[i, i]
        total += K[i, i]
        if K[i, i] > dmax:
            dmax = K[i, i]
    floor = 1e-13 * dmax  # below this the pivots are rounding noise
    L = np.zeros((n, max_rank))
    r = 0
    while r < max_rank:
        res, best, j = _next_pivot(diag)
        if res <= tol * total or best <= floor:
            break
        _add_column(L, r, j, K[:, j], np.sqrt(best), diag)
        r += 1
    return L[:, :r].copy()


@jit
def _pivoted_cholesky_rbf1d(x, gamma, tol, max_rank):
    """Pivoted Cholesky of exp(-γ (x_a - x_b)²), columns evaluated on demand."""
    n = x.shape[0]
    diag = np.ones(n)
    total = float(n)
    L = np.zeros((n, max_rank))
    col = np.empty(n)
    r = 0
    while r < max_rank:
        res, best, j = _next_pivot(diag)
        if res <= tol * total or best <= 1e-13:
            break
        xj = x[j]
        for i in range(n):
            t = x[i] - xj
            col[i] = np.exp(-gamma * t * t)
        _add_column(L, r, j, col, np.sqrt(best), diag)
        r += 1
    return L[:, :r].copy()


def pivoted_cholesky(K, tol: float = 1e-6, max_rank: int | None = None) -> np.ndarray:
    r"""Greedy pivoted Cholesky factor ``L`` with ``tr(K - LLᵀ) ≤ tol · tr(K)``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semi-definite.
    tol : float
        Relative trace tolerance (0 gives the exact factor up to rank ``max_rank``).
    max_rank : int, optional
        Largest rank; default ``n``.

    Returns
    -------
    L : ndarray of shape (n, r)

    Examples
    --------
    >>> import numpy as np
    >>> x = np.linspace(0, 1, 50)
    >>> K = np.exp(-(x[:, None] - x[None, :]) ** 2)
    >>> L = pivoted_cholesky(K, tol=1e-10)
    >>> bool(np.trace(K - L @ L.T) <= 1e-10 * np.trace(K)), L.shape[1] < 50
    (True, True)
    """
    K = np.ascontiguousarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"pivoted_cholesky: K must be square; got shape {K.shape}.")
    n = K.shape[0]
    max_rank = n if max_rank is None else int(min(max_rank, n))
    return _pivoted_cholesky_dense(K, float(tol), max_rank)


def rbf_feature_factors(X, gamma="scale", tol: float = 1e-6, max_rank: int | None = None):
    r"""Low-rank factors of the per-feature Gaussian kernels, side by side.

    .. math::

        K_i[a, b] = \exp\big(-\gamma_i (X_{ai} - X_{bi})^2\big) \approx Z_i Z_i^\top,
        \qquad \operatorname{tr}(K_i - Z_i Z_i^\top) \le \mathrm{tol}\cdot n .

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    gamma : float, array of shape (n_features,), "scale" or None
        ``"scale"``/None: ``γ_i = 1 / var(x_i)`` (1 for standardised
        features); see :func:`numkfs.kernels.alignment.resolve_gamma`.
    tol : float
        Relative trace tolerance of every factor.
    max_rank : int, optional
        Cap on each factor's rank (default ``n_samples``).

    Returns
    -------
    Z : ndarray of shape (n_samples, R)
        The factors side by side, ``R = Σ r_i``.
    offsets : ndarray of int64, shape (n_features + 1,)
        Feature ``i`` owns columns ``offsets[i]:offsets[i+1]``.  A constant
        feature gets one column of ones (its kernel is exactly ``11ᵀ``).
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    gam = resolve_gamma(X, gamma)
    max_rank = n if max_rank is None else int(min(max_rank, n))
    blocks = []
    for i in range(d):
        blocks.append(_pivoted_cholesky_rbf1d(np.ascontiguousarray(X[:, i]), float(gam[i]), float(tol), max_rank))
    offsets = np.zeros(d + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([b.shape[1] for b in blocks])
    return np.ascontiguousarray(np.hstack(blocks)), offsets
