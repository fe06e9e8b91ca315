"""The target as numkfs reads it: a 1-D array from lists, arrays and pandas
objects (:func:`target_to_array`), stray text in a numeric column
(:func:`stray_text`), the task a target stands for (:func:`target_type`,
numkfs's one rule), a target made to fit a given task (:func:`task_target`)
and the one refusal of a continuous target where classes are asked for
(:func:`check_class_labels`).

A ground-floor module (numpy, and scikit-learn's ``type_of_target`` on
first use): the kernels, the methods and the estimators read targets
through it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["MAX_FLOAT_CLASSES", "STRAY_TEXT_SHARE", "check_class_labels", "check_real", "stray_text",
           "target_to_array", "target_type", "task_target"]


def _is_number(v) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


#: A target with at most this share of non-numeric cells (and at least one
#: numeric value) reads as a numeric column with stray text, not as labels.
STRAY_TEXT_SHARE = 0.1


def stray_text(values) -> np.ndarray:
    """Positions of the cells that are not numbers in a target that is
    numeric but for a few cells (at most :data:`STRAY_TEXT_SHARE` of them,
    at most 3 distinct texts); empty for a numeric target or class names.

    One text cell ("n/a", "12,5", a note) in a column of numbers made the
    whole target text: as many classes as values, one row each, and an
    error about the folds or the method instead of the cell.  Missing
    values (None, NaN, pandas' NA) are not counted: they are refused as
    missing by name.

    Parameters
    ----------
    values : array-like of shape (n_samples,)
        The target's cells (strings, numbers or both).

    Returns
    -------
    ndarray of int
        The rows to name; empty when the target is not of that kind.

    Examples
    --------
    >>> from numkfs._targets import stray_text
    >>> stray_text(["1.5", "2.25", "3", "x"] + [str(v) for v in range(6)]).tolist()
    [3]
    >>> stray_text(["yes", "no", "yes"]).tolist(), stray_text([1.0, 2.0]).tolist()
    ([], [])
    """
    values = np.asarray(values, dtype=object).ravel()
    text = np.array([not (v is None or _is_missing_scalar(v) or _is_number(v)) for v in values], dtype=bool)
    n_text = int(text.sum())
    numbers = values[~text]
    if n_text == 0 or n_text > max(1, STRAY_TEXT_SHARE * values.size) or len({str(v) for v in values[text]}) > 3 \
            or len({float(v) for v in numbers if v is not None and not _is_missing_scalar(v)}) < 2:
        return np.zeros(0, dtype=int)
    return np.flatnonzero(text)


def check_real(a, what: str, caller: str) -> None:
    """Refuse an array, Series or sparse matrix of complex numbers by name
    (numpy's cast to float would drop the imaginary parts with a mere
    warning), in scikit-learn's words ("Complex data not supported").

    Parameters
    ----------
    a : array-like
        What was given (only its ``dtype``, or a DataFrame's ``dtypes``, is
        read, when it has one).
    what : str
        Its name in the message, e.g. ``"X"`` (a DataFrame's column is
        named: ``"column 'a' of X"``).
    caller : str
        The function or estimator named at the start of the message.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs._targets import check_real
    >>> check_real(np.ones(3), "y", "select")
    >>> check_real(np.ones(3) + 1j, "y", "select")
    Traceback (most recent call last):
    ...
    ValueError: select: y holds complex numbers (dtype complex128). Complex data not supported: numkfs takes real data.
    """
    if hasattr(a, "columns") and hasattr(a, "dtypes"):  # a DataFrame: name its first complex column
        kinds = [(c, d) for c, d in zip(a.columns, a.dtypes) if getattr(d, "kind", None) == "c"]
        where, dtype = (f"column {str(kinds[0][0])!r} of {what}", kinds[0][1]) if kinds else (what, None)
    else:
        where, dtype = what, getattr(a, "dtype", None)
    if getattr(dtype, "kind", None) == "c":
        raise ValueError(f"{caller}: {where} holds complex numbers (dtype {dtype}). Complex data not supported: "
                         "numkfs takes real data.")


def _is_missing_scalar(v) -> bool:
    """None-like: pandas' NA/NaT or a float NaN."""
    if isinstance(v, float):
        return v != v
    try:
        import pandas as pd

        return v is pd.NA or v is pd.NaT
    except ImportError:  # pragma: no cover
        return False


def target_to_array(y, n_samples: int | None = None, *, caller: str = "numkfs") -> np.ndarray:
    """y as a 1-D array: lists, arrays, one-column arrays/DataFrames and pandas
    Series (matched by position, the index ignored; nullable values' NA
    becoming NaN).  A ValueError names a length mismatch, complex numbers,
    missing values (with the first row) and a constant target."""
    check_real(y, "y", caller)
    if hasattr(y, "to_numpy"):
        import pandas as pd

        if isinstance(y, pd.DataFrame):
            if y.shape[1] != 1:
                raise ValueError(f"{caller}: y must be one column; got a DataFrame with {y.shape[1]} columns.")
            y = y.iloc[:, 0]
        if pd.api.types.is_numeric_dtype(y.dtype) and not pd.api.types.is_bool_dtype(y.dtype):
            y = y.to_numpy(dtype=float, na_value=np.nan)
        else:
            y = y.to_numpy()
    y = np.asarray(y)
    check_real(y, "y", caller)  # a list of complex numbers
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{caller}: y must be 1-D (one value per sample); got shape {y.shape}.")
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(f"{caller}: X has {n_samples} rows but y has {y.shape[0]} values.")
    if y.dtype.kind == "f":
        missing = ~np.isfinite(y)
    elif y.dtype.kind == "O":
        missing = np.array([v is None or (isinstance(v, float) and not np.isfinite(v)) or str(v) in ("<NA>", "nan")
                            for v in y], dtype=bool)
    else:
        missing = np.zeros(y.shape[0], dtype=bool)
    if missing.any():
        raise ValueError(f"{caller}: y has {int(missing.sum())} missing or non-finite value(s) (first at row "
                         f"{int(np.argmax(missing))}); drop or impute those rows.")
    if y.dtype.kind in "OUS":
        stray = stray_text(y)
        if stray.size:
            cells = ", ".join(f"{(y[i].item() if hasattr(y[i], 'item') else y[i])!r} at row {int(i)}"
                              for i in stray[:3])
            raise ValueError(f"{caller}: y is numeric except for {stray.size} value(s) that are not numbers "
                             f"({cells}); fix or drop those rows (read as text, every value would be a class "
                             f"of its own; for class labels, name the classes, e.g. 'c1', 'c2').")
    if y.shape[0] > 1 and np.unique(y.astype(str) if y.dtype.kind == "O" else y).size < 2:
        v = y[0].item() if hasattr(y[0], "item") else y[0]
        raise ValueError(f"{caller}: y is constant (every value is {v!r}): there is nothing to predict.")
    return y


def task_target(y, task: str | None, *, caller: str = "numkfs") -> np.ndarray:
    """y as the task given reads it: for ``"classification"``, whole-number
    floats become integer class labels, so that :func:`target_type` sees
    classes however many there are (12 class codes 0.0, ..., 11.0 looked
    continuous to NMMKL), and a continuous y is refused
    (:func:`check_class_labels`); otherwise y unchanged.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        The target.
    task : {"regression", "classification"} or None
        The task given.
    caller : str, default="numkfs"
        The function or estimator named in the refusal of a continuous y.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        ``task="classification"`` of a continuous y.
    """
    y = np.asarray(y)
    if task == "classification":
        return _class_codes(y, caller)
    return y


def _class_codes(y, caller):
    """``y`` with whole-number floats as int64 class codes; a continuous ``y`` refused."""
    if y.dtype.kind == "f" and y.size and np.all(np.isfinite(y)):
        if np.all(y == np.round(y)) and np.max(np.abs(y)) < 2.0 ** 53:
            return y.astype(np.int64)
        if y.ndim == 1 and target_type(y) == "regression":
            raise ValueError(f"{caller}: y looks continuous ({np.unique(y).size} distinct real values in "
                             f"{y.shape[0]} samples); pass class labels.")
    return y


def check_class_labels(y, caller: str) -> None:
    """Refuse a continuous y where class labels are asked for: numkfs's one
    check, made by :func:`numkfs.select` and the resampling selectors for
    ``task="classification"`` (through :func:`task_target`) and by every
    classifier's ``fit``.

    A float y with a value that is not a whole number is continuous (as
    scikit-learn's :func:`~sklearn.utils.multiclass.type_of_target` has
    it); whole-number floats are class codes, however many.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The target.
    caller : str
        The function or estimator named at the start of the message.

    Raises
    ------
    ValueError
        For a continuous y.

    Examples
    --------
    >>> from numkfs._targets import check_class_labels
    >>> check_class_labels([0.0, 1.0, 2.0], "KNIFEClassifier")
    >>> check_class_labels([0.5, 1.25, 2.0], "KNIFEClassifier")
    Traceback (most recent call last):
    ...
    ValueError: KNIFEClassifier: y looks continuous (3 distinct real values in 3 samples); pass class labels.
    """
    _class_codes(np.asarray(y), caller)


#: Float targets with more distinct (integer) values than this are regression targets.
MAX_FLOAT_CLASSES = 10


def target_type(y) -> str:
    """``"binary"``, ``"multiclass"`` or ``"regression"``: the one rule of numkfs.

    As scikit-learn's :func:`~sklearn.utils.multiclass.type_of_target`, except
    that a float target whose values happen to be whole numbers (counts,
    scores, a diabetes progression index) is a regression target when it
    has more than :data:`MAX_FLOAT_CLASSES` distinct values, as is a float
    target with a value of magnitude 2**63 or more (beyond int64, no class
    code); integer, string and boolean labels are classes however many
    there are.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Target values: the response, or the class labels of a classifier.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import target_type
    >>> target_type([0, 1, 1]), target_type(np.arange(30.0)), target_type(np.arange(30) % 3)
    ('binary', 'regression', 'multiclass')
    """
    from sklearn.utils.multiclass import type_of_target

    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.dtype.kind == "f" and y.size and np.max(np.abs(y), initial=0.0) >= 2.0 ** 63:
        # beyond int64's range a float holds no class code (and type_of_target's cast to int overflows)
        return "regression"
    t = type_of_target(y)
    if t == "continuous":
        return "regression"
    if t == "multiclass" and y.dtype.kind == "f" and np.unique(y).size > MAX_FLOAT_CLASSES:
        return "regression"
    if t in ("binary", "multiclass"):
        return t
    raise ValueError(f"Unknown label type {t!r}: y must be one column of class labels or real values.")
