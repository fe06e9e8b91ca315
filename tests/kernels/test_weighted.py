"""Weighted kernels, the KNIFE matrix A and the losses against numpy references
and finite differences."""
import numpy as np
import pytest

from numkfs.kernels.weighted import (KERNELS, kernel_weight_derivative, weight_gradient_matrix,
                                     weighted_kernel, weighted_kernel_product)
from numkfs.losses import LOSSES, get_loss

PARAMS = dict(gamma=0.3, degree=3, coef0=0.7)


def _reference_kernel(X, Y, w, kernel, gamma, degree, coef0):
    """Element by element, straight from the definitions."""
    K = np.empty((X.shape[0], Y.shape[0]))
    for i in range(X.shape[0]):
        for j in range(Y.shape[0]):
            if kernel == "linear":
                K[i, j] = np.sum(w ** 2 * X[i] * Y[j])
            elif kernel == "rbf":
                K[i, j] = np.exp(-gamma * np.sum(w ** 2 * (X[i] - Y[j]) ** 2))
            else:
                K[i, j] = (np.sum(w ** 2 * X[i] * Y[j]) + coef0) ** degree
    return K


def _reference_A(X, w, alpha, kernel, gamma, degree, coef0):
    """A from the full n x n x p tensor of derivatives (small sizes only)."""
    n, p = X.shape
    K = _reference_kernel(X, X, w, kernel, gamma, degree, coef0)
    T = np.empty((n, n, p))
    for k in range(p):
        xk = X[:, k]
        if kernel == "linear":
            T[:, :, k] = 2 * w[k] * np.outer(xk, xk)
        elif kernel == "rbf":
            T[:, :, k] = -2 * gamma * w[k] * (xk[:, None] - xk[None, :]) ** 2 * K
        else:
            base = (X * w) @ (X * w).T + coef0
            T[:, :, k] = 2 * degree * w[k] * np.outer(xk, xk) * base ** (degree - 1)
    return np.einsum("ijk,j->ik", T, alpha)


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((23, 6))
    Y = rng.standard_normal((9, 6))
    w = rng.uniform(0.1, 1.0, 6)
    w[4] = 0.0  # a zero weight: skipped, its column of A is zero
    alpha = rng.standard_normal(23)
    return X, Y, w, alpha


