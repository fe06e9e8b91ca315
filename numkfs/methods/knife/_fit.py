"""KNIFE at one (λ1, λ2): :func:`knife` and its result (:mod:`numkfs.methods.knife`)."""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
from dataclasses import dataclass, field

import numpy as np

from ..._threads import method_threads
from ..._constraints import declares
from ..._validation import check_random_state, warn_not_converged
from ...kernels.weighted import weight_gradient_matrix, weighted_kernel
from ...losses import get_loss
from ...model_selection import parallel_map
from ._input import _prepare
from ._predict import knife_decision_function
from ._problem import AUTO_GAMMA_ROUND_TOL, AUTO_GAMMA_ROUNDS, KNIFE_CONSTRAINTS



# --------------------------------------------------------------------------
# results


@dataclass
class KNIFEResult:
    """The outcome of :func:`knife`.

    Attributes
    ----------
    weights : ndarray (p,)
        Feature weights w in [0, 1].
    alpha : ndarray (n,)
        Kernel coefficients.
    intercept : float
        α0 (0 for regression).
    objective : float
        f(α, w) at the returned point.
    objective_history : ndarray
        f after every α-step and w-step of the best start (non-increasing).
    n_iter : int
        Outer iterations of the best start.
    converged : bool
    restart_objectives : ndarray
        Final objective of every start (the best one is returned).
    classes : ndarray or None
        Original labels for classification (``classes[1]`` is +1).
    params : dict
        kernel, gamma, degree, coef0, loss, lambda1, lambda2, delta.
    X_fit : ndarray
        The training data (needed to predict).
    """

    weights: np.ndarray
    alpha: np.ndarray
    intercept: float
    objective: float
    objective_history: np.ndarray
    n_iter: int
    converged: bool
    restart_objectives: np.ndarray
    classes: np.ndarray | None
    params: dict
    X_fit: np.ndarray = field(repr=False)
    n_line_searches: int = 0

    def decision_function(self, X):
        """:math:`K_w(X, X_{fit})\\alpha + \\alpha_0` for new points."""
        return knife_decision_function(self.X_fit, X, self.weights, self.alpha, self.intercept, self.params)

    def predict(self, X):
        d = self.decision_function(X)
        if self.classes is None:
            return d
        return np.where(d > 0, self.classes[1], self.classes[0])

def knife_objective(X, y, w, alpha, intercept=0.0, *, kernel="rbf", loss="squared", lambda1=1.0,
                    lambda2=0.0, gamma=None, degree=2, coef0=1.0, delta=1.0) -> float:
    """The KNIFE objective f(α, w) (for checks; y in ±1 for classification)."""
    X = np.asarray(X, dtype=float)
    gamma = 1.0 / X.shape[1] if gamma is None else gamma
    w = np.asarray(w, dtype=float)
    K = weighted_kernel(X, w, kernel, gamma=gamma, degree=degree, coef0=coef0)
    Ka = K @ alpha
    L = get_loss(loss, delta=delta)
    return L.value(np.asarray(y, float), Ka + intercept) + lambda1 * float(alpha @ Ka) + lambda2 * float(w.sum())


def knife_gradient_w(X, y, w, alpha, intercept=0.0, *, kernel="rbf", loss="squared", lambda1=1.0,
                     lambda2=0.0, gamma=None, degree=2, coef0=1.0, delta=1.0) -> np.ndarray:
    r"""Gradient of f in w: :math:`A^\top \ell'(u) + \lambda_1 A^\top\alpha + \lambda_2`."""
    X = np.asarray(X, dtype=float)
    gamma = 1.0 / X.shape[1] if gamma is None else gamma
    w = np.asarray(w, dtype=float)
    K = weighted_kernel(X, w, kernel, gamma=gamma, degree=degree, coef0=coef0)
    A = weight_gradient_matrix(X, w, alpha, K, kernel, gamma=gamma, degree=degree, coef0=coef0)
    L = get_loss(loss, delta=delta)
    u = K @ alpha + intercept
    return A.T @ L.gradient(np.asarray(y, float), u) + lambda1 * (A.T @ alpha) + lambda2




