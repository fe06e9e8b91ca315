r"""Stability selection over any numkfs path: :class:`StabilitySelection`.

Meinshausen & Bühlmann (2010) fit a selection procedure :math:`\hat S^\lambda`
on many subsamples of half the rows and keep the features whose selection
probability :math:`\hat\Pi_j^\lambda` (the fraction of subsamples that select
feature j at λ) reaches a threshold :math:`\pi_{thr}` somewhere in a region
Λ of the grid.  With :math:`q_\Lambda` the average number of features the
subsamples select somewhere in Λ (the size of :math:`\cup_{\lambda\in\Lambda}
\hat S^\lambda`), their Theorem 1 bounds the expected number V of false
selections (the per-family error rate, PFER) by

.. math::

    E(V) \le \frac{q_\Lambda^2}{(2\pi_{thr} - 1)\, p}

when the noise features are exchangeable and the procedure is no worse than
random guessing (:func:`pfer_bounds`).  Shah & Samworth (2013) draw the subsamples in
complementary pairs (the two halves of one random split of the rows: CPSS),
for which the same bound holds without those two assumptions, and, when the
distribution of the simultaneous selection probabilities of the
low-selection-probability features is unimodal, the tighter

.. math::

    E(V) \le \frac{q_\Lambda^2}{C(\pi_{thr}, B)\, p},\qquad
    C = \begin{cases} 2\,(2\pi_{thr} - 1 - \tfrac{1}{2B}) &
        \pi_{thr} \le \tfrac34 \\
        \dfrac{1 + 1/B}{4\,(1 - \pi_{thr} + \tfrac{1}{2B})} &
        \pi_{thr} > \tfrac34 \end{cases}

(their eq. (8); for :math:`\pi_{thr} \le 3/4` it needs
:math:`\pi_{thr} \ge \tfrac12 + \min(\theta^2, \tfrac{1}{2B} + \tfrac34\theta^2)`,
θ = q/p, and is reported as NaN below that).

numkfs's region Λ: the grid is ordered from its sparse end (fewer features
selected on average), and Λ is the longest stretch from that end on which
the average size of the union of the subsamples' selections stays at most
q, so the dense end of a path (lp-KTA at p = 2 keeps every feature) never
counts.  For a nested path (features only enter towards the dense end) the
union is the selection at Λ's densest point, Meinshausen & Bühlmann's
"average number selected".  q is given (``max_features``) or chosen from a
target bound (:func:`q_for_pfer`): the largest q whose bound is at most the
target, :math:`q = \sqrt{(2\pi_{thr} - 1)\, \mathrm{PFER}\, p}` for
Meinshausen & Bühlmann's.  The default bound is Shah & Samworth's unimodal
one with threshold 0.9 (q = 6.5 at p = 20 with 20 pairs, where
Meinshausen & Bühlmann's at threshold 0.6 gave q = 2, too few for five true
features); Shah & Samworth's r-concave bound (:func:`pfer_bound_r_concave`)
is tighter still.

Stable groups (cluster stability selection, Faletto & Bien 2022): features
that substitute for each other (temperature and its inverse) split the
subsamples between them, so neither reaches the threshold although one of
them is in nearly every selection.  The columns are clustered by absolute
correlation (complete linkage: every two members of a group correlate
above :data:`GROUP_CORRELATION` in absolute value; :func:`correlation_groups`),
and a cluster is selected on a subsample when at least one of its members
is; its selection probability is the fraction of subsamples that select it.
The selection units are the clusters (a cluster of one is a feature), and
the region, q and the bound are those of the procedure that selects units:
the bounds above hold for any selection procedure, so they hold for this
one with p the number of units and :math:`q_\Lambda` the average number of
units selected over Λ (at most the number of features), and V counting the
selected units none of whose members is relevant.  Λ is the features' (at
most q features on average, a group's members counted one by one), so a
group's members still compete for the places in Λ.
Without correlated columns every unit is one feature, and nothing changes.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

from ._constraints import Interval, NoneOr, Options, validate_params
from .resampling import SELECTOR_CONSTRAINTS, PathSelectorMixin

__all__ = ["BOUNDS", "GROUP_CORRELATION", "StabilitySelection", "complementary_pairs", "correlation_groups",
           "pfer_bound", "pfer_bound_r_concave", "pfer_bounds", "q_for_pfer"]


def complementary_pairs(y, n_pairs, sample_fraction=0.5, *, classification=False, random_state=None):
    """Row indices of ``n_pairs`` complementary pairs of subsamples.

    Each pair is the first and second ``floor(sample_fraction * n)`` rows of
    one random permutation (disjoint; together all rows when
    ``sample_fraction = 0.5`` and n is even).  For class labels the rows of
    each class are split so (stratified), so every subsample holds every
    class in proportion.  With ``sample_fraction > 0.5`` two disjoint
    subsamples cannot exist: each "pair" is then two independent subsamples.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The target (its length, and its classes when ``classification``).
    n_pairs : int
        Number of pairs (``2 * n_pairs`` subsamples).
    sample_fraction : float in (0, 1), default=0.5
        Fraction of the rows in each subsample.
    classification : bool, default=False
        Stratify by the classes of y.
    random_state : int, RandomState or None
        Seed of the permutations.

    Returns
    -------
    list of ndarray of int
        ``2 * n_pairs`` sorted index arrays; entries ``2b`` and ``2b + 1``
        form pair b.

    Examples
    --------
    >>> from numkfs.stability import complementary_pairs
    >>> a, b = complementary_pairs(range(6), 1, random_state=0)
    >>> sorted(a.tolist() + b.tolist())
    [0, 1, 2, 3, 4, 5]
    """
    from sklearn.utils import check_random_state

    rng = check_random_state(random_state)
    y = np.asarray(y)
    groups = [np.flatnonzero(y == c) for c in np.unique(y)] if classification else [np.arange(len(y))]
    out = []
    for _ in range(int(n_pairs)):
        halves = ([], [])
        for g in groups:
            m = int(np.floor(sample_fraction * len(g)))
            perm = rng.permutation(g)
            halves[0].append(perm[:m])
            halves[1].append(rng.permutation(g)[:m] if sample_fraction > 0.5 else perm[m:2 * m])
        out += [np.sort(np.concatenate(h)) for h in halves]
    return out


def pfer_bounds(q, p, threshold, n_pairs):
    """Bounds on the expected number of false selections (PFER).

    Parameters
    ----------
    q : float
        Average number of features selected in the region Λ (over subsamples).
    p : int
        Number of features.
    threshold : float in (0.5, 1]
        Selection-probability threshold.
    n_pairs : int
        Number B of complementary pairs (for Shah & Samworth's bound).

    Returns
    -------
    mb : float
        Meinshausen & Bühlmann's :math:`q^2 / ((2\\pi_{thr} - 1) p)` (also
        Shah & Samworth's for complementary pairs without assumptions).
    unimodal : float
        Shah & Samworth's bound under unimodality (their eq. (8)); NaN where
        the threshold is outside its range.

    See Also
    --------
    pfer_bound_r_concave : Shah & Samworth's bound under r-concavity.

    References
    ----------
    N. Meinshausen and P. Bühlmann, "Stability selection", JRSS B 72(4),
    2010.  R. D. Shah and R. J. Samworth, "Variable selection with error
    control: another look at stability selection", JRSS B 75(1), 2013.

    Examples
    --------
    >>> from numkfs.stability import pfer_bounds
    >>> mb, um = pfer_bounds(4.0, 20, 0.9, 50)
    >>> round(mb, 4), um < mb
    (1.0, True)
    """
    q, p, t, B = float(q), float(p), float(threshold), float(n_pairs)
    mb = q * q / ((2.0 * t - 1.0) * p)
    theta = q / p
    c = _unimodal_constant(t, B)
    ok = t > 0.75 or (t >= 0.5 + min(theta * theta, 1.0 / (2.0 * B) + 0.75 * theta * theta) and c > 0)
    return mb, (q * q / (c * p) if ok else float("nan"))


def _unimodal_constant(t, B):
    """C(π_thr, B) of Shah & Samworth's unimodal bound q² / (C p)."""
    if t <= 0.75:
        return 2.0 * (2.0 * t - 1.0 - 1.0 / (2.0 * B))
    return (1.0 + 1.0 / B) / (4.0 * (1.0 - t + 1.0 / (2.0 * B)))


def _r_concave_tail(eta, tail, n, r):
    """Largest P(X >= tail / n) over r-concave distributions of X on
    {0, 1/n, ..., 1} with E X <= eta (Shah & Samworth's D(eta, tail/n, n, r)).

    The extremal distributions are, for k = 0..n, f(i) proportional to
    (a + i)^(1/r) on i <= k with mean eta, mixed with the next one's support
    (the computation of the authors' code, also in R's ``stabs``): for each
    k the tail of the mixture is maximised over a between the a of support
    k + 1 and that of support k.
    """
    from scipy.optimize import brentq, minimize_scalar

    s = 1.0 / r
    mean = eta * n
    k_start = int(np.ceil(2.0 * mean)) + 1
    if tail < k_start or k_start > n:
        return 1.0
    i = np.arange(n + 1, dtype=float)

    def gap(a, k):  # mean of f on 0..k minus the target mean
        w = (a + i[:k + 1]) ** s
        return float(i[:k + 1] @ w / w.sum() - mean)

    a = {k_start - 1: 1e5}
    for k in range(k_start, n + 1):
        hi = a[k - 1]
        a[k] = brentq(gap, 1e-5, hi, args=(k,), xtol=1e-13) if gap(1e-5, k) < 0 < gap(hi, k) else hi

    below = np.arange(tail, dtype=float)  # the points under the threshold (beyond k too)

    def tail_of_mix(x, k):
        w = (x + i[:k + 1]) ** s
        return 1.0 - (k + 1 - mean) * ((x + below) ** s).sum() / ((k + 1 - i[:k + 1]) * w).sum()

    best = 0.0
    for k in range(k_start, n):
        lo, hi = sorted((a[k + 1], a[k]))
        res = minimize_scalar(lambda x: -tail_of_mix(x, k), bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-10 * max(1.0, hi)})
        best = max(best, -float(res.fun), tail_of_mix(lo, k), tail_of_mix(hi, k))
    return min(1.0, best)


