"""One path interface for the resampling selectors: :func:`method_path`.

Stability selection (:class:`numkfs.StabilitySelection`) fits a method's
path on many subsamples over one common grid, and the knockoff filter
(:class:`numkfs.KnockoffFilter`) fits it once on the data with its
knockoff copies.  Both reach every method through :func:`method_path`: a
method name or a numkfs estimator, data, and optionally the grid (or the
full-data path whose grid and data-dependent settings every subsample
re-uses).  It calls the method's public path function
(:func:`~numkfs.methods.knife_path`, :func:`~numkfs.methods.lpkta_path`,
:func:`~numkfs.methods.l1kr_path`, :func:`~numkfs.methods.garrote_path`,
:func:`~numkfs.methods.cosso_path`, :func:`~numkfs.methods.nmmkl_path`)
with the settings of :func:`numkfs.select` (or of the estimator given) and
without cross-validation: a subsample needs the whole path, not a chosen
point.

What differs between methods is data, in :data:`PATH_SPECS`: the path
function, the name of its grid, the estimators of the method, the settings
of :func:`numkfs.select` that differ from the path function's defaults, the
preprocessing of its estimators (KNIFE's estimators standardise X and
centre a numeric y), the settings computed on the full data and re-used on
every subsample (COSSO's λ0 by GCV, KNIFE's bandwidth γ), and how the grid
is read (L1KR traces its path adaptively in D; it is read on the grid by
:func:`~numkfs.methods.l1kr.l1kr_path_at`, and, as in the folds of
:class:`~numkfs.L1KRRegressorCV`, a path on ``m`` of the ``n`` rows is
traced with ``λ m / n`` and read at ``D m / n``).
"""
from __future__ import annotations

import importlib
import inspect
import numbers
from dataclasses import dataclass, field

import numpy as np

from ._validation import InstanceOf, Interval, NoneOr, Options, validate_params

__all__ = ["PATH_SPECS", "SELECTOR_CONSTRAINTS", "PathSelectorMixin", "PathSpec", "method_name", "method_path"]


@dataclass(frozen=True)
class PathSpec:
    """How :func:`method_path` reaches one method (a row of :data:`PATH_SPECS`).

    A dataclass: each parameter is stored as the attribute of the same name.

    Parameters
    ----------
    function : str
        The path function's name in :mod:`numkfs.methods`.
    grid : str
        Its grid keyword (``None`` when the path is read on the grid
        afterwards, ``read_at``).
    estimators : tuple of str
        The estimator classes of the method.
    tasks : tuple of str
        ``"regression"`` and/or ``"classification"``.
    defaults : dict
        Settings of :func:`numkfs.select` that differ from the path
        function's defaults (for a method given by name).
    fixed : dict
        Settings of every resampled path.
    classification : dict
        Further defaults for class labels (KNIFE's loss).
    standardize : bool
        Standardise X and centre a numeric y on the rows given (KNIFE's
        estimators do; the other path functions preprocess themselves).
    shared : dict
        Path keyword -> key path into ``path.extra`` of the full-data path:
        a setting computed on the full data and re-used on every subsample.
    fitted : dict
        Path keyword -> attribute of a fitted estimator given as selector
        (KNIFE's ``gamma_``: the bandwidth its fit chose).
    read_at : str or None
        Function of the method module reading the path on a grid
        (``(path, grid) -> (weights, ...)``), for paths traced adaptively.
    reach : str or None
        Keyword bounding how far an adaptively traced path goes (L1KR's
        ``D_max``), set to the grid's largest value.
    n_scaled : tuple of str
        Keywords (``"grid"`` for the grid) multiplied by ``m / n`` on a
        subsample of ``m`` of the ``n`` rows.
    max_grid : int or None
        At most this many points of a grid read from an adaptive path.
    scalar : tuple of str
        Keywords the estimator may hold as a grid of values but the path
        takes as one (L1KR's ``lambda1``).
    multiclass : str or None
        Function giving one-vs-rest paths on a shared grid (their largest
        weight per feature is the path's weight).
    min_rows : int
        The fewest rows the method's path is fitted on (every path function
        refuses fewer than 2, as the estimators do).
    integer_grid : bool
        The grid holds integers (NMMKL's m); default grid 1, ..., p.
    """

    function: str
    grid: str | None
    estimators: tuple
    tasks: tuple
    defaults: dict = field(default_factory=dict)
    fixed: dict = field(default_factory=dict)
    classification: dict = field(default_factory=dict)
    standardize: bool = False
    shared: dict = field(default_factory=dict)
    fitted: dict = field(default_factory=dict)
    read_at: str | None = None
    reach: str | None = None
    n_scaled: tuple = ()
    max_grid: int | None = None
    scalar: tuple = ()
    multiclass: str | None = None
    min_rows: int = 2
    integer_grid: bool = False


