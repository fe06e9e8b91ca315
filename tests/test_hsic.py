"""HSIC independence tests (numkfs.hsic, numkfs.kernels.rowsums)."""
import math

import numpy as np
import pytest
from scipy import stats

from numkfs import hsic_pvalues, hsic_test
from numkfs.hsic import TARGET_TOL, VAR_RTOL
from numkfs.kernels import pivoted_cholesky
from numkfs.kernels.fgt import FGT_H, _KAPPA, _log_tail, fgt_order
from numkfs.kernels.rowsums import rbf_row_moments

EPS = np.finfo(float).eps
#: relative error of fast_exp_kernel per term (numkfs.kernels.fastexp)
EXP_REL = 2e-14


def _direct(X, y, classification, factor=False):
    """Statistic, p-value and the scale of the statistic's terms from the
    n x n matrices; ``factor``: the regression target's kernel through its
    pivoted Cholesky factor at numkfs.hsic.TARGET_TOL."""
    n, d = X.shape
    H = np.eye(n) - 1.0 / n
    if classification:
        L = (y[:, None] == y[None, :]).astype(float)
    else:
        v = (y - y.mean()) / y.std()
        L = np.exp(-((v[:, None] - v[None, :]) ** 2))
        if factor:
            G = pivoted_cholesky(L, tol=TARGET_TOL)
            L = G @ G.T
    Lc = H @ L @ H
    out = []
    for i in range(d):
        x = X[:, i]
        K = np.exp(-((x[:, None] - x[None, :]) ** 2) / x.var())
        Kc = H @ K @ H
        stat = np.sum(Kc * Lc) / n**2
        mu = np.trace(Kc) * np.trace(Lc) / (n * (n - 1) ** 2)
        off = ~np.eye(n, dtype=bool)
        AK = np.sum(Kc[off] ** 2) / (n * (n - 1))
        AL = np.sum(Lc[off] ** 2) / (n * (n - 1))
        var = 2 * (n - 4) * (n - 5) / (n * (n - 1) * (n - 2) * (n - 3)) * AK * AL
        p = stats.gamma.sf(stat, mu**2 / var, scale=var / mu)
        bound = np.sum(np.abs(Kc) * np.abs(Lc)) / n**2  # scale of the sum's terms
        out.append((stat, p, bound))
    return np.array(out).T


@pytest.mark.parametrize("classification", [True, False])
def test_statistic_and_pvalue_equal_the_direct_formula(classification):
    rng = np.random.default_rng(3)
    n = 120
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 3, n)  # ties: the grouped route
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int) if classification else \
        np.sin(2 * X[:, 1]) + 0.3 * rng.normal(size=n)
    stat, p = hsic_test(X, y, method="exact")
    ref, pref, bound = _direct(X, y, classification, factor=True)
    # per term: the fast exponential and n-term sums
    tol = (EXP_REL + 8 * n * EPS) * bound
    assert np.all(np.abs(stat - ref) <= tol)
    # p-values: smooth in the moments, which carry the same relative errors
    np.testing.assert_allclose(p, pref, rtol=1e-9, atol=1e-300)
    if not classification:
        # against the full Gaussian target kernel: within TARGET_TOL lambda_max(HKH) / n
        full, _, _ = _direct(X, y, False)
        assert np.all(np.abs(stat - full) <= TARGET_TOL * n / n + tol)


@pytest.mark.parametrize("n", [200, 1500])
def test_pvalues_uniform_on_null_features(n):
    """Kolmogorov-Smirnov against U(0, 1) over 300 independent null columns
    (Gaussian, heavy-tailed and 4-valued), at test level 0.001; both targets."""
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 300))
    X[:, :100] = rng.standard_t(3, size=(n, 100))
    X[:, 100:150] = rng.integers(0, 4, size=(n, 50))
    for y in (rng.normal(size=n), rng.integers(0, 3, n)):
        _, p = hsic_test(X, y)
        assert stats.kstest(p, "uniform").pvalue > 1e-3


