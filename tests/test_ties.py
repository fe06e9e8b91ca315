"""Ties that make a requested count arbitrary warn, naming the tied features
(``numkfs._ties``, through :func:`numkfs.model_selection.index_for_count` and
:func:`numkfs.select`)."""
import numpy as np
import pytest

from numkfs import FeaturePath, select
from numkfs.model_selection import index_for_count


# --------------------------------------------------------------------------
# ties that make a requested count arbitrary warn, naming the tied features


def test_tied_features_within_the_solvers_accuracy():
    from numkfs.model_selection import tied_features

    assert tied_features([0.5, 0.3 + 1e-11, 0.3, 0.1], 2).tolist() == [1, 2]
    assert tied_features([0.5, 0.3, 0.3, 0.1], 3).tolist() == []  # both tied ones kept: nothing arbitrary
    assert tied_features([0.5, 0.31, 0.3, 0.1], 2).tolist() == []
    assert tied_features([0.5, 0.3 + 1e-7, 0.3], 2, atol=1e-6).tolist() == [1, 2]


def test_index_for_count_warns_about_near_ties_by_name():
    W = np.array([[0.5, 0.3 + 1e-11, 0.3, 0.1], [0.5, 0.0, 0.0, 0.0]])
    path = FeaturePath([1.0, 2.0], W, feature_names=["a", "b", "c", "d"])
    with pytest.warns(UserWarning, match=r"2 features tie at 0\.3.*: b, c; 1 of them"):
        i, mask = index_for_count(path, 2)
    assert i == 0 and mask.tolist() == [True, True, False, False]


def test_nmmkl_select_warns_about_ties():
    rng = np.random.default_rng(0)
    z = rng.standard_normal(60)
    # four copies of one informative column (equal up to round-off after standardising) and noise
    X = np.column_stack([z, 2 * z, z + 1.0, 3 * z - 2.0, rng.standard_normal((60, 3))])
    y = (z + 0.3 * rng.standard_normal(60) > 0).astype(int)
    names = ["z1", "z2", "z3", "z4", "n1", "n2", "n3"]
    with pytest.warns(UserWarning, match=r"selecting 2 features, but \d+ features tie .*: z1, z2, z3, z4\b"):
        res = select(X, y, "nmmkl", n_features=2, feature_names=names, cv=3)
    assert res.n_selected == 2
