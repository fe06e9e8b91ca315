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

What differs between methods is declared by each method's row of the method
registry (``numkfs._registry``): the path function, the name of its grid,
the settings of :func:`numkfs.select` that differ from the path function's
defaults (``path_defaults``), the settings computed on the full data and
re-used on every subsample (``shared``: COSSO's λ0 by GCV, KNIFE's
bandwidth γ), and two functions of the method's own modules: its settings
(``path_settings``: KNIFE's loss on class labels, lp-KTA's target for the
task, L1KR's one λ) and how its path is reached on a grid
(``resample_path``: KNIFE standardises as its estimators do and fits
one-vs-rest paths on many classes, NMMKL's grid holds integers, L1KR traces
its path adaptively in D and reads it at the grid).  This module knows no
method.
"""
from __future__ import annotations

import inspect

import numpy as np

from ._registry import METHOD_ROWS, resolve
from ._constraints import N_JOBS, SEED, InstanceOf, NoneOr, Options, validate_params

__all__ = ["MIN_PATH_ROWS", "SELECTOR_CONSTRAINTS", "PathSelectorMixin", "grid_path", "method_name", "method_path"]


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


#: The fewest rows a method's path is fitted on (every path function refuses fewer, as the estimators do).
MIN_PATH_ROWS = 2


def _path_settings(method, selector, params, task, y, purpose="path"):
    """The path function's keyword arguments: select()'s defaults or the
    estimator's parameters, then ``params`` (unknown names refused), then
    the method's own settings (its row's ``path_settings``)."""
    row = METHOD_ROWS[method]
    fn = resolve(row.path)
    accepted = set(inspect.signature(fn).parameters) - {"X", "y"}
    if isinstance(selector, str):
        kw = dict(row.path_defaults)
    else:
        kw = {name: value for name, value in selector.get_params(deep=False).items()
              if name in accepted and name not in _NOT_FROM_ESTIMATOR}
    params = dict(params or {})
    for name, value in params.items():
        if name not in accepted or name in ("X", "y"):
            raise TypeError(f"{row.path_name} has no parameter {name!r} (passed in params); it takes "
                            f"{', '.join(sorted(accepted - {'feature_names', 'true_support'}))}.")
        kw[name] = value
    if row.path_settings is not None:
        kw = resolve(row.path_settings)(kw, selector=selector, task=task, y=y, params=params, purpose=purpose)
    return kw


def _extra(path, keys):
    value = path.extra
    for k in keys:
        value = value[k]
    return value


def grid_path(row, X, y, settings, *, task, grid, ratio, feature_names):
    """The path of a method whose path function takes its grid as is: the
    path function of ``row`` called with ``grid`` (the default of a row's
    ``resample_path``).

    Parameters
    ----------
    row : MethodRow
        The method's row.
    X : ndarray of shape (n_samples, n_features)
        Data.
    y : ndarray of shape (n_samples,)
        Target, as the task takes it.
    settings : dict
        The path function's keyword arguments.
    task : {"regression", "classification"}
        The task.
    grid : ndarray or None
        The grid (None: the path function's default grid).
    ratio : float
        The number of rows over the full data's (unused: the grid is not
        rescaled).
    feature_names : sequence of str or None
        Stored on the path.

    Returns
    -------
    FeaturePath
    """
    kw = dict(settings)
    if grid is not None:
        kw[row.grid] = grid
    return resolve(row.path)(X, y, feature_names=feature_names, **kw)


def method_path(selector, X, y, grid=None, *, params=None, task=None, feature_names=None, purpose="path"):
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
    purpose : {"path", "stability", "knockoffs"}, default="path"
        Who asks: a method may set its path differently for a resampling
        selector (KNIFE's shorter grid for :class:`numkfs.StabilitySelection`).

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
    X = np.asarray(X.to_numpy() if hasattr(X, "to_numpy") else X, dtype=float)
    y = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    n = X.shape[0]
    if n < MIN_PATH_ROWS:
        raise ValueError(f"{method}'s path needs at least {MIN_PATH_ROWS} rows; got {n}.")
    if task is None:
        task = "regression" if target_type(y) == "regression" else "classification"
    elif task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression', 'classification' or None; got {task!r}.")
    y = task_target(y, task, caller="method_path")
    if task not in row.tasks:
        raise ValueError(f"method {method!r} does not do {task}; it does {' and '.join(row.tasks)}.")
    kw = _path_settings(method, selector, params, task, y, purpose)
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
    reach = grid_path if row.resample_path is None else resolve(row.resample_path)
    path = reach(row, X, y, kw, task=task, grid=grid, ratio=ratio, feature_names=feature_names)
    shared = {name: _extra(path, keys) for name, keys in row.shared.items()} if reference is None else \
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
        need = max(min_samples, MIN_PATH_ROWS)
        if X.shape[0] < need:
            raise ValueError(f"{type(self).__name__} with {method}'s path needs at least {need} rows; got "
                             f"n_samples = {X.shape[0]}: give more rows.")
        task = self.task or ("regression" if target_type(y) == "regression" else "classification")
        _path_settings(method, self.selector, self.params, task, y)  # refuses a name it lacks
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
