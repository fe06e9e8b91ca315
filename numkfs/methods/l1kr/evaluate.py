"""Evaluation along an L1KR path: KKT residual, objective, pruning, β and
λ at budgets D, prediction."""
from __future__ import annotations

import numpy as np

from ..._threads import limit_threads, thread_limits
from ...kernels.ard import ard_kernel
from ...paths import FeaturePath
from .system import FIX_CODES, PRUNE_TOL, _System


def l1kr_kkt_residual(path: FeaturePath, i: int) -> float:
    """KKT residual of a stored point of a traced L1KR path.

    The max-norm of the equations on the point's active set, of the
    violations ``λ(g_j - η)_+`` (inactive j) and of ``(-β)_+``, recomputed
    from scratch from the stored (α, β, λ).

    Parameters
    ----------
    path : FeaturePath
        A path of :func:`l1kr_path` as traced (not read at a grid).
    i : int
        The stored point.

    Returns
    -------
    float
        The residual (below the path's ``tol``, or its rounding floor, at
        every converged point).

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs import l1kr_path
    >>> from numkfs.datasets import make_friedman_noise
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> path = l1kr_path(X, y, D_max=20.0)
    >>> from numkfs.methods.l1kr import l1kr_kkt_residual
    >>> bool(l1kr_kkt_residual(path, path.n_points - 1) < 1e-8)
    True
    """
    ex = path.extra
    Xs, ys = ex["X_train"], ex["y_train"]
    fix = FIX_CODES[ex["fix"]]
    sysm = _System(Xs, ys, ex["kernel"], ex["degree"], fix, ex["lam_fixed"], ex["C_fixed"])
    P = [int(q) for q in ex["active"][i]]
    beta = path.weights[i]
    alpha = ex["alpha"][i]
    lam = ex["lambda"][i]
    z = np.concatenate([alpha, beta[P], [lam] if fix == "C" else []])
    info = sysm.full(z, P)
    g = info["g"]
    eta = g[P].mean()
    inact = np.setdiff1d(np.arange(sysm.d), P)
    viol = lam * (g[inact] - eta) if inact.size else np.zeros(0)
    parts = [np.abs(info["F"]), np.maximum(viol, 0.0), np.maximum(-beta, 0.0)]
    return float(max(np.max(p) if p.size else 0.0 for p in parts))


def l1kr_objective(path: FeaturePath, beta, lambda1) -> tuple:
    """The ridge fit at given kernel weights: ``α = (HK(β) + λI)⁻¹ y``.

    On the standardised training data of the path (centred, unit-norm y).

    Parameters
    ----------
    path : FeaturePath
        A path of :func:`l1kr_path` (its ``extra`` holds the standardised
        training data).
    beta : ndarray of shape (n_features,)
        The kernel weights β.
    lambda1 : float
        The ridge penalty λ.

    Returns
    -------
    loss : float
        ``||y - Kα - α₀||²`` (of the unit-norm y).
    norm : float
        ``αᵀKα``.
    alpha : ndarray of shape (n_samples,)
        α.

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs import l1kr_path
    >>> from numkfs.datasets import make_friedman_noise
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> path = l1kr_path(X, y, D_max=20.0)
    >>> from numkfs.methods.l1kr import l1kr_objective
    >>> loss, norm, alpha = l1kr_objective(path, path.weights[-1], path.extra["lambda"][-1])
    >>> alpha.shape, bool(0 <= loss < 1)
    ((60,), True)
    """
    lam = lambda1
    ex = path.extra
    Xs, ys = ex["X_train"], ex["y_train"]
    K = ard_kernel(Xs, beta, ex["kernel"], ex["degree"])
    n = K.shape[0]
    alpha = np.linalg.solve(K - K.mean(axis=0, keepdims=True) + lam * np.eye(n), ys)
    Ka = K @ alpha
    r = ys - Ka + Ka.mean()
    return float(r @ r), float(alpha @ Ka), alpha


def _ridge_objective(path, beta, lam):
    """``min_α ||y - Kα - α0||² + λ αᵀKα = λ yᵀα`` with ``(HKH + λI) α = y``
    (y centred, so α is centred and ``(HK + λI) α = y`` is this symmetric
    positive definite system: one Cholesky)."""
    from scipy.linalg import LinAlgError, lapack

    ex = path.extra
    ys = ex["y_train"]
    K = ard_kernel(ex["X_train"], beta, ex["kernel"], ex["degree"])  # a fresh array: centred in place
    m = K.mean(axis=0)
    K -= m[None, :]
    K -= (m - m.mean())[:, None]
    K.flat[:: K.shape[0] + 1] += lam
    _, alpha, info = lapack.dposv(K, ys, overwrite_a=1)
    if info != 0:
        raise LinAlgError(f"the centred kernel ridge system is not positive definite (LAPACK dposv info={info})")
    return float(lam * (ys @ alpha))


