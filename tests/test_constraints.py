"""One parameter-checking mechanism, and no former names.

Every public estimator and resampling selector declares its parameters'
constraints as data (``_parameter_constraints``, one entry per parameter of
its signature) and every public path function its table
(``fn._parameter_constraints``, every parameter but the data), all checked by
:func:`numkfs._constraints.validate_params`: a bad value is refused with a
message naming the parameter and the value.  The names of the development
versions, renamed before 0.1.0, are refused with a ``TypeError`` naming them,
through the resampling selectors too, before anything is fitted.
"""
import inspect

import numpy as np
import pytest
from sklearn.base import is_classifier

import numkfs


#: the public estimators and resampling selectors
CLASSES = sorted(n for n in numkfs.__all__
                 if inspect.isclass(getattr(numkfs, n)) and hasattr(getattr(numkfs, n), "fit"))
#: public functions that are not a method's single fit or path, each with what checks its arguments
NOT_CHECKED_BY_A_TABLE = {
    "garrote_step": "a solver step inside COSSO's iterations: its arguments are the iteration's own",
    "select": "numkfs.selection checks select()'s own arguments and passes the rest to the method's table",
    "set_threads": "numkfs._threads checks its three thread counts",
    "hsic_test": "numkfs.hsic checks its kernel, bandwidth, method and target",
    "hsic_pvalues": "hsic_test's checks",
}
#: the public single-fit and path functions: every function numkfs and numkfs.methods export but the above
FUNCTIONS = sorted({n for module in (numkfs, numkfs.methods) for n in module.__all__
                    if inspect.isfunction(getattr(module, n)) and n not in NOT_CHECKED_BY_A_TABLE})
PATH_FUNCTIONS = [n for n in FUNCTIONS if n.endswith("_path")]
#: the only names a function may declare as data (arrays, names, a fitted result), which its data checks cover
DATA_NAMES = {"X", "y", "w0", "feature_names", "true_support", "alignments", "penalty_weights", "weights", "fit"}


class _Nonsense:
    """A value no constraint of numkfs accepts (except "anything")."""

    def __repr__(self):
        return "<nonsense>"


def _undeclared(obj, table, data=()):
    """The parameters of ``obj``'s signature without a constraint in ``table``, and the entries of
    ``table`` that are not parameters."""
    params = [name for name, p in inspect.signature(obj).parameters.items()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and name not in data]
    return [p for p in params if p not in table], sorted(set(table) - set(params))


def _bad_parameter(table):
    """``n_jobs`` if declared, else the first parameter whose constraints refuse nonsense."""
    if "n_jobs" in table:
        return "n_jobs", 0.5
    for name, allowed in table.items():
        if not any(c.is_satisfied_by(_Nonsense()) for c in allowed):
            return name, _Nonsense()
    raise AssertionError(f"every constraint of {sorted(table)} accepts anything")


def _data(n=40, p=4):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, p))
    return X, (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)


@pytest.mark.parametrize("name", CLASSES)
def test_every_estimator_and_selector_declares_each_parameter(name):
    cls = getattr(numkfs, name)
    missing, extra = _undeclared(cls, cls._parameter_constraints)
    assert not missing, f"{name} declares no constraint for {missing}"
    assert not extra, f"{name} declares constraints for {extra}, which it does not take"


def _function(name):
    return getattr(numkfs.methods, name, None) or getattr(numkfs, name)


def test_the_functions_are_found():
    assert {"knife", "knife_path", "nmmkl", "nmmkl_path", "cosso", "cosso_path", "garrote_path", "l1kr_path",
            "lpkta_path", "lpkta_selection_path"} <= set(FUNCTIONS)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_function_declares_each_parameter(name):
    """Every parameter but the data has a constraint (declares refuses a function without one when it is
    defined), and only data are left to the data checks."""
    fn = _function(name)
    table = getattr(fn, "_parameter_constraints", None)
    assert table is not None, f"{name} declares no _parameter_constraints"
    data = set(fn._data_parameters)
    assert data <= DATA_NAMES, f"{name} leaves {sorted(data - DATA_NAMES)} unchecked as data"
    missing, extra = _undeclared(fn, table, data)
    assert not missing, f"{name} declares no constraint for {missing}"
    assert not extra, f"{name} declares constraints for {extra}, which it does not take"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_default_satisfies_its_constraint(name):
    fn = _function(name)
    for param, p in inspect.signature(fn).parameters.items():
        if param in fn._parameter_constraints and p.default is not p.empty:
            assert any(c.is_satisfied_by(p.default) for c in fn._parameter_constraints[param]), (param, p.default)


