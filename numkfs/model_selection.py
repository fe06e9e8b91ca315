"""The selection contract: how a path becomes a chosen point and a support.

Every cross-validating estimator and :func:`numkfs.select` go through this
module, so that every method turns its path into features the same way:

* **Folds.**  :func:`make_cv` gives stratified folds for classification,
  unshuffled for an integer ``cv`` as in scikit-learn (so a fit is
  reproducible by default; pass a shuffling splitter to shuffle);
  :func:`cross_val_path` names a fold too small for the method;
  :func:`fold_data` fits the preprocessing (:class:`numkfs._preprocessing.Standardizer`)
  on the training rows of each fold only.
* **Scores.**  One score per path point and fold, always *higher is better*,
  with its name stored on the path (:attr:`FeaturePath.score_name`):
  regression ``"neg_mean_squared_error"``; classification the method's
  default of :data:`SCORINGS` (KNIFE: ``"accuracy"``, ties to the sparser
  point, chosen by evidence; lp-KTA and NMMKL: the held-out hinge loss),
  the others on request (:func:`path_scores`);
  each method offers the scores of :data:`SCORINGS` and refuses any other
  (:func:`check_scoring`).
* **Mean and standard error.**  A point's CV score is the mean of its
  fold scores weighted by the folds' sizes, and its standard error the
  weighted spread over ``sqrt(n_folds - 1)``, as ``cv.glmnet`` computes them
  (:func:`cv_mean_se`): with folds of unequal size the accuracy is the
  fraction of all held-out rows classified correctly, so two points that
  classify as many rows correctly tie (and the sparser wins) whichever
  folds the rows fell in.  With equal folds these are the plain mean and
  ``std(ddof=1) / sqrt(n_folds)``.
* **Rule.**  :func:`choose_index` with ``cv_rule="best"`` (highest mean
  score) or ``"1se"`` (glmnet's ``lambda.1se``: the sparsest point whose
  mean score is within one standard error of the best); ties go to the
  sparser point whichever way the grid runs.  :func:`numkfs.select` also
  offers the same two on the relaxed refit's scores (``"relaxed_best"``,
  ``"relaxed_1se"``, :mod:`numkfs.relaxed`; :data:`RULES`).  :func:`numkfs.select` uses
  each method's rule of :data:`DEFAULT_CV_RULES` when none is given
  (:func:`default_cv_rule`).  :func:`index_for_count`
  honours a requested number of features exactly, and warns naming the
  features when ties make that count arbitrary (:func:`tied_features`).
* **Support.**  The features with ``|weight| > path.tol`` at the chosen
  point (:func:`numkfs.paths.support_mask`), the same rule in paths,
  estimators, :func:`numkfs.select` and the command line.
* **Grids.**  A default path grid is refined where the support jumps
  (:func:`refine_walk`): between two consecutive points whose supports
  differ by more than ``max(2, a quarter of the larger)`` features
  (:func:`support_jump`) points are inserted, up to a stated number.
* **Edges.**  :func:`check_grid_edge` warns (:class:`GridEdgeWarning`) when the
  chosen point is at an edge of the grid the user can widen.

Cross-validation over a path: a method gives a ``fold_fn(train_index, test_index) -> scores`` that fits its
path on the training rows and returns one score per path point (higher is
better) on the test rows.  :func:`cross_val_path` runs the folds (in
parallel with joblib when ``n_jobs`` asks for it) and stacks the scores as
``(n_points, n_folds)``, the layout of :attr:`FeaturePath.cv_scores`, with
the folds' test sizes (:attr:`FeaturePath.cv_fold_sizes`).

Thread policy: each joblib worker limits Numba to
``max(1, n_cores // n_workers)`` threads, so joblib workers and Numba
threads never oversubscribe the cores.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ._targets import MAX_FLOAT_CLASSES, target_type  # the rule lives below kernels/
from . import _ties
from ._registry import CV_RULE_NAMES, METHOD_ROWS  # each method's scores and default rule; the rules' names
from ._grid_refinement import REFINE_MIN_RATIO, REFINE_ZERO_FLOOR, refine_walk, support_jump  # grids
from ._ties import tied_features, warn_ties  # ties at a requested count
from ._cv_mean import cv_mean_se  # a point's mean CV score and standard error

__all__ = ["CV_RULES", "DEFAULT_CV_RULES", "MAX_FLOAT_CLASSES", "RULES", "SCORINGS", "SELECTION_RULES", "TIE_RTOL",
           "target_type", "GridEdgeWarning", "check_folds", "check_grid_edge", "check_scoring", "choose_from_scores",
           "choose_index", "cross_val_path", "cv_mean_se", "default_cv_rule", "fold_data", "index_for_count",
           "make_cv", "numba_threads_for", "parallel_map", "path_scores", "record_cv", "refine_walk", "show_progress",
           "support_jump", "tied_features", "warn_ties"]

#: Every rule that turns scores into a chosen point: rule -> (the scores it reads, how many standard
#: errors and what fraction of the best mean score a sparser point may lose).  ``"cv"``: the path's own
#: CV scores; ``"relaxed"``: each point's support refitted without the method's penalty by one common
#: learner (:mod:`numkfs.relaxed`).  The names are the registry's ``CV_RULE_NAMES``.
RULES = {"best": ("cv", 0.0, 0.0), "1se": ("cv", 1.0, 0.0), "1pct": ("cv", 0.0, 0.01), "2pct": ("cv", 0.0, 0.02),
         "relaxed_best": ("relaxed", 0.0, 0.0), "relaxed_1se": ("relaxed", 1.0, 0.0)}

#: The rules every estimator's ``cv_rule`` takes (the others are :func:`numkfs.select`'s, read off the
#: path the estimator fitted).
CV_RULES = CV_RULE_NAMES["prediction"]

#: The rules :func:`numkfs.select` and the command line take.
SELECTION_RULES = CV_RULE_NAMES["selection"]


class GridEdgeWarning(UserWarning):
    """The chosen point is at an edge of a grid the user can widen."""


#: The held-out scores each method offers, per task; the first is its default
#: (each method's ``scorings`` in ``numkfs._registry``).
#: :func:`check_scoring` refuses any other (the one rule for every method).
SCORINGS = {name: dict(row.scorings) for name, row in METHOD_ROWS.items()}


#: The rule :func:`numkfs.select` (and ``numkfs select``) uses for each method when no ``cv_rule`` is
#: given: each method's ``cv_rules["selection"]`` in ``numkfs._registry``, where the reason for each is
#: written (the selection guide): ``"relaxed_best"`` for L1KR and lp-KTA (their own CV curve is flat
#: where their path keeps noise features), ``"2pct"`` for the garrote and NMMKL's m, ``"1se"`` for
#: COSSO, ``"1pct"`` for KNIFE.  The estimators' own default stays ``"best"``.
DEFAULT_CV_RULES = {name: row.cv_rules["selection"] for name, row in METHOD_ROWS.items()}


def default_cv_rule(method: str, cv_rule: str | None = None) -> str:
    """The rule that chooses ``method``'s point: ``cv_rule``, or the method's
    default of :data:`DEFAULT_CV_RULES` when None.

    Parameters
    ----------
    method : str
        A key of :data:`DEFAULT_CV_RULES` (any case).
    cv_rule : {"best", "1se", "2pct", "relaxed_best", "relaxed_1se"} or None
        The rule asked for (one of :data:`SELECTION_RULES`).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        When ``cv_rule`` is not one of :data:`SELECTION_RULES`.

    Examples
    --------
    >>> from numkfs.model_selection import default_cv_rule
    >>> default_cv_rule("cosso"), default_cv_rule("knife"), default_cv_rule("cosso", "best")
    ('1se', '1pct', 'best')
    """
    if cv_rule is None:
        return DEFAULT_CV_RULES[str(method).lower()]
    if cv_rule not in SELECTION_RULES:
        raise ValueError(f"cv_rule must be one of {', '.join(map(repr, SELECTION_RULES))}; got {cv_rule!r}.")
    return cv_rule


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


_PROGRESS = {"on": False}


@contextlib.contextmanager
def show_progress(on: bool = True):
    """Within this block every cross-validation shows a tqdm progress bar over
    its folds (on stderr).  The command line turns it on unless ``-q``.

    Parameters
    ----------
    on : bool, default=True
        Show the bars (False hides them inside the block); the previous
        setting is restored on leaving the block.

    Examples
    --------
    >>> from numkfs.model_selection import show_progress
    >>> with show_progress():
    ...     pass
    """
    old = _PROGRESS["on"]
    _PROGRESS["on"] = bool(on)
    try:
        yield
    finally:
        _PROGRESS["on"] = old


def make_cv(cv, y, *, classifier: bool, random_state=None):
    """A scikit-learn splitter: an int gives unshuffled (Stratified)KFold.

    As scikit-learn does (:func:`sklearn.model_selection.check_cv`), an
    integer ``cv`` gives contiguous, unshuffled folds, so a fit is the same
    every time by default.  To shuffle, pass a splitter that shuffles, e.g.
    ``KFold(5, shuffle=True, random_state=0)``.

    Parameters
    ----------
    cv : int or splitter
        Number of folds (at least 2 and at most the number of rows, or of the
        rarest class's rows for classification), or any object with ``split``.
    y : array-like
        The target (its length and, for classification, its class counts).
    classifier : bool
        Stratify the folds.
    random_state : object, optional
        Ignored (unshuffled folds need no seed); kept so that callers can
        pass their ``random_state`` along.

    Returns
    -------
    a splitter

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import make_cv
    >>> [te.tolist() for _, te in make_cv(3, np.arange(6.0), classifier=False).split(np.zeros((6, 1)))]
    [[0, 1], [2, 3], [4, 5]]
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    if isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"cv must be at least 2 folds; got {cv}.")
        if cv > len(y):
            raise ValueError(f"cv={cv} folds but only {len(y)} rows: use at most {len(y)} folds.")
        if classifier:
            labels, counts = np.unique(np.asarray(y), return_counts=True)
            if cv > counts.min():
                few, k = labels[np.argmin(counts)].item(), int(counts.min())
                fix = f"use at most {k} folds" if k > 1 else "each class needs 2 rows or more; add rows or drop it"
                raise ValueError(f"cv={cv} stratified folds but the rarest class ({few!r}) has only {k} row(s): {fix}.")
            return StratifiedKFold(int(cv))
        return KFold(int(cv))
    if not hasattr(cv, "split") or isinstance(cv, str):
        raise ValueError(f"cv must be an int (number of folds) or a splitter with a split method; got {cv!r}.")
    return cv