def pfer_bound_r_concave(q, p, threshold, n_pairs):
    r"""Shah & Samworth's bound on the PFER under r-concavity.

    With θ = q/p, :math:`E(V) \le p \min\{D(\theta^2, 2\pi_{thr} - 1, B, -\tfrac12),
    D(\theta, \pi_{thr}, 2B, -\tfrac14)\}`, where :math:`D(\eta, \tau, B, r)`
    is the largest :math:`P(X \ge \tau)` over r-concave distributions of X
    on :math:`\{0, 1/B, \dots, 1\}` with :math:`E X \le \eta`: the first
    term for the simultaneous selection probabilities of the B pairs
    (assumed -1/2-concave), the second for the 2B single ones (-1/4-concave).
    D is computed numerically over the extremal distributions, as Shah &
    Samworth's own code and R's ``stabs`` compute it.  The threshold is
    rounded up to a multiple of 1/(2B).  Tighter than the unimodal bound,
    under a stronger assumption.

    Parameters
    ----------
    q : float
        Average number of features selected in the region Λ (over subsamples).
    p : int
        Number of features.
    threshold : float in (0.5, 1]
        Selection-probability threshold.
    n_pairs : int
        Number B of complementary pairs.

    Returns
    -------
    float
        The bound (at most p).

    References
    ----------
    R. D. Shah and R. J. Samworth, "Variable selection with error control:
    another look at stability selection", JRSS B 75(1):55-80, 2013, Theorem 3.

    Examples
    --------
    >>> from numkfs.stability import pfer_bound_r_concave, pfer_bounds
    >>> bool(pfer_bound_r_concave(4.0, 20, 0.9, 50) < pfer_bounds(4.0, 20, 0.9, 50)[1])
    True
    """
    B = int(n_pairs)
    theta = float(q) / float(p)
    if theta <= 0:
        return 0.0
    k = int(np.ceil(round(float(threshold) * 2 * B, 10)))  # the threshold in units of 1/(2B)
    d = min(1.0, _r_concave_tail(theta * theta, k - B, B, -0.5), _r_concave_tail(theta, k, 2 * B, -0.25))
    return d * float(p)


