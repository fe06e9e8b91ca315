"""One call for every method: :func:`select` (what ``numkfs select`` runs).

Each method is reached through its cross-validating scikit-learn estimator
and turned into features by the selection contract of
:mod:`numkfs.model_selection`: fold-wise preprocessing, a score named by
what it is (negative mean squared error for regression; a held-out loss for
classification by default, accuracy on request), ``cv_rule="best"``,
``"1se"``, ``"1pct"`` or ``"2pct"``, or best and 1se on the relaxed refit
(:mod:`numkfs.relaxed`) (by default each method's rule of
:data:`numkfs.model_selection.DEFAULT_CV_RULES`), an exact count with ``n_features``, and the support read from
the path by the method's one tolerance.  NMMKL's path runs over the number
of features m (:class:`numkfs.NMMKLSelectorCV`): each fold's selections are
scored by a linear SVM on them (standardised inside the fold), the model of
its paper; with ``n_features`` it keeps that many, scored the same way.
"""
from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass, field

import numpy as np

from ._registry import METHOD_ROWS, RowTable, resolve
from ._constraints import BOOL, Interval, NoneOr, Options, validate_params

__all__ = ["select", "SelectionResult", "METHODS"]

#: method -> tasks it supports (from the method registry, ``numkfs._registry``).
METHODS = RowTable(lambda row: row.tasks)

#: Words for the score names (a ``neg_`` score is printed as the positive loss).
_SCORE_WORDS = {
    "neg_mean_squared_error": "mean squared error",
    "neg_log_loss": "log-loss (deviance per row)",
    "neg_hinge_loss": "hinge loss",
    "accuracy": "accuracy",
}


