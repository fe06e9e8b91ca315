"""KNIFE at 10^4-10^6 rows through the Nyström basis.

On the KNIFE sinusoid (five true features; noise standard deviation 1, so
the best possible test MSE is 1), each case in a fresh process:

* ``KNIFERegressorCV(approximation="nystroem", n_components=500, cv=3,
  n_grid=20)`` (the issue's target configuration; the weights inside
  the kernel, landmarks drawn uniformly with ``random_state=0``);
* the baseline a scikit-learn user reaches for: ``StandardScaler`` +
  ``Nystroem(n_components=500)`` (rbf, γ = 1/p) + ``RidgeCV`` (13 α from
  1e-3 to 1e3), no selection.

Measured per case: CPU seconds (``time.process_time`` of the fitting
process, all its threads) and wall seconds of the fit, the process's peak
resident memory (``resource.getrusage``, data included), the features
selected, the MSE on 10^4 fresh test rows, and the load average before and
after (the machine is shared).

Part ``--auto``: where ``approximation="auto"`` switches: ``select(X, y)``
exact and through the default landmarks on the cases of :data:`AUTO_CASES`
(500-1,000 rows), CPU seconds, features and test error in one process (written to
``benchmarks/results/knife_large_auto.md``).

Part ``--classification``: ``KNIFEClassifierCV(approximation="nystroem",
n_components=500, cv=3, n_grid=10)`` on the sin/square simulation
(:func:`sin_square`: p = 20 standard normal features, y = sign(sin(2 x0) +
x1² - 1 + 0.3 ε), two informative features; :func:`orange`: the skin of
the orange, four informative of 20) against ``StandardScaler`` +
``Nystroem(n_components=500, gamma=1/p)`` + ``LinearSVC`` (no selection),
each in a fresh process: true and false positives, test accuracy on 10^4
fresh rows, CPU seconds.  It replaces only its own section of
``benchmarks/results/knife_large.md``.

Part ``--subsample``: the same ``KNIFERegressorCV`` with
``cv_max_samples=10000`` (the path and its CV on a subsample of 10,000
rows, then one fit on every row at the chosen λ2) at ``--rows``, e.g.
10^5 and 10^6 (``--p``, ``--n-components``: the features and KNIFE's
landmarks; ``--baseline``: ``Nystroem`` + ``RidgeCV`` on every row instead);
it replaces only its own section of ``benchmarks/results/knife_large.md``,
or with ``--from-json`` writes that section from the JSON lines several
earlier runs printed (one table from runs at other ``--p`` or landmarks).

Part ``--landmarks``: ``select(X, y, n_components=m)`` (``random_state``
at its default, 0, for every seed of the data) through 100 and
250 landmarks on the peers' size simulation at 1,000 x 50 (seeds 0 and 1)
and 4,000 x 40 (seeds 0-2): CPU seconds, features and test MSE (``benchmarks/results/knife_large_landmarks.md``;
``default_n_components`` is chosen by it).

Part ``--agreement``: where both run (1,500 rows, seeds 0 and 1),
``KNIFERegressorCV(cv=3, n_grid=20)`` exact and through 500 landmarks,
the supports chosen (written to ``benchmarks/results/knife_large_agreement.md``).

Part ``--wide``: the default ``select(X, y)`` on the peers' size simulation
at 1,000 x 500 (seeds 0 and 1; the exact kernel, as ``approximation="auto"``
takes it when the features outnumber the landmarks the rows give) against
the levers that make it cheaper: the path and its CV on a subsample of the
rows (``cv_max_samples``) and the Nyström basis (``n_components``).  Per
run: CPU seconds, the share in the α-step's Cholesky factorisations (count
and CPU), the features and the test MSE
(``benchmarks/results/knife_large_wide.md``).

Usage: ``python benchmarks/knife_large.py [--rows 10000 100000] [--full] [--auto]
[--classification --rows 5000 50000] [--subsample --rows 100000 1000000 [--p 100] [--n-components 250]
[--baseline]] [--subsample --from-json LOG ...] [--landmarks] [--wide] [--agreement]``; ``--full`` adds p = 100 and 10^6 rows.
Writes ``benchmarks/results/knife_large.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _common import RESULTS, machine_line, markdown_table  # noqa: E402

N_TEST = 10_000
M = 500


def _data(n, p, seed):
    from numkfs.datasets import make_sinusoid

    return make_sinusoid(n, n_features=p, random_state=seed)


#: Noise of :func:`sin_square`.
SIN_SQUARE_NOISE = 0.3
#: Section of knife_large.md that ``--classification`` writes.
CLF_SECTION = "## Classification at scale (`--classification`)"
#: Section of knife_large.md that ``--subsample`` writes, and its ``cv_max_samples``.
SUB_SECTION = "## The CV on a subsample (`--subsample`)"
SUB = 10_000


def sin_square(n, p=20, seed=0):
    """``X, y, support``: p standard normal features, y = sign(sin(2 x0) + x1² - 1 + 0.3 ε) in {-1, +1}."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    f = np.sin(2.0 * X[:, 0]) + X[:, 1] ** 2 - 1.0 + SIN_SQUARE_NOISE * rng.standard_normal(n)
    support = np.zeros(p, dtype=bool)
    support[:2] = True
    return X, np.where(f > 0.0, 1, -1), support