#: The first start's weight of every feature when no ``w0`` is given: 1, the unweighted kernel
#: (every feature in).  A zero weight stays zero, so a random first start can lose a true
#: feature for good at λ2 = 0.  None: a uniform random first start (the paper's; kept for tests).
START_WEIGHT = 1.0


def _starts(rng, p, const, n_restarts, w0):
    """The starting weights: ``w0`` if given, else w = :data:`START_WEIGHT`;
    then uniform random starts up to ``n_restarts``."""
    if w0 is None and START_WEIGHT is not None:
        w0 = np.full(p, START_WEIGHT)
    starts = []
    if w0 is not None:
        w0 = np.broadcast_to(np.asarray(w0, dtype=float), (p,)).copy()
        if np.any((w0 < 0) | (w0 > 1)) or not np.all(np.isfinite(w0)):
            raise ValueError("KNIFE: w0 must lie in [0, 1].")
        starts.append(w0)
    while len(starts) < n_restarts:
        starts.append(rng.uniform(0.0, 1.0, p))
    for s in starts:
        s[const] = 0.0
    return starts


class _FitFrom:
    """``model.fit(start, ...)`` as a picklable callable (for joblib workers)."""

    def __init__(self, model, lambda2, max_iter, tol):
        self.model, self.lambda2, self.max_iter, self.tol = model, lambda2, max_iter, tol

    def __call__(self, start):
        return self.model.fit(start, self.lambda2, max_iter=self.max_iter, tol=self.tol)


#: ``gamma="auto"``: once the rounds of :func:`_best_start` have moved the scale, fit once more from
#: the first start at the scale they settled on, and go on from the union of both fits' weights
#: (False: the rounds alone, which tests and benchmarks/knife_friedman105.py compare against).
AUTO_GAMMA_RESTART = True


def _auto_rounds(model, st, lambda2, max_iter, tol):
    """``st`` refitted, warm-started, with the scale of its selected features until that scale no longer
    changes (``gamma="auto"``; ``st`` itself otherwise).

    A round that moves the scale fits to the looser tolerance ``max(tol, AUTO_GAMMA_ROUND_TOL)``:
    its point only starts the next round (the scale grows by at most ``AUTO_GAMMA_GROWTH`` a
    round, and a fit at ``tol`` at every intermediate scale costs as much as the one that counts).
    Once the scale settles under such a fit, the fit at ``tol`` follows at that scale; the rounds
    go on (loosely again) when its support gives another scale, and end at a fit at ``tol`` whose
    support gives its own scale, or after ``AUTO_GAMMA_ROUNDS`` rounds (then with a fit at
    ``tol`` at the last scale)."""
    if not model.gamma_rule:
        return st
    lambda2 = float(lambda2)
    loose = max(float(tol), AUTO_GAMMA_ROUND_TOL)
    tight = True  # st is fitted at tol
    for _ in range(AUTO_GAMMA_ROUNDS):
        settled = model.gamma_for(st.w, st.gamma) == st.gamma
        if settled and tight:
            return st
        # a new scale: a loose fit there; the scale settled under a loose fit: the fit at tol at it
        st = model.refit(st, lambda2, max_iter=max_iter, tol=tol if settled else loose)
        tight = settled or loose == tol
    if not tight:  # the rounds ran out on a loose fit: the fit at tol at its scale
        model.gamma = st.gamma
        st = model.fit(st.w, lambda2, alpha=st.alpha, a0=st.a0, max_iter=max_iter, tol=tol, K=st.K)
    return st


#: The λ2 = 0 starts fitted so far within :func:`shared_starts` (None outside it).
_SHARED_STARTS = contextvars.ContextVar("knife_shared_starts", default=None)


