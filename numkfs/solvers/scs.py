"""SCS: first-order (ADMM) splitting conic solver.

At its own default tolerance (1e-4) SCS changes which features are selected
on the problems numkfs solves (see the solvers guide), so
numkfs runs it at 1e-9 unless told otherwise.
"""
from ._cvxpy_backend import CvxpyBackend

BACKEND = CvxpyBackend(
    name="SCS",
    module="scs",
    install="pip install scs",
    method="first order",
    default_tol=1e-9,
    tol_options=lambda tol: {"eps_abs": tol, "eps_rel": tol, "max_iters": 200_000},
    supports_warm_start=True,
)
