"""The layers hold: what each package may import, and who may print.

``kernels/`` sits below everything but ``_jit``, ``_threads`` and
``_validation``; ``solvers/`` never imports a method and its registry names
no native module (each native module registers its solver and self-check);
nothing in ``methods/``, ``solvers/`` or ``kernels/`` prints or draws a bar
(verbose messages go through :mod:`numkfs._progress`); no method
cross-validates or fits an SVM, and estimators use the methods' public names
only.

Besides: every ``*CV`` estimator fits
through :class:`numkfs.estimators._cv.PathCVMixin` over its method's public
path function (declaring hooks, never overriding its loop, whose rule
chooses once per path on the final scores), and only they take ``cv``; one vocabulary (``grid``,
``n_grid``, ``lambda1``, ``gamma`` with a bandwidth kernel, ``C`` only as an
SVM box constraint; no development-era name: 0.1.0 is the first
release); every public estimator takes at most its main hyperparameter
positionally, the rest keyword-only, and defaults ``random_state`` to None, as
scikit-learn's do; every estimator of the registry (``tests/conftest.py``) is
checked against scikit-learn's contract; ``tests/`` mirrors ``numkfs/``
(each test file is named after a module or package, or is one of a few named
contracts).  The source-parsing checks are shown to fail on a probe.

``import numkfs`` is light: public names resolve on first use (PEP 562,
:mod:`numkfs._lazy`), so ``import numkfs``, ``numkfs --version`` and ``numkfs
--help`` load none of scikit-learn, Numba, SciPy's statistics, CVXPY,
Matplotlib or pandas.  Each check runs in a fresh interpreter: in this one,
other tests have already imported everything.

numkfs's imports form layers without circles.  Every module of ``numkfs/``
is parsed (not imported): its imports of numkfs modules at module level *and*
inside functions and methods make the edges of a graph.  The graph has no cycle, and no module imports one of a higher
layer than its own (:data:`LAYERS`, bottom first).  What counts as importing
a module:

* ``import numkfs.a.b`` and ``from numkfs.a import b`` where ``b`` is a
  submodule import ``numkfs.a.b``; ``from numkfs.a import name`` imports
  ``numkfs.a`` (relative imports resolved);
* importing ``numkfs.a.b`` from outside ``numkfs.a`` runs ``numkfs/a/__init__``
  first: it imports ``numkfs.a`` too (a package's ``__init__`` importing its
  own children is no circle; a child importing its parent's re-exports is);
* ``from numkfs.a import name`` where ``numkfs.a`` loads ``name`` on first use
  (:func:`numkfs._lazy.attach`) imports the submodule that defines ``name``.

The scripts beside the package (``benchmarks/``, ``tests/``, ``tools/``)
import each other by their file names (each runs with its own folder first on
``sys.path``, and some put another folder there too): their graph has no
cycle either.

The checks are shown to fail on a probe.
"""
import ast
import importlib
import json
import pathlib
import pkgutil
import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import methods, names

import numkfs

ROOT = pathlib.Path(numkfs.__file__).parent


def _modules(package):
    return sorted((ROOT / package).rglob("*.py"))


def _imports(path, source=None):
    """Absolute dotted names of everything ``path`` imports (relative imports
    resolved); ``source``: its text, if not read from the file."""
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    else:
        parts = parts[:-1]  # the package the module is in
    out = []
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = parts[: len(parts) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            out.append(mod)
            out += [f"{mod}.{a.name}" for a in node.names]
    return out


@pytest.mark.parametrize("path", _modules("kernels"), ids=lambda p: p.name)
def test_kernels_import_nothing_above_them(path):
    allowed = ("numkfs.kernels", "numkfs._jit", "numkfs._threads", "numkfs._constraints", "numkfs._validation",
               "numkfs._targets")
    bad = [m for m in _imports(path) if m.startswith("numkfs") and not m.startswith(allowed)]
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", _modules("solvers"), ids=lambda p: p.name)
def test_solvers_import_no_method_or_estimator(path):
    bad = [m for m in _imports(path)
           if m.startswith(("numkfs.methods", "numkfs.estimators", "numkfs.model_selection", "numkfs.selection"))]
    assert not bad, f"{path.name} imports {bad}"


def test_registry_names_no_native_module():
    bad = [m for m in _imports(ROOT / "solvers" / "registry.py") if m.startswith("numkfs.solvers.native")]
    assert not bad, bad


def test_every_native_solver_has_a_self_check_that_passes():
    from numkfs import solvers
    from numkfs.solvers.registry import NATIVE_CHECKS

    assert set(NATIVE_CHECKS) == set(solvers.native_solvers())
    rows = {r["name"]: r for r in solvers.available_solvers() if r["name"].startswith("native:")}
    assert rows and all(r["works"] for r in rows.values()), {k: r["error"] for k, r in rows.items()}


def _calls_print_or_tqdm(path):
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"print at line {node.lineno}")
        if (isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr")
                and isinstance(node.value, ast.Name) and node.value.id == "sys"):
            found.append(f"sys.{node.attr} at line {node.lineno}")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [getattr(node, "module", None) or ""] + [a.name for a in node.names]
            if any(n.split(".")[0] == "tqdm" for n in names):
                found.append(f"tqdm import at line {node.lineno}")
    return found


