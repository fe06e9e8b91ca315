"""The figure of the guide's stability section: the stable set against the CV set.

``make_sinusoid(300, 20)`` seed 0 (truth: 5 features): ``select(X, y,
"knife")`` (cross-validation) and ``select(X, y, "knife", stability=True)``
with every default.  Left: the stability path (selection probability of each
feature along the λ2 grid, the threshold and the region Λ).  Right: each
feature's selection probability over Λ, the features the CV selection keeps
marked, the true ones named.  Writes ``docs/_static/stability_vs_cv.png``.

Usage::

    python benchmarks/stability_figure.py
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's numkfs first

OUT = ROOT / "docs" / "_static" / "stability_vs_cv.png"


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from numkfs import select
    from numkfs.datasets import make_sinusoid

    X, y, truth = make_sinusoid(300, 20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c0 = time.process_time()
        cv = select(X, y, "knife")
        c1 = time.process_time()
        st = select(X, y, "knife", stability=True)
        c2 = time.process_time()
    info = st.extra["stability"]
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [1.2, 1]})
    st.estimator.plot(ax=ax0, highlight=truth)
    ax0.set_title("stability path (KNIFE, defaults)")
    j = np.arange(X.shape[1])
    colors = np.where(truth, "C0", "0.6")
    ax1.bar(j, st.weights, color=colors)
    ax1.axhline(info["threshold"], color="C3", lw=1, ls="--", label=f"threshold {info['threshold']:g}")
    ax1.scatter(j[cv.selected], np.full(cv.selected.sum(), 1.06), marker="v", color="k",
                label="kept by CV (select)")
    ax1.set_ylim(0, 1.12)
    ax1.set_xticks(j)
    ax1.set_xlabel("feature (blue: true)")
    ax1.set_ylabel("selection probability over the region")
    ax1.set_title(f"stable: {st.selected.sum()} (bound {info['pfer_bound']:.2f}, {info['bound']}); "
                  f"CV: {cv.selected.sum()}", fontsize=10)
    ax1.legend(loc="center right", fontsize=8)
    fig.suptitle(f"make_sinusoid(300, 20), seed 0: CPU {c1 - c0:.1f} s (CV) and {c2 - c1:.1f} s (stability)",
                 fontsize=10)
    fig.tight_layout()
    OUT.parent.mkdir(exist_ok=True)
    fig.savefig(OUT, dpi=110, bbox_inches="tight")
    print(f"wrote {OUT}: stable {np.flatnonzero(st.selected).tolist()}, CV {np.flatnonzero(cv.selected).tolist()}, "
          f"CPU {c1 - c0:.1f} s (CV) and {c2 - c1:.1f} s (stability)")


if __name__ == "__main__":
    main()
