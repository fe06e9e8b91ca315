"""The documentation builds warning-free and lists every public name; its
front page shows a code example and the path figure that code draws, its
navigation names each section once, and every example page shows a figure.
One Sphinx build, which executes the notebooks of ``notebooks/`` in one kernel:
it is the suite's one run of them (pytest does not collect them), and a cell's
error fails the build, reported with the notebook's name and the cell's error."""
import collections
import importlib.util
import re
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
pytest.importorskip("pydata_sphinx_theme")
bs4 = pytest.importorskip("bs4")  # a dependency of pydata-sphinx-theme


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
    assert res.returncode == 0, _build_failure(res.stderr)
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
    # the version: in the reference, and on every page's navigation bar and title
    assert "numkfs.__version__" in documented
    api = (out / "api" / "numkfs.html").read_text(encoding="utf-8")
    assert "__version__" in api and repr(numkfs.__version__) in api
    front = _soup(out / "index.html")
    assert f"numkfs {numkfs.__version__}" in front.title.get_text()
    assert any(f"numkfs {numkfs.__version__}" in a.get_text(" ", strip=True) for a in front.select(".navbar-brand"))
    for module in ("numkfs.solvers", "numkfs.datasets", "numkfs.distributed", "numkfs.model_selection"):
        assert module in documented
        assert any(k.startswith(module + ".") for k in index)
    # the user guide and the examples are there
    for page in ("guide/knife", "guide/l1kr", "guide/lpkta", "guide/nmmkl", "guide/garrote", "guide/selection",
                 "guide/parameters", "guide/solvers", "guide/scaling", "examples/notebooks/01_nmmkl_relaxation"):
        assert (out / f"{page}.html").exists(), page
    _check_front_page(out)
    _check_navigation_names_each_section_once(out / "index.html")
    _check_example_figures(out)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _build_failure(stderr: str) -> str:
    """What a failed build reports: for each notebook whose execution failed, its name and the
    cell's error (myst-nb prints them among the traceback of its executor); else the end of stderr."""
    text = _ANSI.sub("", stderr)
    failed = re.findall(r"^(\S+?\.ipynb): WARNING: Executing notebook failed.*?"
                        r"(An error occurred while executing the following cell:.*?)(?=^\S+: WARNING:|^Versions\n|\Z)",
                        text, flags=re.M | re.S)
    if not failed:
        return text[-5000:]
    return "\n".join(f"notebook {Path(path).name} does not run:\n{cell.strip()[-3000:]}" for path, cell in failed)


def test_a_failing_notebook_is_reported_by_name_and_error():
    """A build that fails in a notebook's cell names the notebook and shows the cell and its error
    (myst-nb's report, as Sphinx 9 and myst-nb 1.4 print it), not the build's closing lines."""
    stderr = ("/x/docs/examples/notebooks/06_how_sure.ipynb: WARNING: Executing notebook failed: CellExecutionError\n"
              "Traceback (most recent call last):\n  File \"nbclient/client.py\", line 918\n"
              "nbclient.exceptions.CellExecutionError: An error occurred while executing the following cell:\n"
              "------------------\nraise ValueError('boom')\n------------------\n\n"
              "\x1b[0;31mValueError\x1b[0m: boom\n\n [mystnb.exec]\n\n\nVersions\n========\n\n"
              "* Sphinx version:   9.0.4\n" + "Last Messages\n" + "x\n" * 3000)
    msg = _build_failure(stderr)
    assert msg.startswith("notebook 06_how_sure.ipynb does not run:")
    assert "raise ValueError('boom')" in msg and "ValueError: boom" in msg
    assert "Sphinx version" not in msg and "\x1b" not in msg
    assert _build_failure("Sphinx error:\nno such theme") == "Sphinx error:\nno such theme"


def test_notebooks_share_one_kernel_and_each_starts_afresh(tmp_path):
    """The docs build executes the notebooks one after the other in one kernel
    (docs/_notebooks.py) and caches each that runs through, where myst-nb finds
    it: a notebook sees nothing of the one before (names, figures, working
    folder, which warnings were shown), a failing cell is returned with the
    cell and its error and keeps that notebook out of the cache, and the
    notebooks after it still run."""
    nbformat = pytest.importorskip("nbformat")
    jupyter_cache = pytest.importorskip("jupyter_cache")
    spec = importlib.util.spec_from_file_location("_notebooks", DOCS / "_notebooks.py")
    notebooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(notebooks)
    (tmp_path / "_warns.py").write_text("import warnings\n\n\ndef warn():\n"
                                        "    warnings.warn('from one place', UserWarning)\n")
    cells = {
        "a": ["import os, _warns\n_warns.warn()", "x = 1\nos.chdir(os.pardir)\nx"],
        "b": ["print(x)"],
        "c": ["import os, _warns\n_warns.warn()\nprint(os.getcwd(), 'x' in dir())"],
    }
    paths = []
    for name, sources in cells.items():
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in sources])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        paths.append(tmp_path / f"{name}.ipynb")
        nbformat.write(nb, paths[-1])
    result = dict(notebooks.execute_into_cache(paths, tmp_path / "cache", timeout=120))
    assert result[paths[0]] is None and result[paths[2]] is None
    assert "print(x)" in str(result[paths[1]]) and "NameError" in str(result[paths[1]])
    cache = jupyter_cache.get_cache(tmp_path / "cache")
    outputs = {}
    for path in (paths[0], paths[2]):
        _, nb = cache.merge_match_into_notebook(nbformat.read(path, as_version=4))
        outputs[path.stem] = [out for cell in nb.cells for out in cell.outputs]
    with pytest.raises(KeyError):
        cache.match_cache_notebook(nbformat.read(paths[1], as_version=4))
    assert outputs["a"][-1]["data"]["text/plain"] == "1"  # the outputs are in the cache
    text = "".join(out.get("text", "") for out in outputs["c"])
    assert "from one place" in text  # shown again, as in a kernel of its own
    assert f"{tmp_path} False" in text  # its own folder, no name of "a"


