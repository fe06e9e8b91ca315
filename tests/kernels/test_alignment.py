"""Per-feature alignment kernels and the fast exp against numpy references."""
import numpy as np
import pytest
import scipy.sparse as sp

from numkfs.kernels.alignment import (
    alignment_target,
    combined_kernel,
    feature_alignments,
    feature_kernel,
    resolve_gamma,
)
from numkfs._jit import jit
from numkfs.kernels.fastexp import fast_exp2_neg, fast_exp_array, fast_exp_kernel


@jit
def _exp2_array(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = fast_exp2_neg(x[i])
    return out


@jit
def _kernel_exp_array(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = fast_exp_kernel(x[i])
    return out

# ---------------------------------------------------------------------------
# fast exp


def test_fast_exp_relative_error_over_normal_range():
    x = np.concatenate([np.linspace(-708.3, 709.7, 2_000_003), np.linspace(-1, 1, 100_001),
                        np.geomspace(1e-300, 1.0, 1001), -np.geomspace(1e-300, 1.0, 1001)])
    ref = np.exp(x)
    got = fast_exp_array(x)
    assert np.max(np.abs(got / ref - 1.0)) < 5e-16


def test_fast_exp_kernel_variant():
    x = -np.concatenate([np.linspace(0.0, 707.99, 1_000_001), np.geomspace(1e-300, 1.0, 1001)])
    ref = np.exp(x)
    assert np.max(np.abs(_kernel_exp_array(x) / ref - 1.0)) < 5e-16
    # below the normal range: flushed to 0 (absolute change < 2.3e-308)
    assert np.all(_kernel_exp_array(np.array([-708.0, -745.0, -1e6, -np.inf])) == 0.0)


def test_fast_exp2_neg_accuracy_and_clamp():
    # the base-2 exponential of the alignment pair sums, 2**-y for y >= 0:
    # 2e-14 relative over its whole domain, (about) 2**-1020 beyond it
    # (never a subnormal or garbage)
    y = np.concatenate([np.linspace(0.0, 1020.0, 2_000_001), np.geomspace(1e-300, 1.0, 1001),
                        np.arange(0.0, 60.0, 0.5)])
    rel = np.abs(_exp2_array(y) / np.exp2(-y) - 1.0)
    assert rel.max() < 2e-14
    low = _exp2_array(np.array([1020.5, 1e4, 1e300, np.inf]))
    assert np.all(np.abs(low / 2.0**-1020 - 1.0) < 2e-14)


def test_dense_column_stats_match_numpy():
    from numkfs.kernels.alignment import _dense_column_stats

    rng = np.random.default_rng(3)
    X = rng.normal(size=(37, 75)) * rng.uniform(0.1, 1e3, 75) + 1e4
    X[:, 5] = 0.1
    X[:, 40] = -7.0
    X[1:, 41] = X[0, 41]
    X[20, 41] = np.nextafter(X[0, 41], np.inf)  # one ulp away: not constant
    mean, var, const = _dense_column_stats(X)
    np.testing.assert_allclose(mean, X.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(var, X.var(axis=0), rtol=1e-9, atol=1e-20)
    assert np.flatnonzero(const).tolist() == [5, 40]


def test_alignments_of_f_ordered_and_int_input_do_not_touch_it():
    rng = np.random.default_rng(4)
    X = np.asfortranarray(rng.normal(size=(64, 40)))
    y = np.sign(X[:, 3] + 0.1)
    before = X.copy()
    a = feature_alignments(X, y)
    assert np.array_equal(X, before) and X.flags.f_contiguous
    assert _rel(a, reference_alignments(X, y)) < 1e-10
    Xi = rng.integers(-3, 4, size=(64, 40))
    assert _rel(feature_alignments(Xi, y), reference_alignments(Xi.astype(float), y)) < 1e-10


def test_fast_exp_subnormal_underflow_and_overflow():
    x = np.linspace(-745.2, -708.4, 200_001)
    ref = np.exp(x)
    got = fast_exp_array(x)
    # subnormal results: at most one unit in the last place of the subnormal grid
    assert np.max(np.abs(got - ref)) <= 5e-324
    assert np.all(fast_exp_array(np.array([-746.0, -1e4, -np.inf])) == 0.0)
    with np.errstate(over="ignore"):
        assert np.all(np.isinf(fast_exp_array(np.array([709.8, 710.0, 1e5, np.inf]))))
    assert np.isnan(fast_exp_array(np.array([np.nan]))[0])
    assert fast_exp_array(np.array([0.0]))[0] == 1.0
    assert fast_exp_array(np.zeros((2, 3))).shape == (2, 3)


# ---------------------------------------------------------------------------
# numpy reference of the alignments


def reference_alignments(X, y, kernel="rbf", gamma=None, target="auto"):
    Xd = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=float)
    n, d = Xd.shape
    Z, _, _ = alignment_target(y, target)
    T = Z @ Z.T
    H = np.eye(n) - 1.0 / n
    g = resolve_gamma(Xd, gamma)
    out = np.zeros(d)
    for i in range(d):
        x = Xd[:, i]
        K = np.outer(x, x) if kernel == "linear" else np.exp(-g[i] * (x[:, None] - x[None, :]) ** 2)
        Kc = H @ K @ H
        tr = np.trace(Kc)
        if np.all(x == x[0]):
            continue
        out[i] = np.sum(Kc * T) / tr
    return out


def _mixed(n, rng):
    return np.column_stack([
        rng.normal(size=(n, 4)),                       # continuous: pair loop
        rng.integers(0, 2, (n, 2)).astype(float),      # binary: grouped
        rng.integers(0, 7, (n, 2)).astype(float),      # categorical: grouped
        rng.integers(0, 60, (n, 2)).astype(float),     # many ties: sorted + grouped
        np.full(n, 3.5),                               # constant
        np.round(rng.normal(size=n), 1),               # ties, > 16 values
    ])


def _rel(a, r):
    return np.max(np.abs(a - r) / np.maximum(np.abs(r), 1e-12 * np.max(np.abs(r))))


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
def test_dense_alignments_match_numpy(kind):
    rng = np.random.default_rng(0)
    n = 170
    X = _mixed(n, rng)
    if kind == "binary":
        y = np.where(X[:, 0] ** 2 + 0.3 * rng.normal(size=n) > 0.7, "a", "b")
    elif kind == "multiclass":
        y = rng.integers(0, 4, n)
    else:
        y = X[:, 1] ** 2 + 0.2 * rng.normal(size=n)
    a, det = feature_alignments(X, y, return_details=True)
    r = reference_alignments(X, y)
    assert det.kind == kind
    assert _rel(a, r) < 1e-10
    assert a[10] == 0.0 and det.traces[10] == 0.0
    # grouping paths were taken where expected
    assert list(det.n_groups[4:8]) == [2, 2, 7, 7]
    assert np.all(det.n_groups[:4] == n)


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_sorted_grouping_path_for_long_columns_with_ties(kind):
    rng = np.random.default_rng(7)
    n = 600  # >= SORT_MIN_SAMPLES: columns with ties are sorted and grouped
    X = np.column_stack([rng.integers(0, 90, n), np.round(rng.normal(size=n), 2), rng.normal(size=n)])
    y = np.sign(X[:, 1]) if kind == "binary" else rng.integers(0, 3, n)
    a, det = feature_alignments(X, y, return_details=True)
    assert 16 < det.n_groups[0] <= 90 and 16 < det.n_groups[1] < n and det.n_groups[2] == n
    assert _rel(a, reference_alignments(X, y)) < 1e-10


@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression"])
def test_zero_merging_path_for_short_columns_with_many_zeros(kind):
    # n < SORT_MIN_SAMPLES: exact zeros (sparse data stored dense, as Arcene)
    # are merged into one weighted entry without sorting; the rest stays raw
    rng = np.random.default_rng(11)
    n = 137
    X = rng.normal(size=(n, 5))
    X[rng.random((n, 5)) < np.array([0.45, 0.9, 0.0, 0.0, 0.3])] = 0.0
    X[5, 2] = 0.0                 # a single zero: nothing to merge
    X[:, 3] = np.abs(X[:, 3])     # no zero at all
    X[:3, 4] = 0.0
    y = {"binary": np.sign(X[:, 0] + 0.3 * rng.normal(size=n)), "multiclass": rng.integers(0, 3, n),
         "regression": X[:, 0] ** 2 + rng.normal(size=n)}[kind]
    a, det = feature_alignments(X, y, return_details=True)
    nz = (X == 0).sum(axis=0)
    assert list(det.n_groups) == [n - nz[0] + 1, n - nz[1] + 1, n, n, n - nz[4] + 1]
    assert _rel(a, reference_alignments(X, y)) < 1e-10


def test_small_value_sets_are_grouped_up_to_the_cap():
    # 16 distinct values (0.0 and -0.0 are one) are grouped, 17 are not; the
    # hash-bucket pre-check may only reject columns with more than 16 values
    rng = np.random.default_rng(5)
    n = 300
    levels = np.concatenate([1.0 + 0.37 * np.arange(15), [0.0, -0.0]])
    x16 = levels[rng.integers(0, 17, n)]
    x16[:17] = levels
    x17 = np.concatenate([1.0 + 0.37 * np.arange(16), [0.5]])[rng.integers(0, 17, n)]
    x17[:17] = np.concatenate([1.0 + 0.37 * np.arange(16), [0.5]])
    X = np.column_stack([x16, x17])
    y = np.sign(X[:, 0] - 3.0 + rng.normal(size=n))
    a, det = feature_alignments(X, y, return_details=True)
    assert list(det.n_groups) == [16, n]
    assert _rel(a, reference_alignments(X, y)) < 1e-10


@pytest.mark.parametrize("n", [2, 3, 7, 8, 9, 15, 16, 17, 33])
def test_alignments_for_every_short_length(n):
    # the pair loops run over rows padded to multiples of PAD = 8 with zero
    # weights: lengths around the padding must give the exact sums
    rng = np.random.default_rng(n)
    X = np.column_stack([rng.normal(size=n), rng.normal(size=n) * (rng.random(n) < 0.5),
                         rng.integers(0, 3, n).astype(float)])
    X[0, 0] = X[-1, 0] + 1.0  # never constant
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    yr = rng.normal(size=n)
    for target, yy in (("binary", y), ("regression", yr), ("multiclass", np.arange(n) % 3)):
        a = feature_alignments(X, yy, target=target)
        r = reference_alignments(X, yy, target=target)
        assert np.max(np.abs(a - r)) <= 1e-10 * max(1.0, np.max(np.abs(r)))


def test_linear_kernel_and_gamma_overrides():
    rng = np.random.default_rng(1)
    X = _mixed(90, rng)
    y = np.sign(X[:, 0] + 0.1)
    assert _rel(feature_alignments(X, y, kernel="linear"), reference_alignments(X, y, "linear")) < 1e-10
    assert _rel(feature_alignments(X, y, gamma=0.3), reference_alignments(X, y, gamma=0.3)) < 1e-10
    g = rng.uniform(0.1, 3.0, X.shape[1])
    assert _rel(feature_alignments(X, y, gamma=g), reference_alignments(X, y, gamma=g)) < 1e-10
    # the default bandwidth rule is 1/var (1 for a constant column)
    var = X.var(axis=0)
    np.testing.assert_allclose(resolve_gamma(X), np.where(var > 0, 1 / np.where(var > 0, var, 1), 1.0))


def test_sparse_binary_and_sparse_continuous_match_numpy():
    rng = np.random.default_rng(2)
    n = 150
    Xb = sp.random(n, 40, density=0.04, random_state=3, format="csc")
    Xb.data[:] = 1.0
    y = rng.choice([-1.0, 1.0], n)
    a, det = feature_alignments(Xb, y, return_details=True)
    assert _rel(a, reference_alignments(Xb, y)) < 1e-10
    nnz = np.diff(Xb.indptr)
    assert np.all(det.n_groups[nnz > 0] == 2) and np.all(a[nnz == 0] == 0.0)
    Xc = sp.random(n, 20, density=0.3, random_state=4, format="lil")
    Xc[:, 3] = 2.0  # a constant column stored as non-zeros
    Xc = Xc.tocsr()
    for kernel in ("rbf", "linear"):
        ac = feature_alignments(Xc, y, kernel=kernel)
        assert _rel(ac, reference_alignments(Xc, y, kernel)) < 1e-10
        assert ac[3] == 0.0
    # dense and sparse input agree
    np.testing.assert_allclose(feature_alignments(Xb.toarray(), y), a, rtol=1e-12, atol=1e-14)


def test_bad_input():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match="kernel"):
        feature_alignments(X, [0, 1, 0, 1, 0], kernel="poly")
    with pytest.raises(ValueError, match="inconsistent"):
        feature_alignments(X, [0, 1])
    with pytest.raises(ValueError, match="gamma"):
        feature_alignments(X, [0, 1, 0, 1, 0], gamma=-1.0)
    with pytest.raises(ValueError, match="NaN"):
        feature_alignments(np.array([[np.nan, 1.0], [1.0, 2.0]]), [0, 1])


# ---------------------------------------------------------------------------
# the learned kernel


def reference_combined(X, eta, Y=None, gamma=None):
    Xd = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=float)
    n = Xd.shape[0]
    g = resolve_gamma(Xd, gamma)
    H = np.eye(n) - 1.0 / n
    K = 0.0
    for i in np.flatnonzero(eta > 0):
        x = Xd[:, i]
        Kxx = np.exp(-g[i] * (x[:, None] - x[None, :]) ** 2)
        tr = np.trace(H @ Kxx @ H)
        if Y is None:
            K = K + eta[i] * (H @ Kxx @ H) / tr
        else:
            yv = np.asarray(Y.toarray() if sp.issparse(Y) else Y)[:, i]
            Kyx = np.exp(-g[i] * (yv[:, None] - x[None, :]) ** 2)
            m = Kyx.shape[0]
            Kc = Kyx - Kyx.mean(1, keepdims=True) - Kxx.mean(0)[None, :] + Kxx.mean()
            K = K + eta[i] * Kc / tr
    return K


