"""Numba kernels of the exact per-feature pair sums of the alignments.

Grouping of a column's entries by value, then
``S1 = sum_jk <z_j, z_k> e_jk`` and ``S2 = sum_jk c_j c_k e_jk`` over the
pairs of entries or groups, for dense and CSC columns (the algorithm of
``method="exact"`` in :mod:`numkfs.kernels.alignment`).
"""
from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange, serial_twin
from .fastexp import _f64_bits, fast_exp2_neg

#: Columns with at most this many distinct values are grouped in one pass.
SMALL_DISTINCT = 16
#: Number of leading values probed for ties before sorting a column.
TIE_PROBE = 128
#: Columns shorter than this are never sorted: the O(n²) pair loop is
#: cheaper than argsort + grouping there (measured on Arcene, n = 100).
SORT_MIN_SAMPLES = 512


# ----------------------------------------------------------------------------
# Numba kernels: grouping


@jit
def _hash_buckets(t, m):
    """A lower bound on the number of distinct values among the first ``m``
    entries: the number of the 64 hash buckets they occupy (equal values,
    -0.0 and 0.0 included, share a bucket).  Branch-free and vectorised,
    several times cheaper than a failed :func:`_group_small` scan."""
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
# exact zeros, so the loop vectorises without a remainder branch.

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
    ``unit`` says all counts are 1; callers pass ``unit`` and ``probe`` as
    ``np.bool_``/``np.int64`` values, not literals, so that one signature
    serves every caller): the pair sums run over groups of equal
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
def _entry_scratch(m, r, groups):
    """``(vals, zs, cs, buf, gid)``: the scratch of ``_entry_sums`` and
    ``_fgt_entry_sums`` for ``m`` entries, ``r`` target rows and at most
    ``groups`` groups of equal values (``m`` when any count may occur; the
    HSIC test's fused pass groups only columns of at most ``cap`` values,
    and a smaller block keeps the worker's arrays in memory its malloc
    reuses: ``numkfs.kernels._hsic_fgt``)."""
    vals = np.empty(groups + PAD)
    zs = np.empty((r, groups + PAD))
    cs = np.empty(groups + PAD)
    buf = np.empty(groups + PAD)
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
        vals, zs, cs, buf, gid = _entry_scratch(n, r, n)
        for q in range(w):
            s1, s2, u = _entry_sums(T[q], ZT, cnt, n, np.bool_(True), cap, probe, vals, zs, cs, gid, buf)
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
        vals, zs, cs, buf, gid = _entry_scratch(m, r, m)
        s1, s2, u = _entry_sums(t, zt, cnt, m, np.bool_(False), cap, np.int64(0), vals, zs, cs, gid, buf)
        S1[i] = s1
        S2[i] = s2
        U[i] = u


_rbf_sums_csc_serial = serial_twin(_rbf_sums_csc)