#: method name -> how :func:`method_path` reaches it.
PATH_SPECS = {
    "knife": PathSpec("knife_path", "grid",
                      ("KNIFERegressor", "KNIFERegressorCV", "KNIFEClassifier", "KNIFEClassifierCV"),
                      ("regression", "classification"), defaults={"n_grid": 40, "random_state": 0},
                      classification={"loss": "squared_hinge"}, standardize=True,
                      shared={"gamma": ("params", "gamma")}, fitted={"gamma": "gamma_"},
                      multiclass="knife_ovr_paths"),
    "lpkta": PathSpec("lpkta_path", "grid",
                      ("LpKTASelector", "LpKTASelectorCV", "LpKTAClassifier", "LpKTAClassifierCV"),
                      ("classification", "regression")),
    "l1kr": PathSpec("l1kr_path", None, ("L1KRRegressor", "L1KRRegressorCV"), ("regression",),
                     defaults={"lambda1": 0.01}, read_at="l1kr_path_at", reach="D_max",
                     n_scaled=("grid", "lambda1"), max_grid=50, scalar=("lambda1",),
                     fixed={"grid": None, "n_grid": None}),  # the traced path, read at the grid by l1kr_path_at
    "garrote": PathSpec("garrote_path", "grid", ("GarroteRegressor", "GarroteRegressorCV"), ("regression",),
                        defaults={"n_grid": 50}),
    "cosso": PathSpec("cosso_path", "grid", ("COSSORegressor", "COSSORegressorCV"), ("regression",),
                      shared={"lambda0": ("lambda0",)}),
    "nmmkl": PathSpec("nmmkl_path", "grid", ("NMMKLSelector", "NMMKLSelectorCV"), ("classification",),
                      integer_grid=True),
}

#: Path keywords never taken from an estimator's parameters (the data, the
#: grid, names, and what a resampling loop runs itself).
_NOT_FROM_ESTIMATOR = frozenset({"X", "y", "feature_names", "true_support", "verbose", "n_jobs", "cv"})


def method_name(selector) -> str:
    """The method (a key of :data:`PATH_SPECS`) of a method name or a numkfs estimator.

    Parameters
    ----------
    selector : str or estimator
        ``"knife"``, ``"lpkta"``, ``"l1kr"``, ``"garrote"``, ``"cosso"``,
        ``"nmmkl"`` (any case) or an instance of a numkfs estimator.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        For anything else (the message lists the methods and estimators).

    Examples
    --------
    >>> from numkfs import GarroteRegressorCV
    >>> from numkfs.resampling import method_name
    >>> method_name("KNIFE"), method_name(GarroteRegressorCV())
    ('knife', 'garrote')
    """
    if isinstance(selector, str):
        key = selector.lower().replace("-", "")
        if key in PATH_SPECS:
            return key
    else:
        cls = type(selector).__name__
        for key, spec in PATH_SPECS.items():
            if cls in spec.estimators and type(selector).__module__.startswith("numkfs."):
                return key
    known = ", ".join(repr(k) for k in PATH_SPECS)
    ests = ", ".join(e for s in PATH_SPECS.values() for e in s.estimators)
    raise ValueError(f"selector must be a method name ({known}) or a numkfs estimator ({ests}); got {selector!r}.")


