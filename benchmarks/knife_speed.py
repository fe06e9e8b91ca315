"""KNIFE speed: numkfs against a plain numpy implementation of the same algorithm.

Both run the same iterations (tol=0, a fixed number of outer iterations from
the same start, rbf kernel, squared loss); the numpy version is a direct
translation of the paper's formulas: the kernel by per-feature accumulation
of squared differences, A column by column from
``-2 γ w_k ((x_k - x_k')² ∘ K) α`` (never an n x n x p array, O(n²) extra
memory per feature), ``numpy.linalg.solve`` for the α-step and
``scipy.optimize.minimize(L-BFGS-B)`` with bounds for the box QP of the
w-step.  numkfs: GEMM-based kernels and A (or Numba loops, see the kernel
forms table), Cholesky, the native coordinate-descent box QP.

Also: the two kernel forms (BLAS and Numba loops) for K and A, and the peak
resident memory of a numkfs fit measured in a fresh process.

Usage: ``python benchmarks/knife_speed.py [--quick]``; writes
``benchmarks/results/knife_speed.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import scipy.optimize

HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------
# the plain numpy implementation


def np_kernel(X, w, gamma):
    n = X.shape[0]
    D = np.zeros((n, n))
    for k in np.flatnonzero(w > 0):
        xk = X[:, k] * w[k]
        D += (xk[:, None] - xk[None, :]) ** 2
    return np.exp(-gamma * D)


def np_A(X, w, alpha, K, gamma):
    n, p = X.shape
    A = np.zeros((n, p))
    for k in np.flatnonzero(w > 0):
        xk = X[:, k]
        A[:, k] = -2.0 * gamma * w[k] * (((xk[:, None] - xk[None, :]) ** 2 * K) @ alpha)
    return A


def np_objective(K, alpha, y, w, lam1, lam2):
    Ka = K @ alpha
    return float((y - Ka) @ (y - Ka) + lam1 * alpha @ Ka + lam2 * w.sum())


def np_knife(X, y, w0, *, lam1=1.0, lam2=1.0, gamma=None, n_iter=10):
    n, p = X.shape
    gamma = 1.0 / p if gamma is None else gamma
    w = w0.copy()
    K = np_kernel(X, w, gamma)
    alpha = np.linalg.solve(K + lam1 * np.eye(n), y)
    f = np_objective(K, alpha, y, w, lam1, lam2)
    hist = [f]
    for _ in range(n_iter):
        act = np.flatnonzero(w > 0)
        if act.size == 0:
            break
        A = np_A(X, w, alpha, K, gamma)[:, act]
        u0 = K @ alpha - A @ w[act]
        Q = 2 * A.T @ A
        q = lam1 * A.T @ alpha + lam2 - 2 * A.T @ (y - u0)
        res = scipy.optimize.minimize(lambda v: (0.5 * v @ Q @ v + q @ v, Q @ v + q), w[act], jac=True,
                                      method="L-BFGS-B", bounds=[(0, 1)] * len(act),
                                      options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 10000})
        w_new = np.zeros(p)
        w_new[act] = res.x
        w_new[w_new <= 1e-12] = 0.0
        K_new = np_kernel(X, w_new, gamma)
        f_new = np_objective(K_new, alpha, y, w_new, lam1, lam2)
        s = 0.5
        while not f_new <= f and s >= 2.0 ** -30:
            w_s = w + s * (w_new - w)
            K_s = np_kernel(X, w_s, gamma)
            f_s = np_objective(K_s, alpha, y, w_s, lam1, lam2)
            if f_s <= f:
                w_new, K_new, f_new = w_s, K_s, f_s
            s *= 0.5
        if not f_new <= f:
            break
        w, K, f = w_new, K_new, f_new
        alpha = np.linalg.solve(K + lam1 * np.eye(n), y)
        f = np_objective(K, alpha, y, w, lam1, lam2)
        hist.append(f)
    return w, f, hist


def np_path(X, y, grid, w0, n_iter):
    w = w0.copy()
    for lam2 in grid:
        w, f, _ = np_knife(X, y, w, lam2=lam2, n_iter=n_iter)
        if not np.any(w > 0):
            break
    return w


# --------------------------------------------------------------------------


def data(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = np.sin(X[:, :min(p, 5)]) @ np.array([6, -4, 3, 2, -2][:min(p, 5)]) + rng.standard_normal(n)
    X = (X - X.mean(0)) / X.std(0)
    return X, y - y.mean(), rng.uniform(0.2, 1.0, p)


def _same_threads(n):
    """The baseline runs with the BLAS thread count numkfs uses for this n."""
    from threadpoolctl import threadpool_limits

    from numkfs.methods.knife import SERIAL_MAX_SAMPLES

    return threadpool_limits(1 if n <= SERIAL_MAX_SAMPLES else None, user_api="blas")


def timed(f, repeat=1):
    best = np.inf
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    return best, out


def bench_fit(n, p, n_iter, baseline):
    from numkfs.methods.knife import knife

    X, y, w0 = data(n, p)
    lam2 = 0.02 * n
    knife(X[:50], y[:50], lambda2=lam2, w0=w0, max_iter=2, tol=0.0)  # compile / warm up
    rep = 3 if n * n * p <= 1e8 else 1
    t_nk, res = timed(lambda: knife(X, y, lambda2=lam2, w0=w0, max_iter=n_iter, tol=0.0), rep)
    row = {"n": n, "p": p, "iters": n_iter, "numkfs_s": t_nk, "numpy_s": np.nan, "speedup": np.nan,
           "obj_rel_diff": np.nan}
    if baseline:
        with _same_threads(n):
            t_np, (w, f, hist) = timed(lambda: np_knife(X, y, w0, lam2=lam2, n_iter=n_iter), 1)
        row.update(numpy_s=t_np, speedup=t_np / t_nk, obj_rel_diff=abs(f - res.objective) / abs(f))
    return row


def bench_path(n, p, n_lambdas, n_iter):
    from numkfs.methods.knife import knife_path

    X, y, w0 = data(n, p)
    path = knife_path(X, y, n_lambdas=n_lambdas, max_iter=n_iter, tol=0.0, random_state=0)
    grid = path.grid
    t_nk, _ = timed(lambda: knife_path(X, y, lambda2_grid=grid, max_iter=n_iter, tol=0.0, random_state=0,
                                       stop_at_zero=True), 1)
    rng = np.random.default_rng(0)
    w_start = rng.uniform(0.0, 1.0, p)  # the path's own first start (same generator)
    with _same_threads(n):
        t_np, _ = timed(lambda: np_path(X, y, grid, w_start, n_iter), 1)
    return {"n": n, "p": p, "points": len(grid), "iters/point": n_iter, "numkfs_s": t_nk, "numpy_s": t_np,
            "speedup": t_np / t_nk}


def bench_forms(cases):
    import numba

    from numkfs.kernels.weighted import weight_gradient_matrix, weighted_kernel
    from numkfs.methods.knife import SERIAL_MAX_SAMPLES

    rows = []
    rng = np.random.default_rng(0)
    for n, p in cases:
        X = rng.standard_normal((n, p))
        w = rng.uniform(0.2, 1.0, p)
        a = rng.standard_normal(n)
        for kernel in ("rbf", "poly"):
            r = {"n": n, "p": p, "kernel": kernel}
            serial = n <= SERIAL_MAX_SAMPLES
            old_threads = numba.get_num_threads()
            numba.set_num_threads(1 if serial else old_threads)
            for method in ("blas", "numba"):
                K = weighted_kernel(X, w, kernel, method=method)
                weight_gradient_matrix(X, w, a, K, kernel, method=method)
                rep = 7 if n <= 1000 else 3
                with _same_threads(n):
                    r[f"K_{method}_ms"] = 1e3 * timed(lambda: weighted_kernel(X, w, kernel, method=method), rep)[0]
                    r[f"A_{method}_ms"] = 1e3 * timed(
                        lambda: weight_gradient_matrix(X, w, a, K, kernel, method=method), rep)[0]
            r["threads"] = numba.get_num_threads()
            numba.set_num_threads(old_threads)
            rows.append(r)
    return rows


_MEM_SNIPPET = r"""
import json, sys, threading, time, numpy as np
sys.path.insert(0, {root!r})
from numkfs.methods.knife import knife
def rss():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
rng = np.random.default_rng(0)
X = rng.standard_normal(({n}, {p})); y = rng.standard_normal({n})
knife(X[:40], y[:40], lambda2=1.0, max_iter=2, tol=0.0, random_state=0)
base = rss(); peak = [base]; done = [False]
def watch():
    while not done[0]:
        peak[0] = max(peak[0], rss()); time.sleep(0.0005)
