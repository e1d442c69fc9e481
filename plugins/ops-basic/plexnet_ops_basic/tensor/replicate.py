"""Replication and reordering: tile, repeat, reverse (``flip``), broadcast_to,
broadcast_axis (``broadcast_axes``), broadcast_like.

Gradients sum the copies back onto the input (reshape-and-reduce, no scatter).
"""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, OperatorProperty, Params, Shape
from plexnet.operator.params import ParamError
from plexnet.util import is_np_shape

from ._common import (NULL, OneInputProp, XpOperator, norm_axes, norm_axis, register_op, shape_error, store,
                      sum_to)

__all__ = ["register"]


# -- tile ------------------------------------------------------------------------------------------------------

class TileParam(Params):
    reps = Field(Shape, doc="repetitions per axis (numpy.tile semantics)")

    def __post_init__(self, op: str) -> None:
        if any(r is None or r < 0 for r in self.reps):
            raise ParamError(f"{op}: invalid value {tuple(self.reps)} for argument 'reps': entries must be >= 0")


def _tile_plan(shape: tuple, reps: tuple) -> tuple[tuple, tuple]:
    n = max(len(shape), len(reps))
    s = (1,) * (n - len(shape)) + tuple(shape)
    r = (1,) * (n - len(reps)) + tuple(reps)
    return s, r


class TileProp(OneInputProp):
    """Repeat the whole array ``reps`` times per axis."""
    param_cls = TileParam

    def out_shape(self, s: tuple) -> tuple:
        if 0 in tuple(self.param.reps) and not is_np_shape():
            # MXNet 1.9.1 outside np_shape: a 0 in reps is an unknown output size (its
            # test_tile.test_invalid_reps expects the error); np_shape gives the zero-size result
            raise shape_error(self.op_name, f"reps {tuple(self.param.reps)} contains 0 (allowed under np_shape only)")
        ps, r = _tile_plan(s, self.param.reps)
        return tuple(a * b for a, b in zip(ps, r))


class TileOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] != NULL:
            xp, x, out = ctx.xp, in_data[0], out_data[0]
            ps, r = _tile_plan(x.shape, self.param.reps)
            # out viewed as (r0, d0, r1, d1, ...) is x broadcast along the r axes
            inter = tuple(v for pair in zip(r, ps) for v in pair)
            src = x.reshape(tuple(v for d in ps for v in (1, d)))
            if out.flags.c_contiguous and out.dtype == x.dtype and req[0] != 3:
                xp.copyto(out.reshape(inter), src)
            else:
                store(xp, out, req[0], xp.broadcast_to(src, inter).reshape(out.shape))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] != NULL:
            gi = in_grad[0]
            ps, r = _tile_plan(gi.shape, self.param.reps)
            inter = tuple(v for pair in zip(r, ps) for v in pair)
            g = out_grad[0].reshape(inter).sum(axis=tuple(range(0, len(inter), 2)))
            store(ctx.xp, gi, req[0], g.reshape(gi.shape))


# -- repeat ----------------------------------------------------------------------------------------------------

class RepeatParam(Params):
    repeats = Field(int, low=0, doc="copies of each element")
    axis = Field(int, default=None, optional=True, doc="axis (None: the flattened array)")


class RepeatProp(OneInputProp):
    """Repeat each element ``repeats`` times along an axis (or of the flattened array)."""
    param_cls = RepeatParam

    def out_shape(self, s: tuple) -> tuple:
        p = self.param
        if p.axis is None:
            n = 1
            for d in s:
                n *= d
            return (n * p.repeats,)
        ax = norm_axis(self.op_name, p.axis, len(s), "axis", s)
        return s[:ax] + (s[ax] * p.repeats,) + s[ax + 1:]


class RepeatOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] != NULL:
            xp, x = ctx.xp, in_data[0]
            p = self.param
            if p.axis is None:
                v = xp.repeat(x.reshape(-1), p.repeats)
            else:
                v = xp.repeat(x, p.repeats, axis=p.axis % x.ndim)
            store(xp, out_data[0], req[0], v)

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] != NULL:
            gi, p = in_grad[0], self.param
            if p.axis is None:
                g = out_grad[0].reshape(-1, p.repeats).sum(axis=1).reshape(gi.shape)
            else:
                ax = p.axis % gi.ndim
                s = gi.shape
                g = out_grad[0].reshape(s[:ax + 1] + (p.repeats,) + s[ax + 1:]).sum(axis=ax + 1)
            store(ctx.xp, gi, req[0], g)


# -- reverse ---------------------------------------------------------------------------------------------------

class ReverseParam(Params):
    axis = Field(Shape, doc="axes to reverse")


class ReverseProp(OneInputProp):
    """Reverse the order of elements along axes."""
    param_cls = ReverseParam

    def axes(self, s: tuple) -> tuple[int, ...]:
        return norm_axes(self.op_name, self.param.axis, len(s), "axis", s)

    def out_shape(self, s: tuple) -> tuple:
        self.axes(s)
        return s


class ReverseOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] != NULL:
            x = in_data[0]
            store(ctx.xp, out_data[0], req[0], ctx.xp.flip(x, axis=self.prop.axes(x.shape)))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] != NULL:
            g = out_grad[0]
            store(ctx.xp, in_grad[0], req[0], ctx.xp.flip(g, axis=self.prop.axes(g.shape)))


# -- broadcast_to / broadcast_axis / broadcast_like -------------------------------------------------------------

class BroadcastToParam(Params):
    shape = Field(Shape, default=Shape(()), doc="target shape (0 keeps the input's dim)")


class BroadcastToProp(OneInputProp):
    """Broadcast size-1 axes to a target shape of the same number of dims."""
    param_cls = BroadcastToParam

    def out_shape(self, s: tuple) -> tuple:
        tgt = tuple(self.param.shape)
        if len(tgt) != len(s):
            raise shape_error(self.op_name, f"input shape {s} cannot be broadcast to {tgt} (the number of dims "
                                            f"must be equal)")
        out = tuple(d if t == 0 else t for d, t in zip(s, tgt))
        for d, t in zip(s, out):
            if d != t and d != 1:
                raise shape_error(self.op_name, f"input shape {s} cannot be broadcast to {tgt}")
        return out


class BroadcastAxisParam(Params):
    axis = Field(Shape, default=Shape(()), doc="axes to broadcast (their size must be 1)")
    size = Field(Shape, default=Shape(()), doc="target size per axis")

    def __post_init__(self, op: str) -> None:
        if len(self.axis) != len(self.size):
            raise ParamError(f"{op}: arguments 'axis'={tuple(self.axis)} and 'size'={tuple(self.size)} must have "
                             f"the same length")


class BroadcastAxisProp(OneInputProp):
    """Broadcast the size-1 axes ``axis`` to ``size``."""
    param_cls = BroadcastAxisParam

    def out_shape(self, s: tuple) -> tuple:
        out = list(s)
        for a, n in zip(norm_axes(self.op_name, self.param.axis, len(s), "axis", s), self.param.size):
            if s[a] != 1 and s[a] != n:
                raise shape_error(self.op_name, f"axis {a} of input shape {s} has size {s[a]}; only size-1 axes "
                                                f"can be broadcast (to {n})")
            out[a] = n
        return tuple(out)


class BroadcastLikeParam(Params):
    lhs_axes = Field(Shape, default=None, optional=True, doc="axes of lhs to broadcast (None: all)")
    rhs_axes = Field(Shape, default=None, optional=True, doc="matching axes of rhs (None: all)")


class BroadcastLikeProp(OperatorProperty):
    """Broadcast ``lhs`` to the shape of ``rhs`` (or to its ``rhs_axes`` sizes)."""
    param_cls = BroadcastLikeParam
    free_dtype_inputs = (1,)  # rhs gives a shape only (MXNet accepts any dtype)

    def list_arguments(self) -> list[str]:
        return ["lhs", "rhs"]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        l, r = in_shape
        if l is None or r is None:
            return list(in_shape), [None], []
        l, r = tuple(l), tuple(r)
        p = self.param
        if p.lhs_axes is None or p.rhs_axes is None:
            if len(l) != len(r):
                raise shape_error(self.op_name, f"lhs {l} and rhs {r} must have the same number of dims")
            out = r
        else:
            if len(p.lhs_axes) != len(p.rhs_axes):
                raise shape_error(self.op_name, "lhs_axes and rhs_axes must have the same length")
            if not p.lhs_axes:  # MXNet: "Empty axes tuple is not allowed"
                raise shape_error(self.op_name, "empty lhs_axes / rhs_axes tuples are not allowed")
            out_l = list(l)
            for a, b in zip(norm_axes(self.op_name, p.lhs_axes, len(l), "lhs_axes", l),
                            norm_axes(self.op_name, p.rhs_axes, len(r), "rhs_axes", r)):
                out_l[a] = r[b]
            out = tuple(out_l)
        for d, t in zip(l, out):
            if d != t and d != 1:
                raise shape_error(self.op_name, f"lhs shape {l} cannot be broadcast to {out} (rhs shape {r})")
        return [l, r], [out], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return list(out_grad)


class BroadcastOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] != NULL:
            store(ctx.xp, out_data[0], req[0], in_data[0])  # copyto broadcasts

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] != NULL:
            gi = in_grad[0]
            store(ctx.xp, gi, req[0], sum_to(ctx.xp, out_grad[0], gi.shape))
        if len(in_grad) > 1 and req[1] != NULL and req[1] != 3:
            in_grad[1][...] = 0


def register(registry: Any) -> None:
    register_op(registry, "tile", TileProp, TileOp)
    register_op(registry, "repeat", RepeatProp, RepeatOp)
    register_op(registry, "reverse", ReverseProp, ReverseOp, ("flip",))
    register_op(registry, "broadcast_to", BroadcastToProp, BroadcastOp)
    register_op(registry, "broadcast_axis", BroadcastAxisProp, BroadcastOp, ("broadcast_axes",))
    register_op(registry, "broadcast_like", BroadcastLikeProp, BroadcastOp)
