"""``import numkfs`` is light.

Public names resolve on first use (PEP 562, :mod:`numkfs._lazy`), so
``import numkfs``, ``numkfs --version`` and ``numkfs --help`` load none of
scikit-learn, Numba, SciPy's statistics, CVXPY, Matplotlib or pandas.  Each
check runs in a fresh interpreter: in this one, other tests have already
imported everything.
"""
import importlib
import json
import pkgutil
import subprocess
import sys

import pytest

#: what ``import numkfs`` must not import
HEAVY = ("sklearn", "numba", "scipy.stats", "cvxpy", "matplotlib", "pandas")

#: the packages whose ``__all__`` is checked name by name
PACKAGES = ["numkfs", "numkfs.datasets", "numkfs.estimators", "numkfs.kernels", "numkfs.methods",
            "numkfs.solvers"]

#: prints the HEAVY modules loaded so far, as the last line of stdout
REPORT = f"""
import json as _json, sys as _sys
print(_json.dumps(sorted(m for m in {HEAVY!r} if m in _sys.modules)))
"""


def run(code, *args):
    """Run ``code`` in a fresh interpreter; return (stdout lines, stderr)."""
    out = subprocess.run([sys.executable, *args, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines(), out.stderr


def heavy_after(code):
    lines, _ = run(code + REPORT)
    return json.loads(lines[-1])


def test_import_numkfs_loads_no_heavy_module():
    assert heavy_after("import numkfs") == []


def test_import_numkfs_imports_no_numkfs_subpackage():
    lines, _ = run("import sys, numkfs\nprint(' '.join(m for m in sys.modules if m.startswith('numkfs.')))")
    loaded = {m.split(".")[1] for m in lines[-1].split()}
    assert not loaded & {"datasets", "estimators", "kernels", "methods", "solvers", "selection", "paths"}, loaded


CLI = """
import sys
sys.argv = ["numkfs", {flag!r}]
{call}
try:
    main()
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
"""

CALLS = {
    # the console script: its entry point, loaded as pip's wrapper loads it
    "numkfs": ("from importlib.metadata import entry_points\n"
               "(ep,) = entry_points(group='console_scripts', name='numkfs')\n"
               "assert ep.value == 'numkfs.cli:main', ep.value\n"
               "main = ep.load()"),
    # python -m numkfs
    "python -m numkfs": "import runpy\ndef main():\n    runpy.run_module('numkfs', run_name='__main__', alter_sys=True)",
}


@pytest.mark.parametrize("flag", ["--version", "--help"])
@pytest.mark.parametrize("how", sorted(CALLS))
def test_cli_version_and_help_load_neither_numba_nor_sklearn(how, flag):
    lines, _ = run(CLI.format(flag=flag, call=CALLS[how]) + REPORT)
    assert lines[0].startswith("numkfs 0." if flag == "--version" else "usage: numkfs")
    assert not {"numba", "sklearn"} & set(json.loads(lines[-1]))


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_python_m_numkfs_import_trace(flag):
    """``python -X importtime -m numkfs --version``, as a user runs it: no
    numba, sklearn or numpy in the trace."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "numkfs", flag], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    imported = {line.rsplit("|", 1)[1].strip() for line in out.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert "numkfs.cli" in imported
    top = {name.split(".")[0] for name in imported}
    assert not {"numba", "sklearn", "numpy", "scipy"} & top, sorted(top)


RESOLVE = """
import importlib, inspect, json
bad = []
for modname in {packages!r}:
    mod = importlib.import_module(modname)
    names = list(mod.__all__)
    if not all(isinstance(n, str) for n in names):
        bad.append(f"{{modname}}.__all__ holds a non-string")
    missing = sorted(set(names) - set(dir(mod)))
    if missing:
        bad.append(f"dir({{modname}}) lacks {{missing}}")
    for name in names:
        ns = {{}}
        exec(f"from {{modname}} import {{name}} as obj", ns)
        obj = ns["obj"]
        if obj is not getattr(mod, name):
            bad.append(f"{{modname}}.{{name}}: from-import and getattr differ")
        if inspect.ismodule(obj) and obj.__name__ != f"{{modname}}.{{name}}":
            bad.append(f"{{modname}}.{{name}} is the module {{obj.__name__}}")
print(json.dumps(bad))
"""


def test_dir_lists_all_without_loading_anything():
    assert heavy_after("import numkfs\nassert set(numkfs.__all__) <= set(dir(numkfs))") == []


def test_every_public_name_resolves_in_a_fresh_process():
    lines, _ = run(RESOLVE.format(packages=PACKAGES))
    assert json.loads(lines[-1]) == []


def test_public_names_are_the_defining_objects():
    """The lazy names are the objects themselves, and the functions that share
    a name with a submodule (numkfs.methods.knife) are the functions."""
    import numkfs
    from numkfs.estimators._knife import KNIFEClassifier
    from numkfs.methods.knife import knife
    from numkfs.paths import FeaturePath

    assert numkfs.KNIFEClassifier is numkfs.estimators.KNIFEClassifier is KNIFEClassifier
    assert numkfs.knife is numkfs.methods.knife is knife
    assert numkfs.FeaturePath is FeaturePath
    for name in ("cosso", "knife", "nmmkl"):
        assert callable(getattr(numkfs.methods, name)) and not isinstance(getattr(numkfs.methods, name), type(numkfs))
    assert callable(numkfs.solvers.cross_check)


def test_modules_reachable_after_import_numkfs():
    """``import numkfs`` then ``numkfs.model_selection...`` works as before."""
    lines, _ = run("import numkfs\n"
                   "print(numkfs.model_selection.make_cv.__name__, numkfs.paths.FeaturePath.__name__, "
                   "numkfs.datasets.dataset_names()[0])")
    assert lines[-1] == "make_cv FeaturePath arcene"


def test_lazy_names_do_not_collide_with_submodules():
    """A lazily bound name that is also a submodule would be replaced by the
    module whenever that submodule is first imported (numkfs._lazy)."""
    clashes = []
    for modname in PACKAGES:
        mod = importlib.import_module(modname)
        if getattr(getattr(mod, "__getattr__", None), "__module__", None) != "numkfs._lazy":
            continue  # imports eagerly: a clash is harmless there
        subs = {m.name for m in pkgutil.iter_modules(mod.__path__)}
        for name in mod.__all__:
            obj = getattr(mod, name)
            if name in subs and getattr(obj, "__name__", None) != f"{modname}.{name}":
                clashes.append(f"{modname}.{name}")
    assert not clashes


@pytest.mark.parametrize("modname", ["numkfs", "numkfs.datasets", "numkfs.estimators"])
def test_typo_is_an_attribute_error_and_imports_nothing(modname):
    code = (f"import {modname} as m\n"
            "try:\n    m.nonexistent\nexcept AttributeError as exc:\n    print(exc)\n"
            "else:\n    raise SystemExit('no AttributeError')\n"
            "assert not hasattr(m, 'nonexistent')\n")
    lines, _ = run(code + REPORT)
    assert lines[0] == f"module {modname!r} has no attribute 'nonexistent'"
    assert json.loads(lines[-1]) == []


def test_typo_from_import_is_an_import_error():
    with pytest.raises(ImportError, match="cannot import name 'nonexistent' from 'numkfs'"):
        exec("from numkfs import nonexistent", {})


def test_no_module_compiles_with_a_warning():
    """A ``SyntaxWarning`` (an invalid escape such as ``\\S`` in a docstring that
    is not raw) reaches the user at the first import, before any ``.pyc``
    exists; every module of the package, the tests and the benchmarks compiles
    without one."""
    import pathlib
    import warnings

    root = pathlib.Path(__file__).resolve().parents[1]
    files = [*(root / "numkfs").rglob("*.py"), *(root / "tests").rglob("*.py"), *(root / "benchmarks").rglob("*.py")]
    found = []
    for path in files:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        found += [f"{path.relative_to(root)}:{w.lineno}: {w.message}" for w in caught]
    assert not found, found
    with warnings.catch_warnings(record=True) as caught:  # the check can fail
        warnings.simplefilter("always")
        compile('def f():\n    """a \\S b"""\n', "probe.py", "exec")
    assert caught
