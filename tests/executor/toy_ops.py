"""Small reference operators for the symbol and executor tests (names start with ``XT``).

They are registered as a throwaway plugin (``register()``), so the tests do not depend on
plexnet-ops-basic, and they declare the memory hints the executor must honour: backward
dependencies (``XTFullyConnected`` does not keep its output, ``XTActivation`` keeps only
its output, ``XTSoftmaxOutput`` ignores the head gradient) and in-place options.
Everything is written with plain numpy, in the dtype of the inputs (float64 in the
gradient tests).
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

import plexnet
from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params, Shape, assign
from plexnet.operator.simple_op import SimpleOp, SimpleOpInplaceOption as IO
from plexnet.resource import ResourceRequest

PLUGIN_NAME = "plexnet-tests-toy-ops"


class _InplaceProp(OperatorProperty):
    """Output 0 may share input 0's memory, and input 0's gradient the head gradient's."""

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_grad[0], in_grad[0])]


# -- FullyConnected --------------------------------------------------------------------------------
class FCParam(Params):
    num_hidden = Field(int, low=1)
    no_bias = Field(bool, default=False)


class FCOp(Operator):
    def __init__(self, p: FCParam) -> None:
        self.p = p

    def forward(self, ctx, in_data, req, out_data, aux):
        x = in_data[0].reshape(in_data[0].shape[0], -1)
        y = x @ in_data[1].T
        if not self.p.no_bias:
            y = y + in_data[2]
        assign(out_data[0], req[0], y)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        assert out_data[0] is None, "XTFullyConnected must not receive its output in backward"
        x = in_data[0].reshape(in_data[0].shape[0], -1)
        dy = out_grad[0]
        assign(in_grad[0], req[0], (dy @ in_data[1]).reshape(in_data[0].shape))
        assign(in_grad[1], req[1], dy.T @ x)
        if not self.p.no_bias:
            assign(in_grad[2], req[2], dy.sum(axis=0))


class FCProp(OperatorProperty):
    param_cls = FCParam

    def list_arguments(self):
        return ["data", "weight"] if self.param.no_bias else ["data", "weight", "bias"]

    def infer_shape(self, in_shape):
        d = in_shape[0]
        if d is None:
            return list(in_shape), [None], []
        k = int(np.prod(d[1:]))
        want = [d, (self.param.num_hidden, k)] + ([] if self.param.no_bias else [(self.param.num_hidden,)])
        for i, (have, w) in enumerate(zip(in_shape, want)):
            if have is not None and tuple(have) != w:
                raise ShapeError(f"{self.op_name}: argument {self.list_arguments()[i]!r} has shape {tuple(have)}, "
                                 f"expected {w}")
        return want, [(d[0], self.param.num_hidden)], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1]]


# -- Activation ------------------------------------------------------------------------------------
class ActParam(Params):
    act_type = Field(str, choices=("relu", "tanh", "sigmoid"))


class ActOp(Operator):
    def __init__(self, p: ActParam) -> None:
        self.t = p.act_type

    def forward(self, ctx, in_data, req, out_data, aux):
        x = in_data[0]
        y = np.maximum(x, 0) if self.t == "relu" else np.tanh(x) if self.t == "tanh" else 1 / (1 + np.exp(-x))
        assign(out_data[0], req[0], y)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        assert in_data[0] is None, "XTActivation must not receive its input in backward"
        y, dy = out_data[0], out_grad[0]
        g = dy * (y > 0) if self.t == "relu" else dy * (1 - y * y) if self.t == "tanh" else dy * y * (1 - y)
        assign(in_grad[0], req[0], g)


class ActProp(_InplaceProp):
    param_cls = ActParam

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], out_data[0]]


# -- SoftmaxOutput ------------------------------------------------------------------------------------
class SMParam(Params):
    grad_scale = Field(float, default=1.0)


