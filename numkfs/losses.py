r"""Smooth losses with their first and second derivatives.

Every loss is a sum over samples of a function of the prediction
:math:`u_i` (regression) or of the margin :math:`t_i = y_i u_i` with
:math:`y_i \in \{-1, +1\}` (classification):

================  ======================================================  ==============
name              :math:`\ell`                                             task
================  ======================================================  ==============
squared           :math:`(y - u)^2`                                        regression
squared_hinge     :math:`\max(0, 1 - t)^2`                                 classification
huberized_hinge   :math:`0` for :math:`t > 1`; :math:`(1-t)^2/(2\delta)`   classification
                  for :math:`1-\delta < t \le 1`; :math:`1 - t - \delta/2`
                  otherwise (Wang, Zhu & Zou 2008)
logistic          :math:`\log(1 + e^{-t})` (binomial deviance)             classification
================  ======================================================  ==============

Each loss object gives ``value(y, u)`` (the sum), ``gradient(y, u)``
(:math:`\partial \ell / \partial u_i`, a vector) and ``hessian_diag(y, u)``
(:math:`\partial^2 \ell / \partial u_i^2`; the losses are separable, so the
Hessian is diagonal).  The hinge-type losses are only once continuously
differentiable: ``hessian_diag`` returns the one-sided (generalised)
second derivative, which is what semi-smooth Newton methods use.

The losses are summed, not averaged; with averaged losses the same problems
are obtained by dividing every penalty by n.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Loss", "SquaredLoss", "SquaredHingeLoss", "HuberizedHingeLoss", "LogisticLoss",
           "LOSSES", "get_loss"]


class Loss:
    """Base class: a separable loss :math:`\\sum_i \\ell(y_i, u_i)`."""

    name = "loss"
    #: True for losses of a margin y*u with y in {-1, +1}.
    classification = False
    #: An upper bound of the second derivative (the Lipschitz constant of the
    #: first derivative): a quadratic with this curvature majorises the loss.
    curvature_bound = 2.0

    def value(self, y, u) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def gradient(self, y, u) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def hessian_diag(self, y, u) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SquaredLoss(Loss):
    r""":math:`\sum_i (y_i - u_i)^2`."""

    name = "squared"

    def value(self, y, u):
        r = y - u
        return float(r @ r)

    def gradient(self, y, u):
        return -2.0 * (y - u)

    def hessian_diag(self, y, u):
        return np.full(np.shape(u), 2.0)


class SquaredHingeLoss(Loss):
    r""":math:`\sum_i \max(0, 1 - y_i u_i)^2`."""

    name = "squared_hinge"
    classification = True

    def value(self, y, u):
        s = np.maximum(0.0, 1.0 - y * u)
        return float(s @ s)

    def gradient(self, y, u):
        return -2.0 * y * np.maximum(0.0, 1.0 - y * u)

    def hessian_diag(self, y, u):
        return np.where(y * u < 1.0, 2.0, 0.0)


class HuberizedHingeLoss(Loss):
    r"""Huberized hinge with smoothing width :math:`\delta > 0`."""

    name = "huberized_hinge"
    classification = True

    def __init__(self, delta: float = 1.0):
        if not delta > 0:
            raise ValueError(f"delta of the huberized hinge must be > 0; got {delta!r}.")
        self.delta = float(delta)
        self.curvature_bound = 1.0 / self.delta

    def value(self, y, u):
        s = 1.0 - y * u
        d = self.delta
        v = np.where(s <= 0.0, 0.0, np.where(s <= d, s * s / (2.0 * d), s - 0.5 * d))
        return float(v.sum())

    def gradient(self, y, u):
        s = 1.0 - y * u
        d = self.delta
        return -y * np.clip(s / d, 0.0, 1.0)

    def hessian_diag(self, y, u):
        s = 1.0 - y * u
        return np.where((s > 0.0) & (s < self.delta), 1.0 / self.delta, 0.0)

    def __repr__(self):
        return f"HuberizedHingeLoss(delta={self.delta})"


class LogisticLoss(Loss):
    r""":math:`\sum_i \log(1 + e^{-y_i u_i})`."""

    name = "logistic"
    classification = True
    curvature_bound = 0.25

    def value(self, y, u):
        return float(np.logaddexp(0.0, -y * u).sum())

    def gradient(self, y, u):
        # -y * sigmoid(-t), computed stably
        return -y * _sigmoid(-y * u)

    def hessian_diag(self, y, u):
        s = _sigmoid(y * u)
        return s * (1.0 - s)


def _sigmoid(x):
    out = np.empty_like(np.asarray(x, dtype=float))
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


#: Loss classes by name.
LOSSES = {
    "squared": SquaredLoss,
    "squared_hinge": SquaredHingeLoss,
    "huberized_hinge": HuberizedHingeLoss,
    "logistic": LogisticLoss,
}


def get_loss(name: str | Loss, *, delta: float = 1.0) -> Loss:
    """A loss object by name (``delta`` is used by the huberized hinge only)."""
    if isinstance(name, Loss):
        return name
    if name not in LOSSES:
        raise ValueError(f"Unknown loss {name!r}; choose one of {sorted(LOSSES)}.")
    if name == "huberized_hinge":
        return HuberizedHingeLoss(delta)
    return LOSSES[name]()
