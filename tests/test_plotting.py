"""Plots are checked by the data they draw (Agg backend)."""
import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

from numkfs import KNIFERegressorCV
from numkfs.datasets import make_sinusoid
from numkfs.methods.knife import knife_path
from numkfs.plotting import plot_accuracy_vs_fraction, plot_cross_check, plot_path, plot_weights
from numkfs.paths import FeaturePath
from numkfs.solvers import BoxQP, cross_check


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def test_accuracy_vs_fraction_sorted_with_baseline():
    ax = plot_accuracy_vs_fraction([0.5, 0.1, 1.0], [0.8, 0.7, 0.75], baseline=0.74, label="lp-KTA")
    line = ax.lines[0]
    np.testing.assert_allclose(line.get_xdata(), [0.1, 0.5, 1.0])
    np.testing.assert_allclose(line.get_ydata(), [0.7, 0.8, 0.75])
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [0.74, 0.74])


def test_cross_check_bars_follow_the_table():
    rng = np.random.default_rng(0)
    F = rng.standard_normal((30, 5))
    table = cross_check(BoxQP(F.T @ F, rng.standard_normal(5), factor=F), ["native", "CLARABEL"])
    ax = plot_cross_check(table, what="solve_time")
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, [r["solve_time"] for r in table.rows])
    assert all(p.get_facecolor()[:3] == matplotlib.colors.to_rgb("tab:green") for p in ax.patches)


def test_weights_bars_sorted_and_coloured():
    ax = plot_weights(np.array([0.0, 0.9, 0.3]), ["a", "b", "c"])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "c", "b"]
    np.testing.assert_allclose([p.get_width() for p in ax.patches], [0.0, 0.3, 0.9])
    assert ax.patches[0].get_facecolor()[:3] == matplotlib.colors.to_rgb("0.7")


def test_path_with_zero_in_a_penalty_grid_uses_symlog_and_marks_the_choice():
    path = FeaturePath([0.0, 0.1, 1.0, 10.0], np.array([[1, 1], [0.8, 0.5], [0.4, 0], [0, 0]]),
                       grid_name="lambda2")
    ax = plot_path(path, mark=2)
    assert ax.get_xscale() == "symlog"
    assert ax.lines[-1].get_xdata()[0] == 1.0  # the vertical line at the chosen λ2


# --------------------------------------------------------------------------
# paths that read at 30 features


def _path30(grid=None, chosen=12):
    """30 features; feature j leaves the path at point 3 + j (a sparser path
    as the grid grows), so the chosen point 12 keeps features 10..29 (20)."""
    grid = np.r_[0.0, np.logspace(-2, 3, 39)] if grid is None else grid
    n = len(grid)
    t = np.arange(n)[:, None]
    start = np.linspace(0.2, 1.0, 30)[None, :]
    leave = 3 + np.arange(30)[None, :]
    W = np.where(t < leave, start * (1 - t / leave), 0.0)
    names = [f"gene_{j:02d}" for j in range(30)]
    return FeaturePath(grid, W, grid_name="lambda2", feature_names=names, method="KNIFE",
                       chosen_index=chosen, cv_rule="1se")


def _overlaps(artists, renderer):
    """Pairs of texts whose boxes (the text alone, not an annotation's leader line) overlap."""
    from matplotlib.text import Text

    boxes = [Text.get_window_extent(a, renderer) for a in artists if a.get_visible() and a.get_text()]
    return [(i, k) for i in range(len(boxes)) for k in range(i + 1, len(boxes))
            if boxes[i].overlaps(boxes[k])]


