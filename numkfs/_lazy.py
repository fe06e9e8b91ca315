"""Lazy public names for package ``__init__`` modules (PEP 562).

``import numkfs`` must not pay for scikit-learn, Numba, SciPy's statistics,
CVXPY or Matplotlib: a package lists its public names with the submodule
that defines each, and :func:`attach` gives it the module-level
``__getattr__`` and ``__dir__`` that import that submodule on first use (as
SciPy and scikit-image do)::

    __getattr__, __dir__, __all__ = attach(__name__, {"FeaturePath": "paths"},
                                           submodules=["datasets"])

The first ``numkfs.FeaturePath`` (or ``from numkfs import FeaturePath``)
imports ``numkfs.paths`` and stores the class in the package's namespace, so
later look-ups are plain attribute reads.

A package may not use it for a name that is also the name of one of its
submodules (``numkfs.methods.knife``, the function and the module): the
import system binds a submodule to its parent's attribute whenever the
submodule is first imported, from anywhere, which would shadow the lazily
bound name.  Those packages import eagerly.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping

__all__ = ["attach"]


def attach(package: str, attributes: Mapping[str, str], submodules: Iterable[str] = (),
           defined: Iterable[str] = (), unlisted: Iterable[str] = ()
           ) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """Module ``__getattr__`` and ``__dir__`` that import public names on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    attributes : mapping of str to str
        ``{public name: submodule}``: the submodule (relative to the package,
        without the leading dot, e.g. ``"paths"`` or ``"_knife"``) whose
        attribute of the same name the public name is.
    submodules : iterable of str, optional
        Public submodules, imported on first access (``numkfs.datasets``).
    defined : iterable of str, optional
        Public names the package defines itself (``__version__``); they are
        only added to ``__all__``.
    unlisted : iterable of str, optional
        Submodules imported on first access like ``submodules`` and shown by
        ``dir()``, but not in ``__all__`` (``numkfs.model_selection``).

    Returns
    -------
    __getattr__ : callable
        The module-level ``__getattr__``; an unknown name raises
        ``AttributeError: module 'numkfs' has no attribute 'name'``.
    __dir__ : callable
        The module-level ``__dir__``: the names already loaded, every public
        name and the ``unlisted`` submodules.
    __all__ : list of str
        The public names (attributes, submodules and ``defined``), sorted.
    """
    attributes = dict(attributes)
    listed = frozenset(submodules)
    public = sorted({*attributes, *listed, *defined})
    submodules = listed | frozenset(unlisted)

    def __getattr__(name: str):
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        try:
            where = attributes[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{package}.{where}"), name)
        setattr(sys.modules[package], name, value)  # the next look-up does not come here
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(public) | submodules)

    return __getattr__, __dir__, list(public)