#: The bounds a StabilitySelection can report and set q from.
BOUNDS = ("unimodal", "r-concave", "mb")


def pfer_bound(q, p, threshold, n_pairs, bound="unimodal"):
    """One of the bounds on the PFER: ``"mb"``, ``"unimodal"`` (:func:`pfer_bounds`)
    or ``"r-concave"`` (:func:`pfer_bound_r_concave`).

    Parameters
    ----------
    q, p, threshold, n_pairs
        As in :func:`pfer_bounds`.
    bound : {"unimodal", "r-concave", "mb"}, default="unimodal"
        Which bound.

    Returns
    -------
    float

    Examples
    --------
    >>> from numkfs.stability import pfer_bound
    >>> round(pfer_bound(4.0, 20, 0.9, 50, "mb"), 4)
    1.0
    """
    if bound == "r-concave":
        return pfer_bound_r_concave(q, p, threshold, n_pairs)
    mb, unimodal = pfer_bounds(q, p, threshold, n_pairs)
    return mb if bound == "mb" else unimodal


def q_for_pfer(pfer, p, threshold, n_pairs, bound="unimodal"):
    r"""The largest q (average number selected in the region) whose bound is at most ``pfer``.

    Meinshausen & Bühlmann: :math:`q = \sqrt{(2\pi_{thr} - 1)\,\mathrm{PFER}\,p}`;
    unimodal: :math:`q = \sqrt{C(\pi_{thr}, B)\,\mathrm{PFER}\,p}` (:func:`pfer_bounds`;
    at thresholds up to 3/4 only where that q is inside the bound's range,
    else the Meinshausen-Bühlmann q); r-concave: found by bisection (the bound
    grows with q).

    Parameters
    ----------
    pfer : float > 0
        Target bound on the expected number of false selections.
    p, threshold, n_pairs
        As in :func:`pfer_bounds`.
    bound : {"unimodal", "r-concave", "mb"}, default="unimodal"

    Returns
    -------
    float

    Examples
    --------
    >>> from numkfs.stability import q_for_pfer
    >>> round(q_for_pfer(1.0, 20, 0.9, 50, "mb"), 4), round(q_for_pfer(1.0, 20, 0.9, 50), 2)
    (4.0, 6.81)
    """
    pfer, p, t, B = float(pfer), float(p), float(threshold), float(n_pairs)
    q_mb = float(np.sqrt((2.0 * t - 1.0) * pfer * p))
    if bound == "mb":
        return q_mb
    if bound == "unimodal":
        q = float(np.sqrt(max(_unimodal_constant(t, B), 0.0) * pfer * p))
        return q if np.isfinite(pfer_bounds(q, p, t, B)[1]) and q > q_mb else q_mb
    lo, hi = 0.0, p  # r-concave: bisection on q (its bound is non-decreasing in q)
    if pfer_bound_r_concave(hi, p, t, B) <= pfer:
        return hi
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if pfer_bound_r_concave(mid, p, t, B) <= pfer else (lo, mid)
        if hi - lo < 1e-3:
            break
    return max(lo, q_mb)


