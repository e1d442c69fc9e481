"""Spatial sampling, MXNet 1.x semantics: ``Crop``, ``GridGenerator`` (affine, warp),
``BilinearSampler`` and ``SpatialTransformer`` (the two combined).

Grids are ``(N, 2, H, W)`` of normalised ``(x, y)`` source coordinates in ``[-1, 1]``
(``-1``: the first pixel centre, ``1``: the last). The sampler interpolates bilinearly
and reads zeros outside the input; its gradient flows to the data and to the grid.
"""
from __future__ import annotations

from typing import Any

import numpy as np  # dtype handling only

from plexnet.operator import Field, Params, Shape
from plexnet.operator.params import ParamError

from plexnet_ops_basic.tensor._fn import FnProp, register_fn
from plexnet_ops_basic.tensor.indexing import scatter_add

__all__ = ["register", "bilinear_sample", "bilinear_sample_grad"]


# -- Crop ------------------------------------------------------------------------------------------------------

class CropParam(Params):
    num_args = Field(int, default=1, choices=(1, 2), doc="1: crop to h_w; 2: crop to the second input's size")
    offset = Field(Shape, default=Shape((0, 0)), doc="(y, x) of the crop's top-left corner")
    h_w = Field(Shape, default=Shape((0, 0)), doc="(height, width) of the crop (num_args=1)")
    center_crop = Field(bool, default=False, doc="center the crop (offset ignored)")


class CropProp(FnProp):
    """Crop the last two axes of ``data`` to ``h_w`` or to the second input's size."""
    param_cls = CropParam
    deps = ("out_grad", "in_data")

    def list_arguments(self) -> list[str]:
        return ["data", "crop_like"] if self.param.num_args == 2 else ["data"]

    def _box(self, d: tuple, ins: list) -> tuple[int, int, int, int]:
        p = self.param
        if len(d) != 4:
            raise self.error(f"data must be 4-D (N, C, H, W), got shape {d}")
        h, w = (ins[1][2], ins[1][3]) if p.num_args == 2 else tuple(p.h_w)
        if p.center_crop:
            y, x = (d[2] - h) // 2, (d[3] - w) // 2
        else:
            y, x = tuple(p.offset)
        if h <= 0 or w <= 0 or y < 0 or x < 0 or y + h > d[2] or x + w > d[3]:
            raise self.error(f"crop of size ({h}, {w}) at offset ({y}, {x}) does not fit data of shape {d}")
        return y, x, h, w

    def shapes(self, ins: list) -> tuple[list, list]:
        d = ins[0]
        if self.param.num_args == 2 and len(ins[1]) != 4:
            raise self.error(f"the second input must be 4-D, got shape {ins[1]}")
        _, _, h, w = self._box(d, ins)
        return ins, [d[:2] + (h, w)]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        y, x, h, w = self._box(ins[0].shape, [a.shape for a in ins])
        return [ins[0][:, :, y:y + h, x:x + w]]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        y, x, h, w = self._box(ins[0].shape, [a.shape for a in ins])
        g = xp.zeros(ins[0].shape, dtype=ogs[0].dtype)
        g[:, :, y:y + h, x:x + w] = ogs[0]
        return [g] + [None] * (len(ins) - 1)


# -- GridGenerator -----------------------------------------------------------------------------------------------

class GridGeneratorParam(Params):
    transform_type = Field(str, choices=("affine", "warp"), doc="affine: (N, 6) matrices; warp: (N, 2, H, W) flow")
    target_shape = Field(Shape, default=Shape((0, 0)), doc="(H, W) of the grid (affine)")


def _base_grid(xp: Any, h: int, w: int, dtype: Any, in_dtype: bool = False) -> Any:
    """``(3, H*W)``: normalised x, y and ones of every target pixel, rounded as MXNet's:
    SpatialTransformer computes ``-1.0 + (2.0 * k) / (n - 1)`` in double, GridGenerator
    (``in_dtype``) ``-1 + k * (2 / (n - 1))`` in the data type. At the identity transform
    every sampling point lies on a pixel, where bilinear sampling has a kink: the last bit
    decides the side, and with it the gradient with respect to the transform."""
    def axis(n: int) -> Any:
        if n <= 1:
            return xp.full((n,), -1.0, dtype=dtype)
        k = xp.arange(n, dtype=np.float64)
        if in_dtype:
            t = np.dtype(dtype).type  # numpy scalars: also valid operands for CuPy arrays
            return t(-1.0) + k.astype(dtype) * t(2.0 / (n - 1))
        return (-1.0 + (k * 2.0) / (n - 1)).astype(dtype)
    xs, ys = axis(w), axis(h)
    gx = xp.broadcast_to(xs.reshape(1, w), (h, w)).reshape(-1)
    gy = xp.broadcast_to(ys.reshape(h, 1), (h, w)).reshape(-1)
    return xp.stack([gx, gy, xp.ones(h * w, dtype=dtype)]).astype(dtype)