def test_pvalues_tiny_on_dependent_features():
    rng = np.random.default_rng(0)
    n = 300
    X = rng.normal(size=(n, 4))
    y = np.cos(2 * X[:, 0]) + X[:, 1] ** 2 + 0.2 * rng.normal(size=n)  # no linear correlation
    p = hsic_pvalues(X, y)
    assert p[0] < 1e-8 and p[1] < 1e-8
    assert abs(np.corrcoef(X[:, 0], y)[0, 1]) < 0.2
    yc = (np.abs(X[:, 2]) > 0.7).astype(int)
    assert hsic_pvalues(X, yc)[2] < 1e-8


def _row_sum_bound(s, rtol):
    """Per-point FGT error bound (numkfs.kernels.rowsums): per pair
    κ R_p(h) e^{-(|d| - h)_+² / 2} when expanded, e^{-d²} when skipped."""
    p, delta = fgt_order(rtol)
    trunc = _KAPPA * math.exp(_log_tail(p, FGT_H))
    d = np.abs(s[:, None] - s[None, :])
    per = trunc * np.exp(-np.maximum(d - FGT_H, 0) ** 2 / 2) + np.where(d > delta - FGT_H, np.exp(-d**2), 0)
    return per.sum(axis=1)


@pytest.mark.parametrize("rtol", [1e-10, VAR_RTOL])
def test_fgt_row_moments_within_their_bound(rtol):
    """R2 within the per-point bound; Q (on the row sums' boxes, read at sqrt(2) s with
    box width sqrt(2) h) within rtol of itself, at the statistic's and the variance's rtol."""
    rng = np.random.default_rng(1)
    n = 1500
    X = np.c_[rng.normal(size=n), rng.standard_t(1.5, size=n), rng.integers(0, 5, n), rng.uniform(size=n)]
    g = 1.0 / X.var(axis=0)
    R2f, Qf = rbf_row_moments(X, g, fgt=True, rtol=rtol)
    R2e, Qe = rbf_row_moments(X, g, fgt=False)
    for i in range(X.shape[1]):
        s = np.sqrt(g[i]) * X[:, i]
        K = np.exp(-((s[:, None] - s[None, :]) ** 2))
        r = K.sum(axis=1)
        err = _row_sum_bound(s, rtol) + (EXP_REL + 4 * n * EPS) * r
        assert abs(R2f[i] - r @ r) <= np.sum(2 * r * err + err**2)
        assert abs(R2e[i] - r @ r) <= np.sum(2 * r * (EXP_REL + 4 * n * EPS) * r)
        q = np.sum(K**2)
        assert abs(Qf[i] - q) <= (rtol + 8 * n * EPS) * q  # unit weights: relative to Q itself
        assert abs(Qe[i] - q) <= (2 * EXP_REL + 8 * n * EPS) * q


def test_row_moments_feature_major_copy_and_sparse_blocks():
    """The row moments' blocks are copied feature-major by a jitted loop: the
    values of numpy's transposed copy bit for bit, for a block inside X and
    the last, narrower one (ROW_BLOCK = 8 columns per block, 11 columns);
    a sparse X gives the dense X's moments bit for bit (the same copies)."""
    import scipy.sparse as sp

    from numkfs.kernels.rowsums import ROW_BLOCK, _feature_major

    rng = np.random.default_rng(4)
    X = rng.normal(size=(1200, 11))
    X[rng.random(X.shape) < 0.5] = 0.0
    for i0, i1 in [(2, 7), (ROW_BLOCK, 11)]:
        T = _feature_major(X, i0, i1)
        assert T.flags["C_CONTIGUOUS"] and np.array_equal(T, np.ascontiguousarray(X[:, i0:i1].T))
    g = 1.0 / X.var(axis=0)
    for fgt in (True, False):
        R2, Q = rbf_row_moments(X, g, fgt=fgt, rtol=VAR_RTOL)
        R2s, Qs = rbf_row_moments(sp.csc_matrix(X), g, fgt=fgt, rtol=VAR_RTOL)
        assert np.array_equal(R2, R2s) and np.array_equal(Q, Qs)
        assert np.all(Q >= X.shape[0]) and np.all(R2 >= X.shape[0])  # the diagonal's ones alone


