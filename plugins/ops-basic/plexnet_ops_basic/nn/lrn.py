"""LRN (local response normalisation across channels), MXNet 1.x semantics:
``out = x / (knorm + alpha / nsize * sum_{|c'-c| <= nsize//2} x[c']**2) ** beta``.
The normaliser is kept in the hidden second output ``tmp_norm`` for backward."""
from __future__ import annotations

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OpReqType, ParamError, Params

from ._common import HiddenOutputProp, writes


class LRNParam(Params):
    alpha = Field(float, default=1e-4, doc="scale of the squared sum")
    beta = Field(float, default=0.75, doc="exponent")
    knorm = Field(float, default=2.0, doc="additive constant")
    nsize = Field(int, low=1, doc="number of channels in the window (odd)")

    def __post_init__(self, op):
        if self.nsize % 2 != 1:
            raise ParamError(f"{op}: nsize must be odd, got {self.nsize}")


def _channel_window_sum(xp, a, n):
    """Sum over a centred window of ``n`` channels (axis 1), zero beyond the edges."""
    h = n // 2
    C = a.shape[1]
    out = a.copy()
    for k in range(1, h + 1):
        if k >= C:
            break
        out[:, k:] += a[:, :C - k]
        out[:, :C - k] += a[:, k:]
    return out


class LRNOp(Operator):
    def __init__(self, param: LRNParam) -> None:
        self.p = param

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        p = self.p
        x = in_data[0]
        norm = _channel_window_sum(xp, x * x, p.nsize)
        norm *= p.alpha / p.nsize
        norm += p.knorm
        if writes(req[1]):
            xp.copyto(out_data[1], norm)
        elif req[1] == OpReqType.add:
            out_data[1] += norm
        y = x * norm ** -p.beta
        if writes(req[0]):
            xp.copyto(out_data[0], y)
        elif req[0] == OpReqType.add:
            out_data[0] += y

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        p = self.p
        x, y, norm, dy = in_data[0], out_data[0], out_data[1], out_grad[0]
        t = _channel_window_sum(xp, dy * y / norm, p.nsize)
        dx = dy * norm ** -p.beta - (2.0 * p.alpha * p.beta / p.nsize) * x * t
        if writes(req[0]):
            xp.copyto(in_grad[0], dx)
        else:
            in_grad[0] += dx


class LRNProp(HiddenOutputProp):
    param_cls = LRNParam
    hidden = "tmp_norm"

    def hidden_shape(self, d):
        if len(d) < 2:
            raise ShapeError(f"{self.op_name}: data must have a channel axis (N, C, ...), got shape {d}")
        return d

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], out_data[0], out_data[1]]


def register(registry):
    registry.register_property("LRN", LRNProp)
    registry.register_impl("LRN", "*", lambda prop, ctx: LRNOp(prop.param), impl_name="xp")