@pytest.mark.parametrize("sparse", [False, True])
def test_combined_kernel_matches_numpy(sparse):
    rng = np.random.default_rng(5)
    n, m = 60, 25
    X = np.column_stack([rng.normal(size=(n + m, 3)), rng.integers(0, 2, (n + m, 3)).astype(float)])
    eta = np.array([0.5, 0.0, 1.5, 0.2, 0.0, 0.7])
    Xtr, Xte = X[:n], X[n:]
    if sparse:
        Xtr, Xte = sp.csr_matrix(Xtr), sp.csr_matrix(Xte)
    y = np.sign(X[:n, 0])
    _, det = feature_alignments(Xtr, y, return_details=True)
    K, cent = combined_kernel(Xtr, eta, return_centering=True)
    Kref = reference_combined(Xtr, eta)
    np.testing.assert_allclose(K, Kref, atol=1e-12)
    np.testing.assert_allclose(combined_kernel(Xtr, eta, traces=det.traces), Kref, atol=1e-12)
    Kx = combined_kernel(Xtr, eta, Xte, centering=cent)
    np.testing.assert_allclose(Kx, reference_combined(Xtr, eta, Xte), atol=1e-12)
    np.testing.assert_allclose(combined_kernel(Xtr, eta, Xte), Kx, atol=1e-12)
    # one base kernel is PSD, centred and has unit trace
    K0 = feature_kernel(Xtr, 0)
    assert abs(np.trace(K0) - 1.0) < 1e-12 and np.abs(K0.sum(axis=0)).max() < 1e-10
    # the alignment is <K_i, yy'>
    assert abs(y @ K0 @ y - det.alignments[0]) < 1e-9 * abs(det.alignments[0])


