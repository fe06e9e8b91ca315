r"""One-dimensional fast Gauss transform for the per-feature alignment sums.

For one feature, scaled to natural units :math:`s_j = \sqrt{\gamma}\, x_j`,
the alignments need quadratic forms

.. math::

    S(a) = \sum_{j,k} a_j a_k\, e^{-(s_j - s_k)^2}

for a few weight vectors :math:`a` (the centred target columns and the
counts, see :mod:`numkfs.kernels.alignment`).  The exact pair loop costs
O(n²); this module evaluates them in O(n p) (Greengard & Strain, 1991), p
the truncation order below.

Algorithm
---------
1. The values are binned into boxes of width :data:`FGT_H` (in natural
   units): on the grid ``lo + b h`` by a counting sort (O(n)) when the grid
   has at most ``2n + 64`` cells, otherwise (far outliers) by sorting and
   opening a box at the first value not in the current one.  Every value
   lies within :math:`h/2` of its box centre and centres are at least
   :math:`h` apart.  Repeated values need no grouping: they only add to the
   same moments.
2. Box :math:`B` (centre :math:`c_B`) gets the moments
   :math:`M^B_m = \sum_{j \in B} a_j (s_j - c_B)^m / m!`, :math:`m < p`.
3. With :math:`D = c_B - c_C` and :math:`h_k(D) = H_k(D)\, e^{-D^2}`
   (Hermite functions, by their three-term recurrence), the Taylor
   expansion of :math:`e^{-(D + u - v)^2}` in :math:`u - v` gives

   .. math::

       \sum_{j \in B,\, k \in C} a_j a_k e^{-(s_j - s_k)^2}
       \approx \sum_{m + n < p} (-1)^m h_{m+n}(D)\, M^B_m M^C_n ,

   O(p²) per pair of boxes.  A pair whose centres are more than
   :math:`\delta` apart is skipped; a pair with few points
   (:math:`n_B n_C \le` :data:`DIRECT_MAX`) is summed directly, exactly.
   Boxes are visited in order with the moments of the last
   :math:`\lfloor\delta/h\rfloor + 2` boxes in a ring buffer: memory O(n),
   never n x n.

Error bound
-----------
By Cramér's inequality :math:`|H_k(x)| e^{-x^2/2} \le \kappa\, 2^{k/2} \sqrt{k!}`
(:math:`\kappa = 1.086435`), a truncated pair is off by at most
:math:`\kappa\, e^{-D^2/2} R_p(h)`, :math:`R_p(h) = \sum_{k \ge p} (\sqrt2 h)^k/\sqrt{k!}`,
times :math:`|a_j a_k|`; a skipped pair by :math:`e^{-(|D| - h)^2}`.
Summing over boxes (:math:`|A_B||A_C| \le (A_B^2 + A_C^2)/2`, centres
:math:`\ge h` apart) and comparing with the pairs inside each box (each
:math:`\ge e^{-h^2}`):

.. math::

    |\hat S(a) - S(a)| \le \varepsilon(p, \delta) \sum_{j,k} |a_j| |a_k| e^{-(s_j - s_k)^2},
    \qquad
    \varepsilon = e^{h^2}\Big(\kappa\, \theta(h) R_p(h)
                  + 2 \sum_{i \ge 0} e^{-(\delta - h + i h)^2}\Big),

:math:`\theta(h) = \sum_{o \in \mathbb Z} e^{-(o h)^2/2}`.  :func:`fgt_order`
picks the smallest ``p`` and δ with each half of ε at most ``rtol / 2``
(``h = 0.5``, ``rtol = 1e-10``: ``p = 19``, ``δ = 5.47``).  The bound holds
for every data set, whatever n, γ, ties or outliers; floating-point rounding
(of order machine epsilon times the same right-hand side) comes on top.

References
----------
L. Greengard and J. Strain, "The fast Gauss transform", SIAM J. Sci. Stat.
Comput. 12(1), 79-94, 1991.

C. Yang, R. Duraiswami, N. A. Gumerov and L. Davis, "Improved fast Gauss
transform and efficient kernel density estimation", ICCV 2003.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .._jit import jit
from .fastexp import fast_exp_kernel

__all__ = ["fgt_order", "fgt_error_bound", "fgt_quadratic_forms", "FGT_H"]

#: Box width in natural units (:math:`\sqrt\gamma\,x`); measured fastest of
#: 0.35, 0.5, 0.7 for n = 10⁴ ... 10⁶.
FGT_H = 0.5
#: A pair of boxes with at most this many point pairs is summed directly.
DIRECT_MAX = 32
#: Cramér's constant.
_KAPPA = 1.086435
#: Largest truncation order (reached only below rtol = 1e-15 or so).
MAX_ORDER = 60
#: Smallest rtol accepted: rounding of the sums is of this order.
MIN_RTOL = 1e-14


def _log_tail(p, h):
    """log R_p(h) = log sum_{k>=p} (sqrt2 h)^k / sqrt(k!) (terms decay fast)."""
    lr = math.log(math.sqrt(2.0) * h)
    terms = [k * lr - 0.5 * math.lgamma(k + 1.0) for k in range(p, p + 400)]
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


def _theta(h):
    return 1.0 + 2.0 * sum(math.exp(-((o * h) ** 2) / 2.0) for o in range(1, int(40.0 / h) + 2))


def _cut_term(delta, h):
    return 2.0 * sum(math.exp(-((delta - h + i * h) ** 2)) for i in range(int(40.0 / h) + 2))


def fgt_error_bound(p: int, delta: float, h: float = FGT_H) -> float:
    r"""The relative bound ε(p, δ) of the module docstring.

    Parameters
    ----------
    p : int
        Truncation order (terms :math:`m + n < p` kept).
    delta : float
        Cut-off distance between box centres (natural units).
    h : float
        Box width.

    Returns
    -------
    float
        :math:`\varepsilon` such that
        :math:`|\hat S(a) - S(a)| \le \varepsilon \sum_{jk} |a_j||a_k| k_{jk}`.
    """
    trunc = _KAPPA * _theta(h) * math.exp(_log_tail(int(p), h))
    return math.exp(h * h) * (trunc + _cut_term(float(delta), h))


@lru_cache(maxsize=64)
def fgt_order(rtol: float = 1e-10, h: float = FGT_H):
    """Smallest truncation order ``p`` and cut-off ``delta`` with
    :func:`fgt_error_bound` ``<= rtol`` (each half at most ``rtol / 2``).

    Parameters
    ----------
    rtol : float
        Relative tolerance, at least ``1e-14``.
    h : float
        Box width.

    Returns
    -------
    p : int
    delta : float
    """
    rtol = float(rtol)
    if not (np.isfinite(rtol) and MIN_RTOL <= rtol < 1.0):
        raise ValueError(f"rtol must be in [{MIN_RTOL:g}, 1); got {rtol!r}.")
    eh = math.exp(h * h)
    logc = math.log(_KAPPA * _theta(h) * eh)
    p = 1
    while logc + _log_tail(p, h) > math.log(rtol / 2.0):
        p += 1
        if p > MAX_ORDER:
            raise ValueError(f"rtol={rtol!r} needs a truncation order above {MAX_ORDER}.")
    # smallest delta on a 1/64 grid with the cut-off term <= rtol / 2
    delta = h
    while eh * _cut_term(delta, h) > rtol / 2.0:
        delta += 1.0 / 64.0
    return p, delta


# ----------------------------------------------------------------------------
# Numba kernels


@jit
def _cell(sj, lo, inv, nbox):
    """The grid cell of ``sj`` (the last cell holds the top edge)."""
    b = int((sj - lo) * inv)
    return nbox - 1 if b >= nbox else b


@jit
def _boxes_grid(s, W, m, h, lo, nbox, sv, Wv, bstart, bcent, cnt):
    """Counting sort of the first ``m`` entries into the grid cells
    ``[lo + b h, lo + (b+1) h)``; returns the number of occupied cells.
    ``cnt`` has at least ``nbox + 1 + m`` entries: the cells' counts, then
    each entry's position in the boxes' order.  The values go to their
    positions in the pass that finds them, the weight rows one row per pass
    by those positions: no cell is recomputed and no cursor is read back."""
    R = W.shape[0]
    inv = 1.0 / h
    for b in range(nbox + 1):
        cnt[b] = 0
    for j in range(m):
        cnt[_cell(s[j], lo, inv, nbox) + 1] += 1
    for b in range(nbox):
        cnt[b + 1] += cnt[b]
    # cnt[b] is now the start of cell b; occupied cells become boxes in order
    nocc = 0
    for b in range(nbox):
        if cnt[b + 1] > cnt[b]:
            bstart[nocc] = cnt[b]
            bcent[nocc] = lo + (b + 0.5) * h
            nocc += 1
    bstart[nocc] = m
    pos = cnt[nbox + 1:nbox + 1 + m]
    for j in range(m):
        b = _cell(s[j], lo, inv, nbox)
        q = cnt[b]
        cnt[b] = q + 1
        sv[q] = s[j]
        pos[j] = q
    for r in range(R):
        w = W[r]
        o = Wv[r]
        for j in range(m):
            o[pos[j]] = w[j]
    return nocc


@jit
def _boxes_sorted(s, W, m, h, sv, Wv, bstart, bcent):
    """Sort the first ``m`` entries; a box opens at the first value at least
    ``h`` above the current box's first value.  Returns the number of boxes."""
    R = W.shape[0]
    order = np.argsort(s[:m])
    nocc = 0
    first = 0.0
    for i in range(m):
        j = order[i]
        v = s[j]
        if i == 0 or v >= first + h:
            if nocc > 0:
                bcent[nocc - 1] = first + 0.5 * h
            bstart[nocc] = i
            nocc += 1
            first = v
        sv[i] = v
        for r in range(R):
            Wv[r, i] = W[r, j]
    bcent[nocc - 1] = first + 0.5 * h
    bstart[nocc] = m
    return nocc


