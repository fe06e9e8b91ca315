"""Data checks shared by every method and estimator.

The checks (:func:`check_X`, :func:`check_X_y`, :func:`check_binary_labels`,
:func:`constant_columns`) copy rather than modify their inputs and give
messages that name the problem (which column is not finite, which classes
were found, ...); besides them, the memory check of a large allocation
(:func:`check_memory`), a DataFrame's conversion
(:func:`dataframe_to_array`), :func:`check_random_state` and the warnings
every method shares.  The parameter checks are in :mod:`numkfs._constraints`.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp

from ._targets import _is_number, check_real

__all__ = [
    "check_X",
    "check_X_y",
    "check_y",
    "check_binary_labels",
    "constant_columns",
    "check_random_state",
    "check_memory",
    "ConstantFeatureWarning",
    "NumericalWarning",
    "warn_not_converged",
    "dataframe_to_array",
    "warn_once",
]


class ConstantFeatureWarning(UserWarning):
    """A feature is constant on the training data; it gets weight 0."""


class NumericalWarning(UserWarning):
    """Numerical trouble (a singular system, a degenerate path...) was met and
    a documented safeguard applied; the message says what happened and what was done."""


def warn_not_converged(method: str, *, max_iter: int, where: str = "", what: str = "iterations",
                       hint: str = "increase max_iter or loosen tol", limit: str = "max_iter",
                       stacklevel: int = 3) -> None:
    """Raise scikit-learn's ``ConvergenceWarning`` for an iteration that
    stopped at its limit, naming the method, the path point and the limit.

    Parameters
    ----------
    method : str
        The method or solver that stopped (``"KNIFE"``, ``"COSSO"``...).
    max_iter : int
        The limit that was reached.
    where : str, optional
        The path point or sub-problem, e.g. ``"lambda2=0.5"``.
    what : str, default="iterations"
        What was counted (``"iterations"``, ``"sweeps"``, ``"steps"``).
    hint : str
        What the user can change.
    limit : str, default="max_iter"
        The name of the parameter that set the limit (``"max_steps"``...).
    stacklevel : int
        Passed to :func:`warnings.warn`.

    Examples
    --------
    >>> import warnings
    >>> from numkfs._validation import warn_not_converged
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_not_converged("KNIFE", max_iter=100, where="lambda2=0.5")
    >>> str(w[0].message)
    'KNIFE did not converge at lambda2=0.5 within max_iter=100 iterations; increase max_iter or loosen tol.'
    """
    from sklearn.exceptions import ConvergenceWarning

    at = f" at {where}" if where else ""
    warnings.warn(f"{method} did not converge{at} within {limit}={int(max_iter)} {what}; {hint}.",
                  ConvergenceWarning, stacklevel=stacklevel)


# --------------------------------------------------------------------------
# data checks


def _column_name(j: int, feature_names) -> str:
    if feature_names is not None:
        return f"column {j} ({feature_names[j]!r})"
    return f"column {j}"


def _feature_names_of(X) -> np.ndarray | None:
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    return np.asarray([str(c) for c in cols], dtype=object)


def check_X(
    X,
    *,
    caller: str = "numkfs",
    accept_sparse: bool = False,
    min_samples: int = 2,
    dtype=np.float64,
    allow_nd: bool = False,
    copy: bool = True,
):
    """Validate a design matrix; return a new float64 array (or CSC matrix).

    ``copy=False`` (dense input only) skips the defensive copy when ``X`` is
    already a C-contiguous array of ``dtype``: for read-only callers on large
    data (the per-feature alignments), whose result never aliases ``X``.

    Raises a ValueError that names the offending column for NaN/inf, refuses
    complex numbers, non-2-D input, fewer than ``min_samples`` rows and zero
    columns. The input is never modified: the returned array is always a
    copy when its dtype or layout had to change, and callers must not write
    to it otherwise.
    """
    feature_names = _feature_names_of(X)
    check_real(X, "X", caller)
    if sp.issparse(X):
        if not accept_sparse:
            raise TypeError(
                f"{caller} does not accept scipy.sparse input; convert it with X.toarray()."
            )
        X = sp.csc_matrix(X, dtype=dtype, copy=True)
        data = X.data
        if not np.all(np.isfinite(data)):
            bad = np.unique(np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))[~np.isfinite(data)])
            raise ValueError(
                f"{caller}: X contains NaN or infinity in {_column_name(int(bad[0]), feature_names)}"
                + (f" and {len(bad) - 1} other column(s)" if len(bad) > 1 else "")
                + "."
            )
    else:
        if hasattr(X, "columns") and hasattr(X, "dtypes"):  # a DataFrame: name the column that is not numeric
            X = dataframe_to_array(X, caller=caller)[0].astype(dtype, copy=False)
        elif hasattr(X, "to_numpy"):
            try:
                X = X.to_numpy(dtype=dtype)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{caller}: X has non-numeric columns ({exc}).") from None
        try:
            X = np.array(X, dtype=dtype, copy=True) if copy else np.asarray(X, dtype=dtype)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{caller}: X could not be converted to float: {exc}") from None
        if X.ndim != 2 and not allow_nd:
            raise ValueError(
                f"{caller}: X must be a 2-D array (n_samples, n_features); got {X.ndim} dimension(s)"
                f" with shape {X.shape}. Reshape a single feature with X.reshape(-1, 1)."
            )
        if not np.all(np.isfinite(X)):
            bad_cols = np.flatnonzero(~np.all(np.isfinite(X), axis=0))
            j = int(bad_cols[0])
            kind = "NaN" if np.isnan(X[:, j]).any() else "infinity"
            raise ValueError(
                f"{caller}: X contains {kind} in {_column_name(j, feature_names)}"
                + (f" and {len(bad_cols) - 1} other column(s)" if len(bad_cols) > 1 else "")
                + ". Impute or drop missing values first."
            )
        X = np.ascontiguousarray(X)
        if X.ndim == 2:
            _check_scale(X, caller, feature_names)
    if sp.issparse(X) and X.nnz:
        _check_scale(X, caller, feature_names)
    n, p = X.shape
    if n < min_samples:
        raise ValueError(f"{caller}: X has {n} sample(s); at least {min_samples} are required.")
    if p < 1:
        raise ValueError(f"{caller}: X has 0 features; at least 1 is required.")
    return X


#: Magnitudes beyond which numkfs refuses data: squares and sums of squares
#: over- or underflow in float64 (1e154² overflows, 1e-162² underflows).
MAX_MAGNITUDE, MIN_SPREAD = 1e150, 1e-150


#: Rows per slab of :func:`_column_extremes`.
EXTREMES_ROWS = 64


def _column_extremes(X):
    """``(X.min(axis=0), X.max(axis=0))`` of a dense 2-D ``X`` with rows, by
    slabs of ``EXTREMES_ROWS`` rows seen as one row of ``EXTREMES_ROWS *
    d`` values (then the slabs' ``d``-column extremes): numpy's reduction
    along the rows of a narrow C-ordered array runs an inner loop of ``d``
    values per row, several times slower than the slabs' long rows (the
    same values: a minimum has no rounding)."""
    n, d = X.shape
    m = n // EXTREMES_ROWS * EXTREMES_ROWS
    if m == 0 or not X.flags.c_contiguous:
        return X.min(axis=0), X.max(axis=0)
    slabs = X[:m].reshape(m // EXTREMES_ROWS, EXTREMES_ROWS * d)
    lo = slabs.min(axis=0).reshape(EXTREMES_ROWS, d).min(axis=0)
    hi = slabs.max(axis=0).reshape(EXTREMES_ROWS, d).max(axis=0)
    if m < n:
        lo = np.minimum(lo, X[m:].min(axis=0))
        hi = np.maximum(hi, X[m:].max(axis=0))
    return lo, hi


def _check_scale(X, caller, feature_names=None) -> None:
    """Refuse columns whose squares overflow or whose spread underflows.

    Standardising such a column (or forming XᵀX, kernel distances, y's
    variance) gives inf/NaN or a column that looks constant: the methods
    returned all-zero or NaN weights with at most a RuntimeWarning.
    """
    if sp.issparse(X):
        X = sp.csc_matrix(X)
        big = np.zeros(X.shape[1])
        np.maximum.at(big, np.repeat(np.arange(X.shape[1]), np.diff(X.indptr)), np.abs(X.data))
        lo = np.minimum(np.asarray(X.min(axis=0).todense()).ravel(), 0.0) if X.shape[0] > 0 else big
        hi = np.asarray(X.max(axis=0).todense()).ravel()
    else:
        if X.size == 0:
            return
        lo, hi = _column_extremes(X)
        big = np.maximum(-lo, hi)  # max |x| from the extremes: no |X| temporary (a third of this check)
    j = int(np.argmax(big)) if big.size else 0
    if big.size and big[j] > MAX_MAGNITUDE:
        raise ValueError(f"{caller}: {_column_name(j, feature_names)} of X has values up to {big[j]:.1e}; beyond "
                         f"{MAX_MAGNITUDE:.0e} squares overflow in floating point. Rescale it (e.g. standardise X).")
    spread = hi - lo
    tiny = (spread > 0) & (spread < MIN_SPREAD)
    if tiny.any():
        j = int(np.flatnonzero(tiny)[0])
        raise ValueError(f"{caller}: {_column_name(j, feature_names)} of X varies only by {spread[j]:.1e}; below "
                         f"{MIN_SPREAD:.0e} its variance underflows in floating point. Rescale it (e.g. standardise "
                         f"X).")


#: A response whose spread is at most this fraction of its largest value varies only within the
#: round-off of its values (a few units in the last place of float64): nothing is left to fit.
Y_ROUNDOFF = 16 * np.finfo(float).eps


def _check_y_scale(y, caller) -> None:
    if y.dtype.kind != "f" or y.size == 0:
        return
    big = float(np.max(np.abs(y)))
    spread = float(np.max(y) - np.min(y))
    if big > MAX_MAGNITUDE:
        raise ValueError(f"{caller}: y has values up to {big:.1e}; beyond {MAX_MAGNITUDE:.0e} squares overflow in "
                         f"floating point. Rescale it.")
    if 0 < spread < MIN_SPREAD:
        raise ValueError(f"{caller}: y varies only by {spread:.1e}; below {MIN_SPREAD:.0e} its variance underflows in "
                         f"floating point. Rescale it.")
    if 0 < spread <= Y_ROUNDOFF * big:
        raise ValueError(f"{caller}: y varies only by {spread:.1e} around values up to {big:.1e}, within the "
                         f"floating-point round-off of its values (a relative spread of {spread / big:.0e}): once "
                         "centred it holds no digits to fit. Subtract its offset before it is rounded (e.g. in the "
                         "units it was measured in).")


def check_y(y, n_samples: int | None = None, *, caller: str = "numkfs", numeric: bool = True):
    """Validate a target vector: 1-D (a column vector is raveled), real, finite, length n."""
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    y = np.asarray(y)
    check_real(y, "y", caller)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{caller}: y must be 1-D; got shape {y.shape}.")
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(
            f"{caller}: X and y have inconsistent numbers of samples: X has {n_samples}, y has {y.shape[0]}."
        )
    if numeric:
        try:
            y = np.array(y, dtype=np.float64, copy=True)
        except (TypeError, ValueError):
            raise ValueError(f"{caller}: y must be numeric for regression; got dtype {y.dtype}.") from None
        if not np.all(np.isfinite(y)):
            raise ValueError(f"{caller}: y contains NaN or infinity.")
    else:
        y = y.copy()
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise ValueError(f"{caller}: y contains NaN or infinity.")
    _check_y_scale(y, caller)
    return y


def check_X_y(X, y, *, caller: str = "numkfs", accept_sparse: bool = False, y_numeric: bool = True, min_samples: int = 2):
    """Validate X and y together (see :func:`check_X` and :func:`check_y`)."""
    X = check_X(X, caller=caller, accept_sparse=accept_sparse, min_samples=min_samples)
    y = check_y(y, X.shape[0], caller=caller, numeric=y_numeric)
    return X, y


def check_binary_labels(y, *, caller: str = "numkfs"):
    """Map a two-class label vector to ±1.

    Returns
    -------
    y_pm : ndarray of float64 in {-1, +1}
    classes : ndarray of the two original labels, sorted; ``classes[1]`` maps to +1.
    """
    classes = np.unique(y)
    if len(classes) != 2:
        shown = ", ".join(repr(c.item() if hasattr(c, "item") else c) for c in classes[:10])
        more = "" if len(classes) <= 10 else f", ... ({len(classes)} in all)"
        raise ValueError(
            f"{caller} needs exactly two classes in y; found {len(classes)}: [{shown}{more}]."
        )
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    return y_pm, classes


def constant_columns(X, *, caller: str = "numkfs", warn: bool = True, feature_names=None) -> np.ndarray:
    """Boolean mask of columns that are constant; warn once naming them.

    Constant features carry no information; every method gives them weight 0.
    """
    if sp.issparse(X):
        X = sp.csc_matrix(X)
        n = X.shape[0]
        nnz = np.diff(X.indptr)
        mask = np.zeros(X.shape[1], dtype=bool)
        for j in range(X.shape[1]):
            d = X.data[X.indptr[j]:X.indptr[j + 1]]
            if nnz[j] == 0:
                mask[j] = True
            elif nnz[j] == n:
                mask[j] = np.all(d == d[0])
    else:
        X = np.asarray(X)
        mask = np.all(X == X[:1], axis=0)
    if warn and mask.any():
        idx = np.flatnonzero(mask)
        names = [str(feature_names[j]) if feature_names is not None else str(j) for j in idx[:10]]
        more = "" if len(idx) <= 10 else f", ... ({len(idx)} in all)"
        warn_once(f"{caller}: feature(s) [{', '.join(names)}{more}] are constant; they get weight 0.",
                  ConstantFeatureWarning, stacklevel=4)
    return mask


_SHOWN: set = set()


def _filter_action(message: str, category: type, module: str) -> str:
    """The action Python's warning filters give this warning (as :func:`warnings.warn` would)."""
    for action, msg, cat, mod, lineno in warnings.filters:
        if ((msg is None or msg.match(message)) and issubclass(category, cat)
                and (mod is None or mod.match(module)) and lineno == 0):
            return action
    return warnings.defaultaction


