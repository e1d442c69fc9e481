"""What the sampler operators share (not an operator module): the ``kRandom`` resource,
MXNet's ``shape``/``ctx``/``dtype`` parameters, zero gradients."""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from plexnet.base import ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, ParamError, Shape, assign
from plexnet.resource import ResourceRequest

__all__ = ["SamplerProp", "SamplerOp", "FLOAT_DTYPES", "out_dtype", "ShapeError", "ParamError", "Field", "Shape",
           "fmt"]

FLOAT_DTYPES = ("None", "float16", "float32", "float64")


def out_dtype(name: str | None, default: Any = np.float32) -> Any:
    """The output dtype of a ``dtype`` parameter (``None``: ``default``)."""
    return np.dtype(default) if name in (None, "None") else np.dtype(name)


def fmt(names: Any, shapes: Any) -> str:
    return ", ".join(f"{n}={None if s is None else tuple(s)}" for n, s in zip(names, shapes))


class SamplerProp(OperatorProperty):
    """A sampler: draws from the context's generator (``kRandom``); no gradient flows
    through a draw (MXNet gives zero gradients to its inputs)."""

    arguments: ClassVar[tuple[str, ...]] = ()

    def list_arguments(self) -> list[str]:
        return list(self.arguments)

    def forward_resource(self, in_shape):  # type: ignore[no-untyped-def]
        return [ResourceRequest(ResourceRequest.kRandom)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return []

    def draw(self, rng: Any, xp: Any, in_data: list[Any], out: Any) -> Any:
        """The values of output 0 (any float dtype; cast on store)."""
        raise NotImplementedError

    def shape_error(self, what: str, shapes: Any) -> ShapeError:
        return ShapeError(f"{self.op_name}: {what} (input shapes: {fmt(self.arguments, shapes)})")


class SamplerOp(Operator):
    def __init__(self, prop: SamplerProp) -> None:
        self.prop = prop

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        out = out_data[0]
        if req[0] == OpReqType.null or out.size == 0:
            return
        vals = self.prop.draw(ctx.requested[0].get_random(), ctx.xp, list(in_data), out)
        assign(out, req[0], vals.astype(out.dtype, copy=False))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        for g, r in zip(in_grad, req):
            if r == OpReqType.write or r == OpReqType.inplace:
                g[...] = 0
