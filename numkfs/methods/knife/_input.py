"""Input handling shared by :func:`~numkfs.methods.knife.knife` and
:func:`~numkfs.methods.knife.knife_path`: :func:`_prepare` validates a
public function's input and builds the problem, exact
(:class:`~numkfs.methods.knife._problem._Knife`) or Nyström
(:mod:`numkfs.methods.knife._nystroem`).  It reads the switches ``_FAST``
and ``_EXTRAPOLATE`` of :mod:`numkfs.methods.knife._problem` at every call
(tests set them there).
"""
from __future__ import annotations

from ..._preprocessing import response_scale
from ..._constraints import validate_params
from ..._validation import check_binary_labels, check_X, check_y, constant_columns
from ...kernels.weighted import check_poly_kernel
from . import _problem
from ._nystroem import knife_model
from ._problem import CLASSIFICATION_LOSSES, KNIFE_CONSTRAINTS


def _prepare(X, y, params, caller):
    # the declared table of knife and knife_path checked their arguments already; the functions that take
    # the fitting keywords as **params (knife_lambda2_max, knife_ovr_paths) are checked here
    validate_params(params, KNIFE_CONSTRAINTS, caller)
    X = check_X(X, caller=caller)
    if params["kernel"] == "poly":
        check_poly_kernel(X, params["degree"], params["coef0"], caller=caller)
    loss = params["loss"]
    if loss in CLASSIFICATION_LOSSES:
        y = check_y(y, X.shape[0], caller=caller, numeric=False)
        y_pm, classes = check_binary_labels(y, caller=caller)
        y_scale = 1.0
    else:
        y_pm, classes = check_y(y, X.shape[0], caller=caller), None
        # the problem is solved on y in units of its root mean square (its answers given back in y's units,
        # model.y_scale): the selection does not depend on the units of y
        y_scale = response_scale(y_pm)
        y_pm = y_pm / y_scale
    const = constant_columns(X, caller=caller)
    auto = isinstance(params["gamma"], str)  # "auto"
    gamma = 1.0 / X.shape[1] if params["gamma"] is None or auto else float(params["gamma"])
    # the exact kernel (memory checked for n x n) or the Nyström basis
    model = knife_model(X, y_pm, approximation=params.get("approximation", "exact"),
                        n_components=params.get("n_components"), random_state=params.get("random_state"),
                        caller=caller, kernel=params["kernel"], loss=loss, lambda1=params["lambda1"], gamma=gamma,
                        degree=params["degree"], coef0=params["coef0"], delta=params["delta"],
                        solver=params["solver"], fast=_problem._FAST, extrapolate=_problem._EXTRAPOLATE)
    model.y_scale = y_scale
    if auto and params["kernel"] == "rbf":
        model.gamma_rule = "support"
    public = {"kernel": params["kernel"], "gamma": gamma, "degree": int(params["degree"]),
              "coef0": float(params["coef0"]), "loss": loss, "lambda1": float(params["lambda1"]),
              "delta": float(params["delta"])}
    landmarks = getattr(model, "landmarks", None)  # rows of X the Nyström basis uses (None: exact)
    public.update(approximation="exact" if landmarks is None else "nystroem", landmarks=landmarks)
    return X, y_pm, classes, const, model, public
