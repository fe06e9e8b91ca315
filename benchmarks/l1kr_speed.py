"""CPU of one L1KR path (and of one cross-validated fit), before and after a
change of the tracker.

Cases, each in a fresh single-threaded process (``OPENBLAS_NUM_THREADS=1``,
``NUMBA_NUM_THREADS=1``, ``OMP_NUM_THREADS=1``; the Numba cache warmed
first by a short path):

* ``40 x 5``: ``make_friedman_noise(1, n_samples=40, n_noise=0,
  random_state=0)``, ``l1kr_path`` with its defaults;
* ``60 x 10``: ``make_friedman_noise(1, n_samples=60, random_state=3)``,
  ``l1kr_path(lambda1=1e-2)`` (the path of ``tests/methods/test_l1kr.py``);
* ``diabetes``: ``sklearn.datasets.load_diabetes`` (442 x 10),
  ``l1kr_path`` with its defaults;
* ``CV diabetes_raw``: ``L1KRRegressorCV(cv=2, random_state=0)`` on
  ``load_dataset("diabetes_raw")`` (the fit of
  ``test_default_grid_follows_the_events_on_raw_diabetes``).

A path is traced ``--repeat`` times (the smallest CPU time is reported).
Columns: accepted and rejected continuation steps, Jacobian evaluations,
CPU seconds of one path, its events (E1/E2 with the feature, in order) and
whether they are the "before" code's, and the D where the path ends; for the
CV fit the selected features, the chosen λ₁ and D.

"before" is the code of a git revision (default ``main``), unpacked with
``git archive`` into a temporary directory put first on ``PYTHONPATH``;
"after" is the working tree.

Run: ``python benchmarks/l1kr_speed.py [--before REV] [--only CASE ...] [--repeat 3]``.
"""
from __future__ import annotations

import argparse

from _common import markdown_table, run_child, save, unpack

CASES = ["40 x 5", "60 x 10", "diabetes", "CV diabetes_raw"]

CHILD = r"""
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
from numkfs.methods.l1kr import l1kr_path
case, repeat = sys.argv[1], int(sys.argv[2])
if case == "CV diabetes_raw":
    from numkfs.datasets import load_dataset
    from numkfs.estimators import L1KRRegressorCV
    d = load_dataset("diabetes_raw")
    L1KRRegressorCV(cv=2, random_state=0, D_max=0.01).fit(d.data[:50], d.target[:50])  # warm the Numba cache
    cpus = []
    for _ in range(repeat):
        c = time.process_time()
        est = L1KRRegressorCV(cv=2, random_state=0).fit(d.data, d.target)
        cpus.append(time.process_time() - c)
    fp = est.full_path_
    print(json.dumps({"cpu": min(cpus), "steps": int(fp.extra["n_steps"]), "rejected": int(fp.extra["n_rejected"]),
                      "jac": int(fp.extra["n_jacobian_evals"]),
                      "events": [f"{nm} {f}" for _, nm, f in fp.extra["events"] if nm in ("E1", "E2")],
                      "D_end": float(fp.grid.max()),
                      "selected": [int(j) for j in np.flatnonzero(est.get_support())],
                      "lambda": float(est.lambda_), "D": float(est.D_)}))
    sys.exit()
from numkfs.datasets._friedman import make_friedman_noise
kw = {}
if case == "40 x 5":
    X, y, _ = make_friedman_noise(1, n_samples=40, n_noise=0, random_state=0)
elif case == "60 x 10":
    X, y, _ = make_friedman_noise(1, n_samples=60, random_state=3)
    kw = dict(lambda1=1e-2, max_iter=1500)
else:
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
l1kr_path(X[:20], y[:20], max_iter=20)  # warm the Numba cache
cpus = []
for _ in range(repeat):
    c = time.process_time()
    p = l1kr_path(X, y, **kw)
    cpus.append(time.process_time() - c)
e = p.extra
print(json.dumps({"cpu": min(cpus), "steps": int(e["n_steps"]), "rejected": int(e["n_rejected"]),
                  "jac": int(e["n_jacobian_evals"]),
                  "events": [f"{nm} {f}" for _, nm, f in e["events"] if nm in ("E1", "E2")],
                  "event_D": [float(p.grid[i]) for i, nm, _ in e["events"] if nm in ("E1", "E2")],
                  "D_end": float(p.grid[-1]), "finished": e["finished"]}))
"""


def run(case: str, pythonpath: str | None, repeat: int, timeout: float = 1800.0) -> dict:
    return run_child(CHILD, [case, repeat], pythonpath, timeout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="main", help="git revision of the 'before' code")
    ap.add_argument("--only", nargs="*", default=CASES)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    before_dir = unpack(args.before)
    rows = []
    for case in args.only:
        res = {tag: run(case, before_dir if tag == "before" else None, args.repeat) for tag in ("before", "after")}
        for tag, r in res.items():
            print(case, tag, r, flush=True)
            if "error" in r:
                rows.append([case, tag, r["error"]] + [""] * 7)
                continue
            b = res["before"]
            same = "" if tag == "before" or "error" in b else ("yes" if r["events"] == b["events"] else "no")
            if "selected" in r:
                last = f"features {r['selected']}, λ₁ {r['lambda']:.3g}, D {r['D']:.4g}"
            else:
                last = f"D {r['D_end']:.6g} ({r['finished']})"
            rows.append([case, tag, r["steps"], r["rejected"], r["jac"], round(r["cpu"], 3),
                         ", ".join(r["events"]), same, last])
    headers = ["case", "code", "steps", "rejected", "Jacobians", "CPU s (1 thread)", "events (E1/E2, feature)",
               "events as before", "end / CV choice"]
    body = (f"One L1KR path (or one `L1KRRegressorCV` fit), one thread, smallest CPU time of {args.repeat}; "
            f"\"before\" is revision `{args.before}`, \"after\" the working tree (`benchmarks/l1kr_speed.py`). "
            "For the CV fit the steps are those of the path on all the rows.\n\n"
            + markdown_table(headers, rows))
    save("l1kr_speed", "L1KR path: CPU per path", body)


if __name__ == "__main__":
    main()
