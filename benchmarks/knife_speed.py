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

Part ``targets``: KNIFE's CV estimators and paths against a
scikit-learn SVC grid search (100 (C, γ) pairs x 5 folds, standardised in a
pipeline) measured in the same run, each case in a fresh process with a time
limit: breast_cancer with ``KNIFEClassifierCV()`` defaults (``n_jobs`` 1 and
2), vowel (training rows) and digits with ``n_grid=30``, and
``knife_path`` on colon (62 x 2000, log2 then standardised on the training
half) over 10 random half splits, and on the whole colon data as
given (unstandardised), in CPU seconds.

Part ``breast_cancer``: the breast_cancer rows of ``targets``
alone (SVC grid, ``KNIFEClassifierCV()`` defaults, ``gamma=None`` for the
former default bandwidth), in CPU seconds (``time.process_time`` of the
fitting process; the wall seconds in ``info``), written into the targets
table's rows of the same names.

Part ``digits``: the same on digits (1,797 x 64, 10 classes),
``KNIFEClassifierCV()`` with its defaults (``approximation="auto"``: the
exact kernel up to 2,000 rows for classification) and through its default
landmarks against the SVC grid; target at most 2x.

Part ``colon_raw``: the raw-colon ``knife_path`` row of ``targets`` alone, run twice
(CPU seconds, the median), written into the targets table.

Part ``colon_raw`` also runs the path once with a CPU timer on each stage
(weight steps, the box QP, the L-BFGS-B finish, kernels, α-steps).

Part ``select``: the default ``select(X, y)`` on ``benchmarks/peers.py``'s
size simulation at each ``--sizes`` NxP and ``--seeds`` seed, each run in a
fresh process with one CPU timer per stage (the full-data λ2 = 0 start and
the scale's rounds within it, the top search, the full-data path and its
refinement, each fold's start and path, the low-end pass, the relaxed
refit), beside the permutation importance of gradient boosting on the same
data in the same process.

