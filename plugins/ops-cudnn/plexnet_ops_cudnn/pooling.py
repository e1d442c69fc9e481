"""Pooling through cuDNN where the frontend's Python API can express it.

The cuDNN frontend has a resample (pooling) node in C++, but its Python binding
(``cudnn.pygraph``, checked in 1.18, 1.24 and 1.32) exposes none. What it can express exactly:

- ``avg`` pooling with ``count_include_pad`` (MXNet's default) or without padding, and
  ``sum`` pooling, in the ``valid`` convention (or ``full`` where it gives the same
  output size), including ``global_pool``: a depthwise convolution (``num_group`` =
  channels) with a constant ``1/prod(kernel)`` (avg) or ``1`` (sum) filter; backward is
  the matching ``conv_dgrad``. Every window of the valid convention lies inside the
  padded input, so MXNet's divisor is ``prod(kernel)`` everywhere: the results agree.

Everything else (``max``, ``lp``, avg with ``count_include_pad=False`` and padding, the
``full`` convention with partial windows, ``cudnn_off``) runs the ops-basic xp
implementation: the factory returns it directly for parameter-level cases, and a
shape-level case falls back per call.
"""
from __future__ import annotations

import threading
from typing import Any

from . import _fe
from ._base import NULL, CudnnOp, contiguous, cudnn_ready, prod
from .convolution import as_2d, conv_graph

OP = "Pooling"


def unsupported_params(p: Any) -> str | None:
    if getattr(p, "cudnn_off", False):
        return "cudnn_off=True"
    if p.pool_type not in ("avg", "sum"):
        return (f"pool_type {p.pool_type!r}: the cuDNN frontend Python API has no pooling/resample node; "
                f"only avg/sum pooling is expressed (as a depthwise convolution)")
    layout = getattr(p, "layout", None)
    if layout is not None and not layout.startswith("NC"):
        return f"layout {layout!r}"
    if (p.pool_type == "avg" and p.count_include_pad is False and not p.global_pool
            and any(int(v) for v in p.pad)):
        return "avg pooling with count_include_pad=False and padding"
    return None


def conv_geometry(p: Any, xshape: tuple, yshape: tuple) -> tuple | None:
    """(kernel, stride, pad, dilate) of the equivalent depthwise convolution, already
    2-D for 1-D input, or None when the output shape is not the valid-convention one."""
    sp = tuple(int(v) for v in xshape[2:])
    if p.global_pool:
        k, s, pd = sp, (1,) * len(sp), (0,) * len(sp)
    else:
        k, s, pd = tuple(p.kernel), tuple(p.stride), tuple(p.pad)
    if len(k) != len(sp) or len(sp) not in (1, 2, 3):
        return None
    valid = tuple(1 + (i + 2 * q - kk) // ss for i, kk, ss, q in zip(sp, k, s, pd))
    if tuple(int(v) for v in yshape[2:]) != valid:
        return None  # full convention with partial windows
    return as_2d(k, s, pd, (1,) * len(sp))


_filters: dict = {}
_filters_lock = threading.Lock()


def _filter(cp: Any, dev: int, channels: int, kernel: tuple, dtype: Any, value: float) -> Any:
    """The constant depthwise filter ``(C, 1, *kernel)`` (cached per device and shape)."""
    key = (dev, channels, kernel, str(dtype), value)
    f = _filters.get(key)
    if f is None:
        with _filters_lock:
            f = _filters.get(key)
            if f is None:
                with cp.cuda.Device(dev):
                    f = cp.full((channels, 1) + kernel, value, dtype=dtype)
                _filters[key] = f
    return f


class CudnnPooling(CudnnOp):
    kind = OP

    def _prepare(self, ctx: Any, x: Any, y: Any) -> Any:
        if not cudnn_ready(x, y):
            return None
        geo = conv_geometry(self.p, tuple(x.shape), tuple(y.shape))
        if geo is None:
            return None
        k, s, pd, dl = geo
        nd = x.ndim - 2
        value = 1.0 / prod(k[:nd]) if self.p.pool_type == "avg" else 1.0
        dev = _fe.device_id_of(ctx.run_ctx)
        w = _filter(_loaded_cupy(), dev, int(x.shape[1]), tuple(k[:nd]), x.dtype, value)
        return dev, w, (s, pd, dl)

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == NULL:
            return
        x, y = in_data[0], out_data[0]
        prep = self._prepare(ctx, x, y)
        if prep is None:
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        dev, w, (s, pd, dl) = prep
        g = conv_graph("fprop", dev, x.dtype, x.shape, w.shape, y.shape, s, pd, dl, None, what=OP)
        if isinstance(g, _fe.Unsupported):
            return self.xp_forward(ctx, in_data, req, out_data, aux_states)
        self.run_graph(ctx, g, dev, {"x": x, "w": w}, "y", y, req[0], "forward")

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == NULL:
            return
        dy, dx = out_grad[0], in_grad[0]
        prep = self._prepare(ctx, dx, dy) if contiguous(dy, dx) and dy.dtype == dx.dtype else None
        if prep is None:
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        dev, w, (s, pd, dl) = prep
        g = conv_graph("dgrad", dev, dx.dtype, dx.shape, w.shape, dy.shape, s, pd, dl, None, what=OP)
        if isinstance(g, _fe.Unsupported):
            return self.xp_backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        self.run_graph(ctx, g, dev, {"dy": dy, "w": w}, "dx", dx, req[0], "backward")


def _loaded_cupy() -> Any:
    from . import _loader
    return _loader.cupy


def factory(prop: Any, ctx: Any) -> Any:
    if unsupported_params(prop.param) is not None:
        _fe.count(f"{OP}.create.xp")
        return _fe.xp_operator(prop, ctx)
    return CudnnPooling(prop, ctx)


def register(registry: Any, available: Any) -> None:
    registry.register_impl(OP, "gpu", factory, priority=10, impl_name="cudnn", available=available)
