"""Stability selection's defaults chosen by evidence: power, error and cost.

Imported by ``benchmarks/trust.py`` (``python benchmarks/trust.py --part
stability_defaults`` regenerates section 1 of ``benchmarks/results/trust.md``
and leaves the other sections as they are).

For every data set and seed the KNIFE path is fitted once on all rows and on
``2 * MAX_PAIRS`` complementary-pair subsamples (what
:class:`numkfs.StabilitySelection` does), each fit timed in CPU seconds, and
the subsamples' selections along the grid are kept.  Every candidate rule
(bound, threshold, PFER target, number of pairs) is then read from the same
selections, so the candidates differ only by the rule.  ``select(X, y,
"knife")`` (cross-validation) is timed in the same process, just before.

Raw selections are cached in ``$NUMKFS_BENCH_CACHE`` (default
``/tmp/numkfs_stability_cache``), one file per data set and seed, so that a
rerun only fits what is missing (delete the directory to refit).  ``--fit-new-only``
fits only the current default's missing cases and reads the settings before
from the cache.
"""
from __future__ import annotations

import functools
import os
import sys
import time
import warnings

import numpy as np

CACHE = os.environ.get("NUMKFS_BENCH_CACHE", "/tmp/numkfs_stability_cache")
MAX_PAIRS = 50
NULL_PAIRS = 25  # null data: only the pairs of the default (the cost of 50 did not fit in the session)


def datasets(quick=False):
    """name -> (list of seeds, maker(seed) -> (X, y, truth indices or None, classification))."""
    from sklearn.datasets import make_classification, make_friedman1

    from numkfs.datasets import make_sinusoid

    def sinusoid(n):
        def make(seed):
            X, y, s = make_sinusoid(n, 20, random_state=seed)
            return X, y, np.flatnonzero(s), False
        return make

    def friedman(seed, noise=0.0):
        X, y = make_friedman1(n_samples=200, n_features=15, noise=noise, random_state=seed)
        return X, y, np.arange(5), False

    def classification(seed):
        X, y = make_classification(300, 30, n_informative=5, n_redundant=0, shuffle=False, random_state=seed)
        return X, y, np.arange(5), True

    def null(p):
        def make(seed):
            rng = np.random.default_rng(1000 + seed)
            return rng.standard_normal((200, p)), rng.standard_normal(200), None, False
        return make

    five = range(2) if quick else range(5)
    return {
        "make_sinusoid(300, 20)": (five, sinusoid(300)),
        "Friedman #1 + 10 noise, 200 x 15": (five, friedman),
        "Friedman #1 + 10 noise, 200 x 15, noise 1": (five, functools.partial(friedman, noise=1.0)),
        "make_classification(300, 30), 5 informative": (five, classification),
        "make_sinusoid(100, 20)": (five, sinusoid(100)),
        "null, 200 x 20": (range(6) if quick else range(int(os.environ.get("NULL20_SEEDS", 50))), null(20)),
        "null, 200 x 200": (range(2) if quick else range(6), null(200)),
    }


def _cache_path(name, seed, n_grid, refine=True, new=False, extra=None):
    tag = "".join(f"_{k}_{v}" for k, v in sorted((extra or {}).items()))
    return os.path.join(CACHE, "".join(c if c.isalnum() else "_" for c in name)
                        + f"_g{n_grid}{'' if refine else 'r0'}{'_walk_l1cv' if new else ''}{tag}_s{seed}.npz")