def test_30_features_selected_coloured_named_at_line_ends_rest_grey(tmp_path):
    from matplotlib.colors import to_rgba
    from matplotlib.text import Annotation

    path = _path30()
    sel = path.selected(path.chosen_index)
    assert sel.sum() == 20 and not sel[:10].any()
    ax = path.plot()
    ax.figure.savefig(tmp_path / "path30.png", dpi=80)  # draws everything (and is looked at in review)
    lines = ax.lines[:30]
    grey = to_rgba("0.78")
    colours = [to_rgba(l.get_color()) for l in lines]
    # unselected features: light grey; selected ones: 20 different colours, none grey
    assert all(colours[j] == grey for j in np.flatnonzero(~sel))
    sel_colours = [colours[j] for j in np.flatnonzero(sel)]
    assert len(set(sel_colours)) == 20 and grey not in sel_colours
    # names of exactly the selected features, at the line ends, in their line's colour
    notes = [t for t in ax.texts if isinstance(t, Annotation) and t.get_gid() == "numkfs-curve-label"]
    assert sorted(t.get_text() for t in notes) == [f"gene_{j:02d}" for j in np.flatnonzero(sel)]
    for t in notes:
        j = int(t.get_text()[-2:])
        assert to_rgba(t.get_color()) == colours[j]
    assert ax.get_legend() is None
    renderer = ax.figure.canvas.get_renderer()
    assert _overlaps(notes, renderer) == []
    assert _leaders_off_their_curves(ax, path, clearance_px=3.0) == []
    # the chosen point: a vertical line at its λ2 and a note with the rule and the count
    vline = ax.lines[30]
    assert vline.get_xdata()[0] == path.grid[12]
    chosen_note = [t for t in ax.texts if t.get_gid() == "numkfs-chosen"]
    assert [t.get_text() for t in chosen_note] == ["dotted line: chosen (1se), 20 features at λ₂ = 0.28"]
    # words on the axes, one style
    assert ax.get_title() == "KNIFE feature path"
    assert ax.get_xlabel() == "penalty λ₂ on the feature weights"
    assert ax.get_ylabel() == "feature weight w"


def test_top_axis_counts_selected_features_where_the_count_changes():
    path = _path30()
    ax = path.plot()
    ax.figure.canvas.draw()
    top = ax.numkfs_top_axis
    ticks = top.get_xticks()
    texts = [t.get_text() for t in top.get_xticklabels()]
    counts = path.n_selected()
    assert top.get_xlabel() == "number of selected features"
    assert len(ticks) >= 5 and texts[0] == "30"
    for x, s in zip(ticks, texts):  # every label is the count at its grid point
        i = int(np.flatnonzero(path.grid == x)[0])
        assert int(s) == counts[i]
    # the top axis lines up with the bottom one (same scale, same limits)
    assert top.get_xscale() == ax.get_xscale() == "symlog"
    np.testing.assert_allclose(top.get_xlim(), ax.get_xlim())
    for x in ticks:
        np.testing.assert_allclose(top.transData.transform((x, 0))[0], ax.transData.transform((x, 0))[0])
    assert _overlaps(top.get_xticklabels(), ax.figure.canvas.get_renderer()) == []


def test_log_axis_with_zero_has_readable_ticks():
    for lo in (0.37, 3.7, 1e-3):  # the smallest positive λ2 below, above and at a decade
        grid = np.r_[0.0, np.geomspace(lo, lo * 1e4, 20)]
        path = FeaturePath(grid, np.linspace(1, 0, 21)[:, None] * np.ones((1, 3)), grid_name="lambda2")
        ax = path.plot()
        ax.figure.canvas.draw()
        labels = [t for t in ax.get_xticklabels() if t.get_text()]
        values = [x for x, t in zip(ax.get_xticks(), ax.get_xticklabels()) if t.get_text()]
        lo_x, hi_x = ax.get_xlim()
        shown = [(v, t) for v, t in zip(values, labels) if lo_x <= v <= hi_x]
        assert shown[0][0] == 0 and shown[0][1].get_text() == "0"
        # every other tick is a decade beyond the linear piece (no "10⁰" squeezed next to "0")
        assert all(v >= lo and np.log10(v) == round(np.log10(v)) for v, _ in shown[1:])
        assert len(shown) >= 3
        assert _overlaps([t for _, t in shown], ax.figure.canvas.get_renderer()) == []


