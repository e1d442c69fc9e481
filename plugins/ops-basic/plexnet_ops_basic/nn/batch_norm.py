"""BatchNorm, MXNet 1.x semantics: arguments ``data, gamma, beta``, auxiliary states
``moving_mean, moving_var``, outputs ``output`` plus (visible with
``output_mean_var``) ``mean`` and ``var``; ``var`` holds the *inverse standard
deviation* ``1/sqrt(var + eps)`` as in MXNet.

Training (``is_train`` and not ``use_global_stats``): normalise with the batch mean and
biased variance over every axis but ``axis``; the moving statistics are updated *in
backward*, as MXNet 1.9.1's CPU operator does: ``moving = moving * momentum + batch * (1 -
momentum)``, the batch variance taken back from the saved inverse standard deviation
(``1 / invstd**2 - eps``, MXNet's ``invstd_to_variance``) (``update_moving``). So a
training-mode forward without a backward leaves them alone, and each backward of a graph
kept with ``retain_graph`` moves them once more, as in MXNet. Otherwise normalise with the
moving statistics. ``fix_gamma`` uses gamma = 1 (and gives gamma a zero
gradient) without writing into the gamma array.
"""
from __future__ import annotations

import numpy as np

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OpReqType, Params

from ._common import writes
from ._normcore import NormProp
from ._normcore import store as _store


class BatchNormParam(Params):
    eps = Field(float, default=1e-3, low=0.0, doc="added to the variance")
    momentum = Field(float, default=0.9, doc="momentum of the moving averages")
    fix_gamma = Field(bool, default=True, doc="use gamma = 1 and do not learn it")
    use_global_stats = Field(bool, default=False, doc="normalise with the moving statistics also in training")
    output_mean_var = Field(bool, default=False, doc="also output the mean and the inverse std")
    axis = Field(int, default=1, doc="the channel axis")
    cudnn_off = Field(bool, default=False)
    min_calib_range = Field(float, default=None, optional=True, doc="quantisation only (ignored)")
    max_calib_range = Field(float, default=None, optional=True, doc="quantisation only (ignored)")


def _sum_products(xp, a, b, ax):
    """Sum of ``a * b`` over every axis but ``ax`` in one pass without a temporary
    (einsum; ``(a * a).sum(...)`` took 6x as long on ResNet's (32, 64, 32, 32))."""
    idx = "abcdefghijklmnopqrstuvwxyz"[:a.ndim]
    return xp.einsum(f"{idx},{idx}->{idx[ax]}", a, b)


