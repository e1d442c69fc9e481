"""softmax, log_softmax, softmin (axis, temperature, dtype; softmax also use_length) and
the legacy SoftmaxActivation (mode instance/channel), MXNet 1.x semantics.

Backward reads only the output and the head gradient; forward and backward may run in
place.
"""
from __future__ import annotations

import numpy as np  # dtype handling only

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, ParamError, Params

from ._common import writes


class SoftmaxParam(Params):
    axis = Field(int, default=-1, doc="the axis along which to compute softmax")
    temperature = Field(float, default=None, optional=True, doc="temperature (default 1)")
    dtype = Field(str, default=None, optional=True, choices=("float16", "float32", "float64"),
                  doc="output dtype (default: the input's)")
    use_length = Field(bool, default=False, doc="softmax only: mask positions >= length along axis")


def _softmax_into(xp, x, axis, t, out, log=False, neg=False):
    """``out = (log_)softmax(±x / t)`` along ``axis``; ``out`` may alias ``x``."""
    m = x.min(axis=axis, keepdims=True) if neg else x.max(axis=axis, keepdims=True)
    if neg:
        xp.subtract(m, x, out=out)
    else:
        xp.subtract(x, m, out=out)
    if t != 1.0:
        out /= t
    if log:
        s = xp.exp(out).sum(axis=axis, keepdims=True)
        out -= xp.log(s)
    else:
        xp.exp(out, out=out)
        out /= out.sum(axis=axis, keepdims=True)
    return out


def _length_mask(xp, length, shape, axis):
    """Boolean mask, True where the position along ``axis`` is < length."""
    n = shape[axis]
    pos = xp.arange(n).reshape((n,) + (1,) * (len(shape) - 1 - axis))
    return pos < xp.expand_dims(length.astype(np.int64), axis)


class SoftmaxOp(Operator):
    def __init__(self, param: SoftmaxParam, kind: str) -> None:
        self.p = param
        self.kind = kind  # softmax | log_softmax | softmin

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        x, out = in_data[0], out_data[0]
        axis = self.p.axis % x.ndim
        t = 1.0 if self.p.temperature is None else self.p.temperature
        log, neg = self.kind == "log_softmax", self.kind == "softmin"
        if self.p.use_length:
            mask = _length_mask(xp, in_data[1], x.shape, axis)
            xm = x.astype(out.dtype, copy=True)
            xp.copyto(xm, np.finfo(out.dtype).min / 2, where=~mask)
            y = _softmax_into(xp, xm, axis, t, xm)
            y *= mask
        elif writes(req[0]) and x.dtype == out.dtype:
            _softmax_into(xp, x, axis, t, out, log, neg)
            return
        else:
            y = _softmax_into(xp, x.astype(out.dtype), axis, t, xp.empty(out.shape, out.dtype), log, neg)
        if writes(req[0]):
            xp.copyto(out, y)
        else:
            out += y

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        if self.p.use_length and req[1] != OpReqType.null and writes(req[1]):
            in_grad[1][...] = 0
        if req[0] == OpReqType.null:
            return
        y, dy, dx = out_data[0], out_grad[0], in_grad[0]
        axis = self.p.axis % y.ndim
        t = 1.0 if self.p.temperature is None else self.p.temperature
        if self.kind == "log_softmax":
            s = dy.sum(axis=axis, keepdims=True)
            g = dy - xp.exp(y) * s
        else:
            s = (dy * y).sum(axis=axis, keepdims=True)
            g = (dy - s) * y
            if self.kind == "softmin":
                g = -g
        if t != 1.0:
            g /= t
        g = g.astype(dx.dtype, copy=False)
        if writes(req[0]):
            xp.copyto(dx, g)
        else:
            dx += g


class SoftmaxProp(OperatorProperty):
    param_cls = SoftmaxParam
    kind = "softmax"

    def init(self, kwargs):
        super().init(kwargs)
        if self.param.use_length and self.kind != "softmax":
            raise ParamError(f"{self.op_name}: use_length is only supported by softmax")

    def list_arguments(self):
        return ["data", "length"] if self.param.use_length else ["data"]

    def infer_shape(self, in_shape):
        d = None if in_shape[0] is None else tuple(int(v) for v in in_shape[0])
        ins = [d] + [None if s is None else tuple(s) for s in in_shape[1:]]
        if d is None:
            return ins, [None], []
        if not -len(d) <= self.param.axis < len(d):
            raise ShapeError(f"{self.op_name}: axis {self.param.axis} out of range for data shape {d}")
        if self.param.use_length:
            ax = self.param.axis % len(d)
            want = d[:ax] + d[ax + 1:]
            if ins[1] is None:
                ins[1] = want
            elif ins[1] != want:
                raise ShapeError(f"{self.op_name}: length has shape {ins[1]}, expected {want} for data {d}")
        return ins, [d], []

    def infer_type(self, in_type):
        t = in_type[0]
        out = np.dtype(self.param.dtype) if self.param.dtype is not None else t
        ins = list(in_type)
        if self.param.use_length and ins[1] is None:
            ins[1] = np.dtype(np.int32)
        return ins, [out], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], out_data[0]]

    def forward_inplace_option(self, in_data, out_data):
        if self.param.dtype is not None or self.param.use_length:
            return []
        return [(in_data[0], out_data[0])]

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_grad[0], in_grad[0])]


class LogSoftmaxProp(SoftmaxProp):
    kind = "log_softmax"
    signature_inputs = ("data",)  # MXNet's generated log_softmax has no length input


class SoftminProp(SoftmaxProp):
    kind = "softmin"
    signature_inputs = ("data",)


class SoftmaxActivationParam(Params):
    mode = Field(str, default="instance", choices=("channel", "instance"),
                 doc="instance: softmax over all but the first axis; channel: over axis 1")


class SoftmaxActivationOp(Operator):
    def __init__(self, param):
        self.mode = param.mode

    def _view(self, a):
        return a.reshape(a.shape[0], -1) if self.mode == "instance" else a

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        x = self._view(in_data[0])
        y = _softmax_into(xp, x, 1, 1.0, xp.empty_like(x))
        if writes(req[0]):
            xp.copyto(self._view(out_data[0]), y)
        else:
            out_data[0] += y.reshape(out_data[0].shape)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        y, dy = self._view(out_data[0]), self._view(out_grad[0])
        g = (dy - (dy * y).sum(axis=1, keepdims=True)) * y
        if writes(req[0]):
            xp.copyto(self._view(in_grad[0]), g)
        else:
            in_grad[0] += g.reshape(in_grad[0].shape)


class SoftmaxActivationProp(OperatorProperty):
    param_cls = SoftmaxActivationParam

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], out_data[0]]

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_grad[0], in_grad[0])]


def register(registry):
    for name, cls, kind in (("softmax", SoftmaxProp, "softmax"), ("log_softmax", LogSoftmaxProp, "log_softmax"),
                            ("softmin", SoftminProp, "softmin")):
        registry.register_property(name, cls)
        registry.register_impl(name, "*", lambda prop, ctx, kind=kind: SoftmaxOp(prop.param, kind), impl_name="xp")
    registry.register_property("SoftmaxActivation", SoftmaxActivationProp)
    registry.register_impl("SoftmaxActivation", "*", lambda prop, ctx: SoftmaxActivationOp(prop.param),
                           impl_name="xp")
