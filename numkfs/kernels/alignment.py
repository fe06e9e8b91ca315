r"""Per-feature base kernels and their centred, trace-normalised target alignments.

One base kernel per feature :math:`i` (lp-KTA, NMMKL, COSSO):

* ``"rbf"``: :math:`k_i(x, x') = \exp(-\gamma_i (x_i - x'_i)^2)`;
* ``"linear"``: :math:`k_i(x, x') = x_i x'_i`.

Each Gram matrix is centred and trace-normalised,
:math:`\tilde K_i = H K_i H / \operatorname{tr}(H K_i H)`, :math:`H = I - 11^\top/n`,
and the alignment with the target is

.. math::

    a_i = \langle \tilde K_i, Z Z^\top \rangle_F
        = \frac{\sum_{j,k} \langle z_j, z_k\rangle K_{i,jk}}
               {n - \frac1n \sum_{j,k} K_{i,jk}}
    \qquad (\text{rbf: } \operatorname{tr} K_i = n),

where :math:`Z = H Y` is the centred target (:func:`alignment_target`):

* binary classification: :math:`Y = y \in \{-1, +1\}^n`, so
  :math:`a_i = y^\top \tilde K_i y` exactly as in the lp-KTA paper;
* multiclass (``c`` classes): :math:`Y` is the one-hot ``n x c`` matrix and
  :math:`Y Y^\top` (1 for a pair of the same class, 0 otherwise) replaces
  :math:`y y^\top`, so :math:`a_i = \operatorname{tr}(Y^\top \tilde K_i Y)`.
  With two classes this is half the binary alignment;
* regression: :math:`Y = y` (real), centred; :math:`a_i` scales with
  :math:`\|y - \bar y\|^2` (so do sensible values of lp-KTA's λ's).

A constant feature has :math:`H K_i H = 0`; its alignment is defined as 0.

Bandwidth rule (rbf)
--------------------
``gamma=None`` (or ``"scale"``) uses :math:`\gamma_i = 1 / \operatorname{var}(x_i)`
per feature (scikit-learn's ``"scale"`` rule applied to the single-feature
column; 1 for a constant column), so every base kernel sees its feature in
standard units.  A float applies one γ to all features; an array of length
``n_features`` gives one per feature.

Algorithms
----------
``method="exact"`` (and ``"auto"`` below 1,024 rows): for each feature (a
Numba ``prange`` over features):

* at most 16 distinct values (binary, categorical, one-hot columns): values
  are grouped in one O(n u) pass (after an O(n) hash-bucket check that
  rejects most columns with more values at once) and the pair sums run over
  the :math:`u^2/2` pairs of groups, weighted by group counts and target
  sums;
* otherwise, if n >= 512 and a probe of the first 128 values finds a tie,
  the column is sorted and grouped (O(n log n + u²));
* otherwise, if at least two values are exactly 0 (sparse data stored
  dense), the zeros are merged into one weighted entry in an O(n) pass;
* and then the O(m²/2) loop over the m entries' pairs, vectorised, with
  the base-2 :func:`~numkfs.kernels.fastexp.fast_exp2_neg` on columns
  pre-scaled by :math:`\sqrt{\gamma_i \log_2 e}` (one rounding and an
  exact subtraction for the range reduction, a degree-9 polynomial, the
  power of 2 added to the exponent bits: relative error below 2e-14 per
  term; terms below 2**-1020 are replaced by 2**-1020, an absolute change
  below 9e-308 per pair).  Entry arrays are padded to a multiple of 8 with
  zero weights, so that no row of the loop ends in a scalar remainder.

``method="fgt"`` (and ``"auto"`` from :data:`FGT_MIN_SAMPLES` = 1,024
rows or entries per column, where it is faster on this machine even for
columns spread over hundreds of bandwidths): the sums
:math:`S(a) = \sum_{jk} a_j a_k e^{-\gamma_i (x_j - x_k)^2}` for the target
columns and for the counts (:math:`\operatorname{tr}(HK_iH) = n - S(1)/n`)
are computed by the one-dimensional fast Gauss transform of
:mod:`numkfs.kernels.fgt` in O(n p) per feature (no sort needed: a
counting sort into boxes of width :math:`0.5/\sqrt{\gamma_i}`; p = 19 at
the default ``rtol = 1e-10``), parallel over features, no n x n array.
Guarantee: for every feature and every weight vector :math:`a`,

.. math::

    |\hat S(a) - S(a)| \le \mathrm{rtol} \sum_{j,k} |a_j||a_k| e^{-\gamma_i (x_j - x_k)^2}

whatever the data (ties, outliers, γ), up to rounding of the order of
machine epsilon times the same sum.  For the counts (:math:`a = 1`) the
bound is relative to :math:`S(1)` itself; for the centred targets it is
relative to the sum with :math:`|z_j|`, so the error of a small alignment
(an irrelevant feature, where :math:`z^\top K_i z` cancels) is at most
``rtol`` times that larger sum over :math:`\operatorname{tr}(HK_iH)`.
Columns with at most 16 distinct values are still grouped and summed
exactly.  The trace :math:`n - S(1)/n` is therefore within
:math:`\mathrm{rtol}\, S(1)/n` of its value, a relative error of
``rtol`` times :math:`S(1)/(n \operatorname{tr})`: about 0.8 at
:math:`\gamma = 1/\operatorname{var}` on Gaussian data, at most
about :math:`128 n` for a column outside the small-spread case below (its points
cannot all be within a quarter of a bandwidth of each other).

Small spread and offsets (both methods).  Where the kernel is nearly
constant on a column, :math:`\gamma (\max x - \min x)^2 \le 1/16`
(:data:`SMALL_SPREAD`; a small γ, or a column of tiny spread), the trace
:math:`n - S(1)/n` and the numerator :math:`z^\top K z` (whose terms
cancel in the same way, :math:`1^\top z = 0`) lose the digits of
:math:`1 - \gamma \operatorname{var}`: at :math:`\gamma \operatorname{var}
= 10^{-12}` (n = 200) the pair loop kept two, the transform four.  Such a
column's sums are taken from its moments instead: :math:`\sum_{jk} w_j w_k
(1 - e^{-\gamma d_{jk}^2})` is a series in :math:`\gamma d^2 \le 1/16`
whose terms are products of the moments :math:`\sum_j w_j s_j^l` of the
centred, scaled column (eight terms, O(17 n) per column, to machine
precision; ``_small_spread_sums``).  A dense column whose mean exceeds its
standard deviation is centred before it is scaled (distances do not change),
so an offset costs no digits of its differences: a column
``1 + 1e-13 u`` kept three.  Sparse columns are neither (their implicit
zeros are kept as zeros).

``scipy.sparse`` input is handled column by column from CSC without
densifying: the implicit zeros form one group, so a binary column costs
O(nnz). The linear kernel is closed form,
:math:`a_i = \|x_{c,i}^\top Z\|^2 / \|x_{c,i}\|^2`, O(nnz) or O(n) per feature.

The per-feature kernels are never stored: :func:`combined_kernel` forms
:math:`\sum_{\eta_i > 0} \eta_i \tilde K_i` (and its cross version for test
points) directly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

# the parts, re-exported here (their names keep working from this module)
from ._alignment_columns import (  # noqa: F401
    FEATURE_BLOCK,
    SERIAL_ENTRIES_PER_ROW,
    SERIAL_PAIRS_PER_ENTRY,
    _as_float,
    _column_loops,
    _constant_mask,
    _dense_column_stats,
    _dense_moments,
    _dense_moments_serial,
    _n_blocks,
    alignment_target,
    column_moments,
    dense_stats,
    resolve_gamma,
    resolve_gamma_given_var,
)
from ._alignment_exact import (  # noqa: F401
    PAD,
    SMALL_DISTINCT,
    SORT_MIN_SAMPLES,
    TIE_PROBE,
    _compress_zeros,
    _csc_column,
    _csc_n_entries,
    _dense_block,
    _entry_scratch,
    _entry_sums,
    _gather_targets,
    _group_small,
    _group_sorted,
    _has_tie,
    _hash_buckets,
    _pair_sums,
    _pairs_rank,
    _pairs_weighted1,
    _rbf_sums_csc,
    _rbf_sums_dense,
    _rbf_sums_dense_serial,
    _target_totals,
    _zero_pad,
)
from ._alignment_fgt import _fgt_entry_sums, _fgt_sums_csc, _fill_weights  # noqa: F401
from ._alignment_sums import (  # noqa: F401
    FGT_BLOCK_VALUES,
    FGT_MIN_SAMPLES,
    NUMPY_BUFFER_BYTES,
    SMALL_SPREAD,
    SMALL_SPREAD_TERMS,
    _column_shift,
    _fgt_min_entries,
    _rbf_pair_sums,
    _small_spread_sums,
    check_alignment_method,
    linear_parts,
    rbf_sums_traces,
)
from .combined import (  # noqa: F401
    _dense_columns,
    _raw_rbf_sum,
    _rbf_row_upper,
    _rbf_weighted_sum,
    _rbf_weighted_sum_serial,
    _rbf_weighted_sum_sym,
    _rbf_weighted_sum_sym_serial,
    _traces,
    _two_valued_sparse,
    combined_kernel,
    feature_kernel,
)

__all__ = [
    "feature_alignments",
    "alignment_target",
    "resolve_gamma",
    "AlignmentDetails",
    "combined_kernel",
    "feature_kernel",
]


# ----------------------------------------------------------------------------
# public API


@dataclass
class AlignmentDetails:
    """What :func:`feature_alignments` computed besides the alignments.

    Attributes
    ----------
    alignments : ndarray (d,)
    traces : ndarray (d,)
        :math:`\\operatorname{tr}(H K_i H)` (0 for a constant feature).
    gamma : ndarray (d,) or None
        Bandwidths used (rbf).
    n_groups : ndarray (d,) or None
        Distinct values found per feature (rbf; ``n`` when the pair loop ran
        on raw values).
    kind : str
        Target kind (binary, multiclass, regression).
    constant : ndarray of bool (d,)
    """

    alignments: np.ndarray
    traces: np.ndarray
    gamma: np.ndarray | None
    n_groups: np.ndarray | None
    kind: str
    constant: np.ndarray


def feature_alignments(
    X,
    y,
    kernel: str = "rbf",
    gamma=None,
    *,
    target: str = "auto",
    return_details: bool = False,
    method: str = "auto",
    rtol: float = 1e-10,
):
    r"""Centred, trace-normalised alignment of every per-feature kernel with y.

    .. math::

        a_i = \frac{(Hy)^\top K_i (Hy)}{\operatorname{tr}(H K_i H)},
        \qquad K_{i,jk} = k_i(x_j, x_k)

    (multiclass: :math:`\operatorname{tr}(Y^\top H K_i H Y)/\operatorname{tr}(HK_iH)`
    with one-hot :math:`Y`; see the module docstring). ``method="exact"``:
    O(n² d) for dense continuous data, O(nnz) per binary sparse column;
    ``method="fgt"``: O(n d), within ``rtol`` (below).

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Class labels (binary or multiclass) or a real response.
    kernel : {"rbf", "linear"}
    gamma : None, "scale", float or array of shape (n_features,)
        RBF bandwidths; default :math:`\gamma_i = 1/\operatorname{var}(x_i)`.
    target : {"auto", "binary", "multiclass", "regression"}
    return_details : bool
        Also return an :class:`AlignmentDetails` (traces, bandwidths).
    method : {"auto", "exact", "fgt"}
        RBF pair sums by the exact pair loop (O(n²) per feature) or by the
        fast Gauss transform (:mod:`numkfs.kernels.fgt`, O(n) per feature);
        ``"auto"``: the transform for columns of at least
        :data:`FGT_MIN_SAMPLES` (1,024) rows or sparse entries, where it
        is faster.  Ignored by the linear kernel (closed form).
    rtol : float in [1e-14, 1)
        Error bound of the fast Gauss transform: each pair sum
        :math:`\sum_{jk} a_j a_k k_{jk}` is within ``rtol`` times
        :math:`\sum_{jk} |a_j||a_k| k_{jk}` (module docstring).

    Returns
    -------
    a : ndarray of shape (n_features,)
        0 for a constant feature.
    details : AlignmentDetails, only if ``return_details``

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.alignment import feature_alignments
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = np.sign(X[:, 0])
    >>> a = feature_alignments(X, y)
    >>> int(np.argmax(a))
    0
    """
    if kernel not in ("rbf", "linear"):
        raise ValueError(f"feature_alignments: kernel must be 'rbf' or 'linear'; got {kernel!r}.")
    X = _as_float(X)
    n, d = X.shape
    y = np.asarray(y)
    if y.shape[0] != n:
        raise ValueError(
            f"feature_alignments: X and y have inconsistent numbers of samples: X has {n}, y has {y.shape[0]}."
        )
    check_alignment_method(method, rtol)
    Z, kind, _ = alignment_target(y, target)
    stats = None
    if sp.issparse(X):
        var = None
        const = _constant_mask(X)
    else:
        stats = dense_stats(X)  # one pass for all
        var, const = stats[1], stats[2] == 0.0
    if kernel == "linear":
        num, tr = linear_parts(X, Z)
        g = None
        U = None
    else:
        g = resolve_gamma_given_var(X, gamma, var)
        num, tr, U = rbf_sums_traces(X, g, np.ascontiguousarray(Z.T), method, rtol, stats)
    tr = np.where(const, 0.0, tr)
    ok = tr > 0
    a = np.zeros(d)
    a[ok] = num[ok] / tr[ok]
    if return_details:
        return a, AlignmentDetails(a, tr, g, U, kind, const)
    return a
