"""L2Normalization, MXNet 1.x semantics: ``y = x / sqrt(sum(x**2) + eps)`` with the sum
over every axis but the first (``mode='instance'``, default), over axis 1
(``'channel'``) or over the spatial axes (``'spatial'``); ``eps=1e-10``. Hidden output
``norm``."""
from __future__ import annotations

import numpy as np  # the CPU kernel's order (cumsum)

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OpReqType, Params
from plexnet.operator.params import dmlc_float

from ._common import HiddenOutputProp
from ._normcore import store


class L2NormalizationParam(Params):
    eps = Field(float, default=1e-10, low=0.0, doc="added to the squared norm")
    mode = Field(str, default="instance", choices=("channel", "instance", "spatial"))


def _axes(mode, ndim):
    if mode == "instance":
        return tuple(range(1, ndim))
    if mode == "channel":
        return (1,)
    return tuple(range(2, ndim))


def _norm_shape(mode, d):
    if mode == "instance":
        return (d[0],)
    if mode == "channel":
        return (d[0],) + d[2:]
    return d[:2]


def _sequential_sum_sq(x, axes):
    """``sum(x * x)`` over ``axes`` (kept as size-1 dims) as MXNet's CPU loops add it: one
    after the other in row-major order of the reduced axes, in ``x``'s dtype (``cumsum``
    is such a sum; numpy's ``sum`` is pairwise)."""
    keep = tuple(a for a in range(x.ndim) if a not in axes)
    rows = np.ascontiguousarray(x.transpose(keep + tuple(axes))).reshape(-1, int(np.prod([x.shape[a] for a in axes])))
    sq = rows * rows
    total = np.cumsum(sq, axis=1, dtype=x.dtype, out=sq)[:, -1]
    return total.reshape(tuple(1 if i in axes else n for i, n in enumerate(x.shape)))


class L2NormalizationOp(Operator):
    def __init__(self, param):
        self.p = param

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        x = in_data[0]
        axes = _axes(self.p.mode, x.ndim)
        eps = dmlc_float(self.p.eps)   # MXNet's float field, also for float64 data
        if xp is np and x.dtype in (np.float32, np.float64) and x.size:
            # MXNet 1.9.1's CPU kernel bit for bit: sequential sums
            n = np.sqrt(_sequential_sum_sq(x, axes) + x.dtype.type(eps))
        else:
            n = xp.sqrt((x * x).sum(axis=axes, keepdims=True) + eps)
        store(xp, out_data[0], req[0], x / n)
        store(xp, out_data[1], req[1], n.reshape(out_data[1].shape))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        y, dy = out_data[0], out_grad[0]
        axes = _axes(self.p.mode, y.ndim)
        n = out_data[1].reshape(tuple(1 if i in axes else s for i, s in enumerate(y.shape)))
        dx = (dy - y * (dy * y).sum(axis=axes, keepdims=True)) / n
        store(xp, in_grad[0], req[0], dx)


class L2NormalizationProp(HiddenOutputProp):
    param_cls = L2NormalizationParam
    hidden = "norm"

    def hidden_shape(self, d):
        need = 2 if self.param.mode != "spatial" else 3
        if len(d) < need:
            raise ShapeError(f"{self.op_name}: mode {self.param.mode!r} needs data with at least {need} "
                             f"dimensions, got shape {d}")
        return _norm_shape(self.param.mode, d)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], out_data[0], out_data[1]]


def register(registry):
    registry.register_property("L2Normalization", L2NormalizationProp)
    registry.register_impl("L2Normalization", "*", lambda prop, ctx: L2NormalizationOp(prop.param),
                           impl_name="xp")
