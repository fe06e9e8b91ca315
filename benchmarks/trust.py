"""How sure: stability selection, knockoffs and HSIC p-values, against their targets.

Usage: python benchmarks/trust.py [--quick] [--part stability_defaults | real] [--cached] [--refit ROUTE,...]

1. Stability selection (complementary pairs): the defaults chosen by
   evidence (benchmarks/stability_defaults.py: power, error on null data
   and CPU against the CV selection, over seeds, for each candidate bound,
   threshold and number of pairs), and over lp-KTA on 10^4 x 1,000 with 50
   pairs (target: within 2 minutes on 2 cores).  ``--part
   stability_defaults`` regenerates this section alone and keeps the
   others of benchmarks/results/trust.md as they are.
2. Model-X knockoffs on AR(0.3)-correlated Gaussian X with a non-linear
   truth: FDR and power over seeds at q = 0.2, the lp-KTA statistic
   (numkfs.KnockoffFilter) next to a lasso statistic (scikit-learn's lasso
   path on [X, X~], the same Gaussian knockoff construction, W = signed
   max of the entry lambdas).
3. HSIC p-values (numkfs.hsic_test): Kolmogorov-Smirnov against U(0, 1) on
   null columns at n = 200 ... 10^6, and the CPU time against
   feature_alignments on the same data (targets: <= 2x at 10^6 x 100,
   <= 3x at 2 x 10^5 x 100).

4. Real data and the public simulations, every route at its defaults
   (``select(X, y, "knife")``, ``stability=True``, ``fdr=0.2``): per real
   data set what each route selects on all rows (features and stable
   groups) and the held-out error of the common learner of
   ``benchmarks/common_learner.py`` (``peers.py --part real``'s standardised
   RBF SVM) refitted on the route's features of the training rows plus one
   representative per stable group; over the four public simulations
   (seeds 0-2) each route's hits and CPU against the CV selection, and on
   null data (200 x 20, 20 seeds) what stability selection and the
   knockoffs select against their targets.  ``--part real`` regenerates
   this section alone (its fits are kept in
   ``benchmarks/results/trust_real.json``, one line per fit, so
   ``--part real --cached`` renders without fitting again, and
   ``--refit knockoffs,3 copies`` drops those routes' fits and fits them
   again).

``--quick`` shrinks every size (stated in the results file).  Times are CPU
seconds (time.process_time, all threads) and wall seconds.
"""
from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's numkfs first
from _common import markdown_table, save  # noqa: E402

QUICK = "--quick" in sys.argv


def timed(fn, *args, **kw):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    return time.perf_counter() - w, time.process_time() - c, out


# ----------------------------------------------------------------------------
# 1. stability selection


