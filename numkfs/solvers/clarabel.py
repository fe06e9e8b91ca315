"""CLARABEL: interior point for conic programs with quadratic objectives."""
from ._cvxpy_backend import CvxpyBackend

BACKEND = CvxpyBackend(
    name="CLARABEL",
    module="clarabel",
    install="pip install clarabel",
    method="interior point",
    default_tol=1e-9,
    tol_options=lambda tol: {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol, "max_iter": 400},
)
