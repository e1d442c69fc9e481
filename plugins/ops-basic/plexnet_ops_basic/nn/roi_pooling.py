"""``ROIPooling``, MXNet 1.x semantics (Fast R-CNN max pooling over regions of interest).

``rois`` is ``(R, 5)``: ``[batch_index, x1, y1, x2, y2]`` in input-image coordinates, scaled
by ``spatial_scale`` and rounded; each region (at least 1x1) is split into
``pooled_size`` bins ``[floor(i*bin), ceil((i+1)*bin))``, clipped to the feature map; an
empty bin gives 0. The argmax of each bin is the hidden output ``maxidx`` (flat index
into the sample's H*W, -1 for empty bins); backward routes the gradient there.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np  # host-side bin bookkeeping (R x ph x pw, small)

from plexnet.operator import Field, Params, Shape
from plexnet.operator.params import ParamError

from plexnet_ops_basic.tensor._fn import FnProp, register_fn
from plexnet_ops_basic.tensor.indexing import scatter_add

__all__ = ["register"]

#: regions gathered at once (bounds the padded window tensor's memory)
_CHUNK = 64


class ROIPoolingParam(Params):
    pooled_size = Field(Shape, doc="(height, width) of the pooled output")
    spatial_scale = Field(float, doc="ratio of the feature map to the input image size")

    def __post_init__(self, op: str) -> None:
        if len(self.pooled_size) != 2 or min(self.pooled_size) <= 0:
            raise ParamError(f"{op}: argument 'pooled_size'={tuple(self.pooled_size)} must be a positive (h, w)")


def _host(a: Any) -> np.ndarray:
    get = getattr(a, "get", None)
    return np.asarray(get() if callable(get) and not isinstance(a, np.ndarray) else a)


class ROIPoolingProp(FnProp):
    """Max pooling of each region of interest to ``pooled_size``."""
    param_cls = ROIPoolingParam
    arguments = ("data", "rois")
    outputs = ("output", "maxidx")
    deps = ("out_grad", "in_data", "out_data")

    def num_visible_outputs(self) -> int:
        return 1

    def shapes(self, ins: list) -> tuple[list, list]:
        d, r = ins
        if len(d) != 4 or len(r) != 2 or r[1] != 5:
            raise self.error(f"data must be (N, C, H, W) and rois (R, 5), got {d} and {r}")
        out = (r[0], d[1]) + tuple(self.param.pooled_size)
        return ins, [out, out]

    def _bins(self, rois: np.ndarray, h: int, w: int) -> list:
        """Per roi: batch index, row bins ``[(hs, he)] * ph`` and column bins ``[(ws, we)] * pw``."""
        ph, pw = tuple(self.param.pooled_size)
        s = self.param.spatial_scale
        res = []
        for roi in rois:
            b = int(roi[0])
            x1, y1, x2, y2 = (int(math.floor(v * s + 0.5)) for v in roi[1:])  # C round()
            rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
            bh, bw = rh / ph, rw / pw
            rows = [(min(max(int(math.floor(i * bh)) + y1, 0), h), min(max(int(math.ceil((i + 1) * bh)) + y1, 0), h))
                    for i in range(ph)]
            cols = [(min(max(int(math.floor(j * bw)) + x1, 0), w), min(max(int(math.ceil((j + 1) * bw)) + x1, 0), w))
                    for j in range(pw)]
            res.append((b, rows, cols))
        return res

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        data, rois = ins
        n, c, h, w = data.shape
        ph, pw = tuple(self.param.pooled_size)
        bins = self._bins(_host(rois), h, w)
        r_n = len(bins)
        out = xp.zeros((r_n, c, ph, pw), dtype=data.dtype)
        idx = xp.full((r_n, c, ph, pw), -1, dtype=np.int64)
        nhwc = xp.ascontiguousarray(data.transpose(0, 2, 3, 1))  # the gathers then copy whole channel rows
        for r0 in range(0, r_n, _CHUNK):
            chunk = bins[r0:r0 + _CHUNK]
            b = np.array([x[0] for x in chunk], dtype=np.int64)
            hs, he = (np.array([[rb[k] for rb in x[1]] for x in chunk], dtype=np.int64).reshape(-1, ph) for k in (0, 1))
            ws, we = (np.array([[cb[k] for cb in x[2]] for x in chunk], dtype=np.int64).reshape(-1, pw) for k in (0, 1))
            bh, bw = max(int((he - hs).max()), 1), max(int((we - ws).max()), 1)
            # every bin padded to bh x bw window positions that repeat its last row/column (so they
            # change neither the max nor where it first occurs); window axes before the channels
            ri = np.minimum(hs[:, :, None] + np.arange(bh), np.maximum(he - 1, hs)[:, :, None]).clip(0, h - 1)
            ci = np.minimum(ws[:, :, None] + np.arange(bw), np.maximum(we - 1, ws)[:, :, None]).clip(0, w - 1)
            g = nhwc[xp.asarray(b)[:, None, None, None, None], xp.asarray(ri)[:, :, None, :, None],
                     xp.asarray(ci)[:, None, :, None, :]]  # (R, ph, pw, bh, bw, C)
            k = bh * bw
            g = g.reshape(len(chunk), ph, pw, k, c)
            vals = g.max(axis=3)
            # the first maximum in row-major window order, as MXNet's loops (a min: argmax over a
            # middle axis is several times slower)
            pt = np.int8 if k < 127 else np.int32  # small positions: a narrow pass
            pos = xp.where(g == vals[:, :, :, None, :], xp.arange(k, dtype=pt).reshape(k, 1), pt(k)).min(axis=3)
            pos = pos.astype(np.int64)
            flat = (xp.asarray(hs)[:, :, None, None] + pos // bw) * w + xp.asarray(ws)[:, None, :, None] + pos % bw
            empty = xp.asarray((he <= hs)[:, :, None] | (we <= ws)[:, None, :])[..., None]  # (R, ph, pw, 1)
            out[r0:r0 + len(chunk)] = xp.where(empty, 0, vals).transpose(0, 3, 1, 2)
            idx[r0:r0 + len(chunk)] = xp.where(empty, -1, flat).transpose(0, 3, 1, 2)
        return [out, idx.astype(data.dtype)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        data, rois = ins
        n, c, h, w = data.shape
        g = xp.zeros((n, c, h * w), dtype=ogs[0].dtype)
        idx = outs[1].astype(np.int64).reshape(rois.shape[0], c, -1)
        og = ogs[0].reshape(rois.shape[0], c, -1)
        b = xp.asarray(_host(rois)[:, 0].astype(np.int64)).reshape(-1, 1, 1)
        ch = xp.arange(c).reshape(1, c, 1)
        ok = idx >= 0
        scatter_add(xp, g, (xp.broadcast_to(b, idx.shape)[ok], xp.broadcast_to(ch, idx.shape)[ok], idx[ok]), og[ok])
        return [g.reshape(data.shape), None]


def register(registry: Any) -> None:
    register_fn(registry, "ROIPooling", ROIPoolingProp)