def warn_once(message: str, category: type = UserWarning, *, stacklevel: int = 3) -> None:
    """:func:`warnings.warn`, shown once per process under the default filters.

    Python's default action shows a warning once per code location, but any
    ``warnings.catch_warnings()`` that changes the filters (scikit-learn,
    CVXPY and numkfs all do, inside every fit) resets that memory; a
    warning about the data (a constant feature) then repeats for every fit,
    fold and path point: 1,541 times in one ``GridSearchCV``.  Here the
    same message is shown once when the filters say ``"default"``,
    ``"module"`` or ``"once"``; an ``"always"`` or ``"error"`` filter
    (``pytest.warns``, ``-W error``) still sees every occurrence.
    """
    action = _filter_action(message, category, "numkfs")
    if action in ("default", "module", "once"):
        if (category, message) in _SHOWN:
            return
        _SHOWN.add((category, message))
    warnings.warn(message, category, stacklevel=stacklevel)


def check_random_state(seed) -> np.random.Generator:
    """Turn ``None``, an int, a ``Generator`` or a ``RandomState`` into a ``Generator``."""
    if seed is None or isinstance(seed, (numbers.Integral, np.integer)):
        return np.random.default_rng(seed)
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    raise ValueError(f"random_state must be None, an int or a numpy Generator; got {seed!r}.")


