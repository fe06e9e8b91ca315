"""The one place where Numba options are set.

Every compiled function in numkfs is declared with :func:`jit` (serial) or
:func:`pjit` (``parallel=True``, use :data:`prange` for loops over samples or
features).  Both cache the machine code on disk so that a new process loads
it in a fraction of a second instead of recompiling.  jitclasses are not used
anywhere: they cannot be cached.

Where the cache lives
---------------------
Never next to the source: Numba's default puts ``.nbi``/``.nbc`` files in
``numkfs/**/__pycache__``, and an install that is later uninstalled (``pip
uninstall`` removes only the files it installed) leaves those folders behind
as an empty namespace package ``numkfs`` that hides any other install.  The
cache directory is, first match wins:

1. ``NUMBA_CACHE_DIR`` when the user set it (Numba's own rule);
2. ``<user cache dir>/numkfs/<version>/`` (``~/.cache/numkfs/0.1.0`` on
   Linux, ``XDG_CACHE_HOME`` honoured; ``~/Library/Caches`` on macOS;
   ``%LOCALAPPDATA%`` on Windows);
3. ``<temp dir>/numkfs-cache-<user>/<version>/`` when 2 is not writable;
4. no cache at all (compile in every process) when neither is writable.

Inside it, each source folder gets its own subfolder named after the folder
and a hash of its absolute path (Numba's rule), so two checkouts or installs
of numkfs never share cache files.  An edited source file invalidates its
entries (Numba checks a stamp of the file), and so does an edit of any other
numkfs file that holds compiled code (:func:`_compiled_sources_stamp`):
a compiled function carries the machine code of the compiled functions it
calls, which may live in other files that Numba's stamp does not see.  ``NUMKFS_DISABLE_CACHE=1`` turns
caching off; :func:`cache_dir` tells where the cache of this installation is.

Processes that share the cache (pytest-xdist's workers, joblib's process
workers) compile a function one at a time: a process that does not find a
signature in the cache takes a lock file of the function
(``<function's index>.lock``, next to its index) before it compiles, and a
process that waited for the lock looks in the cache again, so it loads what
the other one compiled instead of compiling it a second time.  The lock also
keeps two processes that compile two signatures of one function from
writing its index at once (the last writer dropped the other's entry).  A
process waits at most :data:`COMPILE_LOCK_TIMEOUT` seconds, then compiles
anyway; without ``fcntl`` (Windows) processes compile independently.

Compile time
------------
Every function compiles lazily, at its first call, for the argument types
of that call: no signature is given in advance and nothing compiles at
import.  ``parallel=True`` compiles two to five times slower than the same
loops serially (and the parallel form runs slower than the serial one on
one thread), so a row-parallel kernel that small problems also call has a
serial twin (:func:`serial_twin`) and its caller picks one with
:func:`numkfs._threads.parallel_or_serial`: a first fit on a few hundred
rows never compiles the parallel form.  Inside compiled code, small dense
products and solves are written as loops rather than ``@`` or
``np.linalg.solve``, whose Numba implementations take seconds to compile
(``benchmarks/startup.py`` measures the compile time of each function the
first fits compile).

``fastmath`` is off by default: numkfs promises results correct to the
digits.  A kernel whose reductions must vectorise may ask for the
``reassoc``/``contract`` flags only (``fast=True``), which reorder sums but
never drop NaN/inf semantics.
"""
from __future__ import annotations

import contextlib
import functools
import getpass
import hashlib
import os
import sys
import tempfile
import time
import types

from numba import config as _numba_config
from numba import njit as _njit
from numba import prange
from numba.core import caching as _caching
from numba.core import sigutils as _sigutils
from numba.core.compiler_lock import global_compiler_lock as _global_compiler_lock

try:
    import fcntl as _fcntl
except ImportError:  # Windows
    _fcntl = None

__all__ = ["jit", "pjit", "serial_twin", "prange", "cache_dir", "FAST_FLAGS", "NUMBA_OPTIONS", "COMPILE_LOCK_TIMEOUT"]

#: Options shared by every compiled function (``cache`` is handled by
#: :func:`_enable_cache`, not passed to Numba, so that the cache location is
#: numkfs's own).
NUMBA_OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy"}

#: fastmath flags that permit re-association (vectorised reductions) and FMA
#: contraction, but keep IEEE semantics for NaN, inf and signed zeros.
FAST_FLAGS = {"reassoc", "contract"}

# Numba's OpenMP threading layer (GNU libgomp) spin-waits between parallel
# regions by default: on a busy machine the spinning threads take the cores
# the caller needs, and a small fit next to other busy processes takes many
# times longer than its work.  libgomp reads this when Numba first
# loads it, at the first parallel call, which comes after this import; a
# value the user set is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

