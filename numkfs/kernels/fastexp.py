r"""A vectorisable double-precision exponential for Numba loops.

Numba calls libm's ``exp`` one value at a time (no SVML here), which makes
the per-feature RBF alignments exp-bound: about 0.25 G exp/s per thread.
:func:`fast_exp` is written with plain arithmetic, integer adds/shifts and
bit casts only, so LLVM vectorises a loop that calls it (AVX2/AVX-512),
many times faster than libm here, with the accuracy of libm:

* range reduction :math:`x = k \ln 2 + r`, :math:`|r| \le \ln 2 / 2`, with
  :math:`k = \lfloor x \log_2 e + 1/2 \rfloor` and a two-part (Cody--Waite)
  :math:`\ln 2` so that :math:`r` is exact to the last bit for
  :math:`|k| \le 1100`;
* :math:`e^r` by its degree-11 interpolant at Chebyshev nodes (truncation
  error :math:`1.7 \cdot 10^{-17}`), Horner form;
* scaling by :math:`2^k = 2^{k_1} 2^{k_2}`, :math:`k_1 = \lfloor k/2 \rfloor`,
  both factors normal numbers, so that results in the subnormal range
  (:math:`-745 < x < -708`) are rounded once, like ``np.exp``, and
  :math:`x \le -746` gives 0, :math:`x \ge 710` gives ``inf``.

The relative error against ``np.exp`` is below :math:`4 \cdot 10^{-16}`
(about 2 ulp) for normal results (``tests/kernels/test_alignment.py`` checks
:math:`[-745, 709]`); NaN propagates.

The function is compiled *without* fastmath on purpose: re-association
would undo the Cody--Waite reduction.  Callers compiled with
``@jit(fast=True)`` keep its instructions exact because Numba applies
fastmath flags per compiled function, before inlining (checked by the
accuracy tests of the alignments, which call it from fast loops).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._jit import jit, pjit, prange

__all__ = ["fast_exp", "fast_exp_kernel", "fast_exp2_neg", "fast_exp_array", "LOG2E"]


@intrinsic
def _f64_bits(typingctx, x):
    """Reinterpret the bits of a float64 as an int64 (no conversion)."""
    if not isinstance(x, types.Float):
        return None
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


@intrinsic
def _bits_f64(typingctx, x):
    """Reinterpret the bits of an int64 as a float64 (no conversion)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


_LOG2E = 1.4426950408889634
#: log2(e): scale a squared distance by it to use :func:`fast_exp2_neg`.
LOG2E = _LOG2E
_LN2_HI = 6.93147180369123816490e-01  # 0x3fe62e42fee00000: 32 trailing zero bits
_LN2_LO = 1.90821492927058770002e-10
_MAGIC = 6755399441055744.0  # 1.5 * 2**52: adding it puts an integer in the low mantissa bits
_MAGIC_BITS = 0x4338000000000000
_LO = -746.0
_HI = 710.0

# Degree-11 polynomial interpolating e^r at the Chebyshev nodes of
# [-ln2/2, ln2/2] (computed with mpmath at 40 digits, then rounded):
# truncation error 1.7e-17 relative, below the rounding of the result.
# Coefficients from the highest degree down (Horner order).
_EXP_COEFS = (
    2.5110037605963777e-08, 2.763263963904103e-07, 2.755724091857897e-06, 2.4801485482328494e-05,
    0.00019841269890047113, 0.0013888888952314775, 0.008333333333319601, 0.0416666666664881,
    0.1666666666666668, 0.5000000000000019, 1.0, 1.0,
)


@jit(inline=True)
def _horner(coefs, x):
    """``coefs[0] x^d + ... + coefs[d]`` (a constant tuple: the loop is
    unrolled at compile time)."""
    p = coefs[0]
    for i in range(1, len(coefs)):
        p = p * x + coefs[i]
    return p


@jit
def fast_exp(x):
    """``exp(x)`` for a float64 scalar, vectorisable inside Numba loops.

    Relative error below 4e-16 against ``np.exp`` for normal results;
    subnormal results are rounded once; ``x <= -746`` gives 0 and
    ``x >= 710`` gives inf; NaN propagates.
    """
    if x < _LO:
        x = _LO
    if x > _HI:
        x = _HI
    kf = np.floor(x * _LOG2E + 0.5)
    ki = _f64_bits(kf + _MAGIC) - _MAGIC_BITS
    r = (x - kf * _LN2_HI) - kf * _LN2_LO
    p = _horner(_EXP_COEFS, r)
    k1 = ki >> 1
    k2 = ki - k1
    s1 = _bits_f64((k1 + 1023) << 52)
    s2 = _bits_f64((k2 + 1023) << 52)
    return (p * s1) * s2


