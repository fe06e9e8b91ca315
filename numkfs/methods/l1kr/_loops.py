"""Compiled loops of the L1KR tracker: the KKT residual of the Gaussian
kernel in one call.

The corrector of the tracker evaluates the residual F several times per
step, each time at a new β (so with a new kernel matrix).  Done with numpy
and the kernel functions of :mod:`numkfs.kernels.ard`, one evaluation is a
dozen calls with their checks, copies and temporaries; at the sizes the
tracker runs (n of tens to hundreds of rows) those cost more than the
arithmetic.  :func:`_rbf_residual` does it in one compiled call: the kernel
matrix (:func:`_gauss_kernel`, the arithmetic of
:func:`numkfs.kernels.ard.ard_kernel`, so the same bits), then ``Kα``, ``K(α∘x_i)`` and ``K|α|`` in one pass over K, the
contractions ``g_i``, F and the terms of its rounding floor
(:meth:`numkfs.methods.l1kr.system._System._floor`).
"""
from __future__ import annotations

import numpy as np

from ..._jit import jit
from ...kernels.ard import add_sq1, add_sq4
from ...kernels.fastexp import fast_exp


@jit
def _gauss_kernel(ST, npos):
    """``K[a, c] = exp(-Σ_i s_i (ST[i, a] - ST[i, c])²)`` for features
    pre-scaled by ``sqrt(|β_i|)``, the ``npos`` first with ``s_i = +1``, the
    rest with ``s_i = -1``: the operations of the Gaussian loops of
    :func:`numkfs.kernels.ard.ard_kernel` in their order (four features per
    pass, their squares summed left to right, then one feature at a time;
    ``fast_exp``; the upper triangle, mirrored, the diagonal 1), hence the
    same bits."""
    p, n = ST.shape
    K = np.empty((n, n))
    e = np.empty(n)
    for a in range(n):
        w = n - a
        for c in range(w):
            e[c] = 0.0
        i = 0
        while i + 3 < npos:
            add_sq4(e, ST[i, a], ST[i + 1, a], ST[i + 2, a], ST[i + 3, a], ST[i, a:], ST[i + 1, a:],
                     ST[i + 2, a:], ST[i + 3, a:], w)
            i += 4
        while i < p:
            add_sq1(e, ST[i, a], ST[i, a:], 1.0 if i < npos else -1.0, w)
            i += 1
        for c in range(w):
            K[a, a + c] = fast_exp(-e[c])
        K[a, a] = 1.0
    for a in range(1, n):
        for c in range(a):
            K[a, c] = K[c, a]
    return K


@jit(fast=True)
def _products(K, W, out):
    """``out[k, a] = Σ_b K[a, b] W[k, b]`` (K symmetric: row a of K is its
    column a), every row of W against each row of K while it is in cache."""
    m, n = W.shape
    for a in range(n):
        Ka = K[a]
        for k in range(m):
            Wk = W[k]
            s = 0.0
            for b in range(n):
                s += Ka[b] * Wk[b]
            out[k, a] = s


@jit
def _rbf_residual(XT, P, betaP, alpha, lam, y, C, fix_C):
    """F of the KKT system on the active set ``P`` at (α, β, λ) for the ARD
    Gaussian kernel (:meth:`numkfs.methods.l1kr.system._System._F`).

    ``XT`` is the standardised data, feature-major (d, n); ``betaP`` the
    weights of the features ``P`` (an int64 array; zero weights leave the kernel, negative
    ones, met while the tracker probes past an E2 event, enter with a
    negative sign, as in :func:`numkfs.kernels.ard.ard_kernel`).

    Returns F, K, ``Kα``, the contractions ``g_P``, and the two terms of
    the rounding floor: ``max_a (K|α| + λ|α| + |y|)_a`` and ``|α|ᵀK|α|``."""
    n = alpha.size
    p = P.size
    # the kernel: active features scaled by sqrt(|β|), positive weights first
    npos = 0
    nneg = 0
    for k in range(p):
        if betaP[k] > 0.0:
            npos += 1
        elif betaP[k] < 0.0:
            nneg += 1
    ST = np.empty((npos + nneg, n))
    ip, ineg = 0, npos
    for k in np.argsort(P):  # ascending feature index, the order of ard_kernel's sums
        bk = betaP[k]
        if bk == 0.0:
            continue
        r = ip if bk > 0.0 else ineg
        s = np.sqrt(abs(bk))
        row = XT[P[k]]
        for a in range(n):
            ST[r, a] = row[a] * s
        if bk > 0.0:
            ip += 1
        else:
            ineg += 1
    K = _gauss_kernel(ST, npos)
    # K [α, α∘x_i (i in P), |α|]
    W = np.empty((p + 2, n))
    for a in range(n):
        W[0, a] = alpha[a]
        W[p + 1, a] = abs(alpha[a])
    for k in range(p):
        row = XT[P[k]]
        for a in range(n):
            W[k + 1, a] = alpha[a] * row[a]
    M = np.empty((p + 2, n))
    _products(K, W, M)
    Ka = M[0].copy()
    # g_i = -2 [Σ_a α_a x_ai² (Kα)_a - Σ_a α_a x_ai (K(α∘x_i))_a]
    g = np.empty(p)
    for k in range(p):
        row = XT[P[k]]
        s1 = 0.0
        s2 = 0.0
        for a in range(n):
            ax = W[k + 1, a]
            s1 += ax * row[a] * Ka[a]
            s2 += ax * M[k + 1, a]
        g[k] = -2.0 * (s1 - s2)
    m = n + max(p - 1, 0) + (1 if fix_C else 0)
    F = np.empty(m)
    mean = Ka.sum() / n
    f1 = 0.0
    q = 0.0
    for a in range(n):
        F[a] = Ka[a] - mean + lam * alpha[a] - y[a]
        t = M[p + 1, a] + lam * abs(alpha[a]) + abs(y[a])
        if t > f1 or a == 0:
            f1 = t
        q += W[p + 1, a] * M[p + 1, a]
    for k in range(p - 1):
        F[n + k] = lam * (g[k] - g[k + 1])
    if fix_C:
        aKa = 0.0
        for a in range(n):
            aKa += alpha[a] * Ka[a]
        F[m - 1] = (aKa - C) / C
    return F, K, Ka, g, f1, q


