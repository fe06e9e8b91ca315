"""Compile time on first use: the first fit of each method's estimator in a
fresh process, with a cold Numba cache (an empty ``NUMBA_CACHE_DIR``) and a
warm one (second process, same directory), and the compile time of every
jitted function those first fits compile.

Run: ``python benchmarks/startup.py`` (about 10 minutes on 2 cores; writes
``benchmarks/results/startup.md``).  Each estimator's cold and warm processes
run :data:`REPEATS` times; the table keeps the least CPU time of each.

What is timed
-------------
* ``import s``: ``import numkfs`` plus what the fit needs before it runs:
  the estimator class (``import numkfs`` is lazy: the class access imports
  scikit-learn, Numba and numkfs's modules) and the data.  It is not in the
  fit columns.
* ``first fit s``: the first ``fit`` in the process, wall and CPU
  (``time.process_time``: the machine is shared, CPU seconds move less with
  the load).  With a cold cache it includes compiling; with a warm one,
  loading the compiled code from the cache.
* ``second fit s``: a second identical fit in the warm process: the work
  itself, so ``first - second`` (warm) is the one-off cost of a process.
* ``cold / warm``: first fit with a cold cache over first fit with a warm one
  (each the least of the repeats; the other columns come from the same runs).

The per-function table records Numba's ``numba:compile`` events in the cold
processes: ``own s`` is the thread CPU time of compiling the function minus
the functions it compiled on the way (its callees, Numba's own
implementations of NumPy functions included), ``incl. s`` with them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from _common import markdown_table, save

#: one representative estimator per method, defaults, small data (KNIFE: the issue's case)
FITS = {
    "KNIFERegressorCV (ozone)": (
        "from numkfs.datasets import load_dataset\nd = load_dataset('ozone'); X, y = d.data, d.target\n"
        "make = lambda: numkfs.KNIFERegressorCV(random_state=0)"
    ),
    "L1KRRegressorCV": "X, y = reg(60, 5)\nmake = lambda: numkfs.L1KRRegressorCV()",
    "LpKTASelectorCV": "X, y = clf(80, 5)\nmake = lambda: numkfs.LpKTASelectorCV(random_state=0)",
    "NMMKLSelector": "X, y = clf(80, 5)\nmake = lambda: numkfs.NMMKLSelector(n_features_to_select=2)",
    "GarroteRegressorCV": "X, y = reg(60, 5)\nmake = lambda: numkfs.GarroteRegressorCV()",
    "COSSORegressorCV": "X, y = reg(60, 5)\nmake = lambda: numkfs.COSSORegressorCV()",
}

#: single first calls (the earlier table)
SNIPPETS = {
    "native box QP": (
        "from numkfs.solvers import solve_box_qp\n"
        "T(lambda: solve_box_qp(np.eye(3), -np.ones(3), 0.0, 1.0))"
    ),
    "feature_alignments (rbf)": (
        "from numkfs.kernels import feature_alignments\n"
        "X = np.random.default_rng(0).standard_normal((50, 4)); y = np.sign(X[:, 0])\n"
        "T(lambda: feature_alignments(X, y, kernel='rbf'))"
    ),
    "knife() (rbf, squared)": (
        "from numkfs import knife\n"
        "X = np.random.default_rng(0).standard_normal((30, 4)); y = X[:, 0]\n"
        "T(lambda: knife(X, y, kernel='rbf', lambda2=0.1))"
    ),
}

SNIPPET_PRELUDE = """
import time, json
import numpy as np
t0 = time.perf_counter()
import numkfs
res = {"import": time.perf_counter() - t0}
def T(f):
    t = time.perf_counter(); f(); res["call"] = time.perf_counter() - t
"""

PRELUDE = """
import json, sys, time
import numpy as np
from numba.core import event
COMP = []
STACK = []
class _L(event.Listener):
    def on_start(self, ev):
        STACK.append([time.thread_time(), 0.0])
    def on_end(self, ev):
        t0, child = STACK.pop()
        dt = time.thread_time() - t0
        if STACK:
            STACK[-1][1] += dt
        d = ev.data["dispatcher"]
        f = getattr(d, "py_func", None)
        name = f"{f.__module__}.{f.__qualname__}" if f is not None else str(d)
        COMP.append({"name": name, "incl": dt, "own": dt - child, "top": not STACK})
event.register("numba:compile", _L())
def reg(n, p):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.standard_normal(n)
def clf(n, p):
    X, y = reg(n, p)
    return X, np.where(y > np.median(y), 1, -1)
t = time.perf_counter()
import numkfs
"""

TIMED = """
make().__class__  # the estimator module (numkfs is imported lazily)
res = {"import": time.perf_counter() - t}
for key in ("first", "second"):
    if key == "second" and not WARM:
        break
    t, c = time.perf_counter(), time.process_time()
    make().fit(X, y)
    res[key] = time.perf_counter() - t
    res[key + "_cpu"] = time.process_time() - c
