"""GroupNorm, MXNet 1.x semantics: the channels of data ``(N, C, ...)`` form
``num_groups`` groups; each (sample, group) is normalised over its channels and spatial
positions; gamma/beta have shape ``(num_groups,)`` (as MXNet 1.9), ``eps=1e-5``.
Outputs ``output, mean, std`` (``(N, num_groups)``; visible with ``output_mean_var``)."""
from __future__ import annotations

import numpy as np  # the CPU kernel's order

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OpReqType, Params
from plexnet.operator.params import dmlc_float

from ._normcore import NormProp, affine_grads, normalize, normalize_grad, store


class GroupNormParam(Params):
    num_groups = Field(int, default=1, low=1, doc="number of channel groups")
    eps = Field(float, default=1e-5, low=0.0, doc="added to the variance")
    output_mean_var = Field(bool, default=False, doc="also output the mean and the std")


def _as_mxnet(xr, gamma, beta, eps):
    """MXNet 1.9.1's CPU GroupNorm for float32 (``xr``: ``(N, G, L)``): its sums accumulate
    in double (``safe_acc``) and are rounded once, then divided by the count in float32;
    the variance of ``x - mean`` likewise (its squares in float32); ``((x - mean) / sqrt(var + eps)) * gamma + beta``;
    ``eps`` as MXNet parsed it. Returns ``(y, mean, std)``."""
    f = xr.dtype.type
    n = f(xr.shape[-1])
    mean = xr.sum(axis=-1, keepdims=True, dtype=np.float64).astype(xr.dtype)
    mean /= n
    dev = xr - mean
    var = (dev * dev).sum(axis=-1, keepdims=True, dtype=np.float64).astype(xr.dtype)   # squares in float32
    var /= n
    std = np.sqrt(var + f(eps))
    dev /= std
    dev *= gamma.reshape(1, -1, 1)
    dev += beta.reshape(1, -1, 1)
    return dev, mean, std


class GroupNormOp(Operator):
    def __init__(self, param):
        self.p = param

    def _view(self, x):
        return x.reshape(x.shape[0], self.p.num_groups, -1)

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        x, gamma, beta = in_data
        xr = self._view(x)
        eps = dmlc_float(self.p.eps)   # MXNet's float field
        if xp is np and x.dtype == np.float32 and x.size:
            y, mean, std = _as_mxnet(xr, gamma, beta, eps)
        else:
            xhat, mean, std = normalize(xp, xr, (2,), eps)
            y = xhat * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)
        store(xp, out_data[0], req[0], y.reshape(x.shape))
        store(xp, out_data[1], req[1], mean.reshape(mean.shape[:2]))
        store(xp, out_data[2], req[2], std.reshape(std.shape[:2]))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        x, gamma = in_data[0], in_data[1]
        xr = self._view(x)
        dy = self._view(out_grad[0])
        xhat, _, std = normalize(xp, xr, (2,), dmlc_float(self.p.eps))
        affine_grads(xp, dy, xhat, (0, 2), req, in_grad)
        if req[0] != OpReqType.null:
            dx = normalize_grad(dy * gamma.reshape(1, -1, 1), xhat, std, (2,))
            store(xp, in_grad[0], req[0], dx.reshape(x.shape))


class GroupNormProp(NormProp):
    param_cls = GroupNormParam

    def check_data(self, d):
        G = self.param.num_groups
        if len(d) < 2 or d[1] % G:
            raise ShapeError(f"{self.op_name}: data {d} must be (N, C, ...) with C divisible by num_groups {G}")
        return (G,), (d[0], G)


def register(registry):
    registry.register_property("GroupNorm", GroupNormProp)
    registry.register_impl("GroupNorm", "*", lambda prop, ctx: GroupNormOp(prop.param), impl_name="xp")