@dataclass
class SelectionResult:
    """What :func:`select` found.

    A dataclass: each parameter is stored as the attribute of the same name.

    Parameters
    ----------
    method, task : str
        The selection method used and the task (regression or classification).
    feature_names : list of str
        Names of the features, in column order.
    weights : ndarray (n_features,)
        The method's feature weights at the chosen point.
    selected : ndarray of bool (n_features,)
        Which features are selected.
    score : float
        Mean cross-validated score at the chosen point, higher is better
        (e.g. minus the mean squared error); ``score_name`` says which.
    score_name : str
        ``"neg_mean_squared_error"``, ``"neg_log_loss"``, ``"neg_<loss>"``,
        ``"neg_hinge_loss"`` or ``"accuracy"``.
    solver : str
        The solver the fitted estimator reports (its ``solver_``), or the
        native algorithm's name (e.g. ``"homotopy (native)"``).
    path : FeaturePath or None
        The path, with ``chosen_index`` the point chosen.
    estimator : object, optional
        The fitted estimator.
    extra : dict, optional
        Method-specific extra results (e.g. ``"scores"``).
    index : int or None
        The chosen point of ``path``.
    cv_rule : str, default="best"
        ``"best"``, ``"1se"``, ``"1pct"``, ``"2pct"``, ``"relaxed_best"``, ``"relaxed_1se"``,
        ``"n_features"``, ``"stability"`` or ``"knockoffs"``.
    weight_name : str, default="weight"
        What ``weights`` hold: ``"weight"`` (the method's feature weights),
        ``"probability"`` (stability selection's selection probabilities) or
        ``"statistic"`` (the knockoff statistics, or the e-values of several
        draws); the table's column and the JSON key.
    groups : list of list of int, optional
        Stable groups (stability selection): lists of column indices of
        features that substitute for each other across the subsamples, none
        stable alone, the group stable (``extra["stability"]["groups"]``
        holds their probabilities).  Knockoffs: the selected groups of
        correlated features, each tested as one (``extra["knockoffs"]["groups"]``).
        Empty when there are none.
    """

    method: str
    task: str
    feature_names: list
    weights: np.ndarray
    selected: np.ndarray
    score: float
    score_name: str
    solver: str
    path: object = None
    estimator: object = None
    extra: dict = field(default_factory=dict)
    index: int | None = None
    cv_rule: str = "best"
    weight_name: str = "weight"
    groups: list = field(default_factory=list)

    @property
    def n_selected(self) -> int:
        """Number of selected features."""
        return int(np.sum(self.selected))

    def score_text(self) -> str:
        """The score in words, e.g. ``"cross-validated mean squared error: 0.123"``;
        for stability selection and knockoffs, the error bound or target instead."""
        st, kn = self.extra.get("stability"), self.extra.get("knockoffs")
        if st is not None:
            words = {"unimodal": "Shah-Samworth, unimodal", "r-concave": "Shah-Samworth, r-concave",
                     "mb": "Meinshausen-Buehlmann"}
            bound = st.get("bound", "mb")
            mb = st.get("pfer_bound_mb")
            extra = "" if bound == "mb" or mb is None or not np.isfinite(mb) else \
                f"; Meinshausen-Buehlmann: {mb:.3g}"
            units = st.get("n_units")
            over = "" if units is None or units == len(self.feature_names) else \
                f" (of {units} units: groups of correlated features and lone features)"
            return (f"stability selection, {st['n_subsamples']} subsamples, threshold {st['threshold']:g}, "
                    f"q = {st['q']:.3g}: expected false selections{over} <= {st['pfer_bound']:.3g} "
                    f"({words.get(bound, bound)}{extra})")
        if kn is not None:
            copies = f" of {kn['n_copies']} copies" if kn.get("n_copies", 1) > 1 else ""
            return (f"model-X knockoffs ({kn['s_method']} s, {kn['covariance']} correlation, "
                    f"{kn['n_draws']} draw(s){copies}): false discovery rate controlled at {kn['fdr']:g}, "
                    f"threshold {kn['threshold']:.4g}")
        name = self.score_name
        if name.startswith("neg_"):
            words = _SCORE_WORDS.get(name, name[4:].replace("_", " "))
            return f"cross-validated {words}: {-self.score:.4g}"
        return f"cross-validated {_SCORE_WORDS.get(name, name)}: {self.score:.4g}"

    def table(self, max_rows: int | None = None) -> str:
        """The selected features, then the others, by decreasing weight.

        Parameters
        ----------
        max_rows : int, optional
            Print at most this many feature rows (the selected features
            first, then the next largest weights) and a last line saying how
            many are left out; None prints every feature.

        Returns
        -------
        str
        """
        order = np.lexsort((np.arange(len(self.weights)), -np.abs(self.weights), ~np.asarray(self.selected)))
        shown = order if max_rows is None else order[:max(0, int(max_rows))]
        w = max(7, max(len(str(self.feature_names[j])) for j in shown) if len(shown) else 7)
        lines = [f"{'feature'.ljust(w)}  {self.weight_name:>12}  selected", f"{'-' * w}  {'-' * 12}  --------"]
        for j in shown:
            lines.append(f"{str(self.feature_names[j]).ljust(w)}  {self.weights[j]:12.6g}  "
                         f"{'*' if self.selected[j] else ''}")
        tail = self._group_lines(w)
        if len(shown) < len(order):
            rest = order[len(shown):]
            n_sel = int(np.sum(np.asarray(self.selected)[rest]))
            sel = f", {n_sel} of them selected" if n_sel else ""
            lines.append(f"... {len(rest)} more features with |{self.weight_name}| <= "
                         f"{np.abs(self.weights[rest]).max():.6g}"
                         f"{sel} (--all or table(max_rows=None) shows every row)")
        return "\n".join(lines + tail)

    def _group_lines(self, width):
        """The table's rows of the correlated groups (stability selection, knockoffs): every group of two
        or more columns with its probability of having a member selected, or its statistic, starred when
        it is a stable or selected group."""
        st = self.extra.get("stability")
        key, head, mark = "probability", "group (any member selected)", "stable"
        if st is None:
            st = self.extra.get("knockoffs")
            key, head, mark = "statistic", "group (tested as one)", "selected"
        if not st or not st.get("clusters"):
            return []
        stable = {tuple(g["members"]) for g in st.get("groups", [])}
        text = ["{" + ", ".join(map(str, c["members"])) + "}" for c in st["clusters"]]
        width = max(width, len(head), *map(len, text))
        lines = ["", f"{head.ljust(width)}  {key:>12}  {mark}", f"{'-' * width}  {'-' * 12}  {'-' * len(mark)}"]
        for i in sorted(range(len(text)), key=lambda i: -st["clusters"][i][key]):
            c = st["clusters"][i]
            lines.append(f"{text[i].ljust(width)}  {c[key]:12.6g}  "
                         f"{'*' if tuple(c['members']) in stable else ''}")
        return lines

    def _closest_text(self, n_shown=5):
        """For stability selection and knockoffs: the features nearest the threshold that were not
        selected, with their probability or e-value (what a user sees when little passes)."""
        info = self.extra.get("stability") or self.extra.get("knockoffs")
        if info is None:
            return ""
        w = np.asarray(self.weights, dtype=float)
        rest = [j for j in np.argsort(-w, kind="stable") if not self.selected[j]][:n_shown]
        what = {"probability": "selection probability", "statistic": "e-value" if info.get("statistic") ==
                "e-value" else "knockoff statistic"}.get(self.weight_name, self.weight_name)
        t = info.get("threshold")
        thr = f"threshold {t:.4g}" if t is not None and np.isfinite(t) else "no threshold reached"
        lines = []
        if rest:
            lines.append(f"closest not selected ({what}; {thr}): "
                         + ", ".join(f"{self.feature_names[j]} {w[j]:.3g}" for j in rest))
        for g in (self.extra.get("stability") or {}).get("groups", []):
            lines.append(f"stable group {{{', '.join(map(str, g['members']))}}}: probability {g['probability']:.3g} "
                         f"(members: {', '.join(f'{m} {p:.3g}' for m, p in zip(g['members'], g['member_probabilities']))})")
        for g in (self.extra.get("knockoffs") or {}).get("groups", []):
            lines.append(f"selected group {{{', '.join(map(str, g['members']))}}}: {what} {g['statistic']:.3g} "
                         "(a member at least is relevant; the group is tested as one)")
        return "\n".join(lines)

    def summary(self) -> str:
        names = [str(self.feature_names[j]) for j in np.flatnonzero(self.selected)]
        rule = {"best": "best CV score", "1se": "sparsest within 1 SE of the best",
                "1pct": "sparsest within 1% of the best", "2pct": "sparsest within 2% of the best",
                "relaxed_best": "best CV score of the relaxed refit",
                "relaxed_1se": "sparsest within 1 SE of the best relaxed refit",
                "n_features": "requested number of features",
                "stability": "selection probability >= threshold",
                "knockoffs": ("e-BH on the draws' e-values" if (self.extra.get("knockoffs") or {}).get("statistic")
                              == "e-value" else "knockoff statistic >= threshold")}.get(self.cv_rule, self.cv_rule)
        kind = "selected" if "knockoffs" in self.extra else "stable"
        groups = f"; {len(self.groups)} {kind} group(s)" if self.groups else ""
        closest = self._closest_text()
        return (f"method: {self.method} ({self.task}); solver: {self.solver}; point chosen by: {rule}\n"
                f"selected {len(names)} of {len(self.feature_names)} features: {', '.join(names) or '(none)'}"
                f"{groups}\n" + (closest + "\n" if closest else "") + self.score_text())

    def to_dict(self) -> dict:
        """The result as plain Python (what ``numkfs select --json`` writes): the
        features with their ``weight_name`` values, for stability selection
        and knockoffs their bound or target (keys ``"stability"``, ``"knockoffs"``),
        and a relaxed rule's scores (key ``"relaxed"``)."""
        out = {
            "method": self.method, "task": self.task, "solver": self.solver,
            "score": float(self.score) if np.isfinite(self.score) else None, "score_name": self.score_name,
            "cv_rule": self.cv_rule, "index": None if self.index is None else int(self.index),
            "features": [{"name": str(f), self.weight_name: float(w), "selected": bool(s)}
                         for f, w, s in zip(self.feature_names, self.weights, self.selected)],
            "selected": [str(f) for f, s in zip(self.feature_names, self.selected) if s],
            "groups": [[str(self.feature_names[j]) for j in g] for g in self.groups],
        }
        for key in ("stability", "knockoffs", "relaxed"):
            if key in self.extra:
                out[key] = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.extra[key].items()}
        return json_safe(out)  # valid JSON: a knockoff threshold of +inf (nothing selected) is null


