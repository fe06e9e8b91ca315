r"""Per-feature (additive) kernels of COSSO, evaluated without n x n x p arrays.

An additive model :math:`f(x) = b + \sum_j f_j(x_j)` uses one kernel per
feature, :math:`K_j(x, x') = k(x_j, x'_j)`.  COSSO needs only two
contractions of the p kernels, both computed here by Numba loops that
recompute :math:`k(x_{aj}, x'_{ij})` on the fly:

* the weighted sum :math:`\sum_j \theta_j K_j` (an m x n matrix,
  :func:`additive_gram`), for the kernel-ridge step and for prediction;
* the n x p matrix :math:`G[:, j] = K_j c` (:func:`additive_kc`), for the
  garrote step and for the component functions
  :math:`f_j = \theta_j K_j c`.

Memory is O(mn + mp), never O(mnp).  Two one-dimensional kernels:

``"sobolev"``
    The reproducing kernel of the second-order Sobolev space on [0, 1] with
    the constants removed (Wahba 1990; Lin & Zhang 2006, COSSO), on inputs
    scaled to [0, 1]:

    .. math::

        k(s, t) = k_1(s) k_1(t) + k_2(s) k_2(t) - k_4(|s - t|),

    with :math:`k_1(x) = x - 1/2`, :math:`k_2(x) = (k_1(x)^2 - 1/12)/2` and
    :math:`k_4(x) = (k_1(x)^4 - k_1(x)^2/2 + 7/240)/24`.  Functions in this
    space are cubic smoothing splines; the constant part is the intercept
    of the model, which is not penalised.
``"rbf"``
    :math:`k(s, t) = \exp(-\gamma (s - t)^2)` per feature.

The loops are serial and use ``math.exp`` (libm): a parallel region costs
more in thread start-up and waiting on a loaded core than the loops' work,
so no ``prange`` here; at COSSO's sizes the n x n
Cholesky of the ridge step dominates anyway, and the CV folds can run in
parallel (``n_jobs``).
"""
from __future__ import annotations

import math

import numpy as np

from .._jit import jit
from .._validation import check_memory

__all__ = [
    "ADDITIVE_KERNELS",
    "sobolev_kernel",
    "feature_kernel",
    "additive_gram",
    "additive_kc",
]

#: Names of the one-dimensional kernels and their codes in the Numba loops.
ADDITIVE_KERNELS = {"sobolev": 0, "rbf": 1}


@jit
def _k1(x):
    return x - 0.5


@jit
def _k2(x):
    a = x - 0.5
    return 0.5 * (a * a - 1.0 / 12.0)


@jit
def _k4(x):
    a = x - 0.5
    a2 = a * a
    return (a2 * a2 - 0.5 * a2 + 7.0 / 240.0) / 24.0


@jit
def _sobolev(s, t):
    return _k1(s) * _k1(t) + _k2(s) * _k2(t) - _k4(abs(s - t))


@jit
def _k(code, s, t, gamma):
    if code == 0:
        return _sobolev(s, t)
    d = s - t
    return math.exp(-gamma * d * d)


@jit
def _additive_gram(X1, X2, theta, code, gamma, out):
    m, p = X1.shape
    n = X2.shape[0]
    for a in range(m):
        for i in range(n):
            s = 0.0
            for j in range(p):
                tj = theta[j]
                if tj != 0.0:
                    s += tj * _k(code, X1[a, j], X2[i, j], gamma)
            out[a, i] = s


@jit
def _additive_kc(X1, X2, c, code, gamma, out):
    m, p = X1.shape
    n = X2.shape[0]
    for a in range(m):
        for j in range(p):
            out[a, j] = 0.0
        for i in range(n):
            ci = c[i]
            if ci != 0.0:
                for j in range(p):
                    out[a, j] += _k(code, X1[a, j], X2[i, j], gamma) * ci


@jit
def _feature_kernel(x1, x2, code, gamma, out):
    for a in range(x1.shape[0]):
        for i in range(x2.shape[0]):
            out[a, i] = _k(code, x1[a], x2[i], gamma)


def _code(kernel: str) -> int:
    try:
        return ADDITIVE_KERNELS[kernel]
    except KeyError:
        raise ValueError(
            f"Unknown additive kernel {kernel!r}; choose one of {sorted(ADDITIVE_KERNELS)}."
        ) from None


