"""ARD kernels of L1KR: numpy references (rel. err. < 1e-10) and finite
differences of every derivative."""
import numpy as np
import pytest

from numkfs.kernels.ard import (
    _reference_d2K,
    _reference_dK,
    _reference_kernel,
    ard_grad_columns,
    ard_grad_contractions,
    ard_hessian_contractions,
    ard_kernel,
)

KERNELS = [("gaussian", 2), ("poly", 1), ("poly", 2), ("poly", 3)]


def _data(seed=0, n=37, p=6):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, p))
    X -= X.mean(0)
    X /= np.linalg.norm(X, axis=0)
    beta = rng.uniform(0.5, 30.0, size=p)
    beta[[1, 4]] = 0.0  # inactive features
    alpha = rng.standard_normal(n)
    alpha -= alpha.mean()
    return X, beta, alpha


def _rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.mark.parametrize("kernel,degree", KERNELS)
def test_against_numpy_reference(kernel, degree):
    X, beta, alpha = _data()
    K = ard_kernel(X, beta, kernel, degree)
    assert _rel(K, _reference_kernel(X, beta, kernel, degree)) < 1e-10
    Z = np.random.default_rng(5).uniform(-0.2, 0.2, size=(11, X.shape[1]))
    assert _rel(ard_kernel(X, beta, kernel, degree, Z=Z), _reference_kernel(X, beta, kernel, degree, Z=Z)) < 1e-10
    A = ard_grad_columns(X, beta, alpha, K, kernel, degree)
    p = X.shape[1]
    A_ref = np.column_stack([_reference_dK(X, beta, i, kernel, degree) @ alpha for i in range(p)])
    assert _rel(A, A_ref) < 1e-10
    g = ard_grad_contractions(X, beta, alpha, K, kernel, degree)
    assert _rel(g, alpha @ A_ref) < 1e-10
    feats = np.array([0, 2, 3, 5, 1])  # active ones plus one inactive
    S = ard_hessian_contractions(X, beta, alpha, K, feats, kernel, degree)
    S_ref = np.array([[alpha @ _reference_d2K(X, beta, i, j, kernel, degree) @ alpha for j in feats] for i in feats])
    assert _rel(S, S_ref) < 1e-10
    assert np.allclose(S, S.T)
    # a subset of columns
    A3 = ard_grad_columns(X, beta, alpha, K, kernel, degree, features=[3, 1])
    assert _rel(A3, A_ref[:, [3, 1]]) < 1e-10


@pytest.mark.parametrize("kernel,degree", KERNELS)
def test_finite_differences(kernel, degree):
    X, beta, alpha = _data(1)
    p = X.shape[1]
    K = ard_kernel(X, beta, kernel, degree)
    A = ard_grad_columns(X, beta, alpha, K, kernel, degree)
    feats = np.arange(p)
    S = ard_hessian_contractions(X, beta, alpha, K, feats, kernel, degree)
    h = 1e-5
    for i in range(p):
        e = np.zeros(p)
        e[i] = h
        # central differences; beta - h would be negative for inactive ones,
        # which the formulas allow (the kernels are smooth in beta)
        Kp = ard_kernel(X, beta + e, kernel, degree) if beta[i] > 0 else _reference_kernel(X, beta + e, kernel, degree)
        Km = _reference_kernel(X, beta - e, kernel, degree)
        dK = (Kp - Km) / (2 * h)
        assert _rel(A[:, i], dK @ alpha) < 1e-6
        Ap = ard_grad_columns(X, beta + e, alpha, _reference_kernel(X, beta + e, kernel, degree), kernel, degree)
        Am = ard_grad_columns(X, beta - e, alpha, _reference_kernel(X, beta - e, kernel, degree), kernel, degree)
        dg = (alpha @ Ap - alpha @ Am) / (2 * h)
        assert _rel(S[i], dg) < 1e-6
    # derivative of g in alpha is 2 A (symmetric dK)
    da = np.random.default_rng(3).standard_normal(X.shape[0]) * 1e-6
    g = lambda a: ard_grad_contractions(X, beta, a, K, kernel, degree)
    fd = (g(alpha + da) - g(alpha - da)) / 2
    assert _rel(fd, 2 * A.T @ da) < 1e-6


