"""Friedman's three regression problems with extra irrelevant features, as
in the L1KR paper's Table 1 (Li & Sminchisescu, 2010).

The SNR is a variance ratio, ``var(f) / σ²``, with ``var(f)`` taken on the
clean responses of the sample drawn: that is the reading under which the
paper's Friedman #1 numbers make sense (test MSE 3.57 against noisy targets
of noise variance 2.4).
"""
from __future__ import annotations

import numpy as np

from .._validation import check_random_state

__all__ = ["make_friedman_noise"]


def make_friedman_noise(which: int = 1, n_samples: int = 100, n_noise: int = 5, noise: float = 0.0,
                        snr: float | None = None, random_state=None):
    r"""Friedman #1, #2 or #3 with ``n_noise`` extra uniform [0, 1] features.

    .. math::

        f_1 = 10 \sin(\pi x_1 x_2) + 20 (x_3 - 0.5)^2 + 10 x_4 + 5 x_5, \quad
        f_2 = \sqrt{x_1^2 + (x_2 x_3 - 1/(x_2 x_4))^2}, \quad
        f_3 = \arctan\frac{x_2 x_3 - 1/(x_2 x_4)}{x_1}

    (scikit-learn's ``make_friedman1/2/3``, which also fix the ranges of the
    inputs of #2 and #3), then ``y = f + ε``.

    Parameters
    ----------
    which : {1, 2, 3}
    n_samples : int, default=100
        Number of rows.
    n_noise : int
        Irrelevant uniform features appended after the relevant ones.
    noise : float
        Standard deviation of the Gaussian noise (ignored when ``snr`` is set).
    snr : float, optional
        Signal-to-noise ratio ``var(f) / σ²``; the paper uses 10.
    random_state : int, Generator or None
        Seed or generator for everything random; an int makes the result reproducible.

    Returns
    -------
    X : ndarray of shape (n_samples, n_relevant + n_noise)
    y : ndarray of shape (n_samples,)
    true_support : ndarray of bool
        True for the relevant features (5 for #1, 4 for #2 and #3).
    """
    from sklearn.datasets import make_friedman1, make_friedman2, make_friedman3

    if which not in (1, 2, 3):
        raise ValueError(f"make_friedman_noise: which must be 1, 2 or 3; got {which!r}.")
    if int(n_noise) != n_noise or n_noise < 0:
        raise ValueError(f"make_friedman_noise: n_noise must be a non-negative integer; got {n_noise!r}.")
    if noise < 0:
        raise ValueError(f"make_friedman_noise: noise must be >= 0; got {noise!r}.")
    if snr is not None and not snr > 0:
        raise ValueError(f"make_friedman_noise: snr must be > 0; got {snr!r}.")
    rng = check_random_state(random_state)
    seed = int(rng.integers(2**31 - 1))
    if which == 1:
        X, f = make_friedman1(n_samples, n_features=5, noise=0.0, random_state=seed)
    elif which == 2:
        X, f = make_friedman2(n_samples, noise=0.0, random_state=seed)
    else:
        X, f = make_friedman3(n_samples, noise=0.0, random_state=seed)
    n_rel = X.shape[1]
    X = np.hstack([X, rng.uniform(size=(n_samples, int(n_noise)))])
    sigma = float(np.std(f) / np.sqrt(snr)) if snr is not None else float(noise)
    y = f + sigma * rng.standard_normal(n_samples) if sigma > 0 else f.copy()
    support = np.zeros(X.shape[1], dtype=bool)
    support[:n_rel] = True
    return X, y, support
