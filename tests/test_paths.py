import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

import numkfs
from numkfs import FeaturePath, select
from numkfs.solvers import available_solvers


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


def _sel_data(n=30, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, 2 * X[:, 0] + 0.1 * rng.standard_normal(n)


def test_to_pandas_with_features_named_like_its_columns():
    # to_pandas() failed when a feature was named lambda2, objective or p
    pytest.importorskip("pandas")
    from numkfs.methods.garrote import garrote_path

    X, y = _sel_data()
    path = garrote_path(X, y, n_grid=5, feature_names=["lambda2", "objective", "cv_score", "x"])
    path.cv_scores = np.zeros((5, 2))
    df = path.to_pandas()
    assert list(df.columns) == ["lambda2_", "objective_", "cv_score_", "lambda2", "objective", "cv_score", "x"]
    np.testing.assert_array_equal(df["lambda2"], path.weights[:, 0])
    np.testing.assert_array_equal(df["lambda2_"], path.grid)


def test_true_support_as_indices():
    # knife_path(true_support=[0, 3]) was read as a 2-long mask
    from numkfs import FeaturePath

    path = FeaturePath(grid=np.arange(3.0), weights=np.zeros((3, 5)), true_support=[0, 3])
    assert path.true_support.tolist() == [True, False, False, True, False]
    mask = [True, False, False, True, False]
    assert FeaturePath(grid=np.arange(3.0), weights=np.zeros((3, 5)), true_support=mask).true_support.tolist() == mask
    with pytest.raises(ValueError, match="true_support"):
        FeaturePath(grid=np.arange(3.0), weights=np.zeros((3, 5)), true_support=[7])


CONIC = [r["name"] for r in available_solvers(check=False) if r["installed"] and r["name"] in ("CLARABEL", "ECOS", "SCS")]


@pytest.fixture(scope="module")
def garrote_data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = 2 * X[:, 1] + 0.1 * rng.standard_normal(60)
    return X, y


def test_path_support_is_the_estimators_support(garrote_data):
    X, y = garrote_data
    est = numkfs.GarroteRegressorCV(n_grid=10, cv=3, solver="CLARABEL" if CONIC else "native",
                                    random_state=0).fit(X, y)
    assert np.array_equal(est.get_support(), est.path_.selected(est.best_index_))
    assert est.path_.chosen_index == est.best_index_
    res = select(X, y, "garrote", cv=3, solver="CLARABEL" if CONIC else "native", n_grid=10)
    assert np.array_equal(res.selected, res.path.selected(res.index))