@jit
def _boxes(s, W, m, h, sv, Wv, bstart, bcent, cnt):
    """The first ``m > 0`` entries into boxes (step 1 of the module
    docstring): the grid's counting sort when it has fewer than
    ``len(cnt) - m - 2`` cells, else by sorting.  Returns the number of boxes."""
    lo = s[0]
    hi = s[0]
    for j in range(m):
        v = s[j]
        lo = v if v < lo else lo
        hi = v if v > hi else hi
    span = (hi - lo) / h
    if span < cnt.shape[0] - m - 2:
        return _boxes_grid(s, W, m, h, lo, int(span) + 1, sv, Wv, bstart, bcent, cnt)
    return _boxes_sorted(s, W, m, h, sv, Wv, bstart, bcent)


#: Points per chunk of the moment loops of one target row and the counts
#: (the chunk stays in L1 over the p orders).
MOMENT_CHUNK = 256
#: Points per chunk of the moment loops of three or more weight rows: the
#: chunk's powers of every order (P x chunk) stay in L1 (19 x 64 x 8 bytes
#: = 9.7 KB, where 256 points' 39 KB spill to L2).
MOMENT_CHUNK_ROWS = 64


@jit(fast=True)
def _moments(sv, Wv, j0, j1, c, P, pw, M):
    """M[r, k] = sum_{j0 <= j < j1} Wv[r, j] (sv[j] - c)^k / k!  (k < P), by
    chunks of ``MOMENT_CHUNK`` points (``pw``: scratch of that length).
    Three or more weight rows: by chunks of ``MOMENT_CHUNK_ROWS`` points,
    the chunk's powers of every order first (P x chunk, in L1), then tiles
    of four rows by three orders (12 accumulators, 7 loads per 12 products,
    where four rows per order take 5 per 4), each moment summed in the same order whatever the tile.  The
    orders left over (P mod 3) go alone over the four rows; the rows left
    over (R mod 4) by two rows by three orders and one row by four orders
    (5 loads per 6 products, 5 per 4, where one row by one order took 2
    per product)."""
    R = Wv.shape[0]
    for r in range(R):
        for k in range(P):
            M[r, k] = 0.0
    if R == 2:  # one target column and the counts: one fused pass per order
        for a in range(j0, j1, MOMENT_CHUNK):
            b = min(a + MOMENT_CHUNK, j1)
            L = b - a
            s = sv[a:b]
            for j in range(L):
                pw[j] = 1.0
            w0 = Wv[0, a:b]
            w1 = Wv[1, a:b]
            for k in range(P):
                f = 1.0 / (k + 1)
                a0 = 0.0
                a1 = 0.0
                for j in range(L):
                    q = pw[j]
                    a0 += w0[j] * q
                    a1 += w1[j] * q
                    pw[j] = q * ((s[j] - c) * f)
                M[0, k] += a0
                M[1, k] += a1
        return
    Pw = np.empty((P, MOMENT_CHUNK_ROWS))
    for a in range(j0, j1, MOMENT_CHUNK_ROWS):
        b = min(a + MOMENT_CHUNK_ROWS, j1)
        L = b - a
        s = sv[a:b]
        for j in range(L):
            Pw[0, j] = 1.0
        for k in range(1, P):
            f = 1.0 / k
            for j in range(L):
                Pw[k, j] = Pw[k - 1, j] * ((s[j] - c) * f)
        r0 = 0
        while r0 + 4 <= R:
            w0 = Wv[r0, a:b]
            w1 = Wv[r0 + 1, a:b]
            w2 = Wv[r0 + 2, a:b]
            w3 = Wv[r0 + 3, a:b]
            k = 0
            while k + 3 <= P:
                p0 = Pw[k]
                p1 = Pw[k + 1]
                p2 = Pw[k + 2]
                a00 = 0.0
                a01 = 0.0
                a02 = 0.0
                a10 = 0.0
                a11 = 0.0
                a12 = 0.0
                a20 = 0.0
                a21 = 0.0
                a22 = 0.0
                a30 = 0.0
                a31 = 0.0
                a32 = 0.0
                for j in range(L):
                    q0 = p0[j]
                    q1 = p1[j]
                    q2 = p2[j]
                    x0 = w0[j]
                    x1 = w1[j]
                    x2 = w2[j]
                    x3 = w3[j]
                    a00 += x0 * q0
                    a01 += x0 * q1
                    a02 += x0 * q2
                    a10 += x1 * q0
                    a11 += x1 * q1
                    a12 += x1 * q2
                    a20 += x2 * q0
                    a21 += x2 * q1
                    a22 += x2 * q2
                    a30 += x3 * q0
                    a31 += x3 * q1
                    a32 += x3 * q2
                M[r0, k] += a00
                M[r0, k + 1] += a01
                M[r0, k + 2] += a02
                M[r0 + 1, k] += a10
                M[r0 + 1, k + 1] += a11
                M[r0 + 1, k + 2] += a12
                M[r0 + 2, k] += a20
                M[r0 + 2, k + 1] += a21
                M[r0 + 2, k + 2] += a22
                M[r0 + 3, k] += a30
                M[r0 + 3, k + 1] += a31
                M[r0 + 3, k + 2] += a32
                k += 3
            for kk in range(k, P):  # the orders left over (P mod 3), each alone over the four rows
                p0 = Pw[kk]
                a00 = 0.0
                a10 = 0.0
                a20 = 0.0
                a30 = 0.0
                for j in range(L):
                    q0 = p0[j]
                    a00 += w0[j] * q0
                    a10 += w1[j] * q0
                    a20 += w2[j] * q0
                    a30 += w3[j] * q0
                M[r0, kk] += a00
                M[r0 + 1, kk] += a10
                M[r0 + 2, kk] += a20
                M[r0 + 3, kk] += a30
            r0 += 4
        if R - r0 >= 2:  # two rows left over: by three orders
            w0 = Wv[r0, a:b]
            w1 = Wv[r0 + 1, a:b]
            k = 0
            while k + 3 <= P:
                p0 = Pw[k]
                p1 = Pw[k + 1]
                p2 = Pw[k + 2]
                a00 = 0.0
                a01 = 0.0
                a02 = 0.0
                a10 = 0.0
                a11 = 0.0
                a12 = 0.0
                for j in range(L):
                    q0 = p0[j]
                    q1 = p1[j]
                    q2 = p2[j]
                    a00 += w0[j] * q0
                    a01 += w0[j] * q1
                    a02 += w0[j] * q2
                    a10 += w1[j] * q0
                    a11 += w1[j] * q1
                    a12 += w1[j] * q2
                M[r0, k] += a00
                M[r0, k + 1] += a01
                M[r0, k + 2] += a02
                M[r0 + 1, k] += a10
                M[r0 + 1, k + 1] += a11
                M[r0 + 1, k + 2] += a12
                k += 3
            for kk in range(k, P):
                p0 = Pw[kk]
                a00 = 0.0
                a10 = 0.0
                for j in range(L):
                    a00 += w0[j] * p0[j]
                    a10 += w1[j] * p0[j]
                M[r0, kk] += a00
                M[r0 + 1, kk] += a10
            r0 += 2
        if R - r0 == 1:  # one row left over: by four orders
            w0 = Wv[r0, a:b]
            k = 0
            while k + 4 <= P:
                p0 = Pw[k]
                p1 = Pw[k + 1]
                p2 = Pw[k + 2]
                p3 = Pw[k + 3]
                a0 = 0.0
                a1 = 0.0
                a2 = 0.0
                a3 = 0.0
                for j in range(L):
                    x = w0[j]
                    a0 += x * p0[j]
                    a1 += x * p1[j]
                    a2 += x * p2[j]
                    a3 += x * p3[j]
                M[r0, k] += a0
                M[r0, k + 1] += a1
                M[r0, k + 2] += a2
                M[r0, k + 3] += a3
                k += 4
            for kk in range(k, P):
                p0 = Pw[kk]
                a0 = 0.0
                for j in range(L):
                    a0 += w0[j] * p0[j]
                M[r0, kk] += a0


