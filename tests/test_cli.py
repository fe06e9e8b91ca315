"""The command line: results on shipped data, and one-line errors with status 2."""
import datetime
import json
import os
import subprocess
import sys
from importlib.metadata import version
import warnings

import numpy as np
import pytest
from conftest import methods
from sklearn.datasets import make_friedman1

import numkfs
from numkfs import select
from numkfs.cli import main


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "numkfs", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


# --------------------------------------------------------------------------
# errors: status 2 and a clear message, never a traceback (every case of the
# command line's error handling, once)


def _case(argv, message, files=None, fits=False, id=None):
    """``files``: name -> text, written to the working folder (a fresh temporary one, ``{tmp}``
    in ``message``) first; ``fits``: the error comes from fitting (inside select()), else
    select() must never run."""
    return pytest.param(argv, message, files or {}, fits, id=id)


_ROWS_10 = "\n".join(f"{i},{(3 * i) % 7},{(5 * i) % 11},{i % 4}" for i in range(10)) + "\n"
_DUP_Y = "y,a,b,y\n" + "\n".join(f"{i},{i % 3},{i % 5},{2 * i}" for i in range(20)) + "\n"

CLI_ERRORS = [
    # the data argument
    _case(["select", "no_such_file.csv"], "no such file or shipped dataset: 'no_such_file.csv' (shipped: ",
          id="no-such-file"),
    _case(["select", "ozone", "--target", "nope"], "column 'nope' not found in ozone; columns: ", id="no-target"),
    _case(["select", "ozone", "--method", "magic"],
          f"unknown method 'magic'; choose one of {', '.join(methods())}", id="bad-method"),
    _case(["select", "d.csv", "--method", "bogus", "--cv", "2", "-q"], "unknown method 'bogus'; choose one of ",
          files={"d.csv": "a,b,y\n1,2,1\n2,3,2\n3,4,3\n4,1,1\n"}, id="bad-method-on-a-file"),
    # the file's contents
    _case(["select", "d.csv", "--method", "garrote"], "column 'b' is not numeric (value 'x')",
          files={"d.csv": "a,b,y\n1,x,1\n2,y,2\n3,z,3\n"}, id="non-numeric-column"),
    _case(["select", "d.csv", "--method", "garrote", "--cv", "2", "-q"],
          "d.csv has 0 data row(s) (the file is empty); need a header and at least 2 rows",
          files={"d.csv": ""}, id="empty-file"),
    # a header followed by blank lines was an IndexError traceback
    _case(["select", "d.csv", "--method", "garrote"], "d.csv has 0 data row(s); need a header and at least 2 rows",
          files={"d.csv": "a,b,y\n\n\n\n"}, id="header-then-blank-lines"),
    _case(["select", "d.csv", "--method", "knife", "--cv", "2", "-q"],
          "d.csv has 1 data row(s); need a header and at least 2 rows", files={"d.csv": "a,b,y\n1,2,1\n"},
          id="one-data-row"),
    # y,a,b,y: the first y became the target and the real response a feature, silently
    _case(["select", "d.csv", "--method", "garrote"], "d.csv: duplicate column name(s) 'y' in the header",
          files={"d.csv": _DUP_Y}, id="duplicate-header-names"),
    _case(["select", "d.csv", "--method", "garrote", "--cv", "2", "-q"],
          "GarroteRegressorCV: X contains infinity in column 1", fits=True,
          files={"d.csv": "a,b,y\n1,2,1\n2,3,2\n3,inf,3\n4,1,1\n"}, id="infinity"),
    # classification of a continuous target: scikit-learn's "Unknown label type: continuous", and with --fdr a
    # selection (of 0 features) from 40 one-row classes; one numkfs message by every route
    _case(["select", "d.csv", "--method", "nmmkl", "--cv", "2", "-q"],
          "select: y looks continuous (4 distinct real values in 4 samples); pass class labels.", fits=True,
          files={"d.csv": "a,b,y\n1,2,1.5\n2,3,2.25\n3,4,3.75\n4,1,1.1\n"}, id="continuous-target-for-nmmkl"),
    *[_case(["select", "d.csv", "--task", "classification", "-q", *flags],
            "select: y looks continuous (12 distinct real values in 12 samples); pass class labels.", fits=True,
            files={"d.csv": "a,b,y\n" + "".join(f"{i},{(7 * i) % 5},{0.37 * i + 0.01}\n" for i in range(12))},
            id=f"continuous-target-for-classification{'-' if flags else ''}{'-'.join(f[2:] for f in flags[:1])}")
      for flags in ([], ["--fdr", "0.2"], ["--stability"])],
    # --json/--plot to an unwritable path failed after the whole computation (the result lost)
    _case(["select", "ozone", "--method", "garrote", "--json", "no/out.x"],
          "--json no/out.x: the folder {tmp}/no does not exist", id="json-folder-missing"),
    _case(["select", "ozone", "--method", "garrote", "--plot", "no/out.x"],
          "--plot no/out.x: the folder {tmp}/no does not exist", id="plot-folder-missing"),
    # counts checked against the data
    _case(["select", "d.csv", "--method", "garrote", "--cv", "50"], "--cv 50: more folds than the 10 rows",
          files={"d.csv": "a,b,c,y\n" + _ROWS_10}, id="more-folds-than-rows"),
    _case(["select", "d.csv", "--method", "garrote", "--n-features", "7"],
          "--n-features 7: the data has only 3 features", files={"d.csv": "a,b,c,y\n" + _ROWS_10},
          id="more-features-than-columns"),
    # counts checked by the parser (argparse: its usage, then the message): --n-features -3 selected
    # 0 features; cross-check --n-features 0 silently used the default
    _case(["select", "ozone", "--n-features", "-3"], "argument --n-features: must be >= 1, got -3",
          id="n-features-negative"),
    _case(["select", "ozone", "--n-features", "0"], "argument --n-features: must be >= 1, got 0", id="n-features-0"),
    _case(["cross-check", "sonar", "--problem", "nmmkl", "--n-features", "0"],
          "argument --n-features: must be >= 1, got 0", id="cross-check-n-features-0"),
    _case(["select", "ozone", "--cv", "1"], "argument --cv: needs at least 2 folds, got 1", id="one-fold"),
    # stability selection and knockoffs
    _case(["select", "ozone", "--fdr", "1.5"], "argument --fdr: --fdr must be in (0, 1), got 1.5", id="fdr-above-1"),
    _case(["select", "ozone", "--stability", "--threshold", "0.4"], "argument --threshold: must be in (0.5, 1], got 0.4",
          id="threshold-below-half"),
    _case(["select", "ozone", "--stability", "--fdr", "0.1"], "--stability and --fdr are two ways of selecting",
          id="stability-and-fdr"),
    _case(["select", "ozone", "--fdr", "0.1", "--n-features", "2"], "--n-features does not apply with --stability",
          id="fdr-and-n-features"),
    _case(["select", "ozone", "--n-resamples", "3"], "--n-resamples and --threshold belong to --stability",
          id="n-resamples-without-stability"),
    # --plot with an extension matplotlib cannot write failed after the whole computation (a
    # traceback, status 1), for cross-check too; a seed beyond 2**32 - 1 failed inside numpy
    _case(["select", "ozone", "--method", "garrote", "--plot", "out.xyz"],
          "--plot out.xyz: cannot write a .xyz file; give a name ending in ", id="plot-unknown-extension"),
    _case(["cross-check", "ozone", "--problem", "garrote", "--plot", "out.xyz"],
          "--plot out.xyz: cannot write a .xyz file; give a name ending in ", id="cross-check-plot-extension"),
    _case(["select", "ozone", "--seed", "99999999999999999999"],
          "argument --seed: must be at most 4294967295 (2**32 - 1), got 99999999999999999999", id="seed-too-big"),
    _case(["select", "ozone", "--seed", "-1"], "argument --seed: must be >= 0, got -1", id="seed-negative"),
    # one text cell in a numeric target made 60 one-row classes, and the error blamed the folds
    _case(["select", "d.csv", "--method", "knife"],
          "column 'y' (the target) is numeric except for 1 cell(s): 'n/a?' on line 5; fix or drop those rows",
          files={"d.csv": "a,b,y\n" + "\n".join(f"{i},{(7 * i) % 5},{'n/a?' if i == 3 else 1.5 * i}"
                                               for i in range(30)) + "\n"}, id="text-cell-in-numeric-target"),
    # a solver that is not installed: say how to install it
    _case(["cross-check", "ozone", "--problem", "garrote", "--solvers", "native,MOSEK"],
          "The solver 'MOSEK' is not installed. Install it with `pip install mosek`", id="missing-solver"),
]


