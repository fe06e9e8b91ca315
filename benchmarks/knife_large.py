"""KNIFE at 10^4-10^6 rows through the Nyström basis (issue #26).

On the KNIFE sinusoid (five true features; noise standard deviation 1, so
the best possible test MSE is 1), each case in a fresh process:

* ``KNIFERegressorCV(approximation="nystroem", n_components=500, cv=3,
  n_grid=20)`` (the issue's target configuration; the weights inside
  the kernel, landmarks drawn uniformly with ``random_state=0``);
* the baseline a scikit-learn user reaches for: ``StandardScaler`` +
  ``Nystroem(n_components=500)`` (rbf, γ = 1/p) + ``RidgeCV`` (13 α from
  1e-3 to 1e3), no selection.

Measured per case: CPU seconds (``time.process_time`` of the fitting
process, all its threads) and wall seconds of the fit, the process's peak
resident memory (``resource.getrusage``, data included), the features
selected, the MSE on 10^4 fresh test rows, and the load average before and
after (the machine is shared).

Part ``--auto``: where ``approximation="auto"`` switches, one ``knife``
fit (λ2 = 0.05 n, p = 20) exact and through min(n, 500) landmarks at
n = 1000, 2000, 4000, CPU seconds in one process (written to
``benchmarks/results/knife_large_auto.md``).

Usage: ``python benchmarks/knife_large.py [--rows 10000 100000] [--full] [--auto]``;
``--full`` adds p = 100 and 10^6 rows.  Writes
``benchmarks/results/knife_large.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _common import RESULTS, machine_line, markdown_table  # noqa: E402

N_TEST = 10_000
M = 500


def _data(n, p, seed):
    from numkfs.datasets import make_sinusoid

    return make_sinusoid(n, n_features=p, random_state=seed)


def run_case(method, n, p):
    """One fit in this process; returns a dict of measurements."""
    import resource

    import numpy as np

    X, y, support = _data(n, p, 0)
    Xt, yt, _ = _data(N_TEST, p, 1)
    load0 = os.getloadavg()[0]
    c0, t0 = time.process_time(), time.perf_counter()
    if method == "knife":
        from numkfs import KNIFERegressorCV

        est = KNIFERegressorCV(approximation="nystroem", n_components=M, cv=3, n_grid=20, random_state=0)
        est.fit(X, y)
        found = [int(j) for j in np.flatnonzero(est.get_support())]
        extra = {"points": int(est.path_.n_points), "lambda2": float(est.lambda2_), "gamma": float(est.gamma_)}
    else:
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import RidgeCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        est = make_pipeline(StandardScaler(), Nystroem(n_components=M, gamma=1.0 / p, random_state=0),
                            RidgeCV(alphas=np.logspace(-3, 3, 13)))
        est.fit(X, y)
        found, extra = None, {}
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    mse = float(np.mean((est.predict(Xt) - yt) ** 2))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB -> MiB on Linux
    return {"method": method, "n": n, "p": p, "cpu": cpu, "wall": wall, "peak_mib": peak, "found": found,
            "true": [int(j) for j in np.flatnonzero(support)], "mse": mse, "load_before": load0,
            "load_after": os.getloadavg()[0], **extra}


def auto_crossover(rows=(1000, 2000, 4000)):
    """One ``knife`` fit exact and through min(n, 500) landmarks per row count (CPU seconds)."""
    import warnings

    import numpy as np

    from numkfs.methods.knife import knife

    out = []
    for n in rows:
        X, y, _ = _data(n, 20, 0)
        X = (X - X.mean(0)) / X.std(0)
        for approx in ("exact", "nystroem"):
            knife(X[:200], y[:200] - y.mean(), lambda2=10.0, random_state=0, approximation=approx,
                  n_components=100)  # compile outside the timing
            c = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = knife(X, y - y.mean(), lambda2=0.05 * n, random_state=0, approximation=approx,
                          n_components=min(n, M))
            out.append([n, approx, round(time.process_time() - c, 2), r.n_iter,
                        str([int(j) for j in np.flatnonzero(r.weights > 1e-4)])])
            print(out[-1], flush=True)
    text = "\n".join(["# Where approximation=\"auto\" switches (issue #26)", "",
                      "Written by `benchmarks/knife_large.py --auto`: one `knife` fit (sinusoid, p = 20, "
                      f"lambda2 = 0.05 n), CPU seconds after a warm-up fit (compilation), load {os.getloadavg()[0]:.1f}.",
                      "", f"Machine: {machine_line()}", "",
                      markdown_table(["n", "approximation", "CPU s", "iterations", "features"], out), ""])
    (RESULTS / "knife_large_auto.md").write_text(text)
    print(text)


def _in_child(method, n, p, timeout):
    code = (f"import sys, json; sys.path.insert(0, {HERE!r}); import knife_large as b; "
            f"print(json.dumps(b.run_case({method!r}, {n}, {p})))")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"method": method, "n": n, "p": p, "error": f"over the {timeout} s limit"}
    if out.returncode != 0:
        return {"method": method, "n": n, "p": p, "error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--full", action="store_true", help="also p = 100 and 10^6 rows")
    ap.add_argument("--timeout", type=float, default=7200.0, help="seconds per case")
    ap.add_argument("--auto", action="store_true", help="only the exact / Nyström crossover of approximation='auto'")
    args = ap.parse_args()
    if args.auto:
        auto_crossover()
        return
    rows = sorted(set(args.rows + ([1_000_000] if args.full else [])))
    ps = [20, 100] if args.full else [20]
    results = []
    for p in ps:
        for n in rows:
            for method in ("baseline", "knife"):
                r = _in_child(method, n, p, args.timeout)
                print(json.dumps(r), flush=True)
                results.append(r)
    write(results)


def write(results):
    table = []
    for r in results:
        if "error" in r:
            table.append([r["method"], r["n"], r["p"], "-", "-", "-", r["error"], "-", "-", "-"])
            continue
        found = "(all, no selection)" if r["found"] is None else str(r["found"])
        exact = "-" if r["found"] is None else ("yes" if r["found"] == r["true"] else "no")
        table.append([r["method"], r["n"], r["p"], round(r["cpu"], 1), round(r["wall"], 1), round(r["peak_mib"]),
                      found, exact, round(r["mse"], 3), f"{r['load_before']:.1f} / {r['load_after']:.1f}"])
    ratio = []
    for p in sorted({r["p"] for r in results}):
        k = {r["n"]: r for r in results if r["method"] == "knife" and r["p"] == p and "error" not in r}
        if 10_000 in k and 100_000 in k:
            ratio.append(f"p = {p}: 10^4 -> 10^5 rows: {k[100_000]['cpu'] / k[10_000]['cpu']:.1f}x CPU seconds, "
                         f"{k[100_000]['wall'] / k[10_000]['wall']:.1f}x wall seconds (target: at most 13x).")
    text = "\n".join([
        "# KNIFE at large n through the Nyström basis (issue #26)",
        "",
        "Written by `benchmarks/knife_large.py`.  Sinusoid simulation (five true features, noise variance 1: "
        "the best test MSE is 1), 10^4 test rows.  `knife`: `KNIFERegressorCV(approximation=\"nystroem\", "
        f"n_components={M}, cv=3, n_grid=20)`; `baseline`: `StandardScaler` + `Nystroem(n_components={M}, "
        "gamma=1/p)` + `RidgeCV` (no selection).  CPU seconds are the fitting process's (all threads); peak "
        "memory is the process's peak resident set (data, test set and interpreter included).  Each case in "
        "a fresh process; the machine is shared (load averages before / after each fit in the last column).",
        "",
        f"Machine: {machine_line()}",
        "",
        markdown_table(["method", "n", "p", "CPU s", "wall s", "peak MiB", "features found", "exactly the 5",
                        "test MSE", "load"], table),
        "",
        *ratio,
        "",
    ])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "knife_large.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
