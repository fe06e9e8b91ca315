"""Loaders for the real data sets the papers used, shipped inside the package.

The files are gzip-compressed copies of ``shared/data/*.csv`` (the response
is the last column).  ``DESCR`` carries the provenance section of
``SOURCES.txt`` (where each file came from, its licence, checks done).
"""
from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from importlib import resources

__all__ = ["load_dataset", "DATASETS", "dataset_names"]


@dataclass(frozen=True)
class _Spec:
    files: tuple  # one file, or (train, test)
    task: str  # "regression" or "classification"
    section: str  # heading in SOURCES.txt
    note: str = ""


DATASETS = {
    "ozone": _Spec(("ozone.csv.gz",), "regression", "### ozone.csv",
                   "LA ozone, predictors min-max scaled to [0, 1] (cosso package version)."),
    "ozone_raw": _Spec(("ozone_raw.csv.gz",), "regression", "### ozone_raw.csv", "LA ozone in original units."),
    "vowel": _Spec(("vowel_train.csv.gz", "vowel_test.csv.gz"), "classification", "## 2. ESL vowel",
                   "ESL vowel, 11 classes; train (528) then test (462) rows, see `test_mask`."),
    "colon": _Spec(("colon.csv.gz",), "classification", "## 3. Colon cancer", "1 = normal, 2 = tumor."),
    "sonar": _Spec(("sonar.csv.gz",), "classification", "### sonar.csv"),
    "ionosphere": _Spec(("ionosphere.csv.gz",), "classification", "### ionosphere.csv"),
    "wpbc": _Spec(("wpbc.csv.gz",), "classification", "### wpbc.csv",
                  "4 missing values in `pnodes` (NaN); use dropna=True to drop those rows."),
    "madelon": _Spec(("madelon_train.csv.gz",), "classification", "### madelon_train.csv"),
    "arcene": _Spec(("arcene_train.csv.gz",), "classification", "### arcene_train.csv"),
    "diabetes_raw": _Spec(("diabetes_raw.csv.gz",), "regression", "## 6. Diabetes"),
}


def dataset_names() -> list[str]:
    """Names accepted by :func:`load_dataset`."""
    return sorted(DATASETS)


def _read_csv(fname: str):
    with resources.files(__package__).joinpath("data", fname).open("rb") as raw:
        with gzip.open(raw, "rt", encoding="utf-8") as fh:
            header = fh.readline().strip().split(",")
            rows = [line.rstrip("\n").split(",") for line in fh if line.strip()]
    return header, rows


def _to_float(col):
    import numpy as np

    return np.array([float(v) if v != "" else np.nan for v in col])


def _descr(spec: _Spec, name: str) -> str:
    text = resources.files(__package__).joinpath("data", "SOURCES.txt").read_text(encoding="utf-8")
    start = text.find(spec.section)
    if start < 0:  # pragma: no cover - SOURCES.txt ships with the package
        return spec.note
    level = spec.section.split()[0]
    nxt = re.compile(r"^#{1,%d} " % len(level), re.M).search(text, start + len(spec.section))
    body = text[start: nxt.start() if nxt else len(text)].strip()
    return f"{name}: {spec.note}\n\n{body}" if spec.note else f"{name}\n\n{body}"


def load_dataset(name: str, *, as_frame: bool = False, dropna: bool = False):
    """Load a shipped data set.

    Parameters
    ----------
    name : str
        One of :func:`dataset_names` (``"ozone"``, ``"vowel"``, ``"colon"``,
        ``"sonar"``, ``"ionosphere"``, ``"wpbc"``, ``"madelon"``,
        ``"arcene"``, ``"diabetes_raw"``, ``"ozone_raw"``).
    as_frame : bool
        Also return ``frame``, a pandas DataFrame of features and target.
    dropna : bool
        Drop rows with a missing value (only ``wpbc`` has any).

    Returns
    -------
    sklearn.utils.Bunch
        ``data`` (float64, n x p), ``target`` (float for regression; the
        original labels, float or str, for classification),
        ``feature_names``, ``target_name``, ``task``, ``DESCR`` (provenance),
        and for ``vowel`` a ``test_mask`` (True for the 462 test rows).

    Examples
    --------
    >>> from numkfs.datasets import load_dataset
    >>> d = load_dataset("ozone")
    >>> d.data.shape, d.target_name
    ((330, 8), 'ozone')
    """
    import numpy as np  # here, not at the top: the command line lists dataset_names() without numpy
    from sklearn.utils import Bunch

    key = name.lower()
    if key not in DATASETS:
        raise ValueError(f"Unknown dataset {name!r}. Shipped datasets: {', '.join(dataset_names())}.")
    spec = DATASETS[key]
    header, rows, test_mask = None, [], []
    for i, fname in enumerate(spec.files):
        h, r = _read_csv(fname)
        header = header or h
        rows += r
        test_mask += [i == 1] * len(r)
    cols = list(zip(*rows))
    X = np.column_stack([_to_float(c) for c in cols[:-1]])
    raw_target = np.array(cols[-1])
    try:
        target = _to_float(raw_target)
    except ValueError:
        target = raw_target.astype(str)
    if spec.task == "classification" and target.dtype.kind == "f" and np.all(target == np.round(target)):
        target = target.astype(np.int64)
    if dropna:
        keep = ~np.isnan(X).any(axis=1)
        X, target = X[keep], target[keep]
        test_mask = list(np.asarray(test_mask)[keep])
    out = Bunch(data=X, target=target, feature_names=np.array(header[:-1], dtype=object),
                target_name=header[-1], task=spec.task, DESCR=_descr(spec, key))
    if len(spec.files) > 1:
        out.test_mask = np.asarray(test_mask, dtype=bool)
    if as_frame:
        import pandas as pd

        frame = pd.DataFrame(X, columns=header[:-1])
        frame[header[-1]] = target
        out.frame = frame
    return out