@pytest.mark.parametrize("argv,message,files,fits", CLI_ERRORS)
def test_errors_exit_2_with_a_clear_message(argv, message, files, fits, tmp_path, monkeypatch, capsys):
    if "native,MOSEK" in argv:
        from numkfs.solvers._cvxpy_backend import cvxpy_installed_solvers

        if "MOSEK" in cvxpy_installed_solvers():
            pytest.skip("MOSEK is installed here")
    monkeypatch.chdir(tmp_path)
    message = message.replace("{tmp}", str(tmp_path))
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    if not fits:  # refused from the arguments and the file alone, before any computing
        import numkfs.selection
        import numkfs.solvers

        def never(*a, **k):
            raise AssertionError("select() or cross_check() ran before the error was found")

        monkeypatch.setattr(numkfs.selection, "select", never)
        if "native,MOSEK" not in argv:  # that error comes from cross_check itself
            monkeypatch.setattr(numkfs.solvers, "cross_check", never)
    try:
        rc = main(argv)
    except SystemExit as exc:  # the parser's own errors
        rc = exc.code
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and "Traceback" not in err, err
    if message.startswith("argument "):  # argparse: the usage, then "numkfs <command>: error: <message>"
        assert err.startswith(f"usage: numkfs {argv[0]} ") and err.endswith("\n"), err
        assert err.splitlines()[-1].startswith(f"numkfs {argv[0]}: error: {message}"), err
    else:  # numkfs's own errors: the whole of stderr is one line, the fixed prefix then the message
        assert err.endswith("\n") and err.count("\n") == 1, err
        assert err.startswith("numkfs: error: " + message), err


