"""Numba kernels of the per-feature pair sums of the alignments by the fast
Gauss transform (:mod:`numkfs.kernels.fgt`; ``method="fgt"`` in
:mod:`numkfs.kernels.alignment`): one column's sums and the sparse
columns' loop; the dense columns' loop is
:func:`numkfs.kernels._hsic_fgt._fgt_hsic_dense`, shared with the HSIC
test.
"""
from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange, serial_twin
from ._alignment_exact import (
    _csc_column,
    _csc_n_entries,
    _entry_scratch,
    _entry_sums,
    _gather_targets,
    _group_small,
    _pair_sums,
    _target_totals,
    _zero_pad,
)
from .fastexp import LOG2E
from .fgt import _fgt_core, _fgt_work

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
    sv, Wv, pw, bstart, bcent, cg, ring, owner, hk, keep = work
    _fgt_core(s, W, m, h, p, delta, direct_max, sv, Wv, pw, bstart, bcent, cg, ring, owner, hk, out, keep)
    s1 = 0.0
    for q in range(r):
        s1 += out[q]
    return s1, out[r], m


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
        vals, zs, cs, buf, gid = _entry_scratch(m, r, m)
        if m >= min_fgt:
            W = np.empty((r + 1, m))
            _fill_weights(zt, cnt, m, W)
            work = _fgt_work(m, r + 1, p, nring, np.int64(0), np.int64(1), np.empty((0, 0)))
            out = np.empty(r + 1)
            s1, s2, u = _fgt_entry_sums(t, zt, cnt, m, cap, fgt, vals, zs, cs, gid, buf, W, work, out)
        else:
            s1, s2, u = _entry_sums(t, zt, cnt, m, np.bool_(False), cap, np.int64(0), vals, zs, cs, gid, buf)
        S1[i] = s1
        S2[i] = s2
        U[i] = u


# the serial twin for small problems (numkfs._threads.parallel_or_serial, chosen in _alignment_sums)
_fgt_sums_csc_serial = serial_twin(_fgt_sums_csc)
