"""All plots of numkfs (matplotlib): feature paths, accuracy against the
fraction of selected features, solver cross-check bars.

Every function takes an optional ``ax`` and returns the Axes it drew on, so
tests can read the drawn data back (``ax.lines``, ``ax.patches``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["plot_path", "plot_accuracy_vs_fraction", "plot_cross_check", "plot_cv_gamma", "plot_stability", "plot_weights"]


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
    "stability": ("Stability selection", "selection probability"),
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
    "0" next to a decade inside the linear part), as many as fit."""
    import matplotlib
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
    # "10" and a superscript at 70 %: thinned again at draw time if they would touch
    widths = [DIGIT_EM] + [DIGIT_EM * (2 + 0.7 * len(str(k))) for k in decades]
    ax.xaxis.set_major_locator(_spaced_locator_class()(
        [0.0] + [10.0 ** k for k in decades], widths, _font_points(matplotlib.rcParams["xtick.labelsize"]),
        first=[0]))

    def fmt(v, _pos):
        if v == 0:
            return "0"
        return f"$10^{{{int(round(np.log10(v)))}}}$"

    ax.xaxis.set_major_formatter(FuncFormatter(fmt))
    minor = LogLocator(subs=np.arange(2, 10)).tick_values(lo, hi) if hi / lo > 10 else []
    ax.xaxis.set_minor_locator(FixedLocator([m for m in minor if lo <= m <= hi]) if len(minor) else NullLocator())
    return {"value": "symlog", "linthresh": lo, "linscale": 0.6}


#: Short names of the path parameters, for "chosen ... at λ₂ = 0.3".
GRID_SYMBOLS = {"lambda": "λ", "lambda1": "λ₁", "lambda2": "λ₂", "D": "D", "arc_length": "arc length",
                "p": "p", "m": "m", "M": "M"}


def _font_points(size="small"):
    from matplotlib.font_manager import FontProperties

    return float(FontProperties(size=size).get_size_in_points())


def _spaced_locator_class():
    from matplotlib.ticker import Locator

    class SpacedLocator(Locator):
        """Ticks chosen at draw time among candidate positions ``x``: the
        ``first`` ones, then the others from left to right, each kept only
        when its label (``widths_em`` wide, in ems of ``size_pt``) is at
        least one em clear of every label kept, in pixels of the axis as
        drawn.  So labels never touch, whatever the figure size, dpi or
        zoom."""

        def __init__(self, x, widths_em, size_pt, first=None):
            self.x = np.asarray(x, dtype=float)
            self.widths_em = np.asarray(widths_em, dtype=float)
            self.size_pt = size_pt
            self.first = [] if first is None else list(first)

        def __call__(self):
            axes = self.axis.axes
            lo, hi = sorted(self.axis.get_view_interval())
            span = hi - lo
            inside = np.flatnonzero((self.x >= lo - 1e-9 * span) & (self.x <= hi + 1e-9 * span))
            if inside.size == 0:
                return []
            px = axes.transData.transform(np.column_stack([self.x[inside], np.zeros(inside.size)]))[:, 0]
            em = self.size_pt * axes.figure.dpi / 72.0
            where = {int(i): float(p) for i, p in zip(inside, px)}
            order = [i for i in self.first if i in where] + [int(i) for i in inside[np.argsort(px)]]
            kept = []
            for i in order:
                if i in kept:
                    continue
                if all(abs(where[i] - where[k]) >= 0.5 * em * (self.widths_em[i] + self.widths_em[k]) + em
                       for k in kept):
                    kept.append(i)
            return sorted(float(self.x[i]) for i in kept)

        def tick_values(self, vmin, vmax):
            return [float(v) for v in self.x if vmin <= v <= vmax]

    return SpacedLocator


#: Width of a digit in ems (DejaVu Sans, matplotlib's default font: 0.636).
DIGIT_EM = 0.64


