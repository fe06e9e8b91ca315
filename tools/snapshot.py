"""Snapshot of numkfs's fitted numbers, to check that a refactor leaves them unchanged.

Fits every public estimator (each class of ``numkfs.__all__`` with
``get_params``) on small simulated data with an explicit ``random_state``
where it takes one, and runs :func:`numkfs.select` for every method and task
of the method registry (with cross-validation, a fixed ``n_features``,
``stability=True`` and ``fdr``).  Every fitted attribute (each name of the
fitted object ending in ``_``), followed into the arrays, dataclasses, dicts
and estimators it holds, is written as a flat table of keys and exact
values: an array as its dtype, shape and the SHA-256 of its bytes, a float as
its hexadecimal form.  Measured times (any name ``time`` or ``*_time_*``)
are left out: they differ between any two runs.

Usage (from the root of a checkout, that checkout first on the path)::

    PYTHONPATH=$PWD python tools/snapshot.py /tmp/before.json
    PYTHONPATH=$PWD python tools/snapshot.py /tmp/after.json --compare /tmp/before.json

``--compare`` writes the new snapshot, then lists every key whose value
differs, is missing or is new, and exits with status 1 if there is any.
``--only`` restricts the run to the entries whose name contains a string.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import inspect
import json
import re
import sys
import warnings

import numpy as np

#: small settings per estimator (as tests/conftest.py's registry): tiny grids, few folds
_P11 = np.linspace(2, 1, 11)
_P6 = np.linspace(2, 1, 6)
SETTINGS = {
    "KNIFERegressor": [dict(lambda2=0.1, max_iter=20)],
    "KNIFEClassifier": [dict(lambda2=0.1, max_iter=20), dict(loss="logistic", lambda2=0.1, max_iter=20)],
    "KNIFERegressorCV": [dict(n_grid=4, cv=2, max_iter=20)],
    "KNIFEClassifierCV": [dict(n_grid=4, cv=2, max_iter=20)],
    "GarroteRegressor": [dict(lambda2=0.1)],
    "GarroteRegressorCV": [dict(n_grid=5, cv=2)],
    "COSSORegressor": [dict(max_iter=30)],
    "COSSORegressorCV": [dict(n_grid=3, cv=2, max_iter=30)],
    "L1KRRegressor": [dict(D_max=2.0, max_iter=200)],
    "L1KRRegressorCV": [dict(cv=2, n_grid=3, D_max=2.0, max_iter=200)],
    "LpKTASelector": [dict(grid=_P11), dict(n_features_to_select=1, grid=_P11)],
    "LpKTAClassifier": [dict(grid=_P11)],
    "LpKTASelectorCV": [dict(cv=2, grid=_P6)],
    "LpKTAClassifierCV": [dict(cv=2, grid=_P6)],
    "NMMKLSelector": [dict(n_features_to_select=1), dict(n_features_to_select=1, kernel="rbf")],
    "NMMKLSelectorCV": [dict(cv=2, n_grid=3)],
    "StabilitySelection": [dict(selector="garrote", n_resamples=2, n_grid=10),
                           dict(selector="knife", n_resamples=2, n_grid=6, max_iter=20)],
    "KnockoffFilter": [dict(selector="garrote", fdr=0.5, n_grid=10),
                       dict(selector="lpkta", fdr=0.5, grid=_P6)],
}

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
#: the names of measured times (``solve_time``, ``time_per_jacobian``...): they differ between any two runs
_TIMING = re.compile(r"(^|_)time(_|$)")
#: a key of the flat table with a measured time in it
_TIMING_KEY = re.compile(r"(\.|\[')(\w*_)?time(_\w*)?('\]|\.|$)")


def data():
    """Small regression, binary and three-class problems (seeded)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y_reg = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - X[:, 3] + 0.3 * rng.standard_normal(60)
    y_bin = np.where(X[:, 0] + X[:, 2] ** 2 - 1 + 0.3 * rng.standard_normal(60) > 0, 1, -1)
    score = X[:, 0] + 0.8 * X[:, 2]
    y_3 = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    return X, {"regression": y_reg, "classification": y_bin, "three_classes": y_3}


