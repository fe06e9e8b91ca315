r"""Per-feature RBF row-sum moments for the HSIC null distribution.

For one feature in natural units :math:`s_j = \sqrt{\gamma}\, x_j`, with
:math:`K_{jk} = e^{-(s_j - s_k)^2}` and the row sums :math:`r_j = \sum_k K_{jk}`,
the HSIC test (:mod:`numkfs.hsic`) needs, besides the alignment sums of
:mod:`numkfs.kernels.alignment`,

.. math::

    R_2 = \sum_j r_j^2 \qquad\text{and}\qquad Q = \sum_{jk} K_{jk}^2
    = \sum_{jk} e^{-2 (s_j - s_k)^2}.

Both are computed per feature:

* by the exact pair loop (O(n²), pairs j < k once) below
  :data:`~numkfs.kernels.alignment.FGT_MIN_SAMPLES` rows;
* by the fast Gauss transform of :mod:`numkfs.kernels.fgt` above (O(n p)),
  in one pass per feature: one boxing of the points and one set of box
  moments serve both sums.  The row sums come from the boxes and Hermite
  expansion evaluated at every point: box :math:`C` (centre :math:`c_C`) collects the local
  coefficients :math:`L^C_m = \sum_B \sum_{n < p - m} h_{m+n}(c_C - c_B) M^B_n`
  from the boxes within the cut-off δ (the moments :math:`M^B_n` and Hermite
  functions :math:`h_k` of :mod:`numkfs.kernels.fgt`), and
  :math:`r_j = \sum_{m<p} L^C_m (c_C - s_j)^m / m!` for :math:`j \in C`.
  :math:`Q` is the transform's quadratic form with unit weights at the
  points :math:`\sqrt2\, s`, on the same boxes: there they have width
  :math:`\sqrt2\, h`, centres :math:`\sqrt2\, c_C` and moments
  :math:`2^{k/2} M^C_k` (the row sums' moments, computed to the larger of
  the two orders), so its order and cut-off are those of
  :func:`~numkfs.kernels.fgt.fgt_order` for the box width :math:`\sqrt2\, h`
  (:data:`Q_BOX`) and the same tolerance, and it costs no pass over the
  points of its own.  Pairs of boxes with few points are summed directly.
  Each pair :math:`(j, k)` of a row sum is then off by at most the per-pair bound of
  :mod:`numkfs.kernels.fgt`: :math:`\kappa R_p(h) e^{-D^2/2}` when expanded,
  :math:`e^{-(s_j - s_k)^2}` when skipped (centres more than δ apart),
  :math:`D \ge |s_j - s_k| - h` the distance of the box centres; :math:`Q`
  is within ``rtol`` times itself (the bound of :mod:`numkfs.kernels.fgt`
  at box width :math:`\sqrt2\, h`, unit weights).

The public entry point is :func:`rbf_row_moments`.
"""
from __future__ import annotations

import numba
import numpy as np

from .._jit import jit, pjit, prange, serial_twin
from .._threads import parallel_or_serial
from .fastexp import fast_exp_kernel
from .fgt import (DIRECT_MAX, FGT_H, _boxes, _direct_pair, _direct_self, _expand_pair, _fgt_work, _hermite, _moments,
                  fgt_order)

__all__ = ["rbf_row_moments"]


@jit(fast=True)
def _exact_row_moments(s):
    """(R2, Q) of one column in natural units by the pair loop."""
    n = s.shape[0]
    r = np.ones(n)
    q = 0.0
    for j in range(n):
        sj = s[j]
        acc = 0.0
        qj = 0.0  # per row: n-term sums, rounding O(n eps)
        for k in range(j + 1, n):
            dl = sj - s[k]
            e = fast_exp_kernel(-(dl * dl))
            acc += e
            r[k] += e
            qj += e * e
        r[j] += acc
        q += qj
    r2 = 0.0
    for j in range(n):
        r2 += r[j] * r[j]
    return r2, n + 2.0 * q


@jit
def _box_moments(sv, Wv, bstart, bcent, nocc, PM, pw):
    """Every box's moments of the weight row ``Wv`` (1, m) to order ``PM``
    (nocc, 1, PM): the row sums need the boxes on both sides of each box."""
    M = np.empty((nocc, 1, PM))
    for C in range(nocc):
        _moments(sv, Wv, bstart[C], bstart[C + 1], bcent[C], PM, pw, M[C])
    return M


@jit(fast=True)
def _fgt_row_sums(s, ones, h, P, delta, Pq, deltaq, direct_max, sv, Wv, pw, bstart, bcent, cnt, loc, hk, hq, s2, rs):
    """Row sums ``rs`` (in the boxes' order, ``sv``) of one column by the
    fast Gauss transform and, from the same boxes and moments, its
    :math:`Q = \\sum_{jk} e^{-2 (s_j - s_k)^2}` (returned; module
    docstring); ``ones`` (1, m) unit weights, work arrays from
    ``_fgt_work``, ``hq`` (Pq), ``s2`` (m) scratch."""
    m = s.shape[0]
    nocc = _boxes(s, ones, m, h, sv, Wv, bstart, bcent, cnt)
    M = _box_moments(sv, Wv, bstart, bcent, nocc, max(P, Pq), pw)
    return _boxed_row_sums(sv, Wv, m, nocc, bstart, bcent, M, P, delta, Pq, deltaq, direct_max, pw, loc, hk, hq,
                           s2, rs)


