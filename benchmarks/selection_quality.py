"""Selection quality of the defaults: do they find the features?

Parts (``--part``):

* ``knife``: the targets of ``KNIFEClassifierCV()`` / ``KNIFERegressorCV()``
  at full size: the sin/square classification (300 x 30 standard normal,
  y = [sin(2 x0) + x1^2 - 1 + 0.3 N(0, 1) > 0], seeds 0 and 1),
  ``make_classification(300, 30, n_informative=5, n_redundant=0,
  shuffle=False)`` (random_state 0 and 1), the KNIFE sinusoid (100 x 20),
  each with ``gamma="auto"`` (the default) and ``gamma=None`` (the former
  1/p): true and false positives, CPU seconds.
* ``seeds``: the same targets over ten data seeds each (sin/square,
  ``make_classification``, the sinusoid), with the defaults; the points
  the rules "best" and "1se" choose on the same fitted path, and how many
  seeds meet each target.
* ``scoring``: which CV score should choose a classifier's point.  For
  binary data sets (the simulations above, breast_cancer, ionosphere,
  sonar), repeated stratified outer splits (3/4 train); on the training
  part, KNIFE's path (``gamma="auto"``, squared hinge) and 5 inner folds
  on its grid, each fold giving held-out decision values of every point;
  from them the point chosen by (accuracy, the method's held-out loss, the
  deviance of a Platt scaling fitted on the inner training fold's own
  decision values) x ("best", "1se"); the chosen model's outer-test
  accuracy and, on simulations, true and false positives.  One path per
  outer split serves all six rules, so they are compared on the same fits.
* ``sim``: every method's ``numkfs.select`` defaults on simulations with a
  known truth, each path method with ``cv_rule="best"`` and ``"1se"`` (true
  and false positives, CPU seconds; L1KR capped), and with the method's
  default (``numkfs.model_selection.DEFAULT_CV_RULES``) when that is
  another rule (:func:`_rules`).
* ``simseeds``: the regression simulations of ``sim`` (the sinusoid,
  Friedman #1 with 10 and 100 noise features) over ``SQ_SEEDS`` data seeds
  (5), every regression method through ``numkfs.select`` with ``"best"``,
  ``"1se"`` and its default when that is another rule: cases met, true
  features missed, false positives.
* ``real``: every method's CV estimator with its defaults (``cv_rule``
  the rule ``numkfs.select`` fits it with: the method's ``DEFAULT_CV_RULES``
  rule, or its prediction rule where that one is relaxed) on
  real data (breast_cancer, ionosphere, sonar, wpbc, wine, ozone, raw
  diabetes, colon, digits) over repeated random splits (3/4 train):
  held-out error and number of features, against the baselines a user would
  try: OLS or LogisticRegression, LassoCV (L1-logistic CV for classes), an
  rbf SVC / kernel ridge grid search on all features, SelectKBest(mutual_info)
  + SVC.  Each fit in its own process, limited in CPU seconds; environment:
  ``SQ_REAL=name,name`` runs some of the data sets only, ``SQ_SPLITS`` the
  number of splits (3), ``SQ_LIMIT`` the CPU seconds per fit (300), ``SQ_MEMORY``
  its address space in GiB (6), ``SQ_MODELS=name,name`` the numkfs models whose
  names begin so (the baselines always run), ``SQ_RULE=best|1se`` one
  ``cv_rule`` for every method instead of its default.

* ``common``: the real data judged by the features, not by each method's
  own predictor: one common learner (a standardised RBF SVC/SVR tuned by
  CV) refitted on every method's ``select()`` selection, the peers'
  selections and all features, over 10 splits.  Computed by
  ``python benchmarks/peers.py --part real`` (the same table is part of
  ``peers.md``); this part renders its last run.

``SQ_OUT=file`` writes the results there instead (e.g. a re-run of some
rows, to be read beside the full table).

Usage: ``python benchmarks/selection_quality.py [--part knife|seeds|scoring|sim|simseeds|real|common|all]
[--quick]``;
rebuilds ``benchmarks/results/selection_quality.md`` as a whole: each part's
section is the table of that part's last run (between ``<!-- part -->``
markers), and nothing else is kept: readings belong in the documentation
(``docs/guide/selection.md``), the history of the tables in git.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from _common import RESULTS, machine_line, markdown_table  # noqa: E402

warnings.simplefilter("ignore")


# --------------------------------------------------------------------------
# data


def sin_square(seed, n=300, p=30):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - 1 + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y, np.isin(np.arange(p), [0, 1])


def informative(seed, n=300, p=30):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n, n_features=p, n_informative=5, n_redundant=0, shuffle=False,
                               random_state=seed)
    return X, y, np.arange(p) < 5


def correlated(seed, n=300, p=30, rho=0.6):
    """Equicorrelated standard normal features (rho); y = [x0 x1 + sin(2 x2) + noise > 0]."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p))
    X = np.sqrt(1 - rho) * Z + np.sqrt(rho) * rng.standard_normal((n, 1))
    y = (X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y, np.arange(p) < 3


def real(name):
    """``(X, y, None)`` of a public data set: scikit-learn's breast_cancer, wine, digits and raw
    diabetes, or one shipped with numkfs (:func:`numkfs.datasets.load_dataset`)."""
    import sklearn.datasets as skd

    loaders = {"breast_cancer": skd.load_breast_cancer, "wine": skd.load_wine, "digits": skd.load_digits,
               "diabetes": lambda return_X_y: skd.load_diabetes(return_X_y=return_X_y, scaled=False)}
    if name in loaders:
        X, y = loaders[name](return_X_y=True)
        return np.asarray(X, dtype=float), y, None
    from numkfs.datasets import load_dataset

    d = load_dataset(name, dropna=True)
    return np.asarray(d.data, dtype=float), np.asarray(d.target), None


def _tp_fp(support, truth):
    support = np.asarray(support, dtype=bool)
    return int(np.sum(support & truth)), int(np.sum(support & ~truth))


# --------------------------------------------------------------------------
# part "knife": the done-when cases at full size


def part_knife(quick=False):
    from numkfs import KNIFEClassifierCV, KNIFERegressorCV
    from numkfs.datasets import make_sinusoid

    cases = [("sin/square, seed 0", *sin_square(0), True), ("sin/square, seed 1", *sin_square(1), True),
             ("make_classification 300 x 30, random_state=1", *informative(1), True),
             ("make_classification 300 x 30, random_state=0", *informative(0), True)]
    X, y, truth = make_sinusoid(n_samples=100, n_features=20, random_state=0)
    cases.append(("KNIFE sinusoid 100 x 20", X, y, truth, False))
    if quick:
        cases = cases[:1] + cases[-1:]
    rows = []
    for name, X, y, truth, clf in cases:
        for gamma in ("auto", None):
            est = (KNIFEClassifierCV if clf else KNIFERegressorCV)(gamma=gamma)
            c = time.process_time()
            est.fit(X, y)
            cpu = time.process_time() - c
            tp, fp = _tp_fp(est.get_support(), truth)
            rows.append([name, repr(gamma), f"{tp}/{int(truth.sum())}", fp,
                         " ".join(map(str, np.flatnonzero(est.get_support())[:12])),
                         f"{float(np.max(est.gamma_)):.3g}", f"{cpu:.1f}"])
            print(rows[-1], flush=True)
    head = ["data", "gamma", "TP", "FP", "selected", "gamma_", "CPU s"]
    return ("## KNIFE's targets at full size (gamma='auto' against the former 1/p)\n\n"
            "Targets: the sin/square simulation {x0, x1} and at most two others (two seeds); "
            "make_classification all 5 informative and at most two others; the sinusoid exactly its 5.\n\n"
            + markdown_table(head, rows) + "\n")


# --------------------------------------------------------------------------
# part "seeds": the done-when targets over ten data seeds

#: Data seeds of part "seeds".
SEEDS = range(10)


def part_seeds(quick=False):
    from numkfs import KNIFEClassifierCV, KNIFERegressorCV
    from numkfs.datasets import make_sinusoid
    from numkfs.model_selection import choose_index

    def sinusoid(seed):
        return make_sinusoid(n_samples=100, n_features=20, random_state=seed)

    # (name, data maker: seed -> (X, y, truth), classifier, the most others allowed with every true feature)
    sims = [("sin/square 300 x 30", sin_square, True, 2),
            ("make_classification 5 of 30", informative, True, 2),
            ("KNIFE sinusoid 100 x 20", sinusoid, False, 0)]
    seeds = list(SEEDS)[:2] if quick else list(SEEDS)
    rows, summary = [], []
    for name, make, clf, max_fp in sims:
        met = {"best": 0, "1se": 0}
        for seed in seeds:
            X, y, truth = make(seed)
            est = (KNIFEClassifierCV if clf else KNIFERegressorCV)()
            c = time.process_time()
            est.fit(X, y)
            cpu = time.process_time() - c
            path = est.path_
            cells = [name, seed]
            for rule in ("best", "1se"):
                i = choose_index(path, rule)
                tp, fp = _tp_fp(path.selected(i), truth)
                ok = tp == truth.sum() and fp <= max_fp
                met[rule] += ok
                cells += [f"{tp}/{int(truth.sum())}", fp, "yes" if ok else "no"]
            assert choose_index(path, "best") == est.best_index_  # the estimator's default rule is "best"
            rows.append(cells + [f"{cpu:.1f}"])
            print(rows[-1], flush=True)
        summary.append([name, f"all true, at most {max_fp} others", f"{met['best']} of {len(seeds)}",
                        f"{met['1se']} of {len(seeds)}"])
    head = ["data", "seed", "TP best", "FP best", "met (best)", "TP 1se", "FP 1se", "met (1se)", "CPU s"]
    return ("## KNIFE's targets over ten data seeds (the defaults; \"best\" is the estimators' rule)\n\n"
            "`KNIFEClassifierCV()` / `KNIFERegressorCV()` with their defaults on each seed's data; "
            "\"1se\" is read from the same fitted path (`choose_index(est.path_, \"1se\")`).\n\n"
            + markdown_table(["data", "target", "seeds met, best", "seeds met, 1se"], summary) + "\n\n"
            + markdown_table(head, rows) + "\n")


# --------------------------------------------------------------------------
# part "scoring": which CV score chooses a classifier's point


def _platt_deviance(d_train, y_train, d_test, y_test):
    """Held-out logistic deviance of sigmoid(a d + b) fitted on the training fold's decision values."""
    from sklearn.linear_model import LogisticRegression

    out = np.empty(d_train.shape[1])
    for j in range(d_train.shape[1]):
        if np.ptp(d_train[:, j]) == 0:
            p1 = np.clip(np.mean(y_train > 0), 1e-12, 1 - 1e-12)
            prob = np.full(len(y_test), p1)
        else:
            lr = LogisticRegression(C=1e6).fit(d_train[:, [j]], y_train > 0)
            prob = np.clip(lr.predict_proba(d_test[:, [j]])[:, 1], 1e-12, 1 - 1e-12)
        out[j] = np.mean(np.where(y_test > 0, np.log(prob), np.log1p(-prob)))
    return out


RULES = [(s, r) for s in ("accuracy", "neg_loss", "platt_deviance") for r in ("best", "1se")]


def _rule_choices(Xtr_raw, ytr, *, n_folds=5):
    """The full path on the training part and the index each rule chooses."""
    from sklearn.model_selection import StratifiedKFold

    from numkfs.methods.knife import knife_path, path_decision_function
    from numkfs.model_selection import choose_index, fold_data, path_scores

    mu, sd = Xtr_raw.mean(0), Xtr_raw.std(0)
    sd[sd == 0] = 1.0
    Xs = (Xtr_raw - mu) / sd
    kw = dict(loss="squared_hinge", gamma="auto", random_state=0)
    path = knife_path(Xs, ytr, **kw)
    S = {s: [] for s in ("accuracy", "neg_loss", "platt_deviance")}
    classes = np.array([-1.0, 1.0])
    for tr, te in StratifiedKFold(n_folds).split(Xs, ytr):
        A, B = fold_data(Xtr_raw, tr, te)
        fp = knife_path(A, ytr[tr], grid=path.grid, **kw)
        d_tr, d_te = path_decision_function(fp, A, A), path_decision_function(fp, A, B)
        S["accuracy"].append(path_scores(ytr[te], d_te, "accuracy", classes=classes))
        S["neg_loss"].append(path_scores(ytr[te], d_te, "neg_loss", classes=classes, loss="squared_hinge"))
        S["platt_deviance"].append(_platt_deviance(d_tr, ytr[tr], d_te, ytr[te]))
    choices = {}
    for score, rule in RULES:
        path.cv_scores = np.column_stack(S[score])
        choices[score, rule] = choose_index(path, rule)
    return path, Xs, (mu, sd), choices


def part_scoring(quick=False):
    from sklearn.model_selection import StratifiedShuffleSplit

    from numkfs.methods.knife import path_decision_function

    sets = [("sin/square, seed 0", sin_square(0)), ("sin/square, seed 1", sin_square(1)),
            ("make_classification 300 x 30", informative(1)), ("correlated (rho 0.6)", correlated(0)),
            ("breast_cancer", real("breast_cancer")), ("ionosphere", real("ionosphere")),
            ("sonar", real("sonar"))]
    n_splits = 1 if quick else 3
    if quick:
        sets = sets[:2] + sets[4:5]
    per_rule = {r: {"acc": [], "tp": [], "fp": [], "nsel": []} for r in RULES}
    rows = []
    for name, (X, y, truth) in sets:
        yp = np.where(y == np.unique(y)[1], 1.0, -1.0)
        splitter = StratifiedShuffleSplit(n_splits=n_splits, test_size=0.25, random_state=0)
        acc = {r: [] for r in RULES}
        nsel = {r: [] for r in RULES}
        tpfp = {r: [] for r in RULES}
        c = time.process_time()
        for tr, te in splitter.split(X, yp):
            path, Xs, (mu, sd), choices = _rule_choices(X[tr], yp[tr])
            Xte = (X[te] - mu) / sd
            for r, i in choices.items():
                d = path_decision_function(path, Xs, Xte, index=i)
                acc[r].append(np.mean(np.where(d > 0, 1.0, -1.0) == yp[te]))
                nsel[r].append(int(path.n_selected()[i]))
                if truth is not None:
                    tpfp[r].append(_tp_fp(path.selected(i), truth))
        cpu = time.process_time() - c
        for r in RULES:
            row = [name, f"{r[0]}, {r[1]}", f"{np.mean(acc[r]):.3f}", f"{np.mean(nsel[r]):.1f}"]
            if truth is not None:
                tps, fps = zip(*tpfp[r])
                row += [f"{np.mean(tps):.1f}/{int(truth.sum())}", f"{np.mean(fps):.1f}"]
                per_rule[r]["tp"].append(np.mean(tps) / truth.sum())
                per_rule[r]["fp"].append(np.mean(fps))
            else:
                row += ["", ""]
            per_rule[r]["acc"].append(np.mean(acc[r]))
            rows.append(row)
        print(name, f"{cpu:.0f} CPU s", flush=True)
    summary = []
    for r in RULES:
        v = per_rule[r]
        summary.append([f"{r[0]}, {r[1]}", f"{np.mean(v['acc']):.3f}",
                        f"{np.mean(v['tp']):.2f}" if v["tp"] else "", f"{np.mean(v['fp']):.2f}" if v["fp"] else ""])
    head = ["data", "score, rule", "outer-test accuracy", "features", "TP", "FP"]
    return ("## Which CV score chooses KNIFE's point (classification)\n\n"
            f"{n_splits} stratified outer splits (3/4 train) per data set; KNIFE path (gamma='auto', squared "
            "hinge) and 5 inner folds on the training part; every rule reads the same inner-fold decision "
            "values. `platt_deviance`: held-out logistic deviance of a sigmoid fitted on the inner training "
            "fold's own decision values.\n\nMean over the data sets (TP as a fraction of the true features, "
            "FP a count; simulations only):\n\n"
            + markdown_table(["score, rule", "outer-test accuracy", "TP fraction", "FP"], summary)
            + "\n\nPer data set:\n\n" + markdown_table(head, rows) + "\n")


# --------------------------------------------------------------------------
# part "sim": every method's select() defaults on simulations with a known truth


#: True features a method cannot represent, by (simulation, method): Friedman's x2 enters as
#: 20 (x2 - 0.5)^2, uncorrelated with x2 on [0, 1], so no linear model (the garrote) represents it.
UNREPRESENTABLE = {("Friedman #1 + 10 noise", "garrote"): [2], ("Friedman #1 + 100 noise", "garrote"): [2]}


def _regression_sims(seed):
    """(name, X, y, truth) of the regression simulations: the KNIFE sinusoid (100 x 20) and
    Friedman #1 with 10 and with 100 noise features (200 rows), all drawn with ``seed``."""
    from numkfs.datasets import make_friedman_noise, make_sinusoid

    X, y, t = make_sinusoid(n_samples=100, n_features=20, random_state=seed)
    sims = [("KNIFE sinusoid 100 x 20", X, y, np.asarray(t, dtype=bool))]
    for k in (10, 100):
        Xf, yf, tf = make_friedman_noise(1, n_samples=200, n_noise=k, noise=1.0, random_state=seed)
        sims.append((f"Friedman #1 + {k} noise", Xf, yf, np.asarray(tf, dtype=bool)))
    return sims


def _met(support, truth, name, method):
    """The simulations' target: every true feature ``method`` can represent, at most one false positive."""
    support = np.asarray(support, dtype=bool)
    reachable = truth.copy()
    reachable[UNREPRESENTABLE.get((name, method), [])] = False
    return bool(np.all(support[reachable]) and np.sum(support & ~truth) <= 1)


def _rules(method):
    """The rules a part runs for ``method``: "best", "1se" and its ``select()`` default when that is
    another rule (KNIFE's "1pct")."""
    from numkfs.model_selection import DEFAULT_CV_RULES

    default = DEFAULT_CV_RULES[method]
    return ("best", "1se") + (() if default in ("best", "1se") else (default,))


def _as_default(method, rules):
    """The default rule's three cells when :func:`_rules` did not run it apart: it is "best" or "1se",
    whose cells are those."""
    from numkfs.model_selection import DEFAULT_CV_RULES

    return [f"as {DEFAULT_CV_RULES[method]}", "", ""] if len(rules) == 2 else []


def part_sim(quick=False):
    from numkfs.model_selection import DEFAULT_CV_RULES

    sims = _regression_sims(0)
    sims += [("sin/square 300 x 30", *sin_square(0)), ("make_classification 5 of 30", *informative(1)),
             ("make_classification 5 of 300", *informative(1, p=300)), ("correlated (rho 0.6)", *correlated(0))]
    methods = ["knife", "garrote", "cosso", "lpkta", "nmmkl", "l1kr"]
    if quick:
        sims, methods = sims[:2], methods[:2]
    from numkfs.selection import METHODS

    rows, totals = [], {}
    for name, X, y, truth in sims:
        task = "regression" if np.issubdtype(np.asarray(y).dtype, np.floating) else "classification"
        for m in methods:
            if task not in METHODS[m]:
                continue
            rules = _rules(m)
            cells, fewest = [], ""
            for rule in rules:
                r = _run_select(m, X, y, limit=120 if m == "l1kr" else 600, cv_rule=rule, truth=truth)
                if r is None:
                    cells += ["", "", "not finished (time limit)"]
                elif isinstance(r, str):
                    cells += ["", "", r[:80]]
                else:
                    tp, fp = _tp_fp(r[0], truth)
                    cells += [f"{tp}/{int(truth.sum())}", fp, f"{r[1]:.1f}"]
                    tot = totals.setdefault((m, rule), [0, 0, 0, 0.0])
                    tot[0] += int(truth.sum()) - tp
                    tot[1] += fp
                    tot[2] += int(_met(r[0], truth, name, m))
                    tot[3] += r[1]
                    if rule == "1se":
                        fewest = "none" if r[2] is None else r[2]
            rows.append([name, m, DEFAULT_CV_RULES[m]] + cells + _as_default(m, rules) + [fewest])
            print(rows[-1], flush=True)
    summary = [[m, r + (" (default)" if DEFAULT_CV_RULES[m] == r else ""), v[0], v[1], v[2],
                f"{v[3]:.1f}"] for (m, r), v in totals.items()]
    head = ["data", "method", "default rule", "TP best", "FP best", "CPU s best", "TP 1se", "FP 1se", "CPU s 1se",
            "TP default", "FP default", "CPU s default", "path: fewest FP with every TP"]
    return ("## Every method's `numkfs.select` defaults on simulations, best against 1se\n\n"
            "Target: every true feature the method can represent, at most one false positive.  Each method "
            "through `numkfs.select` with its defaults but `cv_rule`, once with `\"best\"` and once with "
            "`\"1se\"`, and once more with its default rule when that is another one; \"default rule\" is "
            "the rule `select` now uses when none is given (`numkfs.model_selection.DEFAULT_CV_RULES`).  NMMKL: its number of features m chosen by CV "
            "(`NMMKLSelectorCV`; the path is over m).  L1KR limited to 120 s a case.  The last column reads the "
            "path `select` fitted (with the 1se rule): the fewest false positives of a point that holds every "
            "true feature (\"none\": no point holds them all), i.e. whether the target is reachable on "
            "that path at all.\n\n"
            "Totals over the simulations (missed: true features not selected; cases met: every true feature "
            "the method can represent and at most one false positive.  Every method can represent every true "
            "feature here but one: the garrote, a linear model, cannot represent Friedman's x2, which enters "
            "as 20 (x2 - 0.5)^2 and is uncorrelated with x2 on [0, 1]; it still counts as missed):\n\n"
            + markdown_table(["method", "rule", "missed", "false positives", "cases met", "CPU s"], summary)
            + "\n\nPer simulation:\n\n" + markdown_table(head, rows)
            + f"\n\nThe `select` calls ran in their own processes: {sum(v[3] for v in totals.values()):.0f} CPU s "
            "in all (not in the count of this process below).\n")


# --------------------------------------------------------------------------
# part "simseeds": the regression simulations over several data seeds, every regression method

#: Data seeds of part "simseeds" (``SQ_SEEDS`` overrides their number).
SIM_SEEDS = 5


def part_simseeds(quick=False):
    from numkfs.model_selection import DEFAULT_CV_RULES

    seeds = range(int(os.environ.get("SQ_SEEDS", 2 if quick else SIM_SEEDS)))
    methods = ["knife", "garrote"] if quick else ["knife", "garrote", "cosso", "lpkta", "l1kr"]
    rows, totals = [], {}
    for seed in seeds:
        for name, X, y, truth in _regression_sims(seed):
            for m in methods:
                cells, rules = [], _rules(m)
                for rule in rules:
                    r = _run_select(m, X, y, limit=120 if m == "l1kr" else 600, cv_rule=rule)
                    tot = totals.setdefault((m, rule), [0, 0, 0, 0, 0.0])  # cases, met, missed, FP, CPU s
                    tot[0] += 1
                    if r is None or isinstance(r, str):
                        cells += ["", "", "not finished" if r is None else r[:60]]
                        continue
                    tp, fp = _tp_fp(r[0], truth)
                    met = _met(r[0], truth, name, m)
                    tot[1] += met
                    tot[2] += int(truth.sum()) - tp
                    tot[3] += fp
                    tot[4] += r[1]
                    cells += [f"{tp}/{int(truth.sum())}", fp, "yes" if met else "no"]
                rows.append([name, seed, m] + cells + _as_default(m, rules))
                print(rows[-1], flush=True)
    summary = [[m, r + (" (default)" if DEFAULT_CV_RULES[m] == r else ""), f"{v[1]} of {v[0]}", v[2], v[3],
                f"{v[4]:.1f}"] for (m, r), v in sorted(totals.items(), key=lambda kv: methods.index(kv[0][0]))]
    head = ["data", "seed", "method", "TP best", "FP best", "met best", "TP 1se", "FP 1se", "met 1se",
            "TP default", "FP default", "met default"]
    return ("## The regression simulations over data seeds, every regression method, best against 1se\n\n"
            f"The sinusoid and Friedman #1 with 10 and 100 noise features of the `sim` part, each drawn with "
            f"seeds 0 to {len(seeds) - 1} (seed 0 is the `sim` part's), through `numkfs.select` with "
            "`cv_rule=\"best\"` and `\"1se\"`, and with the method's default rule when that is another one "
            "(`DEFAULT_CV_RULES`; L1KR limited to 120 s a case).  Target as in `sim`: every true "
            "feature the method can represent (all but Friedman's x2 for the garrote), at most one false "
            "positive; missed counts every true feature.\n\n"
            + markdown_table(["method", "rule", "cases met", "true features missed", "false positives", "CPU s"],
                             summary)
            + "\n\nPer case:\n\n" + markdown_table(head, rows)
            + f"\n\nThe `select` calls ran in their own processes: {sum(v[4] for v in totals.values()):.0f} "
            "CPU s in all (not in the count of this process below).\n")


def _baselines(task, n_classes=2):
    """(name, estimator) pairs a user would try, each standardising inside a pipeline."""
    from functools import partial

    from sklearn.feature_selection import SelectKBest, mutual_info_classif, mutual_info_regression
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import LassoCV, LinearRegression, LogisticRegression, LogisticRegressionCV
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, SVR

    grid_c, grid_g = np.logspace(-2, 3, 6), np.logspace(-4, 0, 5)
    if task == "classification":
        svc = GridSearchCV(SVC(), {"C": grid_c, "gamma": grid_g}, cv=5)
        kbest = GridSearchCV(make_pipeline(SelectKBest(partial(mutual_info_classif, random_state=0)), SVC()),
                             {"selectkbest__k": [5, 10], "svc__C": [1.0, 10.0]}, cv=5)
        return [("LogisticRegression", make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))),
                ("L1-logistic CV", make_pipeline(StandardScaler(), LogisticRegressionCV(
                    penalty="l1", solver="liblinear" if n_classes == 2 else "saga", cv=5, max_iter=2000,
                    random_state=0))),
                ("SVC grid (30 pairs)", make_pipeline(StandardScaler(), svc)),
                ("SelectKBest(MI) + SVC", make_pipeline(StandardScaler(), kbest))]
    kr = GridSearchCV(KernelRidge(kernel="rbf"), {"alpha": np.logspace(-3, 1, 5), "gamma": grid_g}, cv=5)
    kbest = GridSearchCV(make_pipeline(SelectKBest(partial(mutual_info_regression, random_state=0)), SVR()),
                         {"selectkbest__k": [5, 10], "svr__C": [1.0, 10.0]}, cv=5)
    return [("OLS", make_pipeline(StandardScaler(), LinearRegression())),
            ("LassoCV", make_pipeline(StandardScaler(), LassoCV(cv=5))),
            ("kernel ridge grid (25 pairs)", make_pipeline(StandardScaler(), kr)),
            ("SelectKBest(MI) + SVR", make_pipeline(StandardScaler(), kbest))]


