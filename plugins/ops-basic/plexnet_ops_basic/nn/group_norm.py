"""GroupNorm, MXNet 1.x semantics: the channels of data ``(N, C, ...)`` form
``num_groups`` groups; each (sample, group) is normalised over its channels and spatial
positions; gamma/beta have shape ``(num_groups,)`` (as MXNet 1.9), ``eps=1e-5``.
Outputs ``output, mean, std`` (``(N, num_groups)``; visible with ``output_mean_var``)."""
from __future__ import annotations

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

from ._common import shape_assign
from ._normcore import normalize, normalize_grad, store


class GroupNormParam(Params):
    num_groups = Field(int, default=1, low=1, doc="number of channel groups")
    eps = Field(float, default=1e-5, low=0.0, doc="added to the variance")
    output_mean_var = Field(bool, default=False, doc="also output the mean and the std")


class GroupNormOp(Operator):
    def __init__(self, param):
        self.p = param

    def _view(self, x):
        return x.reshape(x.shape[0], self.p.num_groups, -1)

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        x, gamma, beta = in_data
        xr = self._view(x)
        xhat, mean, std = normalize(xp, xr, (2,), self.p.eps)
        y = xhat * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)
        store(xp, out_data[0], req[0], y.reshape(x.shape))
        store(xp, out_data[1], req[1], mean.reshape(mean.shape[:2]))
        store(xp, out_data[2], req[2], std.reshape(std.shape[:2]))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        x, gamma = in_data[0], in_data[1]
        xr = self._view(x)
        dy = self._view(out_grad[0])
        xhat, _, std = normalize(xp, xr, (2,), self.p.eps)
        if req[1] != OpReqType.null:
            store(xp, in_grad[1], req[1], (dy * xhat).sum(axis=(0, 2)))
        if req[2] != OpReqType.null:
            store(xp, in_grad[2], req[2], dy.sum(axis=(0, 2)))
        if req[0] != OpReqType.null:
            dx = normalize_grad(dy * gamma.reshape(1, -1, 1), xhat, std, (2,))
            store(xp, in_grad[0], req[0], dx.reshape(x.shape))


class GroupNormProp(OperatorProperty):
    param_cls = GroupNormParam

    def list_arguments(self):
        return ["data", "gamma", "beta"]

    def list_outputs(self):
        return ["output", "mean", "std"]

    def num_visible_outputs(self):
        return 3 if self.param.output_mean_var else 1

    def infer_shape(self, in_shape):
        op, names, G = self.op_name, self.list_arguments(), self.param.num_groups
        shapes = [None if s is None else tuple(int(v) for v in s) for s in in_shape]
        d = shapes[0]
        if d is None:
            return shapes, [None] * 3, []
        if len(d) < 2 or d[1] % G:
            raise ShapeError(f"{op}: data {d} must be (N, C, ...) with C divisible by num_groups {G}")
        shape_assign(op, shapes, 1, names, (G,))
        shape_assign(op, shapes, 2, names, (G,))
        return shapes, [d, (d[0], G), (d[0], G)], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1]]


def register(registry):
    registry.register_property("GroupNorm", GroupNormProp)
    registry.register_impl("GroupNorm", "*", lambda prop, ctx: GroupNormOp(prop.param), impl_name="xp")
