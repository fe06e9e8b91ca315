"""All plots of numkfs (matplotlib): feature paths, accuracy against the
fraction of selected features, solver cross-check bars.

Every function takes an optional ``ax`` and returns the Axes it drew on, so
tests can read the drawn data back (``ax.lines``, ``ax.patches``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["plot_path", "plot_accuracy_vs_fraction", "plot_cross_check", "plot_weights"]


def _chosen_mask(path, chosen):
    """The support at the marked point: the path's chosen support when the
    mark is its chosen point (exactly k features for a requested count)."""
    if chosen == getattr(path, "chosen_index", None) and getattr(path, "chosen_support", None) is not None:
        return np.asarray(path.chosen_support, dtype=bool)
    return np.asarray(path.selected(chosen), dtype=bool)


def _axes(ax, figsize=(7, 4.5)):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize, layout="tight")
    return ax


#: More features than this: only the highlighted (selected) ones are
#: coloured, and they are labelled at the line ends instead of in a legend.
MAX_LEGEND_FEATURES = 15

#: Axis words for each path parameter (grid name or ``x`` array).
GRID_LABELS = {
    "lambda": "penalty λ",
    "lambda1": "ridge penalty λ₁",
    "lambda2": "penalty λ₂ on the feature weights",
    "D": "ℓ₁ budget D = ||β||₁",
    "arc_length": "arc length along the path",
    "p": "norm exponent p (2 = dense, 1 = sparse)",
    "m": "number of features m (integer)",
    "M": "COSSO bound M on Σ θ",
}

#: (display name, weight axis label) per method (``FeaturePath.method``).
METHOD_LABELS = {
    "knife": ("KNIFE", "feature weight w"),
    "l1kr": ("L1KR", "ARD kernel weight β"),
    "lpkta": ("lp-KTA", "kernel weight η"),
    "nmmkl": ("NMMKL", "selection weight p"),
    "garrote": ("Garrote", "feature weight w"),
    "cosso": ("COSSO", "component weight θ"),
}


def _method_labels(method: str):
    key = (method or "").lower().replace("-", "").replace("_", "")
    for k, v in METHOD_LABELS.items():
        if key.startswith(k):
            return v
    return (method or "", "feature weight")


def _distinct_colors(k: int):
    """``k`` colours, no two equal: tab10 up to 10; beyond, hues spread by
    the golden ratio (neighbours in the list far apart in hue) at two
    alternating brightnesses, all dark enough to read as text."""
    import matplotlib
    from matplotlib.colors import hsv_to_rgb

    if k <= 10:
        return list(matplotlib.colormaps["tab10"].colors[:k])
    hues = (np.arange(k) * 0.6180339887498949 + 0.02) % 1.0
    vals = np.where(np.arange(k) % 2 == 0, 0.72, 0.48)
    return [tuple(hsv_to_rgb((h, 0.9, v))) for h, v in zip(hues, vals)]


#: At most this many features are coloured and named by default (the
#: largest weights at the chosen point); the other selected ones are grey.
MAX_NAMED_FEATURES = 20


def _default_highlight(path, chosen):
    """Features to colour: the true ones (simulations), every feature when
    there are few, else the ones selected at the chosen point, else the
    features with the largest weights along the path; at most
    :data:`MAX_NAMED_FEATURES` (the largest weights) beyond 15 features."""
    p = path.n_features
    if path.true_support is not None:
        hl = np.asarray(path.true_support, dtype=bool)
        score = np.max(np.abs(path.weights), axis=0) if path.n_points else np.zeros(p)
    elif p <= MAX_LEGEND_FEATURES:
        return np.ones(p, dtype=bool)
    elif chosen is not None:
        hl = _chosen_mask(path, chosen)
        score = np.abs(path.weights[chosen])
    else:
        score = np.max(np.abs(path.weights), axis=0) if path.n_points else np.zeros(p)
        hl = score > path.tol
    if p > MAX_LEGEND_FEATURES and hl.sum() > MAX_NAMED_FEATURES:
        keep = np.flatnonzero(hl)[np.argsort(-score[hl], kind="stable")[:MAX_NAMED_FEATURES]]
        hl = np.zeros(p, dtype=bool)
        hl[keep] = True
    return hl


def _spread(targets, gap, lo=-np.inf, hi=np.inf):
    """Label positions as close as possible to ``targets`` (least squares)
    with consecutive labels at least ``gap`` apart, kept inside [lo, hi]
    when they fit; same order as targets."""
    targets = np.asarray(targets, dtype=float)
    order = np.argsort(targets, kind="stable")
    clusters = []  # [start position, list of targets]
    for t in targets[order]:
        clusters.append([t, [t]])
        while len(clusters) > 1 and clusters[-2][0] + len(clusters[-2][1]) * gap > clusters[-1][0]:
            _, b = clusters.pop()
            a = clusters[-1][1] + b
            offsets = gap * np.arange(len(a))
            clusters[-1] = [float(np.mean(np.asarray(a) - offsets)), a]
    pos = np.concatenate([c[0] + gap * np.arange(len(c[1])) for c in clusters]) if clusters else np.array([])
    if pos.size:
        if pos[-1] > hi:
            pos = pos - (pos[-1] - hi)  # pushes down: spacing kept, the top inside
        if pos[0] < lo:
            pos = np.maximum(pos, lo + gap * np.arange(pos.size))  # the bottom inside, spacing kept
    out = np.empty_like(targets)
    out[order] = pos
    return out


def _log_axis(ax, xs, log_x):
    """Log scale; with a 0 in the grid, symlog whose linear part ends at the
    smallest positive value, ticks only at 0 and at decades beyond it (no
    "0" next to a decade inside the linear part)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

    pos = xs[xs > 0]
    if not log_x or pos.size == 0:
        return None
    if np.all(xs > 0):
        ax.set_xscale("log")
        return {"value": "log"}
    lo, hi = float(pos.min()), float(pos.max())
    ax.set_xscale("symlog", linthresh=lo, linscale=0.6)
    k0, k1 = int(np.ceil(np.log10(lo))), int(np.floor(np.log10(hi)))
    decades = np.arange(k0, k1 + 1)
    step = max(1, int(np.ceil(len(decades) / 7)))
    decades = decades[::step]
    ax.xaxis.set_major_locator(FixedLocator([0.0] + [10.0 ** k for k in decades]))

    def fmt(v, _pos):
        if v == 0:
            return "0"
        return f"$10^{{{int(round(np.log10(v)))}}}$"

    ax.xaxis.set_major_formatter(FuncFormatter(fmt))
    minor = LogLocator(subs=np.arange(2, 10)).tick_values(lo, hi) if hi / lo > 10 else []
    ax.xaxis.set_minor_locator(FixedLocator([m for m in minor if lo <= m <= hi]) if len(minor) else NullLocator())
    return {"value": "symlog", "linthresh": lo, "linscale": 0.6}


