"""Shape manipulation: Reshape (``reshape``), Flatten (``flatten``), transpose, SwapAxis
(``swapaxes``), expand_dims, squeeze (MXNet's ``matrix_op``).

Reshape understands MXNet's codes (0 copy, -1 infer, -2 copy the rest, -3 merge two, -4
split one into two, ``reverse=True`` to apply them from the right) and the legacy
``target_shape`` / ``keep_highest``. Reshape-like operators declare the in-place option
MXNet declares (output may share the input's memory: same data, other shape).
"""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, Params, Shape
from plexnet.operator.params import ParamError
from plexnet.operator.shape_utils import infer_reshape

from ._common import NULL, OneInputProp, XpOperator, norm_axes, norm_axis, prod, register_op, shape_error, store

__all__ = ["register", "reshape_shape"]


class ReshapeParam(Params):
    shape = Field(Shape, default=Shape(()), doc="target shape, with MXNet's codes 0, -1, -2, -3, -4")
    reverse = Field(bool, default=False, doc="apply the codes from right to left")
    target_shape = Field(Shape, default=Shape(()), doc="(deprecated) target shape; 0 infers one dim")
    keep_highest = Field(bool, default=False, doc="(deprecated, with target_shape) keep the first dim")

    def __post_init__(self, op: str) -> None:
        if len(self.shape) == 0 and len(self.target_shape) == 0:
            raise ParamError(f"{op}: argument 'shape' is required (got neither 'shape' nor 'target_shape')")


def reshape_shape(op: str, src: tuple, p: ReshapeParam) -> tuple:
    if len(p.shape):
        if any(d is None for d in p.shape):
            raise ParamError(f"{op}: invalid value {tuple(p.shape)} for argument 'shape'")
        return infer_reshape(src, p.shape, p.reverse, op)
    tgt = list(p.target_shape)
    start = 0
    if p.keep_highest:
        tgt[0] = src[0]
        start = 1
    zeros = [i for i in range(start, len(tgt)) if tgt[i] == 0]
    if len(zeros) == 1:
        tgt[zeros[0]] = 1
        tgt[zeros[0]] = prod(src) // max(prod(tgt), 1)
    out = tuple(tgt)
    if prod(out) != prod(src):
        raise shape_error(op, f"cannot reshape array of shape {src} (size {prod(src)}) into target_shape "
                              f"{tuple(p.target_shape)} -> {out}")
    return out


class _ViewProp(OneInputProp):
    """Single input, single output, the output's data is the input's (a view in MXNet)."""

    def forward_inplace_option(self, in_data: list, out_data: list) -> list:
        return [(in_data[0], out_data[0])]

    def backward_inplace_option(self, out_grad: list, in_data: list, out_data: list, in_grad: list) -> list:
        return [(out_grad[0], in_grad[0])]


class ReshapeProp(_ViewProp):
    """Reshape with MXNet's special codes."""
    param_cls = ReshapeParam

    def out_shape(self, s: tuple) -> tuple:
        return reshape_shape(self.op_name, s, self.param)

    def refine_partial_inputs(self, in_vals: list, out_known: list) -> list | None:
        """One unknown (0) input dimension follows from a known output's size (MXNet's
        ``ReverseReshapeInferShape``); ``None`` when that does not apply."""
        s, o = in_vals[0], (out_known[0] if out_known else None)
        if s is None or o is None or 0 in o or list(s).count(0) != 1:
            return None
        rest = prod(d for d in s if d != 0)
        if rest == 0 or prod(o) % rest:
            return None
        return [tuple(prod(o) // rest if d == 0 else d for d in s)]


class FlattenProp(_ViewProp):
    """Collapse every dim but the first: ``(d0, d1*...*dk)``."""

    def out_shape(self, s: tuple) -> tuple:
        if len(s) == 0:
            raise shape_error(self.op_name, "cannot flatten a 0-d input")
        return (s[0], prod(s[1:]))


class ExpandDimsParam(Params):
    axis = Field(int, doc="position of the new axis, in [-ndim-1, ndim]")


class ExpandDimsProp(_ViewProp):
    """Insert a new axis of size 1."""
    param_cls = ExpandDimsParam

    def out_shape(self, s: tuple) -> tuple:
        a = norm_axis(self.op_name, self.param.axis, len(s) + 1, "axis", s)
        return s[:a] + (1,) + s[a:]


class SqueezeParam(Params):
    axis = Field(Shape, default=None, optional=True, doc="axes to remove (None: every axis of size 1)")


class SqueezeProp(_ViewProp):
    """Remove axes of size 1 (all of them are removed -> shape (1,))."""
    param_cls = SqueezeParam

    def out_shape(self, s: tuple) -> tuple:
        if self.param.axis is None:
            axes = tuple(i for i, d in enumerate(s) if d == 1)
        else:
            axes = norm_axes(self.op_name, self.param.axis, len(s), "axis", s)
            bad = [a for a in axes if s[a] != 1]
            if bad:
                raise shape_error(self.op_name, f"cannot squeeze axis {bad[0]} of input shape {s}: its size "
                                                f"is {s[bad[0]]}, not 1")
        out = tuple(d for i, d in enumerate(s) if i not in axes)
        return out if out else (1,)


class ViewOp(XpOperator):
    """Forward and backward are copies through a reshape."""

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] != NULL:
            out = out_data[0]
            store(ctx.xp, out, req[0], in_data[0].reshape(out.shape))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] != NULL:
            gi = in_grad[0]
            store(ctx.xp, gi, req[0], out_grad[0].reshape(gi.shape))


