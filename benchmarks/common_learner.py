"""Real data judged by the features: one common learner refitted on every selection.

Each selector (numkfs's methods by their ``select()`` defaults, and the peers of
``benchmarks/peers.py``) chooses features on the training rows of a split; the
same downstream learner is then tuned and fitted on those columns of the
training rows and scored on the held-out rows.  The learner:

* classes: ``StandardScaler`` then ``SVC(kernel="rbf")``, C and γ tuned by
  5-fold cross-validation over 5 x 5 values (C from 0.1 to 1000, γ = c / k
  with c from 0.03 to 3 and k the number of columns, so that γ follows the
  scale of squared distances between standardised rows);
* a numeric target: the same with ``SVR`` (ε = 0.1) on y standardised on the
  training rows (``TransformedTargetRegressor``).

A selection with no feature predicts the training rows' majority class or
mean.  Splits: 70 % / 30 % (stratified for classes), ``random_state=0``.
The error: misclassification rate, or mean squared error in y's units.

HSIC Lasso and mRMR need a count: they are told the number of features
KNIFE's default selected on the same split (so KNIFE runs first).

Each (selector, data set) runs in a fresh process (``peers.py --one-real``,
whose ``run_real`` fits the selections with ``peers.fit_select`` and scores
them with :func:`held_out_error` here) under a wall cap; one JSON line per
split.  ``peers.py --part real`` collects them into
``benchmarks/results/peers_real.json`` and renders the tables.  This module
imports nothing of ``peers.py``.
"""
from __future__ import annotations

import numpy as np

#: The real data sets (the selection benchmark's list), small to large.
REAL_SETS = ("ozone", "diabetes", "breast_cancer", "ionosphere", "sonar", "wpbc", "colon")
#: Selectors of the real part: numkfs's methods (those that do the task), then the peers.
REAL_SELECTORS = ("knife", "lpkta", "l1kr", "garrote", "cosso", "nmmkl",
                  "boruta", "permutation", "leshy", "hsic", "mrmr", "l1", "all")
#: Selectors told KNIFE's count on the same split.
TOLD_COUNT = ("hsic", "mrmr")
#: The peers (against which a numkfs selection is also judged).
PEERS = ("boruta", "permutation", "leshy", "hsic", "mrmr", "l1")
TEST_SIZE = 0.3


def load(name):
    """``(X, y, task)`` of a real data set (raw diabetes: scikit-learn's unscaled copy)."""
    import sklearn.datasets as skd

    from numkfs.selection import infer_task

    loaders = {"breast_cancer": skd.load_breast_cancer,
               "diabetes": lambda return_X_y: skd.load_diabetes(return_X_y=return_X_y, scaled=False)}
    if name in loaders:
        X, y = loaders[name](return_X_y=True)
    else:
        from numkfs.datasets import load_dataset

        d = load_dataset(name, dropna=True)
        X, y = d.data, d.target
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    return X, y, infer_task(y)


def splits(y, task, n_splits):
    """The train/test index pairs (the same for every selector)."""
    from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit

    cls = StratifiedShuffleSplit if task == "classification" else ShuffleSplit
    return list(cls(n_splits=n_splits, test_size=TEST_SIZE, random_state=0).split(np.zeros(len(y)), y))


def learner(task, k):
    """The common downstream learner on ``k`` columns (see the module docstring)."""
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, SVR

    grid = {"C": np.logspace(-1, 3, 5), "gamma": np.array([0.03, 0.1, 0.3, 1.0, 3.0]) / max(k, 1)}
    if task == "classification":
        return make_pipeline(StandardScaler(), GridSearchCV(SVC(kernel="rbf"), grid, cv=5))
    return TransformedTargetRegressor(make_pipeline(StandardScaler(), GridSearchCV(SVR(kernel="rbf"), grid, cv=5)),
                                      transformer=StandardScaler())


def held_out_error(X, y, tr, te, cols, task):
    """The learner fitted on ``X[tr][:, cols]``, its error on ``te``."""
    clf = task == "classification"
    cols = np.asarray(cols, dtype=int)
    if cols.size == 0:
        if clf:
            values, counts = np.unique(y[tr], return_counts=True)
            return float(np.mean(y[te] != values[np.argmax(counts)]))
        return float(np.mean((y[te] - y[tr].mean()) ** 2))
    model = learner(task, cols.size).fit(X[tr][:, cols], y[tr])
    pred = model.predict(X[te][:, cols])
    return float(np.mean(pred != y[te])) if clf else float(np.mean((pred - y[te]) ** 2))


def _mean_se(v):
    v = np.asarray(v, dtype=float)
    return float(v.mean()), (float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else float("nan"))


def summarise(rows, name):
    """Per selector on one data set: (selector, n splits, mean error, se, mean features, mean CPU s, failure)."""
    out = []
    for sel in REAL_SELECTORS:
        mine = [r for r in rows if r["data"] == name and r["selector"] == sel]
        if not mine:
            continue
        ok = [r for r in mine if r.get("error") is not None]
        fails = sorted({r["note"] for r in mine if r.get("error") is None})
        if not ok:
            out.append((sel, 0, None, None, None, None, "; ".join(fails)))
            continue
        m, se = _mean_se([r["error"] for r in ok])
        out.append((sel, len(ok), m, se, float(np.mean([r["n_features"] for r in ok])),
                    float(np.mean([r["cpu"] for r in ok])), "; ".join(fails)))
    return out


def judge(summary):
    """Whether each numkfs selection meets the selection target on this data set: its mean error within one
    standard error of the learner on all features, or of the best peer selection with no more features.
    Returns {selector: (met, reference)}."""
    by = {s[0]: s for s in summary if s[2] is not None}
    verdict = {}
    for sel, s in by.items():
        if sel in PEERS or sel == "all":
            continue
        refs = []
        if "all" in by:
            refs.append(("all features", by["all"][2] + np.nan_to_num(by["all"][3])))
        peers = [by[p] for p in PEERS if p in by and by[p][4] <= s[4]]
        if peers:
            best = min(peers, key=lambda t: t[2])
            refs.append((f"{best[0]} ({best[4]:.1f} features)", best[2] + np.nan_to_num(best[3])))
        met = [r for r in refs if s[2] <= r[1]]
        verdict[sel] = (bool(met), (met or refs or [("-", np.nan)])[0][0])
    return verdict
