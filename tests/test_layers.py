"""The layers hold: what each package may import, and who may print.

``kernels/`` sits below everything but ``_jit``, ``_threads`` and
``_validation``; ``solvers/`` never imports a method and its registry names
no native module (each native module registers its solver and self-check);
nothing in ``methods/``, ``solvers/`` or ``kernels/`` prints or draws a bar
(verbose messages go through :mod:`numkfs._progress`).
"""
import ast
import pathlib

import numpy as np
import pytest

import numkfs

ROOT = pathlib.Path(numkfs.__file__).parent


def _modules(package):
    return sorted((ROOT / package).rglob("*.py"))


def _imports(path):
    """Absolute dotted names of everything ``path`` imports (relative imports resolved)."""
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    else:
        parts = parts[:-1]  # the package the module is in
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
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
    allowed = ("numkfs.kernels", "numkfs._jit", "numkfs._threads", "numkfs._validation")
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
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [getattr(node, "module", None) or ""] + [a.name for a in node.names]
            if any(n.split(".")[0] == "tqdm" for n in names):
                found.append(f"tqdm import at line {node.lineno}")
    return found


@pytest.mark.parametrize("path", [*_modules("methods"), *_modules("solvers"), *_modules("kernels")],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_nothing_below_the_estimators_prints(path):
    assert not _calls_print_or_tqdm(path), f"{path.name}: {_calls_print_or_tqdm(path)}"


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
