"""select(..., stability=True) / select(..., fdr=q) and the command line's
--stability / --fdr: the one call gives what the selector classes give."""
import json

import numpy as np
import pytest
from sklearn.datasets import make_friedman1

from numkfs import KnockoffFilter, StabilitySelection, select
from numkfs.cli import main


@pytest.fixture(scope="module")
def friedman():
    X, y = make_friedman1(n_samples=100, n_features=8, random_state=0)
    return X, y


def test_stability_select_is_stability_selection(friedman):
    X, y = friedman
    res = select(X, y, "lpkta", stability=True, n_resamples=4, threshold=0.75, max_features=3, random_state=1)
    ref = StabilitySelection("lpkta", n_resamples=4, threshold=0.75, max_features=3, random_state=1).fit(X, y)
    np.testing.assert_array_equal(res.weights, ref.selection_probabilities_)
    np.testing.assert_array_equal(res.selected, ref.selection_probabilities_ >= 0.75)
    st = res.extra["stability"]
    assert st["pfer_bound"] == ref.pfer_bound_ and st["n_subsamples"] == 8
    # Meinshausen-Buehlmann's formula at the region's q; the bound reported is the unimodal one by default
    # (Meinshausen-Buehlmann's where the unimodal one is not proved), as StabilitySelection reports it
    assert st["pfer_bound_mb"] == pytest.approx(st["q"] ** 2 / ((2 * 0.75 - 1) * 8), rel=1e-12)
    assert st["bound"] == ref.bound_ and st["pfer_bound_unimodal"] == ref.pfer_bound_unimodal_
    assert st["pfer_bound"] == (st["pfer_bound_mb"] if ref.bound_ == "mb" else st["pfer_bound_unimodal"])
    d = res.to_dict()
    assert [f["probability"] for f in d["features"]] == res.weights.tolist()
    assert d["stability"]["threshold"] == 0.75 and d["score"] is None
    assert res.table().splitlines()[0].split()[1] == "probability"
    assert "expected false selections <=" in res.summary()


def test_fdr_select_is_the_knockoff_filter(friedman):
    X, y = friedman
    res = select(X, y, "lpkta", fdr=0.2, random_state=3)
    ref = KnockoffFilter("lpkta", fdr=0.2, random_state=3).fit(X, y)
    np.testing.assert_array_equal(res.weights, ref.statistics_)
    np.testing.assert_array_equal(res.selected, ref.statistics_ >= ref.threshold_)
    kn = res.to_dict()["knockoffs"]
    threshold = ref.threshold_ if np.isfinite(ref.threshold_) else None  # JSON: +inf (nothing selected) is null
    assert kn["fdr"] == 0.2 and kn["threshold"] == threshold and kn["s_method"] == ref.s_method_
    assert res.table().splitlines()[0].split()[1] == "statistic"


@pytest.mark.parametrize("kw,match", [
    (dict(stability=True, fdr=0.1), "give one of them"),
    (dict(stability=True, n_features=2), "n_features does not apply"),
    (dict(fdr=1.5), "fdr"),
    (dict(fdr=0.1, n_draws=0), "n_draws"),
    (dict(stability=True, threshold=0.4), "threshold"),
    (dict(stability=True, n_resamples=0), "n_resamples"),
])
def test_bad_parameters_are_named(friedman, kw, match):
    X, y = friedman
    with pytest.raises(ValueError, match=match):
        select(X, y, "lpkta", **kw)


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