class SMOp(Operator):
    def __init__(self, p: SMParam) -> None:
        self.s = p.grad_scale

    def forward(self, ctx, in_data, req, out_data, aux):
        x = in_data[0]
        e = np.exp(x - x.max(axis=1, keepdims=True))
        assign(out_data[0], req[0], e / e.sum(axis=1, keepdims=True))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        assert out_grad[0] is None and in_data[0] is None
        p, lab = out_data[0], in_data[1].astype(np.int64)
        g = p.copy()
        g[np.arange(p.shape[0]), lab] -= 1
        assign(in_grad[0], req[0], g * self.s)
        assign(in_grad[1], req[1], 0)


class SMProp(OperatorProperty):
    param_cls = SMParam

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        d = in_shape[0]
        if d is None:
            return list(in_shape), [None], []
        return [d, (d[0],)], [d], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [in_data[1], out_data[0]]

    def need_top_grad(self):
        return False

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]


# -- BatchNorm (NCHW or NC; aux moving stats; hidden outputs mean, var) ------------------------------
class BNParam(Params):
    eps = Field(float, default=1e-3)
    momentum = Field(float, default=0.9)


class BNOp(Operator):
    def __init__(self, p: BNParam) -> None:
        self.p = p

    @staticmethod
    def _axes(x):
        return (0,) + tuple(range(2, x.ndim))

    @staticmethod
    def _b(v, x):
        return v.reshape((1, -1) + (1,) * (x.ndim - 2))

    def forward(self, ctx, in_data, req, out_data, aux):
        x, gamma, beta = in_data
        if ctx.is_train:
            ax = self._axes(x)
            mean, var = x.mean(axis=ax), x.var(axis=ax)
            m = self.p.momentum
            aux[0][...] = aux[0] * m + mean * (1 - m)
            aux[1][...] = aux[1] * m + var * (1 - m)
        else:
            mean, var = aux[0].copy(), aux[1].copy()
        out_data[1][...] = mean
        out_data[2][...] = var
        xh = (x - self._b(mean, x)) / np.sqrt(self._b(var, x) + self.p.eps)
        assign(out_data[0], req[0], xh * self._b(gamma, x) + self._b(beta, x))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        x, gamma = in_data[0], in_data[1]
        assert out_data[0] is None
        mean, var, dy = out_data[1], out_data[2], out_grad[0]
        ax = self._axes(x)
        n = x.size / x.shape[1]
        inv = 1.0 / np.sqrt(self._b(var, x) + self.p.eps)
        xh = (x - self._b(mean, x)) * inv
        dgamma = (dy * xh).sum(axis=ax)
        dbeta = dy.sum(axis=ax)
        dxh = dy * self._b(gamma, x)
        dx = inv / n * (n * dxh - dxh.sum(axis=ax, keepdims=True) - xh * (dxh * xh).sum(axis=ax, keepdims=True))
        assign(in_grad[0], req[0], dx)
        assign(in_grad[1], req[1], dgamma)
        assign(in_grad[2], req[2], dbeta)


class BNProp(OperatorProperty):
    param_cls = BNParam

    def list_arguments(self):
        return ["data", "gamma", "beta"]

    def list_outputs(self):
        return ["output", "mean", "var"]

    def list_auxiliary_states(self):
        return ["moving_mean", "moving_var"]

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shape):
        d = in_shape[0]
        if d is None:
            return list(in_shape), [None, None, None], [None, None]
        c = (d[1],)
        return [d, c, c], [d, c, c], [c, c]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1], out_data[1], out_data[2]]


# -- Convolution (2-D, via windows) ---------------------------------------------------------------------
class ConvParam(Params):
    kernel = Field(Shape)
    num_filter = Field(int, low=1)
    stride = Field(Shape, default=Shape((1, 1)))
    pad = Field(Shape, default=Shape((0, 0)))
    no_bias = Field(bool, default=False)


def _windows(xp_, k, s):
    w = np.lib.stride_tricks.sliding_window_view(xp_, k, axis=(2, 3))
    return w[:, :, ::s[0], ::s[1]]


