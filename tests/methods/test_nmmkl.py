"""NMMKL: the QCQP against the SVM dual, backends against each other, KKT,
the paper's toy data, non-linear kernels, paths and the estimator contract."""
import itertools

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

from numkfs import solvers
from numkfs.datasets._nmmkl import make_nmmkl_toy
from numkfs.estimators._nmmkl import NMMKLSelector
from numkfs.kernels.lowrank import rbf_feature_factors
from numkfs.methods.nmmkl import nmmkl, nmmkl_path, recover_p, theorem6_bound
from numkfs.solvers.native.nmmkl import NMMKLProblem, solve_nmmkl, svm_dual_smo


def _data(n=120, d=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X[:, :3] @ np.array([2.0, -1.5, 1.0]) + 0.7 * rng.standard_normal(n))
    return X, y


def _sklearn_svm_dual(K, y, C):
    """ω = 2·(LIBSVM's dual value): max 2αᵀ1 − (α∘y)ᵀK(α∘y) over the SVM box."""
    svc = SVC(kernel="precomputed", C=C, tol=1e-12).fit(K, y)
    a = np.zeros(y.size)
    a[svc.support_] = svc.dual_coef_.ravel() * y[svc.support_]
    ay = a * y
    return 2 * a.sum() - ay @ K @ ay


# -- the QCQP against the SVM dual and against each backend -----------------


@pytest.mark.parametrize("solver", ["ECOS", "native"])
def test_m_equal_d_is_the_svm_dual(solver):
    X, y = _data()
    C, tau = 0.7, 0.3
    K = X @ X.T + tau * np.eye(X.shape[0])
    ref = _sklearn_svm_dual(K, y, C)
    pr = NMMKLProblem(X, y, X.shape[1], C, tau)
    res = solvers.solve(pr, solver, fallback=False)
    assert res.objective == pytest.approx(ref, rel=1e-6)
    # SMO agrees with LIBSVM too
    _, omega, _, viol = svm_dual_smo(X @ X.T, y, C, tau)
    assert omega == pytest.approx(ref, rel=1e-8) and viol < 1e-9


@pytest.mark.parametrize("m", [1, 3, 7])
def test_backends_agree(m):
    X, y = _data(seed=m)
    pr = NMMKLProblem(X, y, m, C=1.0, tau=0.1)
    res = {s: solvers.solve(pr, s, fallback=False) for s in ["ECOS", "CLARABEL", "native"]}
    ref = res["ECOS"].objective
    for s in ("CLARABEL", "native"):
        assert res[s].objective == pytest.approx(ref, rel=1e-6), s
        assert res[s].max_violation < 1e-7
    # same selection wherever the m-th and (m+1)-th φ are not tied
    phis = {s: pr.phi(r["alpha"]) for s, r in res.items()}
    srt = np.sort(phis["ECOS"])[::-1]
    if m < X.shape[1] and srt[m - 1] - srt[m] > 1e-4 * srt[m - 1]:
        for s in ("CLARABEL", "native"):
            assert set(np.argsort(-phis[s])[:m]) == set(np.argsort(-phis["ECOS"])[:m])
    # SCS within its (looser) tolerance
    scs = solvers.solve(pr, "SCS", tol=1e-7, fallback=False)
    assert scs.objective == pytest.approx(ref, rel=1e-4)
    # cross_check lists all four
    table = solvers.cross_check(pr, ["ECOS", "CLARABEL", "native"])
    assert table.agree(atol=1e-6)


def test_native_reaches_ecos_with_working_sets():
    # d > 200 triggers the working set; the answer must not change
    rng = np.random.default_rng(5)
    X = rng.standard_normal((150, 400))
    y = np.sign(X[:, :4] @ np.array([2.0, -1.0, 1.0, 0.5]) + 0.5 * rng.standard_normal(150))
    pr = NMMKLProblem(X, y, 5, C=1.0, tau=0.1)
    ecos = solvers.solve(pr, "ECOS", fallback=False)
    out = solve_nmmkl(X, y, 5, 1.0, 0.1)
    assert out["converged"] and out["rounds"] >= 2 and out["working_set_size"] < 400
    assert out["objective"] == pytest.approx(ecos.objective, rel=1e-6)
    # the QCQP value is the dual g(α), certified by the multipliers p: Σp = m, p in [0, 1]
    assert out["p"].sum() == pytest.approx(5, rel=1e-6)
    assert out["p"].min() >= -1e-9 and out["p"].max() <= 1 + 1e-9


