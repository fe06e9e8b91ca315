"""Grids that reach every sparsity level: the refinement rule of the
selection contract (re-exported by :mod:`numkfs.model_selection`).

A default path grid is refined where the support jumps (:func:`refine_walk`):
between two consecutive points whose supports differ by more than
``max(2, a quarter of the larger)`` features (:func:`support_jump`) points
are inserted, up to a stated number.
"""
from __future__ import annotations

import numpy as np

__all__ = ["REFINE_MIN_RATIO", "REFINE_ZERO_FLOOR", "refine_walk", "support_jump"]


def support_jump(a, b) -> bool:
    """Whether two consecutive supports of a path differ too much: more than
    ``max(2, a quarter of the larger)`` features enter or leave between them.

    Parameters
    ----------
    a, b : array-like of bool of shape (n_features,)
        The supports of two consecutive path points.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import support_jump
    >>> support_jump(np.ones(12, bool), np.r_[np.ones(9, bool), np.zeros(3, bool)])
    False
    >>> support_jump(np.ones(12, bool), np.r_[np.ones(8, bool), np.zeros(4, bool)])
    True
    """
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    return int(np.count_nonzero(a != b)) > max(2.0, max(int(a.sum()), int(b.sum())) / 4.0)


#: Two grid values closer than this ratio are not split further.
REFINE_MIN_RATIO = 1.01

#: A grid value 0 next to a positive value v is split towards 0 a decade at
#: a time, down to this fraction of the grid's smallest positive value.
REFINE_ZERO_FLOOR = 1e-4


def _split(a: float, b: float, floor: float):
    """A value between ``a`` and ``b`` (both >= 0): their geometric mean, a
    decade below the positive one when the other is 0; None when they are
    too close to split (:data:`REFINE_MIN_RATIO`, :data:`REFINE_ZERO_FLOOR`)."""
    lo, hi = min(a, b), max(a, b)
    if lo <= 0.0:
        return hi * 0.1 if hi * 0.1 > floor else None
    return float(np.sqrt(lo * hi)) if hi / lo > REFINE_MIN_RATIO else None


def refine_walk(step, values, start, *, support, max_inserted: int = 0, stop=None, check=None):
    """Walk a grid with warm starts, inserting points where the support jumps.

    ``step(state, value)`` fits the path's next point at ``value``
    warm-started from ``state`` (the previous point's).  When the new
    point's support differs from the previous one by more than
    ``max(2, a quarter of the larger)`` features (:func:`support_jump`), the
    new fit is discarded and a point between the two values is walked first
    (their geometric mean; a decade down from the positive value when the
    other is 0), and so on recursively, until the jump is allowed, the two
    values are within 1 % of each other (or within
    ``REFINE_ZERO_FLOOR`` times the grid's smallest positive value of 0:
    a jump the path really makes), or ``max_inserted`` points have been
    inserted.  Each method's default path grid goes through this one
    function, so that every default grid reaches every sparsity level the
    path passes through.

    Parameters
    ----------
    step : callable
        ``step(state, value) -> state``.
    values : sequence of float
        The grid (values >= 0, in the order to walk; the first one's state
        is ``start``).
    start : object
        The state at ``values[0]``.
    support : callable
        ``support(state) -> ndarray of bool``: the selected features.
    max_inserted : int, default=0
        At most this many points are inserted: the walk has at most
        ``len(values) + max_inserted`` points (0: the grid as given).
    stop : callable, optional
        ``stop(state) -> bool``: end the walk before the next point.
    check : callable, optional
        ``check(values, states) -> bool``, called after every point the
        walk keeps with the values and states walked so far (the start
        included, the lists the walk returns): True ends the walk there.
        The points walked so far are final (points are only ever inserted
        after the last one), so a caller can act on them in stages.

    Returns
    -------
    values : list of float
        The values walked, the inserted ones included.
    states : list
        The state at each value.
    n_inserted : int
        Number of points inserted.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.model_selection import refine_walk
    >>> def step(state, lam):  # feature j is selected while lam < 2 ** -j
    ...     return 2.0 ** -np.arange(12) > lam
    >>> vals, states, n_in = refine_walk(step, [0.0, 0.02], step(None, 0.0), support=lambda s: s,
    ...                                  max_inserted=10)
    >>> [int(s.sum()) for s in states], n_in
    ([12, 9, 8, 6], 2)
    """
    values = [float(v) for v in values]
    positive = [v for v in values if v > 0]
    floor = REFINE_ZERO_FLOOR * min(positive) if positive else 0.0
    out_values, out_states = [values[0]], [start]
    pending = values[1:][::-1]  # a stack: the next value last
    current_value, current = values[0], start
    inserted = 0
    while pending:
        if stop is not None and stop(current):
            break
        value = pending[-1]
        new = step(current, value)
        if inserted < max_inserted and support_jump(support(current), support(new)):
            mid = _split(current_value, value, floor)
            if mid is not None:
                pending.append(mid)
                inserted += 1
                continue
        pending.pop()
        out_values.append(value)
        out_states.append(new)
        current_value, current = value, new
        if check is not None and check(out_values, out_states):
            break
    return out_values, out_states, inserted
