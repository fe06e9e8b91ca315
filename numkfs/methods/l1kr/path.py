"""The public path function of L1KR, :func:`l1kr_path`: its checks, then
the tracker (:mod:`numkfs.methods.l1kr.tracker`), read at a grid of budgets D
when one is asked for (:mod:`numkfs.methods.l1kr.grid`)."""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..._threads import limit_threads, thread_limits
from ..._constraints import BOOL, CALLBACK, Interval, NoneOr, Options, Satisfies, _is_real_vector, declares
from ..._validation import check_memory, check_X_y
from ...kernels.ard import canonical_kernel
from ...paths import FeaturePath
from .grid import _event_grid, _read_grid
from .system import FINITE_POSITIVE, L1KR_KERNELS, PRUNE_TOL
from .tracker import _l1kr_trace

#: ``fix`` options of :func:`l1kr_path`, with the tracker's code of each.
FIX_OPTIONS = {"lambda1": "lambda", "norm_bound": "C"}

def _is_budget_grid(value) -> bool:
    return _is_real_vector(value) and bool(np.all(np.asarray(value, dtype=float) >= 0))


#: :func:`l1kr_path`'s constraints; the grid first: a CV estimator's ``D_max`` is read off the grid.
_PATH_CONSTRAINTS = {
    "grid": [NoneOr, Satisfies(_is_budget_grid, "a non-empty 1-D array-like of finite budgets >= 0")],
    "kernel": [Options(L1KR_KERNELS)],
    "degree": [Interval(Integral, 1, None)],
    "fix": [Options(list(FIX_OPTIONS))],
    "lambda1": [FINITE_POSITIVE],
    "norm_bound": [FINITE_POSITIVE],
    "gradient_tol": [Interval(Real, 0, 1, closed="neither")],
    "D_max": [Interval(Real, 0, None, closed="neither"), NoneOr],
    "max_iter": [Interval(Integral, 1, None)],
    "tol": [FINITE_POSITIVE],
    "h0": [FINITE_POSITIVE, NoneOr],
    "integrator": [Options(["pc", "RK45", "RK23", "DOP853", "LSODA"])],
    "max_angle": [Interval(Real, 0, 1.5, closed="neither")],
    "tangent": [Options(["lu", "qr"])],
    "n_threads": [Interval(Integral, 1, None), NoneOr],
    "verbose": BOOL,
    "n_grid": [Interval(Integral, 2, None, closed="left"), NoneOr],
    "prune_tol": [Interval(Real, 0, None, closed="left")],
    "stop": CALLBACK,
    "keep": CALLBACK,
    "resume": [NoneOr, Satisfies(lambda v: isinstance(v, FeaturePath) and "trace" in v.extra,
                                 "a path returned by l1kr_path(grid=...)")],
}


