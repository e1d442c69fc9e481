"""Diagonals and triangles: ``sumlogdiag``, ``extractdiag``, ``makediag``,
``extracttrian``, ``maketrian``, batched.

A triangle is packed row by row (the order of ``numpy.tril_indices``); an upper
triangle (``lower=False`` with ``offset=0``, or ``offset>0``) is packed as the lower
triangle of the transposed matrix, as MXNet 1.9.1 does.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np  # index construction on the host only

from plexnet.operator import Field, Params

from ._common import LinalgProp, T, register_all

__all__ = ["register"]


class OffsetParam(Params):
    offset = Field(int, default=0, doc="diagonal offset: <0 below, >0 above the main diagonal")


class TrianParam(Params):
    offset = Field(int, default=0, doc="diagonal offset: <0 below, >0 above the main diagonal")
    lower = Field(bool, default=True, doc="lower (else upper) triangle; only used when offset=0")


def _diag_index(n: int, off: int) -> tuple[Any, Any]:
    rows = np.arange(n - abs(off))
    return (rows, rows + off) if off >= 0 else (rows - off, rows)


def _tri_index(n: int, off: int, lower: bool) -> tuple[Any, Any, bool]:
    """Row and column indices into A (or into A^T when the third item is True)."""
    upper = off > 0 or (off == 0 and not lower)
    r, c = np.tril_indices(n, -abs(off))
    return r, c, upper


class SumlogdiagProp(LinalgProp):
    """Sum of the natural logarithms of the diagonal of square matrices, batched."""

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_square(shapes)
        return [tuple(shapes[0][:-2]) or (1,)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        a = ins[0]
        return [xp.log(xp.diagonal(a, axis1=-2, axis2=-1)).sum(axis=-1).reshape(tuple(a.shape[:-2]) or (1,))]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        a = ins[0]
        g = ogs[0].reshape(a.shape[:-2] + (1,)) / xp.diagonal(a, axis1=-2, axis2=-1)
        return [g[..., None] * xp.eye(a.shape[-1], dtype=a.dtype)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]


class ExtractdiagProp(LinalgProp):
    """The diagonal at ``offset`` of square matrices, batched."""

    param_cls = OffsetParam

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_square(shapes)
        n, off = shapes[0][-1], self.param.offset
        if abs(off) >= n:
            raise self.error(f"offset {off} is out of range for {n}x{n} matrices", shapes)
        return [tuple(shapes[0][:-2]) + (n - abs(off),)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        r, c = _diag_index(ins[0].shape[-1], self.param.offset)
        return [ins[0][..., xp.asarray(r), xp.asarray(c)]]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        r, c = _diag_index(ins[0].shape[-1], self.param.offset)
        g = xp.zeros(ins[0].shape, dtype=ogs[0].dtype)
        g[..., xp.asarray(r), xp.asarray(c)] = ogs[0]
        return [g]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]


class MakediagProp(LinalgProp):
    """Square matrices with the given vectors on the diagonal at ``offset``, batched."""

    param_cls = OffsetParam

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_ndim(shapes, 0, 1)
        n = shapes[0][-1] + abs(self.param.offset)
        return [tuple(shapes[0][:-1]) + (n, n)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        v = ins[0]
        n = v.shape[-1] + abs(self.param.offset)
        r, c = _diag_index(n, self.param.offset)
        out = xp.zeros(v.shape[:-1] + (n, n), dtype=v.dtype)
        out[..., xp.asarray(r), xp.asarray(c)] = v
        return [out]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        n = ins[0].shape[-1] + abs(self.param.offset)
        r, c = _diag_index(n, self.param.offset)
        return [ogs[0][..., xp.asarray(r), xp.asarray(c)]]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]


class ExtracttrianProp(LinalgProp):
    """A triangle of square matrices packed into vectors, batched."""

    param_cls = TrianParam

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_square(shapes)
        n, off = shapes[0][-1], self.param.offset
        if abs(off) >= n:
            raise self.error(f"offset {off} is out of range for {n}x{n} matrices", shapes)
        m = n - abs(off)
        return [tuple(shapes[0][:-2]) + (m * (m + 1) // 2,)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        a = ins[0]
        r, c, upper = _tri_index(a.shape[-1], self.param.offset, self.param.lower)
        src = T(a) if upper else a
        return [src[..., xp.asarray(r), xp.asarray(c)]]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        a = ins[0]
        r, c, upper = _tri_index(a.shape[-1], self.param.offset, self.param.lower)
        g = xp.zeros(a.shape, dtype=ogs[0].dtype)
        (T(g) if upper else g)[..., xp.asarray(r), xp.asarray(c)] = ogs[0]
        return [g]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]


class MaketrianProp(LinalgProp):
    """Triangular square matrices from packed vectors (the inverse of ``extracttrian``), batched."""

    param_cls = TrianParam

    def _n(self, shapes: Any) -> int:
        length = shapes[0][-1]
        m = int(round((math.sqrt(8 * length + 1) - 1) / 2))
        if m * (m + 1) // 2 != length:
            raise self.error(f"the last dimension of 'A' ({length}) is not a triangular number m*(m+1)/2", shapes)
        return m + abs(self.param.offset)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_ndim(shapes, 0, 1)
        n = self._n(shapes)
        return [tuple(shapes[0][:-1]) + (n, n)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        v = ins[0]
        n = self._n([v.shape])
        r, c, upper = _tri_index(n, self.param.offset, self.param.lower)
        out = xp.zeros(v.shape[:-1] + (n, n), dtype=v.dtype)
        (T(out) if upper else out)[..., xp.asarray(r), xp.asarray(c)] = v
        return [out]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        n = self._n([ins[0].shape])
        r, c, upper = _tri_index(n, self.param.offset, self.param.lower)
        g = ogs[0]
        return [(T(g) if upper else g)[..., xp.asarray(r), xp.asarray(c)]]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]


def register(registry: Any) -> None:
    register_all(registry, {"sumlogdiag": SumlogdiagProp, "extractdiag": ExtractdiagProp,
                            "makediag": MakediagProp, "extracttrian": ExtracttrianProp,
                            "maketrian": MaketrianProp})
