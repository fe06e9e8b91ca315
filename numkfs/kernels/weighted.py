r"""Feature-weighted kernels of KNIFE and their weight derivatives.

The weights multiply the data, so they enter the kernels squared
(the KNIFE user guide (``docs/guide/knife.md``), the KNIFE paper §2.1):

.. math::

    k_w^{\mathrm{lin}}(x, x') &= \textstyle\sum_j w_j^2 x_j x'_j, \\
    k_w^{\mathrm{rbf}}(x, x') &= \exp\bigl(-\gamma \textstyle\sum_j w_j^2 (x_j - x'_j)^2\bigr), \\
    k_w^{\mathrm{poly}}(x, x') &= \bigl(\textstyle\sum_j w_j^2 x_j x'_j + c\bigr)^d .

KNIFE's weight step needs, for coefficients :math:`\alpha`, the
:math:`n \times p` matrix

.. math::

    A_{ik} = \sum_{j} \alpha_j \, \frac{\partial k_w(x_i, x_j)}{\partial w_k},

(so that :math:`\partial (K_w\alpha)_i / \partial w_k = A_{ik}` and
:math:`\partial(\alpha^\top K_w \alpha)/\partial w_k = (\alpha^\top A)_k`),
computed here without the :math:`n \times n \times p` tensor of kernel
derivatives:

* linear: :math:`A_{ik} = 2 w_k x_{ik} (X^\top\alpha)_k` (O(np));
* rbf: :math:`A_{ik} = -2\gamma w_k \bigl[x_{ik}^2 (K\alpha)_i
  - 2 x_{ik} (K(\alpha\circ x_k))_i + (K(\alpha\circ x_k^2))_i\bigr]`, i.e.
  one GEMM of :math:`K` with :math:`[\alpha, \alpha\circ X, \alpha\circ X^2]`;
* poly: :math:`A_{ik} = 2 d\, w_k x_{ik} \bigl(G (\alpha\circ X)\bigr)_{ik}`
  with :math:`G = (X_w X_w^\top + c)^{\circ (d-1)}`, one GEMM.

Every kernel and every :math:`A` exists twice: a BLAS form (GEMM, then an
element-wise map) and a Numba loop form (``prange`` over rows, inner loops
over the contiguous sample axis so that they vectorise).  ``method="auto"``
picks the faster one per case, as measured single-threaded (as the fits
run up to n = 2000) by ``benchmarks/knife_speed.py``: the Numba loops win for
the rbf kernel with few active features (at most
:data:`AUTO_NUMBA_MAX_FEATURES`: a GEMM with a short inner dimension is
inefficient and the loops need no n x n temporaries), BLAS wins for rbf
with more features and for the polynomial and linear kernels.  Memory is
O(n² + np) in both forms.

Features whose weight is exactly zero are skipped: they contribute nothing
to the kernel and their column of :math:`A` is zero (``∂k/∂w_k ∝ w_k``),
which is what makes zero weights "sticky" in KNIFE.

Samples whose coefficient :math:`\alpha_j` is exactly zero are skipped in
:math:`A` (they contribute nothing to its sums): for the hinge losses α is
zero outside the margin, usually most of the rows.
"""
from __future__ import annotations

import numpy as np

from .._jit import jit, pjit, prange, serial_twin
from .._threads import parallel_or_serial
from ._distances import rbf_by_gemm
from .fastexp import fast_exp_kernel

__all__ = [
    "KERNELS",
    "AUTO_NUMBA_MAX_FEATURES",
    "weighted_kernel",
    "weight_gradient_matrix",
    "weight_gradient_product",
    "kernel_weight_derivative",
    "weighted_kernel_product",
    "check_poly_kernel",
]

#: Kernel names understood by this module.
KERNELS = ("linear", "rbf", "poly")

#: ``method="auto"`` uses the Numba loops for the rbf kernel with at most this many active features.
AUTO_NUMBA_MAX_FEATURES = 32


