"""Held-out scores, higher is better: the scores each method offers
(:data:`SCORINGS`, :func:`check_scoring`), one score per path point from
the decision values of a fold (:func:`path_scores`), and the linear SVM
NMMKL's selections are scored with (:func:`linear_svm_scores`).
:mod:`numkfs.model_selection` states the contract and exports these names.
"""
from __future__ import annotations

import numpy as np

from ._folds import fold_data
from ._registry import RowTable


__all__ = ["SCORINGS", "check_scoring", "linear_svm_scores", "path_scores"]


#: The held-out scores each method offers, per task; the first is its default
#: (each method's ``scorings`` in ``numkfs._registry``).
#: :func:`check_scoring` refuses any other (the one rule for every method).
SCORINGS = RowTable(lambda row: dict(row.scorings))


def check_scoring(method: str, task: str, scoring: str | None) -> str:
    """The score ``method`` uses for ``task``: ``scoring``, or its default when None.

    Parameters
    ----------
    method : str
        A key of :data:`SCORINGS` (any case).
    task : {"regression", "classification"}
        The task.
    scoring : str or None
        The score asked for.

    Returns
    -------
    str
        ``scoring``, or the method's default score for ``task``.

    Raises
    ------
    ValueError
        When the method does not offer ``scoring`` for ``task``; the message
        names the scores it does offer.

    Examples
    --------
    >>> from numkfs.model_selection import check_scoring
    >>> check_scoring("nmmkl", "classification", None), check_scoring("knife", "classification", "accuracy")
    ('neg_hinge_loss', 'accuracy')
    """
    offered = SCORINGS[str(method).lower()][task]
    if scoring is None:
        return offered[0]
    if scoring not in offered:
        raise ValueError(f"method {method!r} does not offer scoring={scoring!r} for {task}; it offers "
                         f"{', '.join(map(repr, offered))}.")
    return scoring


def _loss_values(margin, loss: str, delta: float = 1.0):
    """Per-row classification losses of the margins ``y·f`` (y in {-1, +1})."""
    if loss == "logistic":
        return np.logaddexp(0.0, -margin)
    if loss == "squared_hinge":
        return np.maximum(0.0, 1.0 - margin) ** 2
    if loss == "hinge":
        return np.maximum(0.0, 1.0 - margin)
    if loss == "huberized_hinge":
        t = 1.0 - margin
        return np.where(t <= 0, 0.0, np.where(t <= delta, t * t / (2 * delta), t - delta / 2))
    raise ValueError(f"unknown classification loss {loss!r}.")


def path_scores(y, decision, scoring: str, *, classes=None, loss: str | None = None, delta: float = 1.0):
    """Held-out scores (higher is better) of every path point.

    Parameters
    ----------
    y : array of shape (n_test,)
        True targets (class labels for classification).
    decision : ndarray
        Predictions along the path: shape (n_test, n_points) for regression
        and binary problems (decision values, positive meaning
        ``classes[1]``), (n_problems, n_test, n_points) for one-vs-rest
        problems (one decision function per class).
    scoring : str
        ``"neg_mean_squared_error"`` (regression), ``"accuracy"``,
        ``"neg_log_loss"`` (the deviance of the logistic link, per row) or
        ``"neg_loss"`` (the method's own loss ``loss`` of the margins,
        summed over the one-vs-rest problems, per row).
    classes : array, optional
        Class labels in the order of the decision functions (classification).
    loss : str, optional
        The method's loss for ``"neg_loss"``: ``"squared_hinge"``,
        ``"huberized_hinge"``, ``"hinge"`` or ``"logistic"``.
    delta : float, default=1.0
        Width of the huberized hinge.

    Returns
    -------
    ndarray of shape (n_points,)

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import path_scores
    >>> y = np.array([1.0, 2.0])
    >>> path_scores(y, np.array([[1.0, 0.0], [2.0, 0.0]]), "neg_mean_squared_error").tolist()
    [-0.0, -2.5]
    """
    decision = np.asarray(decision, dtype=float)
    y = np.asarray(y)
    if scoring == "neg_mean_squared_error":
        return -np.mean((decision - y.astype(float)[:, None]) ** 2, axis=0)
    classes = np.asarray(classes)
    if decision.ndim == 2:  # binary: one decision function
        D = decision[None]
        signs = np.where(y == classes[1], 1.0, -1.0)[None, :, None]
    else:
        D = decision
        signs = np.stack([np.where(y == c, 1.0, -1.0) for c in classes])[:, :, None]
    if scoring == "accuracy":
        pred = (D[0] > 0).astype(int) if D.shape[0] == 1 else np.argmax(D, axis=0)
        truth = np.searchsorted(classes, y) if D.shape[0] > 1 else (y == classes[1]).astype(int)
        return np.mean(pred == truth[:, None], axis=0)
    if scoring == "neg_log_loss":
        return -np.mean(np.sum(np.logaddexp(0.0, -signs * D), axis=0), axis=0)
    if scoring == "neg_loss":
        if loss is None:
            raise ValueError("scoring='neg_loss' needs the method's loss.")
        return -np.mean(np.sum(_loss_values(signs * D, loss, delta), axis=0), axis=0)
    raise ValueError(f"unknown scoring {scoring!r}; use 'neg_mean_squared_error', 'neg_log_loss', "
                     "'neg_loss' or 'accuracy'.")


def linear_svm_scores(X, y, train, test, masks, scoring="neg_hinge_loss"):
    """Held-out scores (higher is better) of a linear SVM on each selection.

    For each boolean mask, ``LinearSVC(C=1)`` on those columns, standardised
    on the training rows only (:func:`numkfs.model_selection.fold_data`),
    fitted on ``train`` and scored on ``test``: the negative multiclass
    hinge loss (``"neg_hinge_loss"``, scikit-learn's ``hinge_loss``) or the
    accuracy.  An empty selection scores NaN.  The model NMMKL's selections
    are scored with (its relaxation is a linear SVM's dual).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Class labels.
    train, test : ndarray of int
        Row indices.
    masks : sequence of ndarray of bool, each of shape (n_features,)
        The selections to score.
    scoring : {"neg_hinge_loss", "accuracy"}, default="neg_hinge_loss"

    Returns
    -------
    ndarray of shape (len(masks),)
    """
    from sklearn.metrics import hinge_loss
    from sklearn.svm import LinearSVC

    labels = np.unique(y)
    out = np.full(len(masks), np.nan)
    for i, mask in enumerate(masks):
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            continue
        Xtr, Xte = fold_data(X[:, mask], train, test)
        clf = LinearSVC(C=1.0, max_iter=20000, random_state=0).fit(Xtr, y[train])
        if scoring == "accuracy":
            out[i] = np.mean(clf.predict(Xte) == y[test])
        else:
            out[i] = -hinge_loss(y[test], clf.decision_function(Xte), labels=labels)
    return out