def test_combined_kernel_linear_and_errors():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(30, 4))
    eta = np.array([1.0, 0.0, 2.0, 0.0])
    Xc = X - X.mean(0)
    tr = (Xc**2).sum(0)
    ref = (Xc[:, [0]] @ Xc[:, [0]].T) / tr[0] + 2 * (Xc[:, [2]] @ Xc[:, [2]].T) / tr[2]
    np.testing.assert_allclose(combined_kernel(X, eta, kernel="linear"), ref, atol=1e-12)
    with pytest.raises(ValueError, match="non-negative"):
        combined_kernel(X, -eta)
    with pytest.raises(ValueError, match="entries"):
        combined_kernel(X, eta[:3])



def _expm1_reference(X, y, g=None):
    """Alignments and traces in the cancellation-free form, O(n²) per column:
    ``tr = Σ_jk (1 - k_jk)/n`` and ``zᵀKz = (1ᵀz)² - Σ_jk z_j z_k (1 - k_jk)``,
    ``1 - k = -expm1(-γ d²)`` on the centred column; with the sums with |z|
    over ``1 - k`` (bounding the rounding of both) and over ``k`` (the fast
    Gauss transform's bound), divided by the trace."""
    Z, _, _ = alignment_target(y)
    g = resolve_gamma(X) if g is None else g
    n, d = X.shape
    a, tr, b_om, b_k = np.empty(d), np.empty(d), np.empty(d), np.empty(d)
    zs = Z.sum(axis=0)
    for i in range(d):
        x = X[:, i] - X[:, i].mean()
        om = -np.expm1(-g[i] * (x[:, None] - x[None, :]) ** 2)
        tr[i] = om.sum() / n
        a[i] = (zs @ zs - np.einsum("jq,jk,kq->", Z, om, Z)) / tr[i]
        b_om[i] = np.einsum("jq,jk,kq->", np.abs(Z), om, np.abs(Z)) / tr[i]
        b_k[i] = np.einsum("jq,jk,kq->", np.abs(Z), 1.0 - om, np.abs(Z)) / tr[i]
    return a, tr, b_om, b_k