def check_poly_kernel(X, degree: int, coef0: float, *, caller: str = "numkfs") -> None:
    r"""Refuse a polynomial kernel whose entries can overflow on ``X``.

    With weights in [0, 1], Cauchy-Schwarz bounds every entry of
    :math:`(\sum_j w_j^2 x_j x'_j + c)^d` by :math:`(B + |c|)^d`,
    :math:`B = \max_i \|x_i\|^2`; the fit multiplies entries together
    (:math:`K\alpha`, :math:`K^2` in its Newton steps), so a bound beyond
    :data:`~numkfs._validation.MAX_MAGNITUDE` would overflow in floating
    point, and the fit would end in NaN.  The bound is compared in
    logarithms, so that it cannot overflow itself.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The data the kernel is evaluated on (finite).
    degree : int
        The polynomial degree :math:`d`.
    coef0 : float
        The offset :math:`c`.
    caller : str
        Named in the message.

    Raises
    ------
    ValueError
        Naming ``coef0`` and ``degree`` and the bound they reach.
    """
    from .._validation import MAX_MAGNITUDE

    base = float(np.max(np.einsum("ij,ij->i", X, X))) if X.size else 0.0
    base += abs(float(coef0))
    if base <= 1.0:
        return
    log10_bound = int(degree) * np.log10(base)
    if log10_bound > np.log10(MAX_MAGNITUDE):
        raise ValueError(f"{caller}: the 'poly' kernel (x.x' + coef0)^degree reaches about 1e{log10_bound:.0f} on X "
                         f"with coef0={coef0!r} and degree={degree!r}; beyond {MAX_MAGNITUDE:.0e} its products "
                         "overflow in floating point. Give a smaller coef0 or degree (or rescale X).")


def _check_kernel(kernel: str) -> None:
    if kernel not in KERNELS:
        raise ValueError(f"Unknown kernel {kernel!r}; choose one of {list(KERNELS)}.")


def _check_method(method: str) -> None:
    if method not in ("auto", "blas", "numba"):
        raise ValueError(f"method must be 'auto', 'blas' or 'numba'; got {method!r}.")


def _choose(method: str, kind: int, n_active: int) -> str:
    if method != "auto":
        return method
    return "numba" if kind == 1 and n_active <= AUTO_NUMBA_MAX_FEATURES else "blas"


def _active(X, w):
    """Columns with a non-zero weight and the data scaled by the weights."""
    w = np.asarray(w, dtype=np.float64)
    act = np.flatnonzero(w != 0.0)
    if act.size == X.shape[1]:
        return act, X, w
    return act, X[:, act], w[act]


# --------------------------------------------------------------------------
# Numba loop forms


# One function per kernel family (rbf; linear and poly), each computing in
# place into arrays the caller allocates: a fit compiles only the family it
# uses, and no NumPy allocation, whose Numba implementation compiles once per
# signature and set of flags (first-use compile time).


@pjit(fast=True)
def _rbf_kernel_loops(Xw, Yw, gamma, symmetric, alpha, K, Ka):
    """The rbf kernel between rows of Xw and Yw (already multiplied by the
    weights) into ``K`` (n x m), and ``K @ alpha`` into ``Ka`` from each row
    while it is in cache (``Ka`` of size 0: not computed).  Yw is given
    transposed (p x m) so that the inner loop runs over contiguous columns;
    each row of K accumulates its squared distances before the exponential.
    """
    n, p = Xw.shape
    m = Yw.shape[1]
    with_product = Ka.size == n
    for i in prange(n):
        Ki = K[i]
        for j in range(m):
            Ki[j] = 0.0
        for k in range(p):
            xik = Xw[i, k]
            for j in range(m):
                d = xik - Yw[k, j]
                Ki[j] += d * d
        for j in range(m):
            Ki[j] = fast_exp_kernel(-gamma * Ki[j])
        if symmetric:
            Ki[i] = 1.0
        if with_product:
            s = 0.0
            for j in range(m):
                s += Ki[j] * alpha[j]
            Ka[i] = s


@pjit(fast=True)
def _dot_kernel_loops(Xw, Yw, poly, degree, coef0, alpha, K, Ka):
    """As :func:`_rbf_kernel_loops` for the linear kernel (``poly`` false) and
    the polynomial one ``(x·y + coef0) ** degree``."""
    n, p = Xw.shape
    m = Yw.shape[1]
    with_product = Ka.size == n
    for i in prange(n):
        Ki = K[i]
        for j in range(m):
            Ki[j] = 0.0
        for k in range(p):
            xik = Xw[i, k]
            for j in range(m):
                Ki[j] += xik * Yw[k, j]
        if poly:
            for j in range(m):
                Ki[j] = (Ki[j] + coef0) ** degree
        if with_product:
            s = 0.0
            for j in range(m):
                s += Ki[j] * alpha[j]
            Ka[i] = s