def test_fgt_route_agrees_with_exact_route():
    rng = np.random.default_rng(2)
    n = 1500
    X = np.c_[rng.normal(size=n), rng.standard_t(2, size=n), rng.uniform(size=n)]
    y = (X[:, 0] ** 2 + rng.normal(size=n) > 1).astype(int)
    sf, pf = hsic_test(X, y, method="fgt")
    se, pe = hsic_test(X, y, method="exact")
    # FGT bound on n² HSIC_b: rtol times sum |z|ᵀ K |z| <= rtol n (n |z|max²)
    z = np.sqrt(2.0) * (y - y.mean())
    for i in range(3):
        x = X[:, i]
        K = np.exp(-((x[:, None] - x[None, :]) ** 2) / x.var())
        bound = 1e-10 * np.abs(z) @ K @ np.abs(z) / n**2 + (EXP_REL + 8 * n * EPS) * np.abs(z) @ K @ np.abs(z) / n**2
        assert abs(sf[i] - se[i]) <= bound
    np.testing.assert_allclose(pf, pe, rtol=1e-6, atol=1e-300)


def test_fgt_route_agrees_with_exact_route_real_target():
    """A real-valued target: the factor's r rows and the counts through the
    fast Gauss transform (shared weight rows, several columns per worker on
    the same scratch, weights copied into the boxes by position), against
    the exact pair loop on the same factor, within the transform's bound
    rtol sum_q |z_q|ᵀ K |z_q| / n² plus rounding."""
    from numkfs.hsic import RTOL, _target_factor

    rng = np.random.default_rng(5)
    n = 1500
    X = np.c_[rng.normal(size=(n, 4)), rng.standard_t(2, size=n), rng.uniform(size=n), rng.normal(size=(n, 2))]
    y = np.sin(X[:, 0]) + 0.3 * rng.normal(size=n)
    sf, pf = hsic_test(X, y, method="fgt")
    se, pe = hsic_test(X, y, method="exact")
    W, _ = _target_factor(y, "auto", n)
    ZT = W[:-1]
    assert ZT.shape[0] >= 10 and np.all(W[-1] == 1.0)  # many weight rows, then the counts
    A = np.abs(ZT)
    for i in range(X.shape[1]):
        x = X[:, i]
        K = np.exp(-((x[:, None] - x[None, :]) ** 2) / x.var())
        scale = np.sum((A @ K) * A) / n**2
        assert abs(sf[i] - se[i]) <= (RTOL + EXP_REL + 8 * n * EPS) * scale
    np.testing.assert_allclose(pf, pe, rtol=1e-6, atol=1e-300)


def test_inside_scikit_learn_selectors():
    from sklearn.feature_selection import SelectFdr, SelectFpr, SelectKBest

    rng = np.random.default_rng(4)
    X = rng.normal(size=(250, 8))
    y = np.sin(2 * X[:, 0]) + np.abs(X[:, 3]) + 0.2 * rng.normal(size=250)
    assert SelectKBest(hsic_test, k=2).fit(X, y).get_support().nonzero()[0].tolist() == [0, 3]
    assert SelectFdr(hsic_test, alpha=0.01).fit(X, y).get_support().nonzero()[0].tolist() == [0, 3]
    sel = SelectFpr(hsic_test, alpha=0.01).fit(X, y)
    assert set(sel.get_support().nonzero()[0]) >= {0, 3}
    _, p = hsic_test(X, y)
    np.testing.assert_array_equal(sel.pvalues_, p)


def test_linear_kernel_and_constant_columns():
    rng = np.random.default_rng(5)
    n = 100
    X = np.c_[rng.normal(size=n), np.full(n, 2.0), rng.normal(size=n)]
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    stat, p = hsic_test(X, y, kernel="linear")
    assert stat[1] == 0 and p[1] == 1.0 and p[0] < 1e-8
    # linear kernel: n² HSIC_b = x_cᵀ HLH x_c (L through its factor)
    v = (y - y.mean()) / y.std()
    H = np.eye(n) - 1.0 / n
    G = pivoted_cholesky(np.exp(-((v[:, None] - v[None, :]) ** 2)), tol=TARGET_TOL)
    L = H @ G @ G.T @ H
    xc = X[:, 2] - X[:, 2].mean()
    assert abs(stat[2] - xc @ L @ xc / n**2) <= 1e-12 * (np.abs(xc) @ np.abs(L) @ np.abs(xc)) / n**2 + 1e-12
    _, pc = hsic_test(X, np.ones(n))
    assert np.all(pc == 1.0)