if os.environ.get("NUMKFS_DISABLE_CACHE"):
    NUMBA_OPTIONS["cache"] = False

# Numba >= 0.60 names the locators without the leading underscore.
_UserProvidedLocator = getattr(_caching, "UserProvidedCacheLocator", None) or getattr(
    _caching, "_UserProvidedCacheLocator"
)


def _version() -> str:
    try:
        from . import __version__
    except ImportError:  # pragma: no cover - numkfs always defines it
        return "unknown"
    return str(__version__)


def _user_cache_root() -> str:
    """The platform's per-user cache directory for numkfs (not created)."""
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or os.path.join(
            os.path.expanduser("~"), "AppData", "Local"
        )
        return os.path.join(base, "numkfs", "Cache")
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Caches"), "numkfs")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "numkfs")


def _temp_cache_root() -> str:
    try:
        user = getpass.getuser()
    except Exception:  # no user name (some containers): fall back to the uid
        user = str(getattr(os, "getuid", lambda: "user")())
    return os.path.join(tempfile.gettempdir(), f"numkfs-cache-{user}")


@functools.lru_cache(maxsize=1)
def _compiled_sources_stamp() -> str:
    """A digest of the contents of every numkfs source file that holds compiled code (imports from
    ``_jit``), read once per process.  Part of every cache entry's source stamp: without it an edit
    of a callee's file (``kernels/fgt.py``) left its callers' cached machine code, compiled with
    the old callee, in use."""
    root = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha1()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            try:
                with open(path, "rb") as f:
                    text = f.read()
            except OSError:
                continue
            if b"_jit import" in text:
                digest.update(os.path.relpath(path, root).encode() + b"\0" + hashlib.sha1(text).digest())
    return digest.hexdigest()


class _PackageStamp:
    """Locator mixin: Numba's stamp of the function's file and :func:`_compiled_sources_stamp`."""

    def get_source_stamp(self):
        return super().get_source_stamp(), _compiled_sources_stamp()


class _EnvDirLocator(_PackageStamp, _UserProvidedLocator):
    """``NUMBA_CACHE_DIR``, as Numba's own locator, with numkfs's source stamp."""