def orange(n, p=20, seed=0):
    """``X, y, support``: :func:`numkfs.datasets.make_orange` with p - 4 noise features (four informative)."""
    from numkfs.datasets import make_orange

    return make_orange(n, n_noise=p - 4, random_state=seed)


#: The classification simulations of ``--classification``.
CLF_SIMS = {"sin_square": sin_square, "orange": orange}


def run_clf_case(method, n, p=20, sim="sin_square"):
    """One classification fit in this process (``--classification``); returns a dict of measurements."""
    import resource
    import warnings

    import numpy as np

    X, y, support = CLF_SIMS[sim](n, p, 0)
    Xt, yt, _ = CLF_SIMS[sim](N_TEST, p, 1)
    load0 = os.getloadavg()[0]
    c0, t0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if method == "knife":
            from numkfs import KNIFEClassifierCV

            est = KNIFEClassifierCV(approximation="nystroem", n_components=M, cv=3, n_grid=10, random_state=0)
            est.fit(X, y)
            sel = est.get_support()
            extra = {"tp": int(np.sum(sel & support)), "fp": int(np.sum(sel & ~support)),
                     "found": [int(j) for j in np.flatnonzero(sel)], "lambda2": float(est.lambda2_),
                     "gamma": float(np.max(est.gamma_))}
        else:
            from sklearn.kernel_approximation import Nystroem
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler
            from sklearn.svm import LinearSVC

            est = make_pipeline(StandardScaler(), Nystroem(n_components=M, gamma=1.0 / p, random_state=0),
                                LinearSVC(random_state=0))
            est.fit(X, y)
            extra = {"found": None}
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    acc = float(np.mean(est.predict(Xt) == yt))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {"method": method, "sim": sim, "n_true": int(support.sum()), "n": n, "p": p, "cpu": cpu, "wall": wall,
            "peak_mib": peak, "accuracy": acc,
            "warnings": sorted({type(w.message).__name__ for w in caught}), "load_before": load0,
            "load_after": os.getloadavg()[0], **extra}


def write_classification(results):
    """Replace (or append) the ``--classification`` section of knife_large.md, keeping the rest."""
    table = []
    for r in results:
        if "error" in r:
            table.append([r.get("sim", "sin_square"), r["method"], r["n"], r["p"], "-", "-", "-", r["error"], "-", "-",
                          "-", "-"])
            continue
        sel = r["found"] is not None
        table.append([r["sim"], r["method"], r["n"], r["p"], round(r["cpu"], 1), round(r["wall"], 1), round(r["peak_mib"]),
                      str(r["found"]) if sel else "(all, no selection)", f"{r['tp']} / {r['n_true']}" if sel else "-",
                      r["fp"] if sel else "-", round(r["accuracy"], 3),
                      f"{r['load_before']:.1f} / {r['load_after']:.1f}"])
    section = "\n".join([
        CLF_SECTION, "",
        "`sin_square`: p = 20 standard normal features, y = sign(sin(2 x0) + x1² - 1 + 0.3 ε) "
        "(features 0 and 1 informative; Bayes accuracy 0.911).  `orange`: the skin of the orange "
        "(`make_orange`, four informative features, 16 noise features).  10^4 test rows.  `knife`: `KNIFEClassifierCV(approximation=\"nystroem\", "
        f"n_components={M}, cv=3, n_grid=10)` (squared hinge, gamma=\"auto\", accuracy as the CV score); "
        f"`baseline`: `StandardScaler` + `Nystroem(n_components={M}, gamma=1/p)` + `LinearSVC` (no selection).  "
        "Each case in a fresh process.", "",
        f"Machine: {machine_line()}", "",
        markdown_table(["simulation", "method", "n", "p", "CPU s", "wall s", "peak MiB", "features found", "TP", "FP",
                        "test accuracy", "load"], table), ""])
    _replace_section(CLF_SECTION, section)