def _pair(X1, X2):
    X1 = np.ascontiguousarray(X1, dtype=np.float64)
    X2 = X1 if X2 is None else np.ascontiguousarray(X2, dtype=np.float64)
    if X1.ndim != 2 or X2.ndim != 2 or X1.shape[1] != X2.shape[1]:
        raise ValueError(
            f"additive kernels need two 2-D arrays with the same number of columns; got shapes "
            f"{X1.shape} and {X2.shape}."
        )
    return X1, X2


def sobolev_kernel(s, t) -> np.ndarray:
    """The second-order Sobolev kernel (constants removed) on [0, 1], element-wise.

    >>> float(sobolev_kernel(0.5, 0.5))   # k2(1/2)^2 - k4(0) = 1/576 + 1/720
    0.003125
    """
    s, t = np.broadcast_arrays(np.asarray(s, dtype=float), np.asarray(t, dtype=float))
    a, b = s - 0.5, t - 0.5
    d = np.abs(s - t) - 0.5
    k2 = lambda u: 0.5 * (u * u - 1.0 / 12.0)  # noqa: E731
    k4 = (d**4 - 0.5 * d**2 + 7.0 / 240.0) / 24.0
    return a * b + k2(a) * k2(b) - k4


def feature_kernel(x1, x2=None, *, kernel: str = "sobolev", gamma: float = 1.0) -> np.ndarray:
    """The kernel matrix ``K_j`` of a single feature (``x1``, ``x2`` are 1-D)."""
    x1 = np.ascontiguousarray(x1, dtype=np.float64).ravel()
    x2 = x1 if x2 is None else np.ascontiguousarray(x2, dtype=np.float64).ravel()
    check_memory(8.0 * x1.shape[0] * x2.shape[0], f"The {x1.shape[0]} x {x2.shape[0]} kernel matrix")
    out = np.empty((x1.shape[0], x2.shape[0]))
    _feature_kernel(x1, x2, _code(kernel), float(gamma), out)
    return out


def additive_gram(X1, X2=None, theta=None, *, kernel: str = "sobolev", gamma: float = 1.0) -> np.ndarray:
    r"""``Σ_j θ_j K_j(X1, X2)``, an m x n matrix (features with θ_j = 0 cost nothing).

    Parameters
    ----------
    X1 : ndarray of shape (m, p)
    X2 : ndarray of shape (n, p), optional
        Defaults to ``X1``.
    theta : ndarray of shape (p,), optional
        Feature weights (default: all ones).
    kernel : {"sobolev", "rbf"}
    gamma : float
        Width of the rbf kernel (ignored by the Sobolev kernel).
    """
    X1, X2 = _pair(X1, X2)
    p = X1.shape[1]
    theta = np.ones(p) if theta is None else np.ascontiguousarray(theta, dtype=np.float64).ravel()
    if theta.shape[0] != p:
        raise ValueError(f"theta has {theta.shape[0]} entries for {p} features.")
    check_memory(8.0 * X1.shape[0] * X2.shape[0], f"The {X1.shape[0]} x {X2.shape[0]} additive kernel matrix")
    out = np.empty((X1.shape[0], X2.shape[0]))
    _additive_gram(X1, X2, theta, _code(kernel), float(gamma), out)
    return out


def additive_kc(X1, X2, c, *, kernel: str = "sobolev", gamma: float = 1.0) -> np.ndarray:
    r"""The m x p matrix ``G[a, j] = Σ_i k(X1[a, j], X2[i, j]) c_i`` (``G[:, j] = K_j c``).

    With ``X1 = X2`` this is the matrix of COSSO's garrote step; with new
    points ``X1`` it gives the unweighted component functions, so that
    ``G @ theta`` is the fitted additive function without intercept.
    """
    X1, X2 = _pair(X1, X2)
    c = np.ascontiguousarray(c, dtype=np.float64).ravel()
    if c.shape[0] != X2.shape[0]:
        raise ValueError(f"c has {c.shape[0]} entries for {X2.shape[0]} training points.")
    out = np.empty((X1.shape[0], X1.shape[1]))
    _additive_kc(X1, X2, c, _code(kernel), float(gamma), out)
    return out
