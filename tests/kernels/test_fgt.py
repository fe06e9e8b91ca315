"""The fast Gauss transform alignments (numkfs.kernels.fgt) against the exact pair loop.

Each sum S(a) = sum_jk a_j a_k exp(-g (x_j - x_k)^2) must be within
rtol * sum_jk |a_j||a_k| exp(...) of the exact loop (the documented bound).
"""
import numpy as np
import pytest
import scipy.sparse as sp

from numkfs.kernels.alignment import _rbf_pair_sums, alignment_target, feature_alignments, resolve_gamma
from numkfs.kernels.fgt import fgt_error_bound, fgt_order, fgt_quadratic_forms


def _hard_columns(n, rng):
    """Columns with heavy ties, far outliers, a few distinct values, a spread
    over hundreds of bandwidths and one tiny cluster."""
    cols = [
        rng.normal(size=n),
        np.round(rng.normal(size=n) * 4) / 4,  # ~40 distinct values, heavy ties
        np.where(rng.random(n) < 0.01, rng.normal(size=n) * 1e7, rng.normal(size=n)),  # far outliers
        rng.integers(0, 5, n).astype(float),  # 5 values: grouped, exact
        rng.standard_cauchy(size=n),
        np.exp(3 * rng.normal(size=n)),
    ]
    return np.column_stack(cols)


def _check_bound(X, Z, g, rtol):
    """|fgt - exact| <= rtol * (exact sum with |z|), for S1 and S2 (S2 has weights 1)."""
    ZT = np.ascontiguousarray(Z.T)
    e1, e2, _ = _rbf_pair_sums(X, g, ZT, "exact")
    f1, f2, _ = _rbf_pair_sums(X, g, ZT, "fgt", rtol)
    b1, _, _ = _rbf_pair_sums(X, g, np.abs(ZT), "exact")
    assert np.all(np.abs(f1 - e1) <= rtol * b1 + 1e-13 * b1)
    assert np.all(np.abs(f2 - e2) <= rtol * e2 + 1e-13 * e2)
    return np.max(np.abs(f1 - e1) / b1), np.max(np.abs(f2 - e2) / e2)


@pytest.mark.parametrize("target", ["binary", "regression", "multiclass"])
def test_fgt_within_rtol_gamma_over_six_orders(target):
    rng = np.random.default_rng(0)
    n = 2500
    X = _hard_columns(n, rng)
    y = {"binary": np.sign(X[:, 0] + rng.normal(size=n)), "regression": X[:, 0] ** 2 + rng.normal(size=n),
         "multiclass": rng.integers(0, 3, n)}[target]
    Z, _, _ = alignment_target(y)
    g0 = resolve_gamma(X)
    worst = 0.0
    for scale in [1e-3, 1e-1, 1.0, 1e1, 1e3]:  # gamma over 6 orders of magnitude
        e1, e2 = _check_bound(X, Z, g0 * scale, 1e-10)
        worst = max(worst, e1, e2)
    assert worst < 1e-10


def test_looser_rtol_lower_order_still_within_bound():
    rng = np.random.default_rng(1)
    n = 3000
    X = rng.normal(size=(n, 3))
    X[:, 1] = np.round(X[:, 1] * 8)
    y = np.sign(X[:, 0])
    Z, _, _ = alignment_target(y)
    p6, d6 = fgt_order(1e-6)
    p10, d10 = fgt_order(1e-10)
    assert p6 < p10 and d6 < d10
    assert fgt_error_bound(p6, d6) <= 1e-6 and fgt_error_bound(p6 - 1, d6) > 1e-6 / 2
    e1, e2 = _check_bound(X, Z, resolve_gamma(X), 1e-6)
    assert max(e1, e2) <= 1e-6
    # at rtol = 1e-3 the truncation shows (so the transform, not the exact loop, ran) and stays bounded
    e1, e2 = _check_bound(X, Z, resolve_gamma(X), 1e-3)
    assert 1e-12 < max(e1, e2) <= 1e-3


