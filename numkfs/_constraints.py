"""Parameter checks declared as data, in the style of scikit-learn's
``_parameter_constraints``.

A table ``{name: [constraint, ...]}`` is checked by :func:`validate_params`,
which raises ``"The 'gamma' parameter of KNIFERegressor must be a float in
the range (0.0, inf). Got -1 instead."``; an estimator's table is its class
attribute, a public function's is declared with :func:`declares`, which
checks every call from it.  The parameters every method shares take their
constraints from one vocabulary (:data:`BOOL`, :data:`N_JOBS`,
:data:`RANDOM_STATE`, :data:`GRID`, :data:`SOLVER`, :data:`CALLBACK`,
:data:`CV`...), so that they accept and refuse the same values everywhere.
The data checks are in :mod:`numkfs._validation`.
"""
from __future__ import annotations

import functools
import inspect
import numbers
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import scipy.sparse as sp

__all__ = [
    "Interval",
    "Options",
    "InstanceOf",
    "NoneOr",
    "Satisfies",
    "BOOL",
    "N_JOBS",
    "SEED",
    "RANDOM_STATE",
    "GRID",
    "SOLVER",
    "POSITIVE_TOL",
    "CALLBACK",
    "CV",
    "validate_params",
    "declares",
]

#: The range of an int parameter: numkfs's compiled code and numpy hold ints in 64 bits.
INT64_MIN, INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)
_FLOAT_MAX = int(np.finfo(float).max)  # an int: comparing a huge int with a float overflows


@dataclass(frozen=True)
class Interval:
    """A real or integral interval; ``closed`` in {"both", "left", "right", "neither"}."""

    kind: type  # numbers.Real or numbers.Integral
    left: float | None
    right: float | None
    closed: str = "both"

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return False
        if self.kind is numbers.Integral:
            if not isinstance(value, numbers.Integral):
                return False
            if not INT64_MIN <= value <= INT64_MAX:  # compiled code takes 64-bit ints (np.isfinite refused these)
                return False
        elif not isinstance(value, numbers.Real):
            return False
        elif isinstance(value, numbers.Integral) and abs(value) > _FLOAT_MAX:
            return False  # a float parameter given as an int too large for a float
        if not isinstance(value, numbers.Integral) and not np.isfinite(value):
            # an open end "(0, inf)" excludes infinity itself: lambda2=inf gave an infinite objective
            # and non-zero weights (a parameter is never usefully infinite)
            return False
        lo_ok = self.left is None or (
            value >= self.left if self.closed in ("both", "left") else value > self.left
        )
        hi_ok = self.right is None or (
            value <= self.right if self.closed in ("both", "right") else value < self.right
        )
        return bool(lo_ok and hi_ok)

    def __str__(self) -> str:
        name = "an int" if self.kind is numbers.Integral else "a float"
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        lo = "-inf" if self.left is None else repr(float(self.left)) if self.kind is not numbers.Integral else str(self.left)
        hi = "inf" if self.right is None else repr(float(self.right)) if self.kind is not numbers.Integral else str(self.right)
        return f"{name} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (typically strings)."""

    values: frozenset

    def __init__(self, values: Iterable):
        object.__setattr__(self, "values", frozenset(values))

    def is_satisfied_by(self, value: Any) -> bool:
        try:
            return value in self.values
        except TypeError:
            return False

    def __str__(self) -> str:
        return "a str among {" + ", ".join(repr(v) for v in sorted(self.values, key=str)) + "}"


@dataclass(frozen=True)
class InstanceOf:
    """An instance of one of the given types (``description`` names it in errors)."""

    types: tuple
    description: str

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def __str__(self) -> str:
        return self.description


class _NoneConstraint:
    def is_satisfied_by(self, value: Any) -> bool:
        return value is None

    def __str__(self) -> str:
        return "None"


NoneOr = _NoneConstraint()


@dataclass(frozen=True)
class Satisfies:
    """A value for which ``test(value)`` is true (``description`` names it in errors).

    ``test`` must not raise for any value: it returns False for what it does not accept.
    """

    test: Any
    description: str

    def is_satisfied_by(self, value: Any) -> bool:
        return bool(self.test(value))

    def __str__(self) -> str:
        return self.description


# --------------------------------------------------------------------------
# the shared vocabulary: one constraint list per kind of parameter


#: A boolean switch: True or False (a numpy bool too), not 0, 1 or a string.
BOOL = [InstanceOf((bool, np.bool_), "a bool")]

#: Largest number of workers an ``n_jobs`` may ask for (either sign): more than any machine's cores, and
#: far below the counts whose process pools overflow.
N_JOBS_MAX = 4096


def _is_n_jobs(value) -> bool:
    return (isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
            and value != 0 and -N_JOBS_MAX <= value <= N_JOBS_MAX)


#: joblib's workers: None (one, unless a ``joblib.parallel_config`` says otherwise) or a non-zero int
#: (-1: every CPU, -2: all but one...).
N_JOBS = [NoneOr, Satisfies(_is_n_jobs, f"a non-zero int in the range [-{N_JOBS_MAX}, {N_JOBS_MAX}]")]

#: An int seed: what numpy's and scikit-learn's generators accept alike.
SEED = Interval(numbers.Integral, 0, 2**32 - 1)

#: The constraint of a ``random_state``: what :func:`check_random_state` takes.
RANDOM_STATE = [NoneOr, SEED,
                InstanceOf((np.random.Generator, np.random.RandomState), "a numpy Generator or RandomState")]


