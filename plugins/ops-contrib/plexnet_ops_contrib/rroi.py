"""``RROIAlign``: ROI align over rotated boxes ``[batch, x_ctr, y_ctr, width, height,
angle_degrees]`` (text detection), MXNet 1.9.1's sampling: a ``pooled_size`` grid in the
roi's own frame, ``sampling_ratio``^2 (adaptive: ``ceil(side / bins)``) samples per bin,
each rotated into the image (``x = u cos + v sin + cx``, ``y = v cos - u sin + cy``) and
read bilinearly (Detectron's border rule); a bin is the mean of its samples. MXNet has no
backward for it; plexnet gives the exact one (the bilinear weights scattered back)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape

from ._common import each_roi, register as _register
from .resample import RoiProp

__all__ = ["register"]


class RROIAlignParam(Params):
    pooled_size = Field(Shape, doc="(height, width) of the output")
    spatial_scale = Field(float, doc="feature map size / image size")
    sampling_ratio = Field(int, default=-1, doc="samples per bin side (<= 0: adaptive)")


def _bilinear_terms(x: np.ndarray, y: np.ndarray, h: int, w: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(row, col, weight) of the four neighbours of every sample; zero weight outside."""
    valid = (y >= -1.0) & (y <= h) & (x >= -1.0) & (x <= w)
    y, x = np.maximum(y, 0.0), np.maximum(x, 0.0)
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    ty, tx = y0 >= h - 1, x0 >= w - 1
    y0, x0 = np.where(ty, h - 1, y0), np.where(tx, w - 1, x0)
    y1, x1 = np.where(ty, h - 1, y0 + 1), np.where(tx, w - 1, x0 + 1)
    ly, lx = np.where(ty, 0.0, y - y0), np.where(tx, 0.0, x - x0)
    hy, hx = 1 - ly, 1 - lx
    return [(y0, x0, hy * hx * valid), (y0, x1, hy * lx * valid), (y1, x0, ly * hx * valid), (y1, x1, ly * lx * valid)]


class RROIAlignProp(RoiProp):
    """Rotated ROI align of NCHW ``data`` over ``rois`` (R, 6)."""

    param_cls = RROIAlignParam
    roi_width = 6

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.check_inputs(shapes)
        return [(shapes[1][0], shapes[0][1]) + self._pooled()]

    def _plan(self, roi: np.ndarray, h: int, w: int) -> tuple[list, int, int]:
        p = self.param
        ph, pw = self._pooled()
        cx, cy = roi[1] * p.spatial_scale, roi[2] * p.spatial_scale
        rw, rh = max(roi[3] * p.spatial_scale, 1.0), max(roi[4] * p.spatial_scale, 1.0)
        theta = roi[5] * math.pi / 180.0
        gh = p.sampling_ratio if p.sampling_ratio > 0 else int(math.ceil(rh / ph))
        gw = p.sampling_ratio if p.sampling_ratio > 0 else int(math.ceil(rw / pw))
        bh, bw = rh / ph, rw / pw
        v = -rh / 2 + (np.arange(ph)[:, None] * bh + (np.arange(gh)[None, :] + 0.5) * bh / gh).ravel()
        u = -rw / 2 + (np.arange(pw)[:, None] * bw + (np.arange(gw)[None, :] + 0.5) * bw / gw).ravel()
        vv, uu = np.meshgrid(v, u, indexing="ij")  # (ph*gh, pw*gw)
        c, s = math.cos(theta), math.sin(theta)
        x = uu * c + vv * s + cx
        y = vv * c - uu * s + cy
        return _bilinear_terms(x, y, h, w), gh, gw

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        data, rois = ins
        n, c, h, w = data.shape
        ph, pw = self._pooled()
        out = xp.zeros((rois.shape[0], c, ph, pw), dtype=data.dtype)
        for k, b, roi in each_roi(rois, 6, n):
            terms, gh, gw = self._plan(roi, h, w)
            acc = 0
            for yy, xx, ww in terms:
                acc = acc + data[b][:, xp.asarray(yy), xp.asarray(xx)] * xp.asarray(ww.astype(data.dtype))
            out[k] = acc.reshape(c, ph, gh, pw, gw).mean(axis=(2, 4))
        return [out]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        data, rois = ins
        n, c, h, w = data.shape
        ph, pw = self._pooled()
        g = xp.zeros(data.shape, dtype=data.dtype)
        for k, b, roi in each_roi(rois, 6, n):
            terms, gh, gw = self._plan(roi, h, w)
            spread = xp.broadcast_to(ogs[0][k][:, :, None, :, None] / (gh * gw), (c, ph, gh, pw, gw))
            spread = spread.reshape(c, ph * gh, pw * gw)
            for yy, xx, ww in terms:
                xp.add.at(g[b], (slice(None), xp.asarray(yy), xp.asarray(xx)), spread * xp.asarray(ww.astype(g.dtype)))
        return [g, xp.zeros(rois.shape, dtype=rois.dtype)]


def register(registry: Any) -> None:
    _register(registry, {"RROIAlign": RROIAlignProp})