@jit
def _hermite(D, P, hk):
    """hk[k] = H_k(D) exp(-D²), k < P (three-term recurrence, stable upwards)."""
    hk[0] = math.exp(-D * D)
    if P > 1:
        hk[1] = 2.0 * D * hk[0]
    for k in range(1, P - 1):
        hk[k + 1] = 2.0 * D * hk[k] - 2.0 * k * hk[k - 1]


@jit(fast=True)
def _expand_pair(MB, MC, hk, P, out, factor):
    """out[r] += factor * sum_{m+n<P} (-1)^m hk[m+n] MB[r, m] MC[r, n].
    Rows by tiles of four (four independent sums over ``n`` where one row
    would take one, a chain of dependent additions of at most P terms)."""
    R = MB.shape[0]
    r0 = 0
    while r0 + 4 <= R:
        c0 = MC[r0]
        c1 = MC[r0 + 1]
        c2 = MC[r0 + 2]
        c3 = MC[r0 + 3]
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        sign = 1.0
        for mm in range(P):
            l0 = 0.0
            l1 = 0.0
            l2 = 0.0
            l3 = 0.0
            hs = hk[mm:P]
            for nn in range(P - mm):
                h = hs[nn]
                l0 += h * c0[nn]
                l1 += h * c1[nn]
                l2 += h * c2[nn]
                l3 += h * c3[nn]
            a0 += sign * MB[r0, mm] * l0
            a1 += sign * MB[r0 + 1, mm] * l1
            a2 += sign * MB[r0 + 2, mm] * l2
            a3 += sign * MB[r0 + 3, mm] * l3
            sign = -sign
        out[r0] += factor * a0
        out[r0 + 1] += factor * a1
        out[r0 + 2] += factor * a2
        out[r0 + 3] += factor * a3
        r0 += 4
    for r in range(r0, R):
        acc = 0.0
        sign = 1.0
        for mm in range(P):
            lm = 0.0
            for nn in range(P - mm):
                lm += hk[mm + nn] * MC[r, nn]
            acc += sign * MB[r, mm] * lm
            sign = -sign
        out[r] += factor * acc


