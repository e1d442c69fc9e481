"""Indexing: slice (``crop``), slice_axis, take, pick, one_hot, where.

Index arrays may have any dtype (MXNet passes them as float); they are truncated to
integers. ``take``/``pick`` modes: ``clip`` (clamp to the valid range), ``wrap``
(Python-style modulo), ``raise`` (take only: out-of-range indices raise ``IndexError``).
Indices get a zero gradient.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, OperatorProperty, Params, Shape
from plexnet.operator.params import ParamError

from ._common import (ADD, NULL, OneInputProp, XpOperator, fill_zero, norm_axis, register_op, shape_error, store,
                      take_in_range)

__all__ = ["register", "slice_key"]


def _as_index(xp: Any, idx: Any) -> Any:
    if idx.dtype.kind in "iu":
        return idx.astype(xp.int64, copy=False)
    return xp.trunc(idx).astype(xp.int64)


def _fix_index(xp: Any, op: str, idx: Any, n: int, mode: str) -> Any:
    idx = _as_index(xp, idx)
    if mode == "wrap":
        return xp.mod(idx, n) if n > 0 else idx
    if mode == "raise":
        # one device-to-host read (a sync) for the whole check
        # MXNet 1.9.1 checks 0 <= index < n: negative indices raise too
        if idx.size and bool(((idx < 0) | (idx >= n)).any()):
            raise IndexError(f"{op}: index out of range [0, {n - 1}] with mode='raise'")
        return idx
    return xp.clip(idx, 0, max(n - 1, 0))


def scatter_add(xp: Any, arr: Any, key: Any, val: Any) -> None:
    """``arr[key] += val`` with repeated indices accumulated."""
    at = getattr(getattr(xp, "add", None), "at", None)
    if at is not None:
        at(arr, key, val)
        return
    import cupyx  # type: ignore[import-not-found]
    cupyx.scatter_add(arr, key, val)


#: rows below which ``scatter_add_rows`` calls ``add.at`` as it is
_ROWS_SPLIT = 64


def scatter_add_rows(xp: Any, arr: Any, idx: Any, rows: Any) -> None:
    """``arr[idx[i]] += rows[i]`` along axis 0, in order (``add.at``'s result, bit for bit):
    the indices that occur once take one fancy-indexed addition, only the repeated ones
    ``add.at``, whose numpy loop over whole rows is slow (an Embedding gradient of 4096
    rows of 512: 14.5 ms by ``add.at`` alone)."""
    idx = idx.reshape(-1)
    rows = rows.reshape((idx.size,) + tuple(arr.shape[1:]))
    if xp is not np or idx.size < _ROWS_SPLIT:
        scatter_add(xp, arr, idx, rows)
        return
    _, inverse, counts = np.unique(idx, return_inverse=True, return_counts=True)
    repeated = counts[inverse] > 1
    once = ~repeated
    arr[idx[once]] += rows[once]
    if repeated.any():
        np.add.at(arr, idx[repeated], rows[repeated])


# -- slice -----------------------------------------------------------------------------------------------------

class SliceParam(Params):
    begin = Field(Shape, doc="start index per axis (None: from the start)")
    end = Field(Shape, doc="stop index per axis (None: to the end)")
    step = Field(Shape, default=Shape(()), doc="step per axis (default 1; None: 1)")

    def __post_init__(self, op: str) -> None:
        if len(self.begin) != len(self.end):
            raise ParamError(f"{op}: arguments 'begin'={tuple(self.begin)} and 'end'={tuple(self.end)} must "
                             f"have the same length")
        if len(self.step) and len(self.step) != len(self.begin):
            raise ParamError(f"{op}: argument 'step'={tuple(self.step)} must be empty or as long as 'begin'")
        if any(s == 0 for s in self.step):
            raise ParamError(f"{op}: invalid value {tuple(self.step)} for argument 'step': steps cannot be 0")


def slice_key(op: str, shape: tuple, begin: Any, end: Any, step: Any) -> tuple[tuple, tuple]:
    """``(index tuple, output shape)`` for Python-style slicing per axis.

    As MXNet 1.9.1 (tests/fixtures/mxnet_slice_edges.json): an end beyond the axis is
    clipped, so is a begin before its start; an empty range with a positive step
    (``begin >= end`` after that) is an error, while a negative step may give an empty
    axis."""
    if len(begin) > len(shape):
        raise shape_error(op, f"'begin'={tuple(begin)} has more entries than input shape {shape} has dims")
    key, out = [], []
    for i, d in enumerate(shape):
        if i < len(begin):
            s = step[i] if len(step) and step[i] is not None else 1
            sl = slice(begin[i], end[i], s)
            n = len(range(*sl.indices(d)))
            if n == 0 and s > 0 and d > 0:
                raise shape_error(op, f"empty range on axis {i}: begin={begin[i]}, end={end[i]} for size {d} "
                                      f"(input shape {shape}); MXNet 1.x does not create zero-size slices")
            key.append(sl)
            out.append(n)
        else:
            key.append(slice(None))
            out.append(d)
    return tuple(key), tuple(out)


class SliceProp(OneInputProp):
    """Basic slicing ``x[b0:e0:s0, b1:e1:s1, ...]`` over the leading axes."""
    param_cls = SliceParam

    def key(self, shape: tuple) -> tuple:
        p = self.param
        return slice_key(self.op_name, tuple(shape), p.begin, p.end, p.step)[0]

    def out_shape(self, s: tuple) -> tuple:
        p = self.param
        return slice_key(self.op_name, s, p.begin, p.end, p.step)[1]


class SliceAxisParam(Params):
    axis = Field(int, doc="axis to slice")
    begin = Field(int, doc="start index (negative counts from the end)")
    end = Field(int, optional=True, doc="stop index (None: to the end)")


class SliceAxisProp(SliceProp):
    """Slice ``[begin, end)`` along one axis."""
    param_cls = SliceAxisParam

    def key(self, shape: tuple) -> tuple:
        return self._plan(tuple(shape))[0]

    def _plan(self, s: tuple) -> tuple[tuple, tuple]:
        p = self.param
        ax = norm_axis(self.op_name, p.axis, len(s), "axis", s)
        n = s[ax]
        if n == 0:  # an unknown (0) axis stays unknown in partial inference, as MXNet's; like slice
            return tuple(slice(None) for _ in s), s
        b = p.begin + n if p.begin < 0 else p.begin
        e = n if p.end is None else (p.end + n if p.end < 0 else p.end)
        if not (0 <= b <= n and 0 <= e <= n and b < e):  # MXNet: begin < end, no empty slice
            raise shape_error(self.op_name, f"invalid range begin={p.begin}, end={p.end} for axis {p.axis} of "
                                            f"size {n} (input shape {s})")
        key = tuple(slice(b, e) if i == ax else slice(None) for i in range(len(s)))
        return key, s[:ax] + (e - b,) + s[ax + 1:]

    def out_shape(self, s: tuple) -> tuple:
        return self._plan(s)[1]


class SliceOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] != NULL:
            x = in_data[0]
            store(ctx.xp, out_data[0], req[0], x[self.prop.key(x.shape)])

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        r = req[0]
        if r == NULL:
            return
        gi = in_grad[0]
        key = self.prop.key(gi.shape)
        if r != ADD:
            gi[...] = 0
        view = gi[key]
        ctx.xp.add(view, out_grad[0], out=view, casting="unsafe")


# -- take ------------------------------------------------------------------------------------------------------

class TakeParam(Params):
    axis = Field(int, default=0, doc="axis to take along")
    mode = Field(str, default="clip", choices=("clip", "raise", "wrap"), doc="out-of-range indices")


class _IndexInputProp(OperatorProperty):
    """Data input first, an index input whose dtype is independent of the data's;
    backward needs the output gradient and the index."""

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        t = in_type[0]
        return [t, in_type[1] if in_type[1] is not None else t], [t], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return [out_grad[0], in_data[1]]


class _IndexOp(XpOperator):
    """take / pick (``kind``): the data's axis and the index fixed up by ``mode``."""

    kind = ""

    def _axis_index(self, xp: Any, shape: tuple, indices: Any) -> tuple[int, Any]:
        ax = self.param.axis % len(shape)
        return ax, _fix_index(xp, self.kind, indices, shape[ax], self.param.mode)


class TakeProp(_IndexInputProp):
    """Elements of ``a`` at ``indices`` along an axis."""
    param_cls = TakeParam

    def list_arguments(self) -> list[str]:
        return ["a", "indices"]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        a, idx = in_shape
        if a is None or idx is None:
            return list(in_shape), [None], []
        a, idx = tuple(a), tuple(idx)
        if len(a) == 0:
            raise shape_error(self.op_name, "input 'a' must have at least one dim")
        ax = norm_axis(self.op_name, self.param.axis, len(a), "axis", a)
        return [a, idx], [a[:ax] + idx + a[ax + 1:]], []


class TakeOp(_IndexOp):
    kind = "take"

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] == NULL:
            return
        xp = ctx.xp
        a, indices = in_data
        ax, idx = self._axis_index(xp, a.shape, indices)
        out = out_data[0]
        if req[0] != ADD and out.dtype == a.dtype and out.flags.c_contiguous:
            take_in_range(xp, a, idx, ax, out)
        else:
            store(xp, out, req[0], take_in_range(xp, a, idx, ax))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp = ctx.xp
        indices = in_data[1]
        ga = in_grad[0]
        fill_zero(in_grad[1], req[1])
        if req[0] == NULL:
            return
        ax, idx = self._axis_index(xp, ga.shape, indices)
        if req[0] != ADD:
            ga[...] = 0
        g = out_grad[0].astype(ga.dtype, copy=False)
        if ax == 0:
            scatter_add_rows(xp, ga, idx, g)
        else:
            scatter_add(xp, ga, (slice(None),) * ax + (idx,), g)


