"""The linear garrote on wide data (p >> n): the working-set solver
in the residual form (strong rule, exact solves on the active partition)
against its own KKT conditions, the Gram-matrix coordinate descent of
numkfs <= 0.1 (no screening), CLARABEL, ridge's closed form and the duality
gap.  Speed is measured in benchmarks/garrote_wide.py, not here."""
import numpy as np
import pytest

from numkfs.methods.garrote import garrote_path
from numkfs.solvers import cross_check, solve
from numkfs.solvers.native.garrote import (LinearGarrote, berhu_penalty, garrote_duality_gap, garrote_lambda2_max,
                                           solve_linear_garrote_wide)

EPS = np.finfo(float).eps


def _wide(n=30, p=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[:5] = [3.0, -2.0, 2.0, 1.5, -1.5]
    y = X @ beta + 0.5 * rng.standard_normal(n)
    return X, y


def _kkt(X, y, beta, lam1, lam2):
    """numpy per-feature subgradient residual of min ||y - Xb||² + Σ ρ(b_j) and
    the round-off of computing it: |x_jᵀ(y - Xb)| is summed from terms of
    size Σ_i |x_ij| (|y_i| + Σ_k |x_ik b_k|), each exact to ~ (n + p) ε."""
    z = X.T @ (y - X @ beta)
    mu, kappa = np.sqrt(lam1 * lam2), np.sqrt(lam2 / lam1)
    res = np.where(beta == 0, np.maximum(np.abs(z) - mu, 0),
                   np.where(np.abs(beta) <= kappa, np.abs(z - mu * np.sign(beta)), np.abs(z - lam1 * beta)))
    terms = np.abs(X).T @ (np.abs(y) + np.abs(X) @ np.abs(beta))
    return res, (X.shape[0] + X.shape[1]) * EPS * terms


@pytest.fixture(scope="module")
def wide_path():
    X, y = _wide()
    Xc, yc = X - X.mean(0), y - y.mean()
    lmax = garrote_lambda2_max(Xc, yc, 1.0)
    grid = np.append(lmax * np.geomspace(1.0, 1e-3, 60), 0.0)  # the CV grid of GarroteRegressorCV, λ2 = 0 included
    return X, y, Xc, yc, grid, garrote_path(X, y, 1.0, grid)


def test_wide_path_kkt_at_every_point(wide_path):
    """The solver stops at KKT residual <= 1e-10 max(1, ||Xᵀy||_∞) over all p
    features; recomputed independently, only the round-off of the
    recomputation may add to it."""
    X, y, Xc, yc, grid, path = wide_path
    scale = max(1.0, np.abs(Xc.T @ yc).max())
    assert set(path.extra["solver"]) == {"native"}
    assert path.n_selected()[0] == 0 and path.n_selected()[-1] == X.shape[1]  # λ2 = 0: ridge, every w_j = 1
    for i, l2 in enumerate(grid):
        res, roundoff = _kkt(Xc, yc, path.extra["coef"][i], 1.0, l2)
        assert np.all(res <= 1e-10 * scale + roundoff), (i, res.max(), scale)
    # λ2 = 0 is ridge regression, solved through the n x n system
    ridge = Xc.T @ np.linalg.solve(Xc @ Xc.T + np.eye(X.shape[0]), yc)
    err = np.abs(path.extra["coef"][-1] - ridge).max()
    # the KKT residual 1e-10 scale moves β̃ by at most that over λ1 = 1 (the smallest eigenvalue of XᵀX + λ1 I)
    assert err <= 1e-10 * scale + 1e3 * EPS * np.abs(ridge).max(), err


def test_wide_path_agrees_with_the_unscreened_gram_solver(wide_path):
    """At a few points (where the Gram loop of numkfs <= 0.1 is fast enough):
    the same support, and objectives within the sum of the two duality gaps
    (each answer is at most its gap above the optimum)."""
    X, y, Xc, yc, grid, path = wide_path
    prob = LinearGarrote(Xc, yc, 1.0, 0.0)
    for i in [5, 15, 30]:
        prob.update(lambda2=float(grid[i]))
        prob.beta_warm = None
        full = solve(prob, "native", fallback=False, algorithm="gram")
        assert full.status == "optimal"
        gaps = []
        for b in (full["beta"], path.extra["coef"][i]):
            r = yc - Xc @ b
            gaps.append(garrote_duality_gap(r, yc, b, Xc.T @ r, 1.0, grid[i]))
        assert np.array_equal(full["w"] > 1e-5, path.weights[i] > 1e-5), i
        assert np.array_equal(full["beta"] != 0, path.extra["coef"][i] != 0), i
        f = prob.reduced_objective(path.extra["coef"][i])
        assert abs(f - full.objective) <= sum(gaps) + 1e3 * EPS * f, (i, f, full.objective, gaps)


def test_wide_solver_never_forms_the_gram_matrix(wide_path):
    X, y, Xc, yc, grid, path = wide_path
    prob = LinearGarrote(Xc, yc, 1.0, float(grid[20]))
    res = solve(prob, "native", fallback=False)
    assert res.status == "optimal" and prob._H is None
    assert "working set" in res.message


def test_duality_gap_certifies_the_wide_solution(wide_path):
    """Weak duality: the gap is >= 0 at any β̃ (here random ones); at the
    answer it is bounded by the KKT residual e: per feature the Fenchel-Young
    gap is <= 2e|β̃_j| + 2e|x_jᵀr|/λ1."""
    X, y, Xc, yc, grid, path = wide_path
    rng = np.random.default_rng(5)
    for i in [10, 40]:
        l2 = grid[i]
        for _ in range(3):
            b = rng.standard_normal(X.shape[1]) * (rng.random(X.shape[1]) < 0.02)
            r = yc - Xc @ b
            assert garrote_duality_gap(r, yc, b, Xc.T @ r, 1.0, l2) > 0
        b = path.extra["coef"][i]
        r = yc - Xc @ b
        v = Xc.T @ r
        e = _kkt(Xc, yc, b, 1.0, l2)[0].max()
        gap = garrote_duality_gap(r, yc, b, v, 1.0, l2)
        f = float(r @ r + berhu_penalty(b, 1.0, l2).sum())
        assert -1e3 * EPS * f <= gap <= 2 * e * (np.abs(b).sum() + np.abs(v).sum()) + 1e3 * EPS * f, (gap, e)


@pytest.mark.parametrize("frac", [0.3, 0.03, 0.003])
def test_wide_native_agrees_with_clarabel(frac):
    """A small wide problem (30 x 120) through the registry: the native answer
    (the wide solver, since p > n) selects what CLARABEL selects and its
    objective is never worse by more than CLARABEL's 1e-9 accuracy."""
    X, y = _wide(30, 120, seed=3)
    Xc, yc = X - X.mean(0), y - y.mean()
    prob = LinearGarrote(Xc, yc, 1.0, frac * garrote_lambda2_max(Xc, yc, 1.0))
    table = cross_check(prob, ["native", "CLARABEL"])
    row = table["CLARABEL"]
    assert row["status"] == "optimal" and row["same_selection"] is True, row
    assert row["solution_distance"] < 1e-4, row
    assert table["native"]["objective_gap"] == 0 and row["objective_gap"] >= -1e-9, row


def test_adaptive_weights_and_strong_rule_do_not_change_the_answer():
    """Per-feature penalties (π_j, some 0: never penalised) and a strong-rule
    mask that is wrong on purpose (it hides the true features): the full KKT
    check puts the missed features back."""
    X, y = _wide(25, 400, seed=7)
    Xc, yc = X - X.mean(0), y - y.mean()
    pw = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[1])
    pw[7] = 0.0
    l2 = 0.05 * garrote_lambda2_max(Xc, yc, 1.0) * pw
    strong = np.ones(X.shape[1], bool)
    strong[:5] = False
    b_wrong, _, info = solve_linear_garrote_wide(Xc, yc, 1.0, l2, strong=strong)
    b_none, _, _ = solve_linear_garrote_wide(Xc, yc, 1.0, l2)
    scale = max(1.0, np.abs(Xc.T @ yc).max())
    for b in (b_wrong, b_none):
        res, roundoff = _kkt(Xc, yc, b, 1.0, l2)
        assert np.all(res <= 1e-10 * scale + roundoff)
    assert b_wrong[7] != 0 and np.any(b_none[:5] != 0)  # the unpenalised feature and hidden true ones are in
    assert np.array_equal(b_wrong != 0, b_none != 0)
    assert info["outer"] >= 2  # the hidden features came in at a later full check


