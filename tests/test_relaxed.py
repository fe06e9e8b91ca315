"""The relaxed refit and the rules that choose on it."""
import numpy as np
import pytest

from numkfs import FeaturePath, select
from numkfs.model_selection import RULES, choose_from_scores, choose_index
from numkfs.relaxed import RELAXED_ALPHAS, _ridge_loo_predict, relaxed_choice, relaxed_cv_scores


def _nested_path():
    """Four nested supports of 5 features, densest first."""
    W = np.array([[1.0, 1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0, 0.0],
                  [1.0, 0.0, 0.0, 0.0, 0.0]])
    return FeaturePath([0.1, 1.0, 10.0, 100.0], W)


def test_choose_from_scores_by_hand():
    path = _nested_path()
    # five equal folds; point 0 (5 features) has the best mean, -1.0, and its fold scores' standard
    # error is sqrt(0.1 / 4) / sqrt(5) = 0.0707; point 1 (3 features) has mean -1.06, point 2 -1.2,
    # point 3 -2.0
    S = np.array([[-0.8, -0.9, -1.0, -1.1, -1.2], [-1.06] * 5, [-1.2] * 5, [-2.0] * 5])
    assert choose_from_scores(path, S, n_se=0) == 0
    assert choose_from_scores(path, S, n_se=1) == 1  # -1.06 >= -1.0707 > -1.2
    assert choose_from_scores(path, S, n_se=2) == 1  # -1.2 < -1.1414
    assert choose_from_scores(path, S, n_se=3) == 2  # -1.2 >= -1.2121 > -2.0
    # a tie at the best mean goes to the sparser point
    assert choose_from_scores(path, np.array([[-1.0] * 5, [-1.0] * 5, [-3.0] * 5, [-3.0] * 5])) == 1
    # the path's own rules are the same core on the path's CV scores
    path.cv_scores = S
    assert choose_index(path, "best") == 0 and choose_index(path, "1se") == 1
    assert choose_index(path, "1pct") == 0 and choose_index(path, "2pct") == 0  # -1.06 < -1.02
    with pytest.raises(ValueError, match="numkfs.select's rule"):
        choose_index(path, "relaxed_1se")
    # "2pct": a mean loss at most 2 % above the best; by hand with 6 % and 20 % on the same scores
    assert choose_from_scores(path, S, rel=0.06) == 1  # -1.06 >= -1.0 - 0.06
    assert choose_from_scores(path, S, rel=0.2) == 2  # -1.2 >= -1.0 - 0.2 > -2.0
    assert choose_from_scores(path, S, rel=0.02) == 0  # -1.06 < -1.02
    assert RULES["relaxed_1se"] == ("relaxed", 1.0, 0.0) and RULES["2pct"] == ("cv", 0.0, 0.02)
    assert RULES["1pct"] == ("cv", 0.0, 0.01)


def test_the_relative_rules_read_accuracy_as_its_error_rate():
    """"1pct" and "2pct" allow a fraction of the best mean *loss*: for accuracy that is the error rate
    1 - accuracy, not the accuracy itself (2 % of an accuracy of 0.95 would be 40 % of its error rate)."""
    path = _nested_path()
    # accuracies 0.95, 0.945, 0.94, 0.5: best error rate 0.05, so 1 % allows 0.0005 and 20 % 0.01
    S = np.array([[0.95] * 5, [0.945] * 5, [0.94] * 5, [0.5] * 5])
    path.cv_scores, path.score_name = S, "accuracy"
    assert choose_from_scores(path, S, rel=0.01) == 0  # 0.945 < 0.9495
    assert choose_from_scores(path, S, rel=0.12) == 1  # 0.945 >= 0.944 (allowance 0.006) > 0.94
    assert choose_from_scores(path, S, rel=0.2) == 2  # 0.94 >= 0.94 > 0.5
    assert choose_index(path, "2pct") == 0
    # the same numbers as a negated loss (score_name None): 2 % of |0.95| = 0.019 reaches point 2
    path.score_name = None
    assert choose_from_scores(path, S, rel=0.02) == 2


