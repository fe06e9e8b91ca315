r"""ARD kernels of L1KR and their derivatives in the feature weights β.

Two kernels (β ≥ 0, one weight per feature):

.. math::

    k_\beta(x, z) = \exp\Big(-\sum_i \beta_i (x_i - z_i)^2\Big)
    \qquad\text{(ARD Gaussian)}

    k_\beta(x, z) = \Big(\frac{\sum_i \beta_i x_i z_i}{\sum_i \beta_i + 1} + 1\Big)^d
    \qquad\text{(normalised ARD polynomial)}

L1KR's path tracker needs, at (α, β) with active set P:

* ``K(β)`` (and the cross kernel ``K(X_test, X; β)`` for prediction);
* the columns ``A[:, i] = (∂K/∂β_i) α`` for every feature i, and the
  contractions ``g_i = αᵀ (∂K/∂β_i) α = αᵀ A[:, i]``;
* the matrix ``S[i, j] = αᵀ (∂²K/∂β_i ∂β_j) α`` for i, j in P.

Nothing of size n x n x p is ever formed.  What was measured
(``benchmarks/l1kr_paper.py``) decided the form of each piece:

* K (Gaussian): a Numba loop over pairs with exact coordinate differences
  of the features pre-scaled by ``sqrt(|β|)`` (no ``|x|² + |z|² - 2 xᵀz``
  cancellation; 2 flops per pair and feature, four features per pass over a
  row's exponents, or over an L1-sized tile of rows and columns from 32
  active features on); only the active features enter.
* A: BLAS.  For the Gaussian ``(∂K_i α)_a = -[x_ai² (Kα)_a - 2 x_ai (K(α∘x_i))_a
  + (K(α∘x_i²))_a]``, so one GEMM ``K @ [α, α∘X, α∘X²]`` gives every column;
  for the polynomial kernel ``(∂K_i α)_a = (d/T) [x_ai (G (α∘x_i))_a - (G' α)_a]``
  with ``G = u^{d-1}``, ``G' = u^{d-1}(u - 1)``, ``T = Σβ + 1``.
* S: a Numba loop over rows a and columns b > a (the summand is symmetric
  in a, b); the |P| x (n - a - 1) block of ``(x_ai - x_bi)²`` is formed per
  row and the sums over b run as contiguous loops, two rows of S against
  four columns at a time (n² |P|² / 4 multiply-adds, O(|P| n) memory per
  thread).
* Every loop has a serial twin (:func:`numkfs._jit.serial_twin`), which
  runs below ``PARALLEL_MIN_ROWS`` rows or on one thread
  (:func:`numkfs._threads.parallel_or_serial`): L1KR's fits up to 999 rows
  never compile the parallel forms.

The ``_reference_*`` functions are plain numpy oracles with one explicit
n x n matrix per feature, used by the tests and the benchmark only.
"""
from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange, serial_twin
from .._threads import parallel_or_serial
from .fastexp import fast_exp

__all__ = [
    "ARD_KERNELS",
    "ard_kernel",
    "ard_grad_columns",
    "ard_grad_contractions",
    "ard_hessian_contractions",
]

#: Kernel names accepted by every function of this module: ``"rbf"`` (the ARD
#: Gaussian, numkfs's one name for it) and ``"poly"``; ``"gaussian"`` (the
#: paper's name) is accepted as an alias of ``"rbf"``.
ARD_KERNELS = ("rbf", "poly")
KERNEL_ALIASES = {"gaussian": "rbf"}


def canonical_kernel(kernel):
    """``"rbf"`` for ``"gaussian"`` (the alias), any other value unchanged."""
    return KERNEL_ALIASES.get(kernel, kernel) if isinstance(kernel, str) else kernel


def _check_kernel(kernel: str, degree: int) -> str:
    kernel = canonical_kernel(kernel)
    if kernel not in ARD_KERNELS:
        raise ValueError(f"ARD kernel must be one of {ARD_KERNELS} (or the alias 'gaussian'); got {kernel!r}.")
    if kernel == "poly" and (int(degree) != degree or degree < 1):
        raise ValueError(f"The polynomial degree must be an integer >= 1; got {degree!r}.")
    return kernel


def _active(beta: np.ndarray) -> np.ndarray:
    return np.flatnonzero(beta != 0.0)


# --------------------------------------------------------------------------
# compiled loops