def check_folds(splits, y=None, *, method: str | None = None, min_train: int = 2, classifier: bool = False):
    """Refuse a fold too small for the method, naming the fold.

    Parameters
    ----------
    splits : list of (train, test) index arrays
        The folds, as a splitter's ``split`` gives them.
    y : array-like, optional
        The target (a classifier's training rows must hold two classes).
    method : str, optional
        The method's name, for the message.
    min_train : int, default=2
        The fewest training rows the method can fit.
    classifier : bool, default=False
        Whether each training fold needs at least two classes.

    Raises
    ------
    ValueError
        E.g. ``"fold 1 of 2 has 1 training sample; garrote needs at least 2:
        use fewer folds (cv) or give more rows."``

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import check_folds
    >>> check_folds([(np.arange(3), np.arange(3, 5))], method="garrote")
    """
    who = method or "the method"
    n = len(splits)
    for f, (tr, te) in enumerate(splits, start=1):
        n_tr = int(np.sum(tr)) if np.asarray(tr).dtype == bool else len(tr)
        n_te = int(np.sum(te)) if np.asarray(te).dtype == bool else len(te)
        if n_tr < min_train:
            raise ValueError(f"fold {f} of {n} has {n_tr} training sample{'s' if n_tr != 1 else ''}; {who} needs "
                             f"at least {min_train}: use fewer folds (cv) or give more rows.")
        if n_te < 1:
            raise ValueError(f"fold {f} of {n} has no test rows: use fewer folds (cv) or give more rows.")
        if classifier and y is not None and np.unique(np.asarray(y)[tr]).size < 2:
            raise ValueError(f"fold {f} of {n} has one class in its {n_tr} training rows; {who} needs two: "
                             "use fewer folds (cv), a stratified splitter, or give more rows.")