def test_leave_one_out_closed_form_matches_refits():
    """The ridge is chosen by the exact leave-one-out error of the eigendecomposition; the
    closed form equals n refits without each row, and the prediction is kernel ridge's."""
    from sklearn.kernel_ridge import KernelRidge

    rng = np.random.default_rng(1)
    X = rng.standard_normal((25, 2))
    t = np.sin(X[:, 0]) + 0.2 * rng.standard_normal(25)
    Xte = rng.standard_normal((4, 2))
    gamma = 0.5

    # the closed form centres on all the rows (an intercept shared by the held-out row), so compare
    # with refits of centred targets: the same centring, refitted without row i
    tc = t - t.mean()
    a_best = min(RELAXED_ALPHAS, key=lambda a: np.mean(
        [(tc[i] - KernelRidge(alpha=a, kernel="rbf", gamma=gamma).fit(X[np.arange(25) != i],
                                                                      tc[np.arange(25) != i]).predict(X[i:i + 1])[0])
         ** 2 for i in range(25)]))
    pred = _ridge_loo_predict(X, t[:, None], Xte, gamma)
    expect = KernelRidge(alpha=a_best, kernel="rbf", gamma=gamma).fit(X, tc).predict(Xte) + t.mean()
    np.testing.assert_allclose(pred[:, 0], expect, rtol=1e-8, atol=1e-10)


def test_relaxed_scores_rank_the_true_support_first():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.2 * rng.standard_normal(80)
    supports = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0], [0, 0, 0, 0]], dtype=bool)
    S, sizes = relaxed_cv_scores(X, y, supports, 4, classifier=False)
    assert S.shape == (4, 4) and sizes.tolist() == [20] * 4
    mean = S.mean(axis=1)
    assert np.argmax(mean) == 0 and mean[2] < mean[1] and mean[3] < mean[2]
    # the empty support predicts the training mean: minus the held-out squared deviation from it
    folds = [np.arange(k * 20, (k + 1) * 20) for k in range(4)]
    np.testing.assert_allclose(S[3], [-np.mean((y[te] - np.delete(y, te).mean()) ** 2) for te in folds], rtol=1e-12)
    # a fold standardises with its training rows only: scaling X changes nothing
    np.testing.assert_allclose(relaxed_cv_scores(X * 1e3, y, supports, 4, classifier=False)[0], S, rtol=1e-8)
    Xc = X.copy()
    relaxed_cv_scores(Xc, y, supports, 4, classifier=False)
    np.testing.assert_array_equal(Xc, X)  # input not modified
    # classes: the hinge loss of ±1-coded kernel ridge, the truth again first; three classes too
    yc = (y > np.median(y)).astype(int)
    Sc, _ = relaxed_cv_scores(X, yc, supports, 4, classifier=True)
    assert np.all(Sc <= 0) and np.argmax(Sc.mean(axis=1)) == 0
    y3 = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    S3, _ = relaxed_cv_scores(X, y3, supports, 4, classifier=True)
    assert np.argmax(S3.mean(axis=1)) == 0
    path = FeaturePath([0.1, 1.0, 10.0, 100.0], supports[[1, 0, 2, 3]].astype(float))
    i, _, _ = relaxed_choice(path, X, y, 4, classifier=False, n_se=0)
    assert path.selected(i).tolist() == [True, True, False, False]



def test_select_default_for_lpkta_keeps_the_truth_without_noise():
    """On Friedman #1 + 10 noise features (200 rows, seed 0) lp-KTA's own CV curve is flat where its
    path keeps noise features, so "1se" keeps all 5 true features with 8 false ones; the default rule,
    on the relaxed refit, keeps the 5 with at most 1."""
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(n_samples=200, n_features=15, random_state=0)
    res = select(X, y, "lpkta")
    assert res.cv_rule.startswith("relaxed")
    assert res.selected[:5].all() and res.selected[5:].sum() <= 1
    old = select(X, y, "lpkta", cv_rule="1se")
    assert old.selected[:5].all() and old.selected[5:].sum() > 1  # what the former default kept
    # both rules read the one path the estimator fitted with its prediction rule
    np.testing.assert_array_equal(res.path.cv_scores, old.path.cv_scores)
    assert res.path.chosen_index == res.index and res.extra["relaxed"]["cv_scores"].shape[0] == res.path.n_points
    np.testing.assert_array_equal(res.selected, res.path.selected(res.index))


def test_cli_takes_the_relaxed_rules(tmp_path):
    import json

    from numkfs.cli import main

    js = tmp_path / "out.json"
    assert main(["select", "ozone", "--method", "garrote", "--cv", "3", "--cv-rule", "relaxed_1se", "--json", str(js),
                 "-q"]) == 0
    res = json.loads(js.read_text())
    assert res["cv_rule"] == "relaxed_1se" and res["relaxed"]["estimator_rule"] == "best"
    assert len(res["relaxed"]["cv_scores"]) > 1 and len(res["relaxed"]["fold_sizes"]) == 3
    with pytest.raises(SystemExit):  # argparse names the rules it takes
        main(["select", "ozone", "--method", "garrote", "--cv-rule", "relaxed", "-q"])
