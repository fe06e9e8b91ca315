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
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import numkfs  # noqa: E402
from _apigen import write_api_pages  # noqa: E402
import _gallery  # noqa: E402
import _notebooks  # noqa: E402

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


# --- helpers for the generated files -----------------------------------------
def _write_if_changed(path: Path, data: bytes) -> None:
    """Write *data* to *path* unless it holds it already (an unchanged file
    keeps its time stamp, so Sphinx does not re-read the page); the write goes
    through a temporary file, as two builds may run at once."""
    if path.exists() and path.read_bytes() == data:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


_AGG = re.compile(r"""^matplotlib\.use\((["'])Agg\1\)[ \t]*$""", re.MULTILINE)


def _docs_notebook(text: str) -> str:
    """The docs' copy of a notebook of ``notebooks/``.  The notebooks select
    the Agg backend, so that they draw off-screen when run as they are; here
    that line becomes ``%matplotlib inline``, so the figures become outputs of
    the cells when the build executes the notebook (``nb_execution_mode``)."""
    nb = json.loads(text)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = _AGG.sub("%matplotlib inline", src)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def _front_figure(script: Path, out: Path, stem: str = "front") -> None:
    """Run the front page's example (*script*, shown on ``index.md`` by a
    ``literalinclude``), or another page's (``stem``), and save what it prints
    and the path it draws in *out* (``{stem}_output.txt``, ``{stem}_path.png``): generated at every
    build, so the page shows what the code does today.  Agg backend, no
    window; a few seconds (lp-KTA on sonar, 208 x 60)."""
    import contextlib
    import io
    import runpy
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*non-interactive.*")  # plt.show() under Agg
        ns = runpy.run_path(str(script), run_name="__main__")
    fig = ns["ax"].figure
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close("all")
    _write_if_changed(out / f"{stem}_output.txt", printed.getvalue().encode("utf-8"))
    _write_if_changed(out / f"{stem}_path.png", png.getvalue())


# --- generated pages ---------------------------------------------------------
write_api_pages(HERE / "api")
_nb_dst = HERE / "examples" / "notebooks"
_nb_dst.mkdir(parents=True, exist_ok=True)
for _nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
    _write_if_changed(_nb_dst / _nb.name, _docs_notebook(_nb.read_text(encoding="utf-8")).encode("utf-8"))
for _old in _nb_dst.glob("*.ipynb"):  # a notebook renamed or removed in notebooks/
    if not (ROOT / "notebooks" / _old.name).exists():
        _old.unlink(missing_ok=True)
_front_figure(HERE / "_front_example.py", HERE / "_generated")
_front_figure(HERE / "_trust_groups.py", HERE / "_generated", "trust_groups")  # ozone's stable groups

# --- sources -----------------------------------------------------------------
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "README.md"]
templates_path = ["_templates"]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
# The guide pages include the tables the benchmark scripts write
# (benchmarks/results/*.md, one level down); a script's file may go from its
# title straight to a third-level heading, which is no fault of the page.
suppress_warnings = ["myst.header"]
# The notebooks are executed at every build (their copies draw inline, see
# _docs_notebook), so the example pages show their figures; jupyter-cache keeps
# the outputs next to the output directory ({outdir}/../.jupyter_cache) and runs
# a notebook again only when its code changes.  The ones it does not hold run
# one after the other in one kernel before Sphinx reads them (_notebooks.py), so
# the kernel's start and the imports are paid once, not once per notebook.  A
# failing cell is a warning, so `sphinx -W` fails: this build is the test
# suite's one run of the notebooks (tests/test_docs.py).
nb_execution_mode = "cache"
nb_execution_timeout = 600  # per cell; a loaded 2-core machine
nb_execution_raise_on_error = True
nb_execution_show_tb = True

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
    _gallery.setup(app)  # the example-gallery directive (examples/index.md)
    _notebooks.setup(app, _nb_dst)  # the notebooks, in one kernel, into jupyter-cache
    app.add_css_file("numkfs.css")


# --- output ------------------------------------------------------------------
# pydata-sphinx-theme (NumPy, SciPy, scikit-learn).  Nothing is fetched at build
# time or by the pages' own assets (fonts and icons ship with the theme): no
# logo URL, no icon links, no version switcher, no analytics.
html_theme = "pydata_sphinx_theme"
html_title = f"numkfs {release}"
html_theme_options = {
    "logo": {"text": f"numkfs {release}"},
    "navbar_align": "left",
    "navbar_end": ["theme-switcher"],
    "icon_links": [],
    "secondary_sidebar_items": ["page-toc"],
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": []}  # the front page: the navbar lists the sections
html_show_sourcelink = False
html_static_path = ["_static"]
nitpicky = False