def _small_spread_data(n, rng):
    X = rng.normal(size=(n, 4))
    X[:, 1] *= 0.5
    X[:, 2] = X[:, 0] + 0.3 * rng.normal(size=n)
    y = np.sign(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n))
    return X, y


@pytest.mark.parametrize("method", ["exact", "fgt"])
@pytest.mark.parametrize("gamma_var", [1e-8, 1e-12, 1e-14])
def test_small_gamma_var_keeps_its_digits(method, gamma_var):
    """At γ·var = 1e-12 the pair loop's trace
    ``n - S(1)/n`` kept two digits (alignments off by 110 %), the fast Gauss
    transform's four; at 1e-14 the traces were off by 73 % and 2.7 %.  The sums of such columns
    come from their moments now: within the rounding of an n²-term sum
    (``n ε`` of the sum with |z|) of the expm1 reference, in the same order."""
    rng = np.random.default_rng(0)
    n = 200
    X, y = _small_spread_data(n, rng)
    g = gamma_var / X.var(axis=0)
    ref, tr_ref, b_om, _ = _expm1_reference(X, y, g)
    a, det = feature_alignments(X, y, gamma=g, method=method, return_details=True)
    eps = np.finfo(float).eps
    assert np.all(np.abs(det.traces - tr_ref) <= 4 * n * eps * tr_ref)
    assert np.all(np.abs(a - ref) <= 4 * n * eps * b_om)
    assert np.argsort(-a).tolist() == np.argsort(-ref).tolist() == [0, 2, 1, 3]