def json_safe(obj):
    """NaN/inf as null (JSON has no NaN), numpy scalars as Python numbers."""
    import math

    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def infer_task(y) -> str:
    """``"classification"`` or ``"regression"`` by numkfs's one rule
    (:func:`numkfs.model_selection.target_type`)."""
    from .model_selection import target_type

    return "regression" if target_type(y) == "regression" else "classification"


class _Names:
    """Constraint: names for the columns, a sequence (a list, tuple, 1-D array, pandas Index), not a str."""

    def is_satisfied_by(self, value):
        return (not isinstance(value, (str, bytes)) and hasattr(value, "__len__") and hasattr(value, "__iter__")
                and np.ndim(value) == 1)

    def __str__(self):
        return "a sequence of names, one per column of X (a list, not a str)"


#: The constraints of :func:`select`'s own parameters (checked by
#: :func:`~numkfs._constraints.validate_params` before anything else); ``cv``,
#: ``cv_rule``, ``scoring``, ``random_state`` and ``**params`` are checked by
#: the estimator or selector they go to.
SELECT_CONSTRAINTS = {
    "task": [NoneOr, Options(("regression", "classification"))],
    "n_features": [NoneOr, Interval(numbers.Integral, 1, None, closed="left")],
    "feature_names": [NoneOr, _Names()],
    "verbose": BOOL,
    "stability": BOOL,
    "fdr": [NoneOr, Interval(numbers.Real, 0, 1, closed="neither")],
}


