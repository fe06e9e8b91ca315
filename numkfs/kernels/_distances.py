"""Squared Euclidean distances by one GEMM, shared by the rbf-type kernels."""
from __future__ import annotations

import numpy as np


def _sq_dists_blas(Xw, Yw, symmetric):
    """``D[a, b] = ||Xw[a] - Yw[b]||²``, clipped at 0; in the symmetric case D is
    made exactly symmetric (the two triangles add the row norms in different
    orders) with a zero diagonal."""
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
    if symmetric:
        D += D.T  # numpy buffers the overlapping operand; a + b == b + a exactly
        D *= 0.5
        np.fill_diagonal(D, 0.0)
    np.maximum(D, 0.0, out=D)
    return D