@declares(_PATH_CONSTRAINTS, data=("X", "y", "feature_names", "true_support"))
def l1kr_path(
    X,
    y,
    kernel: str = "rbf",
    *,
    degree: int = 2,
    fix: str = "lambda1",
    lambda1: float = 1e-3,
    norm_bound: float = 1.0,
    gradient_tol: float = 1e-6,
    D_max: float | None = None,
    max_iter: int = 3000,
    tol: float = 1e-10,
    integrator: str = "pc",
    tangent: str = "lu",
    h0: float | None = None,
    max_angle: float = 0.15,
    grid=None,
    n_grid: int | None = None,
    prune_tol: float = PRUNE_TOL,
    stop=None,
    keep=None,
    resume=None,
    n_threads: int | None = None,
    feature_names=None,
    true_support=None,
    verbose: bool = False,
) -> FeaturePath:
    r"""Trace the L1KR feature-selection path from β = 0 (and read it at a
    grid of budgets D).

    .. math::

        \min_{\alpha, \beta \ge 0} \|y - K(\beta)\alpha - \alpha_0 1\|^2
        + \lambda_1(\alpha^\top K(\beta)\alpha - C)
        \quad\text{s.t.}\quad \|\beta\|_1 \le D

    with the norm bound C fixed and λ₁ its multiplier (``fix="norm_bound"``,
    the paper), or the ridge penalty λ₁ fixed (``fix="lambda1"``).  See the
    module docstring for the algorithm.

    Without ``grid`` and ``n_grid`` the traced path is returned, one point
    per continuation step.  With either, the path is read at a grid of
    budgets D (β interpolated along it with :func:`l1kr_path_at`, the model
    at each point pruned with :func:`l1kr_prune`):

    * ``grid``: the given budgets; the path is traced to ``D_max`` (default:
      the grid's largest value).
    * ``n_grid``: the default grid, which follows the events of the path
      (the D where a feature enters or leaves): D = 0 and the D of the events,
      except an event whose neighbours' supports differ by no more than
      :func:`~numkfs.model_selection.support_jump` allows; between them points
      spaced geometrically, at most ``n_grid / 10`` per decade of D (ratio
      ``10^(10 / n_grid)``), and two below the first event; where the pruned
      models of two consecutive points still differ in support by more than
      that, points inserted in between (halving the interval in log D, up to
      ``REFINE_DEPTH`` times).  The path is traced in stages (budgets
      ``FIRST_STAGE_D · n`` times ``STAGE_GROWTH`` to the power k, resumed
      where it stopped) to its stationary point or ``D_max``, or until
      ``stop`` says so.  The grid then holds at most ``n_grid`` points:
      where more were read, points merge (``keep``'s, D = 0 and the last one
      are kept; of the others first those whose neighbours stay within the
      support step above, then those in the densest stretch of log D).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one row per sample and one column per feature.
    y : array-like of shape (n_samples,)
        Target values: the response, or the class labels of a classifier.
    kernel : {"rbf", "poly"}
        ARD Gaussian (``"rbf"``; ``"gaussian"``, the paper's name, is an
        alias) or normalised ARD polynomial kernel.
    degree : int
        Degree of the polynomial kernel.
    fix : {"lambda1", "norm_bound"}
        Which of λ₁ (ridge penalty) and C (RKHS-norm bound) is held fixed.
    lambda1 : float
        The ridge penalty when ``fix="lambda1"`` (for unit-norm centred y).
    norm_bound : float
        The bound C on αᵀKα when ``fix="norm_bound"``, in units of
        ``||y - ȳ||²``.
    gradient_tol : float
        Stop when the projected gradient ``max_i |∂L/∂β_i| = λη`` falls below
        ``gradient_tol`` (the loss is that of the unit-norm centred y; the
        paper's ε = 1e-3 on Friedman #1's raw y is about 2e-7 on this scale).
    D_max : float, optional
        Stop when ``||β||₁`` reaches ``D_max`` (the path may turn back in D
        before that).
    max_iter : int
        Budget of accepted continuation steps.
    tol : float
        KKT residual (max-norm of the equations) required at every stored
        point, or their rounding floor where that is larger: ``√n ε`` times
        the magnitude of each equation's terms (``|K||α| + λ|α| + |y|`` for
        ``(HK + λI)α = y``), which grows like ``1/λ`` (about 1e-7 at
        λ = 1e-6 on 442 rows).
    integrator : {"pc", "RK45", "RK23", "DOP853", "LSODA"}
        Predictor–corrector continuation (default) or a
        ``scipy.integrate.solve_ivp`` method on the tangent ODE.
    tangent : {"lu", "qr"}
        How the null vector of the Jacobian and the Newton steps are
        computed: QR of Jᵀ (the paper) or one LU of the bordered Jacobian
        (same vector, cheaper).
    h0 : float, optional
        First arc-length step (finite and > 0); default ``1e-2 (1 + ||z0||)``.
    max_angle : float
        Largest angle (radians) between consecutive tangents in an accepted
        step; the step length is adapted towards a third of it.
    grid : array-like of shape (n_points,), optional
        Budgets ``||β||₁ >= 0`` to read the path at, as given.
    n_grid : int, optional
        Read the path at the default grid (above), of at most ``n_grid``
        points (>= 2).  Ignored with ``grid``.
    prune_tol : float, default=1e-3
        With ``grid`` or ``n_grid``: the model at each grid point drops the
        features it does not need (:func:`l1kr_prune`: together they lower
        the ridge objective by less than ``prune_tol`` of ``Σ (y - ȳ)²``);
        0 keeps every feature with β > 0.
    stop : callable, optional
        With ``n_grid``: called after each stage of tracing as
        ``stop(grid, reach)`` (the grid so far and the largest D reached);
        a true value ends the tracing there (e.g. early stopping of a
        cross-validation, :class:`~numkfs.L1KRRegressorCV`).
    keep : callable, optional
        With ``n_grid``: ``keep(grid, weights)`` gives the indices of grid
        points that merging must keep (e.g. the points a CV rule chooses).
    resume : FeaturePath, optional
        With ``grid``: a path this function returned with ``grid`` on the
        same data and parameters; its trace is continued to the new
        ``D_max`` (instead of traced again from β = 0) and only the grid
        points it did not read are read (all of them where the path turned
        back below the D it had reached), ``extra["read"]`` saying which.
    n_threads : int, optional
        Threads for Numba and BLAS inside the tracker.  Default: numkfs's
        thread policy (:mod:`numkfs._threads`), 1 when n < 1000: at n = 200
        the per-call work is too small for threads, and on a loaded machine
        a threaded QR waits for the BLAS threads.
    feature_names, true_support : optional
        Passed to the :class:`~numkfs.paths.FeaturePath`.
    verbose : bool
        Report each event (through :func:`numkfs._progress.report`: standard
        error and the ``numkfs`` logger by default).

    Returns
    -------
    FeaturePath
        ``grid`` is D = ||β||₁ (not monotone when the path turns back),
        ``weights`` the β (on the standardised columns), ``objective`` the
        training loss ``||y - Kα - α0||²`` of the unit-norm y (plus
        ``λαᵀKα`` when λ is fixed).  ``extra`` holds per point
        ``arc_length``, ``lambda``, ``C`` (= αᵀKα), ``max_gradient``
        (λη), ``n_active``, ``event`` (codes in ``EVENT_NAMES``),
        ``alpha`` (n_points, n), ``active`` (list of index arrays); scalars
        ``n_jacobian_evals``, ``time``, ``time_per_jacobian``, ``n_steps``,
        ``n_rejected``; the list ``events`` of (index, name, feature); and
        the standardisation (``X_train``, ``y_train``, ``x_mean``, ``x_scale``,
        ``y_mean``, ``y_scale``, ``kernel``, ``degree``, ``fix``, the tracker's
        ``lam_fixed`` and ``C_fixed``).
        ``converged`` (also ``extra["converged"]``) is False at a point
        whose KKT residual could not be brought below ``tol`` and at the
        last point when the path stopped at a limit (``max_iter``, step
        underflow, singular Jacobian; ``extra["finished"]`` says which).
        β is exactly 0 for the features not on the active set (``tol`` 0);
        :func:`l1kr_prune` removes the ones the model does not need.

        With ``grid`` or ``n_grid``, the path read at the grid: ``grid`` the
        budgets D (increasing), ``weights`` β of the pruned model at each,
        and ``extra`` ``lambda`` (λ at each point), ``converged`` (per point:
        the traced path reached it, between points that satisfy the KKT
        system to ``tol``), ``full_path`` (the traced path, as far as it was
        traced), ``stopped_early`` (``stop`` ended the tracing), ``used``
        (the traced points each D was read between), ``user_grid``,
        ``prune_tol`` and the standardisation as above; with ``grid`` also
        ``trace`` (for ``resume``) and ``read``.

    Warns
    -----
    ConvergenceWarning
        The path stopped at ``max_iter``, the continuation step underflowed,
        or an event point could not be solved to ``tol`` (naming the point).
    PathDegeneracyWarning
        The KKT Jacobian became singular, or every feature left.

    References
    ----------
    F. Li and C. Sminchisescu, "The feature selection path in kernel
    methods", AISTATS 2010.

    Examples
    --------
    >>> from numkfs import l1kr_path
    >>> from numkfs.datasets import make_friedman_noise
    >>> X, y, _ = make_friedman_noise(1, n_samples=60, random_state=0)
    >>> path = l1kr_path(X, y, D_max=30.0)
    >>> path.extra["events"][0][1]
    'start'
    >>> bool(path.converged.all()), path.extra["finished"]
    (True, 'D_max')
    >>> gp = l1kr_path(X, y, D_max=30.0, grid=[0.0, 10.0, 30.0])
    >>> gp.grid.tolist(), gp.weights.shape
    ([0.0, 10.0, 30.0], (3, 10))
    """
    if grid is not None:
        grid = np.asarray(grid, dtype=float)
    args, limits = _path_arguments(X, y, kernel, degree, fix, lambda1, norm_bound, gradient_tol, D_max, max_iter,
                                   tol, integrator, tangent, h0, max_angle, n_threads, feature_names, true_support,
                                   verbose)
    if grid is None and n_grid is None:
        with limit_threads(*limits):
            return _l1kr_path(*args)
    if grid is not None:
        return _read_grid(args, limits, grid, D_max, prune_tol, resume)
    return _event_grid(args, limits, D_max, args[0].shape[0], n_grid, prune_tol, stop, keep)


def _path_arguments(X, y, kernel, degree, fix, lambda1, norm_bound, gradient_tol, D_max, max_iter, tol, integrator,
                    tangent, h0, max_angle, n_threads, feature_names, true_support, verbose):
    """:func:`l1kr_path`'s checks: the arguments of :func:`_l1kr_trace` and
    the thread limits to trace under."""
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    X, y = check_X_y(X, y, caller="l1kr_path")
    n = X.shape[0]
    # K, the Jacobian's n x n block and its factorisation live at once
    check_memory(3 * 8.0 * n * n, f"The {n} x {n} kernel matrices of l1kr_path")
    kernel = canonical_kernel(kernel)
    limits = thread_limits("l1kr", n) if n_threads is None else (n_threads, n_threads)
    return (X, y, kernel, degree, FIX_OPTIONS[fix], lambda1, norm_bound, gradient_tol, D_max, max_iter, tol, integrator,
            tangent, h0, max_angle, feature_names, true_support, verbose), limits


def _l1kr_path(*args):
    """The path of :func:`l1kr_path` after its checks (the first path
    :func:`_l1kr_trace` yields)."""
    return next(_l1kr_trace(*args))
