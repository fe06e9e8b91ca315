#!/usr/bin/env python
"""Run the README's set-up commands, in order, in one fresh environment.

The README tells a new user to run, on a fresh machine::

    pip install . && numkfs select ozone ...       # 1. install, main job
    pip install -e ".[test]" && python -m pytest   # 2. editable install, tests

This script takes both commands from README.md (so the check cannot drift
from the text), copies the repository's files to a temporary folder, creates
one fresh virtual environment and runs them there, in that order, then checks
that ``numkfs`` imports from the checkout outside it (a first install can
leave ``site-packages/numkfs/**/__pycache__`` behind, and the leftover
folder would hide the editable install).

The environment is made with ``--system-site-packages`` so that numpy, Numba,
CVXPY... come from the machine when it has them (only numkfs itself is
installed fresh; on a bare machine pip installs everything into the venv).
Compiled kernels are cached in a temporary folder, removed afterwards.

Usage::

    python .ci/readme_commands.py                    # what CI runs
    python .ci/readme_commands.py -- -x tests/test_readme.py   # pytest arguments
                                                               # appended to command 2
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands(readme: Path = ROOT / "README.md") -> list[str]:
    """The shell commands of the README's 'Set up on a fresh machine' section."""
    text = readme.read_text()
    m = re.search(r"^## Set up on a fresh machine\n(.*?)^## ", text, flags=re.S | re.M)
    if m is None:
        raise SystemExit("README.md has no '## Set up on a fresh machine' section")
    cmds = re.findall(r"^    (pip install .*)$", m.group(1), flags=re.M)
    if len(cmds) != 2:
        raise SystemExit(f"expected 2 indented 'pip install' commands in the set-up section, found {cmds}")
    return cmds


def _copy_tree(dst: Path) -> None:
    """The repository's files (tracked and new, not ignored) without build or cache debris."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=ROOT, check=True, capture_output=True, text=True,
        ).stdout
        files = [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout
        files = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
                 and "__pycache__" not in p.parts and ".git" not in p.parts]
    for f in files:
        src = ROOT / f
        if src.is_file():
            (dst / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / f)


def venv_env(venv: Path, cache: Path) -> dict:
    """This process's environment, activating ``venv``: no PYTHONPATH or kernel-cache setting of the
    caller's, and compiled kernels cached under ``cache`` (fresh, removed with it)."""
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "NUMBA_CACHE_DIR", "NUMKFS_DISABLE_CACHE")}
    env.update(
        VIRTUAL_ENV=str(venv),
        PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}",
        XDG_CACHE_HOME=str(cache),
        MPLBACKEND="Agg",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def _run(cmd: str, cwd: Path, env: dict) -> None:
    print(f"\n$ {cmd}    (in {cwd})", flush=True)
    t0 = time.perf_counter()
    res = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], cwd=cwd, env=env)
    print(f"[{time.perf_counter() - t0:.0f} s, exit {res.returncode}]", flush=True)
    if res.returncode != 0:
        raise SystemExit(res.returncode)


def main(argv: list[str]) -> int:
    pytest_args = argv[argv.index("--") + 1:] if "--" in argv else []
    cmd1, cmd2 = readme_commands()
    if pytest_args:
        assert cmd2.endswith("python -m pytest"), cmd2
        cmd2 = cmd2 + " " + " ".join(pytest_args)
    with tempfile.TemporaryDirectory(prefix="numkfs-readme-") as tmp:
        tmp = Path(tmp)
        src, venv, outside = tmp / "numkfs", tmp / "venv", tmp / "elsewhere"
        src.mkdir()
        outside.mkdir()
        _copy_tree(src)
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
        env = venv_env(venv, tmp / "cache")
        _run(cmd1, src, env)
        _run(cmd2, src, env)
        # The editable install is the one imported, checked outside the checkout
        # (where the current directory does not put numkfs on sys.path).
        probe = (
            "import numkfs, numkfs.kernels.additive, numkfs.solvers; "
            "from pathlib import Path; "
            f"assert Path(numkfs.__file__).resolve().is_relative_to(Path({str(src)!r}).resolve()), numkfs.__file__; "
            "assert callable(numkfs.solvers.available_solvers); print('numkfs from', numkfs.__file__)"
        )
        _run(f'python -c "{probe}"', outside, env)
        _run("numkfs solvers", outside, env)
        leftovers = sorted(str(p) for p in venv.glob("lib*/python*/site-packages/numkfs"))
        if leftovers:
            print("left in site-packages after the editable install:", leftovers)
            return 1
    print("\nREADME commands: both ran, in order, in one fresh environment.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