def collect(name, seed, make, n_grid, pairs=None, refine=True, new=False, extra=None):
    """Fit (or load) one case: the CV selection and the subsamples' selections.

    ``new``: the settings of the current default (registry: on class labels KNIFEClassifierCV's lambda1 = 3;
    each subsample walks only from where the full-data path keeps <= 2 q features, q of the default rule);
    else the settings before (lambda1 = 1 on class labels, every point walked).  ``extra``: path settings
    over those (on all rows and on the subsamples).
    """
    from numkfs import select
    from numkfs.methods.knife._resampling import walked_points
    from numkfs.resampling import method_path
    from numkfs.stability import _SubsamplePath, complementary_pairs, q_for_pfer

    os.makedirs(CACHE, exist_ok=True)
    path = _cache_path(name, seed, n_grid, refine, new, extra)
    if os.path.exists(path):
        return dict(np.load(path))
    X, y, truth, classification = make(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c0 = time.process_time()
        cv = select(X, y, "knife").selected if truth is not None else np.zeros(X.shape[1], dtype=bool)
        cv_cpu = time.process_time() - c0 if truth is not None else np.nan
        task = "classification" if classification else "regression"
        c0 = time.process_time()
        params = {"n_grid": n_grid} if refine else {"n_grid": n_grid, "max_refine": 0}
        if classification and not new:
            params["lambda1"] = 1.0  # knife_path's default, what the resamples ran before
        params.update(extra or {})
        full = method_path("knife", X, y, params=params, task=task)
        pairs = pairs or (MAX_PAIRS if truth is not None else NULL_PAIRS)
        walked = None
        if new:  # the region's q under the default rule (unimodal, threshold 0.9, PFER 1)
            walked = walked_points(full, q_for_pfer(1.0, X.shape[1], 0.9, pairs))
        full_cpu = time.process_time() - c0
        subs = complementary_pairs(y, pairs, classification=classification, random_state=seed)
        fit_one = _SubsamplePath("knife", X, y, full, params, task, walked, purpose="path")
        sel, cpu = [], []
        for rows in subs:
            c0 = time.process_time()
            sel.append(fit_one(rows)[0])
            cpu.append(time.process_time() - c0)
    out = dict(sel=np.stack(sel), sub_cpu=np.array(cpu), full_cpu=full_cpu, cv_cpu=cv_cpu, cv=cv,
               truth=np.zeros(0, int) if truth is None else truth, p=X.shape[1])
    np.savez(path, **out)
    return out


def rules(p, n_pairs):
    """The candidate rules: name -> (bound kind, threshold, PFER target)."""
    return {
        "MB, pi 0.6, PFER 1 (old default)": ("mb", 0.6, 1.0),
        "MB, pi 0.9, PFER 1": ("mb", 0.9, 1.0),
        "SS unimodal, pi 0.75, PFER 1": ("unimodal", 0.75, 1.0),
        "SS unimodal, pi 0.9, PFER 1": ("unimodal", 0.9, 1.0),
        "SS r-concave, pi 0.9, PFER 1": ("r-concave", 0.9, 1.0),
        "SS unimodal, pi 0.9, PFER 2": ("unimodal", 0.9, 2.0),
    }


@functools.lru_cache(maxsize=None)
def _q(pfer, p, threshold, n_pairs, kind):
    from numkfs.stability import q_for_pfer

    return q_for_pfer(pfer, p, threshold, n_pairs, bound=kind)


def apply_rule(sel, p, kind, threshold, pfer, n_pairs):
    """(support, q_region, the rule's bound) from the subsamples' selections."""
    from numkfs.stability import _region, pfer_bound, q_for_pfer

    q = _q(pfer, p, threshold, n_pairs, kind)
    mean_selected = sel.sum(axis=2).mean(axis=0)
    region, q_region = _region(sel, mean_selected, q)
    probs = sel.mean(axis=0)[region].max(axis=0) if region.any() else np.zeros(p)
    bound = pfer_bound(q_region, p, threshold, n_pairs, kind)
    if np.isnan(bound):  # the unimodal bound where it is not proved: MB's, as StabilitySelection reports
        bound = pfer_bound(q_region, p, threshold, n_pairs, "mb")
    return probs >= threshold, q_region, bound


#: (label, n_grid, refined, pairs, rules shown, new settings[, path settings over them]): the default setting
#: first, then the ones it was chosen over.
SETTINGS = (
    ("20 points, not refined, walked from 2 q, lambda1 3 on labels", 20, False, 25,
     ("SS unimodal, pi 0.9, PFER 1",), True),
    ("20 points, not refined, walked from 2 q, lambda1 3 on labels", 20, False, 20,
     ("SS unimodal, pi 0.9, PFER 1",), True),
    ("the default but gamma 'auto' (select()'s CV estimators' scale)", 20, False, 20,
     ("SS unimodal, pi 0.9, PFER 1",), True, {"gamma": "auto"}),
    ("20 points, not refined", 20, False, 25, None, False),
    ("20 points, refined", 20, True, 50, ("MB, pi 0.6, PFER 1 (old default)", "SS unimodal, pi 0.9, PFER 1"), False),
    ("20 points, refined", 20, True, 25, ("MB, pi 0.6, PFER 1 (old default)", "SS unimodal, pi 0.9, PFER 1"), False),
)
#: Data sets measured under the current default only.
NEW_ONLY = ("Friedman #1 + 10 noise, 200 x 15, noise 1",)


def table(quick=False, cached_only=False):
    """Rows of the power / error / cost table (``cached_only``: the cases already fitted)."""
    data = datasets(quick)
    rows = []
    for label, n_grid, refine, n_pairs, shown, new, *more in SETTINGS:
        extra = more[0] if more else None
        cases = {}
        for name, (seeds, make) in data.items():
            if name in NEW_ONLY and not new:
                continue
            runs = [collect(name, s, make, n_grid, n_pairs if not refine else None, refine, new, extra)
                    for s in seeds if (not cached_only and not refine and (new or "--fit-new-only" not in sys.argv))
                    or os.path.exists(_cache_path(name, s, n_grid, refine, new, extra))]
            runs = [r for r in runs if r["sel"].shape[0] >= 2 * n_pairs]
            if runs:
                cases[name] = runs
        for rule, (kind, thr, pfer) in rules(20, n_pairs).items():
            if shown is not None and rule not in shown:
                continue
            for name, runs in cases.items():
                rows.append([rule, f"{label}, {n_pairs} pairs", name, len(runs), *_summary(runs, kind, thr, pfer,
                                                                                       n_pairs)])
    return rows


def _summary(runs, kind, thr, pfer, n_pairs):
    """True kept, runs passing, false, bound and CPU columns over the runs of one data set."""
    hits, falses, bounds, ratios, ok = [], [], [], [], 0
    for r in runs:
        sel = r["sel"][: 2 * n_pairs]
        support, q_region, bound = apply_rule(sel, int(r["p"]), kind, thr, pfer, n_pairs)
        truth = r["truth"]
        false = int(np.setdiff1d(np.flatnonzero(support), truth).size)
        falses.append(false)
        bounds.append(bound)
        cpu = float(r["full_cpu"]) + float(r["sub_cpu"][: 2 * n_pairs].sum())
        if truth.size:
            found = np.intersect1d(np.flatnonzero(r["cv"]), truth)
            kept = np.intersect1d(found, np.flatnonzero(support)).size
            hits.append(int(np.intersect1d(np.flatnonzero(support), truth).size))
            ok += int(kept >= 0.8 * found.size and false <= 1)
            ratios.append(cpu / float(r["cv_cpu"]))
        else:
            ratios.append(cpu)
    n_true = runs[0]["truth"].size
    if not n_true:
        return ["-", "-", f"{np.mean(falses):.2f}", f"{np.nanmean(bounds):.2f}", f"{np.mean(ratios):.0f} s"]
    return [f"{np.mean(hits):.1f} / {n_true}", f"{ok} / {len(runs)}", f"{np.mean(falses):.2f}",
            f"{np.nanmean(bounds):.2f}", f"{np.mean(ratios):.1f}x (max {np.max(ratios):.1f}x)"]


#: The case the defaults miss: make_classification(300, 30, n_informative=5, shuffle=False) seed 0.
MISS_DATA, MISS_SEED = "make_classification(300, 30), 5 informative", 0
#: (label, path settings over StabilitySelection's for all rows, the subsamples' over those (None: the same),
#: walked from 2 q as the default): what could cut features 2 and 3 out, one at a time.
MISS_SETTINGS = (
    ("the default: squared hinge, lambda1 3, gamma 1/p, 20 points, walked from 2 q", {}, None, True),
    ("every point walked, the grid refined (max_refine 20)", {"max_refine": 20}, None, False),
    ("gamma 'auto' (the scale select()'s CV estimator follows)", {"gamma": "auto"}, None, True),
    ("lambda1 3 on all rows, 1.5 on the half-samples (scaled by m / n)", {}, {"lambda1": 1.5}, True),
    ("lambda1 1 (knife_path's default)", {"lambda1": 1.0}, None, True),
    ("lambda1 0.3", {"lambda1": 0.3}, None, True),
    ("gamma 0.1", {"gamma": 0.1}, None, True),
    ("huberized hinge loss", {"loss": "huberized_hinge"}, None, True),
    ("logistic loss", {"loss": "logistic"}, None, True),
)
#: Half-samples on which select(X, y, "knife") (cross-validation) itself is run: MISS_CV_PAIRS pairs.
MISS_CV_PAIRS = 5


def _slug(text):
    return "".join(c if c.isalnum() else "_" for c in text)[:60]


def collect_miss(label, extra, sub_extra, walk, n_pairs):
    """Subsample selections of one setting on the missed case (cached): ``sel`` (2B, n_grid, p), ``cpu``."""
    from numkfs.methods.knife._resampling import STABILITY_SETTINGS, walked_points
    from numkfs.resampling import method_path
    from numkfs.stability import _SubsamplePath, complementary_pairs, q_for_pfer

    path = os.path.join(CACHE, f"miss_s{MISS_SEED}_b{n_pairs}_{_slug(label)}.npz")
    if os.path.exists(path):
        return dict(np.load(path))
    X, y, _, _ = datasets()[MISS_DATA][1](MISS_SEED)
    params = {**STABILITY_SETTINGS, **extra}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c0 = time.process_time()
        full = method_path("knife", X, y, params=params, task="classification")
        q = q_for_pfer(1.0, X.shape[1], 0.9, n_pairs)
        walked = walked_points(full, q) if walk else None
        fit_one = _SubsamplePath("knife", X, y, full, {**params, **(sub_extra or {})}, "classification", walked,
                                 purpose="path")
        subs = complementary_pairs(y, n_pairs, classification=True, random_state=MISS_SEED)
        sel = np.stack([fit_one(rows)[0] for rows in subs])
        cpu = time.process_time() - c0
    out = dict(sel=sel, cpu=cpu, walked=np.ones(sel.shape[1], bool) if walked is None else walked)
    os.makedirs(CACHE, exist_ok=True)
    np.savez(path, **out)
    return out


def collect_miss_cv():
    """select(X, y, "knife") on the half-samples of MISS_CV_PAIRS pairs: (selections (2B, p), CPU s)."""
    from numkfs import select
    from numkfs.stability import complementary_pairs

    path = os.path.join(CACHE, f"miss_s{MISS_SEED}_cv_b{MISS_CV_PAIRS}.npz")
    if os.path.exists(path):
        return dict(np.load(path))
    X, y, _, _ = datasets()[MISS_DATA][1](MISS_SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c0 = time.process_time()
        sel = np.stack([select(X[rows], y[rows], "knife").selected
                        for rows in complementary_pairs(y, MISS_CV_PAIRS, classification=True,
                                                        random_state=MISS_SEED)])
        out = dict(sel=sel, cpu=time.process_time() - c0)
    np.savez(path, **out)
    return out


def _fmt(values):
    return ", ".join(f"{v:.2f}" for v in values)


def miss_tables(n_pairs=20):
    """The missed case: (rows per setting, rows per rule on the default's selections)."""
    from numkfs.stability import _region

    data = collect(MISS_DATA, MISS_SEED, datasets()[MISS_DATA][1], 20, 25, False, True)
    found = np.flatnonzero(data["cv"])
    rows = [["select(X, y, 'knife') (CV) on all 300 rows", "-", "-", "-", "-",
             ", ".join(map(str, found)), f"{float(data['cv_cpu']):.0f}"]]
    for label, extra, sub_extra, walk in MISS_SETTINGS:
        r = collect_miss(label, extra, sub_extra, walk, n_pairs)
        sel = r["sel"]
        region, _ = _region(sel, sel.sum(axis=2).mean(axis=0), _q(1.0, sel.shape[2], 0.9, n_pairs, "unimodal"))
        prob = sel.mean(axis=0)
        top = prob[region].max(axis=0) if region.any() else np.zeros(sel.shape[2])
        support, _, _ = apply_rule(sel, sel.shape[2], "unimodal", 0.9, 1.0, n_pairs)
        rows.append([label, _fmt(top[:5]), f"{top[5:].max():.2f}", _fmt(prob[0, 2:4]),
                     f"{sel[:, 0].sum(axis=1).mean():.1f}", ", ".join(map(str, np.flatnonzero(support))) or "-",
                     f"{float(r['cpu']):.0f}"])
    cv = collect_miss_cv()
    freq = cv["sel"].mean(axis=0)
    rows.append([f"select(X, y, 'knife') (CV) on {cv['sel'].shape[0]} half-samples ({MISS_CV_PAIRS} pairs): "
                 f"how often it keeps each feature ({cv['sel'].sum(axis=1).mean():.1f} features on average)",
                 _fmt(freq[:5]), f"{freq[5:].max():.2f}", "-", "-", "-", f"{float(cv['cpu']):.0f}"])
    sel = collect_miss(*MISS_SETTINGS[0], n_pairs)["sel"]
    rule_rows = []
    for rule, (kind, thr, pfer) in rules(sel.shape[2], n_pairs).items():
        support, q_region, bound = apply_rule(sel, sel.shape[2], kind, thr, pfer, n_pairs)
        region, _ = _region(sel, sel.sum(axis=2).mean(axis=0), _q(pfer, sel.shape[2], thr, n_pairs, kind))
        top = sel.mean(axis=0)[region].max(axis=0) if region.any() else np.zeros(sel.shape[2])
        rule_rows.append([rule, f"{_q(pfer, sel.shape[2], thr, n_pairs, kind):.2f}", f"{q_region:.2f}",
                          _fmt(top[2:4]), ", ".join(map(str, np.flatnonzero(support))) or "-", f"{bound:.2f}"])
    return rows, rule_rows


MISS_HEADERS = ["setting (the rest as StabilitySelection's defaults)",
                "largest selection probability in the region, features 0-4", "largest, noise features",
                "probability at lambda2 = 0, features 2, 3", "mean selected at lambda2 = 0", "selected",
                "CPU s"]
MISS_RULE_HEADERS = ["rule (the default's selections)", "q", "q of the region",
                     "largest probability in the region, features 2, 3", "selected", "bound"]
MISS_DESCRIPTION = (
    "make_classification(300, 30, n_informative=5, n_redundant=0, shuffle=False, random_state=0), the one run "
    "of the table above that misses: the CV selection keeps the five informative features (and feature 20), "
    "stability selection 0, 1 and 4. Each setting below changes one thing of StabilitySelection's defaults "
    "(KNIFE by name, 20 complementary pairs stratified by class drawn with random_state 0, SS unimodal, "
    "threshold 0.9, PFER 1, q = 7.94 at p = 30); the region is the default rule's. A zero weight stays zero "
    "along KNIFE's path, so a feature's selection probability never grows with lambda2: its value at "
    "lambda2 = 0 (the first point, always walked) caps it; at this seed the full-data path keeps 14 <= 2 q "
    "features at lambda2 = 0, so the default walks every point too. Last row: select(X, y, 'knife') itself, with its "
    "cross-validation, on the half-samples of 5 of the same pairs. Second table: every candidate rule read "
    "from the default's selections. CPU s: the full-data path and the 40 subsample paths (last row: the 10 "
    "CV selections), each setting fitted once in one process on the shared machine (the first setting "
    "fitted also paid the process's first calls).")

DESCRIPTION = (
    "KNIFE's path (select()'s settings) on all rows and on complementary pairs of half-samples, per data set "
    "and seed. Paths: first the current default (third round): a 20-point lambda2 grid without "
    "refinement, on class labels KNIFEClassifierCV's lambda1 = 3 (what select() runs), each subsample walking "
    "lambda2 = 0 then only from the first grid point where the full-data path keeps <= 2 q features (q of the "
    "unimodal rule at 25 pairs), 25 pairs fitted and the 20-pair rows read from the first 20 pairs of the same "
    "fits (20 is the default); then that default with gamma 'auto' instead of 1/p (the scale select()'s KNIFE "
    "CV estimators follow, each point at 1 / the number of features its warm start keeps; a candidate, 20 pairs "
    "fitted, walked from 2 q of 20 pairs); then the settings before, every point walked and lambda1 = 1 on class "
    "labels: "
    "the same grid with 25 pairs, or refined where the support jumps (knife_path's default) with 50 pairs, the "
    "25-pair rows then read from the first 25 pairs of the same fits; those rows were fitted earlier (the "
    "same day) and read from the cache. Friedman #1 with noise 1: the current default only. Each rule is read "
    "from the same subsample selections. Rule: the bound that "
    "sets q from the PFER target (MB: Meinshausen & Buehlmann, q^2 / ((2 pi - 1) p); SS unimodal: Shah & "
    "Samworth eq. (8); SS r-concave: their Theorem 3, r = -1/2 and -1/4, computed numerically), the threshold "
    "pi and the target. Data: make_sinusoid(n, 20) (5 true), make_friedman1(200, 15) (5 true, 10 noise; "
    "noise 0, sklearn's default, unless the name says noise 1), "
    "make_classification(300, 30, n_informative=5, n_redundant=0, shuffle=False) (5 true), null: X and y "
    "independent standard normal, 200 rows (every selection is false), seeds 0, 1, ... as many as the "
    "seeds column says. True kept: mean number of true features selected. Runs passing: runs keeping >= 80 % "
    "of the true features that select(X, y, 'knife') (CV) finds, with <= 1 false. False: mean number of false "
    "selections; reported bound: mean of the rule's bound at the region's q (the guarantee: mean false <= "
    "mean bound). CPU: the stability fits (all rows + 2B subsamples) over select(X, y, 'knife')'s CPU "
    "seconds, measured in the same process just before (mean and largest ratio over the seeds); on null "
    "data the stability CPU seconds (no CV run).")

HEADERS = ["rule", "paths", "data", "seeds", "true kept (mean)", "runs passing", "false (mean)",
           "reported bound (mean)", "CPU vs CV (mean)"]

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's numkfs
    from _common import markdown_table  # noqa: E402

    print(markdown_table(HEADERS, table("--quick" in sys.argv, cached_only="--cached" in sys.argv)))