def _n_used(est, p):
    """Features a fitted model uses (a numkfs estimator's count, a pipeline's selector, non-zero
    coefficients of the L1 models, else all)."""
    if hasattr(est, "n_features_selected_"):
        return int(est.n_features_selected_)
    if hasattr(est, "steps") and hasattr(est[0], "get_support"):
        return int(est[0].get_support().sum())
    last = est[-1] if hasattr(est, "steps") else est
    if hasattr(last, "best_estimator_"):
        last = last.best_estimator_
    if hasattr(last, "steps") and hasattr(last[0], "get_support"):
        return int(last[0].get_support().sum())
    coef = getattr(last, "coef_", None)
    if coef is not None and type(last).__name__ in ("LassoCV", "LogisticRegressionCV"):
        return int(np.sum(np.any(np.atleast_2d(coef) != 0, axis=0)))
    return p


#: The real data sets of part "real", in the order run (the two expensive ones, colon and digits, last).
REAL_SETS = ["breast_cancer", "ionosphere", "sonar", "wpbc", "wine", "ozone", "diabetes", "colon", "digits"]
#: The linear baselines of :func:`_baselines` (the target's reference).
LINEAR = ("OLS", "LassoCV", "LogisticRegression", "L1-logistic CV")
#: Per-fit limit of part "real", CPU seconds (``SQ_LIMIT`` overrides).
REAL_LIMIT = 300
#: Per-fit address space of part "real", GiB (``SQ_MEMORY`` overrides): KNIFE's one-vs-rest path on
#: digits keeps an n x n kernel per class and point and grew past 15 GB.
REAL_MEMORY = 6


