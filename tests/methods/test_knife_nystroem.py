"""KNIFE through a Nyström basis: with every row a landmark it is
exact KNIFE (fits and paths agree to round-off), the weight gradient against
central differences, the β-step's optimality for every loss, the memory check
and the bad-input errors, determinism under random_state, and the sinusoid's
five true features found at 1000 rows with 100 landmarks."""
import numpy as np
import pytest

from numkfs.datasets import make_sinusoid
from numkfs.kernels.weighted_lowrank import lowrank_gram, select_landmarks
from numkfs.methods.knife import knife_model, resolve_approximation
from numkfs.methods.knife._nystroem import _KnifeNystroem
from numkfs.methods.knife._problem import _Knife

LOSSES = ("squared", "squared_hinge", "huberized_hinge", "logistic")
EPS = np.finfo(float).eps


def _std(X):
    return (X - X.mean(0)) / X.std(0)


@pytest.fixture(scope="module")
def small():
    X, y, _ = make_sinusoid(40, random_state=0)
    return _std(X), y - y.mean()


def _target(y, loss):
    return y if loss == "squared" else np.where(y > 0, 1.0, -1.0)


def _models(X, y, loss, landmarks, kernel="rbf"):
    kw = dict(kernel=kernel, loss=loss, lambda1=1.0, gamma=1.0 / X.shape[1], degree=2, coef0=1.0, delta=1.0,
              solver="auto")
    return _Knife(X, y, **kw), _KnifeNystroem(X, y, landmarks=landmarks, **kw)


# --------------------------------------------------------------------------
# every row a landmark: exact KNIFE


@pytest.mark.parametrize("loss", LOSSES)
def test_all_rows_as_landmarks_is_exact_knife(small, loss):
    """K_nm = K_mm = K and β = α: the β-step solves the α-step's problem, the
    w-step gets the same A, u0 and c, so every iterate agrees up to the
    rounding of the two linear solves (condition number of K + λ1 I times the
    condition of K for the β-step's normal equations).  The L-BFGS-B finish
    is compared on the smooth losses only: with a hinge loss the α-step's
    set of margin violators moves with that rounding, and the finish may
    take another path from there (seen on one OpenBLAS kernel and not the
    other), so there the alternation alone is compared to its end."""
    X, y = small
    y = _target(y, loss)
    n = X.shape[0]
    exact, ny = _models(X, y, loss, np.arange(n))
    w0 = np.random.default_rng(1).uniform(size=X.shape[1])
    K = exact.kernel_matrix(w0)
    kappa = np.linalg.cond(K) * np.linalg.cond(K + np.eye(n))
    # one α-step and the w-step data from the same point
    a, a0 = exact.alpha_step(K, np.zeros(n), 0.0)
    Kn = ny.kernel_matrix(w0)
    b, b0 = ny.alpha_step(Kn, np.zeros(n), 0.0)
    assert np.max(np.abs(K @ (a - b))) <= 1e3 * kappa * EPS * max(1.0, np.max(np.abs(y)))
    assert abs(a0 - b0) <= 1e3 * kappa * EPS
    for u, v in zip(exact.wstep_data(K, a, a0, w0, 1.0)[1:], ny.wstep_data(Kn, a, a0, w0, 1.0)[1:]):
        assert np.max(np.abs(u - v)) <= 1e3 * EPS * max(1.0, np.max(np.abs(u)))
    # whole fits (the alternation, line search, extrapolation and, on smooth losses, the L-BFGS-B finish)
    polish = loss in ("squared", "logistic")
    fe, fn = exact.fit(w0, 0.0, polish=polish), ny.fit(w0, 0.0, polish=polish)
    assert fe.converged and fn.converged
    assert fn.objective == pytest.approx(fe.objective, rel=1e-9)
    assert np.max(np.abs(fn.w - fe.w)) <= 1e-7
    assert fn.n_iter == fe.n_iter


@pytest.mark.parametrize("kernel,loss", [("rbf", "squared"), ("rbf", "logistic"), ("poly", "squared_hinge"),
                                         ("linear", "huberized_hinge")])
