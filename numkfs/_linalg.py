"""Small dense linear-algebra loops that BLAS does not offer."""
from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["rows_matvec"]


@jit(fast=True)
def rows_matvec(K, rows, x):
    """``(K @ x)[rows]`` by one dot product per selected row.

    ``|rows| / n`` of the work of the full product, without the
    ``|rows| x n`` copy that ``K[rows] @ x`` makes.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs._linalg import rows_matvec
    >>> K = np.arange(9.0).reshape(3, 3)
    >>> rows_matvec(K, np.array([0, 2]), np.ones(3)).tolist()
    [3.0, 21.0]
    """
    out = np.empty(rows.size)
    n = K.shape[1]
    for r in range(rows.size):
        i = rows[r]
        acc = 0.0
        for j in range(n):
            acc += K[i, j] * x[j]
        out[r] = acc
    return out
