"""The same features in any units.

KNIFE, the garrote, COSSO and L1KR are scale-equivariant in y in exact
arithmetic: their losses scale by s² and their grids come from the data, so
y times s must give the same support and the same chosen point (λ2 / s²
where λ2 is in y's units).  lp-KTA is invariant.  The methods that
standardise X (KNIFE, COSSO, L1KR, lp-KTA, NMMKL, and the garrote's
estimators, which select() runs) must also give the same answer when a
column of X is scaled.  Absolute floors (``tol * max(1, |f|)`` in KNIFE's
stopping rule, ``1e-12 * max(1, |best|)`` in the CV rule's ties) would make
KNIFE select [0] at y x 1e-3 and nothing at y x 1e-6, and the garrote and
L1KR nothing at y x 1e-8.
"""
from __future__ import annotations

import functools
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from conftest import methods  # noqa: E402

import numkfs  # noqa: E402
from numkfs._preprocessing import response_scale  # noqa: E402
from numkfs.methods.knife import knife, knife_path  # noqa: E402


#: select()'s small settings per method (each call well under a few seconds)
PARAMS = {"knife": {"n_grid": 15}, "garrote": {}, "cosso": {"n_grid": 10},
          "l1kr": {"n_grid": 10}, "lpkta": {"grid": np.linspace(2, 1, 11)}}


