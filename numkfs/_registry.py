"""The method registry: one frozen row per method, the one place a method's facts live.

Each method of numkfs (KNIFE, lp-KTA, NMMKL, L1KR, the garrote, COSSO) is one
:class:`MethodRow` of :data:`METHOD_ROWS`: its path function and grid, its
estimators per task, its default CV rule per question, its scores and
selection tolerance, its thread policy, its labels, and the functions of
its own modules that say how :func:`numkfs.select` and the resampling
selectors reach it.  A row says what a method is; its modules say how it
works.  Every other module reads the row: the public tables
:data:`numkfs.selection.METHODS`,
:data:`numkfs.model_selection.DEFAULT_CV_RULES`,
:data:`numkfs.model_selection.SCORINGS` and :data:`numkfs.paths.SELECTION_TOL`
are :class:`RowTable` views of the rows (they hold a row added later too),
and :data:`numkfs._threads.SERIAL_MAX_SAMPLES` and
:data:`numkfs.plotting.METHOD_LABELS` are built from them, so adding a
method or changing one's default means changing its row (see "Adding a
method" in ``docs/contributing.md``).

A ground-floor module: it imports nothing of numkfs and nothing heavy (the
command line's parser reads it without numpy).  Functions and classes are
named by dotted strings, ``"module:name"``, resolved on use by :func:`resolve`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Mapping

__all__ = ["CV_QUESTIONS", "CV_RULE_NAMES", "METHOD_ROWS", "SINGLE_METHOD_FIELDS", "FixedCount", "MethodRow",
           "RowTable", "method_row", "resolve"]

#: The questions a default CV rule answers: a model that predicts well, or the
#: features that matter (:func:`numkfs.select` asks the second).  The two have
#: different answers on one CV curve, so each row names a rule for each.
CV_QUESTIONS = ("prediction", "selection")

#: The rules a row's ``cv_rules`` may name per question (what each does:
#: :data:`numkfs.model_selection.RULES`): the estimators choose on the path's own CV
#: scores; :func:`numkfs.select` may also choose on the relaxed refit (:mod:`numkfs.relaxed`).
CV_RULE_NAMES = MappingProxyType({"prediction": ("best", "1se", "1pct", "2pct"),
                                  "selection": ("best", "1se", "1pct", "2pct", "relaxed_best", "relaxed_1se")})


def resolve(dotted: str):
    """The object a dotted name ``"package.module:name"`` names (imported on use).

    Parameters
    ----------
    dotted : str
        A module path and an attribute of it, joined by ``":"``.

    Returns
    -------
    object

    Examples
    --------
    >>> from numkfs._registry import resolve
    >>> resolve("numkfs.paths:support_mask").__name__
    'support_mask'
    """
    module, _, name = dotted.partition(":")
    return getattr(importlib.import_module(module), name)


def _frozen(obj):
    """Read-only mappings (and tuples), so that a frozen row cannot be changed in place."""
    if isinstance(obj, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in obj.items()})
    if isinstance(obj, list):
        return tuple(obj)
    return obj


class _Frozen:
    """A frozen dataclass whose mapping fields are read-only."""

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, _frozen(getattr(self, f.name)))


@dataclass(frozen=True)
class FixedCount(_Frozen):
    """How :func:`numkfs.select` keeps exactly ``n_features`` features with an
    estimator of its own, instead of reading the CV path at that count
    (NMMKL: its top-m selection at m = ``n_features``).

    A dataclass: each parameter is stored as the attribute of the same name.

    Parameters
    ----------
    estimator : str
        The estimator, a dotted name.
    parameter : str
        Its parameter that takes the count.
    tie_note : str
        How it breaks a tie at the count (said by the tie warning).
    score : str
        The held-out score of the features it keeps:
        ``(X, y, mask, cv, random_state, scoring) -> float``.
    """

    estimator: str
    parameter: str
    tie_note: str
    score: str


@dataclass(frozen=True)
class MethodRow(_Frozen):
    """Everything numkfs knows about one method, in one frozen row of :data:`METHOD_ROWS`.

    A dataclass: each parameter is stored as the attribute of the same name.
    Functions and classes are dotted names ``"module:name"`` (:func:`resolve`).

    Parameters
    ----------
    name : str
        The method's name, as :func:`numkfs.select`, the command line and
        :attr:`numkfs.FeaturePath.method` spell it.
    label : str
        The method's name in plots and printed text (``"lp-KTA"``).
    weight_label : str
        What its feature weights are, for a plot's weight axis.
    tasks : tuple of str
        ``"regression"`` and/or ``"classification"``, in the order the
        messages list them.
    path : str
        The path function.
    grid : str or None
        The path function's keyword that takes the grid (None: the path is
        traced adaptively and read at the grid afterwards, by its
        ``resample_path``).
    estimators : dict
        Task -> the method's estimators that do it.
    select_estimator : dict
        Task -> the cross-validating estimator :func:`numkfs.select` fits.
    cv_rules : dict
        Question (:data:`CV_QUESTIONS`) -> the default rule (``"best"`` or
        ``"1se"``) that chooses the path point for it; :func:`numkfs.select`
        uses the ``"selection"`` rule.
    scorings : dict
        Task -> the held-out scores the method offers, the default first.
    selection_tol : float
        A feature is selected when ``|weight| > selection_tol`` (0 for
        methods that set exact zeros).
    serial_max_samples : int or None
        The thread policy (:func:`numkfs._threads.thread_limits`): fits on at
        most this many samples run with one Numba and one BLAS thread; ``0``:
        BLAS always single-threaded while Numba keeps its setting; None: the
        common policy only.
    thread_variants : dict
        Further thread policies, by the name a variant of the method's fit
        asks :func:`numkfs._threads.thread_limits` for (KNIFE through a
        Nyström basis).
    select_solver : str or None
        The solver :func:`numkfs.select` reports when the estimator has no
        ``solver_`` (a native algorithm).
    select_settings : str or None
        ``(settings, *, task, y) -> dict``: the keyword arguments
        :func:`numkfs.select` gives the method's estimator, from those given
        (None: as given).
    select_readout : str or None
        ``(estimator, X, selected) -> (weights, selected, extra)``: what
        :func:`numkfs.select` reports of the fitted estimator at its chosen
        point (``selected``: the support read from the path there) -- the
        weights, the support and ``SelectionResult.extra`` entries (None:
        ``feature_weights_``, ``selected`` and nothing more).
    fixed_count : FixedCount or None
        How :func:`numkfs.select` keeps exactly ``n_features`` features, when
        not by reading the path.
    cross_check : dict
        ``numkfs cross-check --problem`` name -> the builder of the method's
        convex subproblem.
    guide : str
        The method's page of the user guide (a path in the repository).
    path_defaults : dict
        Settings of the path function that differ from its defaults, for
        :func:`numkfs.select`'s settings of a method given by name to the
        resampling selectors (:func:`numkfs.resampling.method_path`).
    shared : dict
        Path keyword -> key path into ``path.extra`` of the full-data path:
        a setting computed on the full data and re-used on every subsample.
    path_settings : str or None
        ``(settings, *, selector, task, y, params, purpose) -> dict``: the
        path function's keyword arguments for a resampling selector, from
        the generic ones (``path_defaults`` or the estimator's parameters,
        then ``params``); ``purpose`` is ``"stability"``, ``"knockoffs"`` or
        ``"path"`` (None: as given).
    resample_path : str or None
        ``(row, X, y, settings, *, task, grid, ratio, feature_names) ->
        FeaturePath``: the path on the rows given over ``grid`` (in the units
        of the full-data path, which had ``1 / ratio`` times as many rows;
        None: the full data's own default grid) -- the method's
        preprocessing, grid and reading of its path (None:
        :func:`numkfs.resampling.grid_path`, the path function called with
        the grid).
    stability_walk : str or None
        ``(path, q) -> mask or None``: the grid points the subsamples of
        :class:`numkfs.StabilitySelection` walk, given the full-data path
        and the region's bound q (None: every point).
    """

    name: str
    label: str
    weight_label: str
    tasks: tuple
    path: str
    grid: str | None
    estimators: Mapping
    select_estimator: Mapping
    cv_rules: Mapping
    scorings: Mapping
    selection_tol: float = 0.0
    serial_max_samples: int | None = None
    thread_variants: Mapping = field(default_factory=dict)
    select_solver: str | None = None
    select_settings: str | None = None
    select_readout: str | None = None
    fixed_count: FixedCount | None = None
    cross_check: Mapping = field(default_factory=dict)
    guide: str = ""
    path_defaults: Mapping = field(default_factory=dict)
    shared: Mapping = field(default_factory=dict)
    path_settings: str | None = None
    resample_path: str | None = None
    stability_walk: str | None = None

    @property
    def path_name(self) -> str:
        """The path function's name (``"knife_path"``)."""
        return self.path.rpartition(":")[2]

    def estimator_rule(self, cv_rule: str) -> str:
        """The rule the method's CV estimator is fitted with when ``cv_rule``
        is asked for: ``cv_rule`` itself when the estimators take it, else
        (a relaxed rule, which then chooses a point of the fitted path) the
        row's prediction rule.

        Examples
        --------
        >>> from numkfs._registry import method_row
        >>> method_row("lpkta").estimator_rule("relaxed_best"), method_row("knife").estimator_rule("1pct")
        ('1se', '1pct')
        """
        return cv_rule if cv_rule in CV_RULE_NAMES["prediction"] else self.cv_rules["prediction"]

    @property
    def estimator_names(self) -> tuple:
        """The class names of the method's estimators, each once, in the row's order."""
        out = []
        for names in self.estimators.values():
            out += [n.rpartition(":")[2] for n in names if n.rpartition(":")[2] not in out]
        return tuple(out)


_E = "numkfs.estimators:"
_M = "numkfs.methods:"
_KNIFE_RS = "numkfs.methods.knife._resampling:"
_KNIFE_CV = "numkfs.estimators._knife_cv:"
_L1KR_RS = "numkfs.methods.l1kr._resampling:"
_REGRESSION = ("neg_mean_squared_error",)

_ROWS = (
    MethodRow(
        "knife", "KNIFE", "feature weight w", ("regression", "classification"), _M + "knife_path", "grid",
        estimators={"regression": (_E + "KNIFERegressor", _E + "KNIFERegressorCV"),
                    "classification": (_E + "KNIFEClassifier", _E + "KNIFEClassifierCV")},
        select_estimator={"regression": _E + "KNIFERegressorCV", "classification": _E + "KNIFEClassifierCV"},
        # selection: the sparsest point within 1 % of the best loss leaves the flat stretch of noise features
        # that "best" stops on, and loses fewer true features than 1se or 2 % (selection guide)
        cv_rules={"prediction": "best", "selection": "1pct"},
        # accuracy first (the default): it chooses models as accurate on new data as the held-out loss or the
        # deviance, with fewer false features (selection guide)
        scorings={"regression": _REGRESSION, "classification": ("accuracy", "neg_loss", "neg_log_loss")},
        selection_tol=1e-6,
        serial_max_samples=2000,  # up to this n, threads cost more than KNIFE's per-point work gains
        # through a Nyström basis: small m x m Cholesky and rank-k updates, which threaded BLAS slows down
        thread_variants={"knife_nystroem": 0},
        # a 40-point λ2 grid keeps the CLI's main job under a minute; a subsampled CV's support is its refit's
        select_settings=_KNIFE_CV + "select_settings", select_readout=_KNIFE_CV + "select_readout",
        cross_check={"knife-wstep": "numkfs._crosscheck_problems:knife_wstep_problem"},
        guide="docs/guide/knife.md",
        path_defaults={"n_grid": 40, "random_state": 0}, shared={"gamma": ("params", "gamma")},
        # class labels: KNIFEClassifierCV's loss and lambda1; X standardised as its estimators do; one-vs-rest
        # paths on many classes; stability selection's shorter grid, walked from where the region can begin
        path_settings=_KNIFE_RS + "path_settings", resample_path=_KNIFE_RS + "resample_path",
        stability_walk=_KNIFE_RS + "walked_points",
    ),
    MethodRow(
        "lpkta", "lp-KTA", "kernel weight η", ("classification", "regression"), _M + "lpkta_path", "grid",
        estimators={"classification": (_E + "LpKTASelector", _E + "LpKTASelectorCV", _E + "LpKTAClassifier",
                                       _E + "LpKTAClassifierCV"),
                    "regression": (_E + "LpKTASelector", _E + "LpKTASelectorCV")},
        select_estimator={"classification": _E + "LpKTASelectorCV", "regression": _E + "LpKTASelectorCV"},
        # its best CV score lies on a flat stretch near p = 2 (the dense end) that keeps noise features; for
        # selection the relaxed refit's best point leaves them out where even 1se keeps some (selection guide)
        cv_rules={"prediction": "1se", "selection": "relaxed_best"},
        scorings={"classification": ("neg_hinge_loss", "accuracy"), "regression": _REGRESSION},
        select_solver="per-feature Newton (native)",
        select_settings="numkfs.estimators._lpkta:select_settings",  # the target of the task given
        guide="docs/guide/lpkta.md",
        path_settings="numkfs.methods.lpkta:lpkta_path_settings",  # the target of the task given
    ),
    MethodRow(
        "nmmkl", "NMMKL", "selection weight p", ("classification",), _M + "nmmkl_path", "grid",
        estimators={"classification": (_E + "NMMKLSelector", _E + "NMMKLSelectorCV")},
        select_estimator={"classification": _E + "NMMKLSelectorCV"},
        # the rule chooses m; for selection the sparsest m within 2 % of the best CV loss, which keeps
        # fewer false features than "best" where the path cannot reach the truth alone (selection guide)
        cv_rules={"prediction": "best", "selection": "2pct"},
        scorings={"classification": ("neg_hinge_loss", "accuracy")},
        serial_max_samples=0,  # the native QCQP's small dense solves
        # its weights are 0/1 selections along its path in m; its scores φ rank the features
        select_readout="numkfs.estimators._nmmkl:select_readout",
        # one of at most four single-method fields (SINGLE_METHOD_FIELDS)
        fixed_count=FixedCount(_E + "NMMKLSelector", "n_features_to_select",
                               "NMMKL breaks the tie by its relaxed selection p",
                               "numkfs.estimators._nmmkl:linear_svm_cv_score"),
        cross_check={"nmmkl": "numkfs._crosscheck_problems:nmmkl_problem"},
        guide="docs/guide/nmmkl.md",
        resample_path="numkfs.methods.nmmkl:nmmkl_resample_path",  # its grid of m holds integers
    ),
    MethodRow(
        "l1kr", "L1KR", "ARD kernel weight β", ("regression",), _M + "l1kr_path", None,
        estimators={"regression": (_E + "L1KRRegressor", _E + "L1KRRegressorCV")},
        select_estimator={"regression": _E + "L1KRRegressorCV"},
        # its best CV score lies on a flat stretch of the path that keeps noise features; for selection the
        # relaxed refit's best point leaves them out where even 1se keeps some (selection guide)
        cv_rules={"prediction": "1se", "selection": "relaxed_best"},
        scorings={"regression": _REGRESSION},
        serial_max_samples=999,  # per-call work too small for threads below this n; a threaded QR waits on a busy machine
        select_solver="homotopy (native)",
        guide="docs/guide/l1kr.md",
        path_defaults={"lambda1": 0.01},
        # one λ1; the path traced in full, λ1 and D scaled by the rows' ratio, read at the grid by l1kr_path_at
        path_settings=_L1KR_RS + "path_settings", resample_path=_L1KR_RS + "resample_path",
    ),
    MethodRow(
        "garrote", "Garrote", "feature weight w", ("regression",), _M + "garrote_path", "grid",
        estimators={"regression": (_E + "GarroteRegressor", _E + "GarroteRegressorCV")},
        select_estimator={"regression": _E + "GarroteRegressorCV"},
        # its relaxed CV (GarroteRegressorCV(relax=True)) predicts best with "best"; for selection the sparsest
        # point within 2 % of its CV loss, which leaves out the noise features "best" can keep (selection guide)
        cv_rules={"prediction": "best", "selection": "2pct"},
        scorings={"regression": _REGRESSION},
        selection_tol=1e-6,
        cross_check={"garrote": "numkfs._crosscheck_problems:garrote_problem"},
        guide="docs/guide/garrote.md",
        # standardised columns, as GarroteRegressorCV (what select() runs) fits them
        path_defaults={"n_grid": 50, "standardize": True},
    ),
    MethodRow(
        "cosso", "COSSO", "component weight θ", ("regression",), _M + "cosso_path", "grid",
        estimators={"regression": (_E + "COSSORegressor", _E + "COSSORegressorCV")},
        select_estimator={"regression": _E + "COSSORegressorCV"},
        # its best CV score lies on a flat stretch of the path that keeps noise features
        cv_rules={"prediction": "1se", "selection": "1se"},
        scorings={"regression": _REGRESSION},
        selection_tol=1e-6,
        serial_max_samples=0,  # one n x n Cholesky per alternation: BLAS single-threaded at every size
        guide="docs/guide/garrote.md",
        shared={"lambda0": ("lambda0",)},
    ),
)

#: The fields of :class:`MethodRow` that one method alone sets, each with the reason it is a field and not
#: part of a function every method provides (``tests/test_registry.py`` counts the rows setting each field).
SINGLE_METHOD_FIELDS = MappingProxyType({
    "thread_variants": "a thread policy of a variant of the fit (KNIFE through a Nyström basis), read by "
                       "numkfs._threads before any method's module is imported",
    "fixed_count": "only NMMKL has an estimator of its own that keeps a given count (its top-m rule)",
    "stability_walk": "only KNIFE's path is walked from its dense end with warm starts whose zero weights stay "
                      "zero, so that stability selection's subsamples can skip the points outside the region",
})

#: Method name -> its row, in the order the messages list the methods.
_BY_NAME = {row.name: row for row in _ROWS}  # behind METHOD_ROWS (a test registers a toy method here)
METHOD_ROWS = MappingProxyType(_BY_NAME)


class RowTable(Mapping):
    """A read-only table of one fact per method, read from :data:`METHOD_ROWS`
    on every use, so that it always holds the rows' values and no more.

    Parameters
    ----------
    value : callable
        ``row -> value``: the table's value for a method.
    keep : callable, optional
        ``row -> bool``: the methods the table holds (default: all).

    Examples
    --------
    >>> from numkfs._registry import RowTable
    >>> tasks = RowTable(lambda row: row.tasks)
    >>> tasks["nmmkl"], list(tasks)[:2]
    (('classification',), ['knife', 'lpkta'])
    """

    def __init__(self, value, keep=None):
        self._value, self._keep = value, keep

    def _rows(self):
        return [row for row in METHOD_ROWS.values() if self._keep is None or self._keep(row)]

    def __getitem__(self, name):
        row = METHOD_ROWS[name]
        if self._keep is not None and not self._keep(row):
            raise KeyError(name)
        return self._value(row)

    def __iter__(self):
        return iter([row.name for row in self._rows()])

    def __len__(self):
        return len(self._rows())

    def __repr__(self):
        return repr(dict(self))


def method_row(method: str) -> MethodRow:
    """The row of ``method`` (any case).

    Parameters
    ----------
    method : str
        A key of :data:`METHOD_ROWS`.

    Returns
    -------
    MethodRow

    Raises
    ------
    ValueError
        For an unknown method (the message lists the methods).

    Examples
    --------
    >>> from numkfs._registry import method_row
    >>> method_row("COSSO").cv_rules["selection"], method_row("lpkta").tasks
    ('1se', ('classification', 'regression'))
    """
    row = METHOD_ROWS.get(str(method).lower())
    if row is None:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHOD_ROWS)}.")
    return row
