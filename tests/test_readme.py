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
