"""KNIFE's first point under ``gamma="auto"``: the rounds alone against the restart at their scale.

``numkfs.select(X, y)`` (KNIFE, every default) with the first point of
``gamma="auto"`` fitted two ways, back to back in one process on the same
data:

* ``rounds``: the fit at γ = 1/p from w = 1, then refitted warm-started at
  1 / (features selected) until that count settles;
* ``restart`` (the default): the same, then once more from w = 1 at the
  scale the rounds settled on, and the rounds again from the union of both
  fits' weights (``numkfs.methods.knife._fit.AUTO_GAMMA_RESTART``).

Data: Friedman #1 with 100 noise features at 200 rows
(``make_friedman1(200, 105, noise=...)``, noise 0 and 1, seeds 0-2), where
the rounds lose the U-shaped x2, and the peers' simulations (seeds 0-4):
``make_sinusoid(100, 20)`` and ``(300, 20)``, ``make_friedman1(200, 15,
noise=1)``, ``make_classification(300, 30, n_informative=5,
n_redundant=0, shuffle=False)``, XOR 400 x 20 (``benchmarks/peers.py``) and
sin/square 300 x 30 (``benchmarks/selection_quality.py``).  A hit: every
true feature and at most one false one.  CPU: ``time.process_time()`` of
one ``select()``, both variants timed in the same minutes.

Usage (from the repository's root)::

    python benchmarks/knife_friedman105.py              # every data set
    python benchmarks/knife_friedman105.py --data f105n0 f105n1 --seeds 1
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from _common import markdown_table, save  # noqa: E402

warnings.simplefilter("ignore")

#: data set -> (label, seeds)
DATA = {
    "f105n0": ("Friedman #1 + 100 noise, 200 rows, noise 0", range(3)),
    "f105n1": ("Friedman #1 + 100 noise, 200 rows, noise 1", range(3)),
    "sin100": ("make_sinusoid(100, 20)", range(5)),
    "sin300": ("make_sinusoid(300, 20)", range(5)),
    "friedman1": ("Friedman #1 200 x 15, noise 1", range(5)),
    "classification": ("make_classification 300 x 30", range(5)),
    "xor": ("XOR 400 x 20", range(5)),
    "sinsq": ("sin/square 300 x 30", range(5)),
}
VARIANTS = {"rounds": False, "restart": True}


def data_set(name, seed):
    """``(X, y, true feature indices)``."""
    if name in ("f105n0", "f105n1"):
        from sklearn.datasets import make_friedman1

        X, y = make_friedman1(n_samples=200, n_features=105, noise=float(name[-1]), random_state=seed)
        return X, y, [0, 1, 2, 3, 4]
    if name in ("sin100", "sin300"):
        from numkfs.datasets import make_sinusoid

        X, y, t = make_sinusoid(int(name[3:]), 20, random_state=seed)
        return X, y, np.flatnonzero(t).tolist()
    if name == "sinsq":
        from selection_quality import sin_square

        X, y, t = sin_square(seed)
        return X, y, np.flatnonzero(t).tolist()
    import peers

    X, y, true, _ = peers.dataset(name, seed)
    return X, y, list(true)


def run(names, seeds=None):
    """One row per (data set, seed, variant): true and false counts, CPU seconds."""
    import numkfs
    from numkfs.methods.knife import _fit

    rng = np.random.default_rng(0)
    numkfs.select(rng.standard_normal((30, 3)), rng.standard_normal(30), n_grid=4)  # compile outside the timing
    rows = []
    for name in names:
        for seed in (DATA[name][1] if seeds is None else seeds):
            X, y, true = data_set(name, seed)
            for variant, restart in VARIANTS.items():
                _fit.AUTO_GAMMA_RESTART = restart
                t = time.process_time()
                sel = np.flatnonzero(numkfs.select(X, y).selected)
                cpu = time.process_time() - t
                n_true = int(np.isin(true, sel).sum())
                rows.append(dict(data=name, seed=seed, variant=variant, true=n_true, of=len(true),
                                 false=len(sel) - n_true, missed=[int(j) for j in true if j not in sel], cpu=cpu))
                print(rows[-1], flush=True)
    _fit.AUTO_GAMMA_RESTART = True
    return rows


def _summary(label, rows):
    """One summary row: hits, false features and CPU seconds of each variant."""
    cells = {v: [r for r in rows if r["variant"] == v] for v in VARIANTS}
    hits = [sum(r["true"] == r["of"] and r["false"] <= 1 for r in cells[v]) for v in VARIANTS]
    false = [sum(r["false"] for r in cells[v]) for v in VARIANTS]
    cpu = [sum(r["cpu"] for r in cells[v]) for v in VARIANTS]
    return [label, len(cells["rounds"]), *hits, *false, round(cpu[0], 1), round(cpu[1], 1), f"{cpu[1] / cpu[0]:.2f}"]


def tables(rows):
    """The summary per data set (and over all of them), then the table per seed."""
    names = list(dict.fromkeys(r["data"] for r in rows))
    summary = [_summary(DATA[name][0], [r for r in rows if r["data"] == name]) for name in names]
    summary.append(_summary("all", rows))
    per_seed = []
    for name in names:
        pairs = zip(*([r for r in rows if r["data"] == name and r["variant"] == v] for v in VARIANTS))
        for a, b in pairs:
            per_seed.append([DATA[name][0], a["seed"]]
                            + [f"{r['true']}/{r['of']} + {r['false']}" + (f" (misses {r['missed']})" if r["missed"] else "")
                               for r in (a, b)]
                            + [round(a["cpu"], 2), round(b["cpu"], 2)])
    head = ["data", "seeds", "hits, rounds", "hits, restart", "false, rounds", "false, restart",
            "CPU s, rounds", "CPU s, restart", "ratio"]
    return (markdown_table(head, summary) + "\n\nPer seed (true found/true + false):\n\n"
            + markdown_table(["data", "seed", "rounds", "restart", "CPU s, rounds", "CPU s, restart"], per_seed))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=list(DATA), choices=list(DATA))
    ap.add_argument("--seeds", nargs="+", type=int, default=None, help="default: each data set's seeds")
    a = ap.parse_args(argv)
    rows = run(a.data, a.seeds)
    body = ("`numkfs.select(X, y)` (KNIFE, every default), the first point of `gamma=\"auto\"` by the rounds "
            "alone and with the restart at their scale (the default); a hit is every true "
            "feature and at most one false one; CPU seconds of one `select()`, both timed back to back.\n\n"
            + tables(rows))
    save("knife_friedman105", "KNIFE's first point under gamma=\"auto\": the restart at the rounds' scale", body)


if __name__ == "__main__":
    main()