def fold_data(X, train, test, *, standardize: bool = True):
    """Training and test rows of one fold, preprocessed with statistics of
    the training rows only (no information from the held-out rows leaks
    into the fit).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    train, test : array-like of int or bool
        Row indices (or boolean masks) of the training and held-out rows.
    standardize : bool, default=True
        Centre and scale with the training rows' means and standard
        deviations (:class:`numkfs._preprocessing.Standardizer`).

    Returns
    -------
    X_train, X_test : ndarrays

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import fold_data
    >>> X = np.arange(8.0).reshape(4, 2)
    >>> Xtr, Xte = fold_data(X, [0, 1], [3])
    >>> Xtr[:, 0].tolist(), Xte[:, 0].tolist()
    ([-1.0, 1.0], [5.0])
    """
    from ._preprocessing import Standardizer

    Xtr, Xte = X[train], X[test]
    if not standardize:
        return Xtr, Xte
    sc = Standardizer().fit(Xtr)
    return sc.transform(Xtr), sc.transform(Xte)


# --------------------------------------------------------------------------
# scores


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


# --------------------------------------------------------------------------
# the rule


def _sparsity_order(path) -> np.ndarray:
    """A key per point, smaller = sparser: the number of selected features,
    then the distance from the path's sparse end.  The sparse end is the end
    of the grid with fewer selected features or, on equal counts, the one
    whose weights are more concentrated (smaller ``sum |w| / max |w|``), so
    the order does not depend on which way the grid runs."""
    ns = path.n_selected().astype(float)
    n = path.n_points

    def spread(i):
        a = np.abs(path.weights[i])
        m = a.max() if a.size else 0.0
        return a.sum() / m if m > 0 else 0.0

    sparse_last = ns[-1] < ns[0] or (ns[-1] == ns[0] and spread(n - 1) <= spread(0))
    dist = np.arange(n, dtype=float)[::-1] if sparse_last else np.arange(n, dtype=float)
    return ns * (n + 1) + dist


