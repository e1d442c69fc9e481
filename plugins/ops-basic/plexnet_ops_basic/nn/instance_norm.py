"""InstanceNorm, MXNet 1.x semantics: normalise every (sample, channel) over its spatial
axes, ``y = (x - mean) / sqrt(var + eps) * gamma[c] + beta[c]``, ``eps=1e-3``; data
``(N, C, ...)``, gamma/beta ``(C,)``. Hidden outputs ``mean``, ``var`` of shape ``(N, C)``."""
from __future__ import annotations

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

from ._common import shape_assign
from ._normcore import normalize, normalize_grad, store


class InstanceNormParam(Params):
    eps = Field(float, default=1e-3, low=0.0, doc="added to the variance")


class InstanceNormOp(Operator):
    def __init__(self, param):
        self.eps = param.eps

    @staticmethod
    def _geom(x):
        axes = tuple(range(2, x.ndim))
        bshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        return axes, bshape

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        x, gamma, beta = in_data
        axes, bshape = self._geom(x)
        xhat, mean, std = normalize(xp, x, axes, self.eps)
        y = xhat * gamma.reshape(bshape) + beta.reshape(bshape)
        store(xp, out_data[0], req[0], y)
        store(xp, out_data[1], req[1], mean.reshape(x.shape[:2]))
        store(xp, out_data[2], req[2], (std * std - self.eps).reshape(x.shape[:2]))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        x, gamma = in_data[0], in_data[1]
        dy = out_grad[0]
        axes, bshape = self._geom(x)
        xhat, _, std = normalize(xp, x, axes, self.eps)
        red = (0,) + axes
        if req[1] != OpReqType.null:
            store(xp, in_grad[1], req[1], (dy * xhat).sum(axis=red))
        if req[2] != OpReqType.null:
            store(xp, in_grad[2], req[2], dy.sum(axis=red))
        if req[0] != OpReqType.null:
            store(xp, in_grad[0], req[0], normalize_grad(dy * gamma.reshape(bshape), xhat, std, axes))


class InstanceNormProp(OperatorProperty):
    param_cls = InstanceNormParam

    def list_arguments(self):
        return ["data", "gamma", "beta"]

    def list_outputs(self):
        return ["output", "mean", "var"]

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shape):
        op, names = self.op_name, self.list_arguments()
        shapes = [None if s is None else tuple(int(v) for v in s) for s in in_shape]
        d = shapes[0]
        if d is None:
            return shapes, [None] * 3, []
        if len(d) < 3:
            raise ShapeError(f"{op}: data must be (N, C, spatial...), got shape {d}")
        shape_assign(op, shapes, 1, names, (d[1],))
        shape_assign(op, shapes, 2, names, (d[1],))
        return shapes, [d, d[:2], d[:2]], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1]]


def register(registry):
    registry.register_property("InstanceNorm", InstanceNormProp)
    registry.register_impl("InstanceNorm", "*", lambda prop, ctx: InstanceNormOp(prop.param), impl_name="xp")
