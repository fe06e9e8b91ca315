"""The one estimator registry of the test suite.

:data:`ESTIMATORS` holds one small, fast-to-fit instance of every public
estimator of :mod:`numkfs.estimators` (tiny grids, few folds, few outer
iterations: the tests that use it are about the API, the contract and
robustness, not about convergence).  Every list of estimators in the tests
is built from it:

* the scikit-learn contract (``parametrize_with_checks``) of each method, in
  ``test_estimator_checks.py``: :func:`checked`;
* the selection contract over the cross-validating estimators
  (``estimators/test_cv.py``), the bad-input battery and the property suite
  (``test_properties.py``), determinism (``test_determinism.py``): :func:`make`,
  :func:`names`.

A test that needs another setting (``cv=3``, another ``random_state``)
asks :func:`make` for it; the other parameters stay the registry's.

The methods come from the method registry (:func:`methods`); ``test_registry.py`` checks that
:data:`ESTIMATORS` holds exactly the estimators its rows name.

A new public estimator goes here (and in its method's row), and nowhere else:
``test_registry.py`` checks that the registry holds every name of
``numkfs.estimators.__all__``, ``test_layers.py`` that each one is in a
``parametrize_with_checks`` list and, unless it cross-validates, in the
bad-input battery.

Each pytest-xdist worker limits its BLAS to its share of the cores
(:func:`pytest_configure`): two workers on two cores, each with a BLAS of two
threads, would put four spinning threads on two cores, and a 600 x 600
eigendecomposition then takes seconds instead of milliseconds.  Numba's
threads are left as they are (the library's thread policy runs small data
on one thread; the tests of the parallel kernels ask for two).

Imported by the tests as ``from conftest import ...`` (pytest puts this
folder on ``sys.path``, also for the test packages below it; ``benchmarks/robustness.py``
does the same).
"""
from __future__ import annotations

import os

import numpy as np
from sklearn.base import clone

import numkfs.estimators as _E

_P11 = np.linspace(2, 1, 11)
_P6 = np.linspace(2, 1, 6)

#: class name -> a small instance of every public estimator of numkfs.estimators
ESTIMATORS = {
    "KNIFERegressor": _E.KNIFERegressor(lambda2=0.1, max_iter=20, random_state=0),
    "KNIFEClassifier": _E.KNIFEClassifier(lambda2=0.1, max_iter=20, random_state=0),
    "KNIFERegressorCV": _E.KNIFERegressorCV(n_grid=4, cv=2, max_iter=20, random_state=0),
    "KNIFEClassifierCV": _E.KNIFEClassifierCV(n_grid=4, cv=2, max_iter=20, random_state=0),
    "GarroteRegressor": _E.GarroteRegressor(lambda2=0.1),
    "GarroteRegressorCV": _E.GarroteRegressorCV(n_grid=5, cv=2, random_state=0),
    "COSSORegressor": _E.COSSORegressor(max_iter=30),
    "COSSORegressorCV": _E.COSSORegressorCV(n_grid=3, cv=2, max_iter=30, random_state=0),
    "L1KRRegressor": _E.L1KRRegressor(D_max=1.0, max_iter=200),
    "L1KRRegressorCV": _E.L1KRRegressorCV(cv=2, n_grid=3, D_max=1.0, max_iter=200, random_state=0),
    "LpKTASelector": _E.LpKTASelector(grid=_P11),
    "LpKTAClassifier": _E.LpKTAClassifier(grid=_P11),
    "LpKTASelectorCV": _E.LpKTASelectorCV(cv=2, grid=_P6, random_state=0),
    "LpKTAClassifierCV": _E.LpKTAClassifierCV(cv=2, grid=_P6, random_state=0),
    "NMMKLSelector": _E.NMMKLSelector(n_features_to_select=1),
    "NMMKLSelectorCV": _E.NMMKLSelectorCV(cv=2, n_grid=3),
}

#: further settings the scikit-learn checks also run, each a different code path:
#: another loss, the per-feature RBF factors, a fixed number of features
VARIANTS = [
    _E.KNIFEClassifier(loss="logistic", lambda2=0.1, max_iter=20, random_state=0),
    _E.NMMKLSelector(n_features_to_select=1, kernel="rbf"),
    _E.LpKTASelector(n_features_to_select=1, grid=_P11),
]


def methods(*, task=None):
    """The methods of the method registry (``numkfs/_registry.py``), in its order; ``task``: only those
    that do "regression" or "classification".  Every list of methods in the tests is built from it."""
    from numkfs._registry import METHOD_ROWS

    return [name for name, row in METHOD_ROWS.items() if task is None or task in row.tasks]


def names(*, cv=None, task=None):
    """Registry names, in registry order; ``cv=True``: only the cross-validating
    ``*CV`` estimators; ``task``: "regression" or "classification"."""
    out = list(ESTIMATORS)
    if cv is not None:
        out = [n for n in out if n.endswith("CV") == cv]
    if task is not None:
        out = [n for n in out if task_of(n) == task]
    return out


def task_of(name):
    """"regression" (a numeric target) or "classification" (class labels)."""
    return "regression" if "Regressor" in name else "classification"


def make(name, **params):
    """A fresh (unfitted) copy of the registry's ``name``, with ``params`` changed."""
    return clone(ESTIMATORS[name]).set_params(**params)


def checked(prefix):
    """Fresh copies of the registry's estimators (and :data:`VARIANTS`) whose
    class name starts with ``prefix``: the list for ``parametrize_with_checks``."""
    picked = [e for n, e in ESTIMATORS.items() if n.startswith(prefix)]
    picked += [e for e in VARIANTS if type(e).__name__.startswith(prefix)]
    assert picked, f"no registry estimator starts with {prefix!r}"
    return [clone(e) for e in picked]


def ids(estimators):
    """Test ids: the class name, then the parameters that differ from the registry's instance."""
    out = []
    for e in estimators:
        name = type(e).__name__
        ref = ESTIMATORS[name].get_params(deep=False)
        diff = [f"{k}={v!r}" for k, v in e.get_params(deep=False).items()
                if not _same(v, ref.get(k, object()))]
        out.append(name + (f"({', '.join(diff)})" if diff else ""))
    return out


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
    return a == b


def pytest_configure(config):
    """In a pytest-xdist worker, limit BLAS to ``cores // workers`` threads
    (at least one) for the whole session, as scikit-learn's test suite does,
    and start the worker's subprocesses (the command line, the docs build and
    its notebook kernel) with the same limit, unless one is set already."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers is None:
        return
    from threadpoolctl import threadpool_limits

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    share = max(1, cores // int(workers))
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(share))
    config._blas_limit = threadpool_limits(share, user_api="blas")
