"""Convolution through cuDNN: ``conv_fprop`` (forward), ``conv_dgrad`` (data gradient),
``conv_wgrad`` (weight gradient); 1-D (as 2-D with a unit width), 2-D, 3-D; groups,
stride, pad, dilation. The bias is a separate broadcast add (and a CuPy reduction for
its gradient) rather than a fused graph, so every convolution needs only the plain
conv engines, which cuDNN has for NCHW FP32/FP16.

Workspace and temporaries come from the property's kTempSpace resource (ops-basic's
Convolution requests one for forward and backward). ``workspace`` (MB) limits the
plans cuDNN may choose; ``cudnn_tune`` is ignored (heuristics mode A, then FALLBACK);
``cudnn_off=True`` or a channels-last ``layout`` selects the xp implementation.
"""
from __future__ import annotations

from typing import Any, Sequence

from . import _fe
from ._base import ADD, NULL, CudnnOp, contiguous, cudnn_ready, store, supported_dtype

OP = "Convolution"


def as_2d(kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int], dilate: Sequence[int]):
    """1-D geometry as 2-D with a unit trailing axis (cuDNN wants 4-d or 5-d tensors)."""
    k, s, p, d = (tuple(int(v) for v in a) for a in (kernel, stride, pad, dilate))
    if len(k) == 1:
        return k + (1,), s + (1,), p + (0,), d + (1,)
    return k, s, p, d


def nd_dims(shape: Sequence[int]) -> list[int]:
    shape = [int(v) for v in shape]
    return shape + [1] if len(shape) == 3 else shape


# -- graph builders (shared with pooling) -----------------------------------------------------------
#: per graph: the frontend node, its two inputs (tensor name, node argument) and its output tensor
_NODES = {
    "fprop": ("conv_fprop", (("x", "image"), ("w", "weight")), "y"),
    "dgrad": ("conv_dgrad", (("dy", "loss"), ("w", "filter")), "dx"),
    "wgrad": ("conv_wgrad", (("x", "image"), ("dy", "loss")), "dw"),
}


def _node_graph(which: str, dev: int, dtype: Any, xdims: list, wdims: list, ydims: list, stride: tuple,
                pad: tuple, dilate: tuple, ws_limit: int | None) -> _fe.Built:
    node, inputs, output = _NODES[which]
    dims = {"x": xdims, "dx": xdims, "w": wdims, "dw": wdims, "y": ydims, "dy": ydims}
    spec = _fe.GraphSpec(dtype, dev, node)
    args = {arg: spec.input(name, dims[name], _fe.packed_strides(dims[name])) for name, arg in inputs}
    out = getattr(spec.graph, node)(**args, pre_padding=list(pad), post_padding=list(pad), stride=list(stride),
                                     dilation=list(dilate), compute_data_type=_fe.compute_dtype(dtype), name=which)
    spec.output(output, out, dims[output], _fe.packed_strides(dims[output]))
    return _fe.build(spec, conv_like=True, workspace_limit=ws_limit)


def fprop_graph(dev: int, dtype: Any, xdims: list, wdims: list, ydims: list, stride: tuple, pad: tuple,
                dilate: tuple, ws_limit: int | None) -> _fe.Built:
    """``y = conv(x, w)``."""
    return _node_graph("fprop", dev, dtype, xdims, wdims, ydims, stride, pad, dilate, ws_limit)


def dgrad_graph(dev: int, dtype: Any, xdims: list, wdims: list, ydims: list, stride: tuple, pad: tuple,
                dilate: tuple, ws_limit: int | None) -> _fe.Built:
    """``dx`` from ``dy`` and ``w``."""
    return _node_graph("dgrad", dev, dtype, xdims, wdims, ydims, stride, pad, dilate, ws_limit)


def wgrad_graph(dev: int, dtype: Any, xdims: list, wdims: list, ydims: list, stride: tuple, pad: tuple,
                dilate: tuple, ws_limit: int | None) -> _fe.Built:
    """``dw`` from ``x`` and ``dy``."""
    return _node_graph("wgrad", dev, dtype, xdims, wdims, ydims, stride, pad, dilate, ws_limit)


def conv_graph(which: str, dev: int, dtype: Any, xshape: Sequence[int], wshape: Sequence[int],
               yshape: Sequence[int], stride: tuple, pad: tuple, dilate: tuple, ws_limit: int | None,
               what: str = OP) -> Any:
    """The cached ``Built`` (or ``Unsupported``) conv graph ``which`` for these shapes."""
    xd, wd, yd = nd_dims(xshape), nd_dims(wshape), nd_dims(yshape)
    key = ("conv", which, dev, str(dtype), tuple(xd), tuple(wd), tuple(yd), stride, pad, dilate, ws_limit,
           _fe.allow_tf32())
    return _fe.CACHE.get_or_build(
        key, lambda: _node_graph(which, dev, dtype, xd, wd, yd, stride, pad, dilate, ws_limit),
        what=f"{what} {which}")