def _count_axis(ax, xs, counts, scale, chosen=None):
    """A top axis with the number of selected features (as glmnet's plot):
    ticks where the count changes (and at the chosen point), thinned at draw
    time so that no two labels touch (:func:`_count_locator_class`)."""
    from matplotlib.ticker import FuncFormatter, NullLocator

    top = ax.twiny()
    if scale is not None:
        top.set_xscale(**scale)
    top.set_xlim(ax.get_xlim())
    ax.callbacks.connect("xlim_changed", lambda a: top.set_xlim(a.get_xlim()))
    order = np.argsort(xs, kind="stable")
    cand = [int(order[0])] + [int(i) for a, i in zip(order[:-1], order[1:]) if counts[i] != counts[a]]
    if chosen is not None and not np.any(xs[cand] == xs[chosen]):
        cand.append(int(chosen))
    cand_x = xs[cand]
    labels = [str(int(counts[i])) for i in cand]
    first = [0] + ([int(np.flatnonzero(cand_x == xs[chosen])[0])] if chosen is not None else [])
    size_pt = _font_points("small")
    top.xaxis.set_major_locator(
        _spaced_locator_class()(cand_x, [DIGIT_EM * len(s) for s in labels], size_pt, first=first))

    def fmt(v, _pos):
        hit = np.flatnonzero(np.isclose(cand_x, v, rtol=1e-12, atol=0.0))
        return labels[int(hit[0])] if hit.size else ""

    top.xaxis.set_major_formatter(FuncFormatter(fmt))
    top.xaxis.set_minor_locator(NullLocator())
    top.tick_params(axis="x", labelsize=size_pt)
    top.set_xlabel("number of selected features", fontsize="small")
    return top


def plot_path(path, ax=None, *, x=None, log_x=None, highlight=None, legend=None, mark=None,
              labels="auto", top_axis=True):
    """Feature weights against the path parameter (the KNIFE paper's Figure 1).

    Every method's path is drawn in one style: the title names the method,
    the axes say in words what is plotted (λ₂, ||β||₁, p, m, arc length and
    the method's weight symbol), a top axis gives the number of selected
    features, and the chosen point (``path.chosen_index``) is marked.

    No word is drawn over a curve or over another word: the top axis shows
    the counts that fit (chosen again whenever the figure is drawn, so
    after a resize or a zoom too), the chosen point is a dotted vertical
    line explained under the title, notes go under the x label, and the
    names of the features stand in a column right of the axes, each joined
    by a leader line to a point where its own curve is apart from the
    others.

    Parameters
    ----------
    path : FeaturePath
        The path to draw.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure (tight layout, which makes room
        for the names right of the axes).
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
        features, at most 20 of them (the largest weights, a note under the
        x label says so).
    legend : bool, optional
        Shorthand for ``labels``: True is ``"legend"``, False ``"none"``.
    mark : int or False, optional
        Index of a path point to mark with a dotted vertical line; default
        ``path.chosen_index`` (the point an estimator or
        :func:`numkfs.select` chose).  The line's note (rule, number of
        features, parameter value) is under the title, its count on the top
        axis.  ``False`` marks nothing.
    labels : {"auto", "legend", "ends", "none"}
        How highlighted features are named: a legend, or (``"ends"``) a
        column of names right of the axes, spread at least a line apart,
        each with a leader line to a point of its own curve that stands
        apart from the other curves (the point nearest the names that is
        at least :data:`LABEL_CLEARANCE_PT` from every other curve, or
        nearly as far as the curve ever gets).  Curves drawn on one another
        share a name (``"x12, x14"``).  ``"auto"``: a legend up to 15
        features, the column beyond.
    top_axis : bool
        Draw the top axis with the number of selected features.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes with the weights (``ax.lines[j]`` is feature ``j``; the mark
        follows).  The top axis is ``ax.numkfs_top_axis`` (None if not drawn).
        Nothing is shown on screen by this function: in a script, call
        ``matplotlib.pyplot.show()`` (or save with ``ax.figure.savefig``);
        a notebook shows the figure by itself.

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
    >>> import matplotlib.pyplot as plt
    >>> plt.show()  # in a script: opens the window (nothing to show with Agg)
    """
    import matplotlib
    from matplotlib.colors import to_rgba
    from matplotlib.ticker import MaxNLocator

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
            style = dict(color=feature_color[j], lw=NAMED_LINE_WIDTH_PT, zorder=3, label=name)
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
    small_pt = _font_points("small")
    n_sel = int(_chosen_mask(path, chosen).sum()) if chosen is not None else 0
    # words go outside the axes, where no curve can cross them: the chosen
    # point's note under the title, the note on the named features under the
    # x label
    ax.set_title(f"{method_name} feature path" if method_name else "feature path",
                 pad=matplotlib.rcParams["axes.titlepad"] + (1.35 * small_pt if chosen is not None else 0.0))
    if chosen is not None:
        rule = getattr(path, "cv_rule", None)
        at = f" at {GRID_SYMBOLS.get(xname, xname.replace('_', ' '))} = {xs[chosen]:.3g}"
        text = f"dotted line: chosen{' (' + rule + ')' if rule else ''}, {n_sel} feature{'s' * (n_sel != 1)}{at}"
        ax.axvline(xs[chosen], color="k", ls=":", lw=1.2, zorder=4, label="_chosen")
        ax.annotate(text, xy=(0.5, 0.0), xycoords=ax.title, xytext=(0.0, -0.15 * small_pt),
                    textcoords="offset points", ha="center", va="top", fontsize="small", color="0.2",
                    gid="numkfs-chosen", annotation_clip=False)
    ax.numkfs_top_axis = (
        _count_axis(ax, xs, path.n_selected(), scale, chosen) if top_axis and path.n_points else None
    )
    if chosen is not None and highlight is None and path.true_support is None and 0 < hl.sum() < n_sel:
        ax.annotate(f"named: the {int(hl.sum())} largest of {n_sel} selected features",
                    xy=(0.5, 0.0), xycoords=ax.xaxis.label, xytext=(0.0, -0.3 * small_pt),
                    textcoords="offset points", ha="center", va="top", fontsize="small", color="0.3",
                    gid="numkfs-named-note", annotation_clip=False)
    if labels == "legend" and hl.any():  # outside the axes: never over a line
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    elif labels == "ends" and hl.any():
        _label_curves(ax, xs, path.weights, np.flatnonzero(hl),
                      [str(path.feature_names[j]) for j in np.flatnonzero(hl)],
                      [feature_color[j] for j in np.flatnonzero(hl)], tol=path.tol,
                      points_only=integer_grid)
    return ax