@jit(inline=True)
def add_sq4(e, x1, x2, x3, x4, r1, r2, r3, r4, w):
    """``e[c] += Σ_q (x_q - r_q[c])²`` over four features, ``c < w`` (the
    contiguous loop LLVM vectorises; the one order of operations of both
    Gaussian loops and of the L1KR corrector's kernel, so that they give the
    same bits)."""
    for c in range(w):
        d1 = x1 - r1[c]
        d2 = x2 - r2[c]
        d3 = x3 - r3[c]
        d4 = x4 - r4[c]
        e[c] += ((d1 * d1 + d2 * d2) + d3 * d3) + d4 * d4


@jit(inline=True)
def add_sq1(e, x1, r1, sg, w):
    """``e[c] += sg (x1 - r1[c])²`` for one feature of sign ``sg``, ``c < w``."""
    for c in range(w):
        d1 = x1 - r1[c]
        e[c] += sg * (d1 * d1)


@pjit
def _gauss_kernel_rows(SZ, ST, npos, symmetric):
    """``K[a, c] = exp(-Σ_i s_i (SZ[i, a] - ST[i, c])²)`` for features
    pre-scaled by ``sqrt(|β_i|)``, the ``npos`` first with ``s_i = +1`` and
    the rest (β_i < 0, met only while the path tracker probes past an E2
    event) with ``s_i = -1``.

    The exponent of a row is accumulated with exact coordinate differences
    (no ``|x|² + |z|² - 2 xᵀz`` cancellation), four features per pass over
    the row (a contiguous loop LLVM vectorises: 2 flops per pair and feature,
    a quarter of the loads and stores of the row), then exponentiated with
    the vectorisable ``fast_exp`` (relative error < 4e-16).  With
    ``symmetric`` (SZ is ST) only the upper triangle is computed (rows taken
    in pairs a, m - 1 - a, which balances the parallel tasks) and mirrored:
    the diagonal is 1 and K is exactly symmetric."""
    p, m = SZ.shape
    n = ST.shape[1]
    K = np.empty((m, n))
    n_tasks = (m + 1) // 2 if symmetric else m
    for task in prange(n_tasks):
        e = np.empty(n)
        t = np.int64(task)  # prange's index may be unsigned: keep the arithmetic in int64
        for half in range(2 if symmetric and m - 1 - t != t else 1):
            a = t if half == 0 else m - 1 - t
            c0 = a if symmetric else 0
            w = n - c0
            for c in range(w):
                e[c] = 0.0
            i = 0
            while i + 3 < npos:
                add_sq4(e, SZ[i, a], SZ[i + 1, a], SZ[i + 2, a], SZ[i + 3, a], ST[i, c0:], ST[i + 1, c0:],
                         ST[i + 2, c0:], ST[i + 3, c0:], w)
                i += 4
            while i < p:
                add_sq1(e, SZ[i, a], ST[i, c0:], 1.0 if i < npos else -1.0, w)
                i += 1
            for c in range(w):
                K[a, c0 + c] = fast_exp(-e[c])
            if symmetric:
                K[a, a] = 1.0
    if symmetric:
        _mirror_upper(K)
    return K


@jit
def _mirror_upper(K):
    """``K[a, c] = K[c, a]`` for c < a (the lower triangle from the upper)."""
    for a in range(1, K.shape[0]):
        for c in range(a):
            K[a, c] = K[c, a]


#: Rows and columns of an exponent tile of :func:`_gauss_kernel_tiles`
#: (8 x 512 doubles, 32 KB: stays in L1 while every feature passes over it).
TILE_ROWS = 8
TILE_COLS = 512
#: Active features from which :func:`ard_kernel` uses the tiled loop
#: (faster than the row loop from a few tens of features, slower below about
#: 20; ``benchmarks/kernels.py`` measures both).
TILED_MIN_FEATURES = 32


