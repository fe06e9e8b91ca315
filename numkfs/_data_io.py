"""Reading a user's table for the command line: a CSV file or a shipped
dataset name, with errors that name the problem in one line."""
from __future__ import annotations

import os

import numpy as np

__all__ = ["DataError", "read_table"]


class DataError(ValueError):
    """A data problem to report to the user in one line."""


def read_table(source: str, target: str | None = None, *, dropna: bool = True):
    """Return ``(X, y, feature_names, target_name, task)``.

    ``source`` is a shipped dataset name (see
    :func:`numkfs.datasets.dataset_names`) or a CSV file with a header row.
    ``target`` names the response column (default: the last column).
    ``task`` is ``"classification"``, ``"regression"`` or None (unknown).
    Rows with missing values are dropped when ``dropna``.
    """
    from .datasets import dataset_names, load_dataset

    shipped = dataset_names()
    if source.lower() in shipped and not os.path.exists(source):
        d = load_dataset(source, dropna=dropna)
        if target is not None and target != d.target_name:
            names = list(d.feature_names)
            if target not in names:
                raise DataError(f"column {target!r} not found in {source}; columns: {', '.join(names + [d.target_name])}")
            j = names.index(target)
            y = d.data[:, j]
            X = np.column_stack([d.data[:, :j], d.data[:, j + 1:], np.asarray(d.target, dtype=float)])
            return X, y, names[:j] + names[j + 1:] + [d.target_name], target, None
        return d.data, d.target, list(d.feature_names), d.target_name, d.task
    if not os.path.exists(source):
        raise DataError(f"no such file or shipped dataset: {source!r} (shipped: {', '.join(shipped)})")
    import csv

    try:
        with open(source, newline="", encoding="utf-8-sig") as fh:  # "CSV UTF-8" from a spreadsheet starts with a BOM
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"cannot read {source}: {exc}") from None
    if not rows:
        raise DataError(f"{source} has 0 data row(s) (the file is empty); need a header and at least 2 rows")
    header, body = [h.strip() for h in rows[0]], [r for r in rows[1:] if any(c.strip() for c in r)]
    if len(body) < 2:
        raise DataError(f"{source} has {len(body)} data row(s); need a header and at least 2 rows")
    if any(not h for h in header):
        raise DataError(f"{source}: the header has an empty column name (column {header.index('') + 1})")
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise DataError(f"{source}: duplicate column name(s) {', '.join(map(repr, dup))} in the header; "
                        f"rename them (the target would be ambiguous)")
    line_of = [i + 2 for i, r in enumerate(rows[1:]) if any(c.strip() for c in r)]
    bad = [line_of[i] for i, r in enumerate(body) if len(r) != len(header)]
    if bad:
        raise DataError(f"{source}: line {bad[0]} has a different number of fields than the header ({len(header)})")
    tname = header[-1] if target is None else target
    if tname not in header:
        raise DataError(f"column {tname!r} not found in {source}; columns: {', '.join(header)}")
    t = header.index(tname)
    cols = list(zip(*body))
    feats = []
    for j, name in enumerate(header):
        if j == t:
            continue
        if all(_is_float(v) for v in cols[j]):
            feats.append(np.array([_to_float(v) for v in cols[j]]))
        else:
            example = next(v for v in cols[j] if not _is_float(v))
            raise DataError(f"column {name!r} is not numeric (value {example!r}); encode it or drop it")
    if not feats:
        raise DataError(f"{source}: only the target column {tname!r}; no feature columns")
    X = np.column_stack(feats)
    raw_y = [v.strip() for v in cols[t]]
    if all(_is_float(v) for v in raw_y):
        y = np.array([_to_float(v) for v in raw_y])
    else:
        from ._targets import stray_text

        stray = stray_text([None if v in _MISSING else v for v in raw_y])
        if stray.size:  # read as text, every value would be a class of its own
            cells = ", ".join(f"{raw_y[i]!r} on line {line_of[i]}" for i in stray[:3])
            raise DataError(f"column {tname!r} (the target) is numeric except for {stray.size} cell(s): {cells}; "
                            f"fix or drop those rows (for class labels, name the classes, e.g. 'c1', 'c2')")
        y = np.array(raw_y, dtype=object)
        missing = np.array([v in _MISSING for v in raw_y])
        if missing.any():
            y = y.astype(str)
            y[missing] = ""
    names = [h for j, h in enumerate(header) if j != t]
    if dropna:
        keep = ~np.isnan(X).any(axis=1)
        if y.dtype.kind == "f":
            keep &= np.isfinite(y)
        else:
            keep &= np.array([v not in _MISSING for v in y])
            y = y.astype(str)
        if not keep.all():
            import warnings

            warnings.warn(f"{source}: dropped {int((~keep).sum())} row(s) with missing values.", UserWarning,
                          stacklevel=2)
        X, y = X[keep], y[keep]
        if X.shape[0] < 2:
            raise DataError(f"{source}: {X.shape[0]} row(s) left after dropping rows with missing values; need 2")
    return X, y, names, tname, None


_MISSING = ("", "NA", "N/A", "na", "nan", "NaN", "NAN", "null", "NULL", "None", "?")


def _to_float(v: str) -> float:
    v = v.strip()
    if v in _MISSING:
        return np.nan
    return float(v)  # "inf" stays infinite: refused later by name, never dropped as missing


def _is_float(v: str) -> bool:
    if v.strip() in _MISSING:
        return True
    try:
        float(v)
        return True
    except ValueError:
        return False
