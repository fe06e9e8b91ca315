"""Model-X knockoffs: the equicorrelated s in closed form,
the SDP through the registry and across two solvers, the covariance
condition, exchangeability of the draws, the knockoff+ threshold and the
e-BH step against their definitions, FDR control on a linear-Gaussian
simulation, multiple knockoffs (K copies drawn together), bad input and
the scikit-learn contract."""
import itertools

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from numkfs import FeaturePath, KnockoffFilter
from numkfs.knockoffs import (DRAW_FDR_RATIO, PSD_MARGIN, SAMPLE_ROWS_PER_FEATURE, draw_e_values, e_bh, entry_points,
                              equicorrelated_s, gaussian_knockoffs, knockoff_statistics, knockoff_threshold,
                              no_negative_threshold, sdp_s)
from numkfs.resampling import method_path
from numkfs.solvers import cross_check
from numkfs.solvers.knockoff_sdp import KnockoffSDP

EPS = np.finfo(float).eps


def _ar(p, rho):
    return rho ** np.abs(np.subtract.outer(np.arange(p), np.arange(p)))


def _random_correlation(p, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((2 * p, p))
    S = A.T @ A
    d = np.sqrt(np.diag(S))
    return S / np.outer(d, d)


def _roundoff(C):
    """What eigenvalues of 2C - diag(s) can be off by: p eps times the scale ||2C||."""
    return 10 * C.shape[0] * EPS * np.linalg.norm(2 * C, 2)


@pytest.mark.parametrize("rho, expected", [(0.6, 0.8), (0.3, 1.0), (0.95, 0.1)])
def test_equicorrelated_s_closed_form(rho, expected):
    # compound symmetry: lambda_min = 1 - rho, so s = min(1, 2 (1 - rho))
    p = 6
    C = (1 - rho) * np.eye(p) + rho * np.ones((p, p))
    s = equicorrelated_s(C)
    assert s == pytest.approx(np.full(p, expected), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_covariance_condition_holds_for_both_choices_of_s(seed):
    C = _random_correlation(12, seed)
    for s in (equicorrelated_s(C), sdp_s(C)[0]):
        assert np.all((s >= 0) & (s <= 1))
        assert np.linalg.eigvalsh(2 * C - np.diag(s))[0] >= -_roundoff(C)
        # the joint covariance [[C, C - D], [C - D, C]] of [X, X~] is then a covariance
        G = np.block([[C, C - np.diag(s)], [C - np.diag(s), C]])
        assert np.linalg.eigvalsh(G)[0] >= -2 * _roundoff(C)
    s_sdp = sdp_s(C)[0]
    assert np.linalg.eigvalsh(2 * C - np.diag(s_sdp))[0] >= PSD_MARGIN - _roundoff(C)
    # the equicorrelated s is feasible for the SDP, so the SDP's sum is at least its sum
    assert s_sdp.sum() >= equicorrelated_s(C).sum() - 1e-6


def test_sdp_agrees_between_two_solvers():
    problem = KnockoffSDP(_ar(10, 0.5))
    table = cross_check(problem, ["CLARABEL", "SCS"], tol=1e-9)
    assert [r["status"] for r in table.rows] == ["optimal", "optimal"]
    # both stop at relative gap 1e-9; the optimum of this SDP is unique, so the points
    # agree to the square root of that (an interior point approaches it like sqrt(gap))
    assert abs(table["SCS"]["objective_gap"]) <= 1e-6
    assert table["SCS"]["solution_distance"] <= 1e-4
    s_c, s_s = (table.results[b]["s"] for b in ("CLARABEL", "SCS"))
    assert np.abs(s_c - s_s).max() <= 1e-4


def test_solver_order_skips_backends_without_a_semidefinite_cone():
    from numkfs.solvers import solver_order

    assert "ECOS" not in solver_order(KnockoffSDP(np.eye(3)))


def _brute_threshold(W, q, offset):
    for t in sorted(set(np.abs(W[W != 0]))):
        if (offset + np.sum(W <= -t)) / max(1, np.sum(W >= t)) <= q:
            return t
    return np.inf


def test_knockoff_threshold_against_the_definition():
    rng = np.random.default_rng(0)
    cases = [np.array([5.0, 4.0, 3.0, 2.0, -1.0]), np.array([1.0, -1.0, 2.0, 0.0, 3.0, -0.5, 4.0]),
             np.zeros(4), -np.arange(1.0, 5.0)]
    cases += [np.round(rng.standard_normal(25) + rng.choice([0, 2], 25), 1) for _ in range(20)]
    for W, q, offset in itertools.product(cases, (0.1, 0.25, 0.5), (0, 1)):
        assert knockoff_threshold(W, q, offset=offset) == _brute_threshold(W, q, offset)
    # 6 positives above 1 negative: (1 + 1) / 6 <= 1/3 at t = 0.5, the smallest |W|
    assert knockoff_threshold([6, 5, 4, 3, 2, 1, -0.5], 1 / 3) == 0.5


def test_e_bh_against_the_definition():
    rng = np.random.default_rng(1)
    for _ in range(30):
        e = np.where(rng.random(12) < 0.4, rng.exponential(30, 12), 0.0)
        sel, t = e_bh(e, 0.2)
        ks = [k for k in range(1, 13) if np.sort(e)[::-1][k - 1] >= 12 / (0.2 * k)]
        k_hat = max(ks, default=0)
        assert sel.sum() == k_hat
        if k_hat:
            assert set(np.flatnonzero(sel)) == set(np.argsort(-e, kind="stable")[:k_hat])
            assert t == pytest.approx(12 / (0.2 * k_hat))


def test_entry_points_count_from_the_sparse_end():
    W = np.array([[0.9, 0.8, 0.5, 0.0], [0.6, 0.3, 0.0, 0.0], [0.4, 0.0, 0.0, 0.0]])
    Z = entry_points(FeaturePath([0.1, 1.0, 10.0], W))  # sparse end last: x0 enters at k = 0 of K = 3
    assert Z.tolist() == [2.0 + 0.4 / 0.4, 1.0 + 0.3 / 0.6, 0.0 + 0.5 / 0.9, 0.0]  # K - k - 1 + w / max w


def test_knockoff_draws_are_exchangeable_with_x():
    """The sample covariance of [X, X~] matches [[C, C - D], [C - D, C]] within sampling error."""
    rng = np.random.default_rng(2)
    n, p = 4000, 5
    C = _ar(p, 0.5)
    X = rng.standard_normal((n, p)) @ np.linalg.cholesky(C).T * 3.0 + 1.0
    mu, sd = X.mean(axis=0), X.std(axis=0)
    Z = (X - mu) / sd
    Chat = Z.T @ Z / n
    s = sdp_s(Chat)[0]
    Xk = gaussian_knockoffs(X, s, Chat, random_state=3)
    J = np.hstack([Z, (Xk - mu) / sd])
    G = J.T @ J / n
    target = np.block([[Chat, Chat - np.diag(s)], [Chat - np.diag(s), Chat]])
    # an entry of a sample covariance of unit-variance Gaussians has sd <= sqrt(2 / n)
    assert np.abs(G - target).max() <= 5 * np.sqrt(2.0 / n)
    # swapping a feature and its knockoff: the cross block is symmetric
    cross = G[:p, p:]
    assert np.abs(cross - cross.T).max() <= 5 * np.sqrt(2.0 / n)


def _linear_gaussian(seed, n=200, p=20, k=8, amplitude=0.45):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) @ np.linalg.cholesky(_ar(p, 0.3)).T
    beta = np.zeros(p)
    beta[rng.choice(p, k, replace=False)] = amplitude * rng.choice([-1.0, 1.0], k)
    return X, X @ beta + rng.standard_normal(n), beta != 0


@pytest.mark.parametrize("n_draws", [1, 8])
def test_fdr_is_controlled_on_average_in_a_linear_gaussian_case(n_draws):
    """The garrote's path on [X, X~] (a linear model, as the truth): mean FDP <= q within 3 standard errors,
    for knockoff+ on one draw and e-BH on eight."""
    q, fdp, power = 0.2, [], []
    for seed in range(12):
        X, y, truth = _linear_gaussian(seed)
        sel = KnockoffFilter("garrote", fdr=q, n_draws=n_draws, random_state=seed).fit(X, y).get_support()
        fdp.append((sel & ~truth).sum() / max(1, sel.sum()))
        power.append((sel & truth).sum() / truth.sum())
    se = np.std(fdp, ddof=1) / np.sqrt(len(fdp))
    assert np.mean(fdp) <= q + 3 * se, (np.mean(fdp), se)
    # and the filter finds something (e-BH selects only what most draws agree on: less power)
    assert np.mean(power) >= (0.5 if n_draws == 1 else 0.2)


@pytest.mark.parametrize("rule", ["no-negative", "knockoff+"])
def test_derandomised_statistics_are_the_average_e_values_of_the_draws(rule):
    X, y, _ = _linear_gaussian(0)
    kf = KnockoffFilter("garrote", fdr=0.2, n_draws=3, draw_threshold=rule, random_state=0).fit(X, y)
    assert kf.draw_statistics_.shape == (3, 20)
    p = 20
    E = []
    for W in kf.draw_statistics_:
        if rule == "knockoff+":
            T = knockoff_threshold(W, DRAW_FDR_RATIO * 0.2)  # alpha_kn
        else:  # the smallest |W| above every negative statistic, from the definition
            T = min((abs(w) for w in W if w > 0 and not np.any(W <= -abs(w))), default=np.inf)
        E.append(p * (W >= T) / (1 + np.sum(W <= -T)) if np.isfinite(T) else np.zeros(p))
    assert np.allclose(kf.statistics_, np.mean(E, axis=0), rtol=0, atol=0)
    sel, t = e_bh(kf.statistics_, 0.2)
    assert np.array_equal(kf.get_support(), sel) and kf.threshold_ == t


def test_no_negative_threshold_against_the_definition():
    rng = np.random.default_rng(3)
    for _ in range(200):
        W = np.round(rng.standard_normal(15) + rng.choice([0, 2], 15), 1) * rng.choice([0, 1], 15, p=[0.1, 0.9])
        ok = [t for t in np.abs(W[W != 0]) if np.sum(W <= -t) == 0]
        assert no_negative_threshold(W) == (min(ok) if ok else np.inf)


@pytest.mark.parametrize("K", [1, 3])
def test_no_negative_e_values_of_null_statistics_have_mean_sum_at_most_p(K):
    """Every statistic null (each negative with probability K / (K + 1), |W| continuous): the null
    e-values sum to K p times the positives above every negative, whose mean is
    sum_{k=1..p} (K + 1)^-k, so E[sum e_j] / p = 1 - (K + 1)^-p exactly; the knockoff+ threshold's
    e-values stay below 1 too.  Monte Carlo over S draws, within 4 standard errors."""
    rng = np.random.default_rng(11)
    p, S = 10, 20000
    mags = rng.exponential(size=(S, p))
    signs = np.where(rng.random((S, p)) < 1 / (K + 1), 1.0, -1.0)
    W = mags * signs
    total = np.array([draw_e_values(w, 0.2, n_copies=K).sum() / p for w in W])
    expected = 1 - (K + 1.0) ** -p
    assert abs(total.mean() - expected) <= 4 * total.std(ddof=1) / np.sqrt(S), (total.mean(), expected)
    kp = np.array([draw_e_values(w, 0.2, n_copies=K, threshold="knockoff+").sum() / p for w in W])
    assert kp.mean() <= 1 + 4 * kp.std(ddof=1) / np.sqrt(S)


def test_knockoff_plus_halves_a_draw_that_no_negative_keeps_at_p():
    """Draw A: five leading positives, one negative, then six positives: knockoff+ at 0.2 moves below the
    negative ((1 + 1) / 11 <= 0.2) and gives p / 2, the no-negative threshold stops above it and gives p
    to the five.  Draw B: six leading positives, then negatives: both thresholds give p to the six.
    e-BH at 0.2 on the average selects five features only at e = p (p / (0.2 k) at k = 5): the
    no-negative e-values select the five, knockoff+'s (9 = (p / 2 + p) / 2) nothing."""
    A = np.array([9, 8, 7, 6, 5, -4.5, 4, 3, 2, 1.5, 1, 0.5])
    B = np.array([9, 8, 7, 6, 5, 4.5, -4, -3, 2, 1.5, 1, 0.5])
    p = A.size
    assert no_negative_threshold(A) == 5.0 and no_negative_threshold(B) == 4.5
    assert draw_e_values(A, 0.2).tolist() == [p] * 5 + [0.0] * 7
    assert draw_e_values(A, 0.2, threshold="knockoff+").tolist() == [p / 2] * 5 + [0.0] + [p / 2] * 6
    for rule in ("no-negative", "knockoff+"):
        assert draw_e_values(B, 0.2, threshold=rule).tolist() == [p] * 6 + [0.0] * 6
    e = {rule: (draw_e_values(A, 0.2, threshold=rule) + draw_e_values(B, 0.2, threshold=rule)) / 2
         for rule in ("no-negative", "knockoff+")}
    assert np.flatnonzero(e_bh(e["no-negative"], 0.2)[0]).tolist() == [0, 1, 2, 3, 4]
    assert e["knockoff+"][:5].tolist() == [9.0] * 5 and not e_bh(e["knockoff+"], 0.2)[0].any()


def _independent_linear(seed, n=150, p=20, k=6, amplitude=0.8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, :k] @ np.full(k, amplitude) + rng.standard_normal(n)


def test_derandomised_fdr_on_null_data_is_within_q():
    """y independent of X: every selection is false, so the FDR is P(anything selected) <= q (e-BH on
    the average e-values).  The mean of S Bernoulli FDPs exceeds q by 3 standard errors
    sqrt(q (1 - q) / S) with probability below 0.002 when the FDR is q."""
    q, S = 0.2, 30
    fdp = []
    for seed in range(S):
        rng = np.random.default_rng(1000 + seed)
        X, y = rng.standard_normal((100, 20)), rng.standard_normal(100)
        kf = KnockoffFilter("lpkta", fdr=q, random_state=seed).fit(X, y)
        assert kf.n_draws == 8 and kf.draw_statistics_.shape == (8, 20) and kf.e_values_ is not None
        fdp.append(float(kf.get_support().any()))
    assert np.mean(fdp) <= q + 3 * np.sqrt(q * (1 - q) / S), np.mean(fdp)


def test_derandomised_answer_does_not_hinge_on_the_draw():
    """A seeded case where one draw's selection differs between two seeds: the derandomised one is the same."""
    X, y = _independent_linear(5)
    one = [np.flatnonzero(KnockoffFilter("lpkta", fdr=0.2, n_draws=1, random_state=s).fit(X, y).get_support())
           for s in (0, 1)]
    assert one[0].tolist() != one[1].tolist()
    many = [np.flatnonzero(KnockoffFilter("lpkta", fdr=0.2, random_state=s).fit(X, y).get_support()) for s in (0, 1)]
    assert many[0].tolist() == many[1].tolist() == [0, 2, 3, 4, 5]


def test_min_selections_is_the_smallest_selection_either_procedure_can_make():
    from numkfs.knockoffs import min_selections

    rng = np.random.default_rng(7)
    for q in (0.1, 0.2, 0.25, 0.3):
        k = min_selections(q)
        assert (1 + 0) / k <= q < (1 + 0) / (k - 1)  # knockoff+ with no negative statistic above T
        # the most favourable W for knockoff+: k - 1 positives and no negative cannot pass, k can
        assert not np.isfinite(knockoff_threshold(np.r_[np.arange(1.0, k), np.zeros(5)], q))
        assert np.isfinite(knockoff_threshold(np.r_[np.arange(1.0, k + 1), np.zeros(5)], q))
        p = 12
        e = np.r_[np.full(k - 1, float(p)), rng.uniform(0, 1, p - k + 1)]  # e-values at most p
        assert e_bh(e, q)[0].sum() == 0
        assert e_bh(np.r_[np.full(k, float(p)), np.zeros(p - k)], q)[0].sum() == k


def test_few_features_for_the_fdr_warn_with_the_smallest_selection():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 4))
    y = X[:, 0] + 0.5 * rng.standard_normal(120)
    with pytest.warns(UserWarning, match="cannot select fewer than 5 features.*with 4 feature\\(s\\) nothing can"):
        kf = KnockoffFilter("lpkta", fdr=0.2, n_draws=2, n_copies=1, random_state=0).fit(X, y)
    assert not kf.get_support().any()
    X = rng.standard_normal((120, 8))
    y = X[:, 0] + 0.5 * rng.standard_normal(120)
    with pytest.warns(UserWarning, match="selects 5 or more of the 8 or nothing"):
        KnockoffFilter("lpkta", fdr=0.2, n_draws=2, n_copies=1, random_state=0).fit(X, y)


