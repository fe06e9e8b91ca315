"""Why does KNIFE-rbf miss the paper's sinusoid test MSE (Table 1)?  Measurements.

Same data, seeds and protocol as ``benchmarks/knife_paper.py`` (training 100,
validation 100, test 1000, x standardised with training statistics, y centred,
λ1 = 1, γ = 1/p, 0 ≤ w ≤ 1, λ2 chosen on the validation set).  Per replicate:

A. Selection.  On the same KNIFE path: test MSE at the λ2 chosen on the
   validation set of 100, on an extra validation set of 1000 (seed 4000 + r),
   and the best test MSE anywhere on the path (λ2 picked on the *test* set:
   a lower bound for every selection rule on that path, not a result);
   the same with a 50-point path (the previous protocol).
B. Optimisation.  At the chosen λ2, the KNIFE objective of the path point
   against an independent optimiser of the same problem: scipy L-BFGS-B on
   the profile f(w) = λ1 yᵀ(K_w + λ1 I)⁻¹y + λ2 Σw (α eliminated exactly,
   numpy exp kernel) from the path's w, from w = 1 and from 4 random starts.
C. y not centred (the paper's model has no intercept and does not mention
   centring y).
D. Kernel ridge (rbf, γ = 1/p): test MSE with α chosen per replicate on the
   validation set, with the single α best on average over the replicates
   (picked on the test sets: a bound) and per replicate on the test set.
E. Flexibility (NOT the paper's problem; to locate the gap).  The same
   validated path computed by the L-BFGS-B profile optimiser (50 points) with
   (i) the paper's box 0 ≤ w ≤ 1 (should reproduce the library), (ii) no upper
   bound on w, (iii) λ1 = 0.5.

Usage: ``python benchmarks/knife_paper_diagnosis.py [--reps R] [--no-flex]``;
writes ``benchmarks/results/knife_paper_diagnosis.md``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import scipy.linalg
import scipy.optimize as so

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from knife_paper import _choose, _std  # noqa: E402

from numkfs.datasets._knife import make_sinusoid  # noqa: E402
from numkfs.methods.knife import knife_path, path_decision_function  # noqa: E402

GAMMA = 0.1  # 1/p, p = 10


class Profile:
    """f(w) = λ1 yᵀ(K_w + λ1 I)⁻¹ y + λ2 Σ w and its gradient (α eliminated)."""

    def __init__(self, X, y, lambda1=1.0):
        self.X, self.y, self.l1 = X, y, lambda1
        n = X.shape[0]
        self.D = ((X[:, None, :] - X[None, :, :]) ** 2).reshape(n * n, X.shape[1])
        self.eye = np.eye(n)

    def __call__(self, w, lam2):
        n = len(self.y)
        K = np.exp(-GAMMA * (self.D @ (w ** 2))).reshape(n, n)
        a = scipy.linalg.solve(K + self.l1 * self.eye, self.y, assume_a="pos")
        f = self.l1 * self.y @ a + lam2 * w.sum()
        g = 2 * GAMMA * w * self.l1 * ((K * np.outer(a, a)).ravel() @ self.D) + lam2
        return f, g

    def fit(self, w0, lam2, ub=1.0, tight=False):
        opts = dict(maxiter=5000, ftol=1e-13, gtol=1e-8) if tight else {}
        r = so.minimize(self, w0, args=(lam2,), jac=True, method="L-BFGS-B", bounds=[(0, ub)] * len(w0),
                        options=opts)
        return r.x, r.fun

    def predict(self, w, Xn):
        def K(A, B):
            return np.exp(-GAMMA * (((A[:, None, :] - B[None, :, :]) * w) ** 2).sum(-1))
        a = np.linalg.solve(K(self.X, self.X) + self.l1 * np.eye(len(self.y)), self.y)
        return K(Xn, self.X) @ a


def ref_path(prof, ub, rng, n_lambdas=50):
    p = prof.X.shape[1]
    w, _ = min((prof.fit(rng.uniform(0, 1, p), 0.0, ub) for _ in range(5)), key=lambda t: t[1])
    top = 5 * np.max(np.abs(prof(w, 0.0)[1])) + 1e3
    grid = np.concatenate([[0.0], np.geomspace(1e-3 * top, top, n_lambdas - 1)])
    W = [w]
    for lam in grid[1:]:
        W.append(prof.fit(W[-1], lam, ub)[0])
    return grid, np.array(W)


def curves(path, Xtr, sets):
    return [np.mean((path_decision_function(path, Xtr, X) - y[:, None]) ** 2, axis=0) for X, y in sets]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--no-flex", action="store_true", help="skip part E (the slowest)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    from sklearn.kernel_ridge import KernelRidge
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # small dense problems: BLAS threads only contend (measured 100x slower)

    alphas = np.logspace(-3, 3, 25)
    rows = {k: [] for k in ["A val100", "A val1000", "A path min (test-picked)", "A train at λ2=0",
                            "A val100, 50-point path", "A path min, 50-point path", "B rel. objective gap",
                            "B test of best L-BFGS-B fit", "C y not centred", "D KR validated",
                            "D KR per-rep test-picked α", "E box [0,1]", "E train box [0,1]", "E no upper bound",
                            "E train no upper bound", "E λ1 = 0.5", "E train λ1 = 0.5"]}
    kr_all = []
    t0 = time.time()
    for r in range(args.reps):
        Xtr, ytr, sup = make_sinusoid(100, random_state=1000 + r)
        Xva, yva, _ = make_sinusoid(100, random_state=2000 + r)
        Xte, yte, _ = make_sinusoid(1000, random_state=3000 + r)
        Xv2, yv2, _ = make_sinusoid(1000, random_state=4000 + r)
        Xtr, Xva, Xte, Xv2 = _std(Xtr, Xva, Xte, Xv2)
        mu = ytr.mean()
        y, yv, yt, yv2c = ytr - mu, yva - mu, yte - mu, yv2 - mu
        # A: selection on the benchmark's path
        path = knife_path(Xtr, y, kernel="rbf", lambda1=1.0, n_grid=100, random_state=r, max_iter=100)
        va, va2, te, tr = curves(path, Xtr, [(Xva, yv), (Xv2, yv2c), (Xte, yt), (Xtr, y)])
        i = _choose(va)
        rows["A val100"].append(te[i])
        rows["A val1000"].append(te[_choose(va2)])
        rows["A path min (test-picked)"].append(te.min())
        rows["A train at λ2=0"].append(tr[0])
        p50 = knife_path(Xtr, y, kernel="rbf", lambda1=1.0, n_grid=50, random_state=r, max_iter=100)
        va50, te50 = curves(p50, Xtr, [(Xva, yv), (Xte, yt)])
        rows["A val100, 50-point path"].append(te50[_choose(va50)])
        rows["A path min, 50-point path"].append(te50.min())
        # B: optimality at the chosen λ2
        prof = Profile(Xtr, y)
        rng = np.random.default_rng(r)
        lam = path.grid[i]
        starts = [path.weights[i], np.ones(10)] + [rng.uniform(0, 1, 10) for _ in range(4)]
        wb, fb = min((prof.fit(s, lam, tight=True) for s in starts), key=lambda t: t[1])
        rows["B rel. objective gap"].append((path.objective[i] - fb) / path.objective[i])
        rows["B test of best L-BFGS-B fit"].append(np.mean((prof.predict(wb, Xte) - yt) ** 2))
        # C: y not centred
        pc = knife_path(Xtr, ytr, kernel="rbf", lambda1=1.0, n_grid=100, random_state=r, max_iter=100)
        vac, tec = curves(pc, Xtr, [(Xva, yva), (Xte, yte)])
        rows["C y not centred"].append(tec[_choose(vac)])
        # D: kernel ridge
        kv, kt = [], []
        for a in alphas:
            m = KernelRidge(alpha=a, kernel="rbf", gamma=GAMMA).fit(Xtr, y)
            kv.append(np.mean((m.predict(Xva) - yv) ** 2))
            kt.append(np.mean((m.predict(Xte) - yt) ** 2))
        kv, kt = np.array(kv), np.array(kt)
        rows["D KR validated"].append(kt[np.argmin(kv)])
        rows["D KR per-rep test-picked α"].append(kt.min())
        kr_all.append(kt)
        # E: flexibility (not the paper's problem)
        if not args.no_flex:
            for key, ub, l1 in (("E box [0,1]", 1.0, 1.0), ("E no upper bound", None, 1.0), ("E λ1 = 0.5", 1.0, 0.5)):
                pr = Profile(Xtr, y, lambda1=l1)
                grid, W = ref_path(pr, ub, np.random.default_rng(r))
                v = np.array([np.mean((pr.predict(w, Xva) - yv) ** 2) for w in W])
                j = _choose(v)
                rows[key].append(np.mean((pr.predict(W[j], Xte) - yt) ** 2))
                rows[key.replace("E ", "E train ")].append(np.mean((pr.predict(W[j], Xtr) - y) ** 2))
        print(f"replicate {r + 1}/{args.reps}: val100 {te[i]:.3f} path-min {te.min():.3f} gap "
              f"{rows['B rel. objective gap'][-1]:.1e} ({time.time() - t0:.0f} s)", flush=True)
    kr_all = np.array(kr_all)
    kbest = kr_all.mean(0).argmin()

    def ms(x):
        x = np.asarray(x, float)
        return f"{x.mean():.4f} ({x.std(ddof=1) / np.sqrt(len(x)):.4f})" if len(x) > 1 else f"{x.mean():.4f}"

    def ms_or_dash(k):
        return ms(rows[k]) if rows[k] else "not run"

    gaps = np.asarray(rows["B rel. objective gap"])
    a = np.asarray(rows["A val100"])
    n10 = min(10, len(a))
    lines = [
        f"# Why KNIFE-rbf misses the paper's sinusoid test MSE: measurements ({args.reps} replicates, "
        "`python benchmarks/knife_paper_diagnosis.py`)\n",
        "Same data, seeds and protocol as benchmarks/knife_paper.py (train 100, validation 100, test 1000, "
        "λ1 = 1, γ = 1/p, 0 ≤ w ≤ 1, y centred, 100-point path). Mean (standard error) over replicates. "
        "Paper (Table 1): KNIFE rbf train 2.1187 (.0410), test 3.5498 (.0587); kernel ridge train 0.0874 "
        "(.0035), test 6.1239 (.0750). Target: test ≤ 3.7. Rows marked *test-picked* choose on the test set "
        "and are bounds, never results.\n",
        "## A. Selection of λ2 (validation protocol)\n",
        "| λ2 chosen by | test MSE |", "|---|---|",
        f"| validation set of 100 (the benchmark), 100-point path | {ms(rows['A val100'])} |",
        f"| validation set of 1000 | {ms(rows['A val1000'])} |",
        f"| *test-picked*: best point anywhere on the path | {ms(rows['A path min (test-picked)'])} |",
        f"| validation set of 100, 50-point path (previous protocol) | {ms(rows['A val100, 50-point path'])} |",
        f"| *test-picked*, 50-point path | {ms(rows['A path min, 50-point path'])} |",
        "",
        f"Training MSE at λ2 = 0, the least regularised model on the path: {ms(rows['A train at λ2=0'])} "
        "(the paper's KNIFE at its *chosen* λ2: 2.1187). Spread over replicates: sd "
        f"{a.std(ddof=1):.3f}; first {n10} replicates {a[:n10].mean():.3f}, the rest "
        f"{a[n10:].mean() if len(a) > n10 else float('nan'):.3f} (why `--quick`, replicates 0-4, looks better).\n",
        "## B. Optimisation at the chosen λ2\n",
        "Relative objective gap (path point minus the best of 6 L-BFGS-B fits of the profiled objective, "
        f"divided by the path objective): max {gaps.max():.2e}, mean {gaps.mean():.2e} "
        "(negative = the path point is better). Test MSE of the best L-BFGS-B fit at the same λ2: "
        f"{ms(rows['B test of best L-BFGS-B fit'])} (path point: {ms(rows['A val100'])}).\n",
        "## C. y not centred\n",
        f"Test MSE, λ2 validated as in A: {ms(rows['C y not centred'])} (centred: {ms(rows['A val100'])}).\n",
        "## D. Kernel ridge baseline (rbf, γ = 1/p, 25 penalties in [1e-3, 1e3])\n",
        "| α chosen by | test MSE |", "|---|---|",
        f"| validation set of 100 (the benchmark) | {ms(rows['D KR validated'])} |",
        f"| *test-picked*, one α for all replicates (α = {alphas[kbest]:.3g}) | {ms(kr_all[:, kbest])} |",
        f"| *test-picked*, per replicate | {ms(rows['D KR per-rep test-picked α'])} |",
        "",
        "## E. Model flexibility (NOT the paper's problem; only to locate the gap)\n",
        "Validated 50-point paths computed with the independent L-BFGS-B profile optimiser.\n",
        "| problem | train MSE | test MSE |", "|---|---|---|",
        f"| paper's: 0 ≤ w ≤ 1, λ1 = 1 | {ms_or_dash('E train box [0,1]')} | {ms_or_dash('E box [0,1]')} |",
        f"| no upper bound on w, λ1 = 1 | {ms_or_dash('E train no upper bound')} | {ms_or_dash('E no upper bound')} |",
        f"| 0 ≤ w ≤ 1, λ1 = 0.5 | {ms_or_dash('E train λ1 = 0.5')} | {ms_or_dash('E λ1 = 0.5')} |",
        "",
        "The box [0, 1] row is the same problem as the library's path but computed independently (another "
        "start, a cruder grid top, 50 points), so it agrees with A only up to that.\n",
        "## Conclusion\n",
        f"- Not the validation protocol: choosing λ2 on the test set itself gives "
        f"{np.mean(rows['A path min (test-picked)']):.3f}, the validation set of 100 "
        f"{np.mean(rows['A val100']):.3f}, one of 1000 {np.mean(rows['A val1000']):.3f}; 50 or 100 path "
        "points make no difference. No rule for choosing λ2 on these paths can reach 3.7.",
        f"- Not the optimisation: at the chosen λ2 the path points match multi-start L-BFGS-B fits of the "
        f"same objective (mean relative gap {gaps.mean():.1e}, max {gaps.max():.1e}).",
        f"- Not y-centring ({np.mean(rows['C y not centred']):.3f} uncentred).",
        f"- The paper's fitted models are more flexible than the best optima (multi-start) of eq. 2 with "
        f"λ1 = 1, γ = 1/p, 0 ≤ w ≤ 1: even at λ2 = 0 our training MSE is {np.mean(rows['A train at λ2=0']):.3f}, "
        "above the paper's 2.1187 at its chosen λ2. Relaxing the problem (no upper bound on w, or a "
        "smaller λ1), which the paper rules out, gives training and test errors like the paper's (part E); "
        "we keep the paper's stated problem and report the miss.",
        f"- The kernel ridge baseline, which has no optimisation or path, also cannot reach the paper's "
        f"6.1239 by any choice of its penalty ({np.mean(rows['D KR per-rep test-picked α']):.3f} with the "
        "penalty picked per replicate on the test set): on our replicates rbf-kernel models do worse than "
        "in the paper by about as much as KNIFE does (for kernel ridge about 2 combined standard errors, "
        "so possibly partly the luck of the paper's 50 draws or an unstated detail of its setting), and "
        "there no path or λ2 is involved.",
        "",
        f"({time.time() - t0:.0f} s)\n",
    ]
    out = "\n".join(lines)
    print(out)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "knife_paper_diagnosis.md"), "w") as fh:
        fh.write(out)


if __name__ == "__main__":
    main()
