r"""The Numba kernel of the dense columns' sums by the fast Gauss transform:
the alignments' (:mod:`numkfs.kernels.alignment`) and, in the same pass,
the HSIC test's row moments (:mod:`numkfs.hsic`).

For each column, the statistic's sums (the alignments' sums with the
target factor's r rows and the counts as weight rows,
:mod:`numkfs.kernels._alignment_fgt`) and the null variance's row moments
:math:`R_2 = \sum_j r_j^2` and :math:`Q = \sum_{jk} K_{jk}^2`
(:mod:`numkfs.kernels.rowsums`) are taken on the same boxes: the column is
copied, scaled and boxed once, and the row sums' box moments are those of
the counts row at the variance's orders (at most the statistic's), so the
second pass over the points (its own copy, boxing and moments: a sixth of
the test at 2 x 10^5 x 10) is gone: the counts row's moments are kept as
the statistic's sums take them (``keep`` of
:func:`numkfs.kernels.fgt._fgt_core`).  The row sums and ``Q`` keep the
orders, cut-offs and error bounds of :mod:`numkfs.kernels.rowsums` at the
variance's tolerance; only the boxes' origin moves (the statistic's column
offset rather than the column mean), so the results differ from the
separate pass within those bounds, not bit for bit.

A column with at most ``SMALL_DISTINCT`` distinct values, whose statistic's
sums are taken exactly over its groups, gets :math:`R_2` and :math:`Q`
exactly over the same groups (O(u²), u the number of groups).
"""
from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange, serial_twin
from ._alignment_exact import _dense_block, _entry_scratch
from ._alignment_fgt import _fgt_entry_sums
from .fastexp import LOG2E
from .fgt import _fgt_work, _moments
from .rowsums import _box_moments, _boxed_row_sums

#: Boxes whose counts moments the statistic's sums keep for the row sums
#: (more boxes, from far outliers: the row sums take their own moments).
KEEP_BOXES = 4096
#: Bytes from which the HSIC test's largest buffers (the target factor's,
#: the workers' boxed weights) are numpy's rather than Numba's: numpy asks
#: the kernel for huge pages, and a buffer that large is mapped afresh at
#: each call (glibc returns it, or the heap past it, to the system), its
#: pages faulted in again; smaller buffers stay Numba's, whose heaps keep
#: them between calls.
NUMPY_BUFFER_BYTES = 1 << 24


@jit
def _grouped_row_moments(vals, cs, u):
    """``(R2, Q)`` of a column of ``u`` groups: values ``vals`` in base-2
    units (``_pair_sums``'s), counts ``cs``; exact, O(u²)."""
    r2 = 0.0
    q = 0.0
    for g in range(u):
        rg = 0.0
        for k in range(u):
            d = vals[g] - vals[k]
            e = np.exp(-(d * d) / LOG2E)  # exp(-γ dx²): d² = γ dx² log2(e)
            rg += cs[k] * e
            q += cs[g] * cs[k] * e * e
        r2 += cs[g] * rg * rg
    return r2, q


@jit
def _n_boxes(bstart, m):
    """The number of boxes ``_fgt_core`` left in ``bstart`` (the first start at ``m``)."""
    C = 0
    while bstart[C] < m:
        C += 1
    return C


@pjit
def _fgt_hsic_dense(X, shift, scale, ZT, W, cap, fgt, nring, rows, nb, nw, Wvs, S1, S2, U, R2, Q):
    """The dense columns' sums by the fast Gauss transform, for the
    alignments and the HSIC test: ``_rbf_sums_dense``'s ``S1``, ``S2``,
    ``U`` (``scale`` to natural units) and each column's ``R2``, ``Q``
    (module docstring) on the same boxes.  ``nb`` blocks of consecutive
    columns, each copied into a feature-major buffer (one pass over the
    rows per block), taken by ``nw`` workers (worker ``k``: blocks ``k, k +
    nw, ...``), each allocating its scratch once.  ``W``: the weight rows,
    the targets ``ZT`` (a view of its first rows) then the counts (ones).
    ``rows = (P, delta, Pq, deltaq)``: the row sums' and ``Q``'s orders and
    cut-offs (:func:`numkfs.kernels.rowsums.rbf_row_moments`), ``max(P,
    Pq)`` at most the statistic's order; ``(0, 0.0, 0, 0.0)``: the sums
    only, ``R2`` and ``Q`` left as they are (the alignments: one kernel
    and one signature for both callers).  ``Wvs`` (nw, r + 1, n): each
    worker's boxed weights, from numpy (``NUMPY_BUFFER_BYTES``), or (nw, 0,
    0): the workers allocate their own."""
    n = X.shape[0]
    r = ZT.shape[0]
    p = fgt[1]
    direct_max = fgt[3]
    Pr, dr, Pq, dq = rows
    PM = max(Pr, Pq)
    moments = PM > 0
    for k in prange(nw):
        vals, zs, cs, buf, gid = _entry_scratch(n, r, cap)  # at most cap groups: a small block (see there)
        wv = Wvs[k] if Wvs.shape[2] == n else np.empty((0, 0))
        nkeep = np.int64(KEEP_BOXES) if moments else np.int64(0)
        work = _fgt_work(n, r + 1, p, nring, nkeep, max(PM, np.int64(1)), wv)
        out = np.empty(r + 1)
        loc = np.empty(Pr)
        hk = np.empty(Pr)
        hq = np.empty(Pq)
        s2 = np.empty(n)
        rs = np.empty(n)
        sv, Wv, pw, bstart, bcent = work[0], work[1], work[2], work[3], work[4]
        ones = Wv[r:r + 1]  # the counts row, in the boxes' order
        for b in range(k, nb, nw):
            T, cnt, i0, w = _dense_block(X, shift, scale, b, nb)
            for q in range(w):
                s1, s2q, u = _fgt_entry_sums(T[q], ZT, cnt, n, cap, fgt, vals, zs, cs, gid, buf, W, work, out)
                S1[i0 + q] = s1
                S2[i0 + q] = s2q
                U[i0 + q] = u
                if not moments:
                    continue
                if u <= cap:  # grouped (u groups; the transform's columns give u = n > cap)
                    R2[i0 + q], Q[i0 + q] = _grouped_row_moments(vals, cs, u)
                    continue
                nocc = _n_boxes(bstart, n)
                if nocc > KEEP_BOXES:  # far outliers: more boxes than kept
                    M = _box_moments(sv, ones, bstart, bcent, nocc, PM, pw)
                else:
                    M = work[9][:nocc]
                    for C in range(nocc):
                        if np.isnan(M[C, 0, 0]):  # summed directly only: not yet taken
                            _moments(sv, ones, bstart[C], bstart[C + 1], bcent[C], PM, pw, M[C])
                Q[i0 + q] = _boxed_row_sums(sv, ones, n, nocc, bstart, bcent, M, Pr, dr, Pq, dq, direct_max, pw,
                                            loc, hk, hq, s2, rs)
                acc = 0.0
                for j in range(n):
                    acc += rs[j] * rs[j]
                R2[i0 + q] = acc


# the serial twin for small problems (numkfs._threads.parallel_or_serial, chosen in _alignment_sums)
_fgt_hsic_dense_serial = serial_twin(_fgt_hsic_dense)
