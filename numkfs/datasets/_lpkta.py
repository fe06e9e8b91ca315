"""Simulations shaped like the NIPS 2003 feature selection data of the lp-KTA paper.

* :func:`make_madelon_like`: Guyon's Madelon recipe (the generator behind
  scikit-learn's ``make_classification``): clusters on the vertices of a
  5-dimensional hypercube (a multivariate XOR, so no single feature is
  linearly informative on its own), 15 linear combinations of them, and
  noise "probes"; optionally quantised to integers 0..999 like the real file.
* :func:`make_dorothea_like`: sparse binary data (CSC) with a small set of
  informative features whose *joint* activity (an XOR-like parity of two
  blocks) decides the class, at Dorothea's shape 800 x 100,000 and ~1 % density.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_random_state

__all__ = ["make_madelon_like", "make_dorothea_like"]


def make_madelon_like(
    n_samples: int = 2000,
    n_features: int = 500,
    *,
    n_informative: int = 5,
    n_redundant: int = 15,
    class_sep: float = 2.0,
    flip_y: float = 0.01,
    quantize: bool = True,
    random_state=None,
):
    """Madelon-shaped data: an XOR over a few features hidden among probes.

    Parameters
    ----------
    n_samples, n_features : int
        Number of rows and of columns (informative and noise together).
    n_informative : int
        Dimension of the hypercube (Madelon: 5, 32 clusters).
    n_redundant : int
        Random linear combinations of the informative features (Madelon: 15).
    class_sep : float
        Hypercube side.
    flip_y : float
        Fraction of labels flipped at random.
    quantize : bool
        Map each feature to integers 0..999 around 500 (like Madelon).
    random_state : None, int or Generator
        Seed or generator for everything random; an int makes the result reproducible.

    Returns
    -------
    X : ndarray (n_samples, n_features)
    y : ndarray of {-1, +1}
    true_support : ndarray of bool (informative and redundant features)
    """
    from sklearn.datasets import make_classification

    if n_informative + n_redundant > n_features:
        raise ValueError(
            f"make_madelon_like: n_informative + n_redundant = {n_informative + n_redundant}"
            f" exceeds n_features = {n_features}."
        )
    rng = check_random_state(random_state)
    X, y = make_classification(
        n_samples=n_samples, n_features=n_features, n_informative=n_informative,
        n_redundant=n_redundant, n_repeated=0, n_classes=2,
        n_clusters_per_class=2 ** (n_informative - 1), class_sep=class_sep, hypercube=True,
        flip_y=flip_y, shuffle=False, random_state=int(rng.integers(2**31 - 1)),
    )
    perm = rng.permutation(n_features)
    X = X[:, perm]
    support = np.zeros(n_features, dtype=bool)
    support[np.argsort(perm)[: n_informative + n_redundant]] = True
    if quantize:
        X = np.clip(np.round(500 + 25 * X), 0, 999)
    return X, np.where(y == 1, 1.0, -1.0), support


def make_dorothea_like(
    n_samples: int = 800,
    n_features: int = 100_000,
    *,
    density: float = 0.01,
    n_informative: int = 20,
    informative_density: float = 0.3,
    random_state=None,
):
    """Sparse binary data (CSC) shaped like Dorothea.

    Background features are active independently with probability
    ``density``. ``n_informative`` features are active with probability
    ``informative_density``; the label is the parity of (number active in
    the first half of them > its median) and (number active in the second
    half > its median): an XOR of two blocks, non-linear in the features.

    Parameters
    ----------
    n_samples : int, default=800
        Number of rows.
    n_features : int, default=100_000
        Number of columns, informative ones included.
    density : float, default=0.01
        Probability that a background feature is active in a row (a little
        less in effect: a row drawn twice for one column counts once).
    n_informative : int, default=20
        Number of informative features (at least 2, at most ``n_features``),
        placed at random columns.
    informative_density : float, default=0.3
        Probability that an informative feature is active in a row.
    random_state : int, Generator or None
        Seed of the random draws.

    Returns
    -------
    X : scipy.sparse.csc_matrix of float64 with values in {0, 1}
    y : ndarray of {-1, +1}
    true_support : ndarray of bool
    """
    rng = check_random_state(random_state)
    if n_informative > n_features or n_informative < 2:
        raise ValueError("make_dorothea_like: need 2 <= n_informative <= n_features.")
    n_bg = n_features - n_informative
    # background: per column a binomial count of active rows (a repeated row is merged)
    counts = rng.binomial(n_samples, density, size=n_bg)
    rows = rng.integers(0, n_samples, size=int(counts.sum()))
    cols = np.repeat(np.arange(n_bg), counts)
    Xinf = rng.random((n_samples, n_informative)) < informative_density
    h = n_informative // 2
    s1 = Xinf[:, :h].sum(axis=1)
    s2 = Xinf[:, h:].sum(axis=1)
    y = np.where((s1 > np.median(s1)) ^ (s2 > np.median(s2)), 1.0, -1.0)
    ir, ic = np.nonzero(Xinf)
    rows = np.concatenate([rows, ir])
    cols = np.concatenate([cols, n_bg + ic])
    X = sp.csc_matrix((np.ones(rows.size), (rows, cols)), shape=(n_samples, n_features))
    X.sum_duplicates()
    X.data[:] = 1.0
    perm = rng.permutation(n_features)
    X = X[:, perm].tocsc()
    X.sort_indices()
    support = np.zeros(n_features, dtype=bool)
    support[np.argsort(perm)[n_bg:]] = True
    return X, y, support