@pjit
def _gauss_kernel_tiles(SZ, ST, npos, symmetric):
    """:func:`_gauss_kernel_rows` for many features: the exponents of a tile
    of ``TILE_ROWS`` rows and ``TILE_COLS`` columns are accumulated feature
    by feature (four per pass) while the tile stays in L1, so each feature's
    column values are read once per tile instead of once per row.  Same
    operations in the same order per entry as the row loop: the same K,
    exactly symmetric when ``symmetric`` (then only the tiles right of a row
    block's first row are computed, row blocks in pairs, and mirrored)."""
    p, m = SZ.shape
    n = ST.shape[1]
    K = np.empty((m, n))
    nrb = (m + TILE_ROWS - 1) // TILE_ROWS
    n_tasks = (nrb + 1) // 2 if symmetric else nrb
    for task in prange(n_tasks):
        E = np.empty((TILE_ROWS, TILE_COLS))
        t = np.int64(task)  # prange's index may be unsigned: keep the arithmetic in int64
        for half in range(2 if symmetric and nrb - 1 - t != t else 1):
            rb = t if half == 0 else nrb - 1 - t
            a0 = rb * TILE_ROWS
            ra = min(m, a0 + TILE_ROWS) - a0
            for c0 in range(a0 if symmetric else 0, n, TILE_COLS):
                w = min(n, c0 + TILE_COLS) - c0
                for a in range(ra):
                    for cc in range(w):
                        E[a, cc] = 0.0
                i = 0
                while i + 3 < npos:
                    r1 = ST[i, c0:c0 + w]
                    r2 = ST[i + 1, c0:c0 + w]
                    r3 = ST[i + 2, c0:c0 + w]
                    r4 = ST[i + 3, c0:c0 + w]
                    for a in range(ra):
                        b = a0 + a
                        add_sq4(E[a], SZ[i, b], SZ[i + 1, b], SZ[i + 2, b], SZ[i + 3, b], r1, r2, r3, r4, w)
                    i += 4
                while i < p:
                    r1 = ST[i, c0:c0 + w]
                    for a in range(ra):
                        add_sq1(E[a], SZ[i, a0 + a], r1, 1.0 if i < npos else -1.0, w)
                    i += 1
                for a in range(ra):
                    ka = K[a0 + a]
                    ea = E[a]
                    for cc in range(w):
                        ka[c0 + cc] = fast_exp(-ea[cc])
            if symmetric:
                for a in range(ra):
                    K[a0 + a, a0 + a] = 1.0
    if symmetric:
        _mirror_upper(K)
    return K


def _gauss_kernel(SZ, ST, npos, symmetric):
    """The row loop for few active features, the tiled loop for many
    (each in its parallel form or its serial twin, by rows and threads)."""
    if SZ.shape[0] >= TILED_MIN_FEATURES:
        loops = parallel_or_serial(_gauss_kernel_tiles, _gauss_kernel_tiles_serial, SZ.shape[1])
    else:
        loops = parallel_or_serial(_gauss_kernel_rows, _gauss_kernel_rows_serial, SZ.shape[1])
    return loops(SZ, ST, npos, symmetric)


def _scaled_active(X, beta):
    """Active features of ``X`` scaled by sqrt(|β|), feature-major, positive
    weights first; returns (columns, number of positive weights)."""
    pos = np.flatnonzero(beta > 0.0)
    neg = np.flatnonzero(beta < 0.0)
    act = np.concatenate([pos, neg])
    return act, np.sqrt(np.abs(beta[act])), pos.size