@pjit(fast=True)
def _rbf_gradient_loops(X, XTJ, J, aJ, w, K, gamma, A):
    """A[i, k] = sum_j alpha_j dk(x_i, x_j)/dw_k for the rbf kernel by loops
    (no n x n x p array), into ``A`` (n x p).

    Only the samples j with alpha_j != 0 enter (``J``, ``aJ = alpha[J]``,
    ``XTJ = X[J].T`` contiguous): for the hinge losses α is zero outside the
    margin, so the loops run over |J| columns instead of n.  X: n x p raw
    data, K the kernel.
    """
    n, p = X.shape
    m = J.size
    for i in prange(n):
        c = np.empty(m)
        for jj in range(m):
            c[jj] = aJ[jj] * K[i, J[jj]]
        for k in range(p):
            xik = X[i, k]
            acc = 0.0
            for jj in range(m):
                d = xik - XTJ[k, jj]
                acc += c[jj] * d * d
            A[i, k] = -2.0 * gamma * w[k] * acc


@pjit(fast=True)
def _dot_gradient_loops(X, XTJ, J, aJ, w, G, poly, degree, A):
    """As :func:`_rbf_gradient_loops` for the linear kernel (``poly`` false)
    and the polynomial one, G the (d-1)-th power of its base (unused for
    the linear kernel)."""
    n, p = X.shape
    m = J.size
    if not poly:
        for k in range(p):
            acc = 0.0
            for jj in range(m):
                acc += aJ[jj] * XTJ[k, jj]
            for i in range(n):
                A[i, k] = 2.0 * w[k] * X[i, k] * acc
        return
    for i in prange(n):
        c = np.empty(m)
        for jj in range(m):
            c[jj] = aJ[jj] * G[i, J[jj]]
        for k in range(p):
            acc = 0.0
            for jj in range(m):
                acc += c[jj] * XTJ[k, jj]
            A[i, k] = 2.0 * degree * w[k] * X[i, k] * acc


# serial twins: problems below _threads.PARALLEL_MIN_ROWS (every KNIFE fit run on one thread)
# use these; they compile in a fraction of the parallel form's time and run faster on one thread
_rbf_kernel_loops_serial = serial_twin(_rbf_kernel_loops, fast=True)
_dot_kernel_loops_serial = serial_twin(_dot_kernel_loops, fast=True)
_rbf_gradient_loops_serial = serial_twin(_rbf_gradient_loops, fast=True)
_dot_gradient_loops_serial = serial_twin(_dot_gradient_loops, fast=True)


# --------------------------------------------------------------------------
# BLAS forms


def _kernel_blas(Xw, Yw, kind, gamma, degree, coef0, symmetric):
    if kind == 1:
        return rbf_by_gemm(Xw, Yw, gamma, symmetric)
    S = Xw @ Xw.T if symmetric else Xw @ Yw.T
    if kind == 0:
        return S
    S += coef0
    if degree == 2:
        np.multiply(S, S, out=S)
        return S
    return np.power(S, degree, out=S)


def _gradient_blas(X, w, alpha, J, K, G, kind, gamma, degree):
    """A by GEMMs; ``J`` the samples with α_j != 0 (the rbf product runs over them only)."""
    n, p = X.shape
    if kind == 0:
        return 2.0 * (X * (w * (X.T @ alpha)))
    if kind == 1:
        XJ = X[J]  # R is zero on the rows with α_j = 0
        R = np.empty((J.size, 2 * p + 1))
        R[:, 0] = alpha[J]
        aX = alpha[J, None] * XJ
        R[:, 1:p + 1] = aX
        R[:, p + 1:] = aX * XJ
        KR = K @ R if J.size == n else K[J].T @ R  # K symmetric: K[:, J] = K[J].T
        Ka = KR[:, :1]
        A = X * X
        A *= Ka
        A -= 2.0 * X * KR[:, 1:p + 1]
        A += KR[:, p + 1:]
        A *= -2.0 * gamma * w
        return A
    GaX = G @ (alpha[:, None] * X)
    GaX *= X
    GaX *= 2.0 * degree * w
    return GaX