def test_weight_gradient_matches_central_differences(small, kernel, loss):
    """∂f/∂w at fixed (β, β0) is Aᵀℓ'(u) + λ1 (A^mm)ᵀβ + λ2 (the w-step
    surrogate's gradient); central differences with h = 1e-5 err by
    O(h² f''') + O(eps f / h), about 1e-8 relative here."""
    X, y = small
    y = _target(y, loss)
    _, ny = _models(X, y, loss, select_landmarks(X, 15, random_state=0), kernel)
    rng = np.random.default_rng(3)
    w = rng.uniform(0.3, 1.0, X.shape[1])
    beta, b0 = rng.normal(size=15) * 0.3, 0.1
    K = ny.kernel_matrix(w)
    act, A, u0, c = ny.wstep_data(K, beta, b0, w, 0.5)
    grad = A.T @ ny.loss.gradient(y, u0 + A @ w[act]) + c
    h = 1e-5
    fd = np.empty_like(grad)
    for k in range(w.size):
        e = np.zeros_like(w)
        e[k] = h
        f = [ny.objective(ny.kernel_matrix(w + s * e), beta, b0, w + s * e, 0.5) for s in (1.0, -1.0)]
        fd[k] = (f[0] - f[1]) / (2 * h)
    assert np.max(np.abs(grad - fd)) <= 1e-6 * max(1.0, np.max(np.abs(grad)))


@pytest.mark.parametrize("loss", LOSSES)
def test_beta_step_is_optimal(small, loss):
    """KKT of the (m + 1)-dimensional β-step: K_nmᵀℓ'(u) + 2λ1 K_mm β = 0 and
    (classification) Σℓ'(u) = 0, to the Newton loop's tolerance."""
    X, y = small
    y = _target(y, loss)
    _, ny = _models(X, y, loss, select_landmarks(X, 12, random_state=1))
    w = np.random.default_rng(2).uniform(size=X.shape[1])
    K = ny.kernel_matrix(w)
    beta, b0 = ny.alpha_step(K, np.zeros(12), 0.0)
    nm, mm = ny.blocks(K)
    g = ny.loss.gradient(y, nm @ beta + b0)
    scale = 1.0 + np.abs(nm).max() * np.abs(g).sum() + 2.0 * np.abs(mm @ beta).max()
    assert np.max(np.abs(nm.T @ g + 2.0 * mm @ beta)) <= 1e-8 * scale
    if loss != "squared":
        assert abs(g.sum()) <= 1e-8 * (1.0 + np.abs(g).sum())
    # and it is a minimum: a random perturbation does not lower the objective
    f = ny.objective(K, beta, b0, w, 0.0)
    d = np.random.default_rng(5).normal(size=12)
    assert all(ny.objective(K, beta + t * d, b0, w, 0.0) >= f for t in (1e-3, -1e-3))


def test_gram_by_blocks_matches_dense():
    rng = np.random.default_rng(0)
    K = rng.normal(size=(37, 6))
    d = rng.uniform(size=37)
    d[::4] = 0.0
    G = lowrank_gram(K, d, block_rows=5)
    assert np.max(np.abs(G - K.T @ (d[:, None] * K))) <= 50 * EPS * np.abs(K).max() ** 2 * d.sum()
    assert np.array_equal(G, G.T)


def test_gram_is_the_same_bit_for_bit_whichever_rows_it_reads():
    """With every d_i > 0 (the squared loss) the blocks are read from slices of K_nm into one buffer,
    otherwise gathered: the products sqrt(d_i) K_ij and the rank-k updates are the same, so the matrix
    is identical to the gathered route's (a fit's iterates depend on it to the last bit: at λ2 = 0
    the w-step's sticky zeros turn rounding into a different support)."""
    import scipy.linalg

    rng = np.random.default_rng(1)
    K = rng.normal(size=(37, 6))

    def gathered(d, b=5):
        rows = np.flatnonzero(d > 0.0)
        G = np.zeros((6, 6), order="F")
        for s in range(0, rows.size, b):
            r = rows[s:s + b]
            G = scipy.linalg.blas.dsyrk(1.0, (K[r] * np.sqrt(d[r])[:, None]).T, beta=1.0, c=G, trans=0, lower=0,
                                        overwrite_c=1)
        return np.triu(G) + np.triu(G, 1).T

    for d in (np.full(37, 2.0), rng.uniform(0.5, 2.0, 37)):
        assert np.array_equal(lowrank_gram(K, d, block_rows=5), gathered(d))
    assert np.array_equal(lowrank_gram(K, None, block_rows=5), gathered(np.ones(37)))
    assert np.max(np.abs(lowrank_gram(K, np.full(37, 2.0)) - 2.0 * K.T @ K)) <= 50 * EPS * 37 * np.abs(K).max() ** 2


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_lowrank_kernels_write_into_a_buffer(kernel):
    """``out``: the rbf kernel's Numba form writes K_nm into the given array (it is returned, every
    entry overwritten: the buffer starts as NaN, and the values are those of a fresh array bit for
    bit); the BLAS forms (poly) allocate."""
    from numkfs.kernels.weighted_lowrank import lowrank_kernels

    rng = np.random.default_rng(2)
    X, w = rng.normal(size=(50, 4)), np.array([1.0, 0.5, 0.0, 0.8])
    Z = X[:12]
    buf = np.full((50, 12), np.nan)
    Knm, Kmm = lowrank_kernels(X, Z, w, kernel, gamma=0.3, out=buf)
    assert (Knm is buf) == (kernel == "rbf")
    fresh = lowrank_kernels(X, Z, w, kernel, gamma=0.3)
    assert np.array_equal(Knm, fresh[0]) and np.array_equal(Kmm, fresh[1])


