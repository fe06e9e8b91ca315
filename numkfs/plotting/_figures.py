"""The other plots of :mod:`numkfs.plotting`: stability paths, accuracy
against the fraction of selected features, solver cross-checks, weights,
the CV score against KNIFE's bandwidth."""
from __future__ import annotations

import numpy as np

from ._common import GRID_LABELS, GRID_SYMBOLS, MAX_LEGEND_FEATURES, _axes, _font_points, _log_axis, _method_labels
from ._path import plot_path


def plot_stability(selection, ax=None, *, highlight=None, labels="auto"):
    """The stability path: each feature's selection probability against the grid.

    Drawn in the style of :func:`plot_path` (names right of the axes or in
    a legend, never over a curve): the threshold is a dashed horizontal
    line, the part of the grid outside the region Λ (where the subsamples
    select more than q features on average) is shaded, both explained under
    the x label; the top axis counts the features at or above the threshold.
    Each stable group's probability is a dotted black line.

    Parameters
    ----------
    selection : StabilitySelection
        A fitted :class:`numkfs.StabilitySelection`.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    highlight : array of bool or of int, optional
        Features drawn in colour and named; default every feature up to 15,
        else the selected ones (else the most often selected).
    labels : {"auto", "legend", "ends", "none"}
        As in :func:`plot_path`.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.lines[j]`` is feature ``j``; then the threshold line, then one
        dotted line per stable group (``groups_``: the probability that a
        subsample selects any of its members).  Nothing
        is shown on screen: in a script, call ``matplotlib.pyplot.show()``
        (or save with ``ax.figure.savefig``); a notebook shows the figure
        by itself.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from sklearn.datasets import make_friedman1
    >>> from numkfs import StabilitySelection
    >>> X, y = make_friedman1(n_samples=80, n_features=6, random_state=0)
    >>> sel = StabilitySelection("lpkta", n_resamples=3, max_features=3, random_state=0).fit(X, y)
    >>> sel.plot().get_ylabel()
    'selection probability'
    >>> import matplotlib.pyplot as plt
    >>> plt.show()  # in a script: opens the window (nothing to show with Agg)
    """
    t = float(selection.threshold_)
    path = selection._stability_feature_path()  # the probabilities as a FeaturePath (numkfs.stability owns it)
    if highlight is None and path.n_features > MAX_LEGEND_FEATURES and np.any(selection.support_):
        highlight = np.asarray(selection.support_, dtype=bool)
    ax = plot_path(path, ax=ax, highlight=highlight, mark=False, labels=labels)
    xs = path.grid
    ax.axhline(t, color="k", ls="--", lw=1.0, zorder=4, label="_threshold")
    region = np.asarray(selection.region_, dtype=bool)
    if region.any() and not region.all():
        out = xs[~region]
        ax.axvspan(out.min(), out.max(), color="0.5", alpha=0.15, lw=0, zorder=1)
    ax.set_ylim(-0.03, 1.03)
    ax.set_ylabel("selection probability")
    ax.set_title(f"Stability path ({_method_labels(selection.method_)[0] or selection.method_}, "
                 f"{selection.n_subsamples_} subsamples)")
    if ax.numkfs_top_axis is not None:
        ax.numkfs_top_axis.set_xlabel(f"features with probability ≥ {t:.3g}", fontsize="small")
    note = f"dashed: threshold {t:.3g}"
    names = path.feature_names if path.feature_names is not None else [f"x{j}" for j in range(path.n_features)]
    stable = [g for g in getattr(selection, "groups_", [])]
    for g in stable:  # a stable group: the probability that a subsample selects any member
        u = next(i for i, c in enumerate(selection.clusters_) if c.tolist() == list(g))
        ax.plot(xs, selection.cluster_stability_path_[:, u], color="k", ls=":", lw=2.0, zorder=5,
                label="{" + ", ".join(str(names[j]) for j in g) + "}")
    if stable:
        note += "; dotted: stable group(s) " + ", ".join("{" + ", ".join(str(names[j]) for j in g) + "}"
                                                      for g in stable) + " (any member selected)"
    if not region.all():
        note += f"; shaded: outside the region (more than q = {selection.q_:.3g} features on average)"
    ax.annotate(note, xy=(0.5, 0.0), xycoords=ax.xaxis.label, xytext=(0.0, -0.3 * _font_points("small")),
                textcoords="offset points", ha="center", va="top", fontsize="small", color="0.3",
                gid="numkfs-stability-note", annotation_clip=False)
    return ax