def test_beta_zero_kernel_is_all_ones_and_lemma1_gradient():
    """At β = 0 both kernels are the all-ones matrix; for centred α the
    gradients are 2 (x_iᵀα)² (Gaussian) and d (x_iᵀα)² (polynomial)."""
    X, _, alpha = _data(2)
    beta = np.zeros(X.shape[1])
    for kernel, degree, c in [("gaussian", 2, 2.0), ("poly", 3, 3.0)]:
        K = ard_kernel(X, beta, kernel, degree)
        assert np.array_equal(K, np.ones_like(K))
        g = ard_grad_contractions(X, beta, alpha, K, kernel, degree)
        assert _rel(g, c * (X.T @ alpha) ** 2) < 1e-10


def test_bad_kernel_name():
    X, beta, _ = _data()
    with pytest.raises(ValueError, match="ARD kernel must be one of"):
        ard_kernel(X, beta, "laplace")
    with pytest.raises(ValueError, match="degree"):
        ard_kernel(X, beta, "poly", 0)


def test_gaussian_with_negative_weights_and_many_features():
    # the tracker probes past E2 events, where some β_i < 0: the kernel must
    # stay exp(-Σ β_i d_i²), exactly symmetric, for any mix of signs and for
    # feature counts that are not multiples of the 4-feature pass
    # (from TILED_MIN_FEATURES = 32 active features on, the tiled loop: n
    # larger than one 512-column tile and not a multiple of its 8 rows)
    rng = np.random.default_rng(11)
    for p, n in ((1, 23), (3, 23), (4, 23), (9, 23), (33, 23), (38, 531)):
        X = rng.normal(size=(n, p))
        beta = rng.uniform(0.01, 0.5, size=p) / max(1, p // 8)
        beta[rng.random(p) < 0.3] *= -0.01
        beta[0] = 0.0 if p > 2 else beta[0]
        K = ard_kernel(X, beta)
        d = (X[:, None, :] - X[None, :, :]) ** 2
        ref = np.exp(-(d * beta).sum(-1))
        assert np.max(np.abs(K / ref - 1.0)) < 1e-13
        assert np.array_equal(K, K.T) and np.all(np.diag(K) == 1.0)
        Z = rng.normal(size=(13, p))
        refz = np.exp(-(((Z[:, None, :] - X[None, :, :]) ** 2) * beta).sum(-1))
        assert np.max(np.abs(ard_kernel(X, beta, Z=Z) / refz - 1.0)) < 1e-13


def test_tiled_and_row_loops_give_identical_kernels():
    # the tiled loop (many features) runs the row loop's operations in the
    # same order per entry: bit-identical K, so the path tracker cannot tell
    from numkfs.kernels.ard import _gauss_kernel_rows, _gauss_kernel_tiles

    rng = np.random.default_rng(4)
    ST = 0.2 * rng.normal(size=(37, 600))
    SZ = 0.2 * rng.normal(size=(37, 19))
    for npos in (37, 30):
        assert np.array_equal(_gauss_kernel_rows(ST, ST, npos, True), _gauss_kernel_tiles(ST, ST, npos, True))
        assert np.array_equal(_gauss_kernel_rows(SZ, ST, npos, False), _gauss_kernel_tiles(SZ, ST, npos, False))


def test_rbf_is_the_name_gaussian_an_alias():
    X, beta, _ = _data()
    assert np.array_equal(ard_kernel(X, beta, "rbf"), ard_kernel(X, beta, "gaussian"))
    assert np.array_equal(ard_kernel(X, beta), ard_kernel(X, beta, "rbf"))