def test_declares_refuses_a_parameter_without_a_constraint():
    from numkfs._constraints import BOOL, declares

    with pytest.raises(TypeError, match=r"probe has no constraint for its parameter\(s\) \['tol'\]"):
        @declares({"verbose": BOOL})
        def probe(X, y, *, verbose=False, tol=1e-6):
            pass


def test_declares_checks_a_call_before_the_body():
    from numkfs._constraints import BOOL, declares

    calls = []

    @declares({"verbose": BOOL})
    def probe(X, y, *, verbose=False):
        calls.append(verbose)
        return verbose

    assert probe(1, 2, verbose=True) is True
    with pytest.raises(ValueError, match="The 'verbose' parameter of probe must be a bool. Got 'yes' instead."):
        probe(1, 2, verbose="yes")
    with pytest.raises(TypeError, match="unexpected keyword argument 'verbos'"):  # Python's own, with the name
        probe(1, 2, verbos=True)
    assert calls == [True]


#: the arguments a function needs besides X and y
_REQUIRED = {"nmmkl": {"m": 1}, "cosso": {"M": 1.0}, "garrote_relax": {"weights": np.ones(4)}}

#: values of the shared vocabulary's parameters that no function may accept, the issue's among them
_NONSENSE = {
    "n_jobs": [0, 1.5, "abc", 1e300, 10**30, True],
    "random_state": [-1, 2**32, 1.5, "abc", True],
    "grid": ["abc", 3.0, [], [[1.0, 2.0]], [1.0, np.nan], [1.0, np.inf], ["a", "b"], [1 + 2j], {"a": 1}],
    "solver": [0, None, "", [], ["auto", 0], {"auto"}],
    "stop": ["abc", 1],
    "keep": ["abc", 1],
    "test": [0, (1, 2, 3), "ab"],
    "cv": [0, 1, 2.5, "abc"],
}


def _calls_with_nonsense():
    for name in FUNCTIONS:
        fn = _function(name)
        table = fn._parameter_constraints
        for param in table:
            default = inspect.signature(fn).parameters[param].default
            values = list(_NONSENSE.get(param, []))
            if isinstance(default, bool):
                values += ["abc", 2, None, 1.0]
            for value in values:
                yield pytest.param(name, param, value, id=f"{name}-{param}-{value!r}"[:80])


@pytest.mark.parametrize("name, param, value", list(_calls_with_nonsense()))
def test_the_shared_parameters_refuse_nonsense_by_name(name, param, value):
    """n_jobs, random_state, grids, solvers, switches, callbacks: every function refuses the same nonsense
    with the same message naming the parameter, before its data are read (numpy's, joblib's and Python's
    own messages, or nothing at all, before)."""
    fn = _function(name)
    X, y = _data()
    with pytest.raises(ValueError, match=rf"^The '{param}' parameter of {name} must be .* Got .* instead"):
        if name == "cosso_relax":
            fn(None, y, **{param: value})
        else:
            fn(X, y, **{**_REQUIRED.get(name, {}), param: value})


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_shared_parameters_have_the_shared_constraints(name):
    """One vocabulary: n_jobs is N_JOBS, random_state RANDOM_STATE and a switch (a bool default) BOOL, in
    every function."""
    from numkfs import _constraints as V

    fn = _function(name)
    for param, allowed in fn._parameter_constraints.items():
        default = inspect.signature(fn).parameters[param].default
        if param == "n_jobs":
            assert allowed is V.N_JOBS, name
        elif param == "random_state":
            assert allowed is V.RANDOM_STATE, name
        elif isinstance(default, bool):
            assert allowed is V.BOOL, (name, param)


@pytest.mark.parametrize("value", [None, 1, -1, 2, np.int64(2), -4096, 4096])
def test_n_jobs_accepts_what_joblib_runs(value):
    from numkfs._constraints import N_JOBS, validate_params

    validate_params({"n_jobs": value}, {"n_jobs": N_JOBS}, "probe")