def test_one_draw_is_knockoff_plus_on_its_statistics():
    X, y, _ = _linear_gaussian(1)
    kf = KnockoffFilter("garrote", fdr=0.2, n_draws=1, random_state=1).fit(X, y)
    assert kf.threshold_ == knockoff_threshold(kf.statistics_, 0.2)
    assert np.array_equal(kf.get_support(), kf.statistics_ >= kf.threshold_)
    assert kf.covariance_estimator_ == "sample" and kf.s_method_ == "sdp" and kf.solver_ == "native"


def test_fewer_rows_than_features_say_which_covariance_is_used():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((15, 20))
    y = X[:, 0] + 0.1 * rng.standard_normal(15)
    with pytest.warns(UserWarning, match="Ledoit-Wolf"):
        kf = KnockoffFilter("garrote", knockoffs="equicorrelated", random_state=0).fit(X, y)
    assert kf.covariance_estimator_ == "ledoit-wolf" and kf.s_method_ == "equicorrelated"
    assert np.linalg.eigvalsh(2 * kf.correlation_ - np.diag(kf.s_))[0] >= -_roundoff(kf.correlation_)


def test_sample_correlation_from_two_rows_per_feature_ledoit_wolf_below():
    """The rule of SAMPLE_ROWS_PER_FEATURE: at n = 2p the sample correlation itself; at n = 2p - 1
    Ledoit-Wolf's (scikit-learn's, rescaled to unit diagonal), with a warning, and its correlations
    shrunk towards 0 (why it is not used when the sample correlation is well conditioned)."""
    from sklearn.covariance import LedoitWolf

    assert SAMPLE_ROWS_PER_FEATURE == 2
    p = 10
    for n, rule in ((2 * p, "sample"), (2 * p - 1, "ledoit-wolf")):
        X, y, _ = _linear_gaussian(5, n=n, p=p, k=2, amplitude=1.0)
        if rule == "sample":
            kf = KnockoffFilter("lpkta", fdr=0.2, random_state=0).fit(X, y)
            expected = np.corrcoef(X, rowvar=False)
        else:
            with pytest.warns(UserWarning, match="Ledoit-Wolf"):
                kf = KnockoffFilter("lpkta", fdr=0.2, random_state=0).fit(X, y)
            Z = (X - X.mean(axis=0)) / X.std(axis=0)
            S = LedoitWolf(assume_centered=True).fit(Z).covariance_
            expected = S / np.sqrt(np.outer(np.diag(S), np.diag(S)))
            off = ~np.eye(p, dtype=bool)
            assert np.all(np.abs(kf.correlation_[off]) < np.abs(np.corrcoef(X, rowvar=False)[off]))
        assert kf.covariance_estimator_ == rule
        # entries of a correlation: round-off of a length-n inner product, n eps
        assert np.abs(kf.correlation_ - expected).max() <= 10 * n * EPS
    # chosen explicitly: Ledoit-Wolf at any n (no warning), the sample correlation only with n > p
    X, y, _ = _linear_gaussian(5, n=4 * p, p=p, k=2, amplitude=1.0)
    kf = KnockoffFilter("lpkta", covariance="ledoit-wolf", random_state=0).fit(X, y)
    assert kf.covariance_estimator_ == "ledoit-wolf"
    with pytest.raises(ValueError, match="covariance='sample'"):
        KnockoffFilter("lpkta", covariance="sample").fit(X[:p], y[:p])


