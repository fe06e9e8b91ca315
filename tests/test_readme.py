"""The README's Python example runs and says what it claims."""
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs():
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    example = next(b for b in blocks if "import numkfs" in b)
    ns: dict = {}
    exec(compile(example, "README.md", "exec"), ns)
    # select() and the estimator both keep exactly the five true sinusoid features
    truth = ns["truth"]
    assert truth.sum() == 5
    assert (ns["res"].selected == truth).all()
    assert "x0, x1, x2, x3, x4" in ns["res"].summary()
    assert (ns["est"].get_support() == truth).all()


def test_readme_commands_are_the_ci_commands():
    """CI runs both set-up commands, taken from the README, in order."""
    import importlib.util

    root = README.parent
    ci = (root / ".ci" / "run").read_text()
    assert "python .ci/readme_commands.py" in ci
    spec = importlib.util.spec_from_file_location("readme_commands", root / ".ci" / "readme_commands.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cmds = mod.readme_commands(README)
    assert cmds[0].startswith("pip install . && numkfs select ")
    assert cmds[1] == 'pip install -e ".[test]" && python -m pytest'


def test_front_page_and_release_notes_stay_short():
    """The README is a front page and CHANGELOG.md release notes: each has a size limit, and the
    changelog has an "Unreleased" section above the released versions."""
    readme = README.read_text(encoding="utf-8")
    changelog = (README.parent / "CHANGELOG.md").read_text(encoding="utf-8")
    assert len(readme) <= 10_000, len(readme)
    assert len(changelog) <= 15_000, len(changelog)
    heads = re.findall(r"^## (.+)$", changelog, flags=re.M)
    assert heads[0] == "Unreleased" and "0.1.0" in heads, heads


def test_readme_tells_no_history():
    """No dates, issue numbers, measured times or before/after notes on the front page
    (measurements live in the docs pages that include benchmarks/results/)."""
    text = README.read_text(encoding="utf-8")
    history = re.compile(r"\b20\d\d-\d\d|\bissues? #?\d+|#\d{2,}\b|\(was\b|previous release|\bbefore\b"
                         r"|\boriginally\b|\d ?(?:ms|s|min)\b|\bCPU\b|\d(?:\.\d+)?x\b(?! ?\d)")
    found = [m.group(0) for m in history.finditer(text)]
    assert not found, found