def test_bad_input_is_refused():
    X = np.random.default_rng(0).normal(size=(20, 2))
    y = np.arange(20.0)
    with pytest.raises(ValueError, match="kernel"):
        hsic_test(X, y, kernel="poly")
    with pytest.raises(ValueError, match="method"):
        hsic_test(X, y, method="fast")
    with pytest.raises(ValueError, match="target"):
        hsic_test(X, y, target="ordinal")
    with pytest.raises(ValueError, match="y"):
        hsic_test(X, y[:10])
    with pytest.raises(ValueError, match="sample"):
        hsic_test(X[:5], y[:5])
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError):
        hsic_test(Xn, y)
    with pytest.raises(ValueError, match="gamma"):
        hsic_test(X, y, gamma=-1.0)


def test_sparse_input_equals_dense():
    """scipy.sparse columns go through the alignment's CSC sums (implicit
    zeros as one group): the same statistics and p-values to round-off."""
    import scipy.sparse as sp

    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 5))
    X[X < 0.5] = 0.0
    y = (X[:, 0] > 0).astype(int)
    n = len(y)
    z = np.sqrt(2.0) * (y - y.mean())  # the binary target's centred factor
    scale = np.abs(z).sum() ** 2 / n**2  # >= sum |z_j||z_k| K_jk / n² for K <= 1 (rbf)
    sd, pd = hsic_test(X, y)
    ss, ps = hsic_test(sp.csr_matrix(X), y)
    assert np.all(np.abs(ss - sd) <= 2 * (EXP_REL + 8 * n * EPS) * scale)
    np.testing.assert_allclose(ps, pd, rtol=1e-9, atol=1e-300)
    # linear kernel: closed forms from the column moments, dense or CSC
    sd, pd = hsic_test(X, y, kernel="linear")
    ss, ps = hsic_test(sp.csr_matrix(X), y, kernel="linear")
    np.testing.assert_allclose(ss, sd, rtol=8 * n * EPS)
    np.testing.assert_allclose(ps, pd, rtol=1e-9, atol=1e-300)


def _gamma_p(stat, tr, AK, trL, AL, n):
    """hsic_test's gamma p-value from the statistic and the moments' parts."""
    mu = tr * trL / (n * (n - 1.0) ** 2)
    var = 2.0 * (n - 4.0) * (n - 5.0) / (n * (n - 1.0) * (n - 2.0) * (n - 3.0)) * AK * AL
    return stats.gamma.sf(stat, mu**2 / var, scale=var / mu)


def _AK(Q, R2, tr, n):
    """A_K from Q, R2 and tr(HKH) (numkfs.hsic's identities)."""
    S = n * (n - tr)
    c = 1.0 + S / n**2
    return (Q - 2.0 * R2 / n + S * S / n**2 - (n * c * c - 4.0 * c * S / n + 4.0 * R2 / n**2)) / (n * (n - 1.0))


