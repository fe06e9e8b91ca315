"""What every numkfs estimator shares: parameter checks declared as data,
the support mask from ``feature_weights_``, and input standardisation."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin

from .._validation import validate_params

__all__ = ["NumkfsEstimator", "WeightSelectorMixin", "Standardizer"]


class NumkfsEstimator(BaseEstimator):
    """Base class: subclasses declare ``_parameter_constraints`` as data and
    call :meth:`_validate_params` at the start of ``fit``."""

    _parameter_constraints: dict = {}

    def _validate_params(self):
        validate_params(self.get_params(deep=False), self._parameter_constraints, type(self).__name__)


class WeightSelectorMixin(SelectorMixin):
    """Selection from ``feature_weights_``: a feature is selected when its
    weight is above ``_selection_tol`` (default 0)."""

    _selection_tol = 0.0

    def _get_support_mask(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "feature_weights_")
        return np.abs(self.feature_weights_) > self._selection_tol


class Standardizer:
    """Centre and scale columns (constant columns are left at scale 1).

    Stored on fitted estimators so that ``predict`` applies the training
    transformation.
    """

    def __init__(self, center: bool = True, scale: str = "std"):
        self.center = center
        self.scale = scale

    def fit(self, X):
        X = np.asarray(X, dtype=float)
        self.mean_ = X.mean(axis=0) if self.center else np.zeros(X.shape[1])
        Xc = X - self.mean_
        if self.scale == "std":
            s = Xc.std(axis=0)
        elif self.scale == "norm":
            s = np.linalg.norm(Xc, axis=0)
        else:
            s = np.ones(X.shape[1])
        self.scale_ = np.where(s > 0, s, 1.0)
        return self

    def transform(self, X):
        return (np.asarray(X, dtype=float) - self.mean_) / self.scale_

    def fit_transform(self, X):
        return self.fit(X).transform(X)