#: Two features belong to one group when the absolute correlation of their columns exceeds this (complete
#: linkage: every two members do), Faletto & Bien's cut.
GROUP_CORRELATION = 0.5


def correlation_groups(X, cut=GROUP_CORRELATION):
    """Clusters of columns whose absolute correlations all exceed ``cut`` (complete linkage).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The data (a constant column correlates with nothing).
    cut : float in (0, 1)
        The absolute correlation above which two columns may share a cluster.

    Returns
    -------
    list of ndarray of int
        Every column in exactly one cluster (ascending, clusters ordered by their first column).

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.stability import correlation_groups
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.standard_normal((2, 100))
    >>> X = np.c_[a, b, -a + 0.1 * rng.standard_normal(100)]
    >>> [g.tolist() for g in correlation_groups(X)]
    [[0, 2], [1]]
    """
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    X = np.asarray(X, dtype=float)
    p = X.shape[1]
    if p < 2:
        return [np.arange(p)]
    Z = X - X.mean(axis=0)
    sd = np.sqrt((Z * Z).sum(axis=0))
    Z = np.divide(Z, sd, out=np.zeros_like(Z), where=sd > 0)
    D = np.clip(1.0 - np.abs(Z.T @ Z), 0.0, 1.0)
    np.fill_diagonal(D, 0.0)
    labels = fcluster(linkage(squareform(D, checks=False), "complete"), 1.0 - float(cut), "distance")
    groups = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    return sorted(groups, key=lambda g: int(g[0]))


#: Default number of complementary pairs: on the trust guide's simulations more pairs keep the same
#: power and error at a higher cost.
N_RESAMPLES = 20


class _SubsamplePath:
    """The path of one subsample on the common grid (picklable for joblib workers).

    With ``walked`` (a mask over the grid) only those points are fitted; the
    others are returned as selecting every feature (outside any region Λ).
    """

    def __init__(self, selector, X, y, reference, params, task, walked=None, purpose="stability"):
        self.selector, self.X, self.y, self.reference, self.params, self.task = selector, X, y, reference, params, task
        self.walked, self.purpose = walked, purpose

    def __call__(self, rows):
        from .paths import FeaturePath
        from .resampling import method_path

        ref, walked = self.reference, self.walked
        if walked is not None:
            ref = FeaturePath(grid=ref.grid[walked], weights=ref.weights[walked], grid_name=ref.grid_name,
                              method=ref.method, extra={"resampling": ref.extra["resampling"]}, tol=ref.tol)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            path = method_path(self.selector, self.X[rows], self.y[rows], grid=ref, params=self.params,
                               task=self.task, purpose=self.purpose)
        sel = _selected(path)
        if walked is not None:
            full = np.ones((walked.size, sel.shape[1]), dtype=bool)
            full[walked] = sel
            sel = full
        return sel, [(w.category, str(w.message)) for w in caught]


def _selected(path):
    from .paths import support_mask

    return support_mask(path.weights, path.tol)