Usage: ``python benchmarks/knife_speed.py [--part numpy|targets|breast_cancer|digits|colon_raw|select|render|all]
[--quick] [--exact-only] [--sizes NxP ...] [--seeds S ...]`` (``--exact-only``: ``--part digits`` without its
landmarks case, whose row keeps its last run).
Each part keeps its results in JSON under ``benchmarks/results/``
(``knife_speed_targets.json``: the targets table's rows, each with the run
that measured it, replaced by case; ``knife_speed_colon_stages.json``;
``knife_speed_numpy.json``; ``knife_speed_select.json``), and every run rebuilds
``benchmarks/results/knife_speed.md`` (the whole file, tables only) from
them, so running one part keeps the other parts' last tables.
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
    path = knife_path(X, y, n_grid=n_lambdas, max_iter=n_iter, tol=0.0, random_state=0)
    grid = path.grid
    t_nk, _ = timed(lambda: knife_path(X, y, grid=grid, max_iter=n_iter, tol=0.0, random_state=0,
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


# --------------------------------------------------------------------------
# part "targets": KNIFE CV and paths against an SVC grid search

_CASE = r"""
import json, sys, time, warnings
import numpy as np
sys.path.insert(0, {root!r})
warnings.simplefilter("ignore")
case, arg = {case!r}, {arg!r}

def data(name):
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer
        return load_breast_cancer(return_X_y=True)
    if name == "digits":
        from sklearn.datasets import load_digits
        return load_digits(return_X_y=True)
    from numkfs.datasets import load_dataset
    d = load_dataset(name)
    train = ~np.asarray(d.test_mask) if d.get("test_mask") is not None else slice(None)
    return np.asarray(d.data, float)[train], np.asarray(d.target)[train]

if case == "svc_grid":
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC
    X, y = data(arg)
    grid = {{"svc__C": np.logspace(-2, 3, 10), "svc__gamma": np.logspace(-4, 1, 10)}}
    gs = GridSearchCV(make_pipeline(StandardScaler(), SVC()), grid, cv=StratifiedKFold(5, shuffle=True, random_state=0))
    t = time.perf_counter(); c = time.process_time(); gs.fit(X, y)
    el, cpu = time.perf_counter() - t, time.process_time() - c
    print(json.dumps({{"seconds": el, "cpu": cpu, "info": "best CV accuracy %.3f" % gs.best_score_}}))
elif case == "knife_cv":
    from numkfs import KNIFEClassifierCV
    name, kw = arg
    X, y = data(name)
    KNIFEClassifierCV(n_grid=3, cv=2, random_state=0).fit(X[:60], y[:60])  # compile / load the cache
    t = time.perf_counter(); c = time.process_time(); est = KNIFEClassifierCV(random_state=0, **kw).fit(X, y)
    el, cpu = time.perf_counter() - t, time.process_time() - c
    print(json.dumps({{"seconds": el, "cpu": cpu, "info": "%d points, %d features selected, gamma_ %.3g, %s" % (
        est.path_.n_points, est.n_features_selected_, np.max(est.gamma_), "all converged" if est.converged_.all()
        else "%d points not converged" % (~est.converged_).sum())}}))
elif case == "colon_path":
    from numkfs.datasets import load_dataset
    from numkfs.methods.knife import knife_path
    d = load_dataset("colon")
    X = np.log2(np.asarray(d.data, float)); y = np.asarray(d.target)
    yp = np.where(y == np.unique(y)[1], 1.0, -1.0)
    knife_path(X[:20, :50], yp[:20], loss="squared_hinge", n_grid=3)
    out = []
    for seed in range(arg):
        idx = np.random.default_rng(seed).permutation(len(y))[:31]
        Xt = X[idx]; Xt = (Xt - Xt.mean(0)) / Xt.std(0)
        t = time.perf_counter()
        p = knife_path(Xt, yp[idx], loss="squared_hinge", n_grid=100, random_state=seed)
        out.append((time.perf_counter() - t, int(p.n_points), int(p.extra["n_iter"].sum())))
    ts = [o[0] for o in out]
    print(json.dumps({{"seconds": float(np.median(ts)), "min": min(ts), "max": max(ts),
                       "info": "min/median/max over %d splits; %d points; outer iterations %d-%d" % (
                           len(ts), out[0][1], min(o[2] for o in out), max(o[2] for o in out))}}))
elif case == "colon_raw_stages":
    # CPU seconds by stage (inclusive timers on the KNIFE problem's methods; a timer does not count
    # a call nested in one of its own): where the raw-colon path spends its time
    from numkfs.datasets import load_dataset
    from numkfs.methods.knife import knife_path
    from numkfs.methods.knife import _problem as P
    d = load_dataset("colon")
    X = np.asarray(d.data, float)
    knife_path(X[:20, :50], d.target[:20], loss="squared_hinge", n_grid=3)
    spent, depth, fits = {{}}, {{}}, []
    def timer(name, f):
        def wrapped(*a, **k):
            depth[name] = depth.get(name, 0) + 1
            c = time.process_time()
            try:
                return f(*a, **k)
            finally:
                depth[name] -= 1
                if depth[name] == 0:
                    spent[name] = spent.get(name, 0.0) + time.process_time() - c
        return wrapped
    real_fit = P._Knife.fit
    def fit(self, w, lambda2, **k):
        st = real_fit(self, w, lambda2, **k)
        fits.append(int(np.count_nonzero(np.asarray(w) > 0)))
        return st
    for name in ("w_step", "_lbfgsb_finish", "kernel_matrix", "alpha_step", "wstep_data"):
        setattr(P._Knife, name, timer(name, getattr(P._Knife, name)))
    P._Knife.fit = timer("fit", fit)
    import numkfs.solvers.native.knife_wstep as KW
    P.solve_knife_wstep = timer("box_qp", KW.solve_knife_wstep)
    c = time.process_time()
    p = knife_path(X, d.target, loss="squared_hinge", random_state=0)
    spent["total"] = time.process_time() - c
    spent["fits"] = len(fits)
    spent["fits_from_1000_features_or_more"] = sum(f >= 1000 for f in fits)
    print(json.dumps(spent))
elif case == "colon_raw_path":
    from numkfs.datasets import load_dataset
    from numkfs.methods.knife import knife_path
    d = load_dataset("colon")
    X = np.asarray(d.data, float)
    knife_path(X[:20, :50], d.target[:20], loss="squared_hinge", n_grid=3)
    t = time.perf_counter(); c = time.process_time()
    p = knife_path(X, d.target, loss="squared_hinge", random_state=0)
    el, cpu = time.perf_counter() - t, time.process_time() - c
    print(json.dumps({{"seconds": el, "cpu": cpu, "info": "%d points, %d converged" % (
        p.n_points, int(p.extra["converged"].sum()))}}))
"""


def run_case(case, arg, timeout):
    code = _CASE.format(root=os.path.dirname(HERE), case=case, arg=arg)
    t = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": np.inf, "info": f"not finished within {timeout:.0f} s (stopped)"}
    if out.returncode != 0:
        return {"seconds": np.nan, "info": "failed: " + out.stderr.strip().splitlines()[-1][:120]}
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["wall_with_startup"] = time.perf_counter() - t
    return r


def bench_targets(quick=False):
    rows = []
    load = os.getloadavg()[0]
    svc = {name: run_case("svc_grid", name, 3600) for name in ("breast_cancer", "vowel", "digits")}
    for name, r in svc.items():
        rows.append({"case": f"SVC grid, 100 pairs x 5 folds: {name}", "seconds": r["seconds"], "ratio": 1.0,
                     "target": "baseline", "info": r["info"]})
        print(rows[-1], flush=True)
    cases = [("breast_cancer", {}, "<= 3x"), ("breast_cancer", {"n_jobs": 2}, "<= n_jobs=1"),
             ("vowel", {"n_grid": 30}, "< 10x"), ("digits", {"n_grid": 30}, "< 10x")]
    limit = {"breast_cancer": 1800, "vowel": 1200, "digits": 2400}
    for name, kw, target in cases:
        r = run_case("knife_cv", (name, kw), limit[name])
        args = ", ".join(f"{k}={v}" for k, v in kw.items()) or "defaults"
        rows.append({"case": f"KNIFEClassifierCV({args}): {name}", "seconds": r["seconds"],
                     "ratio": r["seconds"] / svc[name]["seconds"], "target": target, "info": r["info"]})
        print(rows[-1], flush=True)
    r = run_case("colon_path", 3 if quick else 10, 3600)
    rows.append({"case": "knife_path, colon 31 x 2000 (half splits), squared hinge, n_grid=100",
                 "seconds": r["seconds"], "ratio": np.nan, "target": "< 10 s every split",
                 "info": f"min {r.get('min', np.nan):.1f} s, max {r.get('max', np.nan):.1f} s; " + r["info"]})
    print(rows[-1], flush=True)
    r = run_case("colon_raw_path", None, 1800)
    rows.append({"case": "knife_path, colon 62 x 2000 as given (unstandardised), squared hinge, default grid",
                 "seconds": r.get("cpu", r["seconds"]), "ratio": np.nan, "target": "<= 10 CPU s",
                 "info": f"CPU s (wall {r['seconds']:.1f} s); " + r["info"]})
    print(rows[-1], flush=True)
    load_after = os.getloadavg()[0]
    return rows, load, load_after


def bench_against_svc(name, cases, limit=1800):
    """KNIFEClassifierCV with each of ``cases`` ((keyword arguments, target) pairs) against the SVC
    grid on data set ``name``, in CPU seconds, each in a fresh process."""
    load = os.getloadavg()[0]
    svc = run_case("svc_grid", name, 3600)
    rows = [{"case": f"SVC grid, 100 pairs x 5 folds: {name}", "seconds": svc["cpu"], "ratio": 1.0,
             "target": "baseline", "info": f"{svc['info']}; CPU s (wall {svc['seconds']:.1f} s)"}]
    for kw, target in cases:
        r = run_case("knife_cv", (name, kw), limit)
        args = ", ".join(f"{k}={v}" for k, v in kw.items()) or "defaults"
        cpu = r.get("cpu", r["seconds"])
        rows.append({"case": f"KNIFEClassifierCV({args}): {name}", "seconds": cpu,
                     "ratio": cpu / svc["cpu"], "target": target,
                     "info": f"{r['info']}; CPU s (wall {r['seconds']:.1f} s, ratio {r['seconds'] / svc['seconds']:.1f})"})
        print(rows[-1], flush=True)
    return rows, load, os.getloadavg()[0]


#: The cases of ``--part breast_cancer`` and ``--part digits``.
SVC_CASES = {"breast_cancer": (({}, "<= 3x"), ({"gamma": None}, "former default (gamma=1/p)")),
             "digits": (({}, "<= 2x"),
                        ({"approximation": "nystroem"}, "the landmarks against the exact kernel"))}


def _stamp(part, load, load_after):
    """When and how a row was measured (its ``measured`` column)."""
    return (f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, load {load:.1f}-{load_after:.1f}, "
            f"`--part {part}`")


def _json_path(name):
    return os.path.join(HERE, "results", f"knife_speed_{name}.json")


def _load(name, default):
    path = _json_path(name)
    return json.load(open(path)) if os.path.exists(path) else default


def _save(name, data):
    os.makedirs(os.path.dirname(_json_path(name)), exist_ok=True)
    with open(_json_path(name), "w") as fh:
        json.dump(data, fh, indent=1, default=float)
        fh.write("\n")


def save_target_rows(rows, part, load, load_after):
    """Replace the rows of the targets table with the same ``case`` (append the new ones), each
    stamped with this run; the other rows keep their own run's stamp."""
    stamp = _stamp(part, load, load_after)
    kept = _load("targets", [])
    for row in rows:
        row = {**row, "measured": stamp}
        same = [i for i, old in enumerate(kept) if old["case"] == row["case"]]
        if same:
            kept[same[0]] = row
        else:
            kept.append(row)
    _save("targets", kept)


def _cell(value, fmt):
    if isinstance(value, str):
        return value
    try:
        return fmt.format(value)
    except (TypeError, ValueError):
        return str(value)


def table(rows, cols, fmt):
    head = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"
    body = ""
    for r in rows:
        body += "| " + " | ".join(_cell(r.get(c, ""), fmt.get(c, "{}")) for c in cols) + " |\n"
    return head + body


_STAGES = [("total", "the whole path"),
           ("fit", "the fits (path points, rejected refinement fits, the top search)"),
           ("w_step", "weight steps of the alternation (A and the box QP)"),
           ("box_qp", "  of which the box QP on the factor (`solve_knife_wstep`)"),
           ("_lbfgsb_finish", "L-BFGS-B finish (its kernels, α-steps and gradients)"),
           ("kernel_matrix", "kernels (alternation, line searches, finish)"),
           ("alpha_step", "α-steps (alternation and finish)")]


def render():
    """Rebuild ``benchmarks/results/knife_speed.md`` (the whole file) from the parts' JSON files."""
    out = ["# KNIFE speed\n",
           "Rebuilt by `python benchmarks/knife_speed.py --part PART` from `knife_speed_targets.json`, "
           "`knife_speed_colon_stages.json`, `knife_speed_select.json` and `knife_speed_numpy.json` (each part's last run; a row's "
           "`measured` column tells its run).  Machine: 2 cores shared with other sessions; timings are "
           "noisy, ratios are from one run.\n"]
    rows = _load("targets", [])
    if rows:
        out.append("## KNIFE against an SVC grid search\n\n"
                   "Each case in a fresh process (compile/cache load excluded by a warm-up fit); `ratio` = "
                   "seconds / the SVC grid search (100 (C, γ) pairs x 5 folds, standardised) on the same data "
                   "in the same run; `seconds` are CPU seconds where `info` says so, else wall seconds.\n")
        out.append(table(rows, ["case", "seconds", "ratio", "target", "info", "measured"],
                         {"seconds": "{:.1f}", "ratio": "{:.1f}"}))
    stages = _load("colon_stages", None)
    if stages:
        s = stages["spent"]
        body = [{"stage": label, "CPU_s": s.get(key, np.nan), "share": s.get(key, np.nan) / s["total"]}
                for key, label in _STAGES]
        out.append("## Where the raw-colon path spends its CPU\n\n"
                   f"`knife_path(colon.data, y, loss=\"squared_hinge\")`, default grid, one run with a CPU "
                   f"timer on each stage (inclusive; the timers slow it a little), {stages['measured']}.  "
                   f"{s['fits']} fits, {s['fits_from_1000_features_or_more']} of them from a state with 1000 "
                   "or more features (the plateau of the unstandardised data at w = 1, left at one jump that "
                   "the refinement brackets).\n")
        out.append(table(body, ["stage", "CPU_s", "share"], {"CPU_s": "{:.2f}", "share": "{:.0%}"}))
    sel = _load("select", None)
    if sel:
        out.append(render_select(sel))
    num = _load("numpy", None)
    if num:
        out.append("## numkfs against plain numpy (same algorithm, same iterations)\n\n" + num["header"] + "\n")
        for title, key, cols, fmt in _NUMPY_TABLES:
            if num.get(key):
                out.append(f"### {title}\n")
                out.append(table(num[key], cols, fmt))
        out.append("`method=\"auto\"` (numkfs.kernels.weighted) uses the Numba loops for the rbf kernel with at "
                   "most `AUTO_NUMBA_MAX_FEATURES` = 32 active features and BLAS otherwise.  Memory: a few "
                   "n x n arrays (kernel, Cholesky factor, line-search kernel) and n x p arrays, O(n² + np); an "
                   "n x n x p array would need the last column.\n")
    text = "\n".join(out)
    with open(os.path.join(HERE, "results", "knife_speed.md"), "w") as fh:
        fh.write(text)
    print(text)


_NUMPY_TABLES = [
    ("Fit", "fit", ["n", "p", "iters", "numkfs_s", "numpy_s", "speedup", "obj_rel_diff"],
     {"numkfs_s": "{:.3f}", "numpy_s": "{:.3f}", "speedup": "{:.1f}", "obj_rel_diff": "{:.1e}"}),
    ("Path (warm starts, the same grid for both, 3 iterations per point)", "path",
     ["n", "p", "points", "iters/point", "numkfs_s", "numpy_s", "speedup"],
     {"numkfs_s": "{:.3f}", "numpy_s": "{:.3f}", "speedup": "{:.1f}"}),
    ("Kernel forms: BLAS (GEMM + map) against Numba loops, milliseconds (best of several; serial up to "
     "n = 2000 like the fits)", "forms",
     ["n", "p", "kernel", "threads", "K_blas_ms", "K_numba_ms", "A_blas_ms", "A_numba_ms"],
     {k: "{:.2f}" for k in ("K_blas_ms", "K_numba_ms", "A_blas_ms", "A_numba_ms")}),
    ("Peak extra resident memory of a numkfs fit (fresh process, VmRSS sampled every 0.5 ms, minus the RSS "
     "before the fit)", "memory", ["n", "p", "extra_MiB", "n2_MiB", "np_MiB", "n2p_MiB"],
     {k: "{:.1f}" for k in ("extra_MiB", "n2_MiB", "np_MiB", "n2p_MiB")}),
]


def bench_colon_raw(repeats=2):
    """The raw-colon row of the targets table, the case run ``repeats`` times (fresh
    processes; the machine is shared): the median CPU seconds, each run's in ``info``; then one run
    with a CPU timer on each stage."""
    load = os.getloadavg()[0]
    runs = [run_case("colon_raw_path", None, 1800) for _ in range(repeats)]
    cpus = [r.get("cpu", r["seconds"]) for r in runs]
    row = {"case": "knife_path, colon 62 x 2000 as given (unstandardised), squared hinge, default grid",
           "seconds": float(np.median(cpus)), "ratio": np.nan, "target": "<= 10 CPU s",
           "info": "CPU s, median of %d runs (%s; wall %s s); %s" % (
               repeats, ", ".join(f"{c:.1f}" for c in cpus), ", ".join(f"{r['seconds']:.1f}" for r in runs),
               runs[-1]["info"])}
    stages = run_case("colon_raw_stages", None, 1800)
    return row, stages, load, os.getloadavg()[0]


# --------------------------------------------------------------------------
# part "select": the default select() by stage, against permutation importance in the same run


def select_stages(n, p, seed):
    """The default ``select(X, y)`` on the size simulation of ``benchmarks/peers.py``, one CPU timer
    per stage (exclusive: a stage's time excludes the stages nested in it), and the permutation
    importance recipe of the same script on the same data in the same process.  Returns a dict."""
    import warnings

    sys.path.insert(0, HERE)
    import peers

    import numkfs
    from numkfs.estimators import _knife_cv as KCV
    from numkfs.methods.knife import _fit as KF
    from numkfs.methods.knife import _path as KP

    X, y = peers.simulate(n, p, seed)
    from numkfs.estimators._knife_cv import AUTO_CV_MAX_SAMPLES
    n_cv = min(n, AUTO_CV_MAX_SAMPLES)  # the rows of the full-data path (select()'s default subsample)
    peers.warm_numkfs()
    spent, calls, stack = {}, {}, []
    ctx = {"pass": "first pass", "folds": {}, "fold": None}

    def timed_call(label, f, *a, **k):
        stack.append([label, time.process_time(), 0.0])
        try:
            return f(*a, **k)
        finally:
            lab, t0, child = stack.pop()
            dt = time.process_time() - t0
            spent[lab] = spent.get(lab, 0.0) + dt - child
            calls[lab] = calls.get(lab, 0) + 1
            if stack:
                stack[-1][2] += dt

    def where():
        return f"fold {ctx['fold']}" if ctx["fold"] is not None else "full-data"

    real = {"walk": KP.KNIFEGridWalk.walk, "_find_top": KP._find_top, "_best_start": KP._best_start,
            "_walk": KP._walk, "_auto_rounds": KF._auto_rounds, "refine_walk": KP.refine_walk,
            "refine": KCV._KNIFEPathCV._cv_refine,
            "folds": KCV._StagedFolds.__call__, "refit_all": KCV._KNIFEPathCV._cv_refit_all_rows}

    def walk(self, end):
        if self.X.shape[0] == n_cv:  # the full data's walk
            return timed_call(f"{ctx['pass']}: full-data λ2 = 0 start", real["walk"], self, end)
        folds = ctx["folds"].setdefault(ctx["pass"], {})
        ctx["fold"] = folds.setdefault(id(self), len(folds))
        try:
            return timed_call(f"{ctx['pass']}: fold {ctx['fold']} path", real["walk"], self, end)
        finally:
            ctx["fold"] = None

    def refine_walk(step, values, start, **kw):
        grid = {float(v) for v in values}
        log = []

        def timed_step(state, value):
            t0 = time.process_time()
            out = step(state, value)
            log.append((float(value), time.process_time() - t0))
            return out

        t0 = time.process_time()
        out = real["refine_walk"](timed_step, values, start, **kw)
        total = time.process_time() - t0
        kept = set(out[0])
        last = {v: i for i, (v, _) in enumerate(log)}
        inserted = sum(dt for i, (v, dt) in enumerate(log) if last[v] == i and v in kept and v not in grid)
        discarded = sum(dt for i, (v, dt) in enumerate(log) if last[v] != i or v not in kept)
        if ctx["fold"] is None and stack:  # the full-data walk: its refinement split off its own time
            for lab, dt in ((f"{ctx['pass']}: full-data path, inserted points", inserted),
                            (f"{ctx['pass']}: full-data path, fits discarded at support jumps", discarded)):
                spent[lab] = spent.get(lab, 0.0) + dt
                stack[-1][2] += dt
        calls_lab = f"{ctx['pass']}: {where()} points walked"
        calls[calls_lab] = calls.get(calls_lab, 0) + len(out[0])
        return out

    def refine(self, *a, **k):
        ctx["pass"] = "low-end pass"
        try:
            return timed_call("low-end pass: the rest", real["refine"], self, *a, **k)
        finally:
            ctx["pass"] = "first pass"

    KP.KNIFEGridWalk.walk = walk
    KP._find_top = lambda *a, **k: timed_call(f"{ctx['pass']}: full-data top search", real["_find_top"], *a, **k)
    KP._best_start = lambda *a, **k: timed_call(f"{ctx['pass']}: {where()} λ2 = 0 start", real["_best_start"],
                                                *a, **k)
    KF._auto_rounds = lambda *a, **k: timed_call(f"{ctx['pass']}: {where()} λ2 = 0 start, the scale's rounds",
                                                 real["_auto_rounds"], *a, **k)
    KP._walk = lambda *a, **k: timed_call(
        f"{ctx['pass']}: {'full-data path' if ctx['fold'] is None else 'fold %d path' % ctx['fold']}",
        real["_walk"], *a, **k)
    KP.refine_walk = refine_walk
    KCV._KNIFEPathCV._cv_refine = refine
    KCV._StagedFolds.__call__ = lambda *a, **k: timed_call(f"{ctx['pass']}: fold scoring and set-up",
                                                            real["folds"], *a, **k)
    KCV._KNIFEPathCV._cv_refit_all_rows = lambda *a, **k: timed_call("refit on every row (cv_max_samples)",
                                                                      real["refit_all"], *a, **k)
    import numkfs.relaxed as RX
    real_relaxed = RX.relaxed_choice
    RX.relaxed_choice = lambda *a, **k: timed_call("relaxed refit", real_relaxed, *a, **k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c0, t0 = time.process_time(), time.perf_counter()
        res = timed_call("select(): the rest", numkfs.select, X, y, random_state=seed)
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        c1 = time.process_time()
        perm, _ = peers.fit_select("permutation", X, y, "regression", 5, seed)
        perm_cpu = time.process_time() - c1
        # the same recipe on one OpenMP thread: on a loaded machine idle OpenMP threads spin, and the
        # threaded run's CPU seconds grow with the load, not with the work
        from threadpoolctl import threadpool_limits

        with threadpool_limits(1, user_api="openmp"):
            c1 = time.process_time()
            peers.fit_select("permutation", X, y, "regression", 5, seed)
            perm_cpu_1 = time.process_time() - c1
    est = res.estimator
    sel = np.flatnonzero(res.selected).tolist()
    path = res.path
    return {"n": n, "p": p, "seed": seed, "cpu": cpu, "wall": wall, "perm_cpu": perm_cpu, "perm_cpu_1": perm_cpu_1,
            "ratio": cpu / perm_cpu, "ratio_1": cpu / perm_cpu_1, "load": os.getloadavg()[0], "selected": sel, "perm_selected": np.asarray(perm).tolist(),
            "score": peers.score(sel, peers.TRUE), "perm_score": peers.score(perm, peers.TRUE),
            "spent": spent, "calls": calls, "n_points": int(path.n_points),
            "chosen": int(res.index), "approximation": str(est.approximation_),
            "n_components": getattr(est, "n_components_", None),
            "cv_rows": int(getattr(est, "cv_n_samples_", None) or n)}


def _stage_order(label):
    """Table order of a stage label of :func:`select_stages`."""
    keys = ["full-data λ2 = 0 start", "full-data top search", "full-data path", "inserted", "discarded",
            "fold 0", "fold 1", "fold 2", "fold 3", "fold 4", "fold scoring", "the rest"]
    pas = 0 if label.startswith("first pass") else 1 if label.startswith("low-end") else 2
    sub = next((i for i, k in enumerate(keys) if k in label), len(keys))
    return (pas, sub, "start" not in label, label)


def bench_select(sizes, seeds):
    """:func:`select_stages` for every (size, seed), each in a fresh process (its own timers)."""
    runs = []
    for n, p in sizes:
        for seed in seeds:
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--one-select", str(n), str(p),
                                  str(seed)], capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(out.stderr.strip()[-2000:])
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = runs[-1]
            print({k: r[k] for k in ("n", "p", "seed", "cpu", "perm_cpu", "ratio", "selected", "perm_selected")},
                  flush=True)
    return runs


def render_select(part):
    """The tables of part ``select``."""
    runs = part["runs"]
    out = ["## The default select() by stage, against permutation importance\n\n"
           "`select(X, y, random_state=seed)` on n rows of p standard normal features, y = 2 sin(x0) + x1² + "
           "exp(x2/2) + x3·x4 + N(0, 1) (`benchmarks/peers.py`'s size simulation), and in the same process "
           "on the same data the permutation importance of `HistGradientBoostingRegressor` (fitted on 70 % "
           "of the rows, 10 repeats on the other 30 %, a feature kept when its mean importance exceeds twice "
           "its standard deviation), by default and on one OpenMP thread (`threadpoolctl`; idle OpenMP threads "
           "spin on a loaded machine, so the threaded run's CPU seconds grow with the load; `load`: the "
           "1-minute load average after the run).  CPU seconds (`time.process_time`: every thread of the "
           f"process), Numba kernels warmed first; {part['note']}.\n"]
    summary = [{"n x p": f"{r['n']} x {r['p']}", "seed": r["seed"], "select_CPU_s": r["cpu"],
                "permutation_CPU_s": r["perm_cpu"], "ratio": r["ratio"],
                "permutation_CPU_s, 1 thread": r.get("perm_cpu_1", np.nan), "ratio, 1 thread": r.get("ratio_1", np.nan),
                "load": r.get("load", np.nan),
                "KNIFE true/false": f"{r['score']['true']}/{r['score']['false']}",
                "permutation true/false": f"{r['perm_score']['true']}/{r['perm_score']['false']}",
                "path points": r["n_points"], "chosen": r["chosen"],
                "kernel": f"{r['approximation']}" + (f", CV on {r['cv_rows']} rows" if r["cv_rows"] != r["n"]
                                                    else "")} for r in runs]
    cols = list(summary[0]) if summary else []
    out.append(table(summary, cols, {"select_CPU_s": "{:.1f}", "permutation_CPU_s": "{:.1f}", "ratio": "{:.1f}",
                                     "permutation_CPU_s, 1 thread": "{:.1f}", "ratio, 1 thread": "{:.1f}",
                                     "load": "{:.1f}"}))
    labels = sorted({lab for r in runs for lab in r["spent"]}, key=_stage_order)
    body = []
    for lab in labels:
        row = {"stage": lab}
        for r in runs:
            key = f"{r['n']}x{r['p']} s{r['seed']}"
            v = r["spent"].get(lab, 0.0)
            row[f"{key} CPU s"] = v
            row[f"{key} share"] = v / r["cpu"]
        body.append(row)
    total = {"stage": "total"}
    for r in runs:
        key = f"{r['n']}x{r['p']} s{r['seed']}"
        total[f"{key} CPU s"], total[f"{key} share"] = r["cpu"], 1.0
    body.append(total)
    out.append("Exclusive CPU seconds by stage (a stage's time excludes the stages nested in it; `fold k path` "
               "is that fold's warm-started walk along the full-data path's grid, `λ2 = 0 start` its first "
               "point, and `the scale's rounds` the refits within that point that follow `gamma=\"auto\"` (the "
               "scale 1 / the number of selected features) until the scale settles; `inserted points` and "
               "`fits discarded at support jumps` are the full-data path's "
               "refinement; `low-end pass` is the second pass below the grid's first positive point, when "
               "the rule chose λ2 = 0).\n")
    cols = ["stage"] + [c for r in runs for c in (f"{r['n']}x{r['p']} s{r['seed']} CPU s",
                                                  f"{r['n']}x{r['p']} s{r['seed']} share")]
    out.append(table(body, cols, {c: ("{:.0%}" if c.endswith("share") else "{:.2f}") for c in cols[1:]}))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a subset of the cases")
    ap.add_argument("--part", choices=["numpy", "targets", "breast_cancer", "digits", "colon_raw", "select", "render",
                                       "all"], default="all")
    ap.add_argument("--sizes", nargs="+", default=["4000x40"], help="--part select: NxP, e.g. 4000x40")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1], help="--part select: the seeds")
    ap.add_argument("--one-select", nargs=3, type=int, metavar=("N", "P", "SEED"), help=argparse.SUPPRESS)
    ap.add_argument("--exact-only", action="store_true",
                    help="--part digits: skip the landmarks case (about half an hour; its row keeps its last run)")
    args = ap.parse_args()
    if args.one_select:
        print(json.dumps(select_stages(*args.one_select), default=float))
        return
    if args.part == "select":
        import platform

        import numba

        load = os.getloadavg()[0]
        sizes = [tuple(int(v) for v in s.lower().split("x")) for s in args.sizes]
        runs = bench_select(sizes, args.seeds)
        machine = (f"{platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}, "
                   f"numba {numba.__version__}")
        note = (f"{machine}, load {load:.1f}-{os.getloadavg()[0]:.1f}; `python benchmarks/knife_speed.py "
                f"--part select --sizes {' '.join(args.sizes)} --seeds {' '.join(map(str, args.seeds))}`")
        _save("select", {"runs": runs, "note": note})
    if args.part == "colon_raw":
        row, stages, load, load_after = bench_colon_raw()
        print(row, flush=True)
        save_target_rows([row], "colon_raw", load, load_after)
        if "total" in stages:
            _save("colon_stages", {"spent": stages, "measured": _stamp("colon_raw", load, load_after)})
    if args.part in SVC_CASES:
        cases = [c for c in SVC_CASES[args.part] if not (args.exact_only and "approximation" in c[0])]
        rows, load, load_after = bench_against_svc(args.part, cases, limit=3600)
        save_target_rows(rows, args.part, load, load_after)
    if args.part in ("targets", "all"):
        rows, load, load_after = bench_targets(args.quick)
        save_target_rows(rows, "targets", load, load_after)
    if args.part in ("numpy", "all"):
        _save("numpy", bench_numpy(args.quick))
    render()


