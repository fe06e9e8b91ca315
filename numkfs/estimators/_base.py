"""What every numkfs estimator shares: parameter checks declared as data,
the support mask from ``feature_weights_``, and input standardisation."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin

from .._preprocessing import Standardizer  # noqa: F401  (re-exported; it lives below methods/)
from .._constraints import validate_params
from ..paths import selection_tol, support_mask

__all__ = ["NumkfsEstimator", "WeightSelectorMixin", "Standardizer", "validate_data_named"]


class NumkfsEstimator(BaseEstimator):
    """Base class: subclasses declare ``_parameter_constraints`` as data and
    call :meth:`_validate_params` at the start of ``fit``."""

    _parameter_constraints: dict = {}

    def _validate_params(self):
        validate_params(self.get_params(deep=False), self._parameter_constraints, type(self).__name__)


class WeightSelectorMixin(SelectorMixin):
    """Selection from ``feature_weights_`` by the one rule of numkfs
    (:func:`numkfs.paths.support_mask`): a feature is selected when its
    weight is above the tolerance of the fitted path (``path_.tol``) or,
    without a path, of the estimator's method (``_method``, looked up in
    :data:`numkfs.paths.SELECTION_TOL`).  ``n_features_selected_`` is the
    size of that support."""

    _method = ""

    def _selection_tol(self) -> float:
        path = getattr(self, "path_", None)
        return float(path.tol) if path is not None else selection_tol(self._method)

    def _get_support_mask(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "feature_weights_")
        return support_mask(self.feature_weights_, self._selection_tol())

    @property
    def n_features_selected_(self) -> int:
        """Number of selected features (the size of :meth:`get_support`)."""
        return int(self._get_support_mask().sum())


def validate_data_named(est, X, y="no_validation", *, reset=True, **kwargs):
    """scikit-learn's ``validate_data``, but a non-finite X is refused with
    numkfs's message naming the column (:func:`numkfs._validation.check_X`)
    instead of scikit-learn's "Input X contains NaN", and complex numbers
    by name (:func:`numkfs._targets.check_real`).  ``kwargs`` go to
    ``validate_data`` (``accept_sparse``, ``dtype``, ``y_numeric``...)."""
    from sklearn.utils.validation import validate_data

    from .._targets import check_real
    from .._validation import check_X

    no_y = isinstance(y, str) and y == "no_validation"
    check_real(X, "X", type(est).__name__)
    if not no_y:
        check_real(y, "y", type(est).__name__)
    try:
        if no_y:
            return validate_data(est, X, reset=reset, **kwargs)
        return validate_data(est, X, y, reset=reset, **kwargs)
    except ValueError as exc:
        if "Input X contains" in str(exc):
            check_X(X, caller=type(est).__name__, min_samples=1, accept_sparse=bool(kwargs.get("accept_sparse")))
        raise