@jit
def fast_exp_kernel(x):
    """``exp(x)`` for ``x <= 0`` in kernel sums: as :func:`fast_exp` for
    ``x > -708`` (normal results), 0 for ``x <= -708`` instead of a
    subnormal below 2.3e-308.  Faster than :func:`fast_exp` (no subnormal
    or overflow handling, rounding by the 1.5·2^52 trick).
    In a sum of kernel values that contains the diagonal (each ≥ 1) the
    flushed terms change nothing."""
    xc = x if x > -708.0 else -708.0
    t = xc * _LOG2E + _MAGIC
    kf = t - _MAGIC
    ki = _f64_bits(t) - _MAGIC_BITS
    r = (xc - kf * _LN2_HI) - kf * _LN2_LO
    v = _horner(_EXP_COEFS, r) * _bits_f64((ki + 1023) << 52)
    return v if x > -708.0 else 0.0


# Degree-9 polynomial interpolating 2^f at the Chebyshev nodes of [-1/2, 1/2]
# (mpmath, 40 digits, then rounded): relative error 1.85e-14 on the interval;
# below, the same polynomial in g = -f (odd coefficients negated, q(g) = p(-g)),
# from the highest degree down.
_EXP2_COEFS = (1.0205905413765595e-07, 1.325964524488711e-06, 1.5252672924850737e-05,
               0.0001540343375125101, 0.0013333558200794592, 0.009618129193934313,
               0.05550410866465167, 0.2402265069564034, 0.6931471805599462, 1.0000000000000135)
_EXP2_NEG_COEFS = tuple(c if i % 2 == 1 else -c for i, c in enumerate(_EXP2_COEFS))
_EXP2_HI = 1020.0


@jit
def fast_exp2_neg(y):
    """``2**-y`` for ``y >= 0``, the cheapest exact-enough exponential for
    the per-feature alignment pair sums (squared distances ``y``).

    The caller pre-scales its data by ``sqrt(LOG2E)`` so that a squared
    distance is already in base-2 units.  The reduction is one rounding
    ``t = MAGIC - y`` (``k = round(y)`` in the low mantissa bits of ``t``)
    and an *exact* ``g = y - k``; :math:`2^{-g}` is a degree-9 polynomial
    on :math:`[-1/2, 1/2]`, and :math:`2^{-k}` is applied by adding
    ``-k`` to the result's exponent bits (an integer add, no multiply: the
    result stays normal because ``y`` is clamped at 1020).  Taking ``y``
    rather than ``-y`` spares the sign flip.  Relative error below 2e-14
    against ``np.exp2(-y)`` for ``0 <= y <= 1020``; ``y > 1020`` (and
    ``inf``) give ``2**-1020`` to 2e-14 (an absolute change below 9e-308,
    nothing in a kernel sum that contains its diagonal).  Not for ``y < 0``.
    """
    yc = y if y < _EXP2_HI else _EXP2_HI  # (Numba's min() here does not vectorise)
    t = _MAGIC - yc
    g = yc + (t - _MAGIC)
    # the low 12 bits of MAGIC's bit pattern are 0: bits(t) << 52 == -k << 52
    return _bits_f64(_f64_bits(_horner(_EXP2_NEG_COEFS, g)) + (_f64_bits(t) << 52))


@pjit
def _fast_exp_into(x, out):
    n = x.shape[0]
    for i in prange(n):
        out[i] = fast_exp(x[i])


def fast_exp_array(x):
    """:func:`fast_exp` applied element-wise to an array (any shape).

    Parameters
    ----------
    x : array_like of float

    Returns
    -------
    ndarray of float64, same shape as ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.kernels.fastexp import fast_exp_array
    >>> x = np.linspace(-700.0, 700.0, 1001)
    >>> bool(np.all(np.abs(fast_exp_array(x) / np.exp(x) - 1.0) < 1e-15))
    True
    """
    x = np.asarray(x, dtype=np.float64)
    flat = np.ascontiguousarray(x).ravel()
    out = np.empty_like(flat)
    _fast_exp_into(flat, out)
    return out.reshape(x.shape)
