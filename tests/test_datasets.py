import numpy as np
import pytest

from numkfs.datasets._real import dataset_names, load_dataset

SHAPES = {"ozone": (330, 8), "ozone_raw": (330, 9), "vowel": (990, 10), "colon": (62, 2000), "sonar": (208, 60),
          "ionosphere": (351, 34), "wpbc": (198, 33), "madelon": (2000, 500), "arcene": (100, 10000),
          "diabetes_raw": (442, 10)}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shapes_and_provenance(name):
    d = load_dataset(name)
    assert d.data.shape == SHAPES[name]
    assert len(d.target) == d.data.shape[0] and len(d.feature_names) == d.data.shape[1]
    assert "Source" in d.DESCR or "source" in d.DESCR


def test_values_and_labels():
    oz = load_dataset("ozone")
    assert oz.target_name == "ozone" and list(oz.feature_names[:3]) == ["temp", "invHt", "press"]
    assert oz.data.min() == 0.0 and oz.data.max() == 1.0  # min-max scaled, as in the cosso package
    colon = load_dataset("colon")
    assert (colon.target == 1).sum() == 22 and (colon.target == 2).sum() == 40
    vowel = load_dataset("vowel")
    assert vowel.test_mask.sum() == 462 and len(np.unique(vowel.target)) == 11
    sonar = load_dataset("sonar")
    assert set(np.unique(sonar.target)) == {"M", "R"}


def test_wpbc_missing_values():
    d = load_dataset("wpbc")
    assert np.isnan(d.data).sum() == 4
    assert load_dataset("wpbc", dropna=True).data.shape == (194, 33)


def test_unknown_name_lists_choices():
    with pytest.raises(ValueError, match="Shipped datasets: arcene, colon"):
        load_dataset("iris")
    assert "madelon" in dataset_names()


def test_as_frame():
    pytest.importorskip("pandas")
    d = load_dataset("diabetes_raw", as_frame=True)
    assert list(d.frame.columns)[-1] == "Y" and d.frame.shape == (442, 11)
