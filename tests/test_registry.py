"""The method registry (``numkfs/_registry.py``): one complete row per method, the
tables built from it, and no other module of ``numkfs/`` holding a table keyed by method names
or branching on a method's name (the command line's choices aside).

Each structural check is shown to fail on a probe.
"""
import argparse
import ast
import dataclasses
import inspect
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from conftest import ESTIMATORS, ids, methods, task_of

import numkfs
from numkfs._registry import CV_QUESTIONS, METHOD_ROWS, MethodRow, method_row, resolve


ROOT = pathlib.Path(numkfs.__file__).parent
REPO = ROOT.parent

#: The modules of numkfs/ that may hold a table keyed by method names or branch on a method's name:
#: the registry, and the command line (its choices and help).
ALLOWED = ("_registry.py", "cli.py")

TASKS = ("regression", "classification")

#: The fields of a row naming a function of the method's own modules (None: the common behaviour).
BEHAVIOURS = ("path_settings", "resample_path", "stability_walk", "select_settings", "select_readout")


# --------------------------------------------------------------------------
# every row is complete


def _resolves(dotted):
    try:
        return resolve(dotted)
    except (ImportError, AttributeError, ValueError):
        return None


def row_problems(row: MethodRow) -> list:
    """What is missing or wrong in ``row`` (empty when the row is complete)."""
    from numkfs.model_selection import CV_RULES, SELECTION_RULES

    out = []
    for f in dataclasses.fields(row):
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING \
                and f.name != "grid" and not getattr(row, f.name):
            out.append(f"{f.name} is empty")
    if not out:
        if not (set(row.tasks) <= set(TASKS) and len(set(row.tasks)) == len(row.tasks)):
            out.append(f"tasks {row.tasks!r}")
        fn = _resolves(row.path)
        if not callable(fn):
            out.append(f"path {row.path!r} does not resolve")
        else:
            taken = set(inspect.signature(fn).parameters)
            wanted = ({row.grid} - {None}) | set(row.path_defaults) | set(row.shared)
            if not wanted <= taken:
                out.append(f"{row.path_name} takes no {sorted(wanted - taken)}")
        for name in BEHAVIOURS:
            dotted = getattr(row, name)
            if dotted is not None and not callable(_resolves(dotted)):
                out.append(f"{name} {dotted!r} does not resolve")
        if set(row.estimators) != set(row.tasks) or set(row.select_estimator) != set(row.tasks):
            out.append("a task without an estimator, or an estimator for a task the method does not do")
        for task, names in row.estimators.items():
            for dotted in names:
                if not isinstance(_resolves(dotted), type):
                    out.append(f"estimator {dotted!r} does not resolve to a class")
        for task, dotted in row.select_estimator.items():
            cls = _resolves(dotted)
            if dotted not in row.estimators.get(task, ()) or not isinstance(cls, type):
                out.append(f"select()'s {task} estimator {dotted!r} is not one of the row's")
        if tuple(row.cv_rules) != CV_QUESTIONS or row.cv_rules["prediction"] not in CV_RULES \
                or row.cv_rules["selection"] not in SELECTION_RULES:
            out.append(f"cv_rules {dict(row.cv_rules)!r}")
        if set(row.scorings) != set(row.tasks) or not all(row.scorings[t] for t in row.scorings):
            out.append(f"scorings {dict(row.scorings)!r}")
        if not (isinstance(row.selection_tol, float) and 0.0 <= row.selection_tol < 1e-3):
            out.append(f"selection_tol {row.selection_tol!r}")
        limits = [row.serial_max_samples, *row.thread_variants.values()]
        if not all(v is None or (isinstance(v, int) and v >= 0) for v in limits):
            out.append(f"thread policy {limits!r}")
        if row.fixed_count is not None:
            cls = _resolves(row.fixed_count.estimator)
            if not isinstance(cls, type) or row.fixed_count.parameter not in cls().get_params(deep=False) \
                    or not callable(_resolves(row.fixed_count.score)):
                out.append(f"fixed_count {row.fixed_count!r}")
        for name, dotted in row.cross_check.items():
            if not callable(_resolves(dotted)):
                out.append(f"cross-check problem {name!r}: {dotted!r} does not resolve")
        if not (REPO / row.guide).is_file():
            out.append(f"guide {row.guide!r} is not a file")
    return out