def bench_numpy(quick):
    """The numpy tables (the same iterations as numkfs's plain alternation)."""
    # the numpy translation runs the paper's plain alternation: numkfs runs the same iterations
    # (no extrapolation, no L-BFGS-B finish), so the ratio compares the arithmetic, not the algorithm
    import importlib

    km = importlib.import_module("numkfs.methods.knife._problem")  # the module switches
    km._EXTRAPOLATE, km._POLISH_AFTER = False, None
    load = os.getloadavg()[0]
    if quick:
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
    out = {"fit": [], "path": [], "forms": [], "memory": []}
    for n, p, base in fit_cases:
        out["fit"].append(bench_fit(n, p, n_iter, base))
        print(out["fit"][-1], flush=True)
    for n, p in path_cases:
        out["path"].append(bench_path(n, p, 20, 3))
        print(out["path"][-1], flush=True)
    out["forms"] = bench_forms(form_cases)
    out["memory"] = [bench_memory(n, p) for n, p in mem_cases]
    out["header"] = (f"{_stamp('numpy', load, os.getloadavg()[0])}.  rbf kernel, squared loss, λ1 = 1, "
                     f"λ2 = 0.02 n, {n_iter} outer iterations from the same start (tol = 0); both run with the "
                     "same BLAS thread count (1 up to n = 2000, like numkfs). `obj_rel_diff`: relative "
                     "difference of the final objectives (same iterates up to the inner solvers' tolerances). "
                     "numpy baseline skipped where it would take minutes (NaN).")
    return out


if __name__ == "__main__":
    main()
