"""Feature-sharded computation for data with very many features.

Everything separable by feature (the per-feature alignments of lp-KTA,
NMMKL and COSSO; screening by alignment; the lp-KTA path itself, which
separates once the alignments are known) can run block by block over the
columns of X.  numkfs does not ship its own scheduler: blocks are computed

* with ``dask`` when X is a ``dask.array`` (on whatever scheduler is active,
  e.g. a ``dask.distributed.Client`` connected to a cluster), or when X is a
  list of ``.npy`` files (each worker memory-maps only its own block);
* with ``joblib`` (``n_jobs``) for an in-memory array, which also runs on a
  Dask cluster under ``joblib.parallel_backend("dask")``.

The single-machine default never imports dask.  Each block's Numba kernel
is the same function as in memory, and blocks are independent, so the
results are identical to the in-memory computation.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["map_feature_blocks", "feature_alignments_blocked", "screen_features", "column_blocks"]


def _is_dask(X) -> bool:
    return type(X).__module__.startswith("dask.")


def column_blocks(d: int, block_size: int) -> list[slice]:
    """Slices that cut ``d`` columns into blocks of at most ``block_size``."""
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1; got {block_size}.")
    return [slice(s, min(s + block_size, d)) for s in range(0, d, block_size)]


def _load_block(block):
    if isinstance(block, str):
        return np.load(block, mmap_mode="r")
    return block


def _apply(func, block, kwargs):
    return np.asarray(func(_load_block(block), **kwargs))


def map_feature_blocks(func, X, *, block_size: int = 4096, n_jobs=None, **kwargs) -> np.ndarray:
    """Apply ``func(X_block, **kwargs) -> (block_features,)`` to column blocks.

    Parameters
    ----------
    func : callable
        Computes one value per column of its block.
    X : ndarray, scipy.sparse matrix, dask array, or list of blocks
        A list may hold arrays or paths to ``.npy`` files (n x d_b each).
    block_size : int
        Columns per block for in-memory X (a dask array keeps its chunks).
    n_jobs : int, optional
        joblib workers for in-memory X.

    Returns
    -------
    ndarray of shape (n_features,)
        The per-block results, concatenated in column order.
    """
    if isinstance(X, (list, tuple)):
        if any(isinstance(b, str) for b in X):
            import dask

            parts = dask.compute(*[dask.delayed(_apply)(func, b, kwargs) for b in X])
        else:
            parts = [_apply(func, b, kwargs) for b in X]
        return np.concatenate(parts)
    if _is_dask(X):
        import dask

        n_col_chunks = len(X.chunks[1])
        if len(X.chunks[0]) != 1:
            X = X.rechunk({0: -1})  # each block needs all the samples
        parts = dask.compute(*[dask.delayed(_apply)(func, X.blocks[0, j], kwargs) for j in range(n_col_chunks)])
        return np.concatenate(parts)
    from joblib import Parallel, delayed

    if sp.issparse(X):
        X = sp.csc_matrix(X)
    d = X.shape[1]
    parts = Parallel(n_jobs=n_jobs)(delayed(_apply)(func, X[:, s], kwargs) for s in column_blocks(d, block_size))
    return np.concatenate(parts)


def feature_alignments_blocked(X, y, *, kernel: str = "rbf", gamma=None, block_size: int = 4096, n_jobs=None) -> np.ndarray:
    """:func:`numkfs.kernels.feature_alignments` computed block by block.

    Accepts everything :func:`map_feature_blocks` does; returns the same
    alignments as the in-memory call.
    """
    from .kernels.alignment import feature_alignments

    return map_feature_blocks(feature_alignments, X, block_size=block_size, n_jobs=n_jobs,
                              y=y, kernel=kernel, gamma=gamma)


def screen_features(X, y, k: int, *, kernel: str = "rbf", gamma=None, block_size: int = 4096, n_jobs=None) -> np.ndarray:
    """Indices of the ``k`` features with the largest alignment, best first.

    The screening step the NMMKL paper used (there with Fisher scores) before
    running an expensive selector on the survivors.
    """
    a = feature_alignments_blocked(X, y, kernel=kernel, gamma=gamma, block_size=block_size, n_jobs=n_jobs)
    k = int(min(k, a.shape[0]))
    idx = np.argpartition(-a, k - 1)[:k] if k < a.shape[0] else np.arange(a.shape[0])
    return idx[np.argsort(-a[idx], kind="stable")]