def test_blocks_are_recycled_and_stay_correct(small):
    """At most LIVE_KERNELS n x m arrays exist however many weight vectors a fit visits: a new
    K_nm is written into the array of the handle it displaces, that handle's blocks are dropped
    (recomputed, equal, when asked again) and every held block equals a fresh computation."""
    from numkfs.kernels.weighted_lowrank import lowrank_kernels
    from numkfs.methods.knife import LIVE_KERNELS

    X, y = small
    _, ny = _models(X, y, "squared", select_landmarks(X, 15, random_state=0))
    rng = np.random.default_rng(4)
    ws = [rng.uniform(0.2, 1.0, X.shape[1]) for _ in range(LIVE_KERNELS + 3)]
    alpha = rng.normal(size=15)
    handles, arrays = [], set()
    for w in ws:
        K = ny.kernel_matrix(w, alpha)
        handles.append(K)
        arrays.add(id(K.nm))
        held = [h for h in handles if h.nm is not None]
        assert len(held) == min(len(handles), LIVE_KERNELS)
        for h in held:
            ref = lowrank_kernels(X, ny.Z, h.w, "rbf", gamma=ny.gamma)
            assert np.array_equal(h.nm, ref[0]) and np.array_equal(h.mm, ref[1])
        assert np.array_equal(ny.k_alpha(K, alpha), K.nm @ alpha)
    assert len(arrays) == LIVE_KERNELS  # the later blocks re-used the first arrays
    first = handles[0]
    assert first.nm is None
    nm, mm = ny.blocks(first)
    assert np.array_equal(nm, lowrank_kernels(X, ny.Z, first.w, "rbf", gamma=ny.gamma)[0])


# --------------------------------------------------------------------------
# landmarks, parameters, memory


@pytest.mark.parametrize("method", ["uniform", "kmeans++"])
def test_landmarks_are_distinct_rows_and_follow_random_state(method):
    X, _, _ = make_sinusoid(300, random_state=0)
    a = select_landmarks(X, 40, method=method, random_state=7)
    assert a.size == 40 and np.unique(a).size == 40 and np.all(np.diff(a) > 0)
    assert np.array_equal(a, select_landmarks(X, 40, method=method, random_state=7))
    assert not np.array_equal(a, select_landmarks(X, 40, method=method, random_state=8))