_KIND = {"linear": 0, "rbf": 1, "poly": 2}


# --------------------------------------------------------------------------
# public functions


def weighted_kernel(
    X,
    w,
    kernel: str = "rbf",
    *,
    Y=None,
    gamma: float = 1.0,
    degree: int = 2,
    coef0: float = 1.0,
    method: str = "auto",
):
    r"""The feature-weighted kernel matrix :math:`K_w(X, Y)`.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Data, one row per sample and one column per feature.
    w : ndarray of shape (p,)
        Feature weights; they multiply the data (enter the kernel squared).
    kernel : {"linear", "rbf", "poly"}
    Y : ndarray of shape (m, p), optional
        Second set of points (e.g. training points, for prediction); default
        ``X`` (the symmetric training kernel).
    gamma, degree, coef0 : float, int, float
        RBF scale :math:`\gamma`; polynomial degree :math:`d` and offset :math:`c`.
    method : {"auto", "blas", "numba"}

    Returns
    -------
    ndarray of shape (n, m)

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.weighted import weighted_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 3.0]])
    >>> K = weighted_kernel(X, np.array([1.0, 0.0]), "rbf", gamma=0.5)
    >>> bool(np.isclose(K[0, 1], np.exp(-0.5)))
    True
    """
    return _kernel_and_product(X, w, kernel, Y, gamma, degree, coef0, method, None)[0]


def weighted_kernel_product(
    X,
    w,
    alpha,
    kernel: str = "rbf",
    *,
    gamma: float = 1.0,
    degree: int = 2,
    coef0: float = 1.0,
    method: str = "auto",
):
    r"""The symmetric kernel :math:`K_w(X, X)` and :math:`K_w \alpha` in one pass.

    KNIFE evaluates its objective at every new kernel, which needs
    :math:`K_w\alpha`; the Numba loops take each row's product while the
    row is in cache instead of reading the n x n matrix once more.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Data, one row per sample and one column per feature.
    w : ndarray of shape (p,)
        Feature weights, as in :func:`weighted_kernel`.
    alpha : ndarray of shape (n,)
        The vector to multiply.
    kernel : {"linear", "rbf", "poly"}
        The kernel, as in :func:`weighted_kernel`.
    gamma, degree, coef0 : float, int, float
        RBF scale :math:`\gamma`; polynomial degree :math:`d` and offset :math:`c`.
    method : {"auto", "blas", "numba"}
        As in :func:`weighted_kernel`.

    Returns
    -------
    K : ndarray of shape (n, n)
        ``weighted_kernel(X, w, kernel, ...)``.
    Ka : ndarray of shape (n,)
        ``K @ alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.weighted import weighted_kernel_product
    >>> X = np.array([[0.0, 1.0], [1.0, 3.0]])
    >>> K, Ka = weighted_kernel_product(X, np.array([1.0, 0.5]), np.array([1.0, -1.0]), gamma=0.5)
    >>> bool(np.allclose(Ka, K @ np.array([1.0, -1.0])))
    True
    """
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    if alpha.shape != (np.shape(X)[0],):
        raise ValueError(f"alpha must have shape ({np.shape(X)[0]},), one value per row of X; got {alpha.shape}.")
    return _kernel_and_product(X, w, kernel, None, gamma, degree, coef0, method, alpha)