def _data(n=40, p=5, seed=0):
    """40 x 5 data: y = 2 x0 + sin(2 x1) + noise."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = 2 * X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.standard_normal(n)
    return X, y


def _select(method, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = numkfs.select(X, y, method, task="regression", **PARAMS[method])
    return np.flatnonzero(res.selected).tolist(), res.index, res.path


@functools.lru_cache(maxsize=None)
def _reference(method):
    X, y = _data()
    return _select(method, X, y)


def test_knife_cv_selects_the_same_features_in_any_units_of_y():
    """KNIFERegressorCV(n_grid=15) selects [0, 1] at y x 1e-6, 1e-3 and 1e3 (an absolute floor in
    a stopping rule selects [0] at 1e-3 and nothing at 1e-6), at the same λ2 / s²."""
    X, y = _data()
    ref = numkfs.KNIFERegressorCV(n_grid=15).fit(X, y)
    assert np.flatnonzero(ref.get_support()).tolist() == [0, 1]
    for s in (1e-6, 1e-3, 1e3):
        est = numkfs.KNIFERegressorCV(n_grid=15).fit(X, y * s)
        assert np.flatnonzero(est.get_support()).tolist() == [0, 1], s
        assert est.best_index_ == ref.best_index_, s
        # the path is the same problem in other units: λ2 / s² to round-off (conditioning x eps)
        np.testing.assert_allclose(est.path_.grid / s**2, ref.path_.grid, rtol=1e-9)
        np.testing.assert_allclose(est.predict(X) / s, ref.predict(X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("method", ["garrote", "cosso", "l1kr"])
def test_select_is_the_same_at_y_times_1e8_and_1e_minus_8(method):
    """The garrote, COSSO and L1KR select the same features at y x 1e-8 and 1e8 as at y (an absolute
    floor selects nothing, or drops a true feature, at 1e-8)."""
    X, y = _data()
    support, index, _ = _reference(method)
    assert support == [0, 1]
    for s in (1e-8, 1e8):
        assert _select(method, X, y * s)[:2] == (support, index), s


@pytest.mark.parametrize("method", sorted(methods(task="regression")))
def test_select_is_the_same_at_y_times_1e100_and_1e_minus_100(method):
    """Far from 1, within the range every method accepts (|y| up to 1e150): the CV's mean squared
    errors are of order 1e200 and 1e-200, whose squares in the standard error over- and underflowed,
    so COSSO's "1se" chose the sparsest point (se = inf) or the best one (se = 0): [0, 1] became []
    and [0, 1, 2, 3, 4] on these data."""
    X, y = _data()
    for s in (1e-100, 1e100):
        assert _select(method, X, y * s)[:2] == _reference(method)[:2], s


@settings(max_examples=12, deadline=None, derandomize=True, database=None)
@given(method=st.sampled_from(sorted(methods(task="regression"))), exponent=st.floats(-8.0, 8.0))
def test_selection_does_not_depend_on_the_units_of_y(method, exponent):
    """Property: y times 10**exponent (any real exponent in [-8, 8]) gives the same support and the
    same chosen point, for every regression method of select()."""
    X, y = _data()
    assert _select(method, X, y * 10.0**exponent)[:2] == _reference(method)[:2]


@settings(max_examples=10, deadline=None, derandomize=True, database=None)
@given(method=st.sampled_from(["knife", "garrote", "cosso", "l1kr", "lpkta"]), column=st.integers(0, 4),
       exponent=st.sampled_from([-6.0, -2.5, 3.0, 6.0]))
def test_selection_does_not_depend_on_the_units_of_a_column(method, column, exponent):
    """Property: the methods that standardise X select the same features at the same point when one
    column of X is scaled."""
    X, y = _data()
    X2 = X.copy()
    X2[:, column] *= 10.0**exponent
    assert _select(method, X2, y)[:2] == _reference(method)[:2]


def test_nmmkl_does_not_depend_on_the_units_of_a_column():
    """NMMKL (classification, standardised X): a column scaled by 1e6 leaves the selection as it was."""
    X, y = _data(n=60)
    labels = np.where(y > np.median(y), 1, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = numkfs.select(X, labels, "nmmkl")
        X2 = X.copy()
        X2[:, 1] *= 1e6
        res = numkfs.select(X2, labels, "nmmkl")
    assert np.array_equal(res.selected, ref.selected) and res.index == ref.index


def test_knife_answers_come_back_in_the_units_of_y():
    """knife_path solves on y / response_scale(y) and reports λ2, α, the objective and its top in y's
    units: at y x s they are s², s, s² and s² times those at y (to round-off), a grid you give is
    reported exactly as given, and the weights are the same."""
    X, y = _data()
    y = y - y.mean()
    ref = knife_path(X, y, n_grid=8, random_state=0)
    for s in (2.0**-20, 1e-5, 3e4):
        p = knife_path(X, y * s, n_grid=8, random_state=0)
        np.testing.assert_allclose(p.weights, ref.weights, atol=1e-9)
        np.testing.assert_allclose(p.grid, ref.grid * s**2, rtol=1e-9)
        np.testing.assert_allclose(p.objective, ref.objective * s**2, rtol=1e-9)
        np.testing.assert_allclose(p.extra["alpha"], ref.extra["alpha"] * s, rtol=1e-7, atol=1e-9 * s)
        assert p.extra["lambda2_top"] == pytest.approx(ref.extra["lambda2_top"] * s**2, rel=1e-9)
    grid = [0.0, 0.1, 1.0, 10.0]
    assert knife_path(X, y * 1e-3, grid=grid, random_state=0).grid.tolist() == grid
    a, b = knife(X, y, lambda2=5.0), knife(X, y * 1e3, lambda2=5e6)
    np.testing.assert_allclose(b.weights, a.weights, atol=1e-9)
    assert b.objective == pytest.approx(a.objective * 1e6, rel=1e-9)
    np.testing.assert_allclose(np.diff(b.objective_history) / 1e6, np.diff(a.objective_history), atol=1e-9 * a.objective)


def test_response_scale_is_the_root_mean_square_without_overflow():
    assert response_scale(np.array([3.0, -4.0])) == pytest.approx(np.sqrt(12.5), rel=1e-15)
    assert response_scale(np.array([3e-300, -4e-300])) == pytest.approx(np.sqrt(12.5) * 1e-300, rel=1e-14)
    assert response_scale(np.array([3e200, -4e200])) == pytest.approx(np.sqrt(12.5) * 1e200, rel=1e-14)
    assert response_scale(np.zeros(4)) == 1.0  # nothing to scale: the zero model, in any units


def test_a_response_within_its_own_round_off_is_refused_by_name():
    """A y that varies only within the round-off of its values holds no digits once centred: a clear
    error, not a fit of its rounding noise."""
    X, _ = _data()
    y = 1e8 + 1e-9 * np.arange(40)
    with pytest.raises(ValueError, match=r"y varies only by .* round-off"):
        numkfs.select(X, y, "garrote")


@pytest.mark.slow
def test_ozone_knife_keeps_its_features_with_the_level_in_thousandths():
    """The README's main job with y / 1000 selects what it selects on y (an absolute floor gave press,
    hum and invTemp instead of KNIFE's selection on y)."""
    from numkfs.datasets import load_dataset

    d = load_dataset("ozone")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = numkfs.select(d.data, d.target, "knife", feature_names=d.feature_names)
        b = numkfs.select(d.data, d.target / 1000.0, "knife", feature_names=d.feature_names)
    assert np.array_equal(a.selected, b.selected) and a.index == b.index
    assert {d.feature_names[j] for j in np.flatnonzero(b.selected)} == {"temp", "press", "vis", "hum", "invTemp"}