def check_memory(n_bytes: float, what: str, *, limit: float | None = None) -> None:
    """Refuse an allocation that would not fit in memory, with the estimate.

    ``limit`` defaults to 80 % of the machine's available memory (from
    ``/proc/meminfo``; unknown systems are not checked).
    """
    if limit is None:
        limit = _available_memory()
        if limit is None:
            return
        limit *= 0.8
    if n_bytes > limit:
        raise MemoryError(
            f"{what} would need about {_human_bytes(n_bytes)}, more than the "
            f"{_human_bytes(limit)} available; reduce n_samples or use a low-rank/screened method."
        )


def _human_bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} bytes"


def _available_memory() -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def dataframe_to_array(df, *, caller: str = "numkfs") -> tuple[np.ndarray, list]:
    """A DataFrame's values as a float array and its column names as strings.

    Numeric, boolean and nullable (``Int64``, ``Float64``, ``boolean``)
    columns are accepted, their missing values becoming NaN; a column of
    another kind (object, string, categorical, datetime) or of complex
    numbers, and duplicate column names, raise a ValueError naming them.
    """
    import pandas as pd

    names = [str(c) for c in df.columns]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"{caller}: duplicate column name(s) {', '.join(map(repr, dup))}; rename them.")
    check_real(df, "X", caller)
    cols = []
    for j in range(df.shape[1]):
        col = df.iloc[:, j]
        dtype = col.dtype
        if (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)) \
                and not isinstance(dtype, pd.CategoricalDtype):
            cols.append(col.to_numpy(dtype=float, na_value=np.nan))
            continue
        try:  # categories or objects that are numbers
            values = col.astype(object).to_numpy()
            cols.append(np.array([np.nan if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v))
                                  else float(v) for v in values], dtype=float))
        except (TypeError, ValueError):
            example = next((v for v in col if not _is_number(v)), None)
            raise ValueError(f"{caller}: column {names[j]!r} of X is not numeric (dtype {dtype}, value "
                             f"{example!r}); encode it or drop it.") from None
    X = np.column_stack(cols) if cols else np.empty((df.shape[0], 0))
    return X, names
