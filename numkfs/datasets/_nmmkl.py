r"""The toy data of NMMKL's Figure 1 (Xu et al. 2009): Z is the best single
feature, {X, Y} the best pair, so monotone selection fails.

The paper shows the data (Fig. 1) and the accuracies of a linear SVM on
them (Table 1) but not how they were generated.  We build three Gaussian
features that reproduce those accuracies: with a shared nuisance
``u ~ N(0, σ_u²)`` and labels ``y = ±1`` (balanced),

.. math::

    X = \mu y + u + \varepsilon_1,\quad Y = \mu y - u + \varepsilon_2,\quad
    Z = \mu_z y + \varepsilon_3,\qquad \varepsilon_k \sim N(0, 1),

with ``μ = 1.944``, ``σ_u = 1.5``, ``μ_z = 1.555``.  Then the Bayes
accuracies are Φ(1.08) = 86 % for X or Y alone (the nuisance hides the
signal), Φ(1.555) = 94 % for Z alone and Φ(2.75) = 99.7 % for {X, Y}
(``X + Y = 2μy + ε_1 + ε_2`` cancels the nuisance), matching Table 1
(86.4 %, 93.9 %, 99.7 %).  {X, Z} and {Y, Z} reach about 97 %.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._constraints import Interval, validate_params
from .._validation import check_random_state

__all__ = ["make_nmmkl_toy"]

_MU, _SIGMA_U, _MU_Z = 1.944, 1.5, 1.555


def make_nmmkl_toy(n_samples: int = 500, random_state=None):
    """Three features X, Y, Z: Z best alone, {X, Y} best together.

    Parameters
    ----------
    n_samples : int, default=500
        The paper uses 500 (400 train, 100 test); classes are balanced
        (the larger one gets the odd sample).
    random_state : int, Generator or None
        Seed or generator for everything random; an int makes the result reproducible.

    Returns
    -------
    X : ndarray of shape (n_samples, 3)
        Columns X, Y, Z.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    true_support : ndarray of bool, shape (3,)
        The best pair {X, Y}: ``[True, True, False]`` (the best single
        feature is Z, column 2).

    Examples
    --------
    >>> X, y, support = make_nmmkl_toy(n_samples=10, random_state=0)
    >>> X.shape, sorted(set(y.tolist())), support.tolist()
    ((10, 3), [-1, 1], [True, True, False])
    """
    validate_params({"n_samples": n_samples}, {"n_samples": [Interval(numbers.Integral, 2, None)]},
                    "make_nmmkl_toy")
    rng = check_random_state(random_state)
    y = np.where(np.arange(n_samples) < (n_samples + 1) // 2, 1, -1)
    y = rng.permutation(y)
    u = _SIGMA_U * rng.standard_normal(n_samples)
    e = rng.standard_normal((n_samples, 3))
    X = np.column_stack([_MU * y + u + e[:, 0], _MU * y - u + e[:, 1], _MU_Z * y + e[:, 2]])
    return X, y.astype(np.int64), np.array([True, True, False])
