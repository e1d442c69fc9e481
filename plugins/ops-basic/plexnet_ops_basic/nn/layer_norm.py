"""LayerNorm, MXNet 1.x semantics: normalise over ``axis`` (default -1) with
``y = (x - mean) / sqrt(var + eps) * gamma + beta``; ``gamma``/``beta`` have shape
``(data.shape[axis],)``. Outputs ``output, mean, std`` (``mean``/``std`` keep ``axis``
with size 1; visible with ``output_mean_var``)."""
from __future__ import annotations

import numpy as np  # the CPU kernel's order (cumsum); other devices run normalize()

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OpReqType, Params
from plexnet.operator.params import dmlc_float

from ._normcore import NormProp, affine_grads, normalize, normalize_grad
from ._normcore import store as _store


class LayerNormParam(Params):
    axis = Field(int, default=-1, doc="the axis to normalise over")
    eps = Field(float, default=1e-5, low=0.0, doc="added to the variance")
    output_mean_var = Field(bool, default=False, doc="also output the mean and the std")


def _last_axis_as_mxnet(x, gamma, beta, eps):
    """MXNet 1.9.1's CPU kernel for the last axis (``LayerNormCPUKernel``), its rounding
    steps included: plain sequential float sums (``cumsum`` is one; numpy's ``sum`` is
    pairwise), the two-pass variance, ``((x - mean) * gamma) / std + beta``, ``eps`` as
    MXNet parses it. Equal to MXNet bit for bit (docs/porting.md, "Bit-for-bit
    comparisons"); the other axes take MXNet's general path, not reproduced here."""
    f = x.dtype.type
    width = f(x.shape[-1])
    mean = np.cumsum(x, axis=-1, dtype=x.dtype)[..., -1:]
    mean /= width
    dev = x - mean
    sq = dev * dev
    var = np.cumsum(sq, axis=-1, dtype=x.dtype, out=sq)[..., -1:]
    var /= width
    var += f(eps)
    std = np.sqrt(var)
    dev *= gamma
    dev /= std
    dev += beta
    return dev, mean, std


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
        eps = dmlc_float(self.p.eps)   # MXNet's float field, also for float64 data
        if xp is np and ax == x.ndim - 1 and x.dtype in (np.float32, np.float64) and x.size:
            y, mean, std = _last_axis_as_mxnet(x, gamma, beta, eps)
        else:
            y, mean, std = normalize(xp, x, ax, eps)
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
        # MXNet 1.9.1 accumulates LayerNorm's reductions in double for float32 (AccType);
        # float32 sums over thousands of rows miss its gradients by > 1e-4 (test_layer_norm)
        acc = xp.float64 if x.dtype == xp.float32 else x.dtype
        xhat = (x.astype(acc) - mean) / std
        affine_grads(xp, dy.astype(acc), xhat, red, req, in_grad)
        if req[0] != OpReqType.null:
            _store(xp, in_grad[0], req[0], normalize_grad(dy * gamma.reshape(bshape), xhat, std, ax))


class LayerNormProp(NormProp):
    param_cls = LayerNormParam
    backward_needs_stats = True

    def check_data(self, d):
        if not -len(d) <= self.param.axis < len(d):
            raise ShapeError(f"{self.op_name}: axis {self.param.axis} out of range for data shape {d}")
        ax = self.param.axis % len(d)
        return (d[ax],), d[:ax] + (1,) + d[ax + 1:]


def register(registry):
    registry.register_property("LayerNorm", LayerNormProp)
    registry.register_impl("LayerNorm", "*", lambda prop, ctx: LayerNormOp(prop.param), impl_name="xp")