def sparse_truth(n, p, seed):
    """y from 5 of p standard normal features, non-linear (Friedman-like)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = (2 * np.sin(np.pi * X[:, 0] / 2) + X[:, 1] ** 2 + 1.5 * np.abs(X[:, 2]) + X[:, 3] + 0.5 * X[:, 4]
         + 0.5 * rng.standard_normal(n))
    return X, y, np.arange(5)


def stability_rows():
    from sklearn.datasets import make_friedman1

    from numkfs import StabilitySelection

    rows = []
    n, p, B = (2000, 200, 10) if QUICK else (10_000, 1000, 50)
    X, y, truth = sparse_truth(n, p, 0)
    sel = StabilitySelection("lpkta", n_resamples=B, random_state=0)
    wall, cpu, _ = timed(sel.fit, X, y)
    rows.append(_stab_row("lp-KTA", f"{n} x {p}", sel, truth, wall, cpu))
    n2 = 200
    X, y = make_friedman1(n_samples=n2, n_features=15, random_state=0)
    # Friedman #1 over lp-KTA with the default rule and with the old one's q (max_features=5)
    for kw, note in (({}, ""), ({"max_features": 5}, ", max_features=5")):
        sel = StabilitySelection("lpkta", random_state=0, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wall, cpu, _ = timed(sel.fit, X, y)
        rows.append(_stab_row("lp-KTA", f"{n2} x 15 (Friedman #1){note}", sel, np.arange(5), wall, cpu))
    return rows


def _stab_row(name, shape, sel, truth, wall, cpu):
    chosen = np.flatnonzero(sel.get_support())
    false = np.setdiff1d(chosen, truth)
    return [name, shape, sel.n_resamples, sel.threshold_, round(sel.q_region_, 2),
            f"{sel.pfer_bound_:.3f} ({sel.bound_})",
            ", ".join(map(str, chosen)) or "-", len(false), f"{wall:.1f}", f"{cpu:.1f}"]


# ----------------------------------------------------------------------------
# 2. knockoffs


def ar_data(n, p, k, rho, seed):
    """AR(rho) Gaussian X; y = a sum of non-linear functions of k spread-out features."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p))
    X = np.empty((n, p))
    X[:, 0] = Z[:, 0]
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho * rho) * Z[:, j]
    S = np.sort(rng.choice(p, k, replace=False))
    fs = (lambda x: np.sin(2 * x), lambda x: x ** 2 - 1, lambda x: np.abs(x) - 0.8, np.tanh, lambda x: x)
    y = sum(1.2 * fs[i % len(fs)](X[:, j]) for i, j in enumerate(S)) + 0.5 * rng.standard_normal(n)
    return X, y, S


def lasso_statistic(X, Xk, y):
    """W_j = max(Z_j, Z~_j) sign(Z_j - Z~_j), Z = the lambda at which a column enters the lasso path."""
    from sklearn.linear_model import lasso_path

    A = np.c_[X, Xk]
    A = (A - A.mean(axis=0)) / A.std(axis=0)
    with warnings.catch_warnings():  # n_alphas: FutureWarning from scikit-learn 1.9 on; coordinate descent's gaps
        warnings.simplefilter("ignore")
        alphas, coefs, _ = lasso_path(A, y - y.mean(), n_alphas=200, eps=1e-3)
    nz = np.abs(coefs) > 0
    first = np.where(nz.any(axis=1), nz.argmax(axis=1), -1)
    Z = np.where(first >= 0, alphas[np.maximum(first, 0)], 0.0)
    p = X.shape[1]
    return np.maximum(Z[:p], Z[p:]) * np.sign(Z[:p] - Z[p:])


def knockoff_rows():
    from numkfs import KnockoffFilter
    from numkfs.knockoffs import gaussian_knockoffs, knockoff_statistics, knockoff_threshold, sdp_s
    from numkfs.resampling import method_path

    n, p, k, q = 300, 40, 8, 0.2
    seeds = range(20 if QUICK else 100)
    names = ("lp-KTA", "lp-KTA, Ledoit-Wolf correlation", "lp-KTA, true correlation", "lasso")
    fdp = {name: [] for name in names}
    power = {name: [] for name in names}
    Sigma = 0.3 ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))  # the AR(0.3) correlation
    s_true, _ = sdp_s(Sigma)
    rules = set()
    t0 = time.process_time()
    for seed in seeds:
        X, y, S = ar_data(n, p, k, 0.3, seed)
        kf = KnockoffFilter("lpkta", fdr=q, n_draws=1, random_state=seed).fit(X, y)
        rules.add(kf.covariance_estimator_)
        kf_lw = KnockoffFilter("lpkta", fdr=q, n_draws=1, covariance="ledoit-wolf", random_state=seed).fit(X, y)
        Xk = gaussian_knockoffs(X, kf.s_, kf.correlation_, random_state=10_000 + seed)
        W = lasso_statistic(X, Xk, y)
        # the oracle: knockoffs from the true N(0, Sigma), the same lp-KTA statistic
        Xo = gaussian_knockoffs(X, s_true, Sigma, mean=np.zeros(p), scale=np.ones(p), random_state=20_000 + seed)
        Wo = knockoff_statistics(method_path("lpkta", np.c_[X, Xo], y), p)
        for name, chosen in (("lp-KTA", np.flatnonzero(kf.get_support())),
                             ("lp-KTA, Ledoit-Wolf correlation", np.flatnonzero(kf_lw.get_support())),
                             ("lp-KTA, true correlation", np.flatnonzero(Wo >= knockoff_threshold(Wo, q))),
                             ("lasso", np.flatnonzero(W >= knockoff_threshold(W, q)))):
            fdp[name].append(len(np.setdiff1d(chosen, S)) / max(1, len(chosen)))
            power[name].append(len(np.intersect1d(chosen, S)) / k)
    cpu = time.process_time() - t0
    rows = []
    for name in fdp:
        f = np.array(fdp[name])
        rows.append([name, len(f), q, f"{f.mean():.3f} ± {f.std(ddof=1) / np.sqrt(len(f)):.3f}",
                     f"{np.mean(power[name]):.3f}", f"{np.mean(np.array(power[name]) == 0):.2f}"])
    return rows, dict(n=n, p=p, k=k, q=q, cpu=cpu, rules=", ".join(sorted(rules)))


