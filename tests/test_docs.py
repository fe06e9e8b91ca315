"""The documentation builds warning-free and lists every public name
(issue #18, part 2).  One Sphinx build (about a minute on 2 cores)."""
import importlib.util
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

pytest.importorskip("sphinx")
pytest.importorskip("numpydoc")
pytest.importorskip("myst_nb")


def _inventory(path: Path) -> set:
    """Names in a Sphinx objects.inv (version 2: four header lines, zlib body)."""
    raw = path.read_bytes()
    body = raw.split(b"\n", 4)[4]
    names = set()
    for line in zlib.decompress(body).decode().splitlines():
        name, domain_role = line.split(" ", 2)[:2]
        if domain_role.startswith("py:"):
            names.add(name)
    return names


@pytest.mark.slow
def test_docs_build_warning_free_with_every_public_name(tmp_path):
    out = tmp_path / "html"
    res = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html", str(DOCS), str(out),
         "-d", str(tmp_path / "doctrees")],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert res.returncode == 0, res.stderr[-5000:]
    documented = _inventory(out / "objects.inv")
    spec = importlib.util.spec_from_file_location("_apigen", DOCS / "_apigen.py")
    apigen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(apigen)
    index = apigen.write_api_pages(tmp_path / "api")  # every public name -> where it is documented
    import numkfs

    top = [n for n in numkfs.__all__ if not n.startswith("__")]
    assert {f"numkfs.{n}" for n in top} <= set(index) | {f"numkfs.{m}" for m in
                                                          ("datasets", "estimators", "kernels", "methods", "solvers")}
    missing = sorted(name for name, target in index.items() if target not in documented)
    assert not missing, missing
    for module in ("numkfs.solvers", "numkfs.datasets", "numkfs.distributed", "numkfs.model_selection"):
        assert module in documented
        assert any(k.startswith(module + ".") for k in index)
    # the user guide and the examples are there
    for page in ("guide/knife", "guide/l1kr", "guide/lpkta", "guide/nmmkl", "guide/garrote", "guide/selection",
                 "guide/solvers", "guide/scaling", "examples/notebooks/01_nmmkl_relaxation"):
        assert (out / f"{page}.html").exists(), page
