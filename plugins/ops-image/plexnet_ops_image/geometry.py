"""``to_tensor``, ``normalize``, ``crop``, ``flip_left_right``, ``flip_top_bottom`` and
their random variants, as MXNet 1.9.1 has them. MXNet gives the flips the pass-through
gradient of its augmentation operators (not a flipped one); so does this plugin. The
random flips flip the whole input with probability 1/2."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._common import FloatTuple, HWCProp, ImageProp, register_op

__all__ = ["register"]


class ToTensorProp(ImageProp):
    """``(H, W, C)`` or ``(N, H, W, C)`` images in [0, 255] -> float32 ``(C, H, W)`` /
    ``(N, C, H, W)`` tensors in [0, 1]."""

    def check(self, shape):  # type: ignore[no-untyped-def]
        if len(shape) not in (3, 4):
            raise self.shape_error("input image must have shape (height, width, channels), or "
                                   "(N, height, width, channels)", shape)
        return shape[:-3] + (shape[-1], shape[-3], shape[-2])

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        return [in_type[0]], [np.dtype(np.float32)], []

    def compute(self, xp, x, rng):  # type: ignore[no-untyped-def]
        return xp.moveaxis(x, -1, -3).astype(np.float32) / np.float32(255.0)

    def grad(self, xp, og, x_shape):  # type: ignore[no-untyped-def]
        return xp.moveaxis(og, -3, -1) / np.float32(255.0)


class NormalizeParam(Params):
    mean = Field(FloatTuple, default=FloatTuple((0.0, 0.0, 0.0, 0.0)), doc="per-channel means (1 or C values)")
    std = Field(FloatTuple, default=FloatTuple((1.0, 1.0, 1.0, 1.0)), doc="per-channel deviations (1 or C values)")


class NormalizeProp(ImageProp):
    """``(data - mean[c]) / std[c]`` over the channel axis of ``(C, H, W)`` or
    ``(N, C, H, W)`` tensors with 1 or 3 channels."""

    param_cls = NormalizeParam

    def check(self, shape):  # type: ignore[no-untyped-def]
        if len(shape) not in (3, 4):
            raise self.shape_error("input tensor must have shape (channels, height, width), or "
                                   "(N, channels, height, width)", shape)
        c = shape[-3]
        if c not in (1, 3):
            raise self.shape_error("the channel dimension must have either 1 or 3 elements", shape)
        for name in ("mean", "std"):
            v = getattr(self.param, name)
            if len(v) not in (1, c):
                raise self.shape_error(f"invalid {name} {v}: it must have either 1 or {c} elements", shape)
        return shape

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]

    def _col(self, xp: Any, v: tuple, c: int) -> Any:
        arr = np.asarray(v * c if len(v) == 1 else v, dtype=np.float32)[:c]
        return xp.asarray(arr.reshape(c, 1, 1))

    def compute(self, xp, x, rng):  # type: ignore[no-untyped-def]
        c = x.shape[-3]
        return ((x - self._col(xp, self.param.mean, c)) / self._col(xp, self.param.std, c)).astype(x.dtype)

    def grad(self, xp, og, x_shape):  # type: ignore[no-untyped-def]
        return og * (1.0 / self._col(xp, self.param.std, x_shape[-3]))


class CropParam(Params):
    x = Field(int, low=0, doc="left edge")
    y = Field(int, low=0, doc="top edge")
    width = Field(int, low=1, doc="width of the crop")
    height = Field(int, low=1, doc="height of the crop")


class CropProp(ImageProp):
    """The ``width`` x ``height`` window at ``(x, y)`` of ``(H, W, C)`` or
    ``(N, H, W, C)`` images."""

    param_cls = CropParam

    def check(self, shape):  # type: ignore[no-untyped-def]
        if len(shape) not in (3, 4):
            raise self.shape_error("input image must have shape (height, width, channels), or "
                                   "(N, height, width, channels)", shape)
        p = self.param
        if p.x + p.width > shape[-2]:
            raise self.shape_error(f"x + width ({p.x} + {p.width}) should not be greater than the input width", shape)
        if p.y + p.height > shape[-3]:
            raise self.shape_error(f"y + height ({p.y} + {p.height}) should not be greater than the input height",
                                   shape)
        return shape[:-3] + (p.height, p.width, shape[-1])

    def _window(self) -> tuple:
        p = self.param
        return (Ellipsis, slice(p.y, p.y + p.height), slice(p.x, p.x + p.width), slice(None))

    def compute(self, xp, x, rng):  # type: ignore[no-untyped-def]
        return x[self._window()]

    def grad(self, xp, og, x_shape):  # type: ignore[no-untyped-def]
        g = xp.zeros(x_shape, dtype=og.dtype)
        g[self._window()] = og
        return g


class FlipLeftRightProp(HWCProp):
    """Mirror an ``(H, W, C)`` image horizontally."""

    axis = 1

    def compute(self, xp, x, rng):  # type: ignore[no-untyped-def]
        return xp.flip(x, axis=self.axis)


class FlipTopBottomProp(FlipLeftRightProp):
    """Mirror an ``(H, W, C)`` image vertically."""

    axis = 0


class RandomFlipLeftRightProp(FlipLeftRightProp):
    """Mirror an ``(H, W, C)`` image horizontally with probability 1/2."""

    random = True

    def compute(self, xp, x, rng):  # type: ignore[no-untyped-def]
        return xp.flip(x, axis=self.axis) if float(rng.random(1)[0]) < 0.5 else x


class RandomFlipTopBottomProp(RandomFlipLeftRightProp):
    """Mirror an ``(H, W, C)`` image vertically with probability 1/2."""

    axis = 0


def register(registry: Any) -> None:
    for short, cls in (("to_tensor", ToTensorProp), ("normalize", NormalizeProp), ("crop", CropProp),
                       ("flip_left_right", FlipLeftRightProp), ("flip_top_bottom", FlipTopBottomProp),
                       ("random_flip_left_right", RandomFlipLeftRightProp),
                       ("random_flip_top_bottom", RandomFlipTopBottomProp)):
        register_op(registry, short, cls)
