"""softmax and SoftmaxActivation through cuDNN reduction + pointwise graphs.

The cuDNN frontend has no softmax node, so the data is viewed as ``(outer, L, inner)``
(``L`` the softmax axis) and described as 4-d ``[outer, L, inner, 1]``; then

- forward: ``m = max_L(x)``; ``e = exp(x - m)`` written to the output and
  ``s = sum_L(e)`` in one graph; ``y = e / s`` in place;
- backward: ``s = sum_L(dy * y)``; ``dx = y * (dy - s)``

with the statistics in FP32 scratch. Every graph is elementwise along the data, so the
in-place options ops-basic declares (output on the input, input-gradient on the output
gradient) are safe. ``temperature`` other than 1, ``dtype`` different from the input,
``use_length``, and ``log_softmax``/``softmin`` run the xp implementation.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _fe, _loader
from ._base import ADD, NULL, CudnnOp, cudnn_ready, prod


def softmax_unsupported(p: Any) -> str | None:
    if getattr(p, "use_length", False):
        return "use_length=True"
    t = getattr(p, "temperature", None)
    if t is not None and float(t) != 1.0:
        return f"temperature {t}"
    if getattr(p, "dtype", None) is not None:
        return f"dtype {p.dtype!r}"
    return None


def _dims(o: int, L: int, i: int) -> tuple[list, list, list, list]:
    xd = [o, L, i, 1]
    rd = [o, 1, i, 1]
    return xd, _fe.packed_strides(xd), rd, _fe.packed_strides(rd)


def fwd_graphs(dev: int, dtype: Any, o: int, L: int, i: int) -> _fe.Built:
    cd = _loader.cudnn
    f32 = np.float32
    xd, xs, rd, rs = _dims(o, L, i)
    cdt = _fe.compute_dtype(dtype)
    a = _fe.GraphSpec(dtype, dev, "softmax_max")
    X = a.input("x", xd, xs)
    M = a.graph.reduction(input=X, mode=cd.reduction_mode.MAX, compute_data_type=cdt, name="max")
    a.output("m", M, rd, rs, f32)
    ga = _fe.build(a)

    b = _fe.GraphSpec(dtype, dev, "softmax_exp_sum")
    X = b.input("x", xd, xs)
    Mi = b.input("m", rd, rs, f32)
    D = b.graph.sub(a=X, b=Mi, compute_data_type=cdt, name="x_minus_max")
    E = b.graph.exp(input=D, compute_data_type=cdt, name="exp")
    b.output("e", E, xd, xs)
    S = b.graph.reduction(input=E, mode=cd.reduction_mode.ADD, compute_data_type=cdt, name="sum")
    b.output("s", S, rd, rs, f32)
    gb = _fe.build(b)

    c = _fe.GraphSpec(dtype, dev, "softmax_div")
    E2 = c.input("e", xd, xs)
    S2 = c.input("s", rd, rs, f32)
    Y = c.graph.div(a=E2, b=S2, compute_data_type=cdt, name="normalize")
    c.output("y", Y, xd, xs)
    gc = _fe.build(c)
    ga.extra = (gb, gc)
    return ga


def bwd_graphs(dev: int, dtype: Any, o: int, L: int, i: int) -> _fe.Built:
    cd = _loader.cudnn
    f32 = np.float32
    xd, xs, rd, rs = _dims(o, L, i)
    cdt = _fe.compute_dtype(dtype)
    d = _fe.GraphSpec(dtype, dev, "softmax_bwd_dot")
    DY = d.input("dy", xd, xs)
    Y = d.input("y", xd, xs)
    T = d.graph.mul(a=DY, b=Y, compute_data_type=cdt, name="dy_y")
    S = d.graph.reduction(input=T, mode=cd.reduction_mode.ADD, compute_data_type=cdt, name="sum")
    d.output("s", S, rd, rs, f32)
    gd = _fe.build(d)

    e = _fe.GraphSpec(dtype, dev, "softmax_bwd_grad")
    DY = e.input("dy", xd, xs)
    Y = e.input("y", xd, xs)
    Si = e.input("s", rd, rs, f32)
    U = e.graph.sub(a=DY, b=Si, compute_data_type=cdt, name="dy_minus_s")
    DX = e.graph.mul(a=Y, b=U, compute_data_type=cdt, name="dx")
    e.output("dx", DX, xd, xs)
    ge = _fe.build(e)
    gd.extra = ge
    return gd


class CudnnSoftmaxBase(CudnnOp):
    def geometry(self, shape: tuple) -> tuple[int, int, int]:
        raise NotImplementedError

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == NULL:
            return
        x, y = in_data[0], out_data[0]
        if x.size == 0:
            return
        if not cudnn_ready(x, y):
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        o, L, i = self.geometry(tuple(x.shape))
        dev = _fe.device_id_of(ctx.run_ctx)
        ga = _fe.CACHE.get_or_build(("softmax_fwd", dev, str(x.dtype), o, L, i),
                                    lambda: fwd_graphs(dev, x.dtype, o, L, i), what=f"{self.kind} forward")
        if isinstance(ga, _fe.Unsupported):
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        gb, gc = ga.extra
        add = req[0] == ADD
        r = o * i * 4
        sc = _fe.scratch(ctx, [max(ga.workspace, gb.workspace, gc.workspace), r, r, y.nbytes if add else 0])
        rc = ctx.run_ctx
        with _fe.on_stream(rc):
            t = sc.array(3, y.shape, y.dtype) if add else y
            _fe.execute(ga, rc, dev, {"x": x, "m": sc.ptr(1)}, sc.ptr(0))
            _fe.execute(gb, rc, dev, {"x": x, "m": sc.ptr(1), "e": t, "s": sc.ptr(2)}, sc.ptr(0))
            _fe.execute(gc, rc, dev, {"e": t, "s": sc.ptr(2), "y": t}, sc.ptr(0))
            if add:
                y += t
        self.cudnn_ran("forward")

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == NULL:
            return
        dy, y, dx = out_grad[0], out_data[0], in_grad[0]
        if dx.size == 0:
            return
        if y is None or not cudnn_ready(dy, y, dx):
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        o, L, i = self.geometry(tuple(y.shape))
        dev = _fe.device_id_of(ctx.run_ctx)
        gd = _fe.CACHE.get_or_build(("softmax_bwd", dev, str(y.dtype), o, L, i),
                                    lambda: bwd_graphs(dev, y.dtype, o, L, i), what=f"{self.kind} backward")
        if isinstance(gd, _fe.Unsupported):
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        ge = gd.extra
        add = req[0] == ADD
        sc = _fe.scratch(ctx, [max(gd.workspace, ge.workspace), o * i * 4, dx.nbytes if add else 0])
        rc = ctx.run_ctx
        with _fe.on_stream(rc):
            t = sc.array(2, dx.shape, dx.dtype) if add else dx
            _fe.execute(gd, rc, dev, {"dy": dy, "y": y, "s": sc.ptr(1)}, sc.ptr(0))
            _fe.execute(ge, rc, dev, {"dy": dy, "y": y, "s": sc.ptr(1), "dx": t}, sc.ptr(0))
            if add:
                dx += t
        self.cudnn_ran("backward")


class CudnnSoftmax(CudnnSoftmaxBase):
    kind = "softmax"

    def geometry(self, shape: tuple) -> tuple[int, int, int]:
        ax = int(self.p.axis) % len(shape)
        return prod(shape[:ax]), int(shape[ax]), prod(shape[ax + 1:])


class CudnnSoftmaxActivation(CudnnSoftmaxBase):
    kind = "SoftmaxActivation"

    def geometry(self, shape: tuple) -> tuple[int, int, int]:
        if self.p.mode == "instance" or len(shape) < 2:
            return int(shape[0]), prod(shape[1:]), 1
        return int(shape[0]), int(shape[1]), prod(shape[2:])


def softmax_factory(prop: Any, ctx: Any) -> Any:
    if softmax_unsupported(prop.param) is not None:
        _fe.count("softmax.create.xp")
        return _fe.xp_operator(prop, ctx)
    return CudnnSoftmax(prop, ctx)


def softmax_activation_factory(prop: Any, ctx: Any) -> Any:
    return CudnnSoftmaxActivation(prop, ctx)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("softmax", "gpu", softmax_factory, priority=10, impl_name="cudnn", available=available)
    registry.register_impl("SoftmaxActivation", "gpu", softmax_activation_factory, priority=10,
                           impl_name="cudnn", available=available)
