"""The command line: results on shipped data, and one-line errors with status 2."""
import json
import subprocess
import sys

import numpy as np
import pytest

from numkfs.cli import main


def run(*args):
    return subprocess.run([sys.executable, "-m", "numkfs", *args], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize(
    "args,message",
    [
        (["select", "no_such_file.csv"], "no such file or shipped dataset: 'no_such_file.csv'"),
        (["select", "ozone", "--target", "nope"], "column 'nope' not found in ozone"),
        (["select", "ozone", "--method", "magic"], "unknown method 'magic'"),
    ],
)
def test_errors_are_one_line_exit_2(args, message):
    out = run(*args)
    assert out.returncode == 2
    assert out.stderr.strip() == f"numkfs: error: {out.stderr.strip().split('error: ', 1)[1]}"
    assert message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_non_numeric_column(tmp_path, capsys):
    f = tmp_path / "d.csv"
    f.write_text("a,b,y\n1,x,1\n2,y,2\n3,z,3\n")
    assert main(["select", str(f), "--method", "garrote"]) == 2
    assert "column 'b' is not numeric (value 'x')" in capsys.readouterr().err


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
