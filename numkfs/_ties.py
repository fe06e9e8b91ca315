"""Ties at a requested count of features: when weights or scores equal within
the solvers' accuracy make a count arbitrary, the selection contract says so
naming the features (re-exported by :mod:`numkfs.model_selection`).
"""
from __future__ import annotations

import numpy as np

__all__ = ["TIE_RTOL", "tied_features", "warn_ties"]


#: Relative tolerance under which two weights or scores count as tied: the
#: accuracy the methods' solvers reach (NMMKL's ``tie_tol``; the conic
#: backends stop at relative gaps of 1e-8, the native solvers at 1e-6 to
#: 1e-10), so values that differ by solver round-off (NMMKL's φ on wpbc
#: differ around 1e-11) are not ranked by that round-off.
TIE_RTOL = 1e-6


def tied_features(values, k: int, *, rtol: float = TIE_RTOL, atol: float = 0.0) -> np.ndarray:
    """Features tied at the ``k``-th largest ``|value|`` when the tie makes
    a count of ``k`` arbitrary.

    Two values tie when they differ by at most ``max(atol, rtol * |v_k|)``,
    ``v_k`` the ``k``-th largest in absolute value.  The count is arbitrary
    when the tied group holds both some of the ``k`` largest and some of the
    rest; the group is returned then, else an empty array.

    Parameters
    ----------
    values : array-like of shape (n_features,)
        Weights or scores (larger absolute value ranks first).
    k : int
        The requested count.
    rtol : float, default=TIE_RTOL
        Relative tolerance (the solver's accuracy).
    atol : float, default=0.0
        Absolute tolerance (e.g. the path's selection tolerance ``path.tol``).

    Returns
    -------
    ndarray of int
        Indices of the tied features, in column order.

    Examples
    --------
    >>> from numkfs.model_selection import tied_features
    >>> tied_features([3.0, 2.0 + 1e-12, 2.0, 1.0], 2).tolist(), tied_features([3.0, 2.0, 1.0], 2).tolist()
    ([1, 2], [])
    """
    a = np.abs(np.asarray(values, dtype=float).ravel())
    k = int(k)
    if k < 1 or k >= a.size:
        return np.zeros(0, dtype=int)
    vk = np.sort(a)[::-1][k - 1]
    band = max(float(atol), float(rtol) * vk)
    group = np.flatnonzero(np.abs(a - vk) <= band)
    above = int(np.sum(a > vk + band))
    if above + group.size <= k:  # the whole group fits in the k: nothing arbitrary
        return np.zeros(0, dtype=int)
    return group


def warn_ties(values, k: int, *, kept, feature_names=None, rtol: float = TIE_RTOL, atol: float = 0.0,
              where: str = "", how: str = "the lower feature indices were kept", stacklevel: int = 3) -> np.ndarray:
    """Warn (``UserWarning``) naming the features :func:`tied_features`
    finds, when ties make a count of ``k`` arbitrary.

    Parameters
    ----------
    values : array-like of shape (n_features,)
        Weights or scores (larger absolute value ranks first).
    k : int
        The requested count.
    kept : array-like of bool of shape (n_features,)
        The ``k`` features kept.
    feature_names : sequence of str, optional
        Names for the message (default: ``[j]``, the column index).
    rtol, atol : float
        As in :func:`tied_features`.
    where : str, default=""
        Where the tie is, e.g. ``" at lambda2=0.3"``.
    how : str
        How the tie was broken, for the message.
    stacklevel : int, default=3
        Passed to :func:`warnings.warn`.

    Returns
    -------
    ndarray of int
        The tied features (empty when the count is not arbitrary).

    Examples
    --------
    >>> import warnings
    >>> from numkfs.model_selection import warn_ties
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     tied = warn_ties([3.0, 2.0, 2.0], 2, kept=[True, True, False], feature_names=["a", "b", "c"])
    >>> tied.tolist(), "b, c" in str(w[0].message)
    ([1, 2], True)
    """
    import warnings

    tied = tied_features(values, k, rtol=rtol, atol=atol)
    if tied.size:
        a = np.abs(np.asarray(values, dtype=float).ravel())
        kept = np.asarray(kept, dtype=bool)

        def name(j):
            return str(feature_names[j]) if feature_names is not None else f"[{j}]"

        shown = ", ".join(name(j) for j in tied[:20]) + ("" if tied.size <= 20 else f", ... ({tied.size} in all)")
        n_in = int(kept[tied].sum())
        warnings.warn(f"selecting {k} features, but {tied.size} features tie at {np.mean(a[tied]):.6g}"
                      f"{where} (equal within the solver's accuracy, relative {rtol:g}): {shown}; {n_in} of them "
                      f"are kept ({how}), so the choice among them is arbitrary.", UserWarning,
                      stacklevel=stacklevel)
    return tied