# -- pick ------------------------------------------------------------------------------------------------------

class PickParam(Params):
    axis = Field(int, default=-1, optional=True, doc="axis to pick along")
    keepdims = Field(bool, default=False, doc="keep the picked axis with size 1")
    mode = Field(str, default="clip", choices=("clip", "wrap"), doc="out-of-range indices")

    def __post_init__(self, op: str) -> None:
        if self.axis is None:
            raise ParamError(f"{op}: argument 'axis'=None is not supported (as in MXNet); give an axis")


class PickProp(_IndexInputProp):
    """``out[i..., j...] = data[i..., index[i..., j...], j...]`` along ``axis``."""
    param_cls = PickParam

    def list_arguments(self) -> list[str]:
        return ["data", "index"]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        d, idx = in_shape
        if d is None:
            return list(in_shape), [None], []
        d = tuple(d)
        if len(d) == 0:
            raise shape_error(self.op_name, "input 'data' must have at least one dim")
        ax = norm_axis(self.op_name, self.param.axis, len(d), "axis", d)
        out = d[:ax] + (1,) + d[ax + 1:] if self.param.keepdims else d[:ax] + d[ax + 1:]
        want = out
        if idx is not None and tuple(idx) != want and tuple(idx) != d[:ax] + d[ax + 1:] \
                and tuple(idx) != d[:ax] + (1,) + d[ax + 1:]:
            raise shape_error(self.op_name, f"input 'index' has shape {tuple(idx)}, expected {want} for data "
                                            f"shape {d} and axis {self.param.axis}")
        return [d, tuple(idx) if idx is not None else want], [out], []


