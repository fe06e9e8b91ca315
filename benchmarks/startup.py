"""Import time and first-call (compile) time in a fresh process, with a cold
Numba cache (an empty ``NUMBA_CACHE_DIR``) and a warm one (second run,
same directory).

Run: ``python benchmarks/startup.py``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from _common import markdown_table, save

SNIPPETS = {
    "import numkfs": "import numkfs",
    "native box QP": (
        "import numpy as np\nfrom numkfs.solvers import solve_box_qp\n"
        "T(lambda: solve_box_qp(np.eye(3), -np.ones(3), 0.0, 1.0))"
    ),
    "feature_alignments (rbf)": (
        "import numpy as np\nfrom numkfs.kernels import feature_alignments\n"
        "X = np.random.default_rng(0).standard_normal((50, 4)); y = np.sign(X[:, 0])\n"
        "T(lambda: feature_alignments(X, y, kernel='rbf'))"
    ),
    "KNIFE fit (rbf, squared)": (
        "import numpy as np\nfrom numkfs import knife\n"
        "X = np.random.default_rng(0).standard_normal((30, 4)); y = X[:, 0]\n"
        "T(lambda: knife(X, y, kernel='rbf', lambda2=0.1))"
    ),
}

PRELUDE = """
import time, json, sys
t0 = time.perf_counter()
import numkfs
imp = time.perf_counter() - t0
res = {"import": imp, "call": None}
def T(f):
    t = time.perf_counter(); f(); res["call"] = time.perf_counter() - t
"""


def run(snippet: str, cache_dir: str) -> dict:
    code = PRELUDE + snippet + "\nprint(json.dumps(res))"
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return {"import": float("nan"), "call": float("nan"), "error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    rows = []
    for name, snippet in SNIPPETS.items():
        with tempfile.TemporaryDirectory() as cache:
            cold = run(snippet, cache)
            warm = run(snippet, cache)
        if "error" in cold:
            rows.append([name, "-", "-", "-", cold["error"][:60]])
            continue
        rows.append([name, cold["import"], warm["import"],
                     cold["call"] if cold["call"] is not None else float("nan"),
                     warm["call"] if warm["call"] is not None else float("nan")])
    body = markdown_table(["what", "import s (cold)", "import s (warm)", "first call s (cold cache)",
                           "first call s (warm cache)"], rows)
    body += "\n\nEach cell is one fresh process; 'cold' has an empty Numba cache directory, 'warm' re-uses it."
    save("startup", "Import and compile time in a fresh process", body)


if __name__ == "__main__":
    main()