@contextlib.contextmanager
def shared_starts():
    """Within this context :func:`_best_start` fits each start once: called
    again with the same problem (data, landmarks, kernel, loss, λ1, the
    current scale), the same starts, λ2, ``max_iter``, ``tol`` and
    ``restart``, it returns the state it returned the first time (its
    kernel recomputed, the model's scale set as the fit leaves it), the
    same numbers bit for bit.  The KNIFE CV estimators fit in it: the
    second pass over the low end of the grid walks λ2 = 0 again on every
    fold and on the full data, from the same starts on the same rows.  The
    states are kept without their kernels (a few arrays of n or m values
    each) until the context ends; fits in worker threads started inside it
    share nothing (a thread starts with an empty context)."""
    token = _SHARED_STARTS.set({})
    try:
        yield
    finally:
        _SHARED_STARTS.reset(token)


def _start_key(model, starts, lambda2, max_iter, tol, restart):
    """What :func:`_best_start`'s answer depends on, as a hashable key: digests of the arrays
    (rows, response, landmarks, starts) and the problem's settings."""
    digest = hashlib.blake2b(digest_size=20)
    for a in (model.X, model.y, getattr(model, "landmarks", None), *starts):
        a = np.ascontiguousarray(np.asarray(a if a is not None else []))
        digest.update(repr((a.dtype.str, a.shape)).encode())
        digest.update(a.tobytes())
    loss = model.loss
    settings = (type(model).__name__, type(loss).__name__, repr(sorted(vars(loss).items())), model.kernel,
                model.lambda1, model.gamma, model.gamma_rule, model.degree, model.coef0, repr(model.solver),
                model.kernel_method, model.wstep_tol, model.fast, model.extrapolate, model.y_scale,
                float(lambda2), int(max_iter), float(tol), bool(restart), AUTO_GAMMA_RESTART, AUTO_GAMMA_ROUND_TOL)
    return digest.hexdigest(), repr(settings)


def _best_start(model, starts, lambda2, max_iter, tol, n_jobs=None, restart=True):
    """:func:`_fit_best_start`, fitted once per problem and starts within :func:`shared_starts`."""
    memo = _SHARED_STARTS.get()
    if memo is None:
        return _fit_best_start(model, starts, lambda2, max_iter, tol, n_jobs, restart)
    key = _start_key(model, starts, lambda2, max_iter, tol, restart)
    if key not in memo:
        best, objs = _fit_best_start(model, starts, lambda2, max_iter, tol, n_jobs, restart)
        # K α as the walk from here reads it: the product the fit remembered (None: the walk computes K @ α);
        # looked up without asking for it, which would change what the model remembers
        Ka = next((Ka_c.copy() for K_c, a_c, Ka_c in model._ka_cache
                   if K_c is best.K and np.array_equal(a_c, best.alpha)), None)
        memo[key] = (dataclasses.replace(best, w=best.w.copy(), alpha=best.alpha.copy(), K=None,
                                         history=list(best.history)), list(objs), Ka)
        return best, objs
    kept, objs, Ka = memo[key]
    model.gamma = kept.gamma  # as the fit leaves it
    K = model.kernel_matrix(kept.w, kept.alpha)  # the fit's own kernel form (it remembers its K α too)
    model._ka_cache = [entry for entry in model._ka_cache if entry[0] is not K]
    if Ka is not None:  # else the walk computes K @ α, as it would have
        model.k_alpha(K, kept.alpha, Ka.copy())
    return dataclasses.replace(kept, w=kept.w.copy(), alpha=kept.alpha.copy(), history=list(kept.history),
                               K=K), list(objs)


