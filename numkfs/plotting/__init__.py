"""All plots of numkfs (matplotlib): feature paths, accuracy against the
fraction of selected features, solver cross-check bars.

Every function takes an optional ``ax`` and returns the Axes it drew on, so
tests can read the drawn data back (``ax.lines``, ``ax.patches``).
"""
from __future__ import annotations

from ._common import GRID_LABELS, GRID_SYMBOLS, MAX_LEGEND_FEATURES, MAX_NAMED_FEATURES, METHOD_LABELS
from ._figures import plot_accuracy_vs_fraction, plot_cross_check, plot_cv_gamma, plot_stability, plot_weights
from ._path import LABEL_CLEARANCE_PT, NAMED_LINE_WIDTH_PT, plot_path

__all__ = ["plot_path", "plot_accuracy_vs_fraction", "plot_cross_check", "plot_cv_gamma", "plot_stability", "plot_weights"]
