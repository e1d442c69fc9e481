"""``_adamw_update`` and ``_mp_adamw_update`` (the operators behind ``nd.contrib.adamw_update``
/ ``mp_adamw_update``), MXNet 1.9.1's AdamW step::

    g = clip(rescale_grad * grad, clip_gradient)      # no clipping when clip_gradient < 0
    mean = beta1 * mean + (1 - beta1) * g ; var = beta2 * var + (1 - beta2) * g^2
    weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)

``rescale_grad`` is an array input (one value); when it is NaN, infinite or 0 the step is
skipped (states unchanged; the output is the weight, where MXNet leaves it unwritten).
``mean``, ``var`` (and the float32 master ``weight32`` of the ``mp_`` version) are
auxiliary states updated in place; the output is the new weight.

``_contrib_group_adagrad_update``: AdaGrad with one accumulator per row (MXNet's formula;
its CPU build has only the row-sparse version, here dense)::

    g = clip(rescale_grad * grad, clip_gradient)
    history += mean(g^2 over all axes but the first)      # history: (rows, 1)
    weight -= lr * g / sqrt(history + epsilon)
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params, assign

__all__ = ["register"]


class AdamWParam(Params):
    lr = Field(float, doc="learning rate")
    beta1 = Field(float, default=0.9, doc="decay of the first moment")
    beta2 = Field(float, default=0.999, doc="decay of the second moment")
    epsilon = Field(float, default=1e-8, doc="added to the root of the second moment")
    wd = Field(float, default=0.0, doc="decoupled weight decay")
    eta = Field(float, doc="schedule multiplier of the whole step")
    clip_gradient = Field(float, default=-1.0, doc="clip the rescaled gradient to [-c, c] (c < 0: off)")


class AdamWProp(OperatorProperty):
    """One AdamW step (decoupled weight decay); ``mean``/``var`` updated in place."""

    param_cls = AdamWParam
    mp = False

    def list_arguments(self):  # type: ignore[no-untyped-def]
        # MXNet's input order (positional calls): the states, updated in place, before rescale_grad
        return ["weight", "grad", "mean", "var"] + (["weight32"] if self.mp else []) + ["rescale_grad"]

    def mutate_inputs(self):  # type: ignore[no-untyped-def]
        return [2, 3, 4] if self.mp else [2, 3]

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        n = len(self.list_arguments())
        w = next((s for s in in_shape[:2] if s is not None), None)
        if w is None:
            return list(in_shape), [None], []
        w = tuple(w)
        for name, s in zip(("weight", "grad"), in_shape[:2]):
            if s is not None and tuple(s) != w:
                from plexnet.base import ShapeError
                raise ShapeError(f"{self.op_name}: argument {name!r} has shape {tuple(s)}, expected {w} "
                                 f"(weight={in_shape[0]}, grad={in_shape[1]})")
        return [w] * (n - 1) + [(1,)], [w], []

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        t = in_type[0] if in_type[0] is not None else np.dtype(np.float32)
        f32 = np.dtype(np.float32)
        return ([t, t, f32, f32, f32, f32] if self.mp else [t] * 5), [t], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return []


class MPAdamWProp(AdamWProp):
    """AdamW step on a float32 master copy ``weight32`` (multi-precision training)."""

    mp = True


class AdamWOp(Operator):
    def __init__(self, prop: AdamWProp) -> None:
        self.p, self.mp = prop.param, prop.mp

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        xp, p = ctx.xp, self.p
        weight, grad, mean, var = in_data[:4]
        rescale = in_data[-1]
        master = in_data[4] if self.mp else weight
        r = float(rescale.reshape(-1)[0])
        if not math.isfinite(r) or r == 0:
            assign(out_data[0], req[0], master.astype(out_data[0].dtype))
            return
        g = grad.astype(master.dtype) * r
        if p.clip_gradient >= 0:
            g = xp.clip(g, -p.clip_gradient, p.clip_gradient)
        # the coefficients in the master's dtype, as MXNet's kernel (1 - beta2 in float32 is 0.00099998713)
        b1, b2 = master.dtype.type(p.beta1), master.dtype.type(p.beta2)
        one = master.dtype.type(1)
        mean *= b1
        mean += (one - b1) * g
        var *= b2
        var += (one - b2) * g * g
        new = master - p.eta * (p.lr * mean / (xp.sqrt(var) + p.epsilon) + p.wd * master)
        if self.mp:
            master[...] = new
        if req[0] != OpReqType.null:
            assign(out_data[0], req[0], new.astype(out_data[0].dtype))


class GroupAdaGradParam(Params):
    lr = Field(float, doc="learning rate")
    rescale_grad = Field(float, default=1.0, doc="gradient scale")
    clip_gradient = Field(float, default=-1.0, doc="clip the rescaled gradient to [-c, c] (c < 0: off)")
    epsilon = Field(float, default=1e-5, doc="added to the history under the root")


class GroupAdaGradProp(OperatorProperty):
    """Group AdaGrad step: one accumulator per row; ``history`` updated in place."""

    param_cls = GroupAdaGradParam

    def list_arguments(self):  # type: ignore[no-untyped-def]
        return ["weight", "grad"]

    def list_auxiliary_states(self):  # type: ignore[no-untyped-def]
        return ["history"]

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        w = next((s for s in in_shape[:2] if s is not None), None)
        if w is None:
            return list(in_shape), [None], [None]
        w = tuple(w)
        for name, s in zip(("weight", "grad"), in_shape[:2]):
            if s is not None and tuple(s) != w:
                from plexnet.base import ShapeError
                raise ShapeError(f"{self.op_name}: argument {name!r} has shape {tuple(s)}, expected {w} "
                                 f"(weight={in_shape[0]}, grad={in_shape[1]})")
        return [w, w], [w], [(w[0], 1)]

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        t = in_type[0] if in_type[0] is not None else np.dtype(np.float32)
        return [t, t], [t], [t]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return []


class GroupAdaGradOp(Operator):
    def __init__(self, prop: GroupAdaGradProp) -> None:
        self.p = prop.param

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        xp, p = ctx.xp, self.p
        weight, grad = in_data
        history = aux_states[0]
        g = grad * p.rescale_grad
        if p.clip_gradient >= 0:
            g = xp.clip(g, -p.clip_gradient, p.clip_gradient)
        rows = g.reshape(g.shape[0], -1)
        history += (rows * rows).mean(axis=1, keepdims=True)
        step = rows / xp.sqrt(history + p.epsilon)
        if req[0] != OpReqType.null:
            assign(out_data[0], req[0], weight - p.lr * step.reshape(weight.shape))


def register(registry: Any) -> None:
    registry.register_property("_contrib_group_adagrad_update", GroupAdaGradProp)
    registry.register_impl("_contrib_group_adagrad_update", "*", lambda prop, ctx: GroupAdaGradOp(prop),
                           impl_name="xp")
    for name, cls in (("_adamw_update", AdamWProp), ("_mp_adamw_update", MPAdamWProp)):
        registry.register_property(name, cls, aliases=("_contrib" + name,))
        registry.register_impl(name, "*", lambda prop, ctx: AdamWOp(prop), impl_name="xp")
