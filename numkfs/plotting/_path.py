"""The path plot (:func:`numkfs.plotting.plot_path`) and the column of
feature names right of the axes, each joined to its own curve."""
from __future__ import annotations

import numpy as np

from ._common import (GRID_LABELS, GRID_SYMBOLS, MAX_LEGEND_FEATURES, _axes, _chosen_mask, _count_axis,
                      _default_highlight, _distinct_colors, _font_points, _log_axis, _method_labels, _spread)


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
