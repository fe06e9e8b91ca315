"""Feature-sharded computation for data with very many features.

Everything separable by feature (the per-feature alignments of lp-KTA,
NMMKL and COSSO; screening by alignment; the lp-KTA path itself, which
separates once the alignments are known) can run block by block over the
columns of X.  numkfs does not ship its own scheduler: blocks are computed

* with ``dask`` when X is a ``dask.array`` chunked by columns (on the active
  ``dask.distributed.Client``, e.g. one connected to a cluster with
  ``Client("tcp://scheduler:8786")``), or when X is a list of column blocks
  stored as ``.npy`` (dense, memory-mapped by the worker that needs it) or
  ``.npz`` (``scipy.sparse.save_npz``) files; a Zarr store is read with
  ``dask.array.from_zarr`` and is then just a dask array;
* with ``joblib`` (``n_jobs``) for an in-memory array or sparse matrix, which
  also runs on a Dask cluster under ``joblib.parallel_backend("dask")``.

The single-machine default never imports dask.  Each block runs the same
Numba kernel as the in-memory call, and every per-feature quantity
(bandwidth rule ``gamma=None`` = 1/var of the column, constant-column mask,
alignment) depends on its own column only, so the blocked results equal the
in-memory ones (to rounding of the column variance, well below 1e-12).

Threads: a block task sets Numba's thread count so that
``(dask threads or joblib workers on a host) x Numba threads <= cores of that
host`` (the policy of :func:`numkfs.model_selection.numba_threads_for`).
Without a distributed client, dask blocks run one after the other in the
calling process ("sync" scheduler), each using every Numba thread.
"""
from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from ._threads import limit_threads, threads_per_worker

__all__ = [
    "map_feature_blocks",
    "feature_alignments_blocked",
    "screen_features",
    "take_features",
    "lpkta_path_blocked",
    "column_blocks",
]


def _is_dask(X) -> bool:
    return type(X).__module__.startswith("dask.")


def column_blocks(d: int, block_size: int) -> list[slice]:
    """Slices that cut ``d`` columns into blocks of at most ``block_size``.

    Parameters
    ----------
    d : int
        Number of columns.
    block_size : int
        Largest number of columns per block (at least 1); only the last
        block may be smaller.

    Returns
    -------
    list of slice
        Consecutive slices covering ``range(d)`` in order.
    """
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1; got {block_size}.")
    return [slice(s, min(s + block_size, d)) for s in range(0, d, block_size)]


# ----------------------------------------------------------------------------
# blocks and where they run


def _load_block(block):
    """An array (or CSC matrix) from a block: itself, a ``.npy`` or an ``.npz`` path."""
    if isinstance(block, (str, os.PathLike)):
        path = os.fspath(block)
        if path.endswith(".npz"):
            return sp.load_npz(path).tocsc()
        return np.load(path, mmap_mode="r")
    return block


def _block_shape(block):
    if isinstance(block, (str, os.PathLike)):
        path = os.fspath(block)
        if path.endswith(".npz"):
            with np.load(path) as f:
                return tuple(int(s) for s in f["shape"])
        return np.load(path, mmap_mode="r").shape
    return block.shape


def _host_threads(client) -> dict:
    """Total dask worker threads per host of a distributed cluster."""
    out: dict = {}
    for info in client.scheduler_info(n_workers=-1)["workers"].values():
        host = info.get("host")
        out[host] = out.get(host, 0) + int(info.get("nthreads", 1))
    return out


def _threads_here(threads):
    """Numba threads for this task: an int, None (leave), or a host -> dask
    threads mapping resolved on the worker that runs the task."""
    if isinstance(threads, dict):
        try:
            from distributed import get_worker

            host = get_worker().address.split("://")[-1].rsplit(":", 1)[0]
        except (ImportError, ValueError):
            return None
        return threads_per_worker(threads.get(host, 1))
    return threads


def _apply(func, block, kwargs, feature_kwargs, threads):
    """Run ``func`` on one block with the Numba thread count of the policy."""
    n_threads = _threads_here(threads)
    Xb = _load_block(block)
    with limit_threads(n_threads):
        return np.asarray(func(Xb, **kwargs, **feature_kwargs))


def _active_client():
    if "distributed" not in sys.modules:
        return None
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        return None


