"""How a cross-validated path becomes a chosen point: the rules' names
(:data:`RULES`, :data:`CV_RULES`, :data:`SELECTION_RULES`) and each method's
default (:func:`default_cv_rule`), the choice by mean score and standard
error (:func:`choose_index`, :func:`choose_from_scores`, :func:`record_cv`),
the point for a requested number of features (:func:`index_for_count`) and
the warning for a point at the edge of the grid (:func:`check_grid_edge`).
:mod:`numkfs.model_selection` states the contract and exports these names.
"""
from __future__ import annotations

import numpy as np

from . import _ties
from ._cv_mean import cv_mean_se
from ._registry import CV_RULE_NAMES, RowTable
from ._ties import warn_ties


__all__ = ["CV_RULES", "DEFAULT_CV_RULES", "RULES", "SELECTION_RULES", "TIE_RTOL", "GridEdgeWarning", "check_grid_edge", "choose_from_scores", "choose_index", "default_cv_rule", "index_for_count", "record_cv"]


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


#: The rule :func:`numkfs.select` (and ``numkfs select``) uses for each method when no ``cv_rule`` is
#: given: each method's ``cv_rules["selection"]`` in ``numkfs._registry``, where the reason for each is
#: written (the selection guide): ``"relaxed_best"`` for L1KR and lp-KTA (their own CV curve is flat
#: where their path keeps noise features), ``"2pct"`` for the garrote and NMMKL's m, ``"1se"`` for
#: COSSO, ``"1pct"`` for KNIFE.  The estimators' own default stays ``"best"``.
DEFAULT_CV_RULES = RowTable(lambda row: row.cv_rules["selection"])


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
