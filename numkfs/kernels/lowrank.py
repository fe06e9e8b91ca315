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

from dataclasses import dataclass

import numpy as np

from .._jit import jit
from .alignment import _dense_columns, resolve_gamma
from .fastexp import fast_exp_kernel

__all__ = ["LearnedKernelFeatures", "learned_kernel_features", "pivoted_cholesky", "rbf_feature_factors"]


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
    r = np.int64(0)  # not the literal 0, which would compile _add_column once more for Literal[int](0)
    while r < max_rank:
        res, best, j = _next_pivot(diag)
        if res <= tol * total or best <= floor:
            break
        _add_column(L, r, j, K[:, j], np.sqrt(best), diag)
        r += 1
    return L[:, :r].copy()


#: Rows of the transposed factor allocated at first (doubled as needed).
FACTOR_FIRST_ROWS = 32
#: Entries per chunk of :func:`_rbf1d_row` (the chunk of the kernel column
#: stays in L1 while every earlier row is subtracted from it).
FACTOR_CHUNK = 1024


@jit(fast=True)
def _positive_sum(d):
    """The sum of the positive entries of ``d`` (vectorised: reassociated)."""
    s = 0.0
    for i in range(d.shape[0]):
        s += max(d[i], 0.0)
    return s


@jit
def _rbf1d_row(x, gamma, LT, r, j, piv, diag, col):
    """Row ``r`` of the transposed factor from the pivot ``j`` (``piv``: the
    square root of its residual diagonal entry), the diagonal updated, and
    the next pivot's ``_next_pivot`` (remaining trace, largest entry, its
    index), in one pass over the points by chunks of ``FACTOR_CHUNK``
    (``col``: scratch of that length): the kernel column's chunk, every
    earlier row subtracted from it while it stays in L1, the new row, the
    diagonal and its scan.  Each entry of the row and the diagonal gets the
    operations of ``_add_column`` in the same order (the same factor, bit
    for bit) as a pass over the n entries of the column per earlier row,
    then ``_next_pivot``'s, would, in fewer passes over memory; the
    remaining trace is summed by chunks, vectorised (the same sum up to
    reassociation, which matters only for a trace within rounding of the
    tolerance)."""
    n = x.shape[0]
    xj = x[j]
    res = 0.0
    best = -1.0
    nxt = 0
    for a in range(0, n, FACTOR_CHUNK):
        b = min(a + FACTOR_CHUNK, n)
        L = b - a
        xs = x[a:b]  # slices indexed from 0: no negative-index wraparound, so the loops vectorise
        for i in range(L):
            t = xs[i] - xj
            col[i] = fast_exp_kernel(-gamma * t * t)  # within 4e-16 of np.exp; libm's took 1/6 of the factor
        for q in range(r):
            c = LT[q, j]
            lq = LT[q, a:b]
            for i in range(L):
                col[i] -= lq[i] * c
        lr = LT[r, a:b]
        dg = diag[a:b]
        for i in range(L):
            v = col[i] / piv
            lr[i] = v
            dg[i] -= v * v
        if a <= j < b:
            diag[j] = 0.0
        res += _positive_sum(dg)
        for i in range(L):
            if dg[i] > best:
                best = dg[i]
                nxt = a + i
    return res, best, nxt


@jit
def _pivoted_cholesky_rbf1d(x, gamma, tol, max_rank):
    """Pivoted Cholesky of exp(-γ (x_a - x_b)²), columns evaluated on demand;
    returns the factor (n x r, C order) and its pivot rows in the order taken
    (:func:`pivoted_cholesky_rbf1d_rows`, transposed)."""
    LT, piv = pivoted_cholesky_rbf1d_rows(x, gamma, tol, max_rank, np.int64(0), np.int64(FACTOR_FIRST_ROWS),
                                          np.empty((0, 0)))
    return np.ascontiguousarray(LT.T), piv