@pytest.mark.parametrize("name", methods())
def test_every_row_is_complete(name):
    row = method_row(name)
    assert row.name == name and row_problems(row) == []


@pytest.mark.parametrize("change,problem", [
    ({"label": ""}, "label is empty"),
    ({"scorings": {}}, "scorings is empty"),
    ({"path": "numkfs.methods:no_such_path"}, "does not resolve"),
    ({"grid": "no_such_grid"}, "takes no ['no_such_grid']"),
    ({"estimators": {"regression": ("numkfs.estimators:KNIFERegressor",)}}, "a task without an estimator"),
    ({"select_estimator": {"regression": "numkfs.estimators:KNIFERegressorCV",
                           "classification": "numkfs.estimators:KNIFEClassiferCV"}}, "is not one of the row's"),
    ({"estimators": {"regression": ("numkfs.estimators:KNIFERegressor", "numkfs.estimators:KNIFERegressorCV"),
                     "classification": ("numkfs.estimators:NoSuchClassifierCV",)}}, "does not resolve to a class"),
    ({"cv_rules": {"prediction": "best"}}, "cv_rules"),
    ({"cv_rules": {"prediction": "best", "selection": "min"}}, "cv_rules"),
    # the estimators choose on their own CV scores: a rule on the relaxed refit is select()'s only
    ({"cv_rules": {"prediction": "relaxed_1se", "selection": "best"}}, "cv_rules"),
    ({"path_defaults": {"n_lambdas_x": 4}}, "takes no ['n_lambdas_x']"),
    ({"resample_path": "numkfs.methods.knife._resampling:nope"}, "resample_path"),
    ({"guide": "docs/guide/nothing.md"}, "is not a file"),
    ({"cross_check": {"knife-wstep": "numkfs._crosscheck_problems:nope"}}, "does not resolve"),
])
def test_an_incomplete_row_is_refused(change, problem):
    broken = dataclasses.replace(method_row("knife"), **change)
    assert any(problem in p for p in row_problems(broken)), row_problems(broken)


def rows_setting_each_field(rows) -> dict:
    """Field of :class:`MethodRow` that has a default -> how many of ``rows`` set it to something else."""
    counts = {}
    for f in dataclasses.fields(MethodRow):
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            continue  # a field without a default: every row says it
        counts[f.name] = sum(getattr(row, f.name) != default for row in rows)
    return counts


def single_method_fields(rows) -> list:
    """The fields only one of ``rows`` sets."""
    return sorted(name for name, n in rows_setting_each_field(rows).items() if n == 1)


def test_no_field_is_set_by_one_method_alone_but_the_named_few():
    """A row says what a method is, its modules say how it works: a field only one method sets is
    behaviour stored as a flag, allowed for at most four fields, each with its reason beside it."""
    from numkfs._registry import SINGLE_METHOD_FIELDS

    single = single_method_fields(METHOD_ROWS.values())
    assert set(single) <= set(SINGLE_METHOD_FIELDS), sorted(set(single) - set(SINGLE_METHOD_FIELDS))
    assert len(SINGLE_METHOD_FIELDS) <= 4 and all(len(reason) > 20 for reason in SINGLE_METHOD_FIELDS.values())
    # a named field no longer set by one method alone is struck from the list
    assert set(SINGLE_METHOD_FIELDS) <= set(single), sorted(set(SINGLE_METHOD_FIELDS) - set(single))


def test_the_single_method_field_count_can_fail():
    rows = list(METHOD_ROWS.values())
    assert "select_solver" not in single_method_fields(rows)  # lp-KTA's and L1KR's
    probe = [dataclasses.replace(row, select_solver=None) if row.name != "lpkta" else row for row in rows]
    assert "select_solver" in single_method_fields(probe)
    counts = rows_setting_each_field(rows)
    assert counts["resample_path"] >= 2 and counts["selection_tol"] == 3 and "name" not in counts