@jit(fast=True)
def _direct_pair(sv, Wv, b0, b1, c0, c1, out, factor, ebuf):
    """out[r] += factor * sum_{b0<=j<b1, c0<=k<c1} Wv[r,j] Wv[r,k] exp(-(sv_j - sv_k)²)
    (each exponential once, into ``ebuf``)."""
    R = Wv.shape[0]
    L = c1 - c0
    for j in range(b0, b1):
        sj = sv[j]
        for kk in range(L):
            dl = sj - sv[c0 + kk]
            ebuf[kk] = fast_exp_kernel(-(dl * dl))
        for r in range(R):
            w = Wv[r]
            a = 0.0
            for kk in range(L):
                a += w[c0 + kk] * ebuf[kk]
            out[r] += factor * w[j] * a


@jit(fast=True)
def _direct_self(sv, Wv, c0, c1, out, ebuf):
    """out[r] += sum_{c0<=j,k<c1} Wv[r,j] Wv[r,k] exp(-(sv_j - sv_k)²) (pairs j < k once)."""
    R = Wv.shape[0]
    for j in range(c0, c1):
        sj = sv[j]
        L = c1 - j - 1
        for kk in range(L):
            dl = sj - sv[j + 1 + kk]
            ebuf[kk] = fast_exp_kernel(-(dl * dl))
        for r in range(R):
            w = Wv[r]
            a = 0.0
            for kk in range(L):
                a += w[j + 1 + kk] * ebuf[kk]
            out[r] += w[j] * (w[j] + 2.0 * a)


