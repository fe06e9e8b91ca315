r"""KNIFE through a Nyström basis, with the feature weights inside the kernel.

With m landmarks :math:`z_1, \dots, z_m` (rows of the training data, chosen
once per fit) the KNIFE problem of :mod:`numkfs.methods.knife` becomes

.. math::

    \min_{\beta, \beta_0, 0 \le w \le 1}\; f(\beta, w) = L\bigl(y, K_{nm}(w)\beta
        + \beta_0\bigr) + \lambda_1 \beta^\top K_{mm}(w)\beta
        + \lambda_2 \textstyle\sum_j w_j ,

the subset-of-regressors form of the weighted kernel: :math:`f = K_{nm}\beta`
is a kernel expansion over the landmarks, and both blocks
:math:`K_{nm}(w) = K_w(X, Z)` and :math:`K_{mm}(w) = K_w(Z, Z)` are
recomputed as the weights move (:mod:`numkfs.kernels.weighted_lowrank`): the
weights stay inside the kernel, this is not a fixed feature map with a
linear model on top.  With every row a landmark (:math:`Z = X`) it *is*
KNIFE: :math:`K_{nm} = K_{mm} = K_w` and :math:`\beta = \alpha` (tested).
The losses are sums, as in KNIFE, so :math:`\lambda_1` keeps its meaning
(no factor n).

The algorithm is KNIFE's, run by the same driver (:class:`_KnifeNystroem`
subclasses :class:`numkfs.methods.knife._problem._Knife`; the fit, line search,
extrapolation, L-BFGS-B finish, restarts, path, top search and CV are
shared):

* β-step, an (m + 1)-dimensional problem: Newton on :math:`(\beta,
  \beta_0)` with the gradient :math:`(K_{nm}^\top \ell' + 2\lambda_1
  K_{mm}\beta,\; 1^\top\ell')` and the Hessian :math:`K_{nm}^\top D K_{nm}
  + 2\lambda_1 K_{mm}` (with the intercept's row and column), D the
  loss's curvature, formed by symmetric rank-k updates over row blocks on
  the rows with :math:`D_i > 0` (O(n m²)); an m x m Cholesky solve (least
  squares if it is singular), Armijo backtracking.  For the squared loss
  one step is the minimiser, :math:`(K_{mn}K_{nm} + \lambda_1 K_{mm})\beta
  = K_{mn} y`.
* w-step: the linearised surrogate of KNIFE with :math:`A_{ik} =
  \partial(K_{nm}\beta)_i/\partial w_k` (n x p, O(n m p) in row blocks)
  and the penalty's derivative :math:`\lambda_1 (A^{mm})^\top\beta`,
  :math:`A^{mm}` the same matrix on the landmarks; the w-step QP is
  KNIFE's (:mod:`numkfs.solvers.native.knife_wstep`).

The β-step forms its Newton matrix rather than running conjugate
gradients: at m = 500 forming it costs about 20 passes over
:math:`K_{nm}` (the rank-k update runs at BLAS speed, a pass is bound by
memory), and with a handful of active features H is so ill-conditioned
(condition numbers up to 1e15 on the sinusoid) that CG needed 10-30
iterations with the Nyström preconditioner :math:`2(n/m)K_{mm}^2 +
2\lambda_1 K_{mm}` (FALKON's) and did not converge in 40 with the last
formed H as preconditioner.

No n x n array exists: memory is O(n m + m² + n p).  The blocks of only
the last :data:`LIVE_KERNELS` weight vectors are held; a fit state keeps a
handle (its w and scale) and the blocks are recomputed if it is needed
again after they were dropped (a path holds one state per point).  A new
:math:`K_{nm}` is written into the array of the handle it displaces (a
fresh n x m allocation's page faults cost more than the rbf kernel at
large n; the values, and so the fits, are the same bit for bit);
:func:`memory_estimate` is what the check before a fit asks for.
"""
from __future__ import annotations

import numbers
import threading

import numpy as np
import scipy.linalg

from ..._threads import limit_threads, thread_limits
from ..._validation import check_memory
from ...kernels.weighted import AUTO_NUMBA_MAX_FEATURES
from ...kernels.weighted_lowrank import lowrank_gram, lowrank_kernels, lowrank_weight_gradient, select_landmarks
from ._problem import _EPS_DECREASE, _Knife

__all__ = ["APPROXIMATIONS", "AUTO_EXACT_MAX_SAMPLES", "AUTO_EXACT_MAX_SAMPLES_CLASSIFICATION",
           "AUTO_EXACT_MAX_SAMPLES_WIDE", "DEFAULT_N_COMPONENTS", "LIVE_KERNELS", "MIN_COMPONENTS",
           "ROWS_PER_COMPONENT", "default_n_components", "knife_model", "memory_estimate", "resolve_approximation"]