def _check_params(cls, params, method, *, fixed=()):
    """Refuse a keyword of :func:`select` that the method's estimator ``cls`` does not take, naming the
    method and what it takes (the estimator may be a private class); ``fixed``: the names select() sets."""
    taken = cls().get_params(deep=False)
    unknown = [k for k in params if k not in taken or k in fixed]
    if unknown:  # select()'s own parameters (cv, scoring...) are not offered as keywords
        own = set(fixed) | set(SELECT_CONSTRAINTS) | {"cv", "cv_rule", "scoring", "random_state"}
        offered = ", ".join(sorted(k for k in taken if k not in own))
        raise TypeError(f"select: method {method!r} has no parameter {unknown[0]!r}; its keyword arguments are "
                        f"{offered}.")
    return taken


def _coerce_inputs(X, y, feature_names):
    """``select()``'s inputs as the estimators take them: ``(X, y, feature_names)``.

    X may be an array-like, any scipy.sparse matrix or array (made dense), or
    a DataFrame (its column names become the feature names unless
    ``feature_names`` is given; nullable columns' missing values become NaN,
    which the estimators then refuse by name; non-numeric columns are
    refused by name).  y may be a list, an array, a one-column array or a
    pandas Series (its index is ignored: rows are matched by position).
    A clear ValueError for: one sample, a length mismatch, complex numbers,
    missing values in y, a constant y, a wrong number of feature names.
    """
    from ._targets import check_real, target_to_array
    from ._validation import dataframe_to_array

    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        X, cols = dataframe_to_array(X, caller="select")
        if feature_names is None:
            feature_names = cols
    else:
        import scipy.sparse as sp

        if sp.issparse(X):
            X = X.toarray()
        X = np.asarray(X)
        check_real(X, "X", "select")
        if X.dtype.kind not in "biuf":
            try:
                X = X.astype(float)
            except (TypeError, ValueError):
                raise TypeError(f"select: X must be numeric; got an array of dtype {X.dtype}.") from None
        X = X.astype(float, copy=False)
    if X.ndim != 2:
        raise ValueError(f"select: X must be 2-D (n_samples, n_features); got shape {X.shape}.")
    y = target_to_array(y, X.shape[0], caller="select")
    if X.shape[0] < 2:
        raise ValueError(f"select: X has {X.shape[0]} sample(s); at least 2 are required.")
    if feature_names is not None:
        feature_names = [str(f) for f in feature_names]
        if len(feature_names) != X.shape[1]:
            raise ValueError(f"select: {len(feature_names)} feature_names for {X.shape[1]} columns of X.")
        dup = sorted({f for f in feature_names if feature_names.count(f) > 1})
        if dup:  # as a DataFrame's duplicate columns: a name must say which column it is
            raise ValueError(f"select: duplicate feature name(s) {', '.join(map(repr, dup[:10]))} in "
                             f"feature_names; rename them.")
    return X, y, feature_names


