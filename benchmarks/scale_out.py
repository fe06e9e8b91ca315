"""Scale out: per-feature alignments, screening and the lp-KTA path on a Dask cluster.

Cases (n = 800 samples):
(a) 1,000,000 sparse binary features (1 % density);
(b) 200,000 dense continuous features (``--dense-features`` to change).
X is generated block by block ON THE WORKERS (a dask array whose every
column chunk comes from its own seeded generator), so it never exists whole
in the client.  Five features per case carry the label (sanity check: the
screening must rank them first).  For each case:

* cluster: ``feature_alignments_blocked`` (generation included, as a real
  pipeline reading blocks would), then screening to the top 100 features,
  and (sparse case) the lp-KTA path with 11 values of p;
* the same alignments in-process on the whole X (generated in the client,
  generation timed separately), with every Numba thread;
* peak memory: RSS of each worker sampled every 20 ms by a thread inside the
  worker (psutil), above the worker's idle RSS after warm-up; the in-process
  run is sampled the same way.  Compared with the size of X.

Then the thread policy on 2 cores: alignments of a dense 800 x 3,000 block
set with joblib n_jobs in {1, 2} x Numba threads in {1, 2}.

Usage: python benchmarks/scale_out.py [--quick] [--dense-features D] [--scheduler tcp://host:8786]
Writes benchmarks/results/scale_out.md (not in --quick mode or with --scheduler).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(__file__))
from _common import markdown_table, save  # noqa: E402

N = 800
SEED = 12345
N_SIGNAL = 5


# ----------------------------------------------------------------------------
# data generated block by block (the same function on the workers and in the client)


def labels(n=N, seed=SEED):
    return np.where(np.random.default_rng([seed, 0]).random(n) < 0.5, -1.0, 1.0)


def dense_block(j, n, width, seed=SEED):
    rng = np.random.default_rng([seed, 1, j])
    B = rng.normal(size=(n, width)) * rng.uniform(0.5, 2.0, width)
    if j == 0:
        y = labels(n, seed)
        B[:, :N_SIGNAL] += 0.8 * y[:, None]
    return B


def sparse_block(j, n, width, density, seed=SEED):
    rng = np.random.default_rng([seed, 2, j])
    k = rng.binomial(n * width, density)  # positions drawn with replacement, duplicates merged
    rows, cols = rng.integers(0, n, k), rng.integers(0, width, k)
    B = sp.csc_matrix((np.ones(k), (rows, cols)), shape=(n, width))
    B.data[:] = 1.0
    if j == 0:
        y = labels(n, seed)
        B = B.tolil()
        for c in range(N_SIGNAL):
            B[:, c] = ((y > 0) & (rng.random(n) < 0.3)).astype(float)[:, None]
        B = B.tocsc()
    return B


def dask_matrix(kind, d, chunk, density=0.01):
    import dask
    import dask.array as da

    widths = [min(chunk, d - s) for s in range(0, d, chunk)]
    meta = sp.csc_matrix((0, 0)) if kind == "sparse" else np.empty((0, 0))
    parts = []
    for j, w in enumerate(widths):
        if kind == "sparse":
            blk = dask.delayed(sparse_block, pure=True)(j, N, w, density)
        else:
            blk = dask.delayed(dense_block, pure=True)(j, N, w)
        parts.append(da.from_delayed(blk, shape=(N, w), dtype=float, meta=meta))
    return da.concatenate(parts, axis=1), widths


def local_matrix(kind, widths, density=0.01):
    if kind == "sparse":
        return sp.hstack([sparse_block(j, N, w, density) for j, w in enumerate(widths)], format="csc")
    return np.hstack([dense_block(j, N, w) for j, w in enumerate(widths)])


# ----------------------------------------------------------------------------
# RSS sampling (runs inside each worker through client.run, and in the client)

def start_sampler(store, interval=0.02):
    """Sample this process's RSS in a thread; state kept on ``store`` (the worker object)."""
    import psutil

    proc = psutil.Process()
    state = {"stop": False, "base": proc.memory_info().rss, "peak": proc.memory_info().rss}

    def loop():
        while not state["stop"]:
            state["peak"] = max(state["peak"], proc.memory_info().rss)
            time.sleep(interval)

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    store._numkfs_rss = (state, t)
    return state["base"]


def stop_sampler(store):
    state, t = store._numkfs_rss
    state["stop"] = True
    t.join()
    return state["base"], state["peak"]


def start_on_worker(dask_worker):
    return start_sampler(dask_worker)


def stop_on_worker(dask_worker):
    return stop_sampler(dask_worker)


class _Store:
    pass


