"""LayerNorm, MXNet 1.x semantics: normalise over ``axis`` (default -1) with
``y = (x - mean) / sqrt(var + eps) * gamma + beta``; ``gamma``/``beta`` have shape
``(data.shape[axis],)``. Outputs ``output, mean, std`` (``mean``/``std`` keep ``axis``
with size 1; visible with ``output_mean_var``)."""
from __future__ import annotations

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

from ._common import shape_assign, writes


class LayerNormParam(Params):
    axis = Field(int, default=-1, doc="the axis to normalise over")
    eps = Field(float, default=1e-5, low=0.0, doc="added to the variance")
    output_mean_var = Field(bool, default=False, doc="also output the mean and the std")


def _store(xp, out, req, value):
    if req == OpReqType.null:
        return
    if writes(req):
        xp.copyto(out, value)
    else:
        out += value


class LayerNormOp(Operator):
    def __init__(self, param: LayerNormParam) -> None:
        self.p = param

    def _bshape(self, x):
        ax = self.p.axis % x.ndim
        return ax, tuple(x.shape[i] if i == ax else 1 for i in range(x.ndim))

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        x, gamma, beta = in_data
        ax, bshape = self._bshape(x)
        mean = x.mean(axis=ax, keepdims=True)
        xc = x - mean
        std = xp.sqrt((xc * xc).mean(axis=ax, keepdims=True) + self.p.eps)
        y = xc
        y /= std
        y *= gamma.reshape(bshape)
        y += beta.reshape(bshape)
        _store(xp, out_data[0], req[0], y)
        _store(xp, out_data[1], req[1], mean)
        _store(xp, out_data[2], req[2], std)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        x, gamma = in_data[0], in_data[1]
        mean, std = out_data[1], out_data[2]
        dy = out_grad[0]
        ax, bshape = self._bshape(x)
        red = tuple(i for i in range(x.ndim) if i != ax)
        xhat = (x - mean) / std
        if req[1] != OpReqType.null:
            _store(xp, in_grad[1], req[1], (dy * xhat).sum(axis=red))
        if req[2] != OpReqType.null:
            _store(xp, in_grad[2], req[2], dy.sum(axis=red))
        if req[0] != OpReqType.null:
            gdy = dy * gamma.reshape(bshape)
            dx = gdy - gdy.mean(axis=ax, keepdims=True)
            dx -= xhat * (gdy * xhat).mean(axis=ax, keepdims=True)
            dx /= std
            _store(xp, in_grad[0], req[0], dx)


class LayerNormProp(OperatorProperty):
    param_cls = LayerNormParam

    def list_arguments(self):
        return ["data", "gamma", "beta"]

    def list_outputs(self):
        return ["output", "mean", "std"]

    def num_visible_outputs(self):
        return 3 if self.param.output_mean_var else 1

    def infer_shape(self, in_shape):
        op, names = self.op_name, self.list_arguments()
        shapes = [None if s is None else tuple(int(v) for v in s) for s in in_shape]
        d = shapes[0]
        if d is None:
            return shapes, [None] * 3, []
        if not -len(d) <= self.param.axis < len(d):
            raise ShapeError(f"{op}: axis {self.param.axis} out of range for data shape {d}")
        ax = self.param.axis % len(d)
        shape_assign(op, shapes, 1, names, (d[ax],))
        shape_assign(op, shapes, 2, names, (d[ax],))
        ms = d[:ax] + (1,) + d[ax + 1:]
        return shapes, [d, ms, ms], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1], out_data[1], out_data[2]]


def register(registry):
    registry.register_property("LayerNorm", LayerNormProp)
    registry.register_impl("LayerNorm", "*", lambda prop, ctx: LayerNormOp(prop.param), impl_name="xp")