def _fit_best_start(model, starts, lambda2, max_iter, tol, n_jobs=None, restart=True):
    """Fit from every start (in parallel with ``n_jobs``); return (best state,
    objective of every start).  The first start with the lowest objective
    wins, whatever ``n_jobs`` is.  Under ``gamma="auto"`` the winner is then
    refitted, warm-started, with the scale of its selected features (growing
    by at most ``AUTO_GAMMA_GROWTH`` a round) until the scale no longer
    changes, at most ``AUTO_GAMMA_ROUNDS`` times: the single fit and the
    first point of every path alike.

    When those rounds have moved the scale (:data:`AUTO_GAMMA_RESTART`), the
    first start is fitted once more at the scale they settled on, then the
    fit from the larger of the two weights of every feature (that rounds'
    result and this fit) goes on through the rounds.  A zero weight is
    sticky: a feature the wide kernel of the first scale switched off (the
    U-shaped x2 of Friedman #1 among 100 noise features, which pays only in
    a narrow kernel) never comes back in the warm-started rounds; the fresh
    fit at the narrow scale keeps it, and the union keeps too the features
    only the wide kernel found (two weak informative features of
    ``make_classification``, which a fresh fit at the narrow scale alone
    drops; ``benchmarks/knife_friedman105.py`` compares both).
    ``restart=False`` skips it (one-vs-rest problems, :func:`~numkfs.methods.knife.knife_ovr_paths`:
    there it costs a share of the fit for a change of one or two features at λ2 = 0)."""
    gamma0 = model.gamma
    states = parallel_map(_FitFrom(model, lambda2, max_iter, tol), starts, n_jobs)
    objs = [st.objective for st in states]
    best = _auto_rounds(model, states[int(np.argmin(objs))], lambda2, max_iter, tol)
    if model.gamma_rule and AUTO_GAMMA_RESTART and restart and best.gamma != gamma0:
        model.gamma = best.gamma
        fresh = model.fit(starts[0], lambda2, max_iter=max_iter, tol=tol)
        union = model.fit(np.maximum(best.w, fresh.w), lambda2, max_iter=max_iter, tol=tol)
        best = _auto_rounds(model, union, lambda2, max_iter, tol)
    return best, objs


