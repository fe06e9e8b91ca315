"""scikit-learn estimators that call the methods in :mod:`numkfs.methods`.

One private module per method (``_knife.py``, ``_lpkta.py``, ...); this
package re-exports them, each imported on first use.
"""
from .._lazy import attach as _attach

__getattr__, __dir__, __all__ = _attach(
    __name__,
    {
        "COSSORegressor": "_cosso",
        "COSSORegressorCV": "_cosso",
        "GarroteRegressor": "_garrote",
        "GarroteRegressorCV": "_garrote",
        "KNIFEClassifier": "_knife",
        "KNIFEClassifierCV": "_knife_cv",
        "KNIFERegressor": "_knife",
        "KNIFERegressorCV": "_knife_cv",
        "L1KRRegressor": "_l1kr",
        "L1KRRegressorCV": "_l1kr",
        "LpKTAClassifier": "_lpkta",
        "LpKTAClassifierCV": "_lpkta",
        "LpKTASelector": "_lpkta",
        "LpKTASelectorCV": "_lpkta",
        "NMMKLSelector": "_nmmkl",
        "NMMKLSelectorCV": "_nmmkl_cv",
    },
)
del _attach