def l1kr_prune(path: FeaturePath, beta, lambda1, prune_tol: float = PRUNE_TOL) -> tuple:
    r"""Drop the features a point's model does not need.

    At a point (β, λ) of an L1KR path the ridge objective
    ``R(β) = min_α ||y - Kα - α0||² + λ αᵀKα`` (centred, unit-norm y, so
    ``R`` is a fraction of ``Σ (y - ȳ)²``) is recomputed with features
    removed (β_j = 0, α refitted).  Features are removed in increasing order
    of their single-feature cost ``R(β_{-j}) - R(β)`` as long as the joint
    increase stays below ``prune_tol``.

    Why: the path keeps every feature that lowers the training objective at
    all.  On noise-free data (Friedman #1) the irrelevant features enter
    with weights only 2-20 times below those of relevant linear ones, so no
    tolerance on β separates them, while removing all five of them costs
    ~1e-4 of the variance of y and removing any relevant one 5e-2 or more.

    Parameters
    ----------
    path : FeaturePath
        An L1KR path (its ``extra`` holds the standardised training data).
    beta : ndarray of shape (n_features,)
        β at the point (e.g. from :func:`l1kr_path_at`).
    lambda1 : float
        λ at the point.
    prune_tol : float, default=1e-3
        Largest joint increase of the objective, as a fraction of
        ``Σ (y - ȳ)²``; 0 keeps every feature with β > 0.

    Returns
    -------
    beta : ndarray of shape (n_features,)
        β with the removed features set to 0.
    increase : float
        ``R(pruned) - R(β)``, below ``prune_tol``.

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs import l1kr_path
    >>> from numkfs.datasets import make_friedman_noise
    >>> from numkfs.methods.l1kr import l1kr_path_at, l1kr_prune
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> path = l1kr_path(X, y, lambda1=0.01, D_max=20.0)
    >>> beta, lam = l1kr_path_at(path, [20.0])
    >>> pruned, increase = l1kr_prune(path, beta[0], lam[0])
    >>> bool(increase < 1e-3 and (pruned > 0).sum() <= (beta[0] > 0).sum())
    True
    """
    lam = lambda1
    beta = np.asarray(beta, dtype=float)
    active = np.flatnonzero(beta > 0)
    if prune_tol <= 0 or active.size == 0:
        return beta.copy(), 0.0
    base = _ridge_objective(path, beta, lam)

    def without(b, j):
        b = b.copy()
        b[j] = 0.0
        return b

    cost = np.array([_ridge_objective(path, without(beta, j), lam) - base for j in active])
    out, increase = beta.copy(), 0.0
    order = np.argsort(cost, kind="stable")
    for k, j in enumerate(active[order]):
        trial = without(out, j)
        inc = float(cost[order[0]]) if k == 0 else _ridge_objective(path, trial, lam) - base  # first: its own cost
        if inc >= prune_tol:
            break
        out, increase = trial, max(inc, 0.0)
    return out, float(increase)


def l1kr_path_at(path: FeaturePath, D) -> tuple:
    """β and λ at budgets ``D``, interpolated linearly along a traced path.

    Where the path crosses a value of D several times (it turned back), the
    crossing with the lowest interpolated training objective is used (the
    best of the stationary points the path found for that D).  Beyond the
    last point the last point is used (the stationary point, when the path
    ended there).

    Parameters
    ----------
    path : FeaturePath
        A path of :func:`l1kr_path` as traced.
    D : array-like of shape (n_D,)
        Budgets ``||β||₁``.

    Returns
    -------
    beta : ndarray of shape (n_D, n_features)
    lam : ndarray of shape (n_D,)

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs import l1kr_path
    >>> from numkfs.datasets import make_friedman_noise
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> path = l1kr_path(X, y, D_max=20.0)
    >>> from numkfs.methods.l1kr import l1kr_path_at
    >>> beta, lam = l1kr_path_at(path, [5.0, 20.0])
    >>> beta.shape, [round(float(b), 6) for b in beta.sum(axis=1)]
    ((2, 10), [5.0, 20.0])
    """
    betas, lams, _ = _path_at(path, D)
    return betas, lams


def _path_at(path, D):
    """:func:`l1kr_path_at` and, per D, the stored points it used (i, j)."""
    D = np.atleast_1d(np.asarray(D, dtype=float))
    G, W, O = path.grid, path.weights, path.objective
    L = path.extra["lambda"]
    betas = np.empty((D.size, W.shape[1]))
    lams = np.empty(D.size)
    used = np.empty((D.size, 2), dtype=int)
    lo_seg, hi_seg = np.minimum(G[:-1], G[1:]), np.maximum(G[:-1], G[1:])
    for k, Dk in enumerate(D):
        segs = np.flatnonzero((lo_seg <= Dk) & (Dk <= hi_seg))
        if segs.size == 0:
            j = int(np.argmin(np.abs(G - Dk))) if Dk < G.max() else len(G) - 1
            betas[k], lams[k] = W[j], L[j]
            used[k] = j
            continue
        best = None
        for sgi in segs:
            dg = G[sgi + 1] - G[sgi]
            t = 0.0 if dg == 0 else (Dk - G[sgi]) / dg
            o = (1 - t) * O[sgi] + t * O[sgi + 1]
            if best is None or o < best[0]:
                best = (o, sgi, t)
        _, sgi, t = best
        betas[k] = (1 - t) * W[sgi] + t * W[sgi + 1]
        lams[k] = (1 - t) * L[sgi] + t * L[sgi + 1]
        used[k] = (sgi, sgi + 1)
    return betas, lams, used


