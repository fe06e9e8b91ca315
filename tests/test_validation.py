import numbers
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make

from numkfs import select
from numkfs._constraints import Interval, InstanceOf, NoneOr, Options, validate_params
from numkfs._validation import (
    ConstantFeatureWarning, check_binary_labels, check_memory, check_random_state, check_X, check_X_y,
    constant_columns,
)


CONSTRAINTS = {
    "gamma": [Interval(numbers.Real, 0, None, closed="neither"), NoneOr],
    "kernel": [Options({"linear", "rbf", "poly"})],
    "degree": [Interval(numbers.Integral, 1, None, closed="left")],
    "cv": [Interval(numbers.Integral, 2, None), InstanceOf((object,), "a CV splitter")],
}


def test_parameter_message_matches_sklearn_style():
    with pytest.raises(ValueError) as exc:
        validate_params({"gamma": -1}, CONSTRAINTS, "KNIFERegressor")
    assert str(exc.value) == (
        "The 'gamma' parameter of KNIFERegressor must be a float in the range (0.0, inf) or None. "
        "Got -1 instead."
    )


@pytest.mark.parametrize(
    "name,value,ok",
    [
        ("gamma", 0.5, True), ("gamma", None, True), ("gamma", 0.0, False), ("gamma", np.nan, False),
        ("gamma", True, False), ("kernel", "rbf", True), ("kernel", "RBF", False),
        ("degree", 2, True), ("degree", 2.0, False), ("degree", 0, False), ("degree", np.int64(3), True),
    ],
)
def test_constraints(name, value, ok):
    if ok:
        validate_params({name: value}, CONSTRAINTS, "f")
    else:
        with pytest.raises(ValueError, match=f"The '{name}' parameter of f must be"):
            validate_params({name: value}, CONSTRAINTS, "f")


def test_options_message_lists_choices():
    with pytest.raises(ValueError, match=r"a str among \{'linear', 'poly', 'rbf'\}. Got 'sigmoid'"):
        validate_params({"kernel": "sigmoid"}, CONSTRAINTS, "f")


def test_check_X_names_nan_column_and_does_not_modify():
    X = np.arange(12.0).reshape(4, 3)
    X[2, 1] = np.nan
    before = X.copy()
    with pytest.raises(ValueError, match="NaN in column 1"):
        check_X(X)
    np.testing.assert_array_equal(np.isnan(X), np.isnan(before))
    X[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity in column 1"):
        check_X(X)


def test_check_X_names_dataframe_column():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, np.nan, 0.0]})
    with pytest.raises(ValueError, match=r"column 1 \('b'\)"):
        check_X(df)


def test_check_X_returns_copy_and_refuses_bad_shapes():
    X = np.ones((3, 2), dtype=np.float32, order="F")
    out = check_X(X)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    out[0, 0] = 5
    assert X[0, 0] == 1
    with pytest.raises(ValueError, match="2-D"):
        check_X(np.ones(5))
    with pytest.raises(ValueError, match="1 sample"):
        check_X(np.ones((1, 3)))
    with pytest.raises(ValueError, match="0 features"):
        check_X(np.ones((3, 0)))


def test_sparse():
    X = sp.random(10, 5, density=0.3, format="csr", random_state=0)
    with pytest.raises(TypeError, match="sparse"):
        check_X(X)
    out = check_X(X, accept_sparse=True)
    assert sp.isspmatrix_csc(out)
    np.testing.assert_array_equal(out.toarray(), X.toarray())


def test_check_X_y_length():
    with pytest.raises(ValueError, match="X has 4, y has 3"):
        check_X_y(np.ones((4, 2)), np.ones(3))
    with pytest.raises(ValueError, match="y contains NaN"):
        check_X_y(np.ones((2, 2)), [1.0, np.nan])


def test_binary_labels():
    y = np.array(["b", "a", "b"])
    y_pm, classes = check_binary_labels(y)
    np.testing.assert_array_equal(y_pm, [1, -1, 1])
    assert list(classes) == ["a", "b"]
    with pytest.raises(ValueError, match=r"exactly two classes in y; found 3: \[0, 1, 2\]"):
        check_binary_labels(np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"found 1: \['x'\]"):
        check_binary_labels(np.array(["x", "x"]))


def test_constant_columns_warns_with_names():
    X = np.array([[1.0, 2.0, 3.0], [1.0, 5.0, 3.0]])
    with pytest.warns(ConstantFeatureWarning, match=r"\[a, c\]"):
        mask = constant_columns(X, feature_names=["a", "b", "c"])
    np.testing.assert_array_equal(mask, [True, False, True])
    S = sp.csc_matrix(np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 2.0], [0.0, 1.0, 2.0]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(constant_columns(S), [True, False, True])