def _plain_readout(estimator, X, selected):
    """What :func:`select` reports of a fitted estimator whose row declares no
    ``select_readout``: its ``feature_weights_`` and the support given."""
    return np.asarray(estimator.feature_weights_, dtype=float), selected, {}


def _with_contract(cls, kwargs, **contract):
    """``kwargs`` plus the contract's parameters the estimator class takes."""
    names = cls().get_params(deep=False)
    out = dict(kwargs)
    for k, v in contract.items():
        if k in names and v is not None:
            out.setdefault(k, v)
    return out


def select(X, y, method: str = "knife", *, task: str | None = None, n_features: int | None = None,
           cv: int = 5, cv_rule: str | None = None, scoring: str | None = None, feature_names=None, random_state=0,
           verbose: bool = False, stability: bool = False, fdr: float | None = None,
           **params) -> SelectionResult:
    """Select features with one of numkfs's methods.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    y : array-like of shape (n_samples,)
        The target: class labels or real values.
    method : {"knife", "lpkta", "nmmkl", "l1kr", "garrote", "cosso"}
        The method.
    task : {"regression", "classification"}, optional
        Inferred from y when not given (:func:`numkfs.model_selection.target_type`).
        When given, every step uses it, whatever y's values suggest: the
        estimator, lp-KTA's alignments and kernel model (its ``target``), and
        the paths of ``stability`` and ``fdr``; a 0-4 score is five classes
        by default, a number with ``task="regression"``.
    n_features : int, optional
        Select exactly this many features: NMMKL's m; for the path methods
        the first point from the sparse end with at least this many
        features, ranked by weight (:func:`numkfs.model_selection.index_for_count`),
        instead of the point chosen by ``cv_rule``.
    cv : int or splitter, default=5
        Folds of the cross-validation: an int gives contiguous, unshuffled
        folds (stratified by class for classification), as scikit-learn's
        do, so a fit does not depend on ``random_state``; a splitter (e.g.
        ``KFold(5, shuffle=True, random_state=0)``) shuffles if it says so.
    cv_rule : {"best", "1se", "1pct", "2pct", "relaxed_best", "relaxed_1se"}, optional
        How the path point is chosen: on the method's own CV scores
        (:func:`numkfs.model_selection.choose_from_scores`; ``"best"``;
        ``"1se"``, the sparsest point within one standard error of the
        best; ``"1pct"``, ``"2pct"``, the sparsest point whose mean CV loss
        (for accuracy: error rate) is within 1 or 2 % of the best), or on
        those of the relaxed refit, each point's
        features refitted without the method's penalty by one kernel ridge
        on the same folds (:func:`numkfs.relaxed.relaxed_choice`;
        ``extra["relaxed"]`` holds the scores).  For a rule the estimators
        do not take (the relaxed ones) the estimator is fitted
        with the method's prediction rule and the point read off its path.
        Default: the method's rule in
        :data:`numkfs.model_selection.DEFAULT_CV_RULES`, chosen by the true
        and false features kept on simulations with a known truth (the
        selection guide): ``"relaxed_best"`` for L1KR and lp-KTA (their
        own CV curve is flat where their path keeps noise features; even
        their 1se point keeps several), ``"2pct"`` for the garrote and
        NMMKL, ``"1se"`` for COSSO, ``"1pct"`` for KNIFE.  For NMMKL the
        rule chooses m.  For the most accurate predictor pass ``"best"``.
    scoring : str, optional
        The held-out score where the method offers a choice
        (classification: ``"accuracy"`` or the default continuous loss).
    feature_names : sequence of str, optional
        Names of the columns of X, one per column, all different (a
        DataFrame's column names by default).
    random_state : int, default=0
        Seeds what is random in the method (e.g. KNIFE's restarts and the
        subsample of its ``cv_max_samples``), the subsamples of
        ``stability`` and the knockoff draws of ``fdr``.  Not the folds of
        an integer ``cv``: they are unshuffled, so no seed changes them (a
        permutation of the rows does).  The default 0 (the estimators' own
        default is None, a fresh draw each fit) makes two calls on the same
        data agree.
    verbose : bool
        Progress messages from methods that have them.
    stability : bool, default=False
        Select by stability selection instead of cross-validation
        (:class:`numkfs.StabilitySelection` over the method's path, complementary
        pairs): ``weights`` are the selection probabilities and ``extra["stability"]``
        holds the bound on the expected number of false selections
        (``"pfer_bound"``, the one named by ``"bound"``; also
        ``"pfer_bound_mb"`` and ``"pfer_bound_unimodal"``).  Its defaults: 20
        complementary pairs, threshold 0.9, q from a PFER target of 1 under
        Shah & Samworth's unimodal bound (q = 6.5 at p = 20); over KNIFE
        (the subsamples walked from where the region can begin; on class
        labels with the CV selection's λ1 = 3) it keeps most of the features
        the CV selection finds, at a small multiple of its cost (see the
        trust guide).  Features that substitute for each other (absolute
        correlations above 0.5, ``group_correlation``) form units: a group
        whose probability of having a member selected reaches the threshold
        while no member's own does is a stable group (``groups``,
        ``extra["stability"]["groups"]``), and the bound counts units.
    fdr : float in (0, 1), optional
        Select by model-X knockoffs at this false discovery rate instead
        (:class:`numkfs.KnockoffFilter`, derandomised: e-BH on the e-values of
        8 knockoff draws, ``n_draws``): ``weights`` are the average e-values
        (the knockoff statistics with ``n_draws=1``) and ``extra["knockoffs"]``
        the threshold.  Features correlated above 0.5 (``group_correlation``)
        are tested as groups (group knockoffs; a selected group in ``groups``
        and ``extra["knockoffs"]["groups"]``, the FDR over groups and lone
        features).  No fewer than ceil(1 / fdr) units can be selected (a
        warning says so where that is most of them); K knockoff copies per
        draw (``n_copies``, by default as many as bring that to half the
        units) lower it to ceil(1 / (K fdr)).  Not with ``stability``.
    **params
        Passed to the method's estimator; with ``stability`` or ``fdr``, the
        parameters of :class:`~numkfs.StabilitySelection` (``n_resamples``,
        ``threshold``, ``pfer``, ``bound``, ``max_features``, ``sample_fraction``,
        ``group_correlation``, ``n_jobs``) or :class:`~numkfs.KnockoffFilter` (``n_draws``, ``draw_threshold``,
        ``n_copies``, ``group_correlation``, ``knockoffs``, ``n_jobs``) go to it and the others to the method's path.
        ``cv``, ``cv_rule`` and ``scoring`` do not apply there.

    Returns
    -------
    SelectionResult

    References
    ----------
    The method's paper: G. I. Allen, JCGS 22(2), 2013 (KNIFE, garrote);
    F. Li and C. Sminchisescu, AISTATS 2010 (L1KR); P. Jawanpuria, M. Varma
    and J. S. Nath, ICML 2014 (lp-KTA); Z. Xu, R. Jin, J. Ye, M. R. Lyu and
    I. King, ICML 2009 (NMMKL); Y. Lin and H. H. Zhang, Annals of Statistics
    34(5), 2006 (COSSO).  The ``"1se"`` rule: J. Friedman, T. Hastie and
    R. Tibshirani, "Regularization paths for generalized linear models via
    coordinate descent", Journal of Statistical Software 33(1), 2010.  The
    relaxed refit: N. Meinshausen, "Relaxed Lasso", Computational Statistics
    & Data Analysis 52(1), 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import select
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((80, 5))
    >>> y = 2 * X[:, 0] - X[:, 3] + 0.3 * rng.standard_normal(80)
    >>> res = select(X, y, "garrote", cv_rule="1se")
    >>> bool(res.selected[[0, 3]].all()), res.score_name
    (True, 'neg_mean_squared_error')
    """
    from .model_selection import check_scoring, default_cv_rule

    if not isinstance(method, str) or method.lower() not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}.")
    method = method.lower()
    validate_params(dict(task=task, n_features=n_features, feature_names=feature_names, verbose=verbose,
                         stability=stability, fdr=fdr), SELECT_CONSTRAINTS, "select")
    cv_rule = default_cv_rule(method, cv_rule)  # None: the method's rule; anything else is checked
    X, y, feature_names = _coerce_inputs(X, y, feature_names)
    task = task or infer_task(y)
    if task not in METHODS[method]:
        raise ValueError(f"method {method!r} does not do {task}; it does {' and '.join(METHODS[method])}.")
    from ._targets import task_target

    y = task_target(y, task, caller="select")  # class codes 0.0, ..., 11.0 are classes; a continuous y refused
    check_scoring(method, task, scoring)  # one rule for every method: a score it does not offer is refused
    names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(X.shape[1])]
    # constant columns are named here, once, by their feature names; the estimator and the method's
    # path (and each fold) would otherwise repeat the warning with column indices
    import warnings

    from ._validation import ConstantFeatureWarning, constant_columns

    constant_columns(X, caller="select", feature_names=names)
    if stability and fdr is not None:
        raise ValueError("select: stability=True and fdr are two ways of selecting; give one of them.")
    if (stability or fdr is not None) and n_features is not None:
        raise ValueError("select: n_features does not apply with stability or fdr (stability selection "
                         "takes max_features, the knockoffs choose their own number).")
    with warnings.catch_warnings():  # every route: a constant column gets weight 0, said once (above)
        warnings.filterwarnings("ignore", category=ConstantFeatureWarning)
        if stability or fdr is not None:
            return _select_controlled(X, y, method, task, names, random_state, fdr, params)
        return _select(X, y, method, task, names, n_features, cv, cv_rule, scoring, random_state, verbose,
                       params)