def test_fgt_twenty_thousand_rows():
    rng = np.random.default_rng(2)
    n = 20_000
    X = np.column_stack([rng.normal(size=n), np.round(rng.standard_t(3, size=n) * 10) / 10])
    y = np.sign(X[:, 0] + 0.5 * rng.normal(size=n))
    Z, _, _ = alignment_target(y)
    e1, e2 = _check_bound(X, Z, resolve_gamma(X), 1e-10)
    assert max(e1, e2) <= 1e-10
    a_exact = feature_alignments(X, y, method="exact")
    a_fgt = feature_alignments(X, y, method="fgt")
    np.testing.assert_allclose(a_fgt, a_exact, rtol=1e-8)


def test_quadratic_forms_against_numpy():
    rng = np.random.default_rng(3)
    s = np.concatenate([rng.normal(size=1500) * 3, [1e9, -1e9, 1e9]])  # far outliers: sorted boxes
    W = np.vstack([rng.normal(size=s.size), np.ones(s.size)])
    E = np.exp(-np.subtract.outer(s, s) ** 2)
    exact = np.einsum("rj,jk,rk->r", W, E, W)
    bound = np.einsum("rj,jk,rk->r", np.abs(W), E, np.abs(W))
    got = fgt_quadratic_forms(s, W)
    assert np.all(np.abs(got - exact) <= 1e-10 * bound)
    # repeated values only: one box
    t = np.repeat([0.0, 0.1, 0.3], 700)
    ones = np.ones((1, t.size))
    np.testing.assert_allclose(fgt_quadratic_forms(t, ones),
                               [np.exp(-np.subtract.outer(t, t) ** 2).sum()], rtol=1e-12)


@pytest.mark.parametrize("R, P", [(1, 14), (2, 19), (3, 19), (5, 19), (6, 19), (7, 17), (15, 19), (18, 19), (18, 12)])
def test_box_moments_against_numpy(R, P):
    """Box moments M[r, k] = sum_j W[r, j] (s_j - c)^k / k! against numpy, over
    two and a half chunks and a partial last chunk of either chunk size: the
    fused pass of two rows, and the tiles of four rows by three orders with
    their remainders (orders left over: P mod 3 of 0, 1 and 2; rows left
    over: two rows by three orders, one row by four, each with its orders
    left over).
    Each entry is a sum of L products of size at most |W| t^k / k!: its
    rounding is within a few L eps of the sum of their magnitudes."""
    from math import factorial

    from numkfs.kernels.fgt import MOMENT_CHUNK, MOMENT_CHUNK_ROWS, _moments

    rng = np.random.default_rng(7)
    L = 2 * MOMENT_CHUNK + MOMENT_CHUNK // 2 + MOMENT_CHUNK_ROWS // 2 + 3
    sv = rng.uniform(-0.25, 0.25, size=L + 9)
    Wv = rng.normal(size=(R, L + 9))
    M = np.empty((R, P))
    _moments(sv, Wv, 4, 4 + L, 0.03, P, np.empty(L + 9), M)
    t = sv[4:4 + L] - 0.03
    T = np.array([t**k / factorial(k) for k in range(P)])
    W = Wv[:, 4:4 + L]
    scale = np.abs(W) @ np.abs(T).T
    assert np.all(np.abs(M - W @ T.T) <= 8 * L * np.finfo(float).eps * scale)


def test_constant_columns_and_sparse_input():
    rng = np.random.default_rng(4)
    n = 1500
    X = rng.normal(size=(n, 4))
    X[:, 1] = 3.0
    X[:, 2] = np.where(rng.random(n) < 0.7, 0.0, X[:, 2])  # sparse continuous
    X[:, 3] = (rng.random(n) < 0.1).astype(float)  # sparse binary
    y = np.sign(X[:, 0] + X[:, 2])
    a_ex, det_ex = feature_alignments(X, y, method="exact", return_details=True)
    a_f, det_f = feature_alignments(X, y, method="fgt", return_details=True)
    assert a_f[1] == 0.0 and det_f.constant[1] and det_f.traces[1] == 0.0
    np.testing.assert_allclose(a_f, a_ex, rtol=1e-8)
    np.testing.assert_allclose(det_f.traces, det_ex.traces, rtol=1e-9)
    S = sp.csc_matrix(X)
    a_sf = feature_alignments(S, y, method="fgt")
    np.testing.assert_allclose(a_sf, a_ex, rtol=1e-8)
    # "auto" on sparse: a column with few non-zeros stays exact, its sum the exact one
    Xs = X.copy()
    Xs[:, 2] = np.where(rng.random(n) < 0.995, 0.0, rng.normal(size=n))
    S2 = sp.csc_matrix(Xs)
    g = resolve_gamma(Xs)
    ZT = np.ascontiguousarray(alignment_target(y)[0].T)
    auto = _rbf_pair_sums(S2, g, ZT, "auto")
    exact = _rbf_pair_sums(S2, g, ZT, "exact")
    assert auto[0][2] == exact[0][2] and auto[1][2] == exact[1][2]
    np.testing.assert_allclose(auto[0], exact[0], rtol=1e-8)