class BatchNormOp(Operator):
    def __init__(self, param: BatchNormParam) -> None:
        self.p = param
        self._geoms: dict = {}  # data shape -> _geom (the operator is reused call after call)

    def _geom(self, x):
        """``(channel axis, reduced axes, broadcast shape of a per-channel vector, elements
        per channel)`` for ``x``'s shape (cached)."""
        g = self._geoms.get(x.shape)
        if g is None:
            ax = self.p.axis % x.ndim
            axes = tuple(i for i in range(x.ndim) if i != ax)
            bshape = tuple(x.shape[i] if i == ax else 1 for i in range(x.ndim))
            g = self._geoms[x.shape] = (ax, axes, bshape, x.size // max(x.shape[ax], 1))
        return g

    def _batch_stats(self, ctx):
        return ctx.is_train and not self.p.use_global_stats

    def forward(self, ctx, in_data, req, out_data, aux_states):
        xp = ctx.xp
        p = self.p
        x, gamma, beta = in_data
        mm, mv = aux_states
        ax, axes, bshape, m = self._geom(x)
        # centre straight into the output where it is written (no temporary, no copy)
        direct = writes(req[0]) and not xp.may_share_memory(out_data[0], x)
        xc = out_data[0] if direct else xp.empty_like(x)
        if self._batch_stats(ctx):
            if x.dtype.itemsize >= 4:  # what mean() does, without its Python wrapper
                mean = x.sum(axis=axes)
                mean /= m
            else:  # mean() sums half floats in float32
                mean = x.mean(axis=axes)
            xp.subtract(x, mean.reshape(bshape), out=xc)
            var = _sum_products(xp, xc, xc, ax) / m
        else:
            mean, var = mm, mv
            xp.subtract(x, mean.reshape(bshape), out=xc)
        invstd = 1.0 / xp.sqrt(var + p.eps)
        scale = invstd if p.fix_gamma else gamma * invstd
        y = xc
        y *= scale.reshape(bshape).astype(x.dtype, copy=False)
        y += beta.reshape(bshape)
        if not direct:
            _store(xp, out_data[0], req[0], y)
        _store(xp, out_data[1], req[1], mean)
        _store(xp, out_data[2], req[2], invstd.astype(out_data[2].dtype, copy=False))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        p = self.p
        x, gamma = in_data[0], in_data[1]
        dy = out_grad[0]
        ax, axes, bshape, m = self._geom(x)
        if self._batch_stats(ctx):
            mean, invstd = out_data[1], out_data[2]
            update_moving(xp, p, aux_states, mean, invstd)
        else:
            mean = aux_states[0]
            invstd = 1.0 / xp.sqrt(aux_states[1] + p.eps)
        xhat = xp.subtract(x, mean.reshape(bshape))
        xhat *= invstd.reshape(bshape).astype(x.dtype, copy=False)
        dbeta = dy.sum(axis=axes)
        dgamma = _sum_products(xp, dy, xhat, ax)
        if req[0] != OpReqType.null:
            # dx = k*dy - k*dbeta/m - xhat * k*dgamma/m with k = gamma*invstd: written
            # into dx itself (xhat's buffer takes the product), no other temporary
            k = invstd if p.fix_gamma else gamma * invstd
            dx = in_grad[0]
            direct = writes(req[0]) and not (xp.may_share_memory(dx, dy) or xp.may_share_memory(dx, x))
            if not direct:
                dx = xp.empty_like(dy)
            xp.multiply(dy, k.reshape(bshape).astype(dy.dtype, copy=False), out=dx)
            if self._batch_stats(ctx):
                xhat *= (k * dgamma / m).reshape(bshape).astype(dy.dtype, copy=False)
                dx -= xhat
                dx -= (k * dbeta / m).reshape(bshape).astype(dy.dtype, copy=False)
            if not direct:
                _store(xp, in_grad[0], req[0], dx)
        if req[1] != OpReqType.null:
            _store(xp, in_grad[1], req[1], xp.zeros_like(dgamma) if p.fix_gamma else dgamma)
        _store(xp, in_grad[2], req[2], dbeta)


def update_moving(xp, p, aux_states, mean, invstd) -> None:
    """MXNet's moving-statistics update, run by every CPU BatchNorm's backward (module
    docstring): ``moving = moving * momentum + batch * (1 - momentum)`` with the batch
    variance ``1 / invstd**2 - eps`` from the saved inverse standard deviation."""
    mm, mv = aux_states
    var = 1.0 / xp.square(invstd.astype(np.float64)) - p.eps
    mm *= p.momentum
    mm += ((1 - p.momentum) * mean).astype(mm.dtype, copy=False)
    mv *= p.momentum
    mv += ((1 - p.momentum) * var).astype(mv.dtype, copy=False)


class BatchNormProp(NormProp):
    param_cls = BatchNormParam
    outputs = ("output", "mean", "var")
    backward_needs_stats = True

    def list_auxiliary_states(self):
        return ["moving_mean", "moving_var"]

    def input_var_attrs(self) -> dict:
        """Attributes given to input variables on composition (MXNet's
        ``FSetInputVarAttrOnCompose``): the moving mean starts at zero, the variance at one."""
        return {"moving_mean": {"__init__": '["zero", {}]'}, "moving_var": {"__init__": '["one", {}]'}}

    def infer_type(self, in_type):
        """MXNet's BatchNormType: gamma, beta, the statistics and the moving averages
        are float32 for float16 data, else the data's type (no other mixing)."""
        d = in_type[0]
        if d is None:
            return super().infer_type(in_type)
        p = np.float32 if np.dtype(d) == np.float16 else d
        return [d] + [p] * (len(in_type) - 1), [d, p, p], [p, p]

    def check_data(self, d):
        op = self.op_name
        if len(d) == 0:
            raise ShapeError(f"{op}: data must have at least one dimension")
        if not -len(d) <= self.param.axis < len(d):
            raise ShapeError(f"{op}: axis {self.param.axis} out of range for data shape {d}")
        c = (d[self.param.axis % len(d)],)
        return c, c


def register(registry):
    registry.register_property("BatchNorm", BatchNormProp)
    registry.register_impl("BatchNorm", "*", lambda prop, ctx: BatchNormOp(prop.param), impl_name="xp")