@pytest.mark.parametrize("selector", ["lpkta", "garrote"])
def test_statistic_flips_sign_when_a_feature_is_swapped_with_its_knockoff(selector):
    """Antisymmetry (the property knockoff+ needs): swapping X_j and X~_j for j in a set S flips W_j
    on S and leaves the other W_k unchanged (up to the path solver's round-off: the columns enter
    the method in another order)."""
    X, y, _ = _linear_gaussian(6, n=150, p=10, k=3, amplitude=0.8)
    C = np.corrcoef(X, rowvar=False)
    Xk = gaussian_knockoffs(X, sdp_s(C)[0], C, random_state=7)
    p = X.shape[1]
    W = knockoff_statistics(method_path(selector, np.hstack([X, Xk]), y), p)
    swap = np.array([0, 3, 4, 8])
    Xs, Xks = X.copy(), Xk.copy()
    Xs[:, swap], Xks[:, swap] = Xk[:, swap], X[:, swap]
    Ws = knockoff_statistics(method_path(selector, np.hstack([Xs, Xks]), y), p)
    flip = np.ones(p)
    flip[swap] = -1.0
    assert np.count_nonzero(W) >= 5  # the check is not vacuous
    assert np.abs(Ws - flip * W).max() <= 1e-8 * np.abs(W).max()


