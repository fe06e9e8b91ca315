"""How the resampling selectors reach KNIFE's path (its row's ``path_settings``,
``resample_path`` and ``stability_walk`` in ``numkfs._registry``).

On the rows given, X is standardised and a numeric y centred, as KNIFE's
estimators do; class labels get KNIFEClassifierCV's loss and λ1 (the
selection :func:`numkfs.select` runs, which also keeps the subsample fits of
stability selection cheap); more than two classes get one-vs-rest paths on
one shared grid, a feature's weight the largest of its one-vs-rest weights.
A fitted estimator given as selector lends its bandwidth ``gamma_``.
"""
from __future__ import annotations

import numpy as np

from ..._preprocessing import Standardizer
from ...paths import FeaturePath, support_mask
from ._path import knife_ovr_paths, knife_path

__all__ = ["path_settings", "resample_path", "walked_points"]

#: On class labels, for a method given by name: KNIFEClassifierCV's loss and λ1.
CLASSIFICATION_SETTINGS = {"loss": "squared_hinge", "lambda1": 3.0}

#: For :class:`numkfs.StabilitySelection`, on all rows and every subsample: a 20-point λ2 grid, not refined
#: (its region Λ needs no finer grid, and each fit costs less; see the trust guide).
STABILITY_SETTINGS = {"n_grid": 20, "max_refine": 0}

#: The subsamples of stability selection skip the points where the full-data path keeps more than this
#: many times q features (outside the region Λ).
WALK_FROM = 2.0


def path_settings(settings, *, selector, task, y, params, purpose):
    """KNIFE's path settings for a resampling selector: for a method given by
    name, KNIFEClassifierCV's loss and λ1 on class labels and the shorter
    grid of stability selection; for a fitted estimator, its ``gamma_``
    (``params`` given explicitly win)."""
    out = dict(settings)
    if isinstance(selector, str):
        own = {**(CLASSIFICATION_SETTINGS if task == "classification" else {}),
               **(STABILITY_SETTINGS if purpose == "stability" else {})}
        out.update({name: value for name, value in own.items() if name not in params})
    elif hasattr(selector, "gamma_") and "gamma" not in params:
        out["gamma"] = selector.gamma_
    return out


def resample_path(row, X, y, settings, *, task, grid, ratio, feature_names):
    """KNIFE's path on the rows given: X standardised and a numeric y centred
    on them; one-vs-rest paths on a shared grid for more than two classes."""
    X = Standardizer().fit_transform(X)
    if task == "regression":
        y = y.astype(float) - float(np.mean(y))
    kw = dict(settings)
    if grid is not None:
        kw["grid"] = grid
    classes = np.unique(y) if task == "classification" else ()
    if len(classes) <= 2:
        return knife_path(X, y, feature_names=feature_names, **kw)
    targets = [np.where(y == c, 1.0, -1.0) for c in classes]
    paths = knife_ovr_paths(X, targets, feature_names=feature_names, **kw)
    return FeaturePath(grid=paths[0].grid, weights=np.max([p.weights for p in paths], axis=0),
                       grid_name=paths[0].grid_name, feature_names=paths[0].feature_names,
                       method=paths[0].method, extra=dict(paths[0].extra))


def walked_points(path, q, walk_from=WALK_FROM):
    """The grid points a subsample walks: its first, then from the first
    point where ``path`` (the full-data path, dense end first) keeps at most
    ``walk_from * q`` features.

    KNIFE's λ2 path is walked from its dense end with warm starts, and its
    zero weights stay zero: a subsample walks the path's first point (the
    start every walk shares), then jumps to that point and walks on from
    there, warm-started from the point before; the points in between are not
    walked (they count as outside the region Λ).

    Parameters
    ----------
    path : FeaturePath
        The full-data path.
    q : float
        The region's bound on the average number of features selected.
    walk_from : float, default=WALK_FROM
        The multiple of q.

    Returns
    -------
    ndarray of bool of shape (n_grid,) or None
        None when every point is walked (no point is skipped).

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.paths import FeaturePath
    >>> from numkfs.methods.knife._resampling import walked_points
    >>> w = np.array([[1.0] * 6, [1.0] * 5 + [0.0], [1.0] * 2 + [0.0] * 4, [0.0] * 6])
    >>> walked_points(FeaturePath(grid=np.arange(4.0), weights=w, tol=1e-6), 1.0).tolist()
    [True, False, True, True]
    """
    sizes = support_mask(path.weights, path.tol).sum(axis=1)
    few = np.flatnonzero(sizes <= walk_from * q)
    start = int(few[0]) if few.size else sizes.size - 1
    if start <= 1:
        return None
    walked = np.zeros(sizes.size, dtype=bool)
    walked[0] = True
    walked[start:] = True
    return walked

