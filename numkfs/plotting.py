"""All plots of numkfs (matplotlib): feature paths, accuracy against the
fraction of selected features, solver cross-check bars.

Every function takes an optional ``ax`` and returns the Axes it drew on, so
tests can read the drawn data back (``ax.lines``, ``ax.patches``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["plot_path", "plot_accuracy_vs_fraction", "plot_cross_check", "plot_weights"]


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(7, 4.5))
    return ax


def plot_path(path, ax=None, *, x=None, log_x=None, highlight=None, legend=None, mark=None):
    """Feature weights against the path parameter (the KNIFE paper's Figure 1).

    Parameters
    ----------
    path : FeaturePath
    ax : matplotlib Axes, optional
    x : str, optional
        Name of an array in ``path.extra`` to use as abscissa instead of the
        grid (e.g. ``"arc_length"`` for L1KR).
    log_x : bool, optional
        Log-scale abscissa; default True for penalty grids (``lambda*``)
        with positive values.
    highlight : array of bool or of feature indices, optional
        Features drawn solid and labelled; others dashed and grey. Defaults
        to ``path.true_support`` when known, else every feature.
    legend : bool, optional
        Default: a legend when at most 15 features are labelled.
    mark : int, optional
        Index of a path point to mark with a vertical line (e.g. the point
        chosen by cross-validation).

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    xs = path.grid if x is None else np.asarray(path.extra[x], dtype=float)
    xlabel = path.grid_name if x is None else x
    if highlight is None:
        highlight = path.true_support
    if highlight is None:
        hl = np.ones(path.n_features, dtype=bool)
    else:
        highlight = np.asarray(highlight)
        hl = highlight.astype(bool) if highlight.dtype == bool else np.isin(np.arange(path.n_features), highlight)
    colors = iter(__import__("matplotlib").colormaps["tab10"].colors * (path.n_features // 10 + 1))
    for j in range(path.n_features):
        if hl[j]:
            ax.plot(xs, path.weights[:, j], "-", lw=1.8, color=next(colors), label=str(path.feature_names[j]))
        else:
            ax.plot(xs, path.weights[:, j], "--", lw=0.9, color="0.6", label="_" + str(path.feature_names[j]))
    if log_x is None:
        log_x = xlabel.startswith("lambda") and np.all(xs >= 0) and np.any(xs > 0)
    if log_x:
        if np.all(xs > 0):
            ax.set_xscale("log")
        else:  # a penalty grid that starts at 0: linear near 0, log beyond
            ax.set_xscale("symlog", linthresh=float(np.min(xs[xs > 0])))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("feature weight")
    ax.set_title(f"{path.method} feature path" if path.method else "feature path")
    if mark is not None:
        ax.axvline(xs[mark], color="k", ls=":", lw=1, label="chosen")
    if legend is None:
        legend = hl.sum() <= 15
    if legend:
        ax.legend(fontsize="small", loc="best")
    return ax


def plot_accuracy_vs_fraction(fraction, accuracy, ax=None, *, label=None, baseline=None):
    """Accuracy against the fraction of selected features (lp-KTA Figure 1a).

    ``baseline`` draws a horizontal line (e.g. the all-features SVM).
    """
    ax = _axes(ax)
    order = np.argsort(fraction)
    ax.plot(np.asarray(fraction)[order], np.asarray(accuracy)[order], "o-", ms=3, label=label)
    if baseline is not None:
        ax.axhline(baseline, color="0.4", ls="--", label="all features")
    ax.set_xlabel("fraction of features selected")
    ax.set_ylabel("accuracy")
    if label is not None or baseline is not None:
        ax.legend(fontsize="small")
    return ax


def plot_cross_check(table, ax=None, *, what="solve_time"):
    """Bars of one column of a :class:`~numkfs.solvers.CrossCheck` per solver,
    coloured by status (optimal green, otherwise red)."""
    ax = _axes(ax)
    names = [r["solver"] for r in table.rows]
    vals = [r[what] if r[what] is not None else np.nan for r in table.rows]
    colors = ["tab:green" if r["status"] == "optimal" else "tab:red" for r in table.rows]
    ax.bar(names, vals, color=colors)
    ax.set_ylabel(what.replace("_", " "))
    if what in ("solve_time", "max_violation", "solution_distance"):
        ax.set_yscale("log")
    ax.set_title("solver cross-check")
    return ax


def plot_weights(weights, feature_names, ax=None, *, selected=None):
    """Horizontal bars of feature weights (selected features coloured)."""
    ax = _axes(ax)
    weights = np.asarray(weights, dtype=float)
    sel = np.abs(weights) > 0 if selected is None else np.asarray(selected, dtype=bool)
    order = np.argsort(np.abs(weights))
    ax.barh([str(feature_names[j]) for j in order], weights[order],
            color=["tab:blue" if sel[j] else "0.7" for j in order])
    ax.set_xlabel("feature weight")
    return ax
