"""Write the API reference pages from the package's ``__all__`` lists.

Each public object is documented once, on the page of the first module (in
:data:`MODULES` order) that exports it; the other pages that export it link
to that entry.  Called by ``conf.py`` at every build.
"""
from __future__ import annotations

import importlib
import inspect
import types
from pathlib import Path

#: (module, one-line description), in the order of the reference.
MODULES = [
    ("numkfs", "Estimators, path functions, :func:`numkfs.select` and the result classes."),
    ("numkfs.model_selection", "Cross-validation over a path and the selection contract."),
    ("numkfs.relaxed", "The relaxed refit: each path point's support scored without the method's penalty."),
    ("numkfs.solvers", "The solver registry: conic backends, native Numba solvers, cross-checks."),
    ("numkfs.datasets", "Shipped real data and the simulations of the papers."),
    ("numkfs.distributed", "Feature-separable work block by block over a Dask cluster."),
    ("numkfs.paths", "The path result class and the one support rule."),
    ("numkfs.plotting", "Plots of paths, accuracy curves and solver cross-checks."),
    ("numkfs.methods", "The methods as plain functions."),
    ("numkfs.estimators", "scikit-learn estimators."),
    ("numkfs.kernels", "Kernel and alignment building blocks (Numba)."),
]


def _public(mod):
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in vars(mod) if not n.startswith("_")]
    return [n for n in names if not n.startswith("__")]


def _kind(obj) -> str:
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_api_pages(out: Path) -> dict:
    """Write ``out/index.rst`` and one page per module; return
    ``{qualified name: canonical documented name}`` for every public name."""
    out.mkdir(parents=True, exist_ok=True)
    canonical: dict[int, str] = {}
    index: dict[str, str] = {}
    pages = []
    for modname, blurb in MODULES:
        mod = importlib.import_module(modname)
        own, elsewhere, submodules = [], [], []
        for name in _public(mod):
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType):
                submodules.append(obj.__name__)
                continue
            # only classes and functions have a stable identity worth sharing
            key = id(obj) if (inspect.isclass(obj) or inspect.isfunction(obj)) else (modname, name)
            full = f"{modname}.{name}"
            if key in canonical:
                elsewhere.append((name, canonical[key]))
                index[full] = canonical[key]
            else:
                canonical[key] = full
                own.append((name, _kind(obj)))
                index[full] = full
        title = f"``{modname}``"
        lines = [f".. _api-{modname}:", "", title, "=" * len(title), "", blurb, "",
                 f".. automodule:: {modname}", "   :no-members:", "", f".. currentmodule:: {modname}", ""]
        for kind, heading in (("class", "Classes"), ("function", "Functions"), ("data", "Constants")):
            names = [n for n, k in own if k == kind]
            if not names:
                continue
            lines += [heading, "-" * len(heading), "", ".. autosummary::", "   :toctree: generated/",
                      "   :nosignatures:", ""]
            lines += [f"   {n}" for n in names] + [""]
        if "__version__" in getattr(mod, "__all__", ()):  # a dunder name, left out by _public
            version = mod.__version__
            lines += ["Version", "-------", "", ".. py:data:: __version__", "   :type: str",
                      f"   :value: {version!r}", "",
                      f"   The version of {modname} these pages describe (``numkfs --version`` prints the "
                      f"installed one).", ""]
            index[f"{modname}.__version__"] = f"{modname}.__version__"
        if elsewhere:
            lines += ["Also exported here", "------------------", "",
                      "Documented on the page of the module listed first in the reference:", ""]
            lines += [f"* ``{modname}.{n}``: :py:obj:`{target}`" for n, target in elsewhere] + [""]
        if submodules:
            lines += ["Submodules", "----------", ""]
            lines += [f"* :ref:`api-{s}`" for s in submodules if any(s == m for m, _ in MODULES)]
            lines += [f"* ``{s}``" for s in submodules if not any(s == m for m, _ in MODULES)] + [""]
        _write(out / f"{modname}.rst", "\n".join(lines))
        pages.append(modname)
    head = "API reference"
    _write(out / "index.rst", "\n".join(
        [".. _api:", "", head, "=" * len(head), "",
         "Every name in the ``__all__`` of these modules, generated at each build.", "",
         ".. toctree::", "   :maxdepth: 1", ""] + [f"   {m}" for m in pages] + [""]))
    return index
