"""``PSROIPooling`` (R-FCN's position-sensitive ROI pooling), MXNet 1.9.1's arithmetic:
roi corners are rounded to whole pixels and scaled (``end + 1``), each of the
``pooled_size`` x ``pooled_size`` bins averages its pixels (empty bins give 0) of the
channel ``(c * group_size + gh) * group_size + gw`` that belongs to output channel ``c``
and the bin's group cell ``(gh, gw)``. The gradient spreads each bin's gradient evenly
over its pixels."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._common import FnProp, each_roi, register as _register

__all__ = ["register"]


def _round(v: float) -> float:
    return math.copysign(math.floor(abs(v) + 0.5), v)  # C's round: half away from zero


class PSROIPoolingParam(Params):
    spatial_scale = Field(float, doc="feature map size / image size")
    output_dim = Field(int, low=1, doc="output channels")
    pooled_size = Field(int, low=1, doc="bins per side")
    group_size = Field(int, default=0, low=0, doc="group cells per side (0: pooled_size)")


class PSROIPoolingProp(FnProp):
    """Position-sensitive ROI pooling of NCHW ``data`` over ``rois`` (R, 5)."""

    param_cls = PSROIPoolingParam
    arguments = ("data", "rois")

    def _group(self) -> int:
        return self.param.group_size or self.param.pooled_size

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d, r = shapes
        p, g = self.param, self._group()
        if len(d) != 4 or len(r) != 2 or r[1] != 5:
            raise self.error("expected data (N, C, H, W) and rois (num_rois, 5)", shapes)
        if d[1] != p.output_dim * g * g:
            raise self.error(f"data must have output_dim * group_size^2 = {p.output_dim * g * g} channels", shapes)
        return [(r[0], p.output_dim, p.pooled_size, p.pooled_size)]

    def _bins(self, roi: np.ndarray, h: int, w: int) -> list[tuple[int, int, slice, slice, np.ndarray]]:
        """(ph, pw, rows, cols, channels) of every non-empty bin of one roi."""
        p, g = self.param, self._group()
        k = p.pooled_size
        x1, y1 = _round(roi[1]) * p.spatial_scale, _round(roi[2]) * p.spatial_scale
        x2, y2 = (_round(roi[3]) + 1.0) * p.spatial_scale, (_round(roi[4]) + 1.0) * p.spatial_scale
        bh, bw = max(y2 - y1, 0.1) / k, max(x2 - x1, 0.1) / k
        out = []
        for i in range(k):
            hs = min(max(int(math.floor(i * bh + y1)), 0), h)
            he = min(max(int(math.ceil((i + 1) * bh + y1)), 0), h)
            gh = min(max(i * g // k, 0), g - 1)
            for j in range(k):
                ws = min(max(int(math.floor(j * bw + x1)), 0), w)
                we = min(max(int(math.ceil((j + 1) * bw + x1)), 0), w)
                if he <= hs or we <= ws:
                    continue
                gw = min(max(j * g // k, 0), g - 1)
                chans = (np.arange(p.output_dim) * g + gh) * g + gw
                out.append((i, j, slice(hs, he), slice(ws, we), chans))
        return out

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        data, rois = ins
        n, _c, h, w = data.shape
        k = self.param.pooled_size
        out = xp.zeros((rois.shape[0], self.param.output_dim, k, k), dtype=data.dtype)
        for r, b, roi in each_roi(rois, 5, n):
            for i, j, rs, cs, chans in self._bins(roi, h, w):
                out[r, :, i, j] = data[b, xp.asarray(chans), rs, cs].mean(axis=(1, 2))
        return [out]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        data, rois = ins
        n, _c, h, w = data.shape
        g = xp.zeros(data.shape, dtype=data.dtype)
        for r, b, roi in each_roi(rois, 5, n):
            for i, j, rs, cs, chans in self._bins(roi, h, w):
                area = (rs.stop - rs.start) * (cs.stop - cs.start)
                g[b, xp.asarray(chans), rs, cs] += (ogs[0][r, :, i, j] / area)[:, None, None]
        return [g, xp.zeros(rois.shape, dtype=rois.dtype)]


def register(registry: Any) -> None:
    _register(registry, {"PSROIPooling": PSROIPoolingProp})
