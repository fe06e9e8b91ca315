"""How long the test suite takes: the README's test command with an empty
kernel cache, then (``--warm``) once more on the cache the first run filled.

Run: ``python benchmarks/test_suite.py`` (the whole suite once, about 5
minutes on an idle 2-core machine; writes ``benchmarks/results/test_suite.md``,
regenerated whole).  Options:

* ``--warm``: a second run on the same cache (what a contributor's next run
  costs); the difference between the two is the kernels' compilation;
* ``--venv``: run in a fresh virtual environment on a copy of the checkout
  (``pip install -e ".[test]"`` there first, as the README says, with
  ``--system-site-packages`` so that the machine's numpy, Numba... are used),
  instead of this checkout and environment;
* anything after ``--`` is appended to the pytest command (``-- tests/methods/test_knife.py``).

What is measured
----------------
The command is ``python -m pytest --durations=25`` (the README's ``python -m
pytest`` and the 25 slowest tests) in a fresh Numba cache directory
(``NUMBA_CACHE_DIR``, removed afterwards).  *wall* is the command's elapsed
time; *CPU* is the user + system time of the command and of every process it
started and waited for (pytest-xdist's workers, the command-line tests'
subprocesses, the docs build and the notebooks' kernels), read from the
operating system when the command ends (``os.wait4``).  The machine may be
shared: CPU seconds move less with its load than wall seconds, and the load
average is recorded before and after.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import RESULTS, machine_line, markdown_table

ROOT = Path(__file__).resolve().parents[1]
COMMAND = [sys.executable, "-m", "pytest", "--durations=25"]


def _run(cmd, cwd, env, log):
    """Run ``cmd``; return (wall s, user + system CPU s of it and its descendants, exit code)."""
    t0 = time.perf_counter()
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, proc.returncode


def _summary(text: str) -> str:
    """pytest's closing line ("3,120 passed, 21 skipped in ..."), without the time."""
    lines = [ln.strip("= ") for ln in text.splitlines() if re.match(r"^=+ .*\b(passed|failed|error)", ln)]
    return re.sub(r" in [\d.]+s.*$", "", lines[-1]) if lines else "no summary (see the log)"


def _slowest(text: str) -> list[tuple[str, str, str]]:
    """The rows of pytest's ``slowest durations`` section: (seconds, phase, test)."""
    m = re.search(r"=+ slowest \d+ durations =+\n(.*?)(?:\n\n|\n=)", text, flags=re.S)
    rows = []
    for line in (m.group(1).splitlines() if m else []):
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0].endswith("s"):
            rows.append((parts[0][:-1], parts[1], parts[2]))
    return rows


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _venv_checkout(tmp: Path, env: dict) -> tuple[Path, dict]:
    """A copy of the checkout and a fresh virtual environment with it installed editable."""
    sys.path.insert(0, str(ROOT / ".ci"))
    from readme_commands import _copy_tree

    src, venv = tmp / "numkfs", tmp / "venv"
    src.mkdir()
    _copy_tree(src)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    env = dict(env, VIRTUAL_ENV=str(venv), PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}")
    subprocess.run(["python", "-m", "pip", "install", "-q", "-e", ".[test]"], cwd=src, env=env, check=True)
    return src, env


def main(argv: list[str]) -> int:
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    opts = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Anything after -- is appended to the pytest command.")
    parser.add_argument("--warm", action="store_true", help="a second run on the cache the first filled")
    parser.add_argument("--venv", action="store_true", help="run in a fresh virtual environment")
    args = parser.parse_args(opts)
    warm, fresh_venv = args.warm, args.venv
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR", "NUMKFS_DISABLE_CACHE")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    runs = []
    with tempfile.TemporaryDirectory(prefix="numkfs-suite-") as tmp:
        tmp = Path(tmp)
        cwd = ROOT
        if fresh_venv:
            cwd, env = _venv_checkout(tmp, env)
        else:
            env["PYTHONPATH"] = str(ROOT)  # this checkout first, whatever numkfs is installed
        env["NUMBA_CACHE_DIR"] = str(tmp / "numba-cache")
        for label in ["empty kernel cache"] + (["warm kernel cache"] if warm else []):
            load0 = os.getloadavg()[0]
            log = tmp / f"pytest-{len(runs)}.log"
            print(f"$ {' '.join(['python', *COMMAND[1:], *extra])}    ({label})", flush=True)
            wall, cpu, code = _run(COMMAND + extra, cwd, env, log)
            text = log.read_text(errors="replace")
            keep = RESULTS / f"test_suite_{len(runs)}.log"
            runs.append(dict(label=label, wall=wall, cpu=cpu, code=code, summary=_summary(text),
                             slowest=_slowest(text), load=(load0, os.getloadavg()[0])))
            print(f"  wall {wall:.0f} s, CPU {cpu:.0f} s, exit {code}: {runs[-1]['summary']}", flush=True)
            if code != 0:
                shutil.copy(log, keep)
                print(f"  the run failed; its log is in {keep}", flush=True)
        shutil.rmtree(tmp / "numba-cache", ignore_errors=True)
    _write(runs, extra, fresh_venv)
    return max(r["code"] for r in runs)


def _write(runs, extra, fresh_venv):
    cmd = " ".join(["python", *COMMAND[1:], *extra])
    where = ("a fresh virtual environment (`--system-site-packages`) on a copy of the checkout, after "
             '`pip install -e ".[test]"`' if fresh_venv else "this checkout (`PYTHONPATH` on it)")
    rows = [(r["label"], f"{r['wall'] / 60:.0f} min {r['wall'] % 60:.0f} s", f"{r['cpu']:.0f}", r["summary"],
             f"{r['load'][0]:.1f} / {r['load'][1]:.1f}", "passed" if r["code"] == 0 else f"exit {r['code']}")
            for r in runs]
    body = [f"`{cmd}` in {where}, commit {_git_commit()}, a fresh `NUMBA_CACHE_DIR`.",
            "CPU is user + system seconds of pytest and every process it started (xdist workers, "
            "subprocesses, the docs build, the notebooks' kernels).",
            "",
            markdown_table(["kernel cache", "wall", "CPU s", "tests", "load before / after", "result"], rows)]
    if len(runs) == 2:
        body += ["", f"Compiling the kernels: {runs[0]['cpu'] - runs[1]['cpu']:.0f} CPU s "
                     "(the empty-cache run minus the warm one)."]
    body += ["", f"The {len(runs[0]['slowest'])} slowest test phases of the empty-cache run "
                 "(pytest's `--durations`, seconds of one worker):", "",
             markdown_table(["seconds", "phase", "test"], [(s, ph, f"`{t}`") for s, ph, t in runs[0]["slowest"]]),
             "", "Regenerate: `python benchmarks/test_suite.py` (add `--warm` for the second row, `--venv` for a "
                 "fresh environment)."]
    RESULTS.mkdir(exist_ok=True)
    text = f"# How long the test suite takes\n\n{machine_line()}\n\n" + "\n".join(body) + "\n"
    (RESULTS / "test_suite.md").write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