def _slice_features(per_feature, widths):
    """Per-block slices of the per-feature keyword arrays (length d each).

    The key ``"column_offset"`` is special: it asks for each block's first
    global column index (for messages that name a column)."""
    per_feature = dict(per_feature or {})
    offsets = per_feature.pop("column_offset", None) is not None
    d = int(sum(widths))
    for name, v in per_feature.items():
        if np.shape(v)[-1] != d:
            raise ValueError(f"{name} has {np.shape(v)[-1]} entries but X has {d} features.")
    out, s = [], 0
    for w in widths:
        part = {name: np.asarray(v)[..., s:s + w] for name, v in per_feature.items()}
        if offsets:
            part["column_offset"] = s
        out.append(part)
        s += w
    return out


def _dask_blocks(X):
    """Column blocks of a dask array as delayed objects, with their widths."""
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D; got a dask array of shape {X.shape}.")
    if len(X.chunks[0]) != 1:
        X = X.rechunk({0: -1})  # each block needs all the samples
    return list(X.to_delayed().ravel()), list(X.chunks[1])


def map_feature_blocks(func, X, *, block_size: int = 4096, n_jobs=None, per_feature=None, scheduler=None,
                       **kwargs) -> np.ndarray:
    """Apply ``func(X_block, **kwargs) -> (..., block_features)`` to column blocks.

    Parameters
    ----------
    func : callable
        Computes values per column of its block (last axis = columns).
        Must depend on each column alone for the result to be independent of
        the blocking.
    X : ndarray, scipy.sparse matrix, dask array, or list of blocks
        A list may hold arrays, sparse matrices, or paths to ``.npy`` /
        ``.npz`` files (n x d_b each); a dask array keeps its column chunks
        (row chunks are merged).
    block_size : int
        Columns per block for in-memory X.
    n_jobs : int, optional
        joblib workers for in-memory X (``None``: 1, or the backend's default
        under ``joblib.parallel_backend``, e.g. every worker of a Dask cluster).
    per_feature : dict, optional
        Keyword arrays of length ``n_features`` (e.g. one ``gamma`` per
        feature): each block receives its own slice.
    scheduler : optional
        Dask scheduler for dask/list input; default: the active
        ``distributed.Client`` if there is one, else ``"sync"``.
    **kwargs
        Passed unchanged to every call (e.g. ``y``).

    Returns
    -------
    ndarray of shape (..., n_features)
        The per-block results, concatenated in column order.
    """
    if isinstance(X, (list, tuple)):
        if len(X) == 0:
            raise ValueError("X is an empty list of blocks.")
        shapes = [_block_shape(b) for b in X]
        if len({s[0] for s in shapes}) != 1:
            raise ValueError(f"blocks have different numbers of rows: {sorted({s[0] for s in shapes})}.")
        blocks, widths = list(X), [s[1] for s in shapes]
        use_dask = any(isinstance(b, (str, os.PathLike)) for b in X) or scheduler is not None
        if not use_dask:
            fk = _slice_features(per_feature, widths)
            return np.concatenate([_apply(func, b, kwargs, f, None) for b, f in zip(blocks, fk)], axis=-1)
    elif _is_dask(X):
        blocks, widths = _dask_blocks(X)
    else:
        return _map_joblib(func, X, block_size, n_jobs, per_feature, kwargs)
    return _map_dask(func, blocks, widths, per_feature, scheduler, kwargs)


def _map_dask(func, blocks, widths, per_feature, scheduler, kwargs):
    import dask

    fk = _slice_features(per_feature, widths)
    client = _active_client() if scheduler is None else None
    if client is not None:
        threads = _host_threads(client)
        scheduler = client
    else:
        threads = None
        scheduler = "sync" if scheduler is None else scheduler
    kw = dask.delayed(kwargs, pure=True)  # one key for y etc., shared by every task
    task = dask.delayed(_apply, pure=True)
    parts = dask.compute(*[task(func, b, kw, f, threads) for b, f in zip(blocks, fk)], scheduler=scheduler)
    return np.concatenate(parts, axis=-1)


