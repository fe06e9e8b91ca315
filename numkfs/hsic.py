r"""Per-feature HSIC independence tests with gamma-approximation p-values.

For each feature :math:`i`, the Hilbert-Schmidt independence criterion
between the column :math:`x_i` and the target :math:`y` is estimated by the
biased statistic

.. math::

    \mathrm{HSIC}_b = \frac{1}{n^2} \operatorname{tr}(K H L H),
    \qquad H = I - \tfrac1n 11^\top,

with :math:`K_{jk} = k(x_{ji}, x_{ki})` the feature's kernel and :math:`L`
the target's:

* **feature kernel**: ``"rbf"``, :math:`e^{-\gamma_i (x_{ji} - x_{ki})^2}`, with
  the bandwidth rule of the alignments (``gamma=None``:
  :math:`\gamma_i = 1/\operatorname{var}(x_i)`, see
  :mod:`numkfs.kernels.alignment`); or ``"linear"``, :math:`x_{ji} x_{ki}`;
* **target kernel**: for classification the class-indicator (delta) kernel
  :math:`L_{jk} = 1[y_j = y_k]`; for regression the Gaussian kernel
  :math:`e^{-\gamma_y (y_j - y_k)^2}` with :math:`\gamma_y = 1/\operatorname{var}(y)`
  (the same rule), used through its pivoted Cholesky factor
  :math:`L \approx GG^\top` with :math:`\operatorname{tr}(E) \le 10^{-4} n`,
  :math:`E = L - GG^\top` (:data:`TARGET_TOL`).  The statistic and its null
  moments are computed for the same kernel :math:`GG^\top`, so the test is
  exactly the HSIC test of that kernel, calibrated whatever the tolerance.
  Against the full Gaussian kernel (:math:`E` positive semi-definite) the
  statistic is off by at most :math:`\operatorname{tr}(E)\lambda_{\max}(HKH)/n^2`,
  :math:`\operatorname{tr}(HLH)` by at most :math:`\operatorname{tr}(E)`,
  :math:`n(n-1) A_L` by at most
  :math:`2\operatorname{tr}(E)(\lambda_{\max}(HLH) + \max_j (HLH)_{jj})`:
  about :math:`10^{-4}` relative each, far below the gamma law's own
  error (it matches two moments only), for a lower rank r than a tighter
  tolerance needs.  The rank is small for a Gaussian-like or uniform
  target and large for a heavy-tailed one, and the cost of each feature's
  sums grows with r + 1 (the alignments' sums carry 2 weight vectors): with
  a class target HSIC costs about twice the alignments, with a real target
  a few times more (``benchmarks/hsic_pvalues.py`` measures it).  The
  largest buffers are numpy's
  (:data:`numkfs.kernels._hsic_fgt.NUMPY_BUFFER_BYTES`), so that repeated
  tests do not fault their pages in afresh.

With :math:`Z = HG` (or :math:`Z = HY`, :math:`Y` the one-hot class matrix),
:math:`n^2\,\mathrm{HSIC}_b = \sum_q z_q^\top K z_q` is the numerator of the
centred kernel-target alignment, computed by the same per-feature sums
(:func:`numkfs.kernels.alignment.feature_alignments`).

Null distribution (Gretton et al., 2008)
----------------------------------------
Under independence, :math:`\mathrm{HSIC}_b` has mean and variance (to
:math:`O(n^{-3})`)

.. math::

    \mu = \frac{\operatorname{tr}(HKH)\,\operatorname{tr}(HLH)}{n (n-1)^2},
    \qquad
    \sigma^2 = \frac{2 (n-4)(n-5)}{n (n-1)(n-2)(n-3)}\; A_K A_L,
    \qquad
    A_K = \frac{1}{n(n-1)} \sum_{j \ne k} (HKH)_{jk}^2,

(:math:`\operatorname{tr}(HKH)/(n-1)` estimates :math:`E\,k(x,x) - E\,k(x,x')`,
:math:`A_K` the squared Hilbert-Schmidt norm of the centred covariance
operator), and is approximated by the gamma law with the same two moments:
shape :math:`\mu^2/\sigma^2`, scale :math:`\sigma^2/\mu`.  The p-value is
its upper tail at the observed statistic.  For the RBF kernel,

.. math::

    \sum_{j \ne k} (HKH)_{jk}^2 = \|HKH\|_F^2 - \sum_j (HKH)_{jj}^2,
    \qquad
    \|HKH\|_F^2 = Q - \tfrac2n R_2 + \tfrac{S^2}{n^2},
    \qquad
    (HKH)_{jj} = 1 - \tfrac{2 r_j}{n} + \tfrac{S}{n^2},

with the row sums :math:`r_j = \sum_k K_{jk}`, :math:`S = \sum_j r_j`,
:math:`R_2 = \sum_j r_j^2` and :math:`Q = \sum_{jk} K_{jk}^2` (an RBF sum at
:math:`2\gamma_i`), from :mod:`numkfs.kernels.rowsums`.  Every kernel sum
goes through the exact pair loop below 1,024 rows and through the fast
Gauss transform from there on (``method="auto"``): O(n) per feature, within
``rtol = 1e-10`` for the statistic's sums and 1e-6 for the variance's
(:data:`VAR_RTOL`); for dense columns the variance's row moments are taken
on the boxes and moments of the statistic's transform, in the same pass
(:mod:`numkfs.kernels._hsic_fgt`).  A constant feature (or target) has statistic 0 and p-value 1.

Calibration: the gamma law matches the first two moments only; it is
accurate in the bulk and the upper tail for moderate n (the tests check
uniformity on null features by Kolmogorov-Smirnov at n = 200 and 1,500;
`benchmarks/trust.py` from 200 to 10^6 rows),
and slightly conservative for p-values far below 1e-6, where only the
ordering of the features matters.

References
----------
A. Gretton, K. Fukumizu, C. H. Teo, L. Song, B. Schölkopf and A. J. Smola,
"A kernel statistical test of independence", NIPS 20, 2008.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._targets import check_real, target_type
from ._validation import check_X, check_y
from .kernels.alignment import (
    FGT_MIN_SAMPLES,
    NUMPY_BUFFER_BYTES,
    check_alignment_method,
    column_moments,
    dense_stats,
    linear_parts,
    rbf_sums_traces,
    resolve_gamma_given_var,
)
from .kernels.lowrank import FACTOR_FIRST_ROWS, pivoted_cholesky_rbf1d_rows, rows_gram
from .kernels.rowsums import rbf_row_moments

__all__ = ["hsic_test", "hsic_pvalues"]

#: Relative trace tolerance of the regression target's Cholesky factor: it
#: moves the p-values far less than the gamma law's own error (module docstring).
TARGET_TOL = 1e-4
#: Largest rank of that factor (reached only for targets spread over many
#: bandwidths, heavy tails; a Gaussian-like target needs about 18).
TARGET_MAX_RANK = 200
#: Bytes of the factor's first buffer (rows as fit, 2 to 32; doubled as the
#: rank grows): glibc's malloc serves a block of at most 32 MiB (its largest
#: mmap threshold) from memory the process keeps, so that repeated tests
#: reuse its pages, where a larger block is mapped afresh and its pages
#: faulted in at each call.  From ``NUMPY_BUFFER_BYTES`` on, the buffer is
#: numpy's, which asks for huge pages, and so are the statistic's sums'
#: workers' boxed weights (:mod:`numkfs.kernels._hsic_fgt`), so that the
#: process's heap is not returned to the system and faulted in again after
#: each test.
TARGET_FIRST_BYTES = 32_000_000
#: Tolerance of the fast Gauss transform for the statistic's sums.
RTOL = 1e-10
#: Tolerance of the fast Gauss transform for the null variance's sums
#: (:math:`R_2`, :math:`Q`): they only set the gamma law's shape; against
#: ``RTOL`` the p-values move by about 1e-9 relative, and the transform
#: runs faster.
VAR_RTOL = 1e-6


def _target_factor(y, target, n):
    """Centred factor, transposed, and a row of ones: ``W`` (r + 1, n, C
    order) with ``HLH = ZTᵀ ZT`` for ``ZT = W[:-1]`` (module docstring),
    and the kind.  Rows, not columns: the sums read each column of the
    factor as a weight row, and the n x r transposition cost a third of the
    factor's time (n = 2e5, r = 17); the ones are the sums' counts row,
    in the factor's own buffer (no copy of the factor to add it)."""
    if target == "auto":
        try:
            target = target_type(y)
        except ValueError as exc:
            raise ValueError(f"hsic_test: {exc}") from None
    if target in ("binary", "multiclass"):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        classes, inv = np.unique(y, return_inverse=True)
        if len(classes) == 2:  # the two centred indicators are opposite: one column, twice
            W = np.empty((2, n))
            W[0] = np.sqrt(2.0) * (inv == 1)
        else:
            W = np.zeros((len(classes) + 1, n))
            W[inv, np.arange(n)] = 1.0
    elif target == "regression":
        y = check_y(y, n, caller="hsic_test")
        sd = y.std()
        if sd == 0:
            W = np.zeros((2, n))
            W[1] = 1.0
            return W, target
        first = min(FACTOR_FIRST_ROWS, max(2, TARGET_FIRST_BYTES // (8 * n)), TARGET_MAX_RANK, n)
        buf = np.empty((first, n) if 8 * first * n >= NUMPY_BUFFER_BYTES else (0, 0))  # numpy's: huge pages
        W, _ = pivoted_cholesky_rbf1d_rows((y - y.mean()) / sd, 1.0, TARGET_TOL, min(n, TARGET_MAX_RANK), 1, first,
                                            buf)
    else:
        raise ValueError(
            f"hsic_test: target must be 'auto', 'binary', 'multiclass' or 'regression'; got {target!r}."
        )
    ZT = W[:-1]
    ZT -= ZT.mean(axis=1, keepdims=True)  # W is this function's own: centred in place, no second r x n array
    W[-1] = 1.0
    return W, target


def _offdiag_mean_sq(F, diag_sq, n):
    """:math:`\\frac{1}{n(n-1)} \\sum_{j \\ne k} (HKH)_{jk}^2` from the Frobenius
    norm and the squared diagonal."""
    return np.maximum(F - diag_sq, 0.0) / (n * (n - 1.0))


def _rbf_moments(X, g, W, method, stats):
    """(numerator, tr(HKH), A_K) of every RBF column (``W``: the target factor's rows and the ones)."""
    n = X.shape[0]
    # R2, Q of the dense columns through the transform come with the sums, on their boxes
    num, tr, _, R2, Q = rbf_sums_traces(X, g, W[:-1], method, RTOL, stats, rows=VAR_RTOL, weights=W)
    rest = np.isnan(R2)
    if rest.any():
        fgt = method == "fgt" or (method == "auto" and n >= FGT_MIN_SAMPLES)
        R2[rest], Q[rest] = rbf_row_moments(X if rest.all() else X[:, np.flatnonzero(rest)], g[rest], fgt=fgt,
                                            rtol=VAR_RTOL)
    S = n * (n - tr)
    F = Q - 2.0 * R2 / n + S * S / n**2
    c = 1.0 + S / n**2
    diag_sq = n * c * c - 4.0 * c * S / n + 4.0 * R2 / n**2
    return num, tr, _offdiag_mean_sq(F, diag_sq, n)


def _linear_moments(X, ZT):
    """(numerator, tr(HKH), A_K) of every linear column (closed form)."""
    n, d = X.shape
    num, tr = linear_parts(X, ZT.T)
    mean, _ = column_moments(X)
    m4 = np.empty(d)
    for i0 in range(0, d, 64):
        B = X[:, i0:i0 + 64]
        B = B.toarray() if sp.issparse(B) else B
        m4[i0:i0 + 64] = ((B - mean[i0:i0 + 64]) ** 4).sum(axis=0)
    return num, tr, _offdiag_mean_sq(tr * tr, m4, n)


def hsic_test(X, y, *, kernel: str = "rbf", gamma=None, method: str = "auto", target: str = "auto"):
    r"""Per-feature HSIC independence tests: statistics and p-values.

    Tests, for every column :math:`x_i` separately, the hypothesis that
    :math:`x_i` and :math:`y` are independent, by the biased HSIC statistic
    and the gamma approximation of its null distribution (module
    docstring: the kernels, the null moments and the error bounds).
    Works as the ``score_func`` of scikit-learn's ``SelectKBest``,
    ``SelectFdr`` and ``SelectFpr``.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        Data; at least 6 rows (the null variance needs ``n > 5``).
    y : array-like of shape (n_samples,)
        Class labels (delta kernel) or a real response (Gaussian kernel with
        :math:`\gamma_y = 1/\operatorname{var}(y)`).
    kernel : {"rbf", "linear"}, default="rbf"
        Kernel on each feature.
    gamma : None, "scale", float or array of shape (n_features,)
        RBF bandwidths; ``None``: :math:`1/\operatorname{var}(x_i)` per feature,
        the rule of :func:`numkfs.kernels.alignment.feature_alignments`.
    method : {"auto", "exact", "fgt"}, default="auto"
        Kernel sums by the exact pair loop (O(n²) per feature) or the fast
        Gauss transform (O(n) per feature, relative error bound 1e-10 on
        the statistic's sums, 1e-6 on the null variance's); ``"auto"``: the
        transform from 1,024 rows on.
    target : {"auto", "binary", "multiclass", "regression"}, default="auto"
        How ``y`` is read; ``"auto"`` follows
        :func:`numkfs.model_selection.target_type`.

    Returns
    -------
    statistics : ndarray of shape (n_features,)
        :math:`\mathrm{HSIC}_b = \operatorname{tr}(KHLH)/n^2` (0 for a constant feature).
    pvalues : ndarray of shape (n_features,)
        Upper-tail probabilities of the gamma approximation (1 for a
        constant feature or target).

    References
    ----------
    A. Gretton, K. Fukumizu, C. H. Teo, L. Song, B. Schölkopf and A. J.
    Smola, "A kernel statistical test of independence", NIPS 20, 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import hsic_test
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = np.cos(2 * X[:, 0]) + 0.1 * rng.normal(size=300)
    >>> stat, p = hsic_test(X, y)
    >>> bool(p[0] < 1e-6), bool(p[1] > 1e-3)
    (True, True)

    As a scikit-learn score function:

    >>> from sklearn.feature_selection import SelectFdr
    >>> SelectFdr(hsic_test, alpha=0.01).fit(X, y).get_support().tolist()
    [True, False, False]
    """
    if kernel not in ("rbf", "linear"):
        raise ValueError(f"hsic_test: kernel must be 'rbf' or 'linear'; got {kernel!r}.")
    check_alignment_method(method, RTOL, caller="hsic_test")
    X = check_X(X, caller="hsic_test", accept_sparse=True, min_samples=6, copy=False)
    n, d = X.shape
    y = np.asarray(y)
    check_real(y, "y", "hsic_test")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(
            f"hsic_test: y must be 1-D with one value per row of X: X has {n} rows, y has shape {y.shape}."
        )
    W, _ = _target_factor(y, target, n)
    ZT = W[:-1]
    if sp.issparse(X):
        stats, var = None, None
        const = (X.max(axis=0).toarray() == X.min(axis=0).toarray()).ravel()
    else:
        stats = dense_stats(X)  # one pass: means, variances, constant columns
        var, const = stats[1], stats[2] == 0.0
    if kernel == "linear":
        num, tr, A_K = _linear_moments(X, ZT)
    else:
        g = resolve_gamma_given_var(X, gamma, var)
        num, tr, A_K = _rbf_moments(X, g, W, method, stats)
    const = const | (tr <= 0)
    ZtZ, rows4 = rows_gram(ZT)  # no BLAS after the parallel sums (rows_gram)
    tr_L = float(np.trace(ZtZ))
    A_L = float(_offdiag_mean_sq(np.sum(ZtZ * ZtZ), rows4, n))
    stat = np.where(const, 0.0, np.maximum(num, 0.0) / n**2)
    mu = tr * tr_L / (n * (n - 1.0) ** 2)
    var0 = 2.0 * (n - 4.0) * (n - 5.0) / (n * (n - 1.0) * (n - 2.0) * (n - 3.0)) * A_K * A_L
    ok = ~const & (mu > 0) & (var0 > 0)
    p = np.ones(d)
    if ok.any():
        from scipy.special import gammaincc

        shape = mu[ok] ** 2 / var0[ok]
        scale = var0[ok] / mu[ok]
        p[ok] = gammaincc(shape, stat[ok] / scale)
    return stat, p


def hsic_pvalues(X, y, **params):
    """The p-values of :func:`hsic_test` alone.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        Data.
    y : array-like of shape (n_samples,)
        Class labels or a real response.
    **params
        ``kernel``, ``gamma``, ``method``, ``target`` of :func:`hsic_test`.

    Returns
    -------
    pvalues : ndarray of shape (n_features,)

    References
    ----------
    Gretton et al. (NIPS 2008), as in :func:`hsic_test`.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import hsic_pvalues
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(200, 2)); y = (X[:, 1] ** 2 > 0.5).astype(int)
    >>> p = hsic_pvalues(X, y)
    >>> bool(p[1] < 1e-6 < p[0])
    True
    """
    return hsic_test(X, y, **params)[1]