def plot_accuracy_vs_fraction(fraction, accuracy, ax=None, *, label=None, baseline=None):
    """Accuracy against the fraction of selected features (lp-KTA Figure 1a).

    Parameters
    ----------
    fraction : array-like of shape (n_points,)
        Fraction of the features selected at each point (0 to 1); drawn in
        increasing order.
    accuracy : array-like of shape (n_points,)
        Accuracy (or any score) at each point.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    label : str, optional
        Legend entry of the curve.
    baseline : float, optional
        Draws a horizontal line (e.g. the all-features SVM), labelled
        "all features".

    Returns
    -------
    matplotlib Axes
        ``ax.lines[0]`` is the curve, ``ax.lines[1]`` the baseline.

    References
    ----------
    P. Jawanpuria, M. Varma and J. S. Nath. On p-norm path following in
    multiple kernel learning for non-linear feature selection. ICML, 2014.
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
    """Bars of one column of a solver cross-check, one bar per solver.

    Parameters
    ----------
    table : numkfs.solvers.CrossCheck
        The result of :func:`numkfs.solvers.cross_check`.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    what : str
        The column to draw (``"solve_time"``, ``"objective"``,
        ``"max_violation"``, ``"solution_distance"``...); times, violations
        and distances on a log scale.  Bars are green for an optimal status,
        red otherwise.

    Returns
    -------
    matplotlib Axes
        ``ax.patches`` are the bars, in the order of ``table.rows``.
    """
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
    """Horizontal bars of feature weights, sorted by absolute value.

    Parameters
    ----------
    weights : array-like of shape (n_features,)
        One weight per feature.
    feature_names : sequence of str of length n_features
        Bar labels.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.
    selected : array-like of bool of shape (n_features,), optional
        Features drawn in colour (the others grey); default ``weights != 0``.

    Returns
    -------
    matplotlib Axes
        ``ax.patches`` are the bars from the smallest to the largest absolute
        weight.
    """
    ax = _axes(ax)
    weights = np.asarray(weights, dtype=float)
    sel = np.abs(weights) > 0 if selected is None else np.asarray(selected, dtype=bool)
    order = np.argsort(np.abs(weights))
    ax.barh([str(feature_names[j]) for j in order], weights[order],
            color=["tab:blue" if sel[j] else "0.7" for j in order])
    ax.set_xlabel("feature weight")
    return ax


def plot_cv_gamma(path, ax=None):
    """Mean CV score against λ2, with the rbf scale γ of each point (KNIFE).

    The CV estimators' ``gamma="auto"`` fits each path point with the scale
    of the features selected before it; this draws what was chosen: the
    mean held-out score (a band of one standard error over the folds) on
    the left axis, γ of each point (one line per one-vs-rest problem) on a
    right axis, the chosen point as a dotted vertical line.

    Parameters
    ----------
    path : FeaturePath
        A cross-validated KNIFE path (``KNIFERegressorCV().path_`` or
        ``KNIFEClassifierCV().path_``): ``cv_scores`` and ``extra["gamma"]``.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure.

    Returns
    -------
    matplotlib Axes
        The score axes: ``ax.lines[0]`` the mean score; the γ axes is
        ``ax.gamma_axes`` (its lines: γ per point).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from numkfs import KNIFERegressorCV
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs.plotting import plot_cv_gamma
    >>> X, y, _ = make_sinusoid(n_samples=60, random_state=0)
    >>> ax = plot_cv_gamma(KNIFERegressorCV(n_grid=8, cv=3).fit(X, y).path_)
    >>> len(ax.gamma_axes.lines) >= 1  # matplotlib.pyplot.show() displays the figure
    True
    """
    if path.cv_scores is None or "gamma" not in path.extra:
        raise ValueError("plot_cv_gamma needs a cross-validated KNIFE path (cv_scores and extra['gamma']).")
    ax = _axes(ax)
    xs = np.asarray(path.grid, dtype=float)
    mean, se = path.mean_cv_score, path.cv_standard_error
    ax.plot(xs, mean, "-", color="C0", lw=1.5, label="mean CV score")
    ax.fill_between(xs, mean - se, mean + se, color="C0", alpha=0.2, lw=0)
    ax.set_xlabel(GRID_LABELS.get(path.grid_name, path.grid_name))
    ax.set_ylabel(f"CV score ({path.score_name or 'higher is better'})", color="C0")
    gx = ax.twinx()
    G = np.atleast_2d(np.asarray(path.extra["gamma"], dtype=float))
    for k, g in enumerate(G):
        gx.plot(xs, g, drawstyle="steps-post", color="0.35", lw=1.0, ls="-" if k == 0 else ":")
    gx.set_yscale("log")
    gx.set_ylabel("rbf scale γ of the point")
    _log_axis(ax, xs, bool(np.any(xs > 0)))
    if path.chosen_index is not None:
        i = int(path.chosen_index)
        gammas = ", ".join(f"{g[i]:.3g}" for g in G)
        ax.axvline(xs[i], color="k", ls=":", lw=1.0)
        ax.set_title(f"{_method_labels(path.method)[0]}: chosen {GRID_SYMBOLS.get(path.grid_name, path.grid_name)}"
                     f" = {xs[i]:.3g}, γ = {gammas}, {int(path.n_selected()[i])} features", fontsize="medium")
    ax.gamma_axes = gx
    return ax
