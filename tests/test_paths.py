import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

from numkfs import FeaturePath


def _path():
    grid = np.array([0.0, 0.1, 1.0, 10.0])
    W = np.array([[1, 0.8, 0.5], [0.9, 0.4, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]])
    cv = np.array([[1, 2], [3, 4], [2, 2], [0, 0]], dtype=float)
    return FeaturePath(grid, W, grid_name="lambda2", feature_names=["a", "b", "c"], objective=[4, 3, 2, 1],
                       method="test", cv_scores=cv, true_support=[True, False, False])


def test_selection_and_best():
    p = _path()
    np.testing.assert_array_equal(p.selected(1), [True, True, False])
    np.testing.assert_array_equal(p.n_selected(), [3, 2, 1, 0])
    assert p.best_index == 1
    np.testing.assert_allclose(p.mean_cv_score, [1.5, 3.5, 2, 0])
    assert "lambda2: 0 .. 10 (4 points)" in repr(p)


def test_shape_errors():
    with pytest.raises(ValueError, match="3 rows but grid has 2"):
        FeaturePath([0, 1], np.zeros((3, 2)))
    with pytest.raises(ValueError, match="1 feature names for 2 features"):
        FeaturePath([0], np.zeros((1, 2)), feature_names=["a"])


def test_to_pandas():
    pytest.importorskip("pandas")
    df = _path().to_pandas()
    assert list(df.columns) == ["lambda2", "objective", "cv_score", "a", "b", "c"]
    np.testing.assert_allclose(df["b"], [0.8, 0.4, 0, 0])


def test_plot_draws_the_weights():
    p = _path()
    p.extra["arc_length"] = np.array([0.0, 1.0, 2.0, 3.0])
    ax = p.plot(log_x=False)
    lines = ax.lines
    assert len(lines) == 3
    np.testing.assert_allclose(lines[1].get_ydata(), p.weights[:, 1])
    np.testing.assert_allclose(lines[0].get_xdata(), p.grid)
    # the true feature highlighted in colour, the others thin light grey
    assert lines[0].get_color() != lines[1].get_color() == lines[2].get_color() == (0.78, 0.78, 0.78, 1.0)
    assert lines[0].get_linewidth() > lines[1].get_linewidth()
    ax2 = p.plot(x="arc_length")
    np.testing.assert_allclose(ax2.lines[2].get_xdata(), [0, 1, 2, 3])
    assert ax2.get_xlabel().startswith("arc length")