@jit
def _keep_last(MB, C, keep):
    """``keep[C, 0] = MB[-1, :Pk]`` if ``C < len(keep)`` (:func:`_fgt_core`)."""
    if C < keep.shape[0]:
        R = MB.shape[0]
        for k in range(keep.shape[2]):
            keep[C, 0, k] = MB[R - 1, k]


@jit
def _fgt_core(s, W, m, h, P, delta, direct_max, sv, Wv, pw, bstart, bcent, cnt, ring, owner, hk, out, keep):
    """out[r] = sum_jk W[r,j] W[r,k] exp(-(s_j - s_k)²) over the first ``m``
    entries (see the module docstring); returns the number of boxes (their
    values, weights, starts and centres stay in ``sv``, ``Wv``, ``bstart``,
    ``bcent`` for a caller that takes more sums on them).  Work arrays: ``sv`` (m), ``Wv``
    (R, m), ``pw`` (m), ``bstart`` (m + 1), ``bcent`` (m), ``cnt``
    (``len(cnt) - m - 1`` grid cells at most and the entries' positions,
    else the sorted boxes), ``ring``
    (nring, R, P), ``owner`` (nring), ``hk`` (P).  ``keep`` (K, 1, Pk),
    ``Pk <= P``: the first ``Pk`` moments of the last weight row of each
    box ``C < K`` whose moments the sums take (the others' ``keep[C, 0,
    0]`` NaN), for a caller that needs every box's moments of that row (the
    HSIC test's row sums, :mod:`numkfs.kernels._hsic_fgt`); K = 0: none."""
    R = W.shape[0]
    for r in range(R):
        out[r] = 0.0
    if m == 0:
        return 0
    nocc = _boxes(s, W, m, h, sv, Wv, bstart, bcent, cnt)
    for C in range(min(nocc, keep.shape[0])):
        keep[C, 0, 0] = np.nan
    nring = ring.shape[0]
    for q in range(nring):
        owner[q] = -1
    for C in range(nocc):
        c0 = bstart[C]
        c1 = bstart[C + 1]
        nC = c1 - c0
        slotC = C % nring
        # the box with itself
        if nC * nC <= direct_max:
            _direct_self(sv, Wv, c0, c1, out, pw)
        else:
            if owner[slotC] != C:
                _moments(sv, Wv, c0, c1, bcent[C], P, pw, ring[slotC])
                _keep_last(ring[slotC], C, keep)
                owner[slotC] = C
            _hermite(0.0, P, hk)
            _expand_pair(ring[slotC], ring[slotC], hk, P, out, 1.0)
        # with the earlier boxes within the cut-off (both orders: factor 2)
        B = C - 1
        while B >= 0 and bcent[C] - bcent[B] <= delta:
            b0 = bstart[B]
            b1 = bstart[B + 1]
            if (b1 - b0) * nC <= direct_max:
                _direct_pair(sv, Wv, b0, b1, c0, c1, out, 2.0, pw)
            else:
                slotB = B % nring
                if owner[slotC] != C:
                    _moments(sv, Wv, c0, c1, bcent[C], P, pw, ring[slotC])
                    _keep_last(ring[slotC], C, keep)
                    owner[slotC] = C
                if owner[slotB] != B:
                    _moments(sv, Wv, b0, b1, bcent[B], P, pw, ring[slotB])
                    _keep_last(ring[slotB], B, keep)
                    owner[slotB] = B
                _hermite(bcent[B] - bcent[C], P, hk)
                _expand_pair(ring[slotB], ring[slotC], hk, P, out, 2.0)
            B -= 1
    return nocc


