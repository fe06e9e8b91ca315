"""SelectionResult's words: the table, summary() and to_dict() show every feature's selection
probability or e-value, and every group's, also when nothing is selected."""
import json

import numpy as np
import pytest

from numkfs import select


@pytest.fixture(scope="module")
def null_data():
    rng = np.random.default_rng(5)
    return rng.standard_normal((80, 6)), rng.standard_normal(80)


@pytest.mark.parametrize("kw", [dict(stability=True, n_resamples=5), dict(fdr=0.2, n_draws=2)],
                         ids=["stability", "knockoffs"])
def test_nothing_selected_still_shows_every_value(null_data, kw):
    import warnings

    X, y = null_data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = select(X, y, "lpkta", **kw)
    assert res.n_selected == 0
    table = res.table()
    for j in range(6):  # every feature's row with its value, to the table's 6 significant digits
        assert any(line.split()[:2] == [f"x{j}", f"{res.weights[j]:.6g}"] for line in table.splitlines())
    text = res.summary()
    assert "selected 0 of 6 features: (none)" in text
    top = int(np.argmax(res.weights))
    assert "closest not selected" in text and f"x{top} {res.weights[top]:.3g}" in text
    doc = json.loads(json.dumps(res.to_dict()))
    assert [f[res.weight_name] for f in doc["features"]] == pytest.approx(res.weights.tolist(), abs=0)
    assert doc["selected"] == [] and doc["groups"] == []