#: Values of the ``approximation`` parameter.
APPROXIMATIONS = ("exact", "nystroem", "auto")

#: ``approximation="auto"`` uses the exact kernel up to this many rows and
#: the Nyström basis above, for the squared loss (regression).  An exact
#: α-step factorises the n x n kernel (n³/3 flops), a Nyström one forms an
#: n x m product (n m²): through :func:`default_n_components` landmarks the
#: landmarks win from a few hundred rows; up to this many rows the exact
#: kernel is affordable and is kept, as it has no approximation error
#: (``benchmarks/knife_large.py --auto`` measures both forms).
AUTO_EXACT_MAX_SAMPLES = 800

#: The same for the classification losses: higher, as the landmarks do not
#: make a many-class fit faster enough to pay for a selection not yet
#: measured against the exact one's (see the KNIFE guide).
AUTO_EXACT_MAX_SAMPLES_CLASSIFICATION = 2000

#: ``approximation="auto"`` also keeps the exact kernel up to this many rows
#: (any loss) when the features outnumber the landmarks the rows give
#: (:func:`default_n_components` without ``n_features``).  At w = 1 the kernel
#: holds the features' linear kernel, of rank min(n, p), which m < p landmarks
#: cannot span, so the landmarks can lose a true feature (an interaction
#: pair) at the first fit and never take it back; the exact kernel keeps it.
#: Above this many rows the default takes one landmark per feature instead.
AUTO_EXACT_MAX_SAMPLES_WIDE = 2000

#: The most landmarks :func:`default_n_components` gives (from 20,000 rows on).
DEFAULT_N_COMPONENTS = 500

#: The fewest landmarks :func:`default_n_components` gives (all rows when there are fewer).
MIN_COMPONENTS = 100

#: :func:`default_n_components` gives one landmark per this many rows, between
#: :data:`MIN_COMPONENTS` and :data:`DEFAULT_N_COMPONENTS`.
ROWS_PER_COMPONENT = 40


