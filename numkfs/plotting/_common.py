"""What the plots of :mod:`numkfs.plotting` share: the axes, the words for
each method and path parameter, the colours, the features to name, the log
and count axes whose tick labels never touch."""
from __future__ import annotations

import numpy as np

from .._registry import METHOD_ROWS


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

#: (display name, weight axis label) per method (``FeaturePath.method``): each
#: method's ``label`` and ``weight_label`` in the method registry
#: (``numkfs._registry``), and stability selection's.
METHOD_LABELS = {**{name: (row.label, row.weight_label) for name, row in METHOD_ROWS.items()},
                 "stability": ("Stability selection", "selection probability")}


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
