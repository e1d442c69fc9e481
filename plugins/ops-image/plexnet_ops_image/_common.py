"""What the image operators share (not an operator module): one ``data`` input,
MXNet's shape checks, ``saturate_cast`` and the pass-through gradient MXNet gives its
augmentation operators."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from plexnet.base import ShapeError
from plexnet.operator import Operator, OperatorProperty, OpReqType, assign
from plexnet.resource import ResourceRequest

__all__ = ["ImageProp", "HWCProp", "FnOp", "FloatTuple", "saturate_cast", "register_op", "ShapeError"]


class FloatTuple(tuple):
    """A tuple of floats; parses ``"(0.5, 0.2)"``, ``0.5``, ``[0.5, 0.2]`` (MXNet's ``Tuple<float>``)."""

    def __new__(cls, v: Any = ()) -> "FloatTuple":
        if isinstance(v, str):
            import ast
            v = ast.literal_eval(v.strip() or "()")
        if isinstance(v, (int, float, np.number)):
            v = (v,)
        return super().__new__(cls, (float(x) for x in v))


def saturate_cast(xp: Any, vals: Any, dtype: Any) -> Any:
    """MXNet's ``saturate_cast``: uint8 clips to [0, 255] and truncates; other dtypes cast."""
    if np.dtype(dtype) == np.uint8:  # ``vals`` is a temporary of the caller: clip in place
        return xp.clip(vals, 0, 255, out=vals).astype(np.uint8)
    return vals.astype(dtype)


class ImageProp(OperatorProperty):
    """One input ``data``; output of its shape and dtype unless a subclass says otherwise."""

    random = False

    def shape_error(self, what: str, shape: Any) -> ShapeError:
        return ShapeError(f"{self.op_name}: {what}, but got data shape {tuple(shape)}")

    def check(self, shape: tuple) -> tuple:
        """Validate the data shape; return the output shape."""
        return shape

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        d = in_shape[0]
        if d is None:
            return [None], [None], []
        d = tuple(int(v) for v in d)
        return [d], [self.check(d)], []

    def forward_resource(self, in_shape):  # type: ignore[no-untyped-def]
        return [ResourceRequest(ResourceRequest.kRandom)] if self.random else []

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0]]

    def compute(self, xp: Any, x: Any, rng: Any) -> Any:
        raise NotImplementedError

    def grad(self, xp: Any, og: Any, x_shape: tuple) -> Any:
        """MXNet's augmentation operators pass the head gradient through unchanged."""
        return og


class HWCProp(ImageProp):
    """Augmentations on one ``(height, width, channels)`` image with 1 or 3 channels."""

    def check(self, shape: tuple) -> tuple:
        if len(shape) != 3:
            raise self.shape_error("input image must have shape (height, width, channels)", shape)
        if shape[2] not in (1, 3):
            raise self.shape_error("the last dimension of the input image must be the channel dimension with "
                                   "either 1 or 3 elements", shape)
        return shape


class FnOp(Operator):
    """Runs ``prop.compute`` / ``prop.grad``."""

    def __init__(self, prop: ImageProp) -> None:
        self.prop = prop

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        if req[0] == OpReqType.null:
            return
        rng = ctx.requested[0].get_random() if self.prop.random else None
        val = self.prop.compute(ctx.xp, in_data[0], rng)
        assign(out_data[0], req[0], val)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        if req[0] == OpReqType.null:
            return
        g = self.prop.grad(ctx.xp, out_grad[0], in_grad[0].shape)
        assign(in_grad[0], req[0], g.astype(in_grad[0].dtype, copy=False))


def register_op(registry: Any, short: str, cls: type[ImageProp],
                factory: Callable[[Any, Any], Operator] = lambda prop, ctx: FnOp(prop)) -> None:
    """Register ``_image_<short>`` (shown as ``nd.image.<short>`` / ``sym.image.<short>``)."""
    name = "_image_" + short
    registry.register_property(name, cls)
    registry.register_impl(name, "*", factory, impl_name="xp")