def _ring_size(h, delta):
    """Boxes within the cut-off behind a box (centres >= h apart), plus itself."""
    return int(math.floor(delta / h)) + 2


@jit
def _fgt_work(m, R, P, nring, nkeep, pkeep, Wv):
    """Work arrays of :func:`_fgt_core` for up to ``m`` entries (``keep``:
    ``nkeep`` boxes, ``pkeep`` orders); ``Wv``: the (R, m) buffer of the
    boxes' weights if the caller has it (numpy's: :mod:`numkfs.kernels._hsic_fgt`),
    else any other shape (``np.empty((0, 0))``): allocated here.

    Every caller passes every argument with the same types (int64, not a
    constant's literal type, and a 2-D array), so it compiles once."""
    sv = np.empty(m)
    if Wv.shape[0] == R and Wv.shape[1] == m:
        wv = Wv
    else:
        wv = np.empty((R, m))
    pw = np.empty(m)
    bstart = np.empty(m + 1, dtype=np.int64)
    bcent = np.empty(m)
    cnt = np.empty(3 * m + 66, dtype=np.int64)  # 2m + 64 cells at most, then m positions
    ring = np.empty((nring, R, P))
    owner = np.empty(nring, dtype=np.int64)
    hk = np.empty(P)
    keep = np.empty((nkeep, 1, pkeep))
    return sv, wv, pw, bstart, bcent, cnt, ring, owner, hk, keep