def _grid_key(xp: Any, shape: tuple, ax: int, idx: Any) -> tuple:
    """Fancy-index key selecting ``idx`` (shaped like ``shape`` without ``ax``) along ``ax``."""
    rest = shape[:ax] + shape[ax + 1:]
    idx = idx.reshape(rest)
    key = []
    k = 0
    for i in range(len(shape)):
        if i == ax:
            key.append(idx)
        else:
            view = [1] * len(rest)
            view[k] = rest[k]
            key.append(xp.arange(rest[k]).reshape(view))
            k += 1
    return tuple(key)


class PickOp(_IndexOp):
    kind = "pick"

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] == NULL:
            return
        xp = ctx.xp
        x, index = in_data
        ax, idx = self._axis_index(xp, x.shape, index)
        v = x[_grid_key(xp, x.shape, ax, idx)]
        out = out_data[0]
        store(xp, out, req[0], v.reshape(out.shape))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp = ctx.xp
        index = in_data[1]
        gx = in_grad[0]
        fill_zero(in_grad[1], req[1])
        if req[0] == NULL:
            return
        ax, idx = self._axis_index(xp, gx.shape, index)
        key = _grid_key(xp, gx.shape, ax, idx)
        rest = gx.shape[:ax] + gx.shape[ax + 1:]
        g = out_grad[0].reshape(rest)
        if req[0] != ADD:
            gx[...] = 0
            gx[key] = g
        else:  # every output position picks a distinct element: no collisions
            gx[key] += g


