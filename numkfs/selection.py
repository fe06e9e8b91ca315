"""One call for every method: :func:`select` (what ``numkfs select`` runs).

Each method is reached through its scikit-learn estimator; this module only
chooses the estimator for the task (regression or classification), fits it
and gathers a :class:`SelectionResult`: the feature weights, the selected
set, a cross-validated score, the solver used and the path when there is one.

The score is the method's own cross-validation score where it computes one
(KNIFE, L1KR, lp-KTA, COSSO; garrote on its λ2 path).  NMMKL has none of its
own, so the score is, as in its paper, the K-fold accuracy of a linear SVM on
the selected features.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["select", "SelectionResult", "METHODS"]

#: method -> tasks it supports.
METHODS = {
    "knife": ("regression", "classification"),
    "lpkta": ("classification", "regression"),
    "nmmkl": ("classification",),
    "l1kr": ("regression",),
    "garrote": ("regression",),
    "cosso": ("regression",),
}


@dataclass
class SelectionResult:
    """What :func:`select` found.

    Attributes
    ----------
    method, task : str
    feature_names : list of str
    weights : ndarray (n_features,)
    selected : ndarray of bool (n_features,)
    score : float
        Cross-validated score (R² for regression, accuracy for classification).
    score_name : str
    solver : str
    path : FeaturePath or None
    estimator : the fitted estimator
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

    def table(self) -> str:
        """Features by decreasing weight, with the selected ones marked."""
        order = np.argsort(-np.abs(self.weights), kind="stable")
        w = max(7, max(len(str(f)) for f in self.feature_names))
        lines = [f"{'feature'.ljust(w)}  {'weight':>12}  selected", f"{'-' * w}  {'-' * 12}  --------"]
        for j in order:
            lines.append(f"{str(self.feature_names[j]).ljust(w)}  {self.weights[j]:12.6g}  "
                         f"{'*' if self.selected[j] else ''}")
        return "\n".join(lines)

    def summary(self) -> str:
        names = [str(self.feature_names[j]) for j in np.flatnonzero(self.selected)]
        return (f"method: {self.method} ({self.task}); solver: {self.solver}\n"
                f"selected {len(names)} of {len(self.feature_names)} features: {', '.join(names) or '(none)'}\n"
                f"cross-validated {self.score_name}: {self.score:.4f}")

    def to_dict(self) -> dict:
        return {
            "method": self.method, "task": self.task, "solver": self.solver,
            "score": float(self.score), "score_name": self.score_name,
            "features": [{"name": str(f), "weight": float(w), "selected": bool(s)}
                         for f, w, s in zip(self.feature_names, self.weights, self.selected)],
            "selected": [str(f) for f, s in zip(self.feature_names, self.selected) if s],
        }


def infer_task(y) -> str:
    """``"classification"`` for string/bool labels or at most 10 integer
    classes... only when the values are not float-valued; else regression."""
    y = np.asarray(y)
    if y.dtype.kind in "OUSb":
        return "classification"
    u = np.unique(y)
    if len(u) <= 2 or (np.all(u == np.round(u)) and len(u) <= 10 and y.dtype.kind in "iu"):
        return "classification"
    return "regression"


def _pick_by_count(path, n_features):
    """Index of the path point whose number of selected features is closest to
    ``n_features`` (ties: the larger count)."""
    counts = path.n_selected()
    return int(np.argmin(np.abs(counts - n_features) - 1e-3 * counts))


def _cv_score_linear_svm(X, y, mask, cv, random_state):
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    if not mask.any():
        return float("nan")
    model = make_pipeline(StandardScaler(), LinearSVC(C=1.0, max_iter=20000))
    folds = StratifiedKFold(cv, shuffle=True, random_state=random_state)
    return float(np.mean(cross_val_score(model, X[:, mask], y, cv=folds)))


def _garrote_cv_path(X, y, names, cv, random_state, **params):
    """The garrote path on all the data, with K-fold CV scores (negative test
    MSE) of each λ2 on the same grid."""
    from .methods.garrote import garrote_path
    from .model_selection import cross_val_path

    path = garrote_path(X, y, feature_names=names, **params)

    def fold(train, test):
        p = garrote_path(X[train], y[train], lambda2s=path.grid, **params)
        pred = X[test] @ np.asarray(p.extra["coef"]).T + np.asarray(p.extra["intercept"])
        return -np.mean((pred - y[test][:, None]) ** 2, axis=0)

    path.cv_scores = cross_val_path(fold, X, y, cv, random_state=random_state)
    return path