def _lpkta_regression_mse(est, Xtr, ytr, Xte, yte):
    """Held-out mean squared error of the model ``LpKTASelectorCV`` scores its folds with (kernel
    ridge, penalty 1/C, on the learned kernel at the chosen p), fitted on the training rows: the
    selector has no ``predict``."""
    from numkfs.estimators._lpkta_scoring import kernel_model_scores

    return -kernel_model_scores(Xtr, ytr, Xte, yte, est.path_, [est.best_index_], est.kernel, est.gamma, est.C,
                                traces=est.traces_, scoring="neg_mean_squared_error")[0]


def _real_methods(task, p):
    """(name, estimator, held-out error function or None for ``predict``) of every numkfs method
    that does ``task``: the CV estimator a user would reach for, its defaults but ``cv_rule`` the
    rule ``numkfs.select`` fits it with (:func:`_estimator_rules`; ``SQ_RULE`` one for all).
    NMMKL selects features only: ``NMMKLSelectorCV`` (m chosen by CV) and a linear SVM on its
    selection (standardised), the model its CV scores with, is the model."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    import numkfs as nk

    R = _estimator_rules()
    if task == "regression":
        return [("KNIFERegressorCV", nk.KNIFERegressorCV(cv_rule=R["knife"]), None),
                ("GarroteRegressorCV", nk.GarroteRegressorCV(cv_rule=R["garrote"]), None),
                ("COSSORegressorCV", nk.COSSORegressorCV(cv_rule=R["cosso"]), None),
                ("L1KRRegressorCV", nk.L1KRRegressorCV(cv_rule=R["l1kr"]), None),
                ("LpKTASelectorCV (+ its kernel ridge)", nk.LpKTASelectorCV(cv_rule=R["lpkta"]),
                 _lpkta_regression_mse)]
    nmmkl = make_pipeline(nk.NMMKLSelectorCV(cv_rule=R["nmmkl"]), StandardScaler(),
                          LinearSVC(C=1.0, max_iter=20000, random_state=0))
    return [("KNIFEClassifierCV", nk.KNIFEClassifierCV(cv_rule=R["knife"]), None),
            ("LpKTAClassifierCV", nk.LpKTAClassifierCV(cv_rule=R["lpkta"]), None),
            ("NMMKLSelectorCV + linear SVM", nmmkl, None)]


def _estimator_rules():
    """Each method's ``cv_rule`` as ``numkfs.select`` fits its estimator: the method's rule in
    ``DEFAULT_CV_RULES`` (``SQ_RULE``: one for all) when an estimator takes it, else (the relaxed
    rules, which choose a point of the fitted path) the method's prediction rule."""
    from numkfs._registry import METHOD_ROWS
    from numkfs.model_selection import DEFAULT_CV_RULES

    rule = os.environ.get("SQ_RULE")  # one rule for every method instead of each one's default
    return {m: METHOD_ROWS[m].estimator_rule(rule or r) for m, r in DEFAULT_CV_RULES.items()}


