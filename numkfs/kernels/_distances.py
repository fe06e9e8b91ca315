"""Squared Euclidean distances by one GEMM (for KNIFE's weighted rbf kernel)."""
from __future__ import annotations

import numpy as np


def _sq_dists_blas(Xw, Yw, symmetric):
    """``D[a, b] = ||Xw[a] - Yw[b]||²``, clipped at 0 (zero diagonal in the
    symmetric case)."""
    sx = np.einsum("ij,ij->i", Xw, Xw)
    if symmetric:
        D = Xw @ Xw.T
        sy = sx
    else:
        D = Xw @ Yw.T
        sy = np.einsum("ij,ij->i", Yw, Yw)
    D *= -2.0
    D += sx[:, None]
    D += sy[None, :]
    np.maximum(D, 0.0, out=D)
    if symmetric:
        np.fill_diagonal(D, 0.0)
    return D