def _map_joblib(func, X, block_size, n_jobs, per_feature, kwargs):
    from joblib import Parallel, delayed, effective_n_jobs
    from joblib.parallel import get_active_backend

    from .model_selection import numba_threads_for

    if sp.issparse(X):
        X = sp.csc_matrix(X)
    elif not hasattr(X, "shape") or hasattr(X, "to_numpy"):
        X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D; got shape {X.shape}.")
    slices = column_blocks(X.shape[1], block_size)
    fk = _slice_features(per_feature, [s.stop - s.start for s in slices])
    backend = type(get_active_backend()[0]).__name__
    if "Dask" in backend:
        client = _active_client()
        threads = _host_threads(client) if client is not None else 1
    else:
        n_workers = min(effective_n_jobs(n_jobs), len(slices))
        threads = None if n_workers == 1 else numba_threads_for(n_workers)
    parts = Parallel(n_jobs=n_jobs)(delayed(_apply)(func, X[:, s], kwargs, f, threads) for s, f in zip(slices, fk))
    return np.concatenate(parts, axis=-1)


# ----------------------------------------------------------------------------
# alignments, screening, lp-KTA


def _alignment_block(Xb, y, kernel, target, gamma=None, method="auto", rtol=1e-10, column_offset=0):
    """Rows: alignments, bandwidths (NaN for the linear kernel), constant mask.
    An error naming a column names its global index (``column_offset`` added)."""
    import re

    from .kernels.alignment import feature_alignments

    try:
        a, det = feature_alignments(Xb, y, kernel=kernel, gamma=gamma, target=target, return_details=True,
                                    method=method, rtol=rtol)
    except ValueError as exc:
        msg = re.sub(r"\bcolumn (\d+)", lambda m: f"column {int(m.group(1)) + column_offset}", str(exc))
        raise ValueError(msg) from None
    g = det.gamma if det.gamma is not None else np.full(a.shape[0], np.nan)
    return np.vstack([a, g, det.constant.astype(float)])


def _alignment_parts(X, y, kernel, gamma, target, block_size, n_jobs, scheduler, method="auto", rtol=1e-10):
    from .kernels.alignment import check_alignment_method

    if isinstance(gamma, str) and gamma != "scale":
        raise ValueError(f"gamma must be None, 'scale', a positive float or an array; got {gamma!r}.")
    check_alignment_method(method, rtol, "feature_alignments_blocked")
    per_feature = {"column_offset": True}
    if gamma is not None and not isinstance(gamma, str) and np.ndim(gamma) > 0:
        per_feature["gamma"] = np.asarray(gamma, dtype=float).ravel()
        gamma = None
    out = map_feature_blocks(_alignment_block, X, block_size=block_size, n_jobs=n_jobs, per_feature=per_feature,
                             scheduler=scheduler, y=np.asarray(y), kernel=kernel, target=target,
                             method=method, rtol=rtol, **({} if "gamma" in per_feature else {"gamma": gamma}))
    return out[0], out[1], out[2].astype(bool)


def feature_alignments_blocked(X, y, *, kernel: str = "rbf", gamma=None, target: str = "auto",
                               block_size: int = 4096, n_jobs=None, scheduler=None,
                               return_details: bool = False, method: str = "auto", rtol: float = 1e-10):
    r""":func:`numkfs.kernels.alignment.feature_alignments` computed block by block.

    .. math::

        a_i = \langle \tilde K_i, Z Z^\top \rangle_F, \quad i = 1, \dots, d,

    each :math:`a_i` from column :math:`i` alone, so blocks are independent.

    Parameters
    ----------
    X : ndarray, scipy.sparse, dask array, or list of blocks / ``.npy`` / ``.npz`` paths
        See :func:`map_feature_blocks`.
    y : array-like of shape (n_samples,)
        Target values: the response, or the class labels of a classifier.
    kernel, gamma, target :
        As in :func:`~numkfs.kernels.alignment.feature_alignments`; an array
        ``gamma`` is split with the blocks; ``None`` applies the per-column
        rule :math:`1/\operatorname{var}(x_i)` inside each block.
    block_size, n_jobs, scheduler :
        See :func:`map_feature_blocks`.
    return_details : bool
        Also return ``(gamma, constant)``: per-feature bandwidths (None for
        the linear kernel) and the constant-column mask.
    method, rtol :
        Exact pair loop or fast Gauss transform, as in
        :func:`~numkfs.kernels.alignment.feature_alignments`.

    Returns
    -------
    a : ndarray of shape (n_features,)
        The same alignments as the in-memory call.
    details : tuple, only if ``return_details``
    """
    a, g, const = _alignment_parts(X, y, kernel, gamma, target, block_size, n_jobs, scheduler, method, rtol)
    if return_details:
        return a, (None if kernel == "linear" else g, const)
    return a


