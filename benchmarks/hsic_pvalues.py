"""HSIC p-values with a real-valued target against the alignments (issue #43, item 5).

Usage: python benchmarks/hsic_pvalues.py

``numkfs.hsic_pvalues(X, y)`` and ``feature_alignments(X, y)`` on the same
X (standard normal, 10 columns) and y = sin(x0) + 0.3 noise, at 2 x 10^4
and 2 x 10^5 rows; wall seconds, best of interleaved rounds (both hit by
the same phases of a shared machine), and the ratio (target: at most 3).
Then the stages of the HSIC test at the same sizes: the target's pivoted
Cholesky factor (``numkfs.hsic._target_factor``), the statistic's sums over
the factor's r columns and the counts (the alignments' sums with r + 1
weight vectors, fast Gauss transform), and the null variance's row moments
(``numkfs.kernels.rowsums.rbf_row_moments``).  ``trust.py`` section 3 has
the calibration of the same p-values.
"""
from __future__ import annotations

import numpy as np

from _common import best_time, best_times, markdown_table, save

from numkfs import hsic_pvalues
from numkfs.hsic import RTOL, VAR_RTOL, _target_factor
from numkfs.kernels.alignment import _dense_stats, _rbf_sums_traces, _resolve_gamma, feature_alignments
from numkfs.kernels.rowsums import rbf_row_moments


def data(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, np.sin(X[:, 0]) + 0.3 * rng.standard_normal(n)


def main():
    X, y = data(3000, 3)
    hsic_pvalues(X, y), feature_alignments(X, y)  # compile first
    rows, stages = [], []
    for n in (20_000, 200_000):
        p = 10
        X, y = data(n, p)
        t_h, t_a = best_times([lambda: hsic_pvalues(X, y), lambda: feature_alignments(X, y)], rounds=5)
        rows.append((n, p, t_h, t_a, t_h / t_a))
        t_f, (ZT, _) = best_time(_target_factor, y, "auto", n)
        st = _dense_stats(X)
        g = _resolve_gamma(X, None, st[1])
        t_s, _ = best_time(_rbf_sums_traces, X, g, ZT, "auto", RTOL, st)
        t_r, _ = best_time(lambda: rbf_row_moments(X, g, fgt=True, rtol=VAR_RTOL))
        stages.append((n, p, ZT.shape[0], t_f, t_s, t_r))
        print(rows[-1], stages[-1], flush=True)
    body = (
        "X standard normal, y = sin(x0) + 0.3 N(0, 1); wall seconds, best of 5 interleaved rounds "
        "(numkfs.hsic_pvalues, feature_alignments on the same X, y; method='auto': the fast Gauss transform).\n\n"
        + markdown_table(["n", "p", "hsic_pvalues s", "feature_alignments s", "ratio"], rows)
        + "\n\n## Stages of the HSIC test\n\n"
        "r: columns of the target's pivoted Cholesky factor (trace tolerance 1e-6 n); the statistic's sums carry "
        "r + 1 weight vectors through the fast Gauss transform where the alignments carry 2.\n\n"
        + markdown_table(["n", "p", "r", "target factor s", "statistic sums s", "row moments s"], stages)
    )
    save("hsic_pvalues", "HSIC p-values with a real-valued target against the alignments (issue #43)", body)


if __name__ == "__main__":
    main()
