r"""Model-X knockoffs over any numkfs path: :class:`KnockoffFilter`.

A knockoff copy :math:`\tilde X` of X (Candès, Fan, Janson & Lv 2018) is
drawn so that swapping any feature with its knockoff leaves the joint law of
:math:`[X, \tilde X]` unchanged and :math:`\tilde X` is independent of y
given X.  numkfs draws Gaussian knockoffs: on the correlation scale, with
Σ the (estimated) correlation of X and :math:`D = \operatorname{diag}(s)`,

.. math::

    \tilde X \mid X \sim N\big(X - X\Sigma^{-1}D,\ 2D - D\Sigma^{-1}D\big),
    \qquad
    \operatorname{Cov}[X, \tilde X] = \begin{pmatrix} \Sigma & \Sigma - D \\
    \Sigma - D & \Sigma \end{pmatrix},

which is a covariance exactly when :math:`2\Sigma - D \succeq 0` and
:math:`D \succeq 0`.  s comes from the equicorrelated closed form
:math:`s_j = \min(1, 2\lambda_{\min}(\Sigma))` or from the SDP
(:class:`numkfs.solvers.knockoff_sdp.KnockoffSDP`, solved through the
solver registry).

The method's path on :math:`[X, \tilde X]` gives each of the 2p columns an
entry point Z: the grid points are ordered from the path's sparse end, and a
column that is first selected at the k-th of K points gets
:math:`Z = K - k - 1 + r` with r in (0, 1] its weight there relative to the
largest weight there (a tie-break within the point; never-selected columns
get 0).  The statistic is the signed maximum
:math:`W_j = \max(Z_j, \tilde Z_j)\,\operatorname{sign}(Z_j - \tilde Z_j)`,
antisymmetric in swapping a feature with its knockoff.  Knockoff+ keeps
:math:`\{j: W_j \ge T\}` with

.. math::

    T = \min\Big\{t > 0:\ \frac{1 + \#\{j: W_j \le -t\}}{\max(1, \#\{j: W_j \ge t\})}
    \le q\Big\},

which controls the FDR at q when the knockoffs are exact (here: when X is
Gaussian with the estimated correlation; with an estimated covariance the
control is approximate, Barber, Candès & Samworth 2020).  The correlation
is the sample correlation from 2 rows per feature on
(:data:`SAMPLE_ROWS_PER_FEATURE`), Ledoit-Wolf shrinkage below: an
estimate biased towards 0 makes a null feature beat its knockoff too often
(measured: FDR 0.225 instead of 0.124 at q = 0.2 with 7.5 rows per
feature), so the nearly unbiased sample correlation is used wherever it is
well conditioned (``covariance="auto"``; ``covariance`` chooses either).

The statistic is antisymmetric: swapping a feature with its knockoff in
the input swaps their entry points (the method treats columns alike), so
it flips the sign of W_j and leaves the other W_k alone.

By default several draws (``n_draws``, :data:`N_DRAWS`) are combined by
e-values (derandomised knockoffs, Ren & Barber 2024): draw m gives
:math:`e_j^{(m)} = p\,1\{W_j^{(m)} \ge T^{(m)}\} / (1 + \#\{k: W_k^{(m)} \le
-T^{(m)}\})` (:func:`draw_e_values`); the average :math:`\bar e_j` is
thresholded by the e-BH procedure at level q (the :math:`\hat k` largest,
:math:`\hat k = \max\{k: \bar e_{(k)} \ge p / (q k)\}`).

Each :math:`e^{(m)}` is an e-value vector (:math:`\sum_{j\ \mathrm{null}}
E\,e_j^{(m)} \le p`) whenever :math:`T^{(m)}` is a stopping time of the
knockoff+ supermartingale: scanning t upwards from 0 and given the non-null
statistics and every :math:`|W_j|`, :math:`V^+(t) / (1 + V^-(t))` (the null
positives and negatives at or above t) is a supermartingale whose
expectation at t = 0 is at most 1 (1/K with K copies), so at every
stopping time too (Barber & Candès 2015; Ren & Barber's Theorem 1 stops it
at the knockoff+ threshold).
So is their average, and e-BH controls the FDR at q for any dependence
between the e-values (Wang & Ramdas 2022): the guarantee holds for every
number of draws.  Two stopping times are offered (``draw_threshold``):

- ``"no-negative"`` (the default): the smallest :math:`|W|` above every
  negative statistic of the draw (:func:`no_negative_threshold`); the first
  t at which no negative statistic is left is a stopping time.  Every
  feature above it gets the largest e-value, p.
- ``"knockoff+"``: the knockoff+ threshold at :math:`\alpha_{kn}` =
  :data:`DRAW_FDR_RATIO` times q (Ren & Barber's construction).  Where
  enough positive statistics lie below a negative one, it moves below that
  negative and divides every e-value of the draw by 2 or more.

With 1/q relevant features (five at q = 0.2) e-BH selects them only when
their average e-value is p, its largest: every draw must give them p.  The
knockoff+ threshold withholds that from a draw whenever it can move
below a negative statistic (ten positives at or above it with one negative,
at q = 0.2); the no-negative threshold only from a draw where a negative
statistic lies above one of them.  One draw (``n_draws=1``) is
knockoff+ at q itself.

The smallest selection knockoff+ can report at level q is :math:`\lceil 1/q
\rceil` features (:func:`min_selections`): it needs :math:`(1 + \#\{W_j \le
-T\}) / \#\{W_j \ge T\} \le q`.  e-BH needs :math:`\bar e_{(k)} \ge p /
(qk)` where no e-value exceeds p, so it too selects at least
:math:`\lceil 1/q \rceil`; with ``draw_threshold="knockoff+"`` its e-values
are 0 unless some draw's knockoff+ at :math:`\alpha_{kn}` selects at least
:math:`\lceil 1/\alpha_{kn} \rceil`.  With fewer features than that nothing
can be selected.  :class:`KnockoffFilter` warns then, and when the smallest
selection is more than half the features and nothing was selected.

With few features the smallest selection is what stops the filter, and K
knockoff copies drawn together lower it (``n_copies``, multiple knockoffs,
Gimenez & Zou 2019).  The K + 1 blocks of :math:`[X, \tilde X^{(1)},
\dots, \tilde X^{(K)}]` are exchangeable when each copy has correlation Σ
and every two blocks have :math:`\Sigma - D`, a covariance exactly when
:math:`\frac{K+1}{K}\Sigma - D \succeq 0` (:func:`gaussian_knockoffs`).
The statistic's magnitude is the largest entry point among a feature and
its K copies, its sign + when the feature holds it and - when a copy does
(:func:`knockoff_statistics`); for a null feature each of the K + 1 holds
it with probability 1 / (K + 1), so a null statistic is negative K times as
often as positive, and knockoff+ becomes :math:`(1 + \#\{W_j \le -t\})
/ (K \max(1, \#\{W_j \ge t\})) \le q` (:func:`knockoff_threshold`),
each draw's e-values :math:`K p\,1\{W_j \ge T\} / (1 + \#\{W_k \le
-T\})`, and the smallest selection :math:`\lceil 1/(Kq) \rceil`.
``n_copies="auto"`` draws one copy unless that smallest selection is more
than half the features (:func:`auto_copies`).

Features that substitute for each other (correlated above
``group_correlation``, by default the groups of stability selection) are
tested as groups (group knockoffs, Dai & Barber 2016).  With
:math:`S = \operatorname{blockdiag}(\gamma_g \Sigma_{gg})` in place of
:math:`D`, swapping a whole group with its knockoff leaves the joint law
unchanged; a feature's own knockoff would have to copy the feature
almost exactly (the SDP's s_j near 0 when another feature nearly
determines it), while the group's knockoff needs only to copy what the
group shares with the rest.  γ solves the SDP with s tied within groups
(:func:`group_s`).  A unit's entry point is the first of its members',
its statistic compares it with its knockoffs', and knockoff+, the
e-values and e-BH run over the units (p their number): the FDR is that of
the selected units, and a selected group says that at least one member is
relevant.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin

from ._constraints import Interval, NoneOr, Options
from ._validation import constant_columns
from .resampling import SELECTOR_CONSTRAINTS, PathSelectorMixin
from .stability import GROUP_CORRELATION, correlation_groups

__all__ = ["DRAW_FDR_RATIO", "DRAW_THRESHOLD", "KnockoffFilter", "MAX_AUTO_COPIES", "N_COPIES", "N_DRAWS",
           "auto_copies", "collinear_features", "draw_e_values", "equicorrelated_s", "e_bh", "entry_points",
           "gaussian_knockoffs", "group_s", "knockoff_statistics", "knockoff_threshold", "min_selections",
           "no_negative_threshold", "sdp_s"]

#: Default number of knockoff draws combined by e-values: each draw is one path fit on ``[X, X̃]`` (the
#: correlation and the SDP are computed once), so the derandomised filter costs about this many single draws.
N_DRAWS = 8

#: Default number of knockoff copies of each draw, drawn together (Gimenez & Zou 2019): ``"auto"``,
#: one copy unless the smallest selection would exceed half the units (:func:`auto_copies`).
N_COPIES = "auto"

#: The most copies ``n_copies="auto"`` draws: each path fit then has MAX_AUTO_COPIES + 1 times the columns.
MAX_AUTO_COPIES = 4

#: Default stopping time of each draw's e-values in the derandomised filter (``draw_threshold``):
#: ``"no-negative"``, the smallest |W| above every negative statistic (:func:`no_negative_threshold`).
DRAW_THRESHOLD = "no-negative"

#: With ``draw_threshold="knockoff+"``, each draw's knockoff+ level as a fraction of q: :math:`\alpha_{kn}`.
#: Ren & Barber suggest 1/2 for many features.  Below 1 a draw must select ceil(1 / alpha_kn) > ceil(1 / q)
#: features before any e-value is positive, more than the few relevant features of a small problem
#: hold; at 1 a draw needs no more selections than a single knockoff+ draw at q.
DRAW_FDR_RATIO = 1.0

#: ``knockoffs="gaussian"`` solves the SDP up to this many features, then uses
#: the equicorrelated s, with a warning (the native solver's Newton steps cost
#: p^3 each, seconds at this size and then growing fast).
SDP_MAX_FEATURES = 300

#: From this many rows per feature on (n >= 2p) the correlation is the
#: sample correlation; below, Ledoit-Wolf shrinkage.  Knockoffs must mimic
#: the correlations of X, and shrinkage towards the identity pulls every
#: correlation towards 0 (by 40 % for AR(0.3) at n = 7.5 p): a null feature
#: next to a relevant one then keeps more of its correlation with it than
#: its knockoff does, and wins against it too often.  On AR(0.3) X, 40
#: features, a non-linear truth, q = 0.2, 100 seeds, lp-KTA's statistic:
#: FDR 0.225 +- 0.018 with Ledoit-Wolf at n = 300, 0.124 +- 0.015 with the
#: sample correlation (0.162 with the true one); at n = 200, 0.189 and
#: 0.113.  The sample correlation is nearly unbiased (bias O(1/n)), and
#: from n = 2p its smallest eigenvalue stays away from 0 (about
#: (1 - sqrt(p/n))^2 times the true one), so s does not collapse; it is smaller than with shrinkage, which
#: costs power (power 0.82 against 0.86 with the true correlation at
#: n = 300; at n = 120 and 100, where Ledoit-Wolf kept the FDR at 0.14, the
#: sample correlation had power 0.32 and 0.20 against 0.50 and 0.36:
#: ``covariance="ledoit-wolf"`` chooses that trade).
SAMPLE_ROWS_PER_FEATURE = 2

#: Smallest eigenvalue kept in 2Σ - diag(s) (correlation scale): s is lowered
#: by what the solver's round-off took below it.
PSD_MARGIN = 1e-9

#: Squared weight of a feature in the null space of Σ above which it counts as
#: collinear (a weight of 1e-6: the round-off of eigenvectors is far below).
NULL_WEIGHT = 1e-12


def collinear_features(correlation, *, n_samples=None) -> np.ndarray:
    r"""The features in a linear dependence among the columns (Σ singular).

    An eigenvalue of Σ counts as 0 when it is at most
    :math:`\max(n, p)\, p\, \epsilon\, \lambda_{\max}`, the round-off of a correlation
    computed from n rows (each entry a sum of n products; its eigenvalues move
    by up to p times an entry's error); a feature is collinear when its squared
    weight in those eigenvectors exceeds :data:`NULL_WEIGHT`.  Such a feature can
    only have s_j = 0: for a null direction v,
    :math:`v^\top(2\Sigma - \operatorname{diag}(s))v = -\sum_j s_j v_j^2`.

    Parameters
    ----------
    correlation : ndarray of shape (p, p)
        A correlation matrix.
    n_samples : int, optional
        Rows it was computed from (default: p).

    Returns
    -------
    ndarray of int
        The collinear features' indices, ascending.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.knockoffs import collinear_features
    >>> C = np.array([[1.0, 1.0, 0.2], [1.0, 1.0, 0.2], [0.2, 0.2, 1.0]])  # a duplicated column
    >>> collinear_features(C).tolist()
    [0, 1]
    """
    C = np.asarray(correlation, dtype=float)
    p = C.shape[0]
    vals, vecs = np.linalg.eigh(0.5 * (C + C.T))
    null = vals <= max(p, n_samples or p) * p * np.finfo(float).eps * max(float(vals[-1]), 0.0)
    if not null.any():
        return np.zeros(0, dtype=int)
    return np.flatnonzero(np.sum(vecs[:, null] ** 2, axis=1) > NULL_WEIGHT)


def _conditional(C, collinear):
    """The rows and columns R outside ``collinear`` and Σ_R|J = Σ_RR - Σ_RJ Σ_JJ⁺ Σ_JR:
    with s_J = 0, 2Σ - diag(s) ⪰ 0 exactly when 2Σ_R|J - diag(s_R) ⪰ 0 (Schur complement)."""
    p = C.shape[0]
    R = np.setdiff1d(np.arange(p), collinear)
    if collinear.size == 0:
        return R, C
    J = collinear
    S = C[np.ix_(R, R)] - C[np.ix_(R, J)] @ np.linalg.pinv(C[np.ix_(J, J)], hermitian=True) @ C[np.ix_(J, R)]
    return R, 0.5 * (S + S.T)


def _solve_psd(C, B, rtol):
    """Σ⁺ B by Σ's eigen-decomposition (eigenvalues at most ``rtol`` λ_max dropped): Σ⁻¹ B where
    Σ is non-singular, and the exact Σ⁻¹ B on its range for B's columns there (a collinear
    feature's column of diag(s) is 0)."""
    vals, vecs = np.linalg.eigh(0.5 * (C + C.T))
    keep = vals > rtol * max(float(vals[-1]), 0.0)
    V = vecs[:, keep]
    return V @ ((V.T @ B) / vals[keep][:, None])


def equicorrelated_s(correlation, *, n_copies=1) -> np.ndarray:
    """The equicorrelated knockoff s: :math:`\\min(1, \\frac{K+1}{K}\\lambda_{\\min}(\\Sigma))` for every feature.

    With K = 1 copy this is :math:`\\min(1, 2\\lambda_{\\min}(\\Sigma))`.

    Parameters
    ----------
    correlation : ndarray of shape (p, p)
        A correlation matrix.
    n_copies : int, default=1
        K, the knockoff copies drawn together (:func:`gaussian_knockoffs`):
        their joint covariance needs :math:`\\frac{K+1}{K}\\Sigma - \\operatorname{diag}(s) \\succeq 0`.

    Returns
    -------
    ndarray of shape (p,)

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.knockoffs import equicorrelated_s
    >>> equicorrelated_s(np.array([[1.0, 0.5], [0.5, 1.0]])).tolist()
    [1.0, 1.0]
    """
    C = np.asarray(correlation, dtype=float)
    lam = float(np.linalg.eigvalsh(0.5 * (C + C.T))[0])
    return np.full(C.shape[0], min(1.0, max(0.0, _copy_factor(n_copies) * lam)))


def _copy_factor(n_copies):
    """(K + 1) / K: the multiple of Σ that diag(s) must stay below for K copies drawn together."""
    return (int(n_copies) + 1.0) / int(n_copies)


def sdp_s(correlation, *, n_copies=1, solver="auto"):
    """The SDP knockoff s (:class:`~numkfs.solvers.knockoff_sdp.KnockoffSDP`) through the solver registry.

    With K copies drawn together the constraint is
    :math:`\\frac{K+1}{K}\\Sigma - \\operatorname{diag}(s) \\succeq 0`: the SDP of
    the matrix :math:`\\frac{K+1}{2K}\\Sigma` (K = 1: Σ itself).  The
    solution is clipped to [0, 1] and lowered, where the solver's round-off
    left that matrix with an eigenvalue below :data:`PSD_MARGIN`, by that
    amount (again where an s_j stopped at 0), so the knockoffs' conditional
    covariance is positive semidefinite.

    Parameters
    ----------
    correlation : ndarray of shape (p, p)
        A correlation matrix.
    n_copies : int, default=1
        K, the knockoff copies drawn together (:func:`gaussian_knockoffs`).
    solver : str or list of str, default="auto"
        As in :func:`numkfs.solvers.solve`: the native barrier method
        (:mod:`numkfs.solvers.native.knockoff_sdp`), then CLARABEL (up to
        :data:`~numkfs.solvers.registry.INTERIOR_POINT_SDP_MAX_SIDE` features) and SCS.

    Returns
    -------
    s : ndarray of shape (p,)
    result : SolverResult
        The registry's answer (backend, status, objective).

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.knockoffs import sdp_s
    >>> s, res = sdp_s(np.eye(3))
    >>> np.round(s, 6).tolist()
    [1.0, 1.0, 1.0]
    """
    from .solvers import solve
    from .solvers.knockoff_sdp import KnockoffSDP

    C = np.asarray(correlation, dtype=float)
    problem = KnockoffSDP(C if int(n_copies) == 1 else 0.5 * _copy_factor(n_copies) * C)
    res = solve(problem, solver)
    s = np.clip(np.asarray(res["s"], dtype=float).ravel(), 0.0, 1.0)
    for _ in range(10):  # lowering every s_j by t raises the eigenvalues by t, except where s_j hits 0
        short = PSD_MARGIN - problem.min_eigenvalue(s)
        if short <= 0 or not s.any():
            break
        s = np.clip(s - short, 0.0, 1.0)
    return s, res


def group_s(correlation, groups, *, conditional=None, n_copies=1, sdp=True, solver="auto"):
    r"""The group knockoff S: :math:`\operatorname{blockdiag}(\gamma_g \Sigma_{gg})` over the groups.

    Knockoffs with this S are exchangeable with X group by group (Dai &
    Barber 2016): swapping a whole group with its knockoff leaves the joint
    law unchanged, while within a group the knockoff keeps the members'
    correlations.  With :math:`B = \operatorname{blockdiag}(\Sigma_{gg})` and
    :math:`M = B^{-1/2}\Sigma B^{-1/2}`,
    :math:`\frac{K+1}{K}\Sigma - S \succeq 0` exactly when
    :math:`\frac{K+1}{K}M - \operatorname{diag}(\gamma) \succeq 0` with γ
    constant on each group.  ``sdp``: the SDP of M (:func:`sdp_s`) lowered to
    its smallest entry on each group (a smaller s stays feasible); else the
    equicorrelated :math:`\gamma = \min(1, \frac{K+1}{K}\lambda_{\min}(M))`.
    Groups of one feature leave M's row as Σ's, so with no larger group S
    is :math:`\operatorname{diag}(s)` of :func:`sdp_s` or
    :func:`equicorrelated_s` itself.

    Parameters
    ----------
    correlation : ndarray of shape (p, p)
        Σ, a correlation matrix: its diagonal blocks make B.
    groups : list of array-like of int
        Every column in exactly one group.
    conditional : ndarray of shape (p, p), optional
        The matrix the constraint holds for, when it is not Σ (the
        correlation conditional on collinear features, whose s is 0).
    n_copies : int, default=1
        K, the knockoff copies drawn together (:func:`gaussian_knockoffs`).
    sdp : bool, default=True
        The SDP (True) or the equicorrelated γ.
    solver : str or list of str, default="auto"
        The SDP's backend, as in :func:`sdp_s`.

    Returns
    -------
    S : ndarray of shape (p, p)
    result : SolverResult or None
        The SDP's result (None for the equicorrelated γ).

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.knockoffs import group_s
    >>> C = np.array([[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]])
    >>> S, _ = group_s(C, [[0, 1], [2]], sdp=False)
    >>> np.round(S, 6).tolist()
    [[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    C = np.asarray(correlation, dtype=float)
    A = C if conditional is None else np.asarray(conditional, dtype=float)
    groups = [np.asarray(g, dtype=int) for g in groups]
    big = [g for g in groups if g.size > 1]
    half = np.eye(C.shape[0])  # B^{-1/2}, and B^{1/2}: 1 on a group of one
    root = np.eye(C.shape[0])
    for g in big:
        vals, vecs = np.linalg.eigh(C[np.ix_(g, g)])
        vals = np.clip(vals, np.finfo(float).tiny, None)
        half[np.ix_(g, g)] = (vecs / np.sqrt(vals)) @ vecs.T
        root[np.ix_(g, g)] = (vecs * np.sqrt(vals)) @ vecs.T
    M = A if not big else half @ A @ half
    M = 0.5 * (M + M.T)
    res = None
    if not big:
        t = sdp_s(M, n_copies=n_copies, solver=solver) if sdp else (equicorrelated_s(M, n_copies=n_copies), None)
        return np.diag(t[0]), t[1]
    if sdp:
        from .solvers import solve
        from .solvers.knockoff_sdp import GroupKnockoffSDP

        problem = GroupKnockoffSDP(M if int(n_copies) == 1 else 0.5 * _copy_factor(n_copies) * M, groups)
        res = solve(problem, solver)
        t = problem.expand(np.clip(np.asarray(res["gamma"], dtype=float), 0.0, 1.0))
        for _ in range(10):  # lowering every γ by u raises the eigenvalues by u, except where γ hits 0
            short = PSD_MARGIN - problem.min_eigenvalue(t)
            if short <= 0 or not t.any():
                break
            t = np.clip(t - short, 0.0, 1.0)
    else:
        t = equicorrelated_s(M, n_copies=n_copies)
    S = root @ (t[:, None] * root)
    return 0.5 * (S + S.T), res


def auto_copies(n_units, fdr, *, max_copies=MAX_AUTO_COPIES) -> int:
    r"""``n_copies="auto"``: one copy, or the fewest that bring the smallest selection to half the units.

    The smallest selection at level q with K copies is
    :math:`\lceil 1/(Kq) \rceil` (:func:`min_selections`); K is the smallest
    number, at most ``max_copies``, with at most half the units there, so that a few
    relevant units among few can be found.  It depends on the number of
    units and q only, never on y, so the FDR guarantee is that of a fixed K.

    Parameters
    ----------
    n_units : int
        The features or groups the filter tests.
    fdr : float in (0, 1)
        q.
    max_copies : int, default=MAX_AUTO_COPIES

    Returns
    -------
    int

    Examples
    --------
    >>> from numkfs.knockoffs import auto_copies
    >>> auto_copies(20, 0.2), auto_copies(8, 0.2), auto_copies(4, 0.2), auto_copies(4, 0.05)
    (1, 2, 3, 4)
    """
    for K in range(1, int(max_copies) + 1):
        if 2 * min_selections(fdr, n_copies=K) <= n_units:
            return K
    return int(max_copies)


def _correlation(X, rule):
    """Means, scales, the correlation used and the estimator's name."""
    from sklearn.covariance import LedoitWolf

    n, p = X.shape
    mu = X.mean(axis=0)
    sd = X.std(axis=0)
    Z = (X - mu) / sd
    if rule == "ledoit-wolf":
        S = LedoitWolf(assume_centered=True).fit(Z).covariance_
    else:
        S = (Z.T @ Z) / n
    d = np.sqrt(np.diag(S))
    C = S / np.outer(d, d)
    return mu, sd, 0.5 * (C + C.T)


def gaussian_knockoffs(X, s, correlation, *, n_copies=1, mean=None, scale=None, random_state=None):
    r"""Draw Gaussian model-X knockoffs of X: one copy, or K copies drawn together.

    K copies :math:`\tilde X^{(1)}, \dots, \tilde X^{(K)}` drawn together
    (Gimenez & Zou 2019) make the K + 1 blocks of
    :math:`[X, \tilde X^{(1)}, \dots, \tilde X^{(K)}]` exchangeable: every block
    has correlation Σ and every two blocks :math:`\Sigma - D`, a covariance
    exactly when :math:`\frac{K+1}{K}\Sigma - D \succeq 0`.  Given X each
    copy has mean :math:`X - X\Sigma^{-1}D`, variance :math:`2D - D\Sigma^{-1}D`
    and covariance :math:`D - D\Sigma^{-1}D` with every other copy; copy k is
    drawn as that mean plus :math:`G_k - \bar G + H / \sqrt K` with
    :math:`G_k \sim N(0, D)` independent and
    :math:`H \sim N(0, (K+1)D - K D\Sigma^{-1}D)` shared (K = 1: the mean plus H).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The data.
    s : ndarray of shape (n_features,) or (n_features, n_features)
        The knockoff s on the correlation scale, or the matrix S of group
        knockoffs (:func:`group_s`; D below is then S) (:func:`equicorrelated_s`,
        :func:`sdp_s`); 0 for collinear features (:func:`collinear_features`),
        whose knockoff is then the feature itself.
    correlation : ndarray of shape (n_features, n_features)
        The correlation Σ of the standardised columns.
    n_copies : int, default=1
        K, the copies drawn together; s must come from the same K
        (:func:`sdp_s`, :func:`equicorrelated_s`).
    mean, scale : ndarray of shape (n_features,), optional
        Column means and standard deviations (default: X's).
    random_state : int, Generator or None
        Seed of the normal draws.

    Returns
    -------
    ndarray of shape (n_samples, n_copies * n_features)
        :math:`[\\tilde X^{(1)}, \\dots, \\tilde X^{(K)}]`, in the units of X.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.knockoffs import gaussian_knockoffs
    >>> X = np.random.default_rng(0).standard_normal((5, 2))
    >>> gaussian_knockoffs(X, np.ones(2), np.eye(2), random_state=0).shape
    (5, 2)
    """
    X = np.asarray(X, dtype=float)
    mu = X.mean(axis=0) if mean is None else np.asarray(mean, dtype=float)
    sd = X.std(axis=0) if scale is None else np.asarray(scale, dtype=float)
    C = np.asarray(correlation, dtype=float)
    s = np.asarray(s, dtype=float)
    Z = (X - mu) / sd
    # Σ⁻¹ D; with collinear columns (Σ singular, their s_j = 0) Σ⁺ D, exact on Σ's range
    D = np.diag(s) if s.ndim == 1 else 0.5 * (s + s.T)
    Cinv_D = _solve_psd(C, D, max(C.shape[0], Z.shape[0]) * C.shape[0] * np.finfo(float).eps)
    K = int(n_copies)
    V = (K + 1.0) * D - K * (D @ Cinv_D)  # the covariance of H
    vals, vecs = np.linalg.eigh(0.5 * (V + V.T))
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))  # V = root rootᵀ (round-off negatives dropped)
    rng = np.random.default_rng(random_state)
    centre = Z - Z @ Cinv_D
    H = rng.standard_normal(Z.shape) @ root.T
    if K == 1:
        return mu + sd * (centre + H)
    if s.ndim == 1:
        G = rng.standard_normal((K,) + Z.shape) * np.sqrt(np.clip(s, 0.0, None))
    else:
        dv, dV = np.linalg.eigh(D)
        G = rng.standard_normal((K,) + Z.shape) @ (dV * np.sqrt(np.clip(dv, 0.0, None))).T
    G -= G.mean(axis=0)
    return np.hstack([mu + sd * (centre + H / np.sqrt(K) + G[k]) for k in range(K)])


