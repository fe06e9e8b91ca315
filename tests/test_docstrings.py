"""Docstring examples run, and public examples import only public names.

Every ``>>>`` example in numkfs runs here (doctest, ELLIPSIS and
NORMALIZE_WHITESPACE).  An example in the docstring of a public name (one
listed in the ``__all__`` of a public module) must not import a private
module or name: it is what a user copies.
"""
import doctest
import enum
import importlib
import inspect
import pkgutil
import re

import matplotlib
import pytest

import numkfs

matplotlib.use("Agg")

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(numkfs.__path__, "numkfs.") if not m.name.endswith("__main__")
) + ["numkfs"]

#: the modules a user imports (their ``__all__`` names are public)
PUBLIC_MODULES = ["numkfs", "numkfs.datasets", "numkfs.distributed", "numkfs.estimators", "numkfs.kernels",
                  "numkfs.methods", "numkfs.model_selection", "numkfs.paths", "numkfs.plotting",
                  "numkfs.solvers"]

PRIVATE_IMPORT = re.compile(r"^\s*(?:>>>|\.\.\.)\s*(?:from\s+(\S+)\s+import\s+(.+)|import\s+(\S+))")


def _import(name):
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # optional dependency (dask) missing
        pytest.skip(f"{name}: {exc}")


@pytest.mark.slow
@pytest.mark.parametrize("modname", MODULES)
def test_docstring_examples_run(modname):
    mod = _import(modname)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in finder.find(mod, modname):  # module globals, as pytest --doctest-modules
        if test.examples:
            runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def _public_objects():
    seen = {}
    for modname in PUBLIC_MODULES:
        mod = _import(modname)
        seen.setdefault(f"{modname} (module)", mod)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
                continue
            seen.setdefault(f"{modname}.{name}", obj)
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and (callable(member) or isinstance(member, property)):
                        seen.setdefault(f"{modname}.{name}.{attr}", member)
    return seen


def _private_imports(doc):
    bad = []
    for line in (doc or "").splitlines():
        m = PRIVATE_IMPORT.match(line)
        if not m:
            continue
        module = m.group(1) or m.group(3)
        names = [n.strip().split(" as ")[0] for n in (m.group(2) or "").strip("() ").split(",")]
        if any(part.startswith("_") for part in module.split(".")) or any(n.startswith("_") for n in names if n):
            bad.append(line.strip())
    return bad


def test_public_examples_import_only_public_names():
    bad = {}
    for name, obj in _public_objects().items():
        doc = obj.fget.__doc__ if isinstance(obj, property) else getattr(obj, "__doc__", None)
        found = _private_imports(doc)
        if found:
            bad[name] = found
    assert not bad, "\n".join(f"{k}: {v}" for k, v in sorted(bad.items()))


def test_no_docstring_cites_files_users_do_not_have():
    """Docstrings point at the documentation, not at MATH.md (not shipped)."""
    cites = []
    for modname in MODULES:
        mod = _import(modname)
        src = inspect.getsource(mod)
        if "MATH.md" in src:
            cites.append(modname)
    from pathlib import Path

    for nb in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb")):
        if "MATH.md" in nb.read_text():
            cites.append(nb.name)
    assert not cites, cites


#: modules whose public names must document every parameter (numpydoc PR01/PR02/PR07)
PARAM_MODULES = ["numkfs", "numkfs.solvers", "numkfs.datasets", "numkfs.distributed",
                 "numkfs.model_selection", "numkfs.paths"]


def test_every_parameter_is_documented():
    """numpydoc: no undocumented (PR01), unknown (PR02) or undescribed (PR07) parameter."""
    validate = pytest.importorskip("numpydoc.validate").validate
    seen, bad = set(), []
    for modname in PARAM_MODULES:
        mod = _import(modname)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not (inspect.isclass(obj) or callable(obj)):
                continue
            qual = getattr(obj, "__qualname__", None)
            if qual is None:
                continue
            if inspect.isclass(obj) and issubclass(obj, enum.Enum):
                # its "parameters" are Enum's functional API (value, names, module, ...),
                # not numkfs's: the members are documented as Attributes instead
                continue
            qual = f"{obj.__module__}.{qual}"
            if qual in seen:
                continue
            seen.add(qual)
            errors = [f"{code} {msg}" for code, msg in validate(qual)["errors"] if code in ("PR01", "PR02", "PR07")]
            bad.extend(f"{qual}: {e}" for e in errors)
    assert not bad, "parameters not documented:\n" + "\n".join(bad)


