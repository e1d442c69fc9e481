"""LAMB in two phases, MXNet 1.x semantics (``lamb_update_phase1/2`` and the ``mp_`` forms).

* phase 1 ``(weight, grad, mean, var[, weight32])``: ``g = clip(rescale_grad * grad)``;
  ``mean = beta1*mean + (1-beta1)*g``; ``var = beta2*var + ((1-beta2)*g)*g`` (both in place);
  with ``bias_correction`` ``m = mean/(1-beta1^t)``, ``v = var/(1-beta2^t)``; output
  ``m / (sqrt(v) + epsilon) + wd * weight`` (float32 ``weight32`` for ``mp_``, output float32).
* phase 2 ``(weight, g, r1, r2[, weight32])``: ``r1`` clamped to ``[lower_bound, upper_bound]``
  where those are ``>= 0``; ``lr' = (lr * r1) / r2`` unless either is 0 (then ``lr``); output
  ``weight - lr' * g`` (from ``weight32`` for ``mp_``, in the weight's dtype;
  MXNet 1.9.1 does not write ``weight32`` back).
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np  # dtype arithmetic only

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, Params
from plexnet.optimizer import kernels

from ._common import _store, clip_field, rescale_field

__all__ = ["register"]


class Phase1Param(Params):
    beta1 = Field(float, default=0.9, doc="decay of the first moment")
    beta2 = Field(float, default=0.999, doc="decay of the second moment")
    epsilon = Field(float, default=1e-6, doc="added to sqrt(v)")
    t = Field(int, doc="step number (for the bias correction)")
    bias_correction = Field(bool, default=True, doc="divide the moments by 1 - beta^t")
    wd = Field(float, doc="weight decay")
    rescale_grad = rescale_field()
    clip_gradient = clip_field()


class Phase2Param(Params):
    lr = Field(float, doc="learning rate")
    lower_bound = Field(float, default=-1.0, doc="lower clamp of r1 (when > 0)")
    upper_bound = Field(float, default=-1.0, doc="upper clamp of r1 (when > 0)")


class _LambProp(OperatorProperty):
    args: ClassVar[tuple[str, ...]] = ()
    mp: ClassVar[bool] = False
    #: inputs with the weight's shape (the rest are (1,) norms)
    full: ClassVar[tuple[int, ...]] = ()

    def list_arguments(self) -> list[str]:
        return list(self.args)

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        shapes = [tuple(s) if s is not None else None for s in in_shape]
        known = next((shapes[i] for i in self.full if shapes[i] is not None), None)
        for i, name in enumerate(self.args):
            want = known if i in self.full else (1,)
            if shapes[i] is not None and want is not None and shapes[i] != want:
                raise ShapeError(f"{self.op_name}: {name} has shape {shapes[i]}, expected {want} "
                                 f"(inputs: {dict(zip(self.args, shapes))})")
            shapes[i] = want
        return shapes, [known], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return []


class Phase1Prop(_LambProp):
    """LAMB phase 1: update the moments in place, output the update direction."""
    param_cls = Phase1Param
    args = ("weight", "grad", "mean", "var")
    full = (0, 1, 2, 3)

    def mutate_inputs(self) -> list[int]:
        return [2, 3]

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        w = in_type[0]
        ins = [w] + [t if t is not None else (np.dtype(np.float32) if self.mp and i >= 2 else w)
                     for i, t in enumerate(in_type[1:], 1)]
        return ins, [np.dtype(np.float32) if self.mp else w], []


class MPPhase1Prop(Phase1Prop):
    """Multi-precision LAMB phase 1: float32 moments and master ``weight32``; float32 output."""
    args = ("weight", "grad", "mean", "var", "weight32")
    full = (0, 1, 2, 3, 4)
    mp = True


class Phase2Prop(_LambProp):
    """LAMB phase 2: ``weight - lr * (r1 / r2) * g`` (see the module docstring)."""
    param_cls = Phase2Param
    args = ("weight", "g", "r1", "r2")
    full = (0, 1)

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        w = in_type[0]
        ins = [w] + [t if t is not None else (np.dtype(np.float32) if self.mp else w) for t in in_type[1:]]
        return ins, [w], []


class MPPhase2Prop(Phase2Prop):
    """Multi-precision LAMB phase 2 from the float32 master ``weight32``."""
    args = ("weight", "g", "r1", "r2", "weight32")
    full = (0, 1, 4)
    mp = True


class Phase1Op(Operator):
    def __init__(self, prop: Phase1Prop) -> None:
        self.p, self.mp = prop.param, prop.mp

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp, p = ctx.xp, self.p
        w, grad, mean, var = in_data[:4]
        if self.mp:
            w = in_data[4]
        g = kernels.lamb_phase1(xp, w, grad, mean, var, wd=p.wd, rescale_grad=p.rescale_grad,
                                clip_gradient=p.clip_gradient, beta1=p.beta1, beta2=p.beta2, epsilon=p.epsilon,
                                t=p.t, bias_correction=p.bias_correction)
        _store(xp, out_data[0], int(req[0]), g)


class Phase2Op(Operator):
    def __init__(self, prop: Phase2Prop) -> None:
        self.p, self.mp = prop.param, prop.mp

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp, p = ctx.xp, self.p
        w, g, r1, r2 = in_data[:4]
        if self.mp:
            w = in_data[4]
        new = kernels.lamb_phase2(xp, w, g, r1.reshape(-1)[:1], r2.reshape(-1)[:1], lr=p.lr,
                                  lower_bound=p.lower_bound, upper_bound=p.upper_bound)
        _store(xp, out_data[0], int(req[0]), new)


def register(registry: Any) -> None:
    for name, prop, op in (("lamb_update_phase1", Phase1Prop, Phase1Op),
                           ("mp_lamb_update_phase1", MPPhase1Prop, Phase1Op),
                           ("lamb_update_phase2", Phase2Prop, Phase2Op),
                           ("mp_lamb_update_phase2", MPPhase2Prop, Phase2Op)):
        registry.register_property(name, prop)
        registry.register_impl(name, "*", lambda pr, ctx, op=op: op(pr), impl_name="xp")