# -- transpose / SwapAxis ---------------------------------------------------------------------------------------

class TransposeParam(Params):
    axes = Field(Shape, default=Shape(()), doc="permutation of the axes (default: reverse them)")


class TransposeProp(OneInputProp):
    """Permute the axes."""
    param_cls = TransposeParam

    def perm(self, ndim: int, shape: Any = None) -> tuple[int, ...]:
        axes = self.param.axes
        if len(axes) == 0:
            return tuple(range(ndim - 1, -1, -1))
        if len(axes) != ndim:
            raise shape_error(self.op_name, f"argument 'axes'={tuple(axes)} must name every axis of input "
                                            f"shape {shape}")
        p = norm_axes(self.op_name, axes, ndim, "axes", shape)
        return p

    def out_shape(self, s: tuple) -> tuple:
        return tuple(s[a] for a in self.perm(len(s), s))

    def refine_partial_inputs(self, in_vals: list, out_known: list) -> list | None:
        """Unknown (0) input dims from a known output, through the inverse permutation
        (MXNet's transpose infers both ways: ``transpose(sym.ones((-1, -1))) + x``)."""
        s, o = in_vals[0], (out_known[0] if out_known else None)
        if s is None or o is None or len(o) != len(s) or 0 not in s:
            return None
        new = list(s)
        for i, a in enumerate(self.perm(len(s), s)):
            if new[a] == 0:
                new[a] = o[i]
        return None if tuple(new) == tuple(s) else [tuple(new)]


class TransposeOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] != NULL:
            x = in_data[0]
            store(ctx.xp, out_data[0], req[0], x.transpose(self.prop.perm(x.ndim, x.shape)))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] != NULL:
            gi = in_grad[0]
            perm = self.prop.perm(gi.ndim, gi.shape)
            inv = [0] * len(perm)
            for i, a in enumerate(perm):
                inv[a] = i
            store(ctx.xp, gi, req[0], out_grad[0].transpose(inv))


class SwapAxisParam(Params):
    dim1 = Field(int, default=0, doc="first axis")
    dim2 = Field(int, default=0, doc="second axis")


class SwapAxisProp(OneInputProp):
    """Interchange two axes."""
    param_cls = SwapAxisParam

    def axes(self, s: tuple) -> tuple[int, int]:
        return (norm_axis(self.op_name, self.param.dim1, len(s), "dim1", s),
                norm_axis(self.op_name, self.param.dim2, len(s), "dim2", s))

    def out_shape(self, s: tuple) -> tuple:
        a, b = self.axes(s)
        out = list(s)
        out[a], out[b] = s[b], s[a]
        return tuple(out)


class SwapAxisOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] != NULL:
            x = in_data[0]
            a, b = self.prop.axes(x.shape)
            store(ctx.xp, out_data[0], req[0], x.swapaxes(a, b))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] != NULL:
            gi = in_grad[0]
            a, b = self.prop.axes(gi.shape)
            store(ctx.xp, gi, req[0], out_grad[0].swapaxes(a, b))


def register(registry: Any) -> None:
    register_op(registry, "Reshape", ReshapeProp, ViewOp, ("reshape",))
    register_op(registry, "Flatten", FlattenProp, ViewOp, ("flatten",))
    register_op(registry, "expand_dims", ExpandDimsProp, ViewOp)
    register_op(registry, "squeeze", SqueezeProp, ViewOp)
    register_op(registry, "transpose", TransposeProp, TransposeOp)
    register_op(registry, "SwapAxis", SwapAxisProp, SwapAxisOp, ("swapaxes",))