@pytest.mark.parametrize("value", [None, 0, 2**32 - 1, np.uint32(7), np.random.default_rng(0),
                                   np.random.RandomState(0)])
def test_random_state_accepts_what_the_generators_take(value):
    from numkfs._constraints import RANDOM_STATE, validate_params
    from numkfs._validation import check_random_state

    validate_params({"random_state": value}, {"random_state": RANDOM_STATE}, "probe")
    check_random_state(value)


@pytest.mark.parametrize("value", [[1.0], (0.0, 2.0), np.arange(3), np.array([1, 2], dtype=np.int32),
                                   np.array([0.5, 1.5], dtype=object), [np.float32(1.0), 2]])
def test_grid_accepts_every_real_vector(value):
    from numkfs._constraints import GRID, validate_params

    validate_params({"grid": value}, {"grid": GRID}, "probe")


@pytest.mark.parametrize("name", [n for n in CLASSES if "n_jobs" in inspect.signature(getattr(numkfs, n)).parameters])
@pytest.mark.parametrize("value", [0, 1e300, "abc"])
def test_every_estimator_refuses_a_meaningless_n_jobs_by_name(name, value):
    cls = getattr(numkfs, name)
    assert cls._parameter_constraints["n_jobs"] is numkfs._constraints.N_JOBS
    X, y = _data()
    with pytest.raises(ValueError, match=rf"The 'n_jobs' parameter of {name} must be None or a non-zero int"):
        cls(n_jobs=value).fit(X, y)


@pytest.mark.parametrize("name", [n for n in CLASSES
                                  if "random_state" in inspect.signature(getattr(numkfs, n)).parameters])
def test_every_estimator_refuses_a_negative_seed_by_name(name):
    cls = getattr(numkfs, name)
    X, y = _data()
    with pytest.raises(ValueError, match=rf"The 'random_state' parameter of {name} must be None, an int in the "
                                         r"range \[0, 4294967295\] or a numpy"):
        cls(random_state=-1).fit(X, y)


def test_the_declaration_check_can_fail():
    class Probe:
        _parameter_constraints = {"alpha": [], "beta": []}

        def __init__(self, alpha=1.0, gamma=None, **kwargs):
            pass

    assert _undeclared(Probe, Probe._parameter_constraints) == (["gamma"], ["beta"])
    assert _undeclared(Probe, {"alpha": []}, data=("gamma",)) == ([], [])


@pytest.mark.parametrize("name", CLASSES)
def test_a_bad_value_is_refused_by_name(name):
    cls = getattr(numkfs, name)
    param, value = _bad_parameter(cls._parameter_constraints)
    X, y = _data()
    with pytest.raises(ValueError, match=rf"The '{param}' parameter of {name} must be .* Got {value!r} instead"):
        cls(**{param: value}).fit(X, y)


@pytest.mark.parametrize("name", [n for n in FUNCTIONS if _function(n)._parameter_constraints])
def test_a_bad_value_is_refused_by_name_in_a_function(name):
    fn = _function(name)
    param, value = _bad_parameter(fn._parameter_constraints)
    X, y = _data()
    with pytest.raises(ValueError, match=rf"The '{param}' parameter of {name} must be .* Got {value!r} instead"):
        fn(X, y, **{**_REQUIRED.get(name, {}), param: value})


@pytest.mark.parametrize("cls", [numkfs.StabilitySelection, numkfs.KnockoffFilter])
def test_the_selectors_check_their_own_parameters_too(cls):
    X, y = _data()
    own = {"StabilitySelection": {"threshold": 0.4, "n_resamples": 0, "sample_fraction": 1.0, "pfer": -1.0},
           "KnockoffFilter": {"fdr": 1.5, "n_draws": 0, "knockoffs": "fixed", "covariance": "shrunk"}}
    for param, value in own[cls.__name__].items():
        with pytest.raises(ValueError, match=rf"The '{param}' parameter of {cls.__name__} must be .* "
                                             rf"Got {value!r} instead"):
            cls("garrote", **{param: value}).fit(X, y)
    with pytest.raises(ValueError, match=rf"The 'selector' parameter of {cls.__name__} must be a method name"):
        cls("lasso").fit(X, y)


