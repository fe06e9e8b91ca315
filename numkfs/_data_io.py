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
    from .datasets._real import DATASETS, load_dataset

    if source.lower() in DATASETS and not os.path.exists(source):
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
        raise DataError(f"no such file or shipped dataset: {source!r} (shipped: {', '.join(sorted(DATASETS))})")
    import csv

    try:
        with open(source, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {source}: {exc}") from None
    if len(rows) < 3:
        raise DataError(f"{source} has {max(len(rows) - 1, 0)} data row(s); need a header and at least 2 rows")
    header, body = rows[0], [r for r in rows[1:] if any(c.strip() for c in r)]
    bad = [i + 2 for i, r in enumerate(body) if len(r) != len(header)]
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
        try:
            feats.append(np.array([float(v) if v.strip() not in ("", "NA", "nan", "NaN") else np.nan for v in cols[j]]))
        except ValueError:
            example = next(v for v in cols[j] if not _is_float(v))
            raise DataError(f"column {name!r} is not numeric (value {example!r}); encode it or drop it") from None
    X = np.column_stack(feats) if feats else np.empty((len(body), 0))
    raw_y = np.array(cols[t])
    if all(_is_float(v) for v in raw_y):
        y = np.array([float(v) if v.strip() else np.nan for v in raw_y])
    else:
        y = raw_y
    names = [h for j, h in enumerate(header) if j != t]
    if dropna:
        keep = ~np.isnan(X).any(axis=1)
        if y.dtype.kind == "f":
            keep &= ~np.isnan(y)
        if not keep.all():
            import warnings

            warnings.warn(f"{source}: dropped {int((~keep).sum())} row(s) with missing values.", UserWarning,
                          stacklevel=2)
        X, y = X[keep], y[keep]
    return X, y, names, tname, None


def _is_float(v: str) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return v.strip() in ("", "NA")