# ----------------------------------------------------------------------------
# 3. HSIC


def hsic_rows():
    from numkfs import hsic_test
    from numkfs.kernels import feature_alignments

    sizes = [(200, 500), (2000, 500), (20_000, 200), (200_000, 100), (1_000_000, 100)]
    if QUICK:
        sizes = [(200, 300), (2000, 300), (20_000, 100), (200_000, 20)]
    rng = np.random.default_rng(0)
    hsic_test(rng.standard_normal((2000, 2)), rng.integers(0, 2, 2000))  # compile first
    hsic_test(rng.standard_normal((2000, 2)), rng.standard_normal(2000))
    feature_alignments(rng.standard_normal((2000, 2)), rng.integers(0, 2, 2000))
    rows = []
    for n, d in sizes:
        X = rng.standard_normal((n, d))
        X[:, : d // 4] = rng.standard_t(3, size=(n, d // 4))  # heavy tails in a quarter of the columns
        for kind, y in (("binary", rng.integers(0, 2, n)), ("regression", rng.standard_normal(n))):
            wa, ca, _ = timed(feature_alignments, X, y)
            wh, ch, (s, pv) = timed(hsic_test, X, y)
            ks = stats.kstest(pv, "uniform")
            rows.append([f"{n:,}", d, kind, f"{ks.statistic:.3f}", f"{ks.pvalue:.3f}", f"{np.mean(pv < 0.05):.3f}",
                         f"{np.mean(pv < 0.01):.3f}", f"{ca:.2f}", f"{ch:.2f}", f"{ch / ca:.2f}"])
            print(rows[-1], flush=True)
        del X
    return rows


# ----------------------------------------------------------------------------
# 4. real data and the public simulations

REAL = ("ozone", "sonar", "ionosphere", "breast_cancer")
SIMULATIONS = ("sinusoid 100 x 20", "sinusoid 300 x 20", "Friedman #1 + 10 noise", "make_classification 5 of 30")
ROUTES = {"cv": {}, "stability": {"stability": True}, "r-concave": {"stability": True, "bound": "r-concave"},
          "knockoffs": {"fdr": 0.2}, "knockoff+ draws": {"fdr": 0.2, "draw_threshold": "knockoff+"},
          "one draw": {"fdr": 0.2, "n_draws": 1}, "3 copies": {"fdr": 0.2, "n_copies": 3}}
KNOCKOFF_ROUTES = ("knockoffs", "knockoff+ draws", "one draw", "3 copies")
#: The derandomised routes (their CPU is compared with one draw's).
DERANDOMISED_ROUTES = ("knockoffs", "knockoff+ draws", "3 copies")
CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "trust_real.json")


def simulation(name, seed):
    """``(X, y, true columns)`` of a public simulation (the peers' table's)."""
    from sklearn.datasets import make_classification, make_friedman1

    from numkfs.datasets import make_sinusoid

    if name.startswith("sinusoid"):
        X, y, s = make_sinusoid(int(name.split()[1]), 20, random_state=seed)
        return X, y, np.flatnonzero(s)
    if name.startswith("Friedman"):
        X, y = make_friedman1(200, 15, noise=1.0, random_state=seed)
        return X, y, np.arange(5)
    X, y = make_classification(300, 30, n_informative=5, n_redundant=0, shuffle=False, random_state=seed)
    return X, y, np.arange(5)


