"""scikit-learn estimators that call the methods in :mod:`numkfs.methods`.

One private module per method (``_knife.py``, ``_lpkta.py``, ...); this
package re-exports them.
"""
from ._garrote import COSSORegressor, COSSORegressorCV, GarroteRegressor, GarroteRegressorCV
from ._knife import KNIFEClassifier, KNIFEClassifierCV, KNIFERegressor, KNIFERegressorCV
from ._l1kr import L1KRRegressor, L1KRRegressorCV
from ._lpkta import LpKTAClassifier, LpKTASelector, LpKTASelectorCV
from ._nmmkl import NMMKLSelector

__all__ = [
    "COSSORegressor",
    "COSSORegressorCV",
    "GarroteRegressor",
    "GarroteRegressorCV",
    "KNIFEClassifier",
    "KNIFEClassifierCV",
    "KNIFERegressor",
    "KNIFERegressorCV",
    "L1KRRegressor",
    "L1KRRegressorCV",
    "LpKTAClassifier",
    "LpKTASelector",
    "LpKTASelectorCV",
    "NMMKLSelector",
]