def choose_index(path, rule: str = "best") -> int:
    """The chosen point of a cross-validated path.

    Parameters
    ----------
    path : FeaturePath
        With ``cv_scores`` of shape (n_points, n_folds), higher is better
        (NaN for a fold that could not score a point).
    rule : {"best", "1se", "1pct", "2pct"}, default="best"
        ``"best"``: the highest mean score; ``"1se"``: the sparsest point
        whose mean score is at least the best mean minus one standard error
        of the best point's fold scores (glmnet's ``lambda.1se``); ``"1pct"``,
        ``"2pct"``: the sparsest within 1 or 2 % of its loss (:func:`choose_from_scores`).  Means
        and standard errors weight the folds by their sizes
        (``path.cv_fold_sizes``, :func:`cv_mean_se`).  Ties go to
        the sparser point: fewer selected features, then the point nearer the
        sparse end of the grid, whichever way the grid runs.

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import FeaturePath
    >>> from numkfs.model_selection import choose_index
    >>> W = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    >>> scores = np.array([[-1.0, -1.2], [-1.05, -1.1], [-1.4, -1.5]])
    >>> path = FeaturePath([0.1, 1.0, 10.0], W, cv_scores=scores)
    >>> choose_index(path, "best"), choose_index(path, "1se")
    (1, 1)
    """
    if rule not in CV_RULES:
        raise ValueError(f"cv_rule must be one of {', '.join(map(repr, CV_RULES))}; got {rule!r}"
                         + (" (numkfs.select's rule: choose_from_scores, numkfs.relaxed)." if rule in RULES else "."))
    if path.cv_scores is None:
        raise ValueError("choose_index: the path has no cv_scores.")
    return choose_from_scores(path, path.cv_scores, path.cv_fold_sizes, *RULES[rule][1:])