class StabilitySelection(PathSelectorMixin, SelectorMixin, BaseEstimator):
    r"""Stability selection (complementary pairs) over any numkfs method's path.

    The method's path is fitted once on all rows to fix the grid (and the
    settings computed from the data, :func:`numkfs.resampling.method_path`),
    then on ``2 * n_resamples`` subsamples: ``n_resamples`` complementary
    pairs, the two halves of one random split of the rows (stratified by
    class for class labels).  A feature is selected when its selection
    probability reaches ``threshold`` somewhere in the region Λ of the grid
    where the subsamples select at most q features on average (see the
    module :mod:`numkfs.stability` for the bounds and Λ).

    Parameters
    ----------
    selector : str or estimator, default="knife"
        A method name (``"knife"``, ``"lpkta"``, ``"l1kr"``, ``"garrote"``,
        ``"cosso"``, ``"nmmkl"``) or a numkfs estimator whose parameters set
        the path (it is never fitted itself).  KNIFE by default: its path
        drops the noise features before the true ones on the simulations
        of the trust guide, where lp-KTA's keeps noise features to its
        sparse end.  A method given by name uses
        :func:`numkfs.select`'s settings of its path (for KNIFE on class
        labels those of :class:`~numkfs.KNIFEClassifierCV`: squared hinge
        loss, λ1 = 3), and for KNIFE a 20-point λ2 grid, not refined (the
        region needs no finer one, and the fits cost less), each subsample
        walking only from where the region can begin (``walked_``).
    n_resamples : int, default=20
        Number B of complementary pairs (``2 * n_resamples`` path fits;
        :data:`N_RESAMPLES`).
    sample_fraction : float in (0, 1), default=0.5
        Fraction of the rows in each subsample.  The bounds are proved for
        0.5; below it the pairs stay disjoint, above it the two subsamples
        of a "pair" are drawn independently.
    threshold : float in (0.5, 1], default=0.9
        Selection-probability threshold :math:`\pi_{thr}`.
    pfer : float > 0, default=1.0
        Target bound on the expected number of false selections: q is the
        largest average number of features in the region whose ``bound``
        is at most ``pfer`` (:func:`q_for_pfer`).  With the defaults
        (threshold 0.9, unimodal bound, 20 pairs) q = 6.5 at p = 20, 20.5 at
        p = 200, against 2 and 6.3 with Meinshausen & Bühlmann's bound at
        threshold 0.6.
    bound : {"unimodal", "r-concave", "mb"}, default="unimodal"
        The bound that sets q from ``pfer`` and that ``pfer_bound_``
        reports: Shah & Samworth's under unimodality (their eq. (8)) or
        r-concavity (their Theorem 3, tighter under a stronger assumption),
        or Meinshausen & Bühlmann's (no assumption on the distribution for
        complementary pairs, and the most conservative).  On null data the
        mean number of false selections stays within the unimodal bound
        (see the trust guide).
    max_features : float > 0, optional
        q given directly (then ``pfer`` is not used).
    group_correlation : float in (0, 1) or None, default=0.5
        Columns whose absolute correlations all exceed it form a group
        (:func:`correlation_groups`, :data:`GROUP_CORRELATION`), selected on a
        subsample when any member is: a group whose probability reaches the
        threshold while none of its members' does is a stable group
        (``groups_``).  The bound is then over the units (groups and lone
        features: p the number of units, q their average number selected over
        the region; see :mod:`numkfs.stability`).  None: every feature its
        own unit.
    task : {"regression", "classification"}, optional
        The task of the method's path; default: from y
        (:func:`numkfs.model_selection.target_type`).  Give it for a target
        whose values do not say it (a score from 0 to 4 is five classes by
        default; ``task="regression"`` fits it as a number).
    random_state : int, RandomState or None
        Seeds the subsamples.
    n_jobs : int, optional
        joblib workers over subsamples (:func:`numkfs.model_selection.parallel_map`:
        Numba threads per worker so that workers × threads never exceed the
        cores; a Dask cluster serves under ``joblib.parallel_backend("dask")``).
    params : dict, optional
        Keyword arguments of the method's path function (e.g.
        ``{"n_grid": 20}`` for KNIFE).  Keyword arguments given to the
        constructor beyond the ones above are added to this dict (a
        scikit-learn estimator keeps its parameters in its signature, so
        they are stored there: ``clone`` and ``get_params`` see them).
    **kwargs
        Path-function keyword arguments, stored into ``params``.

    Attributes
    ----------
    selection_probabilities_ : ndarray of shape (n_features,)
        Largest selection probability of each feature over Λ.
    stability_path_ : ndarray of shape (n_grid, n_features)
        Selection probability of each feature at each grid point (NaN at
        the points the subsamples did not walk, ``walked_``).
    grid_ : ndarray of shape (n_grid,)
        The common grid (the full-data path's).
    grid_name_ : str
        The path parameter (``"lambda2"``, ``"p"``, ``"D"``, ``"M"``, ``"m"``).
    mean_selected_ : ndarray of shape (n_grid,)
        Average number of features the subsamples select at each grid point
        (NaN where not walked).
    walked_ : ndarray of bool of shape (n_grid,)
        The grid points the subsamples walked.  For KNIFE given by name,
        whose path runs from λ2 = 0 (every feature in) to its sparse end and
        whose zero weights stay zero, each subsample walks the first point,
        then only from the first point where the full-data path keeps at
        most 2 q features, warm-started from the
        point before: the points in between are far denser than the region
        Λ, and are counted outside it.  Every point for the other methods.
    region_ : ndarray of bool of shape (n_grid,)
        The grid points of Λ.
    q_ : float
        The q asked for (from ``pfer`` or ``max_features``).
    q_region_ : float
        :math:`q_\Lambda`: average size of the union of the subsamples'
        selections over Λ, in units (``clusters_``; at most ``q_``).
    threshold_ : float
        The threshold used.
    bound_ : str
        Which bound ``pfer_bound_`` is: ``bound``, except ``"mb"`` where
        the unimodal bound is not proved (thresholds up to 3/4 with a wide
        region; ``pfer_bound_unimodal_`` is then NaN).
    pfer_bound_ : float
        The bound ``bound`` on the expected number of false selections at
        :math:`q_\Lambda` (:func:`pfer_bound`).
    pfer_bound_mb_ : float
        Meinshausen & Bühlmann's bound :math:`q_\Lambda^2 / ((2\pi_{thr} - 1) p)`
        (it holds for complementary pairs without their exchangeability
        assumptions, Shah & Samworth's Theorem 1).
    pfer_bound_unimodal_ : float
        Shah & Samworth's tighter bound when the simultaneous selection
        probabilities of the low-probability features have a unimodal
        distribution (NaN outside the thresholds where it is proved).
    n_subsamples_ : int
        ``2 * n_resamples``.
    path_ : FeaturePath
        The method's path on all rows.
    method_ : str
        The method.
    support_ : ndarray of bool of shape (n_features,)
        ``selection_probabilities_ >= threshold_``.
    clusters_ : list of ndarray of int
        The selection units: groups of correlated columns and lone features
        (:func:`correlation_groups`), every column in one.
    cluster_stability_path_ : ndarray of shape (n_grid, n_clusters)
        The probability that a subsample selects at least one member of each
        unit, at each grid point (NaN where not walked).
    cluster_probabilities_ : ndarray of shape (n_clusters,)
        Largest probability over Λ that a subsample selects at least one
        member of each unit.
    groups_ : list of list of int
        The stable groups: units of two or more columns whose probability
        reaches the threshold while no member's own does (empty when none).
    group_probabilities_ : ndarray of shape (n_groups,)
        Their probabilities.
    n_units_ : int
        The number of units, the p of the bound.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names.

    References
    ----------
    N. Meinshausen and P. Bühlmann, "Stability selection", Journal of the
    Royal Statistical Society B 72(4):417-473, 2010.
    G. Faletto and J. Bien, "Cluster stability selection", arXiv:2201.00494,
    2022.
    R. D. Shah and R. J. Samworth, "Variable selection with error control:
    another look at stability selection", Journal of the Royal Statistical
    Society B 75(1):55-80, 2013.

    Examples
    --------
    >>> from sklearn.datasets import make_friedman1
    >>> from numkfs import StabilitySelection
    >>> X, y = make_friedman1(n_samples=120, n_features=8, random_state=0)
    >>> sel = StabilitySelection("lpkta", n_resamples=5, threshold=0.9, max_features=3, random_state=0).fit(X, y)
    >>> sel.stability_path_.shape, sel.get_support().nonzero()[0].tolist(), round(sel.pfer_bound_mb_, 2)
    ((101, 8), [1, 3], 1.31)
    >>> sel.bound_, bool(sel.pfer_bound_ < sel.pfer_bound_mb_)
    ('unimodal', True)
    """

    def __init__(self, selector="knife", *, n_resamples=N_RESAMPLES, sample_fraction=0.5, threshold=0.9, pfer=1.0,
                 bound="unimodal", max_features=None, group_correlation=GROUP_CORRELATION, task=None,
                 random_state=None, n_jobs=None, params=None, **kwargs):
        self.selector = selector
        self.group_correlation = group_correlation
        self.n_resamples = n_resamples
        self.sample_fraction = sample_fraction
        self.threshold = threshold
        self.pfer = pfer
        self.bound = bound
        self.max_features = max_features
        self.task = task
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.params = self.merge_params(params, kwargs)  # stored as given, kwargs joined (checked in fit)

    _parameter_constraints = {
        "threshold": [Interval(numbers.Real, 0.5, 1, closed="right")],
        "n_resamples": [Interval(numbers.Integral, 1, None, closed="left")],
        "sample_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "pfer": [Interval(numbers.Real, 0, None, closed="neither")],
        "bound": [Options(BOUNDS)],
        "max_features": [NoneOr, Interval(numbers.Real, 0, None, closed="neither")],
        "group_correlation": [NoneOr, Interval(numbers.Real, 0, 1, closed="neither")],
        **SELECTOR_CONSTRAINTS,
    }

    def _validate_params(self):
        params = self.get_params(deep=False)
        if self.max_features is not None:
            del params["pfer"]  # not read: max_features bounds the selection instead
        validate_params(params, self._parameter_constraints, type(self).__name__)

    def fit(self, X, y):
        """Fit the method's path on all rows and on every subsample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.
        y : array-like of shape (n_samples,)
            Target values: the response, or the class labels.

        Returns
        -------
        self
        """
        from .model_selection import parallel_map
        from ._registry import METHOD_ROWS, resolve
        from .resampling import MIN_PATH_ROWS, method_path

        method, X, y, task = self._fit_data(X, y, min_samples=2)
        n, p = X.shape
        classification = task == "classification"
        row = METHOD_ROWS[method]
        counts = np.unique(y, return_counts=True)[1] if classification else np.array([n])
        m = int(np.floor(self.sample_fraction * counts).sum())  # the rows of a (stratified) subsample
        if m < MIN_PATH_ROWS:
            raise ValueError(f"sample_fraction={self.sample_fraction} of {n} rows gives subsamples of {m} rows; "
                             f"{method} needs at least {MIN_PATH_ROWS}: raise sample_fraction or give more rows.")
        if classification and np.any(counts * self.sample_fraction < 1):
            labels = np.unique(y)
            j = int(np.argmax(counts * self.sample_fraction < 1))
            raise ValueError(f"sample_fraction={self.sample_fraction} leaves class {labels[j]!r} ({counts[j]} rows) "
                             "out of the subsamples: raise sample_fraction or give more rows of that class.")
        names = getattr(self, "feature_names_in_", None)
        # purpose: a method may set its path for stability selection (KNIFE's shorter grid)
        params = self.params
        full = method_path(self.selector, X, y, params=params, task=task, feature_names=names, purpose="stability")
        subsamples = complementary_pairs(y, self.n_resamples, self.sample_fraction, classification=classification,
                                         random_state=self.random_state)
        clusters = ([np.array([j]) for j in range(p)] if self.group_correlation is None
                    else correlation_groups(X, self.group_correlation))
        n_units = len(clusters)
        self.q_ = float(self.max_features if self.max_features is not None
                        else q_for_pfer(self.pfer, p, self.threshold, self.n_resamples, self.bound))
        # a path walked from its dense end (KNIFE's): the subsamples skip the points far denser than the region
        # (with select()'s settings of a method given by name, the path the walk was chosen for)
        walked = None if row.stability_walk is None or not isinstance(self.selector, str) else \
            resolve(row.stability_walk)(full, self.q_)
        fit_one = _SubsamplePath(self.selector, X, y, full, params, task, walked)
        results = parallel_map(fit_one, subsamples, n_jobs=self.n_jobs)
        _rewarn(results, len(subsamples))
        sel = np.stack([r[0] for r in results])  # (n_subsamples, n_grid, p); a point not walked: every feature
        self.method_ = method
        self.path_ = full
        self.grid_ = full.grid.copy()
        self.grid_name_ = full.grid_name
        self.n_subsamples_ = len(subsamples)
        self.walked_ = np.ones(full.grid.size, dtype=bool) if walked is None else walked
        self.stability_path_ = sel.mean(axis=0)
        self.mean_selected_ = sel.sum(axis=2).mean(axis=0)
        self.threshold_ = float(self.threshold)
        # the units: a cluster is selected on a subsample when any member is (a lone feature: itself)
        units = np.stack([sel[:, :, g].any(axis=2) for g in clusters], axis=2)
        # the region from the features' selections (at most q features on average, members of a group
        # counted one by one), q_Λ of the units (a group selected when any member is) for the bound
        self.region_, _ = _region(sel, self.mean_selected_, self.q_)
        self.q_region_ = float(units[:, self.region_].any(axis=1).sum(axis=1).mean()) if self.region_.any() else 0.0
        unit_path = units.mean(axis=0)
        self.cluster_stability_path_ = unit_path.copy()
        self.cluster_stability_path_[~self.walked_] = np.nan
        self.stability_path_[~self.walked_] = np.nan
        self.mean_selected_[~self.walked_] = np.nan
        if not self.region_.any():
            warnings.warn(f"StabilitySelection: even the sparsest end of the {method} grid selects "
                          f"{np.nanmin(self.mean_selected_):.3g} features on average, more than q = {self.q_:.3g}: "
                          "nothing is selected; raise pfer or max_features, or give a grid that reaches sparser "
                          "models (params).", UserWarning, stacklevel=2)
            self.selection_probabilities_ = np.zeros(p)
            self.cluster_probabilities_ = np.zeros(n_units)
        else:
            self.selection_probabilities_ = self.stability_path_[self.region_].max(axis=0)
            self.cluster_probabilities_ = unit_path[self.region_].max(axis=0)
        # the bounds of the procedure that selects units (any selection procedure's): p = the number of units
        self.n_units_ = n_units
        self.pfer_bound_mb_, self.pfer_bound_unimodal_ = pfer_bounds(self.q_region_, n_units, self.threshold_,
                                                                     self.n_resamples)
        # the unimodal bound where it is proved, else Meinshausen & Bühlmann's (which always holds)
        self.bound_ = "mb" if self.bound == "unimodal" and np.isnan(self.pfer_bound_unimodal_) else self.bound
        self.pfer_bound_ = pfer_bound(self.q_region_, n_units, self.threshold_, self.n_resamples, self.bound_)
        self.support_ = self.selection_probabilities_ >= self.threshold_
        self.clusters_ = clusters
        stable = [u for u, g in enumerate(clusters) if g.size > 1 and self.cluster_probabilities_[u] >= self.threshold_
                  and not self.support_[g].any()]
        self.groups_ = [clusters[u].tolist() for u in stable]
        self.group_probabilities_ = self.cluster_probabilities_[stable]
        return self

    def _stability_feature_path(self):
        """The stability path as a :class:`~numkfs.FeaturePath` (what
        :func:`numkfs.plotting.plot_stability` draws): the selection
        probabilities as weights over the grid, a feature selected at a point
        when its probability reaches the threshold."""
        from .paths import FeaturePath

        return FeaturePath(self.grid_, self.stability_path_, grid_name=self.grid_name_,
                           feature_names=getattr(self, "feature_names_in_", None), method="stability",
                           tol=float(np.nextafter(float(self.threshold_), 0.0)))

    def plot(self, ax=None, *, highlight=None):
        """Draw the stability path: selection probabilities against the grid,
        with the threshold and the region Λ.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; default a new figure.
        highlight : array of bool or of int, optional
            Features drawn in colour and named (default: the selected ones,
            or every feature up to 15).

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on; nothing is shown on screen: in a script, call
            ``matplotlib.pyplot.show()`` (a notebook shows it by itself).

        See Also
        --------
        numkfs.plotting.plot_stability : The function behind this method.
        """
        from .plotting import plot_stability

        check_is_fitted(self, "stability_path_")
        return plot_stability(self, ax=ax, highlight=highlight)