def test_kmeanspp_spreads_the_landmarks():
    """On two far clusters of 290 and 10 rows, k-means++ puts a landmark in the
    small one every time (D² sampling); uniform draws of 3 miss it mostly."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(290, 2)), 100.0 + rng.normal(size=(10, 2))])
    assert all(np.any(select_landmarks(X, 3, method="kmeans++", random_state=s) >= 290) for s in range(10))


def test_bad_parameters_name_themselves():
    with pytest.raises(ValueError, match="'n_components'"):
        resolve_approximation("nystroem", 50, 51)
    with pytest.raises(ValueError, match="'n_components'"):
        resolve_approximation("nystroem", 50, 0)
    with pytest.raises(ValueError, match="'approximation'"):
        resolve_approximation("nystrom", 50, 10)
    with pytest.raises(ValueError, match="landmarks"):
        select_landmarks(np.zeros((5, 2)), 2, method="random")
    assert resolve_approximation("nystroem", 50) == ("nystroem", 50)


def test_memory_check_names_n_components(monkeypatch):
    import numkfs._validation as v

    monkeypatch.setattr(v, "_available_memory", lambda: 2.0 ** 20)  # 1 MiB
    X, y, _ = make_sinusoid(400, random_state=0)
    with pytest.raises(MemoryError, match="n_components=300"):
        knife_model(X, y, approximation="nystroem", n_components=300, kernel="rbf", loss="squared", lambda1=1.0,
                    gamma=0.1, degree=2, coef0=1.0, delta=1.0, solver="auto")
    monkeypatch.setattr(v, "_available_memory", lambda: 2.0 ** 30)
    model = knife_model(X, y, approximation="nystroem", n_components=300, random_state=0, kernel="rbf",
                        loss="squared", lambda1=1.0, gamma=0.1, degree=2, coef0=1.0, delta=1.0, solver="auto")
    assert model.Z.shape == (300, 10)


def test_memory_estimate_counts_the_blocks_the_fit_holds(monkeypatch):
    """The rbf kernel (in place, recycled arrays) needs LIVE_KERNELS n x m blocks; the polynomial
    kernel, formed through BLAS, two more: a limit between the two admits the first and refuses
    the second, naming n_components.  At 10^6 x 20 with 500 landmarks the rbf fit needs under
    12 GiB (three 3.7 GiB blocks)."""
    import numkfs._validation as v
    from numkfs.methods.knife import LIVE_KERNELS, memory_estimate

    n, p, m = 400, 10, 300
    rbf, poly = memory_estimate(n, p, m), memory_estimate(n, p, m, "poly")
    assert rbf == 8.0 * (LIVE_KERNELS * n * m + 6 * m * m + 4 * n * p)
    assert poly - rbf == 8.0 * 2 * n * m
    assert memory_estimate(10 ** 6, 20, 500) < 12 * 2.0 ** 30
    assert memory_estimate(10 ** 6, 40, 500) - memory_estimate(10 ** 6, 40, 500, "poly") == 0.0  # p > 32: BLAS
    monkeypatch.setattr(v, "_available_memory", lambda: (rbf + poly) / 2 / 0.8)
    X, y, _ = make_sinusoid(n, random_state=0)
    kw = dict(approximation="nystroem", n_components=m, random_state=0, loss="squared", lambda1=1.0, gamma=0.1,
              degree=2, coef0=1.0, delta=1.0, solver="auto")
    assert knife_model(X, y, kernel="rbf", **kw).n_components == m
    with pytest.raises(MemoryError, match=f"n_components={m}"):
        knife_model(X, y, kernel="poly", **kw)


# --------------------------------------------------------------------------
# the public functions and estimators


def test_path_with_every_row_a_landmark_is_the_exact_path(small):
    """The driver (top search, grid, warm starts, refinement) runs the Nyström
    model unchanged: with n_components = n (every row, uniformly "drawn") the
    path is the exact one to round-off."""
    from numkfs.methods.knife import knife_path, path_decision_function

    X, y = small
    pe = knife_path(X, y, n_grid=6, random_state=0)
    pn = knife_path(X, y, n_grid=6, random_state=0, approximation="nystroem", n_components=X.shape[0])
    assert pn.extra["params"]["approximation"] == "nystroem" and pe.extra["params"]["approximation"] == "exact"
    assert np.array_equal(pn.extra["params"]["landmarks"], np.arange(X.shape[0]))
    assert np.array_equal(pn.grid, pe.grid) or np.allclose(pn.grid, pe.grid, rtol=1e-9)
    assert np.max(np.abs(pn.weights - pe.weights)) <= 1e-7
    assert np.allclose(pn.objective, pe.objective, rtol=1e-9)
    Xt = X[:7] + 0.1
    assert np.allclose(path_decision_function(pn, X, Xt), path_decision_function(pe, X, Xt), atol=1e-7)


@pytest.mark.parametrize("loss", ["squared_hinge", "huberized_hinge", "logistic"])
def test_classifier_with_every_row_a_landmark_is_the_exact_classifier(small, loss):
    """KNIFEClassifier end to end (standardisation, the fit, prediction through
    K_w(X_new, landmarks) β): with n_components = n every row is a landmark
    (uniform draw of all n rows, sorted) and the decision values, weights,
    intercept and objective are the exact classifier's to round-off.  A defect
    in the β-step's Newton system, the intercept's row and column, or the
    classification losses' w-step data would show here as a disagreement far
    above 1e-7 (the fits' tolerance is 1e-6 relative in the objective; their
    iterates agree to about kappa eps, kappa ~ 1e4 at n = 40)."""
    from numkfs import KNIFEClassifier

    X, y = small
    labels = np.where(y > 0, 1, -1)
    # λ2 inside the path for each loss (logistic's smaller scale empties the model at 0.5)
    kw = dict(loss=loss, lambda2=0.1 if loss == "logistic" else 0.5, random_state=0)
    ex = KNIFEClassifier(approximation="exact", **kw).fit(X, labels)
    ny = KNIFEClassifier(approximation="nystroem", n_components=X.shape[0], **kw).fit(X, labels)
    assert ny.approximation_ == "nystroem" and ex.approximation_ == "exact"
    assert np.max(np.abs(ny.feature_weights_ - ex.feature_weights_)) <= 1e-7
    assert ny.objective_ == pytest.approx(ex.objective_, rel=1e-9)
    assert ny.n_iter_ == ex.n_iter_
    Xt = np.vstack([X[:5], X[5:12] + 0.3])
    de, dn = ex.decision_function(Xt), ny.decision_function(Xt)
    assert np.max(np.abs(dn - de)) <= 1e-7 * max(1.0, np.max(np.abs(de)))
    assert np.array_equal(ny.predict(Xt), ex.predict(Xt))
    # not vacuous: the classifier keeps some features and drops others
    assert 0 < np.count_nonzero(ex.feature_weights_) < X.shape[1]


def test_fit_is_deterministic_and_warns_at_the_iteration_limit(small):
    from sklearn.exceptions import ConvergenceWarning

    from numkfs.methods.knife import knife

    X, y = small
    a = knife(X, y, lambda2=1.0, approximation="nystroem", n_components=15, random_state=3)
    b = knife(X, y, lambda2=1.0, approximation="nystroem", n_components=15, random_state=3)
    assert np.array_equal(a.weights, b.weights) and np.array_equal(a.alpha, b.alpha) and a.alpha.shape == (15,)
    assert np.array_equal(a.params["landmarks"], b.params["landmarks"])
    assert np.array_equal(a.predict(X), b.predict(X))
    with pytest.warns(ConvergenceWarning):
        knife(X, y, lambda2=1.0, approximation="nystroem", n_components=15, random_state=3, max_iter=1, tol=0.0)


def test_estimators_report_the_approximation_and_refuse_bad_n_components(small):
    from numkfs import KNIFEClassifier, KNIFERegressor

    X, y = small
    est = KNIFERegressor(lambda2=1.0, approximation="auto").fit(X, y)
    assert est.approximation_ == "exact"
    est = KNIFERegressor(lambda2=1.0, approximation="nystroem", n_components=12).fit(X, y)
    assert est.approximation_ == "nystroem" and est.alpha_.shape == (12,) and est.predict(X).shape == (40,)
    with pytest.raises(ValueError, match="n_components"):
        KNIFERegressor(approximation="nystroem", n_components=41).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        KNIFERegressor(approximation="nystroem", n_components=0).fit(X, y)
    # three classes one-vs-rest, each problem with its own landmarks (random_state=None draws anew)
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    clf = KNIFEClassifier(lambda2=0.5, approximation="nystroem", n_components=20, random_state=None).fit(X, labels)
    D = clf.decision_function(X)
    assert D.shape == (40, 3) and len(clf._landmarks) == 3
    assert np.mean(clf.predict(X) == labels) > 0.6


def test_sinusoid_true_features_above_the_exact_default():
    """The KNIFE sinusoid (five true features of twenty) at 1000 rows, more than the exact kernel's
    default (AUTO_EXACT_MAX_SAMPLES), through 100 landmarks: the CV estimator keeps exactly the five."""
    from numkfs import KNIFERegressorCV

    X, y, support = make_sinusoid(1000, n_features=20, random_state=0)
    est = KNIFERegressorCV(approximation="nystroem", n_components=100, cv=3, n_grid=6, random_state=0).fit(X, y)
    assert est.approximation_ == "nystroem"
    assert np.array_equal(est.get_support(), support)


def test_the_estimators_default_is_exact_up_to_800_rows_and_landmarks_above():
    """No default fit factorises an n x n kernel on thousands of rows.  The four KNIFE
    estimators default to approximation="auto": the exact kernel on AUTO_EXACT_MAX_SAMPLES rows
    (every data set of the selection benchmarks), default_n_components(n) landmarks on one row more:
    one per ROWS_PER_COMPONENT rows, at least MIN_COMPONENTS (all rows when fewer), at most
    DEFAULT_N_COMPONENTS."""
    from numkfs import KNIFEClassifier, KNIFEClassifierCV, KNIFERegressor, KNIFERegressorCV
    from numkfs.methods.knife import (AUTO_EXACT_MAX_SAMPLES, AUTO_EXACT_MAX_SAMPLES_CLASSIFICATION,
                                      AUTO_EXACT_MAX_SAMPLES_WIDE, DEFAULT_N_COMPONENTS, MIN_COMPONENTS,
                                      ROWS_PER_COMPONENT, default_n_components)

    assert AUTO_EXACT_MAX_SAMPLES == 800 and (MIN_COMPONENTS, DEFAULT_N_COMPONENTS, ROWS_PER_COMPONENT) == (100, 500, 40)
    assert [default_n_components(n) for n in (10, 100, 250, 4000, 4040, 4079, 6000, 19_999, 20_000, 10**6)] == \
        [10, 100, 100, 100, 101, 101, 150, 499, 500, 500]
    # at least one landmark per feature (at most DEFAULT_N_COMPONENTS, at most the rows)
    assert [default_n_components(n, p) for n, p in ((4000, 40), (4000, 300), (10**6, 10**4), (200, 300))] == \
        [100, 300, 500, 200]
    assert resolve_approximation("auto", 800) == ("exact", None)
    assert resolve_approximation("auto", 801) == ("nystroem", 100)
    # the classification losses keep the exact kernel up to 2,000 rows (landmarks not yet measured on digits)
    assert AUTO_EXACT_MAX_SAMPLES_CLASSIFICATION == 2000
    assert resolve_approximation("auto", 2000, loss="squared_hinge") == ("exact", None)
    assert resolve_approximation("auto", 2001, loss="logistic") == ("nystroem", 100)
    assert resolve_approximation("nystroem", 3000) == ("nystroem", 100)
    assert resolve_approximation("auto", 10_000) == ("nystroem", 250)
    assert resolve_approximation("auto", 3000, 100) == ("nystroem", 100)
    # more features than the landmarks the rows give: exact up to AUTO_EXACT_MAX_SAMPLES_WIDE rows, whatever
    # the loss; above, one landmark per feature
    assert AUTO_EXACT_MAX_SAMPLES_WIDE == 2000
    assert resolve_approximation("auto", 1000, n_features=100) == ("nystroem", 100)
    assert resolve_approximation("auto", 1000, n_features=101) == ("exact", None)
    assert resolve_approximation("auto", 1000, 100, n_features=101) == ("exact", None)
    assert resolve_approximation("auto", 2000, n_features=100) == ("nystroem", 100)
    assert resolve_approximation("auto", 2000, n_features=101) == ("exact", None)
    assert resolve_approximation("auto", 2001, n_features=101) == ("nystroem", 101)
    assert resolve_approximation("auto", 2001, n_features=10**4) == ("nystroem", 500)
    assert resolve_approximation("auto", 3000, loss="squared_hinge", n_features=10**4) == ("nystroem", 500)
    assert resolve_approximation("auto", 3000, 200, n_features=10**4) == ("nystroem", 200)
    assert resolve_approximation("nystroem", 1000, n_features=500) == ("nystroem", 500)

    for cls in (KNIFERegressor, KNIFEClassifier, KNIFERegressorCV, KNIFEClassifierCV):
        assert cls().approximation == "auto", cls.__name__
    rng = np.random.default_rng(0)
    n = AUTO_EXACT_MAX_SAMPLES + 1
    X = rng.standard_normal((n, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    big = KNIFERegressor(lambda2=float(n), max_iter=3).fit(X, y)
    assert big.approximation_ == "nystroem" and big.alpha_.shape == (default_n_components(n),) == (MIN_COMPONENTS,)
    # the same rows with more features than the 100 landmarks the rows give: the exact kernel
    Xw = np.hstack([X, rng.standard_normal((n, MIN_COMPONENTS - 2))])
    wide = KNIFERegressor(lambda2=float(n), max_iter=3).fit(Xw, y)
    assert Xw.shape[1] == MIN_COMPONENTS + 1 and wide.approximation_ == "exact" and wide.alpha_.shape == (n,)
    small = KNIFERegressor(lambda2=100.0, max_iter=3).fit(X[:AUTO_EXACT_MAX_SAMPLES], y[:AUTO_EXACT_MAX_SAMPLES])
    assert small.approximation_ == "exact" and small.alpha_.shape == (AUTO_EXACT_MAX_SAMPLES,)