def test_kkt_conditions_and_lp_recovery():
    X, y = _data(seed=3)
    m = 3
    pr = NMMKLProblem(X, y, m, C=1.0, tau=0.1)
    ecos = solvers.solve(pr, "ECOS", fallback=False)
    p_lp, resid = recover_p(pr, ecos["alpha"])
    assert resid < 1e-5
    assert p_lp.sum() == pytest.approx(m) and p_lp.min() >= -1e-9 and p_lp.max() <= 1 + 1e-9
    # the native multipliers satisfy the same stationarity conditions
    nat = solvers.solve(pr, "native", fallback=False)
    a, p = nat["alpha"], nat["p"]
    v = X.T @ (a * y)
    r = y * (X @ (p * v)) + 0.1 * a - 1.0
    free = (a > 1e-6) & (a < 1 - 1e-6)
    delta = np.median(r[free] * y[free])  # the multiplier of yᵀα = 0
    r = r - delta * y
    assert np.max(np.abs(r[free])) < 1e-5
    assert np.all(r[a <= 1e-6] > -1e-5) and np.all(r[a >= 1 - 1e-6] < 1e-5)
    # complementarity: p_i > 0 only where φ_i = ρ or above
    phi = v * v
    rho = np.sort(phi)[::-1][m - 1]
    assert np.all(p[phi < rho * (1 - 1e-4)] < 1e-5)
    assert np.all(p[phi > rho * (1 + 1e-4)] > 1 - 1e-5)


def test_theorem6_bound_against_exhaustive_search():
    X, y = _data(n=80, d=6, seed=7)
    m = 2
    res = nmmkl(X, y, m, C=1.0, tau=0.5, standardize=False, return_bound=True)
    pr = NMMKLProblem(X, y, m, 1.0, 0.5)
    best = np.inf
    for S in itertools.combinations(range(6), m):
        Xs = X[:, list(S)]
        best = min(best, svm_dual_smo(Xs @ Xs.T, y, 1.0, 0.5)[1])
    b = res.bound
    # ω(p̂) ≤ ω(p*) ≤ ω(p̃), and Theorem 6 bounds the ratio
    assert b["omega_relaxed"] <= best * (1 + 1e-7)
    assert best <= b["omega_selected"] * (1 + 1e-9)
    assert b["omega_selected"] / best <= b["theorem6"] * (1 + 1e-9)
    assert b["a_posteriori"] >= b["omega_selected"] / best * (1 - 1e-9)
    assert theorem6_bound(pr, res.p, res.support, res.tie_set, objective=res.objective)["lambda_max"] == \
        pytest.approx(b["lambda_max"])


# -- the paper's toy data ------------------------------------------------------


def test_toy_selects_z_then_xy():
    X, y, support = make_nmmkl_toy(n_samples=500, random_state=0)
    assert support.tolist() == [True, True, False]
    # with C chosen by 5-fold CV (as in the paper), linear SVM on the selection
    pipe = Pipeline([("sel", NMMKLSelector()), ("svm", SVC(kernel="linear"))])
    chosen = {}
    for m in (1, 2):
        gs = GridSearchCV(pipe, {"sel__n_features_to_select": [m], "sel__C": [0.001, 0.01, 0.1, 1.0]}, cv=5)
        gs.fit(X, y)
        chosen[m] = np.flatnonzero(gs.best_estimator_.named_steps["sel"].get_support()).tolist()
    assert chosen[1] == [2]
    assert chosen[2] == [0, 1]


def test_toy_path_is_not_nested():
    X, y, _ = make_nmmkl_toy(n_samples=500, random_state=0)
    path = nmmkl_path(X, y, [1, 2, 3], C=0.003)
    assert path.grid_name == "m" and path.weights.shape == (3, 3)
    assert path.extra["phi"].shape == (3, 3)
    # {Z}, then {X, Y}: the m = 1 selection is not in the m = 2 one
    assert path.extra["selection"].astype(int).tolist() == [[0, 0, 1], [1, 1, 0], [1, 1, 1]]
    assert path.extra["nested"].tolist() == [True, False, True]
    assert path.extra["non_monotonic"]
    np.testing.assert_array_equal(path.n_selected(), [1, 2, 3])
    # the same answers as independent solves (warm starts change nothing)
    for i, m in enumerate([1, 2, 3]):
        r = nmmkl(X, y, m, C=0.003)
        np.testing.assert_array_equal(path.selected(i), r.support)
        assert path.objective[i] == pytest.approx(r.objective, rel=1e-7)


def test_path_weights_p_and_conic_backend():
    X, y, _ = make_nmmkl_toy(n_samples=300, random_state=2)
    path = nmmkl_path(X, y, [1, 2], C=0.1, weights="p")
    assert np.all(path.weights >= -1e-9) and np.all(path.weights <= 1 + 1e-9)
    np.testing.assert_allclose(path.weights.sum(axis=1), [1, 2], rtol=1e-6)
    # the CVXPY problem is built once and re-solved with a new m: same values
    path_ecos = nmmkl_path(X, y, [1, 2], C=0.1, solver="ECOS")
    np.testing.assert_allclose(path_ecos.objective, path.objective, rtol=1e-6)
    np.testing.assert_array_equal(path_ecos.extra["selection"], path.extra["selection"])