@pytest.mark.parametrize("args,last_line", [
    (["select", "no_such_file.csv"], "numkfs: error: no such file or shipped dataset: 'no_such_file.csv'"),
    (["select", "ozone", "--cv", "1"], "numkfs select: error: argument --cv: needs at least 2 folds, got 1"),
])
def test_the_command_exits_with_status_2(args, last_line):
    # the same errors through the real command (python -m numkfs): the process's status is 2
    out = run(*args)
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert out.stderr.endswith("\n") and out.stderr.splitlines()[-1].startswith(last_line)
    if args[-1] == "no_such_file.csv":
        assert out.stderr.count("\n") == 1


def test_select_garrote_on_ozone_matches_library(tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    from numkfs import select
    from numkfs.datasets import load_dataset

    js, png = tmp_path / "out.json", tmp_path / "path.png"
    assert main(["select", "ozone", "--method", "garrote", "--json", str(js), "--plot", str(png), "-q"]) == 0
    out = capsys.readouterr().out
    res = json.loads(js.read_text())
    d = load_dataset("ozone")
    ref = select(d.data, d.target, "garrote", feature_names=d.feature_names, random_state=0)
    assert res["selected"] == [str(f) for f in np.asarray(d.feature_names)[ref.selected]]
    np.testing.assert_allclose([f["weight"] for f in res["features"]], ref.weights, rtol=1e-10, atol=1e-12)
    assert "temp" in res["selected"]  # temperature drives ozone in every analysis of these data
    assert png.stat().st_size > 1000 and "selected" in out


def test_cross_check_nmmkl_agrees(capsys):
    assert main(["cross-check", "sonar", "--problem", "nmmkl", "--solvers", "native,CLARABEL,ECOS"]) == 0
    out = capsys.readouterr().out
    assert "native" in out and "CLARABEL" in out and "(reference: native)" in out


def test_rows_with_missing_values_are_dropped_with_a_warning(tmp_path):
    from numkfs._data_io import read_table

    f = tmp_path / "d.csv"
    f.write_text("a,b,y\n1,2,1\n2,,2\n3,1,3\n4,5,4\n")
    with pytest.warns(UserWarning, match="dropped 1 row"):
        X, y, names, target, task = read_table(str(f))
    assert X.shape == (3, 2) and target == "y" and names == ["a", "b"]


def test_progress_bar_over_cv_folds_unless_quiet(capsys):
    assert main(["select", "ozone", "--method", "garrote", "--cv", "3"]) == 0
    assert "CV folds" in capsys.readouterr().err
    assert main(["select", "ozone", "--method", "garrote", "--cv", "3", "-q"]) == 0
    assert "CV folds" not in capsys.readouterr().err


# --------------------------------------------------------------------------
# CLI input handling, --version, --json and the solver commands


def _csv(tmp_path, text, name="d.csv"):
    f = tmp_path / name
    f.write_text(text)
    return str(f)


def _reg_csv(n=30, header="a,b,c,y", seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = X[:, 0] + 0.1 * rng.standard_normal(n)
    return header + "\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in np.column_stack([X, y])) + "\n"


def test_na_target_cell_row_is_dropped(tmp_path, capsys):
    # a target cell "NA" was a traceback (float("NA"))
    text = _reg_csv().replace("\n", "\nNA_ROW\n", 1).replace("NA_ROW", "0.1,0.2,0.3,NA")
    with pytest.warns(UserWarning, match="dropped 1 row"):
        assert main(["select", _csv(tmp_path, text), "--method", "garrote", "--cv", "3"]) == 0
    assert "(30 samples, 3 features)" in capsys.readouterr().out


def test_quiet_hides_the_warnings_of_the_data_load_too(tmp_path):
    # -q installed its filter after the data were read: "cli.py:138: UserWarning: d.csv: dropped 1 row(s)"
    # and the source line were printed
    text = _reg_csv().replace("\n", "\nNA_ROW\n", 1).replace("NA_ROW", "0.1,0.2,0.3,NA")
    r = subprocess.run([sys.executable, "-m", "numkfs", "select", _csv(tmp_path, text), "--method", "garrote",
                        "--cv", "3", "-q"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0 and "(30 samples, 3 features)" in r.stdout
    assert "Warning" not in r.stderr and "dropped" not in r.stderr, r.stderr


def test_integer_class_codes_in_csv_are_classes(tmp_path, capsys):
    # 0/1/2 codes in a CSV were read as floats and treated as regression
    rng = np.random.default_rng(1)
    X = rng.standard_normal((45, 3))
    y = np.arange(45) % 3
    X[:, 0] += 2 * y
    text = "a,b,c,label\n" + "\n".join(f"{r[0]:.5f},{r[1]:.5f},{r[2]:.5f},{c}" for r, c in zip(X, y)) + "\n"
    assert main(["select", _csv(tmp_path, text), "--method", "nmmkl", "--n-features", "1", "-q"]) == 0
    out = capsys.readouterr().out
    assert "(classification)" in out and "selected 1 of 3 features: a" in out


def test_version_and_select_help():
    # --version; select --help lists the shipped datasets and the default method
    from numkfs import __version__
    from numkfs.datasets import dataset_names

    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"numkfs {__version__}"
    helptext = " ".join(run("select", "--help").stdout.split())
    assert "The default method is knife." in helptext
    assert all(name in helptext for name in dataset_names())


def test_json_has_path_and_parameters(tmp_path, capsys):
    # --json includes the path (grid, weights, scores) and the parameters used
    js = tmp_path / "out.json"
    assert main(["select", "ozone", "--method", "garrote", "--cv", "3", "--json", str(js), "-q"]) == 0
    res = json.loads(js.read_text())
    path = res["path"]
    w = np.array(path["weights"], dtype=float)
    assert w.shape == (len(path["grid"]), len(res["features"]))
    assert np.array(path["cv_scores"], dtype=float).shape == (len(path["grid"]), 3)
    assert path["cv_fold_sizes"] == [110, 110, 110]  # ozone's 330 rows in 3 folds: the mean score's weights
    i = res["index"]
    np.testing.assert_allclose(np.where([f["selected"] for f in res["features"]], w[i], 0.0),
                               [f["weight"] for f in res["features"]], rtol=1e-12, atol=1e-15)
    assert res["parameters"] == {"method": "garrote", "task": "regression", "n_features": None, "cv": 3,
                                 "cv_rule": "2pct", "scoring": None, "seed": 0, "target": res["target"]}  # its default


def test_cross_check_times_exclude_compilation_and_say_so(capsys):
    # cross-check times are measured after a warm-up solve
    assert main(["cross-check", "ozone", "--problem", "garrote", "--solvers", "native,CLARABEL"]) == 0
    out = capsys.readouterr().out
    assert "(solve times after a warm-up solve: compilation and set-up excluded)" in out


def test_solvers_command_checks_native_solvers(capsys):
    # numkfs solvers checks the native solvers too
    assert main(["solvers"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("native:")]
    assert len(lines) >= 5 and all(line.rstrip().endswith("yes") for line in lines)


def test_cross_check_plot_without_extension_is_png_under_that_name(tmp_path, capsys):
    # cross-check --plot NAME silently wrote NAME.png; as select --plot: PNG under that very name, said
    out = tmp_path / "bars"
    main(["cross-check", "ozone", "--problem", "garrote", "--solvers", "native", "--plot", str(out)])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not (tmp_path / "bars.png").exists()
    assert f"plot written to {out}" in capsys.readouterr().out


def test_quiet_still_notes_a_solver_fallback(monkeypatch, capsys):
    # -q ignored every warning: a backend that failed and was replaced by another went unsaid
    import warnings

    import numkfs.selection
    from numkfs.solvers import SolverFallbackWarning

    real = numkfs.selection.select

    def with_fallback(*args, **kwargs):
        for _ in range(3):  # said once
            warnings.warn("solver CLARABEL returned 'error' (boom); falling back to ECOS.", SolverFallbackWarning)
        warnings.warn("a warning -q hides", UserWarning)
        return real(*args, **kwargs)

    monkeypatch.setattr(numkfs.selection, "select", with_fallback)
    assert main(["select", "ozone", "--method", "garrote", "-q"]) == 0
    err = capsys.readouterr().err
    assert err == "numkfs: note: solver CLARABEL returned 'error' (boom); falling back to ECOS.\n", err


# --------------------------------------------------------------------------
# the trust layer's front door


def _no_nan_json(path):
    def refuse(token):
        raise AssertionError(f"{token} is not JSON")

    with open(path) as fh:
        return json.load(fh, parse_constant=refuse)


def test_fdr_json_is_valid_json_with_an_infinite_threshold_as_null(tmp_path, capsys):
    # pure noise: nothing selected, the knockoff+ threshold is +inf; it was written as Infinity
    rng = np.random.default_rng(3)
    text = "a,b,c,y\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in rng.standard_normal((40, 4))) + "\n"
    out = tmp_path / "r.json"
    assert main(["select", _csv(tmp_path, text), "--method", "lpkta", "--fdr", "0.1", "--seed", "0", "--json",
                 str(out), "-q"]) == 0
    doc = _no_nan_json(out)
    assert doc["selected"] == [] and doc["knockoffs"]["threshold"] is None


@pytest.mark.parametrize("flags, key", [(["--fdr", "0.2"], "statistic"), (["--stability", "--n-resamples", "3"],
                                                                          "probability")], ids=["fdr", "stability"])
def test_nothing_selected_prints_and_writes_every_features_value(tmp_path, capsys, flags, key):
    rng = np.random.default_rng(3)
    text = "a,b,c,d,y\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in rng.standard_normal((60, 5))) + "\n"
    out = tmp_path / "r.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["select", _csv(tmp_path, text), "--method", "lpkta", "--seed", "0", "--json", str(out)]
                    + flags) == 0
    printed = capsys.readouterr().out
    doc = _no_nan_json(out)
    assert doc["selected"] == [] and doc["groups"] == []
    values = {f["name"]: f[key] for f in doc["features"]}
    assert sorted(values) == ["a", "b", "c", "d"]
    assert "selected 0 of 4 features: (none)" in printed and "closest not selected" in printed
    for name, v in values.items():  # the table's row of every feature, with its value
        assert any(line.split()[:2] == [name, f"{v:.6g}"] for line in printed.splitlines()), (name, v)


@pytest.mark.parametrize("flags", [["--fdr", "0.2"], ["--stability", "--n-resamples", "2"]], ids=["fdr", "stability"])
def test_fewer_rows_than_cv_folds_is_accepted_when_no_cv_runs(tmp_path, flags, capsys):
    # 8 rows and the default --cv 5 is fine; --cv 10 was refused although neither mode cross-validates
    path = _csv(tmp_path, _reg_csv(n=8))
    assert main(["select", path, "--method", "lpkta", "--cv", "10", "--seed", "0", "-q"] + flags) == 0
    assert "(8 samples, 3 features)" in capsys.readouterr().out
    assert main(["select", path, "--method", "lpkta", "--cv", "10", "-q"]) == 2  # without them, folds are checked
    assert "--cv 10: more folds than the 8 rows" in capsys.readouterr().err


def test_knockoffs_on_too_few_rows_name_the_rows_needed(tmp_path, capsys):
    assert main(["select", _csv(tmp_path, _reg_csv(n=2)), "--method", "lpkta", "--fdr", "0.2", "-q"]) == 2
    assert "needs at least 3 rows; got n_samples = 2" in capsys.readouterr().err


def test_fdr_on_a_duplicated_column_warns_instead_of_singular_matrix(tmp_path, capsys):
    # "numkfs: error: Singular matrix" (numpy's LinAlgError from the knockoff draw)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    X = np.column_stack([X, X[:, 1]])
    y = X[:, 0] + 0.1 * rng.standard_normal(60)
    text = "a,b,c,b2,y\n" + "\n".join(",".join(f"{v:.6f}" for v in row) for row in np.column_stack([X, y])) + "\n"
    # select() hands KnockoffFilter an array: the columns are named by position (b is 1, b2 is 3)
    with pytest.warns(UserWarning, match=r"feature\(s\) \[1, 3\] are collinear"):
        assert main(["select", _csv(tmp_path, text), "--method", "lpkta", "--fdr", "0.2", "--seed", "0"]) == 0


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


def test_a_fold_too_small_on_the_command_line(tmp_path):
    f = tmp_path / "three.csv"
    f.write_text("a,b,y\n1,2,3\n2,1,4\n3,5,1.5\n")
    out = run("select", str(f), "--method", "garrote", "--cv", "2")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert out.stderr.startswith("numkfs: error: fold 1 of 2 has 1 training sample; garrote needs at least 2: "
                                 "use fewer folds (--cv)")


def test_garrote_on_the_command_line_refuses_accuracy():
    out = run("select", "ozone", "--method", "garrote", "--scoring", "accuracy", "-q")
    assert out.returncode == 2 and out.stdout == ""
    assert "does not offer scoring='accuracy'" in out.stderr and "'neg_mean_squared_error'" in out.stderr


def test_ionosphere_knife_prints_one_constant_column_warning_naming_v2():
    """The constant column V2 of ionosphere is warned about once, by its name, however many fits the
    cross-validation makes (two folds are enough to make several)."""
    out = run("select", "ionosphere", "--method", "knife", "--cv", "2")
    assert out.returncode == 0, out.stderr
    hits = [ln for ln in out.stderr.replace("\r", "\n").splitlines() if "ConstantFeatureWarning" in ln]
    assert len(hits) == 1 and "[V2]" in hits[0], hits


def test_wpbc_nmmkl_five_features_warns_about_ties():
    out = run("select", "wpbc", "--method", "nmmkl", "--n-features", "5")
    assert out.returncode == 0, out.stderr
    assert "selecting 5 features, but 23 features tie at 2.96954" in out.stderr


def test_cli_cv_rule_default_is_the_methods_rule(tmp_path):
    import json

    from numkfs.cli import build_parser, main

    assert build_parser().parse_args(["select", "ozone"]).cv_rule is None
    js = tmp_path / "out.json"
    # COSSO's declared rule, "1se", is not the estimators' default
    assert main(["select", "ozone", "--method", "cosso", "--cv", "3", "--json", str(js), "-q"]) == 0
    res = json.loads(js.read_text())
    assert res["cv_rule"] == res["parameters"]["cv_rule"] == "1se"


@pytest.fixture(scope="module")
def friedman():
    X, y = make_friedman1(n_samples=100, n_features=8, random_state=0)
    return X, y


def test_cli_stability_and_fdr_carry_probabilities_and_statistics(friedman, tmp_path, monkeypatch, capsys):
    X, y = friedman
    monkeypatch.chdir(tmp_path)
    names = [f"f{j}" for j in range(X.shape[1])]
    np.savetxt("d.csv", np.c_[X, y], delimiter=",", header=",".join(names + ["y"]), comments="")
    rc = main(["select", "d.csv", "--method", "lpkta", "--stability", "--n-resamples", "3", "--threshold", "0.8",
               "--seed", "2", "--json", "s.json", "-q"])
    out = capsys.readouterr().out
    assert rc == 0 and "probability  selected" in out and "expected false selections" in out
    doc = json.loads((tmp_path / "s.json").read_text())
    ref = select(X, y, "lpkta", stability=True, n_resamples=3, threshold=0.8, random_state=2)
    assert [f["probability"] for f in doc["features"]] == ref.weights.tolist()
    assert doc["parameters"]["stability"] is True and doc["stability"]["n_subsamples"] == 6
    rc = main(["select", "d.csv", "--method", "lpkta", "--fdr", "0.3", "--json", "k.json", "-q"])
    out = capsys.readouterr().out
    assert rc == 0 and "statistic  selected" in out and "false discovery rate controlled at 0.3" in out
    doc = json.loads((tmp_path / "k.json").read_text())
    ref = select(X, y, "lpkta", fdr=0.3, random_state=0)
    assert [f["statistic"] for f in doc["features"]] == ref.weights.tolist()
