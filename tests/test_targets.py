"""The task given is the task used (lp-KTA, stability selection,
knockoffs), integer parameters beyond 64 bits, and a numeric target with a
few text cells, each refused by a numkfs message that names it."""
from __future__ import annotations

import numbers
import re
import warnings

import numpy as np
import pytest
from conftest import make, methods, names

import numkfs
from numkfs import select
from numkfs._constraints import Interval, validate_params
from numkfs._targets import stray_text, target_to_array
from numkfs.model_selection import target_type


def _score_data(n=40, seed=0):
    """X and a 0-4 score: a regression target that its values would call five classes."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = np.clip(np.round(X[:, 0] + 2 + 0.3 * rng.standard_normal(n)), 0, 4).astype(np.int64)
    return X, y


# --------------------------------------------------------------------------
# the task given is the task used


def test_select_lpkta_regression_on_a_score_uses_regression():
    # reported "regression" but scored five classes with a hinge loss (or failed on the rarest class)
    from numkfs.kernels.alignment import feature_alignments

    X, y = _score_data()
    assert np.bincount(y).min() < 5  # a class too small for 5 stratified folds, were it classes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = select(X, y, "lpkta", task="regression", grid=np.linspace(2, 1, 6))
    assert res.task == "regression" and res.score_name == "neg_mean_squared_error"
    assert res.estimator.target == "regression"
    np.testing.assert_allclose(res.estimator.alignments_, feature_alignments(X, y, target="regression"),
                               rtol=1e-12)
    assert not np.allclose(res.estimator.alignments_, feature_alignments(X, y, target="multiclass"))


def test_lpkta_selector_cv_target_parameter():
    from numkfs import LpKTASelectorCV

    X, y = _score_data()
    kw = dict(grid=np.linspace(2, 1, 6), cv=3)
    reg = LpKTASelectorCV(target="regression", **kw).fit(X, y)
    assert reg.path_.score_name == "neg_mean_squared_error"
    auto = LpKTASelectorCV(**kw).fit(X, y.astype(float) + 0.5 * (np.arange(40) % 3))  # continuous: unchanged
    assert auto.path_.score_name == "neg_mean_squared_error"
    with pytest.raises(ValueError, match="'target' parameter of LpKTASelectorCV"):
        LpKTASelectorCV(target="counts").fit(X, y)


@pytest.mark.parametrize("method", ["garrote", "cosso", "l1kr", "lpkta"])
@pytest.mark.parametrize("how", ["stability", "fdr"])
def test_stability_and_knockoffs_keep_the_task_given(method, how):
    # the resampling selectors inferred the task again from y: a 0-4 score became classes, refused by
    # the regression methods ("does not do classification")
    X, y = _score_data(seed=1)
    params = {"garrote": {"n_grid": 6}, "cosso": {"n_grid": 3, "max_iter": 20}, "l1kr": {},
              "lpkta": {"grid": np.linspace(2, 1, 5)}}[method]
    kw = {"stability": True, "n_resamples": 2} if how == "stability" else {"fdr": 0.3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = select(X, y, method, task="regression", **kw, **params)
    assert res.task == "regression" and res.estimator.task == "regression"
    assert res.weights.shape == (4,)


def test_method_path_gives_lpkta_the_task():
    from numkfs.kernels.alignment import feature_alignments
    from numkfs.resampling import method_path

    X, y = _score_data()
    path = method_path("lpkta", X, y, task="regression", params={"n_grid": 5})
    np.testing.assert_allclose(path.extra["alignments"], feature_alignments(X, y, target="regression"),
                               rtol=1e-12)


def test_resampling_selectors_refuse_an_unknown_task():
    from numkfs import KnockoffFilter, StabilitySelection

    X, y = _score_data()
    for est in (StabilitySelection("garrote", task="regresion"), KnockoffFilter("garrote", task="regresion")):
        with pytest.raises(ValueError, match=rf"The 'task' parameter of {type(est).__name__} must be None or a str "
                                             r"among \{'classification', 'regression'\}. Got 'regresion' instead."):
            est.fit(X, y)


@pytest.mark.parametrize("how", ["cv", "stability"])
def test_classification_task_reads_whole_float_codes_as_classes(how):
    # 12 class codes 0.0, ..., 11.0 with task="classification": NMMKL refused them ("y looks continuous")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((72, 3))
    y = (np.arange(72) % 12).astype(float)
    kw = {"cv": 3} if how == "cv" else {"stability": True, "n_resamples": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = select(X, y, "nmmkl", task="classification", **kw)
    assert res.task == "classification" and res.weights.shape == (3,)
    assert res.score_name == ("neg_hinge_loss" if how == "cv" else "stability")
    assert y.dtype == float  # the input is not modified


def test_a_method_without_the_task_is_refused_by_name():
    X, y = _score_data()
    with pytest.raises(ValueError, match="method 'nmmkl' does not do regression"):
        select(X, y, "nmmkl", task="regression", stability=True)


# --------------------------------------------------------------------------
# integer parameters beyond 64 bits


def test_interval_refuses_ints_beyond_64_bits_by_name():
    # np.isfinite(10**20) raised "ufunc 'isfinite' not supported for the input types"
    c = Interval(numbers.Integral, 1, None, closed="left")
    assert c.is_satisfied_by(2**63 - 1) and not c.is_satisfied_by(2**63) and not c.is_satisfied_by(10**20)
    assert not Interval(numbers.Integral, None, None).is_satisfied_by(-(2**63) - 1)
    real = Interval(numbers.Real, 0, None, closed="neither")
    assert real.is_satisfied_by(10**20) and not real.is_satisfied_by(10**400)
    with pytest.raises(ValueError, match=r"The 'max_iter' parameter of f must be an int in the range \[1, inf\)\. "
                                         r"Got 100000000000000000000 instead\. An int parameter must fit in 64 bits"):
        validate_params({"max_iter": 10**20}, {"max_iter": [c]}, "f")


@pytest.mark.parametrize("method", ["knife", "cosso", "l1kr"])
def test_select_and_estimators_refuse_a_huge_max_iter(method):
    from numkfs import KNIFERegressor

    X, y = _score_data()
    with pytest.raises(ValueError, match="'max_iter' parameter of .* Got 100000000000000000000 instead"):
        select(X, y, method, task="regression", max_iter=10**20)
    with pytest.raises(ValueError, match="'max_iter' parameter of KNIFERegressor .*64 bits"):
        KNIFERegressor(max_iter=10**20).fit(X, y.astype(float))


# --------------------------------------------------------------------------
# a numeric target with a few text cells


def _numeric_with_text(n=60):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 3))
    y = list(np.round(3 * X[:, 0] + 10, 2))
    y[17] = "n/a?"
    return X, y


def test_stray_text_finds_the_cells():
    assert stray_text(["1.5", "2.25", "x"] + [str(v) for v in range(7)]).tolist() == [2]
    assert stray_text([1.0, None, 2.0, np.nan, 3.0]).tolist() == []  # missing, not text
    assert stray_text(["yes", "no", "yes", "no"]).tolist() == []  # class names
    assert stray_text(["a", "b", "1", "2"]).tolist() == []  # half text: labels
    assert stray_text(["1", "x"]).tolist() == []  # one number: nothing to call numeric


@pytest.mark.parametrize("container", ["list", "object_array", "series", "frame"])
def test_select_names_a_text_cell_in_a_numeric_target(container):
    # the target became 60 one-row classes and the error blamed the folds ("use at most 1 folds")
    pd = pytest.importorskip("pandas")
    X, y = _numeric_with_text()
    y = {"list": y, "object_array": np.array(y, dtype=object), "series": pd.Series(y, dtype=object),
         "frame": pd.DataFrame({"t": y})}[container]
    with pytest.raises(ValueError, match=r"select: y is numeric except for 1 value\(s\) that are not numbers "
                                         r"\('n/a\?' at row 17\); fix or drop those rows"):
        select(X, y, "garrote")


def test_target_to_array_keeps_class_names():
    y = np.array(["yes", "no"] * 10, dtype=object)
    assert target_to_array(y).tolist() == y.tolist()


def test_a_subsample_that_leaves_out_fewer_rows_than_classes_uses_every_row():
    """KNIFEClassifierCV(cv_max_samples=m) with n - m below the number of classes failed with
    scikit-learn's "The test_size = 1 should be greater or equal to the number of classes"; such a
    subsample is every row."""
    import numkfs

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.arange(40) % 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = numkfs.KNIFEClassifierCV(cv_max_samples=39, n_grid=4, cv=3).fit(X, y)
        ref = numkfs.KNIFEClassifierCV(n_grid=4, cv=3).fit(X, y)
    assert est.cv_n_samples_ == 40
    assert np.array_equal(est.feature_weights_, ref.feature_weights_)


def test_nystroem_components_above_a_folds_rows_are_named_by_the_estimator():
    """The refusal named knife_path and "n_samples = 40" for 60 rows given; it now names the estimator,
    n_components and says that 40 is a fold's training rows."""
    import numkfs

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    with pytest.raises(ValueError, match=r"KNIFERegressorCV: n_components=50 .*fold's training part.*40 of the "
                                         r"60 rows given.*n_components <= 40"):
        numkfs.KNIFERegressorCV(approximation="nystroem", n_components=50, cv=3, n_grid=4).fit(X, X[:, 0])