# -- non-linear per-feature kernels ---------------------------------------------


def _xor_like(seed, n=200, d=10):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X[:, 0] ** 2 - X[:, 1] ** 2)  # XOR of x0 − x1 and x0 + x1
    return X, y


def test_rbf_selects_xor_like_pair_where_linear_fails():
    hits_rbf = hits_lin = 0
    for seed in range(3):
        X, y = _xor_like(seed)
        hits_rbf += nmmkl(X, y, 2, kernel="rbf").selected.tolist() == [0, 1]
        hits_lin += nmmkl(X, y, 2, kernel="linear").selected.tolist() == [0, 1]
    assert hits_rbf == 3
    assert hits_lin <= 1


def test_rbf_native_matches_ecos():
    X, y = _xor_like(4, n=100, d=5)
    Z, off = rbf_feature_factors(X, tol=1e-6)
    pr = NMMKLProblem(Z, y, 2, C=1.0, tau=0.1, offsets=off)
    ecos = solvers.solve(pr, "ECOS", fallback=False)
    nat = solvers.solve(pr, "native", fallback=False)
    assert nat.objective == pytest.approx(ecos.objective, rel=1e-6)
    assert nat.max_violation < 1e-7


# -- multiclass and errors ---------------------------------------------------------


def test_multiclass_one_vs_rest_merges_per_class_features():
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 8))
    X[:, 0] += 2.5 * (y == 0)
    X[:, 3] += 2.5 * (y == 1)
    X[:, 5] += 2.5 * (y == 2)
    for rule in ("vote", "sum"):
        res = nmmkl(X, y, 3, multiclass=rule)
        assert res.selected.tolist() == [0, 3, 5]
        assert res.phi.shape == (3, 8)
    sel = NMMKLSelector(n_features_to_select=3).fit(X, y)
    assert np.flatnonzero(sel.get_support()).tolist() == [0, 3, 5]
    assert len(sel.solver_result_) == 3


def test_errors():
    X, y = _data()
    with pytest.raises(ValueError, match=r"The 'm' parameter of nmmkl must be an int in the range \[1, inf\)"):
        nmmkl(X, y, 0)
    with pytest.raises(ValueError, match="m must be an int"):
        nmmkl(X, y, X.shape[1] + 1)
    with pytest.raises(ValueError, match="two classes"):
        nmmkl(X, np.ones(X.shape[0]), 2)
    with pytest.raises(ValueError, match="'C' parameter"):
        nmmkl(X, y, 2, C=-1.0)
    with pytest.raises(ValueError, match="exceeds"):
        NMMKLSelector(n_features_to_select=50).fit(X, y)


def test_selector_attributes():
    X, y, _ = make_nmmkl_toy(n_samples=300, random_state=0)
    sel = NMMKLSelector(n_features_to_select=2, C=0.1).fit(X, y)
    assert sel.scores_.shape == (3,) and sel.solver_result_.ok
    assert sel.transform(X).shape == (300, 2)
    assert sel.solver_result_.solver == "native"
    # the toy's answer: the pair {X, Y} (Z is the best single feature, not in the best pair)
    assert sel.get_support().tolist() == [True, True, False] and sel.n_features_selected_ == 2
    res, tau, C = sel.result_, 0.1, 0.1
    a = res.alpha
    # a feasible SVM dual point: 0 <= α <= C, αᵀy = 0
    assert a.min() >= -1e-9 and a.max() <= C + 1e-9 and abs(a @ y) < 1e-8
    # φ_i = (α∘y)ᵀ K_i (α∘y) with the linear kernel of the standardised column i: ((α∘y)ᵀ x_i)²
    Xs = (X - X.mean(0)) / X.std(0)
    np.testing.assert_allclose(sel.scores_, (Xs.T @ (a * y)) ** 2, rtol=1e-10)
    # the relaxed selection p lies in [0, 1] and sums to m
    assert np.all((res.p >= -1e-9) & (res.p <= 1 + 1e-9)) and res.p.sum() == pytest.approx(2.0, abs=1e-8)
    # the value of eq. 8 at α: 2 αᵀ1 - τ αᵀα - (sum of the m largest φ), and a second solver's optimum
    assert res.objective == pytest.approx(2 * a.sum() - tau * a @ a - np.sort(sel.scores_)[-2:].sum(), rel=1e-10)
    ecos = NMMKLSelector(n_features_to_select=2, C=0.1, solver="ECOS").fit(X, y)
    assert ecos.solver_ == "ECOS"
    assert res.objective == pytest.approx(ecos.result_.objective, rel=1e-6)
    assert np.array_equal(ecos.get_support(), sel.get_support())