def entry_points(path) -> np.ndarray:
    """Where each column enters a path, counted from its sparse end (larger = earlier).

    A column first selected at the k-th of K points (k = 0 the sparsest)
    gets ``K - k - 1 + r``, r in (0, 1] its absolute weight there over the
    largest absolute weight there; a column never selected gets 0.

    Parameters
    ----------
    path : FeaturePath
        The path.

    Returns
    -------
    ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import FeaturePath
    >>> from numkfs.knockoffs import entry_points
    >>> path = FeaturePath([3.0, 2.0, 1.0], np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.0, 0.2, 0.0]]))
    >>> entry_points(path).tolist()
    [2.0, 0.2, 0.0]
    """
    from .paths import support_mask

    W = np.abs(path.weights)
    sel = support_mask(W, path.tol)
    ns = sel.sum(axis=1)
    order = np.arange(path.n_points)
    if ns[-1] < ns[0]:
        order = order[::-1]
    K = len(order)
    Z = np.zeros(path.n_features)
    done = np.zeros(path.n_features, dtype=bool)
    for k, i in enumerate(order):
        new = sel[i] & ~done
        if new.any():
            top = W[i, sel[i]].max()
            Z[new] = K - k - 1 + W[i, new] / top
            done |= new
    return Z


def knockoff_statistics(path, n_features, *, n_copies=1, groups=None) -> np.ndarray:
    """Signed entry points from a path on ``[X, X̃]`` (or on X and K copies).

    One copy: :math:`W_j = \\max(Z_j, \\tilde Z_j)\\,\\mathrm{sign}(Z_j - \\tilde Z_j)`.
    K copies: :math:`|W_j|` is the largest entry point among the feature
    and its K copies, positive when the feature itself holds it, negative
    when a copy does, 0 on a tie (Gimenez & Zou's :math:`\\tau_j` and
    :math:`\\kappa_j`: under the null each of the K + 1 holds it with
    probability 1 / (K + 1)).

    Parameters
    ----------
    path : FeaturePath
        The path on the (K + 1) p columns (the originals first, then the copies in order).
    n_features : int
        p.
    n_copies : int, default=1
        K.
    groups : list of array-like of int, optional
        Group knockoffs: one statistic per group, from the largest entry
        point of its members and of each copy's members.

    Returns
    -------
    ndarray of shape (n_features,), or (n_groups,) with ``groups``
    """
    Z = entry_points(path)[:(int(n_copies) + 1) * n_features].reshape(int(n_copies) + 1, n_features)
    if groups is not None:
        Z = np.stack([Z[:, np.asarray(g, dtype=int)].max(axis=1) for g in groups], axis=1)
    top = Z.max(axis=0)
    ties = np.sum(Z == top, axis=0) > 1
    return np.where(ties, 0.0, np.where(Z[0] == top, top, -top))


