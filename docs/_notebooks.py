"""Execute the example notebooks in one Jupyter kernel, before Sphinx reads them.

myst-nb (``nb_execution_mode = "cache"``) executes each notebook that its
jupyter-cache does not hold in a kernel of its own, and each new kernel pays
again for starting, for importing numkfs, scikit-learn and CVXPY and for
loading the compiled kernels; that start-up costs more than most notebooks'
cells.  Here, at ``builder-inited``, the notebooks that the cache does not
hold run one after the other in one kernel, and each one that runs through
goes into the cache, where myst-nb then finds it: each notebook still runs
once per build, in a kernel, its outputs (figures included) are what the
pages show, and the cache still runs a notebook again only when its code
changes.

Between two notebooks the kernel forgets the first one: IPython's ``%reset
-f`` empties the namespace and the output history, the figures are closed,
the working folder and the warning filters are put back, and Python forgets
which warnings it has shown (a notebook shows its warnings as it would in a
kernel of its own).  Imported modules stay loaded; that is the saving.

A notebook whose cell fails is left out of the cache: myst-nb then executes
it again while reading it, in a kernel of its own, and reports the notebook
and the cell as a warning (``sphinx -W`` fails), as for any notebook it
executes itself.
"""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

# Run in the kernel before the first notebook: what the reset puts back.
_SNAPSHOT = """\
import os as _os, warnings as _warnings
get_ipython()._docs_start = (_os.getcwd(), list(_warnings.filters))
del _os, _warnings
"""
# Run in the kernel after each notebook.
_RESET = """\
%reset -f
import os as _os, sys as _sys, warnings as _warnings
_cwd, _filters = get_ipython()._docs_start
_os.chdir(_cwd)
_warnings.filters[:] = _filters
with _warnings.catch_warnings():  # entering marks the filters changed: the shown-once registries reset
    pass
if "matplotlib.pyplot" in _sys.modules:
    _sys.modules["matplotlib.pyplot"].close("all")
del _os, _sys, _warnings, _cwd, _filters
"""


async def _execute(notebooks, cwd: str, timeout):
    """Execute *notebooks* (nbformat nodes, in place) in one kernel started
    in *cwd*; return, for each, its execution error (None if it ran through)
    and its wall time in seconds."""
    from jupyter_core.utils import ensure_async
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    # as jupyter-cache's executor: no timing in the cells' metadata, which it hashes with the code
    client = NotebookClient(notebooks[0], timeout=timeout, allow_errors=False, record_timing=False,
                            resources={"metadata": {"path": cwd}})
    results = []
    async with client.async_setup_kernel():
        reply = await client.async_wait_for_reply(await ensure_async(client.kc.kernel_info()))
        language_info = reply["content"]["language_info"]
        await _run_hidden(client, _SNAPSHOT, timeout)
        for nb in notebooks:
            client.nb = nb
            client.reset_execution_trackers()
            nb.metadata["language_info"] = language_info
            start = time.perf_counter()
            error = None
            try:
                for index, cell in enumerate(nb.cells):
                    await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            except (CellExecutionError, CellTimeoutError) as err:
                error = err
            results.append((error, time.perf_counter() - start))
            await _run_hidden(client, _RESET, timeout)
    return results


async def _run_hidden(client, code: str, timeout):
    """Run *code* in the kernel outside any notebook (no output is kept);
    raise if it fails, which would be a fault of this module, not of a notebook."""
    reply = await client.kc.execute_interactive(code, silent=True, store_history=False, timeout=timeout,
                                                output_hook=lambda msg: None)
    if reply["content"]["status"] != "ok":
        content = reply["content"]
        raise RuntimeError(f"preparing the kernel for the next notebook failed: {content.get('ename')}: "
                           f"{content.get('evalue')}")


def execute_into_cache(paths, cache_path, *, timeout) -> list:
    """Execute, in one kernel, the notebooks of *paths* that the jupyter-cache
    at *cache_path* does not hold (matched by their code, as myst-nb matches
    them), and cache each one that runs through.  Return the paths executed,
    each with its error (None if it ran through)."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(cache_path)
    stale = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        try:
            cache.match_cache_notebook(nb)
        except KeyError:
            stale.append((Path(path), nb))
    if not stale:
        return []
    cwd = str(stale[0][0].parent)
    assert all(str(path.parent) == cwd for path, _ in stale), "the notebooks run in one folder"
    results = asyncio.run(_execute([nb for _, nb in stale], cwd, timeout))
    for (path, nb), (error, seconds) in zip(stale, results):
        if error is None:
            record = cache.add_nb_to_project(str(path))
            cache.cache_notebook_bundle(CacheBundleIn(nb, record.uri, data={"execution_seconds": seconds}),
                                        check_validity=False, overwrite=True)
    return [(path, error) for (path, _), (error, _) in zip(stale, results)]


def setup(app, folder: Path):
    """Execute the notebooks of *folder* (the docs' copies) at ``builder-inited``,
    after myst-nb has set its configuration (its handler is connected first)."""

    def builder_inited(app):
        config = app.env.mystnb_config
        paths = sorted(Path(folder).glob("*.ipynb"))
        if config.execution_mode == "cache" and paths:
            execute_into_cache(paths, config.execution_cache_path, timeout=config.execution_timeout)

    app.connect("builder-inited", builder_inited)
