"""Feature-sharded alignments, screening and lp-KTA on joblib and a Dask cluster.

Every blocked result is compared with the in-memory computation of the same
quantity (to 1e-12 relative; the kernels are the same per column).
One LocalCluster (2 processes x 1 thread) serves the whole module.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from numkfs import lpkta_selection_path
from numkfs.distributed import (
    column_blocks,
    feature_alignments_blocked,
    lpkta_path_blocked,
    map_feature_blocks,
    screen_features,
    take_features,
)
from numkfs.kernels.alignment import feature_alignments
from numkfs.methods.lpkta import default_p_grid, lpkta_path


RTOL = 1e-12


def _data(n=70, d=23, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10.0, d)  # very different scales
    X[:, 3] = rng.integers(0, 3, n)  # few distinct values: grouped algorithm
    X[:, 5] = 2.5  # constant
    y = np.where(X[:, 0] ** 2 + 0.1 * X[:, 1] > 1.0, 1, -1)
    return X, y


def _sparse(n=60, d=300, density=0.05, seed=1):
    rng = np.random.default_rng(seed)
    S = sp.random(n, d, density=density, format="csc", random_state=rng, data_rvs=lambda k: np.ones(k))
    y = np.where(np.asarray(S[:, :4].sum(axis=1)).ravel() > 0, 1, -1)
    return S, y


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=1e-14)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


# ----------------------------------------------------------------------------
# in memory (joblib), no dask


@pytest.mark.parametrize("kernel,gamma", [("rbf", None), ("rbf", 0.3), ("rbf", "array"), ("linear", None)])
@pytest.mark.parametrize("n_jobs", [None, 2])
def test_joblib_blocks_equal_in_memory(kernel, gamma, n_jobs):
    X, y = _data()
    if gamma == "array":
        gamma = np.linspace(0.05, 2.0, X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = feature_alignments(X, y, kernel=kernel, gamma=gamma)
    got = feature_alignments_blocked(X, y, kernel=kernel, gamma=gamma, block_size=4, n_jobs=n_jobs)
    assert got.shape == ref.shape
    _close(got, ref)
    assert got[5] == 0.0  # the constant feature
    if kernel == "rbf":
        assert np.argmax(got) == 0  # y depends on x0 through x0**2


def test_bandwidth_rule_is_per_column():
    X, y = _data()
    _, det = feature_alignments(X, y, return_details=True)
    a, (g, const) = feature_alignments_blocked(X, y, block_size=3, return_details=True)
    var = X.var(axis=0)
    expect = np.where(var > 0, 1.0 / np.where(var > 0, var, 1.0), 1.0)
    _close(g, expect)
    _close(g, det.gamma)
    np.testing.assert_array_equal(const, det.constant)
    # rescaling one column changes neither its nor any other feature's alignment
    X2 = X.copy()
    X2[:, 7] *= 1000.0
    _close(feature_alignments_blocked(X2, y, block_size=3), a)


def test_sparse_multiclass_and_list_of_blocks():
    S, y = _sparse()
    y3 = np.arange(S.shape[0]) % 3
    for target_y in (y, y3):
        ref = feature_alignments(S, target_y)
        _close(feature_alignments_blocked(S, target_y, block_size=37), ref)
        blocks = [S[:, s] for s in column_blocks(S.shape[1], 64)]
        _close(feature_alignments_blocked(blocks, target_y), ref)


def test_errors():
    X, y = _data()
    with pytest.raises(ValueError, match="gamma has 3 entries but X has 23 features"):
        feature_alignments_blocked(X, y, gamma=np.ones(3))
    with pytest.raises(ValueError, match="different numbers of rows"):
        feature_alignments_blocked([X[:, :5], X[:-1, 5:]], y)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        screen_features(X, y, 0)
    with pytest.raises(ValueError, match="block_size must be >= 1"):
        feature_alignments_blocked(X, y, block_size=0)


def test_screen_and_take_in_memory():
    X, y = _data()
    X[:, 9] = X[:, 0]  # a tie with the best feature: lower index first
    idx, a = screen_features(X, y, 4, block_size=5, return_scores=True)
    ref = feature_alignments(X, y)
    _close(a, ref)
    assert idx[0] == 0 and idx[1] == 9
    assert np.all(np.diff(ref[idx]) <= 0)
    assert ref[idx[-1]] >= np.max(np.delete(ref, idx))
    np.testing.assert_array_equal(take_features(X, idx), X[:, idx])
    S, ys = _sparse()
    k_idx = screen_features(S, ys, 10, block_size=50)
    np.testing.assert_array_equal(take_features(S, k_idx), S[:, k_idx].toarray())
    assert set(range(4)) <= set(k_idx.tolist())  # the features that define y


def test_lpkta_path_blocked_equals_in_memory():
    X, y = _data()
    grid = default_p_grid(2.0, 1.0, 0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = lpkta_path(X, y, grid=grid)
        got = lpkta_path_blocked(X, y, grid=grid, block_size=6)
    _close(got.weights, ref.weights)
    _close(got.objective, ref.objective)
    _close(got.extra["gamma"], ref.extra["gamma"])
    np.testing.assert_array_equal(got.grid, ref.grid)
    with pytest.warns(UserWarning, match=r"feature\(s\) \[5\] are constant"):
        lpkta_path_blocked(X, y, grid=grid, block_size=6)


# ----------------------------------------------------------------------------
# on a Dask cluster


def test_dask_array_on_cluster(client):
    da = pytest.importorskip("dask.array")
    X, y = _data(n=90, d=41)
    ref = feature_alignments(X, y)
    # column chunks, and row chunks that must be merged
    for chunks in ((-1, 8), (30, 11)):
        Xd = da.from_array(X, chunks=chunks)
        _close(feature_alignments_blocked(Xd, y), ref)
    g = np.linspace(0.1, 3.0, 41)
    _close(feature_alignments_blocked(da.from_array(X, chunks=(-1, 10)), y, gamma=g),
           feature_alignments(X, y, gamma=g))
    Xd = da.from_array(X, chunks=(-1, 8))
    idx = screen_features(Xd, y, 6)
    np.testing.assert_array_equal(idx, np.lexsort((np.arange(41), -ref))[:6])
    np.testing.assert_array_equal(take_features(Xd, idx), X[:, idx])


def test_files_on_disk_on_cluster(client, tmp_path):
    X, y = _data(n=80, d=30)
    S, ys = _sparse(n=80, d=200)
    dense_paths, sparse_paths = [], []
    for j, s in enumerate(column_blocks(30, 7)):
        p = tmp_path / f"dense_{j}.npy"
        np.save(p, X[:, s])
        dense_paths.append(str(p))
    for j, s in enumerate(column_blocks(200, 64)):
        p = tmp_path / f"sparse_{j}.npz"
        sp.save_npz(p, S[:, s])
        sparse_paths.append(str(p))
    _close(feature_alignments_blocked(dense_paths, y), feature_alignments(X, y))
    _close(feature_alignments_blocked(sparse_paths, ys), feature_alignments(S, ys))
    idx = screen_features(sparse_paths, ys, 5)
    np.testing.assert_array_equal(take_features(sparse_paths, idx), S[:, idx].toarray())
    grid = default_p_grid(2.0, 1.0, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = lpkta_path_blocked(dense_paths, y, grid=grid)
        ref = lpkta_path(X, y, grid=grid)
    _close(got.weights, ref.weights)


def _numba_threads(Xb):
    import numba

    return np.full(Xb.shape[1], numba.get_num_threads())


def test_thread_policy_on_cluster(client):
    """2 single-thread workers on this host: Numba gets cores // 2 threads each."""
    import os

    da = pytest.importorskip("dask.array")
    X = da.zeros((5, 12), chunks=(5, 3))
    got = map_feature_blocks(_numba_threads, X)
    assert np.all(got == max(1, (os.cpu_count() or 1) // 2))
    # joblib in-process with 2 workers: same policy
    got = map_feature_blocks(_numba_threads, np.zeros((5, 12)), block_size=3, n_jobs=2)
    assert np.all(got == max(1, (os.cpu_count() or 1) // 2))


def test_joblib_dask_backend_runs_unchanged(client):
    """The same calls under joblib.parallel_backend("dask"): blocks and CV folds on the cluster."""
    import joblib

    X, y = _data(n=80, d=12)
    X = np.delete(X, 5, axis=1)
    ref = feature_alignments(X, y)
    kw = dict(grid=default_p_grid(2.0, 1.0, 0.1), n_points=4, cv=3, random_state=0)
    seq = lpkta_selection_path(X, y, n_jobs=1, **kw)
    with joblib.parallel_backend("dask"):
        _close(feature_alignments_blocked(X, y, block_size=3), ref)
        par = lpkta_selection_path(X, y, n_jobs=2, **kw)
    np.testing.assert_array_equal(par.scores, seq.scores)


def test_single_machine_default_never_imports_dask():
    import subprocess
    import sys

    code = ("import sys, numpy as np; import numkfs; from numkfs.distributed import screen_features;"
            "X = np.random.default_rng(0).normal(size=(30, 9)); y = np.sign(X[:, 0]);"
            "idx = screen_features(X, y, 2, block_size=4);"
            "assert idx[0] == 0, idx;"
            "bad = [m for m in ('dask', 'distributed') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_take_features_reads_a_boolean_mask_as_a_mask():
    # take_features(X, boolean_mask) read the mask as the indices 0 and 1
    from numkfs.distributed import take_features

    X = np.arange(24.0).reshape(4, 6)
    mask = np.array([False, False, True, False, True, True])
    np.testing.assert_array_equal(take_features(X, mask), X[:, mask])
    np.testing.assert_array_equal(take_features([X[:, :3], X[:, 3:]], mask), X[:, mask])
    with pytest.raises(ValueError, match="one entry per feature"):
        take_features(X, mask[:4])
    with pytest.raises(IndexError, match="out of range"):
        take_features(X, [-1])


def test_blocked_alignments_name_the_global_column_of_a_nan():
    from numkfs.distributed import lpkta_path_blocked

    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 10))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[3, 7] = np.nan
    for data in (X, [X[:, :4], X[:, 4:8], X[:, 8:]]):
        with pytest.raises(ValueError, match="NaN in column 7"):
            lpkta_path_blocked(data, y, block_size=4)
