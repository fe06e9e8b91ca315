"""The rbf kernel by one GEMM and one fused pass (KNIFE's weighted rbf kernel)."""
from __future__ import annotations

import numpy as np

from .._jit import jit
from .fastexp import fast_exp_kernel


@jit
def _exp_of_gram(G, hx, hy, symmetric):
    """In place: ``G[a, b] <- exp(min(G[a, b] - hx[a] - hy[b], 0))``, the
    diagonal set to 1 when ``symmetric``.  One pass in the calling thread
    (a parallel region right after the threaded GEMM would wait for BLAS's
    spinning threads)."""
    n, m = G.shape
    for a in range(n):
        ha = hx[a]
        row = G[a]
        for b in range(m):
            v = row[b] - ha - hy[b]
            row[b] = fast_exp_kernel(v if v < 0.0 else 0.0)
        if symmetric:
            row[a] = 1.0
    return G


def rbf_by_gemm(Xw, Yw, gamma, symmetric):
    """``exp(-γ ||Xw[a] - Yw[b]||²)``: the rows are scaled by ``sqrt(2γ)`` so
    that one GEMM gives ``2γ xᵀy``; exponent clipped at 0 (cancellation),
    exact 1 on the diagonal in the symmetric case.  Faster than the five
    numpy passes plus ``np.exp`` of scikit-learn's ``rbf_kernel``
    (``benchmarks/kernels.py`` measures both)."""
    s = np.sqrt(2.0 * gamma)
    Xs = Xw * s
    hx = 0.5 * np.einsum("ij,ij->i", Xs, Xs)
    if symmetric:
        return _exp_of_gram(Xs @ Xs.T, hx, hx, True)
    Ys = Yw * s
    hy = 0.5 * np.einsum("ij,ij->i", Ys, Ys)
    return _exp_of_gram(Xs @ Ys.T, hx, hy, False)
