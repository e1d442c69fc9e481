"""N-d gathering and index arithmetic: ``gather_nd``, ``scatter_nd``,
``_backward_gather_nd``, ``ravel_multi_index``, ``unravel_index``, ``diag``, and MXNet's
legacy row pickers ``batch_take``,
``fill_element_0index`` (``choose_element_0index`` is ``pick``'s alias, in ``indexing``), ``argmax_channel``.

Index arrays may have any dtype (truncated to integers). ``gather_nd`` accumulates
gradients of repeated indices; ``scatter_nd`` keeps the last write of repeated indices
(as numpy assignment) and its gradient gathers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape

from ._common import norm_axis
from ._fn import FnProp, register_fn
from .indexing import scatter_add

__all__ = ["register"]


def _ints(xp: Any, a: Any) -> Any:
    return a.astype(np.int64) if a.dtype.kind in "iub" else xp.trunc(a).astype(np.int64)


class _IndexProp(FnProp):
    """Second input is an index array with its own dtype."""

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        t = in_type[0]
        ins = [t] + [x if x is not None else t for x in in_type[1:]]
        return ins, self.out_types(ins), []


class GatherNDProp(_IndexProp):
    """``out[y] = data[indices[0, y], ..., indices[M-1, y]]``."""
    arguments = ("data", "indices")
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        data, idx = ins
        if len(idx) == 0 or idx[0] > len(data):
            raise self.error(f"indices of shape {idx} index more than the {len(data)} dims of data {data}")
        return ins, [idx[1:] + data[idx[0]:]]

    def _key(self, xp: Any, data_shape: tuple, idx: Any) -> tuple:
        idx = _ints(xp, idx)
        return tuple(xp.mod(idx[i], data_shape[i]) for i in range(idx.shape[0]))

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        idx = _ints(xp, ins[1])
        for i in range(idx.shape[0]):  # MXNet: -d <= index < d, else IndexError (no wrapping)
            d = ins[0].shape[i]
            bad = (idx[i] < -d) | (idx[i] >= d)
            if bool(bad.any()):
                v = int(idx[i][bad].ravel()[0])
                raise IndexError(f"gather_nd: index {v} is out of bounds for axis {i} with size {d}")
        return [ins[0][self._key(xp, ins[0].shape, ins[1])]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        g = xp.zeros(ins[0].shape, dtype=ogs[0].dtype)
        scatter_add(xp, g, self._key(xp, ins[0].shape, ins[1]), ogs[0])
        return [g, None]


class ScatterNDParam(Params):
    shape = Field(Shape, doc="shape of the output")


class ScatterNDProp(_IndexProp):
    """Zeros of ``shape`` with ``data`` written at ``indices`` (gather_nd's inverse)."""
    param_cls = ScatterNDParam
    arguments = ("data", "indices")
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        data, idx = ins
        out = tuple(self.param.shape)
        if len(idx) == 0 or idx[0] > len(out) or idx[1:] + out[idx[0]:] != data:
            raise self.error(f"data {data} and indices {idx} do not fit output shape {out} (data must be "
                             f"indices.shape[1:] + shape[indices.shape[0]:])")
        return ins, [out]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        out = xp.zeros(tuple(self.param.shape), dtype=ins[0].dtype)
        out[GatherNDProp._key(self, xp, out.shape, ins[1])] = ins[0]
        return [out]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [ogs[0][GatherNDProp._key(self, xp, ogs[0].shape, ins[1])], None]


class BackwardGatherNDProp(ScatterNDProp):
    """``_backward_gather_nd``: like ``scatter_nd`` but repeated indices accumulate
    (gather_nd's gradient, exposed as MXNet exposes it)."""

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        out = xp.zeros(tuple(self.param.shape), dtype=ins[0].dtype)
        scatter_add(xp, out, GatherNDProp._key(self, xp, out.shape, ins[1]), ins[0])
        return [out]


class RavelParam(Params):
    shape = Field(Shape, doc="shape of the array the indices refer to")


class RavelProp(FnProp):
    """Flat indices of the columns of ``data`` (``(M, ...)``) into an array of ``shape``."""
    param_cls = RavelParam
    deps = ()

    def shapes(self, ins: list) -> tuple[list, list]:
        s = ins[0]
        if len(s) == 0 or s[0] != len(self.param.shape):
            raise self.error(f"data of shape {s} must have {len(self.param.shape)} rows, one per dim of "
                             f"shape {tuple(self.param.shape)}")
        return ins, [s[1:]]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        idx = _ints(xp, ins[0])
        flat = xp.zeros(idx.shape[1:], dtype=np.int64)
        for i, d in enumerate(self.param.shape):
            flat = flat * d + idx[i]
        return [flat]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [None]


class UnravelProp(RavelProp):
    """Multi-indices (``(M, ...)``) of flat indices into an array of ``shape``."""

    def shapes(self, ins: list) -> tuple[list, list]:
        return ins, [(len(self.param.shape),) + ins[0]]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        # MXNet's kernel: C division (truncating) from the last dim up; the first dim takes
        # what is left, unreduced (so a leading -1, or an index past the end, passes through)
        flat = _ints(xp, ins[0])
        shape = tuple(self.param.shape)
        rows: list = [None] * len(shape)
        for j in range(len(shape) - 1, 0, -1):
            d = shape[j]
            q = xp.abs(flat) // abs(d) if d else xp.zeros_like(flat)
            q = xp.where((flat < 0) != (d < 0), -q, q)
            rows[j] = flat - q * d
            flat = q
        rows[0] = flat
        return [xp.stack(rows)]


class DiagParam(Params):
    k = Field(int, default=0, doc="diagonal offset (> 0 above, < 0 below the main one)")
    axis1 = Field(int, default=0, doc="first axis of the 2-D sub-arrays (N-d input)")
    axis2 = Field(int, default=1, doc="second axis of the 2-D sub-arrays (N-d input)")


class DiagProp(FnProp):
    """1-D input: a matrix with it on the k-th diagonal; N-d: the k-th diagonals of the
    ``(axis1, axis2)`` planes, on a new last axis."""
    param_cls = DiagParam
    deps = ("out_grad", "in_data")  # the input's shape

    def _axes(self, s: tuple) -> tuple[int, int]:
        a1 = norm_axis(self.op_name, self.param.axis1, len(s), "axis1", s)
        a2 = norm_axis(self.op_name, self.param.axis2, len(s), "axis2", s)
        if a1 == a2:
            raise self.error(f"axis1 and axis2 must differ, both are {a1} (input shape {s})")
        return a1, a2

    def shapes(self, ins: list) -> tuple[list, list]:
        s, k = ins[0], self.param.k
        if len(s) == 0:
            raise self.error("input must have at least 1 dim, got a 0-d array")
        if len(s) == 1:
            n = s[0] + abs(k)
            return ins, [(n, n)]
        a1, a2 = self._axes(s)
        n1, n2 = s[a1], s[a2]
        n = min(n1, n2 - k) if k >= 0 else min(n1 + k, n2)
        if n < 0:  # MXNet: |k| past the edge is an error, exactly at it an empty diagonal
            raise self.error(f"Diagonal does not exist: k={k} for axes of sizes {n1} and {n2} (input shape {s})")
        rest = tuple(d for i, d in enumerate(s) if i not in (a1, a2))
        return ins, [rest + (n,)]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = ins[0]
        if x.ndim == 1:
            return [xp.diag(x, k=self.param.k)]
        a1, a2 = self._axes(x.shape)
        return [xp.diagonal(x, offset=self.param.k, axis1=a1, axis2=a2)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        x, g = ins[0], ogs[0]
        if x.ndim == 1:
            return [xp.diagonal(g, offset=self.param.k).copy()]
        a1, a2 = self._axes(x.shape)
        out = xp.zeros(x.shape, dtype=g.dtype)
        view = xp.diagonal(out, offset=self.param.k, axis1=a1, axis2=a2)
        # numpy's diagonal view is read-only: write through moved axes instead
        moved = xp.moveaxis(out, (a1, a2), (-2, -1))
        n = view.shape[-1]
        i = xp.arange(n)
        r, c = (i, i + self.param.k) if self.param.k >= 0 else (i - self.param.k, i)
        moved[..., r, c] = g
        return [out]


class _RowPickProp(_IndexProp):
    """``lhs`` is ``(N, K)``; ``rhs`` holds one column index per row (clipped)."""
    arguments = ("lhs", "rhs")

    def _check(self, a: tuple, idx: tuple) -> None:
        if len(a) != 2 or idx != (a[0],):
            raise self.error(f"expects a 2-D input and one index per row, got shapes {a} and {idx}")

    def _cols(self, xp: Any, a: Any, idx: Any) -> tuple[Any, Any]:
        return xp.arange(a.shape[0]), xp.clip(_ints(xp, idx), 0, a.shape[1] - 1)


class BatchTakeProp(_RowPickProp):
    """``out[i] = a[i, indices[i]]`` (deprecated in MXNet; ``pick`` replaces it). MXNet
    registers no gradient: binding or recording it with gradients is refused."""
    arguments = ("a", "indices")
    deps = ()
    differentiable = False

    def shapes(self, ins: list) -> tuple[list, list]:
        self._check(*ins)
        return ins, [ins[1]]

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        # as MXNet: the output has a's type; indices are int32 unless given
        a, idx = in_type
        return [a, idx if idx is not None else np.dtype(np.int32)], [a], []

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [ins[0][self._cols(xp, ins[0], ins[1])]]


class FillElementProp(_RowPickProp):
    """A copy of ``lhs`` with ``lhs[i, rhs[i]] = mhs[i]`` (legacy)."""
    arguments = ("lhs", "mhs", "rhs")
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        self._check(ins[0], ins[2])
        if ins[1] != (ins[0][0],):
            raise self.error(f"mhs must hold one value per row of lhs {ins[0]}, got shape {ins[1]}")
        return ins, [ins[0]]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        out = ins[0].copy()
        out[self._cols(xp, ins[0], ins[2])] = ins[1]
        return [out]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        key = self._cols(xp, ins[0], ins[2])
        g = ogs[0].copy()
        g[key] = 0
        return [g, ogs[0][key], None]


class ArgmaxChannelProp(FnProp):
    """Index of the maximum along axis 1, the channels (in the input's dtype, first
    maximum on ties)."""
    deps = ()
    differentiable = False   # MXNet registers no FGradient: a gradient through it is refused

    def shapes(self, ins: list) -> tuple[list, list]:
        s = ins[0]
        if len(s) < 2:
            raise self.error(f"input must have at least 2 dims (batch, channel, ...), got shape {s}")
        return ins, [s[:1] + s[2:]]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [xp.argmax(ins[0], axis=1)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [None]


def register(registry: Any) -> None:
    register_fn(registry, "gather_nd", GatherNDProp)
    register_fn(registry, "scatter_nd", ScatterNDProp)
    register_fn(registry, "_backward_gather_nd", BackwardGatherNDProp)
    register_fn(registry, "ravel_multi_index", RavelProp, ("_ravel_multi_index",))
    register_fn(registry, "unravel_index", UnravelProp, ("_unravel_index",))
    register_fn(registry, "diag", DiagProp)
    register_fn(registry, "batch_take", BatchTakeProp)
    register_fn(registry, "fill_element_0index", FillElementProp)
    register_fn(registry, "argmax_channel", ArgmaxChannelProp)