@pytest.mark.parametrize("name", ["garrote", "cosso", "l1kr", "lpkta"])
def test_every_path_function_is_the_same_problem_in_any_units_of_y(name):
    """garrote_path, cosso_path, l1kr_path and lpkta_path at y x s: the same weights (the garrote to
    round-off: it solves on y / response_scale(y); before, its absolute KKT floor left them 5e-5 apart at
    1e-8), the same support, and the grid in its units: λ2 x s² for the garrote, COSSO's budgets M,
    L1KR's ||β||₁ and lp-KTA's p unchanged.  L1KR's tolerance is its tracker's (tol 1e-8 on the KKT
    system, amplified along the path)."""
    from numkfs import cosso_path, garrote_path, l1kr_path, lpkta_path

    X, y = _data()
    run, power, atol = {"garrote": (lambda v: garrote_path(X, v, n_grid=20), 2, 1e-12),
                        "cosso": (lambda v: cosso_path(X, v, n_grid=8), 0, 1e-9),
                        "l1kr": (lambda v: l1kr_path(X, v, n_grid=8), 0, 1e-6),
                        "lpkta": (lambda v: lpkta_path(X, v), 0, 1e-12)}[name]
    ref = run(y)
    for s in (1e-8, 1e8):
        p = run(y * s)
        # L1KR's last point is where its tracker ended, located to the tracker's tolerance
        np.testing.assert_allclose(p.grid / s**power, ref.grid, rtol=1e-7 if name == "l1kr" else 1e-9)
        np.testing.assert_allclose(p.weights, ref.weights, atol=atol)
        assert np.array_equal(p.weights > p.tol, ref.weights > ref.tol)
    if name == "garrote":
        np.testing.assert_allclose(p.extra["coef"] / 1e8, ref.extra["coef"], rtol=1e-9, atol=1e-12)
        grid = [0.1, 0.01, 1e-7]
        assert garrote_path(X, y * 3e-3, grid=grid).grid.tolist() == grid  # reported as given