def test_nmmkl_integer_m_is_drawn_with_markers_not_lines():
    sel = np.array([[0, 0, 1, 0], [1, 1, 0, 0], [1, 1, 1, 0]], dtype=float)  # not nested
    path = FeaturePath([1, 2, 3], sel, grid_name="m", method="nmmkl", feature_names=list("XYZW"),
                       chosen_index=1)
    ax = path.plot()
    assert all(l.get_linestyle() == "None" and l.get_marker() == "o" for l in ax.lines[:4])
    # one row per feature ever selected (W never is), a dot where it is selected
    rows = {t.get_text(): y for t, y in zip(ax.get_yticklabels(), ax.get_yticks())}
    assert sorted(rows) == ["X", "Y", "Z"]
    np.testing.assert_allclose(ax.lines[2].get_xdata(), [1, 3])
    np.testing.assert_allclose(ax.lines[2].get_ydata(), [rows["Z"]] * 2)
    assert len(ax.lines[3].get_xdata()) == 0
    assert ax.get_xlabel() == "number of features m (integer)"
    assert all(float(x).is_integer() for x in ax.get_xticks())
    # continuous weights over m (weights="p"): markers too
    path.weights = path.weights * 0.5
    ax = path.plot(mark=False)
    assert all(l.get_linestyle() == "None" for l in ax.lines)
    assert len(ax.lines) == 4 and not [t for t in ax.texts if t.get_gid() == "numkfs-chosen"]


def test_every_method_titled_and_labelled_in_words():
    cases = {
        ("L1KR", "D"): ("L1KR feature path", "ℓ₁ budget D = ||β||₁", "ARD kernel weight β"),
        ("lpkta", "p"): ("lp-KTA feature path", "norm exponent p (2 = dense, 1 = sparse)", "kernel weight η"),
        ("garrote", "lambda2"): ("Garrote feature path", "penalty λ₂ on the feature weights", "feature weight w"),
        ("cosso", "M"): ("COSSO feature path", "COSSO bound M on Σ θ", "component weight θ"),
    }
    for (method, grid_name), expected in cases.items():
        path = FeaturePath([1.0, 2.0, 3.0], np.eye(3), grid_name=grid_name, method=method)
        ax = path.plot()
        assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == expected
    path.extra["arc_length"] = np.array([0.0, 0.5, 2.0])
    assert path.plot(x="arc_length").get_xlabel() == "arc length along the path"


def test_few_features_legend_outside_with_distinct_colours():
    path = FeaturePath(np.linspace(0, 1, 5), np.random.default_rng(0).random((5, 12)), grid_name="D")
    ax = path.plot()
    leg = ax.get_legend()
    assert [t.get_text() for t in leg.get_texts()] == [f"x{j}" for j in range(12)]
    assert len({tuple(matplotlib.colors.to_rgba(l.get_color())) for l in ax.lines}) == 12
    assert ax.numkfs_top_axis is not None and path.plot(top_axis=False).numkfs_top_axis is None


@pytest.mark.slow
def test_estimators_fitted_on_a_dataframe_keep_column_names_in_path():
    """Every estimator with a ``path_`` names its features after the columns:
    the registry's (tests/conftest.py) and the two selectors over them."""
    import warnings

    pd = __import__("pytest").importorskip("pandas")
    from conftest import make, names, task_of

    import numkfs
    from numkfs.datasets import make_sinusoid

    X, y, _ = make_sinusoid(n_samples=40, random_state=0)
    X = X[:, :4]
    yc = (y > np.median(y)).astype(int)
    df = pd.DataFrame(X, columns=["temp", "wind", "hum", "vis"])
    fits = [(name, make(name), y if task_of(name) == "regression" else yc) for name in names()]
    fits += [(name, getattr(numkfs, name)(), y) for name in ("StabilitySelection", "KnockoffFilter")]
    checked = []
    for name, est, target in fits:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(df, target)
        if hasattr(est, "path_"):
            assert list(est.path_.feature_names) == ["temp", "wind", "hum", "vis"], name
            checked.append(name)
    assert {"KNIFERegressorCV", "LpKTASelector", "LpKTAClassifier", "L1KRRegressor", "LpKTAClassifierCV",
            "StabilitySelection"} <= set(checked)


