"""HSIC p-values with a real-valued target against the alignments.

Usage: python benchmarks/hsic_pvalues.py [--baseline DIR [--baseline-label TEXT]]

``numkfs.hsic_pvalues(X, y)`` and ``feature_alignments(X, y)`` on the same
X (standard normal, 10 columns) and y = sin(x0) + 0.3 noise, at 2 x 10^4
and 2 x 10^5 rows; best wall and CPU seconds (``time.process_time``, all
threads) of interleaved rounds (both hit by the same phases of a shared
machine), and their ratios (target: at most 3).  With ``--baseline DIR``
(a source tree of an earlier commit, e.g. ``git archive main | tar -x -C
DIR``), the same ratios of that tree's numkfs first, in a subprocess, in
the same run (``--baseline-label``: how the table names it).  This tree's
is also timed in a subprocess with glibc's malloc keeping freed memory
(``RETAIN``): the page faults' share of the time (their counts per call
are in the table).  Then the
stages of the HSIC test at the same sizes: the target's pivoted Cholesky
factor (``numkfs.hsic._target_factor``), the statistic's sums over the
factor's r rows and the counts (the alignments' sums with r + 1 weight
vectors, fast Gauss transform), and the null variance's row moments
(``numkfs.kernels.rowsums.rbf_row_moments``).
``trust.py`` section 3 has the calibration of the same p-values.

The numkfs timed is this tree's (its root goes first on ``sys.path``),
whatever is installed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":
    ROOT = sys.argv[sys.argv.index("--root") + 1] if "--root" in sys.argv else os.path.dirname(HERE)
    sys.path.insert(0, os.path.abspath(ROOT))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

from _common import best_time, markdown_table, save  # noqa: E402

SIZES = (20_000, 200_000)
P = 10
ROUNDS = 5


def data(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, np.sin(X[:, 0]) + 0.3 * rng.standard_normal(n)


def _faulting(fn, faults):
    """``fn`` that appends the page faults (minor, of the whole process) of each call to ``faults``."""
    import resource

    def run():
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        fn()
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    return run


def ratio_rows():
    """(n, p, hsic wall, alignments wall, ratio, hsic CPU, alignments CPU, ratio, hsic page faults,
    alignments page faults) per size; page faults: the median per call (fresh pages the kernel maps
    in, a few microseconds of CPU each)."""
    from numkfs import hsic_pvalues
    from numkfs.kernels.alignment import feature_alignments

    X, y = data(3000, 3)
    hsic_pvalues(X, y), feature_alignments(X, y)  # compile first
    rows = []
    for n in SIZES:
        X, y = data(n, P)
        faults = [[], []]
        fns = [_faulting(lambda: hsic_pvalues(X, y), faults[0]), _faulting(lambda: feature_alignments(X, y), faults[1])]
        wall, cpu = [np.inf, np.inf], [np.inf, np.inf]
        for _ in range(ROUNDS):
            for i, fn in enumerate(fns):
                w, c, _ = best_time(fn, min_repeat=1, budget=0.3, cpu=True)
                wall[i], cpu[i] = min(wall[i], w), min(cpu[i], c)
        rows.append((n, P, wall[0], wall[1], wall[0] / wall[1], cpu[0], cpu[1], cpu[0] / cpu[1],
                     int(np.median(faults[0])), int(np.median(faults[1]))))
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


def stage_rows():
    from numkfs.hsic import RTOL, VAR_RTOL, _target_factor
    from numkfs.kernels.alignment import dense_stats, rbf_sums_traces, resolve_gamma_given_var

    rows = []
    for n in SIZES:
        X, y = data(n, P)
        t_f, (W, _) = best_time(_target_factor, y, "auto", n)
        st = dense_stats(X)
        g = resolve_gamma_given_var(X, None, st[1])
        t_s, _ = best_time(rbf_sums_traces, X, g, W[:-1], "auto", RTOL, st, VAR_RTOL, W)
        rows.append((n, P, W.shape[0] - 1, t_f, t_s))
        print(rows[-1], file=sys.stderr, flush=True)
    return rows


TOLS = (1e-6, 1e-5, 1e-4)
N_FULL = 2000


def _full_kernel_pvalues(X, y):
    """The gamma p-values of hsic_test with the full n x n Gaussian target kernel (numpy)."""
    from scipy import stats

    n = len(y)
    v = (y - y.mean()) / y.std()
    Hc = np.eye(n) - 1.0 / n
    Lc = Hc @ np.exp(-((v[:, None] - v[None, :]) ** 2)) @ Hc
    off = ~np.eye(n, dtype=bool)
    AL = np.sum(Lc[off] ** 2) / (n * (n - 1))
    p = []
    for i in range(X.shape[1]):
        x = X[:, i]
        Kc = Hc @ np.exp(-((x[:, None] - x[None, :]) ** 2) / x.var()) @ Hc
        mu = np.trace(Kc) * np.trace(Lc) / (n * (n - 1) ** 2)
        var = 2 * (n - 4) * (n - 5) / (n * (n - 1) * (n - 2) * (n - 3)) * np.sum(Kc[off] ** 2) / (n * (n - 1)) * AL
        p.append(stats.gamma.sf(np.sum(Kc * Lc) / n**2, mu**2 / var, scale=var / mu))
    return np.array(p)


def tol_rows():
    """Per target tolerance: the factor's rank at 2e5 rows, the CPU ratio to the
    alignments there, and the largest relative change of the p-values against
    the full Gaussian target kernel at N_FULL rows (three targets, six columns)."""
    import numkfs.hsic as H
    from numkfs import hsic_pvalues
    from numkfs.kernels.alignment import feature_alignments

    keep = H.TARGET_TOL
    rng = np.random.default_rng(1)
    Xs = np.c_[rng.standard_normal((N_FULL, 4)), rng.standard_t(3, N_FULL), rng.uniform(size=N_FULL)]
    targets = {"sin(x0) + 0.3 N(0,1)": np.sin(Xs[:, 0]) + 0.3 * rng.standard_normal(N_FULL),
               "N(0,1), independent": rng.standard_normal(N_FULL),
               "t(2), independent": rng.standard_t(2, N_FULL)}
    full = {k: _full_kernel_pvalues(Xs, y) for k, y in targets.items()}
    X, y = data(SIZES[-1], P)
    cpu = {}
    try:
        for _ in range(ROUNDS):
            for tol in TOLS + ("alignments",):
                if tol != "alignments":
                    H.TARGET_TOL = tol
                fn = (lambda: feature_alignments(X, y)) if tol == "alignments" else (lambda: hsic_pvalues(X, y))
                _, c, _ = best_time(fn, min_repeat=1, budget=0.3, cpu=True)
                cpu[tol] = min(cpu.get(tol, np.inf), c)
        rows = []
        for tol in TOLS:
            H.TARGET_TOL = tol
            r = H._target_factor(y, "auto", len(y))[0].shape[0] - 1
            dev = 0.0
            for k, t in targets.items():
                pk, ok = hsic_pvalues(Xs, t), full[k] > 0  # the dependent column: 0 in both
                assert np.all(pk[~ok] == 0.0)
                dev = max(dev, float(np.max(np.abs(pk[ok] - full[k][ok]) / full[k][ok])))
            rows.append((tol, r, cpu[tol], cpu[tol] / cpu["alignments"], dev))
            print(rows[-1], file=sys.stderr, flush=True)
    finally:
        H.TARGET_TOL = keep
    return rows


#: glibc malloc settings under which freed memory stays with the process
#: (no trimming of the heap, no fresh mapping of large blocks): the same
#: test without the page faults of memory mapped in afresh at each call.
RETAIN = {"MALLOC_TRIM_THRESHOLD_": "4000000000", "MALLOC_MMAP_THRESHOLD_": "1000000000"}


def baseline_rows(root, extra_env=None):
    """``ratio_rows`` of the numkfs in ``root``, in a subprocess (environment plus ``extra_env``)."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(root), **(extra_env or {}))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", root, "--ratios-json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return [tuple(r) for r in json.loads(out)]