res["compiled"] = COMP
print(json.dumps(res))
"""


#: Cold/warm pairs per estimator (each on its own empty cache directory); the
#: table keeps the smallest CPU time of each column's repeats: on a shared
#: machine the load only adds time.
REPEATS = 2


def run(snippet: str, cache_dir: str, warm: bool) -> dict:
    code = PRELUDE + snippet + f"\nWARM = {warm}\n" + TIMED
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_snippet(snippet: str, cache_dir: str) -> dict:
    code = SNIPPET_PRELUDE + snippet + "\nprint(json.dumps(res))"
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return {"import": float("nan"), "call": float("nan")}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    load0 = os.getloadavg()[0]
    rows, compiled, errors = [], {}, []
    for name, snippet in FITS.items():
        pairs = []
        for _ in range(REPEATS):
            with tempfile.TemporaryDirectory() as cache:
                pairs.append((run(snippet, cache, warm=False), run(snippet, cache, warm=True)))
        failed = [r["error"] for pair in pairs for r in pair if "error" in r]
        if failed:
            errors.append(f"{name}: {failed[0]}")
            continue
        # the least loaded of the repeats: the one with the least CPU time, cold and warm apart
        cold = min((c for c, _ in pairs), key=lambda r: r["first_cpu"])
        warm = min((w for _, w in pairs), key=lambda r: r["first_cpu"])
        for ev in cold["compiled"]:
            entry = compiled.setdefault(ev["name"], {"own": 0.0, "incl": 0.0, "n": 0, "fits": []})
            entry["own"] += ev["own"]
            if ev["top"]:
                entry["incl"] += ev["incl"]
            entry["n"] += 1
            short = name.split(" ")[0]
            if short not in entry["fits"]:
                entry["fits"].append(short)
        n_numkfs = sum(1 for ev in cold["compiled"] if ev["name"].startswith("numkfs."))
        own = sum(ev["own"] for ev in cold["compiled"])
        rows.append([name, cold["import"], cold["first"], warm["first"], warm["second"],
                     cold["first"] / warm["first"], cold["first_cpu"], warm["first_cpu"], warm["second_cpu"],
                     cold["first_cpu"] / warm["first_cpu"], own, n_numkfs, len(cold["compiled"])])
    body = markdown_table(
        ["estimator", "import s", "first fit s (cold)", "first fit s (warm)", "second fit s (warm)",
         "cold / warm", "CPU s (cold)", "CPU s (warm)", "CPU s (second)", "CPU cold / warm",
         "compile CPU s", "numkfs functions compiled", "compilations (with Numba's)"],
        rows)
    body += (f"\n\nEach estimator runs {REPEATS} times in its own fresh processes: 'cold' with an empty Numba "
             "cache directory, 'warm' a second process on the same directory, which then fits a second time "
             "('second'); of the repeats, the table keeps the cold and the warm run with the least CPU time. "
             "'import s' (cold process) is `import numkfs`, the estimator class (lazy import of scikit-learn, "
             "Numba and numkfs's modules) and the data; it is not in the fit columns. 'compile CPU s' is the "
             "thread CPU time of every Numba compilation in the cold fit. The machine is shared: CPU seconds "
             f"move less with the load than wall seconds (load average {load0:.1f} at the start, "
             f"{os.getloadavg()[0]:.1f} after the fits). Target: KNIFE's CPU cold / warm at most 1.5.")
    if errors:
        body += "\n\nFailed: " + "; ".join(errors)
    top = sorted(compiled.items(), key=lambda kv: -kv[1]["own"])
    numkfs_rows = [[k.replace("numkfs.", "", 1), v["own"], v["incl"] if v["incl"] else float("nan"), v["n"],
                    ", ".join(v["fits"])] for k, v in top if k.startswith("numkfs.")]
    numba_own = sum(v["own"] for k, v in top if not k.startswith("numkfs."))
    numba_n = sum(v["n"] for k, v in top if not k.startswith("numkfs."))
    numba_top = [[k, v["own"], float("nan"), v["n"], ", ".join(v["fits"])]
                 for k, v in top if not k.startswith("numkfs.")][:8]
    body += "\n\n## Compile time of each jitted numkfs function (cold first fits)\n\n"
    body += markdown_table(["function", "own CPU s", "incl. CPU s", "compilations", "compiled by"], numkfs_rows)
    body += (f"\n\nNumba's implementations of NumPy and builtins compiled on the way: {numba_n} compilations, "
             f"{numba_own:.2f} CPU s in all; the largest:\n\n")
    body += markdown_table(["Numba implementation", "own CPU s", "-", "compilations", "compiled by"], numba_top)
    body += ("\n\n'own': thread CPU time of the compilation less the nested ones; 'incl.': with them (only for "
             "functions a fit called from Python); 'compilations': one per signature and per process, summed "
             "over the estimators' cold processes. The first compilation in a process also pays Numba's "
             "one-off start-up (about 0.4 s: LLVM and the typing context).")
    small = []
    for name, snippet in SNIPPETS.items():
        with tempfile.TemporaryDirectory() as cache:
            cold = run_snippet(snippet, cache)
            warm = run_snippet(snippet, cache)
        small.append([name, cold["import"], cold["call"], warm["call"], cold["call"] / warm["call"]])
    body += "\n\n## Single first calls\n\n"
    body += markdown_table(["what", "import numkfs s (lazy)", "first call s (cold)", "first call s (warm)",
                            "cold / warm"], small)
    body += ("\n\n'import numkfs s' is the lazy `import numkfs` alone; the first call includes importing the "
             "submodule it uses.")
    save("startup", "Compile time on first use: cold and warm first fits", body)


if __name__ == "__main__":
    main()
