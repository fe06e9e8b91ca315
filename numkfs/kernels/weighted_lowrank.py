r"""Feature-weighted kernels through a Nyström basis: the blocks K_nm(w), K_mm(w) and their w-derivatives.

KNIFE's low-rank form (:mod:`numkfs.methods.knife._nystroem`) fits
:math:`f = K_{nm}(w)\beta + \beta_0` with m landmarks :math:`z_1, \dots,
z_m` (rows of the training data) and the penalty :math:`\lambda_1
\beta^\top K_{mm}(w)\beta`.  The weights stay inside the kernel: both
blocks are recomputed as w moves, with the kernels of
:mod:`numkfs.kernels.weighted` (:math:`k_w(x, z)` with the weights
squared).  The weight step needs, for coefficients :math:`\beta`, the
n x p matrix

.. math::

    A_{ik} = \sum_j \beta_j\, \frac{\partial k_w(x_i, z_j)}{\partial w_k},

so that :math:`\partial (K_{nm}\beta)_i/\partial w_k = A_{ik}`; the same
function on the landmarks (:math:`x = z`) gives :math:`A^{mm}` and
:math:`\partial(\beta^\top K_{mm}\beta)/\partial w_k = (\beta^\top
A^{mm})_k`.  Closed forms (no n x m x p array):

* rbf: :math:`A_{ik} = -2\gamma w_k \bigl[x_{ik}^2 (K\beta)_i - 2 x_{ik}
  (K(\beta\circ z_k))_i + (K(\beta\circ z_k^2))_i\bigr]`, one GEMM of a row
  block of :math:`K_{nm}` with the m x (2p+1) matrix :math:`[\beta,
  \beta\circ Z, \beta\circ Z^2]`, then a fused Numba pass;
* poly: :math:`A_{ik} = 2d\,w_k x_{ik} \bigl(G(\beta\circ Z)\bigr)_{ik}`,
  :math:`G = (X_w Z_w^\top + c)^{\circ(d-1)}` formed one row block at a time;
* linear: :math:`A_{ik} = 2 w_k x_{ik} (Z^\top\beta)_k`.

Work O(n m p), memory O(n p + b m) beyond the stored :math:`K_{nm}` (b the
rows of a block, :data:`BLOCK_ROWS`): the cost of one pass is a GEMM, so
the row blocks run serially and BLAS takes the threads.

:func:`lowrank_gram` accumulates :math:`K_{nm}^\top \mathrm{diag}(d)
K_{nm}` (the Newton matrix of the coefficient step) over row blocks with
a symmetric rank-k update, on the rows with :math:`d_i > 0` only (read from
slices of :math:`K_{nm}` into one block buffer when every :math:`d_i > 0`).

:func:`select_landmarks` chooses the m landmark rows once per fit: uniformly
without replacement or by k-means++ seeding (:math:`D^2` sampling), both
under ``random_state``.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from .._jit import jit
from .._validation import check_random_state
from .weighted import KERNELS, _kernel_and_product, weighted_kernel

__all__ = ["BLOCK_ROWS", "LANDMARK_METHODS", "lowrank_gram", "lowrank_kernels", "lowrank_weight_gradient",
           "select_landmarks"]

#: Rows per block of the streamed passes (a block of K_nm with m = 500 columns is 16 MiB).
BLOCK_ROWS = 4096

#: How :func:`select_landmarks` chooses the landmarks.
LANDMARK_METHODS = ("uniform", "kmeans++")


def select_landmarks(X, n_components: int, *, method: str = "uniform", random_state=None) -> np.ndarray:
    r"""Indices of ``n_components`` distinct rows of X to serve as Nyström landmarks.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Data, one row per sample and one column per feature.
    n_components : int
        Number of landmarks m, ``1 <= m <= n``.
    method : {"uniform", "kmeans++"}, default="uniform"
        ``"uniform"``: m rows drawn without replacement; ``"kmeans++"``: the
        k-means++ seeding, each next landmark drawn with probability
        proportional to its squared distance to the nearest landmark so far
        (O(n m p) work); rows equal to a landmark are never drawn again.
    random_state : int, Generator or None
        Seed or generator for the draws.

    Returns
    -------
    ndarray of int, shape (m,)
        Sorted row indices.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.weighted_lowrank import select_landmarks
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> idx = select_landmarks(X, 4, random_state=0)
    >>> idx.shape, bool(np.all(np.diff(idx) > 0))
    ((4,), True)
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    m = int(n_components)
    if not 1 <= m <= n:
        raise ValueError(f"n_components must lie between 1 and the number of samples ({n}); got {n_components!r}.")
    if method not in LANDMARK_METHODS:
        raise ValueError(f"landmarks must be one of {list(LANDMARK_METHODS)}; got {method!r}.")
    rng = check_random_state(random_state)
    if method == "uniform" or m == n:
        return np.sort(rng.choice(n, size=m, replace=False))
    chosen = [int(rng.integers(n))]
    d2 = np.sum((X - X[chosen[0]]) ** 2, axis=1)
    for _ in range(1, m):
        total = float(d2.sum())
        if total <= 0.0:  # every remaining row duplicates a landmark: fill uniformly from the others
            rest = np.setdiff1d(np.arange(n), chosen)
            chosen += list(rng.choice(rest, size=m - len(chosen), replace=False))
            break
        j = int(rng.choice(n, p=d2 / total))
        chosen.append(j)
        np.minimum(d2, np.sum((X - X[j]) ** 2, axis=1), out=d2)
        d2[chosen] = 0.0
    return np.sort(np.asarray(chosen, dtype=np.int64))


