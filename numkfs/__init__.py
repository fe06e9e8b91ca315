"""numkfs: feature selection in non-linear kernel models.

Methods (plain functions, also in :mod:`numkfs.methods`): KNIFE
(:func:`knife`, :func:`knife_path`), L1KR (:func:`l1kr_path`), generalized
lp-KTA (:func:`lpkta_path`), NMMKL (:func:`nmmkl`, :func:`nmmkl_path`) and the
COSSO-like garrote (:func:`garrote_path`, :func:`cosso_path`).  Estimators in
:mod:`numkfs.estimators` follow scikit-learn's conventions.  Every path method
returns a :class:`FeaturePath`; :func:`select` runs any method in one call.
"""
__version__ = "0.1.0"

from ._lazy import attach as _attach

# Public names are imported on first use (PEP 562), so that ``import numkfs``
# (and ``numkfs --version``) does not load scikit-learn, Numba or CVXPY.
__getattr__, __dir__, __all__ = _attach(
    __name__,
    {
        "COSSORegressor": "estimators",
        "COSSORegressorCV": "estimators",
        "GarroteRegressor": "estimators",
        "GarroteRegressorCV": "estimators",
        "KnockoffFilter": "knockoffs",
        "KNIFEClassifier": "estimators",
        "KNIFEClassifierCV": "estimators",
        "KNIFERegressor": "estimators",
        "KNIFERegressorCV": "estimators",
        "L1KRRegressor": "estimators",
        "L1KRRegressorCV": "estimators",
        "LpKTAClassifier": "estimators",
        "LpKTAClassifierCV": "estimators",
        "LpKTASelector": "estimators",
        "LpKTASelectorCV": "estimators",
        "NMMKLSelector": "estimators",
        "NMMKLSelectorCV": "estimators",
        "SelectionCurve": "estimators._lpkta_scoring",
        "cosso": "methods",
        "cosso_path": "methods",
        "garrote_path": "methods",
        "hsic_pvalues": "hsic",
        "hsic_test": "hsic",
        "knife": "methods",
        "knife_path": "methods",
        "l1kr_path": "methods",
        "lpkta_path": "methods",
        "lpkta_selection_path": "estimators._lpkta_scoring",
        "nmmkl": "methods",
        "nmmkl_path": "methods",
        "FeaturePath": "paths",
        "SelectionResult": "selection",
        "StabilitySelection": "stability",
        "select": "selection",
        "set_threads": "_threads",
    },
    submodules=["datasets", "estimators", "kernels", "methods", "solvers"],
    defined=["__version__"],
    unlisted=["losses", "model_selection", "paths", "plotting", "relaxed", "selection"],
)
del _attach
