"""One module per paper: plain functions that compute a method's answer.

``knife``, ``knife_path`` (KNIFE), ``l1kr_path`` (L1KR), ``lpkta_path``
(generalized lp-KTA), ``nmmkl``, ``nmmkl_path`` (NMMKL), ``garrote_path``
(COSSO-like garrote, COSSO).
"""
__all__: list[str] = []