class ConvOp(Operator):
    def __init__(self, p: ConvParam) -> None:
        self.p = p

    def _pad(self, x):
        ph, pw = self.p.pad
        return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else x

    def forward(self, ctx, in_data, req, out_data, aux):
        x, w = in_data[0], in_data[1]
        win = _windows(self._pad(x), tuple(self.p.kernel), tuple(self.p.stride))
        y = np.einsum("ncxykl,fckl->nfxy", win, w, optimize=True)
        if not self.p.no_bias:
            y = y + in_data[2].reshape(1, -1, 1, 1)
        assign(out_data[0], req[0], y)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        x, w, dy = in_data[0], in_data[1], out_grad[0]
        kh, kw = self.p.kernel
        sh, sw = self.p.stride
        ph, pw = self.p.pad
        xp_ = self._pad(x)
        win = _windows(xp_, (kh, kw), (sh, sw))
        assign(in_grad[1], req[1], np.einsum("nfxy,ncxykl->fckl", dy, win, optimize=True))
        if not self.p.no_bias:
            assign(in_grad[2], req[2], dy.sum(axis=(0, 2, 3)))
        if req[0] != OpReqType.null:
            cols = np.einsum("nfxy,fckl->ncxykl", dy, w, optimize=True)
            dxp = np.zeros_like(xp_)
            oh, ow = dy.shape[2], dy.shape[3]
            for i in range(kh):
                for j in range(kw):
                    dxp[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] += cols[:, :, :, :, i, j]
            assign(in_grad[0], req[0], dxp[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]])


class ConvProp(OperatorProperty):
    param_cls = ConvParam

    def list_arguments(self):
        return ["data", "weight"] if self.param.no_bias else ["data", "weight", "bias"]

    def infer_shape(self, in_shape):
        d = in_shape[0]
        if d is None:
            return list(in_shape), [None], []
        p = self.param
        kh, kw = p.kernel
        oh = (d[2] + 2 * p.pad[0] - kh) // p.stride[0] + 1
        ow = (d[3] + 2 * p.pad[1] - kw) // p.stride[1] + 1
        ins = [d, (p.num_filter, d[1], kh, kw)] + ([] if p.no_bias else [(p.num_filter,)])
        return ins, [(d[0], p.num_filter, oh, ow)], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1]]

    def backward_resource(self, in_shape):
        return [ResourceRequest(ResourceRequest.kTempSpace)]


# -- Pooling (2-D max/avg, kernel = stride, no padding) ------------------------------------------------
class PoolParam(Params):
    kernel = Field(Shape)
    pool_type = Field(str, default="max", choices=("max", "avg"))


class PoolOp(Operator):
    def __init__(self, p: PoolParam) -> None:
        self.k = tuple(p.kernel)
        self.t = p.pool_type

    def _win(self, x):
        return _windows(x, self.k, self.k)

    def forward(self, ctx, in_data, req, out_data, aux):
        win = self._win(in_data[0])
        y = win.max(axis=(4, 5)) if self.t == "max" else win.mean(axis=(4, 5))
        assign(out_data[0], req[0], y)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        x, y, dy = in_data[0], out_data[0], out_grad[0]
        kh, kw = self.k
        g = np.zeros_like(x)
        oh, ow = y.shape[2], y.shape[3]
        for i in range(kh):
            for j in range(kw):
                xs = x[:, :, i:i + kh * oh:kh, j:j + kw * ow:kw]
                if self.t == "max":
                    g[:, :, i:i + kh * oh:kh, j:j + kw * ow:kw] += dy * (xs == y)
                else:
                    g[:, :, i:i + kh * oh:kh, j:j + kw * ow:kw] += dy / (kh * kw)
        assign(in_grad[0], req[0], g)


