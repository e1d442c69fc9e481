"""The shape of a contrib operator (not an operator module): a property that names its
arguments and outputs and gives ``forward(xp, ins) -> outs`` and ``backward(xp, ins,
outs, ogs) -> grads`` on raw arrays; :class:`FnOp` runs them and honours ``req``.
MXNet registers the family as ``_contrib_<name>``; :func:`register` does too."""
from __future__ import annotations

from typing import Any, ClassVar, Iterator, Sequence

import numpy as np

from plexnet.base import ShapeError
from plexnet.operator import Operator, OperatorProperty, OpReqType, assign

__all__ = ["FnProp", "FnOp", "register", "ShapeError", "fmt", "each_roi"]


def fmt(names: Sequence[str], shapes: Sequence[Any]) -> str:
    return ", ".join(f"{n}={None if s is None else tuple(s)}" for n, s in zip(names, shapes))


def each_roi(rois: Any, width: int, n_images: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(row, image, roi)`` for every roi (read on the host) whose image index is valid."""
    host = np.asarray(rois.get() if hasattr(rois, "get") else rois, dtype=np.float64).reshape(-1, width)
    for k, roi in enumerate(host):
        b = int(roi[0])
        if 0 <= b < n_images:
            yield k, b, roi


class FnProp(OperatorProperty):
    arguments: ClassVar[tuple[str, ...]] = ("data",)
    outputs: ClassVar[tuple[str, ...]] = ("output",)
    visible: ClassVar[int | None] = None  # outputs shown to the user (None: all)

    def list_arguments(self) -> list[str]:
        return list(self.arguments)

    def list_outputs(self) -> list[str]:
        return list(self.outputs)

    def num_visible_outputs(self) -> int:
        return self.visible if self.visible is not None else len(self.outputs)

    def error(self, what: str, shapes: Sequence[Any]) -> ShapeError:
        return ShapeError(f"{self.op_name}: {what} (input shapes: {fmt(self.list_arguments(), shapes)})")

    def out_shapes(self, shapes: list[tuple]) -> list[tuple]:
        return [shapes[0]] * len(self.outputs)

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        if any(s is None for s in in_shape):
            return list(in_shape), [None] * len(self.outputs), []
        shapes = [tuple(int(d) for d in s) for s in in_shape]
        return shapes, self.out_shapes(shapes), []

    def forward(self, xp: Any, ins: Sequence[Any]) -> Sequence[Any]:
        raise NotImplementedError

    def backward(self, xp: Any, ins: Sequence[Any], outs: Sequence[Any], ogs: Sequence[Any]) -> Sequence[Any]:
        """Default: no gradient flows (MXNet's zero gradient for index-like operators)."""
        return [xp.zeros(x.shape, dtype=x.dtype) for x in ins]


class FnOp(Operator):
    def __init__(self, prop: FnProp) -> None:
        self.prop = prop

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        if all(r == OpReqType.null for r in req):
            return
        for o, r, v in zip(out_data, req, self.prop.forward(ctx.xp, in_data)):
            assign(o, r, v.astype(o.dtype, copy=False) if hasattr(v, "astype") else v)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        if all(r == OpReqType.null for r in req):
            return
        xp = ctx.xp
        ogs = [g if g is not None else None for g in out_grad]
        for g, r, v in zip(in_grad, req, self.prop.backward(xp, in_data, out_data, ogs)):
            assign(g, r, v.astype(g.dtype, copy=False))


def register(registry: Any, props: dict[str, type[FnProp]], aliases: dict[str, tuple[str, ...]] | None = None) -> None:
    """Register ``_contrib_<name>`` for each ``name: Prop``."""
    for name, cls in props.items():
        op = "_contrib_" + name
        registry.register_property(op, cls, aliases=tuple((aliases or {}).get(name, ())))
        registry.register_impl(op, "*", lambda prop, ctx: FnOp(prop), impl_name="xp")
