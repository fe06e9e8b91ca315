"""KNIFE estimators against scikit-learn's estimator contract (check_estimator).

No check is expected to fail.  The five ``check_array_api_input`` checks are
skipped by scikit-learn itself unless SCIPY_ARRAY_API is set (numkfs does not
claim array-API support).
"""
import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from numkfs.estimators._knife import KNIFEClassifier, KNIFEClassifierCV, KNIFERegressor, KNIFERegressorCV


# The contract is about the API, not about convergence: few outer iterations
# keep the ~300 checks fast (the algorithm itself is tested in test_knife.py).
@parametrize_with_checks(
    [KNIFERegressor(max_iter=5, random_state=0), KNIFEClassifier(max_iter=5, random_state=0),
     KNIFEClassifier(loss="logistic", max_iter=5, random_state=0),
     KNIFERegressorCV(cv=2, n_lambdas=3, max_iter=5, random_state=0),
     KNIFEClassifierCV(cv=2, n_lambdas=3, max_iter=5, random_state=0)],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_contract(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


