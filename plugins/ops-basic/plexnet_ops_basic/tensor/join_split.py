"""Joining and splitting: Concat (``concat``), stack, SliceChannel (``split``), add_n
(``ElementWiseSum``).

Variadic operators take ``num_args`` and name their arguments ``arg0`` ... ``argN-1`` (as
MXNet's ``list_arguments`` does for unnamed inputs). SliceChannel has ``num_outputs``
outputs named ``output0`` ....
"""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, OperatorProperty, Params

from ._common import ADD, NULL, XpOperator, norm_axis, register_op, shape_error, store

__all__ = ["register"]


class _VariadicProp(OperatorProperty):
    def list_arguments(self) -> list[str]:
        return [f"arg{i}" for i in range(self.param.num_args)]

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return list(out_grad)

    def _same_shape(self, in_shape: list) -> tuple | None:
        """The shape every known input has (ShapeError when they differ); None when no
        input's shape is known."""
        known = next((tuple(s) for s in in_shape if s is not None), None)
        for i, s in enumerate(in_shape):
            if s is not None and tuple(s) != known:
                raise shape_error(self.op_name, f"input 'arg{i}' has shape {tuple(s)}, expected {known} "
                                                f"(all inputs must have the same shape)")
        return known


class _JoinOp(XpOperator):
    """Concat and stack: ``xp.<join>(inputs, axis=...)`` along the parameter named
    ``axis_param``, straight into the output when no cast is needed."""

    join = ""
    axis_param = ""

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] == NULL:
            return
        xp, out = ctx.xp, out_data[0]
        join = getattr(xp, self.join)
        ax = getattr(self.param, self.axis_param) % out.ndim
        if req[0] != ADD and all(x.dtype == out.dtype for x in in_data):
            join(in_data, axis=ax, out=out)
        else:
            store(xp, out, req[0], join(in_data, axis=ax))


# -- Concat --------------------------------------------------------------------------------------------------

class ConcatParam(Params):
    num_args = Field(int, low=1, doc="number of inputs")
    dim = Field(int, default=1, doc="axis along which to concatenate")


class ConcatProp(_VariadicProp):
    """Join arrays along an existing axis."""
    param_cls = ConcatParam

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        known = [tuple(s) for s in in_shape if s is not None]
        if not known:
            return list(in_shape), [None], []
        ref = known[0]
        ndim = len(ref)
        if ndim == 0:
            raise shape_error(self.op_name, "inputs must have at least one dim")
        ax = norm_axis(self.op_name, self.param.dim, ndim, "dim", ref)
        for i, s in enumerate(in_shape):
            if s is None:
                continue
            s = tuple(s)
            if len(s) != ndim or any(a != b for k, (a, b) in enumerate(zip(s, ref)) if k != ax):
                raise shape_error(self.op_name, f"input 'arg{i}' has shape {s}, incompatible with {ref} for "
                                                f"concatenation along dim {self.param.dim} "
                                                f"(all inputs: {[None if x is None else tuple(x) for x in in_shape]})")
        if len(known) < len(in_shape):  # as MXNet: an unknown input is the others' shape, 0 along dim
            fill = ref[:ax] + (0,) + ref[ax + 1:]
            return [fill if s is None else tuple(s) for s in in_shape], [None], []
        out = list(ref)
        out[ax] = sum(s[ax] for s in known)
        return [tuple(s) for s in in_shape], [tuple(out)], []


class ConcatOp(_JoinOp):
    join = "concatenate"
    axis_param = "dim"

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp, g = ctx.xp, out_grad[0]
        ax = self.param.dim % g.ndim
        start = 0
        idx: list[Any] = [slice(None)] * g.ndim
        for gi, r in zip(in_grad, req):
            n = gi.shape[ax]
            idx[ax] = slice(start, start + n)
            start += n
            if r != NULL:
                store(xp, gi, r, g[tuple(idx)])


# -- stack ----------------------------------------------------------------------------------------------------

class StackParam(Params):
    axis = Field(int, default=0, doc="position of the new axis in the output")
    num_args = Field(int, low=1, doc="number of inputs")


class StackProp(_VariadicProp):
    """Join arrays of equal shape along a new axis."""
    param_cls = StackParam

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        known = self._same_shape(in_shape)
        if known is None:
            return list(in_shape), [None], []
        ax = norm_axis(self.op_name, self.param.axis, len(known) + 1, "axis", known)
        out = known[:ax] + (len(in_shape),) + known[ax:]
        return [known] * len(in_shape), [out], []


class StackOp(_JoinOp):
    join = "stack"
    axis_param = "axis"

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp, g = ctx.xp, out_grad[0]
        ax = self.param.axis % g.ndim
        idx: list[Any] = [slice(None)] * g.ndim
        for i, (gi, r) in enumerate(zip(in_grad, req)):
            if r != NULL:
                idx[ax] = i
                store(xp, gi, r, g[tuple(idx)])