#: select()'s parameters that go to StabilitySelection / KnockoffFilter themselves (the rest: the path).
_OWN_PARAMS = {
    "stability": ("n_resamples", "sample_fraction", "threshold", "pfer", "bound", "max_features", "group_correlation",
                  "n_jobs"),
    "knockoffs": ("knockoffs", "n_draws", "draw_threshold", "n_copies", "group_correlation", "n_jobs"),
}


def _select_controlled(X, y, method, task, names, random_state, fdr, params):
    """:func:`select` with ``stability=True`` or ``fdr``: the method's path
    through :class:`~numkfs.StabilitySelection` or :class:`~numkfs.KnockoffFilter`."""
    kind = "stability" if fdr is None else "knockoffs"
    own = {k: v for k, v in params.items() if k in _OWN_PARAMS[kind]}
    path_params = {k: v for k, v in params.items() if k not in _OWN_PARAMS[kind]}
    yy = np.asarray(y)
    if kind == "stability":
        from .stability import StabilitySelection

        est = StabilitySelection(method, task=task, random_state=random_state, params=path_params, **own).fit(X, yy)
        weights = np.asarray(est.selection_probabilities_, dtype=float)
        info = {"threshold": float(est.threshold_), "q": float(est.q_region_), "bound": est.bound_,
                "pfer_bound": float(est.pfer_bound_), "pfer_bound_mb": float(est.pfer_bound_mb_),
                "pfer_bound_unimodal": float(est.pfer_bound_unimodal_), "n_subsamples": int(est.n_subsamples_),
                "n_units": int(est.n_units_),
                "groups": [{"columns": list(g), "members": [names[j] for j in g], "probability": float(pr),
                            "member_probabilities": [float(weights[j]) for j in g]}
                           for g, pr in zip(est.groups_, est.group_probabilities_)],
                "clusters": [{"members": [names[j] for j in g], "probability": float(pr)}
                             for g, pr in zip(est.clusters_, est.cluster_probabilities_) if len(g) > 1]}
        weight_name = "probability"
        groups = [list(map(int, g)) for g in est.groups_]
    else:
        from .knockoffs import KnockoffFilter

        est = KnockoffFilter(method, fdr=fdr, task=task, random_state=random_state, params=path_params,
                             **own).fit(X, yy)
        weights = np.asarray(est.statistics_, dtype=float)
        info = {"fdr": float(fdr), "threshold": float(est.threshold_), "n_draws": int(est.n_draws),
                "draw_threshold": est.draw_threshold,
                "n_copies": int(est.n_copies_),
                "s_method": est.s_method_, "covariance": est.covariance_estimator_,
                "statistic": "knockoff" if est.e_values_ is None else "e-value", "n_units": int(est.n_units_),
                "groups": [{"columns": list(g), "members": [names[j] for j in g], "statistic": float(v),
                            "member_statistics": [float(weights[j]) for j in g]}
                           for g, v in zip(est.groups_, est.group_statistics_)],
                "clusters": [{"members": [names[j] for j in g], "statistic": float(v)}
                             for g, v in zip(est.clusters_, est.cluster_statistics_) if len(g) > 1]}
        weight_name = "statistic"
        groups = [list(map(int, g)) for g in est.groups_]
    solver = str(getattr(est, "solver_", None) or "native")
    return SelectionResult(method, task, names, weights, est.get_support(), float("nan"), kind, solver, None, est,
                           {kind: info}, None, kind, weight_name, groups)