def test_fused_row_moments_and_pvalues_within_the_transform_bounds():
    """Dense columns through the fast Gauss transform take R2 and Q on the
    boxes of the statistic's sums (numkfs.kernels._hsic_fgt), a grouped
    column exactly over its groups, a small-spread column through
    rbf_row_moments: each within the row sums' and Q's bounds at VAR_RTOL
    of the direct n x n values; the statistics within RTOL sum_q |z_q|ᵀK|z_q|
    / n²; the p-values inside the range the gamma law takes over the
    corners of those bounds (plus rounding), at n = 2000."""
    from itertools import product

    from numkfs.hsic import RTOL, _target_factor
    from numkfs.kernels.alignment import dense_stats, rbf_sums_traces
    from numkfs.kernels.lowrank import rows_gram

    rng = np.random.default_rng(7)
    n = 2000
    X = np.c_[rng.normal(size=(n, 2)), rng.standard_t(2, size=n), rng.uniform(size=n), rng.integers(0, 5, n),
              1.0 + 1e-3 * rng.normal(size=n), rng.normal(size=n)]
    y = np.sin(X[:, 0]) + 0.3 * rng.normal(size=n)
    g = 1.0 / X.var(axis=0)
    g[5] *= 1e-4  # small spread: gamma (max - min)² <= 1/16, the moments' route
    W, _ = _target_factor(y, "auto", n)
    ZT = W[:-1]
    num, tr, _, R2, Q = rbf_sums_traces(X, g, ZT, "auto", RTOL, dense_stats(X), rows=VAR_RTOL, weights=W)
    assert np.isnan(R2[5]) and np.isnan(Q[5]) and not np.isnan(R2[[0, 1, 2, 3, 4, 6]]).any()
    stat, p = hsic_test(X, y, gamma=g)
    ZtZ, rows4 = rows_gram(ZT)
    trL = np.trace(ZtZ)
    AL = (np.sum(ZtZ * ZtZ) - rows4) / (n * (n - 1.0))
    A = np.abs(ZT)
    rnd = EXP_REL + 8 * n * EPS
    for i in range(X.shape[1]):
        s = np.sqrt(g[i]) * (X[:, i] - X[:, i].mean())
        K = np.exp(-((s[:, None] - s[None, :]) ** 2))
        r = K.sum(axis=1)
        q = np.sum(K**2)
        S2 = r.sum()
        num_e = np.sum((ZT @ K) * ZT)
        d_num = (RTOL + rnd) * np.sum((A @ K) * A)
        d_tr = (RTOL + rnd) * S2 / n
        if i == 5:
            assert abs(stat[i] - num_e / n**2) <= 1e-12 * np.sum((A @ K) * A) / n**2
            continue
        if i == 4:  # five groups: exact sums
            err_r, d_q = rnd * r, 2 * rnd * q
        else:
            err_r, d_q = _row_sum_bound(s, VAR_RTOL) + rnd * r, (VAR_RTOL + 8 * n * EPS) * q
        d_r2 = np.sum(2 * r * err_r + err_r**2)
        assert abs(num[i] - num_e) <= d_num
        assert abs(tr[i] - (n - S2 / n)) <= d_tr
        assert abs(R2[i] - r @ r) <= d_r2
        assert abs(Q[i] - q) <= d_q
        corners = [_gamma_p((num_e + a * d_num) / n**2, n - S2 / n + b * d_tr,
                            _AK(q + c * d_q, r @ r + e * d_r2, n - S2 / n + b * d_tr, n), trL, AL, n)
                   for a, b, c, e in product((-1, 1), repeat=4)]
        lo, hi = min(corners), max(corners)
        assert lo * (1 - 1e-9) <= p[i] <= hi * (1 + 1e-9)  # 1e-9: gammaincc's and the moments' rounding