def test_pfer_is_not_checked_when_max_features_bounds_the_selection(monkeypatch):
    import numkfs.resampling

    def fitted(*args, **kwargs):
        raise RuntimeError("fitted")

    monkeypatch.setattr(numkfs.resampling, "method_path", fitted)
    X, _ = _data()
    y = X[:, 0] - 0.5 * X[:, 1]
    with pytest.raises(RuntimeError, match="fitted"):  # the checks passed
        numkfs.StabilitySelection("garrote", pfer=None, max_features=2).fit(X, y)
    with pytest.raises(ValueError, match="The 'pfer' parameter of StabilitySelection"):
        numkfs.StabilitySelection("garrote", pfer=None).fit(X, y)


def test_a_former_name_is_refused_by_name(monkeypatch):
    """``lambda2s`` (now ``grid``) of the garrote, ``C`` (now ``norm_bound``)
    of L1KR: a function, a constructor, the resampling selectors (before any
    path is fitted: they passed it on to every subsample beside its new name,
    and crashed) and :func:`numkfs.select`."""
    import numkfs.resampling

    X, _ = _data()
    y = X[:, 0] - 0.5 * X[:, 1]
    with pytest.raises(TypeError, match="lambda2s"):
        numkfs.garrote_path(X, y, lambda2s=[10.0, 1.0])
    with pytest.raises(TypeError, match="'C'"):
        numkfs.l1kr_path(X, y, C=1.0)
    with pytest.raises(TypeError, match="lambda2s"):
        numkfs.GarroteRegressorCV(lambda2s=[10.0, 1.0])
    with pytest.raises(TypeError, match="lambda2s"):
        numkfs.select(X, y, "garrote", lambda2s=[10.0, 1.0])

    def fitted(*args, **kwargs):
        raise AssertionError("a path was fitted before the parameters were checked")

    monkeypatch.setattr(numkfs.resampling, "method_path", fitted)
    for make in (lambda: numkfs.StabilitySelection("garrote", n_resamples=2, lambda2s=[10.0, 1.0]),
                 lambda: numkfs.KnockoffFilter("garrote", params={"lambda2s": [10.0, 1.0]})):
        with pytest.raises(TypeError, match="garrote_path has no parameter 'lambda2s'"):
            make().fit(X, y)
    with pytest.raises(TypeError, match="l1kr_path has no parameter 'C'"):
        numkfs.StabilitySelection("l1kr", n_resamples=2, C=1.0).fit(X, y)
    with pytest.raises(TypeError, match="garrote_path has no parameter 'lambda2s'"):
        numkfs.select(X, y, "garrote", stability=True, n_resamples=2, lambda2s=[10.0, 1.0])


@pytest.mark.parametrize("name", [n for n in CLASSES if "grid" in getattr(numkfs, n)().get_params()])
@pytest.mark.parametrize("bad", [np.nan, -1.0])
def test_a_bad_grid_value_is_refused_as_the_grid(name, bad):
    """A grid with a NaN or a negative value is refused by a message about the grid, before anything
    derived from it (L1KRRegressorCV reads its D_max off the grid: a NaN grid was reported as a bad
    'D_max', a parameter the user had not given)."""
    cls = getattr(numkfs, name)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    if is_classifier(cls()) or name.startswith("NMMKL"):
        y = (y > 0).astype(int)
    grid = [2.0, bad] if name.startswith("LpKTA") else [bad, 2.0]  # lp-KTA's p decreases from 2
    with pytest.raises((ValueError, TypeError)) as exc:
        cls(grid=grid).fit(X, y)
    msg = str(exc.value)
    assert "grid" in msg and "D_max" not in msg, msg
    assert "np.float64" not in msg, msg  # values shown as numbers, not numpy reprs


def _sel_data(n=30, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, 2 * X[:, 0] + 0.1 * rng.standard_normal(n)


def test_infinite_parameters_refused():
    # knife(X, y, lambda2=inf) was accepted (objective inf, non-zero weights)
    from numkfs.methods import knife

    X, y = _sel_data()
    with pytest.raises(ValueError, match=r"The 'lambda2' parameter of knife must be a float in the range \[0\.0, inf\)"
                                         r"\. Got inf instead"):
        knife(X, y, lambda2=float("inf"))
