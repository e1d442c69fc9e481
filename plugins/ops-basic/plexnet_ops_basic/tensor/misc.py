"""Small operators of MXNet's ``tensor`` folder: ``hard_sigmoid``, ``amp_cast``,
``amp_multicast``, ``all_finite``, ``multi_all_finite``, ``reset_arrays``, ``cast_storage``
(dense only: every stype gives a dense copy), ``_split_v2`` (``nd.split_v2``) and the
legacy ``_onehot_encode`` (``nd.onehot_encode``).

``reset_arrays`` zeroes its inputs in place (``mutate_inputs``: the engine orders it as a
write of them).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape
from plexnet.operator.params import ParamError

from ._common import NULL, XpOperator, fill_zero, norm_axis, register_op
from ._fn import FnProp, register_fn

__all__ = ["register"]

AMP_DTYPES = ("float16", "float32", "float64", "bfloat16")


class HardSigmoidParam(Params):
    alpha = Field(float, default=0.2, doc="slope")
    beta = Field(float, default=0.5, doc="offset")


class HardSigmoidProp(FnProp):
    """``clip(alpha * x + beta, 0, 1)``; gradient ``alpha`` where the result is inside (0, 1)."""
    param_cls = HardSigmoidParam
    deps = ("out_grad", "out_data")
    inplace = ((0, 0),)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        p = self.param
        return [xp.clip(ins[0] * p.alpha + p.beta, 0, 1)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        y = outs[0]
        return [ogs[0] * ((y > 0) & (y < 1)) * self.param.alpha]


class AmpCastParam(Params):
    dtype = Field("dtype", choices=AMP_DTYPES[:3], doc="target dtype")


class AmpCastProp(FnProp):
    """Cast for automatic mixed precision (only floating inputs are cast); the gradient
    is cast back."""
    param_cls = AmpCastParam
    deps = ("out_grad",)
    backfill_shapes = True  # the input takes the output's shape in symbolic inference, as MXNet's
    arguments = ("data",)

    def out_types(self, in_types: list) -> list:
        t = in_types[0]
        return [np.dtype(self.param.dtype) if t is None or np.dtype(t).kind == "f" else t]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [ins[0]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [ogs[0]]


class AmpMulticastParam(Params):
    num_outputs = Field(int, low=1, doc="number of inputs and outputs")
    cast_narrow = Field(bool, default=False, doc="cast to the narrowest float type instead of the widest")


class AmpMulticastProp(FnProp):
    """Cast every floating input to the widest (or narrowest) floating type among them."""
    param_cls = AmpMulticastParam
    deps = ("out_grad",)
    backfill_shapes = True  # input i takes output i's shape in symbolic inference, as MXNet's

    def list_arguments(self) -> list[str]:
        return [f"data_{i}" for i in range(self.param.num_outputs)]

    def list_outputs(self) -> list[str]:
        return [f"output{i}" for i in range(self.param.num_outputs)]  # nnvm's default names, as MXNet's

    def shapes(self, ins: list) -> tuple[list, list]:
        return ins, list(ins)

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        floats = [np.dtype(t) for t in in_type if t is not None and np.dtype(t).kind == "f"]
        pick = (min if self.param.cast_narrow else max)(floats, key=lambda t: t.itemsize) if floats else None
        outs = [pick if t is not None and np.dtype(t).kind == "f" else t for t in in_type]
        return list(in_type), outs, []

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return list(ins)

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return list(ogs)


class AllFiniteParam(Params):
    init_output = Field(bool, default=True, doc="start from 1 (else: AND with the output's current value)")


class AllFiniteProp(FnProp):
    """(1,) float32: 1 if every element is finite, else 0."""
    param_cls = AllFiniteParam
    deps = ()
    differentiable = False   # MXNet registers no FGradient: a gradient through it is refused

    def shapes(self, ins: list) -> tuple[list, list]:
        return ins, [(1,)]

    def out_types(self, in_types: list) -> list:
        return [np.dtype(np.float32)]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        ok = xp.ones((1,), dtype=np.float32)
        for x in ins:
            ok = ok * xp.isfinite(x).all()
        return [ok]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [None] * len(ins)


class MultiAllFiniteParam(AllFiniteParam):
    num_arrays = Field(int, default=1, low=1, doc="number of arrays")


class MultiAllFiniteProp(AllFiniteProp):
    """(1,) float32: 1 if every element of every input is finite, else 0."""
    param_cls = MultiAllFiniteParam

    def list_arguments(self) -> list[str]:
        return [f"array_{i}" for i in range(self.param.num_arrays)]

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        return list(in_type), [np.dtype(np.float32)], []


class _AllFiniteOp(XpOperator):
    """all_finite honouring ``init_output=False``: AND with the output's current value."""

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] == NULL:
            return
        xp = ctx.xp
        ok = self.prop.compute(xp, list(in_data), ctx)[0]
        if self.param.init_output:
            out_data[0][...] = ok
        else:
            out_data[0][...] = out_data[0] * ok

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        for g, r in zip(in_grad, req):
            fill_zero(g, r)


class ResetArraysParam(Params):
    num_arrays = Field(int, low=1, doc="number of arrays to zero")