def _path_settings(method, selector, params, classification):
    """The path function's keyword arguments: select()'s defaults or the
    estimator's parameters, then ``params``; unknown names refused."""
    import numkfs.methods as M

    spec = PATH_SPECS[method]
    fn = getattr(M, spec.function)
    accepted = set(inspect.signature(fn).parameters) - {"X", "y"}
    if isinstance(selector, str):
        kw = dict(spec.defaults)
        if classification:
            kw.update(spec.classification)
    else:
        kw = {name: value for name, value in selector.get_params(deep=False).items()
              if name in accepted and name not in _NOT_FROM_ESTIMATOR}
        kw.update({name: getattr(selector, attr) for name, attr in spec.fitted.items() if hasattr(selector, attr)})
    kw.update(spec.fixed)
    for name, value in (params or {}).items():
        if name not in accepted or name in ("X", "y"):
            raise TypeError(f"{spec.function} has no parameter {name!r} (passed in params); it takes "
                            f"{', '.join(sorted(accepted - {'feature_names', 'true_support'}))}.")
        if name in spec.fixed:
            raise ValueError(f"{spec.function}'s {name!r} is set by the resampling ({name}={spec.fixed[name]!r}: "
                             f"the path is traced in full and read at the selector's own grid); leave it out of "
                             f"params and give the resampling selector's grid instead.")
        kw[name] = value
    for name in spec.scalar:
        values = np.atleast_1d(np.asarray(kw.get(name, 0.0), dtype=float)).ravel()
        if values.size != 1:
            raise ValueError(f"{spec.function} in a resampling selector takes one {name}; got {kw[name]!r}.")
        if name in kw:
            kw[name] = float(values[0])
    return fn, kw


def _extra(path, keys):
    value = path.extra
    for k in keys:
        value = value[k]
    return value