def test_random_state_and_memory():
    a = check_random_state(3).random(3)
    b = check_random_state(3).random(3)
    np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(1)
    assert check_random_state(g) is g
    with pytest.raises(ValueError):
        check_random_state("seed")
    with pytest.raises(MemoryError, match=r"about 8.0 GiB"):
        check_memory(8 * 2**30, "The 32768 x 32768 kernel", limit=2**30)


def test_memory_message_units():
    with pytest.raises(MemoryError, match=r"about 1.2 MiB, more than the 800.0 KiB available"):
        check_memory(1.28e6, "The 400 x 400 kernel", limit=800 * 1024)


@pytest.mark.parametrize("n, d, order", [(1, 3, "C"), (63, 2, "C"), (64, 1, "C"), (128, 10, "C"), (200, 7, "C"),
                                         (200, 7, "F")])
def test_column_extremes_match_numpy(n, d, order):
    """check_X's column extremes by slabs of rows are numpy's per-column min
    and max exactly (no rounding in a minimum), whatever the number of rows
    (no slab, whole slabs, a remainder) or the layout; each extreme placed in
    the remainder rows or in a slab."""
    from numkfs._validation import _column_extremes

    rng = np.random.default_rng(n + d)
    X = np.asarray(rng.normal(size=(n, d)), order=order)
    X[rng.integers(0, n, d), np.arange(d)] = 7.0 + np.arange(d)  # a maximum per column, anywhere
    X[n - 1, 0] = -9.0  # a minimum in the last row
    lo, hi = _column_extremes(X)
    assert np.array_equal(lo, X.min(axis=0)) and np.array_equal(hi, X.max(axis=0))


# --- complex numbers: refused by name everywhere, never cast with numpy's mere warning -------------------------------

def _complex_entry_points():
    """(name, call(X, y)) for every public entry point that takes data: select(), each estimator's fit, the path
    functions and the alignments/HSIC test."""
    import inspect

    import numkfs
    from numkfs.kernels.alignment import feature_alignments

    calls = [("select", lambda X, y: numkfs.select(X, y, "garrote")),
             ("knife_path", numkfs.knife_path), ("garrote_path", numkfs.garrote_path),
             ("l1kr_path", numkfs.l1kr_path), ("hsic_test", numkfs.hsic_test),
             ("feature_alignments", feature_alignments)]
    for name in numkfs.__all__:
        obj = getattr(numkfs, name)
        if inspect.isclass(obj) and hasattr(obj, "fit"):
            calls.append((name, lambda X, y, cls=obj: cls().fit(X, y)))
    return calls


@pytest.mark.parametrize("where", ["X", "y", "DataFrame column", "Series y"])
@pytest.mark.parametrize("name,call", _complex_entry_points(), ids=lambda v: v if isinstance(v, str) else "")
def test_complex_input_is_refused_by_name(name, call, where):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    y = (X[:, 0] > 0).astype(float)  # two values: a target for classifiers and regressors alike
    what = "y" if "y" in where else "X"
    if where == "X":
        X = X + 0.5j
    elif where == "y":
        y = y + 0.5j
    elif where == "Series y":
        y = pd.Series(y + 0.5j)
    else:
        X = pd.DataFrame({"a": X[:, 0], "b": X[:, 1] + 0.5j, "c": X[:, 2]})
        what = "column 'b' of X"
    X_before = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)  # no silent cast to the real part
        with pytest.raises(ValueError) as exc:
            call(X, y)
    msg = str(exc.value)
    # one line naming what holds complex numbers, in scikit-learn's words (its check_complex_data), no array dump
    assert f"{what} holds complex numbers" in msg and "Complex data not supported" in msg and "\n" not in msg, msg
    if isinstance(X, np.ndarray):
        np.testing.assert_array_equal(X, X_before)


# --------------------------------------------------------------------------
# each warning once, naming columns by their feature names


@pytest.mark.parametrize("method,kw", [("knife", dict(n_grid=4)), ("garrote", dict(n_grid=4)),
                                       ("lpkta", {}), ("nmmkl", {}), ("cosso", dict(n_grid=4, max_iter=20)),
                                       ("l1kr", dict(n_grid=5))])
def test_constant_column_warned_once_by_name(method, kw):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    X[:, 1] = 3.0
    task = "classification" if method == "nmmkl" else "regression"
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    if task == "classification":
        y = (y > 0).astype(int)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        select(X, y, method, task=task, cv=3, feature_names=["a", "flat", "c", "d"], **kw)
    const = [str(w.message) for w in rec if type(w.message).__name__ == "ConstantFeatureWarning"]
    assert len(const) == 1, const
    assert "[flat]" in const[0]