@declares(KNIFE_CONSTRAINTS, data=("X", "y", "w0"))
def knife(
    X,
    y,
    *,
    kernel: str = "rbf",
    loss: str = "squared",
    lambda1: float = 1.0,
    lambda2: float = 0.0,
    gamma: float | None = None,
    degree: int = 2,
    coef0: float = 1.0,
    delta: float = 1.0,
    n_restarts: int = 1,
    solver="auto",
    max_iter: int = 100,
    tol: float = 1e-6,
    w0=None,
    random_state=None,
    n_jobs=None,
    approximation: str = "exact",
    n_components: int | None = None,
) -> KNIFEResult:
    r"""Fit KNIFE at one :math:`(\lambda_1, \lambda_2)`.

    .. math::

        \min_{\alpha, \alpha_0, 0 \le w \le 1} L(y, K_w\alpha + \alpha_0)
        + \lambda_1 \alpha^\top K_w\alpha + \lambda_2 \textstyle\sum_j w_j

    Parameters
    ----------
    X : array (n, p)
        Data; the paper assumes standardised columns (the estimators
        standardise, this function uses X as given).
    y : array (n,)
        Response (regression) or two class labels (classification losses).
    kernel : {"rbf", "linear", "poly"}
    loss : {"squared", "squared_hinge", "huberized_hinge", "logistic"}
    lambda1 : float > 0
        Ridge penalty on α (paper default 1 for summed losses).
    lambda2 : float >= 0
        L1 penalty on the weights.
    gamma : float, "auto" or None
        RBF scale; None: 1/p (p every column of X).  ``"auto"``: the scale
        of the selected features: after the fit at 1/p, refit warm-started
        with 1 / (number of selected features) (growing by at most
        :data:`AUTO_GAMMA_GROWTH` per refit), at most
        :data:`AUTO_GAMMA_ROUNDS` times, until it no longer changes (the
        refits that move the scale to the looser relative tolerance
        :data:`AUTO_GAMMA_ROUND_TOL`, the last one to ``tol``); when
        the scale moved, the first start is fitted once more at that scale
        and the refits go on from the larger of the two fits' weights of
        every feature (a feature the wide kernel at 1/p switched off comes
        back where the narrow one keeps it); the scale used is
        ``params["gamma"]`` of the result.
    degree, coef0 : int, float
        Polynomial kernel :math:`(\sum_j w_j^2 x_j x'_j + c)^d`.
    delta : float
        Width of the huberized hinge.
    n_restarts : int
        Number of starts: the first is ``w0`` if given, else w = 1 (the
        unweighted kernel, every feature in); the others are random,
        :math:`w^{(0)} \sim U(0, 1)^p`.  The lowest objective wins.
    solver : "auto", "native", "ECOS", "SCS", "CLARABEL" or a list
        Weight-step solver; "auto" is the native Numba solver (with a conic
        fall-back when it is not accurate).
    max_iter, tol : int, float
        Outer iterations; stop when an iteration decreases f by less than
        ``tol * max(1, |f|)``.
    w0 : array (p,), optional
        A starting point in [0, 1] (used as the first start).
    random_state : int, Generator or None
        Seed or generator for everything random; an int makes the result reproducible.
    n_jobs : int, optional
        joblib workers over the random starts (results do not depend on it).
    approximation : {"exact", "nystroem", "auto"}, default="exact"
        ``"exact"``: the n x n weighted kernel.  ``"nystroem"``: the
        weighted kernel through ``n_components`` landmark rows drawn
        uniformly with ``random_state``, the weights inside both kernel
        blocks (:mod:`numkfs.methods.knife._nystroem`; O(n m) memory, no
        n x n array); ``alpha`` then has one coefficient per landmark and
        ``params["landmarks"]`` holds their rows.  ``"auto"``: exact up to
        :data:`~numkfs.methods.knife.AUTO_EXACT_MAX_SAMPLES` rows.
        The choice made is ``params["approximation"]``.
    n_components : int, optional
        Number of landmarks m, 1 <= m <= n; default
        :func:`~numkfs.methods.knife.default_n_components` (n / 40, at least
        100 and one per feature or all rows, at most 500).

    Returns
    -------
    KNIFEResult

    References
    ----------
    G. I. Allen, "Automatic feature selection via weighted kernels and
    regularization", Journal of Computational and Graphical Statistics
    22(2):284-299, 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from numkfs.datasets import make_sinusoid
    >>> from numkfs.methods.knife import knife
    >>> X, y, support = make_sinusoid(n_samples=60, random_state=0)
    >>> res = knife(X, y, lambda2=20.0, random_state=0)
    >>> bool(np.all(np.diff(res.objective_history) <= 1e-9 * abs(res.objective)))
    True
    """
    caller = "knife"
    params = dict(kernel=kernel, loss=loss, lambda1=lambda1, lambda2=lambda2, gamma=gamma, degree=degree,
                  coef0=coef0, delta=delta, n_restarts=n_restarts, max_iter=max_iter, tol=tol, solver=solver,
                  approximation=approximation, n_components=n_components, random_state=random_state)
    X, y_pm, classes, const, model, public = _prepare(X, y, params, caller)
    rng = check_random_state(random_state)
    s = model.y_scale  # the problem is solved in units of y's scale (1 for classification)
    with method_threads("knife", X.shape[0], blas_in_threads=False):
        best, objs = _best_start(model, _starts(rng, X.shape[1], const, n_restarts, w0), float(lambda2) / s**2,
                                 max_iter, tol, n_jobs)
    public["gamma"] = best.gamma
    if not best.converged:
        warn_not_converged("KNIFE", max_iter=max_iter, where=f"lambda2={float(lambda2):.4g}")
    public["lambda2"] = float(lambda2)
    return KNIFEResult(weights=best.w, alpha=best.alpha * s, intercept=best.a0 * s, objective=best.objective * s**2,
                       objective_history=np.asarray(best.history) * s**2, n_iter=best.n_iter,
                       converged=best.converged, restart_objectives=np.asarray(objs) * s**2, classes=classes,
                       params=public, X_fit=X, n_line_searches=best.n_line_searches)