@pytest.mark.parametrize("method", ["exact", "fgt", "auto"])
def test_a_column_with_an_offset_keeps_its_digits(method):
    """A column ``1 + 1e-13 u`` (its default γ = 1/var) and a column shifted by 5 keep their
    alignments' digits: dense columns are centred before they are scaled, so the offset costs no
    digits in the loop or in the transform (whose trace stays within its stated tolerance).
    n = 1100: the transform is what ``"auto"`` runs."""
    rng = np.random.default_rng(1)
    n = 1100
    X, y = _small_spread_data(n, rng)
    X[:, 3] = 1.0 + 1e-13 * rng.normal(size=n)
    X[:, 1] = 5.0 + X[:, 1]
    ref, tr_ref, b_om, b_k = _expm1_reference(X, y)
    a, det = feature_alignments(X, y, method=method, return_details=True)
    eps = np.finfo(float).eps
    # rounding of the n²-term sums; the transform: rtol = 1e-10 of S(1) = n (n - tr) for the
    # trace, of the |z| sum over k for the numerator
    rtol = 1e-10 if method != "exact" else 0.0
    tr_tol = 4 * n * eps * tr_ref + rtol * (n - tr_ref)
    assert np.all(np.abs(det.traces - tr_ref) <= tr_tol)
    assert np.all(np.abs(a - ref) <= 4 * n * eps * b_om + rtol * b_k + np.abs(ref) * tr_tol / tr_ref)


