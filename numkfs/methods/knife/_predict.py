"""Decision values of fitted KNIFE models (:mod:`numkfs.methods.knife`)."""
from __future__ import annotations

import numpy as np

from ...kernels.weighted import weighted_kernel
from ...paths import FeaturePath



def knife_decision_function(X_fit, X, weights, alpha, intercept, params):
    r"""Decision values :math:`K_w(X, X_{fit})\alpha + \alpha_0` of one fitted KNIFE model.

    Parameters
    ----------
    X_fit : ndarray (n, p)
        The training data of the fit (with the Nyström approximation, the
        rows ``params["landmarks"]`` of it are used).
    X : array-like (m, p)
        Data, one row per sample and one column per feature.
    weights : ndarray (p,)
        Feature weights w.
    alpha : ndarray (n,) or (n_landmarks,)
        Kernel coefficients.
    intercept : float
        α0 (0 for regression).
    params : dict
        The kernel settings: ``kernel``, ``gamma``, ``degree``, ``coef0``
        and optionally ``landmarks`` (``KNIFEResult.params``, or
        ``extra["params"]`` of a path with the point's ``gamma``).

    Returns
    -------
    ndarray (m,)

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs.methods.knife import knife, knife_decision_function
    >>> X, y, _ = make_sinusoid(n_samples=40, random_state=0)
    >>> res = knife(X, y, lambda2=5.0, random_state=0)
    >>> d = knife_decision_function(X, X[:3], res.weights, res.alpha, res.intercept, res.params)
    >>> bool(np.allclose(d, res.decision_function(X[:3])))
    True
    """
    X = np.asarray(X, dtype=float)
    if params.get("landmarks") is not None:  # Nyström: K_w(X, landmarks) beta
        X_fit = X_fit[params["landmarks"]]
    act = np.flatnonzero(weights > 0)
    Xa = np.ascontiguousarray(X[:, act])
    Ya = np.ascontiguousarray(X_fit[:, act])
    Kx = weighted_kernel(Xa, weights[act], params["kernel"], Y=Ya, gamma=float(params["gamma"]),
                         degree=params["degree"], coef0=params["coef0"])
    return Kx @ alpha + intercept


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
    out = np.column_stack([knife_decision_function(X_fit, X, path.weights[i], path.extra["alpha"][i],
                                                   path.extra["intercept"][i], {**params, "gamma": gammas[i]})
                           for i in idx])
    return out[:, 0] if index is not None else out