t = threading.Thread(target=watch); t.start()
knife(X, y, lambda2=1.0, max_iter=3, tol=0.0, random_state=0)
done[0] = True; t.join()
print(json.dumps({{"extra_MiB": peak[0] - base}}))
"""


def bench_memory(n, p):
    code = _MEM_SNIPPET.format(root=os.path.dirname(HERE), n=n, p=p)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    extra = json.loads(out.stdout.strip().splitlines()[-1])["extra_MiB"]
    return {"n": n, "p": p, "extra_MiB": extra, "n2_MiB": n * n * 8 / 2**20, "np_MiB": n * p * 8 / 2**20,
            "n2p_MiB": n * n * p * 8 / 2**20}


def table(rows, cols, fmt):
    head = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"
    body = ""
    for r in rows:
        body += "| " + " | ".join(fmt.get(c, "{}").format(r[c]) for c in cols) + " |\n"
    return head + body


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a subset of the cases")
    args = ap.parse_args()
    if args.quick:
        fit_cases = [(100, 10, True), (100, 100, True), (1000, 10, True), (1000, 100, True), (100, 1000, True),
                     (4000, 10, False), (1000, 1000, False)]
        path_cases = [(100, 10), (300, 10)]
        form_cases = [(100, 10), (300, 10), (1000, 10), (1000, 100), (2000, 100)]
        mem_cases = [(1000, 100), (2000, 100)]
    else:
        fit_cases = [(n, p, n * n * p <= 1.6e9) for n in (100, 1000, 4000) for p in (10, 100, 1000)]
        path_cases = [(100, 10), (100, 100), (1000, 10)]
        form_cases = [(n, p) for n in (100, 1000, 4000) for p in (10, 100)]
        mem_cases = [(1000, 100), (4000, 100), (4000, 1000)]
    n_iter = 10
    fmt = {"numkfs_s": "{:.3f}", "numpy_s": "{:.3f}", "speedup": "{:.1f}", "obj_rel_diff": "{:.1e}"}
    out = ["# KNIFE speed: numkfs against plain numpy (same algorithm, same iterations)\n",
           f"Machine: {os.cpu_count()} cores, shared with other jobs (timings noisy; ratios are from the same run). "
           f"rbf kernel, squared loss, λ1 = 1, λ2 = 0.02 n, {n_iter} outer iterations from the same start "
           "(tol = 0); both run with the same BLAS thread count (1 up to n = 2000, like numkfs). `obj_rel_diff`: relative difference of the final objectives (same iterates up to the "
           "inner solvers' tolerances). numpy baseline skipped where it would take minutes (NaN).\n",
           "## Fit\n"]
    rows = []
    for n, p, base in fit_cases:
        r = bench_fit(n, p, n_iter, base)
        print(r, flush=True)
        rows.append(r)
    out.append(table(rows, ["n", "p", "iters", "numkfs_s", "numpy_s", "speedup", "obj_rel_diff"], fmt))
    out.append("\n## Path (warm starts, the same grid for both, 3 iterations per point)\n")
    rows = []
    for n, p in path_cases:
        r = bench_path(n, p, 20, 3)
        print(r, flush=True)
        rows.append(r)
    out.append(table(rows, ["n", "p", "points", "iters/point", "numkfs_s", "numpy_s", "speedup"], fmt))
    out.append("\n## Kernel forms: BLAS (GEMM + map) against Numba loops, milliseconds (best of several; serial up to n = 2000 like the fits)\n")
    rows = bench_forms(form_cases)
    for r in rows:
        print(r, flush=True)
    f2 = {k: "{:.2f}" for k in ("K_blas_ms", "K_numba_ms", "A_blas_ms", "A_numba_ms")}
    out.append(table(rows, ["n", "p", "kernel", "threads", "K_blas_ms", "K_numba_ms", "A_blas_ms", "A_numba_ms"], f2))
    out.append("\n`method=\"auto\"` (numkfs.kernels.weighted) uses the Numba loops for the rbf kernel with at "
               "most `AUTO_NUMBA_MAX_FEATURES` = 32 active features and BLAS otherwise.\n")
    out.append("\n## Peak extra resident memory of a numkfs fit (fresh process, VmRSS sampled every 0.5 ms, minus the RSS before the fit)\n")
    rows = [bench_memory(n, p) for n, p in mem_cases]
    for r in rows:
        print(r, flush=True)
    out.append(table(rows, ["n", "p", "extra_MiB", "n2_MiB", "np_MiB", "n2p_MiB"],
                     {k: "{:.1f}" for k in ("extra_MiB", "n2_MiB", "np_MiB", "n2p_MiB")}))
    out.append("\nA few n x n arrays (kernel, Cholesky factor, line-search kernel) and n x p arrays: "
               "O(n² + np); an n x n x p array would need the last column.\n")
    text = "\n".join(out)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "knife_speed.md"), "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