def _count_axis(ax, xs, counts, scale):
    """A top axis with the number of selected features (as glmnet's plot):
    a tick wherever the count changes, thinned so labels do not touch."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    top = ax.twiny()
    if scale is not None:
        top.set_xscale(**scale)
    top.set_xlim(ax.get_xlim())
    ax.callbacks.connect("xlim_changed", lambda a: top.set_xlim(a.get_xlim()))
    order = np.argsort(xs, kind="stable")
    cand = [order[0]] + [i for a, i in zip(order[:-1], order[1:]) if counts[i] != counts[a]]
    frac = ax.transAxes.inverted().transform(
        ax.transData.transform(np.column_stack([xs[cand], np.zeros(len(cand))]))
    )[:, 0]
    keep, last = [], -np.inf
    for i, f in zip(cand, frac):
        if f - last >= 0.045 and -0.001 <= f <= 1.001:
            keep.append(i)
            last = f
    top.xaxis.set_major_locator(FixedLocator([float(xs[i]) for i in keep]))
    top.xaxis.set_major_formatter(FixedFormatter([str(int(counts[i])) for i in keep]))
    top.xaxis.set_minor_locator(NullLocator())
    top.tick_params(axis="x", labelsize="small")
    top.set_xlabel("number of selected features", fontsize="small")
    return top


def plot_path(path, ax=None, *, x=None, log_x=None, highlight=None, legend=None, mark=None,
              labels="auto", top_axis=True):
    """Feature weights against the path parameter (the KNIFE paper's Figure 1).

    Every method's path is drawn in one style: the title names the method,
    the axes say in words what is plotted (λ₂, ||β||₁, p, m, arc length and
    the method's weight symbol), a top axis gives the number of selected
    features, and the chosen point (``path.chosen_index``) is marked.

    Parameters
    ----------
    path : FeaturePath
        The path to draw.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure (tight layout, which makes room
        for the names at the line ends).
    x : str, optional
        Name of an array in ``path.extra`` to use as abscissa instead of the
        grid (e.g. ``"arc_length"`` for L1KR).
    log_x : bool, optional
        Log-scale abscissa; default True for penalty grids (``lambda*``)
        with positive values.  A grid that starts at 0 gets a linear piece
        near 0 (symlog) and ticks at 0 and at the decades beyond it.
    highlight : array of bool or of feature indices, optional
        Features drawn in colour and labelled; the others thin and light
        grey.  Default: ``path.true_support`` when known; else every feature
        when there are at most 15; else the features selected at the chosen
        point; else those selected somewhere on the path; beyond 15
        features, at most 20 of them (the largest weights, a note says so).
    legend : bool, optional
        Shorthand for ``labels``: True is ``"legend"``, False ``"none"``.
    mark : int or False, optional
        Index of a path point to mark with a vertical line; default
        ``path.chosen_index`` (the point an estimator or
        :func:`numkfs.select` chose).  ``False`` marks nothing.
    labels : {"auto", "legend", "ends", "none"}
        How highlighted features are named: a legend, or their names at the
        line ends (at the end of the path where the weights are largest,
        spread so they do not overlap).  ``"auto"``: a legend up to 15
        features, line ends beyond.
    top_axis : bool
        Draw the top axis with the number of selected features.

    Returns
    -------
    matplotlib Axes
        The Axes with the weights (``ax.lines[j]`` is feature ``j``; the mark
        follows).  The top axis is ``ax.numkfs_top_axis`` (None if not drawn).

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from numkfs import FeaturePath
    >>> path = FeaturePath([0.0, 0.1, 1.0], np.array([[1.0, 0.5], [0.6, 0.0], [0.0, 0.0]]),
    ...                    grid_name="lambda2", method="KNIFE", chosen_index=1)
    >>> ax = path.plot()
    >>> ax.get_xlabel(), ax.get_title()
    ('penalty λ₂ on the feature weights', 'KNIFE feature path')
    """
    from matplotlib.colors import to_rgba
    from matplotlib.ticker import MaxNLocator
    from matplotlib.transforms import blended_transform_factory

    if labels not in ("auto", "legend", "ends", "none"):
        raise ValueError(f"labels must be 'auto', 'legend', 'ends' or 'none'; got {labels!r}.")
    if legend is not None:
        labels = "legend" if legend else "none"
    ax = _axes(ax)
    p = path.n_features
    xs = path.grid if x is None else np.asarray(path.extra[x], dtype=float)
    xname = path.grid_name if x is None else x
    chosen = getattr(path, "chosen_index", None) if mark is None else (None if mark is False else int(mark))
    if highlight is None:
        hl = _default_highlight(path, chosen)
    else:
        highlight = np.asarray(highlight)
        hl = highlight.astype(bool) if highlight.dtype == bool else np.isin(np.arange(p), highlight)
    if labels == "auto":
        labels = "legend" if p <= MAX_LEGEND_FEATURES else "ends"
    integer_grid = xname == "m"
    # 0/1 selections over an integer grid (NMMKL): a dot per selected feature
    # and m, one row per feature ever selected, instead of weights at 0 and 1
    matrix = integer_grid and path.n_points > 0 and bool(np.isin(path.weights, (0.0, 1.0)).all())
    rows = {j: r for r, j in enumerate(np.flatnonzero(path.weights.any(axis=0))[::-1])} if matrix else {}
    colors = iter(_distinct_colors(int(hl.sum())))
    grey = to_rgba("0.55" if matrix else "0.78")
    feature_color = {}
    for j in range(p):
        name = str(path.feature_names[j])
        if hl[j]:
            feature_color[j] = next(colors)
            style = dict(color=feature_color[j], lw=1.7, zorder=3, label=name)
        else:
            style = dict(color=grey, lw=0.8, zorder=2, label="_" + name)
        if matrix:
            on = path.weights[:, j] > 0
            style.update(ls="none", marker="o", ms=7 if hl[j] else 5, lw=0)
            ax.plot(xs[on], np.full(on.sum(), rows.get(j, np.nan)), **style)
            continue
        if integer_grid:  # m is an integer: markers, no line through fractional m
            style.update(ls="none", marker="o" if hl[j] else ".", ms=5 if hl[j] else 4, lw=0)
        else:
            style.update(ls="-")
        ax.plot(xs, path.weights[:, j], **style)
    if log_x is None:
        log_x = xname.startswith("lambda") and np.all(xs >= 0) and np.any(xs > 0)
    scale = _log_axis(ax, xs, log_x)
    if integer_grid:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    method_name, weight_label = _method_labels(path.method)
    ax.set_xlabel(GRID_LABELS.get(xname, xname.replace("_", " ")))
    ax.set_ylabel(weight_label)
    if matrix:
        order = sorted(rows, key=rows.get)
        ax.set_yticks(range(len(order)), [str(path.feature_names[j]) for j in order],
                      fontsize="small" if len(order) <= 30 else "x-small")
        ax.set_ylim(-0.7, len(order) - 0.3)
        ax.set_ylabel(f"features selected at some m ({len(order)} of {p})")
        for j, lab in zip(order, ax.get_yticklabels()):
            if j in feature_color:
                lab.set_color(feature_color[j])
        labels = "none"  # the rows are named
    ax.set_title(f"{method_name} feature path" if method_name else "feature path")
    if chosen is not None:
        n_chosen = int(_chosen_mask(path, chosen).sum())
        rule = getattr(path, "cv_rule", None)
        text = f"chosen{' (' + rule + ')' if rule else ''}: {n_chosen} feature{'s' * (n_chosen != 1)}"
        ax.axvline(xs[chosen], color="k", ls=":", lw=1.2, zorder=4, label="_chosen")
        x_frac = ax.transAxes.inverted().transform(ax.transData.transform((xs[chosen], 0.0)))[0]
        right_half = x_frac > 0.6  # the note goes left of the line near the right edge
        ax.text(xs[chosen], 0.98, (text + " ") if right_half else (" " + text),
                transform=blended_transform_factory(ax.transData, ax.transAxes),
                ha="right" if right_half else "left", va="top", fontsize="small", gid="numkfs-chosen", zorder=5,
                bbox=dict(facecolor="white", edgecolor="none", alpha=0.85, pad=1.0))
    ax.numkfs_top_axis = (
        _count_axis(ax, xs, path.n_selected(), scale) if top_axis and path.n_points else None
    )
    if labels == "legend" and hl.any():  # outside the axes: never over a line
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    elif labels == "ends" and hl.any():
        _label_line_ends(ax, path, xs, hl, feature_color)
    if chosen is not None and highlight is None and path.true_support is None:
        n_sel = int(_chosen_mask(path, chosen).sum())
        if 0 < hl.sum() < n_sel:
            ax.text(0.99, 0.02, f"named: the {int(hl.sum())} largest of {n_sel} selected features",
                    transform=ax.transAxes, ha="right", va="bottom", fontsize="small", color="0.3",
                    gid="numkfs-named-note")
    return ax


def _label_line_ends(ax, path, xs, hl, feature_color):
    """Names of the highlighted features next to the axes, at the end of the
    path where their weights are largest, spread vertically (leader lines
    join each name to its line)."""
    from matplotlib.transforms import blended_transform_factory

    idx = np.flatnonzero(hl)
    i_lo, i_hi = int(np.argmin(xs)), int(np.argmax(xs))
    W = path.weights
    right = np.abs(W[i_hi, idx]).sum() >= np.abs(W[i_lo, idx]).sum()
    i_end = i_hi if right else i_lo
    from matplotlib.font_manager import FontProperties

    ax.autoscale_view()
    y0, y1 = ax.get_ylim()
    ax.set_ylim(y0, y1)
    fig = ax.figure
    engine = fig.get_layout_engine()
    if engine is not None:  # the axes' final height (title, top axis, x label placed)
        engine.execute(fig)
    height_pt = max(ax.get_position().height * fig.get_figheight() * 72.0, 1.0)
    size_pt = FontProperties(size="small").get_size_in_points()
    gap = 1.3 * size_pt / height_pt * (y1 - y0)
    ys = _spread(W[i_end, idx], gap, y0 + 0.5 * gap, y1 - 0.5 * gap)
    trans = blended_transform_factory(ax.transAxes, ax.transData)
    if not right:  # names on the left: the weight axis moves to the right
        ax.yaxis.tick_right()
        ax.yaxis.set_label_position("right")
    for j, y in zip(idx, ys):
        ax.annotate(
            str(path.feature_names[j]), xy=(xs[i_end], W[i_end, j]), xycoords="data",
            xytext=(1.02 if right else -0.02, y), textcoords=trans, color=feature_color[j],
            fontsize="small", va="center", ha="left" if right else "right", annotation_clip=False,
            arrowprops=dict(arrowstyle="-", color=feature_color[j], lw=0.6, shrinkA=0, shrinkB=0),
        )


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