def method_path(selector, X, y, grid=None, *, params=None, task=None, feature_names=None):
    """The feature path of a method on ``(X, y)``, over a given grid.

    Parameters
    ----------
    selector : str or estimator
        A method name (``"knife"``, ``"lpkta"``, ``"l1kr"``, ``"garrote"``,
        ``"cosso"``, ``"nmmkl"``: the settings of :func:`numkfs.select`) or
        a numkfs estimator (its parameters, and for a fitted KNIFE estimator
        the bandwidth ``gamma_`` it chose; it is not fitted here).
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Target values: the response, or the class labels.
    grid : array-like or FeaturePath, optional
        The grid of the path parameter (λ2 for KNIFE and the garrote, p for
        lp-KTA, D for L1KR, M for COSSO, m for NMMKL).  A
        :class:`~numkfs.FeaturePath` returned by this function on the full
        data stands for its grid and for the settings computed on the full
        data (COSSO's λ0, KNIFE's γ; L1KR's D and λ scaled by the ratio of
        the row counts): the way every subsample re-uses one common grid.
        Default: the method's own default grid on this data.
    params : dict, optional
        Keyword arguments of the path function, over the defaults (a name
        the path function does not take is refused).
    task : {"regression", "classification"}, optional
        Default: from y (:func:`numkfs.model_selection.target_type`).
    feature_names : sequence of str, optional
        Stored on the path.

    Returns
    -------
    FeaturePath
        One row of weights per grid point (in the grid's order), with
        ``extra["resampling"]``: the method, the number of rows and the
        shared settings, for re-use on subsamples.

    Raises
    ------
    ValueError
        An unknown method, a task the method does not do, or fewer rows
        than the method needs.
    TypeError
        A name in ``params`` that the path function does not take.

    Examples
    --------
    >>> from sklearn.datasets import make_friedman1
    >>> from numkfs.resampling import method_path
    >>> X, y = make_friedman1(n_samples=60, n_features=6, random_state=0)
    >>> full = method_path("lpkta", X, y)
    >>> half = method_path("lpkta", X[:30], y[:30], grid=full)
    >>> half.grid_name, bool((half.grid == full.grid).all())
    ('p', True)
    """
    from ._targets import target_type, task_target
    from .paths import FeaturePath

    method = method_name(selector)
    spec = PATH_SPECS[method]
    X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=float)
    y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    n = X.shape[0]
    if n < spec.min_rows:
        raise ValueError(f"{method}'s path needs at least {spec.min_rows} rows; got {n}.")
    if task is None:
        task = "regression" if target_type(y) == "regression" else "classification"
    elif task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression', 'classification' or None; got {task!r}.")
    y = task_target(y, task)
    if task not in spec.tasks:
        raise ValueError(f"method {method!r} does not do {task}; it does {' and '.join(spec.tasks)}.")
    fn, kw = _path_settings(method, selector, params, task == "classification")
    if kw.get("target", "auto") == "auto" and "target" in inspect.signature(fn).parameters:
        from .estimators._lpkta import target_for_task

        kw["target"] = target_for_task(task, y)  # lp-KTA: the task given, not one inferred again from y
    module = importlib.import_module(fn.__module__)  # the method's module: its one-vs-rest and reading functions
    reference = grid if isinstance(grid, FeaturePath) else None
    ratio = 1.0
    if reference is not None:
        info = reference.extra.get("resampling", {})
        if info.get("method", method) != method:
            raise ValueError(f"the reference path is {info['method']}'s, not {method}'s.")
        kw.update(info.get("shared", {}))
        ratio = n / float(info.get("n_samples", n))
        grid = reference.grid
    if grid is not None:
        grid = np.asarray(grid, dtype=float).ravel()
    for name in spec.n_scaled:
        if name != "grid" and name in kw and kw[name] is not None:
            kw[name] = kw[name] * ratio
    read_grid = None if grid is None else (grid * ratio if "grid" in spec.n_scaled else grid)
    if spec.standardize:
        from ._preprocessing import Standardizer

        X = Standardizer().fit_transform(X)
        if task == "regression":
            y = y.astype(float) - float(np.mean(y))
    if spec.integer_grid:
        read_grid = np.arange(1, X.shape[1] + 1) if read_grid is None else read_grid.round().astype(int)
    if spec.grid is not None and read_grid is not None:
        kw[spec.grid] = read_grid
    if spec.reach is not None and read_grid is not None and read_grid.size:
        kw[spec.reach] = float(read_grid.max()) if kw.get(spec.reach) is None else kw[spec.reach] * ratio
    classes = np.unique(y) if task == "classification" else ()
    if spec.multiclass is not None and len(classes) > 2:
        targets = [np.where(y == c, 1.0, -1.0) for c in classes]
        grid_kw = {spec.grid: kw.pop(spec.grid)} if spec.grid in kw else {}
        paths = getattr(module, spec.multiclass)(X, targets, feature_names=feature_names, **grid_kw, **kw)
        path = FeaturePath(grid=paths[0].grid, weights=np.max([p.weights for p in paths], axis=0),
                           grid_name=paths[0].grid_name, feature_names=paths[0].feature_names,
                           method=paths[0].method, extra=dict(paths[0].extra))
    else:
        path = fn(X, y, feature_names=feature_names, **kw)
    if spec.read_at is not None:
        if read_grid is None:  # the grid of the adaptive path itself, at most max_grid points
            read_grid = np.unique(path.grid)
            if spec.max_grid is not None and read_grid.size > spec.max_grid:
                read_grid = read_grid[np.unique(np.linspace(0, read_grid.size - 1, spec.max_grid).round().astype(int))]
            grid = read_grid
        weights = getattr(module, spec.read_at)(path, read_grid)[0]
        scalars = {k: v for k, v in path.extra.items() if isinstance(v, (str, int, float, np.number))}
        path = FeaturePath(grid=grid, weights=weights, grid_name=path.grid_name, feature_names=path.feature_names,
                           method=path.method, extra=scalars, tol=path.tol)
    elif grid is not None and read_grid is not grid:
        path.grid = np.asarray(grid, dtype=float)  # in the units of the full-data path
    shared = {name: _extra(path, keys) for name, keys in spec.shared.items()} if reference is None else \
        reference.extra["resampling"]["shared"]
    path.extra["resampling"] = {"method": method, "n_samples": n, "shared": shared}
    return path