def _is_real_vector(value) -> bool:
    if isinstance(value, (str, bytes)) or sp.issparse(value):
        return False
    try:
        a = np.asarray(value)
        if a.dtype.kind == "O":
            a = a.astype(float)
    except (TypeError, ValueError, OverflowError):
        return False
    return a.ndim == 1 and a.size > 0 and a.dtype.kind in "iuf" and bool(np.all(np.isfinite(a)))


#: A grid given by the caller: None (the method's default grid) or a non-empty 1-D array-like of
#: finite real numbers; the order and range each method asks of it are checked by the method.
GRID = [NoneOr, Satisfies(_is_real_vector, "a non-empty 1-D array-like of finite real numbers")]


def _is_solver(value) -> bool:
    if isinstance(value, str):
        return bool(value)
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(isinstance(s, str) and s for s in value))


#: A solver backend: a name (``"auto"``, ``"native"``, ``"CLARABEL"``...) or a non-empty list of names,
#: tried in order; which names exist is the solver registry's to say (:mod:`numkfs.solvers`).
SOLVER = [Satisfies(_is_solver, "a solver name (a str) or a non-empty list of names")]

#: A stopping tolerance: a finite float > 0.
POSITIVE_TOL = [Interval(numbers.Real, 0, None, closed="neither")]

#: A callback: a callable or None.
CALLBACK = [NoneOr, Satisfies(callable, "a callable")]


def _is_split_or_splits(value) -> bool:
    if hasattr(value, "split") and not isinstance(value, str):
        return True
    return (not isinstance(value, (str, bytes, numbers.Number)) and hasattr(value, "__iter__")
            and not hasattr(value, "shape"))


#: Cross-validation folds: a number of folds >= 2, a scikit-learn splitter or an iterable of
#: (train, test) index pairs.
CV = [Interval(numbers.Integral, 2, None), Satisfies(_is_split_or_splits, "a CV splitter or an iterable of "
                                                                          "(train, test) splits")]

#: The parameters of a public function that are data, checked by its data checks, not by its table.
DATA = ("X", "y")


def declares(constraints: dict, *, data: Iterable[str] = DATA):
    """Decorator: a function's parameter constraints declared beside it,
    and checked from there at every call.

    The decorated function binds each call's arguments to its signature and
    checks the ones given against the table with :func:`validate_params`
    (under the function's name) before its body runs; the defaults are not
    checked again (``tests/test_constraints.py`` checks that they
    satisfy the table).  The table must name every parameter but the data:
    a parameter with no constraint is refused when the function is defined,
    so a new parameter cannot go unchecked.  The checked table is
    ``fn._parameter_constraints`` (an estimator's is its class attribute),
    the data ``fn._data_parameters``.

    Parameters
    ----------
    constraints : dict
        ``{name: [constraint, ...]}``, as for :func:`validate_params`, checked
        in its order (a parameter others are derived from comes first); it
        may hold more names than the function takes (a table shared by
        several functions): only the function's own are kept.
    data : iterable of str, default=("X", "y")
        The parameters that are data (arrays, names, a fitted result),
        which the function's data checks cover.

    Returns
    -------
    callable
        The decorator.

    Raises
    ------
    TypeError
        When the function is defined, if a parameter other than the data
        has no constraint.
    """
    data = tuple(data)

    def attach(fn):
        sig = inspect.signature(fn)
        names = [n for n, prm in sig.parameters.items()
                 if n not in data and prm.kind not in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD)]
        missing = [n for n in names if n not in constraints]
        if missing:
            raise TypeError(f"declares: {fn.__qualname__} has no constraint for its parameter(s) {missing}; "
                            "declare one, or name the parameter in data=.")
        table = {n: allowed for n, allowed in constraints.items() if n in names}  # checked in the table's order
        caller = fn.__name__

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            try:
                given = sig.bind(*args, **kwargs).arguments
            except TypeError:
                return fn(*args, **kwargs)  # Python's own message about the call (a missing argument...)
            validate_params(given, table, caller)
            return fn(*args, **kwargs)

        checked._parameter_constraints = table
        checked._data_parameters = data
        return checked

    return attach


def validate_params(params: dict, constraints: dict, caller: str) -> None:
    """Check ``params`` against ``constraints``; raise a uniform ValueError.

    Parameters
    ----------
    params : dict
        Parameter values by name.
    constraints : dict
        ``{name: [constraint, ...]}``; a value is valid if any constraint
        accepts it. Parameters without an entry are not checked.
    caller : str
        Name used in the message (estimator class or function name).
    """
    for name, allowed in constraints.items():
        if name not in params:
            continue
        value = params[name]
        if any(c.is_satisfied_by(value) for c in allowed):
            continue
        descr = [str(c) for c in allowed]
        if len(descr) == 1:
            must = descr[0]
        else:
            must = ", ".join(descr[:-1]) + " or " + descr[-1]
        hint = ""
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) \
                and not INT64_MIN <= value <= INT64_MAX \
                and any(isinstance(c, Interval) and c.kind is numbers.Integral for c in allowed):
            hint = f" An int parameter must fit in 64 bits (at most {INT64_MAX}); give a smaller value."
        raise ValueError(
            f"The {name!r} parameter of {caller} must be {must}. Got {value!r} instead.{hint}"
        )
