"""numkfs: feature selection in non-linear kernel models.

Methods (plain functions in :mod:`numkfs.methods`, scikit-learn estimators
in :mod:`numkfs.estimators`): KNIFE, L1KR, generalized lp-KTA, NMMKL and
the COSSO-like garrote.  Every path method returns a :class:`FeaturePath`.
"""
__version__ = "0.1.0"

from .paths import FeaturePath
from . import solvers

__all__ = ["FeaturePath", "solvers", "__version__"]