# -- SliceChannel / split -------------------------------------------------------------------------------------

class SliceChannelParam(Params):
    num_outputs = Field(int, low=1, doc="number of equal parts")
    axis = Field(int, default=1, doc="axis to split along")
    squeeze_axis = Field(bool, default=False, doc="remove the split axis (its parts must have size 1)")


class SliceChannelProp(OperatorProperty):
    """Split an array into ``num_outputs`` equal parts along an axis."""
    param_cls = SliceChannelParam

    def list_outputs(self) -> list[str]:
        return [f"output{i}" for i in range(self.param.num_outputs)]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        n = self.param.num_outputs
        s = in_shape[0]
        if s is None:
            return [None], [None] * n, []
        s = tuple(s)
        if len(s) == 0:
            raise shape_error(self.op_name, "cannot split a 0-d input")
        ax = norm_axis(self.op_name, self.param.axis, len(s), "axis", s)
        if s[ax] % n:
            raise shape_error(self.op_name, f"cannot split axis {self.param.axis} of input shape {s} into "
                                            f"num_outputs={n} equal parts ({n} does not divide {s[ax]})")
        part = s[ax] // n
        if self.param.squeeze_axis:
            if part != 1:
                raise shape_error(self.op_name, f"squeeze_axis=True needs parts of size 1, but splitting input "
                                                f"shape {s} along axis {self.param.axis} gives size {part}")
            out = s[:ax] + s[ax + 1:]
        else:
            out = s[:ax] + (part,) + s[ax + 1:]
        return [s], [out] * n, []

    def refine_partial_inputs(self, in_vals: list, out_known: list) -> list | None:
        """Unknown (0) input dimensions from any known output (MXNet's incomplete inference)."""
        s = in_vals[0]
        if s is None or not s:
            return None
        ax = self.param.axis % len(s) if -len(s) <= self.param.axis < len(s) else None
        if ax is None:
            return None
        n, new = self.param.num_outputs, list(s)
        for o in out_known:
            if o is None:
                continue
            full = (tuple(o[:ax]) + (n,) + tuple(o[ax:]) if self.param.squeeze_axis
                    else tuple(o[:ax]) + (o[ax] * n,) + tuple(o[ax + 1:]) if ax < len(o) else None)
            if full is None or len(full) != len(s):
                continue
            new = [f if d == 0 else d for d, f in zip(new, full)]
        return None if tuple(new) == tuple(s) else [tuple(new)]

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return list(out_grad)


class SliceChannelOp(XpOperator):
    def _parts(self, x: Any) -> list[Any]:
        n, ax = self.param.num_outputs, self.param.axis % x.ndim
        step = x.shape[ax] // n
        idx: list[Any] = [slice(None)] * x.ndim
        parts = []
        for i in range(n):
            idx[ax] = i if self.param.squeeze_axis else slice(i * step, (i + 1) * step)
            parts.append(tuple(idx))
        return parts

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp, x = ctx.xp, in_data[0]
        for key, out, r in zip(self._parts(x), out_data, req):
            if r != NULL:
                store(xp, out, r, x[key])

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        r = req[0]
        if r == NULL:
            return
        gi = in_grad[0]
        xp = ctx.xp
        for key, g in zip(self._parts(gi), out_grad):
            store(xp, gi[key], r, g)


# -- add_n / ElementWiseSum -----------------------------------------------------------------------------------

class AddNParam(Params):
    num_args = Field(int, low=1, doc="number of inputs")


class AddNProp(_VariadicProp):
    """Elementwise sum of ``num_args`` arrays of equal shape."""
    param_cls = AddNParam

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        known = self._same_shape(in_shape)
        return [known] * len(in_shape), [known], []

    def forward_inplace_option(self, in_data: list, out_data: list) -> list:
        return [(in_data[0], out_data[0])]


class AddNOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        r = req[0]
        if r == NULL:
            return
        xp, out = ctx.xp, out_data[0]
        if r == ADD:
            for x in in_data:
                xp.add(out, x, out=out, casting="unsafe")
            return
        # out may share memory with in_data[0] (in-place option) but with no other input
        if len(in_data) == 1:
            store(xp, out, r, in_data[0])
            return
        xp.add(in_data[0], in_data[1], out=out, casting="unsafe")
        for x in in_data[2:]:
            xp.add(out, x, out=out, casting="unsafe")

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp, g = ctx.xp, out_grad[0]
        for gi, r in zip(in_grad, req):
            if r != NULL:
                store(xp, gi, r, g)


def register(registry: Any) -> None:
    register_op(registry, "Concat", ConcatProp, ConcatOp, ("concat",))
    register_op(registry, "stack", StackProp, StackOp)
    register_op(registry, "SliceChannel", SliceChannelProp, SliceChannelOp, ("split",))
    register_op(registry, "add_n", AddNProp, AddNOp, ("ElementWiseSum",))
