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
