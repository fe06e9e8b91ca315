"""Robustness battery: every estimator and path function on bad input.

Runs the battery of ``tests/test_robustness.py`` (the same entry points,
input kinds and judging, imported from there, not copied) with more seeds
per input kind, plus random shapes / column scales / memory orders /
dtypes.  Each run is classified as

* **ok**: a finite answer of the right shape (and, where an equivalent
  clean float64 input exists -- float32, int, DataFrame, sparse, Fortran
  order, other label types -- the same answer as on it; constant columns
  get weight 0; DataFrame names are kept);
* **clear error**: a ValueError/TypeError whose message names the problem
  (NaN/inf naming the column, one class, sparse refused, ...);
* **other**: anything else (another exception, a message that does not
  name the problem, a wrong or non-finite answer, an expected error not
  raised).

Usage: ``python benchmarks/robustness.py [--quick]`` (quick: 2 seeds per
kind and 5 random shapes per entry; full: 5 and 25); writes
``benchmarks/results/robustness.md`` with the outcome counts per entry
point and input kind, and the distinct "other" outcomes.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from _common import markdown_table, save

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_robustness import ENTRIES, KINDS, make_input, random_case, run_case  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    n_seeds, n_random = (2, 5) if args.quick else (5, 25)
    counts = defaultdict(Counter)  # (entry, kind) -> Counter(status)
    others = defaultdict(Counter)  # entry -> Counter(kind: detail)
    t0 = time.perf_counter()
    for entry in ENTRIES:
        for kind in KINDS:
            for seed in range(n_seeds):
                out = run_case(entry, make_input(entry, kind, seed=seed))
                counts[entry.name, kind][out.status] += 1
                if out.status == "other":
                    others[entry.name][f"{kind}: {out.detail.splitlines()[0][:160]}"] += 1
        rng = np.random.default_rng(12345)
        for _ in range(n_random):
            n, p = int(rng.integers(2, 31)), int(rng.integers(1, 11))
            case = random_case(entry, n, p, int(rng.integers(2**16)), int(rng.choice([-8, -3, 0, 3, 8])),
                               str(rng.choice(["C", "F"])), str(rng.choice(["float64", "float32"])))
            out = run_case(entry, case)
            counts[entry.name, "random shape"][out.status] += 1
            if out.status == "other":
                others[entry.name][f"random shape (n={n}, p={p}): {out.detail.splitlines()[0][:160]}"] += 1
    elapsed = time.perf_counter() - t0

    kinds = KINDS + ["random shape"]
    status = ("ok", "clear error", "other")
    rows = []
    for entry in ENTRIES:
        tot = Counter()
        for k in kinds:
            tot.update(counts[entry.name, k])
        bad = [k for k in kinds if counts[entry.name, k]["other"]]
        rows.append([entry.name, *(tot[s] for s in status), ", ".join(bad) or "-"])
    summary = markdown_table(["entry point", "ok", "clear error", "other", "input kinds with 'other'"], rows)

    grid_rows = []
    for k in kinds:
        cells = []
        for entry in ENTRIES:
            c = counts[entry.name, k]
            cells.append(f"{c['ok']}/{c['clear error']}/{c['other']}" + (" !" if c["other"] else ""))
        grid_rows.append([k, *cells])
    grid = markdown_table(["input kind", *(e.name for e in ENTRIES)], grid_rows)

    detail = []
    for name, c in others.items():
        for what, m in sorted(c.items()):
            detail.append(f"- **{name}** x{m}: {what}")
    total = Counter()
    for c in counts.values():
        total.update(c)
    body = (
        f"{n_seeds} seeds per input kind, {n_random} random shapes (n in [2, 30], p in [1, 10], one column "
        f"scaled by 1e-8..1e8, C/F order, float64/float32) per entry point; {sum(total.values())} runs in "
        f"{elapsed:.0f} s: {total['ok']} ok, {total['clear error']} clear errors, {total['other']} other.\n\n"
        "Input kinds: " + ", ".join(KINDS) + " (see `make_input` in tests/test_robustness.py).\n\n"
        "## Per entry point\n\n" + summary + "\n\n## Per input kind (ok / clear error / other)\n\n" + grid
        + "\n\n## The 'other' outcomes\n\n" + ("\n".join(detail) or "none") + "\n"
    )
    save("robustness", "Robustness battery (bad input over every entry point)", body)


if __name__ == "__main__":
    main()
