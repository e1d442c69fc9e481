"""``resize`` of ``(H, W, C)`` or ``(N, H, W, C)`` images, as MXNet 1.9.1.

``size`` is ``(width, height)``, or one value: a square, or with ``keep_ratio`` the new
length of the shorter side (the other side scaled and truncated). ``interp``: 0 nearest,
1 bilinear, 2 area, 3 bicubic, 4 Lanczos (OpenCV's codes).

Two implementations (the registry picks by device and availability, see
``plexnet plugins``): ``opencv`` on the CPU calls ``cv2.resize`` as MXNet does, so the
pixels are MXNet's; ``xp`` runs on any device (the GPU) with nearest and bilinear
interpolation in OpenCV's pixel-centre convention, computed in floating point and
rounded (uint8 results may differ from OpenCV's fixed-point arithmetic by 1).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params, ParamError, Shape

from ._common import FnOp, ImageProp

__all__ = ["register", "out_size"]


class ResizeParam(Params):
    size = Field(Shape, default=Shape(()), doc="(width, height), or one length")
    keep_ratio = Field(bool, default=False, doc="with one length: scale the shorter side to it, keep the ratio")
    interp = Field(int, default=1, low=0, high=4, doc="0 nearest, 1 bilinear, 2 area, 3 bicubic, 4 Lanczos")

    def __post_init__(self, op: str) -> None:
        if len(self.size) not in (1, 2):
            raise ParamError(f"{op}: argument 'size' must have 1 or 2 values, got {tuple(self.size)}")
        if any(s <= 0 for s in self.size):
            raise ParamError(f"{op}: argument 'size' must be positive, got {tuple(self.size)}")


def out_size(param: ResizeParam, h: int, w: int) -> tuple[int, int]:
    """``(height, width)`` of the result for an ``h`` x ``w`` image."""
    if len(param.size) == 2:
        return int(param.size[1]), int(param.size[0])
    s = int(param.size[0])
    if not param.keep_ratio:
        return s, s
    if h > w:
        return int(h * s / w), s
    return s, int(w * s / h)


class ResizeProp(ImageProp):
    """Resize images to ``size`` with OpenCV's interpolation ``interp``."""

    param_cls = ResizeParam

    def check(self, shape):  # type: ignore[no-untyped-def]
        if len(shape) not in (3, 4):
            raise self.shape_error("input image must have shape (height, width, channels), or "
                                   "(N, height, width, channels)", shape)
        h, w = out_size(self.param, shape[-3], shape[-2])
        return shape[:-3] + (h, w, shape[-1])

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return []


class OpenCVResizeOp(FnOp):
    """``cv2.resize`` per image (numpy arrays: CPU only)."""

    def __init__(self, prop: ResizeProp) -> None:
        super().__init__(prop)
        import cv2
        self.cv2 = cv2

    def resize(self, xp: Any, x: Any) -> Any:
        h, w = out_size(self.prop.param, x.shape[-3], x.shape[-2])
        imgs = x.reshape((-1,) + x.shape[-3:])
        out = np.empty((imgs.shape[0], h, w, x.shape[-1]), dtype=x.dtype)
        for i, img in enumerate(imgs):
            r = self.cv2.resize(np.ascontiguousarray(img), (w, h), interpolation=self.prop.param.interp)
            out[i] = r.reshape(h, w, x.shape[-1])
        return out.reshape(x.shape[:-3] + out.shape[1:])

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        from plexnet.operator import assign
        assign(out_data[0], req[0], self.resize(ctx.xp, in_data[0]))


def _src_index(xp: Any, n_out: int, n_in: int, nearest: bool) -> tuple[Any, Any, Any]:
    """Source indices (lo, hi) and the weight of hi along one axis, OpenCV's convention."""
    scale = n_in / n_out
    d = xp.arange(n_out, dtype=np.float64)
    if nearest:
        lo = xp.minimum(xp.floor(d * scale).astype(np.int64), n_in - 1)
        return lo, lo, xp.zeros(n_out)
    s = (d + 0.5) * scale - 0.5
    s = xp.maximum(s, 0.0)
    lo = xp.minimum(xp.floor(s).astype(np.int64), n_in - 1)
    hi = xp.minimum(lo + 1, n_in - 1)
    return lo, hi, s - lo


class XpResizeOp(FnOp):
    """Nearest / bilinear resize with array operations (every device)."""

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        from plexnet.operator import assign
        xp, x, p = ctx.xp, in_data[0], self.prop.param
        if p.interp not in (0, 1):
            dev = getattr(getattr(ctx.run_ctx, "ctx", None), "device_type", "this device")
            raise ParamError(f"{self.prop.op_name}: interp={p.interp} needs OpenCV (cv2.resize), which runs on the "
                             f"CPU only; on {dev} use interp=0 (nearest) or 1 (bilinear)")
        h, w = out_size(p, x.shape[-3], x.shape[-2])
        nearest = p.interp == 0
        y0, y1, wy = _src_index(xp, h, x.shape[-3], nearest)
        x0, x1, wx = _src_index(xp, w, x.shape[-2], nearest)
        f = x.astype(np.float64)
        top = f[..., y0, :, :]
        bot = f[..., y1, :, :]
        wy = wy.reshape(-1, 1, 1)
        rows = top * (1 - wy) + bot * wy
        wx = wx.reshape(-1, 1)
        res = rows[..., x0, :] * (1 - wx) + rows[..., x1, :] * wx
        if np.issubdtype(x.dtype, np.integer):
            info = np.iinfo(x.dtype)
            res = xp.clip(xp.rint(res), info.min, info.max)
        assign(out_data[0], req[0], res.astype(x.dtype))


def _cv2_available() -> bool:
    try:
        import cv2  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means "not usable"
        return False
    return True


_cv2_available.reason = ("OpenCV is not importable: pip install opencv-python-headless (plexnet-ops-image's "  # type: ignore[attr-defined]
                         "dependency); until then resize uses the xp implementation (nearest/bilinear only)")


def register(registry: Any) -> None:
    registry.register_property("_image_resize", ResizeProp)
    registry.register_impl("_image_resize", "cpu", lambda prop, ctx: OpenCVResizeOp(prop), impl_name="opencv",
                           priority=10, available=_cv2_available)
    registry.register_impl("_image_resize", "*", lambda prop, ctx: XpResizeOp(prop), impl_name="xp")
