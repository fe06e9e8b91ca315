"""Simulations of the papers and loaders for the shipped real data.

Generators return ``(X, y, true_support)`` (a boolean mask of the true
features, or None); :func:`load_dataset` returns a scikit-learn ``Bunch``.
"""
from ._friedman import make_friedman_noise
from ._knife import make_orange, make_sinusoid
from ._lpkta import make_dorothea_like, make_madelon_like
from ._nmmkl import make_nmmkl_toy
from ._real import dataset_names, load_dataset

__all__ = [
    "dataset_names",
    "load_dataset",
    "make_dorothea_like",
    "make_friedman_noise",
    "make_madelon_like",
    "make_nmmkl_toy",
    "make_orange",
    "make_sinusoid",
]
