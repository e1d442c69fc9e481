"""Dropout, MXNet 1.x semantics: in training (or always, with ``mode='always'``) each
element is kept with probability ``1 - p`` and scaled by ``1 / (1 - p)``; ``axes``
shares one draw along the given axes (variational dropout). Otherwise the identity.
The scaled keep-mask is the hidden second output ``mask`` (shape of data with ``axes``
set to 1), which backward multiplies in; the identity forward writes a mask of ones,
so backward is right either way. Uses the ``kRandom`` resource."""
from __future__ import annotations

import numpy as np  # dtype handling only

from plexnet.operator import Field, Operator, OpReqType, ParamError, Params, Shape
from plexnet.resource import ResourceRequest

from ._common import HiddenOutputProp, writes


class DropoutParam(Params):
    p = Field(float, default=0.5, low=0.0, high=1.0, doc="fraction of the input that gets dropped")
    mode = Field(str, default="training", choices=("always", "training"),
                 doc="training: only when is_train; always: also at inference")
    axes = Field(Shape, default=Shape(()), doc="axes along which one draw is shared")
    cudnn_off = Field(bool, default=False, optional=True)


class DropoutOp(Operator):
    def __init__(self, param: DropoutParam) -> None:
        self.p = param

    def _active(self, ctx):
        return (ctx.is_train or self.p.mode == "always") and self.p.p > 0

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        x, out, mask = in_data[0], out_data[0], out_data[1]
        if not self._active(ctx):
            if req[1] != OpReqType.null:
                mask.fill(1)
            if writes(req[0]):
                if out is not x:
                    xp.copyto(out, x)
            elif req[0] == OpReqType.add:
                out += x
            return
        pkeep = 1.0 - self.p.p
        rng = ctx.requested[0].get_random()
        dt = mask.dtype if mask.dtype in (np.float32, np.float64) else np.float64
        r = rng.random(mask.shape, dtype=dt)
        m = (r < pkeep).astype(mask.dtype)
        if pkeep > 0:
            m *= 1.0 / pkeep
        elif m.dtype.kind == "f":
            m.fill(np.nan)  # MXNet 1.9.1 with p=1: mask = 0 * (1 / 0) = NaN, so outputs are NaN
        if req[1] != OpReqType.null:
            xp.copyto(mask, m)
        if writes(req[0]):
            xp.multiply(x, m, out=out)
        elif req[0] == OpReqType.add:
            out += x * m

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        if writes(req[0]):
            xp.multiply(out_grad[0], out_data[1], out=in_grad[0])
        else:
            in_grad[0] += out_grad[0] * out_data[1]


class DropoutProp(HiddenOutputProp):
    param_cls = DropoutParam
    hidden = "mask"

    def hidden_shape(self, d):
        axes = [a % len(d) if -len(d) <= a < len(d) else None for a in self.param.axes]
        if None in axes:
            raise ParamError(f"{self.op_name}: axes {tuple(self.param.axes)} out of range for data shape {d}")
        return tuple(1 if i in axes else s for i, s in enumerate(d))

    def forward_resource(self, in_shape):
        return [ResourceRequest(ResourceRequest.kRandom)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], out_data[1]]

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_grad[0], in_grad[0])]


def register(registry):
    registry.register_property("Dropout", DropoutProp)
    registry.register_impl("Dropout", "*", lambda prop, ctx: DropoutOp(prop.param), impl_name="xp")