def choose_from_scores(path, scores, fold_sizes=None, n_se: float = 0.0, rel: float = 0.0) -> int:
    """The sparsest point of ``path`` whose mean score is within ``n_se``
    standard errors, or the fraction ``rel`` of its magnitude, of the best
    point's (the core of every rule of :data:`RULES`).

    Parameters
    ----------
    path : FeaturePath
        The path whose points are ordered by sparsity (fewer selected
        features, then nearer the sparse end of the grid).
    scores : ndarray of shape (n_points, n_folds)
        Higher is better (NaN for a fold that could not score a point):
        the path's CV scores, or those of the relaxed refit (:mod:`numkfs.relaxed`).
    fold_sizes : array-like of shape (n_folds,), optional
        Test rows per fold, the folds' weights (:func:`cv_mean_se`).
    n_se : float, default=0.0
        0: the best mean score (``"best"``); 1: glmnet's ``lambda.1se``.
    rel : float, default=0.0
        A further allowance of ``rel`` times the best mean loss (``"1pct"``, ``"2pct"``: 0.01, 0.02):
        ``|best mean|`` for the negated losses, the error rate ``1 - best mean`` for ``"accuracy"``
        (``path.score_name``; a fraction of the accuracy is many times the error rate on easy data).

    Returns
    -------
    int

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import FeaturePath
    >>> from numkfs.model_selection import choose_from_scores
    >>> W = np.array([[1.0, 1.0], [1.0, 0.0]])
    >>> choose_from_scores(FeaturePath([0.1, 1.0], W), np.array([[-1.0, -1.2], [-1.05, -1.25]]), n_se=1)
    1
    """
    mean, se = cv_mean_se(scores, fold_sizes)
    if np.all(np.isnan(mean)):
        raise ValueError("choose_index: no fold scored any path point (every CV score is NaN).")
    mean = np.where(np.isnan(mean), -np.inf, mean)
    best = float(np.max(mean))
    key = _sparsity_order(path)
    # equal within round-off relative to the best score itself (never an absolute floor: the scores
    # are in the units of y squared, and the choice must not depend on them)
    slack = 1e-12 * abs(best)
    loss = 1.0 - best if getattr(path, "score_name", None) == "accuracy" else abs(best)  # see ``rel``
    threshold = best - slack - rel * loss
    if n_se:
        ib = int(np.flatnonzero(mean == best)[0])
        threshold -= n_se * float(se[ib])
    candidates = np.flatnonzero(mean >= threshold)
    return int(candidates[np.argmin(key[candidates])])


#: Relative tolerance under which two weights or scores count as tied: the
#: accuracy the methods' solvers reach (NMMKL's ``tie_tol``; the conic
#: backends stop at relative gaps of 1e-8, the native solvers at 1e-6 to
#: 1e-10), so values that differ by solver round-off (NMMKL's φ on wpbc
#: differ around 1e-11) are not ranked by that round-off.
TIE_RTOL = _ties.TIE_RTOL


def index_for_count(path, k: int, *, warn: bool = True, feature_names=None):
    """The point and support for a requested number ``k`` of features.

    Walking from the sparse end of the path, the first point with at least
    ``k`` selected features is taken; if it selects more, its ``k`` largest
    weights (in absolute value) are kept.  A ``UserWarning`` says so,
    naming the features, when ties at the k-th weight make the choice
    arbitrary (weights equal within ``max(path.tol, TIE_RTOL * w_k)``,
    :func:`tied_features`; the lower feature indices are kept), or when no
    point reaches ``k`` (the densest point is taken and fewer features are
    returned).

    Parameters
    ----------
    path : FeaturePath
        The fitted path to choose a point of.
    k : int
        Number of features wanted (at least 1).
    warn : bool, default=True
        Emit the warnings described above.
    feature_names : sequence of str, optional
        Names for the warning (default: ``path.feature_names``, else indices).

    Returns
    -------
    index : int
    mask : ndarray of bool of shape (n_features,)
        Exactly ``k`` features, unless the path never selects ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import FeaturePath
    >>> from numkfs.model_selection import index_for_count
    >>> W = np.array([[0.9, 0.5, 0.2, 0.1], [0.8, 0.3, 0.0, 0.0], [0.7, 0.0, 0.0, 0.0]])
    >>> i, mask = index_for_count(FeaturePath([0.1, 1.0, 10.0], W), 3)
    >>> i, mask.tolist()
    (0, [True, True, True, False])
    """
    import warnings

    k = int(k)
    if k < 1:
        raise ValueError(f"the number of features to select must be at least 1; got {k}.")
    ns = path.n_selected()
    order = np.argsort(_sparsity_order(path), kind="stable")
    reach = [i for i in order if ns[i] >= k]
    if not reach:
        i = int(order[-1])
        if warn:
            warnings.warn(f"{k} features were requested but the {path.method or 'path'} path selects at most "
                          f"{int(ns.max())}; returning {int(ns[i])}.", UserWarning, stacklevel=2)
        return i, path.selected(i)
    i = int(reach[0])
    mask = path.selected(i)
    if ns[i] > k:
        a = np.abs(path.weights[i])
        top = np.argsort(-a, kind="stable")[:k]
        mask = np.zeros(path.n_features, dtype=bool)
        mask[top] = True
        if warn:
            names = feature_names if feature_names is not None else path.feature_names
            warn_ties(a, k, kept=mask, feature_names=names, atol=path.tol,
                      where=f" at {path.grid_name}={path.grid[i]:.4g}", stacklevel=3)
    return i, mask


