"""numkfs's imports form layers without circles.

Every module of ``numkfs/`` is parsed (not imported): its imports of numkfs
modules at module level *and* inside functions and methods make the edges
of a graph.  The graph has no cycle, and no module imports one of a higher
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
import pathlib
import warnings

import pytest

import numkfs

ROOT = pathlib.Path(numkfs.__file__).parent

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
    assert "tests/test_robustness" in scripts["benchmarks/robustness"]
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
