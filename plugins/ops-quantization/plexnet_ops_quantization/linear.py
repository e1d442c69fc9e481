"""``quantized_conv`` and ``quantized_fully_connected``: int8/uint8 data times int8
weights, accumulated exactly in int32, with the int32 output range MXNet derives from
the input ranges (``QuantizationRangeForMultiplication``).

Products are summed exactly with float32 BLAS on slices of the inner dimension short
enough to stay below 2**24, the slices added in float64 (``int_matmul``). Bias handling
follows MXNet 1.9.1's CPU kernels: the fully connected layer rescales the int8 bias into
the output's int32 scale, the convolution adds the int8 bias values as they are."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape

from ._base import (INT8, INT32, K_INT8, QRANGE, UINT8, QuantProp, int_matmul, maxabs, range_for_multiplication,
                    register as _register, saturate_cast, scalar)

__all__ = ["register"]

_RANGES = ("min_data", "max_data", "min_weight", "max_weight", "min_bias", "max_bias")


def _with_bias(no_bias: bool) -> tuple[str, ...]:
    ins = ("data", "weight") if no_bias else ("data", "weight", "bias")
    return ins + (_RANGES[:4] if no_bias else _RANGES)


class QuantizedConvParam(Params):
    kernel = Field(Shape, doc="convolution kernel size: (w,), (h, w) or (d, h, w)")
    stride = Field(Shape, default=(), doc="stride (default 1 per dimension)")
    dilate = Field(Shape, default=(), doc="dilation (default 1 per dimension)")
    pad = Field(Shape, default=(), doc="zero padding (default 0 per dimension)")
    num_filter = Field(int, low=0, doc="number of output channels")
    num_group = Field(int, default=1, low=0, doc="number of groups")
    workspace = Field(int, default=1024, low=0, doc="accepted for MXNet compatibility")
    no_bias = Field(bool, default=False, doc="no bias input")
    cudnn_tune = Field(str, default=None, optional=True, choices=("fastest", "limited_workspace", "off"),
                       doc="accepted for MXNet compatibility")
    cudnn_off = Field(bool, default=False, doc="accepted for MXNet compatibility")
    layout = Field(str, default=None, optional=True, choices=("NCDHW", "NCHW", "NCW", "NDHWC", "NHWC"),
                   doc="only the channel-first layouts")


def _int32(xp: Any, acc: Any) -> Any:
    return saturate_cast(xp, acc, INT32)


class QuantizedConvProp(QuantProp):
    """Convolution of uint8/int8 data (NCHW, NCDHW; one group) with int8 weights into int32.
    Output range: ``+-(|data|/127) * (|weight|/127) * 2**31`` (MXNet's S8S8 rule, also
    for uint8 data)."""

    param_cls = QuantizedConvParam
    @property
    def data_types(self) -> dict[int, tuple[np.dtype, ...]]:  # type: ignore[override]
        return {0: (UINT8, INT8), 1: (INT8,)} if self.param.no_bias else {0: (UINT8, INT8), 1: (INT8,), 2: (INT8,)}

    def list_arguments(self) -> list[str]:
        return list(_with_bias(self.param.no_bias))

    def _geometry(self, nd: int, shapes: Any) -> tuple[tuple, tuple, tuple]:
        p = self.param
        if p.layout is not None and p.layout not in ("NCW", "NCHW", "NCDHW"):
            raise self.shape_error(f"layout {p.layout!r} is not supported (channel-first only, as MXNet's CPU)",
                                   shapes)
        if len(p.kernel) != nd:
            raise self.shape_error(f"kernel {tuple(p.kernel)} needs {len(p.kernel) + 2}-d data", shapes)
        stride = tuple(p.stride) or (1,) * nd
        dilate = tuple(p.dilate) or (1,) * nd
        pad = tuple(p.pad) or (0,) * nd
        if len(stride) != nd or len(dilate) != nd or len(pad) != nd:
            raise self.shape_error("stride, dilate and pad must have as many dimensions as kernel", shapes)
        return stride, dilate, pad

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        p, d = self.param, shapes[0]
        nd = len(d) - 2
        if nd not in (2, 3):
            raise self.shape_error("data must be NCHW or NCDHW (MXNet's CPU kernel has no 1-d quantized_conv)",
                                   shapes)
        stride, dilate, pad = self._geometry(nd, shapes)
        if p.num_group != 1:
            raise self.shape_error(f"num_group={p.num_group}: quantized_conv supports num_group=1 only (as MXNet)",
                                   shapes)
        want_w = (p.num_filter, d[1]) + tuple(p.kernel)
        if shapes[1] != want_w:
            raise self.shape_error(f"weight must have shape {want_w}", shapes)
        if not p.no_bias and shapes[2] != (p.num_filter,):
            raise self.shape_error(f"bias must have shape ({p.num_filter},)", shapes)
        out = []
        for i in range(nd):
            span = dilate[i] * (p.kernel[i] - 1) + 1
            n = (d[2 + i] + 2 * pad[i] - span) // stride[i] + 1
            if n <= 0:
                raise self.shape_error(f"kernel {tuple(p.kernel)} (dilated) is larger than the padded input", shapes)
            out.append(n)
        return [(d[0], p.num_filter) + tuple(out), (1,), (1,)]

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [INT32, np.dtype(np.float32), np.dtype(np.float32)]

    def fill_shapes(self, shapes):  # type: ignore[no-untyped-def]
        p, d = self.param, shapes[0]
        g = max(p.num_group, 1)
        if len(d) >= 2:
            shapes = list(shapes)
            if shapes[1] is None:
                shapes[1] = (p.num_filter, d[1] // g) + tuple(p.kernel)
            if not p.no_bias and shapes[2] is None:
                shapes[2] = (p.num_filter,)
        return shapes

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        p = self.param
        x, w = ins[0], ins[1]
        nd = x.ndim - 2
        stride, dilate, pad = self._geometry(nd, [x.shape, w.shape])
        out_sp = tuple(outs[0].shape[2:])
        x = x.astype(np.float32)  # once: the columns are built in the BLAS type
        if any(pad):
            x = xp.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
        n, c = x.shape[0], x.shape[1]
        # columns (n, C * prod(kernel), prod(out)): one strided slice per kernel offset
        cols = xp.empty((n, c, int(np.prod(p.kernel))) + out_sp, dtype=np.float32)
        for j, k in enumerate(itertools.product(*[range(s) for s in p.kernel])):
            sl = tuple(slice(k[i] * dilate[i], k[i] * dilate[i] + stride[i] * (out_sp[i] - 1) + 1, stride[i])
                       for i in range(nd))
            cols[:, :, j] = x[(slice(None), slice(None)) + sl]
        cols = cols.reshape(n, -1, int(np.prod(out_sp)))
        w2 = w.reshape(p.num_filter, -1).astype(np.float32)
        acc = xp.stack([int_matmul(xp, w2, cols[i]) for i in range(n)]).reshape((n, p.num_filter) + out_sp)
        if not p.no_bias:  # MXNet 1.9.1 (MKL-DNN) adds the int8 bias values unscaled
            acc = acc + ins[2].astype(np.float64).reshape((1, -1) + (1,) * nd)
        r = 2 if p.no_bias else 3
        lo, hi = range_for_multiplication(scalar(ins[r]), scalar(ins[r + 1]), scalar(ins[r + 2]),
                                          scalar(ins[r + 3]), all_sign=True)
        return [_int32(xp, acc), lo, hi]


class QuantizedFCParam(Params):
    num_hidden = Field(int, low=1, doc="number of output units")
    no_bias = Field(bool, default=False, doc="no bias input")
    flatten = Field(bool, default=True, doc="collapse all but the first axis of data")


class QuantizedFullyConnectedProp(QuantProp):
    """``data @ weight.T + bias`` in int32 for int8/uint8 data and int8 weights. The int8
    bias enters as ``trunc(bias * sd * sw * |bias range| / 127.5)`` (``sd``, ``sw``: levels
    per unit of data and weight). Output range: S8S8 for int8 data, S8U8 for uint8."""

    param_cls = QuantizedFCParam
    @property
    def data_types(self) -> dict[int, tuple[np.dtype, ...]]:  # type: ignore[override]
        return {0: (INT8, UINT8), 1: (INT8,)} if self.param.no_bias else {0: (INT8, UINT8), 1: (INT8,), 2: (INT8,)}

    def list_arguments(self) -> list[str]:
        return list(_with_bias(self.param.no_bias))

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        p, d = self.param, shapes[0]
        if len(d) < 1 or (not p.flatten and len(d) < 2):
            raise self.shape_error("data needs at least 1 dimension (2 with flatten=False)", shapes)
        k = int(np.prod(d[1:], dtype=np.int64)) if p.flatten else d[-1]
        if shapes[1] != (p.num_hidden, k):
            raise self.shape_error(f"weight must have shape {(p.num_hidden, k)}", shapes)
        if not p.no_bias and shapes[2] != (p.num_hidden,):
            raise self.shape_error(f"bias must have shape ({p.num_hidden},)", shapes)
        out = (d[0], p.num_hidden) if p.flatten else tuple(d[:-1]) + (p.num_hidden,)
        return [out, (1,), (1,)]

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [INT32, np.dtype(np.float32), np.dtype(np.float32)]

    def fill_shapes(self, shapes):  # type: ignore[no-untyped-def]
        p, d = self.param, shapes[0]
        if len(d) >= 1:
            shapes = list(shapes)
            k = int(np.prod(d[1:], dtype=np.int64)) if p.flatten else d[-1]
            if shapes[1] is None:
                shapes[1] = (p.num_hidden, k)
            if not p.no_bias and shapes[2] is None:
                shapes[2] = (p.num_hidden,)
        return shapes

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        p = self.param
        x, w = ins[0], ins[1]
        r = 2 if p.no_bias else 3
        dmin, dmax, wmin, wmax = (scalar(a) for a in ins[r:r + 4])
        x2 = x.reshape(x.shape[0], -1) if p.flatten else x.reshape(-1, x.shape[-1])
        acc = int_matmul(xp, x2, w.T)
        if not p.no_bias:
            sd = np.float32(QRANGE[np.dtype(x.dtype)] / maxabs(dmin, dmax))
            sw = np.float32(K_INT8 / maxabs(wmin, wmax))
            rescale = np.float32(np.float32(np.float32(sd * sw) * maxabs(scalar(ins[r + 4]), scalar(ins[r + 5])))
                                 / K_INT8)
            bias = xp.trunc(ins[2].astype(np.float32) * rescale).astype(np.float64)
            acc = acc + bias[None, :]
        lo, hi = range_for_multiplication(dmin, dmax, wmin, wmax, all_sign=x.dtype == INT8)
        return [_int32(xp, acc).reshape(outs[0].shape), lo, hi]


def register(registry: Any) -> None:
    _register(registry, {"quantized_conv": QuantizedConvProp, "quantized_fully_connected": QuantizedFullyConnectedProp})
