"""The relaxed refit: each path point's support scored without the method's penalty.

A method's own CV score judges a point by the method's penalised model, and
along most paths that model predicts about as well with a few noise
features as without them (the weights of the noise features are small, so
they barely hurt): the CV curve is flat over a stretch of the path that
keeps noise features, and neither ``"best"`` nor ``"1se"`` leaves it.  The relaxed refit asks instead how well the *features* of each
point predict: each distinct support of the path is refitted by one common
learner without the method's penalty and cross-validated on the same
folds, so a noise feature costs what it costs any learner that uses it.

The learner (:func:`relaxed_cv_scores`): kernel ridge regression with the
Gaussian kernel ``exp(-||x - x'||^2 / |S|)`` on the support ``S``, the
features standardised on each fold's training rows (the bandwidth of
scikit-learn's ``gamma="scale"`` for standardised features), an intercept,
and the ridge chosen on each training fold by its exact leave-one-out error
over :data:`RELAXED_ALPHAS` (one eigendecomposition per fold and support).
Classes are coded ±1 (one column per class beyond two) and scored by the
held-out hinge loss; regression by the held-out squared error; both higher
is better, as every score of :mod:`numkfs.model_selection`.

:func:`numkfs.select` chooses on these scores with the rules
``"relaxed_1se"`` and ``"relaxed_best"`` (:data:`numkfs.model_selection.RULES`).
"""
from __future__ import annotations

import numpy as np

from ._threads import limit_threads
from .model_selection import choose_from_scores, fold_data, make_cv, path_scores

__all__ = ["RELAXED_ALPHAS", "relaxed_choice", "relaxed_cv_scores"]

#: Ridges tried on each training fold (added to a kernel matrix whose diagonal is 1),
#: the one with the smallest exact leave-one-out squared error kept.
RELAXED_ALPHAS = np.logspace(-3, 1, 9)


def _rbf(A, B, gamma):
    """Gaussian kernel matrix between the rows of ``A`` and ``B``."""
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    return np.exp(-gamma * np.maximum(d, 0.0))


def _ridge_loo_predict(Xtr, Ttr, Xte, gamma):
    """Held-out predictions of kernel ridge on ``(Xtr, Ttr)`` (targets in columns, intercept by
    centring), the ridge of :data:`RELAXED_ALPHAS` with the smallest exact leave-one-out error."""
    mu = Ttr.mean(axis=0)
    T = Ttr - mu
    e, V = np.linalg.eigh(_rbf(Xtr, Xtr, gamma))
    e = np.maximum(e, 0.0)
    VT = V.T @ T
    V2 = V * V
    best, coef = np.inf, None
    for a in RELAXED_ALPHAS:
        f = e / (e + a)
        resid = T - V @ (f[:, None] * VT)
        h = V2 @ f  # the hat matrix's diagonal
        loo = float(np.mean((resid / (1.0 - h)[:, None]) ** 2))
        if loo < best:
            best, coef = loo, V @ (VT / (e + a)[:, None])
    return _rbf(Xte, Xtr, gamma) @ coef + mu


def relaxed_cv_scores(X, y, supports, cv=5, *, classifier: bool):
    """Held-out scores of each support refitted by one kernel ridge (the module's learner).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The data, unstandardised (each fold standardises its training rows).
    y : ndarray of shape (n_samples,)
        The target: real values, or class labels when ``classifier``.
    supports : ndarray of bool of shape (n_points, n_features)
        One support per path point; equal supports are fitted once.
    cv : int or splitter, default=5
        The folds, as :func:`numkfs.model_selection.make_cv` makes them (an
        int: the same unshuffled folds as the method's own CV).
    classifier : bool
        Classes (held-out hinge loss, stratified folds) or regression
        (held-out squared error).

    Returns
    -------
    scores : ndarray of shape (n_points, n_folds)
        Higher is better; an empty support predicts the training mean.
    fold_sizes : ndarray of int of shape (n_folds,)

    References
    ----------
    The relaxed refit of a selection path: N. Meinshausen, "Relaxed Lasso",
    Computational Statistics & Data Analysis 52(1), 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.relaxed import relaxed_cv_scores
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 3))
    >>> y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(60)
    >>> S, _ = relaxed_cv_scores(X, y, np.array([[True, False, False], [False, True, True]]), classifier=False)
    >>> bool(S[0].mean() > S[1].mean())
    True
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    supports = np.atleast_2d(np.asarray(supports, dtype=bool))
    splits = list(make_cv(cv, y, classifier=classifier).split(X, y))
    sizes = np.array([len(te) for _, te in splits], dtype=np.int64)
    if classifier:
        classes = np.unique(y)
        cols = classes[1:] if classes.size == 2 else classes
        T = np.column_stack([np.where(y == c, 1.0, -1.0) for c in cols])
    else:
        T = np.asarray(y, dtype=float)[:, None]
    memo, out = {}, np.empty((supports.shape[0], len(splits)))
    # one BLAS thread: the n x n eigendecompositions are small, and on a loaded machine threaded BLAS
    # takes many times longer on them than one thread
    with limit_threads(blas_threads=1):
        _fill(out, memo, X, y, T, supports, splits, classifier, classes if classifier else None)
    return out, sizes


def _fill(out, memo, X, y, T, supports, splits, classifier, classes):
    """The rows of :func:`relaxed_cv_scores`' result, equal supports fitted once."""
    for i, s in enumerate(supports):
        key = s.tobytes()
        if key not in memo:
            row = []
            for tr, te in splits:
                if s.any():
                    Xtr, Xte = fold_data(X[:, s], tr, te)
                    pred = _ridge_loo_predict(Xtr, T[tr], Xte, 1.0 / s.sum())
                else:
                    pred = np.repeat(T[tr].mean(axis=0)[None, :], len(te), axis=0)
                if not classifier:
                    row.append(float(path_scores(y[te], pred, "neg_mean_squared_error")[0]))
                else:
                    decision = pred if pred.shape[1] == 1 else pred.T[:, :, None]
                    row.append(float(path_scores(y[te], decision, "neg_loss", classes=classes, loss="hinge")[0]))
            memo[key] = row
        out[i] = memo[key]


def relaxed_choice(path, X, y, cv=5, *, classifier: bool, n_se: float = 1.0):
    """The point of ``path`` chosen on the relaxed refit's scores.

    Parameters
    ----------
    path : FeaturePath
        The method's path fitted on ``X, y``.
    X, y, cv, classifier
        As :func:`relaxed_cv_scores`.
    n_se : float, default=1.0
        The sparsest point whose mean relaxed score is within ``n_se``
        standard errors of the best (1: ``"relaxed_1se"``, 0:
        ``"relaxed_best"``); ties go to the sparser point
        (:func:`numkfs.model_selection.choose_from_scores`).

    Returns
    -------
    index : int
    scores : ndarray of shape (n_points, n_folds)
    fold_sizes : ndarray of int of shape (n_folds,)

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import FeaturePath
    >>> from numkfs.relaxed import relaxed_choice
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 3))
    >>> y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(60)
    >>> W = np.array([[1.0, 0.0, 0.0], [1.0, 0.2, 0.1]])
    >>> relaxed_choice(FeaturePath([1.0, 0.1], W), X, y, classifier=False)[0]
    0
    """
    supports = np.array([path.selected(i) for i in range(path.n_points)])
    scores, sizes = relaxed_cv_scores(X, y, supports, cv, classifier=classifier)
    return choose_from_scores(path, scores, sizes, n_se), scores, sizes
