"""The public path function of L1KR, :func:`l1kr_path`: its checks, then
the tracker (:mod:`numkfs.methods.l1kr.tracker`)."""
from __future__ import annotations

from numbers import Integral, Real

from ..._threads import limit_threads, thread_limits
from ..._validation import Interval, NoneOr, Options, check_memory, check_X_y, validate_params
from ...kernels.ard import canonical_kernel
from ...paths import FeaturePath
from .system import FINITE_POSITIVE, L1KR_KERNELS, _renamed_eps
from .tracker import _l1kr_trace


def l1kr_path(
    X,
    y,
    kernel: str = "rbf",
    *,
    degree: int = 2,
    fix: str = "lambda",
    lam: float = 1e-3,
    C: float = 1.0,
    gradient_tol: float = 1e-6,
    eps: float | None = None,
    D_max: float | None = None,
    max_steps: int = 3000,
    tol: float = 1e-10,
    integrator: str = "pc",
    tangent: str = "lu",
    h0: float | None = None,
    max_angle: float = 0.15,
    n_threads: int | None = None,
    feature_names=None,
    true_support=None,
    verbose: bool = False,
) -> FeaturePath:
    r"""Trace the L1KR feature-selection path from β = 0.

    .. math::

        \min_{\alpha, \beta \ge 0} \|y - K(\beta)\alpha - \alpha_0 1\|^2
        + \lambda(\alpha^\top K(\beta)\alpha - C)
        \quad\text{s.t.}\quad \|\beta\|_1 \le D

    with C fixed and λ its multiplier (``fix="C"``, the paper), or λ fixed
    (``fix="lambda"``).  See the module docstring for the algorithm.

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
    fix : {"lambda", "C"}
        Which of λ (ridge penalty) and C (RKHS-norm bound) is held fixed.
    lam : float
        The ridge penalty when ``fix="lambda"`` (for unit-norm centred y).
    C : float
        The bound on αᵀKα when ``fix="C"``, in units of ``||y - ȳ||²``.
    gradient_tol : float
        Stop when the projected gradient ``max_i |∂L/∂β_i| = λη`` falls below
        ``gradient_tol`` (the loss is that of the unit-norm centred y; the
        paper's ε = 1e-3 on Friedman #1's raw y is about 2e-7 on this scale).
    eps : float, optional
        Deprecated name of ``gradient_tol`` (``eps`` means other things
        elsewhere in numkfs); accepted with a ``FutureWarning`` until the
        next release.
    D_max : float, optional
        Stop when ``||β||₁`` reaches ``D_max`` (the path may turn back in D
        before that).
    max_steps : int
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
    n_threads : int, optional
        Threads for Numba and BLAS inside the tracker.  Default: numkfs's
        thread policy (:mod:`numkfs._threads`), 1 when n < 1000: at n = 200
        the per-call work is too small for threads and on a loaded machine
        threaded BLAS made the QR 100x slower (benchmark).
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
        ``y_mean``, ``y_scale``, ``kernel``, ``degree``, ``fix``).
        ``converged`` (also ``extra["converged"]``) is False at a point
        whose KKT residual could not be brought below ``tol`` and at the
        last point when the path stopped at a limit (``max_steps``, step
        underflow, singular Jacobian; ``extra["finished"]`` says which).
        β is exactly 0 for the features not on the active set (``tol`` 0);
        :func:`l1kr_prune` removes the ones the model does not need.

    Warns
    -----
    ConvergenceWarning
        The path stopped at ``max_steps``, the continuation step underflowed,
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
    """
    args, limits = _path_arguments(X, y, kernel, degree, fix, lam, C, gradient_tol, eps, D_max, max_steps, tol,
                                   integrator, tangent, h0, max_angle, n_threads, feature_names, true_support, verbose)
    with limit_threads(*limits):
        return _l1kr_path(*args)


def _path_arguments(X, y, kernel, degree, fix, lam, C, gradient_tol, eps, D_max, max_steps, tol, integrator, tangent,
                    h0, max_angle, n_threads, feature_names, true_support, verbose):
    """:func:`l1kr_path`'s checks: the arguments of :func:`_l1kr_trace` and
    the thread limits to trace under."""
    if feature_names is None and hasattr(X, "columns"):
        feature_names = [str(c) for c in X.columns]
    X, y = check_X_y(X, y, caller="l1kr_path")
    gradient_tol = _renamed_eps(gradient_tol, eps, "l1kr_path")
    n = X.shape[0]
    # K, the Jacobian's n x n block and its factorisation live at once
    check_memory(3 * 8.0 * n * n, f"The {n} x {n} kernel matrices of l1kr_path")
    validate_params(
        dict(kernel=kernel, degree=degree, fix=fix, lam=lam, C=C, gradient_tol=gradient_tol, D_max=D_max,
             max_steps=max_steps, tol=tol, integrator=integrator, max_angle=max_angle, tangent=tangent,
             n_threads=n_threads, h0=h0),
        {
            "kernel": [Options(L1KR_KERNELS)],
            "degree": [Interval(Integral, 1, None)],
            "fix": [Options(["lambda", "C"])],
            "lam": [FINITE_POSITIVE],
            "C": [FINITE_POSITIVE],
            "gradient_tol": [Interval(Real, 0, 1, closed="neither")],
            "D_max": [Interval(Real, 0, None, closed="neither"), NoneOr],
            "max_steps": [Interval(Integral, 1, None)],
            "tol": [FINITE_POSITIVE],
            "h0": [FINITE_POSITIVE, NoneOr],
            "integrator": [Options(["pc", "RK45", "RK23", "DOP853", "LSODA"])],
            "max_angle": [Interval(Real, 0, 1.5, closed="neither")],
            "tangent": [Options(["lu", "qr"])],
            "n_threads": [Interval(Integral, 1, None), NoneOr],
        },
        "l1kr_path",
    )
    kernel = canonical_kernel(kernel)
    limits = thread_limits("l1kr", n) if n_threads is None else (n_threads, n_threads)
    return (X, y, kernel, degree, fix, lam, C, gradient_tol, D_max, max_steps, tol, integrator, tangent, h0, max_angle,
            feature_names, true_support, verbose), limits


def _l1kr_path(*args):
    """The path of :func:`l1kr_path` after its checks (the first path
    :func:`_l1kr_trace` yields)."""
    return next(_l1kr_trace(*args))