def test_classification_target():
    X, y, _ = _linear_gaussian(2)
    labels = (y > np.median(y)).astype(int)
    kf = KnockoffFilter("lpkta", fdr=0.3, random_state=0).fit(X, labels)
    assert kf.statistics_.shape == (20,) and np.isfinite(kf.statistics_).all()


@pytest.mark.parametrize("param, value", [("fdr", 0.0), ("fdr", 1.0), ("n_draws", 0), ("n_copies", 0),
                                          ("knockoffs", "fixed-x"), ("covariance", "oas"),
                                          ("draw_threshold", "knockoff")])
def test_bad_parameters_are_named(param, value):
    X, y, _ = _linear_gaussian(0, n=30, p=4, k=1)
    with pytest.raises(ValueError, match=param):
        KnockoffFilter("garrote", **{param: value}).fit(X, y)


def test_sklearn_contract():
    pd = pytest.importorskip("pandas")
    X, y, _ = _linear_gaussian(3, n=80, p=6, k=2, amplitude=1.0)
    Xf = pd.DataFrame(X, columns=[f"g{j}" for j in range(6)])
    kf = KnockoffFilter("garrote", fdr=0.5, random_state=0, n_grid=20)
    assert kf.get_params()["params"] == {"n_grid": 20}
    assert clone(kf).get_params() == kf.get_params()
    kf.fit(Xf, y)
    assert list(kf.feature_names_in_) == list(Xf.columns)
    assert list(kf.get_feature_names_out()) == [f"g{j}" for j in np.flatnonzero(kf.get_support())]
    assert kf.transform(Xf).shape == (80, int(kf.get_support().sum()))
    assert np.array_equal(X, Xf.to_numpy())  # input never modified


# Not in the registry of tests/conftest.py (it holds exactly numkfs.estimators): checked here, ~1 s CPU.
@parametrize_with_checks([KnockoffFilter("lpkta", random_state=0, grid=np.linspace(2, 1, 6))])
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def test_one_draw_through_e_values_selects_what_knockoff_plus_selects():
    """With alpha_kn = q, e-BH on one draw's e-values is knockoff+ (Ren & Barber's Proposition)."""
    rng = np.random.default_rng(4)
    for _ in range(50):
        W = np.round(rng.standard_normal(30) + rng.choice([0, 3], 30), 1)
        T = knockoff_threshold(W, 0.2)
        e = 30 * (W >= T) / (1 + np.sum(W <= -T)) if np.isfinite(T) else np.zeros(30)
        assert np.array_equal(e_bh(e, 0.2)[0], W >= T)


# -- the SDP at p = 300 (native barrier method), collinear columns -----------------------------------------------

@pytest.mark.parametrize("C", [_ar(30, 0.5), _random_correlation(25, 3), 0.5 * np.eye(20) + 0.5],
                         ids=["ar", "random", "equicorrelated"])
def test_native_sdp_agrees_with_clarabel_and_is_feasible(C):
    from numkfs.solvers import solve

    problem = KnockoffSDP(C)
    native = solve(problem, "native", fallback=False)
    ref = solve(KnockoffSDP(C), "CLARABEL", tol=1e-8, fallback=False)  # 1e-9: 'inaccurate' on compound symmetry
    s = native["s"]
    # the native answer stops at a duality gap <= 1e-8 max(1, sum s) (its default tol) and
    # CLARABEL at gap and feasibility 1e-8 (relative): each within that of the optimum
    assert abs(s.sum() - ref["s"].sum()) <= 2e-8 * max(1.0, ref["s"].sum())
    assert np.all((s >= 0) & (s <= 1))
    assert problem.min_eigenvalue(s) > 0  # strictly feasible: every barrier iterate is
    # the knockoffs' s keeps 2C - diag(s) positive semidefinite with margin
    s_k = sdp_s(C)[0]
    assert np.linalg.eigvalsh(2 * C - np.diag(s_k))[0] >= PSD_MARGIN - _roundoff(C)


