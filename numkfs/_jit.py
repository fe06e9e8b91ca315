"""The one place where Numba options are set.

Every compiled function in numkfs is declared with :func:`jit` (serial) or
:func:`pjit` (``parallel=True``, use :data:`prange` for loops over samples or
features).  Both cache the machine code on disk (``cache=True``) so that a
new process loads it in a fraction of a second instead of recompiling.
jitclasses are not used anywhere: they cannot be cached.

``fastmath`` is off by default: numkfs promises results correct to the
digits.  A kernel whose reductions must vectorise may ask for the
``reassoc``/``contract`` flags only (``fast=True``), which reorder sums but
never drop NaN/inf semantics.
"""
from __future__ import annotations

import os

from numba import njit as _njit
from numba import prange

__all__ = ["jit", "pjit", "prange", "FAST_FLAGS", "NUMBA_OPTIONS"]

#: Options shared by every compiled function.
NUMBA_OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy"}

#: fastmath flags that permit re-association (vectorised reductions) and FMA
#: contraction, but keep IEEE semantics for NaN, inf and signed zeros.
FAST_FLAGS = {"reassoc", "contract"}

if os.environ.get("NUMKFS_DISABLE_CACHE"):
    NUMBA_OPTIONS["cache"] = False


def _options(parallel: bool, fast: bool, inline: bool = False) -> dict:
    opts = dict(NUMBA_OPTIONS)
    if parallel:
        opts["parallel"] = True
    if fast:
        opts["fastmath"] = FAST_FLAGS
    if inline:
        opts["inline"] = "always"
    return opts


def jit(func=None, *, fast: bool = False, inline: bool = False):
    """Compile ``func`` serially with the numkfs Numba options.

    Usable as ``@jit`` or ``@jit(fast=True)``.  ``inline=True`` inlines a
    small helper into its callers at the Numba IR level (Numba's
    ``inline="always"``): needed for helpers returning tuples, which LLVM
    does not inline, to let the caller's loop vectorise.  An inlined helper
    is compiled with its *caller's* fastmath flags.
    """
    if func is None:
        return lambda f: _njit(**_options(False, fast, inline))(f)
    return _njit(**_options(False, fast, inline))(func)


def pjit(func=None, *, fast: bool = False):
    """Compile ``func`` with ``parallel=True`` (loops written with ``prange``)."""
    if func is None:
        return lambda f: _njit(**_options(True, fast))(f)
    return _njit(**_options(True, fast))(func)