def select(X, y, method: str = "knife", *, task: str | None = None, n_features: int | None = None,
           cv: int = 5, feature_names=None, random_state=0, verbose: bool = False, **params) -> SelectionResult:
    """Select features with one of numkfs's methods.

    Parameters
    ----------
    X : array (n_samples, n_features)
    y : array (n_samples,)
    method : {"knife", "lpkta", "nmmkl", "l1kr", "garrote", "cosso"}
    task : {"regression", "classification"}, optional
        Inferred from y when not given (see :func:`infer_task`).
    n_features : int, optional
        Number of features to select (required by NMMKL; for path methods the
        path point with the closest count is taken instead of the CV best).
    cv : int
        Folds of the cross-validation.
    random_state : int
    **params
        Passed to the method's estimator.

    Returns
    -------
    SelectionResult
    """
    from . import estimators as E

    method = method.lower()
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}.")
    X = np.asarray(X, dtype=float)
    task = task or infer_task(y)
    if task not in METHODS[method]:
        raise ValueError(f"method {method!r} does not do {task}; it does {' and '.join(METHODS[method])}.")
    names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(X.shape[1])]
    path, solver, extra, i = None, params.get("solver", "auto"), {}, None
    score_name = "R^2" if task == "regression" else "accuracy"

    if method == "knife":
        cls = E.KNIFERegressorCV if task == "regression" else E.KNIFEClassifierCV
        params.setdefault("n_lambdas", 40)  # a 40-point λ2 grid keeps the CLI's main job under a minute
        est = cls(cv=cv, random_state=random_state, verbose=verbose, **params).fit(X, y)
        path = est.path_
        i = est.best_index_ if n_features is None else _pick_by_count(path, n_features)
        weights = np.abs(path.weights[i]) if task == "regression" else est.feature_weights_
        score = float(np.nanmean(est.cv_scores_[i]))
        score_name = "neg. MSE" if task == "regression" else "accuracy"
    elif method == "l1kr":
        est = E.L1KRRegressor(cv=cv, random_state=random_state, **params).fit(X, y)
        cvp = est.cv_path_
        k = cvp.best_index if n_features is None else _pick_by_count(cvp, n_features)
        weights, path = cvp.weights[k], est.path_
        score = float(cvp.mean_cv_score[k])
        score_name = "CV score"
        solver = "homotopy (native)"
    elif method == "lpkta":
        kw = dict(params)
        if n_features is not None:
            kw["n_features_to_select"] = n_features
        else:
            kw.setdefault("cv", cv)
        est = E.LpKTASelector(random_state=random_state, **kw).fit(X, y)
        weights, path = est.feature_weights_, est.path_
        if est.curve_ is not None:
            score = float(np.nanmax(est.curve_.accuracy)) if hasattr(est.curve_, "accuracy") else float("nan")
        else:
            score = _cv_score_linear_svm(X, y, est.get_support(), cv, random_state)
        solver = "per-feature Newton (native)"
    elif method == "nmmkl":
        m = n_features if n_features is not None else max(1, min(X.shape[1] // 2, 10))
        est = E.NMMKLSelector(n_features_to_select=m, **params).fit(X, y)
        weights = np.asarray(est.p_, dtype=float) if np.ndim(est.p_) == 1 else est.get_support().astype(float)
        score = _cv_score_linear_svm(X, y, est.get_support(), cv, random_state)
        solver = est.solver_result_.solver if getattr(est, "solver_result_", None) is not None else solver
        extra["scores"] = est.scores_
    elif method == "garrote":
        path = _garrote_cv_path(X, y, names, cv, random_state, **params)
        i = path.best_index if n_features is None else _pick_by_count(path, n_features)
        weights, est = path.weights[i], None
        score = float(path.mean_cv_score[i])
        score_name = "neg. MSE"
        solver = ", ".join(sorted(set(path.extra.get("solver", [solver]))))
    else:  # cosso
        est = E.COSSORegressor(cv=cv, random_state=random_state, **params).fit(X, y)
        weights = est.feature_weights_
        path = getattr(est, "path_", None)
        score = float(np.nanmax(path.mean_cv_score)) if path is not None and path.cv_scores is not None else float("nan")
        score_name = "CV score"
    weights = np.asarray(weights, dtype=float)
    if path is not None and path.n_features == len(names):
        path.feature_names = np.asarray([str(f) for f in names], dtype=object)
    if i is not None:
        extra["index"] = int(i)  # the chosen point of ``path`` (knife, garrote)
    if method == "nmmkl":
        selected = est.get_support()  # the top-m rule, not p > 0 (p has rounding-level entries)
    else:
        selected = np.abs(weights) > 0
    return SelectionResult(method, task, names, weights, selected, score, score_name, str(solver), path, est, extra)
