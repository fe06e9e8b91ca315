"""Simulations of the papers and loaders for the shipped real data.

Generators return ``(X, y, true_support)`` (a boolean mask of the true
features, or None); :func:`load_dataset` returns a scikit-learn ``Bunch``.
"""
from .._lazy import attach as _attach

# imported on first use: the command line lists the shipped names without the simulations' dependencies
__getattr__, __dir__, __all__ = _attach(
    __name__,
    {
        "dataset_names": "_real",
        "load_dataset": "_real",
        "make_dorothea_like": "_lpkta",
        "make_friedman_noise": "_friedman",
        "make_madelon_like": "_lpkta",
        "make_nmmkl_toy": "_nmmkl",
        "make_orange": "_knife",
        "make_sinusoid": "_knife",
    },
)
del _attach
