"""The one result class of every path method: :class:`FeaturePath`.

KNIFE walks λ2, L1KR the budget D (or arc length), lp-KTA the exponent p,
NMMKL the number of features m and the garrote λ2.  All return a
``FeaturePath``: the grid in the order computed, one row of feature weights
per grid point, and whatever else the method knows (objective, CV scores,
extra per-point quantities such as arc length or event markers).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._registry import RowTable

__all__ = ["FeaturePath", "SELECTION_TOL", "selection_tol", "support_mask"]

#: The selection rule of every method, in one place: a feature is selected
#: when the absolute value of its weight is above the method's tolerance.
#: KNIFE's and the garrote's weights lie in [0, 1] and COSSO's θ sum to at
#: most M; every conic backend leaves its unused weights below 1e-8
#: (interior-point solvers stop strictly inside the feasible set), so 1e-6
#: gives the same support whichever backend solved the problem.  L1KR,
#: lp-KTA and NMMKL set exact zeros (events, eliminations, top-m).  Each
#: method's ``selection_tol`` in the method registry (``numkfs._registry``).
SELECTION_TOL = RowTable(lambda row: row.selection_tol, keep=lambda row: bool(row.selection_tol))


def selection_tol(method: str) -> float:
    """The selection tolerance of ``method`` (0 for methods with exact zeros).

    Parameters
    ----------
    method : str
        A method name as stored in :attr:`FeaturePath.method` (any case).

    Returns
    -------
    float

    Examples
    --------
    >>> from numkfs.paths import selection_tol
    >>> selection_tol("KNIFE"), selection_tol("lpkta")
    (1e-06, 0.0)
    """
    return float(SELECTION_TOL.get(str(method).lower(), 0.0))


def support_mask(weights, tol: float) -> np.ndarray:
    """``|weights| > tol``: the one support rule of numkfs.

    Parameters
    ----------
    weights : array-like
        Feature weights (any shape).
    tol : float
        The method's selection tolerance (:func:`selection_tol`).

    Returns
    -------
    ndarray of bool, the shape of ``weights``

    Examples
    --------
    >>> from numkfs.paths import support_mask
    >>> support_mask([0.5, 4e-12, 0.0], 1e-6).tolist()
    [True, False, False]
    """
    return np.abs(np.asarray(weights, dtype=float)) > tol


@dataclass
class FeaturePath:
    """Feature weights along a one-parameter path.

    Parameters
    ----------
    grid : ndarray of shape (n_points,)
        Values of the path parameter, in the order they were computed.
    weights : ndarray of shape (n_points, n_features)
        Feature weights at each grid point (w for KNIFE, β for L1KR, η for
        lp-KTA, the selection p for NMMKL, w for the garrote).
    grid_name : str
        Name of the path parameter (``"lambda2"``, ``"D"``, ``"p"``, ``"m"``).
    feature_names : ndarray of str, optional
        Defaults to ``x0, x1, ...``.
    objective : ndarray of shape (n_points,), optional
        Objective value at each point, where defined.
    method : str
        Which method made the path.
    cv_scores : ndarray of shape (n_points, n_folds), optional
        Cross-validation scores per point and fold (higher is better).
    extra : dict
        Further per-point arrays (``"arc_length"``, ``"events"``, ...) and
        scalars (``"n_jacobian_evals"``, ...).
    tol : float, optional
        A weight whose absolute value is above ``tol`` counts as selected
        (:func:`support_mask`); default: the method's tolerance
        (:data:`SELECTION_TOL`, 0 for methods that set exact zeros).
    true_support : ndarray of bool, optional
        The true features when known (simulations); highlighted in plots.
    chosen_index : int, optional
        The point an estimator or :func:`numkfs.select` chose (set by
        :func:`numkfs.model_selection.choose_index` and friends); marked in
        plots.
    cv_rule : str, optional
        How ``chosen_index`` was chosen: ``"best"`` (highest mean CV score),
        ``"1se"`` (sparsest point within one standard error of the best),
        ``"n_features"`` (the first point reaching a requested count),
        ``"fixed"`` (a parameter value given by the user).
    score_name : str, optional
        What ``cv_scores`` hold (``"neg_mean_squared_error"``,
        ``"neg_log_loss"``, ``"accuracy"``...): always higher is better.
    converged : ndarray of bool of shape (n_points,), optional
        Whether the iteration at each point met its tolerance.
    chosen_support : ndarray of bool of shape (n_features,), optional
        The support chosen at ``chosen_index`` when it is not the point's
        whole support (``cv_rule="n_features"``: the k largest weights).
    cv_fold_sizes : ndarray of int of shape (n_folds,), optional
        Test rows in each fold of ``cv_scores``: the folds' weights in the
        mean score and its standard error
        (:func:`numkfs.model_selection.cv_mean_se`); default: equal weights.
    """

    grid: np.ndarray
    weights: np.ndarray
    grid_name: str = "lambda"
    feature_names: Any = None
    objective: np.ndarray | None = None
    method: str = ""
    cv_scores: np.ndarray | None = None
    extra: dict = field(default_factory=dict)
    tol: float | None = None
    true_support: np.ndarray | None = None
    chosen_index: int | None = None
    cv_rule: str | None = None
    score_name: str | None = None
    converged: np.ndarray | None = None
    chosen_support: np.ndarray | None = None
    cv_fold_sizes: np.ndarray | None = None

    def __post_init__(self):
        self.grid = np.asarray(self.grid, dtype=float).ravel()
        self.weights = np.atleast_2d(np.asarray(self.weights, dtype=float))
        if self.weights.shape[0] != self.grid.shape[0]:
            raise ValueError(
                f"FeaturePath: weights has {self.weights.shape[0]} rows but grid has "
                f"{self.grid.shape[0]} points."
            )
        p = self.weights.shape[1]
        if self.feature_names is None:
            self.feature_names = np.array([f"x{j}" for j in range(p)], dtype=object)
        else:
            self.feature_names = np.asarray([str(f) for f in self.feature_names], dtype=object)
            if len(self.feature_names) != p:
                raise ValueError(
                    f"FeaturePath: {len(self.feature_names)} feature names for {p} features."
                )
        if self.objective is not None:
            self.objective = np.asarray(self.objective, dtype=float).ravel()
        if self.cv_scores is not None:
            self.cv_scores = np.asarray(self.cv_scores, dtype=float)
            if self.cv_scores.ndim == 1:
                self.cv_scores = self.cv_scores[:, None]
        if self.cv_fold_sizes is not None:
            self.cv_fold_sizes = np.asarray(self.cv_fold_sizes, dtype=np.int64).ravel()
            n_folds = None if self.cv_scores is None else self.cv_scores.shape[1]
            if n_folds is None or self.cv_fold_sizes.size != n_folds or np.any(self.cv_fold_sizes < 1):
                raise ValueError(f"FeaturePath: cv_fold_sizes must give one positive size per fold of cv_scores "
                                 f"({n_folds} folds); got {self.cv_fold_sizes.tolist()}.")
        if self.true_support is not None:
            ts = np.asarray(self.true_support).ravel()
            p = self.weights.shape[1]
            if ts.dtype != bool and not (ts.size == p and np.isin(ts, (0, 1)).all()):
                # feature indices ([0, 3]), not a mask (not to be read as a 2-long mask)
                if ts.size and (ts.dtype.kind not in "iu" or ts.min() < 0 or ts.max() >= p):
                    raise ValueError(f"true_support must be a boolean mask of {p} features or indices in "
                                     f"[0, {p}); got {self.true_support!r}.")
                mask = np.zeros(p, dtype=bool)
                mask[ts.astype(np.int64)] = True
                ts = mask
            elif ts.size != p:
                raise ValueError(f"true_support must have one entry per feature ({p}); got {ts.size}.")
            self.true_support = ts.astype(bool)
        self.tol = selection_tol(self.method) if self.tol is None else float(self.tol)
        if self.converged is not None:
            self.converged = np.asarray(self.converged, dtype=bool).ravel()
        if self.chosen_index is not None:
            self.chosen_index = int(self.chosen_index)
        if self.chosen_support is not None:
            self.chosen_support = np.asarray(self.chosen_support, dtype=bool).ravel()

    # ------------------------------------------------------------------
    @property
    def n_points(self) -> int:
        return self.grid.shape[0]

    @property
    def n_features(self) -> int:
        return self.weights.shape[1]

    def __len__(self) -> int:
        return self.n_points

    def selected(self, i: int) -> np.ndarray:
        """Boolean mask of the features selected at path point ``i``."""
        return support_mask(self.weights[i], self.tol)

    def support(self, i: int | None = None) -> np.ndarray:
        """Boolean mask of the selected features at point ``i`` (default: the
        chosen point, with ``chosen_support`` when a count was requested).
        Raises ``ValueError`` when no point was chosen."""
        if i is None and self.chosen_support is not None:
            return self.chosen_support.copy()
        if i is None:
            i = self.chosen_index
        if i is None:
            raise ValueError("FeaturePath.support: no point was chosen on this path; pass an index.")
        return self.selected(i)

    def n_selected(self) -> np.ndarray:
        """Number of selected features at every path point."""
        return support_mask(self.weights, self.tol).sum(axis=1)

    @property
    def mean_cv_score(self) -> np.ndarray | None:
        """Mean CV score per point, the folds weighted by ``cv_fold_sizes``
        (:func:`numkfs.model_selection.cv_mean_se`; ``None`` when no CV was
        run)."""
        if self.cv_scores is None:
            return None
        from .model_selection import cv_mean_se

        return cv_mean_se(self.cv_scores, self.cv_fold_sizes)[0]

    @property
    def cv_standard_error(self) -> np.ndarray | None:
        """Standard error of :attr:`mean_cv_score` per point, the one the
        ``"1se"`` rule uses (:func:`numkfs.model_selection.cv_mean_se`;
        ``None`` when no CV was run)."""
        if self.cv_scores is None:
            return None
        from .model_selection import cv_mean_se

        return cv_mean_se(self.cv_scores, self.cv_fold_sizes)[1]

    @property
    def best_index(self) -> int | None:
        """Index of the point with the highest mean CV score (ties: the
        sparser point), if CV was run; see
        :func:`numkfs.model_selection.choose_index`."""
        if self.cv_scores is None:
            return None
        from .model_selection import choose_index

        return choose_index(self, "best")

    def to_pandas(self):
        """A DataFrame with one row per path point: the grid, the objective,
        the mean CV score (when present) and one column per feature.

        A feature may be named like one of the columns added here (the grid's
        name, ``"objective"``, ``"cv_score"``): that added column then gets a
        trailing underscore (``"objective_"``), so every feature keeps its name.
        Duplicate feature names are refused (a column would be ambiguous).
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is a test extra
            raise ImportError("FeaturePath.to_pandas needs pandas: pip install pandas") from exc
        names = [str(f) for f in self.feature_names]
        if len(set(names)) != len(names):
            dup = sorted({f for f in names if names.count(f) > 1})
            raise ValueError(f"FeaturePath.to_pandas: duplicate feature name(s) {', '.join(map(repr, dup))}.")
        df = pd.DataFrame(self.weights, columns=names)
        taken = set(names)

        def free(name):
            while name in taken:
                name += "_"
            taken.add(name)
            return name

        df.insert(0, free(str(self.grid_name)), self.grid)
        pos = 1
        if self.objective is not None:
            df.insert(pos, free("objective"), self.objective)
            pos += 1
        if self.cv_scores is not None:
            df.insert(pos, free("cv_score"), self.mean_cv_score)
        return df

    def plot(self, ax=None, *, x=None, log_x: bool | None = None, highlight=None, legend: bool | None = None,
             mark=None, labels: str = "auto", top_axis: bool = True):
        """Draw the feature path (weights against the path parameter).

        The chosen point (:attr:`chosen_index`) is a dotted vertical line
        explained under the title, a top axis gives the number of selected
        features, and with more than 15 features only the selected ones are
        coloured and named, in a column right of the axes with leader lines
        to their curves (:func:`numkfs.plotting.plot_path`, which says
        more).  No word is drawn over a curve or over another word.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; default a new figure.
        x : str, optional
            An array of :attr:`extra` to use as abscissa (``"arc_length"``).
        log_x : bool, optional
            Log abscissa; default for penalty grids (``lambda*``), with a
            linear piece at 0 when the grid starts there.
        highlight : array of bool or of int, optional
            Features drawn in colour and named; default the true support,
            else all (at most 15 features), else those selected at the
            chosen point (at most 20, the largest).
        legend : bool, optional
            True: a legend; False: no names.  Shorthand for ``labels``.
        mark : int or False, optional
            Path point marked with a vertical line; default
            :attr:`chosen_index`; False marks nothing.
        labels : {"auto", "legend", "ends", "none"}
            How features are named (``"auto"``: a legend up to 15 features,
            the column of names with leader lines beyond).
        top_axis : bool
            Draw the top axis with the number of selected features.

        Returns
        -------
        matplotlib.axes.Axes
            The Axes drawn on (``ax.figure`` is its figure).  Nothing is
            shown on screen: in a script, call ``matplotlib.pyplot.show()``
            to display the figure (or ``ax.figure.savefig("path.png")`` to
            save it); a Jupyter notebook shows it by itself.

        See Also
        --------
        numkfs.plotting.plot_path : The function behind this method.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")  # no window here; leave it out in a script
        >>> import matplotlib.pyplot as plt
        >>> from numkfs import KNIFERegressorCV
        >>> from numkfs.datasets import make_sinusoid
        >>> X, y, _ = make_sinusoid(n_samples=40, random_state=0)
        >>> est = KNIFERegressorCV(n_grid=8, cv=3, random_state=0).fit(X, y)
        >>> ax = est.path_.plot()
        >>> ax.get_title()
        'KNIFE feature path'
        >>> plt.show()  # a script must ask for the window
        """
        from .plotting import plot_path

        return plot_path(self, ax=ax, x=x, log_x=log_x, highlight=highlight, legend=legend, mark=mark,
                         labels=labels, top_axis=top_axis)

    def __repr__(self) -> str:
        g = self.grid
        rng = f"{g[0]:.4g} .. {g[-1]:.4g}" if len(g) else "empty"
        ns = self.n_selected()
        sel = f"{ns[0]} .. {ns[-1]}" if len(ns) else "-"
        return (
            f"FeaturePath(method={self.method!r}, {self.grid_name}: {rng} "
            f"({self.n_points} points), n_features={self.n_features}, selected: {sel})"
        )