def screen_features(X, y, k: int, *, kernel: str = "rbf", gamma=None, target: str = "auto",
                    block_size: int = 4096, n_jobs=None, scheduler=None, return_scores: bool = False,
                    method: str = "auto", rtol: float = 1e-10):
    r"""Indices of the ``k`` features with the largest alignment, best first.

    .. math::

        S = \operatorname{top}_k\ \{a_i\}, \qquad a_i = \langle \tilde K_i, Z Z^\top \rangle_F.

    The screening step the NMMKL paper ran (there with Fisher scores on
    microarrays) before an expensive selector (KNIFE, NMMKL, L1KR) on the
    survivors; fetch them with :func:`take_features`. Ties are broken by
    the lower column index.

    Parameters
    ----------
    X : see :func:`map_feature_blocks`
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Target values: the response, or the class labels of a classifier.
    k : int
        Number of features kept.
    kernel, gamma, target, method, rtol :
        As in :func:`~numkfs.kernels.alignment.feature_alignments`.
    block_size, n_jobs, scheduler :
        See :func:`map_feature_blocks`.
    return_scores : bool
        Also return all alignments.

    Returns
    -------
    idx : ndarray of int, shape (min(k, n_features),)
    scores : ndarray (n_features,), only if ``return_scores``
        All alignments.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"screen_features: k must be a positive integer; got {k!r}.")
    a = feature_alignments_blocked(X, y, kernel=kernel, gamma=gamma, target=target, block_size=block_size,
                                   n_jobs=n_jobs, scheduler=scheduler, method=method, rtol=rtol)
    order = np.lexsort((np.arange(a.shape[0]), -a))  # descending score, then ascending index
    idx = order[: int(min(k, a.shape[0]))]
    return (idx, a) if return_scores else idx


def take_features(X, idx) -> np.ndarray:
    """The columns ``idx`` of X as an in-memory dense array (n x k), in the given order.

    Works on every input :func:`map_feature_blocks` accepts; only the blocks
    holding selected columns are read.  ``idx`` is integer column indices
    (0 <= j < n_features) or a boolean mask with one entry per feature
    (as ``get_support()`` returns).

    Parameters
    ----------
    X : see :func:`map_feature_blocks`
        In-memory array, sparse matrix, dask array or list of column blocks.
    idx : array-like of int or bool
        The columns to take, as indices (in that order) or a feature mask.

    Returns
    -------
    ndarray of shape (n_samples, k)
        The selected columns, dense.
    """
    if isinstance(X, (list, tuple)):
        widths = [_block_shape(b)[1] for b in X]
        starts = np.concatenate([[0], np.cumsum(widths)])
        idx = _feature_indices(idx, int(starts[-1]))
        n = _block_shape(X[0])[0]
        out = np.empty((n, idx.size))
        owner = np.searchsorted(starts, idx, side="right") - 1
        for b in np.unique(owner):
            sel = np.flatnonzero(owner == b)
            Xb = _load_block(X[b])[:, idx[sel] - starts[b]]
            out[:, sel] = Xb.toarray() if sp.issparse(Xb) else Xb
        return out
    idx = _feature_indices(idx, int(X.shape[1]) if hasattr(X, "shape") else int(np.shape(X)[1]))
    if _is_dask(X):
        import dask

        order = np.argsort(idx, kind="stable")
        part = X[:, idx[order]]
        client = _active_client()
        part = dask.compute(part, scheduler=client if client is not None else "sync")[0]
        part = part.toarray() if sp.issparse(part) else np.asarray(part)
        out = np.empty_like(part, dtype=float)
        out[:, order] = part
        return out
    if sp.issparse(X):
        return sp.csc_matrix(X)[:, idx].toarray()
    return np.array(np.asarray(X)[:, idx], dtype=float)


def _feature_indices(idx, n_features: int) -> np.ndarray:
    """``take_features``'s ``idx`` as int64 indices: a boolean mask is read as a mask (not
    as the indices 0 and 1), anything else must be whole numbers in range."""
    a = np.asarray(idx)
    if a.dtype == bool:
        a = a.ravel()
        if a.size != n_features:
            raise ValueError(f"take_features: a boolean mask needs one entry per feature ({n_features}); "
                             f"got {a.size}.")
        return np.flatnonzero(a)
    a = a.ravel()
    if a.size and a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and np.all(a == np.round(a)):
            a = a.astype(np.int64)
        else:
            raise TypeError(f"take_features: idx must be integer column indices or a boolean mask; got dtype "
                            f"{a.dtype}.")
    a = a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= n_features):
        raise IndexError(f"take_features: feature index {int(a.min() if a.min() < 0 else a.max())} out of range "
                         f"for {n_features} features.")
    return a


def lpkta_path_blocked(X, y, kernel: str = "rbf", gamma=None, *, target: str = "auto", block_size: int = 4096,
                       n_jobs=None, scheduler=None, feature_names=None, method: str = "auto", rtol: float = 1e-10,
                       **lpkta_kwargs):
    r"""Generalized lp-KTA path with the alignments computed block by block.

    .. math::

        \eta(p) = \arg\min_{\eta \ge 0}\ \lambda_1 \sum_i B_F(\eta_i)
        + \lambda_2 \sum_i \eta_i^p - \sum_i \eta_i a_i

    The only data pass of lp-KTA is the alignments :math:`a_i`
    (:func:`feature_alignments_blocked`, run on the workers); the path then
    needs :math:`a` alone and runs in the calling process with
    :func:`numkfs.methods.lpkta.lpkta_path` (``alignments=``). Note the path
    stores ``len(grid) x n_features`` weights in the client: pass a
    coarser ``grid`` for millions of features.

    Parameters
    ----------
    X : see :func:`map_feature_blocks`
        Data, one row per sample and one column per feature.
    y : array-like (n_samples,)
        Target values: the response, or the class labels of a classifier.
    kernel : {"rbf", "linear"}, default="rbf"
        Per-feature base kernel, as in :func:`numkfs.methods.lpkta.lpkta_path`.
    gamma : None, float or array, optional
        RBF bandwidths (default :math:`1/\operatorname{var}(x_i)`, computed on
        the workers), as in :func:`numkfs.methods.lpkta.lpkta_path`.
    target : {"auto", "binary", "multiclass", "regression"}, default="auto"
        Kind of target the ideal kernel is built for, as in
        :func:`numkfs.methods.lpkta.lpkta_path`.
    block_size : int, default=4096
        Columns per block for in-memory X (:func:`map_feature_blocks`).
    n_jobs : int, optional
        joblib workers for in-memory X (:func:`map_feature_blocks`).
    scheduler : optional
        Dask scheduler for dask or list input (:func:`map_feature_blocks`).
    feature_names : sequence, optional
        Names of the features, stored on the result.
    method, rtol :
        Exact pair loop or fast Gauss transform for the alignments, as in
        :func:`~numkfs.kernels.alignment.feature_alignments`.
    **lpkta_kwargs
        ``bregman_weight``, ``lp_weight``, ``bregman``, ``grid``, ``n_grid``, ``x0``, ``eps``,
        ``predictor``, ``tol`` of ``lpkta_path``.

    Returns
    -------
    FeaturePath
        Identical to ``lpkta_path(X_in_memory, y, ...)`` (``extra["gamma"]``
        holds the per-feature bandwidths; timings differ).
    """
    from .methods.lpkta import lpkta_path
    from ._validation import ConstantFeatureWarning

    t0 = time.perf_counter()
    a, g, const = _alignment_parts(X, y, kernel, gamma, target, block_size, n_jobs, scheduler, method, rtol)
    t1 = time.perf_counter()
    if const.any():
        idx = np.flatnonzero(const)
        names = ", ".join(str(feature_names[j]) if feature_names is not None else str(j) for j in idx[:10])
        more = "" if len(idx) <= 10 else f", ... ({len(idx)} in all)"
        warnings.warn(f"lpkta_path_blocked: feature(s) [{names}{more}] are constant; they get weight 0.",
                      ConstantFeatureWarning, stacklevel=2)
    # lpkta_path needs X only for its shape (and gamma, given here per feature):
    # an empty sparse stand-in of the right shape avoids loading X in the client.
    stub = sp.csc_matrix((len(y), a.shape[0]))
    path = lpkta_path(stub, y, kernel=kernel, gamma=g if kernel == "rbf" else None, target=target,
                      alignments=a, feature_names=feature_names, **lpkta_kwargs)
    path.extra["time_alignments"] = t1 - t0
    return path