def test_cvxpy_warnings_do_not_reach_the_user(monkeypatch):
    """cvxpy's own "Solution may be inaccurate" appeared beside numkfs's fallback warning: the CVXPY
    backend keeps it in the result's message, the status already says it."""
    import cvxpy as cp

    from numkfs.solvers import solve

    x = cp.Variable(2)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(x - 1.0)), [x >= 0])
    original = cp.Problem.solve

    def noisy(self, *args, **kwargs):
        warnings.warn("Solution may be inaccurate. Try another solver.", UserWarning)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = solve(problem, solver="CLARABEL")
    assert "Solution may be inaccurate" in res.message
    np.testing.assert_allclose(res.solution[next(iter(res.solution))], [1.0, 1.0], atol=1e-6)


@pytest.mark.slow
def test_nmmkl_native_solver_raises_no_numpy_warning():
    """select(X, y, "nmmkl") on a noisy XOR target (seed 1002): the native solver's iterate reached
    α = 0 and numpy warned "divide by zero" (lam / α) before the fallback; no raw warning now."""
    rng = np.random.default_rng(1002)
    X = rng.standard_normal((400, 20))
    y = np.sign(X[:, 0] * X[:, 1])
    flip = rng.random(400) < 0.1
    y[flip] = -y[flip]
    with warnings.catch_warnings(record=True) as raised:
        warnings.simplefilter("always")
        select(X, y, "nmmkl")
    assert not [w for w in raised if issubclass(w.category, RuntimeWarning)]