@jit
def _lu_solve(LUt, piv, b):
    """Solve ``A x = b`` from the LU factors of A as ``scipy.linalg.lu_factor``
    gives them (``LUt`` the transpose of its Fortran-ordered factor matrix,
    so that column j of the factors is the contiguous row ``LUt[j]``;
    ``piv`` its 0-based row interchanges).  ``b`` is overwritten."""
    m = b.size
    for i in range(m):
        k = piv[i]
        if k != i:
            t = b[i]
            b[i] = b[k]
            b[k] = t
    for j in range(m):  # L (unit diagonal), by columns
        bj = b[j]
        if bj != 0.0:
            col = LUt[j]
            for i in range(j + 1, m):
                b[i] -= col[i] * bj
    for j in range(m - 1, -1, -1):  # U, by columns
        col = LUt[j]
        b[j] /= col[j]
        bj = b[j]
        if bj != 0.0:
            for i in range(j):
                b[i] -= col[i] * bj
    return b


@jit
def _floor_tol(f1, q, lam, p, x2max, fix_C, C, eps_n, tol):
    """``max(tol, rounding floor of F)`` from the floor terms of
    :func:`_rbf_residual` (:meth:`numkfs.methods.l1kr.system._System._floor`)."""
    fl = f1
    if p > 1:
        fl = max(fl, lam * 4.0 * x2max * q)
    if fix_C:
        fl = max(fl, q / C)
    return max(tol, eps_n * fl)


@jit
def _max_abs(F):
    """``max |F|``; ``inf`` when an entry is not finite."""
    r = 0.0
    for v in F:
        if not np.isfinite(v):
            return np.inf
        a = abs(v)
        if a > r:
            r = a
    return r


@jit
def _rbf_correct(XT, P, zp, LUt, piv, c, lam_fixed, fix_C, y, C, tol, eps_n, x2max, max_newton):
    """The corrector of the tracker (``_PCTracker._correct``: chord Newton
    steps on the hyperplane of the bordered LU factors, improved by
    Broyden's rank-one updates) for the Gaussian kernel, in one compiled
    call with :func:`_rbf_residual` and :func:`_lu_solve`.

    Returns ``(status, z, kappa, K, f_eval)``: status 0 when the point is
    corrected to ``max(tol, floor)`` (z is it, K its kernel matrix), 1 when
    the corrections diverge, leave the finite numbers or do not converge
    within ``max_newton``; kappa the largest contraction of the chord steps;
    f_eval the residuals evaluated."""
    n = y.size
    p = P.size
    nv = zp.size
    z = zp.copy()
    kappa = 0.0
    steps = np.zeros((max_newton + 1, nv))
    sq = np.zeros(max_newton + 1)
    rhs = np.zeros(nv)
    n_eval = 0
    ns = 0
    for it in range(max_newton + 1):
        alpha = z[:n] / c
        lam = z[nv - 1] if fix_C else lam_fixed
        F, K, Ka, g, f1, q = _rbf_residual(XT, P, z[n:n + p], alpha, lam, y, C, fix_C)
        n_eval += 1
        r = _max_abs(F)
        if not np.isfinite(r):
            return 1, z, kappa, K, n_eval
        if r < _floor_tol(f1, q, lam, p, x2max, fix_C, C, eps_n, tol):
            return 0, z, kappa, K, n_eval
        if it == max_newton:
            break
        # w = J⁺F by the bordered factors: [J; refᵀ] x = [F; 0], w = -x
        for i in range(nv - 1):
            rhs[i] = F[i]
        rhs[nv - 1] = 0.0
        w = _lu_solve(LUt, piv, rhs)
        for i in range(nv):
            w[i] = -w[i]
        if ns > 0:
            ww = 0.0
            for i in range(nv):
                ww += w[i] * w[i]
            if sq[ns - 1] > 0:
                ratio = np.sqrt(ww / sq[ns - 1])
                kappa = max(kappa, ratio)
                if ratio > 0.7:
                    return 1, z, kappa, K, n_eval
            for j in range(ns - 1):
                if sq[j] > 0:
                    t = 0.0
                    for i in range(nv):
                        t += steps[j, i] * w[i]
                    t /= sq[j]
                    for i in range(nv):
                        w[i] += steps[j + 1, i] * t
            denom = 1.0
            if sq[ns - 1] > 0:
                t = 0.0
                for i in range(nv):
                    t += steps[ns - 1, i] * w[i]
                denom = 1.0 - t / sq[ns - 1]
            if denom > 0.1:
                for i in range(nv):
                    w[i] /= denom
        s2 = 0.0
        for i in range(nv):
            z[i] += w[i]
            steps[ns, i] = w[i]
            s2 += w[i] * w[i]
            if not np.isfinite(z[i]):
                return 1, z, kappa, K, n_eval
        sq[ns] = s2
        ns += 1
    return 1, z, kappa, K, n_eval