class _MethodSelector:
    """Constraint: a method name or a numkfs estimator (:func:`method_name`)."""

    def is_satisfied_by(self, value):
        try:
            method_name(value)
        except ValueError:
            return False
        return True

    def __str__(self):
        return (f"a method name ({', '.join(repr(k) for k in PATH_SPECS)}) or a numkfs estimator "
                f"({', '.join(e for s in PATH_SPECS.values() for e in s.estimators)})")


#: The constraints of the parameters every resampling selector has (checked after its own).
SELECTOR_CONSTRAINTS = {
    "n_jobs": [NoneOr, Interval(numbers.Integral, None, None)],
    # as the estimators check theirs (a RandomState also seeds the draws)
    "random_state": [NoneOr, Interval(numbers.Integral, 0, None),
                     InstanceOf((np.random.RandomState,), "a numpy RandomState")],
    "params": [NoneOr, InstanceOf((dict,), "a dict of path-function keyword arguments")],
    "task": [NoneOr, Options(("regression", "classification"))],
    "selector": [_MethodSelector()],
}


class PathSelectorMixin:
    """What the resampling selectors share: path parameters in one ``params``
    dict, their checks and data validation in ``fit``, the support mask.

    A subclass declares ``_parameter_constraints`` as data (its own, then
    :data:`SELECTOR_CONSTRAINTS`), checked by
    :func:`~numkfs._validation.validate_params` at the start of ``fit``, as
    the estimators' are; the names in ``params`` are checked against the
    method's path function before anything is fitted.

    scikit-learn keeps an estimator's parameters in its ``__init__``
    signature; a selector that takes the method's path parameters as
    ``**kwargs`` stores them into its ``params`` dict instead
    (:meth:`merge_params`), and :meth:`set_params` does the same with names
    that are not its own, so ``clone``, ``get_params`` and a grid search over
    ``n_grid`` all work.  A subclass sets ``support_`` in ``fit``.
    """

    @staticmethod
    def merge_params(params, kwargs):
        """``params`` with ``kwargs`` added (``params`` as given when there are none)."""
        if kwargs and isinstance(params, (dict, type(None))):
            return {**(params or {}), **kwargs}
        return params

    def set_params(self, **params):
        """Set parameters; a name that is not the selector's own goes into ``params``.

        Parameters
        ----------
        **params
            Parameters of the selector (and ``selector__name`` of an estimator
            given as ``selector``), or of the method's path function.

        Returns
        -------
        self
        """
        own = self.get_params(deep=True)
        extra = {k: v for k, v in params.items() if k not in own and "__" not in k}
        if extra:
            self.params = self.merge_params(self.params, extra)
        return super().set_params(**{k: v for k, v in params.items() if k not in extra})

    _parameter_constraints: dict = SELECTOR_CONSTRAINTS

    def _validate_params(self):
        validate_params(self.get_params(deep=False), self._parameter_constraints, type(self).__name__)

    def _fit_data(self, X, y, *, min_samples):
        """``(method, X, y, task)`` after the checks every resampling selector makes in ``fit``."""
        from sklearn.utils.validation import validate_data

        from ._targets import target_type, task_target

        self._validate_params()
        method = method_name(self.selector)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        need = max(min_samples, PATH_SPECS[method].min_rows)
        if X.shape[0] < need:
            raise ValueError(f"{type(self).__name__} with {method}'s path needs at least {need} rows; got "
                             f"n_samples = {X.shape[0]}: give more rows.")
        task = self.task or ("regression" if target_type(y) == "regression" else "classification")
        _path_settings(method, self.selector, self.params, task == "classification")  # refuses a name it lacks
        return method, X, (y.astype(float) if task == "regression" else task_target(y, task)), task

    def _get_support_mask(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
