"""Column standardisation shared by methods and estimators.

:class:`Standardizer` lives here, below both ``methods/`` and
``estimators/``, so that a method never imports an estimator module.  The
cross-validation engine (:mod:`numkfs.model_selection`) fits it inside each
fold, on the training rows only.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ResponseUnits", "Standardizer", "response_scale"]


class Standardizer:
    """Centre and scale columns (constant columns are left at scale 1).

    The moments are computed on columns first divided by the power of two
    nearest their largest absolute value (an exact operation), so data of
    any finite magnitude (1e-300 or 1e300) is standardised without overflow
    or underflow, and ordinary data gets the same bits as without it.

    Parameters
    ----------
    center : bool, default=True
        Subtract the column means.
    scale : {"std", "norm", "none"}, default="std"
        Divide by the column standard deviation, by the Euclidean norm of the
        centred column, or not at all.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
    scale_ : ndarray of shape (n_features,)
        1 for constant columns.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs._preprocessing import Standardizer
    >>> Z = Standardizer().fit_transform(np.array([[1.0, 1e300], [3.0, 3e300]]))
    >>> Z.tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    """

    def __init__(self, center: bool = True, scale: str = "std"):
        self.center = center
        self.scale = scale

    def fit(self, X):
        """Learn the column means and scales of ``X``; returns self."""
        X = np.asarray(X, dtype=float)
        amax = np.max(np.abs(X), axis=0) if X.shape[0] else np.ones(X.shape[1])
        unit = np.ldexp(1.0, np.frexp(np.where(amax > 0, amax, 1.0))[1])  # a power of two: exact scaling
        Xu = X / unit
        mu = Xu.mean(axis=0) if self.center else np.zeros(X.shape[1])
        Xc = Xu - mu
        if self.scale == "std":
            s = Xc.std(axis=0)
        elif self.scale == "norm":
            s = np.linalg.norm(Xc, axis=0)
        else:
            s = np.ones(X.shape[1]) / unit
        self.mean_ = mu * unit
        self.scale_ = np.where(s > 0, s * unit, 1.0)
        return self

    def transform(self, X):
        """``(X - mean_) / scale_`` as a new array."""
        return (np.asarray(X, dtype=float) - self.mean_) / self.scale_

    def fit_transform(self, X):
        """:meth:`fit` then :meth:`transform`."""
        return self.fit(X).transform(X)


def response_scale(y) -> float:
    """The scale of a regression response: the root mean square of ``y`` as given.

    The squared-loss methods (KNIFE, the garrote, COSSO) solve their
    problems on ``y / response_scale(y)`` and give their answers back in the
    units of y (λ2 times the scale squared, coefficients times the scale):
    their losses scale by the square of y's units and their grids come
    from the data, so in exact arithmetic the selection does not depend on
    the units of y, and the absolute floors of their stopping rules
    (``tol * max(1, |f|)``) must not make it so.  The loss at a zero model
    is ``n * response_scale(y)**2``.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        The response as the method sees it (centred, when the method centres).

    Returns
    -------
    float
        Positive; computed without overflow or underflow.  1 when y is
        zero everywhere (nothing to scale: the zero model fits it, in any
        units).

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs._preprocessing import response_scale
    >>> response_scale(np.array([3.0, -4.0]))
    3.5355339059327378
    >>> round(response_scale(np.array([3e-300, -4e-300])) / 1e-300, 12)   # no underflow
    3.535533905933
    """
    y = np.asarray(y, dtype=float)
    big = float(np.max(np.abs(y), initial=0.0))
    if not big > 0.0:
        return 1.0
    return big * float(np.sqrt(np.mean((y / big) ** 2)))


class ResponseUnits:
    """A penalty in the units of y squared (λ2), between the user's units and
    a model's that solves on ``y / y_scale`` (:func:`response_scale`).

    Parameters
    ----------
    y_scale : float
        The model's unit of y.
    user_grid : array-like, optional
        The penalty values the user gave: a walked point at one of them is
        reported at the user's value exactly, not at its round trip through
        the model's units; any other point (a default grid's, one inserted
        by refinement) at the model's value times ``y_scale**2``.

    Examples
    --------
    >>> from numkfs._preprocessing import ResponseUnits
    >>> units = ResponseUnits(3.0, user_grid=[0.1, 0.7])
    >>> units.to_user(units.to_model([0.1, 0.7])).tolist(), float(units.to_user([1.0])[0])
    ([0.1, 0.7], 9.0)
    """

    def __init__(self, y_scale, user_grid=None):
        self.scale = float(y_scale)
        self.s2 = self.scale**2
        grid = [] if user_grid is None else np.asarray(user_grid, dtype=float).ravel().tolist()
        self._given = dict(zip(self.to_model(grid).tolist(), grid))

    def to_model(self, values) -> np.ndarray:
        """Penalty values in the model's units."""
        return np.asarray(values, dtype=float) / self.s2

    def to_user(self, values) -> np.ndarray:
        """Penalty values of the model back in the user's units."""
        return np.array([self._given.get(v, v * self.s2) for v in np.asarray(values, dtype=float).ravel().tolist()])
