"""ECOS: primal-dual interior point for SOCPs (declared by numkfs, since CVXPY
no longer installs it by default)."""
from ._cvxpy_backend import CvxpyBackend

BACKEND = CvxpyBackend(
    name="ECOS",
    module="ecos",
    install="pip install ecos",
    method="interior point",
    default_tol=1e-8,
    tol_options=lambda tol: {"abstol": tol, "reltol": tol, "feastol": tol, "max_iters": 200},
)