class ResetArraysProp(FnProp):
    """Set every input to zero in place (no outputs; the inputs are MXNet's mutable inputs,
    named by ``mutate_inputs`` so the engine orders the call as a write of them)."""
    param_cls = ResetArraysParam
    outputs = ()
    deps = ()

    def list_arguments(self) -> list[str]:
        return [f"array_{i}" for i in range(self.param.num_arrays)]

    def mutate_inputs(self) -> list[int]:
        return list(range(self.param.num_arrays))

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        return list(in_shape), [], []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        return list(in_type), [], []


class _ResetOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        for a in in_data:
            a[...] = 0

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        for g, r in zip(in_grad, req):
            fill_zero(g, r)


class CastStorageParam(Params):
    stype = Field(str, choices=("default", "row_sparse", "csr"), doc="target storage type")


class CastStorageProp(FnProp):
    """Storage conversion; plexnet has only dense storage, so this is a copy."""
    param_cls = CastStorageParam
    deps = ("out_grad",)
    inplace = ((0, 0),)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [ins[0]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [ogs[0]]


class SplitV2Param(Params):
    indices = Field(Shape, default=Shape(()), doc="split points (leading 0 included), or empty with sections")
    axis = Field(int, default=1, doc="axis to split")
    squeeze_axis = Field(bool, default=False, doc="drop the split axis (each part must have size 1)")
    sections = Field(int, default=0, low=0, doc="number of equal parts (0: use indices)")

    def __post_init__(self, op: str) -> None:
        if (self.sections > 0) == (len(self.indices) > 0):
            raise ParamError(f"{op}: give exactly one of 'sections' and 'indices' (got sections={self.sections}, "
                             f"indices={tuple(self.indices)})")


class SplitV2Prop(FnProp):
    """Split along ``axis`` into equal ``sections`` or at ``indices``."""
    param_cls = SplitV2Param
    deps = ("out_grad",)

    def _n(self) -> int:
        return self.param.sections or len(self.param.indices)

    def list_outputs(self) -> list[str]:
        return self.default_output_names(self._n())   # one section: "output", as MXNet

    def _bounds(self, s: tuple) -> list[tuple[int, int]]:
        ax = norm_axis(self.op_name, self.param.axis, len(s), "axis", s)
        n = s[ax]
        if self.param.sections:
            if n % self.param.sections:
                raise self.error(f"axis {ax} of size {n} (input shape {s}) cannot be split into "
                                 f"{self.param.sections} equal sections")
            step = n // self.param.sections
            pts = list(range(0, n, step)) if step else [0] * self.param.sections
        else:
            pts = list(self.param.indices)
        ends = pts[1:] + [n]
        return [(b, max(b, e)) for b, e in zip(pts, ends)]

    def shapes(self, ins: list) -> tuple[list, list]:
        s = ins[0]
        ax = norm_axis(self.op_name, self.param.axis, len(s), "axis", s)
        outs = []
        for b, e in self._bounds(s):
            if self.param.squeeze_axis:
                if e - b != 1:
                    raise self.error(f"squeeze_axis needs parts of size 1 on axis {ax}, got {e - b} (input shape {s})")
                outs.append(s[:ax] + s[ax + 1:])
            else:
                outs.append(s[:ax] + (e - b,) + s[ax + 1:])
        return ins, outs

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = ins[0]
        ax = norm_axis(self.op_name, self.param.axis, x.ndim, "axis", x.shape)
        res = []
        for b, e in self._bounds(x.shape):
            part = xp.take(x, xp.arange(b, e), axis=ax)
            res.append(part.reshape(part.shape[:ax] + part.shape[ax + 1:]) if self.param.squeeze_axis else part)
        return res

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        ax = self.param.axis
        parts = [xp.expand_dims(g, ax) if self.param.squeeze_axis else g for g in ogs]
        return [xp.concatenate(parts, axis=ax)]


class OnehotEncodeProp(FnProp):
    """Legacy: one-hot rows of ``lhs`` (indices) shaped like ``rhs`` (the target array)."""
    arguments = ("lhs", "rhs")
    deps = ()

    def shapes(self, ins: list) -> tuple[list, list]:
        idx, out = ins
        if len(out) != 2 or idx != (out[0],):
            raise self.error(f"indices of shape {idx} need a 2-D target with {idx[0] if idx else '?'} rows, "
                             f"got {out}")
        return ins, [out]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        idx, like = ins
        out = xp.zeros(like.shape, dtype=like.dtype)
        out[xp.arange(like.shape[0]), xp.trunc(idx).astype(np.int64)] = 1
        return [out]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [None, None]


def register(registry: Any) -> None:
    register_fn(registry, "hard_sigmoid", HardSigmoidProp)
    register_fn(registry, "amp_cast", AmpCastProp)
    register_fn(registry, "amp_multicast", AmpMulticastProp)
    register_op(registry, "all_finite", AllFiniteProp, _AllFiniteOp)
    register_op(registry, "multi_all_finite", MultiAllFiniteProp, _AllFiniteOp)
    register_op(registry, "reset_arrays", ResetArraysProp, _ResetOp)
    register_fn(registry, "cast_storage", CastStorageProp)
    register_fn(registry, "_split_v2", SplitV2Prop)
    register_fn(registry, "_onehot_encode", OnehotEncodeProp)