def test_a_row_cannot_be_changed():
    row = method_row("cosso")
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.selection_tol = 0.0
    with pytest.raises(TypeError):
        row.cv_rules["selection"] = "best"
    with pytest.raises(TypeError):
        row.shared["lambda0"] = ("gamma",)
    assert method_row("COSSO") is row
    with pytest.raises(ValueError, match="unknown method 'magic'; choose one of knife, lpkta, nmmkl, l1kr"):
        method_row("magic")


def non_stdlib_imports(source: str) -> list:
    """What ``source`` imports beyond the standard library (relative imports with their dots)."""
    imported = [node for node in ast.walk(ast.parse(source)) if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in imported if isinstance(n, ast.Import) for a in n.names]
    names += ["." * n.level + (n.module or "") for n in imported if isinstance(n, ast.ImportFrom)]
    return [n for n in names if n.split(".")[0] not in sys.stdlib_module_names | {"__future__"}]


def test_the_import_check_can_fail():
    probe = "import json\nimport numpy as np\nfrom . import paths\nfrom .model_selection import CV_RULES\n"
    assert non_stdlib_imports(probe) == ["numpy", ".", ".model_selection"]


def test_the_registry_imports_nothing_heavy_and_nothing_of_numkfs():
    assert non_stdlib_imports((ROOT / "_registry.py").read_text()) == []
    code = ("import sys, numkfs; before = set(sys.modules); import numkfs._registry as r; r.METHOD_ROWS; "
            "print(sorted(m for m in set(sys.modules) - before if m.startswith('numkfs')), "
            "sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'scipy', 'numba', 'cvxpy', 'sklearn', 'matplotlib')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "['numkfs._registry'] []", out.stdout


# --------------------------------------------------------------------------
# the tables are the rows


def test_the_public_tables_are_read_from_the_rows():
    from numkfs._crosscheck_problems import PROBLEMS
    from numkfs._threads import SERIAL_MAX_SAMPLES, thread_limits
    from numkfs.model_selection import DEFAULT_CV_RULES, SCORINGS, check_scoring, default_cv_rule
    from numkfs.paths import SELECTION_TOL, selection_tol
    from numkfs.plotting import METHOD_LABELS
    from numkfs.resampling import method_name
    from numkfs.selection import METHODS

    assert list(METHODS) == list(DEFAULT_CV_RULES) == list(SCORINGS) == methods()
    assert numkfs.selection.METHODS is METHODS
    # the rules' names, per question, are the registry's; what each does is model_selection's
    from numkfs._registry import CV_RULE_NAMES
    from numkfs.model_selection import CV_RULES, RULES, SELECTION_RULES

    assert CV_RULES == CV_RULE_NAMES["prediction"] and SELECTION_RULES == CV_RULE_NAMES["selection"] == tuple(RULES)
    # every rule on the path's own CV scores is an estimator's (select() fits with it; only the relaxed
    # rules are read off the path afterwards)
    assert CV_RULES == tuple(rule for rule, (scores, _, _) in RULES.items() if scores == "cv")
    for name, row in METHOD_ROWS.items():
        assert METHODS[name] == row.tasks
        assert DEFAULT_CV_RULES[name] == default_cv_rule(name) == row.cv_rules["selection"]
        assert SCORINGS[name] == dict(row.scorings)
        assert all(check_scoring(name, t, None) == row.scorings[t][0] for t in row.tasks)
        assert selection_tol(name) == SELECTION_TOL.get(name, 0.0) == row.selection_tol
        assert SERIAL_MAX_SAMPLES.get(name) == row.serial_max_samples
        assert METHOD_LABELS[name] == (row.label, row.weight_label)
        for task, dotted in row.select_estimator.items():
            assert method_name(resolve(dotted)()) == name
        for problem, dotted in row.cross_check.items():
            assert PROBLEMS[problem] is resolve(dotted)
    assert thread_limits("knife_nystroem", 10**6) == (None, 1)  # a variant's policy, from the KNIFE row
    assert set(PROBLEMS) == {p for row in METHOD_ROWS.values() for p in row.cross_check}
    # the command line's problems and the estimators' offered scorings are the rows' too
    from numkfs.cli import build_parser
    from numkfs.estimators._knife_cv import CLASSIFICATION_SCORINGS
    from numkfs.estimators._lpkta_scoring import KERNEL_MODEL_SCORINGS

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    problem = next(a for a in sub.choices["cross-check"]._actions if a.dest == "problem")
    assert list(problem.choices) == [p for row in METHOD_ROWS.values() for p in row.cross_check]
    assert CLASSIFICATION_SCORINGS == method_row("knife").scorings["classification"]
    assert set(KERNEL_MODEL_SCORINGS) == {s for names in method_row("lpkta").scorings.values() for s in names}


def test_the_test_suites_estimators_are_the_rows_estimators():
    """Every estimator a row names is in ``conftest.ESTIMATORS`` (and so in the scikit-learn checks and
    the contract's batteries), and every estimator there belongs to a row, for the task it is tested on."""
    named = {}
    for name, row in METHOD_ROWS.items():
        for task, estimators in row.estimators.items():
            for dotted in estimators:
                named.setdefault(dotted.rpartition(":")[2], set()).add(task)
    assert set(named) == set(ESTIMATORS)
    assert set(named) == set(numkfs.estimators.__all__)
    for cls_name, tasks in named.items():
        assert task_of(cls_name) in tasks, cls_name


# --------------------------------------------------------------------------
# no table keyed by method names, no branch on a method's name, outside the registry and the CLI


def _is_method(node):
    return isinstance(node, ast.Constant) and node.value in METHOD_ROWS


def _method_names_in(node):
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return sum(map(_is_method, node.elts))
    return int(_is_method(node))


def method_tables_and_branches(source: str) -> list:
    """``(line, what)`` for each table keyed by method names (a dict literal whose keys are at least
    two method names and mostly method names: not ``numkfs/__init__.py``'s table of exported names,
    where the functions ``knife``, ``cosso`` and ``nmmkl`` are three of 37) and each branch on a
    method's name (``==``, ``!=``, ``in``, ``not in`` against a method name or a collection of them,
    a ``match`` case, ``startswith``/``endswith`` with one) in ``source``."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # a module's own escapes are not this check's business
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            k = sum(_is_method(key) for key in node.keys if key is not None)
            if k >= 2 and 2 * k > len(node.keys):
                out.append((node.lineno, "a table keyed by method names"))
        elif isinstance(node, ast.Compare):
            if any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops) \
                    and any(map(_method_names_in, [node.left, *node.comparators])):
                out.append((node.lineno, "a comparison with a method name"))
        elif isinstance(node, ast.MatchValue) and _is_method(node.value):
            out.append((node.lineno, "a match case on a method name"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("startswith", "endswith") and any(map(_method_names_in, node.args)):
            out.append((node.lineno, f"{node.func.attr} with a method name"))
    return sorted(out)


def test_only_the_registry_and_the_cli_know_the_method_names():
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        hits = method_tables_and_branches(path.read_text())
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert len(ALLOWED) <= 2 and ALLOWED[0] == "_registry.py"
    assert set(found) <= set(ALLOWED), {k: v for k, v in found.items() if k not in ALLOWED}


def test_the_method_name_check_can_fail():
    probe = '''
TOL = {"knife": 1e-6, "garrote": 1e-6}
RULES = {"knife": "best", "cosso": "1se", "other": "best"}
EXPORTS = {"knife": "methods", "cosso": "methods", "a": 1, "b": 2, "c": 3}
def f(method, row):
    if method == "nmmkl":
        pass
    elif method in ("garrote", "cosso"):
        pass
    x = 1 if "l1kr" != method else 2
    match method:
        case "lpkta":
            pass
    if method.startswith("knife"):
        pass
    if row.name == "knife_nystroem" or method == "stability" or method in METHODS:
        pass
'''
    assert method_tables_and_branches(probe) == [
        (2, "a table keyed by method names"), (3, "a table keyed by method names"),
        (6, "a comparison with a method name"), (8, "a comparison with a method name"),
        (10, "a comparison with a method name"), (12, "a match case on a method name"),
        (14, "startswith with a method name")]


# --------------------------------------------------------------------------
# the test suite's one estimator registry (tests/conftest.py)


def test_the_registry_holds_every_public_estimator():
    """tests/conftest.py's registry, which every estimator list of the tests comes from."""
    import numkfs.estimators as E
    from conftest import ESTIMATORS, VARIANTS, checked

    assert sorted(ESTIMATORS) == sorted(E.__all__)
    assert all(type(est) is getattr(E, name) for name, est in ESTIMATORS.items())
    every = checked("")
    assert len(every) == len(ESTIMATORS) + len(VARIANTS) and len(set(ids(every))) == len(every)


# --------------------------------------------------------------------------
# a seventh method, registered by its row alone


def toy_path(X, y, grid=None, *, feature_names=None):
    """A marginal-correlation "path": at threshold t (the grid, dense end first), feature j keeps its
    absolute correlation with y, r_j, when r_j > t.  Default grid: 0 and every r_j, ascending."""
    from numkfs.paths import FeaturePath

    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    r = np.abs(Xc.T @ yc) / (np.linalg.norm(Xc, axis=0) * np.linalg.norm(yc))
    grid = np.r_[0.0, np.sort(r)] if grid is None else np.asarray(grid, dtype=float)
    weights = np.where(r[None, :] > grid[:, None], r[None, :], 0.0)
    return FeaturePath(grid=grid, weights=weights, grid_name="t", feature_names=feature_names, method="toy")


class ToyRegressorCV(BaseEstimator):
    """The toy method's CV estimator: each fold's path at the full-data grid, scored by least squares on
    each point's support (negative held-out MSE), the point chosen by ``cv_rule``."""

    def __init__(self, *, cv=5, cv_rule="1se", random_state=None):
        self.cv, self.cv_rule, self.random_state = cv, cv_rule, random_state

    def fit(self, X, y):
        from numkfs.model_selection import cross_val_path, record_cv

        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        path = toy_path(X, y)

        def fold(train, test):
            masks = toy_path(X[train], y[train], grid=path.grid).weights != 0
            out = []
            for mask in masks:
                A = np.c_[np.ones(train.size), X[train][:, mask]]
                coef = np.linalg.lstsq(A, y[train], rcond=None)[0]
                out.append(-np.mean((y[test] - np.c_[np.ones(test.size), X[test][:, mask]] @ coef) ** 2))
            return out

        scores, sizes = cross_val_path(fold, X, y, self.cv, random_state=self.random_state, method="toy")
        self.best_index_ = record_cv(path, scores, rule=self.cv_rule, score_name="neg_mean_squared_error",
                                     fold_sizes=sizes)
        self.path_, self.feature_weights_ = path, path.weights[self.best_index_]
        return self


TOY_MODULE = "numkfs_toy_method"  # not a module of numkfs: the fixture puts it into sys.modules
TOY_ROW = MethodRow(
    "toy", "Toy", "|correlation|", ("regression",), TOY_MODULE + ":toy_path", "grid",
    estimators={"regression": (TOY_MODULE + ":ToyRegressorCV",)},
    select_estimator={"regression": TOY_MODULE + ":ToyRegressorCV"},
    cv_rules={"prediction": "1se", "selection": "1se"}, scorings={"regression": ("neg_mean_squared_error",)},
    guide="docs/contributing.md",
)


@pytest.fixture
def toy_method(monkeypatch):
    """The toy method registered: its module importable and its row in the registry (nothing else)."""
    import types

    import numkfs._registry

    module = types.ModuleType(TOY_MODULE)
    module.toy_path, module.ToyRegressorCV = toy_path, ToyRegressorCV
    monkeypatch.setitem(sys.modules, TOY_MODULE, module)
    monkeypatch.setitem(numkfs._registry._BY_NAME, "toy", TOY_ROW)
    return TOY_ROW


def _toy_data():
    """Five features of twelve carry y (independent Gaussian columns, small noise)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 12))
    y = X[:, :5] @ np.array([3.0, -3.0, 2.5, -2.5, 2.0]) + 0.5 * rng.standard_normal(200)
    return X, y


def test_a_toy_method_registered_by_its_row_runs_through_select_and_the_trust_layer(toy_method):
    """select(), StabilitySelection and KnockoffFilter reach a method that only its row and its own module
    declare (nothing of numkfs changed); on this seeded case each keeps the five features that carry y."""
    from numkfs import KnockoffFilter, StabilitySelection, select
    from numkfs.model_selection import DEFAULT_CV_RULES, SCORINGS
    from numkfs.selection import METHODS

    assert row_problems(toy_method) == []
    assert METHODS["toy"] == ("regression",) and DEFAULT_CV_RULES["toy"] == "1se" and "toy" in SCORINGS
    X, y = _toy_data()
    truth = np.arange(12) < 5
    res = select(X, y, "toy")
    assert res.method == "toy" and res.cv_rule == "1se" and np.array_equal(res.selected, truth)
    two = select(X, y, "toy", n_features=2)  # the path at two features: the two largest correlations
    r = np.abs([np.corrcoef(X[:, j], y)[0, 1] for j in range(12)])
    assert set(np.flatnonzero(two.selected)) == set(np.argsort(r)[-2:]) and (two.selected <= truth).all()
    # q above the five: on half the rows the null correlations spread wider than on all rows, so the point
    # that keeps the five on all rows keeps a null or two on some halves
    stab = StabilitySelection("toy", max_features=8, random_state=0).fit(X, y)
    assert stab.method_ == "toy" and np.array_equal(stab.get_support(), truth)
    assert (stab.selection_probabilities_[truth] == 1.0).all()
    ko = KnockoffFilter("toy", fdr=0.25, random_state=0).fit(X, y)
    assert np.array_equal(ko.get_support(), truth)
    assert np.array_equal(select(X, y, "toy", stability=True, max_features=8).selected, truth)


# --------------------------------------------------------------------------
# no module outside a method's own files reads a method's attribute


def _fitted_attributes_assigned(source: str) -> set:
    """The public fitted attributes (``name_``) that ``source`` assigns (``obj.name_ = ...``, ``setattr``)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr.endswith("_") \
                and not node.attr.startswith("_"):
            out.add(node.attr)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and len(node.args) > 1 \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            out.add(node.args[1].value)
    return out


def _own_files() -> dict:
    """Method -> the files of its estimators (its path modules are all of ``numkfs/methods/``)."""
    return {name: {pathlib.Path(inspect.getsourcefile(resolve(d))) for ds in row.estimators.values() for d in ds}
            for name, row in METHOD_ROWS.items()}


def method_attributes() -> dict:
    """Fitted attribute -> the one method whose estimators alone assign it (none of numkfs's other modules)."""
    own = _own_files()
    owners, elsewhere = {}, set()
    mine = set().union(*own.values())
    for path in ROOT.rglob("*.py"):
        if path not in mine and "methods" not in path.relative_to(ROOT).parts:
            elsewhere |= _fitted_attributes_assigned(path.read_text())
    for name, files in own.items():
        for path in files:
            for attr in _fitted_attributes_assigned(path.read_text()):
                owners.setdefault(attr, set()).add(name)
    return {attr: next(iter(o)) for attr, o in owners.items() if len(o) == 1 and attr not in elsewhere}


def method_attributes_read(source: str, specific) -> set:
    """The attributes of ``specific`` that ``source`` reads (``obj.name_`` or the string ``"name_"``)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in specific:
            out.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in specific:
            out.add(node.value)
    return out


def test_no_module_outside_a_methods_files_reads_its_attributes():
    """selection.py, the resampling selectors, the plots... read what every method's estimators have; what
    one method's estimators alone set (KNIFE's cv_n_samples_, NMMKL's scores_) is read by its own modules,
    through the functions its row names."""
    specific = method_attributes()
    assert {"cv_n_samples_": "knife", "scores_": "nmmkl"}.items() <= specific.items()
    mine = set().union(*_own_files().values())
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        if path in mine or "methods" in path.relative_to(ROOT).parts:
            continue
        read = method_attributes_read(path.read_text(), specific) - _fitted_attributes_assigned(path.read_text())
        if read:
            found[str(path.relative_to(ROOT))] = sorted(read)
    assert found == {}


def test_the_method_attribute_check_can_fail():
    probe = 'def f(est):\n    return est.cv_n_samples_, getattr(est, "scores_"), est.path_\n'
    assert method_attributes_read(probe, method_attributes()) == {"cv_n_samples_", "scores_"}
