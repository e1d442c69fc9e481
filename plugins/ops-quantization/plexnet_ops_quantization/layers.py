"""Quantized layers that keep the quantized type: ``quantized_pooling``,
``quantized_act``, ``quantized_flatten``, ``quantized_concat``, ``quantized_batch_norm``,
``quantized_embedding`` (the range inputs pass through, or are recomputed as MXNet
1.9.1 does)."""
from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape

from ._base import (F32, INT8, K_INT8, QRANGE, UINT8, QuantProp, get_scale, maxabs, register as _register, reorder,
                    saturate_cast, scalar)

__all__ = ["register"]

_DTYPES = ("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


class QuantizedPoolingParam(Params):
    kernel = Field(Shape, default=(), doc="pooling window: (y, x) or (d, y, x)")
    pool_type = Field(str, default="max", choices=("avg", "lp", "max", "sum"), doc="avg or max")
    global_pool = Field(bool, default=False, doc="pool over the whole spatial extent")
    cudnn_off = Field(bool, default=False, doc="accepted for MXNet compatibility")
    pooling_convention = Field(str, default="valid", choices=("full", "same", "valid"),
                               doc="valid: floor, full: ceil of the window count")
    stride = Field(Shape, default=(), doc="stride (default 1 per dimension)")
    pad = Field(Shape, default=(), doc="padding (default 0 per dimension)")
    p_value = Field(int, default=None, optional=True, doc="accepted for MXNet compatibility (Lp pooling)")
    count_include_pad = Field(bool, default=None, optional=True,
                              doc="avg: divide by the whole window, padding included (default true)")
    layout = Field(str, default=None, optional=True, choices=("NCDHW", "NCHW", "NCW", "NDHWC", "NHWC", "NWC"),
                   doc="only the channel-first layouts")


class QuantizedPoolingProp(QuantProp):
    """Max or average pooling of int8/uint8 data (channel-first); the range passes
    through. Averages round half to even; with ``count_include_pad`` (the default) they
    divide by the whole window, also past the edge of a ``full`` window (as MKL-DNN)."""

    param_cls = QuantizedPoolingParam
    arguments = ("data", "min_data", "max_data")

    def _geometry(self, d: tuple, shapes: Any) -> tuple[tuple, tuple, tuple, tuple]:
        p = self.param
        nd = len(d) - 2
        if p.pool_type not in ("avg", "max"):
            raise self.shape_error(f"pool_type {p.pool_type!r} is not supported (only avg and max, as MXNet)", shapes)
        if p.layout is not None and p.layout not in ("NCW", "NCHW", "NCDHW"):
            raise self.shape_error(f"layout {p.layout!r} is not supported (channel-first only)", shapes)
        if p.pooling_convention == "same":
            raise self.shape_error("pooling_convention 'same' is not supported (MXNet: valid and full)", shapes)
        if nd < 1:
            raise self.shape_error("data must be 3-d, 4-d or 5-d (N, C, spatial...)", shapes)
        if p.global_pool:
            return tuple(d[2:]), (1,) * nd, (0,) * nd, (1,) * nd
        kernel = tuple(p.kernel)
        stride = tuple(p.stride) or (1,) * nd
        pad = tuple(p.pad) or (0,) * nd
        if len(kernel) != nd or len(stride) != nd or len(pad) != nd:
            raise self.shape_error(f"kernel {kernel}, stride and pad need {nd} dimensions", shapes)
        out = []
        for i in range(nd):
            span = d[2 + i] + 2 * pad[i] - kernel[i]
            if span < 0:
                raise self.shape_error(f"kernel {kernel} is larger than the padded input", shapes)
            n = (math.ceil(span / stride[i]) if p.pooling_convention == "full" else span // stride[i]) + 1
            out.append(n)
        return kernel, stride, pad, tuple(out)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d = shapes[0]
        out = self._geometry(d, shapes)[3]
        return [tuple(d[:2]) + out, (1,), (1,)]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        p, x = self.param, ins[0]
        kernel, stride, pad, out = self._geometry(x.shape, [x.shape])
        nd = len(kernel)
        # room for the 'full' convention's last window past the padded edge
        extra = [max(0, (out[i] - 1) * stride[i] + kernel[i] - (x.shape[2 + i] + 2 * pad[i])) for i in range(nd)]
        widths = [(0, 0), (0, 0)] + [(pad[i], pad[i] + extra[i]) for i in range(nd)]
        is_max = p.pool_type == "max"
        fill = float(np.iinfo(x.dtype).min) if is_max else 0.0
        xf = xp.pad(x.astype(np.float64), widths, constant_values=fill)
        acc = None
        for k in itertools.product(*[range(s) for s in kernel]):
            sl = tuple(slice(k[i], k[i] + stride[i] * (out[i] - 1) + 1, stride[i]) for i in range(nd))
            win = xf[(slice(None), slice(None)) + sl]
            acc = win.copy() if acc is None else (xp.maximum(acc, win) if is_max else acc + win)
        if is_max:
            return [acc.astype(x.dtype), ins[1], ins[2]]
        include_pad = p.count_include_pad is None or p.count_include_pad
        if include_pad and not p.global_pool:  # MKL-DNN pads the 'full' windows' far side too: whole windows
            counts = float(np.prod(kernel))
        else:
            counts = self._counts(xp, x.shape[2:], kernel, stride, pad, out)
        return [saturate_cast(xp, acc / counts, x.dtype), ins[1], ins[2]]

    @staticmethod
    def _counts(xp: Any, size: tuple, kernel: tuple, stride: tuple, pad: tuple, out: tuple) -> Any:
        """Elements of each window inside the unpadded input (product over dimensions)."""
        c = xp.ones(out, dtype=np.float64)
        for i in range(len(kernel)):
            start = np.arange(out[i]) * stride[i] - pad[i]
            lo = np.maximum(start, 0)
            hi = np.minimum(start + kernel[i], size[i])
            shape = [1] * len(out)
            shape[i] = out[i]
            c = c * xp.asarray(np.maximum(hi - lo, 1).astype(np.float64)).reshape(shape)
        return c


class QuantizedActParam(Params):
    act_type = Field(str, choices=("relu", "sigmoid", "softrelu", "softsign", "tanh"), doc="only relu")


class QuantizedActProp(QuantProp):
    """ReLU of int8 data; the range passes through and the output is int8. MXNet's CPU
    kernel also takes uint8 data, which ReLU leaves as it is, and hands its bytes on as
    int8 (values above 127 read negative)."""

    param_cls = QuantizedActParam
    arguments = ("data", "min_data", "max_data")
    differentiable = False

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        if self.param.act_type != "relu":
            raise self.shape_error(f"act_type {self.param.act_type!r} is not supported (only relu, as MXNet)",
                                   shapes)
        return [shapes[0], (1,), (1,)]

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [INT8, F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        x = ins[0]
        y = x.view(INT8) if x.dtype == UINT8 else xp.maximum(x, 0)
        return [y, ins[1], ins[2]]


class QuantizedFlattenProp(QuantProp):
    """``(N, ...) -> (N, prod(...))`` of quantized data; the range passes through."""

    arguments = ("data", "min_data", "max_data")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d = shapes[0]
        if not d:
            raise self.shape_error("data must have at least one dimension", shapes)
        return [(d[0], int(np.prod(d[1:], dtype=np.int64))), (1,), (1,)]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        return [ins[0].reshape(outs[0].shape), ins[1], ins[2]]


class QuantizedConcatParam(Params):
    num_args = Field(int, low=1, doc="number of arrays to join")
    dim = Field(int, default=1, doc="axis to join along")


class QuantizedConcatProp(QuantProp):
    """Concat of int8/uint8 arrays with their own ranges. The output range is
    ``[min(0, mins), max(0, maxs)]``; inputs whose scale differs are rescaled to it
    (rounded half to even). int8 when any input is int8, else uint8."""

    param_cls = QuantizedConcatParam

    def list_arguments(self) -> list[str]:
        n = self.param.num_args
        return [f"arg{i}" for i in range(n)] + [f"arg{i}_{m}" for i in range(n) for m in ("min", "max")]

    @property
    def data_types(self) -> dict[int, tuple[np.dtype, ...]]:  # type: ignore[override]
        return {i: (INT8, UINT8) for i in range(self.param.num_args)}

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        n = self.param.num_args
        data = shapes[:n]
        ref = data[0]
        ax = self.param.dim
        if not -len(ref) <= ax < len(ref):
            raise self.shape_error(f"dim {ax} is out of range for {len(ref)}-d inputs", shapes)
        ax %= len(ref)
        for s in data[1:]:
            if len(s) != len(ref) or any(a != b for k, (a, b) in enumerate(zip(s, ref)) if k != ax):
                raise self.shape_error(f"inputs must have equal shapes except along dim {ax}", shapes)
        out = list(ref)
        out[ax] = sum(s[ax] for s in data)
        return [tuple(out), (1,), (1,)]

    def out_types(self, types):  # type: ignore[no-untyped-def]
        n = self.param.num_args
        return [INT8 if any(t == INT8 for t in types[:n]) else UINT8, F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        n = self.param.num_args
        odt = outs[0].dtype
        mins = [scalar(a) for a in ins[n::2]]
        maxs = [scalar(a) for a in ins[n + 1::2]]
        lo = np.float32(min([0.0] + [float(m) for m in mins]))
        hi = np.float32(max([0.0] + [float(m) for m in maxs]))
        out_scale = get_scale(odt, lo, hi)
        parts = []
        for x, a, b in zip(ins[:n], mins, maxs):
            s = get_scale(x.dtype, a, b)
            if s != out_scale:  # rescaled in the input's own type, then stored as the output type
                x = reorder(xp, x, np.float32(out_scale / s), x.dtype)
            parts.append(x.astype(odt))
        return [xp.concatenate(parts, axis=self.param.dim % outs[0].ndim), lo, hi]


class QuantizedBatchNormParam(Params):
    eps = Field(float, default=1e-3, doc="added to the variance")
    momentum = Field(float, default=0.9, doc="accepted for MXNet compatibility")
    fix_gamma = Field(bool, default=True, doc="accepted for MXNet compatibility (MXNet's kernel uses gamma)")
    use_global_stats = Field(bool, default=False, doc="accepted for MXNet compatibility (always global)")
    output_mean_var = Field(bool, default=False, doc="accepted for MXNet compatibility")
    axis = Field(int, default=1, doc="the channel axis")
    cudnn_off = Field(bool, default=False, doc="accepted for MXNet compatibility")
    min_calib_range = Field(float, default=None, optional=True, doc="calibrated minimum of the output (required)")
    max_calib_range = Field(float, default=None, optional=True, doc="calibrated maximum of the output (required)")


class QuantizedBatchNormProp(QuantProp):
    """Inference batch norm of int8/uint8 data with the moving statistics, into int8 in
    the calibrated output range: ``out = saturate(rint(q * w + b))`` with
    ``w = gamma / sqrt(var + eps) * |data range| / |out range|`` and
    ``b = (beta - mean * gamma / sqrt(var + eps)) * 127.5 / |out range|``. gamma is used
    whatever ``fix_gamma`` says (as MXNet's kernel)."""

    param_cls = QuantizedBatchNormParam
    arguments = ("data", "gamma", "beta", "min_data", "max_data")
    data_types = {0: (INT8, UINT8), 1: (F32,), 2: (F32,)}
    range_inputs = (3, 4)

    def list_auxiliary_states(self) -> list[str]:
        return ["moving_mean", "moving_var"]

    def _axis(self, d: tuple, shapes: Any) -> int:
        ax = self.param.axis
        if not -len(d) <= ax < len(d):
            raise self.shape_error(f"axis {ax} is out of range for {len(d)}-d data", shapes)
        return ax % len(d)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        p = self.param
        if p.min_calib_range is None or p.max_calib_range is None:
            raise self.shape_error("min_calib_range and max_calib_range are required (MXNet: quantized batch "
                                   "norm does not support calib_mode=None)", shapes)
        c = shapes[0][self._axis(shapes[0], shapes)]
        for i in (1, 2):
            if shapes[i] != (c,):
                raise self.shape_error(f"{self.arguments[i]} must have shape ({c},)", shapes)
        return [shapes[0], (1,), (1,)]

    def aux_shapes(self, shapes):  # type: ignore[no-untyped-def]
        c = shapes[0][self._axis(shapes[0], shapes)]
        return [(c,), (c,)]

    def fill_shapes(self, shapes):  # type: ignore[no-untyped-def]
        c = (shapes[0][self._axis(shapes[0], shapes)],)
        return [c if s is None and i in (1, 2) else s for i, s in enumerate(shapes)]

    def out_types(self, types):  # type: ignore[no-untyped-def]
        return [INT8, F32, F32]

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        p = self.param
        x, gamma, beta, mean, var = ins[0], ins[1], ins[2], ins[5], ins[6]
        out_abs = maxabs(p.min_calib_range, p.max_calib_range)
        data_abs = maxabs(scalar(ins[3]), scalar(ins[4]))
        f = np.float32
        invstd = (1.0 / xp.sqrt(var.astype(np.float64) + p.eps)).astype(f)
        w = gamma.astype(f) * invstd * f(data_abs / QRANGE[np.dtype(x.dtype)]) * f(K_INT8 / out_abs)
        b = (beta.astype(f) - mean.astype(f) * gamma.astype(f) * invstd) * K_INT8 / out_abs
        shape = [1] * x.ndim
        shape[self._axis(x.shape, [x.shape])] = -1
        y = x.astype(f) * w.reshape(shape) + b.reshape(shape)
        return [saturate_cast(xp, y, INT8), f(p.min_calib_range), f(p.max_calib_range)]


class QuantizedEmbeddingParam(Params):
    input_dim = Field(int, low=1, doc="vocabulary size")
    output_dim = Field(int, low=1, doc="embedding width")
    dtype = Field(str, default="float32", choices=_DTYPES, doc="accepted for MXNet compatibility")
    sparse_grad = Field(bool, default=False, doc="accepted for MXNet compatibility")


class QuantizedEmbeddingProp(QuantProp):
    """Rows of an int8 weight matrix for integer-valued indices (truncated, clipped to
    ``[0, input_dim)``); the weight's range passes through."""

    param_cls = QuantizedEmbeddingParam
    arguments = ("data", "weight", "min_weight", "max_weight")
    data_types = {1: (INT8,)}
    range_inputs = (2, 3)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        p = self.param
        if shapes[1] != (p.input_dim, p.output_dim):
            raise self.shape_error(f"weight must have shape {(p.input_dim, p.output_dim)}", shapes)
        return [tuple(shapes[0]) + (p.output_dim,), (1,), (1,)]

    def fill_shapes(self, shapes):  # type: ignore[no-untyped-def]
        if shapes[1] is None:
            shapes = [shapes[0], (self.param.input_dim, self.param.output_dim)] + list(shapes[2:])
        return shapes

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        types = self.check_types(list(in_type))
        if types[0] is None:
            types[0] = F32
        return types, [INT8, F32, F32], []

    def forward(self, xp, ins, outs):  # type: ignore[no-untyped-def]
        idx = xp.clip(xp.trunc(ins[0].astype(np.float64)), 0, self.param.input_dim - 1).astype(np.int64)
        return [ins[1][idx], ins[2], ins[3]]


def register(registry: Any) -> None:
    _register(registry, {
        "quantized_pooling": QuantizedPoolingProp, "quantized_act": QuantizedActProp,
        "quantized_flatten": QuantizedFlattenProp, "quantized_concat": QuantizedConcatProp,
        "quantized_batch_norm": QuantizedBatchNormProp, "quantized_embedding": QuantizedEmbeddingProp,
    })
