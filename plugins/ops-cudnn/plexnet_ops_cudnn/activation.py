"""Activation (relu, sigmoid, tanh) through cuDNN pointwise graphs.

Forward is one pointwise node. Backward reads the *output* (ops-basic's Activation
declares ``out_grad`` and ``out_data`` as its backward dependencies, so the forward may
run in place): relu uses ``relu_backward(dy, y)`` (``y > 0`` exactly where ``x > 0``);
sigmoid is ``dy * (y - y*y)`` and tanh ``dy - dy*y*y``, each a fused pointwise graph
with virtual intermediates. Tensors are described as flat channels-last 4-d views, the
same for every tensor of a graph, so any contiguous shape works. Other activation types
(softrelu, softsign, log_sigmoid, mish) run the xp implementation.
"""
from __future__ import annotations

from typing import Any

from . import _fe
from ._base import NULL, CudnnOp, cudnn_ready

OP = "Activation"
CUDNN_ACTS = ("relu", "sigmoid", "tanh")


def unsupported_params(p: Any) -> str | None:
    if p.act_type not in CUDNN_ACTS:
        return f"act_type {p.act_type!r} (cuDNN path covers {', '.join(CUDNN_ACTS)})"
    return None


def fwd_graph(dev: int, dtype: Any, n: int, act: str) -> _fe.Built:
    dims, st = _fe.flat_dims(n)
    spec = _fe.GraphSpec(dtype, dev, f"act_{act}")
    X = spec.input("x", dims, st)
    g = spec.graph
    cdt = _fe.compute_dtype(dtype)
    if act == "relu":
        Y = g.relu(input=X, compute_data_type=cdt, name="relu")
    elif act == "sigmoid":
        Y = g.sigmoid(input=X, compute_data_type=cdt, name="sigmoid")
    else:
        Y = g.tanh(input=X, compute_data_type=cdt, name="tanh")
    spec.output("y", Y, dims, st)
    return _fe.build(spec)


def bwd_graph(dev: int, dtype: Any, n: int, act: str) -> _fe.Built:
    dims, st = _fe.flat_dims(n)
    spec = _fe.GraphSpec(dtype, dev, f"act_{act}_bwd")
    DY = spec.input("dy", dims, st)
    Y = spec.input("y", dims, st)
    g = spec.graph
    cdt = _fe.compute_dtype(dtype)
    if act == "relu":
        DX = g.relu_backward(loss=DY, input=Y, compute_data_type=cdt, name="drelu")
    elif act == "sigmoid":
        yy = g.mul(a=Y, b=Y, compute_data_type=cdt, name="yy")
        d = g.sub(a=Y, b=yy, compute_data_type=cdt, name="y_minus_yy")
        DX = g.mul(a=DY, b=d, compute_data_type=cdt, name="dsigmoid")
    else:
        yy = g.mul(a=Y, b=Y, compute_data_type=cdt, name="yy")
        t = g.mul(a=DY, b=yy, compute_data_type=cdt, name="dy_yy")
        DX = g.sub(a=DY, b=t, compute_data_type=cdt, name="dtanh")
    spec.output("dx", DX, dims, st)
    return _fe.build(spec)


class CudnnActivation(CudnnOp):
    kind = OP

    def __init__(self, prop: Any, ctx: Any) -> None:
        super().__init__(prop, ctx)
        self.act = self.p.act_type

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == NULL:
            return
        x, y = in_data[0], out_data[0]
        if x.size == 0:
            return
        if not cudnn_ready(x, y):
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        dev = _fe.device_id_of(ctx.run_ctx)
        n = int(x.size)
        g = _fe.CACHE.get_or_build(("act_fwd", dev, str(x.dtype), n, self.act),
                                   lambda: fwd_graph(dev, x.dtype, n, self.act), what=f"{OP}({self.act}) forward")
        if isinstance(g, _fe.Unsupported):
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        self.run_graph(ctx, g, dev, {"x": x}, "y", y, req[0], "forward")

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == NULL:
            return
        dy, y, dx = out_grad[0], out_data[0], in_grad[0]
        if dx.size == 0:
            return
        if y is None or not cudnn_ready(dy, y, dx):
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        dev = _fe.device_id_of(ctx.run_ctx)
        n = int(dy.size)
        g = _fe.CACHE.get_or_build(("act_bwd", dev, str(dy.dtype), n, self.act),
                                   lambda: bwd_graph(dev, dy.dtype, n, self.act), what=f"{OP}({self.act}) backward")
        if isinstance(g, _fe.Unsupported):
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        self.run_graph(ctx, g, dev, {"dy": dy, "y": y}, "dx", dx, req[0], "backward")


def factory(prop: Any, ctx: Any) -> Any:
    if unsupported_params(prop.param) is not None:
        _fe.count(f"{OP}.create.xp")
        return _fe.xp_operator(prop, ctx)
    return CudnnActivation(prop, ctx)


def register(registry: Any, available: Any) -> None:
    registry.register_impl(OP, "gpu", factory, priority=10, impl_name="cudnn", available=available)
