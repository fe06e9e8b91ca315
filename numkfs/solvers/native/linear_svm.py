r"""A linear SVM with the squared hinge loss, by Newton's method in the primal.

.. math::

    \min_{w}\ \tfrac12 \|w\|^2 + C \sum_i \max\big(0,\ 1 - y_i \tilde x_i^\top w\big)^2,
    \qquad \tilde x_i = (x_i, s),\ y_i \in \{-1, 1\}

(the intercept is ``s`` times the last weight and is penalised like
scikit-learn's ``LinearSVC(loss="squared_hinge", intercept_scaling=s)``,
whose optimum this is).  The objective is convex, piecewise quadratic and
continuously differentiable; with the active set :math:`A = \{i : y_i
\tilde x_i^\top w < 1\}` its gradient is :math:`w - 2C \tilde X_A^\top (y_A -
\tilde X_A w)` and its generalised Hessian :math:`I + 2C \tilde X_A^\top
\tilde X_A`.  Each Newton step solves one (R+1) x (R+1) system and is
damped by backtracking (Armijo); when the active set stops changing the
step is exact, so the iteration ends in a few steps.  It suits n >> R
(low-rank kernel features) and warm starts along a path, where
scikit-learn's trust-region solver restarts from zero each time
(Keerthi & DeCoste 2005; Chapelle 2007).

References
----------
S. S. Keerthi and D. DeCoste, "A modified finite Newton method for fast
solution of large scale linear SVMs", JMLR 6, 2005.
O. Chapelle, "Training a support vector machine in the primal", Neural
Computation 19(5), 2007.
"""
from __future__ import annotations

import warnings

import numpy as np

__all__ = ["squared_hinge_svm"]


def _objective(w, X, y, C, s):
    f = X @ w[:-1] + s * w[-1]
    m = np.maximum(0.0, 1.0 - y * f)
    return 0.5 * float(w @ w) + C * float(m @ m), f


def squared_hinge_svm(X, y, C: float = 1.0, *, intercept_scaling: float = 1.0, w0=None, tol: float = 1e-10,
                      max_iter: int = 100):
    r"""Fit a binary linear SVM (squared hinge loss) by Newton's method in the primal.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Features.
    y : ndarray of shape (n_samples,)
        Labels in {-1, 1}.
    C : float, default=1.0
        Penalty of the losses (> 0).
    intercept_scaling : float, default=1.0
        The constant feature ``s`` whose weight gives the intercept
        ``s * w[-1]`` (penalised like the other weights, as in liblinear).
    w0 : ndarray of shape (n_features + 1,), optional
        Warm start.
    tol : float, default=1e-10
        Stop when the gradient's norm is below ``tol`` times the norm of
        the gradient at zero (``C ‖2 X̃ᵀy‖``, the scale of the problem).
    max_iter : int, default=100
        Newton steps at most; a ``ConvergenceWarning`` when reached.

    Returns
    -------
    w : ndarray of shape (n_features + 1,)
        The weights, the last one the intercept's (intercept ``s * w[-1]``).
    n_iter : int
        Newton steps taken.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.svm import LinearSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3)); y = np.where(X[:, 0] + 0.5 * rng.standard_normal(200) > 0, 1, -1)
    >>> w, _ = squared_hinge_svm(X, y, C=1.0)
    >>> ref = LinearSVC(C=1.0, loss="squared_hinge", dual=False, tol=1e-12).fit(X, y)
    >>> bool(np.allclose(w[:-1], ref.coef_.ravel(), atol=1e-6)), bool(np.isclose(w[-1], ref.intercept_[0], atol=1e-6))
    (True, True)
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, R = X.shape
    s = float(intercept_scaling)
    w = np.zeros(R + 1) if w0 is None else np.array(w0, dtype=np.float64)
    scale = 2.0 * C * np.sqrt(float(np.sum((X.T @ y) ** 2)) + (s * y.sum()) ** 2)
    J, f = _objective(w, X, y, C, s)
    it = 0
    while True:
        act = y * f < 1.0
        XA = X[act]
        r = y[act] - f[act]  # y (1 - y f) with y² = 1
        g = w.copy()
        g[:-1] -= 2.0 * C * (XA.T @ r)
        g[-1] -= 2.0 * C * s * r.sum()
        if np.linalg.norm(g) <= tol * max(scale, 1e-300):
            break
        if it >= max_iter:
            from sklearn.exceptions import ConvergenceWarning

            warnings.warn(f"squared_hinge_svm did not converge within max_iter={max_iter} Newton steps "
                          f"(gradient norm {np.linalg.norm(g):.1e}).", ConvergenceWarning, stacklevel=2)
            break
        it += 1
        H = np.empty((R + 1, R + 1))
        H[:R, :R] = XA.T @ XA
        H[:R, R] = H[R, :R] = s * XA.sum(axis=0)
        H[R, R] = s * s * XA.shape[0]
        H *= 2.0 * C
        H[np.diag_indices(R + 1)] += 1.0
        d = -np.linalg.solve(H, g)
        slope = float(g @ d)
        t = 1.0
        while True:
            Jn, fn = _objective(w + t * d, X, y, C, s)
            if Jn <= J + 1e-4 * t * slope or t < 1e-12:
                break
            t *= 0.5
        if not Jn < J:  # no decrease at round-off: the optimum to working precision
            break
        w, J, f = w + t * d, Jn, fn
    return w, it
