"""The edges a user meets: the command line's table, JSON, CSV
reading and write errors; folds too small for a method; scorings a method
does not offer; warnings given once and by name; ties that make a requested
count arbitrary; reproducible cross-validation by default."""
import datetime
import json
import os
import subprocess
import sys
import warnings
from importlib.metadata import version

import numpy as np
import pytest
from conftest import methods

import numkfs
from numkfs import FeaturePath, select
from numkfs.cli import main
from numkfs.model_selection import index_for_count, make_cv


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "numkfs", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


def write_csv(path, X, y, names=None, target="y", bom=False):
    names = names or [f"f{j}" for j in range(X.shape[1])]
    lines = [",".join([*names, target])] + [",".join([*(repr(float(v)) for v in row), str(t)])
                                            for row, t in zip(X, y)]
    path.write_text(("\ufeff" if bom else "") + "\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory):
    """60 rows, 45 features, y driven by the first two."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 45))
    y = 2 * X[:, 0] - X[:, 1] + 0.1 * rng.standard_normal(60)
    return write_csv(tmp_path_factory.mktemp("wide") / "wide.csv", X, y)


def _table_rows(out):
    lines = out.splitlines()
    start = lines.index(next(ln for ln in lines if ln.startswith("feature "))) + 2
    return [ln for ln in lines[start:] if ln.strip() and not ln.startswith(("...", "results", "plot"))]


# --------------------------------------------------------------------------
# the command line: a table that fits a screen, a JSON that traces its result


def test_table_shows_30_rows_by_default_and_every_row_with_all(wide_csv, capsys):
    assert main(["select", str(wide_csv), "--method", "garrote", "--cv", "3", "-q"]) == 0
    out = capsys.readouterr().out
    rows = _table_rows(out)
    assert len(rows) == 30
    assert "15 more features" in out and "--all" in out
    assert rows[0].split()[0] in ("f0", "f1")
    # the selected features come first
    marks = [r.rstrip().endswith("*") for r in rows]
    assert marks == sorted(marks, reverse=True)
    assert main(["select", str(wide_csv), "--method", "garrote", "--cv", "3", "-q", "--all"]) == 0
    out = capsys.readouterr().out
    assert len(_table_rows(out)) == 45 and "more features" not in out


def test_table_keeps_every_selected_feature_first():
    from numkfs.selection import SelectionResult

    w = np.array([0.1, 0.0, 0.5, 0.1, 0.0])
    sel = np.array([False, False, True, True, False])  # feature 3 ties feature 0 and is the selected one
    res = SelectionResult("garrote", "regression", list("abcde"), w, sel, -1.0, "neg_mean_squared_error", "x")
    lines = res.table(max_rows=3).splitlines()
    assert [ln.split()[0] for ln in lines[2:5]] == ["c", "d", "a"]
    assert lines[5].startswith("... 2 more features")
    assert len(res.table().splitlines()) == 2 + 5


def test_colon_lpkta_prints_at_most_60_lines(capsys):
    """A wide data set (colon, 2,000 features) prints the 30-row table, not a row per feature; two
    folds, as the table does not depend on the folds."""
    assert main(["select", "colon", "--method", "lpkta", "--cv", "2", "-q"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) <= 60
    assert "--all" in out


def test_json_records_versions_sizes_date_seed_and_command(wide_csv, tmp_path, capsys):
    js = tmp_path / "out.json"
    argv = ["select", str(wide_csv), "--method", "garrote", "--cv", "3", "--seed", "7", "-q", "--json", str(js)]
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    assert main(argv) == 0
    doc = json.loads(js.read_text())
    assert doc["versions"]["numkfs"] == numkfs.__version__ == version("numkfs")
    for pkg in ("numpy", "scipy", "numba", "scikit-learn", "cvxpy"):
        assert doc["versions"][pkg] == version(pkg)
    assert doc["n_samples"] == 60 and doc["n_features"] == 45
    assert doc["seed"] == 7
    assert doc["command"] == ["numkfs", *argv]
    date = datetime.datetime.fromisoformat(doc["date"])
    assert date.utcoffset() == datetime.timedelta(0)
    assert before <= date <= datetime.datetime.now(datetime.timezone.utc)


def test_json_command_is_sys_argv_from_the_shell(wide_csv, tmp_path):
    js = tmp_path / "out.json"
    out = run("select", str(wide_csv), "--method", "garrote", "--cv", "3", "-q", "--json", str(js))
    assert out.returncode == 0, out.stderr
    assert json.loads(js.read_text())["command"][1:] == ["select", str(wide_csv), "--method", "garrote", "--cv",
                                                         "3", "-q", "--json", str(js)]


def test_csv_byte_order_mark_is_dropped(tmp_path, capsys):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(30)
    # "CSV UTF-8" from a spreadsheet: a BOM, and the target first
    f = tmp_path / "bom.csv"
    lines = ["y,a,b,c"] + [",".join(repr(float(v)) for v in (t, *row)) for t, row in zip(y, X)]
    f.write_bytes(b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode())
    assert main(["select", str(f), "--target", "y", "--method", "garrote", "--cv", "3", "-q"]) == 0
    out = capsys.readouterr().out
    assert "target: y" in out and "\ufeff" not in out
    from numkfs._data_io import read_table

    _, _, names, target, _ = read_table(str(f))
    assert names == ["y", "a", "b"] and target == "c"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (a full disk)")
@pytest.mark.parametrize("flag,name", [("--json", "out.json"), ("--plot", "out.png")])
def test_write_error_is_one_line_exit_2(wide_csv, tmp_path, flag, name):
    target = tmp_path / name
    target.symlink_to("/dev/full")  # every write fails: "No space left on device"
    out = run("select", str(wide_csv), "--method", "garrote", "--cv", "3", "-q", flag, str(target))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"numkfs: error: {flag} {target}: cannot write: No space left on device")


def test_write_to_a_missing_folder_is_refused_before_the_computation(wide_csv, tmp_path):
    out = run("select", str(wide_csv), "--method", "garrote", "-q", "--json", str(tmp_path / "no" / "out.json"))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "does not exist" in out.stderr


def test_plot_without_extension_is_written_under_that_name(wide_csv, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    target = tmp_path / "figure"
    assert main(["select", str(wide_csv), "--method", "garrote", "--cv", "3", "-q", "--plot", str(target)]) == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "figure.png").exists()


# --------------------------------------------------------------------------
# folds too small for the method are named as folds


THREE = (np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0]]), np.array([3.0, 4.0, 1.5]))


@pytest.mark.parametrize("method", methods(task="regression"))
def test_a_fold_too_small_is_named(method):
    X, y = THREE
    with pytest.raises(ValueError, match=r"^fold 1 of 2 has 1 training sample; \S+ needs at least 2: "
                                         r"use fewer folds \(cv\) or give more rows"):
        select(X, y, method, task="regression", cv=2)


def test_a_fold_too_small_on_the_command_line(tmp_path):
    f = tmp_path / "three.csv"
    f.write_text("a,b,y\n1,2,3\n2,1,4\n3,5,1.5\n")
    out = run("select", str(f), "--method", "garrote", "--cv", "2")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert out.stderr.startswith("numkfs: error: fold 1 of 2 has 1 training sample; garrote needs at least 2: "
                                 "use fewer folds (--cv)")


# --------------------------------------------------------------------------
# a scoring the method does not offer is refused by every method


@pytest.mark.parametrize("method,task,scoring", [
    ("garrote", "regression", "accuracy"), ("cosso", "regression", "accuracy"),
    ("nmmkl", "classification", "neg_log_loss"), ("nmmkl", "classification", "neg_mean_squared_error"),
    ("knife", "classification", "neg_hinge_loss"), ("lpkta", "classification", "neg_log_loss"),
    ("l1kr", "regression", "accuracy"), ("knife", "regression", "r2"),
])
def test_every_method_refuses_a_scoring_it_does_not_offer(method, task, scoring):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    if task == "classification":
        y = (y > 0).astype(int)
    from numkfs.model_selection import SCORINGS

    offered = ", ".join(map(repr, SCORINGS[method][task]))
    with pytest.raises(ValueError, match=f"does not offer scoring={scoring!r}.*it offers {offered}"):
        select(X, y, method, task=task, scoring=scoring, cv=3)


def test_scoring_table_is_what_the_estimators_accept():
    from numkfs.estimators._knife_cv import CLASSIFICATION_SCORINGS
    from numkfs.estimators._lpkta_scoring import KERNEL_MODEL_SCORINGS
    from numkfs.model_selection import SCORINGS

    assert set(SCORINGS["knife"]["classification"]) == set(CLASSIFICATION_SCORINGS)
    assert set(SCORINGS["lpkta"]["classification"]) | set(SCORINGS["lpkta"]["regression"]) \
        == set(KERNEL_MODEL_SCORINGS)
    assert set(SCORINGS) == set(numkfs.selection.METHODS)
    for method, tasks in numkfs.selection.METHODS.items():
        assert set(SCORINGS[method]) == set(tasks)


def test_garrote_on_the_command_line_refuses_accuracy():
    out = run("select", "ozone", "--method", "garrote", "--scoring", "accuracy", "-q")
    assert out.returncode == 2 and out.stdout == ""
    assert "does not offer scoring='accuracy'" in out.stderr and "'neg_mean_squared_error'" in out.stderr


# --------------------------------------------------------------------------
# each warning once, naming columns by their feature names


@pytest.mark.parametrize("method,kw", [("knife", dict(n_grid=4)), ("garrote", dict(n_grid=4)),
                                       ("lpkta", {}), ("nmmkl", {}), ("cosso", dict(n_grid=4, max_iter=20)),
                                       ("l1kr", dict(n_grid=5))])
def test_constant_column_warned_once_by_name(method, kw):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    X[:, 1] = 3.0
    task = "classification" if method == "nmmkl" else "regression"
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    if task == "classification":
        y = (y > 0).astype(int)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        select(X, y, method, task=task, cv=3, feature_names=["a", "flat", "c", "d"], **kw)
    const = [str(w.message) for w in rec if type(w.message).__name__ == "ConstantFeatureWarning"]
    assert len(const) == 1, const
    assert "[flat]" in const[0]


def test_knife_estimator_warns_once_about_a_constant_column():
    from numkfs.estimators import KNIFERegressorCV

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    X[:, 2] = 1.0
    y = X[:, 0] + 0.1 * rng.standard_normal(40)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        KNIFERegressorCV(n_grid=4, cv=3).fit(X, y)
    const = [str(w.message) for w in rec if type(w.message).__name__ == "ConstantFeatureWarning"]
    assert len(const) == 1 and const[0].startswith("KNIFERegressorCV:"), const


def test_ionosphere_knife_prints_one_constant_column_warning_naming_v2():
    """The constant column V2 of ionosphere is warned about once, by its name, however many fits the
    cross-validation makes (two folds are enough to make several)."""
    out = run("select", "ionosphere", "--method", "knife", "--cv", "2")
    assert out.returncode == 0, out.stderr
    hits = [ln for ln in out.stderr.replace("\r", "\n").splitlines() if "ConstantFeatureWarning" in ln]
    assert len(hits) == 1 and "[V2]" in hits[0], hits


# --------------------------------------------------------------------------
# ties that make a requested count arbitrary warn, naming the tied features


def test_tied_features_within_the_solvers_accuracy():
    from numkfs.model_selection import tied_features

    assert tied_features([0.5, 0.3 + 1e-11, 0.3, 0.1], 2).tolist() == [1, 2]
    assert tied_features([0.5, 0.3, 0.3, 0.1], 3).tolist() == []  # both tied ones kept: nothing arbitrary
    assert tied_features([0.5, 0.31, 0.3, 0.1], 2).tolist() == []
    assert tied_features([0.5, 0.3 + 1e-7, 0.3], 2, atol=1e-6).tolist() == [1, 2]


def test_index_for_count_warns_about_near_ties_by_name():
    W = np.array([[0.5, 0.3 + 1e-11, 0.3, 0.1], [0.5, 0.0, 0.0, 0.0]])
    path = FeaturePath([1.0, 2.0], W, feature_names=["a", "b", "c", "d"])
    with pytest.warns(UserWarning, match=r"2 features tie at 0\.3.*: b, c; 1 of them"):
        i, mask = index_for_count(path, 2)
    assert i == 0 and mask.tolist() == [True, True, False, False]


def test_nmmkl_select_warns_about_ties():
    rng = np.random.default_rng(0)
    z = rng.standard_normal(60)
    # four copies of one informative column (equal up to round-off after standardising) and noise
    X = np.column_stack([z, 2 * z, z + 1.0, 3 * z - 2.0, rng.standard_normal((60, 3))])
    y = (z + 0.3 * rng.standard_normal(60) > 0).astype(int)
    names = ["z1", "z2", "z3", "z4", "n1", "n2", "n3"]
    with pytest.warns(UserWarning, match=r"selecting 2 features, but \d+ features tie .*: z1, z2, z3, z4\b"):
        res = select(X, y, "nmmkl", n_features=2, feature_names=names, cv=3)
    assert res.n_selected == 2


def test_wpbc_nmmkl_five_features_warns_about_ties():
    out = run("select", "wpbc", "--method", "nmmkl", "--n-features", "5")
    assert out.returncode == 0, out.stderr
    assert "selecting 5 features, but 23 features tie at 2.96954" in out.stderr


# --------------------------------------------------------------------------
# reproducible cross-validation by default


def test_int_cv_gives_unshuffled_folds():
    from sklearn.model_selection import KFold, StratifiedKFold

    y = np.arange(20.0)
    got = [te.tolist() for _, te in make_cv(4, y, classifier=False).split(y[:, None])]
    assert got == [te.tolist() for _, te in KFold(4).split(y[:, None])]
    labels = np.arange(20) % 2
    got = [te.tolist() for _, te in make_cv(4, labels, classifier=True, random_state=3).split(y[:, None], labels)]
    assert got == [te.tolist() for _, te in StratifiedKFold(4).split(y[:, None], labels)]


def test_cv_estimator_with_default_random_state_is_reproducible():
    from numkfs.estimators import GarroteRegressorCV, L1KRRegressorCV

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    y = X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(50)
    a, b = (GarroteRegressorCV(n_grid=8).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)
    assert a.best_index_ == b.best_index_
    a, b = (L1KRRegressorCV(n_grid=6, cv=3).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)


def test_a_shuffling_splitter_is_used_as_given():
    from sklearn.model_selection import KFold

    from numkfs.estimators import GarroteRegressorCV

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 4))
    y = X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(50)
    plain = GarroteRegressorCV(n_grid=8).fit(X, y)
    shuffled = GarroteRegressorCV(n_grid=8, cv=KFold(5, shuffle=True, random_state=0)).fit(X, y)
    assert not np.allclose(plain.cv_scores_, shuffled.cv_scores_)


def test_knife_estimators_are_reproducible_with_their_defaults():
    """KNIFE draws the starting weights of its restarts after the first (w = 1) at random. Its
    default random_state is None, as scikit-learn's: with the default single start from w = 1, the
    exact kernel and unshuffled folds two fits still agree to the last bit; with more starts an int
    seed makes two fits agree and None draws fresh starts each fit."""
    from numkfs import KNIFEClassifier, KNIFEClassifierCV, KNIFERegressor, KNIFERegressorCV
    from numkfs.datasets import make_sinusoid

    for cls in (KNIFERegressor, KNIFEClassifier, KNIFERegressorCV, KNIFEClassifierCV):
        assert cls().get_params()["random_state"] is None, cls.__name__
    X, y, _ = make_sinusoid(n_samples=40, random_state=1)
    a = KNIFERegressorCV(n_grid=6, cv=3).fit(X, y)
    b = KNIFERegressorCV(n_grid=6, cv=3).fit(X, y)
    assert a.best_index_ == b.best_index_
    np.testing.assert_array_equal(a.feature_weights_, b.feature_weights_)
    np.testing.assert_array_equal(a.cv_scores_, b.cv_scores_)
    # an int: the same uniform starts after the first in every fit
    c, d = (KNIFERegressor(lambda2=1.0, random_state=3, max_iter=2, n_restarts=2).fit(X, y) for _ in range(2))
    np.testing.assert_array_equal(c.restart_objectives_, d.restart_objectives_)
    # None: fresh uniform starts after the first per fit (two fits stop at different iterates)
    c = KNIFERegressor(lambda2=1.0, max_iter=2, n_restarts=2).fit(X, y)
    d = KNIFERegressor(lambda2=1.0, max_iter=2, n_restarts=2).fit(X, y)
    assert c.restart_objectives_[0] == d.restart_objectives_[0]
    assert c.restart_objectives_[1] != d.restart_objectives_[1]
