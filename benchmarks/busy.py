"""Every method's ``select()`` on 200 x 50 data, on an idle and on a busy
machine, with numkfs's default threads against one thread.

"Busy" means two other CPU-bound processes (``while True: pass``) run for
the whole measurement, as on a laptop with other work, a shared server or a
CI runner.  "one thread" pins Numba and the BLAS to one thread
(``NUMBA_NUM_THREADS=1``, ``OPENBLAS_NUM_THREADS=1``, ``OMP_NUM_THREADS=1``,
``MKL_NUM_THREADS=1`` in the child's environment).  Each cell is one fresh
process (the Numba cache warmed first) reporting wall time and the CPU
time of the process (all its threads).  Goals: default threads within 1.5x
of one thread on the busy machine; each method's single-threaded CPU time
at most 20 s (the same numbers, written to ``defaults.md`` too).

Run: ``python benchmarks/busy.py [method ...]``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from _common import markdown_table, save

METHODS = ["knife", "lpkta", "nmmkl", "l1kr", "garrote", "cosso"]

CHILD = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from numkfs import select
method = sys.argv[1]
rng = np.random.default_rng(0)
X = rng.standard_normal((200, 50))
y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + X[:, 2] + 0.3 * rng.standard_normal(200)
if method == "nmmkl":
    y = np.where(y > np.median(y), 1, -1)
kw = {"n_features": 3} if method == "nmmkl" else {}
t, c = time.perf_counter(), time.process_time()
res = select(X, y, method=method, random_state=0, **kw)
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c,
                  "selected": [int(j) for j in np.flatnonzero(res.selected)]}))
"""

ONE_THREAD = {"NUMBA_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1"}


def run(method: str, one_thread: bool, timeout: float = 900.0) -> dict:
    env = dict(os.environ, **(ONE_THREAD if one_thread else {}))
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, method], env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"wall": float("nan"), "cpu": float("nan"), "error": f"over {timeout:.0f} s"}
    if out.returncode != 0:
        return {"wall": float("nan"), "cpu": float("nan"), "error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


class Busy:
    """Two CPU-bound processes for the duration of a ``with`` block."""

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def main(methods):
    for m in methods:  # warm the compile cache (not measured)
        run(m, False)
    rows, cpu_rows = [], []
    for m in methods:
        idle_d, idle_1 = run(m, False), run(m, True)
        with Busy():
            busy_d, busy_1 = run(m, False), run(m, True)
        ratio = busy_d["wall"] / busy_1["wall"]
        rows.append([m, idle_d["wall"], idle_1["wall"], busy_d["wall"], busy_1["wall"], ratio,
                     "met" if ratio <= 1.5 else "NOT met"])
        cpu_rows.append([m, idle_1["cpu"], idle_1["wall"], "met" if idle_1["cpu"] <= 20 else "NOT met",
                         idle_1.get("selected", idle_1.get("error"))])
        print(rows[-1], cpu_rows[-1], flush=True)
    body = (
        "`select(X, y, method=m, random_state=0)` on 200 x 50 (y from features 0, 1, 2; NMMKL: its sign, "
        "`n_features=3`), each cell one fresh process with a warm Numba cache, wall seconds. Busy: two other "
        "CPU-bound processes running. One thread: Numba and BLAS pinned to one thread by environment "
        "variables.\n\n"
        + markdown_table(["method", "idle, default", "idle, 1 thread", "busy, default", "busy, 1 thread",
                          "busy default / 1 thread", "≤ 1.5x"], rows)
    )
    save("busy", "Every method's select() on a busy machine (benchmarks/busy.py)", body)
    body2 = (
        "`select(X, y, method=m, random_state=0)` with every default on 200 x 50 (the data of `busy.md`), one "
        "thread, idle machine, warm Numba cache: CPU seconds of the process. Goal: at most 20 s each.\n\n"
        + markdown_table(["method", "CPU s, 1 thread", "wall s", "≤ 20 s CPU", "selected"], cpu_rows)
    )
    save("defaults", "Every method's defaults on 200 x 50 (benchmarks/busy.py)", body2)


if __name__ == "__main__":
    main(sys.argv[1:] or METHODS)