def test_native_sdp_closed_forms():
    from numkfs.solvers.native.knockoff_sdp import solve_knockoff_sdp

    # compound symmetry rho: lambda_min = 1 - rho; the SDP's optimum is s = min(1, 2(1 - rho)) for all j
    for rho, expected in ((0.3, 1.0), (0.75, 0.5)):
        s, gap, _ = solve_knockoff_sdp((1 - rho) * np.eye(12) + rho)
        assert gap <= 1e-8 * 12
        assert s == pytest.approx(np.full(12, expected), abs=1e-7)
    # a singular correlation: no strictly feasible start, reported as such (not raised)
    s, gap, _ = solve_knockoff_sdp(np.ones((3, 3)))
    assert gap == np.inf and not s.any()


def test_auto_keeps_interior_point_backends_off_large_sdps():
    from numkfs.solvers import solver_order
    from numkfs.solvers.registry import INTERIOR_POINT_SDP_MAX_SIDE

    # CLARABEL at side 300 grew to 22.8 GB: auto never falls back to it there
    big = solver_order(KnockoffSDP(np.eye(INTERIOR_POINT_SDP_MAX_SIDE + 1)))
    assert big[0] == "native" and "CLARABEL" not in big and "SCS" in big
    assert "CLARABEL" in solver_order(KnockoffSDP(np.eye(INTERIOR_POINT_SDP_MAX_SIDE)))


def _collinear_data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 8))
    X = np.hstack([X, X[:, [1]], -X[:, [2]]])  # a duplicate of column 1, a negated copy of column 2
    y = X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.standard_normal(200)
    return X, y


@pytest.mark.parametrize("knockoffs", ["sdp", "equicorrelated"])
def test_collinear_columns_get_s_zero_and_statistic_zero_with_one_warning(knockoffs):
    X, y = _collinear_data()
    X0 = X.copy()
    with pytest.warns(UserWarning, match=r"feature\(s\) \[1, 2, 8, 9\] are collinear") as record:
        kf = KnockoffFilter("lpkta", fdr=0.2, knockoffs=knockoffs, random_state=0).fit(X, y)
    assert sum("collinear" in str(w.message) for w in record) == 1
    assert kf.collinear_.tolist() == [1, 2, 8, 9]
    assert np.all(kf.s_[[1, 2, 8, 9]] == 0) and np.all(kf.statistics_[[1, 2, 8, 9]] == 0)
    # the others keep a knockoff that differs from them (s_j > 0) and 2C - diag(s) stays PSD
    others = [0, 3, 4, 5, 6, 7]
    assert np.all(kf.s_[others] > 0.5)
    assert np.linalg.eigvalsh(2 * kf.correlation_ - np.diag(kf.s_))[0] >= -_roundoff(kf.correlation_)
    assert np.array_equal(X, X0)


def test_collinear_features_finds_a_combination_of_three():
    from numkfs.knockoffs import collinear_features

    rng = np.random.default_rng(1)
    X = rng.standard_normal((100, 6))
    X[:, 5] = X[:, 0] - 2 * X[:, 3]
    Z = (X - X.mean(0)) / X.std(0)
    assert collinear_features(Z.T @ Z / 100, n_samples=100).tolist() == [0, 3, 5]
    assert collinear_features(_ar(6, 0.9)).size == 0


def test_above_sdp_max_features_the_equicorrelated_s_with_a_warning(monkeypatch):
    import numkfs.knockoffs as kmod

    monkeypatch.setattr(kmod, "SDP_MAX_FEATURES", 5)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 6))
    with pytest.warns(UserWarning, match="more than SDP_MAX_FEATURES = 5"):
        kf = KnockoffFilter("lpkta", fdr=0.2, random_state=0).fit(X, X[:, 0])
    assert kf.s_method_ == "equicorrelated" and kf.solver_ is None


# -- the front door (select() with fdr / stability) -------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(fdr=0.2), dict(stability=True, n_resamples=2)], ids=["fdr", "stability"])
@pytest.mark.parametrize("name, value", [("n_jobs", "2"), ("n_jobs", 1.5), ("random_state", -1)])
def test_select_controlled_checks_n_jobs_and_random_state_by_name(kw, name, value):
    import numkfs

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    with pytest.raises(ValueError, match=rf"The '{name}' parameter of (KnockoffFilter|StabilitySelection) must be"):
        numkfs.select(X, X[:, 0], "lpkta", **{**kw, name: value})


def test_to_dict_writes_an_infinite_knockoff_threshold_as_null():
    import json

    import numkfs

    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 4))
    res = numkfs.select(X, rng.standard_normal(40), "lpkta", fdr=0.1, random_state=0)
    assert res.estimator.threshold_ == np.inf  # nothing selected on noise
    d = res.to_dict()
    assert d["knockoffs"]["threshold"] is None
    json.dumps(d, allow_nan=False)  # raises on NaN / Infinity


def test_knife_statistic_has_power_on_friedman1_at_13_rows_per_feature():
    # power with the KNIFE statistic at n/p >= 5.  Friedman #1 (200 x 15, 5 true features, noise 1):
    # knockoff+ at q = 0.2 must find all five (the CV selection does) with at most one false feature
    from sklearn.datasets import make_friedman1

    from numkfs import select

    X, y = make_friedman1(200, 15, noise=1.0, random_state=1)
    res = select(X, y, "knife", fdr=0.2, random_state=1)
    chosen = set(np.flatnonzero(res.selected).tolist())
    assert {0, 1, 2, 3, 4} <= chosen
    assert len(chosen - {0, 1, 2, 3, 4}) <= 1