def warm_worker():
    """Import and load the cached Numba kernels once (as a long-lived worker would)."""
    from numkfs.kernels.alignment import feature_alignments

    rng = np.random.default_rng(0)
    y = np.where(rng.random(600) < 0.5, -1, 1)
    feature_alignments(rng.normal(size=(600, 3)), y)
    feature_alignments(sp.random(600, 3, density=0.1, format="csc", random_state=0), y)
    return True


MB = 2.0**20


# ----------------------------------------------------------------------------
# runs


def run_case(client, kind, d, chunk, density, lpkta, screen):
    from numkfs.distributed import feature_alignments_blocked, lpkta_path_blocked, screen_features, take_features
    from numkfs.kernels.alignment import feature_alignments
    from numkfs.methods.lpkta import default_p_grid

    y = labels()
    Xd, widths = dask_matrix(kind, d, chunk, density)
    res = {"case": f"{kind} {N} x {d:,}" + (f" ({density:.0%})" if kind == "sparse" else ""),
           "blocks": f"{len(widths)} x {chunk:,}"}

    client.run(start_on_worker)
    t0 = time.perf_counter()
    a = feature_alignments_blocked(Xd, y)
    res["cluster_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if screen:  # the public screening call (computes the alignments again) + fetching the columns
        idx = screen_features(Xd, y, 100)
    else:  # dense: top 100 from the alignments above, fetch only
        idx = np.lexsort((np.arange(d), -a))[:100]
    Xk = take_features(Xd, idx)
    res["screen_s"] = time.perf_counter() - t0
    if lpkta:
        t0 = time.perf_counter()
        path = lpkta_path_blocked(Xd, y, grid=default_p_grid(2.0, 1.0, 0.1))
        res["lpkta_s"] = time.perf_counter() - t0
        res["lpkta_selected_at_p1"] = int(path.n_selected()[-1])
    mem = client.run(stop_on_worker)
    res["worker_peak_MB"] = max(p for _, p in mem.values()) / MB
    res["worker_growth_MB"] = max(p - b for b, p in mem.values()) / MB
    res["signal_top"] = bool(set(idx[:N_SIGNAL].tolist()) == set(range(N_SIGNAL)))
    res["Xk_shape"] = Xk.shape

    t0 = time.perf_counter()
    X = local_matrix(kind, widths, density)
    res["local_gen_s"] = time.perf_counter() - t0
    if kind == "sparse":
        res["X_MB"] = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / MB
        res["X_dense_MB"] = N * d * 8 / MB
    else:
        res["X_MB"] = res["X_dense_MB"] = X.nbytes / MB
    store = _Store()
    base = start_sampler(store)
    t0 = time.perf_counter()
    a_ref = feature_alignments(X, y)
    res["inproc_s"] = time.perf_counter() - t0
    _, peak = stop_sampler(store)
    res["inproc_growth_MB"] = (peak - base) / MB
    res["max_rel_diff"] = float(np.max(np.abs(a - a_ref) / np.maximum(np.abs(a_ref), 1e-300)))
    res["identical"] = bool(np.array_equal(a, a_ref))
    # the same in-memory X through the blocked function (no dask: one block after the other)
    base = start_sampler(store)
    t0 = time.perf_counter()
    a_blk = feature_alignments_blocked(X, y, block_size=chunk)
    res["inproc_blocked_s"] = time.perf_counter() - t0
    _, peak = stop_sampler(store)
    res["inproc_blocked_growth_MB"] = (peak - base) / MB
    res["identical"] &= bool(np.array_equal(a_blk, a_ref))
    del X
    return res


def _aligned_with_threads(Xb, y, threads):
    import numba

    from numkfs.kernels.alignment import feature_alignments

    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return feature_alignments(Xb, y)


def thread_policy(d, repeat):
    import joblib

    from numkfs.distributed import map_feature_blocks
    from numkfs.model_selection import numba_threads_for

    X = dense_block(0, N, d)
    y = labels()
    rows = []
    ref = None
    for n_jobs in (1, 2):
        for threads in (1, 2):
            def run():
                # loky caps NUMBA_NUM_THREADS in its workers to cores // n_jobs (the same policy);
                # inner_max_num_threads lifts the cap to measure oversubscription
                with joblib.parallel_config(backend="loky", inner_max_num_threads=threads):
                    return map_feature_blocks(_aligned_with_threads, X, block_size=d // 4, n_jobs=n_jobs,
                                              y=y, threads=threads)
            run()  # warm-up (worker start, kernel load)
            ts = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                out = run()
                ts.append(time.perf_counter() - t0)
            ref = out if ref is None else ref
            assert np.array_equal(out, ref)
            policy = "<- policy" if threads == (numba_threads_for(n_jobs) if n_jobs > 1 else os.cpu_count()) else ""
            rows.append([n_jobs, threads, n_jobs * threads, float(np.median(ts)), policy])
    t11 = rows[0][3]
    for r in rows:
        r.insert(4, t11 / r[3])
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dense-features", type=int, default=200_000)
    ap.add_argument("--sparse-features", type=int, default=1_000_000)
    ap.add_argument("--scheduler", default=None, help="address of an existing cluster (tcp://host:8786)")
    args = ap.parse_args(argv)
    if args.quick:
        args.dense_features, args.sparse_features = 4_000, 50_000
    from distributed import Client, LocalCluster

    if args.scheduler:
        client, cluster = Client(args.scheduler), None
    else:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=40)
        client = Client(cluster)
    t0 = time.perf_counter()
    client.run(warm_worker)
    warm_worker()
    print(f"workers ready and warm in {time.perf_counter() - t0:.1f} s", flush=True)

    cases = [("sparse", args.sparse_features, 50_000 if not args.quick else 10_000, 0.01, True),
             ("dense", args.dense_features, 2_000 if not args.quick else 500, None, False)]
    results = []
    for kind, d, chunk, dens, lp in cases:
        r = run_case(client, kind, d, chunk, dens or 0.01, lp, lp)
        print(r, flush=True)
        results.append(r)
    client.close()
    if cluster is not None:
        cluster.close()

    tp_rows = thread_policy(1_000 if args.quick else 3_000, 1 if args.quick else 5)

    headers = ["case", "blocks", "cluster: alignments (s, incl. generation)", "in-process alignments (s)",
               "in-process generation (s)", "in-process, blocked (s)", "top-100: screen + fetch (sparse) / fetch (dense) (s)", "worker peak RSS (MB)",
               "worker RSS growth (MB)", "in-process RSS growth (MB)", "in-process blocked RSS growth (MB)", "X (MB)", "X dense (MB)",
               "max rel. diff", "bit-identical (cluster, blocked vs in-process)", "signal ranked top"]
    rows = [[r["case"], r["blocks"], r["cluster_s"], r["inproc_s"], r["local_gen_s"], r["inproc_blocked_s"], r["screen_s"],
             r["worker_peak_MB"], r["worker_growth_MB"], r["inproc_growth_MB"], r["inproc_blocked_growth_MB"], r["X_MB"], r["X_dense_MB"],
             r["max_rel_diff"], r["identical"], r["signal_top"]] for r in results]
    body = ["Cluster: `LocalCluster(n_workers=2, threads_per_worker=1, processes=True)` on this "
            "2-core machine (Numba: 1 thread per worker by the policy); in-process: the whole X in "
            "memory, 2 Numba threads. The cluster time includes generating X on the workers; the "
            "in-process generation is listed separately. Machine shared with other jobs (load ~10 on "
            "2 cores): compare ratios within this run.", "", markdown_table(headers, rows), ""]
    lp = [r for r in results if "lpkta_s" in r]
    if lp:
        body += [f"lp-KTA path (11 values of p) on the sparse case, alignments on the cluster: "
                 f"{lp[0]['lpkta_s']:.1f} s; {lp[0]['lpkta_selected_at_p1']} features selected at p = 1.", ""]
    body += [
        "Reading the table: *worker peak RSS* is the whole worker process (Python, numpy, scipy, "
        "Numba kernels, dask: about 270-300 MB idle); *growth* is above the idle worker after warm-up. "
        "Per worker, memory holds a few blocks (dense: 800 x 2,000 x 8 B = 12.8 MB each; sparse: "
        "~5 MB), never X. *In-process RSS growth* is above the process holding X: `feature_alignments` "
        "on a dense X makes transposed/scaled copies and a variance temporary (about 3 x X); "
        "`feature_alignments_blocked` on the same in-memory X (no dask) gives the identical result "
        "with the memory of one block.", ""]
    for r in results:
        per_feat = r["cluster_s"] / int(r["case"].split(" x ")[1].split()[0].replace(",", ""))
        body.append(f"- {r['case']}: {per_feat * 1e6:.2f} us per feature on 2 loaded cores "
                    f"(cluster, generation included).")
    body += ["", "## Thread policy (alignments, dense 800 x "
             f"{1_000 if args.quick else 3_000:,}, 4 blocks, joblib loky workers)", "",
             markdown_table(["n_jobs", "Numba threads", "threads in all", "time (s)", "speed-up vs 1x1", ""],
                            tp_rows), ""]
    text = "\n".join(body)
    if args.quick or args.scheduler:
        print(text)
    else:
        save("scale_out", "Scale out: blocked alignments on a Dask cluster", text)


if __name__ == "__main__":
    main()