def _rules_text():
    """Which rule each method's estimator is fitted with, in words (the real part's header)."""
    from numkfs.model_selection import DEFAULT_CV_RULES

    R = _estimator_rules()
    names = {"knife": "KNIFE", "garrote": "the garrote", "cosso": "COSSO", "l1kr": "L1KR", "lpkta": "lp-KTA",
             "nmmkl": "NMMKL"}
    by = {}  # (estimator rule, select() rule when another) -> methods
    for m, r in R.items():
        by.setdefault((r, None if DEFAULT_CV_RULES[m] == r else DEFAULT_CV_RULES[m]), []).append(names.get(m, m))
    return "; ".join(f"`\"{r}\"` for {' and '.join(ms)}"
                     + ("" if other is None else f" (whose `select()` rule `{other}` reads a point off that path)")
                     for (r, other), ms in by.items())


def _fit_case(est, X, y, tr, te, clf, error):
    """Fit ``est`` on rows ``tr``: (held-out error on ``te``, features used, CPU s of the fit)."""
    c = time.process_time()
    est.fit(X[tr], y[tr])
    cpu = time.process_time() - c
    if error is not None:
        err = error(est, X[tr], y[tr], X[te], y[te])
    else:
        pred = est.predict(X[te])
        err = np.mean(pred != y[te]) if clf else np.mean((pred - y[te]) ** 2)
    return float(err), _n_used(est, X.shape[1]), cpu


