"""Kernels and their derivatives (Numba and BLAS), one module per family.

* :mod:`~numkfs.kernels.weighted`: feature-weighted kernels of KNIFE
  (linear, rbf, poly), their cross kernels and the matrix A of derivatives;
* :mod:`~numkfs.kernels.ard`: ARD Gaussian and normalised polynomial kernels
  of L1KR with first and second derivative contractions;
* :mod:`~numkfs.kernels.alignment`: per-feature base kernels and their
  centred, trace-normalised target alignments (lp-KTA, NMMKL screening),
  with a fast vectorisable exp (:mod:`~numkfs.kernels.fastexp`), or in
  O(n) per feature by the one-dimensional fast Gauss transform
  (:mod:`~numkfs.kernels.fgt`, within a stated relative tolerance);
* :mod:`~numkfs.kernels.additive`: per-feature (Sobolev, rbf) kernels of the
  additive COSSO model;
* :mod:`~numkfs.kernels.lowrank`: pivoted Cholesky factors of per-feature
  kernels (non-linear NMMKL).

Each module has a ``feature_kernel`` of its own family; use them qualified.
"""
from .additive import additive_gram, additive_kc, sobolev_kernel
from .alignment import alignment_target, combined_kernel, feature_alignments, resolve_gamma
from .ard import ard_grad_columns, ard_grad_contractions, ard_hessian_contractions, ard_kernel
from .fastexp import fast_exp_array
from .lowrank import pivoted_cholesky, rbf_feature_factors
from .weighted import kernel_weight_derivative, weight_gradient_matrix, weighted_kernel, weighted_kernel_product

__all__ = [
    "additive_gram",
    "additive_kc",
    "alignment_target",
    "ard_grad_columns",
    "ard_grad_contractions",
    "ard_hessian_contractions",
    "ard_kernel",
    "combined_kernel",
    "fast_exp_array",
    "feature_alignments",
    "kernel_weight_derivative",
    "pivoted_cholesky",
    "rbf_feature_factors",
    "resolve_gamma",
    "sobolev_kernel",
    "weight_gradient_matrix",
    "weighted_kernel",
    "weighted_kernel_product",
]