def _check_kernel(kernel):
    if kernel not in KERNELS:
        raise ValueError(f"Unknown kernel {kernel!r}; choose one of {list(KERNELS)}.")


def lowrank_kernels(X, Z, w, kernel: str = "rbf", *, gamma: float = 1.0, degree: int = 2, coef0: float = 1.0,
                    out=None):
    r"""The blocks :math:`K_{nm}(w) = K_w(X, Z)` and :math:`K_{mm}(w) = K_w(Z, Z)`.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Data, one row per sample and one column per feature.
    Z : ndarray of shape (m, p)
        Landmarks.
    w : ndarray of shape (p,)
        Feature weights (squared inside the kernel, as in
        :func:`numkfs.kernels.weighted.weighted_kernel`).
    kernel : {"linear", "rbf", "poly"}
        The kernel family.
    gamma, degree, coef0 : float, int, float
        RBF scale :math:`\gamma`; polynomial degree :math:`d` and offset :math:`c`.
    out : ndarray of shape (n, m), optional
        A C-contiguous float64 array to write :math:`K_{nm}` into (the rbf
        kernel's Numba form on up to
        :data:`numkfs.kernels.weighted.AUTO_NUMBA_MAX_FEATURES` active
        features; other forms allocate).  Re-using a buffer saves the
        first-touch page faults of a fresh n x m allocation, which cost
        more than the kernel itself at large n.

    Returns
    -------
    Knm : ndarray of shape (n, m)
        ``out`` when it was written into.
    Kmm : ndarray of shape (m, m)

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.weighted_lowrank import lowrank_kernels
    >>> X = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 0.0]])
    >>> Knm, Kmm = lowrank_kernels(X, X[:2], np.array([1.0, 0.5]), gamma=0.5)
    >>> bool(np.allclose(Knm[:2], Kmm))
    True
    """
    _check_kernel(kernel)
    kw = dict(gamma=gamma, degree=degree, coef0=coef0)
    Knm = _kernel_and_product(X, w, kernel, Z, gamma, degree, coef0, "auto", None, out=out)[0]
    return Knm, weighted_kernel(Z, w, kernel, **kw)


@jit(fast=True)
def _rbf_combine(X, KR, scale, A):
    """A[i, k] = scale[k] (x_ik^2 KR[i, 0] - 2 x_ik KR[i, 1 + k] + KR[i, 1 + p + k]) in one pass."""
    n, p = X.shape
    for i in range(n):
        kb = KR[i, 0]
        for k in range(p):
            x = X[i, k]
            A[i, k] = scale[k] * (x * x * kb - 2.0 * x * KR[i, 1 + k] + KR[i, 1 + p + k])


