"""InstanceNorm, MXNet 1.x semantics: normalise every (sample, channel) over its spatial
axes, ``y = (x - mean) / sqrt(var + eps) * gamma[c] + beta[c]``, ``eps=1e-3``; data
``(N, C, ...)``, gamma/beta ``(C,)``. Hidden outputs ``mean``, ``var`` of shape ``(N, C)``."""
from __future__ import annotations

import numpy as np  # the CPU kernel's order (cumsum)

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OpReqType, Params
from plexnet.operator.params import dmlc_float

from ._normcore import NormProp, affine_grads, normalize, normalize_grad, store


class InstanceNormParam(Params):
    eps = Field(float, default=1e-3, low=0.0, doc="added to the variance")


def _as_mxnet(x, gamma, beta, eps):
    """MXNet 1.9.1's CPU InstanceNorm bit for bit: per (sample, channel) the plain
    sequential sums (``cumsum``) times ``1 / n`` (a float32 scale, not a division), the
    two-pass variance, ``((x - mean) * gamma) / sqrt(var + eps) + beta`` (``eps`` as MXNet
    parsed it: ``dmlc_float``); returns ``(y, mean, var)``, the statistics shaped ``(N, C)``."""
    f = x.dtype.type
    N, C = x.shape[:2]
    rows = x.reshape(N, C, -1)
    scale = f(1) / f(rows.shape[-1])
    mean = np.cumsum(rows, axis=-1, dtype=x.dtype)[..., -1:]
    mean *= scale
    dev = rows - mean
    sq = dev * dev
    var = np.cumsum(sq, axis=-1, dtype=x.dtype, out=sq)[..., -1:]
    var *= scale
    dev *= gamma.reshape(1, C, 1)
    dev /= np.sqrt(var + f(eps))
    dev += beta.reshape(1, C, 1)
    return dev.reshape(x.shape), mean.reshape(N, C), var.reshape(N, C)


class InstanceNormOp(Operator):
    def __init__(self, param):
        self.eps = dmlc_float(param.eps)   # MXNet's float field, also for float64 data

    @staticmethod
    def _geom(x):
        axes = tuple(range(2, x.ndim))
        bshape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        return axes, bshape

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        x, gamma, beta = in_data
        axes, bshape = self._geom(x)
        if xp is np and x.dtype in (np.float32, np.float64) and x.size:
            y, mean, var = _as_mxnet(x, gamma, beta, self.eps)
            store(xp, out_data[0], req[0], y)
            store(xp, out_data[1], req[1], mean)
            store(xp, out_data[2], req[2], var)
            return
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
        affine_grads(xp, dy, xhat, (0,) + axes, req, in_grad)
        if req[0] != OpReqType.null:
            store(xp, in_grad[0], req[0], normalize_grad(dy * gamma.reshape(bshape), xhat, std, axes))


class InstanceNormProp(NormProp):
    param_cls = InstanceNormParam
    outputs = ("output", "mean", "var")

    def check_data(self, d):
        if len(d) < 3:
            raise ShapeError(f"{self.op_name}: data must be (N, C, spatial...), got shape {d}")
        return (d[1],), d[:2]


def register(registry):
    registry.register_property("InstanceNorm", InstanceNormProp)
    registry.register_impl("InstanceNorm", "*", lambda prop, ctx: InstanceNormOp(prop.param), impl_name="xp")