def main():
    if "--ratios-json" in sys.argv:
        print(json.dumps(ratio_rows()))
        return
    base = None
    if "--baseline" in sys.argv:
        root = sys.argv[sys.argv.index("--baseline") + 1]
        label = (sys.argv[sys.argv.index("--baseline-label") + 1] if "--baseline-label" in sys.argv
                 else os.path.basename(os.path.normpath(root)))
        base = [(f"before ({label})",) + r for r in baseline_rows(root)]
    rows = [("this tree",) + r for r in ratio_rows()]
    rows += [("this tree, malloc keeping its memory",) + r for r in baseline_rows(os.path.dirname(HERE), RETAIN)]
    stages = stage_rows()
    tols = tol_rows()
    head = ["code", "n", "p", "hsic_pvalues wall s", "feature_alignments wall s", "ratio wall",
            "hsic_pvalues CPU s", "feature_alignments CPU s", "ratio CPU", "hsic_pvalues page faults",
            "feature_alignments page faults"]
    body = (
        "X standard normal, y = sin(x0) + 0.3 N(0, 1); best of 5 interleaved rounds, wall seconds and CPU "
        "seconds of all threads (numkfs.hsic_pvalues, feature_alignments on the same X, y; method='auto': the "
        "fast Gauss transform); page faults: the median number per call of the process's minor page faults "
        "(fresh pages mapped in, about 4 microseconds of CPU each on this machine); 'malloc keeping its memory': "
        "this tree in a subprocess with MALLOC_TRIM_THRESHOLD_=4e9 and MALLOC_MMAP_THRESHOLD_=1e9 (glibc), so "
        "that freed memory is reused rather than returned and mapped in again at the next call"
        + (", the earlier tree's in a subprocess just before this tree's" if base else "")
        + ".\n\n" + markdown_table(head, (base or []) + rows)
        + "\n\n## Stages of the HSIC test (this tree)\n\n"
        "r: rows of the target's pivoted Cholesky factor (trace tolerance numkfs.hsic.TARGET_TOL times n); the "
        "statistic's sums carry r + 1 weight vectors through the fast Gauss transform where the alignments carry "
        "2, and the null variance's row moments are taken on the same boxes (one pass). Wall seconds.\n\n"
        + markdown_table(["n", "p", "r", "target factor s", "statistic sums and row moments s"], stages)
        + "\n\n## The target factor's tolerance\n\n"
        f"Trace tolerance of the target's pivoted Cholesky factor (times n): its rank r on the {SIZES[-1]} x {P} "
        "data above, hsic_pvalues' CPU seconds there and their ratio to feature_alignments' (best of 5 interleaved "
        f"rounds, this run), and the largest relative change of the p-values against the same test with the full "
        f"n x n Gaussian target kernel (numpy) at {N_FULL} rows: columns 4 N(0,1), t(3), U(0,1); targets "
        "sin(x0) + 0.3 N(0,1), an independent N(0,1) and an independent t(2) (the p-values above 0; the "
        "dependent column's is 0 in both).\n\n"
        + markdown_table(["tolerance", "r", "hsic_pvalues CPU s", "ratio to alignments CPU",
                          "max relative p-value change vs full kernel"], tols)
    )
    save("hsic_pvalues", "HSIC p-values with a real-valued target against the alignments", body)


if __name__ == "__main__":
    main()