#: Points per chunk of the row sums' Horner loop (the chunk's values and
#: partial sums stay in L1 over the orders).  The loop runs over slices of
#: the chunk indexed from 0: indexed by the box's own positions (``range(c0,
#: c1)``, which Numba cannot prove non-negative) every access carried a
#: negative-index wraparound and the loop runs scalar (the values are the
#: same bit for bit either way).
HORNER_CHUNK = 256


@jit(fast=True)
def _boxed_row_sums(sv, Wv, m, nocc, bstart, bcent, M, P, delta, Pq, deltaq, direct_max, pw, loc, hk, hq, s2, rs):
    """The row sums and ``Q`` of :func:`_fgt_row_sums` on boxes already
    made (``sv``, ``bstart``, ``bcent``: ``nocc`` boxes of the ``m`` sorted
    values; ``Wv`` (1, m) their unit weights; ``M`` (nocc, 1, at least
    ``max(P, Pq)``) their moments, scaled in place for ``Q``): the HSIC
    test takes them on the boxes of its statistic's sums
    (:mod:`numkfs.kernels._hsic_fgt`)."""
    for j in range(m):
        rs[j] = 0.0
    for C in range(nocc):
        c0 = bstart[C]
        c1 = bstart[C + 1]
        nC = c1 - c0
        for k in range(P):
            loc[k] = 0.0
        expanded = False
        # boxes on both sides within the cut-off, C itself included
        B = C
        while B >= 0 and bcent[C] - bcent[B] <= delta:
            B -= 1
        B += 1
        while B < nocc and bcent[B] - bcent[C] <= delta:
            b0 = bstart[B]
            b1 = bstart[B + 1]
            if (b1 - b0) * nC <= direct_max:
                for j in range(c0, c1):
                    sj = sv[j]
                    a = 0.0
                    for k in range(b0, b1):
                        dl = sj - sv[k]
                        a += fast_exp_kernel(-(dl * dl))
                    rs[j] += a
            else:
                _hermite(bcent[C] - bcent[B], P, hk)
                MB = M[B, 0]
                for mm in range(P):
                    acc = 0.0
                    for nn in range(P - mm):
                        acc += hk[mm + nn] * MB[nn]
                    loc[mm] += acc
                expanded = True
            B += 1
        if expanded:
            f = 1.0
            for k in range(1, P):  # loc[k] / k!: a plain Horner loop below (no division per point)
                f /= k
                loc[k] *= f
            cC = bcent[C]
            last = loc[P - 1]
            for a in range(c0, c1, HORNER_CHUNK):  # Horner with the points inner (vectorised; pw is free here)
                b = min(a + HORNER_CHUNK, c1)
                L = b - a
                pc = pw[a:b]  # slices indexed from 0: no negative-index wraparound, so the loops vectorise
                sc = sv[a:b]
                rc = rs[a:b]
                for j in range(L):
                    pc[j] = last
                for k in range(P - 2, -1, -1):
                    lk = loc[k]
                    for j in range(L):
                        pc[j] = lk + pc[j] * (cC - sc[j])
                for j in range(L):
                    rc[j] += pc[j]
    # Q: the quadratic form with unit weights at the points sqrt(2) s, on the same
    # boxes (width sqrt(2) h there, centres sqrt(2) c): moments 2^(k/2) M_k, no new pass
    r2 = np.sqrt(2.0)
    for j in range(m):
        s2[j] = r2 * sv[j]
    for C in range(nocc):
        f = 1.0
        for k in range(Pq):
            M[C, 0, k] *= f
            f *= r2
    out = np.zeros(1)
    dq = deltaq / r2  # the cut-off between centres, in the units of s
    for C in range(nocc):
        c0 = bstart[C]
        c1 = bstart[C + 1]
        nC = c1 - c0
        if nC * nC <= direct_max:
            _direct_self(s2, Wv, c0, c1, out, pw)
        else:
            _hermite(0.0, Pq, hq)
            _expand_pair(M[C], M[C], hq, Pq, out, 1.0)
        B = C - 1
        while B >= 0 and bcent[C] - bcent[B] <= dq:
            b0 = bstart[B]
            b1 = bstart[B + 1]
            if (b1 - b0) * nC <= direct_max:
                _direct_pair(s2, Wv, b0, b1, c0, c1, out, 2.0, pw)
            else:
                _hermite(r2 * (bcent[B] - bcent[C]), Pq, hq)
                _expand_pair(M[B], M[C], hq, Pq, out, 2.0)
            B -= 1
    return out[0]


