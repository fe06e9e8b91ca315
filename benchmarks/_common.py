"""Small helpers shared by the benchmark scripts: timing and table output."""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]

#: The environment of a child that measures on one thread (Numba, BLAS, OpenMP).
ONE_THREAD = {"NUMBA_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1"}


def run_child(code: str, args, pythonpath: str | None = None, timeout: float = 1800.0) -> dict:
    """Run ``python -c code *args`` on one thread (``ONE_THREAD``), with ``pythonpath`` first on
    ``PYTHONPATH``; return the JSON object of its last line of output, or ``{"error": ...}``."""
    env = dict(os.environ, **ONE_THREAD)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    try:
        out = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, capture_output=True,
                             text=True, timeout=timeout, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def unpack(rev: str) -> str:
    """The package at ``rev`` in a temporary directory (``git archive``)."""
    tmp = tempfile.mkdtemp(prefix="numkfs-before-")
    arch = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "numkfs"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", tmp], input=arch.stdout, check=True)
    return tmp


def best_time(fn, *args, min_repeat: int = 3, budget: float = 1.0, max_repeat: int = 50, cpu: bool = False):
    """Best wall time of ``fn(*args)`` over at least ``min_repeat`` runs and
    as many more as fit in ``budget`` seconds (at most ``max_repeat``).

    The minimum is the least disturbed run on a shared machine; timing
    numkfs and its baselines by the same rule keeps their ratio fair.  The
    budget also lets the threads another library left spinning (OpenBLAS
    busy-waits about 0.1 s after a threaded call) go idle before the best
    run.  Returns ``(wall, result)`` or, with ``cpu``, ``(wall, cpu, result)``.
    """
    best = np.inf
    best_cpu = np.inf
    out = None
    start = time.perf_counter()
    k = 0
    while k < min_repeat or (time.perf_counter() - start < budget and k < max_repeat):
        t = time.perf_counter()
        c = time.process_time()
        out = fn(*args)
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, time.process_time() - c)
        k += 1
    return (best, best_cpu, out) if cpu else (best, out)


def best_times(fns, rounds: int = 3, budget: float = 0.3, min_repeat: int = 1):
    """Best wall times of several callables timed in interleaved rounds
    (each round gives every callable ``budget`` seconds, at least
    ``min_repeat`` runs): a slow phase of a shared machine then hits numkfs
    and its baselines alike, and their ratio comes from the same minutes."""
    best = [np.inf] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], best_time(fn, min_repeat=min_repeat, budget=budget)[0])
    return best


def best_of(fn, repeat: int = 3, warmup: bool = True) -> float:
    """Median wall time of ``fn()`` over ``repeat`` runs (after a warm-up)."""
    if warmup:
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def markdown_table(headers, rows) -> str:
    def fmt(v):
        if isinstance(v, float):
            if v != v:
                return "-"
            return f"{v:.3g}" if (abs(v) >= 1e-3 or v == 0) else f"{v:.2e}"
        return str(v)

    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


def machine_line() -> str:
    import numba

    return (f"{platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
            f"numpy {np.__version__}, numba {numba.__version__}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def save(name: str, title: str, body: str) -> Path:
    """Print ``body`` and write it to ``benchmarks/results/<name>.md``."""
    RESULTS.mkdir(exist_ok=True)
    text = f"# {title}\n\n{machine_line()}\n\n{body}\n"
    print(text)
    path = RESULTS / f"{name}.md"
    path.write_text(text)
    return path