def test_lpkta_path_same_features_with_fgt():
    from numkfs.methods.lpkta import lpkta_path

    rng = np.random.default_rng(5)
    n, d = 1200, 15
    X = rng.normal(size=(n, d))
    y = np.sign(X[:, 0] ** 2 + np.sin(2 * X[:, 1]) - 1.0 + 0.3 * rng.normal(size=n))
    pe = lpkta_path(X, y, alignment_method="exact")
    pf = lpkta_path(X, y, alignment_method="fgt")
    for i in range(len(pe)):
        assert np.array_equal(pe.selected(i), pf.selected(i))
    np.testing.assert_allclose(pf.weights, pe.weights, rtol=1e-6, atol=1e-12)


def test_blocked_and_selector_pass_method():
    from numkfs.distributed import feature_alignments_blocked, screen_features
    from numkfs.estimators._lpkta import LpKTASelector

    rng = np.random.default_rng(6)
    n = 1100
    X = rng.normal(size=(n, 6))
    y = np.sign(X[:, 2] + 0.2 * rng.normal(size=n))
    a = feature_alignments(X, y, method="fgt", rtol=1e-6)
    np.testing.assert_array_equal(feature_alignments_blocked(X, y, block_size=4, method="fgt", rtol=1e-6), a)
    assert screen_features(X, y, 1, method="fgt")[0] == 2
    sel_e = LpKTASelector(alignment_method="exact", n_features_to_select=2).fit(X, y)
    sel_f = LpKTASelector(alignment_method="fgt", n_features_to_select=2).fit(X, y)
    np.testing.assert_array_equal(sel_e.get_support(), sel_f.get_support())


def test_bad_method_and_rtol():
    X = np.random.default_rng(7).normal(size=(20, 2))
    y = np.sign(X[:, 0])
    with pytest.raises(ValueError, match="method must be"):
        feature_alignments(X, y, method="fast")
    with pytest.raises(ValueError, match="rtol"):
        feature_alignments(X, y, method="fgt", rtol=1e-20)


@pytest.mark.parametrize("R, P", [(1, 19), (2, 19), (4, 19), (5, 12), (15, 19)])
def test_expand_pair_against_numpy(R, P):
    """The expansion of a pair of boxes, out[r] += f sum_{m+n<P} (-1)^m
    h_{m+n}(D) MB[r, m] MC[r, n], against numpy for tiles of four rows and
    the rows left over; each entry sums at most P² products: within a few P²
    eps of the sum of their magnitudes."""
    from numkfs.kernels.fgt import _expand_pair, _hermite

    rng = np.random.default_rng(R + P)
    MB, MC = rng.normal(size=(2, R, P))
    hk = np.empty(P)
    _hermite(0.7, P, hk)
    m, k = np.meshgrid(np.arange(P), np.arange(P), indexing="ij")
    H = np.where(m + k < P, (-1.0) ** m * hk[np.minimum(m + k, P - 1)], 0.0)
    out = np.full(R, 0.5)
    _expand_pair(MB, MC, hk, P, out, 2.0)
    ref = 0.5 + 2.0 * np.einsum("rm,mn,rn->r", MB, H, MC)
    scale = 0.5 + 2.0 * np.einsum("rm,mn,rn->r", np.abs(MB), np.abs(H), np.abs(MC))
    assert np.all(np.abs(out - ref) <= 4 * P * P * np.finfo(float).eps * scale)
