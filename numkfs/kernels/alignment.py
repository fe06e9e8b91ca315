r"""Per-feature base kernels and their centred, trace-normalised target alignments.

One base kernel per feature :math:`i` (lp-KTA, NMMKL, COSSO):

* ``"rbf"``: :math:`k_i(x, x') = \exp(-\gamma_i (x_i - x'_i)^2)`;
* ``"linear"``: :math:`k_i(x, x') = x_i x'_i`.

Each Gram matrix is centred and trace-normalised,
:math:`\tilde K_i = H K_i H / \operatorname{tr}(H K_i H)`, :math:`H = I - 11^\top/n`,
and the alignment with the target is

.. math::

    a_i = \langle \tilde K_i, Z Z^\top \rangle_F
        = \frac{\sum_{j,k} \langle z_j, z_k\rangle K_{i,jk}}
               {n - \frac1n \sum_{j,k} K_{i,jk}}
    \qquad (\text{rbf: } \operatorname{tr} K_i = n),

where :math:`Z = H Y` is the centred target (:func:`alignment_target`):

* binary classification: :math:`Y = y \in \{-1, +1\}^n`, so
  :math:`a_i = y^\top \tilde K_i y` exactly as in the lp-KTA paper;
* multiclass (``c`` classes): :math:`Y` is the one-hot ``n x c`` matrix and
  :math:`Y Y^\top` (1 for a pair of the same class, 0 otherwise) replaces
  :math:`y y^\top`, so :math:`a_i = \operatorname{tr}(Y^\top \tilde K_i Y)`.
  With two classes this is half the binary alignment;
* regression: :math:`Y = y` (real), centred; :math:`a_i` scales with
  :math:`\|y - \bar y\|^2` (so do sensible values of lp-KTA's λ's).

A constant feature has :math:`H K_i H = 0`; its alignment is defined as 0.

Bandwidth rule (rbf)
--------------------
``gamma=None`` (or ``"scale"``) uses :math:`\gamma_i = 1 / \operatorname{var}(x_i)`
per feature (scikit-learn's ``"scale"`` rule applied to the single-feature
column; 1 for a constant column), so every base kernel sees its feature in
standard units.  A float applies one γ to all features; an array of length
``n_features`` gives one per feature.

Algorithms
----------
``method="exact"`` (and ``"auto"`` below 1,024 rows): for each feature (a
Numba ``prange`` over features):

* at most 16 distinct values (binary, categorical, one-hot columns): values
  are grouped in one O(n u) pass (after an O(n) hash-bucket check that
  rejects most columns with more values at once) and the pair sums run over
  the :math:`u^2/2` pairs of groups, weighted by group counts and target
  sums;
* otherwise, if n >= 512 and a probe of the first 128 values finds a tie,
  the column is sorted and grouped (O(n log n + u²));
* otherwise, if at least two values are exactly 0 (sparse data stored
  dense), the zeros are merged into one weighted entry in an O(n) pass;
* and then the O(m²/2) loop over the m entries' pairs, vectorised, with
  the base-2 :func:`~numkfs.kernels.fastexp.fast_exp2_neg` on columns
  pre-scaled by :math:`\sqrt{\gamma_i \log_2 e}` (one rounding and an
  exact subtraction for the range reduction, a degree-9 polynomial, the
  power of 2 added to the exponent bits: relative error below 2e-14 per
  term; terms below 2**-1020 are replaced by 2**-1020, an absolute change
  below 9e-308 per pair).  Entry arrays are padded to a multiple of 8 with
  zero weights, so that no row of the loop ends in a scalar remainder.

``method="fgt"`` (and ``"auto"`` from :data:`FGT_MIN_SAMPLES` = 1,024
rows or entries per column, where it is faster on this machine even for
columns spread over hundreds of bandwidths): the sums
:math:`S(a) = \sum_{jk} a_j a_k e^{-\gamma_i (x_j - x_k)^2}` for the target
columns and for the counts (:math:`\operatorname{tr}(HK_iH) = n - S(1)/n`)
are computed by the one-dimensional fast Gauss transform of
:mod:`numkfs.kernels.fgt` in O(n p) per feature (no sort needed: a
counting sort into boxes of width :math:`0.5/\sqrt{\gamma_i}`; p = 19 at
the default ``rtol = 1e-10``), parallel over features, no n x n array.
Guarantee: for every feature and every weight vector :math:`a`,

.. math::

    |\hat S(a) - S(a)| \le \mathrm{rtol} \sum_{j,k} |a_j||a_k| e^{-\gamma_i (x_j - x_k)^2}

whatever the data (ties, outliers, γ), up to rounding of the order of
machine epsilon times the same sum.  For the counts (:math:`a = 1`) the
bound is relative to :math:`S(1)` itself; for the centred targets it is
relative to the sum with :math:`|z_j|`, so the error of a small alignment
(an irrelevant feature, where :math:`z^\top K_i z` cancels) is at most
``rtol`` times that larger sum over :math:`\operatorname{tr}(HK_iH)`.
Columns with at most 16 distinct values are still grouped and summed
exactly.  The trace :math:`n - S(1)/n` is therefore within
:math:`\mathrm{rtol}\, S(1)/n` of its value, a relative error of
``rtol`` times :math:`S(1)/(n \operatorname{tr})`: about 0.8 at
:math:`\gamma = 1/\operatorname{var}` on Gaussian data, at most
about :math:`128 n` for a column outside the small-spread case below (its points
cannot all be within a quarter of a bandwidth of each other).

Small spread and offsets (both methods).  Where the kernel is nearly
constant on a column, :math:`\gamma (\max x - \min x)^2 \le 1/16`
(:data:`SMALL_SPREAD`; a small γ, or a column of tiny spread), the trace
:math:`n - S(1)/n` and the numerator :math:`z^\top K z` (whose terms
cancel in the same way, :math:`1^\top z = 0`) lose the digits of
:math:`1 - \gamma \operatorname{var}`: at :math:`\gamma \operatorname{var}
= 10^{-12}` (n = 200) the pair loop kept two, the transform four.  Such a
column's sums are taken from its moments instead: :math:`\sum_{jk} w_j w_k
(1 - e^{-\gamma d_{jk}^2})` is a series in :math:`\gamma d^2 \le 1/16`
whose terms are products of the moments :math:`\sum_j w_j s_j^l` of the
centred, scaled column (eight terms, O(17 n) per column, to machine
precision; ``_small_spread_sums``).  A dense column whose mean exceeds its
standard deviation is centred before it is scaled (distances do not change),
so an offset costs no digits of its differences: a column
``1 + 1e-13 u`` kept three.  Sparse columns are neither (their implicit
zeros are kept as zeros).

``scipy.sparse`` input is handled column by column from CSC without
densifying: the implicit zeros form one group, so a binary column costs
O(nnz). The linear kernel is closed form,
:math:`a_i = \|x_{c,i}^\top Z\|^2 / \|x_{c,i}\|^2`, O(nnz) or O(n) per feature.

The per-feature kernels are never stored: :func:`combined_kernel` forms
:math:`\sum_{\eta_i > 0} \eta_i \tilde K_i` (and its cross version for test
points) directly.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from .._jit import jit, pjit, prange, serial_twin
from .._threads import parallel_or_serial
from .._validation import check_memory, check_X, check_y, target_type
from .fastexp import LOG2E, _f64_bits, fast_exp2_neg, fast_exp_kernel
from .fgt import DIRECT_MAX, FGT_H, _fgt_core, _fgt_work, _ring_size, fgt_order

__all__ = [
    "feature_alignments",
    "alignment_target",
    "resolve_gamma",
    "AlignmentDetails",
    "combined_kernel",
    "feature_kernel",
]

#: Columns with at most this many distinct values are grouped in one pass.
SMALL_DISTINCT = 16
#: Number of leading values probed for ties before sorting a column.
TIE_PROBE = 128
#: Columns shorter than this are never sorted: the O(n²) pair loop is
#: cheaper than argsort + grouping there (measured on Arcene, n = 100).
SORT_MIN_SAMPLES = 512
#: Most columns per parallel task in the dense kernels (work arrays allocated
#: once per block, contiguous reads of a block's values in each row).
FEATURE_BLOCK = 32
#: ``method="auto"`` uses the fast Gauss transform for columns with at least
#: this many entries (rows; non-zeros + 1 for sparse columns), the exact pair
#: loop below (crossover measured by ``benchmarks/lpkta_scale.py``).
FGT_MIN_SAMPLES = 1024
#: Largest feature-major buffer of a dense FGT task (values).
FGT_BLOCK_VALUES = 1 << 22


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


def _column_moments(X):
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


def _dense_stats(X):
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
    mean, var, spread = _dense_stats(X)
    return mean, var, spread == 0.0


def resolve_gamma(X, gamma=None) -> np.ndarray:
    r"""Per-feature RBF bandwidths :math:`\gamma_i` (see the module's bandwidth rule).

    ``None`` or ``"scale"``: :math:`1/\operatorname{var}(x_i)` (1 for a
    constant column); a positive float: the same for every feature; an
    array of ``n_features`` positive floats: as given.
    """
    return _resolve_gamma(X, gamma)


def _resolve_gamma(X, gamma=None, var=None):
    """:func:`resolve_gamma`, given the column variances when already known."""
    d = X.shape[1]
    if gamma is None or (isinstance(gamma, str) and gamma == "scale"):
        if var is None:
            _, var = _column_moments(X)
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


# ----------------------------------------------------------------------------
# Numba kernels: grouping


@jit
def _hash_buckets(t, m):
    """A lower bound on the number of distinct values among the first ``m``
    entries: the number of the 64 hash buckets they occupy (equal values,
    -0.0 and 0.0 included, share a bucket).  Branch-free and vectorised,
    about 4x cheaper than a failed :func:`_group_small` scan."""
    mask = np.uint64(0)
    for j in range(m):
        h = (np.uint64(_f64_bits(t[j] + 0.0)) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(58)
        mask |= np.uint64(1) << h
    k = 0
    while mask:
        mask &= mask - np.uint64(1)
        k += 1
    return k


@jit
def _group_small(t, cnt, m, cap, vals, cs, gid):
    """Group the first ``m`` entries by value in one pass (group of entry j
    in ``gid[j]``, values in ``vals``, summed counts in ``cs``); returns the
    number of groups, or -1 if there are more than ``cap`` (decided at once
    when more than ``cap`` hash buckets are occupied)."""
    if m > cap and _hash_buckets(t, m) > cap:
        return -1
    u = 0
    for j in range(m):
        v = t[j]
        g = -1
        for q in range(u):
            if vals[q] == v:
                g = q
                break
        if g < 0:
            if u == cap:
                return -1
            g = u
            vals[g] = v
            cs[g] = 0.0
            u += 1
        cs[g] += cnt[j]
        gid[j] = g
    return u


@jit
def _group_sorted(t, cnt, m, vals, cs, gid):
    """Sort the first ``m`` entries and group equal values (as :func:`_group_small`, no cap)."""
    order = np.argsort(t[:m])
    u = 0
    for idx in range(m):
        j = order[idx]
        v = t[j]
        if u == 0 or v != vals[u - 1]:
            vals[u] = v
            cs[u] = 0.0
            u += 1
        cs[u - 1] += cnt[j]
        gid[j] = u - 1
    return u


@jit
def _compress_zeros(t, ZT, m, vals, zs, cs):
    """Group only the exact zeros of the first ``m`` entries (unit counts):
    non-zeros keep their order, the zeros become one last group of count
    ``n_zeros``; values, target sums and counts go to ``vals``, ``zs``,
    ``cs``.  Returns the number of groups, or -1 (nothing written) when
    fewer than two entries are zero.  O(m r) and branch-free: zeros are the
    one value worth grouping without sorting (sparse data stored dense;
    Arcene's columns are 45 % zeros at the median)."""
    nz = 0
    for j in range(m):
        nz += t[j] == 0.0
    if nz < 2:
        return -1
    last = m - nz
    u = 0
    for j in range(m):
        v = t[j]
        vals[u] = v
        u += v != 0.0
    for q in range(ZT.shape[0]):
        zq = ZT[q]
        out = zs[q]
        u = 0
        s0 = 0.0
        for j in range(m):
            nzj = t[j] != 0.0
            out[u] = zq[j]
            s0 += 0.0 if nzj else zq[j]
            u += nzj
        out[last] = s0
    for j in range(last):
        cs[j] = 1.0
    vals[last] = 0.0
    cs[last] = nz
    return last + 1


@jit
def _gather_targets(ZT, gid, m, u, zs):
    """``zs[:, g] = Σ_{gid[j] = g} ZT[:, j]`` for the ``u`` groups."""
    for q in range(ZT.shape[0]):
        zq = ZT[q]
        out = zs[q]
        for g in range(u):
            out[g] = 0.0
        for j in range(m):
            out[gid[j]] += zq[j]


@jit
def _has_tie(t, m):
    """Whether two of the first ``m`` entries are equal.  By ``np.argsort``, as
    :func:`_group_sorted`: one sort for Numba to compile (each of ``np.sort``
    and ``np.argsort`` is a quicksort compiled on first use, about a second)."""
    order = np.argsort(t[:m])
    for q in range(m - 1):
        if t[order[q]] == t[order[q + 1]]:
            return True
    return False


# ----------------------------------------------------------------------------
# Numba kernels: pair sums  S1 = sum_jk <z_j, z_k> e_jk,  S2 = sum_jk c_j c_k e_jk
# (values t in base-2 units, e_jk = 2**-(t_j - t_k)², see _rbf_pair_sums)
#
# Every array holding entries is PAD longer than its entries, with counts and
# targets 0 (values finite) in the pad: each row's inner loop then runs over a
# multiple of PAD pairs with no scalar remainder, and the padded pairs add
# exact zeros.  Measured on n = 100 columns (Arcene): 1.2x faster.

#: Padding of the entry arrays (one AVX-512 vector of float64).
PAD = 8


@jit
def _zero_pad(vals, zs, cs, u):
    """Write the zero padding after ``u`` entries (see ``PAD``)."""
    for k in range(u, u + PAD):
        vals[k] = 0.0
        cs[k] = 0.0
        for q in range(zs.shape[0]):
            zs[q, k] = 0.0


@jit(fast=True)
def _pairs_weighted1(t, z, c, m):
    """Rank-1 target, entry counts ``c`` (the hot loop, vectorised over k)."""
    s1 = 0.0
    s2 = 0.0
    zz = 0.0
    cc = 0.0
    for j in range(m - 1):
        tj = t[j]
        a1 = 0.0
        a2 = 0.0
        for kk in range((m - j - 1 + PAD - 1) // PAD * PAD):
            k = j + 1 + kk
            dl = tj - t[k]
            e = fast_exp2_neg(dl * dl)
            a1 += z[k] * e
            a2 += c[k] * e
        s1 += z[j] * a1
        s2 += c[j] * a2
    for j in range(m):
        zz += z[j] * z[j]
        cc += c[j] * c[j]
    return zz + 2.0 * s1, cc + 2.0 * s2


@jit(fast=True)
def _pairs_rank(t, ZT, c, m, buf):
    """Target of rank r (multiclass): exps into ``buf`` once, then r dot products."""
    r = ZT.shape[0]
    s1 = 0.0
    s2 = 0.0
    for j in range(m - 1):
        tj = t[j]
        L = (m - j - 1 + PAD - 1) // PAD * PAD
        for kk in range(L):
            dl = tj - t[j + 1 + kk]
            buf[kk] = fast_exp2_neg(dl * dl)
        a2 = 0.0
        for kk in range(L):
            a2 += c[j + 1 + kk] * buf[kk]
        s2 += c[j] * a2
        for q in range(r):
            zq = ZT[q]
            a1 = 0.0
            for kk in range(L):
                a1 += zq[j + 1 + kk] * buf[kk]
            s1 += zq[j] * a1
    zz = 0.0
    cc = 0.0
    for j in range(m):
        cc += c[j] * c[j]
        for q in range(r):
            zz += ZT[q, j] * ZT[q, j]
    return zz + 2.0 * s1, cc + 2.0 * s2


@jit
def _pair_sums(t, ZT, c, m, buf):
    """(S1, S2) over ``m`` padded entries, rank-1 or rank-r target."""
    if ZT.shape[0] == 1:
        return _pairs_weighted1(t, ZT[0], c, m)
    return _pairs_rank(t, ZT, c, m, buf)


@jit
def _entry_sums(t, ZT, cnt, m, unit, cap, probe, vals, zs, cs, gid, buf):
    """(S1, S2, n_entries) for one feature given its ``m`` entries (values
    ``t``, target columns ``ZT``, counts ``cnt``, all padded, see ``PAD``;
    ``unit`` says all counts are 1): the pair sums run over groups of equal
    values when a column has at most ``cap`` values, ties among its first
    ``probe`` values (then sorted), or at least two exact zeros (unit counts;
    merged without sorting), else over the raw entries.  ``vals, zs, cs``
    (length m + PAD) and ``gid`` (length m) receive the groups, ``buf`` is scratch for rank-r
    targets."""
    u = _group_small(t, cnt, m, cap, vals, cs, gid)
    if u < 0 and (not unit or (probe > 1 and _has_tie(t, min(probe, m)))):
        u = _group_sorted(t, cnt, m, vals, cs, gid)
    if u >= 0:
        _gather_targets(ZT, gid, m, u, zs)
    elif unit:
        u = _compress_zeros(t, ZT, m, vals, zs, cs)
    if u < 0:
        s1, s2 = _pair_sums(t, ZT, cnt, m, buf)
        return s1, s2, m
    _zero_pad(vals, zs, cs, u)
    s1, s2 = _pair_sums(vals, zs, cs, u, buf)
    return s1, s2, u


@jit(inline=True)
def _entry_scratch(m, r):
    """``(vals, zs, cs, buf, gid)``: the scratch of ``_entry_sums`` and
    ``_fgt_entry_sums`` for ``m`` entries and ``r`` target rows."""
    vals = np.empty(m + PAD)
    zs = np.empty((r, m + PAD))
    cs = np.empty(m + PAD)
    buf = np.empty(m + PAD)
    gid = np.empty(m, dtype=np.int64)
    return vals, zs, cs, buf, gid


@jit(inline=True)
def _dense_block(X, shift, scale, b, nb):
    """``(T, cnt, i0, w)``: block ``b`` of ``nb`` of the columns of the
    C-ordered (n, d) ``X`` (columns ``i0`` to ``i0 + w - 1``, widths
    differing by at most one), shifted by ``shift`` and scaled by ``scale``
    into a padded feature-major ``T`` (see ``PAD``; contiguous reads of the
    block's values in each row), and the counts ``cnt`` (1 per row, 0 in
    the pad).  Distances do not change with the shift; subtracting a value
    near the column's (``_column_shift``) before scaling keeps the digits of
    its differences (a column ``1 + 1e-13 u`` scaled to unit spread would
    keep three)."""
    n, d = X.shape
    i0 = b * d // nb
    w = (b + 1) * d // nb - i0
    T = np.zeros((w, n + PAD))
    for k in range(n):
        for q in range(w):
            T[q, k] = (X[k, i0 + q] - shift[i0 + q]) * scale[i0 + q]
    cnt = np.ones(n + PAD)
    cnt[n:] = 0.0
    return T, cnt, i0, w


@pjit
def _rbf_sums_dense(X, shift, scale, ZT, cap, probe, nb, S1, S2, U):
    """Pair sums of every column of the C-ordered (n, d) ``X``, each scaled
    by ``scale`` (to base-2 units).  One parallel task per block of columns
    (``nb`` blocks whose widths differ by at most one): the task copies its
    columns, scaled, into a small feature-major buffer (contiguous reads of
    the block's values in each row), so no transposed copy of ``X`` is ever
    allocated."""
    n = X.shape[0]
    r = ZT.shape[0]
    for b in prange(nb):
        T, cnt, i0, w = _dense_block(X, shift, scale, b, nb)
        vals, zs, cs, buf, gid = _entry_scratch(n, r)
        for q in range(w):
            s1, s2, u = _entry_sums(T[q], ZT, cnt, n, True, cap, probe, vals, zs, cs, gid, buf)
            S1[i0 + q] = s1
            S2[i0 + q] = s2
            U[i0 + q] = u


_rbf_sums_dense_serial = serial_twin(_rbf_sums_dense)


@jit
def _target_totals(ZT, n):
    """Each target row of ``ZT`` summed over its ``n`` samples."""
    r = ZT.shape[0]
    ztot = np.zeros(r)
    for q in range(r):
        for j in range(n):
            ztot[q] += ZT[q, j]
    return ztot


@jit(inline=True)
def _csc_n_entries(indptr, n, i):
    """Entries of column ``i`` of a CSC matrix with ``n`` rows: its stored
    values, plus one for its implicit zeros if it has any."""
    nnz = indptr[i + 1] - indptr[i]
    return nnz + 1 if nnz < n else nnz


@jit(inline=True)
def _csc_column(indptr, indices, data, sc, ZT, ztot, n, i):
    """``(t, zt, cnt, m)``: the ``m`` entries of column ``i`` of a CSC
    matrix with ``n`` rows, padded (see ``PAD``): values ``t`` (the stored
    ones times ``sc``, then 0 for the implicit zeros if any), their target
    columns ``zt`` (the implicit zeros': ``ztot``, the totals of ``ZT``,
    minus the stored entries') and counts ``cnt`` (1 each, ``n - nnz`` for
    the implicit zeros).  Inlined (returns a tuple, see ``numkfs._jit.jit``)."""
    r = ZT.shape[0]
    lo = indptr[i]
    nnz = indptr[i + 1] - lo
    m = _csc_n_entries(indptr, n, i)
    t = np.zeros(m + PAD)
    zt = np.zeros((r, m + PAD))
    cnt = np.ones(m + PAD)
    cnt[m:] = 0.0
    for q in range(r):
        zsum = 0.0
        for k in range(nnz):
            zv = ZT[q, indices[lo + k]]
            zt[q, k] = zv
            zsum += zv
        if m > nnz:
            zt[q, nnz] = ztot[q] - zsum
    for k in range(nnz):
        t[k] = data[lo + k] * sc
    if m > nnz:
        t[nnz] = 0.0
        cnt[nnz] = n - nnz
    return t, zt, cnt, m


@pjit
def _rbf_sums_csc(indptr, indices, data, scale, ZT, n, cap, S1, S2, U):
    """Pair sums from a CSC matrix without densifying: the implicit zeros of
    a column are one entry with count ``n - nnz``."""
    d = indptr.shape[0] - 1
    r = ZT.shape[0]
    ztot = _target_totals(ZT, n)
    for i in prange(d):
        t, zt, cnt, m = _csc_column(indptr, indices, data, scale[i], ZT, ztot, n, i)
        vals, zs, cs, buf, gid = _entry_scratch(m, r)
        s1, s2, u = _entry_sums(t, zt, cnt, m, False, cap, 0, vals, zs, cs, gid, buf)
        S1[i] = s1
        S2[i] = s2
        U[i] = u


# ----------------------------------------------------------------------------
# Numba kernels: the same sums by the fast Gauss transform (numkfs.kernels.fgt)


@jit
def _fill_weights(ZT, cnt, m, W):
    """W = [ZT; cnt] over the first ``m`` entries (the FGT's weight vectors)."""
    r = ZT.shape[0]
    for q in range(r):
        for j in range(m):
            W[q, j] = ZT[q, j]
    for j in range(m):
        W[r, j] = cnt[j]


@jit
def _fgt_entry_sums(s, ZT, cnt, m, cap, fgt, vals, zs, cs, gid, buf, W, work, out):
    """(S1, S2, n_entries) for one feature of ``m`` entries in natural units
    ``s`` (padded as in ``_entry_sums``): a column with at most ``cap``
    distinct values is grouped and summed exactly over pairs of groups;
    otherwise the fast Gauss transform ``fgt = (h, p, delta, direct_max)``
    on the raw entries (``W``: R + 1 rows, the targets then the counts,
    filled by the caller; ``work`` from ``_fgt_work``)."""
    r = ZT.shape[0]
    u = _group_small(s, cnt, m, cap, vals, cs, gid)
    if u >= 0:
        _gather_targets(ZT, gid, m, u, zs)
        for g in range(u):
            vals[g] *= np.sqrt(LOG2E)  # base-2 units, as _pair_sums expects
        _zero_pad(vals, zs, cs, u)
        s1, s2 = _pair_sums(vals, zs, cs, u, buf)
        return s1, s2, u
    h, p, delta, direct_max = fgt
    sv, Wv, pw, bstart, bcent, cg, ring, owner, hk = work
    _fgt_core(s, W, m, h, p, delta, direct_max, sv, Wv, pw, bstart, bcent, cg, ring, owner, hk, out)
    s1 = 0.0
    for q in range(r):
        s1 += out[q]
    return s1, out[r], m


@pjit
def _fgt_sums_dense(X, shift, scale, ZT, cap, fgt, nring, nb, S1, S2, U):
    """``_rbf_sums_dense`` by the fast Gauss transform (``scale`` to natural
    units): ``nb`` tasks of consecutive columns, each copied into a
    feature-major buffer (one pass over the rows per block)."""
    n = X.shape[0]
    r = ZT.shape[0]
    p = fgt[1]
    for b in prange(nb):
        T, cnt, i0, w = _dense_block(X, shift, scale, b, nb)
        vals, zs, cs, buf, gid = _entry_scratch(n, r)
        W = np.empty((r + 1, n))
        _fill_weights(ZT, cnt, n, W)
        work = _fgt_work(n, r + 1, p, nring)
        out = np.empty(r + 1)
        for q in range(w):
            s1, s2, u = _fgt_entry_sums(T[q], ZT, cnt, n, cap, fgt, vals, zs, cs, gid, buf, W, work, out)
            S1[i0 + q] = s1
            S2[i0 + q] = s2
            U[i0 + q] = u


@pjit
def _fgt_sums_csc(indptr, indices, data, scale, scale2, ZT, n, cap, fgt, nring, min_fgt, S1, S2, U):
    """``_rbf_sums_csc`` with the fast Gauss transform for every column of
    at least ``min_fgt`` entries (``scale`` to natural units), the exact
    pair loop below (``scale2`` to base-2 units)."""
    d = indptr.shape[0] - 1
    r = ZT.shape[0]
    p = fgt[1]
    ztot = _target_totals(ZT, n)
    for i in prange(d):
        sc = scale[i] if _csc_n_entries(indptr, n, i) >= min_fgt else scale2[i]
        t, zt, cnt, m = _csc_column(indptr, indices, data, sc, ZT, ztot, n, i)
        vals, zs, cs, buf, gid = _entry_scratch(m, r)
        if m >= min_fgt:
            W = np.empty((r + 1, m))
            _fill_weights(zt, cnt, m, W)
            work = _fgt_work(m, r + 1, p, nring)
            out = np.empty(r + 1)
            s1, s2, u = _fgt_entry_sums(t, zt, cnt, m, cap, fgt, vals, zs, cs, gid, buf, W, work, out)
        else:
            s1, s2, u = _entry_sums(t, zt, cnt, m, False, cap, 0, vals, zs, cs, gid, buf)
        S1[i] = s1
        S2[i] = s2
        U[i] = u


# ----------------------------------------------------------------------------
# public API


@dataclass
class AlignmentDetails:
    """What :func:`feature_alignments` computed besides the alignments.

    Attributes
    ----------
    alignments : ndarray (d,)
    traces : ndarray (d,)
        :math:`\\operatorname{tr}(H K_i H)` (0 for a constant feature).
    gamma : ndarray (d,) or None
        Bandwidths used (rbf).
    n_groups : ndarray (d,) or None
        Distinct values found per feature (rbf; ``n`` when the pair loop ran
        on raw values).
    kind : str
        Target kind (binary, multiclass, regression).
    constant : ndarray of bool (d,)
    """

    alignments: np.ndarray
    traces: np.ndarray
    gamma: np.ndarray | None
    n_groups: np.ndarray | None
    kind: str
    constant: np.ndarray


#: The loops over blocks of columns run in their serial twins
#: (:func:`numkfs._jit.serial_twin`) below ``_threads.PARALLEL_MIN_ROWS *
#: SERIAL_ENTRIES_PER_ROW`` entries: ``_dense_moments`` on n d values (128,000),
#: ``_rbf_sums_dense`` on d n²/2 pairs of samples counted
#: SERIAL_PAIRS_PER_ENTRY to an entry (2 million pairs, about 2 ms of work).
#: Measured on 2 threads of a loaded 2-core machine: 200 x 50 (1 million
#: pairs) 0.6 ms serial and 1.5 ms parallel, 400 x 25 (2 million) 1.9 ms
#: both, 800 x 100 (32 million) 40 and 32 ms.  The serial forms compile in a
#: fraction of the parallel forms' time (first ``feature_alignments`` call:
#: 11.1 s -> 6.8 s of compile).
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


def _check_method(method, rtol, caller="feature_alignments"):
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


def _rbf_pair_sums(X, g, ZT, method="exact", rtol=1e-10, shift=None):
    """(S1, S2, n_entries) for every column of X (dense ndarray or CSC):
    ``method`` as in :func:`feature_alignments`; ``shift``: the dense
    columns' ``_column_shift`` if known."""
    n, d = X.shape
    S1 = np.empty(d)
    S2 = np.empty(d)
    U = np.empty(d, dtype=np.int64)
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
            _fgt_sums_csc(
                X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, nat, np.sqrt(g * LOG2E), ZT, n,
                SMALL_DISTINCT, fgt, nring, int(min_fgt), S1, S2, U,
            )
        else:
            # tasks of consecutive columns; a task's buffer at most FGT_BLOCK_VALUES values
            nt = numba.get_num_threads()
            nb = max(_n_blocks(d), -(-d * n // FGT_BLOCK_VALUES))
            nb = int(min(d, -(-nb // nt) * nt))
            _fgt_sums_dense(X, shift, nat, np.ascontiguousarray(ZT), SMALL_DISTINCT, fgt,
                            nring, nb, S1, S2, U)
        return S1, S2, U
    # base-2 units: exp(-g dl²) = 2**(-(sqrt(g log2 e) dl)²), see fast_exp2_neg
    sq = np.sqrt(g * LOG2E)
    if sp.issparse(X):
        X = sp.csc_matrix(X)
        _rbf_sums_csc(
            X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, sq, ZT, n,
            SMALL_DISTINCT, S1, S2, U,
        )
    else:
        probe = TIE_PROBE if n >= SORT_MIN_SAMPLES else 0
        ZTp = np.zeros((ZT.shape[0], n + PAD))  # zero targets in the pad (see PAD)
        ZTp[:, :n] = ZT
        loops = _column_loops(_rbf_sums_dense, _rbf_sums_dense_serial, d * n * n // 2 // SERIAL_PAIRS_PER_ENTRY)
        loops(X, shift, sq, ZTp, SMALL_DISTINCT, probe, _n_blocks(d), S1, S2, U)
    return S1, S2, U


def _column_shift(X, mean=None, var=None):
    """The value subtracted from each dense column before it is scaled
    (``_dense_block``): its mean where that exceeds its standard deviation
    (an offset would cost ``log10(|mean|/std)`` digits of every difference),
    else 0, so that columns of sparse data stored dense keep their exact
    zeros (grouped in one entry by ``_compress_zeros``)."""
    if mean is None:
        mean, var = _column_moments(X)
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


def _rbf_sums_traces(X, g, ZT, method="exact", rtol=1e-10, stats=None):
    """``(S1, tr, n_entries)`` for every column: ``_rbf_pair_sums`` with
    ``tr = n - S2/n``, except for dense columns within a quarter of a
    bandwidth, whose sums come from their moments (``_small_spread_sums``:
    there ``n - S2/n`` cancels, ``1 - γ var`` of the digits lost).
    ``stats``: ``(mean, var, spread)`` of a dense X if known."""
    n, d = X.shape
    if sp.issparse(X):
        S1, S2, U = _rbf_pair_sums(X, g, ZT, method, rtol)
        return S1, n - S2 / n, U
    X = np.ascontiguousarray(X, dtype=np.float64)
    if stats is None:
        mean, var, spread = _dense_stats(X)
    else:
        mean, var, spread = stats
    # spread = max |x - x_0| >= range / 2
    small = (g * (2.0 * spread) ** 2 <= SMALL_SPREAD) & (spread > 0)
    shift = _column_shift(X, mean, var)
    if not small.any():
        S1, S2, U = _rbf_pair_sums(X, g, ZT, method, rtol, shift)
        return S1, n - S2 / n, U
    S1 = np.empty(d)
    tr = np.empty(d)
    U = np.full(d, n, dtype=np.int64)
    S1[small], tr[small] = _small_spread_sums(X[:, small], g[small], mean[small], ZT.T)
    rest = ~small
    if rest.any():
        s1, s2, u = _rbf_pair_sums(X[:, rest], g[rest], ZT, method, rtol, shift[rest])
        S1[rest], tr[rest], U[rest] = s1, n - s2 / n, u
    return S1, tr, U


def _linear_parts(X, Z):
    """Numerators ||x_cᵀ Z||² and traces ||x_c||² of the linear kernels."""
    n = X.shape[0]
    mean, var = _column_moments(X)
    if sp.issparse(X):
        XtZ = np.asarray(X.T @ Z) - np.outer(mean, Z.sum(axis=0))
    else:
        XtZ = (X - mean).T @ Z
    return (XtZ**2).sum(axis=1), n * var


def feature_alignments(
    X,
    y,
    kernel: str = "rbf",
    gamma=None,
    *,
    target: str = "auto",
    return_details: bool = False,
    method: str = "auto",
    rtol: float = 1e-10,
):
    r"""Centred, trace-normalised alignment of every per-feature kernel with y.

    .. math::

        a_i = \frac{(Hy)^\top K_i (Hy)}{\operatorname{tr}(H K_i H)},
        \qquad K_{i,jk} = k_i(x_j, x_k)

    (multiclass: :math:`\operatorname{tr}(Y^\top H K_i H Y)/\operatorname{tr}(HK_iH)`
    with one-hot :math:`Y`; see the module docstring). ``method="exact"``:
    O(n² d) for dense continuous data, O(nnz) per binary sparse column;
    ``method="fgt"``: O(n d), within ``rtol`` (below).

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Class labels (binary or multiclass) or a real response.
    kernel : {"rbf", "linear"}
    gamma : None, "scale", float or array of shape (n_features,)
        RBF bandwidths; default :math:`\gamma_i = 1/\operatorname{var}(x_i)`.
    target : {"auto", "binary", "multiclass", "regression"}
    return_details : bool
        Also return an :class:`AlignmentDetails` (traces, bandwidths).
    method : {"auto", "exact", "fgt"}
        RBF pair sums by the exact pair loop (O(n²) per feature) or by the
        fast Gauss transform (:mod:`numkfs.kernels.fgt`, O(n) per feature);
        ``"auto"``: the transform for columns of at least
        :data:`FGT_MIN_SAMPLES` (1,024) rows or sparse entries, where it
        is faster.  Ignored by the linear kernel (closed form).
    rtol : float in [1e-14, 1)
        Error bound of the fast Gauss transform: each pair sum
        :math:`\sum_{jk} a_j a_k k_{jk}` is within ``rtol`` times
        :math:`\sum_{jk} |a_j||a_k| k_{jk}` (module docstring).

    Returns
    -------
    a : ndarray of shape (n_features,)
        0 for a constant feature.
    details : AlignmentDetails, only if ``return_details``

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.alignment import feature_alignments
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = np.sign(X[:, 0])
    >>> a = feature_alignments(X, y)
    >>> int(np.argmax(a))
    0
    """
    if kernel not in ("rbf", "linear"):
        raise ValueError(f"feature_alignments: kernel must be 'rbf' or 'linear'; got {kernel!r}.")
    X = _as_float(X)
    n, d = X.shape
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(
            f"feature_alignments: X and y have inconsistent numbers of samples: X has {n}, y has {y.shape[0]}."
        )
    _check_method(method, rtol)
    Z, kind, _ = alignment_target(y, target)
    stats = None
    if sp.issparse(X):
        var = None
        const = _constant_mask(X)
    else:
        stats = _dense_stats(X)  # one pass for all
        var, const = stats[1], stats[2] == 0.0
    if kernel == "linear":
        num, tr = _linear_parts(X, Z)
        g = None
        U = None
    else:
        g = _resolve_gamma(X, gamma, var)
        num, tr, U = _rbf_sums_traces(X, g, np.ascontiguousarray(Z.T), method, rtol, stats)
    tr = np.where(const, 0.0, tr)
    ok = tr > 0
    a = np.zeros(d)
    a[ok] = num[ok] / tr[ok]
    if return_details:
        return a, AlignmentDetails(a, tr, g, U, kind, const)
    return a


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
        mean = _column_moments(X)[0] if center else np.zeros(d)
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
        return Xs.shape[0] * _column_moments(Xs)[1]
    n = X.shape[0]
    _, tr, _ = _rbf_sums_traces(Xs, g[sel], np.zeros((1, n)))
    return np.where(_constant_mask(Xs), 0.0, tr)
