"""The garrote on wide data read from a rounded CSV: 30 x 3,000.

X and y are written with ``%.4g`` (4 significant digits, as a spreadsheet or
``np.savetxt(fmt="%.4g")`` writes them) and read back; each row of the table
is ``select(X, y, method="garrote", cv=3)`` on the data at full precision
and on the rounded copy, in CPU seconds of this process, with the number of
solver fallbacks (numkfs warnings naming a solver) and the support found.

Two targets: the 5 true features of ``garrote_wide.py`` with noise (sd 0.5),
and the noise-free y = 3 x0 - 2 x1 + 1.5 x2, whose low end on a 20-row fold
(rank 19) is a flat face of the berHu problem.  The target is the
rounded data's time at most 10 times the full-precision time.

Usage: ``python benchmarks/garrote_rounded.py``; writes
``benchmarks/results/garrote_rounded.md``.
"""
from __future__ import annotations

import io
import time
import warnings

import numpy as np
from _common import markdown_table, save

from numkfs import select

N, P = 30, 3000


def make_data(kind, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, P))
    if kind == "noisy":
        beta = np.zeros(P)
        beta[:5] = [3.0, -2.0, 2.0, 1.5, -1.5]
        return X, X @ beta + 0.5 * rng.standard_normal(N)
    return X, 3 * X[:, 0] - 2 * X[:, 1] + 1.5 * X[:, 2]


def rounded(X, y):
    """X and y through a ``%.4g`` CSV and back."""
    buf = io.StringIO()
    np.savetxt(buf, np.column_stack([X, y]), fmt="%.4g", delimiter=",")
    data = np.loadtxt(io.StringIO(buf.getvalue()), delimiter=",")
    return data[:, :-1], data[:, -1]


def run(X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = time.process_time()
        res = select(X, y, method="garrote", cv=3, random_state=0)
        cpu = time.process_time() - t
    fallbacks = sum("solver" in str(w.message) for w in caught)
    return cpu, fallbacks, np.flatnonzero(res.selected).tolist()


def main():
    select(*make_data("noisy"), method="garrote", cv=3, random_state=0)  # compile once
    rows = []
    for kind in ("noisy", "noise-free"):
        X, y = make_data(kind)
        full = run(X, y)
        rnd = run(*rounded(X, y))
        rows.append([kind, full[0], rnd[0], rnd[0] / full[0], f"{full[1]} / {rnd[1]}",
                     str(full[2][:8]), str(rnd[2][:8])])
    body = markdown_table(["y", "full precision (CPU s)", "rounded %.4g (CPU s)", "ratio",
                           "fallbacks (full / rounded)", "support (full)", "support (rounded)"], rows)
    save("garrote_rounded", "Garrote on rounded wide data (30 x 3,000, select(..., cv=3))", body)


if __name__ == "__main__":
    main()