def test_many_selected_features_name_the_20_largest():
    from matplotlib.text import Annotation

    rng = np.random.default_rng(1)
    W = np.abs(rng.standard_normal((6, 60))) * np.linspace(1, 0.1, 6)[:, None]
    path = FeaturePath(np.linspace(2, 1, 6), W, grid_name="p", method="lpkta", chosen_index=0)
    ax = path.plot()
    labels = [t.get_text() for t in ax.texts if isinstance(t, Annotation) and t.get_gid() == "numkfs-curve-label"]
    largest = np.argsort(-W[0])[:20]
    assert len(labels) == 20  # one name per curve; a name where a curve's line is another's too says so ("x51, x54")
    assert sorted({n for s in labels for n in s.split(", ")}) == sorted(f"x{j}" for j in largest)
    note = [t.get_text() for t in ax.texts if t.get_gid() == "numkfs-named-note"]
    assert note == ["named: the 20 largest of 60 selected features"]
    # the chosen point sits at the right edge (p = 2): its note is under the title, above the axes
    ax.figure.canvas.draw()
    renderer = ax.figure.canvas.get_renderer()
    chosen = [t for t in ax.texts if t.get_gid() == "numkfs-chosen"][0]
    box = chosen.get_window_extent(renderer)
    assert box.y0 >= ax.numkfs_top_axis.xaxis.label.get_window_extent(renderer).y1
    assert box.y1 <= ax.title.get_window_extent(renderer).y0
    assert _overlapping_texts(ax.figure) == []
    assert _leaders_off_their_curves(ax, path) == []


# --------------------------------------------------------------------------
# no word over a word or over a curve


def _drawn_texts(fig):
    """(text, display box) of every visible, non-empty Text the figure draws:
    titles, axis labels, annotations, notes, the legend, and the tick labels
    of every axis (both x axes, the y axis) at ticks inside the view."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ticks, shown = set(), []
    for a in fig.axes:
        for axis in (a.xaxis, a.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for locs, tks in ((axis.get_majorticklocs(), axis.get_major_ticks()),
                              (axis.get_minorticklocs(), axis.get_minor_ticks())):
                for tk in tks:
                    ticks.update((id(tk.label1), id(tk.label2)))
                for loc, tk in zip(locs, tks):
                    if lo - 1e-9 * (hi - lo) <= loc <= hi + 1e-9 * (hi - lo):
                        shown += [tk.label1, tk.label2]
    texts = [t for t in fig.findobj(Text) if id(t) not in ticks] + shown
    out = []
    for t in texts:
        if t.get_visible() and t.get_text().strip():
            box = Text.get_window_extent(t, renderer)  # the words alone (not an annotation's leader)
            if box.width > 0 and box.height > 0:
                out.append((t, box))
    return out


def _overlapping_texts(fig):
    boxes = _drawn_texts(fig)
    return [(a.get_text(), b.get_text()) for i, (a, ba) in enumerate(boxes)
            for b, bb in boxes[i + 1:] if ba.overlaps(bb)]


def _display_curves(ax, path):
    """Each feature's curve as drawn: display coordinates (n_points, 2)."""
    return [line.get_transform().transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
            for line in ax.lines[:path.n_features]]


def _distance_to(curve, point):
    """Display distance from a point to a polyline."""
    a, b = curve[:-1], curve[1:]
    v = b - a
    L = np.maximum((v * v).sum(axis=1), 1e-300)
    u = np.clip(((point - a) * v).sum(axis=1) / L, 0.0, 1.0)
    return float(np.min(np.hypot(*(a + u[:, None] * v - point).T))) if len(curve) > 1 else float(
        np.hypot(*(curve[0] - point)))


