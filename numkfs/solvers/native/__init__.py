"""Native (Numba) solvers.  Each registers itself for its problem kind with
:func:`numkfs.solvers.register_native` when imported."""
from .boxqp import BoxQP, solve_box_qp

__all__ = ["BoxQP", "solve_box_qp"]  # the imports below register native solvers
from . import nmmkl as _nmmkl  # registers the native NMMKL QCQP solver
from . import garrote as _garrote  # registers the native linear-garrote and garrote-step solvers
from . import knife_wstep as _knife_wstep  # registers the native KNIFE weight-step solver
from . import lpkta_newton as _lpkta_newton  # registers the native lp-KTA solver (LpKTAProblem)
from . import knockoff_sdp as _knockoff_sdp  # registers the native knockoff-SDP solver