def lowrank_weight_gradient(X, Z, w, beta, Knm=None, kernel: str = "rbf", *, gamma: float = 1.0, degree: int = 2,
                            coef0: float = 1.0, block_rows: int = BLOCK_ROWS):
    r"""The matrix :math:`A_{ik} = \sum_j \beta_j\, \partial k_w(x_i, z_j)/\partial w_k` (n x p).

    Streamed over row blocks of X (see the module docstring for the closed
    forms); no n x m x p array and, beyond ``Knm`` (rbf), nothing larger
    than a block of rows.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Data (unweighted), one row per sample.
    Z : ndarray of shape (m, p)
        Landmarks (unweighted).
    w : ndarray of shape (p,)
        Feature weights.
    beta : ndarray of shape (m,)
        Coefficients of the landmarks.
    Knm : ndarray of shape (n, m), optional
        :math:`K_w(X, Z)` when already computed (the rbf form reads it;
        computed block by block when not given).  Unused by the linear and
        polynomial forms.
    kernel : {"linear", "rbf", "poly"}
        The kernel family.
    gamma, degree, coef0 : float, int, float
        RBF scale :math:`\gamma`; polynomial degree :math:`d` and offset :math:`c`.
    block_rows : int, default=BLOCK_ROWS
        Rows per block.

    Returns
    -------
    ndarray of shape (n, p)

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.weighted import weight_gradient_matrix
    >>> from numkfs.kernels.weighted_lowrank import lowrank_weight_gradient
    >>> rng = np.random.default_rng(0)
    >>> X, w, a = rng.normal(size=(6, 3)), np.array([1.0, 0.5, 0.2]), rng.normal(size=6)
    >>> bool(np.allclose(lowrank_weight_gradient(X, X, w, a), weight_gradient_matrix(X, w, a)))
    True
    """
    _check_kernel(kernel)
    X = np.ascontiguousarray(X, dtype=np.float64)
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    n, p = X.shape
    A = np.empty((n, p))
    if kernel == "linear":
        np.multiply(X, 2.0 * w * (Z.T @ beta), out=A)
        return A
    if kernel == "rbf":
        R = np.empty((Z.shape[0], 2 * p + 1))
        R[:, 0] = beta
        R[:, 1:p + 1] = beta[:, None] * Z
        R[:, p + 1:] = R[:, 1:p + 1] * Z
        scale = -2.0 * float(gamma) * w
    else:
        Zw = Z * w
        bZ = beta[:, None] * Z
    for s in range(0, n, int(block_rows)):
        blk = slice(s, min(n, s + int(block_rows)))
        if kernel == "rbf":
            Kb = Knm[blk] if Knm is not None else weighted_kernel(X[blk], w, "rbf", Y=Z, gamma=gamma)
            _rbf_combine(X[blk], Kb @ R, scale, A[blk])
        else:
            G = X[blk] * w @ Zw.T
            G += coef0
            if degree > 2:
                np.power(G, degree - 1, out=G)
            elif degree == 1:
                G.fill(1.0)
            GZ = G @ bZ
            GZ *= X[blk]
            GZ *= 2.0 * degree * w
            A[blk] = GZ
    return A


def lowrank_gram(Knm, d=None, *, block_rows: int = BLOCK_ROWS):
    r""":math:`K_{nm}^\top \mathrm{diag}(d)\,K_{nm}` (m x m, d >= 0) by symmetric rank-k updates over row blocks.

    Only the rows with :math:`d_i > 0` enter; each block is scaled by
    :math:`\sqrt{d}` into one b x m buffer (no n x m copy), read from a
    slice of ``Knm`` when every :math:`d_i > 0` (the squared loss) and
    gathered otherwise.  The rounding is that of the products
    :math:`\sqrt{d_i} K_{ij}` whichever way: the matrix does not depend on
    the route.

    Parameters
    ----------
    Knm : ndarray of shape (n, m)
        The cross kernel.
    d : ndarray of shape (n,), optional
        Non-negative row weights; default all ones.
    block_rows : int, default=BLOCK_ROWS
        Rows per block.

    Returns
    -------
    ndarray of shape (m, m)
        Symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.weighted_lowrank import lowrank_gram
    >>> K = np.arange(12.0).reshape(4, 3)
    >>> d = np.array([1.0, 0.0, 2.0, 0.5])
    >>> bool(np.allclose(lowrank_gram(K, d), K.T @ (d[:, None] * K)))
    True
    """
    n, m = Knm.shape
    G = np.zeros((m, m), order="F")
    d = None if d is None else np.asarray(d, dtype=np.float64)
    rows = None if d is None else np.flatnonzero(d > 0.0)
    every = rows is None or rows.size == n  # every row enters: slices instead of gathered copies
    count = n if rows is None else rows.size
    buf = None if d is None else np.empty((min(int(block_rows), count), m))
    for s in range(0, count, int(block_rows)):
        e = min(count, s + int(block_rows))
        if d is None:
            B = Knm[s:e]
        else:
            r = slice(s, e) if every else rows[s:e]
            B = np.multiply(Knm[r], np.sqrt(d[r])[:, None], out=buf[:e - s])
        # G += B^T B on the upper triangle (B.T is Fortran-ordered: no copy)
        G = scipy.linalg.blas.dsyrk(1.0, B.T, beta=1.0, c=G, trans=0, lower=0, overwrite_c=1)
    return np.triu(G) + np.triu(G, 1).T