def _kernel_and_product(X, w, kernel, Y, gamma, degree, coef0, method, alpha, out=None):
    """``(K, K @ alpha)``; ``alpha`` None: ``(K, None)``.  ``out``: a C-contiguous float64 array of
    K's shape that the Numba loops write K into (the BLAS forms allocate their own)."""
    _check_kernel(kernel)
    _check_method(method)
    X = np.ascontiguousarray(X, dtype=np.float64)
    symmetric = Y is None
    Y = X if symmetric else np.ascontiguousarray(Y, dtype=np.float64)
    act, Xa, wa = _active(X, w)
    Ya = Xa if symmetric else (Y if act.size == Y.shape[1] else Y[:, act])
    n, m = X.shape[0], Y.shape[0]
    kind = _KIND[kernel]
    if act.size == 0:  # every weight is zero: the kernel of constant inputs
        # the linear kernel's 0, the rbf's 1, the polynomial's c^d (coef0 is read by the polynomial only)
        value = float(coef0) ** int(degree) if kind == 2 else float(kind)
        K = np.full((n, m), value)
        return K, (None if alpha is None else K @ alpha)
    Xw = np.multiply(Xa, wa, order="C")  # one layout (Xa may be a column selection): the loops compile once
    Yw = Xw if symmetric else Ya * wa
    if _choose(method, kind, act.size) == "numba":
        usable = (out is not None and out.shape == (n, m) and out.dtype == np.float64
                  and out.flags.c_contiguous and out.flags.writeable)
        K = out if usable else np.empty((n, m))
        Ka = np.empty(0 if alpha is None else n)  # size 0: no product
        a = Ka if alpha is None else alpha
        YwT = np.ascontiguousarray(Yw.T)
        if kind == 1:
            loops = parallel_or_serial(_rbf_kernel_loops, _rbf_kernel_loops_serial, n)
            loops(Xw, YwT, float(gamma), symmetric, a, K, Ka)
        else:
            loops = parallel_or_serial(_dot_kernel_loops, _dot_kernel_loops_serial, n)
            loops(Xw, YwT, kind == 2, int(degree), float(coef0), a, K, Ka)
        return K, (None if alpha is None else Ka)
    K = _kernel_blas(Xw, Yw, kind, float(gamma), int(degree), float(coef0), symmetric)
    return K, (None if alpha is None else K @ alpha)


def weight_gradient_matrix(
    X,
    w,
    alpha,
    K=None,
    kernel: str = "rbf",
    *,
    gamma: float = 1.0,
    degree: int = 2,
    coef0: float = 1.0,
    method: str = "auto",
):
    r"""The KNIFE matrix :math:`A_{ik} = \sum_j \alpha_j\, \partial k_w(x_i, x_j)/\partial w_k`.

    Computed without any :math:`n \times n \times p` array (see the module
    docstring for the closed forms).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Training data (unweighted).
    w : ndarray of shape (p,)
    alpha : ndarray of shape (n,)
    K : ndarray of shape (n, n), optional
        The weighted kernel :math:`K_w(X, X)` when already computed (rbf
        needs it; for poly it is not used, the (d-1)-th power of the base is
        recomputed).
    kernel, gamma, degree, coef0, method
        As in :func:`weighted_kernel`.

    Returns
    -------
    ndarray of shape (n, p)
        Columns of zero-weight features are zero.
    """
    _check_kernel(kernel)
    _check_method(method)
    X = np.ascontiguousarray(X, dtype=np.float64)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    n, p = X.shape
    act, Xa, wa = _active(X, w)
    A = np.zeros((n, p))
    if act.size == 0:
        return A
    Xa = np.ascontiguousarray(Xa)
    kind = _KIND[kernel]
    G = None
    if kind == 1 and K is None:
        K = weighted_kernel(Xa, wa, "rbf", gamma=gamma, method=method)
    if kind == 2:
        Xw = Xa * wa
        G = Xw @ Xw.T
        G += coef0
        if degree == 1:
            G = np.ones_like(G)
        elif degree > 2:
            np.power(G, degree - 1, out=G)
    use = _choose(method, kind, act.size)
    J = np.flatnonzero(alpha)  # the samples that enter A (α_j = 0: no contribution)
    if use == "numba":
        Aa = np.empty((n, act.size))
        XTJ, aJ = np.ascontiguousarray(Xa[J].T), np.ascontiguousarray(alpha[J])
        if kind == 1:
            loops = parallel_or_serial(_rbf_gradient_loops, _rbf_gradient_loops_serial, n)
            loops(Xa, XTJ, J, aJ, wa, np.ascontiguousarray(K), float(gamma), Aa)
        else:
            loops = parallel_or_serial(_dot_gradient_loops, _dot_gradient_loops_serial, n)
            loops(Xa, XTJ, J, aJ, wa, np.empty((0, 0)) if G is None else G, kind == 2, int(degree), Aa)
    else:
        Aa = _gradient_blas(Xa, wa, alpha, J, K, G, kind, float(gamma), int(degree))
    if act.size == p:
        return Aa
    A[:, act] = Aa
    return A


