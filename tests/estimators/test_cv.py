"""The CV estimators' one base (``numkfs.estimators._cv.PathCVMixin``): one selection
contract over every cross-validating estimator of the registry, and the CV variants that
replace ``cv`` inside the fixed-point estimators."""
import numpy as np
import pytest
from conftest import ids, make, names, task_of
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_wine

import numkfs
from numkfs.model_selection import choose_index, make_cv


@pytest.fixture(scope="module")
def cv_data():
    from numkfs.datasets import make_sinusoid

    Xr, yr, _ = make_sinusoid(n_samples=48, random_state=0)
    Xc, yc = load_breast_cancer(return_X_y=True)
    return {"regression": (Xr, yr), "classification": (Xc[::8, :8], yc[::8])}


CV_ESTIMATORS = [make(name, cv=3) for name in names(cv=True)]


# The registry's grids are tiny: the chosen point may sit at a grid's edge (GridEdgeWarning,
# seen for COSSO's M and L1KR's D), which does not bear on the contract; any other warning is shown.
@pytest.mark.filterwarnings("ignore::numkfs.model_selection.GridEdgeWarning")
@pytest.mark.parametrize("estimator", CV_ESTIMATORS, ids=ids(CV_ESTIMATORS))
def test_contract_over_every_cv_estimator(estimator, cv_data):
    name = type(estimator).__name__
    X, y = cv_data[task_of(name)]
    if name.startswith("L1KR"):
        X = X[:, :5]  # the slowest path: fewer features
    est = clone(estimator).set_params(cv_rule="best").fit(X, y)
    sparse = clone(estimator).set_params(cv_rule="1se").fit(X, y)
    path = est.path_
    n_points = path.n_points
    # the same fitted attributes everywhere
    for attr in ("path_", "best_index_", "cv_scores_", "feature_weights_", "n_features_selected_", "converged_"):
        assert hasattr(est, attr), (name, attr)
    assert est.cv_scores_.shape == path.cv_scores.shape and est.cv_scores_.shape[0] == n_points
    assert est.cv_scores_.shape[1] == 3
    assert path.cv_rule == "best" and sparse.path_.cv_rule == "1se"
    assert path.score_name in ("neg_mean_squared_error", "neg_log_loss", "neg_hinge_loss", "accuracy") or \
        path.score_name.startswith("neg_")
    # the chosen point is the rule's, and the support is the path's support there
    assert est.best_index_ == path.chosen_index == choose_index(path, "best")
    assert sparse.best_index_ == choose_index(sparse.path_, "1se")
    assert np.array_equal(est.get_support(), path.selected(est.best_index_))
    assert est.n_features_selected_ == int(est.get_support().sum())
    # 1se never selects more than best, and its mean score is within one SE of the best
    assert sparse.n_features_selected_ <= est.n_features_selected_
    # the folds' test sizes, the weights of the mean score, are those of the folds that were run
    splits = make_cv(3, y, classifier=task_of(name) == "classification").split(X, y)
    np.testing.assert_array_equal(path.cv_fold_sizes, [len(te) for _, te in splits])
    mean = path.mean_cv_score
    assert mean[est.best_index_] == pytest.approx(np.nanmax(mean))
    assert np.size(est.converged_) in (1, n_points)


def test_cv_variants_replace_cv_inside_fixed_point_estimators():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    with pytest.raises(TypeError, match="cv"):  # COSSORegressor fits one budget; COSSORegressorCV chooses it
        numkfs.COSSORegressor(cv=3).fit(X, y)
    Xw, yw = load_wine(return_X_y=True)
    for cls in (numkfs.LpKTASelector, numkfs.LpKTAClassifier):  # their CV variants: LpKTASelectorCV, LpKTAClassifierCV
        with pytest.raises(TypeError, match="cv"):
            cls(cv=3).fit(Xw, yw)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("estimator", names(cv=True))
def test_every_cv_estimator_takes_its_path_functions_grid(estimator):
    """Every CV estimator of the registry (tests/conftest.py) takes the explicit
    grid of its path function, by the same name, ``grid``."""
    import inspect

    import numkfs

    cls = type(make(estimator))
    fn = cls.path
    assert getattr(numkfs, fn.__name__) is fn  # the method's public path function
    assert cls._cv_grid_param == "grid" and "grid" in inspect.signature(fn).parameters
    est = cls()
    assert "grid" in est.get_params() and est.get_params()["grid"] is None  # default: the method's own grid
