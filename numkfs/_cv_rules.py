"""Each method's default CV rule, re-exported by :mod:`numkfs.model_selection`
as ``DEFAULT_CV_RULES``.  Here, in a module that imports nothing, so that the
command line's parser (``numkfs --help``, ``numkfs --version``) names the
rules without importing numpy.
"""

__all__ = ["DEFAULT_CV_RULES"]

#: Documented, with the reason for each rule, as :data:`numkfs.model_selection.DEFAULT_CV_RULES`.
DEFAULT_CV_RULES = {
    "knife": "best",
    "lpkta": "1se",
    "nmmkl": "best",
    "l1kr": "1se",
    "garrote": "best",
    "cosso": "1se",
}