def _select(X, y, method, task, names, n_features, cv, cv_rule, scoring, random_state, verbose, params):
    """:func:`select` after its checks: fit the method's estimator and choose the point."""
    from .model_selection import CV_RULES, RULES, TIE_RTOL, index_for_count, warn_ties

    row, extra = METHOD_ROWS[method], {}
    # a rule the estimators do not take (the relaxed ones: every rule on the path's own CV scores is an
    # estimator's) chooses among the points of the path the estimator fitted with the method's prediction rule
    fit_rule = row.estimator_rule(cv_rule)
    contract = dict(cv=cv, cv_rule=fit_rule, scoring=scoring, random_state=random_state, verbose=verbose)

    readout = _plain_readout if row.select_readout is None else resolve(row.select_readout)
    count = row.fixed_count
    if count is not None and n_features is not None:  # the method's own estimator keeps n_features
        y = np.asarray(y)
        m = n_features
        cls = resolve(count.estimator)
        _check_params(cls, params, method, fixed=(count.parameter,))
        est = cls(**{count.parameter: m}, **params).fit(X, y)
        weights, selected, more = readout(est, X, est.get_support())
        warn_ties(weights, m, kept=selected, feature_names=names, rtol=TIE_RTOL, stacklevel=4, how=count.tie_note)
        score_name = scoring or row.scorings[task][0]
        score = resolve(count.score)(X, y, selected, cv, random_state, score_name)
        extra.update(more)
        return SelectionResult(method, task, names, weights, selected, score, score_name, est.solver_, None, est,
                               extra, None, "n_features")

    cls = resolve(row.select_estimator[task])
    _check_params(cls, params, method)
    kw = dict(params) if row.select_settings is None else resolve(row.select_settings)(params, task=task, y=y)
    solver = row.select_solver or params.get("solver", "auto")
    est = cls(**_with_contract(cls, kw, **contract)).fit(X, y)
    path = est.path_
    est_weights, est_selected, more = readout(est, X, path.selected(int(est.best_index_)))
    extra.update(more)
    if n_features is None and cv_rule in CV_RULES:
        i = int(est.best_index_)
        selected, weights = est_selected, est_weights
        rule = path.cv_rule or cv_rule
    elif n_features is None:  # a relaxed rule: the relaxed refit's scores on the same folds
        from .relaxed import relaxed_choice

        n_se = RULES[cv_rule][1]
        i, rscores, rsizes = relaxed_choice(path, X, np.asarray(y), cv, classifier=task == "classification",
                                            n_se=n_se)
        extra["relaxed"] = {"cv_scores": rscores, "fold_sizes": rsizes, "estimator_rule": fit_rule,
                            "estimator_index": int(est.best_index_)}
        selected = path.selected(i)
        weights = np.where(selected, path.weights[i], 0.0)
        rule = cv_rule
        path = dataclasses.replace(path, chosen_index=i, cv_rule=rule, chosen_support=selected)
    else:
        i, selected = index_for_count(path, n_features, feature_names=names)
        weights = np.where(selected, path.weights[i], 0.0)
        rule = "n_features"
        path = dataclasses.replace(path, chosen_index=i, cv_rule=rule, chosen_support=selected)
    if path.n_features == len(names):
        path.feature_names = np.asarray([str(f) for f in names], dtype=object)
    score = float(path.mean_cv_score[i])
    solver = str(getattr(est, "solver_", solver))
    return SelectionResult(method, task, names, weights, selected, score, path.score_name or "score", solver,
                           path, est, extra, i, rule)