def default_n_components(n_samples: int, n_features: int | None = None) -> int:
    """Landmarks for ``n_components=None``: one per :data:`ROWS_PER_COMPONENT`
    (40) rows, at least :data:`MIN_COMPONENTS` and, given ``n_features``, at
    least one per feature, at most :data:`DEFAULT_N_COMPONENTS` and the number
    of rows: 100 up to 4,000 rows, 500 from 20,000 (with p <= 100 features).

    A Nyström α-step costs n m² flops, so the landmarks' count sets the price
    of every step of a fit, and a cross-validated path takes thousands of
    steps.  On the simulations of the KNIFE guide 100 landmarks find the true
    features of a few thousand rows as 250 do, at test errors as low, for a
    fraction of the CPU (``benchmarks/knife_large.py --landmarks`` measures
    the counts).  One landmark per feature lets the landmarks span the linear
    part of the kernel at w = 1, of rank min(n, p), as the exact kernel does
    (see :data:`AUTO_EXACT_MAX_SAMPLES_WIDE`).

    Examples
    --------
    >>> from numkfs.methods.knife import default_n_components
    >>> [default_n_components(n) for n in (60, 1000, 4000, 10_000, 20_000)]
    [60, 100, 100, 250, 500]
    >>> default_n_components(4000, n_features=300)
    300
    """
    m = max(MIN_COMPONENTS, min(DEFAULT_N_COMPONENTS, n_samples // ROWS_PER_COMPONENT))
    if n_features is not None:
        m = max(m, min(DEFAULT_N_COMPONENTS, int(n_features)))
    return int(min(n_samples, m))


#: Kernel blocks held in memory at once (a fit's current point, its trial point and one more).
LIVE_KERNELS = 3


def resolve_approximation(approximation, n_samples: int, n_components=None, caller: str = "knife",
                          loss: str = "squared", n_features=None):
    """``(approximation, m)``: "exact" or "nystroem" for ``n_samples`` rows (and ``n_features``
    columns, when given) and the number of landmarks (None for the exact kernel); raises a ValueError
    naming the parameter at fault.  ``"auto"`` is exact up to :data:`AUTO_EXACT_MAX_SAMPLES` rows for
    the squared loss and :data:`AUTO_EXACT_MAX_SAMPLES_CLASSIFICATION` for the others, and up to
    :data:`AUTO_EXACT_MAX_SAMPLES_WIDE` when there are more features than the landmarks the rows give.

    Examples
    --------
    >>> from numkfs.methods.knife import resolve_approximation
    >>> resolve_approximation("auto", 500), resolve_approximation("auto", 50_000, 200)
    (('exact', None), ('nystroem', 200))
    >>> resolve_approximation("auto", 1000, n_features=50), resolve_approximation("auto", 1000, n_features=500)
    (('nystroem', 100), ('exact', None))
    >>> resolve_approximation("auto", 4000, n_features=300)
    ('nystroem', 300)
    """
    if approximation not in APPROXIMATIONS:
        raise ValueError(f"The 'approximation' parameter of {caller} must be one of {list(APPROXIMATIONS)}. "
                         f"Got {approximation!r} instead.")
    if n_components is not None and (isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral)
                                     or not 1 <= n_components <= n_samples):
        raise ValueError(f"The 'n_components' parameter of {caller} must be an int in [1, n_samples = "
                         f"{n_samples}] or None. Got {n_components!r} instead.")
    if n_components is None:  # the landmarks the rows give, then at least one per feature
        rows_m, m = default_n_components(n_samples), default_n_components(n_samples, n_features)
    else:
        rows_m = m = int(n_components)
    if approximation == "auto":
        exact_max = AUTO_EXACT_MAX_SAMPLES if loss == "squared" else AUTO_EXACT_MAX_SAMPLES_CLASSIFICATION
        if n_features is not None and n_features > rows_m:
            exact_max = max(exact_max, AUTO_EXACT_MAX_SAMPLES_WIDE)
        approximation = "exact" if n_samples <= exact_max else "nystroem"
    if approximation == "exact":
        return "exact", None
    return "nystroem", m


def memory_estimate(n_samples: int, n_features: int, n_components: int, kernel: str = "rbf") -> float:
    """Bytes a Nyström KNIFE fit holds at its peak: :data:`LIVE_KERNELS` n x m blocks (recycled,
    :meth:`_KnifeNystroem.blocks`), two more n x m temporaries when the kernel is not formed in place
    (the polynomial and linear kernels, and the rbf kernel on more than
    :data:`numkfs.kernels.weighted.AUTO_NUMBA_MAX_FEATURES` features, go through BLAS), a few m x m
    matrices and n x p arrays (the data, A, its active copy).

    Examples
    --------
    >>> from numkfs.methods.knife import memory_estimate
    >>> round(memory_estimate(10**6, 20, 500) / 2**30, 1), round(memory_estimate(10**6, 20, 500, "poly") / 2**30, 1)
    (11.8, 19.2)
    """
    n, p, m = int(n_samples), int(n_features), int(n_components)
    in_place = kernel == "rbf" and p <= AUTO_NUMBA_MAX_FEATURES
    return 8.0 * ((LIVE_KERNELS + (0 if in_place else 2)) * n * m + 6 * m * m + 4 * n * p)


def knife_model(X, y, *, approximation="exact", n_components=None, landmarks="uniform", random_state=None,
                caller="knife", **kw):
    """The KNIFE problem object for ``approximation`` (after :func:`resolve_approximation`):
    :class:`numkfs.methods.knife._problem._Knife` or :class:`_KnifeNystroem` with landmarks drawn
    from ``random_state``; ``kw`` are :class:`_Knife`'s keywords.  The memory check names
    ``n_components``."""
    approximation, m = resolve_approximation(approximation, X.shape[0], n_components, caller,
                                             kw.get("loss", "squared"), n_features=X.shape[1])
    if approximation == "exact":
        n = X.shape[0]
        # K_w, its Cholesky factor (or Newton matrix) and a work copy live at once
        check_memory(3 * 8.0 * n * n, f"The {n} x {n} kernel matrices of {caller}")
        return _Knife(X, y, **kw)
    n, p = X.shape
    check_memory(memory_estimate(n, p, m, kw.get("kernel", "rbf")),
                 f"The Nyström kernel blocks of {caller} with n_components={m} ({n} x {m} each)")
    idx = select_landmarks(X, m, method=landmarks, random_state=random_state)
    return _KnifeNystroem(X, y, landmarks=idx, **kw)


class _LowRankKernel:
    """The kernel blocks at one weight vector and scale: a handle whose arrays the
    model fills on demand (:meth:`_KnifeNystroem.blocks`) and may drop again."""

    __slots__ = ("w", "gamma", "nm", "mm")

    def __init__(self, w, gamma):
        self.w, self.gamma, self.nm, self.mm = w, gamma, None, None

    def __matmul__(self, beta):
        if self.nm is None:
            raise RuntimeError("kernel blocks dropped: ask the model (_KnifeNystroem.blocks)")
        return self.nm @ beta


class _KnifeNystroem(_Knife):
    """KNIFE's problem through the landmarks ``X[landmarks]`` (see the module docstring).

    The interface is :class:`numkfs.methods.knife._problem._Knife`'s; the kernel
    objects it passes around are :class:`_LowRankKernel` handles and the
    coefficient vectors have one entry per landmark."""

    def __init__(self, X, y, *, landmarks, **kw):
        super().__init__(X, y, **kw)
        self.landmarks = np.asarray(landmarks, dtype=np.int64)
        self.Z = np.ascontiguousarray(X[self.landmarks])
        self._Za = None
        self._live = []  # handles whose blocks are held, most recent first

    @property
    def n_components(self):
        return self.landmarks.size

    @property
    def unique_coefficients(self):
        """Whether the β-step's minimiser is unique at every weight vector: for the rbf kernel
        (K_mm is positive definite on distinct landmarks).  The polynomial and linear kernels
        of fewer features than landmarks leave β free along the null space of K_mm, whatever the
        loss."""
        return self.kernel == "rbf"

    def active_data(self, w):
        key = self._act_key
        act, Xa = super().active_data(w)
        if self._Za is None or self._act_key != key:
            self._Za = np.ascontiguousarray(self.Z[:, act])
        return act, Xa

    def blocks(self, K):
        """``(K_nm, K_mm)`` of the handle ``K``, recomputed if they were dropped; only the last
        :data:`LIVE_KERNELS` handles keep theirs.  A handle about to be dropped gives its n x m
        array to the one being computed (a fresh n x m allocation costs more in page faults than
        the kernel itself at large n), so at most :data:`LIVE_KERNELS` such arrays exist."""
        if K.nm is None:
            self._live = [h for h in self._live if h is not K]
            buf = None
            if len(self._live) >= LIVE_KERNELS:  # drop the oldest first and re-use its array
                old = self._live.pop()
                buf, old.nm, old.mm = old.nm, None, None
            act, Xa = self.active_data(K.w)
            K.nm, K.mm = lowrank_kernels(Xa, self._Za, K.w[act], self.kernel, gamma=K.gamma, degree=self.degree,
                                         coef0=self.coef0, out=buf)
        self._live = [K] + [h for h in self._live if h is not K]
        for h in self._live[LIVE_KERNELS:]:
            h.nm = h.mm = None
        del self._live[LIVE_KERNELS:]
        return K.nm, K.mm

    def kernel_matrix(self, w, alpha=None):
        K = _LowRankKernel(np.array(w, dtype=float), self.gamma)
        self.blocks(K)
        if alpha is not None:
            self.k_alpha(K, alpha)
        return K

    def k_alpha(self, K, alpha, Ka=None):
        if Ka is None:
            self.blocks(K)
        return super().k_alpha(K, alpha, Ka)

    def objective(self, K, alpha, a0, w, lambda2):
        Kb = self.k_alpha(K, alpha)
        mm = self.blocks(K)[1]
        return self.loss.value(self.y, Kb + a0) + self.lambda1 * float(alpha @ (mm @ alpha)) + lambda2 * float(w.sum())

    def alpha_step(self, K, alpha, a0):
        Kb = self.k_alpha(K, alpha)
        nm, mm = self.blocks(K)
        beta, a0, Kb = _newton_beta(nm, mm, self.y, self.loss, self.lambda1, alpha, a0 if self.intercept else 0.0,
                                    intercept=self.intercept, Kb=Kb)
        self.k_alpha(K, beta, Kb)
        return beta, a0

    def wstep_data(self, K, alpha, a0, w, lambda2):
        act, Xa = self.active_data(w)
        nm, mm = self.blocks(K)
        kw = dict(gamma=K.gamma, degree=self.degree, coef0=self.coef0)
        A = lowrank_weight_gradient(Xa, self._Za, w[act], alpha, nm, self.kernel, **kw)
        Amm = lowrank_weight_gradient(self._Za, self._Za, w[act], alpha, mm, self.kernel, **kw)
        u0 = self.k_alpha(K, alpha) + a0 - A @ w[act]
        c = self.lambda1 * (Amm.T @ alpha) + lambda2
        return act, A, u0, c

    def reduced_gradient(self, K, alpha, a0, w, lambda2):
        """The finish's gradient from the landmark form of A (:meth:`wstep_data`): the loss part through
        the n x m block, the ridge part through the m x m one."""
        act, A, _, c = self.wstep_data(K, alpha, a0, w, lambda2)
        grad = np.full(w.shape, float(lambda2))
        if act.size:
            u = self.k_alpha(K, alpha) + a0
            grad[act] = A.T @ self.loss.gradient(self.y, u) + c
        return grad

    def fit(self, w, lambda2, *, alpha=None, a0=0.0, max_iter=100, tol=1e-6, K=None, polish=True):
        """:meth:`numkfs.methods.knife._problem._Knife.fit` (α: one coefficient per landmark), with the BLAS
        threads of numkfs's thread policy for this method (set from the main thread only: the
        limit is process-wide)."""
        alpha = np.zeros(self.n_components) if alpha is None else alpha
        blas = thread_limits("knife_nystroem", self.X.shape[0])[1]
        if threading.current_thread() is not threading.main_thread():
            blas = None
        with limit_threads(None, blas):
            return super().fit(w, lambda2, alpha=alpha, a0=a0, max_iter=max_iter, tol=tol, K=K, polish=polish)


def _spd_solve(H, b):
    """H⁻¹ b for a symmetric positive semi-definite H by Cholesky.  A numerically singular H (a
    basis of smooth kernel columns is nearly dependent) gets a ridge growing from ``m eps`` times
    its largest diagonal entry (at most 1e-6 times it), then least squares."""
    scale = float(np.max(np.diag(H), initial=0.0))
    ridge = 0.0
    while True:
        try:
            M = H if ridge == 0.0 else H + ridge * np.eye(H.shape[0])
            return scipy.linalg.cho_solve(scipy.linalg.cho_factor(M, check_finite=False), b, check_finite=False)
        except np.linalg.LinAlgError:
            ridge = max(100.0 * ridge, H.shape[0] * np.finfo(float).eps * scale)
            if ridge > 1e-6 * scale or scale <= 0.0:
                return scipy.linalg.lstsq(H, b, check_finite=False)[0]


def _newton_beta(Knm, Kmm, y, loss, lam1, beta, a0, *, intercept, tol=1e-10, max_iter=100, Kb=None):
    r"""Newton for :math:`\min L(y, K_{nm}\beta + \beta_0) + \lambda_1\beta^\top K_{mm}\beta`
    (:math:`\beta_0 = 0` without ``intercept``), Armijo backtracking; one step for the squared
    loss (a quadratic).  Stops when the gradient is below ``tol`` times its scale or the
    predicted decrease is below the rounding of the objective.  When no row has curvature
    but the gradient is not zero (the huberized hinge in its linear part) D is replaced by
    the loss's curvature bound there (a majorising quadratic), as KNIFE's α-step does.
    Returns ``(beta, beta0, K_nm beta)``."""
    m = Knm.shape[1]
    beta = np.array(beta, dtype=float)
    a0 = float(a0)
    Kb = Knm @ beta if Kb is None else np.array(Kb, dtype=float)
    two_l = 2.0 * lam1
    kscale = max(1.0, float(np.max(np.abs(Kmm), initial=0.0)))

    def obj(Kb_, b_, a0_):
        return loss.value(y, Kb_ + a0_) + lam1 * float(b_ @ (Kmm @ b_))

    F = obj(Kb, beta, a0)
    for _ in range(max_iter):
        u = Kb + a0
        g = loss.gradient(y, u)
        D = loss.hessian_diag(y, u)
        G = np.append(Knm.T @ g + two_l * (Kmm @ beta), float(g.sum()) if intercept else 0.0)
        gsum = float(np.abs(g).sum())
        if float(np.max(np.abs(G))) <= tol * max(1.0, kscale * gsum):
            break
        if not np.any(D[g != 0.0] > 0.0):
            D = np.where(g != 0.0, loss.curvature_bound, D)
        H = np.zeros((m + 1, m + 1))
        H[:m, :m] = lowrank_gram(Knm, D)
        H[:m, :m] += two_l * Kmm
        if intercept:
            H[:m, m] = H[m, :m] = Knm.T @ D
            H[m, m] = float(D.sum())
            d = _spd_solve(H, -G)
        else:
            d = np.append(_spd_solve(H[:m, :m], -G[:m]), 0.0)
        Kd = Knm @ d[:m]
        slope = float(G @ d)
        if not slope < -_EPS_DECREASE * max(1.0, abs(F)):
            break
        t = 1.0
        while t > 1e-12:
            F_new = obj(Kb + t * Kd, beta + t * d[:m], a0 + t * d[m])
            if F_new <= F + 1e-4 * t * slope:
                break
            t *= 0.5
        if t <= 1e-12:
            break
        beta += t * d[:m]
        Kb += t * Kd
        a0 += t * d[m]
        F = F_new
        if not loss.classification:  # the squared loss: the Newton step is the minimiser
            break
    return beta, a0, Kb