class PoolProp(OperatorProperty):
    param_cls = PoolParam

    def infer_shape(self, in_shape):
        d = in_shape[0]
        if d is None:
            return list(in_shape), [None], []
        kh, kw = self.param.kernel
        return [d], [(d[0], d[1], d[2] // kh, d[3] // kw)], []


# -- Flatten, SliceChannel, add ---------------------------------------------------------------------------
class FlattenOp(Operator):
    def __init__(self, p: Any = None) -> None:
        pass

    def forward(self, ctx, in_data, req, out_data, aux):
        assign(out_data[0], req[0], in_data[0].reshape(out_data[0].shape))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        assign(in_grad[0], req[0], out_grad[0].reshape(in_grad[0].shape))


class FlattenProp(_InplaceProp):
    def infer_shape(self, in_shape):
        d = in_shape[0]
        if d is None:
            return list(in_shape), [None], []
        return [d], [(d[0], int(np.prod(d[1:])))], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0]]


class SliceParam(Params):
    num_outputs = Field(int, low=1)


class SliceOp(Operator):
    def __init__(self, p: SliceParam) -> None:
        self.n = p.num_outputs

    def forward(self, ctx, in_data, req, out_data, aux):
        for o, r, part in zip(out_data, req, np.split(in_data[0], self.n, axis=1)):
            assign(o, r, part)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        assign(in_grad[0], req[0], np.concatenate(list(out_grad), axis=1))


class SliceProp(OperatorProperty):
    param_cls = SliceParam

    def list_outputs(self):
        return [f"output{i}" for i in range(self.param.num_outputs)]

    def infer_shape(self, in_shape):
        d = in_shape[0]
        n = self.param.num_outputs
        if d is None:
            return list(in_shape), [None] * n, []
        if d[1] % n:
            raise ShapeError(f"{self.op_name}: axis 1 of {d} does not split into {n}")
        o = (d[0], d[1] // n) + tuple(d[2:])
        return [d], [o] * n, []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return list(out_grad)


class ConcatParam(Params):
    num_args = Field(int, low=1)


class ConcatOp(Operator):
    def __init__(self, p: Any = None) -> None:
        pass

    def forward(self, ctx, in_data, req, out_data, aux):
        assign(out_data[0], req[0], np.concatenate(list(in_data), axis=1))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        sizes = np.cumsum([g.shape[1] for g in in_grad])[:-1]
        for g, r, part in zip(in_grad, req, np.split(out_grad[0], sizes, axis=1)):
            assign(g, r, part)


class ConcatProp(OperatorProperty):
    param_cls = ConcatParam

    def list_arguments(self):
        return [f"arg{i}" for i in range(self.param.num_args)]

    def infer_shape(self, in_shape):
        if any(s is None for s in in_shape):
            return list(in_shape), [None], []
        d = in_shape[0]
        return list(in_shape), [(d[0], sum(s[1] for s in in_shape)) + tuple(d[2:])], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0]]


class DropParam(Params):
    p = Field(float, default=0.5)


class DropOp(Operator):
    """Inverted dropout with a random mask kept as hidden output ``mask``."""

    def __init__(self, p: DropParam) -> None:
        self.p = p.p

    def forward(self, ctx, in_data, req, out_data, aux):
        x = in_data[0]
        if ctx.is_train:
            rng = ctx.requested[0].get_random()
            mask = (rng.random(x.shape) >= self.p) / (1 - self.p)
            out_data[1][...] = mask
            assign(out_data[0], req[0], x * mask)
        else:
            assign(out_data[0], req[0], x)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        assign(in_grad[0], req[0], out_grad[0] * out_data[1])


class DropProp(_InplaceProp):
    param_cls = DropParam

    def list_outputs(self):
        return ["output", "mask"]

    def num_visible_outputs(self):
        return 1

    def infer_shape(self, in_shape):
        d = in_shape[0]
        return list(in_shape), [d, d], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], out_data[1]]

    def forward_resource(self, in_shape):
        return [ResourceRequest(ResourceRequest.kRandom)]


# -- SimpleOps: add (out_grad kind, in-place), mul (in_data kind), square (in_data), exp (out_value) ------
def _add_f(lhs, rhs, env, ret, req, ctx):
    assign(ret, req, lhs + rhs)