def _region(sel, mean_selected, q):
    """Λ (a mask over the grid) and q_Λ: the longest stretch from the sparse
    end on which the average size of the union of the selections is <= q."""
    n_grid = sel.shape[1]
    order = np.arange(n_grid)
    if mean_selected[-1] < mean_selected[0]:
        order = order[::-1]
    union = np.logical_or.accumulate(sel[:, order, :], axis=1).sum(axis=2).mean(axis=0)  # (n_grid,)
    keep = np.flatnonzero(union <= q * (1 + 1e-12))
    region = np.zeros(n_grid, dtype=bool)
    if keep.size == 0 or keep[0] != 0:
        return region, 0.0
    k = int(np.argmax(union > q * (1 + 1e-12))) if (union > q * (1 + 1e-12)).any() else n_grid
    region[order[:k]] = True
    return region, float(union[k - 1])


def _rewarn(results, n):
    """One warning per distinct message of the subsamples' fits (with a count)."""
    seen = {}
    for _, caught in results:
        for cat, msg in caught:
            key = (cat, msg.split(" at ")[0][:120])
            seen.setdefault(key, [cat, msg, 0])[2] += 1
    for cat, msg, count in seen.values():
        warnings.warn(f"in {count} of {n} subsample fits: {msg}", cat, stacklevel=3)
