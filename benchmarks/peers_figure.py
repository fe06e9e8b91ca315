"""The figure of the "Choosing a selector" page: hits against CPU seconds.

One point per selector and data set of ``benchmarks/peers.py``'s part
``simulations``, read from ``benchmarks/results/peers_simulations.json``:
the share of seeds with a hit (every true feature, at most one false one)
against the mean CPU seconds per data set (log scale).  Points of equal
share are spread a little vertically, one offset per selector, so that none
hides another.  Writes ``docs/_static/peers_hits_cpu.png``.

Usage::

    python benchmarks/peers_figure.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import DATASET_LABELS, DATASETS  # noqa: E402

OUT = ROOT / "docs" / "_static" / "peers_hits_cpu.png"
MARKERS = dict(zip(DATASETS, ("o", "s", "^", "D")))
SHORT = {"knife": "KNIFE (numkfs default)", "knife_stability": "KNIFE, stability=True",
         "knife_fdr": "KNIFE, fdr=0.2", "boruta": "Boruta", "permutation": "permutation importance",
         "leshy": "Leshy (arfs)",
         "hsic": "HSIC Lasso (true count)", "mrmr": "mRMR (true count)", "knockpy": "knockpy"}
#: The selectors drawn (one colour each): KNIFE's default, its two "how sure" selections, the peers.
FIGURE_SELECTORS = tuple(SHORT)


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    part = json.loads((ROOT / "benchmarks" / "results" / "peers_simulations.json").read_text())
    rows = part["rows"]
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    colours = plt.get_cmap("tab10").colors
    offsets = np.linspace(-0.04, 0.04, len(FIGURE_SELECTORS))
    for i, sel in enumerate(FIGURE_SELECTORS):
        for name in DATASETS:
            done = [r for r in rows if r["selector"] == sel and r["data"] == name and r["hit"] is not None]
            if not done:
                continue
            share = np.mean([r["hit"] for r in done])
            cpu = np.mean([r["cpu"] for r in done])
            ax.scatter(cpu, share + offsets[i], color=colours[i], marker=MARKERS[name], s=55,
                       edgecolor="black", linewidth=0.5)
    ax.set_xscale("log")
    ax.set_xlabel("CPU seconds per data set (mean over seeds)")
    ax.set_ylabel("share of seeds with a hit")
    ax.set_ylim(-0.1, 1.1)
    ax.grid(alpha=0.3)
    sel_handles = [plt.Line2D([], [], color=colours[i], marker="o", linestyle="", label=SHORT[s])
                   for i, s in enumerate(FIGURE_SELECTORS)
                   if any(r["selector"] == s and r["hit"] is not None for r in rows)]
    data_handles = [plt.Line2D([], [], color="grey", marker=MARKERS[d], linestyle="", label=DATASET_LABELS[d])
                    for d in DATASETS]
    first = ax.legend(handles=sel_handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7.5,
                      title="selector", title_fontsize=8, frameon=False)
    ax.add_artist(first)
    ax.legend(handles=data_handles, loc="lower left", bbox_to_anchor=(1.01, 0), fontsize=7.5,
              title="data set", title_fontsize=8, frameon=False)
    seeds = sorted({r["seed"] for r in rows})
    ax.set_title(f"Hits against CPU, {len(seeds)} seed(s) per data set", fontsize=10)
    fig.tight_layout()
    OUT.parent.mkdir(exist_ok=True)
    fig.savefig(OUT, dpi=110, bbox_inches="tight")
    print(OUT)


if __name__ == "__main__":
    main()
