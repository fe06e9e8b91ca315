"""One parameter-checking mechanism, and no former names.

Every public estimator and resampling selector declares its parameters'
constraints as data (``_parameter_constraints``, one entry per parameter of
its signature) and every public path function its table
(``fn._parameter_constraints``, every parameter but the data), all checked by
:func:`numkfs._validation.validate_params`: a bad value is refused with a
message naming the parameter and the value.  The names of the development
versions, renamed before 0.1.0, are refused with a ``TypeError`` naming them,
through the resampling selectors too, before anything is fitted.
"""
import inspect

import numpy as np
import pytest

from sklearn.base import is_classifier

import numkfs
import numkfs.methods

#: the public estimators and resampling selectors
CLASSES = sorted(n for n in numkfs.__all__
                 if inspect.isclass(getattr(numkfs, n)) and hasattr(getattr(numkfs, n), "fit"))
#: the public path functions of the methods
PATH_FUNCTIONS = sorted(n for n in numkfs.methods.__all__ if n.endswith("_path"))
#: a path function's data, grid, callbacks and solver (checked by its data checks and the solver registry)
DATA = ("X", "y", "feature_names", "true_support", "grid", "alignments", "penalty_weights", "stop", "keep",
        "resume", "solver")


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


@pytest.mark.parametrize("name", PATH_FUNCTIONS)
def test_every_path_function_declares_each_parameter(name):
    fn = getattr(numkfs.methods, name)
    table = getattr(fn, "_parameter_constraints", None)
    assert table is not None, f"{name} declares no _parameter_constraints"
    missing, extra = _undeclared(fn, table, DATA)
    assert not missing, f"{name} declares no constraint for {missing}"
    assert not extra, f"{name} declares constraints for {extra}, which it does not take"


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


@pytest.mark.parametrize("name", PATH_FUNCTIONS)
def test_a_bad_value_is_refused_by_name_in_a_path_function(name):
    fn = getattr(numkfs.methods, name)
    param, value = _bad_parameter(fn._parameter_constraints)
    X, y = _data()
    with pytest.raises(ValueError, match=rf"The '{param}' parameter of {name} must be .* Got {value!r} instead"):
        fn(X, y, **{param: value})


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