def null_data(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((200, 20)), rng.standard_normal(200), np.zeros(0, dtype=int)


def _route(X, y, route):
    """One route of select() (KNIFE, every default): the selected columns, the stable groups, the
    representatives' columns, the bound or target, and the CPU seconds."""
    from numkfs import select

    c = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = select(X, y, "knife", **ROUTES[route])
    cpu = time.process_time() - c
    sel = np.flatnonzero(res.selected).tolist()
    groups = [list(map(int, g)) for g in res.groups]
    reps = [int(g[int(np.argmax(res.weights[g]))]) for g in groups]  # the member most often selected
    st = res.extra.get("stability")
    return dict(selected=sel, groups=groups, reps=reps, cpu=cpu,
                bound=None if st is None else float(st["pfer_bound"]),
                weights=[round(float(w), 4) for w in res.weights])


def _fits(kind, cached):
    """The fits of section 4, one dict per (data, seed or split, route); from the cache file when
    ``cached`` (and for any already there), else fitted and appended to it."""
    import json

    done = {}
    if os.path.exists(CACHE):
        for line in open(CACHE):
            r = json.loads(line)
            done[(r["kind"], r["data"], r["seed"], r["route"])] = r
    if "--refit" in sys.argv and not cached:  # these routes' fits of this kind dropped and fitted again
        again = set(sys.argv[sys.argv.index("--refit") + 1].split(","))
        done = {k: r for k, r in done.items() if not (r["kind"] == kind and r["route"] in again)}
        with open(CACHE, "w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in done.values())
    jobs = []
    if kind == "real":
        from common_learner import load, splits

        for name in REAL:
            for route in ROUTES:
                jobs.append((name, "all", route))
                if route != "one draw":
                    jobs.append((name, "split 0", route))
    elif kind == "simulations":
        jobs = [(name, seed, route) for name in SIMULATIONS for seed in range(3) for route in ROUTES]
    else:
        jobs = [("null 200 x 20", seed, route) for seed in range(20)
                for route in ("stability", "r-concave", "knockoffs", "knockoff+ draws", "3 copies")]
    out = []
    for name, seed, route in jobs:
        key = (kind, name, seed, route)
        if key not in done and not cached:
            if kind == "real":
                X, y, task = load(name)
                r = {}
                if seed != "all":
                    tr, te = splits(y, task, 1)[0]
                    r = _route(X[tr], y[tr], route)
                    from common_learner import held_out_error

                    r["error"] = held_out_error(X, y, tr, te, sorted(set(r["selected"]) | set(r["reps"])), task)
                else:
                    r = _route(X, y, route)
            else:
                X, y, truth = simulation(name, seed) if kind == "simulations" else null_data(seed)
                r = _route(X, y, route)
                r["truth"] = truth.tolist()
            r.update(kind=kind, data=name, seed=seed, route=route)
            with open(CACHE, "a") as fh:
                fh.write(json.dumps(r) + "\n")
            print(kind, name, seed, route, f"{r['cpu']:.1f} s", r["selected"], r["groups"], flush=True)
            done[key] = r
        if key in done:
            out.append(done[key])
    return out


def _hit(r):
    """Every true feature found (selected, or in a stable group of at most two) with at most one false
    selection (a selected noise feature, or a stable group without a true member)."""
    truth = set(r["truth"])
    found = set(r["selected"]) | {j for g in r["groups"] if len(g) <= 2 for j in g}
    false = len(set(r["selected"]) - truth) + sum(1 for g in r["groups"] if not truth & set(g))
    return truth <= found and false <= 1


def _names(name):
    from common_learner import load

    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        return [str(f) for f in load_breast_cancer().feature_names]
    from numkfs.datasets import load_dataset

    d = load_dataset(name, dropna=True)
    cols = getattr(d, "feature_names", None)
    return [str(c) for c in cols] if cols is not None else [f"x{j}" for j in range(load(name)[0].shape[1])]


def _said(r, names, limit=6):
    """What a route selected, in words: features, then {groups}."""
    parts = [names[j] for j in r["selected"]]
    parts += ["{" + ", ".join(names[j] for j in g) + "}" for g in r["groups"]]
    more = f" (+{len(parts) - limit})" if len(parts) > limit else ""
    return (", ".join(parts[:limit]) + more) or "-"


def real_section(cached=False):
    """Section 4 of the results: real data, the public simulations, null data."""
    rows = _fits("real", cached)
    by = {(r["data"], r["seed"], r["route"]): r for r in rows}
    rtab = []
    for name in REAL:
        names = _names(name)
        for route in ("cv", "stability", "r-concave", "knockoffs", "knockoff+ draws", "3 copies"):
            a, b = by.get((name, "all", route)), by.get((name, "split 0", route))
            if a is None or b is None:
                continue
            bound = f"{a['bound']:.2f}" if a["bound"] is not None else ("FDR 0.2" if route in KNOCKOFF_ROUTES else "-")
            rtab.append([name, route, len(a["selected"]), len(a["groups"]), _said(a, names), bound,
                         f"{a['cpu']:.1f}", len(set(b["selected"]) | set(b["reps"])), f"{b['error']:.4g}"])
    ratio = []
    for name in REAL:
        k, one, three = (by.get((name, "all", route)) for route in ("knockoffs", "one draw", "3 copies"))
        if k and one:
            ratio.append(f"{name} {k['cpu'] / one['cpu']:.1f}x" + (f" (3 copies {three['cpu'] / one['cpu']:.1f}x)"
                                                                   if three else ""))
    sims = _fits("simulations", cached)
    sby = {(r["data"], r["seed"], r["route"]): r for r in sims}
    stab = []
    for name in SIMULATIONS:
        for route in ROUTES:
            mine = [sby[(name, s, route)] for s in range(3) if (name, s, route) in sby]
            if not mine:
                continue
            cv = [sby[(name, r["seed"], "cv")]["cpu"] for r in mine]
            ko = ([sby[(name, r["seed"], "one draw")]["cpu"] for r in mine]
                  if route in DERANDOMISED_ROUTES else None)
            found = [len(set(r["truth"]) & (set(r["selected"]) | {j for g in r["groups"] if len(g) <= 2 for j in g}))
                     for r in mine]
            false = [len(set(r["selected"]) - set(r["truth"])) for r in mine]
            stab.append([name, route, f"{sum(map(_hit, mine))} / {len(mine)}",
                         f"{np.mean(found):.1f} / {len(mine[0]['truth'])}", f"{np.mean(false):.1f}",
                         sum(len(r["groups"]) for r in mine),
                         f"{np.mean([r['cpu'] for r in mine]):.1f}",
                         f"{max(r['cpu'] / c for r, c in zip(mine, cv)):.1f}x",
                         "-" if ko is None else f"{max(r['cpu'] / c for r, c in zip(mine, ko)):.1f}x"])
    totals = {route: sum(_hit(r) for r in sims if r["route"] == route) for route in ROUTES}
    n_runs = {route: sum(1 for r in sims if r["route"] == route) for route in ROUTES}
    nulls = _fits("null", cached)
    from numkfs.stability import q_for_pfer

    ntab = []
    for route, label in (("stability", "stability"), ("r-concave", "stability, r-concave bound"),
                         ("knockoffs", "knockoffs, fdr=0.2"),
                         ("knockoff+ draws", "knockoffs, fdr=0.2, draw_threshold='knockoff+'"),
                         ("3 copies", "knockoffs, fdr=0.2, 3 copies")):
        runs = [r for r in nulls if r["route"] == route]
        if not runs:
            continue
        target = ("FDR 0.2: P(anything selected) <= 0.2" if route in KNOCKOFF_ROUTES
                  else f"{np.mean([r['bound'] for r in runs]):.2f} (mean PFER bound)")
        ntab.append([label, len(runs), f"{np.mean([len(r['selected']) + len(r['groups']) for r in runs]):.2f}",
                     target, sum(1 for r in runs if r["selected"] or r["groups"]),
                     f"{np.mean([r['cpu'] for r in runs]):.1f}"])
    return ("## 4. Real data and the public simulations, every route at its defaults\n\n"
            "Each route is `select(X, y, \"knife\", ...)` with every default: `cv` the cross-validated "
            "selection, `stability` `stability=True` (20 complementary pairs, threshold 0.9, PFER target 1, "
            "the unimodal bound over the units: stable features and stable groups of columns whose absolute "
            "correlations all exceed 0.5), `r-concave` `stability=True, bound=\"r-concave\"` (the same with Shah & "
            "Samworth's bound under r-concavity, a stronger assumption: q = "
            f"{q_for_pfer(1.0, 20, 0.9, 20, 'r-concave'):.1f} features instead of {q_for_pfer(1.0, 20, 0.9, 20):.1f} "
            "at p = 20 for the same target), `knockoffs` `fdr=0.2` (e-BH on the e-values of 8 draws, each "
            "draw's threshold the smallest |W| above every negative statistic; the same "
            "groups tested as one, by group knockoffs; one knockoff copy per draw unless ceil(1 / q) = 5 "
            "exceeds half the units, then the fewest copies that bring the smallest selection there), "
            "`knockoff+ draws` `fdr=0.2, draw_threshold=\"knockoff+\"` (the same with each draw's threshold "
            "its knockoff+ threshold at q, Ren & Barber's), `one "
            "draw` `fdr=0.2, n_draws=1` (knockoff+ on one draw, groups and copies as `knockoffs`), `3 copies` "
            "`fdr=0.2, n_copies=3` (e-BH on 8 draws of three knockoff copies each, drawn together, thresholds "
            "as `knockoffs`: the smallest selection ceil(1 / (3 q)) = 2 units instead of 5).\n\n"
            "### Real data\n\n"
            "Selected on all rows (stable or selected groups in braces); the bound: the PFER bound stability selection "
            "reports. Held-out error: the common learner of `benchmarks/common_learner.py` (standardised RBF "
            "SVC or SVR, C and gamma tuned by 5-fold CV) on the route's features of the training rows (70 %, "
            "split 0 of `peers.py --part real`) plus one representative per stable or selected group (its member "
            "most often selected; in a knockoffs group, whose members share one value, its first), scored on the other 30 % (misclassification rate, or mean squared error in y's "
            "units; no feature: the majority class or the mean). CPU s: process CPU time of select() on all "
            "rows. Derandomised knockoffs' CPU against one draw on all rows: " + (", ".join(ratio) or "-")
            + ".\n\n"
            + markdown_table(["data", "route", "features", "groups", "selected", "bound", "CPU s",
                              "columns refitted (split 0)", "held-out error"], rtab) + "\n\n"
            "### The public simulations (seeds 0-2)\n\n"
            "make_sinusoid(100, 20) and (300, 20), make_friedman1(200, 15, noise=1), "
            "make_classification(300, 30, 5 informative, unshuffled): the peers' table's. A hit: every true "
            "feature found (selected, or in a stable group of at most two features) with at most one false "
            "selection (a noise feature, or a stable group without a true one). Hits over the 12 runs: "
            + ", ".join(f"{route} {totals[route]} / {n_runs[route]}" for route in ROUTES)
            + ". CPU: mean seconds per run; the largest ratio over the seeds to the CV selection's and, for "
            "the derandomised knockoffs, to one draw's.\n\n"
            + markdown_table(["simulation", "route", "hits", "true found", "false (mean)", "stable groups",
                              "CPU s", "CPU / CV (max)", "CPU / one draw (max)"], stab) + "\n\n"
            "### Null data (y independent of X, 200 x 20, seeds 0-19)\n\n"
            "Every selection is false. Stability selection: the mean number of stable features and groups "
            "against the mean bound it reports on the expected number; knockoffs: the runs that select "
            "anything (their FDR is the fraction of such runs).\n\n"
            + markdown_table(["route", "seeds", "mean selected", "target", "runs selecting any", "CPU s"],
                             ntab))


def real_part():
    """``--part real``: section 4 of benchmarks/results/trust.md regenerated, the rest kept."""
    from _common import RESULTS, machine_line

    if "--only" in sys.argv:  # fit one kind of run (real, simulations, null) into the cache, render nothing
        _fits(sys.argv[sys.argv.index("--only") + 1], False)
        return
    path = RESULTS / "trust.md"
    text = path.read_text()
    section = real_section(cached="--cached" in sys.argv)
    note = (f"Section 4 regenerated by `python benchmarks/trust.py --part real"
            f"{' --cached' if '--cached' in sys.argv else ''}`: {machine_line()}, load average "
            f"{os.getloadavg()[0]:.1f} at the end.")
    if "## 4. Real data" in text:
        head, rest = text.split("## 4. Real data", 1)
        nxt = rest.find("\n## ", 1)
        tail = rest[nxt + 1:] if nxt >= 0 else ""
        text = head + section + "\n\n" + note + "\n\n" + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n\n" + note + "\n"
    path.write_text(text)
    print(section)


def stability_section(srows):
    """Section 1 of the results: the defaults' evidence table and the lp-KTA rows."""
    import stability_defaults as sd

    drows = sd.table(QUICK, cached_only="--cached" in sys.argv)  # --cached: only the cases fitted already
    mrows, rrows = sd.miss_tables()
    return ("## 1. Stability selection (complementary pairs)\n\n"
            "### The defaults, chosen by evidence\n\n" + sd.DESCRIPTION + "\n\n"
            + markdown_table(sd.HEADERS, drows) + "\n\n"
            "### The run the defaults miss: make_classification seed 0\n\n" + sd.MISS_DESCRIPTION + "\n\n"
            + markdown_table(sd.MISS_HEADERS, mrows) + "\n\n" + markdown_table(sd.MISS_RULE_HEADERS, rrows) + "\n\n"
            "### lp-KTA at scale, and Friedman #1 (defaults of StabilitySelection but the selector)\n\n"
            "lp-KTA: y = 2 sin(pi x0 / 2) + x1^2 + 1.5 |x2| + x3 + 0.5 x4 + 0.5 N(0, 1), X standard normal "
            "(truth 0-4), 50 pairs. Friedman #1 (truth 0-4, noise 5-14), sklearn make_friedman1 seed 0. "
            "PFER bound: the one named (unimodal: Shah & Samworth's eq. (8); mb: Meinshausen & Buehlmann's, "
            "where the unimodal one is not proved).\n\n"
            + markdown_table(["method", "data", "pairs", "threshold", "q", "PFER bound", "selected",
                              "false selections", "wall s", "CPU s"], srows))


def stability_part():
    """``--part stability_defaults``: section 1 of benchmarks/results/trust.md regenerated, the rest kept."""
    from _common import RESULTS, machine_line

    path = RESULTS / "trust.md"
    text = path.read_text()
    head, rest = text.split("## 1. Stability selection", 1)
    tail = rest[rest.index("## 2. Knockoffs"):]
    section = stability_section(stability_rows())
    note = (f"Section 1 regenerated by `python benchmarks/trust.py --part stability_defaults"
            f"{' --cached' if '--cached' in sys.argv else ''}`: {machine_line()}, "
            f"load average {os.getloadavg()[0]:.1f} at the end."
            + (" The defaults table was read from the fits cached by benchmarks/stability_defaults.py (the CV "
               "and stability CPU seconds of each row come from one process, back to back)."
               if "--cached" in sys.argv else ""))
    path.write_text(head + section + "\n\n" + note + "\n\n" + tail)
    print(section)


def main():
    import numba

    t_start = time.perf_counter()
    parts = []
    load0 = os.getloadavg()[0]
    print("HSIC ...", flush=True)
    hrows = hsic_rows()
    print("stability ...", flush=True)
    srows = stability_rows()
    print("knockoffs ...", flush=True)
    krows, kinfo = knockoff_rows()
    parts.append(
        f"`python benchmarks/trust.py{' --quick' if QUICK else ''}` ({'reduced sizes' if QUICK else 'full sizes'}): "
        f"{numba.get_num_threads()} Numba threads on a shared 2-core machine, load average {load0:.1f} at the "
        f"start and {os.getloadavg()[0]:.1f} at the end; total wall {time.perf_counter() - t_start:.0f} s. CPU "
        "seconds are process CPU time over all threads; wall seconds on otherwise idle cores would be about "
        "CPU / threads.")
    parts.append(stability_section(srows))
    parts.append(f"## 2. Knockoffs: FDR and power at q = {kinfo['q']}\n\n"
                 f"X: {kinfo['n']} x {kinfo['p']}, AR(0.3) Gaussian; y: {kinfo['k']} features (random), "
                 "1.2 f(x_j) with f cycling through sin(2x), x^2 - 1, |x| - 0.8, tanh, x, plus 0.5 N(0, 1). "
                 "lp-KTA: numkfs.KnockoffFilter with its defaults but n_draws=1 (Gaussian knockoffs, SDP s, "
                 f"knockoff+ on one draw; correlation estimated by: {kinfo['rules']}, covariance='auto': the sample correlation "
                 "from 2 rows per feature on). lp-KTA, Ledoit-Wolf correlation: the same with "
                 "covariance='ledoit-wolf' (the default before: shrinkage below 10 rows per feature). "
                 "lp-KTA, true correlation: the same statistic with knockoffs "
                 "drawn from the true AR(0.3) N(0, Sigma) (the model-X theorem's setting). Lasso: "
                 "scikit-learn's lasso path on the standardised [X, X~] (a second draw with the filter's s and "
                 "correlation), W = signed max of the entry lambdas, knockoff+ (knockpy was not installed: it "
                 "is not a dependency). FDR = mean false discovery proportion ± its standard error over the "
                 f"seeds; CPU {kinfo['cpu']:.0f} s for all.\n\n"
                 + markdown_table(["statistic", "seeds", "q", "FDR (mean FDP ± s.e.)", "power", "runs selecting none"],
                                  krows))
    parts.append("## 3. HSIC p-values: calibration on null columns and time against the alignments\n\n"
                 "Null columns: standard normal, a quarter Student t(3); target independent of X: binary "
                 "(delta kernel) or standard normal (Gaussian kernel through its pivoted Cholesky factor). "
                 "KS: Kolmogorov-Smirnov of the p-values against U(0, 1) (a KS p-value below 0.001 would be a "
                 "calibration failure at that level). Times: CPU s of feature_alignments and of hsic_test on the "
                 "same X, y (method='auto': the exact pair loop below 1,024 rows, the fast Gauss transform above).\n\n"
                 + markdown_table(["n", "columns", "target", "KS D", "KS p", "P(p < 0.05)", "P(p < 0.01)",
                                   "alignments CPU s", "HSIC CPU s", "HSIC / alignments"], hrows))
    print("real data and simulations ...", flush=True)
    parts.append(real_section(cached="--cached" in sys.argv))
    save("trust", "How sure: stability selection, knockoffs, HSIC p-values", "\n\n".join(parts))


if __name__ == "__main__":
    if "--part" in sys.argv and sys.argv[sys.argv.index("--part") + 1] == "stability_defaults":
        stability_part()
    elif "--part" in sys.argv and sys.argv[sys.argv.index("--part") + 1] == "real":
        real_part()
    elif "--stability" in sys.argv:  # the stability table alone, printed (not saved)
        print(markdown_table(["method", "data", "pairs", "threshold", "q", "PFER bound", "selected",
                              "false selections", "wall s", "CPU s"], stability_rows()))
    else:
        main()
