r"""The knockoff SDP as a problem any conic backend with a semidefinite cone solves.

Model-X Gaussian knockoffs (Candès, Fan, Janson & Lv 2018) need a vector s
with :math:`2\Sigma - \operatorname{diag}(s) \succeq 0` and
:math:`0 \le s_j \le \Sigma_{jj}`; the larger s, the more a knockoff differs
from its feature.  On the correlation scale (:math:`\Sigma_{jj} = 1`) the
SDP choice is

.. math::

    \max_s\ \sum_j s_j \quad\text{s.t.}\quad
    2\Sigma - \operatorname{diag}(s) \succeq 0,\quad 0 \le s \le 1

(the same as minimising :math:`\sum_j |1 - s_j|` on that box).  ``solver="auto"``
tries the native log-barrier Newton method first
(:mod:`numkfs.solvers.native.knockoff_sdp`: p = 300 in seconds), then
CLARABEL (up to :data:`~numkfs.solvers.registry.INTERIOR_POINT_SDP_MAX_SIDE`
features: its memory grows like p^4) and SCS; ECOS has no semidefinite cone
and is skipped.  :func:`numkfs.solvers.cross_check` compares them.
"""
from __future__ import annotations

import numpy as np

from ._base import ConvexProblem

__all__ = ["GroupKnockoffSDP", "KnockoffSDP"]


class KnockoffSDP(ConvexProblem):
    r"""The knockoff SDP for a correlation matrix.

    Parameters
    ----------
    correlation : ndarray of shape (p, p)
        Symmetric, positive semidefinite: a correlation matrix, or (for the
        features outside a collinear set J, whose s_J = 0) the correlation
        conditional on J, :math:`\Sigma_{RR} - \Sigma_{RJ}\Sigma_{JJ}^+\Sigma_{JR}`
        (the box stays :math:`0 \le s \le 1`, the original diagonal).

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.solvers import solve
    >>> from numkfs.solvers.knockoff_sdp import KnockoffSDP
    >>> res = solve(KnockoffSDP(np.eye(3)))
    >>> np.round(res["s"], 6).tolist()
    [1.0, 1.0, 1.0]
    """

    kind = "knockoff_sdp"

    def __init__(self, correlation):
        super().__init__()
        C = np.asarray(correlation, dtype=float)
        if C.ndim != 2 or C.shape[0] != C.shape[1] or not np.all(np.isfinite(C)):
            raise ValueError(f"KnockoffSDP: correlation must be a finite square matrix; got shape {C.shape}.")
        self.correlation = 0.5 * (C + C.T)

    def build(self):
        import cvxpy as cp

        p = self.correlation.shape[0]
        s = cp.Variable(p, name="s")
        return cp.Problem(cp.Maximize(cp.sum(s)),
                          [2.0 * self.correlation - cp.diag(s) >> 0, s >= 0, s <= 1])

    @property
    def size(self) -> int:
        return self.correlation.shape[0]

    def evaluate(self, solution):
        """Objective :math:`\\sum_j s_j` and the largest violation of the box and of
        :math:`2\\Sigma - \\operatorname{diag}(s) \\succeq 0` (minus its smallest eigenvalue), by numpy."""
        s = np.asarray(solution["s"], dtype=float).ravel()
        viol = max(0.0, -self.min_eigenvalue(s), float(np.max(-s, initial=0.0)), float(np.max(s - 1.0, initial=0.0)))
        return float(s.sum()), viol

    def min_eigenvalue(self, s) -> float:
        """Smallest eigenvalue of :math:`2\\Sigma - \\operatorname{diag}(s)`."""
        return float(np.linalg.eigvalsh(2.0 * self.correlation - np.diag(np.asarray(s, dtype=float)))[0])


class GroupKnockoffSDP(KnockoffSDP):
    r"""The knockoff SDP with s tied within groups: :math:`s_j = \gamma_g` for j in group g.

    .. math::

        \max_\gamma\ \sum_g |g|\,\gamma_g \quad\text{s.t.}\quad
        2M - \operatorname{diag}(E\gamma) \succeq 0,\quad 0 \le \gamma \le 1,

    with E the columns' group indicators.  Group knockoffs solve it for
    :math:`M = B^{-1/2}\Sigma B^{-1/2}`, B the diagonal blocks of Σ
    (:func:`numkfs.knockoffs.group_s`).  No native solver: a conic backend
    with a semidefinite cone.

    Parameters
    ----------
    correlation : ndarray of shape (p, p)
        M: symmetric, positive semidefinite.
    groups : list of array-like of int
        Every column in exactly one group.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.solvers import solve
    >>> from numkfs.solvers.knockoff_sdp import GroupKnockoffSDP
    >>> res = solve(GroupKnockoffSDP(np.eye(3), [[0, 1], [2]]))
    >>> np.round(res["gamma"], 6).tolist()
    [1.0, 1.0]
    """

    kind = "group_knockoff_sdp"

    def __init__(self, correlation, groups):
        super().__init__(correlation)
        p = self.correlation.shape[0]
        self.groups = [np.asarray(g, dtype=int) for g in groups]
        self.membership = np.zeros((p, len(self.groups)))
        for k, g in enumerate(self.groups):
            self.membership[g, k] = 1.0
        if not np.array_equal(self.membership.sum(axis=1), np.ones(p)):
            raise ValueError("GroupKnockoffSDP: groups must hold every column exactly once.")

    def build(self):
        import cvxpy as cp

        gamma = cp.Variable(len(self.groups), name="gamma")
        return cp.Problem(cp.Maximize(self.membership.sum(axis=0) @ gamma),
                          [2.0 * self.correlation - cp.diag(self.membership @ gamma) >> 0, gamma >= 0, gamma <= 1])

    def evaluate(self, solution):
        """Objective :math:`\\sum_g |g|\\gamma_g` and the largest violation (as :class:`KnockoffSDP`)."""
        return super().evaluate({"s": self.expand(solution["gamma"])})

    def expand(self, gamma):
        """The per-column s of a γ: :math:`E\\gamma`."""
        return self.membership @ np.asarray(gamma, dtype=float).ravel()
