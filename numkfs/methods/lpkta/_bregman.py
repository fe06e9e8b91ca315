"""lp-KTA's Bregman divergences (:mod:`numkfs.methods.lpkta`): the classes a
user passes as ``bregman``, by name in :data:`BREGMAN_DIVERGENCES`.  The
Newton kernels identify a divergence by its integer ``code``
(:mod:`numkfs.solvers.native.lpkta_newton`)."""
from __future__ import annotations

import numpy as np

from ...solvers.native.lpkta_newton import upper_bracket, zero_gradient

__all__ = ["BREGMAN_DIVERGENCES", "Bregman", "GeneralizedKL", "SquaredEuclidean"]


class Bregman:
    r"""A separable Bregman divergence :math:`B_F(\eta) = F(\eta) - F(x_0) - (\eta - x_0) F'(x_0)`.

    To add one: subclass, set ``name`` and a new integer ``code``, implement
    :meth:`value` and :meth:`elimination_term`, add its derivatives, Newton
    bracket and gradient at 0 to :mod:`numkfs.solvers.native.lpkta_newton`
    (:func:`~numkfs.solvers.native.lpkta_newton.bregman_terms`,
    :func:`~numkfs.solvers.native.lpkta_newton.upper_bracket`,
    :func:`~numkfs.solvers.native.lpkta_newton.zero_gradient`) and register
    it in :data:`BREGMAN_DIVERGENCES`.
    """

    name = ""
    code = -1
    default_x0 = 0.0

    def __init__(self, x0=None):
        self.x0 = float(self.default_x0 if x0 is None else x0)

    def value(self, eta):
        """:math:`B_F(\\eta)` element-wise."""
        raise NotImplementedError

    def zero_gradient(self, lam1):
        """:math:`\\lambda_1 (F'(0) - F'(x_0))`."""
        return zero_gradient(self.code, lam1, self.x0)

    def upper_bracket(self, a, lam1):
        """Points where :math:`G > 0` for every p (Newton's upper bracket)."""
        return upper_bracket(self.code, a, lam1, self.x0)

    def elimination_term(self, eps, p, lam1, lam2):
        """Largest change of one feature's objective term when a weight below
        ``eps`` is set to 0 (Lemma 1)."""
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}(x0={self.x0!r})"


class SquaredEuclidean(Bregman):
    r""":math:`F(x) = x^2`, :math:`B_F(\eta) = (\eta - x_0)^2` (default :math:`x_0 = 0`)."""

    name = "euclidean"
    code = 0
    default_x0 = 0.0

    def __init__(self, x0=None):
        super().__init__(x0)
        if not (np.isfinite(self.x0) and self.x0 >= 0):
            raise ValueError(f"SquaredEuclidean: x0 must be finite and >= 0; got {self.x0!r}.")

    def value(self, eta):
        return (np.asarray(eta, dtype=float) - self.x0) ** 2

    def elimination_term(self, eps, p, lam1, lam2):
        return lam1 * eps**2 + lam2 * (p - 1.0) * eps**p


class GeneralizedKL(Bregman):
    r""":math:`F(x) = x \log x - x`, :math:`B_F(\eta) = \eta\log(\eta/x_0) - \eta + x_0`
    (default :math:`x_0 = 1`)."""

    name = "kl"
    code = 1
    default_x0 = 1.0

    def __init__(self, x0=None):
        super().__init__(x0)
        if not (np.isfinite(self.x0) and self.x0 > 0):
            raise ValueError(f"GeneralizedKL: x0 must be finite and > 0; got {self.x0!r}.")

    def value(self, eta):
        eta = np.asarray(eta, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(eta > 0, eta * np.log(np.where(eta > 0, eta, 1.0) / self.x0), 0.0)
        return t - eta + self.x0

    def elimination_term(self, eps, p, lam1, lam2):
        return lam1 * eps + lam2 * (p - 1.0) * eps**p


BREGMAN_DIVERGENCES = {"euclidean": SquaredEuclidean, "kl": GeneralizedKL}


def _bregman(bregman, x0):
    if isinstance(bregman, Bregman):
        if x0 is not None:
            return type(bregman)(x0)
        return bregman
    if bregman not in BREGMAN_DIVERGENCES:
        raise ValueError(
            f"bregman must be one of {sorted(BREGMAN_DIVERGENCES)} or a Bregman instance; got {bregman!r}."
        )
    return BREGMAN_DIVERGENCES[bregman](x0)
