"""One module per paper: plain functions that compute a method's answer.

=================  ============================================  ==========================
function           method                                        returns
=================  ============================================  ==========================
``knife``          KNIFE fit at one (λ1, λ2)                     :class:`KNIFEResult`
``knife_path``     KNIFE feature path over λ2                    :class:`~numkfs.FeaturePath`
``l1kr_path``      L1KR homotopy path over D / arc length        :class:`~numkfs.FeaturePath`
``lpkta_path``     generalized lp-KTA path over p                :class:`~numkfs.FeaturePath`
``nmmkl``          NMMKL top-m selection (QCQP relaxation)       :class:`NMMKLResult`
``nmmkl_path``     NMMKL selections over m                       :class:`~numkfs.FeaturePath`
``garrote_path``   linear garrote path over λ2                   :class:`~numkfs.FeaturePath`
``garrote_relax``  the garrote's ridge refit on a support        ``(coef, intercept)``
``cosso``          COSSO additive model at one budget M          :class:`COSSOFit`
``cosso_path``     COSSO path over M (with CV)                   :class:`~numkfs.FeaturePath`
``cosso_relax``    COSSO's kernel-ridge refit, λ0 by GCV         :class:`COSSOFit`
=================  ============================================  ==========================
"""
# Imported eagerly, not through numkfs._lazy: knife, cosso and nmmkl are both functions and submodules here.
from .cosso import COSSOFit, cosso, cosso_path, cosso_relax
from .garrote import garrote_path, garrote_relax, garrote_step
from .knife import KNIFEResult, knife, knife_path
from .l1kr import l1kr_path
from .lpkta import lpkta_path
from .nmmkl import NMMKLResult, nmmkl, nmmkl_path

__all__ = [
    "COSSOFit",
    "KNIFEResult",
    "NMMKLResult",
    "cosso",
    "cosso_path",
    "cosso_relax",
    "garrote_path",
    "garrote_relax",
    "garrote_step",
    "knife",
    "knife_path",
    "l1kr_path",
    "lpkta_path",
    "nmmkl",
    "nmmkl_path",
]