def _mean_se(v):
    v = np.asarray(v, dtype=float)
    return v.mean(), (v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else np.nan)


def part_real(quick=False, write=None):
    """Every method's default and the baselines on real data; ``write(section)`` after each data set."""
    from sklearn.base import clone
    from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

    from numkfs.selection import infer_task

    names = os.environ.get("SQ_REAL", ",".join(REAL_SETS)).split(",")
    n_splits = int(os.environ.get("SQ_SPLITS", 1 if quick else 3))
    limit = float(os.environ.get("SQ_LIMIT", 60 if quick else REAL_LIMIT))
    memory = float(os.environ.get("SQ_MEMORY", REAL_MEMORY)) * 2 ** 30
    if quick:
        names = ["wine", "ozone"]
    tables, targets, cpu_total = [], [], 0.0
    for name in names:
        X, y, _ = real(name)
        task = infer_task(y)
        clf = task == "classification"
        n_classes = len(np.unique(y)) if clf else 0
        split = (StratifiedShuffleSplit if clf else ShuffleSplit)(n_splits=n_splits, test_size=0.25, random_state=0)
        ours = _real_methods(task, X.shape[1])
        if os.environ.get("SQ_MODELS"):
            keep = tuple(os.environ["SQ_MODELS"].split(","))
            ours = [m for m in ours if m[0].startswith(keep)]
        models = ours + [(m, e, None) for m, e in _baselines(task, n_classes)]
        res = {m: [] for m, _, _ in models}
        for k, (tr, te) in enumerate(split.split(X, y)):
            for m, est, error in models:
                if res[m] and isinstance(res[m][-1], str):
                    continue  # over the limit or failed on an earlier split: not tried again
                r = _run_limited(_fit_case, (clone(est), X, y, tr, te, clf, error), cpu=limit, wall=3 * limit,
                                 memory=memory)
                if r is None:
                    r = f"over the limit ({limit:.0f} CPU s) on split {k + 1}"
                elif isinstance(r, str):
                    r = f"{r[:120]} (split {k + 1})"
                else:
                    cpu_total += r[2]
                res[m].append(r)
                print(name, k, m, r if isinstance(r, str) else f"{r[0]:.4g} {r[1]} {r[2]:.1f}", flush=True)
        ok = {m: [r for r in v if not isinstance(r, str)] for m, v in res.items()}
        # the best linear baseline: the lowest mean error, on the same splits
        lin = min((m for m in ok if m in LINEAR and len(ok[m]) == n_splits),
                  key=lambda m: np.mean([r[0] for r in ok[m]]))
        lin_err = np.array([r[0] for r in ok[lin]])
        lin_mean, lin_se = _mean_se(lin_err)
        rows = []
        for m, _, _ in models:
            fails = [r for r in res[m] if isinstance(r, str)]
            if not ok[m]:
                rows.append([m, "", "", "", "", "", fails[0]])
                continue
            err, nf, cpu = (np.array(v, dtype=float) for v in zip(*ok[m]))
            mean, se = _mean_se(err)
            diff = err - lin_err[:err.size]
            dmean, dse = _mean_se(diff)
            # the target by the standard error of the paired difference (the splits are shared), and by
            # the baseline's own standard error over the splits
            met = (dmean <= (dse if np.isfinite(dse) else 0.0), mean <= lin_mean + np.nan_to_num(lin_se))
            note = "; ".join(fails) + (f" ({err.size} of {n_splits} splits)" if err.size < n_splits else "")
            rows.append([m, f"{mean:.3g} ± {se:.2g}", f"{nf.mean():.1f}", f"{cpu.mean():.1f}",
                         "" if m == lin else f"{dmean:+.3g} ± {dse:.2g}",
                         "" if m in LINEAR else "; ".join("met" if t else "NOT met" for t in met), note])
            if any(m == o[0] for o in ours):
                targets.append((name, m, met, dmean, dse, lin, lin_mean, lin_se))
        kind = f"{n_classes} classes" if clf else "regression"
        tables.append(f"### {name} ({X.shape[0]} x {X.shape[1]}, {kind}); best linear baseline: {lin} "
                      f"({lin_mean:.3g} ± {lin_se:.2g})\n\n"
                      + markdown_table(["model", "held-out error", "features", "CPU s per fit",
                                        f"minus {lin} (paired)", "target (paired; baseline's se)", "note"],
                                       rows) + "\n")
        if write is not None:
            write(_real_section(tables, targets, n_splits, limit, memory, cpu_total,
                                partial=len(tables) < len(names)))
    return _real_section(tables, targets, n_splits, limit, memory, cpu_total)


