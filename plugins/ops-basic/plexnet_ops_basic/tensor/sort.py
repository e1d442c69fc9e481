"""Ordering: ``sort``, ``argsort``, ``topk`` and ``cumsum`` (MXNet's ``ordering_op`` and
``np_cumsum``).

``axis=None`` works on the flattened array. Indices come in ``dtype`` (float32 by
default, as MXNet). Ties keep their input order (a stable sort; descending orders sort
the negated keys stably). ``topk``'s ``k < 1`` selects the whole axis. Gradients: ``sort``
and ``topk`` values scatter the head gradient back to where each value came from;
indices and masks get none.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._common import norm_axis
from ._fn import FnProp, register_fn

__all__ = ["register"]

IDX_DTYPES = ("uint8", "int32", "int64", "float16", "float32", "float64")


class TopKParam(Params):
    axis = Field(int, default=-1, optional=True, doc="axis to sort along (None: the flattened array)")
    k = Field(int, default=1, doc="how many elements (k < 1: all)")
    ret_typ = Field(str, default="indices", choices=("value", "indices", "mask", "both"), doc="what to return")
    is_ascend = Field(bool, default=False, doc="smallest first")
    dtype = Field("dtype", default="float32", choices=IDX_DTYPES, doc="dtype of the indices")


class SortParam(Params):
    axis = Field(int, default=-1, optional=True, doc="axis to sort along (None: the flattened array)")
    is_ascend = Field(bool, default=True, doc="ascending order")


class ArgSortParam(SortParam):
    dtype = Field("dtype", default="float32", choices=IDX_DTYPES, doc="dtype of the indices")


def _neg(x: Any) -> Any:
    """``-x`` as a sort key (unsigned and boolean widened first)."""
    if x.dtype.kind == "u":
        x = x.astype(np.int64)
    elif x.dtype.kind == "b":
        x = x.astype(np.int8)
    return -x


def _order(xp: Any, x: Any, ascend: bool) -> Any:
    """Stable argsort along the last axis, descending when not ``ascend``."""
    return xp.argsort(x if ascend else _neg(x), axis=-1, kind="stable")


class _OrderProp(FnProp):
    """Shared plan: move the sort axis last (or flatten)."""

    def _axis(self, shape: tuple) -> int | None:
        if self.param.axis is None:
            return None
        if len(shape) == 0:
            raise self.error(f"input of shape {shape} has no axis {self.param.axis}")
        return norm_axis(self.op_name, self.param.axis, len(shape), "axis", shape)

    def _k(self, shape: tuple) -> int:
        ax = self._axis(shape)
        n = int(np.prod(shape)) if ax is None else shape[ax]
        k = getattr(self.param, "k", 0)
        if k > n:
            raise self.error(f"argument 'k'={k} is larger than the {n} elements along the axis "
                             f"(input shape {shape})")
        return n if k < 1 else k

    def _last(self, xp: Any, x: Any) -> tuple[Any, int | None]:
        ax = self._axis(x.shape)
        return (x.reshape(-1) if ax is None else xp.moveaxis(x, ax, -1)), ax

    def _back(self, xp: Any, y: Any, ax: int | None, shape: tuple) -> Any:
        return y if ax is None else xp.moveaxis(y, -1, ax)

    def _sel_shape(self, shape: tuple) -> tuple:
        ax = self._axis(shape)
        k = self._k(shape)
        return (k,) if ax is None else shape[:ax] + (k,) + shape[ax + 1:]

    def _topk(self, xp: Any, x: Any) -> tuple[Any, Any, int | None]:
        """(selected values, their indices along the axis), both with the axis last."""
        xl, ax = self._last(xp, x)
        k = self._k(x.shape)
        n = xl.shape[-1] if xl.ndim else 1
        if 0 < k <= 8 < n and xl.dtype.kind == "f":
            # a few passes of argmax (argmin): the first of equal values wins, as a stable order
            keys = xl.copy()
            fill = xp.inf if self.param.is_ascend else -xp.inf
            pick = xp.argmin if self.param.is_ascend else xp.argmax
            cols = []
            for _ in range(k):
                i = xp.expand_dims(pick(keys, axis=-1), -1)
                cols.append(i)
                xp.put_along_axis(keys, i, fill, axis=-1)
            idx = xp.concatenate(cols, axis=-1)
        elif 0 < k < n // 4 and hasattr(xp, "argpartition"):
            # a partial selection first (O(n)), then only the k candidates are ordered
            keys = xl if self.param.is_ascend else _neg(xl)
            # the k-th key; everything below it is in, of the keys equal to it the first ones
            thr = xp.partition(keys, k - 1, axis=-1)[..., k - 1:k]
            below = keys < thr
            equal = keys == thr
            room = k - below.sum(axis=-1, keepdims=True)
            chosen = below | (equal & (xp.cumsum(equal, axis=-1) <= room))
            cand = xp.nonzero(chosen)[-1].reshape(keys.shape[:-1] + (k,))  # exactly k per row, in index order
            sub = xp.take_along_axis(keys, cand, axis=-1)
            idx = xp.take_along_axis(cand, xp.argsort(sub, axis=-1, kind="stable"), axis=-1)
        else:
            idx = _order(xp, xl, self.param.is_ascend)[..., :k]
        return xp.take_along_axis(xl, idx, axis=-1), idx, ax

    def _scatter(self, xp: Any, g: Any, idx: Any, ax: int | None, shape: tuple) -> Any:
        gl = self._last(xp, g)[0]
        full_shape = (int(np.prod(shape)),) if ax is None else gl.shape[:-1] + (shape[ax],)
        out = xp.zeros(full_shape, dtype=g.dtype)
        xp.put_along_axis(out, idx, gl, axis=-1)
        out = out.reshape(shape) if ax is None else xp.moveaxis(out, -1, ax)
        return out


class SortProp(_OrderProp):
    """Sorted values along an axis."""
    param_cls = SortParam
    deps = ("out_grad", "in_data")

    def list_outputs(self) -> list[str]:
        return ["output0"]   # MXNet's sort is topk with hidden indices: two outputs

    def shapes(self, ins: list) -> tuple[list, list]:
        s = ins[0]
        return ins, [(int(np.prod(s)),) if self._axis(s) is None else s]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        v, _, ax = self._topk(xp, ins[0])
        return [self._back(xp, v, ax, ins[0].shape)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        _, idx, ax = self._topk(xp, ins[0])
        return [self._scatter(xp, ogs[0], idx, ax, ins[0].shape)]


class ArgSortProp(SortProp):
    """Indices that sort the array along an axis."""
    param_cls = ArgSortParam
    deps = ()

    def list_outputs(self) -> list[str]:
        return ["output"]

    def out_types(self, in_types: list) -> list:
        return [np.dtype(self.param.dtype)]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        _, idx, ax = self._topk(xp, ins[0])
        return [self._back(xp, idx, ax, ins[0].shape)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [None]


class TopKProp(_OrderProp):
    """The k largest (or smallest) elements: values, indices, both, or a 0/1 mask."""
    param_cls = TopKParam
    deps = ("out_grad", "in_data")

    def list_outputs(self) -> list[str]:
        # nnvm's default names, as MXNet's: "outputI" where the operator has two outputs
        # (values come with hidden indices), "output" for indices or a mask alone
        return {"both": ["output0", "output1"], "value": ["output0"]}.get(self.param.ret_typ, ["output"])

    def shapes(self, ins: list) -> tuple[list, list]:
        s = ins[0]
        if self.param.ret_typ == "mask":
            self._k(s)
            return ins, [s]
        sel = self._sel_shape(s)
        return ins, [sel] * len(self.list_outputs())

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        s = in_shape[0]
        if s is None:
            return [None], [None] * len(self.list_outputs()), []
        i, o = self.shapes([tuple(s)])
        return i, o, []

    def out_types(self, in_types: list) -> list:
        t, it = in_types[0], np.dtype(self.param.dtype)
        return {"value": [t], "indices": [it], "mask": [t], "both": [t, it]}[self.param.ret_typ]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = ins[0]
        v, idx, ax = self._topk(xp, x)
        rt = self.param.ret_typ
        if rt == "mask":
            # ones in the input's layout (the axis in place), as _scatter expects
            return [self._scatter(xp, xp.ones(self._sel_shape(x.shape), dtype=x.dtype), idx, ax, x.shape)]
        vals, inds = self._back(xp, v, ax, x.shape), self._back(xp, idx, ax, x.shape)
        return {"value": [vals], "indices": [inds], "both": [vals, inds]}[rt]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        if self.param.ret_typ not in ("value", "both"):
            return [None]
        _, idx, ax = self._topk(xp, ins[0])
        g = ogs[0]
        return [self._scatter(xp, g, idx, ax, ins[0].shape)]


class CumsumParam(Params):
    axis = Field(int, default=None, optional=True, doc="axis (None: the flattened array)")
    dtype = Field("dtype", default=None, optional=True, choices=IDX_DTYPES + ("int8", "bool"),
                  doc="output dtype (None: the input's)")


class CumsumProp(FnProp):
    """Cumulative sum along an axis."""
    param_cls = CumsumParam
    arguments = ("a",)
    deps = ("out_grad",)

    def _ax(self, shape: tuple) -> int | None:
        if self.param.axis is None:
            return None
        return norm_axis(self.op_name, self.param.axis, len(shape), "axis", shape)

    def shapes(self, ins: list) -> tuple[list, list]:
        s = ins[0]
        return ins, [(int(np.prod(s)),) if self._ax(s) is None else s]

    def out_types(self, in_types: list) -> list:
        return [np.dtype(self.param.dtype) if self.param.dtype else in_types[0]]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = ins[0]
        dt = self.param.dtype or x.dtype
        ax = self._ax(x.shape)
        return [xp.cumsum(x.reshape(-1) if ax is None else x, axis=0 if ax is None else ax, dtype=dt)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        # a suffix sum; with axis=None FnOp reshapes the flat result to the input's shape
        g = ogs[0]
        ax = 0 if self.param.axis is None else self.param.axis
        return [xp.flip(xp.cumsum(xp.flip(g, axis=ax), axis=ax), axis=ax)]


def register(registry: Any) -> None:
    register_fn(registry, "sort", SortProp)
    register_fn(registry, "argsort", ArgSortProp)
    register_fn(registry, "topk", TopKProp)
    register_fn(registry, "cumsum", CumsumProp, ("_np_cumsum",))