def test_knife_estimator_warns_once_about_a_constant_column():
    from numkfs.estimators import KNIFERegressorCV

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    X[:, 2] = 1.0
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        KNIFERegressorCV(n_grid=4, cv=3).fit(X, y)
    const = [str(w.message) for w in rec if type(w.message).__name__ == "ConstantFeatureWarning"]
    assert len(const) == 1 and const[0].startswith("KNIFERegressorCV:"), const


def test_constant_feature_warning_once_in_a_grid_search():
    # a constant feature warned once per fit, fold and point: 1,541 times in one GridSearchCV
    script = textwrap.dedent("""
        import numpy as np
        from sklearn.model_selection import GridSearchCV
        from numkfs.estimators import GarroteRegressorCV
        rng = np.random.default_rng(0)
        X = rng.standard_normal((40, 4)); X[:, 2] = 1.0
        y = X[:, 0] + 0.1 * rng.standard_normal(40)
        GridSearchCV(GarroteRegressorCV(cv=3), {"lambda1": [0.5, 1.0, 2.0]}, cv=3).fit(X, y)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stderr.count("ConstantFeatureWarning") == 1, out.stderr[-3000:]


def test_warn_once_still_warns_every_time_under_always_filters():
    from numkfs._validation import ConstantFeatureWarning, constant_columns

    X = np.ones((5, 2))
    for _ in range(2):
        with pytest.warns(ConstantFeatureWarning, match=r"feature\(s\) \[0, 1\] are constant"):
            constant_columns(X, caller="once-test")


# --------------------------------------------------------------------------
# memory limits: a clear MemoryError with the estimate, before allocating


def test_feature_kernel_refuses_impossible_allocation():
    from numkfs.kernels.additive import additive_gram, feature_kernel

    with pytest.raises(MemoryError, match=r"2000000 x 2000000 kernel matrix would need about 29802\.3 GiB"):
        feature_kernel(np.zeros(2_000_000))
    with pytest.raises(MemoryError, match=r"2000000 x 2000000 additive kernel matrix would need about 29802\.3 GiB"):
        additive_gram(np.zeros((2_000_000, 1)))


@pytest.fixture
def small_memory(monkeypatch):
    """Pretend only 1 MB is available (0.8 MB usable)."""
    import numkfs._validation as v

    monkeypatch.setattr(v, "_available_memory", lambda: 1e6)


@pytest.mark.parametrize("what", ["cosso", "COSSORegressor", "garrote_path", "nmmkl_all_features"])
def test_n_by_n_allocations_checked(what, small_memory):
    rng = np.random.default_rng(0)
    if what == "garrote_path":
        from numkfs.methods.garrote import garrote_path

        # n >= p: the Gram solver forms XᵀX, and says what it would need
        X = rng.standard_normal((600, 600))
        with pytest.raises(MemoryError, match=r"600 x 600 Gram matrix .* would need about"):
            garrote_path(X, X[:, 0], n_grid=3)
        # p > n: the wide solver works on residuals and never forms the p x p matrix
        Xw = rng.standard_normal((5, 600))
        path = garrote_path(Xw, Xw[:, 0], n_grid=3, max_refine=0)  # the grid as given (no refinement)
        assert path.weights.shape == (3, 600)
        return
    X = rng.standard_normal((400, 2))
    y = X[:, 0] + 0.1 * rng.standard_normal(400)
    with pytest.raises(MemoryError, match=r"400 x 400 .*kernel matrix.* would need about"):
        if what == "cosso":
            from numkfs.methods.cosso import cosso

            cosso(X, y, 1.0, lambda0=1e-3)
        elif what == "COSSORegressor":
            from numkfs.estimators._cosso import COSSORegressor

            COSSORegressor(M=1.0).fit(X, y)
        else:
            from numkfs.methods.nmmkl import nmmkl

            nmmkl(X, np.where(y > 0, 1, -1), 2, solver="native")


@pytest.mark.parametrize("what", ["KNIFERegressor", "l1kr_path", "LpKTAClassifier"])
def test_n_by_n_allocations_checked_other_methods(what, small_memory):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 2))
    y = X[:, 0] + 0.1 * rng.standard_normal(400)
    with pytest.raises(MemoryError, match=r"400 x 400 .* would need about"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if what == "KNIFERegressor":
                make("KNIFERegressor").fit(X, y)
            elif what == "l1kr_path":
                from numkfs.methods.l1kr import l1kr_path

                l1kr_path(X, y, D_max=0.5, max_iter=20)
            else:
                make("LpKTAClassifier").fit(X, (y > 0).astype(int))