def test_constant_column_gets_statistic_0_and_the_others_are_unchanged():
    # a constant column was refused ("drop it first") where every method gives it weight 0
    import warnings

    rng = np.random.default_rng(3)
    X = rng.standard_normal((90, 6))
    y = X[:, 0] + X[:, 1] ** 2 + 0.2 * rng.standard_normal(90)
    Xc = np.insert(X, 2, 4.0, axis=1)
    ref = KnockoffFilter("lpkta", fdr=0.2, random_state=0).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kf = KnockoffFilter("lpkta", fdr=0.2, random_state=0).fit(Xc, y)
    said = [str(w.message) for w in caught if "constant" in str(w.message)]
    assert said == ["KnockoffFilter: feature(s) [2] are constant; they get weight 0."]
    keep = np.arange(7) != 2
    assert kf.statistics_[2] == 0.0 and not kf.support_[2] and kf.s_[2] == 0.0
    np.testing.assert_array_equal(kf.statistics_[keep], ref.statistics_)
    np.testing.assert_array_equal(kf.support_[keep], ref.support_)
    assert kf.threshold_ == ref.threshold_
    np.testing.assert_array_equal(kf.correlation_[np.ix_(keep, keep)], ref.correlation_)


def test_select_fdr_treats_a_constant_column_as_the_cv_route_does():
    import warnings

    from numkfs import select

    rng = np.random.default_rng(3)
    X = rng.standard_normal((90, 6))
    X[:, 4] = -1.0
    y = X[:, 0] + X[:, 1] ** 2 + 0.2 * rng.standard_normal(90)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = select(X, y, "lpkta", fdr=0.2)
    assert [str(w.message) for w in caught if "constant" in str(w.message)] == [
        "select: feature(s) [x4] are constant; they get weight 0."]
    assert res.weights[4] == 0.0 and not res.selected[4]


# -- multiple knockoffs: K copies drawn together (n_copies) ------------------------------------------------------

@pytest.mark.parametrize("K, expected", [(1, 0.8), (2, 0.6), (3, 0.4 * 4 / 3)])
def test_equicorrelated_s_for_k_copies_closed_form(K, expected):
    # compound symmetry rho = 0.6: lambda_min = 0.4, and (K + 1)/K Sigma - s I >= 0 exactly when s <= (K + 1)/K 0.4
    C = 0.4 * np.eye(6) + 0.6
    assert equicorrelated_s(C, n_copies=K) == pytest.approx(np.full(6, expected), rel=1e-12)


@pytest.mark.parametrize("K", [2, 3])
def test_k_copies_have_the_exchangeable_joint_covariance(K):
    """[X, X~1, ..., X~K]: every block has covariance C and every two blocks C - D (within sampling error),
    with the SDP's s for K copies feasible: (K + 1)/K C - diag(s) >= 0, and no smaller than one copy needs."""
    rng = np.random.default_rng(2)
    n, p = 6000, 5
    C = _ar(p, 0.5)
    X = rng.standard_normal((n, p)) @ np.linalg.cholesky(C).T * 3.0 + 1.0
    mu, sd = X.mean(axis=0), X.std(axis=0)
    Z = (X - mu) / sd
    Chat = Z.T @ Z / n
    s = sdp_s(Chat, n_copies=K)[0]
    assert np.linalg.eigvalsh((K + 1) / K * Chat - np.diag(s))[0] >= PSD_MARGIN - _roundoff(Chat)
    assert s.sum() >= equicorrelated_s(Chat, n_copies=K).sum() - 1e-6
    assert s.sum() < sdp_s(Chat)[0].sum()  # K copies must each stay closer to X
    Xk = gaussian_knockoffs(X, s, Chat, n_copies=K, random_state=3)
    assert Xk.shape == (n, K * p)
    J = np.hstack([Z, (Xk - np.tile(mu, K)) / np.tile(sd, K)])
    G = J.T @ J / n
    D = np.diag(s)
    target = np.kron(np.ones((K + 1, K + 1)), Chat - D) + np.kron(np.eye(K + 1), D)
    # an entry of a sample covariance of unit-variance Gaussians has sd <= sqrt(2 / n)
    assert np.abs(G - target).max() <= 5 * np.sqrt(2.0 / n)


def test_k_copy_sdp_agrees_between_native_and_clarabel():
    from numkfs.solvers import solve

    C = _random_correlation(12, 4)
    M = 0.75 * C  # K = 2: the SDP of (K + 1)/(2K) C, whose 2M - diag(s) >= 0 is 3/2 C - diag(s) >= 0
    native = solve(KnockoffSDP(M), "native", fallback=False)["s"]
    ref = solve(KnockoffSDP(M), "CLARABEL", tol=1e-8, fallback=False)["s"]
    assert abs(native.sum() - ref.sum()) <= 2e-8 * max(1.0, ref.sum())  # both stop at relative gap 1e-8
    s = sdp_s(C, n_copies=2)[0]
    assert abs(s.sum() - ref.sum()) <= 2e-8 * max(1.0, ref.sum()) + C.shape[0] * PSD_MARGIN


def test_k_copy_statistics_take_the_largest_entry_point_and_its_owner():
    # p = 2 features and K = 2 copies: columns x0, x1, x0~1, x1~1, x0~2, x1~2; sparse end last
    W = np.array([[0.9, 0.8, 0.5, 0.4, 0.7, 0.3],
                  [0.6, 0.0, 0.3, 0.2, 0.0, 0.0],
                  [0.0, 0.0, 0.0, 0.2, 0.0, 0.0]])
    path = FeaturePath([0.1, 1.0, 10.0], W)
    Z = entry_points(path)
    assert Z.tolist() == [1.0 + 0.6 / 0.6, 0.0 + 0.8 / 0.9, 1.0 + 0.3 / 0.6, 2.0 + 0.2 / 0.2,
                          0.0 + 0.7 / 0.9, 0.0 + 0.3 / 0.9]
    # x0 (Z = 2) beats its copies (1.5, 0.78): +2; x1 (0.89) loses to its first copy (3): -3
    assert knockoff_statistics(path, 2, n_copies=2).tolist() == [2.0, -3.0]
    # a tie between a feature and one of its copies: 0
    tied = FeaturePath([0.1, 1.0], np.array([[0.5, 0.1, 0.5, 0.1, 0.2, 0.1], [0.0] * 6]))
    assert knockoff_statistics(tied, 2, n_copies=2)[0] == 0.0
    # one copy: the signed maximum of the pair
    W1 = W[:, :4]
    Z1 = entry_points(FeaturePath([0.1, 1.0, 10.0], W1))
    expected = np.maximum(Z1[:2], Z1[2:]) * np.sign(Z1[:2] - Z1[2:])
    assert np.array_equal(knockoff_statistics(FeaturePath([0.1, 1.0, 10.0], W1), 2), expected)


