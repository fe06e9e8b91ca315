"""Plots are checked by the data they draw (Agg backend)."""
import matplotlib

matplotlib.use("Agg")
import numpy as np

from numkfs.plotting import plot_accuracy_vs_fraction, plot_cross_check, plot_path, plot_weights
from numkfs.paths import FeaturePath
from numkfs.solvers import BoxQP, cross_check


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
