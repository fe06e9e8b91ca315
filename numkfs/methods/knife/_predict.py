"""Decision values of fitted KNIFE models (:mod:`numkfs.methods.knife`)."""
from __future__ import annotations

import numpy as np

from ...kernels.weighted import weighted_kernel
from ...paths import FeaturePath



def _decision(X_fit, X, w, alpha, a0, params):
    X = np.asarray(X, dtype=float)
    if params.get("landmarks") is not None:  # Nyström: K_w(X, landmarks) beta
        X_fit = X_fit[params["landmarks"]]
    act = np.flatnonzero(w > 0)
    Xa = np.ascontiguousarray(X[:, act])
    Ya = np.ascontiguousarray(X_fit[:, act])
    Kx = weighted_kernel(Xa, w[act], params["kernel"], Y=Ya, gamma=float(params["gamma"]),
                         degree=params["degree"], coef0=params["coef0"])
    return Kx @ alpha + a0


def path_decision_function(path: FeaturePath, X_fit, X, index=None):
    """Decision values of the models along a KNIFE path for new points.

    Parameters
    ----------
    path : FeaturePath
        From :func:`knife_path` (its ``extra`` holds α, α0 and the kernel).
    X_fit : ndarray (n, p)
        The training data of the path.
    X : ndarray (m, p)
        Data, one row per sample and one column per feature.
    index : int, optional
        One path point; default every point.

    Returns
    -------
    ndarray (m,) for one point, else (m, n_points)
    """
    params = path.extra["params"]
    gammas = path.extra.get("gamma", np.full(path.n_points, params["gamma"]))
    X_fit = np.asarray(X_fit, dtype=float)
    idx = range(path.n_points) if index is None else [index]
    out = np.column_stack([_decision(X_fit, X, path.weights[i], path.extra["alpha"][i],
                                     path.extra["intercept"][i], {**params, "gamma": gammas[i]}) for i in idx])
    return out[:, 0] if index is not None else out
