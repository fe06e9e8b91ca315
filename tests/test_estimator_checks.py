"""KNIFE estimators against scikit-learn's estimator contract (check_estimator).

No check is expected to fail.  The five ``check_array_api_input`` checks are
skipped by scikit-learn itself unless SCIPY_ARRAY_API is set (numkfs does not
claim array-API support).
"""
import pytest
from conftest import checked
from sklearn.utils.estimator_checks import parametrize_with_checks


# The contract is about the API, not about convergence: the registry's small instances
# (tests/conftest.py; the algorithm itself is tested in test_knife.py).  On the checks' random
# data the CV estimators may choose the all-zero end of the path, and scikit-learn's transform
# then warns that no feature was selected: expected, not a defect.
@pytest.mark.filterwarnings("ignore:No features were selected:UserWarning")
@parametrize_with_checks(checked("KNIFE"), expected_failed_checks=lambda est: {})
def test_sklearn_contract(estimator, check):
    check(estimator)
