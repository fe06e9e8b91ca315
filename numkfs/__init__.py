"""numkfs: feature selection in non-linear kernel models.

Methods (plain functions, also in :mod:`numkfs.methods`): KNIFE
(:func:`knife`, :func:`knife_path`), L1KR (:func:`l1kr_path`), generalized
lp-KTA (:func:`lpkta_path`), NMMKL (:func:`nmmkl`, :func:`nmmkl_path`) and the
COSSO-like garrote (:func:`garrote_path`, :func:`cosso_path`).  Estimators in
:mod:`numkfs.estimators` follow scikit-learn's conventions.  Every path method
returns a :class:`FeaturePath`; :func:`select` runs any method in one call.
"""
__version__ = "0.1.0"

from . import datasets, estimators, kernels, methods, solvers
from .estimators import (
    COSSORegressor,
    COSSORegressorCV,
    GarroteRegressor,
    GarroteRegressorCV,
    KNIFEClassifier,
    KNIFEClassifierCV,
    KNIFERegressor,
    KNIFERegressorCV,
    L1KRRegressor,
    L1KRRegressorCV,
    LpKTAClassifier,
    LpKTASelector,
    LpKTASelectorCV,
    NMMKLSelector,
)
from .methods import (
    cosso,
    cosso_path,
    garrote_path,
    knife,
    knife_path,
    l1kr_path,
    lpkta_path,
    nmmkl,
    nmmkl_path,
)
from .paths import FeaturePath
from .selection import SelectionResult, select

__all__ = [
    "COSSORegressor",
    "COSSORegressorCV",
    "FeaturePath",
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
    "SelectionResult",
    "__version__",
    "cosso",
    "cosso_path",
    "datasets",
    "estimators",
    "garrote_path",
    "kernels",
    "knife",
    "knife_path",
    "l1kr_path",
    "lpkta_path",
    "methods",
    "nmmkl",
    "nmmkl_path",
    "select",
    "solvers",
]