def test_target_factor_tolerance_moves_the_test_within_its_bounds():
    """The real target's kernel L through its factor GGᵀ, E = L - GGᵀ positive
    semi-definite with tr(E) <= TARGET_TOL n: against the full Gaussian kernel
    (n x n), tr(HLH) moves by at most tr(E), n(n-1) A_L by at most
    tr(E) (2 lambda_max(HLH) + 2 max_j (HLH)_jj), the statistic by at most
    tr(E) lambda_max(HKH) / n² (the bounds of numkfs.hsic's docstring); the
    p-values stay inside the range the gamma law takes over the corners of
    those bounds (plus rounding)."""
    from itertools import product

    from numkfs.hsic import TARGET_TOL, _target_factor
    from numkfs.kernels.lowrank import FACTOR_FIRST_ROWS, pivoted_cholesky_rbf1d_rows, rows_gram

    rng = np.random.default_rng(8)
    n = 600
    X = np.c_[rng.normal(size=(n, 3)), rng.standard_t(3, size=n)]
    for y in (np.sin(X[:, 0]) + 0.3 * rng.normal(size=n), rng.standard_t(2, size=n)):
        v = (y - y.mean()) / y.std()
        G, _ = pivoted_cholesky_rbf1d_rows(v, 1.0, TARGET_TOL, n, 0, FACTOR_FIRST_ROWS, np.empty((0, 0)))
        trE = n - np.sum(G * G)
        assert 0.0 <= trE <= TARGET_TOL * n
        W, _ = _target_factor(y, "auto", n)
        ZtZ, rows4 = rows_gram(W[:-1])
        trLf = np.trace(ZtZ)
        ALf = (np.sum(ZtZ * ZtZ) - rows4) / (n * (n - 1.0))
        Hm = np.eye(n) - 1.0 / n
        Lc = Hm @ np.exp(-((v[:, None] - v[None, :]) ** 2)) @ Hm
        off = ~np.eye(n, dtype=bool)
        trL = np.trace(Lc)
        AL = np.sum(Lc[off] ** 2) / (n * (n - 1.0))
        d_trL = trE + 1e-12 * trL
        d_AL = trE * (2 * np.linalg.eigvalsh(Lc)[-1] + 2 * np.max(np.diag(Lc))) / (n * (n - 1.0)) + 1e-12 * AL
        assert abs(trLf - trL) <= d_trL and abs(ALf - AL) <= d_AL
        stat, p = hsic_test(X, y, method="exact")
        for i in range(X.shape[1]):
            x = X[:, i]
            Kc = Hm @ np.exp(-((x[:, None] - x[None, :]) ** 2) / x.var()) @ Hm
            st = np.sum(Kc * Lc) / n**2
            d_st = (trE * np.linalg.eigvalsh(Kc)[-1] + (EXP_REL + 8 * n * EPS) * np.sum(np.abs(Kc) * np.abs(Lc))) / n**2
            assert abs(stat[i] - st) <= d_st
            trK = np.trace(Kc)
            AK = np.sum(Kc[off] ** 2) / (n * (n - 1.0))
            corners = [_gamma_p(st + a * d_st, trK, AK, trL + b * d_trL, AL + c * d_AL, n)
                       for a, b, c in product((-1, 1), repeat=3)]
            assert min(corners) * (1 - 1e-9) <= p[i] <= max(corners) * (1 + 1e-9)


def test_fused_row_moments_with_more_boxes_than_kept():
    """A column spread over more boxes than the sums keep moments for
    (KEEP_BOXES; here about 4,400 boxes of a few points, the pairs within
    the cut-off summed directly, the others skipped): its R2 and Q are
    those of the exact pair loop within VAR_RTOL (the skipped pairs' share,
    below the cut-off's half of the bound)."""
    from numkfs.hsic import RTOL, _target_factor
    from numkfs.kernels._hsic_fgt import KEEP_BOXES
    from numkfs.kernels.alignment import rbf_sums_traces

    rng = np.random.default_rng(9)
    n = 5000
    X = rng.uniform(size=(n, 1))
    g = np.array([1e4**2])  # natural units over [0, 1e4]: 2e4 cells of width 0.5
    W, _ = _target_factor(np.sin(3 * X[:, 0]) + rng.normal(size=n), "auto", n)
    out = rbf_sums_traces(X, g, W[:-1], "fgt", RTOL, rows=VAR_RTOL, weights=W)
    s = np.sort(np.sqrt(g[0]) * X[:, 0])
    assert np.sum(np.diff(np.floor((s - s[0]) / FGT_H)) > 0) + 1 > KEEP_BOXES
    R2e, Qe = rbf_row_moments(X, g, fgt=False)
    np.testing.assert_allclose(out[3], R2e, rtol=VAR_RTOL)
    np.testing.assert_allclose(out[4], Qe, rtol=VAR_RTOL)
    assert np.all(out[3] < R2e) and np.all(out[4] <= Qe)  # only skipped (positive) terms missing