def record_cv(path, scores, *, rule: str, score_name: str, fold_sizes=None) -> int:
    """Store cross-validation results on ``path`` and choose its point.

    Sets ``path.cv_scores``, ``path.cv_fold_sizes``, ``path.score_name``,
    ``path.cv_rule`` and ``path.chosen_index`` (:func:`choose_index`); every
    CV estimator ends its ``fit`` with this call, so all of them report the
    same way.

    Parameters
    ----------
    path : FeaturePath
        The path to store the results on (modified in place).
    scores : ndarray of shape (n_points, n_folds)
        Higher is better.
    rule : {"best", "1se", "1pct", "2pct"}
        How :func:`choose_index` chooses the point (a rule of
        :data:`CV_RULES`; :data:`RULES` says what each allows).
    score_name : str
        Name of the score (e.g. ``"accuracy"``), stored as ``path.score_name``.
    fold_sizes : array-like of shape (n_folds,), optional
        Test rows per fold (:func:`cross_val_path` returns them), the
        weights of the folds in the mean score; default: equal weights.

    Returns
    -------
    int
        The chosen index.
    """
    path.cv_scores = np.asarray(scores, dtype=float)
    path.cv_fold_sizes = None if fold_sizes is None else np.asarray(fold_sizes, dtype=np.int64)
    path.score_name = score_name
    path.cv_rule = rule
    path.chosen_index = choose_index(path, rule)
    return path.chosen_index


def check_grid_edge(path, index: int, *, parameter: str, stacklevel: int = 3) -> bool:
    """Warn when ``index`` is the first or last point of a grid that has more
    than two points: the score might still improve beyond it.

    Parameters
    ----------
    path : FeaturePath
        The path whose grid (and mean CV score) is checked.
    index : int
        The chosen point.
    parameter : str
        The estimator parameter that widens the grid (named in the warning).
    stacklevel : int, default=3
        Passed to :func:`warnings.warn`.

    Returns
    -------
    bool
        True when a warning was emitted.
    """
    import warnings

    if path.n_points <= 2 or index not in (0, path.n_points - 1):
        return False
    mean = path.mean_cv_score
    if mean is not None and np.all(np.isclose(mean, mean[index], rtol=1e-12, atol=0.0)):
        return False  # a flat score: no edge effect to speak of
    warnings.warn(f"the chosen {path.grid_name}={path.grid[index]:.4g} is at the edge of the {path.method or ''} "
                  f"grid ({path.grid_name} from {path.grid.min():.4g} to {path.grid.max():.4g}); the score may "
                  f"still improve beyond it: widen the grid with {parameter!r}.", GridEdgeWarning,
                  stacklevel=stacklevel)
    return True


def numba_threads_for(n_workers: int) -> int:
    """Numba threads per worker so that workers × threads ≤ cores
    (:func:`numkfs._threads.threads_per_worker`, the one thread policy).

    Parameters
    ----------
    n_workers : int
        Number of parallel workers that will each run Numba code.

    Returns
    -------
    int
        Numba threads each worker may use (at least 1).
    """
    from ._threads import threads_per_worker

    return threads_per_worker(n_workers)