# --------------------------------------------------------------------------
# flat faces: noise-free (or rounded) wide data on fold-centred rows


def test_pivot_off_a_flat_face_never_increases_the_objective():
    """With more features on the linear part of ρ than X (centred on n rows)
    has rank, a pivot along the null space of their columns keeps the loss,
    does not increase the penalty, and leaves at most rank(X) of them."""
    from numkfs.solvers.native.berhu import _pivot_flat_face, _reduced_objective

    rng = np.random.default_rng(3)
    n, p = 12, 60
    X = rng.standard_normal((n, p))
    X -= X.mean(axis=0)  # rank n - 1
    y = X[:, 0] - X[:, 1]
    lam1, lam2 = 1.0, np.full(p, 0.25)
    kappa, mu = np.sqrt(lam2 / lam1), np.sqrt(lam1 * lam2)
    beta = np.zeros(p)
    beta[:n + 4] = rng.uniform(0.05, 0.45, n + 4) * rng.choice([-1.0, 1.0], n + 4)  # all on the linear part
    r = y - X @ beta
    f0, loss0 = _reduced_objective(r, beta, lam1, lam2), r @ r
    XT, W = np.ascontiguousarray(X.T), np.arange(p)
    assert _pivot_flat_face(XT, y, beta, r, W, mu, kappa)
    lin = (beta != 0) & (np.abs(beta) <= kappa)
    assert lin.sum() <= n - 1
    np.testing.assert_allclose(r, y - X @ beta, rtol=0, atol=50 * n * EPS * np.abs(y).max())
    # the loss is unchanged up to the round-off of the null vectors (n ε per
    # pivot, n + 5 pivots, on ||y|| + Σ|x_j β_j|); the objective does not increase
    scale = np.linalg.norm(y) + np.abs(X).sum() * np.abs(beta).max()
    assert abs(r @ r - loss0) <= 100 * n * (n + 5) * EPS * scale ** 2
    assert _reduced_objective(r, beta, lam1, lam2) <= f0 + 100 * n * (n + 5) * EPS * scale ** 2


@pytest.mark.slow
def test_noise_free_wide_data_reaches_the_native_tolerance_in_every_fold():
    """y an exact combination of 3 of 3,000 columns on 30 rows: on a 20-row
    fold, more features than rank(X) = 19 tie at |x_jᵀr| = μ_j, coordinate
    descent crawled along the face and hopped them on and off it, the native
    solver stopped at 100,000 sweeps (KKT 1.5e-7) and SCS took 280 CPU s a
    fold, 'inaccurate'.  Now every point meets the native tolerance: no
    fallback warning, and the true features are kept."""
    import warnings

    from numkfs.estimators import GarroteRegressorCV

    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3000))
    y = 3 * X[:, 0] - 2 * X[:, 1] + 1.5 * X[:, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = GarroteRegressorCV(cv=3, random_state=0).fit(X, y)
    assert {0, 1, 2} <= set(np.flatnonzero(est.get_support()))