def _real_section(tables, targets, n_splits, limit, memory, cpu_total, partial=False):
    met = [t for t in targets if t[2][0]]
    met_b = [t for t in targets if t[2][1]]
    missed = [f"{t[1]} on {t[0]} ({t[3]:+.3g} ± {t[4]:.2g} against {t[5]})" for t in targets if not t[2][0]]
    return ("## Every method's defaults on real data against the baselines\n\n"
            f"{n_splits} random splits (3/4 train, stratified for classes, `random_state=0`); error: "
            "misclassification rate or mean squared error on the held-out quarter (mean ± standard error over "
            "the splits); features: those the model uses; CPU s per fit.  Each numkfs method that does the task "
            "is the CV estimator a user would reach for, with its defaults except `cv_rule`, which is the "
            "rule `numkfs.select` fits it with: the method's rule of `numkfs.model_selection.DEFAULT_CV_RULES`, "
            f"or its prediction rule where that rule is a relaxed one ({_rules_text()}).  "
            "`LpKTASelectorCV` has no `predict`: its error is that of the model it scores its folds with (kernel "
            "ridge, penalty 1/C, on the learned kernel at the chosen p) fitted on the training rows.  NMMKL selects "
            "features only: `NMMKLSelectorCV` chooses m by the 5-fold score of a linear SVM on each fold's "
            "selection, and that linear SVM (C = 1, standardised) on its selection is the model.  Regression (ozone, raw diabetes): KNIFE, "
            "garrote, COSSO, L1KR, lp-KTA; classification: KNIFE, lp-KTA, NMMKL, all three also for more than "
            f"two classes (wine, digits).  Each fit ran in its own process limited to {limit:.0f} CPU s "
            f"(RLIMIT_CPU; wall-clock backstop {3 * limit:.0f} s) and {memory / 2 ** 30:.0f} GiB of address space "
            "(RLIMIT_AS: a MemoryError, not the machine's OOM killer); a fit over a limit or failing is not tried "
            "on the later splits.  Target: no worse than the best linear baseline (of OLS / LassoCV, "
            "LogisticRegression / L1-logistic CV, the lowest mean error) by more than one standard error.  "
            "\"minus ... (paired)\" is the mean ± standard error of the per-split difference from it (the "
            "splits are shared); the target is read with that standard error (met when the mean difference is "
            "at most its standard error) and, second, with the baseline's own standard error over the splits "
            "(met when the mean error is at most the baseline's mean plus its standard error).\n\n"
            f"Target met in {len(met)} of {len(targets)} (method, data set) cases with a result by the paired "
            f"standard error ({len(met_b)} by the baseline's)"
            + (f"; not met (paired): {'; '.join(missed)}" if missed else "") + ".\n\n"
            + "\n".join(tables)
            + (f"\n(partial: {len(tables)} data sets so far)\n" if partial else "")
            + f"\nThe fits ran in their own processes: {cpu_total:.0f} CPU s in all (not in the count of this "
            "process below).\n")