@pytest.mark.parametrize("case", ["dense fgt", "dense fgt with row moments", "sparse fgt", "sparse exact"])
def test_parallel_column_kernels_equal_their_serial_twins(case, monkeypatch):
    """The column kernels run in their serial twins below a work threshold
    (``_column_loops``); above it, the parallel form (two workers taking
    alternate blocks of columns, or one column per iteration) gives the
    serial twin's sums bit for bit: the same operations on each column, on
    grouped, sparse-ish and continuous columns."""
    import numba

    import numkfs._threads as threads
    from numkfs._threads import limit_threads
    from numkfs.kernels import _alignment_sums as sums

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("the parallel forms run only with two Numba threads")
    rng = np.random.default_rng(0)
    n, d = 300, 12
    X = rng.normal(size=(n, d))
    X[:, 1] = rng.integers(0, 4, n)
    X[:, 2] = np.where(rng.random(n) < 0.6, 0.0, X[:, 2])
    X[:, 3] = rng.standard_t(1.5, size=n)
    y = np.sign(X[:, 0] + 0.3 * rng.normal(size=n))
    ZT = np.ascontiguousarray(alignment_target(y)[0].T)
    if case.startswith("sparse"):
        X = sp.csc_matrix(np.where(rng.random((n, d)) < 0.2, X, 0.0))
    g = resolve_gamma(X)
    method = case.split()[1]
    rows = 1e-6 if case.endswith("row moments") else None
    kernel = {"dense fgt": "_fgt_hsic_dense", "dense fgt with row moments": "_fgt_hsic_dense",
              "sparse fgt": "_fgt_sums_csc", "sparse exact": "_rbf_sums_csc"}[case]
    ran = []
    for name in ("_fgt_hsic_dense", "_fgt_sums_csc", "_rbf_sums_csc"):
        for form in (getattr(sums, name), getattr(sums, name + "_serial")):
            monkeypatch.setattr(sums, form.py_func.__name__, _Spy(form, ran))
    serial = sums._rbf_pair_sums(X, g, ZT, method, rows=rows)
    monkeypatch.setattr(threads, "PARALLEL_MIN_ROWS", 0)  # every size selects the parallel form
    with limit_threads(2):
        parallel = sums._rbf_pair_sums(X, g, ZT, method, rows=rows)
    assert ran == [kernel + "_serial", kernel]
    assert len(parallel) == len(serial) == (5 if rows else 3)
    for a, b in zip(parallel, serial):
        assert np.array_equal(a, b, equal_nan=True)
    assert np.all(np.isfinite(serial[0]))


class _Spy:
    """A kernel that records its name in ``ran`` when called."""

    def __init__(self, kernel, ran):
        self.kernel, self.ran = kernel, ran

    def __call__(self, *args):
        self.ran.append(self.kernel.py_func.__name__)
        return self.kernel(*args)
