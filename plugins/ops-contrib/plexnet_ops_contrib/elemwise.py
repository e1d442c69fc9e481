"""Small contrib operators: ``div_sqrt_dim``, ``gradientmultiplier``, ``round_ste``,
``sign_ste``, ``quadratic``, ``allclose``, ``arange_like``, ``index_array``,
``index_copy``, and the exposed backward operators ``backward_gradientmultiplier``,
``backward_quadratic``, ``backward_index_copy`` (MXNet 1.9.1 semantics; the ``*_ste``
operators are straight-through: identity gradient)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape

from ._common import FnProp, register as _register

__all__ = ["register"]


class DivSqrtDimProp(FnProp):
    """``data / sqrt(data.shape[-1])`` (scaled dot-product attention)."""

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [ins[0] / math.sqrt(ins[0].shape[-1])]  # a Python scalar keeps the dtype

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        return [ogs[0] / math.sqrt(ins[0].shape[-1])]


class GradMultParam(Params):
    scalar = Field(float, default=1.0, doc="gradient multiplier")
    is_int = Field(bool, default=True, doc="accepted for MXNet compatibility")


class GradientMultiplierProp(FnProp):
    """Identity forward; multiplies the gradient by ``scalar`` (e.g. -1 for gradient reversal)."""

    param_cls = GradMultParam

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [ins[0]]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        return [ogs[0] * self.param.scalar]


class BackwardGradMultProp(GradientMultiplierProp):
    """The backward of ``gradientmultiplier``: ``data * scalar``."""

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [ins[0] * self.param.scalar]


class RoundSteProp(FnProp):
    """Round half away from zero; straight-through (identity) gradient."""

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        x = ins[0]
        return [xp.sign(x) * xp.floor(xp.abs(x) + 0.5)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        return [ogs[0]]


class SignSteProp(RoundSteProp):
    """Sign; straight-through (identity) gradient."""

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [xp.sign(ins[0])]


class QuadraticParam(Params):
    a = Field(float, default=0.0, doc="coefficient of the quadratic term")
    b = Field(float, default=0.0, doc="coefficient of the linear term")
    c = Field(float, default=0.0, doc="constant term")


class QuadraticProp(FnProp):
    """``a * data**2 + b * data + c``."""

    param_cls = QuadraticParam

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        p, x = self.param, ins[0]
        return [p.a * x * x + p.b * x + p.c]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        return [ogs[0] * (2 * self.param.a * ins[0] + self.param.b)]


class BackwardQuadraticProp(QuadraticProp):
    """The backward of ``quadratic``: ``out_grad * (2 a data + b)`` from (out_grad, data)."""

    arguments = ("ograd", "data")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        return [shapes[1]]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [ins[0] * (2 * self.param.a * ins[1] + self.param.b)]


class AllcloseParam(Params):
    rtol = Field(float, default=1e-05, doc="relative tolerance")
    atol = Field(float, default=1e-08, doc="absolute tolerance")
    equal_nan = Field(bool, default=True, doc="NaNs compare equal")


class AllcloseProp(FnProp):
    """1 (uint8) when ``|a - b| <= atol + rtol * |b|`` everywhere, else 0."""

    param_cls = AllcloseParam
    arguments = ("a", "b")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        if shapes[0] != shapes[1]:
            raise self.error("a and b must have the same shape", shapes)
        return [()]

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        return list(in_type), [np.dtype(np.uint8)], []

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        p = self.param
        ok = xp.allclose(ins[0], ins[1], rtol=p.rtol, atol=p.atol, equal_nan=p.equal_nan)
        return [xp.asarray(ok, dtype=np.uint8)]


class ArangeLikeParam(Params):
    start = Field(float, default=0.0, doc="first value")
    step = Field(float, default=1.0, doc="spacing")
    repeat = Field(int, default=1, low=1, doc="times each value repeats")
    ctx = Field(str, default="", doc="accepted for MXNet compatibility")
    axis = Field(int, default=None, optional=True, doc="only the length of this axis (None: the whole shape)")


class ArangeLikeProp(FnProp):
    """``start + step * (i // repeat)`` shaped like ``data`` (or like one of its axes)."""

    param_cls = ArangeLikeParam

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d, ax = shapes[0], self.param.axis
        if ax is None:
            return [d]
        if not -len(d) <= ax < len(d):
            raise self.error(f"axis {ax} is out of range", shapes)
        return [(d[ax],)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        shape = self.out_shapes([ins[0].shape])[0]
        n = int(np.prod(shape, dtype=np.int64))
        p = self.param
        vals = p.start + p.step * (xp.arange(n, dtype=np.float64) // p.repeat)
        return [vals.reshape(shape)]


class IndexArrayParam(Params):
    axes = Field(Shape, default=None, optional=True, doc="axes to include (None: all)")


class IndexArrayProp(FnProp):
    """The index of every element: shape ``data.shape + (len(axes),)``, int64."""

    param_cls = IndexArrayParam

    def _axes(self, ndim: int, shapes: Any) -> list[int]:
        axes = list(range(ndim)) if self.param.axes is None else list(self.param.axes)
        for a in axes:
            if not -ndim <= a < ndim:
                raise self.error(f"axis {a} is out of range", shapes)
        return [a % ndim for a in axes]

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        return [shapes[0] + (len(self._axes(len(shapes[0]), shapes)),)]

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        return list(in_type), [np.dtype(np.int64)], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return list(in_data)  # a zero gradient (MXNet's MakeZeroGradNodes): the head gradient is not read

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        shape = ins[0].shape
        grids = xp.indices(shape, dtype=np.int64) if len(shape) else xp.zeros((0,), dtype=np.int64)
        axes = self._axes(len(shape), [shape])
        return [xp.stack([grids[a] for a in axes], axis=-1) if axes else xp.zeros(shape + (0,), np.int64)]


class IndexCopyProp(FnProp):
    """A copy of ``old_tensor`` whose rows ``index_vector`` are those of ``new_tensor``."""

    arguments = ("old_tensor", "index_vector", "new_tensor")
    free_dtype_inputs = (1,)  # the index may be integer (MXNet: any dtype)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        old, idx, new = shapes
        if len(idx) != 1 or len(new) != len(old) or new[0] != idx[0] or new[1:] != old[1:]:
            raise self.error("index_vector must be 1-D and new_tensor must be (len(index_vector),) + "
                             "old_tensor.shape[1:]", shapes)
        return [old]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        out = ins[0].copy()
        out[ins[1].astype(np.int64)] = ins[2]
        return [out]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        idx = ins[1].astype(np.int64)
        g_old = ogs[0].copy()
        g_old[idx] = 0
        return [g_old, xp.zeros(ins[1].shape, dtype=ins[1].dtype), ogs[0][idx]]


class BackwardIndexCopyProp(FnProp):
    """The backward of ``index_copy`` from (out_grad, index_vector): gradients of
    ``old_tensor`` and ``new_tensor``."""

    arguments = ("ograd", "index_vector")
    outputs = ("old_grad", "new_grad")
    free_dtype_inputs = (1,)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        og, idx = shapes
        return [og, (idx[0],) + og[1:]]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        idx = ins[1].astype(np.int64)
        g_old = ins[0].copy()
        g_old[idx] = 0
        return [g_old, ins[0][idx]]


def register(registry: Any) -> None:
    _register(registry, {
        "div_sqrt_dim": DivSqrtDimProp, "gradientmultiplier": GradientMultiplierProp,
        "backward_gradientmultiplier": BackwardGradMultProp, "round_ste": RoundSteProp, "sign_ste": SignSteProp,
        "quadratic": QuadraticProp, "backward_quadratic": BackwardQuadraticProp, "allclose": AllcloseProp,
        "arange_like": ArangeLikeProp, "index_array": IndexArrayProp, "index_copy": IndexCopyProp,
        "backward_index_copy": BackwardIndexCopyProp,
    })
