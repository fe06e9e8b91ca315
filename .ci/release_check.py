#!/usr/bin/env python
"""Build the release artefacts, check them, and run the main job from the wheel alone.

1. ``python -m build`` makes a wheel and an sdist of the checkout in a
   temporary folder; both must hold the shipped data sets
   (``numkfs/datasets/data/*.csv.gz`` and ``*.txt``).
2. ``twine check --strict`` checks both (metadata, the README as the long
   description).
3. A fresh virtual environment *without* the system's site packages gets
   the wheel alone (pip fetches its dependencies from the index), and
   ``numkfs select ozone`` runs from a folder outside the checkout, so a
   module or data file missing from the wheel fails here.

Needs ``build`` and ``twine`` (``pip install build twine``).

Usage::

    python .ci/release_check.py            # what CI runs
    python .ci/release_check.py --keep DIR # also copy the artefacts to DIR
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "numkfs" / "datasets" / "data"


def _run(cmd: list[str], cwd: Path, env: dict | None = None) -> None:
    print(f"\n$ {' '.join(cmd)}    (in {cwd})", flush=True)
    t0 = time.perf_counter()
    res = subprocess.run(cmd, cwd=cwd, env=env)
    print(f"[{time.perf_counter() - t0:.0f} s, exit {res.returncode}]", flush=True)
    if res.returncode != 0:
        raise SystemExit(res.returncode)


def shipped_data() -> list[str]:
    """The data files the package ships, as paths inside the package."""
    files = sorted(p for pattern in ("*.csv.gz", "*.txt") for p in DATA.glob(pattern))
    if not files:
        raise SystemExit(f"no data files in {DATA}")
    return [str(p.relative_to(ROOT)).replace(os.sep, "/") for p in files]


def check_contents(wheel: Path, sdist: Path) -> None:
    """Both artefacts hold every shipped data file; the sdist also the README and the licence."""
    want = shipped_data()
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    with tarfile.open(sdist) as tar:
        top = sdist.name[: -len(".tar.gz")]
        in_sdist = {name.split("/", 1)[1] for name in tar.getnames() if name.startswith(top + "/")}
    missing = [f"{wheel.name}: {f}" for f in want if f not in in_wheel]
    missing += [f"{sdist.name}: {f}" for f in want + ["README.md", "LICENSE", "pyproject.toml"] if f not in in_sdist]
    if missing:
        raise SystemExit("missing from the release artefacts:\n  " + "\n  ".join(missing))
    print(f"\nboth artefacts hold the {len(want)} shipped data files", flush=True)


def main(argv: list[str]) -> int:
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    with tempfile.TemporaryDirectory(prefix="numkfs-release-") as tmp:
        tmp = Path(tmp)
        src, dist, venv, outside = tmp / "src", tmp / "dist", tmp / "venv", tmp / "elsewhere"
        outside.mkdir()
        # build from a copy of the checkout's files, so no build/ or egg-info
        # debris is written into the checkout
        sys.path.insert(0, str(ROOT / ".ci"))
        from readme_commands import _copy_tree, venv_env

        src.mkdir()
        _copy_tree(src)
        _run([sys.executable, "-m", "build", "--outdir", str(dist), str(src)], cwd=tmp)
        wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
        if len(wheels) != 1 or len(sdists) != 1:
            raise SystemExit(f"expected one wheel and one sdist, found {sorted(p.name for p in dist.iterdir())}")
        check_contents(wheels[0], sdists[0])
        _run([sys.executable, "-m", "twine", "check", "--strict", str(wheels[0]), str(sdists[0])], cwd=tmp)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for f in (wheels[0], sdists[0]):
                shutil.copy2(f, keep / f.name)

        _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp)  # no system site packages
        bindir = venv / ("Scripts" if os.name == "nt" else "bin")
        env = venv_env(venv, tmp / "cache")
        python = str(bindir / "python")
        _run([python, "-m", "pip", "install", "-q", str(wheels[0])], cwd=outside, env=env)
        _run([python, "-c", "import numkfs, pathlib; p = pathlib.Path(numkfs.__file__).resolve(); "
              f"assert not p.is_relative_to(pathlib.Path({str(ROOT)!r}).resolve()), p; print('numkfs from', p)"],
             cwd=outside, env=env)
        _run([str(bindir / "numkfs"), "select", "ozone"], cwd=outside, env=env)
    print("\nRelease check: wheel and sdist built and checked; the wheel alone runs the main job.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
