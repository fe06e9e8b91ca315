"""Pivoted Cholesky factors against the full kernels they approximate."""
import numpy as np
import pytest

from numkfs.kernels.additive import feature_kernel
from numkfs.kernels.lowrank import pivoted_cholesky, rbf_feature_factors


def _psd_kernel(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3))
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * d2)


@pytest.mark.parametrize("tol", [1e-2, 1e-6, 1e-10])
def test_pivoted_cholesky_meets_trace_tolerance(tol):
    K = _psd_kernel(80, 0)
    L = pivoted_cholesky(K, tol=tol)
    R = K - L @ L.T
    assert np.trace(R) <= tol * np.trace(K) * (1 + 1e-9)
    # the residual is PSD, so the trace bounds its spectral norm
    ev = np.linalg.eigvalsh(R)
    assert ev.min() >= -1e-10
    assert ev.max() <= np.trace(R) + 1e-12
    # rank grows as the tolerance tightens
    assert L.shape[1] <= 80


def test_pivoted_cholesky_exact_on_low_rank_matrix():
    rng = np.random.default_rng(1)
    F = rng.standard_normal((40, 5))
    K = F @ F.T
    L = pivoted_cholesky(K, tol=0.0)
    assert L.shape[1] == 5
    np.testing.assert_allclose(L @ L.T, K, atol=1e-10)


def test_pivoted_cholesky_max_rank_and_errors():
    K = _psd_kernel(30, 2)
    assert pivoted_cholesky(K, tol=0.0, max_rank=4).shape == (30, 4)
    with pytest.raises(ValueError, match="square"):
        pivoted_cholesky(np.ones((3, 4)))


def test_rbf_feature_factors_match_full_kernels():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((120, 4)) * np.array([1.0, 2.0, 0.5, 3.0])
    Z, off = rbf_feature_factors(X, gamma="scale", tol=1e-8)
    assert off[0] == 0 and off[-1] == Z.shape[1] and off.size == 5
    for i in range(4):
        K = feature_kernel(X[:, i], kernel="rbf", gamma=1.0 / X[:, i].var())
        Zi = Z[:, off[i]:off[i + 1]]
        R = K - Zi @ Zi.T
        assert np.trace(R) <= 1e-8 * 120 * (1 + 1e-9)
        assert np.max(np.abs(R)) <= 1e-7
        # a 1-D Gaussian kernel is numerically low-rank
        assert Zi.shape[1] < 40


def test_rbf_feature_factors_fixed_gamma_and_constant_feature():
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.standard_normal(50), np.full(50, 2.0)])
    Z, off = rbf_feature_factors(X, gamma=0.7, tol=1e-10)
    K0 = feature_kernel(X[:, 0], kernel="rbf", gamma=0.7)
    np.testing.assert_allclose(Z[:, :off[1]] @ Z[:, :off[1]].T, K0, atol=1e-8)
    # a constant feature has the all-ones kernel: rank one
    assert off[2] - off[1] == 1
    np.testing.assert_allclose(np.abs(Z[:, off[1]]), 1.0)
    with pytest.raises(ValueError, match="gamma"):
        rbf_feature_factors(X, gamma=-1.0)


# --------------------------------------------------------------------------
# the learned lp-KTA kernel through low-rank features


def _lpkta_data(n, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 3] = 4.0 + 0.01 * X[:, 3]  # an offset column with a small spread
    return X, rng.standard_normal((40, d))


@pytest.mark.parametrize("tol", [1e-4, 1e-8])
def test_learned_kernel_features_within_the_stated_bound(tol):
    """ΦΦᵀ against combined_kernel: every factor's residual K_i - Z_iZ_iᵀ is PSD with
    trace ≤ tol·n, so |K - ΦΦᵀ| ≤ Σ w_i tol n entrywise (centring does not raise the
    spectral norm); new rows through the Nyström extension of the same factors."""
    from numkfs.kernels.alignment import combined_kernel, feature_alignments
    from numkfs.kernels.lowrank import learned_kernel_features

    X, Y = _lpkta_data(300)
    y = np.sign(X[:, 0] + X[:, 1])
    eta = np.array([0.5, 1.0, 0.0, 0.3, 0.2])
    _, det = feature_alignments(X, y, return_details=True)
    Phi, fm = learned_kernel_features(X, eta, traces=det.traces, gamma=det.gamma, tol=tol)
    K, cent = combined_kernel(X, eta, traces=det.traces, gamma=det.gamma, return_centering=True)
    w = eta / np.where(det.traces > 0, det.traces, np.inf)
    bound = w.sum() * tol * X.shape[0]
    err = np.abs(Phi @ Phi.T - K).max()
    assert err <= bound * (1 + 1e-6) + 64 * np.finfo(float).eps * np.abs(K).max()
    assert err > 0 and Phi.shape[1] == fm.n_components < 4 * 60  # low rank: r_i << n
    assert list(fm.features) == [0, 1, 3, 4]
    # the training rows mapped again give Φ (the extension reproduces the factor)
    np.testing.assert_allclose(fm.transform(X), Phi, atol=1e-9 * np.abs(Phi).max())
    Kt = combined_kernel(X, eta, Y, traces=det.traces, gamma=det.gamma, centering=cent)
    assert np.abs(fm.transform(Y) @ Phi.T - Kt).max() <= 10 * bound + 1e-12