@pytest.mark.parametrize("path", [*_modules("methods"), *_modules("solvers"), *_modules("kernels")],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_nothing_below_the_estimators_prints(path):
    assert not _calls_print_or_tqdm(path), f"{path.name}: {_calls_print_or_tqdm(path)}"


def test_the_print_check_can_fail(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import sys\nfrom tqdm.auto import tqdm\nprint('x')\nsys.stderr.write('y')\n")
    assert len(_calls_print_or_tqdm(probe)) == 3, _calls_print_or_tqdm(probe)


def test_verbose_messages_go_to_the_reporter():
    from numkfs._progress import reporting_to
    from numkfs.solvers.native.nmmkl import solve_nmmkl

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((20, 6))  # 20 samples, 6 linear features
    y = np.where(rng.standard_normal(20) > 0, 1.0, -1.0)
    heard = []
    with reporting_to(lambda source, message: heard.append((source, message))):
        out = solve_nmmkl(Z, y, 2, 1.0, 1.0, verbose=True)
    assert heard and all(source == "nmmkl" for source, _ in heard)
    assert len(heard) == out["rounds"]  # one message per working-set round
    quiet = []
    with reporting_to(lambda source, message: quiet.append(message)):
        solve_nmmkl(Z, y, 2, 1.0, 1.0, verbose=False)
    assert quiet == []


#: what a method module may not import: the cross-validation of the selection
#: contract, scikit-learn's folds and SVMs, the estimators (fold logic lives in
#: the estimators' hooks)
CV_NAMES_FOR_ESTIMATORS = ("cross_val_path", "make_cv", "check_folds", "fold_data", "record_cv", "choose_index",
                           "path_scores", "check_scoring")
CV_MODULES = ("sklearn.svm", "sklearn.model_selection", "numkfs.estimators", "numkfs.selection")


def _cross_validates(path, source=None):
    found = []
    for m in _imports(path, source):
        if m.startswith(CV_MODULES) or (m.startswith("numkfs.model_selection.")
                                        and m.rsplit(".", 1)[1] in CV_NAMES_FOR_ESTIMATORS):
            found.append(m)
    return found


@pytest.mark.parametrize("path", _modules("methods"), ids=lambda p: str(p.relative_to(ROOT / "methods")))
def test_methods_neither_cross_validate_nor_fit_an_svm(path):
    bad = _cross_validates(path)
    assert not bad, f"methods/{path.relative_to(ROOT / 'methods')} imports {bad}"


def test_the_cross_validation_check_can_fail():
    src = "from ..model_selection import cross_val_path, refine_walk\ndef f():\n    from sklearn.svm import SVC\n"
    found = _cross_validates(ROOT / "methods" / "probe.py", source=src)
    assert found == ["numkfs.model_selection.cross_val_path", "sklearn.svm", "sklearn.svm.SVC"], found


# --------------------------------------------------------------------------
# estimators use the methods' public functions only


def _private_method_imports(path, source=None):
    """Private names (or private modules) of ``numkfs.methods`` that ``path``
    imports, and private attributes it reads from a methods module it imported."""
    rel = path.relative_to(ROOT.parent).with_suffix("")
    package = list(rel.parts[:-1])
    tree = ast.parse(path.read_text() if source is None else source)
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else (node.module or "")
            if not (mod == "numkfs.methods" or mod.startswith("numkfs.methods.")):
                continue
            if any(part.startswith("_") for part in mod.split(".")):
                found.append(f"line {node.lineno}: from {mod} import ...")
            for a in node.names:
                if a.name.startswith("_"):
                    found.append(f"line {node.lineno}: {a.name} from {mod}")
                else:  # maybe a module: remember its local name
                    aliases[a.asname or a.name] = f"{mod}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("numkfs.methods"):
                    if any(part.startswith("_") for part in a.name.split(".")):
                        found.append(f"line {node.lineno}: import {a.name}")
                    if a.asname:
                        aliases[a.asname] = a.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            found.append(f"line {node.lineno}: {aliases[node.value.id]}.{node.attr}")
    return found


@pytest.mark.parametrize("path", _modules("estimators"), ids=lambda p: p.name)
def test_estimators_use_only_public_names_of_the_methods(path):
    bad = _private_method_imports(path)
    assert not bad, f"estimators/{path.name} uses private names of numkfs.methods: {bad}"


def test_the_private_import_check_can_fail():
    """The check above sees a private name, a private module and a private attribute."""
    src = ("from ..methods.l1kr import _predict_one, l1kr_path\n"
           "from ..methods.knife._core import knife_path\n"
           "from ..model_selection import _sparsity_order\n"  # not a method: allowed here
           "def f():\n    from ..methods import lpkta as m\n    return m._THRESHOLD, m.lpkta_path\n")
    found = _private_method_imports(ROOT / "estimators" / "_probe.py", source=src)
    assert len(found) == 3, found


# --------------------------------------------------------------------------
# a private name stays in its package; modules split where the ideas split


def _owner(parts):
    """The package a private name ``parts`` (its dotted path, the private part last) belongs to: the
    package it is defined in (a module's private name belongs to the module's package)."""
    owner = parts[:-1]
    if not (ROOT.parent.joinpath(*owner) / "__init__.py").exists():
        owner = owner[:-1]  # the name is an attribute of a module: the module's package owns it
    return owner


def _private_cross_package_imports(path, source=None):
    """The ``_``-prefixed modules and names of numkfs that ``path`` imports from a
    package it is not inside (``numkfs._x`` belongs to all of numkfs,
    ``numkfs.kernels._x`` to ``numkfs.kernels`` and its subpackages)."""
    rel = path.relative_to(ROOT.parent).with_suffix("")
    package = list(rel.parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.Import):
            targets = [a.name.split(".") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            mod = base + (node.module.split(".") if node.module else [])
            targets = [mod + [a.name] for a in node.names]
        else:
            continue
        for parts in targets:
            if parts[0] != "numkfs":
                continue
            private = [i for i, p in enumerate(parts) if p.startswith("_") and not p.startswith("__")]
            if private:
                owner = _owner(parts[: private[0] + 1])
                if package[: len(owner)] != owner:
                    found.append(f"line {node.lineno}: {'.'.join(parts)}")
    return found


@pytest.mark.parametrize("path", _modules(""), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_name_is_imported_across_packages(path):
    bad = _private_cross_package_imports(path)
    assert not bad, f"{path.relative_to(ROOT)} imports private names of another package (give them a public " \
                    f"name in their module, or move them to the layer that owns them): {bad}"


def test_the_cross_package_check_can_fail():
    """It sees a private name, a private module and an import of one, and lets a package use its own
    private modules and the package root's."""
    src = ("from .kernels.alignment import _check_method, feature_alignments\n"
           "from .estimators._lpkta import LpKTASelector\n"
           "def f():\n    import numkfs.kernels._hsic_fgt\n"
           "from ._ties import warn_ties\nfrom . import _validation\n")
    assert len(_private_cross_package_imports(ROOT / "_probe.py", source=src)) == 3
    inside = "from ..._validation import check_X\nfrom ._bregman import _bregman\nfrom .. import _registry\n"
    assert _private_cross_package_imports(ROOT / "methods" / "lpkta" / "_probe.py", source=inside) == []
    sibling = "from ..knife._problem import _is_solver\n"
    assert len(_private_cross_package_imports(ROOT / "methods" / "lpkta" / "_probe.py", source=sibling)) == 1


#: The most public functions and classes a module defines: past it, a module holds several ideas.
MAX_PUBLIC_DEFINITIONS = 15


def _public_definitions(source):
    """The functions and classes a module defines at its top level without a leading underscore."""
    return [node.name for node in ast.parse(source).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not node.name.startswith("_")]


@pytest.mark.parametrize("path", _modules(""), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_defines_more_than_fifteen_public_names(path):
    names = _public_definitions(path.read_text())
    assert len(names) <= MAX_PUBLIC_DEFINITIONS, \
        f"{path.relative_to(ROOT)} defines {len(names)} public functions and classes; split it where its " \
        f"ideas split: {names}"


def test_the_public_definition_count_can_fail():
    """Top-level public functions and classes count; private ones, methods, nested functions,
    re-exports and constants do not."""
    src = ("from ._x import a, b\nC = 1\n\n\ndef _private():\n    pass\n\n\nclass K:\n    def method(self):\n"
           "        def inner():\n            pass\n\n\nasync def g():\n    pass\n\n\ndef h():\n    pass\n")
    assert _public_definitions(src) == ["K", "g", "h"]
    assert len(_public_definitions("\n".join(f"def f{i}():\n    pass" for i in range(16)))) > MAX_PUBLIC_DEFINITIONS


# --------------------------------------------------------------------------
# one CV estimator base, one vocabulary


def _estimator_classes():
    import numkfs.estimators as E

    return {name: getattr(E, name) for name in E.__all__}


def _params(obj):
    import inspect

    if isinstance(obj, Exception):  # the import failed (see _public_callables)
        raise obj
    return inspect.signature(obj).parameters


#: the estimators, from the test suite's one registry (tests/conftest.py, which holds every public one)
CV_NAMES = names(cv=True)
NON_CV_NAMES = names(cv=False)


@pytest.mark.parametrize("name", CV_NAMES)
def test_every_cv_estimator_cross_validates_its_methods_public_path_function(name):
    import inspect

    import numkfs.methods
    from numkfs.estimators._cv import PathCVMixin

    cls = _estimator_classes()[name]
    assert issubclass(cls, PathCVMixin), f"{name} is not a PathCVMixin (bases: {cls.__bases__})"
    assert isinstance(inspect.getattr_static(cls, "path", None), staticmethod), f"{name}.path is not a staticmethod"
    fn = cls.path
    assert getattr(numkfs.methods, fn.__name__, None) is fn, \
        f"{name}.path is {fn.__module__}.{fn.__name__}, not a public path function of numkfs.methods"
    grid = cls._cv_grid_param
    assert grid in _params(cls), f"{name}: its grid parameter {grid!r} is not one of its parameters"
    assert grid in _params(fn), f"{name}: its grid parameter {grid!r} is not a parameter of {fn.__name__}"


@pytest.mark.parametrize("name", NON_CV_NAMES)
def test_estimators_that_do_not_cross_validate_take_no_cv(name):
    params = _params(_estimator_classes()[name])
    assert "cv" not in params, f"{name} does not cross-validate but takes cv"


def _public_callables(deep=False):
    """Every public estimator class and path function (the callables of the
    ``__all__`` of ``numkfs``, ``numkfs.methods``, ``numkfs.estimators``; with
    ``deep``, of the public modules of ``numkfs.methods`` too): (qualified
    name, object).  An import error becomes one failing case (the other layer
    tests still run)."""
    import inspect

    try:
        import numkfs.estimators
        import numkfs.methods
    except Exception as exc:  # noqa: BLE001 - reported by the test
        return [("import numkfs.methods, numkfs.estimators", exc)]
    import importlib
    import pkgutil

    modules = [numkfs, numkfs.methods, numkfs.estimators]
    if deep:  # numkfs.methods.l1kr, numkfs.methods.l1kr.path...
        modules += [importlib.import_module(m.name)
                    for m in pkgutil.walk_packages(numkfs.methods.__path__, "numkfs.methods.")
                    if not any(part.startswith("_") for part in m.name.split("."))]
    out = {}
    for mod in modules:
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isfunction(obj) or (inspect.isclass(obj) and hasattr(obj, "fit")):
                out.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return sorted(out.items())


#: parameter names of the development versions, renamed before 0.1.0 (CHANGELOG.md); none is kept as an alias
OLD_NAMES = ("lam", "max_steps", "lambda2_grid", "n_lambdas", "lambda2s", "Ms", "n_Ms", "p_grid", "D_grid",
             "m_values")


def _old_names_in_use(obj, old=OLD_NAMES):
    return [n for n in _params(obj) if n in old]


@pytest.mark.parametrize("qualname,obj", _public_callables(), ids=lambda v: v if isinstance(v, str) else "")
def test_no_public_signature_has_an_old_name(qualname, obj):
    bad = _old_names_in_use(obj)
    assert not bad, f"{qualname} has old parameter names (0.1.0 keeps no alias): {bad}"


def test_the_old_names_check_can_fail():
    def f(X, y, grid=None, lambda2s="deprecated", n_lambdas=20):
        pass

    assert _old_names_in_use(f) == ["lambda2s", "n_lambdas"]


def _public_estimators():
    """Every class of ``numkfs.__all__`` with ``get_params`` (the estimators and the resampling selectors)."""
    import inspect

    return sorted((name, getattr(numkfs, name)) for name in numkfs.__all__
                  if inspect.isclass(getattr(numkfs, name)) and hasattr(getattr(numkfs, name), "get_params"))


def _signature_faults(cls):
    """What in ``cls.__init__``'s signature departs from scikit-learn's: more than one parameter
    after ``self`` that can be passed by position, or a ``random_state`` default other than None."""
    import inspect

    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    faults = [f"positional: {', '.join(positional)}"] if len(positional) > 1 else []
    faults += [f"takes *{p.name}" for p in params if p.kind == p.VAR_POSITIONAL]
    rs = next((p for p in params if p.name == "random_state"), None)
    if rs is not None and rs.default is not None:
        faults.append(f"random_state defaults to {rs.default!r}")
    return faults


def test_the_signature_check_sees_every_public_estimator():
    import numkfs.estimators

    seen = {name for name, _ in _public_estimators()}
    assert seen >= {*numkfs.estimators.__all__, "StabilitySelection", "KnockoffFilter"}, seen


@pytest.mark.parametrize("name", [name for name, _ in _public_estimators()])
def test_estimators_take_at_most_their_main_parameter_by_position(name):
    faults = _signature_faults(getattr(numkfs, name))
    assert not faults, f"{name}.__init__ (keyword-only after the main parameter, random_state=None): {faults}"


def test_the_signature_check_can_fail():
    class Loose:
        def __init__(self, kernel="rbf", loss="squared", *, random_state=0):
            pass

    class Starred:
        def __init__(self, *args, random_state=None):
            pass

    class Fine:
        def __init__(self, kernel="rbf", *, loss="squared", random_state=None):
            pass

    assert _signature_faults(Loose) == ["positional: kernel, loss", "random_state defaults to 0"]
    assert _signature_faults(Starred) == ["takes *args"]
    assert _signature_faults(Fine) == []


def _method_of(obj):
    """The paper a public estimator or function belongs to, from its module."""
    if isinstance(obj, Exception):
        return None
    mod = obj.__module__.split(".")
    for key in methods():
        if any(part.lstrip("_").startswith(key) for part in mod[1:]):
            return "cosso" if obj.__name__.lower().startswith("cosso") else key
    return None


def _of_method(key):
    """The public callables of one method (the import error, if any)."""
    return [(q, o) for q, o in _public_callables() if isinstance(o, Exception) or _method_of(o) == key]


@pytest.mark.parametrize("qualname,obj", _public_callables(deep=True), ids=lambda v: v if isinstance(v, str) else "")
def test_C_is_only_an_svm_box_constraint(qualname, obj):
    if "C" in _params(obj):
        assert _method_of(obj) in ("nmmkl", "lpkta"), \
            f"{qualname} has a parameter C: C is only the SVM box constraint (NMMKL, lp-KTA's scoring SVM)"


@pytest.mark.parametrize("qualname,obj", _public_callables(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_kernel_with_a_bandwidth_comes_with_gamma(qualname, obj):
    params = _params(obj)
    if "kernel" not in params or _method_of(obj) == "l1kr":  # L1KR's ARD weights are its bandwidths
        return
    assert "gamma" in params, f"{qualname} takes a kernel but no gamma (its bandwidth)"


@pytest.mark.parametrize("qualname,obj", _of_method("lpkta"),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_lpkta_weights_are_not_called_lambda(qualname, obj):
    """lp-KTA's weights of the Bregman and lp terms are ``bregman_weight`` and
    ``lp_weight`` (``lambda1``/``lambda2`` mean the ridge and L1 penalties);
    its alignment algorithm and tolerance are ``alignment_method``/``alignment_rtol``."""
    bad = _old_names_in_use(obj, old=("lambda1", "lambda2", "method", "rtol"))
    assert not bad, f"{qualname}: {bad}"


@pytest.mark.parametrize("qualname,obj", _of_method("l1kr"),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_l1kr_says_lambda1_and_norm_bound(qualname, obj):
    """L1KR's ridge penalty is ``lambda1``, its RKHS-norm bound ``norm_bound``,
    and ``eps`` (lp-KTA's juncture threshold elsewhere) is gone."""
    params = _params(obj)
    assert "eps" not in params, f"{qualname} still takes eps"
    if "fix" in params:
        assert {"lambda1", "norm_bound"} <= set(params), f"{qualname}: {list(params)}"
        assert params["fix"].default in ("lambda1", "norm_bound"), params["fix"].default


def test_garrote_path_has_no_eps():
    import numkfs

    assert "eps" not in _params(numkfs.garrote_path)


#: the vocabulary a CV estimator shares with its path function, name for name
SHARED = ("grid", "n_grid", "kernel", "gamma", "lambda1", "lambda2", "lambda_min_ratio", "bregman_weight",
          "lp_weight", "norm_bound", "eps", "alignment_method", "alignment_rtol", "max_iter", "tol")


@pytest.mark.parametrize("name", CV_NAMES)
def test_cv_estimators_name_parameters_as_their_path_function(name):
    cls = _estimator_classes()[name]
    assert cls._cv_grid_param == "grid", f"{name}'s explicit path grid is {cls._cv_grid_param!r}, not 'grid'"
    own = set(_params(cls)) & set(SHARED)
    missing = sorted(own - set(_params(cls.path)))
    assert not missing, f"{name} takes {missing}, which its path function {cls.path.__name__} does not"


# --------------------------------------------------------------------------
# the test suite's one estimator registry (tests/conftest.py)


def test_every_registry_estimator_meets_the_scikit_learn_checks():
    """Every estimator of the registry is in some ``parametrize_with_checks``
    list drawn from it (``conftest.checked(prefix)``), so a new estimator
    added to the registry is checked against scikit-learn's contract."""
    from conftest import ESTIMATORS

    prefixes = []
    for path in sorted(pathlib.Path(__file__).parent.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "parametrize_with_checks":
                prefixes += [sub.args[0].value for sub in ast.walk(node)
                             if isinstance(sub, ast.Call) and getattr(sub.func, "id", None) == "checked"
                             and sub.args and isinstance(sub.args[0], ast.Constant)]
    missing = [name for name in ESTIMATORS if not name.startswith(tuple(prefixes))]
    assert prefixes and not missing, f"not in any parametrize_with_checks(checked(...)): {missing}"


def test_the_bad_input_battery_covers_every_estimator_that_predicts_or_transforms():
    """The bad-input battery's entries (tests/test_properties.py) name every non-CV estimator of the
    registry (each built by ``conftest.make``); a new one must be added there."""
    from conftest import names
    from test_properties import ENTRIES

    assert {e.name for e in ENTRIES if e.kind != "path"} == set(names(cv=False))


# --------------------------------------------------------------------------
# the test suite mirrors the package

#: the test files named after a contract that cuts across the modules, not after a module
CONTRACT_TESTS = {"test_estimator_checks", "test_layers", "test_units", "test_properties", "test_docstrings",
                  "test_docs", "test_readme", "test_determinism"}


def _module_of_test(parts, root=ROOT):
    """The module or package of numkfs that ``tests/<parts>`` is named after, or None.

    ``tests/<dirs>/test_<name>.py`` tests ``numkfs/<dirs>/<name>`` or ``numkfs/<dirs>/_<name>``
    (a module or a package), or, for ``<name>`` = ``<a>_<b>``, ``<b>`` (or ``_<b>``) of the
    package ``numkfs/<dirs>/<a>`` (``methods/test_knife_nystroem.py``: ``methods/knife/_nystroem.py``).
    """
    *dirs, file = parts
    name = file[len("test_"):-len(".py")]
    base = root.joinpath(*dirs)
    if not (base / "__init__.py").is_file():
        return None

    def found(folder, stem):
        for cand in (stem, "_" + stem):
            if (folder / f"{cand}.py").is_file() or (folder / cand / "__init__.py").is_file():
                return folder / cand
        return None

    hit = found(base, name)
    pieces = name.split("_")
    for k in range(1, len(pieces)):
        if hit is None:
            head, tail = "_".join(pieces[:k]), "_".join(pieces[k:])
            for pkg in (head, "_" + head):
                if hit is None and (base / pkg / "__init__.py").is_file():
                    hit = found(base / pkg, tail)
    return hit


def _unmirrored(test_files):
    """The test files (paths relative to ``tests/``) named after neither a numkfs module nor a contract."""
    out = []
    for rel in test_files:
        parts = pathlib.PurePosixPath(rel).parts
        if len(parts) == 1 and parts[0][:-len(".py")] in CONTRACT_TESTS:
            continue
        if _module_of_test(parts) is None:
            out.append(rel)
    return out


def test_every_test_file_is_named_after_a_module_or_a_contract():
    """``tests/`` mirrors ``numkfs/``: each test file is named after the module or package it
    tests (in the folder of that package, which holds an ``__init__.py`` so that equal file
    names in two folders do not clash), or is one of :data:`CONTRACT_TESTS`."""
    tests = pathlib.Path(__file__).parent
    files = sorted(p.relative_to(tests).as_posix() for p in tests.rglob("test_*.py"))
    assert len(files) > 40
    bad = _unmirrored(files)
    assert not bad, f"test files named after no module of numkfs (tests/ mirrors numkfs/): {bad}"
    folders = {p.parent for p in tests.rglob("test_*.py")} - {tests}
    missing = sorted(f.relative_to(tests).as_posix() for f in folders if not (f / "__init__.py").is_file())
    assert not missing, f"test folders without an __init__.py: {missing}"


def test_the_layout_check_can_fail():
    assert _module_of_test(("methods", "test_knife_nystroem.py")) == ROOT / "methods" / "knife" / "_nystroem"
    assert _module_of_test(("solvers", "test_native_boxqp.py")) == ROOT / "solvers" / "native" / "boxqp"
    assert _module_of_test(("test_jit.py",)) == ROOT / "_jit"
    assert _unmirrored(["test_edges.py", "methods/test_speed.py", "kernels/test_knife.py", "nowhere/test_cli.py",
                        "test_cli.py", "test_units.py", "estimators/test_knife_cv.py"]) \
        == ["test_edges.py", "methods/test_speed.py", "kernels/test_knife.py", "nowhere/test_cli.py"]


@pytest.mark.parametrize("name", CV_NAMES)
def test_every_cv_estimator_fits_through_the_one_base(name):
    from numkfs.estimators._cv import PathCVMixin

    cls = _estimator_classes()[name]
    assert cls.fit is PathCVMixin.fit, f"{name}.fit is not PathCVMixin.fit (it is {cls.fit.__module__}.{cls.fit.__qualname__}" \
                                       f" of {[c.__name__ for c in cls.__mro__ if 'fit' in vars(c)][0]})"


#: the one CV loop of :class:`numkfs.estimators._cv.PathCVMixin`: a method declares hooks around it
#: (its folds, a refinement of the first pass, a second hyperparameter...) and overrides none of these
CV_CORE = ("fit", "_cv_one_path", "_cv_pass", "_cv_scores")


def _core_overrides(cls):
    """The names of :data:`CV_CORE` that ``cls`` (or a class between it and the
    mixin) defines anew, each with the class that does."""
    from numkfs.estimators._cv import PathCVMixin

    return {name: next(c.__name__ for c in cls.__mro__ if name in vars(c))
            for name in CV_CORE if getattr(cls, name) is not getattr(PathCVMixin, name)}


@pytest.mark.parametrize("name", CV_NAMES)
def test_no_cv_estimator_overrides_the_core_loop(name):
    cls = _estimator_classes()[name]
    assert not _core_overrides(cls), f"{name} overrides PathCVMixin's loop: {_core_overrides(cls)}; declare a hook"


def test_the_core_loop_check_can_fail():
    from numkfs import KNIFERegressorCV

    class Probe(KNIFERegressorCV):
        def _cv_one_path(self, data, outer):
            return super()._cv_one_path(data, outer)

    assert _core_overrides(Probe) == {"_cv_one_path": "Probe"}


def _count_record_cv(monkeypatch):
    """Count the calls of ``record_cv`` (the rule, and the record of its choice)
    through every numkfs module that holds it."""
    import sys

    from numkfs import model_selection

    calls, rule = [], model_selection.record_cv

    def counted(path, scores, **kw):
        calls.append(path)
        return rule(path, scores, **kw)

    for mod in [m for n, m in list(sys.modules.items()) if n.split(".")[0] == "numkfs"]:
        if getattr(mod, "record_cv", None) is rule:
            monkeypatch.setattr(mod, "record_cv", counted)
    return calls


def _rule_on_final_scores(est):
    """The contract's rule on the fitted path's final CV scores."""
    import copy

    from numkfs.model_selection import choose_index

    probe = copy.copy(est.path_)
    probe.cv_scores, probe.cv_fold_sizes = est.cv_scores_, est.path_.cv_fold_sizes
    return choose_index(probe, est.cv_rule)


def _rule_once_cases():
    from conftest import ESTIMATORS

    from numkfs.datasets import make_sinusoid

    X, y, _ = make_sinusoid(90, n_features=6, random_state=0)
    labels = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    rng = np.random.default_rng(0)
    Xs = rng.standard_normal((40, 5))
    ys = 2 * Xs[:, 0] + np.sin(2 * Xs[:, 1]) + 0.1 * rng.standard_normal(40)
    cases = [pytest.param(ESTIMATORS[name], Xs, ys if "Regressor" in name else (Xs[:, 0] + Xs[:, 1] ** 2 > 1) * 1,
                          False, id=name) for name in CV_NAMES]
    low_end = dict(cv=3, n_grid=4, lambda_min_ratio=0.3, random_state=0)  # KNIFE's low end walked twice here
    return cases + [pytest.param(numkfs.KNIFERegressorCV(**low_end), X, y, True, id="KNIFERegressorCV-low-end"),
                    pytest.param(numkfs.KNIFEClassifierCV(**{**low_end, "lambda_min_ratio": 0.5}), X, labels, True,
                                 id="KNIFEClassifierCV-3-classes-low-end")]


@pytest.mark.parametrize("est, X, y, refined", _rule_once_cases())
def test_the_rule_chooses_once_per_path_on_the_final_scores(est, X, y, refined, monkeypatch):
    """``record_cv`` runs once per cross-validated path (one, or one per λ₁ of
    L1KR), after any refinement; the point kept is the rule's on the final
    scores.  KNIFE's low end (a second pass spliced into the first) included."""
    from sklearn.base import clone

    from numkfs.estimators._knife_cv import LOW_END_FRACTIONS

    calls = _count_record_cv(monkeypatch)
    est = clone(est).fit(X, y)
    kept = getattr(est, "cv_paths_", [est.path_])
    assert len(calls) == len(kept) and all(any(c is p for c in calls) for p in kept), len(calls)
    if len(kept) == 1:
        assert est.best_index_ == est.path_.chosen_index == _rule_on_final_scores(est)
    if refined:  # the low end was walked twice, and the rule chose once, on the spliced path
        assert est.path_.extra["n_inserted"] >= LOW_END_FRACTIONS.size
        assert len(est._cv_problem_paths) == 3


@pytest.mark.parametrize("qualname,obj", [(q, o) for q, o in _public_callables(deep=True)
                                          if q not in dict(_public_callables())],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_the_methods_public_helpers_use_the_new_names_too(qualname, obj):
    """The public functions of ``numkfs.methods.<method>`` beyond the path
    functions (``l1kr_prune``, ``default_Ms``...) speak the same vocabulary."""
    bad = _old_names_in_use(obj)
    assert not bad, f"{qualname} has old parameter names: {bad}"


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




#: the layers, bottom first: a module may import modules of its own layer and
#: of the layers below (keyed by the first part of the name under ``numkfs``;
#: ``""`` is the package root, which imports only :mod:`numkfs._lazy`)
LAYERS = [
    # helpers every layer may use: no numerics of a method, no scikit-learn estimator
    ("ground floor", {"", "_lazy", "_jit", "_threads", "_registry", "_constraints", "_validation", "_targets",
                      "_linalg", "_progress", "_preprocessing", "_cv_mean", "_ties", "_grid_refinement"}),
    ("kernels", {"kernels"}),
    ("losses", {"losses"}),
    ("solvers", {"solvers"}),
    # the selection contract and cross-validation over any path (and its relaxed refit), and the
    # drawing of paths (they read a FeaturePath they are given, and know no method)
    ("selection contract and plots", {"model_selection", "_cv_rules", "_cv_scoring", "_folds", "_parallel", "relaxed",
                                      "plotting"}),
    # the result of every path method (FeaturePath) and the one support rule
    ("paths", {"paths"}),
    ("methods", {"methods"}),
    ("estimators", {"estimators"}),
    # what numkfs says about a selection: resampling, stability selection, knockoffs, HSIC tests
    ("trust", {"resampling", "stability", "knockoffs", "hsic"}),
    ("select", {"selection"}),
    # front ends and data: nothing in the library proper uses them
    ("applications", {"cli", "__main__", "_data_io", "_crosscheck_problems", "distributed", "datasets"}),
]


def _layer_of(module):
    """Index in :data:`LAYERS` of a dotted module name (None if in no layer)."""
    parts = module.split(".")
    key = parts[1] if len(parts) > 1 else ""
    for i, (_, names) in enumerate(LAYERS):
        if key in names:
            return i
    return None


def _sources():
    """``{dotted name: (source, is_package)}`` of every module of numkfs."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path.read_text(), package)
    return out


def _lazy_names(tree):
    """``{name: submodule}`` of a package ``__init__`` that calls ``_attach(__name__, {...})``."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.endswith("attach")
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Dict)):
            return ast.literal_eval(node.args[1])
    return {}


def import_graph(sources):
    """``{module: {imported module: first line}}`` over the numkfs modules of
    ``sources`` (``{dotted name: (source, is_package)}``)."""
    with warnings.catch_warnings():  # a docstring's invalid escape is not this test's business
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        trees = {name: ast.parse(src) for name, (src, _) in sources.items()}
    lazy = {name: _lazy_names(tree) for name, tree in trees.items() if sources[name][1]}
    graph = {}
    for name, tree in trees.items():
        here = name.split(".") if sources[name][1] else name.split(".")[:-1]  # the package it is in
        edges = {}

        def add(target, line, name=name, edges=edges):
            parts = target.split(".")
            for k in range(1, len(parts) + 1):  # the target and the packages it runs on the way
                mod = ".".join(parts[:k])
                if mod in sources and mod != name and not name.startswith(mod + "."):
                    edges.setdefault(mod, line)

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "numkfs":
                        add(alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                if mod.split(".")[0] != "numkfs":
                    continue
                add(mod, node.lineno)
                for alias in node.names:
                    if f"{mod}.{alias.name}" in sources:
                        add(f"{mod}.{alias.name}", node.lineno)
                    elif alias.name in lazy.get(mod, {}):
                        add(f"{mod}.{lazy[mod][alias.name]}", node.lineno)
        graph[name] = edges
    return graph


def cycles(graph):
    """Every circle of the graph, as one path through each strongly connected
    component (Tarjan's algorithm): ``[[a, b, ..., a], ...]``."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_way_back(graph, component, min(component)) for component in components]


def _way_back(graph, component, start):
    """A shortest circle from ``start`` through ``component`` back to it (breadth first)."""
    parent, queue = {start: None}, [start]
    while queue:
        following = []
        for v in queue:
            for w in sorted(graph[v]):
                if w == start:
                    way = [v]
                    while parent[way[-1]] is not None:
                        way.append(parent[way[-1]])
                    return way[::-1] + [start]
                if w in component and w not in parent:
                    parent[w] = v
                    following.append(w)
        queue = following
    raise AssertionError(f"no way back to {start}")  # pragma: no cover - a component is strongly connected


def upward_imports(graph):
    """``(module, imported module, line)`` of every import of a higher layer
    than the importer's, and ``(module, None, None)`` for a module in no layer."""
    bad = []
    for name in sorted(graph):
        mine = _layer_of(name)
        if mine is None:
            bad.append((name, None, None))
            continue
        for target, line in sorted(graph[name].items()):
            theirs = _layer_of(target)
            if theirs is not None and theirs > mine:
                bad.append((name, target, line))
    return bad


def _describe(bad):
    return "\n".join(f"{m} is in no layer of LAYERS" if t is None else
                     f"{m} ({LAYERS[_layer_of(m)][0]}) imports {t} ({LAYERS[_layer_of(t)][0]}) at line {line}"
                     for m, t, line in bad)


@pytest.fixture(scope="module")
def graph():
    return import_graph(_sources())


def test_the_graph_sees_the_packages_imports(graph):
    """A sanity check of the parsing: imports inside functions, relative ones,
    submodules named in ``from . import``, and the packages run on the way."""
    assert "numkfs.plotting" in graph["numkfs.paths"]  # inside FeaturePath.plot
    assert "numkfs.solvers.native.lpkta_newton" in graph["numkfs.solvers.native"]  # from . import lpkta_newton
    assert {"numkfs.methods", "numkfs.methods.knife"} <= set(graph["numkfs.estimators._knife"])
    assert "numkfs.estimators._lpkta_scoring" in graph["numkfs.estimators._lpkta"]


def test_no_import_circle(graph):
    found = cycles(graph)
    assert not found, "import circles (move the shared code down, or pass what is needed down):\n" + \
        "\n".join(" -> ".join(c) for c in found)


def test_nothing_imports_a_higher_layer(graph):
    bad = upward_imports(graph)
    assert not bad, "imports from a lower layer to a higher one (move the code, or pass what is needed " \
                    "down):\n" + _describe(bad)


#: the folders of scripts beside the package, each a flat folder of modules imported by their file names
SCRIPT_FOLDERS = ("benchmarks", "tests", "tools")


def _script_sources(root=ROOT.parent):
    """``{"folder/name": source}`` of every script of :data:`SCRIPT_FOLDERS`."""
    return {f"{folder}/{path.stem}": path.read_text()
            for folder in SCRIPT_FOLDERS for path in sorted((root / folder).glob("*.py"))}


def _imported_names(tree):
    """``(top-level module name, line)`` of every absolute import of ``tree``, at any depth, and of every
    ``importlib.import_module("name")`` or ``__import__("name")`` of a literal name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.module.split(".")[0], node.lineno
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            yield node.args[0].value.split(".")[0], node.lineno


def script_graph(sources):
    """``{script: {imported script: first line}}`` over ``sources`` (``{"folder/name": source}``): a name
    is the script of that name in the importer's folder, else the only script of that name elsewhere."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        trees = {key: ast.parse(src) for key, src in sources.items()}
    elsewhere = {}
    for key in sources:
        elsewhere.setdefault(key.partition("/")[2], []).append(key)
    graph = {}
    for key, tree in trees.items():
        folder = key.partition("/")[0]
        edges = {}
        for name, line in _imported_names(tree):
            target = f"{folder}/{name}" if f"{folder}/{name}" in sources else \
                (elsewhere[name][0] if len(elsewhere.get(name, ())) == 1 else None)
            if target is not None and target != key:
                edges.setdefault(target, line)
        graph[key] = edges
    return graph


@pytest.fixture(scope="module")
def scripts():
    return script_graph(_script_sources())


def test_the_script_graph_sees_the_scripts_imports(scripts):
    """Imports inside functions, ``from x import``, and a folder's script importing another folder's."""
    assert "benchmarks/common_learner" in scripts["benchmarks/peers"]  # inside run_real
    assert "benchmarks/peers" in scripts["benchmarks/peers_figure"]
    assert "benchmarks/_common" in scripts["benchmarks/peers"]
    assert "tests/test_properties" in scripts["benchmarks/robustness"]
    assert "tests/conftest" in scripts["tests/test_layers"]


def test_no_import_circle_among_the_scripts(scripts):
    found = cycles(scripts)
    assert not found, "import circles among the scripts (move the shared code into one of them, or into " \
        "benchmarks/_common.py):\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_script_check_can_fail():
    """A circle through a function-level import, one through ``import_module``, and a name resolved in
    the importer's own folder before another folder's."""
    probe = {
        "benchmarks/a": "import b\n",
        "benchmarks/b": "def f():\n    from a import x\n",
        "benchmarks/c": "import importlib\nm = importlib.import_module('conftest')\n",
        "tests/conftest": "def g():\n    import c\n",
        "tests/b": "import a\n",
    }
    graph = script_graph(probe)
    assert graph["tests/b"] == {"benchmarks/a": 1}  # tests has no a: the only a elsewhere
    assert graph["benchmarks/a"] == {"benchmarks/b": 1}  # its own folder's b first
    assert cycles(graph) == [["benchmarks/a", "benchmarks/b", "benchmarks/a"],
                             ["benchmarks/c", "tests/conftest", "benchmarks/c"]], cycles(graph)


def test_the_import_checks_can_fail():
    """A circle through a function-level import, an upward import (kernels ->
    methods), one through a lazily loaded name, and a module in no layer."""
    probe = {
        "numkfs": ('from ._lazy import attach\n__getattr__, __dir__, __all__ = attach(__name__, {"f": "methods.b"})\n',
                   True),
        "numkfs._lazy": ("def attach(*a):\n    pass\n", False),
        "numkfs.kernels": ("", True),
        "numkfs.kernels.a": ("from ..methods.b import f\n", False),
        "numkfs.methods": ("", True),
        "numkfs.methods.b": ("def f():\n    from ..kernels import a\n", False),
        "numkfs.losses": ("def g():\n    from numkfs import f\n", False),
        "numkfs.newthing": ("", False),
    }
    graph = import_graph(probe)
    assert cycles(graph) == [["numkfs.kernels.a", "numkfs.methods.b", "numkfs.kernels.a"]], cycles(graph)
    assert upward_imports(graph) == [
        ("numkfs.kernels.a", "numkfs.methods", 1),
        ("numkfs.kernels.a", "numkfs.methods.b", 1),
        ("numkfs.losses", "numkfs.methods", 2),  # the package runs on the way to its module
        ("numkfs.losses", "numkfs.methods.b", 2),  # a lazily loaded name of the root
        ("numkfs.newthing", None, None),
    ], upward_imports(graph)
