"""Activation (relu, sigmoid, tanh, softrelu, softsign, log_sigmoid, mish), MXNet 1.x
semantics.

Backward of relu/sigmoid/tanh/softrelu/log_sigmoid reads only the output and the head
gradient (``declare_backward_dependency``), so the forward may run in place; softsign
and mish need the input, so they declare no forward in-place option.
"""
from __future__ import annotations

from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

from ._common import writes

ACT_TYPES = ("log_sigmoid", "mish", "relu", "sigmoid", "softrelu", "softsign", "tanh")
_NEEDS_INPUT = ("softsign", "mish")


class ActivationParam(Params):
    # MXNet 1.9.1's five; log_sigmoid and mish (MXNet 2.0) accepted as extensions
    act_type = Field(str, choices=ACT_TYPES[2:], extra_choices=ACT_TYPES[:2], doc="activation function")


def _sigmoid(xp, x, out):
    # 0.5 * (1 + tanh(x / 2)): no overflow for large |x|
    xp.multiply(x, 0.5, out=out)
    xp.tanh(out, out=out)
    out += 1
    out *= 0.5
    return out


def _softplus(xp, x, out):
    """MXNet's softrelu, ``x > 20 ? x : log1p(exp(x))`` (exp stays finite below its
    threshold of 20; float16 computes in float32, as MXNet's half ops do). numpy's
    ``logaddexp`` ran a scalar loop: 75 ms for 6.4M float32 against 7 ms here."""
    if x.dtype == xp.float16:
        xp.copyto(out, _softplus(xp, x.astype(xp.float32), xp.empty(x.shape, xp.float32)), casting="unsafe")
        return out
    big = x > 20
    t = out if not xp.may_share_memory(out, x) else xp.empty_like(x)
    xp.minimum(x, 20, out=t)
    xp.exp(t, out=t)
    xp.log1p(t, out=t)
    xp.copyto(t, x, where=big)
    if t is not out:
        xp.copyto(out, t)
    return out


def act_forward(xp, act, x, out):
    """``out = act(x)``; ``out`` may be ``x``."""
    if act == "relu":
        return xp.fmax(x, 0, out=out)  # MXNet's Activation relu maps NaN to 0 (nd.relu keeps it)
    if act == "sigmoid":
        return _sigmoid(xp, x, out)
    if act == "tanh":
        return xp.tanh(x, out=out)
    if act == "softrelu":
        return _softplus(xp, x, out)
    if act == "softsign":
        t = xp.abs(x)
        t += 1
        return xp.divide(x, t, out=out)
    if act == "log_sigmoid":
        # log(sigmoid(x)) = -softplus(-x)
        xp.negative(x, out=out)
        _softplus(xp, out, out)
        return xp.negative(out, out=out)
    if act == "mish":
        t = _softplus(xp, x, xp.empty_like(x))
        xp.tanh(t, out=t)
        return xp.multiply(x, t, out=out)
    raise ValueError(act)


def act_grad(xp, act, y, x):
    """d act / d x as an array, from the output ``y`` (and input ``x`` where needed)."""
    if act == "relu":
        return y > 0
    if act == "sigmoid":
        return y * (1 - y)
    if act == "tanh":
        return 1 - y * y
    if act == "softrelu":
        return -xp.expm1(-y)
    if act == "log_sigmoid":
        return -xp.expm1(y)  # 1 - sigmoid(x)
    if act == "softsign":
        t = xp.abs(x)
        t += 1
        t *= t
        return xp.reciprocal(t, out=t)
    if act == "mish":
        sp = _softplus(xp, x, xp.empty_like(x))
        tsp = xp.tanh(sp)
        sig = _sigmoid(xp, x, xp.empty_like(x))
        return tsp + x * (1 - tsp * tsp) * sig
    raise ValueError(act)


class ActivationOp(Operator):
    def __init__(self, param: ActivationParam) -> None:
        self.act = param.act_type

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        if req[0] == OpReqType.null:
            return
        if writes(req[0]):
            act_forward(xp, self.act, in_data[0], out_data[0])
        else:
            out_data[0] += act_forward(xp, self.act, in_data[0], xp.empty_like(in_data[0]))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        if req[0] == OpReqType.null:
            return
        dy, dx = out_grad[0], in_grad[0]
        if (writes(req[0]) and self.act in ("tanh", "sigmoid") and not xp.may_share_memory(dx, dy)
                and not xp.may_share_memory(dx, out_data[0])):
            # derivative built in dx itself: no full-size temporaries
            y = out_data[0]
            if self.act == "tanh":
                xp.multiply(y, y, out=dx)
                xp.subtract(1, dx, out=dx)
            else:
                xp.subtract(1, y, out=dx)
                dx *= y
            dx *= dy
            return
        d = act_grad(xp, self.act, out_data[0] if self.act not in _NEEDS_INPUT else None,
                     in_data[0] if self.act in _NEEDS_INPUT else None)
        if writes(req[0]):
            xp.multiply(dy, d, out=dx)
        else:
            dx += dy * d


class ActivationProp(OperatorProperty):
    param_cls = ActivationParam

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        if self.param.act_type in _NEEDS_INPUT:
            return [out_grad[0], in_data[0]]
        return [out_grad[0], out_data[0]]

    def forward_inplace_option(self, in_data, out_data):
        if self.param.act_type in _NEEDS_INPUT:
            return []
        return [(in_data[0], out_data[0])]

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_grad[0], in_grad[0])]


def register(registry):
    registry.register_property("Activation", ActivationProp)
    registry.register_impl("Activation", "*", lambda prop, ctx: ActivationOp(prop.param), impl_name="xp")