@jit
def _fgt_quad(s, W, m, h, P, delta, direct_max, nring, out):
    """:func:`_fgt_core` with its own work arrays (for tests and one-offs)."""
    sv, Wv, pw, bstart, bcent, cnt, ring, owner, hk, keep = _fgt_work(m, W.shape[0], P, nring, np.int64(0),
                                                                       np.int64(1), np.empty((0, 0)))
    _fgt_core(s, W, m, h, P, delta, direct_max, sv, Wv, pw, bstart, bcent, cnt, ring, owner, hk, out, keep)


def fgt_quadratic_forms(s, W, rtol: float = 1e-10):
    r"""The quadratic forms :math:`\sum_{jk} W_{rj} W_{rk} e^{-(s_j - s_k)^2}`
    by the fast Gauss transform.

    Parameters
    ----------
    s : array of shape (n,)
        Values in natural units (:math:`\sqrt\gamma\, x`), finite.
    W : array of shape (R, n)
        Weight vectors.
    rtol : float
        Bound relative to :math:`\sum_{jk} |W_{rj}||W_{rk}| e^{-(s_j - s_k)^2}`
        (see the module docstring).

    Returns
    -------
    ndarray of shape (R,)

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.fgt import fgt_quadratic_forms
    >>> s = np.random.default_rng(0).normal(size=3000)
    >>> W = np.ones((1, 3000))
    >>> exact = np.exp(-np.subtract.outer(s, s) ** 2).sum()
    >>> bool(abs(fgt_quadratic_forms(s, W)[0] - exact) <= 1e-10 * exact)
    True
    """
    s = np.ascontiguousarray(s, dtype=np.float64).ravel()
    W = np.ascontiguousarray(np.atleast_2d(W), dtype=np.float64)
    if W.shape[1] != s.shape[0]:
        raise ValueError(f"W has {W.shape[1]} columns but s has {s.shape[0]} values.")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(W))):
        raise ValueError("s and W must be finite.")
    P, delta = fgt_order(rtol)
    out = np.empty(W.shape[0])
    _fgt_quad(s, W, s.shape[0], FGT_H, P, delta, DIRECT_MAX, _ring_size(FGT_H, delta), out)
    return out