@pjit(fast=True)
def _hess_contract_gauss(XpT, K, alpha, n_chunks):
    """S[i, j] = Σ_ab α_a α_b K_ab D^i_ab D^j_ab with D^i_ab = (x_ai - x_bi)².

    The summand is symmetric in (a, b) and zero at a = b, so the sum runs
    over b > a and is doubled (n² p² / 4 multiply-adds in all).  For each
    row a the p x (n - a - 1) block of D^i_ab is formed once; the sums over
    b run as contiguous (vectorised) loops for two rows i, i + 1 of S
    against four columns j..j+3 at a time (eight sums sharing six loads)."""
    p, n = XpT.shape
    out = np.zeros((n_chunks, p, p))
    for c in prange(n_chunks):
        Dm = np.empty((p, n))
        t0 = np.empty(n)
        t1 = np.empty(n)
        w = np.empty(n)
        acc = np.zeros((p, p))
        # rows a = c, c + n_chunks, ... (a unit-stride loop: with a run-time
        # step in range() the inner loops measured 40 % slower)
        for q in range((n - 1 - c + n_chunks - 1) // n_chunks):
            a = c + q * n_chunks
            m = n - a - 1
            aa = alpha[a]
            Ka = K[a]
            for k in range(m):
                w[k] = aa * alpha[a + 1 + k] * Ka[a + 1 + k]
            for i in range(p):
                xa = XpT[i, a]
                row = XpT[i]
                for k in range(m):
                    d = xa - row[a + 1 + k]
                    Dm[i, k] = d * d
            i = 0
            while i + 1 < p:
                Di = Dm[i]
                Di1 = Dm[i + 1]
                s00 = 0.0
                s01 = 0.0
                s11 = 0.0
                for k in range(m):
                    x0 = w[k] * Di[k]
                    x1 = w[k] * Di1[k]
                    t0[k] = x0
                    t1[k] = x1
                    s00 += x0 * Di[k]
                    s01 += x0 * Di1[k]
                    s11 += x1 * Di1[k]
                acc[i, i] += s00
                acc[i, i + 1] += s01
                acc[i + 1, i + 1] += s11
                j = i + 2
                while j + 3 < p:
                    D0 = Dm[j]
                    D1 = Dm[j + 1]
                    D2 = Dm[j + 2]
                    D3 = Dm[j + 3]
                    u0 = 0.0
                    u1 = 0.0
                    u2 = 0.0
                    u3 = 0.0
                    v0 = 0.0
                    v1 = 0.0
                    v2 = 0.0
                    v3 = 0.0
                    for k in range(m):
                        x0 = t0[k]
                        x1 = t1[k]
                        e0 = D0[k]
                        e1 = D1[k]
                        e2 = D2[k]
                        e3 = D3[k]
                        u0 += x0 * e0
                        u1 += x0 * e1
                        u2 += x0 * e2
                        u3 += x0 * e3
                        v0 += x1 * e0
                        v1 += x1 * e1
                        v2 += x1 * e2
                        v3 += x1 * e3
                    acc[i, j] += u0
                    acc[i, j + 1] += u1
                    acc[i, j + 2] += u2
                    acc[i, j + 3] += u3
                    acc[i + 1, j] += v0
                    acc[i + 1, j + 1] += v1
                    acc[i + 1, j + 2] += v2
                    acc[i + 1, j + 3] += v3
                    j += 4
                while j < p:
                    Dj = Dm[j]
                    u = 0.0
                    v = 0.0
                    for k in range(m):
                        u += t0[k] * Dj[k]
                        v += t1[k] * Dj[k]
                    acc[i, j] += u
                    acc[i + 1, j] += v
                    j += 1
                i += 2
            if i < p:  # the last row of an odd p: its diagonal entry
                Di = Dm[i]
                s = 0.0
                for k in range(m):
                    s += w[k] * Di[k] * Di[k]
                acc[i, i] += s
        for i in range(p):
            for j in range(i, p):
                out[c, i, j] = 2.0 * acc[i, j]
                out[c, j, i] = 2.0 * acc[i, j]
    S = out[0].copy()
    for c in range(1, n_chunks):
        S += out[c]
    return S


@pjit
def _hess_contract_poly(Xp, U, alpha, degree, T, n_chunks):
    """S[i, j] = Σ_ab α_a α_b [d(d-1)u^{d-2} m^i m^j - d u^{d-1}(m^i + m^j)] / T²,
    m^i_ab = x_ai x_bi - (u_ab - 1)."""
    n, p = Xp.shape
    out = np.zeros((n_chunks, p, p))
    c1f = degree * (degree - 1.0) / (T * T)
    c2f = degree / (T * T)
    for c in prange(n_chunks):
        m = np.empty(p)
        acc = np.zeros((p, p))
        for a in range(c, n, n_chunks):
            for bb in range(n):
                u = U[a, bb]
                w = alpha[a] * alpha[bb]
                if degree >= 2:
                    c1 = c1f * u ** (degree - 2)
                else:
                    c1 = 0.0
                c2 = c2f * u ** (degree - 1)
                for i in range(p):
                    m[i] = Xp[a, i] * Xp[bb, i] - (u - 1.0)
                for i in range(p):
                    wi = w * c1 * m[i]
                    for j in range(i, p):
                        acc[i, j] += wi * m[j] - w * c2 * (m[i] + m[j])
        for i in range(p):
            for j in range(i, p):
                out[c, i, j] = acc[i, j]
                out[c, j, i] = acc[i, j]
    S = out[0].copy()
    for c in range(1, n_chunks):
        S += out[c]
    return S


# serial twins: below _threads.PARALLEL_MIN_ROWS rows (every L1KR fit up to
# 999 rows runs on one thread) these run instead of the parallel forms; they
# compile in a fraction of the time and run faster on one thread
_gauss_kernel_rows_serial = serial_twin(_gauss_kernel_rows)
_gauss_kernel_tiles_serial = serial_twin(_gauss_kernel_tiles)
_hess_contract_gauss_serial = serial_twin(_hess_contract_gauss, fast=True)
_hess_contract_poly_serial = serial_twin(_hess_contract_poly)


# --------------------------------------------------------------------------
# public functions


def _poly_u(X, beta, Z=None):
    """u = (Σ β_i x_i z_i) / (Σβ + 1) + 1 as an (m, n) matrix."""
    act = _active(beta)
    T = beta.sum() + 1.0
    Z = X if Z is None else Z
    if act.size == 0:
        return np.ones((Z.shape[0], X.shape[0])), T
    Xa = X[:, act]
    Za = Z[:, act] * beta[act]
    return Za @ Xa.T / T + 1.0, T


def ard_kernel(X, beta, kernel: str = "rbf", degree: int = 2, Z=None) -> np.ndarray:
    r"""The ARD kernel matrix ``K[a, b] = k_β(Z_a, X_b)`` (``Z = X`` by default).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Data, one row per sample and one column per feature.
    beta : ndarray of shape (p,), non-negative feature weights
    kernel : {"rbf", "poly"}
        ``"gaussian"`` is an alias of ``"rbf"``.
    degree : int
        Degree d of the normalised polynomial kernel.
    Z : ndarray of shape (m, p), optional
        Rows for a cross kernel (prediction).

    Returns
    -------
    ndarray of shape (m, n)
    """
    kernel = _check_kernel(kernel, degree)
    X = np.ascontiguousarray(X, dtype=float)
    beta = np.asarray(beta, dtype=float)
    if kernel == "poly":
        U, _ = _poly_u(X, beta, Z)
        return U**degree
    act, sb, npos = _scaled_active(X, beta)
    if Z is None:
        if act.size == 0:
            return np.ones((X.shape[0], X.shape[0]))
        ST = np.ascontiguousarray((X[:, act] * sb).T)
        return _gauss_kernel(ST, ST, npos, True)
    Z = np.asarray(Z, dtype=float)
    if act.size == 0:
        return np.ones((Z.shape[0], X.shape[0]))
    ST = np.ascontiguousarray((X[:, act] * sb).T)
    return _gauss_kernel(np.ascontiguousarray((Z[:, act] * sb).T), ST, npos, False)


def ard_grad_columns(X, beta, alpha, K, kernel: str = "rbf", degree: int = 2, features=None) -> np.ndarray:
    r"""Columns ``A[:, k] = (∂K/∂β_i) α`` for ``i = features[k]`` (all by default).

    ``K`` is ``ard_kernel(X, beta, ...)`` (passed in so it is computed once).
    One GEMM with ``K`` (Gaussian) or with ``u^{d-1}`` (polynomial).

    Returns
    -------
    ndarray of shape (n, len(features))
    """
    kernel = _check_kernel(kernel, degree)
    X = np.asarray(X, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    Xf = X if features is None else X[:, np.asarray(features, dtype=int)]
    if canonical_kernel(kernel) == "rbf":
        n, q = Xf.shape
        B = np.empty((n, 2 * q + 1))
        B[:, 0] = alpha
        aX = alpha[:, None] * Xf
        B[:, 1 : q + 1] = aX
        B[:, q + 1 :] = aX * Xf
        M = K @ B
        return -(Xf**2 * M[:, :1] - 2.0 * Xf * M[:, 1 : q + 1] + M[:, q + 1 :])
    U, T = _poly_u(X, np.asarray(beta, dtype=float))
    G = U ** (degree - 1)
    Ga = (G * (U - 1.0)) @ alpha
    M = G @ (alpha[:, None] * Xf)
    return (degree / T) * (Xf * M - Ga[:, None])


def ard_grad_contractions(X, beta, alpha, K, kernel: str = "rbf", degree: int = 2, A=None, features=None) -> np.ndarray:
    r"""``g_i = αᵀ (∂K/∂β_i) α = αᵀ A[:, i]`` for ``i = features[k]`` (all by
    default; ``-∂L/∂β_i = λ g_i``).

    With the columns ``A`` given (of the same features): ``αᵀA``.  Without,
    for the Gaussian, from half the product :func:`ard_grad_columns` needs:
    ``αᵀ K (α∘x_i²) = (Kα)ᵀ(α∘x_i²)`` (K symmetric), so
    ``g_i = -2 [Σ_a α_a x_ai² (Kα)_a - Σ_a α_a x_ai (K(α∘x_i))_a]``: one
    GEMM ``K @ [α, α∘X]``.

    Returns
    -------
    ndarray of shape (len(features),)
    """
    alpha = np.asarray(alpha, dtype=float)
    if A is not None:
        return alpha @ A
    if canonical_kernel(_check_kernel(kernel, degree)) != "rbf":
        return alpha @ ard_grad_columns(X, beta, alpha, K, kernel, degree, features)
    X = np.asarray(X, dtype=float)
    Xf = X if features is None else X[:, np.asarray(features, dtype=int)]
    n, q = Xf.shape
    B = np.empty((n, q + 1))
    B[:, 0] = alpha
    aX = alpha[:, None] * Xf
    B[:, 1:] = aX
    M = K @ B
    return -2.0 * ((aX * Xf).T @ M[:, 0] - np.einsum("aq,aq->q", aX, M[:, 1:]))


def _hessian_loops(parallel, serial, n: int):
    """The parallel form of a Hessian loop and its task count, or its
    serial twin and one task."""
    from .._threads import parallel_tasks

    loops = parallel_or_serial(parallel, serial, n)
    return loops, (1 if loops is serial else parallel_tasks(n, per_thread=4))


def ard_hessian_contractions(X, beta, alpha, K, features, kernel: str = "rbf", degree: int = 2) -> np.ndarray:
    r"""``S[k, l] = αᵀ (∂²K/∂β_i ∂β_j) α`` for ``i = features[k]``, ``j = features[l]``.

    O(n² q²) flops for q features, no per-feature n x n matrix.

    Returns
    -------
    ndarray of shape (q, q), symmetric
    """
    kernel = _check_kernel(kernel, degree)
    X = np.asarray(X, dtype=float)
    alpha = np.ascontiguousarray(alpha, dtype=float)
    feats = np.asarray(features, dtype=int)
    if feats.size == 0:
        return np.zeros((0, 0))
    Xp = np.ascontiguousarray(X[:, feats])
    n = X.shape[0]
    if canonical_kernel(kernel) == "rbf":
        loops, tasks = _hessian_loops(_hess_contract_gauss, _hess_contract_gauss_serial, n)
        return loops(np.ascontiguousarray(Xp.T), np.ascontiguousarray(K), alpha, tasks)
    U, T = _poly_u(X, np.asarray(beta, dtype=float))
    loops, tasks = _hessian_loops(_hess_contract_poly, _hess_contract_poly_serial, n)
    return loops(Xp, np.ascontiguousarray(U), alpha, float(degree), float(T), tasks)


# --------------------------------------------------------------------------
# numpy oracles (one n x n matrix per feature): tests and benchmarks only


def _reference_kernel(X, beta, kernel="rbf", degree=2, Z=None):
    Z = X if Z is None else Z
    if canonical_kernel(kernel) == "rbf":
        E = np.zeros((Z.shape[0], X.shape[0]))
        for i in range(X.shape[1]):
            E += beta[i] * (Z[:, i][:, None] - X[:, i][None, :]) ** 2
        return np.exp(-E)
    T = beta.sum() + 1.0
    s = np.zeros((Z.shape[0], X.shape[0]))
    for i in range(X.shape[1]):
        s += beta[i] * np.outer(Z[:, i], X[:, i])
    return (s / T + 1.0) ** degree


def _reference_dK(X, beta, i, kernel="rbf", degree=2):
    """The n x n matrix ∂K/∂β_i."""
    if canonical_kernel(kernel) == "rbf":
        K = _reference_kernel(X, beta, kernel, degree)
        return -((X[:, i][:, None] - X[:, i][None, :]) ** 2) * K
    T = beta.sum() + 1.0
    U = _reference_kernel(X, beta, "poly", 1)
    m = np.outer(X[:, i], X[:, i]) - (U - 1.0)
    return degree * U ** (degree - 1) * m / T


def _reference_d2K(X, beta, i, j, kernel="rbf", degree=2):
    """The n x n matrix ∂²K/∂β_i∂β_j."""
    if canonical_kernel(kernel) == "rbf":
        K = _reference_kernel(X, beta, kernel)
        Di = (X[:, i][:, None] - X[:, i][None, :]) ** 2
        Dj = (X[:, j][:, None] - X[:, j][None, :]) ** 2
        return Di * Dj * K
    T = beta.sum() + 1.0
    U = _reference_kernel(X, beta, "poly", 1)
    mi = np.outer(X[:, i], X[:, i]) - (U - 1.0)
    mj = np.outer(X[:, j], X[:, j]) - (U - 1.0)
    d = degree
    c1 = d * (d - 1) * U ** (d - 2) if d >= 2 else 0.0
    return (c1 * mi * mj - d * U ** (d - 1) * (mi + mj)) / T**2