def _leaders_off_their_curves(ax, path, clearance_px=1.0):
    """Names whose leader line does not end on one of the named features'
    curves (0.5 px), or ends within ``clearance_px`` of a curve it does not
    name (a grey curve drawn exactly under a named one, within 0.5 px
    everywhere, is the same line); also two leaders ending at one point."""
    from matplotlib.text import Annotation

    curves = _display_curves(ax, path)
    index = {str(n): j for j, n in enumerate(path.feature_names)}
    bad, ends = [], []
    for t in ax.texts:
        if not isinstance(t, Annotation) or t.get_gid() != "numkfs-curve-label":
            continue
        own = [index[n] for n in t.get_text().split(", ")]
        end = ax.transData.transform(t.xy)
        ends.append(end)
        if min(_distance_to(curves[j], end) for j in own) > 0.5:
            bad.append((t.get_text(), "not on its curve"))
        same = [j for j in range(path.n_features)
                if any(np.max(np.abs(curves[j] - curves[k])) <= 0.5 for k in own)]
        near = [str(path.feature_names[j]) for j in range(path.n_features)
                if j not in same and _distance_to(curves[j], end) < clearance_px]
        if near:
            bad.append((t.get_text(), "at", near[:5]))
    ends = np.asarray(ends)
    for i in range(len(ends)):
        for k in range(i + 1, len(ends)):
            if np.hypot(*(ends[i] - ends[k])) < 1.0:
                bad.append(("two leaders end at one point", i, k))
    return bad


def _chosen_note_over_lines(fig):
    renderer = fig.canvas.get_renderer()
    hits = []
    for a in fig.axes:
        for t in a.texts:
            if t.get_gid() != "numkfs-chosen":
                continue
            box = t.get_window_extent(renderer)
            for ax_ in fig.axes:
                hits += [line.get_label() for line in ax_.lines
                         if line.get_path().transformed(line.get_transform()).intersects_bbox(box, filled=False)]
    return hits


def _check_words(ax, path, clearance_px=1.0):
    fig = ax.figure
    assert _overlapping_texts(fig) == []
    assert _leaders_off_their_curves(ax, path, clearance_px) == []
    assert [t for t in ax.texts if t.get_gid() == "numkfs-chosen"], "the chosen point has a note"
    assert _chosen_note_over_lines(fig) == []
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    # the y label stays left of the axes; the notes are outside them
    assert ax.yaxis.get_label_position() == "left"
    assert ax.yaxis.label.get_window_extent(renderer).x1 <= box.x0
    for t in ax.texts:
        if t.get_gid() in ("numkfs-chosen", "numkfs-named-note"):
            note = t.get_window_extent(renderer)
            assert note.y0 >= box.y1 or note.y1 <= box.y0, t.get_text()
    # the top axis keeps several counts, the chosen one among them
    top = ax.numkfs_top_axis
    assert len(top.get_xticks()) >= 4
    assert path.grid[path.chosen_index] in top.get_xticks()


def _save(ax, name):
    ax.figure.savefig(f"{__import__('tempfile').gettempdir()}/numkfs_{name}.png", dpi=100)


def test_words_apart_synthetic_30_features():
    path = _path30()
    ax = path.plot()
    _check_words(ax, path, clearance_px=3.0)  # every curve here has a point 3 px clear of the others
    _save(ax, "path30")


def test_words_apart_in_a_small_figure_and_after_a_resize():
    import matplotlib.pyplot as plt

    path = _path30()
    fig, ax = plt.subplots(figsize=(4.5, 3.0), layout="tight")
    path.plot(ax=ax)
    _check_words(ax, path)
    fig.set_size_inches(3.5, 3.0)  # the top axis picks its counts again at draw time
    fig.canvas.draw()
    assert _overlaps(ax.numkfs_top_axis.get_xticklabels(), fig.canvas.get_renderer()) == []


@pytest.fixture(scope="module")
def lpkta_paths():
    from numkfs import lpkta_path
    from numkfs.datasets import load_dataset

    out = {}
    for name in ("sonar", "colon"):
        d = load_dataset(name)
        out[name] = lpkta_path(d.data, d.target, feature_names=d.feature_names)
    return out


