"""Shape helpers: ``reshape_like``, ``slice_like``, ``shape_array``, ``size_array``,
``depth_to_space``, ``space_to_depth`` (MXNet's ``matrix_op`` / ``elemwise_unary_op``).

The ``*_like`` operators take their target from a second input whose values are never
read (its gradient is zero). ``shape_array``/``size_array`` return int64 as MXNet.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape

from ._common import norm_axis, prod, shape_error
from ._fn import FnProp, register_fn

__all__ = ["register"]


class ReshapeLikeParam(Params):
    lhs_begin = Field(int, default=None, optional=True, doc="first lhs axis to replace (None: 0)")
    lhs_end = Field(int, default=None, optional=True, doc="end of the lhs axes to replace (None: ndim)")
    rhs_begin = Field(int, default=None, optional=True, doc="first rhs axis to copy (None: 0)")
    rhs_end = Field(int, default=None, optional=True, doc="end of the rhs axes to copy (None: ndim)")


def _range(op: str, b: int | None, e: int | None, shape: tuple, which: str) -> tuple[int, int]:
    n = len(shape)
    bb = 0 if b is None else (b + n if b < 0 else b)
    ee = n if e is None else (e + n if e < 0 else e)
    if not 0 <= bb <= ee <= n:
        raise shape_error(op, f"invalid range [{b}, {e}) of {which} axes for shape {shape}")
    return bb, ee


class ReshapeLikeProp(FnProp):
    """``lhs`` reshaped so that its axes ``[lhs_begin, lhs_end)`` become ``rhs``'s axes
    ``[rhs_begin, rhs_end)``."""
    param_cls = ReshapeLikeParam
    arguments = ("lhs", "rhs")
    free_dtype_inputs = (1,)  # rhs gives a shape only (MXNet accepts any dtype)
    deps = ("out_grad",)
    inplace = ((0, 0),)

    def shapes(self, ins: list) -> tuple[list, list]:
        lhs, rhs = ins
        p = self.param
        lb, le = _range(self.op_name, p.lhs_begin, p.lhs_end, lhs, "lhs")
        rb, re = _range(self.op_name, p.rhs_begin, p.rhs_end, rhs, "rhs")
        out = lhs[:lb] + rhs[rb:re] + lhs[le:]
        if prod(out) != prod(lhs):
            raise self.error(f"cannot reshape lhs of shape {lhs} like rhs of shape {rhs}: the result {out} has "
                             f"{prod(out)} elements, lhs has {prod(lhs)}")
        return ins, [out]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [ins[0].reshape(self.infer_shape([ins[0].shape, ins[1].shape])[1][0])]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [ogs[0], None]  # FnOp reshapes to lhs's shape


class SliceLikeParam(Params):
    axes = Field(Shape, default=Shape(()), doc="axes to slice (empty: all of shape_like's)")


class SliceLikeProp(FnProp):
    """``data[:s0, :s1, ...]`` where ``s`` is ``shape_like``'s shape on ``axes``."""
    param_cls = SliceLikeParam
    arguments = ("data", "shape_like")
    free_dtype_inputs = (1,)  # shape_like gives a shape only (MXNet accepts any dtype)
    deps = ("out_grad", "in_data")  # the shapes of both inputs

    def _key(self, data: tuple, like: tuple) -> tuple:
        axes = tuple(self.param.axes) or tuple(range(len(like)))
        key = [slice(None)] * len(data)
        for a in axes:
            ad = norm_axis(self.op_name, a, len(data), "axes", data)
            al = norm_axis(self.op_name, a, len(like), "axes", like)
            if like[al] > data[ad]:
                raise self.error(f"shape_like {like} is larger than data {data} on axis {a}")
            key[ad] = slice(0, like[al])
        return tuple(key)

    def shapes(self, ins: list) -> tuple[list, list]:
        data, like = ins
        if not self.param.axes and len(like) > len(data):
            raise self.error(f"shape_like {like} has more dims than data {data}")
        key = self._key(data, like)
        return ins, [tuple(len(range(*k.indices(d))) for k, d in zip(key, data))]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [ins[0][self._key(ins[0].shape, ins[1].shape)]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        g = xp.zeros(ins[0].shape, dtype=ogs[0].dtype)
        g[self._key(ins[0].shape, ins[1].shape)] = ogs[0]
        return [g, None]


class ShapeArrayProp(FnProp):
    """The input's shape as a 1-D int64 array."""
    deps = ()

    def shapes(self, ins: list) -> tuple[list, list]:
        return ins, [(len(ins[0]),)]

    def out_types(self, in_types: list) -> list:
        return [np.dtype(np.int64)]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [xp.asarray(ins[0].shape, dtype=np.int64)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [None]


class SizeArrayProp(ShapeArrayProp):
    """The input's element count as a (1,) int64 array."""

    def shapes(self, ins: list) -> tuple[list, list]:
        return ins, [(1,)]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [xp.asarray([ins[0].size], dtype=np.int64)]


class BlockParam(Params):
    block_size = Field(int, low=1, doc="block size b")


class DepthToSpaceProp(FnProp):
    """``(N, C, H, W) -> (N, C/b^2, H*b, W*b)`` (DCR order, as MXNet)."""
    param_cls = BlockParam
    deps = ("out_grad",)

    def _no_zero_dim(self, s: tuple) -> None:
        # MXNet checks every dim: "Operation requires a 4D tensor. Size of dimension:2 cannot be 0"
        if len(s) == 4 and 0 in s:
            raise self.error(f"requires a 4-D tensor without zero-size dims (dimension {list(s).index(0)} "
                             f"is 0), got shape {s}")

    def shapes(self, ins: list) -> tuple[list, list]:
        s, b = ins[0], self.param.block_size
        self._no_zero_dim(s)
        if len(s) != 4 or s[1] % (b * b):
            raise self.error(f"data must be 4-D with channels divisible by block_size**2={b * b}, got shape {s}")
        return ins, [(s[0], s[1] // (b * b), s[2] * b, s[3] * b)]

    @staticmethod
    def d2s(x: Any, b: int) -> Any:
        n, c, h, w = x.shape
        return x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // (b * b), h * b, w * b)

    @staticmethod
    def s2d(x: Any, b: int) -> Any:
        n, c, h, w = x.shape
        return x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [self.d2s(ins[0], self.param.block_size)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [self.s2d(ogs[0], self.param.block_size)]


class SpaceToDepthProp(DepthToSpaceProp):
    """``(N, C, H, W) -> (N, C*b^2, H/b, W/b)`` (the inverse of depth_to_space)."""

    def shapes(self, ins: list) -> tuple[list, list]:
        s, b = ins[0], self.param.block_size
        self._no_zero_dim(s)
        if len(s) != 4 or s[2] % b or s[3] % b:
            raise self.error(f"data must be 4-D with height and width divisible by block_size={b}, got shape {s}")
        return ins, [(s[0], s[1] * b * b, s[2] // b, s[3] // b)]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [self.s2d(ins[0], self.param.block_size)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [self.d2s(ogs[0], self.param.block_size)]


def register(registry: Any) -> None:
    register_fn(registry, "reshape_like", ReshapeLikeProp)
    register_fn(registry, "slice_like", SliceLikeProp)
    register_fn(registry, "shape_array", ShapeArrayProp)
    register_fn(registry, "size_array", SizeArrayProp)
    register_fn(registry, "depth_to_space", DepthToSpaceProp)
    register_fn(registry, "space_to_depth", SpaceToDepthProp)