#: Line width (points) of the highlighted (named) curves.
NAMED_LINE_WIDTH_PT = 1.7

#: A label's anchor is the point of its curve nearest the names that stands
#: at least this far (in points) from every other curve, or 3/4 of the
#: farthest any point of the curve gets when no point gets this far.
LABEL_CLEARANCE_PT = 4.0


def _anchor_candidates(xs, W, idx, trans, points_only):
    """Display coordinates of the grid points and, between them, of the
    segment midpoints of every curve (the drawn polyline is straight in
    display space whatever the scale): arrays (n_candidates, p) of x and y,
    and the display polylines (n_points, p) in increasing x."""
    order = np.argsort(xs, kind="stable")
    n, p = len(order), W.shape[1]
    X = np.repeat(xs[order][:, None], p, axis=1)
    pts = trans.transform(np.column_stack([X.ravel(), W[order].ravel()]))
    DX, DY = pts[:, 0].reshape(n, p), pts[:, 1].reshape(n, p)
    if points_only or n < 2:
        return DX, DY, DX, DY, order
    CX = np.empty((2 * n - 1, p))
    CY = np.empty((2 * n - 1, p))
    CX[0::2], CY[0::2] = DX, DY
    CX[1::2], CY[1::2] = 0.5 * (DX[1:] + DX[:-1]), 0.5 * (DY[1:] + DY[:-1])
    return CX, CY, DX, DY, order


