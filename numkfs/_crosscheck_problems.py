"""The convex subproblems of the methods, built from a data set, for
``numkfs cross-check`` (and for anyone comparing backends on real data).

Each builder standardises X the way its method does and returns a
:class:`~numkfs.solvers.ConvexProblem` that every backend can solve.
"""
from __future__ import annotations

import numpy as np

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
    from .methods.knife import _Knife
    from .solvers.native.knife_wstep import KnifeWeightStep

    X, y = check_X_y(X, y, caller="knife-wstep cross-check")
    Xs = _standardise(X)
    yc = y - y.mean()
    kn = _Knife(Xs, yc, kernel=kernel, loss="squared", lambda1=lambda1, gamma=1.0 / X.shape[1], degree=2,
                coef0=1.0, delta=1.0, solver="auto")
    w = np.ones(X.shape[1])
    K = kn.kernel_matrix(w)
    alpha, a0 = kn.alpha_step(K, np.zeros(X.shape[0]), 0.0)
    act, A, u0, c = kn.wstep_data(K, alpha, a0, w, lambda2)
    return KnifeWeightStep(kn.loss, yc, A, u0, c, w0=w[act])


PROBLEMS = {"nmmkl": nmmkl_problem, "garrote": garrote_problem, "knife-wstep": knife_wstep_problem}


def build_problem(name: str, X, y, **kwargs):
    """Build the named problem (one of :data:`PROBLEMS`) from data."""
    if name not in PROBLEMS:
        raise ValueError(f"unknown problem {name!r}; choose one of {', '.join(PROBLEMS)}.")
    return PROBLEMS[name](X, y, **kwargs)