@jit
def pivoted_cholesky_rbf1d_rows(x, gamma, tol, max_rank, extra, first, buf):
    """The transposed factor of :func:`_pivoted_cholesky_rbf1d` (r x n, C
    order, a view of the first rows of its buffer) and the pivots: for a
    caller that reads the factor by columns (the HSIC test's weight rows),
    without the n x r transposition (a large share of the factor's time).

    The factor is built transposed, in rows allocated as the rank grows
    (never n x ``max_rank`` zeros, hundreds of MB at large n, written
    before the first column).  ``extra``: rows after
    the factor's, in the same buffer and left to the caller (the HSIC
    test's row of counts: no copy of the factor to add it).  ``first``:
    the rows of the first buffer (doubled as needed).  ``buf``: that first
    buffer (C order, n columns, ``first`` ignored), if the caller has it
    (else an array with no rows, ``np.empty((0, 0))``):
    numpy's allocation of a large array asks the kernel for huge pages
    (``madvise``), Numba's does not, and a buffer mapped afresh at each
    call (malloc returns large freed blocks to the system) is faulted in
    by 4 KiB pages, a large share of the factor's time).

    Every argument is required, with one type each (``extra`` and ``first``
    int64, not a constant's literal type; ``buf`` an array), so that the
    compiled and the Python callers share one signature."""
    n = x.shape[0]
    diag = np.ones(n)
    total = float(n)
    if buf.shape[0] == 0:
        cap = max(1, min(max_rank, first))
        LT = np.empty((cap, n))
    else:
        cap = buf.shape[0]
        LT = buf
    col = np.empty(FACTOR_CHUNK)
    pivots = np.empty(max_rank, dtype=np.int64)
    r = np.int64(0)  # not the literal 0, which would compile _rbf1d_row once more for Literal[int](0)
    res, best, j = _next_pivot(diag)
    while r < max_rank:
        if res <= tol * total or best <= 1e-13:
            break
        if r == cap:
            cap = min(max_rank, 2 * cap)
            grown = np.empty((cap, n))
            grown[:r] = LT[:r]
            LT = grown
        pivots[r] = j
        res, best, j = _rbf1d_row(x, gamma, LT, r, j, np.sqrt(best), diag, col)
        r += 1
    if r + extra > cap:
        grown = np.empty((r + extra, n))
        grown[:r] = LT[:r]
        LT = grown
    return LT[:r + extra], pivots[:r].copy()


#: Entries per chunk of :func:`rows_gram` (the chunk of every row stays in cache).
GRAM_CHUNK = 256


