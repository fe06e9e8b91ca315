"""Where numkfs caches compiled kernels.

Numba's default cache sits in ``numkfs/**/__pycache__``: after ``pip install
.`` and a later ``pip uninstall`` those folders stay behind as an empty
namespace package that hides the next install.  numkfs caches in a per-user
directory instead.  These tests run small copies of the package (the real
``numkfs/_jit.py`` next to a tiny kernel module) in fresh processes.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import numkfs
from numkfs import _jit

JIT_SRC = Path(_jit.__file__)

KERNEL = '''
from ._jit import pjit, prange

@pjit
def total(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i]
    return s
'''

PROBE = '''
import json, numpy as np
import numkfs._jit as j, numkfs.k as k
v = k.total(np.arange(10.0))
cache = k.total._cache
print(json.dumps({"value": v, "hits": sum(k.total.stats.cache_hits.values()),
                  "misses": sum(k.total.stats.cache_misses.values()),
                  "cache_dir": j.cache_dir(),
                  "cache_path": getattr(cache, "cache_path", None)}))
'''


def _checkout(root: Path, name: str) -> Path:
    pkg = root / name / "numkfs"
    pkg.mkdir(parents=True)
    shutil.copy(JIT_SRC, pkg / "_jit.py")
    (pkg / "__init__.py").write_text('__version__ = "9.9.9"\n')
    (pkg / "k.py").write_text(KERNEL)
    return pkg.parent


def _run(checkout: Path, **env) -> dict:
    import json

    e = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE", "NUMKFS_"))}
    e.update(PYTHONPATH=str(checkout), PYTHONDONTWRITEBYTECODE="1", **env)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=checkout, env=e, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["value"] == 45.0
    return res


def _nb_files(path: Path) -> list:
    return sorted(p.name for p in path.rglob("*") if p.suffix in (".nbi", ".nbc"))


def test_cache_is_per_user_loaded_by_a_second_process_and_per_checkout(tmp_path):
    xdg = tmp_path / "xdg"
    a, b = _checkout(tmp_path, "a"), _checkout(tmp_path, "b")
    first = _run(a, XDG_CACHE_HOME=str(xdg))
    second = _run(a, XDG_CACHE_HOME=str(xdg))
    assert (first["misses"], first["hits"]) == (1, 0)
    assert (second["misses"], second["hits"]) == (0, 1)  # loaded, not recompiled
    root = xdg / "numkfs" / "9.9.9"
    assert first["cache_dir"] == str(root)
    assert Path(first["cache_path"]).parent == root
    # nothing written next to the source: no __pycache__ left for pip uninstall to miss
    assert _nb_files(a) == [] and not list(a.rglob("__pycache__"))
    # a second checkout of the same version compiles into its own folder
    other = _run(b, XDG_CACHE_HOME=str(xdg))
    assert (other["misses"], other["hits"]) == (1, 0)
    assert other["cache_path"] != first["cache_path"]
    assert len([p for p in root.iterdir() if _nb_files(p)]) == 2


def test_numba_cache_dir_is_honoured(tmp_path):
    a = _checkout(tmp_path, "a")
    user = tmp_path / "numba_cache"
    res = _run(a, XDG_CACHE_HOME=str(tmp_path / "xdg"), NUMBA_CACHE_DIR=str(user))
    assert res["cache_dir"] == str(user)
    assert Path(res["cache_path"]).parent == user and _nb_files(user)
    assert not (tmp_path / "xdg").exists() and _nb_files(a) == []


def test_unwritable_cache_falls_back_to_temp_then_to_no_cache(tmp_path):
    a = _checkout(tmp_path, "a")
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the cache directory would go")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    res = _run(a, XDG_CACHE_HOME=str(blocker), TMPDIR=str(tmp))
    assert Path(res["cache_path"]).is_relative_to(tmp) and _nb_files(tmp)
    assert _run(a, XDG_CACHE_HOME=str(blocker), TMPDIR=str(tmp))["hits"] == 1
    assert _nb_files(a) == []


def test_nowhere_writable_compiles_without_cache(tmp_path, monkeypatch):
    import numpy as np
    from numba import config
    from numba.core.caching import NullCache

    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the cache directories would go")
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setattr(_jit, "_user_cache_root", lambda: str(blocker / "user"))
    monkeypatch.setattr(_jit, "_temp_cache_root", lambda: str(blocker / "tmp"))
    assert _jit.cache_dir() is None

    @_jit.jit
    def twice(x):
        return 2.0 * x

    assert isinstance(twice._cache, NullCache)
    assert twice(np.ones(3)).sum() == 6.0


def test_every_numkfs_kernel_uses_the_numkfs_cache():
    """No compiled function bypasses _jit (e.g. a bare ``njit(cache=True)``)."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    pkg_dir = Path(numkfs.__file__).parent
    found = 0
    for mod in pkgutil.walk_packages(numkfs.__path__, "numkfs."):
        if mod.name in ("numkfs.__main__",):
            continue
        try:
            m = importlib.import_module(mod.name)
        except ImportError:  # optional dependency (dask) not installed
            continue
        for obj in vars(m).values():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == m.__name__:
                found += 1
                assert isinstance(obj._cache, _jit._FunctionCache), obj
                assert not Path(obj._cache.cache_path).is_relative_to(pkg_dir), obj
    assert found > 20