def test_learned_kernel_features_linear_is_exact_and_bad_input():
    from numkfs.kernels.alignment import combined_kernel
    from numkfs.kernels.lowrank import learned_kernel_features

    X, Y = _lpkta_data(100)
    eta = np.array([1.0, 0.0, 2.0, 0.5, 0.0])
    Phi, fm = learned_kernel_features(X, eta, kernel="linear")
    K = combined_kernel(X, eta, kernel="linear")
    np.testing.assert_allclose(Phi @ Phi.T, K, atol=1e-12 * np.abs(K).max())
    assert Phi.shape == (100, 3)
    with pytest.raises(ValueError, match="eta has 2 entries but X has 5 features"):
        learned_kernel_features(X, [1.0, 2.0])
    with pytest.raises(ValueError, match="eta must be finite and non-negative"):
        learned_kernel_features(X, [1.0, -1.0, 0, 0, 0])
    with pytest.raises(ValueError, match="kernel must be 'rbf' or 'linear'"):
        learned_kernel_features(X, eta, kernel="poly")


def test_squared_hinge_newton_is_liblinears_optimum_and_warm_starts():
    from sklearn.svm import LinearSVC

    from numkfs.solvers.native.linear_svm import squared_hinge_svm

    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 6))
    y = np.where(X[:, 0] - X[:, 1] + 0.7 * rng.standard_normal(400) > 0, 1.0, -1.0)
    w, it = squared_hinge_svm(X, y, C=0.5, intercept_scaling=10.0)
    ref = LinearSVC(C=0.5, loss="squared_hinge", dual=False, intercept_scaling=10.0, tol=1e-12,
                    max_iter=10_000).fit(X, y)
    scale = np.abs(ref.coef_).max()
    np.testing.assert_allclose(w[:-1], ref.coef_.ravel(), atol=1e-6 * scale)
    assert 10.0 * w[-1] == pytest.approx(ref.intercept_[0], abs=1e-6 * scale)
    # stationarity: w = 2C X̃_Aᵀ (y_A - f_A)
    Xt = np.column_stack([X, np.full(400, 10.0)])
    f = Xt @ w
    act = y * f < 1
    g = w - 2 * 0.5 * Xt[act].T @ (y[act] - f[act])
    assert np.linalg.norm(g) <= 1e-9 * 2 * 0.5 * np.linalg.norm(Xt.T @ y)
    # from the optimum, no step is needed
    assert squared_hinge_svm(X, y, C=0.5, intercept_scaling=10.0, w0=w)[1] <= 1
    assert it >= 2


def test_rbf1d_factor_grows_past_its_first_rows_and_equals_the_dense_factor():
    """The 1-D factor is built transposed in rows allocated as the rank grows
    (FACTOR_FIRST_ROWS at first): past that, the same pivots and columns as
    the pivoted Cholesky of the explicit kernel (the same operations in the
    same order; only the kernel's exponentials may round differently).
    Before the change the factor was n x max_rank zeros, filled by columns."""
    from numkfs.kernels.lowrank import FACTOR_FIRST_ROWS, _pivoted_cholesky_rbf1d

    x = np.random.default_rng(3).uniform(-3, 3, size=400)
    G, piv = _pivoted_cholesky_rbf1d(x, 5.0, 1e-10, 400)  # rank 46
    assert G.shape[1] > FACTOR_FIRST_ROWS and G.flags["C_CONTIGUOUS"]
    K = np.exp(-5.0 * (x[:, None] - x[None, :]) ** 2)
    L = pivoted_cholesky(K, tol=1e-10)
    assert L.shape == G.shape
    # both residuals PSD with trace <= tol n: the factors' kernels within 2 tol n in nuclear norm
    assert np.trace(K - G @ G.T) <= 1e-10 * 400
    assert np.abs(np.linalg.eigvalsh(G @ G.T - L @ L.T)).sum() <= 2e-10 * 400
    # up to the exponentials' rounding, amplified by 1/pivot (smallest pivot about 1e-5)
    np.testing.assert_allclose(G, L, rtol=0, atol=1e-10)
    assert np.all(G[piv, np.arange(len(piv))] > 0)  # the pivots' own entries: the pivots' square roots


def test_rbf1d_rows_factor_is_the_dense_factor_bit_for_bit():
    """The 1-D Gaussian kernel's transposed factor, built by chunks of
    FACTOR_CHUNK entries with every earlier row subtracted per chunk, is the
    pivoted Cholesky factor of the same kernel matrix formed densely, bit for
    bit: each entry gets the same operations in the same order (only the
    remaining trace, a stopping test, is summed in another order)."""
    from numba import njit

    from numkfs.kernels.fastexp import fast_exp_kernel
    from numkfs.kernels.lowrank import (FACTOR_CHUNK, FACTOR_FIRST_ROWS, _pivoted_cholesky_dense,
                                        pivoted_cholesky_rbf1d_rows)

    @njit
    def kernel(x, gamma):
        n = x.shape[0]
        K = np.empty((n, n))
        for j in range(n):
            for i in range(n):
                t = x[i] - x[j]
                K[i, j] = fast_exp_kernel(-gamma * t * t)
        return K

    rng = np.random.default_rng(5)
    n = FACTOR_CHUNK + FACTOR_CHUNK // 2 + 7  # a whole chunk and a partial one
    for x in (rng.normal(size=n), rng.standard_t(2, size=n)):
        LT, piv = pivoted_cholesky_rbf1d_rows(x, 0.7, 1e-6, 60, 0, FACTOR_FIRST_ROWS, np.empty((0, 0)))
        L = _pivoted_cholesky_dense(kernel(x, 0.7), 1e-6, 60)
        assert LT.shape[0] > 5 and np.array_equal(LT, L.T)