def _sel_data(n=30, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, 2 * X[:, 0] + 0.1 * rng.standard_normal(n)


_SCALE_RUNS = {
    "knife": lambda X, y: __import__("numkfs.methods", fromlist=["knife"]).knife(X, y, lambda2=0.5),
    "lpkta": lambda X, y: __import__("numkfs.methods", fromlist=["lpkta_path"]).lpkta_path(X, y),
    "l1kr": lambda X, y: __import__("numkfs.methods", fromlist=["l1kr_path"]).l1kr_path(X, y),
    "garrote": lambda X, y: __import__("numkfs.methods", fromlist=["garrote_path"]).garrote_path(X, y, n_grid=5),
}


@pytest.mark.parametrize("method", sorted(_SCALE_RUNS))
@pytest.mark.parametrize("x_scale,y_scale,message", [
    (1e160, 1.0, r"column 0 of X has values up to 2\.3e\+160"),
    (1e-210, 1.0, r"column 0 of X varies only by 4\.1e-210"),
    (1.0, 1e155, r"y has values up to 4\.8e\+155"),
])
def test_extreme_scales_refused_with_a_reason(method, x_scale, y_scale, message):
    # |X| beyond ~1e155 or below ~1e-200: all-zero weights (KNIFE warned, wrongly, "constant");
    # lpkta_path(X, y * 1e155): NaN weights with only a RuntimeWarning
    X, y = _sel_data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no NaN/overflow on the way to the refusal
        # (scikit-learn's type_of_target casts y to int to look for whole numbers: not numkfs arithmetic)
        warnings.filterwarnings("ignore", "invalid value encountered in cast", RuntimeWarning)
        with pytest.raises(ValueError, match=message):
            _SCALE_RUNS[method](X * x_scale, y * y_scale)


def test_largest_magnitude_from_either_extreme():
    """check_X takes max |x| of a column from its minimum and maximum (no |X|
    temporary): a column whose largest magnitude is negative is named with it."""
    from numkfs._validation import check_X

    X = np.array([[1.0, 2.0], [-3e160, 1.0], [2.0, 5e159], [0.5, -1.0]])
    with pytest.raises(ValueError, match=r"column 0 of X has values up to 3\.0e\+160"):
        check_X(X)
    with pytest.raises(ValueError, match=r"column 0 of X has values up to 5\.0e\+159"):
        check_X(X[:, 1:])  # positive this time
    assert check_X(X / 1e140).shape == (4, 2)  # within range: accepted, both signs


def test_garrote_lambda1_beyond_floating_point_refused():
    # garrote_path(lambda1=1e200) returned NaN weights with only a RuntimeWarning
    from numkfs.methods.garrote import garrote_path

    X, y = _sel_data()
    with pytest.raises(ValueError, match=r"lambda1 = 1\.0e\+200 is .* times the scale of X'X"):
        garrote_path(X, y, lambda1=1e200)


@pytest.mark.parametrize("scale", [1e-140, 1e140])
def test_large_but_representable_scales_give_the_same_selection(scale):
    # within the accepted range the standardising methods are scale-invariant
    from numkfs.estimators import KNIFERegressor
    from numkfs.methods import l1kr_path, lpkta_path

    X, y = _sel_data()
    labels = np.where(y > 0, 1, -1)
    runs = [lambda Z: KNIFERegressor(lambda2=0.5).fit(Z, y).feature_weights_,
            lambda Z: lpkta_path(Z, labels).weights[-1], lambda Z: l1kr_path(Z, y).weights[-1]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for run in runs:
            np.testing.assert_allclose(run(X * scale), run(X), rtol=1e-6, atol=1e-9)


def test_select_nmmkl_on_tiny_scale_returns_quickly(tmp_path):
    # select(X * 1e-300, y, "nmmkl") hung inside liblinear (the CV score's linear SVM on columns
    # StandardScaler cannot rescale): now refused by name before any fit, within seconds
    script = textwrap.dedent("""
        import numpy as np
        from numkfs import select
        rng = np.random.default_rng(0)
        X = rng.standard_normal((30, 4))
        y = np.where(X[:, 0] > 0, 1, -1)
        try:
            select(X * 1e-300, y, "nmmkl", n_features=1)
        except ValueError as exc:
            print("refused:", exc)
    """)
    try:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("select(X * 1e-300, y, 'nmmkl') ran over 120 s")
    assert "refused:" in out.stdout and "varies only by" in out.stdout, out.stdout + out.stderr[-2000:]
