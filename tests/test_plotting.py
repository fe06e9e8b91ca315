"""Plots are checked by the data they draw (Agg backend)."""
import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

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
# paths that read at 30 features (issue #18, part 3)


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
    notes = [t for t in ax.texts if isinstance(t, Annotation)]
    assert sorted(t.get_text() for t in notes) == [f"gene_{j:02d}" for j in np.flatnonzero(sel)]
    for t in notes:
        j = int(t.get_text()[-2:])
        assert to_rgba(t.get_color()) == colours[j]
        assert t.xy[1] == path.weights[0, j]  # the dense end (λ2 = 0) is where the weights are largest
    assert ax.get_legend() is None
    renderer = ax.figure.canvas.get_renderer()
    assert _overlaps(notes, renderer) == []
    # the chosen point: a vertical line at its λ2 and a note with the rule and the count
    vline = ax.lines[30]
    assert vline.get_xdata()[0] == path.grid[12]
    chosen_note = [t for t in ax.texts if t.get_gid() == "numkfs-chosen"]
    assert [t.get_text().strip() for t in chosen_note] == ["chosen (1se): 20 features"]
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
    """Every estimator with a ``path_`` names its features after the columns."""
    import inspect
    import warnings

    pd = __import__("pytest").importorskip("pandas")
    import numkfs
    from numkfs.datasets import make_sinusoid

    X, y, _ = make_sinusoid(n_samples=40, random_state=0)
    X = X[:, :4]
    yc = (y > np.median(y)).astype(int)
    df = pd.DataFrame(X, columns=["temp", "wind", "hum", "vis"])
    fast = {"n_lambdas": 3, "cv": 2, "n_Ms": 2, "n_points": 3, "n_features_to_select": 2, "max_steps": 50,
            "D_max": 1.0, "p_grid": [2.0, 1.5, 1.0]}
    checked = []
    for name in numkfs.__all__:
        cls = getattr(numkfs, name)
        if not (inspect.isclass(cls) and hasattr(cls, "fit")):
            continue
        params = cls().get_params()
        est = cls(**{k: v for k, v in fast.items() if k in params})
        target = yc if ("Classifier" in name or "KTA" in name or "NMMKL" in name) else y
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(df, target)
        if hasattr(est, "path_"):
            assert list(est.path_.feature_names) == ["temp", "wind", "hum", "vis"], name
            checked.append(name)
    assert {"KNIFERegressorCV", "LpKTASelector", "LpKTAClassifier", "L1KRRegressor"} <= set(checked)


def test_many_selected_features_name_the_20_largest():
    from matplotlib.text import Annotation

    rng = np.random.default_rng(1)
    W = np.abs(rng.standard_normal((6, 60))) * np.linspace(1, 0.1, 6)[:, None]
    path = FeaturePath(np.linspace(2, 1, 6), W, grid_name="p", method="lpkta", chosen_index=0)
    ax = path.plot()
    names = sorted(t.get_text() for t in ax.texts if isinstance(t, Annotation))
    largest = np.argsort(-W[0])[:20]
    assert names == sorted(f"x{j}" for j in largest)
    note = [t.get_text() for t in ax.texts if t.get_gid() == "numkfs-named-note"]
    assert note == ["named: the 20 largest of 60 selected features"]
    # the chosen point sits at the right edge (p = 2): its note is left of the line, inside the axes
    ax.figure.canvas.draw()
    chosen = [t for t in ax.texts if t.get_gid() == "numkfs-chosen"][0]
    box = chosen.get_window_extent(ax.figure.canvas.get_renderer())
    assert box.x1 <= ax.get_window_extent().x1 + 1
    assert _overlaps([t for t in ax.texts if isinstance(t, Annotation)], ax.figure.canvas.get_renderer()) == []
