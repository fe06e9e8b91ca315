"""How the resampling selectors reach L1KR's path (its row's ``path_settings``
and ``resample_path`` in ``numkfs._registry``).

L1KR traces its path adaptively in the budget D; a resampling selector's
path is traced in full (no grid of its own) with one λ, and read at the
grid by :func:`~numkfs.methods.l1kr.l1kr_path_at`.  As in the folds of
:class:`~numkfs.L1KRRegressorCV`, a path on ``m`` of the ``n`` rows is
traced with ``λ m / n``, up to ``D m / n`` of the grid's largest D, and
read at ``D m / n``.
"""
from __future__ import annotations

import numpy as np

from ...paths import FeaturePath
from .evaluate import l1kr_path_at
from .path import l1kr_path

__all__ = ["path_settings", "resample_path"]

#: Settings of every resampled path: the traced path, read at the grid by l1kr_path_at.
FIXED_SETTINGS = {"grid": None, "n_grid": None}

#: At most this many points of the path's own grid when no grid is given.
MAX_GRID = 50


def path_settings(settings, *, selector, task, y, params, purpose):
    """L1KR's path settings for a resampling selector: the path traced in
    full (``grid`` and ``n_grid`` refused in ``params``) with one λ1."""
    for name, value in FIXED_SETTINGS.items():
        if name in params:
            raise ValueError(f"l1kr_path's {name!r} is set by the resampling ({name}={value!r}: the path is traced "
                             f"in full and read at the selector's own grid); leave it out of params and give the "
                             f"resampling selector's grid instead.")
    out = {**settings, **FIXED_SETTINGS}
    values = np.atleast_1d(np.asarray(out.get("lambda1", 0.0), dtype=float)).ravel()
    if values.size != 1:
        raise ValueError(f"l1kr_path in a resampling selector takes one lambda1; got {out['lambda1']!r}.")
    if "lambda1" in out:
        out["lambda1"] = float(values[0])
    return out


def resample_path(row, X, y, settings, *, task, grid, ratio, feature_names):
    """L1KR's path on the rows given, traced with λ1 and ``D_max`` scaled by
    ``ratio`` and read at ``grid * ratio`` (no grid: at most ``MAX_GRID``
    points of its own grid)."""
    kw = dict(settings)
    if kw.get("lambda1") is not None:
        kw["lambda1"] = kw["lambda1"] * ratio
    read_grid = None if grid is None else grid * ratio
    if read_grid is not None and read_grid.size:
        kw["D_max"] = float(read_grid.max()) if kw.get("D_max") is None else kw["D_max"] * ratio
    path = l1kr_path(X, y, feature_names=feature_names, **kw)
    if read_grid is None:  # the grid of the adaptive path itself, at most MAX_GRID points
        read_grid = np.unique(path.grid)
        if read_grid.size > MAX_GRID:
            read_grid = read_grid[np.unique(np.linspace(0, read_grid.size - 1, MAX_GRID).round().astype(int))]
        grid = read_grid
    weights = l1kr_path_at(path, read_grid)[0]
    scalars = {k: v for k, v in path.extra.items() if isinstance(v, (str, int, float, np.number))}
    return FeaturePath(grid=grid, weights=weights, grid_name=path.grid_name, feature_names=path.feature_names,
                       method=path.method, extra=scalars, tol=path.tol)