def knockoff_threshold(W, fdr, *, offset=1, n_copies=1) -> float:
    """The knockoff (``offset=0``) or knockoff+ (``offset=1``) threshold.

    :math:`T = \\min\\{t \\in \\{|W_j|\\} \\setminus \\{0\\}: (\\text{offset} + \\#\\{W_j \\le -t\\})
    / (K \\max(1, \\#\\{W_j \\ge t\\})) \\le q\\}`, +inf when no t qualifies; K = 1
    for one copy, and with K copies drawn together (Gimenez & Zou's multiple
    knockoff filter) a null statistic is negative K times as often as positive.

    Parameters
    ----------
    W : array-like of shape (p,)
        Knockoff statistics.
    fdr : float
        The target q.
    offset : {0, 1}, default=1
        1: knockoff+ (FDR control), 0: knockoff (modified FDR).
    n_copies : int, default=1
        K, the knockoff copies the statistics compare each feature with
        (:func:`knockoff_statistics`).

    Returns
    -------
    float

    Examples
    --------
    >>> from numkfs.knockoffs import knockoff_threshold
    >>> knockoff_threshold([5, 4, 3, 2, -1], 0.5)  # t = 1: (1 + 1) / 4 <= 0.5
    1.0
    """
    W = np.asarray(W, dtype=float).ravel()
    ts = np.unique(np.abs(W[W != 0]))
    neg = np.sort(-W[W < 0])  # |W| of the negatives, ascending
    pos = np.sort(W[W > 0])
    for t in ts:
        n_neg = neg.size - np.searchsorted(neg, t, side="left")  # #{W <= -t}
        n_pos = pos.size - np.searchsorted(pos, t, side="left")  # #{W >= t}
        if (offset + n_neg) / (int(n_copies) * max(1, n_pos)) <= fdr:
            return float(t)
    return float("inf")


