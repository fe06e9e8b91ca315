"""Which rule should choose a path's point for selection?

Per (method, data set, seed) the method's path and its CV scores are fitted
ONCE, through ``numkfs.select(X, y, method)`` with the method's default
settings, and cached (a pickle per case under ``SR_CACHE``, default
``/tmp/numkfs-selection-rules``); every candidate rule is then evaluated
offline on the same path and the same CV scores:

* ``today``: the point ``select()`` chose when the case was fitted (the
  method's ``cv_rules["selection"]`` of that commit);
* ``best``, ``1se``, ``2se``: glmnet's rules (``2se``: two standard errors);
* ``1pct``, ``2pct``, ``frac5``, ``frac10``: the sparsest point whose mean CV
  loss is within 1 %, 2 %, 5 %, 10 % of the best point's (relative; for
  accuracy, of the error rate; ``1pct`` and ``2pct`` are ``select``'s rules of
  those names);
* ``knee``: the sparsest point after which no denser point gains more than
  that point's own standard error;
* ``cvbic``: the point minimising ``n log(L) + k log(n)`` with ``L`` the
  mean CV loss and ``k`` the support size (an information criterion read on
  the held-out loss, degrees of freedom approximated by the support size);
* ``relax1se``, ``relaxbest``, ``relaxbic``: each point's support refitted
  without the method's penalty by one common learner
  (``numkfs.relaxed.relaxed_cv_scores``: kernel ridge, Gaussian kernel of
  bandwidth 1 / (support size) on standardised features, its ridge chosen by
  leave-one-out on each training fold; classes coded ±1 and scored by the
  hinge loss) on the same unshuffled 5 folds, then ``1se``, ``best`` or the
  BIC above on those scores (``select``'s ``"relaxed_1se"``, ``"relaxed_best"``).

The target: when the path holds a point with every true feature
and at most 2 false ones, the chosen point must hold every true feature and
at most (that path's fewest false features + 1) false ones; otherwise it
must keep at most max(2, number of true features) false ones.

Data sets, seeds 0-4: ``make_sinusoid(100, 20)``, ``make_sinusoid(300, 20)``,
Friedman #1 + 10 noise (``sklearn.datasets.make_friedman1(n_samples=200,
n_features=15, random_state=seed)``), for KNIFE, L1KR, lp-KTA, COSSO and the
garrote; sin/square classification (300 x 30, ``selection_quality.sin_square``)
for KNIFE, lp-KTA and NMMKL.

A rule from the trust layer's statistics (``stability``): the features
``numkfs.select(X, y, method, stability=True)`` keeps (stability selection
over the method's path, its defaults), fitted with ``--stability`` and
cached beside the path; it is not a point of the path, and is judged by the
same target against the path.

Usage: ``python benchmarks/selection_rules.py [--fit] [--stability] [--quick]
[--methods m ...]``: ``--fit`` fits the cases missing from the cache (one at
a time, the slow step), ``--stability`` the stability selections missing
from it, then the table is written to ``benchmarks/results/selection_rules.md``
(a case without a cached stability selection has "-" there).
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from _common import RESULTS, machine_line, markdown_table  # noqa: E402
from selection_quality import sin_square  # noqa: E402  (the sin/square generator)

warnings.simplefilter("ignore")

CACHE = Path(os.environ.get("SR_CACHE", "/tmp/numkfs-selection-rules"))
SEEDS = range(5)
REGRESSION_METHODS = ("knife", "l1kr", "lpkta", "cosso", "garrote")
CLASSIFICATION_METHODS = ("knife", "lpkta", "nmmkl")


def data_set(name, seed):
    """``(X, y, truth)`` of one simulation."""
    if name in ("sin100", "sin300"):
        from numkfs.datasets import make_sinusoid

        X, y, t = make_sinusoid(int(name[3:]), 20, random_state=seed)
        return X, y, np.asarray(t, dtype=bool)
    if name == "friedman":
        from sklearn.datasets import make_friedman1

        X, y = make_friedman1(n_samples=200, n_features=15, random_state=seed)
        return X, y, np.arange(15) < 5
    return sin_square(seed)


DATA = {"sin100": "make_sinusoid(100, 20)", "sin300": "make_sinusoid(300, 20)",
        "friedman": "Friedman #1 + 10 noise (200 rows)", "sinsq": "sin/square 300 x 30 (classes)"}
CASES = ([(m, d) for d in ("sin100", "friedman", "sin300") for m in REGRESSION_METHODS]
         + [(m, "sinsq") for m in CLASSIFICATION_METHODS])


def _cache_file(method, data, seed):
    return CACHE / f"{method}_{data}_{seed}.pkl"


def fit_case(method, data, seed):
    """Fit ``select(X, y, method)`` once and cache its path, CV scores and choice."""
    import numkfs

    f = _cache_file(method, data, seed)
    if f.exists():
        return
    X, y, truth = data_set(data, seed)
    c = time.process_time()
    res = numkfs.select(X, y, method)
    cpu = time.process_time() - c
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(f, "wb") as fh:
        pickle.dump({"path": res.path, "index": res.index, "rule": res.cv_rule, "selected": np.asarray(res.selected),
                     "truth": truth, "cpu": cpu, "n": len(y)}, fh)
    print(f"{method} {data} {seed}: {res.cv_rule} -> {int(res.selected[truth].sum())}/"
          f"{int((res.selected & ~truth).sum())}, {cpu:.1f} CPU s", flush=True)


def fit_stability(method, data, seed):
    """Fit ``select(X, y, method, stability=True)`` once and cache its selection."""
    import numkfs

    f = CACHE / f"{method}_{data}_{seed}_stability.pkl"
    if f.exists():
        return
    X, y, truth = data_set(data, seed)
    c = time.process_time()
    res = numkfs.select(X, y, method, stability=True)
    cpu = time.process_time() - c
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(f, "wb") as fh:
        pickle.dump({"selected": np.asarray(res.selected), "cpu": cpu}, fh)
    print(f"{method} {data} {seed} stability: {int(res.selected[truth].sum())}/"
          f"{int((res.selected & ~truth).sum())}, {cpu:.1f} CPU s", flush=True)


# --------------------------------------------------------------------------
# the rules, offline on one cached path


def _sparse_pick(path, ok):
    """The sparsest point among the mask ``ok`` (the contract's order of sparsity)."""
    from numkfs._cv_rules import _sparsity_order

    key = _sparsity_order(path)
    cand = np.flatnonzero(ok)
    return int(cand[np.argmin(key[cand])])


def _mean_se(path, scores=None):
    from numkfs.model_selection import cv_mean_se

    mean, se = cv_mean_se(path.cv_scores if scores is None else scores, path.cv_fold_sizes)
    return np.where(np.isnan(mean), -np.inf, mean), np.nan_to_num(se)


def _frac(path, q, scores=None):
    from numkfs.model_selection import choose_from_scores

    return choose_from_scores(path, path.cv_scores if scores is None else scores, path.cv_fold_sizes, 0.0, q)


def _nse(path, k, scores=None):
    from numkfs.model_selection import choose_from_scores

    return choose_from_scores(path, path.cv_scores if scores is None else scores, path.cv_fold_sizes, k)


def _knee(path, scores=None):
    mean, se = _mean_se(path, scores)
    return _sparse_pick(path, mean >= mean.max() - se)


def _bic(path, n, scores=None):
    mean, _ = _mean_se(path, scores)
    loss = np.maximum(-mean, 1e-300)
    crit = n * np.log(loss) + np.log(n) * path.n_selected()
    return _sparse_pick(path, crit <= crit.min() + 1e-12 * abs(crit.min()))


RULES = ("today", "best", "1se", "2se", "1pct", "2pct", "frac5", "frac10", "knee", "cvbic", "relax1se", "relaxbest",
         "relaxbic")


def rule_choices(case, X, y, classifier):
    """The point each rule of :data:`RULES` chooses on a cached case, and the relaxed refit's CPU seconds."""
    from numkfs.relaxed import relaxed_cv_scores

    path, n = case["path"], case["n"]
    c = time.process_time()
    rs, _ = relaxed_cv_scores(X, y, np.array([path.selected(i) for i in range(path.n_points)]), 5,
                              classifier=classifier)
    case["relax_cpu"] = time.process_time() - c
    return {"today": int(case["index"]), "best": _nse(path, 0), "1se": _nse(path, 1), "2se": _nse(path, 2),
            "1pct": _frac(path, 0.01), "2pct": _frac(path, 0.02), "frac5": _frac(path, 0.05), "frac10": _frac(path, 0.10),
            "knee": _knee(path), "cvbic": _bic(path, n), "relax1se": _nse(path, 1, rs),
            "relaxbest": _nse(path, 0, rs), "relaxbic": _bic(path, n, rs)}


def target_met(path, support, truth):
    """The selection target against the method's own path."""
    fps = [int(np.sum(s & ~truth)) for s in (path.selected(i) for i in range(path.n_points)) if s[truth].all()]
    fp = int(np.sum(support & ~truth))
    if fps and min(fps) <= 2:
        return bool(support[truth].all() and fp <= min(fps) + 1)
    return fp <= max(2, int(truth.sum()))


def evaluate():
    """Per (method, data, rule): seeds meeting the target and mean true / false features."""
    rows = {}
    for method, data in CASES:
        for seed in SEEDS:
            f = _cache_file(method, data, seed)
            if not f.exists():
                continue
            with open(f, "rb") as fh:
                case = pickle.load(fh)
            X, y, truth = data_set(data, seed)
            picks = {rule: case["path"].selected(i) for rule, i in rule_choices(case, X, y, data == "sinsq").items()}
            stab = CACHE / f"{method}_{data}_{seed}_stability.pkl"
            if stab.exists():
                with open(stab, "rb") as fh:
                    picks["stability"] = pickle.load(fh)["selected"]
            for rule, s in picks.items():
                r = rows.setdefault((method, data, rule), {"met": 0, "tp": [], "fp": [], "today": case["rule"],
                                                            "cpu": [], "relax_cpu": []})
                r["met"] += target_met(case["path"], s, truth)
                r["tp"].append(int(s[truth].sum()))
                r["fp"].append(int((s & ~truth).sum()))
                r["cpu"].append(case["cpu"])
                r["relax_cpu"].append(case["relax_cpu"])
    return rows


def write_table(rows):
    from numkfs.model_selection import DEFAULT_CV_RULES

    column = {"relaxed_best": "relaxbest", "relaxed_1se": "relax1se"}
    head = ["method", "data", "rule when fitted", "select() default now", "fit CPU s", "relaxed refit CPU s"] + list(RULES) + ["stability"]
    body = []
    for method, data in CASES:
        if (method, data, "best") not in rows:
            continue
        base = rows[(method, data, "best")]
        now = DEFAULT_CV_RULES[method]
        line = [method, DATA[data], base["today"], column.get(now, now), f"{np.mean(base['cpu']):.1f}",
                f"{np.mean(base['relax_cpu']):.1f}"]
        for rule in RULES + ("stability",):
            r = rows.get((method, data, rule))
            line.append("-" if r is None else
                        f"{r['met']}/{len(r['tp'])} ({np.mean(r['tp']):.1f}/{np.mean(r['fp']):.1f})")
        body.append(line)
    totals = ["all", "", "", "", "", ""] + [str(sum(rows[(m, d, rule)]["met"] for m, d in CASES if (m, d, rule) in rows))
                                    for rule in RULES + ("stability",)]
    body.append(totals)
    text = ("# Rules that choose a path's point for selection\n\n"
            "Run by `python benchmarks/selection_rules.py --fit`: one `numkfs.select(X, y, method)` fit per "
            "(method, data set, seed 0-4), every rule evaluated on its path and CV scores; a cell is "
            "seeds meeting the target / seeds (mean true / mean false features); "
            "\"today\" is the rule the case was fitted with (the default it had). "
            f"{machine_line()}\n\n" + markdown_table(head, body) + "\n")
    out = RESULTS / "selection_rules.md"
    out.write_text(text)
    print(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", action="store_true", help="fit the cases missing from the cache first")
    ap.add_argument("--quick", action="store_true", help="seed 0 only")
    ap.add_argument("--stability", action="store_true", help="fit the stability selections missing from the cache")
    ap.add_argument("--methods", nargs="+", default=None, help="only these methods' cases (fitting)")
    args = ap.parse_args()
    global SEEDS
    if args.quick:
        SEEDS = range(1)
    cases = [(m, d) for m, d in CASES if args.methods is None or m in args.methods]
    if args.fit:
        for seed in SEEDS:
            for method, data in cases:
                fit_case(method, data, seed)
    if args.stability:
        for data in ("sin100", "friedman", "sinsq", "sin300"):
            for seed in SEEDS:
                for method, d in cases:
                    if d == data:
                        fit_stability(method, data, seed)
    write_table(evaluate())


if __name__ == "__main__":
    main()