class _UserCacheLocator(_PackageStamp, _UserProvidedLocator):
    """Cache in ``<user cache dir>/numkfs/<version>/<folder>_<hash of path>``.

    Numba's source stamp (a hash of the file), :func:`_compiled_sources_stamp`
    and the Numba version in the index invalidate stale entries; the hash of
    the source folder's absolute path keeps two checkouts apart.
    """

    @staticmethod
    def _root() -> str:
        return os.path.join(_user_cache_root(), _version())

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._cache_path = os.path.join(self._root(), self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        # Skip _UserProvidedLocator.from_function (it returns None unless
        # NUMBA_CACHE_DIR is set): go straight to the source-file mixin, which
        # returns None when the directory cannot be created or written.
        return super(_UserProvidedLocator, cls).from_function(py_func, py_file)


class _TempCacheLocator(_UserCacheLocator):
    """Fallback when the user cache directory is not writable."""

    @staticmethod
    def _root() -> str:
        return os.path.join(_temp_cache_root(), _version())


class _CacheImpl(_caching.CompileResultCacheImpl):
    # NUMBA_CACHE_DIR first (the user's explicit choice), then ours; never
    # Numba's in-tree __pycache__ locator.  NUMBA_CACHE_LOCATOR_CLASSES, where
    # Numba supports it, still overrides this list.
    _locator_classes = [_EnvDirLocator, _UserCacheLocator, _TempCacheLocator]


class _FunctionCache(_caching.FunctionCache):
    _impl_class = _CacheImpl


#: Seconds a process waits for another process's compilation of a function
#: before it compiles the function itself.
COMPILE_LOCK_TIMEOUT = 300.0

#: lock file -> [descriptor, depth] of the compile locks this process holds;
#: read and written under Numba's compiler lock only
_held_locks: dict = {}


@contextlib.contextmanager
def _compile_lock(path: str):
    """Hold the lock file ``path`` (``flock``, exclusive) for the block; re-entrant within a process.

    Waits for another process that holds it, at most :data:`COMPILE_LOCK_TIMEOUT` seconds; a
    lock file that cannot be opened or locked (or no ``fcntl``) leaves the block unlocked.  The
    caller holds Numba's compiler lock, which orders this process's threads."""
    entry = _held_locks.get(path)
    if entry is not None:
        entry[1] += 1
        try:
            yield
        finally:
            entry[1] -= 1
        return
    fd = None
    if _fcntl is not None:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            pass
    locked = False
    if fd is not None:
        deadline = time.monotonic() + COMPILE_LOCK_TIMEOUT
        while True:
            try:
                _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
                locked = True
                break
            except BlockingIOError:  # another process compiles the function
                if time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            except OSError:  # a file system without locks
                break
    _held_locks[path] = [fd, 1]
    try:
        yield
    finally:
        del _held_locks[path]
        if fd is not None:
            if locked:
                _fcntl.flock(fd, _fcntl.LOCK_UN)
            os.close(fd)


def _compile_lock_path(disp) -> str:
    """The lock file of a cached dispatcher's function: next to its index in the cache."""
    cache = disp._cache
    return os.path.join(cache._cache_path, cache._cache_file._index_name + ".lock")


def _serialise_compiles(disp):
    """Make ``disp`` compile a signature it does not hold under the function's lock file
    (:func:`_compile_lock`): Numba's ``compile`` looks in the disk cache first, so a process that
    waited for another one's compilation loads its result."""
    numba_compile = disp.compile
    path = _compile_lock_path(disp)

    def compile(sig):
        args, _ = _sigutils.normalize_signature(sig)
        if tuple(args) in disp.overloads:  # compiled or loaded in this process: no lock
            return numba_compile(sig)
        with _global_compiler_lock, _compile_lock(path):
            return numba_compile(sig)

    compile.__doc__ = numba_compile.__doc__
    disp.compile = compile


def _enable_cache(disp):
    """Attach numkfs's cache to a dispatcher (what ``cache=True`` does, with
    numkfs's locators), its compilations serialised across processes
    (:func:`_serialise_compiles`).  Without a writable location the function
    compiles in every process, as with ``cache=False``."""
    if not NUMBA_OPTIONS["cache"] or not hasattr(disp, "enable_caching"):
        return disp  # caching off, or NUMBA_DISABLE_JIT returned the Python function
    try:
        disp._cache = _FunctionCache(disp.py_func)
    except RuntimeError:  # "no locator available": nowhere writable
        return disp
    if _fcntl is not None:
        _serialise_compiles(disp)
    return disp


def cache_dir() -> str | None:
    """The directory that holds this installation's compiled kernels.

    Returns
    -------
    str or None
        ``NUMBA_CACHE_DIR`` when set, else the numkfs folder of the user
        cache (or of the temp directory when that is not writable); ``None``
        when caching is disabled or nothing is writable.  Each source folder
        of numkfs has a subfolder inside it.
    """
    if not NUMBA_OPTIONS["cache"]:
        return None
    if _numba_config.CACHE_DIR:
        return str(_numba_config.CACHE_DIR)
    for root in (_UserCacheLocator._root(), _TempCacheLocator._root()):
        try:
            os.makedirs(root, exist_ok=True)
            tempfile.TemporaryFile(dir=root).close()
        except OSError:
            continue
        return root
    return None


def _options(parallel: bool, fast: bool, inline: bool = False) -> dict:
    opts = dict(NUMBA_OPTIONS)
    opts["cache"] = False  # numkfs attaches its own cache: see _enable_cache
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
        return lambda f: _enable_cache(_njit(**_options(False, fast, inline))(f))
    return _enable_cache(_njit(**_options(False, fast, inline))(func))


def pjit(func=None, *, fast: bool = False):
    """Compile ``func`` with ``parallel=True`` (loops written with ``prange``)."""
    if func is None:
        return lambda f: _enable_cache(_njit(**_options(True, fast))(f))
    return _enable_cache(_njit(**_options(True, fast))(func))


def serial_twin(disp, *, fast: bool = False):
    """A serial (``parallel=False``) copy of the :func:`pjit` function ``disp``.

    Its ``prange`` loops run as plain ``range``.  It compiles several times
    faster than the parallel form and runs faster on one thread; callers
    choose between the two with :func:`numkfs._threads.parallel_or_serial`.
    The copy has its own name (``<name>_serial``), hence its own cache
    entries: Numba names cache files after the function, so two
    dispatchers of one Python function would overwrite each other's index.
    ``fast`` must repeat the flag of the parallel form.
    """
    f = disp.py_func
    twin = types.FunctionType(f.__code__, f.__globals__, f.__name__ + "_serial", f.__defaults__, f.__closure__)
    twin.__qualname__ = f.__qualname__ + "_serial"
    twin.__module__ = f.__module__
    twin.__doc__ = f.__doc__
    twin.__kwdefaults__ = f.__kwdefaults__
    return jit(twin, fast=fast)