#: What a comment or docstring under numkfs/ must not hold: it states what the code does and
#: why, in the present tense; measurements live in benchmarks/results/, history in git.
HISTORY = re.compile(
    r"\bissues? #?\d+"                                   # an issue number
    r"|(?<![\w&{])#\d{2,}\b"                             # "#46"
    r"|\b20\d\d-\d\d(?:-\d\d)?\b"                        # a date
    r"|\bCPU[ -]?(?:s|seconds?|minutes?|hours?)\b"       # "1,557 CPU s", "CPU seconds"
    r"|\d ?(?:ms|s) CPU\b"                               # "22 s CPU"
    r"|\d(?: ?(?:ms|s))? ?(?:->|→) ?[\d.,]+ ?(?:ms|s)\b"   # a before/after timing, "17 -> 8 ms"
    r"|\bnow \d"                                          # "now 1.5 ms"
    r"|\(was\b|\bformer\b|\bprevious release\b|\boriginally\b"
    r"|(?<![\w.])\d+(?:\.\d+)?x\b(?! ?\d)"               # a speed ratio, "1.6x"
    r"|\bbenchmarks/results\b",                          # a pointer to a measurement
    re.IGNORECASE,
)


def _comments_and_docstrings(path):
    """(line, text) of every comment and every string literal standing alone as a statement
    (module, class and function docstrings, attribute docstrings) of one source file."""
    import ast
    import io
    import tokenize

    src = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            yield node.lineno, node.value.value


def test_comments_and_docstrings_tell_no_history():
    """No issue numbers, dates, CPU-second figures, before/after notes or speed ratios in the
    comments and docstrings of numkfs (constants say what they are and why, in the present tense)."""
    from pathlib import Path

    root = Path(numkfs.__file__).resolve().parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for line, text in _comments_and_docstrings(path):
            for m in HISTORY.finditer(text):
                found.append(f"{path.relative_to(root.parent)}:{line}: {m.group(0)!r} in "
                             f"{text[max(0, m.start() - 40):m.end() + 40]!r}")
    assert not found, "\n".join(found)


def test_history_pattern_finds_what_it_forbids():
    for text in ("issue #46", "(issue 18)", "see #43", "on 2026-11-25", "1,557 CPU s", "0.24 CPU s",
                 "12 s CPU", "(was 4.2x)", "the former default", "the previous release", "1.6x faster",
                 "benchmarks/results/peers.md", "17 -> 8 ms", "now 1.5 ms"):
        assert HISTORY.search(text), text
    for text in ("n x p", "an n x n kernel", "0x1f", "2x2 blocks", "within 1 % of the best", "a 20-point grid",
                 "the point before"):
        assert not HISTORY.search(text), text


#: characters no source or documentation text holds: what an escape sequence leaves in place of
#: LaTeX written in a string that is not raw (``\frac`` -> form feed, ``\alpha`` -> bell, ``\top``
#: -> tab, ``\rceil`` -> carriage return, ``\beta`` -> backspace, ``\varphi`` -> vertical tab)
CONTROL = re.compile("[\x07\x08\x0b\x0c\x0d]|\t(?:op|ext|heta|au|imes|ilde)\\b")


def _texts():
    from pathlib import Path

    top = Path(numkfs.__file__).resolve().parents[1]
    yield from sorted(Path(numkfs.__file__).resolve().parent.rglob("*.py"))
    for folder in ("docs", "benchmarks"):
        yield from sorted(p for p in (top / folder).rglob("*.md") if "_build" not in p.parts)
    yield from (top / name for name in ("README.md", "CHANGELOG.md"))


def test_no_text_holds_escape_sequence_damage():
    """No control character in numkfs's sources, the docs, the README or the changelog (the
    maths of a docstring renders as written)."""
    found = []
    for path in _texts():
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if CONTROL.search(line):
                found.append(f"{path.name}:{number}: {line.strip()!r}")
    assert not found, "\n".join(found)


def test_escape_damage_pattern_finds_what_it_forbids():
    for text in ("\frac{1}{2}", "\alpha^\top", "\rceil", "\beta", "\varphi", "\text{s.t.}"):
        assert CONTROL.search(text), repr(text)
    for text in (r"\frac{1}{2}", r"\alpha^\top A", r"\lceil 1/q \rceil", "a\tb", "plain text"):
        assert not CONTROL.search(text), repr(text)
