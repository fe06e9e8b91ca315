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


def _options(parallel: bool, fast: bool) -> dict:
    opts = dict(NUMBA_OPTIONS)
    if parallel:
        opts["parallel"] = True
    if fast:
        opts["fastmath"] = FAST_FLAGS
    return opts


def jit(func=None, *, fast: bool = False):
    """Compile ``func`` serially with the numkfs Numba options.

    Usable as ``@jit`` or ``@jit(fast=True)``.
    """
    if func is None:
        return lambda f: _njit(**_options(False, fast))(f)
    return _njit(**_options(False, fast))(func)


def pjit(func=None, *, fast: bool = False):
    """Compile ``func`` with ``parallel=True`` (loops written with ``prange``)."""
    if func is None:
        return lambda f: _njit(**_options(True, fast))(f)
    return _njit(**_options(True, fast))(func)