def test_a_setting_the_resampling_fixes_is_refused_by_name():
    """select(X, y, "l1kr", stability=True, n_grid=3) crashed with "'NoneType' object is not
    subscriptable" in l1kr_path_at: the user's n_grid replaced the traced path the resampling reads."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y = X[:, 0] + 0.1 * rng.standard_normal(60)
    with pytest.raises(ValueError, match=r"l1kr_path's 'n_grid' is set by the resampling.*leave it out"):
        select(X, y, "l1kr", stability=True, n_grid=3, n_resamples=4)


# --------------------------------------------------------------------------
# classification of a continuous target: one refusal, whatever the route


def _continuous_target(n=40):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 4))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


CONTINUOUS = re.escape("y looks continuous (40 distinct real values in 40 samples); pass class labels.")


@pytest.mark.parametrize("route", [{}, {"fdr": 0.2}, {"stability": True}], ids=["cv", "fdr", "stability"])
@pytest.mark.parametrize("method", methods(task="classification"))
def test_select_refuses_classification_of_a_continuous_target_by_every_route(method, route):
    # with fdr, KNIFE and lp-KTA fitted 40 one-row classes and selected 0 features; the CV route gave
    # scikit-learn's "Unknown label type", stability selection "subsamples of 0 rows"
    X, y = _continuous_target()
    with pytest.raises(ValueError, match="^select: " + CONTINUOUS + "$"):
        select(X, y, method, task="classification", **route)


@pytest.mark.parametrize("name", [n for n in names() if "Classifier" in n or n.startswith("NMMKL")])
def test_classifiers_refuse_a_continuous_target_in_numkfs_words(name):
    X, y = _continuous_target()
    with pytest.raises(ValueError, match=f"^{name}: " + CONTINUOUS + "$"):
        make(name).fit(X, y)


@pytest.mark.parametrize("selector", ["StabilitySelection", "KnockoffFilter"])
def test_resampling_selectors_refuse_a_continuous_target_for_classification(selector):
    X, y = _continuous_target()
    with pytest.raises(ValueError, match=f"^{selector}: " + CONTINUOUS + "$"):
        getattr(numkfs, selector)("knife", task="classification").fit(X, y)


def test_whole_number_codes_stay_classes_for_classification():
    X, _ = _continuous_target(36)
    y = (np.arange(36) % 12).astype(float)  # 12 class codes: more than MAX_FLOAT_CLASSES, still classes
    from numkfs._targets import task_target

    assert task_target(y, "classification").dtype.kind == "i" and target_type(y) == "regression"


def test_target_type_of_values_beyond_int64_is_silent():
    # numpy's "invalid value encountered in cast" leaked from type_of_target for |y| > 9.2e18
    y = np.linspace(-1.0, 1.0, 30) * 1e19
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert target_type(y) == "regression" and target_type(y[:2]) == "regression"