@jit(inline=True)
def _centred(T, mean, root, i, s):
    """Row ``i`` of ``T`` in natural units, into ``s``."""
    for j in range(T.shape[1]):
        s[j] = (T[i, j] - mean[i]) * root[i]


@pjit
def _exact_block(T, mean, root, ntask, R2, Q):
    """(R2, Q) of every row of ``T`` (features x samples) by the pair loop, in
    natural units ``(T[i] - mean[i]) * root[i]`` (centred: distances do not
    change, and an offset costs no digits); ``ntask`` tasks of consecutive rows."""
    k, n = T.shape
    for b in prange(ntask):
        s = np.empty(n)
        for i in range(b * k // ntask, (b + 1) * k // ntask):
            _centred(T, mean, root, i, s)
            R2[i], Q[i] = _exact_row_moments(s)


@pjit
def _fgt_block(T, mean, root, h, P, delta, Pq, deltaq, direct_max, ntask, R2, Q):
    """:func:`_exact_block` by the fast Gauss transform: each task's work
    arrays allocated once."""
    k, n = T.shape
    for b in prange(ntask):
        s = np.empty(n)
        s2 = np.empty(n)
        rs = np.empty(n)
        ones = np.ones((1, n))
        loc = np.empty(P)
        hq = np.empty(Pq)
        one = np.int64(1)  # not the literal 1: _fgt_work compiles for one signature
        sv, Wv, pw, bstart, bcent, cnt, ring, owner, hk, _ = _fgt_work(n, one, P, one, np.int64(0), one,
                                                                       np.empty((0, 0)))
        for i in range(b * k // ntask, (b + 1) * k // ntask):
            _centred(T, mean, root, i, s)
            Q[i] = _fgt_row_sums(s, ones, h, P, delta, Pq, deltaq, direct_max, sv, Wv, pw, bstart, bcent, cnt,
                                 loc, hk, hq, s2, rs)
            r2 = 0.0
            for j in range(n):
                r2 += rs[j] * rs[j]
            R2[i] = r2


_exact_block_serial = serial_twin(_exact_block)
_fgt_block_serial = serial_twin(_fgt_block)


@jit
def _feature_major(X, i0, i1):
    """Columns ``i0`` to ``i1 - 1`` of the C-ordered ``X``, transposed (C
    order): the values of ``np.ascontiguousarray(X[:, i0:i1].T)`` in one
    pass over the rows, faster than numpy's strided copy."""
    n = X.shape[0]
    w = i1 - i0
    T = np.empty((w, n))
    for k in range(n):
        for q in range(w):
            T[q, k] = X[k, i0 + q]
    return T


#: Width of the row sums' boxes at the points :math:`\sqrt2\, s` of ``Q``'s kernel.
Q_BOX = float(np.sqrt(2.0) * FGT_H)

#: Columns per block copied feature-major before the parallel loop.
ROW_BLOCK = 8


def rbf_row_moments(X, gamma, *, fgt: bool, rtol: float = 1e-10):
    r"""``(R2, Q)`` of every column's RBF kernel (module docstring).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Finite data.
    gamma : ndarray of shape (n_features,)
        Positive bandwidths.
    fgt : bool
        Fast Gauss transform (O(n) per feature) rather than the pair loop.
    rtol : float
        Tolerance of the transform (:func:`numkfs.kernels.fgt.fgt_order`).

    Returns
    -------
    R2 : ndarray of shape (n_features,)
        :math:`\sum_j r_j^2`.
    Q : ndarray of shape (n_features,)
        :math:`\sum_{jk} K_{jk}^2`.
    """
    import scipy.sparse as sp

    n, d = X.shape
    P, delta = fgt_order(float(rtol))
    Pq, deltaq = fgt_order(float(rtol), Q_BOX)
    R2 = np.empty(d)
    Q = np.empty(d)
    root = np.sqrt(np.asarray(gamma, dtype=np.float64))
    if not sp.issparse(X):
        X = np.ascontiguousarray(X, dtype=np.float64)  # no copy for checked data
    for i0 in range(0, d, ROW_BLOCK):
        i1 = min(d, i0 + ROW_BLOCK)
        if sp.issparse(X):
            B = np.ascontiguousarray(X[:, i0:i1].toarray(), dtype=np.float64)
            T = _feature_major(B, 0, i1 - i0)
        else:
            T = _feature_major(X, i0, i1)  # one pass: feature-major
        ntask = int(min(i1 - i0, numba.get_num_threads()))
        rows = n if ntask > 1 else 0  # one task (one column, or one thread): the serial twin
        if fgt:
            run = parallel_or_serial(_fgt_block, _fgt_block_serial, rows)
            run(T, T.mean(axis=1), root[i0:i1], float(FGT_H), int(P), float(delta), int(Pq), float(deltaq),
                int(DIRECT_MAX), ntask, R2[i0:i1], Q[i0:i1])
        else:
            run = parallel_or_serial(_exact_block, _exact_block_serial, rows)
            run(T, T.mean(axis=1), root[i0:i1], ntask, R2[i0:i1], Q[i0:i1])
    return R2, Q