# -- one_hot ---------------------------------------------------------------------------------------------------

class OneHotParam(Params):
    depth = Field(int, low=0, doc="size of the one-hot dimension")
    on_value = Field(float, default=1.0, doc="value where index == position")
    off_value = Field(float, default=0.0, doc="value elsewhere")
    dtype = Field("dtype", default="float32",
                  choices=("float16", "float32", "float64", "int32", "int64", "int8", "uint8"),
                  doc="output dtype")


class OneHotProp(OneInputProp):
    """One-hot encoding: output ``indices.shape + (depth,)``; out-of-range indices give a
    row of ``off_value``."""
    param_cls = OneHotParam

    def list_arguments(self) -> list[str]:
        return ["indices"]

    def out_shape(self, s: tuple) -> tuple:
        return s + (self.param.depth,)

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        return [in_type[0]], [np.dtype(self.param.dtype)], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return []


class OneHotOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] == NULL:
            return
        xp, p = ctx.xp, self.param
        idx = _as_index(xp, in_data[0])
        hit = idx[..., None] == xp.arange(p.depth)
        out = out_data[0]
        if req[0] == ADD:
            store(xp, out, ADD, xp.where(hit, p.on_value, p.off_value))
        else:
            out[...] = p.off_value
            xp.copyto(out, p.on_value, where=hit, casting="unsafe")

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        fill_zero(in_grad[0], req[0])


# -- where -----------------------------------------------------------------------------------------------------

class WhereProp(OperatorProperty):
    """``x`` where ``condition`` is non-zero, else ``y``. ``condition`` has the shape of
    ``x`` or is a vector of length ``x.shape[0]`` (selecting whole rows)."""

    def list_arguments(self) -> list[str]:
        return ["condition", "x", "y"]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        c, x, y = (None if s is None else tuple(s) for s in in_shape)
        if x is not None and y is not None and x != y:
            raise shape_error(self.op_name, f"inputs 'x' {x} and 'y' {y} must have the same shape")
        xs = x if x is not None else y
        if xs is None:
            return [c, x, y], [None], []
        if c is not None and c != xs and not (len(c) == 1 and len(xs) >= 1 and c[0] == xs[0]):
            raise shape_error(self.op_name, f"input 'condition' has shape {c}; it must equal the shape of 'x' "
                                            f"{xs} or be ({xs[0] if xs else '?'},)")
        return [c, xs, xs], [xs], []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        c, x, y = in_type
        t = x if x is not None else y
        return [c if c is not None else t, t, t], [t], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return [out_grad[0], in_data[0]]


def _cond(c: Any, ndim: int) -> Any:
    mask = c != 0
    if mask.ndim == 1 and ndim > 1:
        mask = mask.reshape((mask.shape[0],) + (1,) * (ndim - 1))
    return mask


class WhereOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] == NULL:
            return
        xp = ctx.xp
        c, x, y = in_data
        store(xp, out_data[0], req[0], xp.where(_cond(c, x.ndim), x, y))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp = ctx.xp
        g = out_grad[0]
        mask = _cond(in_data[0], g.ndim)
        fill_zero(in_grad[0], req[0])
        if req[1] != NULL:
            store(xp, in_grad[1], req[1], xp.where(mask, g, 0))
        if req[2] != NULL:
            store(xp, in_grad[2], req[2], xp.where(mask, 0, g))


def register(registry: Any) -> None:
    register_op(registry, "slice", SliceProp, SliceOp, ("crop",))
    register_op(registry, "slice_axis", SliceAxisProp, SliceOp)
    register_op(registry, "take", TakeProp, TakeOp)
    # MXNet 1.9.1 registers the legacy choose_element_0index as an alias of pick
    register_op(registry, "pick", PickProp, PickOp, ("choose_element_0index",))
    register_op(registry, "one_hot", OneHotProp, OneHotOp)
    register_op(registry, "where", WhereProp, WhereOp)