def no_negative_threshold(W) -> float:
    """The smallest :math:`|W_j| > 0` above every negative statistic: :math:`\\min\\{t \\in \\{|W_j|\\}
    \\setminus \\{0\\}: \\#\\{W_k \\le -t\\} = 0\\}`, +inf when no t qualifies.

    Scanning t upwards from 0, the first t with no negative statistic left
    is a stopping time of the knockoff+ supermartingale, so
    :func:`draw_e_values` at it are e-values (see :mod:`numkfs.knockoffs`).

    Parameters
    ----------
    W : array-like of shape (p,)
        Knockoff statistics.

    Returns
    -------
    float

    Examples
    --------
    >>> from numkfs.knockoffs import no_negative_threshold
    >>> no_negative_threshold([5, 4, -3, 2, 0]), no_negative_threshold([1, -2])
    (4.0, inf)
    """
    W = np.asarray(W, dtype=float).ravel()
    top = float(np.max(-W[W < 0])) if np.any(W < 0) else 0.0
    above = W[W > top]
    return float(above.min()) if above.size else float("inf")


def draw_e_values(W, fdr, *, n_copies=1, threshold=DRAW_THRESHOLD) -> np.ndarray:
    """One knockoff draw's e-values: :math:`e_j = K p\\,1\\{W_j \\ge T\\} / (1 + \\#\\{W_k \\le -T\\})`.

    Parameters
    ----------
    W : array-like of shape (p,)
        The draw's knockoff statistics.
    fdr : float
        The level q (with ``threshold="knockoff+"``: T is the knockoff+
        threshold at :data:`DRAW_FDR_RATIO` times q).
    n_copies : int, default=1
        K, the knockoff copies the statistics compare each feature with.
    threshold : {"no-negative", "knockoff+"}, default="no-negative"
        The stopping time T: :func:`no_negative_threshold` or
        :func:`knockoff_threshold`.

    Returns
    -------
    ndarray of shape (p,)
        0 everywhere when T is +inf.

    Examples
    --------
    >>> from numkfs.knockoffs import draw_e_values
    >>> W = [9, 8, 7, 6, 5, -4.5, 4, 3, 2, 1.5, 1, 0.5]
    >>> draw_e_values(W, 0.2).tolist()[:6], draw_e_values(W, 0.2, threshold="knockoff+").tolist()[:6]
    ([12.0, 12.0, 12.0, 12.0, 12.0, 0.0], [6.0, 6.0, 6.0, 6.0, 6.0, 0.0])
    """
    W = np.asarray(W, dtype=float).ravel()
    K = int(n_copies)
    if threshold == "no-negative":
        T = no_negative_threshold(W)
    elif threshold == "knockoff+":
        T = knockoff_threshold(W, DRAW_FDR_RATIO * fdr, n_copies=K)
    else:
        raise ValueError(f"threshold must be 'no-negative' or 'knockoff+'; got {threshold!r}.")
    if not np.isfinite(T):
        return np.zeros(W.size)
    return K * W.size * (W >= T) / (1.0 + np.sum(W <= -T))


