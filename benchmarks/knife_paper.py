"""Reproduce Tables 1 and 2 of the KNIFE paper (Allen), with baselines.

Protocol (paper §4.1): per replicate a training set of 100, a separate
validation set (used only to choose the one tuned parameter of each method:
λ2 on the KNIFE path with λ1 = 1, the ridge penalty of (kernel) ridge, C
of the SVM) and a test set of 1000.  Features are standardised with the
training statistics; γ = 1/p for the rbf kernels; polynomial kernels have
degree 2 and offset 1.  KNIFE: squared loss (sinusoid), squared hinge
(skin of the orange).  Baselines from scikit-learn in the same run:
``KernelRidge`` (rbf and poly), ``Ridge``, ``SVC`` (poly, degree 2).

Printed: mean (standard error) of training and test error and of the
percentages of true and noise features selected, ours beside the paper's.

Also printed for the KNIFE rows (diagnostics, not results): the test error of
the best point anywhere on the path (λ2 picked on the *test* set: a lower
bound for any way of choosing λ2 on that path, never used to choose) and the
training error at λ2 = 0 (the least regularised model on the path).

Usage: ``python benchmarks/knife_paper.py [--quick] [--reps R]``; writes
``benchmarks/results/knife_paper_50reps.md`` for the full 50 replicates and
``benchmarks/results/knife_paper.md`` otherwise (``--out`` overrides).
Why the sinusoid KNIFE row misses its target: ``benchmarks/knife_paper_diagnosis.py``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from numkfs.datasets._knife import make_orange, make_sinusoid  # noqa: E402
from numkfs.methods.knife import knife_path, path_decision_function  # noqa: E402

PAPER_T1 = {  # train MSE, test MSE, % true, % noise (standard errors)
    "Ridge": ("4.8337 (.1428)", "6.2589 (.0771)", "-", "-"),
    "Kernel ridge - rbf": ("0.0874 (.0035)", "6.1239 (.0750)", "-", "-"),
    "KNIFE - rbf": ("2.1187 (.0410)", "3.5498 (.0587)", "98.8 (3.39)", "2.4 (4.67)"),
    "KNIFE - poly": ("5.2376 (.1280)", "6.8591 (.1315)", "94.8 (7.42)", "0.0 (0.00)"),
}
PAPER_T2 = {
    "SVM - poly": ("0 (0)", "0.1919 (.0042)", "-", "-"),
    "KNIFE / SVM - poly": ("0.0366 (.0025)", "0.0986 (.0043)", "100.0 (0)", "16.7 (1.98)"),
}
ALPHAS = np.logspace(-3, 3, 25)


def _std(Xtr, *others):
    m, s = Xtr.mean(0), Xtr.std(0)
    return [(Xtr - m) / s] + [(X - m) / s for X in others]


def _choose(val_err):
    """Smallest validation error; ties to the later (larger-λ2, sparser) point."""
    best = np.min(val_err)
    return int(np.flatnonzero(val_err <= best + 1e-12)[-1])


def knife_validated(Xtr, ytr, Xva, yva, Xte, yte, *, kernel, loss, classify, n_lambdas, seed):
    path = knife_path(Xtr, ytr, kernel=kernel, loss=loss, lambda1=1.0, n_grid=n_lambdas, degree=2,
                      coef0=1.0, random_state=seed, max_iter=100)
    dv = path_decision_function(path, Xtr, Xva)
    if classify:
        val = np.mean(np.where(dv > 0, 1.0, -1.0) != yva[:, None], axis=0)
    else:
        val = np.mean((dv - yva[:, None]) ** 2, axis=0)
    i = _choose(val)
    dtr = path_decision_function(path, Xtr, Xtr)
    dte = path_decision_function(path, Xtr, Xte)
    if classify:
        tr = np.mean(np.where(dtr > 0, 1, -1) != ytr[:, None], axis=0)
        te = np.mean(np.where(dte > 0, 1, -1) != yte[:, None], axis=0)
    else:
        tr = np.mean((dtr - ytr[:, None]) ** 2, axis=0)
        te = np.mean((dte - yte[:, None]) ** 2, axis=0)
    # diagnostics only (never used to choose): best test error on the path, training error at λ2 = 0
    diag = (float(te.min()), float(tr[0]))
    return tr[i], te[i], path.weights[i] > 0, diag


def sklearn_validated(make, params, Xtr, ytr, Xva, yva, Xte, yte, classify):
    best = None
    for prm in params:
        m = make(prm).fit(Xtr, ytr)
        pv = m.predict(Xva)
        e = np.mean(pv != yva) if classify else np.mean((pv - yva) ** 2)
        if best is None or e < best[0]:
            best = (e, m)
    m = best[1]
    if classify:
        return np.mean(m.predict(Xtr) != ytr), np.mean(m.predict(Xte) != yte), None
    return np.mean((m.predict(Xtr) - ytr) ** 2), np.mean((m.predict(Xte) - yte) ** 2), None


def _replicate(make, r, n_val):
    """Replicate r: training (100), validation and test (1000) sets from
    ``make``, standardised with the training statistics; and the support."""
    Xtr, ytr, sup = make(100, random_state=1000 + r)
    Xva, yva, _ = make(n_val, random_state=2000 + r)
    Xte, yte, _ = make(1000, random_state=3000 + r)
    Xtr, Xva, Xte = _std(Xtr, Xva, Xte)
    return Xtr, ytr, Xva, yva, Xte, yte, sup


def run_sinusoid(reps, n_val, n_lambdas):
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import Ridge

    res = {k: [] for k in PAPER_T1}
    for r in range(reps):
        Xtr, ytr, Xva, yva, Xte, yte, sup = _replicate(make_sinusoid, r, n_val)
        mu = ytr.mean()
        ytr_c, yva_c, yte_c = ytr - mu, yva - mu, yte - mu
        p = Xtr.shape[1]
        for name, kernel in (("KNIFE - rbf", "rbf"), ("KNIFE - poly", "poly")):
            tr, te, sel, dg = knife_validated(Xtr, ytr_c, Xva, yva_c, Xte, yte_c, kernel=kernel, loss="squared",
                                              classify=False, n_lambdas=n_lambdas, seed=r)
            res[name].append((tr, te, 100 * sel[sup].mean(), 100 * sel[~sup].mean()) + dg)
        tr, te, _ = sklearn_validated(lambda a: Ridge(alpha=a), ALPHAS, Xtr, ytr_c, Xva, yva_c, Xte, yte_c, False)
        res["Ridge"].append((tr, te, np.nan, np.nan))
        tr, te, _ = sklearn_validated(lambda a: KernelRidge(alpha=a, kernel="rbf", gamma=1.0 / p), ALPHAS,
                                      Xtr, ytr_c, Xva, yva_c, Xte, yte_c, False)
        res["Kernel ridge - rbf"].append((tr, te, np.nan, np.nan))
        print(f"sinusoid replicate {r + 1}/{reps}: " + ", ".join(f"{k} {v[-1][1]:.3f}" for k, v in res.items()),
              flush=True)
    return res


def run_orange(reps, n_val, n_lambdas):
    from sklearn.svm import SVC

    res = {k: [] for k in PAPER_T2}
    for r in range(reps):
        Xtr, ytr, Xva, yva, Xte, yte, sup = _replicate(make_orange, r, n_val)
        tr, te, sel, dg = knife_validated(Xtr, ytr, Xva, yva, Xte, yte, kernel="poly", loss="squared_hinge",
                                          classify=True, n_lambdas=n_lambdas, seed=r)
        res["KNIFE / SVM - poly"].append((tr, te, 100 * sel[sup].mean(), 100 * sel[~sup].mean()) + dg)
        tr, te, _ = sklearn_validated(lambda C: SVC(kernel="poly", degree=2, gamma=1.0, coef0=1.0, C=C),
                                      np.logspace(-3, 3, 13), Xtr, ytr, Xva, yva, Xte, yte, True)
        res["SVM - poly"].append((tr, te, np.nan, np.nan))
        print(f"orange replicate {r + 1}/{reps}: " + ", ".join(f"{k} {v[-1][1]:.3f}" for k, v in res.items()),
              flush=True)
    return res


def _ms(x, digits):
    x = np.asarray(x, dtype=float)
    if np.all(np.isnan(x)):
        return "-"
    se = x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else np.nan
    return f"{x.mean():.{digits}f} ({se:.{digits}f})"


def table(res, paper, digits):
    lines = ["| method | train (ours) | train (paper) | test (ours) | test (paper) | % true (ours) | "
             "% true (paper) | % noise (ours) | % noise (paper) |", "|" + "---|" * 9]
    for name, rows in res.items():
        a = np.array(rows)
        pp = paper[name]
        lines.append(f"| {name} | {_ms(a[:, 0], digits)} | {pp[0]} | {_ms(a[:, 1], digits)} | {pp[1]} | "
                     f"{_ms(a[:, 2], 1)} | {pp[2]} | {_ms(a[:, 3], 1)} | {pp[3]} |")
    return "\n".join(lines)


def _why(res):
    a = np.array(res["KNIFE - rbf"])
    bound = a[:, 4].mean()
    if bound <= 3.7:
        return ""
    return (f"Why the sinusoid target (test MSE ≤ 3.7) is missed: the best model anywhere on our paths, "
            f"picked on the test set, has mean test MSE {bound:.4f}, so no way of choosing λ2 (validation-set "
            f"size, grid, tie rule) can reach 3.7 on these paths; and the least regularised model (λ2 = 0) "
            f"already has a training MSE ({a[:, 5].mean():.4f}) above the paper's 2.1187 at its chosen λ2. "
            "At the chosen λ2 the path points are as good as multi-start fits of the paper's stated "
            "problem; the paper's models are more flexible "
            "than that problem allows. Measurements: benchmarks/results/knife_paper_diagnosis.md "
            "(`python benchmarks/knife_paper_diagnosis.py`).\n")


def diag_table(res, digits):
    lines = ["| method | test at the validated λ2 | best test anywhere on the path (λ2 picked on the test set) | "
             "train at the validated λ2 | train at λ2 = 0 |", "|" + "---|" * 5]
    for name, rows in res.items():
        a = np.array(rows)
        if a.shape[1] < 6:
            continue
        lines.append(f"| {name} | {_ms(a[:, 1], digits)} | {_ms(a[:, 4], digits)} | {_ms(a[:, 0], digits)} | "
                     f"{_ms(a[:, 5], digits)} |")
    return "\n".join(lines)


PROTOCOL = (
    "Protocol (paper §4.1 and MATH.md §1; where the paper is silent the choice is ours, made before looking "
    "at any test error, and said so). Per replicate r (seeds 1000 + r, 2000 + r, 3000 + r): a training set "
    "of 100, a separate validation set of {n_val} and a test set of 1000 from the same model. x is "
    "standardised with the training means and standard deviations (validation and test sets with the same "
    "training statistics); for the sinusoid y is centred with the training mean (the paper's regression "
    "model has no intercept; it does not say whether y was centred; measured effect on the KNIFE rbf test "
    "MSE: 0.01, see the diagnosis). KNIFE: λ1 = 1 (summed losses), γ = 1/p, 0 ≤ w ≤ 1, squared loss "
    "(sinusoid), squared hinge (orange); poly kernels of degree 2 with offset 1; one path per replicate "
    "(one random start at λ2 = 0, then warm starts, paper Algorithm 2) on {n_lambdas} points: 0, then "
    "log-spaced from 1e-3·M to M, M the λ2 at which every weight is zero (found, not guessed). λ2 is the "
    "path point with the smallest validation error (MSE, or misclassification rate); ties go to the larger "
    "λ2 (sparser model), a tie meaning equal to 1e-12. Validation-set size: the paper does not state it; "
    "we use the training-set size, 100, fixed a priori (a validation set of 1000 changes the sinusoid KNIFE "
    "rbf test MSE by less than 0.02, see the diagnosis). Baselines (scikit-learn, same data): one parameter "
    "validated on the same validation set (ridge / kernel ridge penalty on 25 log-spaced values in "
    "[1e-3, 1e3], SVC C on 13 in [1e-3, 1e3]); kernel ridge rbf with γ = 1/p. Mean (standard error) over "
    "replicates; the paper's parentheses are its numbers as printed.")

CHANGES = (
    "Changes in this revision (2026-11-22) and why: (1) the KNIFE path has {n_lambdas} points (was 50): the "
    "paper's grid is 100 log-spaced values and 100 is the library default; (2) the diagnostic columns below; "
    "(3) the full run writes knife_paper_50reps.md. Nothing else changed: the model, the data, the seeds "
    "and the selection rule are as before, and the library (numkfs/methods/knife.py) is unchanged, because "
    "the investigation found no optimisation problem at the chosen models (path fits agree with "
    "independent multi-start L-BFGS-B fits of the same objective, mean relative gap 2e-5, max 8e-4 over "
    "the 50 chosen points; benchmarks/results/knife_paper_diagnosis.md).")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 replicates")
    ap.add_argument("--reps", type=int, default=None, help="replicates (default 50, 5 with --quick)")
    ap.add_argument("--n-val", type=int, default=100, help="size of the validation set (default 100)")
    ap.add_argument("--n-lambdas", type=int, default=100,
                    help="points on each KNIFE path (default 100, the paper's grid)")
    ap.add_argument("--out", default=None, help="results file name in benchmarks/results/ (default "
                    "knife_paper_50reps.md for 50 replicates, knife_paper.md otherwise)")
    args = ap.parse_args()
    reps = args.reps or (5 if args.quick else 50)
    out_name = args.out or ("knife_paper_50reps.md" if reps == 50 else "knife_paper.md")
    warnings.filterwarnings("ignore")
    t0 = time.time()
    s = run_sinusoid(reps, args.n_val, args.n_lambdas)
    t1 = time.time()
    o = run_orange(reps, args.n_val, args.n_lambdas)
    t2 = time.time()
    rbf = np.array(s["KNIFE - rbf"])
    orn = np.array(o["KNIFE / SVM - poly"])
    checks = [
        ("sinusoid KNIFE rbf test MSE <= 3.7", rbf[:, 1].mean() <= 3.7),
        ("sinusoid KNIFE rbf >= 95 % true features", rbf[:, 2].mean() >= 95),
        ("sinusoid KNIFE rbf <= 5 % noise features", rbf[:, 3].mean() <= 5),
        ("orange KNIFE test error <= 0.11", orn[:, 1].mean() <= 0.11),
        ("orange KNIFE 100 % true features", orn[:, 2].mean() >= 100 - 1e-9),
        ("orange KNIFE <= 20 % noise features", orn[:, 3].mean() <= 20),
    ]
    cmd = "python benchmarks/knife_paper.py" + (" --quick" if args.quick else "") + \
        (f" --reps {args.reps}" if args.reps else "")
    text = [
        f"# KNIFE paper, Tables 1 and 2: ours beside the paper's ({reps} replicates, `{cmd}`)\n",
        PROTOCOL.format(n_val=args.n_val, n_lambdas=args.n_lambdas) + "\n",
        CHANGES.format(n_lambdas=args.n_lambdas) + "\n",
        "## Table 1: sinusoid regression (MSE)\n", table(s, PAPER_T1, 4),
        f"\n({t1 - t0:.0f} s)\n",
        "Diagnostics of the KNIFE rows (not results: the middle column picks λ2 on the test set and only "
        "bounds what any validation rule could reach on these paths; the paper's KNIFE rbf: train 2.1187, "
        "test 3.5498):\n",
        diag_table(s, 4) + "\n",
        _why(s),
        "## Table 2: skin of the orange (misclassification rate)\n", table(o, PAPER_T2, 4),
        f"\n({t2 - t1:.0f} s). Bayes error: the paper quotes 0.0611 = P(χ²₄ > 9); with equal class priors "
        "the Bayes error of this model is about 0.029 (see numkfs/datasets/_knife.py).\n",
        "Diagnostics of the KNIFE row (as for Table 1):\n",
        diag_table(o, 4) + "\n",
        "## Targets\n",
        ("" if reps >= 50 else f"Only {reps} replicates: a CI-sized check. The targets are judged on the full "
         "50-replicate run (knife_paper_50reps.md); the first replicates happen to be easier than average "
         "(benchmarks/results/knife_paper_diagnosis.md, part A).\n"),
        "\n".join(f"- {'PASS' if ok else 'FAIL'}: {name}" for name, ok in checks),
        "",
    ]
    out = "\n".join(text)
    print(out)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", out_name), "w") as fh:
        fh.write(out)


if __name__ == "__main__":
    main()