def _add_g(og, env, gl, gr, rl, rr, ctx):
    assign(gl, rl, og)
    assign(gr, rr, og)


def _mul_f(lhs, rhs, env, ret, req, ctx):
    assign(ret, req, lhs * rhs)


def _mul_g(og, lhs, rhs, env, gl, gr, rl, rr, ctx):
    assign(gr, rr, og * lhs)
    assign(gl, rl, og * rhs)


def _sq_f(x, env, ret, req, ctx):
    assign(ret, req, x * x)


def _sq_g(og, x, env, g, req, ctx):
    assign(g, req, 2 * x * og)


def _exp_f(x, env, ret, req, ctx):
    assign(ret, req, np.exp(x))


def _exp_g(og, y, env, g, req, ctx):
    assign(g, req, og * y)


def _scale_f(x, env, ret, req, ctx):
    assign(ret, req, x * env.scalar)


def _scale_g(og, env, g, req, ctx):
    assign(g, req, og * env.scalar)


SIMPLE = [
    SimpleOp("XTadd", nin=2).set_function(_add_f, IO.kInplaceLhsOut).set_gradient(_add_g, IO.kInplaceOutLhs, "out_grad"),
    SimpleOp("XTmul", nin=2).set_function(_mul_f, IO.kInplaceLhsOut).set_gradient(_mul_g, IO.kNoInplace, "in_data"),
    SimpleOp("XTsquare").set_function(_sq_f, IO.kInplaceInOut).set_gradient(_sq_g, IO.kInplaceOutIn, "in_data"),
    SimpleOp("XTexp").set_function(_exp_f, IO.kInplaceInOut).set_gradient(_exp_g, IO.kInplaceOutIn, "out_value"),
    SimpleOp("XTscale").set_function(_scale_f, IO.kInplaceInOut).set_gradient(_scale_g, IO.kInplaceOutIn,
                                                                              "out_grad").set_enable_scalar(True),
]

PROPS = {
    "XTFullyConnected": (FCProp, FCOp), "XTActivation": (ActProp, ActOp), "XTSoftmaxOutput": (SMProp, SMOp),
    "XTBatchNorm": (BNProp, BNOp), "XTConvolution": (ConvProp, ConvOp), "XTPooling": (PoolProp, PoolOp),
    "XTFlatten": (FlattenProp, FlattenOp), "XTSliceChannel": (SliceProp, SliceOp), "XTConcat": (ConcatProp, ConcatOp),
    "XTDropout": (DropProp, DropOp),
}


class FailOp(Operator):
    """Raises in forward (error reporting tests)."""

    def __init__(self, p: Any = None) -> None:
        pass

    def forward(self, ctx, in_data, req, out_data, aux):
        raise ValueError("kaput")


class FailProp(OperatorProperty):
    pass


PROPS["XTFail"] = (FailProp, FailOp)


def _factory(op_cls: type) -> Any:
    def make(prop: Any, ctx: Any) -> Operator:
        return op_cls(prop.param) if prop.param is not None else op_cls()
    return make


@plexnet.hookimpl
def plexnet_register_operators(registry: Any) -> None:
    for name, (prop_cls, op_cls) in PROPS.items():
        registry.register_property(name, prop_cls)
        registry.register_impl(name, "*", _factory(op_cls), impl_name="toy")
    for s in SIMPLE:
        s.register(registry)


def register() -> None:
    """Register the toy operators once per process (as a plugin of the global manager)."""
    from plexnet.plugins import get_manager
    mgr = get_manager()
    if PLUGIN_NAME in mgr.records and mgr.records[PLUGIN_NAME].status == "ok":
        return
    mod = sys.modules[__name__]
    rec = mgr.add_plugin(mod, PLUGIN_NAME)
    if rec.status != "ok":
        raise RuntimeError(f"toy operators failed to register: {rec.error}")