def test_multiclass_path_same_with_parallel_classes():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((90, 6))
    y = np.argmax(X[:, :3] + 0.3 * rng.standard_normal((90, 3)), axis=1)
    a = nmmkl_path(X, y, [1, 2, 3], C=0.1)
    b = nmmkl_path(X, y, [1, 2, 3], C=0.1, n_jobs=2)
    np.testing.assert_array_equal(a.extra["selection"], b.extra["selection"])
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-12)
    np.testing.assert_allclose(a.extra["phi"], b.extra["phi"], rtol=1e-12)


def test_binary_path_chunked_over_workers_gives_the_same_selections():
    X, y, _ = make_nmmkl_toy(n_samples=300, random_state=1)
    Xw = np.column_stack([X, np.random.default_rng(0).standard_normal((300, 5))])
    a = nmmkl_path(Xw, y, [1, 2, 3, 4, 5, 6], C=0.01)
    b = nmmkl_path(Xw, y, [1, 2, 3, 4, 5, 6], C=0.01, n_jobs=2)
    np.testing.assert_array_equal(a.extra["selection"], b.extra["selection"])
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-6)


def test_huge_C_is_the_hard_margin_limit():
    """``C = 1e12`` (iris) failed with SolverError
    (native: division by zero, CLARABEL: "unbounded", ECOS failed, SCS
    inaccurate).  No optimal α exceeds ``(1 + √n)/τ`` (132 here), so a larger
    box cannot bind and is replaced by that value.  The answer is the one
    at C = 100, where the box is already inactive (max α = 17.9)."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    tau, tol = 0.1, 1e-9  # the native solver's gap tolerance
    huge = NMMKLSelector(2, C=1e12, tau=tau).fit(X, y)
    assert all(r.solver == "native" for r in huge.solver_result_)  # no fallback
    moderate = nmmkl(X, y, 2, C=100.0, tau=tau)
    assert max(a.max() for a in moderate.alpha) < 100.0  # the box does not bind at C = 100
    assert huge.converged_ and huge.get_support().tolist() == moderate.support.tolist() == [False, False, True, True]
    for a, b, ob_a, ob_b in zip(moderate.alpha, huge.result_.alpha, moderate.objective, huge.result_.objective):
        # a gap ≤ 100 tol max(1, |g|) (the solver's acceptance) and τ-strong concavity:
        # ||α − α*||² ≤ 2 gap / τ for each of the two solutions
        gap = 100 * tol * max(1.0, abs(ob_a))
        assert abs(ob_a - ob_b) <= 2 * gap
        assert np.linalg.norm(a - b) <= 2 * np.sqrt(2 * gap / tau)


def test_box_above_its_bound_is_clipped_and_restored_on_update():
    """``C`` holds the box solved with, ``C_requested`` the one given; an
    update of C or τ recomputes the clipped value."""
    y = np.array([1.0, -1.0, 1.0, -1.0])
    prob = NMMKLProblem(np.eye(4)[:, :2], y, 1, C=1e12, tau=0.5)
    assert prob.C_requested == 1e12 and prob.C == pytest.approx(6.0)  # (1 + √4)/0.5
    prob.update(tau=2.0)
    assert prob.C == pytest.approx(1.5)
    prob.update(C=1.0)
    assert prob.C == 1.0 and prob.C_requested == 1.0
    a = solve_nmmkl(prob.Z, prob.y, 1, 1e12, 2.0)["alpha"]
    assert np.all(a <= prob.box_bound())


def _sel_data(n=30, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, 2 * X[:, 0] + 0.1 * rng.standard_normal(n)


def test_nmmkl_refuses_a_continuous_target():
    # nmmkl(X, y_continuous, 2) ran as a 30-class problem
    from numkfs.methods import nmmkl

    X, y = _sel_data()
    with pytest.raises(ValueError, match="nmmkl: y looks continuous"):
        nmmkl(X, y, 2)


# --------------------------------------------------------------------------
# numerical trouble


def _reg_data(seed=0, n=20, p=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n)


@pytest.mark.parametrize("gamma", [1e8, 1e-8])
def test_nmmkl_degenerate_rbf_kernels_agree_with_conic_solver(gamma):
    """γ huge (K_i -> I) or tiny (K_i -> 11ᵀ, rank one): native and CLARABEL agree."""
    from numkfs.methods.nmmkl import nmmkl

    X, y = _reg_data(1)
    lab = np.where(y > 0, 1, -1)
    a = nmmkl(X, lab, 2, kernel="rbf", gamma=gamma, solver="native")
    b = nmmkl(X, lab, 2, kernel="rbf", gamma=gamma, solver="CLARABEL")
    assert np.all(np.isfinite(a.p)) and a.support.sum() == 2
    assert a.objective == pytest.approx(b.objective, rel=1e-5, abs=1e-6)
