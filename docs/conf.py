"""Sphinx configuration of the numkfs documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (from the
repository root).  The API pages (``api/``) and the notebook copies
(``examples/notebooks/``) are generated here at every build from the
package's ``__all__`` lists and ``notebooks/``: a new public name appears in
the reference without editing any page.
"""
from __future__ import annotations

import builtins
import inspect
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import numkfs  # noqa: E402
from _apigen import write_api_pages  # noqa: E402

project = "numkfs"
author = "the numkfs developers"
copyright = "2026, the numkfs developers"
release = numkfs.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

# --- generated pages ---------------------------------------------------------
write_api_pages(HERE / "api")
_nb_dst = HERE / "examples" / "notebooks"
_nb_dst.mkdir(parents=True, exist_ok=True)
for _nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
    if not (_nb_dst / _nb.name).exists() or (_nb_dst / _nb.name).read_bytes() != _nb.read_bytes():
        shutil.copyfile(_nb, _nb_dst / _nb.name)

# --- sources -----------------------------------------------------------------
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md"]
templates_path = ["_templates"]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
nb_execution_mode = "off"  # the notebooks run in the test suite; here they are read

# --- API ---------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False


def _builtin_owner(obj):
    """The builtin type (``str``, ``int``, ``dict``, ``Exception``...) whose C
    code implements the attribute *obj*, else None."""
    if not inspect.isroutine(obj) and not inspect.isdatadescriptor(obj):
        return None
    if inspect.isfunction(obj) or inspect.isfunction(getattr(obj, "__func__", None)):
        return None  # written in Python: a numkfs (or other library) method
    owner = getattr(obj, "__objclass__", None)  # method, slot wrapper, getset descriptors
    bound_to = getattr(obj, "__self__", None)
    if owner is None and isinstance(bound_to, type):  # builtin class methods: dict.fromkeys
        owner = next((c for c in bound_to.__mro__ if getattr(obj, "__name__", None) in vars(c)), None)
    if owner is None:  # builtin static methods: str.maketrans
        head, _, rest = (getattr(obj, "__qualname__", None) or "").partition(".")
        owner = getattr(builtins, head, None) if rest else None
    return owner if isinstance(owner, type) and owner.__module__ == "builtins" else None


def _skip_builtin_members(app, what, name, obj, skip, options):
    """``autodoc-skip-member``: leave out what a class inherits from a builtin
    type.  The class template documents inherited members (the methods numkfs
    estimators share through their base classes); for ``Status``, a ``str``
    enum, that also meant every ``str`` method, ``str.maketrans`` included,
    whose signature Python cannot introspect (Sphinx 9 then fails while
    formatting it)."""
    if _builtin_owner(obj) is not None:
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_builtin_members)


# --- output ------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"numkfs {release}"
html_theme_options = {"description": "Feature selection in non-linear kernel models", "fixed_sidebar": True}
nitpicky = False