def _soup(path: Path):
    return bs4.BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _local_png(page: Path, img) -> Path:
    """The file an <img> of *page* shows; it must exist and be a PNG."""
    src = img.get("src", "")
    assert src and "://" not in src and not src.startswith("data:"), src
    path = (page.parent / src).resolve()
    assert path.is_file(), src
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", src
    return path


def _check_front_page(out: Path):
    index = out / "index.html"
    soup = _soup(index)
    code = "\n".join(pre.get_text() for pre in soup.find_all("pre"))
    script = (DOCS / "_front_example.py").read_text(encoding="utf-8")
    shown = script.split("# --- shown on the front page ---", 1)[1]
    lines = [ln for ln in shown.splitlines() if ln.strip()]
    assert len(lines) >= 4 and any("plot()" in ln for ln in lines)
    for line in lines:
        assert line in code, line
    figures = [img for img in soup.find_all("img") if "front_path" in img.get("src", "")]
    assert len(figures) == 1, [img.get("src") for img in soup.find_all("img")]
    assert _local_png(index, figures[0]).stat().st_size > 10_000  # a drawn path, not an empty canvas


def _check_navigation_names_each_section_once(index: Path):
    """No text twice in one navigation block of the front page: a toctree
    caption repeating the title of the page it lists ("User guide User
    guide") or a page listed twice."""
    soup = _soup(index)
    blocks = soup.find_all("nav") + soup.find_all(attrs={"role": "navigation"}) + soup.select(
        "[class*=sidebar]")
    assert blocks
    section_links = set()
    for block in blocks:
        texts = [a.get_text(" ", strip=True) for a in block.find_all("a")]
        texts += [c.get_text(" ", strip=True) for c in block.select(".caption-text")]
        texts = [t for t in texts if t]
        twice = {t: k for t, k in collections.Counter(texts).items() if k > 1}
        assert not twice, (block.name, block.get("class"), twice)
        section_links.update(texts)
    assert {"User guide", "Examples", "API reference"} <= section_links, section_links


def _check_example_figures(out: Path):
    """Every notebook page shows at least one figure, and so does the gallery."""
    pages = [out / "examples" / "notebooks" / f"{nb.stem}.html" for nb in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    assert pages
    for page in pages + [out / "examples" / "index.html"]:
        imgs = [img for img in _soup(page).find_all("img") if img.get("src", "").endswith(".png")]
        assert imgs, f"{page.relative_to(out)} shows no figure"
        for img in imgs:
            _local_png(page, img)


def test_guide_pages_type_no_measurements():
    """The user guide, the front page and the install page hold no hand-typed timings, speed
    ratios, issue numbers, dates or before/after notes: measurements come into the pages only
    through ``{include}`` of the tables the benchmark scripts write (``benchmarks/results/``)."""
    import re

    pattern = re.compile(r"\bCPU ?s\b|\d ?s CPU|\d(?:\.\d+)? ?[x×](?![\w\d])(?! ?\d)|\bissues? #?\d|20\d\d-\d\d"
                         r"|\(was\b|previous release|\bformer\b|\d ?(?:ms|s|min)\b(?! *[=(])")
    pages = sorted((DOCS / "guide").glob("*.md")) + [DOCS / "index.md", DOCS / "install.md"]
    found = [f"{page.relative_to(ROOT)}:{i}: {m.group(0)!r}" for page in pages
             for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             for m in pattern.finditer(line)]
    assert not found, "\n".join(found)
    included = set()
    for page in pages:
        for target in re.findall(r"^```\{include\} (\S+)", page.read_text(encoding="utf-8"), flags=re.M):
            path = (page.parent / target).resolve()
            assert path.is_file() and path.parent == (ROOT / "benchmarks" / "results").resolve(), (page, target)
            included.add(path.name)
    assert {"knife_speed.md", "peers.md", "trust.md", "selection_quality.md"} <= included, included
