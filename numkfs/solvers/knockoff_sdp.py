r"""The knockoff SDP as a problem any conic backend with a semidefinite cone solves.

Model-X Gaussian knockoffs (Candès, Fan, Janson & Lv 2018) need a vector s
with :math:`2\Sigma - \operatorname{diag}(s) \succeq 0` and
:math:`0 \le s_j \le \Sigma_{jj}`; the larger s, the more a knockoff differs
from its feature.  On the correlation scale (:math:`\Sigma_{jj} = 1`) the
SDP choice is

.. math::

    \max_s\ \sum_j s_j \quad\text{s.t.}\quad
    2\Sigma - \operatorname{diag}(s) \succeq 0,\quad 0 \le s \le 1

(the same as minimising :math:`\sum_j |1 - s_j|` on that box).  No native
solver: CLARABEL and SCS solve it through the registry (ECOS has no
semidefinite cone and is skipped by ``solver="auto"``), and
:func:`numkfs.solvers.cross_check` compares them.
"""
from __future__ import annotations

import numpy as np

from ._base import ConvexProblem

__all__ = ["KnockoffSDP"]


class KnockoffSDP(ConvexProblem):
    """The knockoff SDP for a correlation matrix.

    Parameters
    ----------
    correlation : ndarray of shape (p, p)
        Symmetric, unit diagonal, positive semidefinite.

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