@pytest.mark.parametrize("method", ["blas", "numba", "auto"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_matches_reference(data, kernel, method):
    X, Y, w, _ = data
    for Yarg, Yref in [(None, X), (Y, Y)]:
        K = weighted_kernel(X, w, kernel, Y=Yarg, method=method, **PARAMS)
        ref = _reference_kernel(X, Yref, w, kernel, **PARAMS)
        assert K.shape == ref.shape
        assert np.max(np.abs(K - ref)) / np.max(np.abs(ref)) < 1e-10


@pytest.mark.parametrize("method", ["blas", "numba", "auto"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_product_is_the_kernel_times_alpha(data, kernel, method):
    # the fused pass (Numba loops) and the product after the BLAS kernel: the same K as
    # weighted_kernel and K @ alpha; also with every weight zero (the constant kernel)
    X, _, w, alpha = data
    for ww in (w, np.zeros_like(w)):
        K, Ka = weighted_kernel_product(X, ww, alpha, kernel, method=method, **PARAMS)
        np.testing.assert_array_equal(K, weighted_kernel(X, ww, kernel, method=method, **PARAMS))
        ref = _reference_kernel(X, X, ww, kernel, **PARAMS) @ alpha
        np.testing.assert_allclose(Ka, ref, rtol=1e-10, atol=1e-10 * np.max(np.abs(ref)))
    with pytest.raises(ValueError, match="alpha must have shape"):
        weighted_kernel_product(X, w, alpha[:-1], kernel, method=method)


@pytest.mark.parametrize("method", ["blas", "numba", "auto"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_gradient_matrix_with_sparse_alpha(data, kernel, method):
    # the hinge losses' α is zero outside the margin: A is formed from the non-zero α_j only;
    # it must equal the tensor reference, for a few non-zeros, one, and none (A = 0)
    X, _, w, alpha = data
    K = weighted_kernel(X, w, kernel, **PARAMS)
    for keep in ([0, 5, 11, 17, 22], [7], []):
        a = np.zeros_like(alpha)
        a[keep] = alpha[keep]
        A = weight_gradient_matrix(X, w, a, K, kernel, method=method, **PARAMS)
        ref = _reference_A(X, w, a, kernel, **PARAMS)
        np.testing.assert_allclose(A, ref, rtol=1e-10, atol=1e-12 * max(1.0, np.max(np.abs(ref), initial=0.0)))


@pytest.mark.parametrize("method", ["blas", "numba", "auto"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_gradient_matrix_matches_tensor_reference(data, kernel, method):
    X, _, w, alpha = data
    K = weighted_kernel(X, w, kernel, **PARAMS)
    A = weight_gradient_matrix(X, w, alpha, K, kernel, method=method, **PARAMS)
    ref = _reference_A(X, w, alpha, kernel, **PARAMS)
    assert np.max(np.abs(A - ref)) / np.max(np.abs(ref)) < 1e-10
    assert np.all(A[:, 4] == 0.0)  # sticky: the zero-weight feature has no derivative
    # the one-feature derivative helper agrees too
    for k in range(X.shape[1]):
        dK = kernel_weight_derivative(X, w, k, kernel, **PARAMS)
        assert np.allclose(dK @ alpha, ref[:, k], rtol=1e-10, atol=1e-12 * np.max(np.abs(ref)))


@pytest.mark.parametrize("kernel", KERNELS)
def test_gradient_matrix_finite_differences(data, kernel):
    """A[:, k] = d(K_w alpha)/dw_k, checked by central differences."""
    X, _, w, alpha = data
    w = w.copy()
    w[4] = 0.4
    A = weight_gradient_matrix(X, w, alpha, None, kernel, **PARAMS)
    h = 1e-6
    for k in range(X.shape[1]):
        e = np.zeros_like(w)
        e[k] = h
        fd = (weighted_kernel(X, w + e, kernel, **PARAMS) @ alpha
              - weighted_kernel(X, w - e, kernel, **PARAMS) @ alpha) / (2 * h)
        assert np.max(np.abs(fd - A[:, k])) <= 1e-6 * max(1.0, np.max(np.abs(A)))


def test_all_zero_weights_give_constant_kernels(data):
    X, Y, w, alpha = data
    z = np.zeros_like(w)
    assert np.all(weighted_kernel(X, z, "rbf", Y=Y) == 1.0)
    assert np.all(weighted_kernel(X, z, "linear") == 0.0)
    assert np.allclose(weighted_kernel(X, z, "poly", degree=2, coef0=2.0), 4.0)
    assert np.all(weight_gradient_matrix(X, z, alpha, None, "rbf") == 0.0)


def test_bad_kernel_and_method_names(data):
    X, _, w, alpha = data
    with pytest.raises(ValueError, match="Unknown kernel 'sigmoid'"):
        weighted_kernel(X, w, "sigmoid")
    with pytest.raises(ValueError, match="method must be"):
        weight_gradient_matrix(X, w, alpha, None, "rbf", method="gpu")


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_derivatives_finite_differences(name):
    rng = np.random.default_rng(7)
    n = 40
    loss = get_loss(name, delta=0.8)
    y = rng.standard_normal(n) if name == "squared" else np.sign(rng.standard_normal(n))
    u = 1.5 * rng.standard_normal(n)
    # keep away from the kinks of the hinge losses, where the second derivative jumps
    t = y * u
    for kink in (1.0, 1.0 - 0.8):
        near = np.abs(t - kink) < 1e-3
        u[near] += 0.01 * y[near]
    h = 1e-6
    g = loss.gradient(y, u)
    H = loss.hessian_diag(y, u)
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        fd = (loss.value(y, u + e) - loss.value(y, u - e)) / (2 * h)
        assert abs(fd - g[i]) <= 1e-6 * max(1.0, abs(g[i]))
        fd2 = (loss.gradient(y, u + e)[i] - loss.gradient(y, u - e)[i]) / (2 * h)
        assert abs(fd2 - H[i]) <= 1e-5 * max(1.0, abs(H[i]))


def test_loss_values_closed_forms():
    y = np.array([1.0, -1.0, 1.0])
    u = np.array([2.0, 0.5, 0.25])
    assert get_loss("squared_hinge").value(y, u) == pytest.approx(0 + 1.5 ** 2 + 0.75 ** 2)
    # huberized, delta = 1: t = (2, -0.5, 0.25) -> 0, 1 - t - 1/2 = 1, (0.75)^2 / 2
    assert get_loss("huberized_hinge", delta=1.0).value(y, u) == pytest.approx(1.0 + 0.28125)
    assert get_loss("logistic").value(y, u) == pytest.approx(np.sum(np.log1p(np.exp(-y * u))))
    with pytest.raises(ValueError, match="Unknown loss 'hinge'"):
        get_loss("hinge")


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("method", ["auto", "blas", "numba"])
def test_weight_gradient_product_is_a_transpose_times_v(kernel, method):
    # KNIFE's L-BFGS-B finish takes Aᵀv directly (one GEMM over p columns for the rbf
    # kernel in the BLAS form) instead of forming the n x p matrix A at every evaluation
    from numkfs.kernels.weighted import weight_gradient_matrix, weight_gradient_product

    rng = np.random.default_rng(3)
    for p in (10, 40, 300):  # both sides of AUTO_NUMBA_MAX_FEATURES
        X = rng.standard_normal((30, p))
        w = rng.uniform(0.0, 1.0, p)
        w[::3] = 0.0
        alpha = rng.standard_normal(30)
        alpha[::4] = 0.0  # rows outside the margin
        v = rng.standard_normal(30)
        v[1::5] = 0.0
        A = weight_gradient_matrix(X, w, alpha, kernel=kernel, gamma=0.05, method=method)
        got = weight_gradient_product(X, w, alpha, v, kernel=kernel, gamma=0.05, method=method)
        want = A.T @ v
        assert got.shape == (p,) and np.all(got[w == 0] == 0.0)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.max(np.abs(want)))


@pytest.mark.parametrize("kernel, coef0, value", [("linear", 1e300, 0.0), ("rbf", 1e300, 1.0), ("poly", 3.0, 27.0)])
def test_the_kernel_of_zero_weights_reads_coef0_only_when_polynomial(kernel, coef0, value):
    """Every weight zero: the kernel of constant inputs, 0 (linear), 1 (rbf) or coef0^degree (poly);
    the rbf and linear kernels never compute coef0^degree (1e300**2 raised an OverflowError)."""
    X = np.arange(6.0).reshape(3, 2)
    K = weighted_kernel(X, np.zeros(2), kernel, coef0=coef0, degree=3)
    np.testing.assert_array_equal(K, np.full((3, 3), value))


def test_the_polynomial_bound_is_the_entries_largest_value():
    """check_poly_kernel refuses exactly the kernels whose bound (max |x|^2 + |coef0|)^degree exceeds
    1e150, and the bound holds for every weight vector in [0, 1]."""
    from numkfs.kernels.weighted import check_poly_kernel

    X = np.array([[3.0, 4.0], [1.0, -2.0]])  # max |x|^2 = 25
    check_poly_kernel(X, 2, 0.99e75 - 25, caller="probe")
    with pytest.raises(ValueError, match=r"probe: the 'poly' kernel .* reaches about 1e150 .* coef0=.*degree=2"):
        check_poly_kernel(X, 2, 1.01e75 - 25, caller="probe")
    check_poly_kernel(X, 107, 0.0)  # 25^107 = 1e149.6
    with pytest.raises(ValueError, match="degree=108"):
        check_poly_kernel(X, 108, 0.0)  # 1e151.0
    rng = np.random.default_rng(0)
    for w in rng.uniform(size=(20, 2)):
        K = weighted_kernel(X, w, "poly", coef0=-1.5, degree=5)
        assert np.abs(K).max() <= (25 + 1.5) ** 5 * (1 + 1e-12)