def test_k_copy_threshold_against_the_definition():
    rng = np.random.default_rng(5)
    cases = [np.round(rng.standard_normal(25) + rng.choice([0, 2], 25), 1) for _ in range(20)]
    for W, q, K in itertools.product(cases, (0.1, 0.2), (2, 3)):
        expected = np.inf
        for t in sorted(set(np.abs(W[W != 0]))):
            if (1 + np.sum(W <= -t)) / (K * max(1, np.sum(W >= t))) <= q:
                expected = t
                break
        assert knockoff_threshold(W, q, n_copies=K) == expected


def test_min_selections_with_k_copies():
    from numkfs.knockoffs import min_selections

    for q, K in itertools.product((0.1, 0.2, 0.3), (2, 3)):
        k = min_selections(q, n_copies=K)
        assert 1 / (K * k) <= q and (k == 1 or 1 / (K * (k - 1)) > q)
        # the most favourable W: k - 1 positives and no negative cannot pass, k can
        if k > 1:
            assert not np.isfinite(knockoff_threshold(np.r_[np.arange(1.0, k), np.zeros(5)], q, n_copies=K))
        assert np.isfinite(knockoff_threshold(np.r_[np.arange(1.0, k + 1), np.zeros(5)], q, n_copies=K))


def test_k_copies_select_among_four_features_where_one_copy_cannot():
    """At p = 4 and q = 0.2 one copy can never select (ceil(1/q) = 5 > 4, with a warning); three copies
    need ceil(1/(3q)) = 2, and find the two relevant features: each draw's e-value of each is
    K p / (1 + 0) = 12 when no copy enters first, above e-BH's p / (q k) = 10 at k = 2."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 4))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.standard_normal(200)
    with pytest.warns(UserWarning, match=r"cannot select fewer than 5 features \(ceil\(1 / fdr\)"):
        one = KnockoffFilter("lpkta", fdr=0.2, n_copies=1, random_state=0).fit(X, y)
    assert not one.get_support().any()
    kf = KnockoffFilter("lpkta", fdr=0.2, n_copies=3, random_state=0).fit(X, y)
    assert np.flatnonzero(kf.get_support()).tolist() == [0, 1]
    assert kf.draw_statistics_.shape == (8, 4) and kf.e_values_.tolist() == [12.0, 12.0, 0.0, 0.0]
    with pytest.warns(UserWarning, match=r"with 2 knockoff copies cannot select fewer than 5 features "
                                         r"\(ceil\(1 / \(n_copies fdr\)\)"):
        KnockoffFilter("lpkta", fdr=0.1, n_copies=2, random_state=0).fit(X, y)


@pytest.mark.parametrize("n_draws", [1, 8])
def test_k_copy_fdr_on_null_data_is_within_q(n_draws):
    """y independent of X, three copies, knockoff+ on one draw or e-BH on eight: P(anything selected) <= q,
    checked as in the one-copy case (mean of S Bernoulli FDPs within 3 standard errors of q)."""
    q, S = 0.2, 30
    fdp = []
    for seed in range(S):
        rng = np.random.default_rng(2000 + seed)
        X, y = rng.standard_normal((100, 10)), rng.standard_normal(100)
        kf = KnockoffFilter("lpkta", fdr=q, n_draws=n_draws, n_copies=3, random_state=seed).fit(X, y)
        fdp.append(float(kf.get_support().any()))
    assert np.mean(fdp) <= q + 3 * np.sqrt(q * (1 - q) / S), np.mean(fdp)


# -- group knockoffs: correlated features tested as one (group_correlation) ---------------------------------------

def _blocks(p, groups, rho, seed, n):
    """X with equicorrelated blocks (correlation rho within each group, 0 across)."""
    C = np.eye(p)
    for g in groups:
        C[np.ix_(g, g)] = rho
        C[g, g] = 1.0
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, p)) @ np.linalg.cholesky(C).T, C


def test_group_knockoff_sdp_agrees_between_two_solvers_and_ties_s_within_groups():
    from numkfs.solvers.knockoff_sdp import GroupKnockoffSDP

    C = _random_correlation(8, 5)
    groups = [[0, 3], [1], [2, 5, 6], [4], [7]]
    problem = GroupKnockoffSDP(C, groups)
    table = cross_check(problem, ["CLARABEL", "SCS"], tol=1e-8)  # 1e-9: CLARABEL 'inaccurate' here
    assert [r["status"] for r in table.rows] == ["optimal", "optimal"]
    # both stop at relative gap 1e-8 (objective ~ p): the objectives agree to that, the points to its root
    assert abs(table["SCS"]["objective_gap"]) <= 1e-7
    assert table["SCS"]["solution_distance"] <= 1e-3
    s = problem.expand(table.results["CLARABEL"]["gamma"])
    assert s[0] == s[3] and s[2] == s[5] == s[6]
    assert np.linalg.eigvalsh(2 * C - np.diag(s))[0] >= -1e-7
    # tying is a constraint: the optimum is at most the untied SDP's, and with singletons it is that SDP
    untied = sdp_s(C)[0].sum()
    assert s.sum() <= untied + 1e-6
    single = GroupKnockoffSDP(C, [[j] for j in range(8)])
    assert abs(single.expand(cross_check(single, ["CLARABEL"], tol=1e-8).results["CLARABEL"]["gamma"]).sum()
               - untied) <= 1e-6
    with pytest.raises(ValueError, match="every column exactly once"):
        GroupKnockoffSDP(C, [[0, 1], [1, 2]])


@pytest.mark.parametrize("K", [1, 2])
def test_group_s_is_block_diagonal_in_sigma_and_feasible(K):
    from numkfs.knockoffs import group_s

    X, C = _blocks(9, [[0, 1, 2], [5, 6]], 0.8, 0, 50)
    groups = [[0, 1, 2], [3], [4], [5, 6], [7], [8]]
    for sdp in (True, False):
        S, _ = group_s(C, groups, n_copies=K, sdp=sdp)
        for g in groups:  # S_gg = gamma_g Sigma_gg, and 0 across groups
            gam = S[g[0], g[0]]
            assert np.abs(S[np.ix_(g, g)] - gam * C[np.ix_(g, g)]).max() <= 1e-12
            others = [j for j in range(9) if j not in g]
            assert not S[np.ix_(g, others)].any()
        assert np.linalg.eigvalsh((K + 1) / K * C - S)[0] >= -_roundoff(C)
    # the tied SDP's S beats the equicorrelated one; within a group of rho = 0.8 a feature alone could only
    # have s = 2 (1 - 0.8) = 0.4, the group gamma = 1 (the groups are independent of each other)
    S_sdp, S_eq = group_s(C, groups, n_copies=K, sdp=True)[0], group_s(C, groups, n_copies=K, sdp=False)[0]
    assert np.trace(S_sdp) >= np.trace(S_eq) - 1e-6
    if K == 1:
        assert np.diag(S_sdp) == pytest.approx(np.ones(9), abs=1e-6)
        assert sdp_s(C)[0][:3] == pytest.approx(np.full(3, 2 * (1 - 0.8)), abs=1e-6)
    # groups of one: diag(sdp_s) itself
    singles = [[j] for j in range(9)]
    assert np.array_equal(group_s(C, singles, n_copies=K)[0], np.diag(sdp_s(C, n_copies=K)[0]))


def test_group_knockoffs_are_exchangeable_with_x_group_by_group():
    from numkfs.knockoffs import group_s

    n = 6000
    X, C = _blocks(6, [[0, 1], [3, 4, 5]], 0.9, 1, n)
    X = 2.0 * X - 1.0
    mu, sd = X.mean(axis=0), X.std(axis=0)
    Z = (X - mu) / sd
    Chat = Z.T @ Z / n
    S, _ = group_s(Chat, [[0, 1], [2], [3, 4, 5]])
    Xk = gaussian_knockoffs(X, S, Chat, random_state=4)
    J = np.hstack([Z, (Xk - mu) / sd])
    G = J.T @ J / n
    target = np.block([[Chat, Chat - S], [Chat - S, Chat]])
    assert np.abs(G - target).max() <= 5 * np.sqrt(2.0 / n)  # sampling error of unit-variance covariances


def test_group_statistics_take_each_unit_first_entry():
    # p = 3 features in units {0, 2} and {1}, one copy: columns x0, x1, x2, x0~, x1~, x2~; sparse end last
    W = np.array([[0.9, 0.8, 0.5, 0.4, 0.7, 0.3],
                  [0.0, 0.6, 0.3, 0.2, 0.0, 0.0],
                  [0.0, 0.0, 0.0, 0.2, 0.0, 0.0]])
    path = FeaturePath([0.1, 1.0, 10.0], W)
    Z = entry_points(path)
    # unit {0, 2}: max(Z0, Z2) = 1.5 against max(Z3, Z5) = 3: -3; unit {1}: Z1 = 2 against Z4 = 0.78: +2
    assert max(Z[0], Z[2]) == 1.5 and max(Z[3], Z[5]) == 3.0
    assert knockoff_statistics(path, 3, groups=[[0, 2], [1]]).tolist() == [-3.0, 2.0]


def test_an_interchangeable_pair_is_selected_as_a_group_and_neither_alone():
    """x1 = x0 + 0.15 noise (correlation 0.99), y from x0 and five other features: alone, each of the pair
    has s ~ 0.03 (its knockoff nearly itself), some draws put a knockoff of the pair first, and neither
    reaches the largest e-value p; tested as a group, the pair gets it from every draw and is selected
    as a group, neither member alone."""
    rng = np.random.default_rng(3)
    n = 200
    X = rng.standard_normal((n, 16))
    X[:, 1] = X[:, 0] + 0.15 * rng.standard_normal(n)
    y = (np.sin(2 * X[:, 0]) + X[:, 2] + X[:, 3] ** 2 + X[:, 4] + np.abs(X[:, 5]) + np.tanh(2 * X[:, 6])
         + 0.3 * rng.standard_normal(n))
    alone = KnockoffFilter("lpkta", fdr=0.2, group_correlation=None, random_state=0).fit(X, y)
    assert alone.s_[:2].max() < 0.05 and alone.statistics_[:2].max() < alone.n_units_ == 16
    kf = KnockoffFilter("lpkta", fdr=0.2, random_state=0).fit(X, y)
    assert [g.tolist() for g in kf.clusters_[:2]] == [[0, 1], [2]] and kf.n_units_ == 15
    assert kf.groups_ == [[0, 1]] and not kf.get_support()[:2].any()
    assert np.flatnonzero(kf.get_support()).tolist() == [2, 3, 4, 5, 6]
    assert kf.s_[:2] == pytest.approx([kf.s_[0]] * 2) and kf.s_[0] > 0.5  # the group's knockoff differs
    assert kf.group_statistics_[0] == kf.cluster_statistics_[0] == kf.statistics_[0] == kf.statistics_[1]
    assert kf.statistics_[0] == kf.n_units_  # the largest e-value: every draw puts the pair first


def test_group_fdr_on_correlated_null_data_is_within_q():
    """Pairs of features correlated 0.8, y independent of X: P(any unit selected) <= q (3 standard errors)."""
    q, S = 0.2, 30
    fdp = []
    pairs = [[2 * k, 2 * k + 1] for k in range(6)]
    for seed in range(S):
        X, _ = _blocks(12, pairs, 0.8, 3000 + seed, 120)
        y = np.random.default_rng(seed).standard_normal(120)
        kf = KnockoffFilter("lpkta", fdr=q, random_state=seed).fit(X, y)
        assert kf.n_units_ == 6
        fdp.append(float(kf.get_support().any() or bool(kf.groups_)))
    assert np.mean(fdp) <= q + 3 * np.sqrt(q * (1 - q) / S), np.mean(fdp)


def test_auto_copies_bring_the_smallest_selection_to_half_the_units():
    from numkfs.knockoffs import MAX_AUTO_COPIES, auto_copies, min_selections

    for G, q in itertools.product((3, 4, 6, 8, 10, 20, 50), (0.05, 0.1, 0.2, 0.3)):
        K = auto_copies(G, q)
        assert 1 <= K <= MAX_AUTO_COPIES
        fits = 2 * min_selections(q, n_copies=K) <= G
        assert fits or K == MAX_AUTO_COPIES
        assert K == 1 or 2 * min_selections(q, n_copies=K - 1) > G  # the fewest
    X, y = np.random.default_rng(0).standard_normal((60, 4)), np.random.default_rng(1).standard_normal(60)
    assert KnockoffFilter("lpkta", fdr=0.2, random_state=0).fit(X, y).n_copies_ == 3