@pytest.mark.parametrize("name,n_chosen", [("sonar", 60), ("sonar", 20),
                                            pytest.param("colon", 18, marks=pytest.mark.slow),
                                            pytest.param("colon", 500, marks=pytest.mark.slow)])
def test_words_apart_lpkta_sonar_and_colon(lpkta_paths, name, n_chosen):
    path = lpkta_paths[name]
    counts = path.n_selected()
    path.chosen_index = int(np.flatnonzero(counts >= n_chosen)[-1])  # as a CV could choose
    path.cv_rule = "best"
    ax = path.plot()
    _check_words(ax, path)
    _save(ax, f"{name}_{n_chosen}")


@pytest.mark.slow
def test_words_apart_knife_ionosphere():
    """KNIFE starts every weight at 1: the names must not all point at (0, 1)."""
    from numkfs import knife_path
    from numkfs.datasets import load_dataset

    d = load_dataset("ionosphere")
    y = np.where(d.target == d.target[0], 1.0, -1.0)
    path = knife_path(d.data, y, loss="squared_hinge", n_grid=15, random_state=0,
                      feature_names=d.feature_names)
    path.chosen_index, path.cv_rule = 0, "best"  # the densest point: every weight 1
    ax = path.plot()
    _check_words(ax, path)
    _save(ax, "ionosphere")
    path.chosen_index = int(np.flatnonzero(path.n_selected() >= 15)[-1])
    import matplotlib.pyplot as plt

    plt.close("all")
    _check_words(path.plot(), path)


def test_plot_docstrings_say_how_to_show_the_figure():
    from numkfs.plotting import plot_path as pp

    for doc in (FeaturePath.plot.__doc__, pp.__doc__):
        assert "Returns\n" in doc and "Examples\n" in doc
        assert "matplotlib.pyplot.show()" in doc


@pytest.mark.filterwarnings("ignore")
def test_plot_cv_gamma_draws_the_scores_and_each_points_scale():
    import matplotlib

    matplotlib.use("Agg")
    from numkfs.plotting import plot_cv_gamma

    X, y, _ = make_sinusoid(n_samples=50, n_features=6, random_state=0)
    path = KNIFERegressorCV(n_grid=6, cv=3).fit(X, y).path_
    ax = plot_cv_gamma(path)
    sizes = path.cv_fold_sizes  # 50 rows in 3 folds (17, 17, 16): the mean weights them by size
    assert sorted(sizes.tolist()) == [16, 17, 17]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), path.cv_scores @ sizes / 50, rtol=1e-14)
    np.testing.assert_allclose(ax.gamma_axes.lines[0].get_ydata(), path.extra["gamma"])
    assert f"{path.n_selected()[path.chosen_index]} features" in ax.get_title()
    with pytest.raises(ValueError, match="cross-validated KNIFE path"):
        plot_cv_gamma(knife_path(X, y, n_grid=3, random_state=0))


def test_plot_stability_draws_each_stable_group_after_the_threshold():
    from numkfs import StabilitySelection

    rng = np.random.default_rng(0)  # columns 0 and 7: a latent z plus a little noise each (tests/test_stability.py)
    X = rng.standard_normal((120, 8))
    z = X[:, 0].copy()
    X[:, 0] = z + 0.02 * rng.standard_normal(120)
    X[:, 7] = z + 0.02 * rng.standard_normal(120)
    y = 2 * z + X[:, 1] + 0.3 * rng.standard_normal(120)
    sel = StabilitySelection("garrote", n_resamples=10, random_state=0).fit(X, y)
    assert sel.groups_ == [[0, 7]]
    ax = sel.plot()
    assert ax.lines[8].get_label() == "_threshold" and ax.lines[8].get_ydata()[0] == sel.threshold_
    group = ax.lines[9]
    assert group.get_label() == "{x0, x7}"
    np.testing.assert_array_equal(group.get_ydata(), sel.cluster_stability_path_[:, 0])
    alone = np.nanmax(sel.stability_path_[sel.region_][:, [0, 7]])
    assert np.nanmax(group.get_ydata()[sel.region_]) >= sel.threshold_ > alone