def _with_threads(n_threads, fn, *args):
    """``fn(*args)`` with Numba limited to ``n_threads`` threads."""
    from ._threads import limit_threads

    with limit_threads(n_threads):
        return fn(*args)


def cross_val_path(fold_fn, X, y, cv=5, *, classifier: bool = False, n_jobs=None, random_state=None,
                   prefer=None, method: str | None = None, min_train: int = 2) -> np.ndarray:
    """Scores of a path on each CV fold.

    Parameters
    ----------
    fold_fn : callable
        ``fold_fn(train_index, test_index) -> array (n_points,)``.
    X, y : arrays
        Only used to make the splits.
    cv : int or splitter
        Number of cross-validation folds, or a scikit-learn splitter.
    classifier : bool
        Stratify the folds.
    n_jobs : int, optional
        joblib workers over folds (``None`` = 1; works under
        ``joblib.parallel_backend("dask")`` too).
    random_state : object, optional
        Ignored: an int ``cv`` gives unshuffled folds (:func:`make_cv`); a
        splitter carries its own seed.
    prefer : {None, "threads", "processes"}
        joblib's soft hint for the default backend (a backend set by the
        user with ``joblib.parallel_config`` wins).  ``"threads"`` suits
        folds whose work releases the GIL (Numba ``nogil`` kernels, BLAS,
        LAPACK): no worker processes to start, import numkfs in and load
        the compiled functions into.
    method : str, optional
        The method's name, for the message of a fold too small to fit
        (:func:`check_folds`).
    min_train : int, default=2
        The fewest training rows the method can fit.

    Returns
    -------
    scores : ndarray of shape (n_points, n_folds)
    fold_sizes : ndarray of int of shape (n_folds,)
        Test rows per fold, the folds' weights in :func:`cv_mean_se`.
    """
    from joblib import Parallel, delayed, effective_n_jobs

    splitter = make_cv(cv, y, classifier=classifier, random_state=random_state)
    splits = list(splitter.split(X, y))
    check_folds(splits, y, method=method, min_train=min_train, classifier=classifier)
    sizes = np.array([len(te) for _, te in splits], dtype=np.int64)
    n_workers = min(effective_n_jobs(n_jobs), len(splits))
    threads = numba_threads_for(n_workers)
    if _PROGRESS["on"]:
        from tqdm.auto import tqdm

        splits = tqdm(splits, desc="CV folds", leave=False)
    scores = Parallel(n_jobs=n_jobs, prefer=prefer)(delayed(_with_threads)(threads, fold_fn, tr, te)
                                                    for tr, te in splits)
    scores = [np.asarray(s, dtype=float) for s in scores]
    lengths = {len(s) for s in scores}
    if len(lengths) != 1:
        raise RuntimeError(f"folds returned different numbers of path points: {sorted(lengths)}")
    return np.column_stack(scores), sizes


def parallel_map(fn, items, n_jobs=None) -> list:
    """``[fn(item) for item in items]``, over joblib workers when ``n_jobs``
    asks for more than one (same thread policy as :func:`cross_val_path`;
    runs on a Dask cluster under ``joblib.parallel_backend("dask")``).

    The order of the results is the order of ``items``, so whatever is chosen
    from them (e.g. the best of several random starts) does not depend on
    ``n_jobs``.

    Parameters
    ----------
    fn : callable
        Function of one item.
    items : iterable
        The items (consumed into a list first).
    n_jobs : int, optional
        joblib workers (``None`` = 1: a plain loop in this process).

    Returns
    -------
    list
        ``fn(item)`` for each item, in the order of ``items``.
    """
    from joblib import Parallel, delayed, effective_n_jobs

    items = list(items)
    n_workers = min(effective_n_jobs(n_jobs), len(items))
    if n_workers <= 1:
        return [fn(item) for item in items]
    threads = numba_threads_for(n_workers)
    return Parallel(n_jobs=n_jobs)(delayed(_with_threads)(threads, fn, item) for item in items)