def _select_case(method, X, y, cv_rule=None, truth=None):
    import numkfs

    c = time.process_time()
    res = numkfs.select(X, y, method=method, cv_rule=cv_rule)
    cpu = time.process_time() - c
    return np.asarray(res.selected, dtype=bool), cpu, _fewest_fp(res.path, truth)


def _fewest_fp(path, truth):
    """The fewest false positives of a point of ``path`` that holds every true feature (None: no such point)."""
    if path is None or truth is None:
        return None
    fps = [int(np.sum(s & ~truth)) for s in (path.selected(i) for i in range(len(path.grid))) if s[truth].all()]
    return min(fps) if fps else None


def _limited_child(fn, args, conn, cpu, memory):
    import resource

    warnings.simplefilter("ignore")
    if cpu is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (int(np.ceil(cpu)), int(np.ceil(cpu)) + 30))
    if memory is not None:  # address space: a MemoryError instead of the machine's OOM killer
        resource.setrlimit(resource.RLIMIT_AS, (int(memory), int(memory)))
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001 - the table says what failed
        out = f"failed: {type(e).__name__}: {e}"
    conn.send(out)
    conn.close()


def _run_limited(fn, args, *, wall, cpu=None, memory=None):
    """``fn(*args)`` in a forked process: its value; None when over the limit (``wall`` seconds of
    wall clock, or ``cpu`` CPU seconds of the process by RLIMIT_CPU); ``"failed: ..."`` when it raised
    (``MemoryError`` beyond ``memory`` bytes of address space, RLIMIT_AS) or died."""
    import multiprocessing as mp
    import signal

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_limited_child, args=(fn, args, send, cpu, memory))
    proc.start()
    send.close()
    out = None
    try:
        if recv.poll(wall):
            out = recv.recv()
    except EOFError:  # died before answering (SIGXCPU: over the CPU limit)
        out = None
    if proc.is_alive():
        proc.terminate()
    proc.join()
    recv.close()
    if out is None and proc.exitcode not in (None, 0, -signal.SIGXCPU, -signal.SIGTERM):
        out = f"failed: the process died (exit code {proc.exitcode})"
    return out