def e_bh(e, fdr):
    """The e-BH procedure (Wang & Ramdas 2022): the k̂ largest e-values,
    :math:`\\hat k = \\max\\{k: e_{(k)} \\ge p / (q k)\\}`.

    Parameters
    ----------
    e : array-like of shape (p,)
        e-values.
    fdr : float
        The level q.

    Returns
    -------
    selected : ndarray of bool of shape (p,)
    threshold : float
        :math:`p / (q \\hat k)` (+inf when nothing is selected).

    Examples
    --------
    >>> from numkfs.knockoffs import e_bh
    >>> sel, t = e_bh([40.0, 25.0, 0.0, 0.0], 0.1)
    >>> sel.tolist(), t
    ([True, True, False, False], 20.0)
    """
    e = np.asarray(e, dtype=float).ravel()
    p = e.size
    order = np.argsort(-e, kind="stable")
    k = np.arange(1, p + 1)
    ok = np.flatnonzero(e[order] >= p / (fdr * k))
    sel = np.zeros(p, dtype=bool)
    if ok.size == 0:
        return sel, float("inf")
    kh = int(ok.max()) + 1
    sel[order[:kh]] = True
    return sel, float(p / (fdr * kh))


def min_selections(fdr, *, n_copies=1) -> int:
    r"""The smallest number of features knockoff+ or e-BH can select at level q: :math:`\lceil 1/(Kq) \rceil`.

    Knockoff+ with K copies selects R features at a threshold T only when
    :math:`(1 + \#\{W_j \le -T\}) / (K R) \le q`, so R >= 1/(Kq).  e-BH with
    e-values at most Kp (each draw's :math:`e_j^{(m)} \le Kp`, hence their
    average) selects k features only when the k-th largest is at least
    p / (q k), so k >= 1/(Kq).  Below it the answer is empty whatever the data.

    Parameters
    ----------
    fdr : float in (0, 1)
        The level q.
    n_copies : int, default=1
        K, the knockoff copies of each draw.

    Returns
    -------
    int

    Examples
    --------
    >>> from numkfs.knockoffs import min_selections
    >>> min_selections(0.2), min_selections(0.1), min_selections(0.3), min_selections(0.2, n_copies=3)
    (5, 10, 4, 2)
    """
    return int(np.ceil(round(1.0 / (int(n_copies) * float(fdr)), 9)))