@jit(fast=True)
def rows_gram(ZT):
    """``(ZT ZTᵀ, Σ_j (Σ_q ZT[q, j]²)²)`` of a factor's rows (r x n, C
    order), serially and without BLAS: the HSIC test's target moments, taken
    after its parallel sums (a threaded BLAS there waits for Numba's
    threads, and limiting its threads costs a noticeable share of a test)."""
    r, n = ZT.shape
    G = np.zeros((r, r))
    s4 = 0.0
    nrm = np.empty(GRAM_CHUNK)
    for a in range(0, n, GRAM_CHUNK):
        b = min(a + GRAM_CHUNK, n)
        L = b - a
        for i in range(L):
            nrm[i] = 0.0
        for q in range(r):
            zq = ZT[q, a:b]
            for p in range(q + 1):
                zp = ZT[p, a:b]
                acc = 0.0
                for i in range(L):
                    acc += zq[i] * zp[i]
                G[q, p] += acc
            for i in range(L):
                nrm[i] += zq[i] * zq[i]
        for i in range(L):
            s4 += nrm[i] * nrm[i]
    for q in range(r):
        for p in range(q):
            G[p, q] = G[q, p]
    return G, s4


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
        blocks.append(_pivoted_cholesky_rbf1d(np.ascontiguousarray(X[:, i]), float(gam[i]), float(tol), max_rank)[0])
    offsets = np.zeros(d + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([b.shape[1] for b in blocks])
    return np.ascontiguousarray(np.hstack(blocks)), offsets


@dataclass
class LearnedKernelFeatures:
    r"""A feature map Φ with :math:`\Phi\Phi^\top \approx \sum_i w_i H K_i H`,
    the learned (lp-KTA) kernel, for new rows too (:meth:`transform`).

    Made by :func:`learned_kernel_features`; plain arrays only (it pickles
    with the estimators that keep it).

    Parameters
    ----------
    features : ndarray of int
        The columns of X used (those with :math:`w_i > 0`).
    kernel : {"rbf", "linear"}
        The per-feature kernel.
    gamma : ndarray or None
        Each used feature's bandwidth (rbf).
    landmarks : list of ndarray
        Per used feature, the pivot values :math:`x_P` of its factor (rbf).
    projections : list of ndarray
        Per used feature, :math:`L_P^{-\top}` (rbf): a row's factor is
        :math:`k(x, x_P) L_P^{-\top}`, which on the training rows gives the
        pivoted Cholesky factor itself (the Nyström extension).
    means : list of ndarray
        Per used feature, the training mean of its factor (the centring H).
    scales : ndarray
        :math:`\sqrt{w_i}` per used feature.
    """

    features: np.ndarray
    kernel: str
    gamma: np.ndarray | None
    landmarks: list
    projections: list
    means: list
    scales: np.ndarray

    @property
    def n_components(self) -> int:
        """Columns of Φ."""
        return int(sum(m.shape[0] for m in self.means))

    def transform(self, X) -> np.ndarray:
        """Φ of the rows of ``X`` (all of its columns; only ``features`` are read).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Rows to map, in the columns of the data the map was made on.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        blocks = [self._block(_dense_column(X, j), q) for q, j in enumerate(self.features)]
        n = X.shape[0]
        return np.hstack(blocks) if blocks else np.zeros((n, 0))

    def _block(self, x, q):
        if self.kernel == "linear":
            z = x[:, None]
        else:
            z = np.exp(-self.gamma[q] * (x[:, None] - self.landmarks[q][None, :]) ** 2) @ self.projections[q]
        return self.scales[q] * (z - self.means[q])


def _dense_column(X, j):
    """Column ``j`` of dense or sparse ``X`` as a contiguous float array."""
    return np.ascontiguousarray(_dense_columns(X, [j]), dtype=np.float64).ravel()


def learned_kernel_features(X, eta, *, kernel: str = "rbf", gamma=None, traces=None, tol: float = 1e-8,
                            max_rank: int = 100):
    r"""Low-rank features of the learned kernel :math:`\sum_i \eta_i H K_i H / \operatorname{tr}(H K_i H)`.

    The kernel that :func:`numkfs.kernels.alignment.combined_kernel` forms
    as an n x n matrix, here as an n x R matrix Φ with
    :math:`\Phi\Phi^\top \approx K`: each used feature's one-dimensional
    Gaussian kernel is factored by pivoted Cholesky
    (:math:`\operatorname{tr}(K_i - Z_i Z_i^\top) \le \mathrm{tol}\cdot n`,
    so the learned kernel is within ``tol`` of its trace in nuclear norm),
    centred and weighted: :math:`\Phi = [\sqrt{w_i}\, H Z_i]_i`.  A linear
    kernel is its own factor (one column).  O(n R) memory and
    O(n Σ r_i²) time, never n x n; a kernel machine on Φ (ridge regression,
    a linear SVM) is the one on K.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Training data.
    eta : array-like of shape (n_features,)
        Non-negative kernel weights; only features with ``eta > 0`` are used.
    kernel : {"rbf", "linear"}, default="rbf"
        The per-feature kernel.
    gamma : float, array of shape (n_features,), "scale" or None
        Bandwidths, as in :func:`numkfs.kernels.alignment.resolve_gamma`.
    traces : array-like of shape (n_features,), optional
        :math:`\operatorname{tr}(H K_i H)` (from the alignments); computed
        from the factors when absent.
    tol : float, default=1e-8
        Relative trace tolerance of each factor.
    max_rank : int, default=100
        Cap on each factor's rank.

    Returns
    -------
    Phi : ndarray of shape (n_samples, R)
        The training rows' features.
    features : LearnedKernelFeatures
        The map, for new rows (:meth:`LearnedKernelFeatures.transform`).

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.alignment import combined_kernel
    >>> X = np.random.default_rng(0).standard_normal((300, 4))
    >>> eta = np.array([0.5, 0.0, 1.0, 0.2])
    >>> Phi, fm = learned_kernel_features(X, eta)
    >>> K = combined_kernel(X, eta)
    >>> bool(np.abs(Phi @ Phi.T - K).max() < 1e-6 * np.abs(K).max()), Phi.shape[1] < 100
    (True, True)
    """
    if kernel not in ("rbf", "linear"):
        raise ValueError(f"learned_kernel_features: kernel must be 'rbf' or 'linear'; got {kernel!r}.")
    eta = np.asarray(eta, dtype=float).ravel()
    n, d = X.shape
    if eta.shape[0] != d:
        raise ValueError(f"learned_kernel_features: eta has {eta.shape[0]} entries but X has {d} features.")
    if np.any(eta < 0) or not np.all(np.isfinite(eta)):
        raise ValueError("learned_kernel_features: eta must be finite and non-negative.")
    sel = np.flatnonzero(eta > 0)
    g = None
    if kernel == "rbf":
        g = np.asarray(resolve_gamma(X, gamma), dtype=float)
    landmarks, projections, means, blocks, used, weights, gams = [], [], [], [], [], [], []
    if traces is not None:
        traces = np.asarray(traces, dtype=float).ravel()
    for j in sel:
        x = _dense_column(X, j)
        if kernel == "linear":
            Z, lm, proj = x[:, None], None, None
        else:
            Z, piv = _pivoted_cholesky_rbf1d(x, float(g[j]), float(tol), int(min(max_rank, n)))
            lm = x[piv]
            proj = np.linalg.inv(Z[piv, :]).T  # L_P is lower triangular in pivot order
        mean = Z.mean(axis=0)
        Zc = Z - mean
        tr = float(np.sum(Zc * Zc)) if traces is None else float(traces[j])
        if not tr > 0.0:  # a constant feature: its centred kernel is 0
            continue
        w = eta[j] / tr
        used.append(j)
        landmarks.append(lm)
        projections.append(proj)
        means.append(mean)
        weights.append(np.sqrt(w))
        gams.append(None if g is None else g[j])
        blocks.append(np.sqrt(w) * Zc)
    fm = LearnedKernelFeatures(
        features=np.asarray(used, dtype=np.int64), kernel=kernel,
        gamma=None if g is None else np.asarray(gams, dtype=float), landmarks=landmarks, projections=projections,
        means=means, scales=np.asarray(weights, dtype=float),
    )
    Phi = np.hstack(blocks) if blocks else np.zeros((n, 0))
    return Phi, fm
