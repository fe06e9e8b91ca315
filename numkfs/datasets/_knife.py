r"""The simulations of the KNIFE paper (Allen, §4.1; the KNIFE user guide (``docs/guide/knife.md``)).

* :func:`make_sinusoid`: :math:`x \sim N(0, I_p)`,
  :math:`y = \sin(x)^\top\beta + \varepsilon`, :math:`\beta = (6, -4, 3, 2,
  -2, 0, \dots, 0)`, :math:`\varepsilon \sim N(0, \sigma^2)`, σ = 1.
* :func:`make_orange` ("skin of the orange", Hastie et al. 2009 §12.3.4):
  class −1 has 4 standard normal features, class +1 the same conditioned on
  :math:`9 \le \sum_{j\le 4} x_j^2 \le 16` (rejection sampling), plus
  independent standard normal noise features; equal class sizes.  The
  paper quotes a Bayes error of 0.0611, which is
  :math:`P(\chi^2_4 > 9) = 5.5 e^{-4.5}`, the chance that a class −1 point
  lies outside radius 3; with equal priors the Bayes error of this model is
  half of :math:`P(9 \le \chi^2_4 \le 16)`, about 0.029.  The benchmark
  prints both.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_random_state

__all__ = ["make_sinusoid", "make_orange", "SINUSOID_BETA"]

#: True coefficients of the sinusoid simulation (first five features).
SINUSOID_BETA = np.array([6.0, -4.0, 3.0, 2.0, -2.0])


def make_sinusoid(n_samples: int = 100, n_features: int = 10, *, noise: float = 1.0, random_state=None):
    r"""Sinusoidal regression of the KNIFE paper (Table 1).

    Parameters
    ----------
    n_samples : int, default=100
        Number of rows.
    n_features : int, >= 5
        The first five features are true, the rest noise.
    noise : float
        Standard deviation of the Gaussian noise.
    random_state : int, Generator or None
        Seed or generator for everything random; an int makes the result reproducible.

    Returns
    -------
    X : ndarray (n_samples, n_features)
    y : ndarray (n_samples,)
    true_support : ndarray of bool (n_features,)

    Examples
    --------
    >>> from numkfs.datasets import make_sinusoid
    >>> X, y, s = make_sinusoid(n_samples=5, random_state=0)
    >>> X.shape, y.shape, int(s.sum())
    ((5, 10), (5,), 5)
    """
    if n_features < 5:
        raise ValueError(f"make_sinusoid needs n_features >= 5 (five true features); got {n_features}.")
    if n_samples < 1:
        raise ValueError(f"make_sinusoid: n_samples must be >= 1; got {n_samples}.")
    rng = check_random_state(random_state)
    beta = np.zeros(n_features)
    beta[:5] = SINUSOID_BETA
    X = rng.standard_normal((n_samples, n_features))
    y = np.sin(X) @ beta + noise * rng.standard_normal(n_samples)
    return X, y, beta != 0


def make_orange(n_samples: int = 100, n_noise: int = 6, *, random_state=None):
    r"""Skin-of-the-orange classification of the KNIFE paper (Table 2).

    Parameters
    ----------
    n_samples : int
        Total; half in each class (class +1 gets the extra one when odd).
    n_noise : int
        Standard normal noise features appended to the 4 true ones.
    random_state : int, Generator or None
        Seed or generator for everything random; an int makes the result reproducible.

    Returns
    -------
    X : ndarray (n_samples, 4 + n_noise)
    y : ndarray (n_samples,) of {-1, +1}
    true_support : ndarray of bool

    Examples
    --------
    >>> from numkfs.datasets import make_orange
    >>> X, y, s = make_orange(n_samples=20, random_state=0)
    >>> r2 = (X[y == 1, :4] ** 2).sum(axis=1)
    >>> bool(np.all((r2 >= 9) & (r2 <= 16)))
    True
    """
    if n_samples < 2:
        raise ValueError(f"make_orange: n_samples must be >= 2; got {n_samples}.")
    if n_noise < 0:
        raise ValueError(f"make_orange: n_noise must be >= 0; got {n_noise}.")
    rng = check_random_state(random_state)
    n_neg = n_samples // 2
    n_pos = n_samples - n_neg
    neg = rng.standard_normal((n_neg, 4))
    pos = np.empty((0, 4))
    while pos.shape[0] < n_pos:
        cand = rng.standard_normal((max(64, 20 * (n_pos - pos.shape[0])), 4))
        r2 = (cand ** 2).sum(axis=1)
        pos = np.vstack([pos, cand[(r2 >= 9.0) & (r2 <= 16.0)]])
    pos = pos[:n_pos]
    X = np.vstack([neg, pos])
    y = np.concatenate([-np.ones(n_neg), np.ones(n_pos)])
    X = np.hstack([X, rng.standard_normal((n_samples, n_noise))])
    order = rng.permutation(n_samples)
    support = np.zeros(4 + n_noise, dtype=bool)
    support[:4] = True
    return X[order], y[order], support