def _clearance(cx, cy, j_self, DX, DY, reach, same):
    """Distance (display units) from the points (cx[t], cy[t]) on curve
    ``j_self[t]`` to the nearest other curve, each curve a polyline (DX, DY
    of shape (n_points, p), x increasing); curves drawn on top of curve j
    (``same[j]``, a mask over the curves) do not count; segments farther
    than ``reach`` in x are skipped (their distance is at least that)."""
    n, p = DX.shape
    out = np.full(len(cx), np.inf)
    if n == 1:
        d = np.hypot(DX[0][None, :] - cx[:, None], DY[0][None, :] - cy[:, None])
        d[np.asarray([same[j] for j in j_self], dtype=bool).reshape(len(cx), p)] = np.inf
        return d.min(axis=1)
    x0, x1 = DX[:-1, 0], DX[1:, 0]  # the same x for every curve
    excluded = np.asarray([same[j] for j in j_self], dtype=bool)  # (n_queries, p)
    for x in np.unique(cx):  # the queries at one x share their segments
        q = np.flatnonzero(cx == x)
        seg = np.flatnonzero((x1 >= x - reach) & (x0 <= x + reach))
        if seg.size == 0:
            continue
        ax_, ay = DX[seg][None], DY[seg][None]
        vx, vy = DX[seg + 1][None] - ax_, DY[seg + 1][None] - ay
        L = vx * vx + vy * vy
        py = cy[q][:, None, None]
        u = np.clip(((x - ax_) * vx + (py - ay) * vy) / np.where(L > 0, L, 1.0), 0.0, 1.0)
        d = np.hypot(ax_ + u * vx - x, ay + u * vy - py).min(axis=1)  # (queries, p)
        d[excluded[q]] = np.inf
        out[q] = d.min(axis=1)
    return out


def _distances(x, y, DX, DY):
    """Display distance from the point (x, y) to each polyline (columns of
    DX, DY)."""
    if DX.shape[0] == 1:
        return np.hypot(DX[0] - x, DY[0] - y)
    ax_, ay, vx, vy = DX[:-1], DY[:-1], np.diff(DX, axis=0), np.diff(DY, axis=0)
    L = vx * vx + vy * vy
    u = np.clip(((x - ax_) * vx + (y - ay) * vy) / np.where(L > 0, L, 1.0), 0.0, 1.0)
    return np.hypot(ax_ + u * vx - x, ay + u * vy - y).min(axis=0)


def _label_curves(ax, xs, W, idx, names, colors, *, tol=0.0, points_only=False):
    """Names of the curves ``idx`` in a column right of the axes, each joined
    by a leader line to a point of its own curve where that curve stands
    apart from all the others (at least :data:`LABEL_CLEARANCE_PT`, else as
    far as it gets, preferring points nearer the column); the names spread
    vertically at least one line apart, in the order of their points."""
    from matplotlib.transforms import blended_transform_factory

    ax.autoscale_view()
    y0, y1 = ax.get_ylim()
    ax.set_ylim(y0, y1)
    ax.set_xlim(ax.get_xlim())
    fig = ax.figure
    engine = fig.get_layout_engine()
    if engine is not None:  # the axes' final height (title, top axis, x label placed)
        engine.execute(fig)
    pt = fig.dpi / 72.0
    size_pt = _font_points("small")
    CX, CY, DX, DY, order = _anchor_candidates(xs, W, idx, ax.transData, points_only)
    # named curves less than a line width apart everywhere are drawn as one:
    # they are named together ("x12, x14"), and neither they nor a grey
    # curve drawn exactly on them (half a pixel) count as neighbours
    width = NAMED_LINE_WIDTH_PT * pt
    apart = {int(j): np.max(np.abs(DY - DY[:, [j]]), axis=0) for j in idx}
    groups, seen = [], set()
    for j in idx:
        if int(j) in seen:
            continue
        members = [k for k in range(len(idx)) if int(idx[k]) not in seen and apart[int(j)][idx[k]] <= width]
        seen.update(int(idx[k]) for k in members)
        groups.append(members)
    same = {}
    for g in groups:
        mask = np.zeros(W.shape[1], dtype=bool)
        for k in g:
            mask |= apart[int(idx[k])] <= 0.5
            mask[idx[k]] = True
        same[int(idx[g[-1]])] = mask
    lead = np.asarray([idx[g[-1]] for g in groups])  # the curve drawn on top
    box = ax.get_window_extent()
    n_c = CX.shape[0]
    t_all = np.repeat(np.arange(n_c), len(lead))
    j_all = np.tile(lead, n_c)
    cx, cy = CX[t_all, j_all], CY[t_all, j_all]
    sep = _clearance(cx, cy, j_all, DX, DY, 3 * LABEL_CLEARANCE_PT * pt, same).reshape(n_c, len(lead))
    Wc = W[order]
    if points_only or len(order) < 2:
        alive = np.abs(Wc[:, lead]) > tol
    else:
        alive = np.empty((n_c, len(lead)), dtype=bool)
        alive[0::2] = np.abs(Wc[:, lead]) > tol
        alive[1::2] = alive[0::2][1:] | alive[0::2][:-1]
    inside = (CX[:, lead] >= box.x0 - 0.5) & (CX[:, lead] <= box.x1 + 0.5) \
        & (CY[:, lead] >= box.y0 - 0.5) & (CY[:, lead] <= box.y1 + 0.5)
    sep = np.where(inside, sep, -np.inf)
    sep = np.where(alive | ~alive.any(axis=0), sep, -np.inf)  # a curve at 0 everywhere: anywhere
    enough = np.minimum(LABEL_CLEARANCE_PT * pt, 0.75 * np.max(sep, axis=0))
    anchors, texts = [], []
    for c in range(len(lead)):
        ok = np.flatnonzero(sep[:, c] >= enough[c])
        ok = ok if ok.size else np.arange(n_c)
        t = int(ok[np.argmax(CX[ok, lead[c]])])  # the one nearest the names
        anchors.append(ax.transData.inverted().transform((CX[t, lead[c]], CY[t, lead[c]])))
        members = [int(idx[k]) for k in groups[c]]
        if sep[t, c] < pt:  # no point of this curve stands a point clear of the others:
            # the name says which named curves its line is drawn with there
            others = np.setdiff1d(idx, members)
            d = _distances(CX[t, lead[c]], CY[t, lead[c]], DX[:, others], DY[:, others])
            members = sorted(members + [int(k) for k in others[d < pt]])
        texts.append(", ".join(names[int(np.flatnonzero(idx == k)[0])] for k in members))
    anchors = np.asarray(anchors)
    height = max(box.height, 1.0)
    ay = (ax.transData.transform(anchors)[:, 1] - box.y0) / height
    # a short axes: smaller names (down to 3 pt) rather than names on one another
    size_pt = max(min(size_pt, height / pt / (1.25 * len(lead) + 0.5)), 3.0)
    gap = 1.25 * size_pt * pt / height
    ys = _spread(ay, gap, 0.5 * gap, 1.0 - 0.5 * gap)
    trans = blended_transform_factory(ax.transAxes, ax.transAxes)
    for (x, y), g, text, yl in zip(anchors, groups, texts, ys):
        color = colors[g[-1]]
        ax.annotate(
            text, xy=(x, y), xycoords="data", xytext=(1.03, yl), textcoords=trans,
            color=color, fontsize=size_pt, va="center", ha="left", annotation_clip=False,
            gid="numkfs-curve-label",
            arrowprops=dict(arrowstyle="-", color=color, lw=0.6, shrinkA=1.0, shrinkB=0.0, relpos=(0.0, 0.5)),
        )