class _Draw:
    """One knockoff draw and its statistics (picklable for joblib workers)."""

    def __init__(self, selector, X, y, s, C, mu, sd, params, task, units, n_copies):
        self.selector, self.X, self.y, self.s, self.C = selector, X, y, s, C
        self.mu, self.sd, self.params, self.task = mu, sd, params, task
        self.units, self.n_copies = units, n_copies

    def __call__(self, seed):
        from .resampling import method_path

        Xk = gaussian_knockoffs(self.X, self.s, self.C, n_copies=self.n_copies, mean=self.mu, scale=self.sd,
                                random_state=seed)
        path = method_path(self.selector, np.hstack([self.X, Xk]), self.y, params=self.params, task=self.task,
                           purpose="knockoffs")
        groups = None if all(len(g) == 1 for g, _ in self.units) else [g for g, _ in self.units]
        W = knockoff_statistics(path, self.X.shape[1], n_copies=self.n_copies, groups=groups)
        if groups is None:
            W = W[[g[0] for g, _ in self.units]]
        # a feature identical to its knockoff: which of the two enters first is arbitrary
        W[[u for u, (_, tested) in enumerate(self.units) if not tested]] = 0.0
        return W


class KnockoffFilter(PathSelectorMixin, SelectorMixin, BaseEstimator):
    r"""Model-X knockoff filter (FDR control) over any numkfs method's path.

    Gaussian knockoffs :math:`\tilde X` are drawn from the estimated
    correlation of X, the method's path is fitted on :math:`[X, \tilde X]`,
    each feature's statistic compares where it and its knockoff enter the
    path, and the knockoff+ threshold keeps features at a false discovery
    rate of at most ``fdr`` (see :mod:`numkfs.knockoffs`).

    Parameters
    ----------
    selector : str or estimator, default="lpkta"
        A method name (``"knife"``, ``"lpkta"``, ``"l1kr"``, ``"garrote"``,
        ``"cosso"``, ``"nmmkl"``; the default is the fastest, for regression
        and classification alike) or a numkfs estimator whose parameters set
        the path.
    fdr : float in (0, 1), default=0.1
        The target false discovery rate q.
    knockoffs : {"gaussian", "sdp", "equicorrelated"}, default="gaussian"
        Gaussian knockoffs with s from the SDP (``"sdp"``), the closed form
        (``"equicorrelated"``), or ``"gaussian"``: the SDP up to
        :data:`SDP_MAX_FEATURES` features, the closed form beyond.
    covariance : {"auto", "sample", "ledoit-wolf"}, default="auto"
        How the correlation of X is estimated: the sample correlation
        (nearly unbiased; needs more rows than features), Ledoit-Wolf shrinkage
        (well conditioned at any n, but correlations pulled towards 0), or
        ``"auto"``: the sample correlation from
        :data:`SAMPLE_ROWS_PER_FEATURE` = 2 rows per feature on, Ledoit-Wolf
        below (with a warning).  The FDR guarantee needs knockoffs that
        reproduce the correlations of X: with Ledoit-Wolf at 5-7.5 rows per
        feature the measured FDR exceeded q (see
        :data:`SAMPLE_ROWS_PER_FEATURE`).  ``"ledoit-wolf"`` can give more
        power between 2 and 4 rows per feature, at that risk.
    n_draws : int, default=8
        Knockoff draws (:data:`N_DRAWS`), combined by e-values and e-BH
        (derandomised knockoffs, Ren & Barber 2024; see :mod:`numkfs.knockoffs`):
        the FDR is at most ``fdr`` for every number of draws (e-BH controls
        it for any dependence between the e-values), and the answer depends
        far less on the draws than one draw's.  1: one draw and knockoff+.
        The correlation and the SDP are computed once for all draws, so the
        cost is about ``n_draws`` path fits on ``[X, X̃]``.
    draw_threshold : {"no-negative", "knockoff+"}, default="no-negative"
        The threshold of each draw's e-values (:func:`draw_e_values`;
        ``n_draws > 1``): the smallest :math:`|W|` above every negative
        statistic of the draw, or its knockoff+ threshold at q (Ren &
        Barber's).  Both give e-values, so the FDR guarantee is the same;
        the first keeps the largest e-value on the features ahead of every
        negative statistic, where knockoff+ divides it whenever enough
        positives below a negative one let it move past it.
    n_copies : int or "auto", default="auto"
        Knockoff copies of X in each draw (K, :data:`N_COPIES`; multiple
        knockoffs, Gimenez & Zou 2019): the path runs on the (K + 1) p
        columns :math:`[X, \tilde X^{(1)}, \dots, \tilde X^{(K)}]`, a feature
        counts as selected by the draw when it enters before all K of its
        copies, and the smallest selection falls from :math:`\lceil 1/q
        \rceil` to :math:`\lceil 1/(Kq) \rceil` (:func:`min_selections`):
        with few features, the only way the filter can select anything at
        a small q.  The FDR guarantee is the same for every K; the copies
        must each stay closer to X (a smaller s), and every path fit has
        K + 1 times the columns.  ``"auto"``: one copy unless the smallest
        selection would exceed half the units tested, then the fewest copies
        that bring it there, at most :data:`MAX_AUTO_COPIES`
        (:func:`auto_copies`; fixed by p and q, never by y).
    group_correlation : float in (0, 1) or None, default=0.5
        Columns whose absolute correlations all exceed it form a group
        (:func:`numkfs.stability.correlation_groups`, the groups of
        stability selection), tested as one: group knockoffs (Dai & Barber
        2016) are exchangeable with X group by group (:func:`group_s`), a
        group's statistic compares the first of its members to enter the
        path with the first of its knockoffs', and the FDR is over the
        selected groups and lone features.  Features that substitute for
        each other leave each one's knockoff nearly the feature itself (s
        near 0) and no power; their group keeps it.  A selected group of
        two or more columns is reported in ``groups_``, not in the support.
        None: every feature tested alone.
    task : {"regression", "classification"}, optional
        The task of the method's path; default: from y
        (:func:`numkfs.model_selection.target_type`).  Give it for a target
        whose values do not say it (a score from 0 to 4 is five classes by
        default; ``task="regression"`` fits it as a number).
    random_state : int, RandomState or None
        Seeds the knockoff draws (each draw its own stream, so a result does
        not depend on ``n_jobs``).
    n_jobs : int, optional
        joblib workers over the draws (:func:`numkfs.model_selection.parallel_map`).
    params : dict, optional
        Keyword arguments of the method's path function.  Keyword arguments
        given to the constructor beyond the ones above are added to it (so
        ``clone`` and ``get_params`` see them).
    **kwargs
        Path-function keyword arguments, stored into ``params``.

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features,)
        One draw: the knockoff statistics W.  Several: the average e-values
        :math:`\bar e_j`.  A member of a group: the group's.  A constant feature has no knockoff: the filter
        runs on the other features, and its statistic is 0 (never
        selected; a warning names it).
    draw_statistics_ : ndarray of shape (n_draws, n_features)
        W of every draw (with K copies: the feature's entry point, positive
        when it enters before all its copies, negative when a copy enters
        first; :func:`knockoff_statistics`).
    threshold_ : float
        One draw: the knockoff+ threshold T on W.  Several: the e-BH
        threshold :math:`p / (q \hat k)` on the e-values.  +inf when nothing
        is selected.
    e_values_ : ndarray of shape (n_features,) or None
        The average e-values (``n_draws > 1``).
    s_ : ndarray of shape (n_features,)
        The knockoff s on the correlation scale (0 for a constant feature),
        for ``n_copies`` copies: :math:`\frac{K+1}{K}\Sigma - \operatorname{diag}(s) \succeq 0`;
        with groups, the diagonal of ``s_matrix_``.
    s_matrix_ : ndarray of shape (n_features, n_features)
        S: :math:`\operatorname{diag}(s)`, or with groups
        :math:`\operatorname{blockdiag}(\gamma_g \Sigma_{gg})` (:func:`group_s`).
    n_copies_ : int
        K, the copies each draw drew.
    clusters_ : list of ndarray of int
        The units tested: groups of correlated columns and lone features,
        every column but the constant ones in one.
    cluster_statistics_ : ndarray of shape (n_clusters,)
        Each unit's statistic (W, or the average e-value).
    groups_ : list of list of int
        The selected units of two or more columns (empty when none).
    group_statistics_ : ndarray of shape (n_groups,)
        Their statistics.
    n_units_ : int
        The number of units, the p of the threshold and the e-values.
    s_method_ : str
        ``"sdp"`` or ``"equicorrelated"``.
    collinear_ : ndarray of int
        Features in a linear dependence among the columns (a duplicate, a
        negated copy, ...; :func:`collinear_features`): their s_j and
        statistic are 0 (a warning names them).
    solver_ : str or None
        The backend that solved the SDP.
    correlation_ : ndarray of shape (n_features, n_features)
        The estimated correlation of X (a constant feature's row and column
        are those of an independent feature: 0, and 1 on the diagonal).
    covariance_estimator_ : str
        ``"sample"`` (at least :data:`SAMPLE_ROWS_PER_FEATURE` = 2 rows per
        feature) or ``"ledoit-wolf"`` (shrinkage, below that; a warning
        says so).  The sample correlation is preferred whenever it is well
        conditioned: knockoffs must reproduce the correlations of X, which
        shrinkage biases towards 0 (see :data:`SAMPLE_ROWS_PER_FEATURE` for
        the measured effect on the FDR).
    support_ : ndarray of bool of shape (n_features,)
    method_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names.

    References
    ----------
    E. Candès, Y. Fan, L. Janson and J. Lv, "Panning for gold: 'model-X'
    knockoffs for high dimensional controlled variable selection", JRSS B
    80(3):551-577, 2018.  R. F. Barber and E. J. Candès, "Controlling the
    false discovery rate via knockoffs", Annals of Statistics 43(5), 2015
    (knockoff+).  Z. Ren and R. F. Barber, "Derandomised knockoffs:
    leveraging e-values for false discovery rate control", JRSS B 86(1),
    2024 (arXiv 2023).  R. Wang and A. Ramdas, "False discovery rate control
    with e-values", JRSS B 84(3), 2022 (e-BH).  J. R. Gimenez and J. Zou, "Improving the stability of
    the knockoff procedure: multiple simultaneous knockoffs and entropy maximization", AISTATS 2019
    (``n_copies``).  R. Dai and R. F. Barber, "The knockoff filter for FDR control in group-sparse and
    multitask regression", ICML 2016 (``group_correlation``).  O. Ledoit and M. Wolf, "A well-conditioned
    estimator for large-dimensional covariance matrices", Journal of
    Multivariate Analysis 88(2), 2004.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs import KnockoffFilter
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((150, 10))
    >>> y = X[:, 0] ** 2 + X[:, 1] + 0.2 * rng.standard_normal(150)
    >>> kf = KnockoffFilter("lpkta", fdr=0.2, random_state=0).fit(X, y)
    >>> kf.statistics_.shape, kf.s_method_
    ((10,), 'sdp')
    """

    def __init__(self, selector="lpkta", *, fdr=0.1, knockoffs="gaussian", covariance="auto", n_draws=N_DRAWS,
                 draw_threshold=DRAW_THRESHOLD, n_copies=N_COPIES, group_correlation=GROUP_CORRELATION, task=None,
                 random_state=None, n_jobs=None, params=None, **kwargs):
        self.selector = selector
        self.fdr = fdr
        self.knockoffs = knockoffs
        self.covariance = covariance
        self.n_draws = n_draws
        self.draw_threshold = draw_threshold
        self.n_copies = n_copies
        self.group_correlation = group_correlation
        self.task = task
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.params = self.merge_params(params, kwargs)  # stored as given, kwargs joined (checked in fit)

    _parameter_constraints = {
        "fdr": [Interval(numbers.Real, 0, 1, closed="neither")],
        "n_draws": [Interval(numbers.Integral, 1, None, closed="left")],
        "draw_threshold": [Options(("no-negative", "knockoff+"))],
        "n_copies": [Interval(numbers.Integral, 1, None, closed="left"), Options(("auto",))],
        "group_correlation": [NoneOr, Interval(numbers.Real, 0, 1, closed="neither")],
        "knockoffs": [Options(("gaussian", "sdp", "equicorrelated"))],
        "covariance": [Options(("auto", "sample", "ledoit-wolf"))],
        **SELECTOR_CONSTRAINTS,
    }

    def fit(self, X, y):
        """Draw knockoffs, fit the method's path on ``[X, X̃]`` and threshold.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data, one row per sample and one column per feature.
        y : array-like of shape (n_samples,)
            Target values: the response, or the class labels.

        Returns
        -------
        self
        """
        from .model_selection import parallel_map

        method, X, y, task = self._fit_data(X, y, min_samples=3)
        n, n_all = X.shape
        names = getattr(self, "feature_names_in_", None)
        # a constant column has no Gaussian knockoff (no correlation): the filter runs on the others, and
        # it gets statistic 0 and is never selected, as every method gives it weight 0
        keep = np.flatnonzero(~constant_columns(X, caller="KnockoffFilter", feature_names=names))
        if keep.size == 0:
            raise ValueError("KnockoffFilter: every feature of X is constant; there is nothing to select.")
        X = X[:, keep]
        p = keep.size
        rule = self.covariance
        if rule == "auto":
            rule = "sample" if n >= SAMPLE_ROWS_PER_FEATURE * p else "ledoit-wolf"
        elif rule == "sample" and n <= p:
            raise ValueError(f"covariance='sample' needs more rows than features (the sample correlation is "
                             f"singular); got {n} rows for {p} features: use 'auto' or 'ledoit-wolf'.")
        if rule == "ledoit-wolf" and self.covariance == "auto":
            why = "singular" if n <= p else "ill-conditioned"
            warnings.warn(f"KnockoffFilter: {n} rows for {p} features (fewer than {SAMPLE_ROWS_PER_FEATURE} per "
                          f"feature); the correlation of X is estimated by Ledoit-Wolf shrinkage (the sample "
                          f"correlation is {why}). Shrinkage pulls correlations towards 0, so the knockoffs mimic "
                          "X only roughly and the FDR can exceed fdr.", UserWarning, stacklevel=2)
        mu, sd, C = _correlation(X, rule)
        collinear = collinear_features(C, n_samples=n)
        if collinear.size:
            named = [str(names[j]) for j in keep[collinear]] if names is not None else keep[collinear].tolist()
            warnings.warn(f"KnockoffFilter: feature(s) {named} are collinear (a linear combination of other "
                          "columns, e.g. a duplicate or a negated copy): their knockoff is the feature itself "
                          "(s_j = 0), so their statistic is 0 and they are never selected; drop the redundant "
                          "columns to test them.", UserWarning, stacklevel=2)
        use_sdp = self.knockoffs == "sdp" or (self.knockoffs == "gaussian" and p <= SDP_MAX_FEATURES)
        if self.knockoffs == "gaussian" and not use_sdp:
            warnings.warn(f"KnockoffFilter: {p} features, more than SDP_MAX_FEATURES = {SDP_MAX_FEATURES}: the "
                          "knockoffs use the equicorrelated s instead of the SDP's (less power where features "
                          "are correlated); knockoffs='sdp' solves the SDP anyway.", UserWarning, stacklevel=2)
        self.solver_ = None
        q = float(self.fdr)
        R, CR = _conditional(C, collinear)
        # the units tested: groups of correlated columns among R (each column its own unit with
        # group_correlation=None), and each collinear feature alone, never tested (statistic 0)
        blocks = ([np.array([j]) for j in range(R.size)] if self.group_correlation is None or R.size < 2
                  else correlation_groups(X[:, R], self.group_correlation))
        units = sorted([(R[b], True) for b in blocks] + [(np.array([j]), False) for j in collinear],
                       key=lambda u: int(u[0][0]))
        G = len(units)
        K = auto_copies(G, q) if self.n_copies == "auto" else int(self.n_copies)
        grouped = any(b.size > 1 for b in blocks)
        S = np.zeros((p, p))
        if R.size:
            S[np.ix_(R, R)], res = group_s(C[np.ix_(R, R)], blocks, conditional=CR, n_copies=K, sdp=use_sdp)
            self.solver_ = None if res is None else res.solver
        seed = self.random_state
        if seed is not None and not isinstance(seed, numbers.Integral):  # a RandomState: an int from it
            from sklearn.utils import check_random_state

            seed = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
        seeds = np.random.SeedSequence(seed).spawn(self.n_draws)  # one independent stream per draw
        draw = _Draw(self.selector, X, y, S if grouped else np.diag(S).copy(), C, mu, sd, self.params, task,
                     units, K)
        Wu = np.array(parallel_map(draw, seeds, n_jobs=self.n_jobs)).reshape(self.n_draws, G)
        member = np.empty(p, dtype=int)  # each kept column's unit
        for u, (g, _) in enumerate(units):
            member[g] = u
        Ws = np.zeros((self.n_draws, n_all))
        Ws[:, keep] = Wu[:, member]
        self.method_ = method
        self.covariance_estimator_ = rule
        self.correlation_ = np.eye(n_all)  # a constant column: as an independent feature, with s_j = 0
        self.correlation_[np.ix_(keep, keep)] = C
        self.s_matrix_ = np.zeros((n_all, n_all))
        self.s_matrix_[np.ix_(keep, keep)] = S
        self.s_ = np.diag(self.s_matrix_).copy()
        self.collinear_ = keep[collinear]
        self.s_method_ = "sdp" if use_sdp else "equicorrelated"
        self.n_copies_ = K
        self.draw_statistics_ = Ws
        if self.n_draws == 1:
            W = Wu[0]
            T = knockoff_threshold(W, q, n_copies=K)
            unit_stat, chosen, self.threshold_ = W, W >= T, T
            self.e_values_ = None
        else:
            # e-values over the G units the filter tests, then e-BH (a constant column: e = 0, not selected)
            E = [draw_e_values(W, q, n_copies=K, threshold=self.draw_threshold) for W in Wu]
            unit_stat = np.mean(E, axis=0)
            chosen, self.threshold_ = e_bh(unit_stat, q)
        self.statistics_ = np.zeros(n_all)
        self.statistics_[keep] = unit_stat[member]
        if self.n_draws > 1:
            self.e_values_ = self.statistics_
        self.support_ = np.zeros(n_all, dtype=bool)
        for u in np.flatnonzero(chosen):
            if units[u][0].size == 1:
                self.support_[keep[units[u][0]]] = True
        self.clusters_ = [keep[g] for g, _ in units]
        self.cluster_statistics_ = unit_stat
        picked = [u for u in np.flatnonzero(chosen) if units[u][0].size > 1]
        self.groups_ = [keep[units[u][0]].tolist() for u in picked]
        self.group_statistics_ = unit_stat[picked]
        self.n_units_ = G
        k_min = min_selections(q, n_copies=K)
        # e-BH with knockoff+ e-values: every e-value is 0 unless a draw's knockoff+ at alpha_kn selects
        # ceil(1 / (K alpha_kn)) units
        k_draw = min_selections(DRAW_FDR_RATIO * q, n_copies=K)
        by_knockoff_plus = self.n_draws > 1 and self.draw_threshold == "knockoff+"
        k_any = max(k_min, k_draw) if by_knockoff_plus else k_min
        if G < k_any or (2 * k_min > G and not chosen.any()):
            how = ("knockoff+" if self.n_draws == 1 else
                   f"e-BH on the e-values of {self.n_draws} draws" +
                   (f" (each draw's knockoff+ at level {DRAW_FDR_RATIO * q:g} needs {k_draw})"
                    if by_knockoff_plus else ""))
            if K > 1:
                how += f" with {K} knockoff copies"
            bound = "ceil(1 / fdr)" if K == 1 else "ceil(1 / (n_copies fdr))"
            top = "p" if K == 1 else "n_copies p"
            more = "" if K > 1 else ", draw several knockoff copies (n_copies)"
            what = "features" if not grouped else "units"
            have = (f"{G} feature(s)" if not grouped else
                    f"{G} units (groups of correlated features and lone features)")
            warnings.warn(f"KnockoffFilter: at fdr={q:g} {how} cannot select fewer than {k_min} {what} "
                          f"({bound}: knockoff+ counts one false discovery more than its negative "
                          f"statistics show, and no e-value exceeds {top}); with {have} "
                          + ("nothing can be selected" if G < k_any else
                             f"it selects {k_min} or more of the {G} or nothing, and selected nothing")
                          + f". Raise fdr{more}, or use stability selection, which bounds the expected number "
                          "of false selections instead.", UserWarning, stacklevel=2)
        return self
