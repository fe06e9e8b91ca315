"""Kernels and their derivatives (Numba and BLAS), one module per family.

* ``weighted``: feature-weighted kernels of KNIFE (linear, rbf, poly);
* ``ard``: ARD Gaussian and normalised polynomial kernels of L1KR;
* ``alignment``: per-feature base kernels and their target alignments
  (lp-KTA, NMMKL, COSSO), with a fast vectorisable exp (``fastexp``).
"""
__all__: list[str] = []