def _run_select(method, X, y, limit, cv_rule=None, truth=None):
    return _run_limited(_select_case, (method, X, y, cv_rule, truth), wall=limit)


#: The parts in the order of the results file.
PART_ORDER = ("scoring", "knife", "seeds", "sim", "simseeds", "real", "common")
TITLE = "# Selection quality of the defaults"


def _rebuild(text, name, section):
    """The whole results file: every part's last section (``name``'s replaced by ``section``), in
    :data:`PART_ORDER`, and nothing else (a reading by hand belongs in the docs)."""
    sections = {}
    for part in PART_ORDER:
        begin, end = f"<!-- {part} -->", f"<!-- /{part} -->"
        if begin in text and end in text:
            sections[part] = text[text.index(begin) + len(begin):text.index(end)].strip("\n")
    sections[name] = section.strip("\n")
    body = "\n\n".join(f"<!-- {p} -->\n{sections[p]}\n<!-- /{p} -->" for p in PART_ORDER if p in sections)
    return (f"{TITLE}\n\nRebuilt by `python benchmarks/selection_quality.py --part PART`: each section is the "
            "last run of its part (the history is git's).\n\n" + body + "\n")


def part_common(quick=False):
    """The common-learner table of ``peers.py --part real`` (its last run), rendered."""
    import json

    from peers import render_real

    path = RESULTS / "peers_real.json"
    if not path.exists():
        return "## Real data, one common learner\n\nNot run yet: `python benchmarks/peers.py --part real`.\n"
    return render_real(json.loads(path.read_text()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=[*PART_ORDER, "all"], default="all")
    ap.add_argument("--quick", action="store_true", help="fewer cases and splits")
    args = ap.parse_args()
    path = Path(os.environ.get("SQ_OUT", RESULTS / "selection_quality.md"))
    text = path.read_text() if path.exists() else TITLE + "\n"
    parts = {"knife": part_knife, "seeds": part_seeds, "scoring": part_scoring, "sim": part_sim,
             "simseeds": part_simseeds, "real": part_real, "common": part_common}
    for name, fn in parts.items():
        if args.part not in (name, "all"):
            continue
        load = os.getloadavg()[0]
        c = time.process_time()
        started = time.strftime('%H:%M UTC', time.gmtime())
        if name == "real":  # written after each data set, so that a long run keeps what it measured
            def write(partial, name=name, load=load, started=started):
                path.write_text(_rebuild(path.read_text() if path.exists() else text, name, partial + (
                    f"\nRun: started {started}, {machine_line()}, load average {load:.1f} at the start "
                    f"(still running; {os.getloadavg()[0]:.1f} now).\n")))

            section = fn(args.quick, write)
        else:
            section = fn(args.quick)
        if name != "common":  # rendered from peers.py's run, which says how it ran
            section += (f"\nRun: started {started}, {machine_line()} (the end), load average {load:.1f} at the "
                        f"start, {os.getloadavg()[0]:.1f} at the end; {time.process_time() - c:.0f} CPU s in this "
                        f"process{' (--quick)' if args.quick else ''}.\n")
        text = _rebuild(path.read_text() if path.exists() else text, name, section)  # others' sections kept
        path.write_text(text)
        print(section, flush=True)


if __name__ == "__main__":
    main()