def plot_stability(selection, ax=None, *, highlight=None, labels="auto"):
    """The stability path: each feature's selection probability against the grid.

    Drawn in the style of :func:`plot_path` (names right of the axes or in
    a legend, never over a curve): the threshold is a dashed horizontal
    line, the part of the grid outside the region Λ (where the subsamples
    select more than q features on average) is shaded, both explained under
    the x label; the top axis counts the features at or above the threshold.

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
        ``ax.lines[j]`` is feature ``j``; then the threshold line.  Nothing
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
    from .paths import FeaturePath

    t = float(selection.threshold_)
    names = getattr(selection, "feature_names_in_", None)
    path = FeaturePath(selection.grid_, selection.stability_path_, grid_name=selection.grid_name_,
                       feature_names=names, method="stability", tol=float(np.nextafter(t, 0.0)))
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
    >>> ax = plot_cv_gamma(KNIFERegressorCV(n_lambdas=8, cv=3).fit(X, y).path_)
    >>> len(ax.gamma_axes.lines) >= 1  # matplotlib.pyplot.show() displays the figure
    True
    """
    if path.cv_scores is None or "gamma" not in path.extra:
        raise ValueError("plot_cv_gamma needs a cross-validated KNIFE path (cv_scores and extra['gamma']).")
    ax = _axes(ax)
    xs = np.asarray(path.grid, dtype=float)
    S = np.asarray(path.cv_scores, dtype=float)
    mean = np.nanmean(S, axis=1)
    n = np.maximum(np.sum(np.isfinite(S), axis=1), 1)
    se = np.nanstd(S, axis=1, ddof=1) / np.sqrt(n) if S.shape[1] > 1 else np.zeros_like(mean)
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