def flatten(value, key, out, depth=0):
    """Write ``value`` into ``out`` as exact strings under keys starting with ``key``."""
    if depth > 8:
        out[key] = "<too deep>"
        return
    if value is None or isinstance(value, (bool, str, int, np.bool_)) and not isinstance(value, np.integer):
        out[key] = repr(value)
    elif isinstance(value, (np.integer,)):
        out[key] = f"{type(value).__name__}:{int(value)}"
    elif isinstance(value, (float, np.floating)):
        out[key] = f"{type(value).__name__}:{float(value).hex()}"
    elif isinstance(value, complex):
        out[key] = f"complex:{value.real.hex()},{value.imag.hex()}"
    elif isinstance(value, np.ndarray):
        if value.dtype == object:
            out[key] = f"object{value.shape}"
            for i, v in enumerate(value.ravel()):
                flatten(v, f"{key}[{i}]", out, depth + 1)
        else:
            a = np.ascontiguousarray(value)
            out[key] = f"{a.dtype.str}{a.shape}:{hashlib.sha256(a.tobytes()).hexdigest()[:20]}"
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        out[key] = type(value).__name__
        for f in dataclasses.fields(value):
            if _TIMING.search(f.name):
                continue
            flatten(getattr(value, f.name), f"{key}.{f.name}", out, depth + 1)
    elif isinstance(value, dict) or hasattr(value, "keys") and hasattr(value, "items"):
        out[key] = f"{type(value).__name__}[{len(value)}]"
        for k, v in value.items():
            if isinstance(k, str) and _TIMING.search(k):
                continue
            flatten(v, f"{key}[{k!r}]", out, depth + 1)
    elif isinstance(value, (list, tuple)):
        out[key] = f"{type(value).__name__}[{len(value)}]"
        for i, v in enumerate(value):
            flatten(v, f"{key}[{i}]", out, depth + 1)
    elif hasattr(value, "get_params") and not isinstance(value, type):
        flatten_estimator(value, key, out, depth + 1)
    elif isinstance(value, np.random.Generator):
        flatten(value.bit_generator.state, f"{key}.state", out, depth + 1)
    elif isinstance(value, np.random.RandomState):
        flatten(value.get_state(legacy=False), f"{key}.state", out, depth + 1)
    elif callable(value) and hasattr(value, "__qualname__"):
        out[key] = f"callable:{getattr(value, '__module__', '')}.{value.__qualname__}"
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        out[key] = type(value).__name__
        for k, v in sorted(vars(value).items()):
            if _TIMING.search(k):
                continue
            flatten(v, f"{key}.{k}", out, depth + 1)
    else:
        out[key] = f"{type(value).__name__}:{_ADDRESS.sub('', repr(value))}"


def flatten_estimator(est, key, out, depth=0):
    """An estimator's parameters and its fitted attributes (names ending in ``_``)."""
    out[key] = type(est).__name__
    for k, v in sorted(est.get_params(deep=False).items()):
        flatten(v, f"{key}.params.{k}", out, depth + 1)
    for k, v in sorted(vars(est).items()):
        if k.endswith("_") and not k.startswith("__") and not _TIMING.search(k):
            flatten(v, f"{key}.{k}", out, depth + 1)