class GridGeneratorProp(FnProp):
    """Sampling grids: ``affine`` maps the target pixels through a 2x3 matrix per sample;
    ``warp`` adds a pixel flow to the identity grid."""
    param_cls = GridGeneratorParam
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        d = ins[0]
        if self.param.transform_type == "affine":
            h, w = tuple(self.param.target_shape)
            if len(d) != 2 or d[1] != 6:
                raise self.error(f"affine data must be (N, 6), got shape {d}")
            if h <= 0 or w <= 0:
                raise self.error(f"affine needs a positive target_shape, got {tuple(self.param.target_shape)}")
            return ins, [(d[0], 2, h, w)]
        if len(d) != 4 or d[1] != 2:
            raise self.error(f"warp data must be a flow (N, 2, H, W), got shape {d}")
        return ins, [d]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = ins[0]
        if self.param.transform_type == "affine":
            h, w = tuple(self.param.target_shape)
            base = _base_grid(xp, h, w, x.dtype, in_dtype=True)
            return [(x.reshape(-1, 2, 3) @ base).reshape(x.shape[0], 2, h, w)]
        n, _, h, w = x.shape
        jj = xp.arange(w, dtype=x.dtype).reshape(1, w)
        ii = xp.arange(h, dtype=x.dtype).reshape(h, 1)
        gx = (x[:, 0] + jj) / ((w - 1) / 2.0) - 1
        gy = (x[:, 1] + ii) / ((h - 1) / 2.0) - 1
        return [xp.stack([gx, gy], axis=1)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        g, x = ogs[0], ins[0]
        if self.param.transform_type == "affine":
            h, w = tuple(self.param.target_shape)
            base = _base_grid(xp, h, w, g.dtype, in_dtype=True)
            return [(g.reshape(-1, 2, h * w) @ base.T).reshape(x.shape)]
        h, w = x.shape[2], x.shape[3]
        return [xp.stack([g[:, 0] / ((w - 1) / 2.0), g[:, 1] / ((h - 1) / 2.0)], axis=1)]


# -- BilinearSampler ---------------------------------------------------------------------------------------------

def _corners(xp: Any, grid: Any, h: int, w: int) -> tuple:
    """Pixel coordinates of the grid, the top-left corner and the weights."""
    x = (grid[:, 0] + 1) * (w - 1) / 2.0
    y = (grid[:, 1] + 1) * (h - 1) / 2.0
    x0, y0 = xp.floor(x), xp.floor(y)
    return x, y, x0.astype(np.int64), y0.astype(np.int64), x - x0, y - y0


def _lin(xp: Any, yi: Any, xi: Any, h: int, w: int) -> tuple[Any, Any]:
    """Flat in-plane index ``(N, 1, Ho*Wo)`` of clipped corners, and the in-range mask."""
    ok = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
    lin = xp.clip(yi, 0, h - 1) * w + xp.clip(xi, 0, w - 1)
    return lin.reshape(lin.shape[0], 1, -1), ok


def _gather(xp: Any, data: Any, yi: Any, xi: Any) -> tuple[Any, Any]:
    """``data[n, :, yi, xi]`` as ``(N, C, Ho, Wo)`` with zeros outside; and the in-range mask."""
    n, c, h, w = data.shape
    lin, ok = _lin(xp, yi, xi, h, w)
    vals = xp.take_along_axis(data.reshape(n, c, h * w), xp.broadcast_to(lin, (n, c, lin.shape[2])), axis=2)
    return vals.reshape((n, c) + yi.shape[1:]) * ok[:, None], ok


def bilinear_sample(xp: Any, data: Any, grid: Any) -> Any:
    """Bilinear interpolation of ``data`` (N, C, H, W) at ``grid`` (N, 2, Ho, Wo)."""
    h, w = data.shape[2], data.shape[3]
    _, _, x0, y0, fx, fy = _corners(xp, grid, h, w)
    out = 0
    for dy, dx, wt in ((0, 0, (1 - fy) * (1 - fx)), (0, 1, (1 - fy) * fx), (1, 0, fy * (1 - fx)), (1, 1, fy * fx)):
        vals, _ = _gather(xp, data, y0 + dy, x0 + dx)
        out = out + vals * wt[:, None]
    return out.astype(data.dtype)


def bilinear_sample_grad(xp: Any, data: Any, grid: Any, g: Any) -> tuple[Any, Any]:
    """Gradients of ``bilinear_sample`` with respect to ``data`` and ``grid``."""
    n, c, h, w = data.shape
    _, _, x0, y0, fx, fy = _corners(xp, grid, h, w)
    gdata = xp.zeros(data.shape, dtype=g.dtype)
    gfx = 0
    gfy = 0
    for dy, dx, wt, dwx, dwy in ((0, 0, (1 - fy) * (1 - fx), -(1 - fy), -(1 - fx)),
                                 (0, 1, (1 - fy) * fx, (1 - fy), -fx),
                                 (1, 0, fy * (1 - fx), -fy, (1 - fx)),
                                 (1, 1, fy * fx, fy, fx)):
        yi, xi = y0 + dy, x0 + dx
        vals, ok = _gather(xp, data, yi, xi)
        s = (vals * g).sum(axis=1)  # (N, Ho, Wo)
        gfx = gfx + s * dwx
        gfy = gfy + s * dwy
        lin, _ = _lin(xp, yi, xi, h, w)
        contrib = (g * (wt * ok)[:, None]).reshape(n, c, -1)
        flat = gdata.reshape(n, c, h * w)
        nn_, cc = xp.arange(n).reshape(n, 1, 1), xp.arange(c).reshape(1, c, 1)
        scatter_add(xp, flat, (nn_, cc, xp.broadcast_to(lin, contrib.shape)), contrib)
    ggrid = xp.stack([gfx * (w - 1) / 2.0, gfy * (h - 1) / 2.0], axis=1)
    return gdata, ggrid


class BilinearSamplerParam(Params):
    cudnn_off = Field(bool, default=None, optional=True, doc="ignored")


class BilinearSamplerProp(FnProp):
    """Sample ``data`` (N, C, H, W) bilinearly at ``grid`` (N, 2, Ho, Wo): (N, C, Ho, Wo)."""
    param_cls = BilinearSamplerParam
    arguments = ("data", "grid")
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        d, g = ins
        if len(d) != 4 or len(g) != 4 or g[1] != 2 or g[0] != d[0]:
            raise self.error(f"data must be (N, C, H, W) and grid (N, 2, H', W'), got {d} and {g}")
        return ins, [(d[0], d[1], g[2], g[3])]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [bilinear_sample(xp, ins[0], ins[1])]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return list(bilinear_sample_grad(xp, ins[0], ins[1], ogs[0]))


class SpatialTransformerParam(Params):
    target_shape = Field(Shape, default=Shape((0, 0)), doc="(H, W) of the output")
    transform_type = Field(str, choices=("affine",), doc="only affine (as MXNet)")
    sampler_type = Field(str, choices=("bilinear",), doc="only bilinear (as MXNet)")
    cudnn_off = Field(bool, default=None, optional=True, doc="ignored")

    def __post_init__(self, op: str) -> None:
        if len(self.target_shape) != 2 or min(self.target_shape) <= 0:
            raise ParamError(f"{op}: argument 'target_shape'={tuple(self.target_shape)} must be a positive (H, W)")


class SpatialTransformerProp(FnProp):
    """Affine grid from ``loc`` (N, 6), then bilinear sampling of ``data``."""
    param_cls = SpatialTransformerParam
    arguments = ("data", "loc")
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        d, loc = ins
        if len(d) != 4 or loc != (d[0], 6):
            raise self.error(f"data must be (N, C, H, W) and loc (N, 6), got {d} and {loc}")
        h, w = tuple(self.param.target_shape)
        return ins, [(d[0], d[1], h, w)]

    def _grid(self, xp: Any, loc: Any) -> Any:
        h, w = tuple(self.param.target_shape)
        return (loc.reshape(-1, 2, 3) @ _base_grid(xp, h, w, loc.dtype)).reshape(loc.shape[0], 2, h, w)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [bilinear_sample(xp, ins[0], self._grid(xp, ins[1]))]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        gd, gg = bilinear_sample_grad(xp, ins[0], self._grid(xp, ins[1]), ogs[0])
        h, w = tuple(self.param.target_shape)
        base = _base_grid(xp, h, w, gg.dtype)
        return [gd, (gg.reshape(-1, 2, h * w) @ base.T).reshape(ins[1].shape)]


def register(registry: Any) -> None:
    register_fn(registry, "Crop", CropProp)
    register_fn(registry, "GridGenerator", GridGeneratorProp)
    register_fn(registry, "BilinearSampler", BilinearSamplerProp)
    register_fn(registry, "SpatialTransformer", SpatialTransformerProp)