# -- the operator ------------------------------------------------------------------------------------
def unsupported_params(p: Any) -> str | None:
    """Why cuDNN is not used for these parameters at all (None: try cuDNN)."""
    if getattr(p, "cudnn_off", False):
        return "cudnn_off=True"
    layout = getattr(p, "layout", None)
    if layout is not None and not layout.startswith("NC"):
        return f"layout {layout!r} (channels-last) is not supported by this implementation"
    if len(p.kernel) not in (1, 2, 3):
        return f"{len(p.kernel)}-d kernel"
    return None


class CudnnConvolution(CudnnOp):
    kind = OP

    def __init__(self, prop: Any, ctx: Any) -> None:
        super().__init__(prop, ctx)
        p = self.p
        self.k, self.stride, self.pad, self.dilate = as_2d(p.kernel, p.stride, p.pad, p.dilate)
        ws = getattr(p, "workspace", None)
        self.ws_limit = None if ws is None else int(ws) << 20

    def _graph(self, which: str, dev: int, x: Any, w: Any, y: Any) -> Any:
        return conv_graph(which, dev, x.dtype, x.shape, w.shape, y.shape, self.stride, self.pad, self.dilate,
                          self.ws_limit)

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == NULL:
            return
        x, w = in_data[0], in_data[1]
        b = None if self.p.no_bias else in_data[2]
        y = out_data[0]
        if not cudnn_ready(x, w, y):
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        dev = _fe.device_id_of(ctx.run_ctx)
        g = self._graph("fprop", dev, x, w, y)
        if isinstance(g, _fe.Unsupported):
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        add = req[0] == ADD
        sc = _fe.scratch(ctx, [g.workspace, y.nbytes if add else 0])
        with _fe.on_stream(ctx.run_ctx):
            target = sc.array(1, y.shape, y.dtype) if add else y
            _fe.execute(g, ctx.run_ctx, dev, {"x": x, "w": w, "y": target}, sc.ptr(0))
            if b is not None:
                target += b.reshape((1, -1) + (1,) * (y.ndim - 2))
            if add:
                y += target
        self.cudnn_ran("forward")

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        dy, x, w = out_grad[0], in_data[0], in_data[1]
        rx, rw = req[0], req[1]
        rb = NULL if self.p.no_bias else req[2]
        dx, dw = in_grad[0], in_grad[1]
        if not (contiguous(dy, x, w, dx if rx != NULL else None, dw if rw != NULL else None)
                and supported_dtype(x.dtype) and x.dtype == w.dtype == dy.dtype):
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        dev = _fe.device_id_of(ctx.run_ctx)
        gd = self._graph("dgrad", dev, x, w, dy) if rx != NULL else None
        gw = self._graph("wgrad", dev, x, w, dy) if rw != NULL else None
        if isinstance(gd, _fe.Unsupported) or isinstance(gw, _fe.Unsupported):
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        ws = max(gd.workspace if gd is not None else 0, gw.workspace if gw is not None else 0)
        sc = _fe.scratch(ctx, [ws, x.nbytes if rx == ADD else 0, w.nbytes if rw == ADD else 0])
        with _fe.on_stream(ctx.run_ctx):
            if gd is not None:
                t = sc.array(1, dx.shape, dx.dtype) if rx == ADD else dx
                _fe.execute(gd, ctx.run_ctx, dev, {"dy": dy, "w": w, "dx": t}, sc.ptr(0))
                if rx == ADD:
                    dx += t
            if gw is not None:
                t = sc.array(2, dw.shape, dw.dtype) if rw == ADD else dw
                _fe.execute(gw, ctx.run_ctx, dev, {"x": x, "dy": dy, "dw": t}, sc.ptr(0))
                if rw == ADD:
                    dw += t
            if rb != NULL:
                axes = (0,) + tuple(range(2, dy.ndim))
                s = dy.sum(axis=axes, dtype="float32" if dy.dtype.itemsize < 4 else None)
                store(in_grad[2], rb, s.astype(in_grad[2].dtype, copy=False))
        self.cudnn_ran("backward")


def factory(prop: Any, ctx: Any) -> Any:
    why = unsupported_params(prop.param)
    if why is not None:
        _fe.count(f"{OP}.create.xp")
        return _fe.xp_operator(prop, ctx)
    return CudnnConvolution(prop, ctx)


def register(registry: Any, available: Any) -> None:
    registry.register_impl(OP, "gpu", factory, priority=10, impl_name="cudnn", available=available)