@pytest.mark.skipif(not os.environ.get("NUMKFS_DISABLE_CACHE") is None, reason="cache disabled")
def test_cache_dir_of_this_installation_is_outside_the_package():
    d = _jit.cache_dir()
    assert d is not None
    assert not Path(d).resolve().is_relative_to(Path(numkfs.__file__).parent.resolve())


HELPER = '''
from ._jit import jit

@jit
def scale(x):
    return {factor} * x
'''

CALLER = '''
from ._jit import jit
from .h import scale

@jit
def scaled_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += scale(x[i])
    return s
'''

PROBE_CALLER = '''
import json, numpy as np
import numkfs.k2 as k
v = k.scaled_sum(np.arange(10.0))
print(json.dumps({"value": v, "hits": sum(k.scaled_sum.stats.cache_hits.values()),
                  "misses": sum(k.scaled_sum.stats.cache_misses.values())}))
'''


@pytest.mark.parametrize("where", ["user", "numba_cache_dir"])
def test_an_edited_callee_in_another_file_invalidates_its_callers_cache(tmp_path, where):
    """A compiled function carries its callees' machine code: ``k2.scaled_sum`` calls ``h.scale``
    from another file, whose edit Numba's own stamp (of ``k2.py`` alone) does not see.  Before the
    package stamp the second process loaded the stale code and returned 45, not 90."""
    import json

    root = _checkout(tmp_path, "a")
    pkg = root / "numkfs"
    (pkg / "h.py").write_text(HELPER.format(factor="1.0"))
    (pkg / "k2.py").write_text(CALLER)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE", "NUMKFS_"))}
    env.update(PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    if where == "numba_cache_dir":
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba_cache")

    def run():
        out = subprocess.run([sys.executable, "-c", PROBE_CALLER], cwd=root, env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    first, again = run(), run()
    assert (first["value"], first["misses"], first["hits"]) == (45.0, 1, 0)
    assert (again["value"], again["misses"], again["hits"]) == (45.0, 0, 1)  # unchanged sources: loaded
    (pkg / "h.py").write_text(HELPER.format(factor="2.0"))  # only the callee's file changes
    edited = run()
    assert (edited["value"], edited["misses"], edited["hits"]) == (90.0, 1, 0)


HOLDER = '''
import sys, time, numpy as np
import numkfs._jit as j, numkfs.k as k
with j._global_compiler_lock, j._compile_lock(j._compile_lock_path(k.total)):
    print("locked", flush=True)
    time.sleep(3.0)  # the other process starts meanwhile, and finds no compiled code in the cache
    k.total(np.arange(10.0))
'''


@pytest.mark.skipif(_jit._fcntl is None, reason="compilations are serialised with fcntl's flock")
def test_a_process_waits_for_another_ones_compilation_and_loads_it(tmp_path):
    """Two processes on one empty cache (pytest-xdist's workers): the one that finds another compiling
    a function waits for it and loads its code from the cache instead of compiling it again (a
    compilation per worker before)."""
    a = _checkout(tmp_path, "a")
    e = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE", "NUMKFS_"))}
    e.update(PYTHONPATH=str(a), PYTHONDONTWRITEBYTECODE="1", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], cwd=a, env=e, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        waiter = _run(a, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    finally:
        assert holder.wait(timeout=120) == 0
    assert (waiter["misses"], waiter["hits"]) == (0, 1)
