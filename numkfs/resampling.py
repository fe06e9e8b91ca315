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

What differs between methods is data, in each method's row of the method
registry (``numkfs._registry``): the path function, the name of its grid,
the estimators of the method, and in its ``resampling`` entry the settings
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

import numpy as np

from ._registry import METHOD_ROWS, resolve
from ._constraints import N_JOBS, SEED, InstanceOf, NoneOr, Options, validate_params

__all__ = ["SELECTOR_CONSTRAINTS", "PathSelectorMixin", "method_name", "method_path"]


#: Path keywords never taken from an estimator's parameters (the data, the
#: grid, names, and what a resampling loop runs itself).
_NOT_FROM_ESTIMATOR = frozenset({"X", "y", "feature_names", "true_support", "verbose", "n_jobs", "cv"})


def method_name(selector) -> str:
    """The method (its name in the method registry) of a method name or a numkfs estimator.

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
        if key in METHOD_ROWS:
            return key
    else:
        cls = type(selector).__name__
        for key, row in METHOD_ROWS.items():
            if cls in row.estimator_names and type(selector).__module__.startswith("numkfs."):
                return key
    known = ", ".join(repr(k) for k in METHOD_ROWS)
    ests = ", ".join(e for row in METHOD_ROWS.values() for e in row.estimator_names)
    raise ValueError(f"selector must be a method name ({known}) or a numkfs estimator ({ests}); got {selector!r}.")


def _path_settings(method, selector, params, classification):
    """The path function's keyword arguments: select()'s defaults or the
    estimator's parameters, then ``params``; unknown names refused."""
    row = METHOD_ROWS[method]
    spec = row.resampling
    fn = resolve(row.path)
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
            raise TypeError(f"{row.path_name} has no parameter {name!r} (passed in params); it takes "
                            f"{', '.join(sorted(accepted - {'feature_names', 'true_support'}))}.")
        if name in spec.fixed:
            raise ValueError(f"{row.path_name}'s {name!r} is set by the resampling ({name}={spec.fixed[name]!r}: "
                             f"the path is traced in full and read at the selector's own grid); leave it out of "
                             f"params and give the resampling selector's grid instead.")
        kw[name] = value
    for name in spec.scalar:
        values = np.atleast_1d(np.asarray(kw.get(name, 0.0), dtype=float)).ravel()
        if values.size != 1:
            raise ValueError(f"{row.path_name} in a resampling selector takes one {name}; got {kw[name]!r}.")
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
    row = METHOD_ROWS[method]
    spec = row.resampling
    X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=float)
    y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    n = X.shape[0]
    if n < spec.min_rows:
        raise ValueError(f"{method}'s path needs at least {spec.min_rows} rows; got {n}.")
    if task is None:
        task = "regression" if target_type(y) == "regression" else "classification"
    elif task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression', 'classification' or None; got {task!r}.")
    y = task_target(y, task, caller="method_path")
    if task not in row.tasks:
        raise ValueError(f"method {method!r} does not do {task}; it does {' and '.join(row.tasks)}.")
    fn, kw = _path_settings(method, selector, params, task == "classification")
    if kw.get("target", "auto") == "auto" and "target" in inspect.signature(fn).parameters:
        from .methods.lpkta import target_for_task

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
    if row.grid is not None and read_grid is not None:
        kw[row.grid] = read_grid
    if spec.reach is not None and read_grid is not None and read_grid.size:
        kw[spec.reach] = float(read_grid.max()) if kw.get(spec.reach) is None else kw[spec.reach] * ratio
    classes = np.unique(y) if task == "classification" else ()
    if spec.multiclass is not None and len(classes) > 2:
        targets = [np.where(y == c, 1.0, -1.0) for c in classes]
        grid_kw = {row.grid: kw.pop(row.grid)} if row.grid in kw else {}
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
        return (f"a method name ({', '.join(repr(k) for k in METHOD_ROWS)}) or a numkfs estimator "
                f"({', '.join(e for row in METHOD_ROWS.values() for e in row.estimator_names)})")


#: The constraints of the parameters every resampling selector has (checked after its own).
SELECTOR_CONSTRAINTS = {
    "n_jobs": N_JOBS,
    # as the estimators check theirs (a RandomState also seeds the draws)
    "random_state": [NoneOr, SEED, InstanceOf((np.random.RandomState,), "a numpy RandomState")],
    "params": [NoneOr, InstanceOf((dict,), "a dict of path-function keyword arguments")],
    "task": [NoneOr, Options(("regression", "classification"))],
    "selector": [_MethodSelector()],
}


class PathSelectorMixin:
    """What the resampling selectors share: path parameters in one ``params``
    dict, their checks and data validation in ``fit``, the support mask.

    A subclass declares ``_parameter_constraints`` as data (its own, then
    :data:`SELECTOR_CONSTRAINTS`), checked by
    :func:`~numkfs._constraints.validate_params` at the start of ``fit``, as
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

        from ._targets import check_real, target_type, task_target

        self._validate_params()
        method = method_name(self.selector)
        check_real(X, "X", type(self).__name__)
        check_real(y, "y", type(self).__name__)
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=False)
        need = max(min_samples, METHOD_ROWS[method].resampling.min_rows)
        if X.shape[0] < need:
            raise ValueError(f"{type(self).__name__} with {method}'s path needs at least {need} rows; got "
                             f"n_samples = {X.shape[0]}: give more rows.")
        task = self.task or ("regression" if target_type(y) == "regression" else "classification")
        _path_settings(method, self.selector, self.params, task == "classification")  # refuses a name it lacks
        y = y.astype(float) if task == "regression" else task_target(y, task, caller=type(self).__name__)
        return method, X, y, task

    def _get_support_mask(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
