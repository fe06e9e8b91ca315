"""The convex subproblems of the methods, built from a data set, for
``numkfs cross-check`` (and for anyone comparing backends on real data).

Each builder standardises X the way its method does and returns a
:class:`~numkfs.solvers.ConvexProblem` that every backend can solve.
"""
from __future__ import annotations

import numpy as np

from ._registry import METHOD_ROWS, resolve
from ._validation import check_binary_labels, check_X_y

__all__ = ["PROBLEMS", "build_problem"]


def _standardise(X):
    s = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(s > 0, s, 1.0)


def nmmkl_problem(X, y, *, m=None, C=1.0, tau=0.1):
    """NMMKL's QCQP (paper eq. 8) with linear per-feature kernels."""
    from .solvers.native.nmmkl import NMMKLProblem

    X, y = check_X_y(X, y, caller="nmmkl cross-check", y_numeric=False)
    y_pm, _ = check_binary_labels(y, caller="nmmkl cross-check")
    m = m if m is not None else max(1, min(10, X.shape[1] // 2))
    return NMMKLProblem(_standardise(X), y_pm, float(m), C, tau)


def garrote_problem(X, y, *, lambda1=1.0, lambda2=None):
    """The linear garrote at λ2 = 1 % of the λ2 that zeroes every weight."""
    from .methods.garrote import garrote_lambda2_max
    from .solvers.native.garrote import LinearGarrote

    X, y = check_X_y(X, y, caller="garrote cross-check")
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    if lambda2 is None:
        lambda2 = 0.01 * garrote_lambda2_max(Xc, yc, lambda1, None)
    return LinearGarrote(Xc, yc, lambda1, lambda2)


def knife_wstep_problem(X, y, *, kernel="rbf", lambda1=1.0, lambda2=1.0):
    """KNIFE's first weight step from w = 1 (squared loss, standardised X)."""
    from .methods.knife import knife_wstep_problem as wstep_problem

    X, y = check_X_y(X, y, caller="knife-wstep cross-check")
    return wstep_problem(_standardise(X), y - y.mean(), kernel=kernel, lambda1=lambda1, lambda2=lambda2,
                         gamma=1.0 / X.shape[1])


#: Problem name -> builder: each method's ``cross_check`` in the method registry (``numkfs._registry``).
PROBLEMS = {name: resolve(builder) for row in METHOD_ROWS.values() for name, builder in row.cross_check.items()}


def build_problem(name: str, X, y, **kwargs):
    """Build the named problem (one of :data:`PROBLEMS`) from data."""
    if name not in PROBLEMS:
        raise ValueError(f"unknown problem {name!r}; choose one of {', '.join(PROBLEMS)}.")
    return PROBLEMS[name](X, y, **kwargs)