def weight_gradient_product(X, w, alpha, v, K=None, kernel: str = "rbf", *, gamma: float = 1.0,
                            degree: int = 2, coef0: float = 1.0, method: str = "auto"):
    r""":math:`A^\top v` for the KNIFE matrix :math:`A` of :func:`weight_gradient_matrix`, without forming A
    where A would be formed by BLAS.

    The gradient of a function of :math:`K_w\alpha` in w is :math:`A^\top v`
    (v the function's gradient in :math:`K_w\alpha`); KNIFE's L-BFGS-B finish
    needs only that, at every evaluation.  For the rbf kernel the product is

    .. math::

        (A^\top v)_k = -2\gamma w_k \bigl[(v \circ K\alpha)^\top x_k^2
        - 2 \textstyle\sum_j \alpha_j x_{jk} (K (v \circ x_k))_j
        + (\alpha \circ K v)^\top x_k^2\bigr],

    one GEMM of K's rows with α ≠ 0 and columns with v ≠ 0 against
    :math:`v \circ X` (p columns instead of the 2p + 1 of A).  Elsewhere
    (the Numba loop form, the linear and polynomial kernels) it is
    ``weight_gradient_matrix(...).T @ v``.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Training data (unweighted).
    w : ndarray of shape (p,)
    alpha : ndarray of shape (n,)
    v : ndarray of shape (n,)
    K : ndarray of shape (n, n), optional
        As in :func:`weight_gradient_matrix`.
    kernel, gamma, degree, coef0, method
        As in :func:`weighted_kernel`.

    Returns
    -------
    ndarray of shape (p,)
        Zero for the zero-weight features.

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.weighted import weight_gradient_matrix, weight_gradient_product
    >>> rng = np.random.default_rng(0)
    >>> X, w = rng.standard_normal((20, 40)), rng.uniform(0, 1, 40)
    >>> alpha, v = rng.standard_normal(20), rng.standard_normal(20)
    >>> A = weight_gradient_matrix(X, w, alpha, gamma=0.1)
    >>> bool(np.allclose(weight_gradient_product(X, w, alpha, v, gamma=0.1), A.T @ v))
    True
    """
    _check_kernel(kernel)
    _check_method(method)
    X = np.ascontiguousarray(X, dtype=np.float64)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    kind = _KIND[kernel]
    act, Xa, wa = _active(X, w)
    if kind != 1 or act.size == 0 or _choose(method, kind, act.size) != "blas":
        return weight_gradient_matrix(X, w, alpha, K, kernel, gamma=gamma, degree=degree, coef0=coef0,
                                      method=method).T @ v
    if K is None:
        K = weighted_kernel(Xa, wa, "rbf", gamma=gamma, method=method)
    J, V = np.flatnonzero(alpha), np.flatnonzero(v)  # the rows and columns of K that enter the sums
    X2 = Xa * Xa
    Ka = K[:, J] @ alpha[J]
    Kv = K[:, V] @ v[V]
    inner = (v * Ka + alpha * Kv) @ X2
    KvX = K[np.ix_(J, V)] @ (v[V, None] * Xa[V])  # (K (v ∘ x_k))_j for the rows j with α_j != 0
    inner -= 2.0 * np.einsum("jk,jk->k", alpha[J, None] * Xa[J], KvX)
    out = np.zeros(X.shape[1])
    out[act] = -2.0 * gamma * wa * inner
    return out


def kernel_weight_derivative(X, w, k: int, kernel: str = "rbf", *, gamma: float = 1.0,
                             degree: int = 2, coef0: float = 1.0):
    r""":math:`\partial K_w / \partial w_k` as an n x n matrix (one feature).

    For checks and small problems only; KNIFE itself never forms it (it uses
    :func:`weight_gradient_matrix`).
    """
    _check_kernel(kernel)
    X = np.asarray(X, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    xk = X[:, k]
    if kernel == "linear":
        return 2.0 * w[k] * np.outer(xk, xk)
    if kernel == "rbf":
        K = weighted_kernel(X, w, "rbf", gamma=gamma, method="blas")
        return -2.0 * gamma * w[k] * (xk[:, None] - xk[None, :]) ** 2 * K
    Xw = X * w
    base = Xw @ Xw.T + coef0
    return 2.0 * degree * w[k] * np.outer(xk, xk) * base ** (degree - 1)