def l1kr_predict(path: FeaturePath, X_new, D=None, index=None) -> np.ndarray:
    """Predictions (original units of y) of the models along an L1KR path.

    Parameters
    ----------
    path : FeaturePath
        A path of :func:`l1kr_path` (traced or read at a grid).
    X_new : array-like of shape (n_new, n_features)
        The rows to predict, in the units of the training X.
    D : array-like, optional
        Budgets to read the path at (:func:`l1kr_path_at`, α recomputed).
    index : int or array-like of int, optional
        Stored points of the path (β and λ as stored, α recomputed).  With
        neither ``D`` nor ``index``: every point of the path.

    Returns
    -------
    ndarray of shape (n_points, n_new)
        One row per budget or point; (n_new,) for one int ``index``.

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs import l1kr_path
    >>> from numkfs.datasets import make_friedman_noise
    >>> from numkfs.methods.l1kr import l1kr_predict
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> gp = l1kr_path(X, y, D_max=20.0, grid=[5.0, 20.0])
    >>> l1kr_predict(gp, X[:3]).shape, l1kr_predict(gp, X[:3], index=1).shape
    ((2, 3), (3,))
    """
    ex = path.extra
    Z = (np.asarray(X_new, dtype=float) - ex["x_mean"]) / ex["x_scale"]
    if index is not None and np.ndim(index) == 0:
        beta = path.weights[index]
        _, _, alpha = l1kr_objective(path, beta, ex["lambda"][index])
        return _predict_one(path, Z, beta, alpha)
    if D is None:
        index = np.arange(path.n_points) if index is None else np.asarray(index, dtype=int)
        betas, lams = path.weights[index], np.asarray(ex["lambda"])[index]
    else:
        betas, lams = l1kr_path_at(path, D)
    out = np.empty((betas.shape[0], Z.shape[0]))
    for k in range(betas.shape[0]):
        _, _, alpha = l1kr_objective(path, betas[k], lams[k])
        out[k] = _predict_one(path, Z, betas[k], alpha)
    return out


def l1kr_model_predict(path: FeaturePath, X_new, beta, alpha) -> np.ndarray:
    """Predictions (original units of y) of the kernel model (β, α) on the
    standardised training data of an L1KR path.

    ``ŷ = ȳ + s_y (K(β; Z, X_s) α + α₀)`` with ``Z`` the standardised
    ``X_new`` and ``α₀ = -mean(K(β) α)`` (the centred y has mean 0).

    Parameters
    ----------
    path : FeaturePath
        A path of :func:`l1kr_path` (its ``extra`` holds the standardised
        training data and the scales).
    X_new : array-like of shape (n_new, n_features)
        The rows to predict, in the units of the training X.
    beta : ndarray of shape (n_features,)
        The kernel weights β.
    alpha : ndarray of shape (n_samples,)
        The dual coefficients α (e.g. from :func:`l1kr_objective`).

    Returns
    -------
    ndarray of shape (n_new,)

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs import l1kr_path
    >>> from numkfs.datasets import make_friedman_noise
    >>> from numkfs.methods.l1kr import l1kr_model_predict, l1kr_objective
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> path = l1kr_path(X, y, D_max=20.0)
    >>> beta, lam = path.weights[-1], path.extra["lambda"][-1]
    >>> alpha = l1kr_objective(path, beta, lam)[2]
    >>> l1kr_model_predict(path, X[:3], beta, alpha).shape
    (3,)
    """
    ex = path.extra
    Z = (np.asarray(X_new, dtype=float) - ex["x_mean"]) / ex["x_scale"]
    return _predict_one(path, Z, np.asarray(beta, dtype=float), np.asarray(alpha, dtype=float))


def _predict_one(path, Z, beta, alpha):
    ex = path.extra
    Xs = ex["X_train"]
    K = ard_kernel(Xs, beta, ex["kernel"], ex["degree"])
    a0 = -float((K @ alpha).mean())  # mean of y_s is 0
    Kz = ard_kernel(Xs, beta, ex["kernel"], ex["degree"], Z=Z)
    return ex["y_mean"] + ex["y_scale"] * (Kz @ alpha + a0)


def _grid_models(path, D, prune_tol):
    """Per budget D: β read on ``path`` (:func:`l1kr_path_at`), pruned
    (:func:`l1kr_prune`), λ and the stored points used."""
    betas, lams, used = _path_at(path, D)
    if prune_tol > 0:
        # small dense solves: the thread policy of the path itself (threaded
        # BLAS on a hundred rows is slower than one thread on a loaded machine)
        with limit_threads(*thread_limits("l1kr", path.extra["X_train"].shape[0])):
            for k in range(betas.shape[0]):
                betas[k] = l1kr_prune(path, betas[k], lams[k], prune_tol)[0]
    return betas, lams, used