#: Lines that begin the hand-written part of a section (its notes, the history of earlier runs).
HAND_STARTS = ("Notes (", "### ")


def _with_history(old, new):
    """The section ``new`` (as the script writes it) followed by the section ``old`` it replaces:
    ``old``'s table under "### The previous run of this table (its Machine line's date)", then
    ``old``'s hand-written notes and history (from the first line that begins with one of
    :data:`HAND_STARTS`), which a rewrite used to drop."""
    lines = old.splitlines()
    machine = next((i for i, line in enumerate(lines) if line.startswith("Machine:")), None)
    if machine is None:
        return new
    hand = next((i for i in range(machine, len(lines)) if lines[i].startswith(HAND_STARTS)), len(lines))
    when = lines[machine].rpartition(";")[2].strip()
    previous = [f"### The previous run of this table ({when})", "", *lines[machine:hand]]
    return "\n".join([new.rstrip("\n"), "", *previous, *lines[hand:]]).rstrip("\n") + "\n\n"


def _replace_section(header, section):
    """Replace (or append) the section of knife_large.md that starts with ``header``, up to the next
    one; the replaced table and the hand-written notes under it are kept (:func:`_with_history`)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "knife_large.md"
    text = path.read_text() if path.exists() else ""
    if header in text:
        head, _, tail = text.partition(header)
        nxt = tail.find("\n## ")
        old = header + (tail[:nxt + 1] if nxt >= 0 else tail)
        text = head + _with_history(old, section) + (tail[nxt + 1:] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)
    print(section)


def write_subsample(results):
    """Replace (or append) the ``--subsample`` section of knife_large.md, keeping the rest."""
    table = []
    for r in results:
        if "error" in r:
            table.append([r["n"], r["p"], r.get("n_components", M), "-", "-", "-", "-", "-", "-", r["error"], "-",
                          "-", "-"])
            continue
        if r["method"] == "baseline":  # Nystroem + RidgeCV on every row, no selection
            table.append([r["n"], r["p"], f"{M} (baseline)", "-", "-", "-", round(r["cpu"], 1), round(r["wall"], 1),
                          round(r["peak_mib"]), "(all, no selection)", "-", round(r["mse"], 3),
                          f"{r['load_before']:.1f} / {r['load_after']:.1f}"])
            continue
        table.append([r["n"], r["p"], r.get("n_components", M), r.get("cv_n_samples", "-"), r.get("n_jobs") or 1,
                      r.get("cv_rule", "best"),
                      round(r["cpu"], 1), round(r["wall"], 1),
                      round(r["peak_mib"]), str(r["found"]), "yes" if r["found"] == r["true"] else "no",
                      round(r["mse"], 3), f"{r['load_before']:.1f} / {r['load_after']:.1f}"])
    section = "\n".join([
        SUB_SECTION, "",
        "Sinusoid simulation as above (10^4 test rows).  `KNIFERegressorCV(approximation=\"nystroem\", "
        "n_components=landmarks, cv=3, n_grid=20, cv_max_samples=CV rows, n_jobs=fold workers, cv_rule=cv_rule)`: the path and its "
        "3-fold CV on a random subsample of that many rows (λ1 and the grid scaled by n_sub / n), then one fit "
        "on every row at the "
        "chosen λ2 scaled back.  Rows marked baseline: `StandardScaler` + `Nystroem(n_components=500, gamma=1/p)` "
        "+ `RidgeCV` on every row, no selection (`--subsample --baseline`).  Each case in a fresh process; CPU seconds of the "
        "whole fit (target at 10^6 x 20: 10 minutes on 2 cores, 1,200 CPU s).", "",
        f"Machine: {machine_line()}", "",
        markdown_table(["n", "p", "landmarks", "CV rows", "fold workers", "cv_rule", "CPU s", "wall s", "peak MiB", "features found", "exactly the 5",
                        "test MSE", "load"], table), ""])
    _replace_section(SUB_SECTION, section)


def run_case(method, n, p, sub=None, n_jobs=None, cv_rule="best", n_components=M):
    """One fit in this process; returns a dict of measurements (``knife_sub``: ``cv_max_samples=sub``,
    default :data:`SUB`, folds on ``n_jobs`` workers; ``n_components`` landmarks for KNIFE)."""
    import resource

    import numpy as np

    X, y, support = _data(n, p, 0)
    Xt, yt, _ = _data(N_TEST, p, 1)
    load0 = os.getloadavg()[0]
    c0, t0 = time.process_time(), time.perf_counter()
    if method in ("knife", "knife_sub"):
        from numkfs import KNIFERegressorCV

        est = KNIFERegressorCV(approximation="nystroem", n_components=n_components, cv=3, n_grid=20, random_state=0,
                               cv_max_samples=(sub or SUB) if method == "knife_sub" else None, n_jobs=n_jobs,
                               cv_rule=cv_rule)
        est.fit(X, y)
        found = [int(j) for j in np.flatnonzero(est.get_support())]
        extra = {"points": int(est.path_.n_points), "lambda2": float(est.lambda2_), "gamma": float(est.gamma_),
                 "cv_n_samples": int(est.cv_n_samples_), "n_jobs": n_jobs, "cv_rule": cv_rule,
                 "n_components": n_components, "n_inserted": int(est.path_.extra.get("n_inserted", 0)),
                 "first_positive_lambda2": float(est.path_.grid[1]) if est.path_.n_points > 1 else None}
    else:
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import RidgeCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        est = make_pipeline(StandardScaler(), Nystroem(n_components=M, gamma=1.0 / p, random_state=0),
                            RidgeCV(alphas=np.logspace(-3, 3, 13)))
        est.fit(X, y)
        found, extra = None, {}
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    mse = float(np.mean((est.predict(Xt) - yt) ** 2))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB -> MiB on Linux
    return {"method": method, "n": n, "p": p, "cpu": cpu, "wall": wall, "peak_mib": peak, "found": found,
            "true": [int(j) for j in np.flatnonzero(support)], "mse": mse, "load_before": load0,
            "load_after": os.getloadavg()[0], **extra}


#: Cases of ``--auto``: (data, n, p, seed); "sizes" is the peers' size simulation
#: (benchmarks/peers.py), "sinusoid" :func:`_data`, "sin_square" :func:`sin_square`.
AUTO_CASES = (("sizes", 500, 50, 0), ("sizes", 500, 50, 1), ("sizes", 600, 50, 0), ("sizes", 600, 50, 1),
              ("sizes", 600, 50, 2), ("sizes", 800, 50, 0), ("sizes", 800, 50, 1), ("sinusoid", 600, 20, 0),
              ("sinusoid", 800, 20, 0), ("sizes", 1000, 50, 0), ("sizes", 1000, 50, 1),
              ("sinusoid", 1000, 20, 0), ("sin_square", 1000, 20, 0))


def _auto_data(name, n, p, seed):
    import numpy as np

    if name == "sizes":
        from peers import TRUE, simulate

        X, y = simulate(n, p, seed)
        return X, y, np.isin(np.arange(p), TRUE)
    return (_data if name == "sinusoid" else sin_square)(n, p, seed)


def _timed_select(X, y, support, **kw):
    """``numkfs.select(X, y, **kw)``: (CPU seconds, the result, [true found / true, false, features])."""
    import warnings

    import numpy as np

    import numkfs

    c = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = numkfs.select(X, y, **kw)
    cpu = round(time.process_time() - c, 1)
    sel = np.flatnonzero(r.selected)
    n_true = int(np.sum(support[sel]))
    return cpu, r, [f"{n_true}/{int(support.sum())}", len(sel) - n_true, str([int(j) for j in sel])]


def _test_error(result, Xt, yt, classification=False):
    """The error of ``select()``'s returned model on the fresh rows ``Xt, yt``: the mean squared error,
    or the error rate for a classification."""
    import numpy as np

    pred = result.estimator.predict(Xt)
    return float(np.mean(pred != yt) if classification else np.mean((pred - yt) ** 2))


def _warm_up():
    """``select()`` once on a small case with each kernel form: the compilation outside the timings."""
    import numkfs

    X, y, _ = _auto_data("sizes", 300, 10, 1)
    for approx in ("exact", "nystroem"):
        numkfs.select(X, y, approximation=approx, n_components=100 if approx == "nystroem" else None)


def auto_crossover(cases=AUTO_CASES):
    """``select(X, y)`` (KNIFE's defaults) with the exact kernel and through the default landmarks
    (:func:`numkfs.methods.knife.default_n_components`), per case, CPU seconds in one process."""
    import numpy as np

    from numkfs.methods.knife import AUTO_EXACT_MAX_SAMPLES, default_n_components

    _warm_up()
    out = []
    for name, n, p, seed in cases:
        X, y, support = _auto_data(name, n, p, seed)
        Xt, yt, _ = _auto_data(name, n, p, seed + 1000)
        for approx in ("exact", "nystroem"):
            cpu, r, found = _timed_select(X, y, support, approximation=approx)
            err = _test_error(r, Xt, yt, classification=name == "sin_square")
            out.append([f"{name} {n} x {p}", seed, approx,
                        "-" if approx == "exact" else default_n_components(n, p), cpu, *found, f"{err:.4f}"])
            print(out[-1], flush=True)
    text = "\n".join(["# Where approximation=\"auto\" switches", "",
                      "Written by `benchmarks/knife_large.py --auto`: `numkfs.select(X, y)` (KNIFE's defaults, "
                      "5-fold CV) with `approximation=\"exact\"` and with `\"nystroem\"` through the default "
                      "number of landmarks (`default_n_components(n)`), CPU "
                      "seconds of all threads in one process after a warm-up (compilation), load "
                      f"{os.getloadavg()[0]:.1f} at the end.  Data: `sizes` is the peers' size simulation "
                      "(y = 2 sin(x0) + x1² + exp(x2/2) + x3·x4 + N(0, 1), benchmarks/peers.py), `sinusoid` "
                      "`make_sinusoid(n, p)`, `sin_square` the classification sign(sin(2 x0) + x1² - 1 + 0.3 ε). "
                      "Test error: the returned model on as many fresh rows (seed + 1000), the mean squared "
                      "error (the noise alone gives 1) or, for `sin_square`, the error rate. "
                      f"`approximation=\"auto\"` takes the exact kernel up to {AUTO_EXACT_MAX_SAMPLES} rows "
                      "for regression.",
                      "", f"Machine: {machine_line()}", "",
                      markdown_table(["data", "seed", "approximation", "landmarks", "CPU s", "true", "false",
                                      "features", "test error"], out), ""])
    (RESULTS / "knife_large_auto.md").write_text(text)
    print(text)


#: Cases of ``--landmarks``: (n, p, seeds) of the peers' size simulation, and the landmark counts.
LANDMARK_CASES, LANDMARK_COUNTS = ((1000, 50, (0, 1)), (4000, 40, (0, 1, 2))), (100, 250)


def landmark_counts(cases=LANDMARK_CASES, counts=LANDMARK_COUNTS):
    """``select(X, y, n_components=m)`` (KNIFE's defaults otherwise) per landmark count m on the
    peers' size simulation: CPU seconds in one process, the features, and the mean squared error
    of the returned model on as many fresh rows (noise variance 1)."""
    import numpy as np

    import numkfs
    from numkfs.methods.knife import default_n_components
    from peers import TRUE, simulate

    X, y, _ = _auto_data("sizes", 300, 10, 1)
    numkfs.select(X, y, approximation="nystroem", n_components=100)  # compile outside the timing
    out = []
    for n, p, seeds in cases:
        for seed in seeds:
            X, y = simulate(n, p, seed)
            Xt, yt = simulate(n, p, seed + 1000)
            for m in counts:
                cpu, r, found = _timed_select(X, y, np.isin(np.arange(p), TRUE), n_components=m)
                mse = _test_error(r, Xt, yt)
                out.append([f"sizes {n} x {p}", seed, m, "yes" if m == default_n_components(n, p) else "",
                            cpu, *found[:2], f"{mse:.4f}"])
                print(out[-1], flush=True)
    text = "\n".join(["# How many landmarks KNIFE's default takes", "",
                      "Written by `benchmarks/knife_large.py --landmarks`: `numkfs.select(X, y, n_components=m)` "
                      "(KNIFE's defaults otherwise: Nyström above 800 rows, 5-fold CV, the 1 % rule) on the peers' "
                      "size simulation (y = 2 sin(x0) + x1² + exp(x2/2) + x3·x4 + N(0, 1), five true features, "
                      "benchmarks/peers.py), CPU seconds of all threads in one process after a warm-up "
                      f"(compilation), load {os.getloadavg()[0]:.1f} at the end.  Test MSE: the returned model "
                      "on as many fresh rows (seed + 1000); the noise alone gives 1.  Default: the count "
                      "`default_n_components(n, p)` gives.", "", f"Machine: {machine_line()}", "",
                      markdown_table(["data", "seed", "landmarks", "default", "CPU s", "true", "false",
                                      "test MSE"], out), ""])
    (RESULTS / "knife_large_landmarks.md").write_text(text)
    print(text)


def agreement(n=1500, p=20, seeds=(0, 1)):
    """Where both kernels run: ``KNIFERegressorCV(cv=3, n_grid=20)`` exact and through 500
    landmarks on the same data; the supports chosen (target: the same up to one feature)."""
    import warnings

    import numpy as np

    from numkfs import KNIFERegressorCV

    out = []
    for seed in seeds:
        X, y, truth = _data(n, p, seed)
        chosen = {}
        for approx in ("exact", "nystroem"):
            c = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = KNIFERegressorCV(approximation=approx, n_components=M if approx == "nystroem" else None,
                                       cv=3, n_grid=20, random_state=0).fit(X, y)
            chosen[approx] = set(np.flatnonzero(est.get_support()).tolist())
            out.append([f"sinusoid {n} x {p}, seed {seed}", approx, sorted(chosen[approx]),
                        round(time.process_time() - c, 1)])
            print(out[-1], flush=True)
        out[-1].append(len(chosen["exact"] ^ chosen["nystroem"]))
        out[-2].append("")
    text = "\n".join(["# Exact and Nyström KNIFE where both run", "",
                      "Written by `benchmarks/knife_large.py --agreement`: `KNIFERegressorCV(cv=3, n_grid=20)` with "
                      f"the exact kernel and with `approximation=\"nystroem\", n_components={M}` on the same "
                      "sinusoid data (5 true features); target: the same support up to one feature.  "
                      f"CPU seconds in one process, load {os.getloadavg()[0]:.1f} at the end.", "",
                      f"Machine: {machine_line()}", "",
                      markdown_table(["data", "approximation", "features chosen", "CPU s",
                                      "features in one support only"], out), ""])
    (RESULTS / "knife_large_agreement.md").write_text(text)
    print(text)


#: Cases of ``--wide``: (n, p, seeds) of the peers' size simulation, and the settings of ``select()``
#: compared with its default (label, keyword arguments).
WIDE_CASES = ((1000, 500, (0, 1)),)
WIDE_SETTINGS = (("default (exact)", {}), ("cv_tol=1e-4", {"cv_tol": 1e-4}),
                 ("cv_max_samples=500", {"cv_max_samples": 500}),
                 ("cv_max_samples=500, cv_tol=1e-4", {"cv_max_samples": 500, "cv_tol": 1e-4}),
                 ("cv_max_samples=400", {"cv_max_samples": 400}),
                 ("n_components=250", {"approximation": "nystroem", "n_components": 250}),
                 ("n_components=500", {"approximation": "nystroem", "n_components": 500}))


def wide(cases=WIDE_CASES, settings=WIDE_SETTINGS):
    """``select(X, y, **kw)`` per setting of :data:`WIDE_SETTINGS` on the peers' size simulation:
    CPU seconds in one process, the count and CPU of the Cholesky factorisations (``scipy.linalg.cho_factor``,
    the exact α-step's and the landmarks' m x m ones), the features and the test MSE on as many fresh rows."""
    import numpy as np
    import scipy.linalg

    from numkfs.methods.knife import resolve_approximation
    from peers import TRUE, simulate

    _warm_up()
    real, chol = scipy.linalg.cho_factor, {"n": 0, "cpu": 0.0}

    def cho_factor(*a, **k):
        c = time.process_time()
        try:
            return real(*a, **k)
        finally:
            chol["n"] += 1
            chol["cpu"] += time.process_time() - c

    scipy.linalg.cho_factor = cho_factor
    out = []
    try:
        for n, p, seeds in cases:
            for seed in seeds:
                X, y = simulate(n, p, seed)
                Xt, yt = simulate(n, p, seed + 1000)
                for label, kw in settings:
                    chol.update(n=0, cpu=0.0)
                    cpu, r, found = _timed_select(X, y, np.isin(np.arange(p), TRUE), **kw)
                    mse = _test_error(r, Xt, yt)
                    out.append([f"sizes {n} x {p}", seed, label, cpu, chol["n"], round(chol["cpu"], 1),
                                *found[:2], f"{mse:.4f}"])
                    print(out[-1], flush=True)
    finally:
        scipy.linalg.cho_factor = real
    autos = "; ".join(f"at {n:,} x {p} `approximation=\"auto\"` takes the "
                      f"{resolve_approximation('auto', n, n_features=p)[0]} kernel" for n, p, _ in cases)
    text = "\n".join(["# KNIFE on wide data: what the default costs, and the levers", "",
                      "Written by `benchmarks/knife_large.py --wide`: `numkfs.select(X, y, **kw)` (KNIFE's "
                      f"defaults otherwise; {autos}) "
                      "on the peers' size simulation (y = 2 sin(x0) + x1² + exp(x2/2) + x3·x4 + N(0, 1), five "
                      "true features, benchmarks/peers.py), CPU seconds of all threads in one process after a "
                      f"warm-up (compilation), load {os.getloadavg()[0]:.1f} at the end.  Cholesky: the "
                      "factorisations of the fits (the exact α-step's n x n ones, or the landmarks' m x m ones) "
                      "and their CPU seconds.  Test MSE: the returned model on as many fresh rows "
                      "(seed + 1000); the noise alone gives 1.  cv_tol=1e-4: the folds fitted to 1e-4, the path on every "
                      "row to the default tol = 1e-6 (by default both to tol).", "", f"Machine: {machine_line()}", "",
                      markdown_table(["data", "seed", "setting", "CPU s", "Cholesky", "Cholesky CPU s", "true",
                                      "false", "test MSE"], out), ""])
    (RESULTS / "knife_large_wide.md").write_text(text)
    print(text)


def _in_child(method, n, p, timeout, func="run_case", **kw):
    args = "".join(f", {k}={v!r}" for k, v in kw.items())
    code = (f"import sys, json; sys.path.insert(0, {HERE!r}); import knife_large as b; "
            f"print(json.dumps(b.{func}({method!r}, {n}, {p}{args})))")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"method": method, "n": n, "p": p, "error": f"over the {timeout} s limit"}
    if out.returncode != 0:
        return {"method": method, "n": n, "p": p, "error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--full", action="store_true", help="also p = 100 and 10^6 rows")
    ap.add_argument("--timeout", type=float, default=7200.0, help="seconds per case")
    ap.add_argument("--auto", action="store_true", help="only the exact / Nyström crossover of approximation='auto'")
    ap.add_argument("--classification", action="store_true",
                    help="only KNIFEClassifierCV on the sin/square simulation (and its baseline) at --rows")
    ap.add_argument("--subsample", action="store_true",
                    help=f"only KNIFERegressorCV with cv_max_samples={SUB} at --rows (e.g. 100000 1000000)")
    ap.add_argument("--cv-max-samples", type=int, default=SUB, dest="cv_max_samples",
                    help=f"with --subsample: the rows of the CV (default {SUB})")
    ap.add_argument("--n-jobs", type=int, default=None, dest="n_jobs", help="with --subsample: workers over the folds")
    ap.add_argument("--cv-rule", default="best", choices=["best", "1se"], dest="cv_rule", help="with --subsample")
    ap.add_argument("--p", type=int, default=20, help="with --subsample: the number of features (default 20)")
    ap.add_argument("--n-components", type=int, default=M, dest="n_components",
                    help=f"with --subsample: KNIFE's landmarks (default {M})")
    ap.add_argument("--baseline", action="store_true",
                    help="with --subsample: the Nystroem + RidgeCV baseline instead of KNIFE, at --rows and --p")
    ap.add_argument("--from-json", nargs="+", default=None, dest="from_json", metavar="FILE",
                    help="with --subsample: write the section from the JSON lines these earlier runs printed "
                         "(one table from several runs), running nothing")
    ap.add_argument("--landmarks", action="store_true",
                    help="only select() through 100 and 250 landmarks at 1,000 x 50 and 4,000 x 40 "
                         "(knife_large_landmarks.md)")
    ap.add_argument("--wide", action="store_true",
                    help="only select() at 1,000 x 500 against its levers (knife_large_wide.md)")
    ap.add_argument("--agreement", action="store_true",
                    help="only exact against Nyström KNIFERegressorCV at 1,500 rows (knife_large_agreement.md)")
    args = ap.parse_args()
    if args.agreement:
        agreement()
        return
    if args.landmarks:
        landmark_counts()
        return
    if args.wide:
        wide()
        return
    if args.classification:
        results = []
        for sim, n in [(sim, n) for sim in CLF_SIMS for n in sorted(set(args.rows))]:
            for method in ("baseline", "knife"):
                r = _in_child(method, n, 20, args.timeout, "run_clf_case", sim=sim)
                print(json.dumps(r), flush=True)
                results.append(r)
        write_classification(results)
        return
    if args.auto:
        auto_crossover()
        return
    if args.subsample and args.from_json:
        results = [json.loads(line) for f in args.from_json for line in open(f) if line.startswith("{")]
        write_subsample(results)
        return
    if args.subsample:
        results = []
        for n in sorted(set(args.rows)):
            if args.baseline:
                r = _in_child("baseline", n, args.p, args.timeout)
            else:
                r = _in_child("knife_sub", n, args.p, args.timeout, sub=args.cv_max_samples, n_jobs=args.n_jobs,
                              cv_rule=args.cv_rule, n_components=args.n_components)
            print(json.dumps(r), flush=True)
            results.append(r)
        write_subsample(results)
        return
    rows = sorted(set(args.rows + ([1_000_000] if args.full else [])))
    ps = [20, 100] if args.full else [20]
    results = []
    for p in ps:
        for n in rows:
            for method in ("baseline", "knife"):
                r = _in_child(method, n, p, args.timeout)
                print(json.dumps(r), flush=True)
                results.append(r)
    write(results)


def write(results):
    table = []
    for r in results:
        if "error" in r:
            table.append(["sinusoid", r["method"], r["n"], r["p"], "-", "-", "-", r["error"], "-", "-", "-"])
            continue
        found = "(all, no selection)" if r["found"] is None else str(r["found"])
        exact = "-" if r["found"] is None else ("yes" if r["found"] == r["true"] else "no")
        table.append([r.get("sim", "sinusoid"), r["method"], r["n"], r["p"], round(r["cpu"], 1), round(r["wall"], 1),
                      round(r["peak_mib"]), found, exact, round(r["mse"], 3), f"{r['load_before']:.1f} / {r['load_after']:.1f}"])
    ratio = []
    for p in sorted({r["p"] for r in results}):
        k = {r["n"]: r for r in results if r["method"] == "knife" and r["p"] == p and "error" not in r}
        if 10_000 in k and 100_000 in k:
            ratio.append(f"p = {p}: 10^4 -> 10^5 rows: {k[100_000]['cpu'] / k[10_000]['cpu']:.1f}x CPU seconds, "
                         f"{k[100_000]['wall'] / k[10_000]['wall']:.1f}x wall seconds (target: at most 13x).")
    text = "\n".join([
        "# KNIFE at large n through the Nyström basis",
        "",
        "Written by `benchmarks/knife_large.py`.  Sinusoid simulation (five true features, noise variance 1: "
        "the best test MSE is 1), 10^4 test rows.  `knife`: `KNIFERegressorCV(approximation=\"nystroem\", "
        f"n_components={M}, cv=3, n_grid=20)`; `baseline`: `StandardScaler` + `Nystroem(n_components={M}, "
        "gamma=1/p)` + `RidgeCV` (no selection).  CPU seconds are the fitting process's (all threads); peak "
        "memory is the process's peak resident set (data, test set and interpreter included).  Each case in "
        "a fresh process; the machine is shared (load averages before / after each fit in the last column).",
        "",
        f"Machine: {machine_line()}",
        "",
        markdown_table(["simulation", "method", "n", "p", "CPU s", "wall s", "peak MiB", "features found", "exactly the 5",
                        "test MSE", "load"], table),
        "",
        *ratio,
        "",
    ])
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "knife_large.md"
    old = path.read_text() if path.exists() else ""
    top, _, rest = old.partition(CLF_SECTION)
    text = _with_history(top, text) if top else text
    if rest:  # the --classification section (and the ones after it) is kept
        text = text.rstrip("\n") + "\n\n" + CLF_SECTION + rest
    path.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