def test_grouped_columns_at_the_cap_in_the_fused_pass():
    """The fused pass (numkfs.kernels._hsic_fgt) holds its groups' scratch
    for SMALL_DISTINCT groups only (no longer r x n): columns with exactly
    that many distinct values (grouped, every slot used) and one more (the
    transform), at n = 1500 with a real target of r >= 10 rows, give the
    statistics of the exact pair loop within the transform's bound
    (RTOL sum_q |z_q|ᵀ K |z_q| / n² plus rounding) and the row moments
    R2, Q of the exact loop within VAR_RTOL (grouped: to rounding)."""
    from numkfs.hsic import RTOL, _target_factor
    from numkfs.kernels._alignment_exact import SMALL_DISTINCT
    from numkfs.kernels.alignment import dense_stats, rbf_sums_traces, resolve_gamma_given_var

    rng = np.random.default_rng(11)
    n = 1500
    X = np.c_[rng.integers(0, SMALL_DISTINCT, n), rng.integers(0, SMALL_DISTINCT + 1, n), rng.normal(size=n)]
    X = X.astype(float)
    assert [len(np.unique(X[:, i])) for i in range(2)] == [SMALL_DISTINCT, SMALL_DISTINCT + 1]
    y = np.sin(X[:, 2]) + 0.1 * X[:, 0] + 0.3 * rng.normal(size=n)
    sf, pf = hsic_test(X, y, method="fgt")
    se, pe = hsic_test(X, y, method="exact")
    W, _ = _target_factor(y, "auto", n)
    assert W.shape[0] - 1 >= 10
    A = np.abs(W[:-1])
    for i in range(X.shape[1]):
        x = X[:, i]
        K = np.exp(-((x[:, None] - x[None, :]) ** 2) / x.var())
        assert abs(sf[i] - se[i]) <= (RTOL + EXP_REL + 8 * n * EPS) * np.sum((A @ K) * A) / n**2
    np.testing.assert_allclose(pf, pe, rtol=1e-6, atol=1e-300)
    st = dense_stats(X)
    g = resolve_gamma_given_var(X, None, st[1])
    out = rbf_sums_traces(X, g, W[:-1], "fgt", RTOL, st, rows=VAR_RTOL, weights=W)
    R2e, Qe = rbf_row_moments(X, g, fgt=False)
    np.testing.assert_allclose(out[3][0], R2e[0], rtol=1e-12)  # grouped: exact over the groups
    np.testing.assert_allclose(out[4][0], Qe[0], rtol=1e-12)
    np.testing.assert_allclose(out[3], R2e, rtol=VAR_RTOL)
    np.testing.assert_allclose(out[4], Qe, rtol=VAR_RTOL)


def test_target_factor_is_the_same_whatever_its_first_buffer():
    """hsic's target factor starts in a buffer of as many rows as fit in
    TARGET_FIRST_BYTES (20 at 2 x 10^5 rows, 32 at most), allocated by
    numpy and passed in: the rows, grown by doubling from any first size,
    from the function's own buffer or the caller's, are the same bit for
    bit (the same operations in the same order), the counts row after them."""
    from numkfs.kernels.lowrank import pivoted_cholesky_rbf1d_rows

    rng = np.random.default_rng(12)
    v = rng.standard_t(3, size=3000)
    v = (v - v.mean()) / v.std()
    ref, piv = pivoted_cholesky_rbf1d_rows(v, 1.0, TARGET_TOL, 200, 1, 32, np.empty((0, 0)))
    assert ref.shape[0] - 1 > 8  # grows from 2 rows at least twice
    for first in (1, 2, 5, 8, 200):
        G, p = pivoted_cholesky_rbf1d_rows(v, 1.0, TARGET_TOL, 200, 1, first, np.empty((0, 0)))
        assert G.shape == ref.shape and np.array_equal(G[:-1], ref[:-1]) and np.array_equal(p, piv)
        buf = np.empty((first, len(v)))
        G, p = pivoted_cholesky_rbf1d_rows(v, 1.0, TARGET_TOL, 200, 1, 32, buf)
        assert G.shape == ref.shape and np.array_equal(G[:-1], ref[:-1]) and np.array_equal(p, piv)
        assert np.shares_memory(G, buf) == (first > ref.shape[0] - 1)  # grown only when the rank exceeds it