def entries():
    """(name, thunk) pairs: each thunk fits or selects and returns the object to flatten."""
    import numkfs

    X, ys = data()
    out = []
    for name in sorted(numkfs.__all__):
        cls = getattr(numkfs, name)
        if not (inspect.isclass(cls) and hasattr(cls, "get_params")):
            continue
        if name not in SETTINGS:
            raise SystemExit(f"snapshot: no settings for the public estimator {name}; add them to SETTINGS.")
        takes = inspect.signature(cls.__init__).parameters
        for i, params in enumerate(SETTINGS[name]):
            params = dict(params)
            if "random_state" in takes:
                params["random_state"] = 0
            if name in ("StabilitySelection", "KnockoffFilter"):
                tasks = ["regression"] if params["selector"] == "garrote" else ["regression", "classification"]
            elif "Regressor" in name:
                tasks = ["regression"]
            else:
                tasks = ["classification"]
            if name.startswith("LpKTASelector") and i == 0:
                tasks = ["classification", "regression"]
            if name in ("KNIFEClassifier", "KNIFEClassifierCV") and i == 0:
                tasks = ["classification", "three_classes"]
            if name == "StabilitySelection" and params["selector"] == "knife":
                tasks = ["regression", "classification", "three_classes"]
            for task in tasks:
                def fit(cls=cls, params=params, task=task):
                    return cls(**params).fit(X, ys[task])
                out.append((f"{name}#{i}/{task}", fit))

    from numkfs._registry import METHOD_ROWS

    for method, row in METHOD_ROWS.items():
        for task in row.tasks:
            y = ys[task]
            out.append((f"select/{method}/{task}", lambda m=method, y=y: numkfs.select(X, y, m, cv=3, random_state=0)))
            out.append((f"select/{method}/{task}/best",
                        lambda m=method, y=y: numkfs.select(X, y, m, cv=3, cv_rule="best", random_state=0)))
            out.append((f"select/{method}/{task}/n_features",
                        lambda m=method, y=y: numkfs.select(X, y, m, cv=3, n_features=2, random_state=0)))
            out.append((f"select/{method}/{task}/stability",
                        lambda m=method, y=y: numkfs.select(X, y, m, stability=True, n_resamples=2, random_state=0)))
            out.append((f"select/{method}/{task}/fdr",
                        lambda m=method, y=y: numkfs.select(X, y, m, fdr=0.5, random_state=0)))
    out.append(("select/knife/three_classes",
                lambda: numkfs.select(X, ys["three_classes"], "knife", cv=3, random_state=0)))
    return out


def snapshot(only=None):
    """Entry name -> its flat table (an entry that raises is recorded by its error)."""
    tables = {}
    for name, thunk in entries():
        if only and not any(s in name for s in only):
            continue
        print(name, file=sys.stderr, flush=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = thunk()
            except Exception as exc:  # an error is a result too: it must not change either
                tables[name] = {"raised": f"{type(exc).__name__}: {_ADDRESS.sub('', str(exc))}"}
                continue
        flat = {"warnings": repr(sorted({type(w.message).__name__ for w in caught}))}
        flatten(result, "", flat)
        tables[name] = flat
    return tables


def compare(new, old):
    """Lines describing every difference between two snapshots."""
    lines = []
    for entry in sorted(set(old) | set(new)):
        if entry not in new or entry not in old:
            lines.append(f"{'missing' if entry not in new else 'new'} entry: {entry}")
            continue
        a, b = ({k: v for k, v in t[entry].items() if not _TIMING_KEY.search(k)} for t in (old, new))
        for k in sorted(set(a) | set(b)):
            if k not in b:
                lines.append(f"missing: {entry} {k} = {a[k]}")
            elif k not in a:
                lines.append(f"new:     {entry} {k} = {b[k]}")
            elif a[k] != b[k]:
                lines.append(f"differs: {entry} {k}: {a[k]} -> {b[k]}")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="where to write the snapshot (JSON)")
    parser.add_argument("--compare", metavar="OLD", help="a snapshot to compare the new one with")
    parser.add_argument("--only", action="append", help="only the entries whose name contains this")
    args = parser.parse_args(argv)
    table = snapshot(args.only)
    with open(args.out, "w") as fh:
        json.dump(table, fh, indent=0, sort_keys=True)
    print(f"{len(table)} entries, {sum(map(len, table.values()))} values written to {args.out}", file=sys.stderr)
    if args.compare:
        with open(args.compare) as fh:
            old = json.load(fh)
        if args.only:
            old = {k: v for k, v in old.items() if any(s in k for s in args.only)}
        lines = compare(table, old)
        print("\n".join(lines) if lines else "identical")
        return 1 if lines else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
