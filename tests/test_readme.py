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
    # KNIFE keeps the five true sinusoid features
    assert ns["est"].get_support()[:5].all()
    # NMMKL on the toy data picks the pair {X, Y} at m = 2
    assert list(ns["sel"].get_support()) == [True, True, False]
    assert ns["m_path"].extra["selection"].astype(int).tolist() == [[0, 0, 1], [1, 1, 0], [1, 1, 1]]
    assert ns["res"].selected.sum() >= 1 and "temp" in ns["res"].summary()


def test_readme_commands_are_the_ci_commands():
    text = README.read_text()
    ci = (README.parent / ".ci" / "run").read_text()
    test_cmd = 'pip install -e ".[test]" && python -m pytest'
    assert test_cmd in text and test_cmd in ci
