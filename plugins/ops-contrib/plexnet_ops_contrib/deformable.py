"""``DeformablePSROIPooling`` (Deformable ConvNets' position-sensitive ROI pooling), MXNet
1.9.1's arithmetic: roi corners rounded, scaled and shifted by half a pixel; every output
bin ``(c, i, j)`` is offset by ``trans * trans_std * roi size`` (the offsets of part cell
``(floor(i/P*part), floor(j/P*part))`` and the class of ``c``; none with ``no_trans``)
and averages ``sample_per_part``^2 bilinear samples (those inside the map) of channel
``(c * group_size + gh) * group_size + gw``. The hidden second output counts the
samples. Gradients flow to ``data`` and ``trans`` (MXNet's formulas)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params

from ._common import FnProp, each_roi, register as _register
from .psroi import _round

__all__ = ["register"]


class DeformablePSROIPoolingParam(Params):
    spatial_scale = Field(float, doc="feature map size / image size")
    output_dim = Field(int, low=1, doc="output channels")
    group_size = Field(int, low=1, doc="group cells per side")
    pooled_size = Field(int, low=1, doc="bins per side")
    part_size = Field(int, default=0, low=0, doc="offset cells per side (0: pooled_size)")
    sample_per_part = Field(int, default=1, low=1, doc="samples per bin side")
    trans_std = Field(float, default=0.0, doc="scale of the offsets")
    no_trans = Field(bool, default=False, doc="ignore trans")


class DeformablePSROIPoolingProp(FnProp):
    """Deformable position-sensitive ROI pooling of ``data`` over ``rois`` (R, 5) with
    offsets ``trans`` (R, 2 * classes, part, part)."""

    param_cls = DeformablePSROIPoolingParam
    arguments = ("data", "rois", "trans")
    outputs = ("output", "top_count")
    visible = 1

    def list_arguments(self):  # type: ignore[no-untyped-def]
        return ["data", "rois"] if self.param.no_trans else ["data", "rois", "trans"]

    def _part(self) -> int:
        return self.param.part_size or self.param.pooled_size

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d, r = shapes[:2]
        t = shapes[2] if len(shapes) > 2 else None
        p = self.param
        if len(d) != 4 or len(r) != 2 or r[1] != 5:
            raise self.error("expected data (N, C, H, W) and rois (num_rois, 5)", shapes)
        if d[1] != p.output_dim * p.group_size ** 2:
            raise self.error(f"data must have output_dim * group_size^2 = {p.output_dim * p.group_size ** 2} "
                             f"channels", shapes)
        if not p.no_trans and (len(t) != 4 or t[0] != r[0] or t[1] % 2 or t[2:] != (self._part(),) * 2
                               or p.output_dim % (t[1] // 2)):
            raise self.error(f"trans must have shape (num_rois, 2 * classes, {self._part()}, {self._part()}) with "
                             f"classes dividing output_dim", shapes)
        k = p.pooled_size
        return [(r[0], p.output_dim, k, k)] * 2

    def _samples(self, roi: np.ndarray, trans: np.ndarray | None, h: int, w: int) -> dict[str, Any]:
        """Sample positions, validity and the channel / offset cell of every (c, i, j, a, b)."""
        p = self.param
        k, s, part, g = p.pooled_size, p.sample_per_part, self._part(), p.group_size
        x1 = _round(roi[1]) * p.spatial_scale - 0.5
        y1 = _round(roi[2]) * p.spatial_scale - 0.5
        rw = max((_round(roi[3]) + 1.0) * p.spatial_scale - 0.5 - x1, 0.1)
        rh = max((_round(roi[4]) + 1.0) * p.spatial_scale - 0.5 - y1, 0.1)
        bw, bh = rw / k, rh / k
        c = np.arange(p.output_dim)[:, None, None]
        i, j = np.arange(k)[None, :, None], np.arange(k)[None, None, :]
        pi, pj = np.floor(i / k * part).astype(np.int64), np.floor(j / k * part).astype(np.int64)
        classes = 1 if trans is None else trans.shape[0] // 2
        cls = c // (p.output_dim // classes)
        if trans is None:
            tx = ty = np.zeros((p.output_dim, k, k))
        else:
            tx = trans[2 * cls, pi, pj] * p.trans_std
            ty = trans[2 * cls + 1, pi, pj] * p.trans_std
        ws = j * bw + x1 + tx * rw
        hs = i * bh + y1 + ty * rh
        a = np.arange(s)
        xs = ws[..., None, None] + a[None, None, None, None, :] * (bw / s)
        ys = hs[..., None, None] + a[None, None, None, :, None] * (bh / s)
        xs, ys = np.broadcast_arrays(xs, ys)
        valid = ~((xs < -0.5) | (xs > w - 0.5) | (ys < -0.5) | (ys > h - 0.5))
        xs, ys = np.clip(xs, 0, w - 1), np.clip(ys, 0, h - 1)
        gh = np.clip(np.floor(i * g / k).astype(np.int64), 0, g - 1)
        gw = np.clip(np.floor(j * g / k).astype(np.int64), 0, g - 1)
        chan = np.broadcast_to(((c * g + gh) * g + gw)[..., None, None], xs.shape)
        return {"x": xs, "y": ys, "valid": valid, "chan": chan, "cls": np.broadcast_to(cls, tx.shape),
                "pi": np.broadcast_to(pi, tx.shape), "pj": np.broadcast_to(pj, tx.shape), "rw": rw, "rh": rh}

    @staticmethod
    def _corners(sm: dict[str, Any]) -> tuple:
        x, y = sm["x"], sm["y"]
        x0, y0 = np.floor(x).astype(np.int64), np.floor(y).astype(np.int64)
        x1, y1 = np.ceil(x).astype(np.int64), np.ceil(y).astype(np.int64)
        return x0, x1, y0, y1, x - x0, y - y0

    def _trans(self, ins: Any, k: int) -> np.ndarray | None:
        if self.param.no_trans:
            return None
        t = ins[2]
        return np.asarray(t.get() if hasattr(t, "get") else t, dtype=np.float64)[k]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        data, rois = ins[0], ins[1]
        n, _c, h, w = data.shape
        k = self.param.pooled_size
        out = xp.zeros((rois.shape[0], self.param.output_dim, k, k), dtype=data.dtype)
        cnt = xp.zeros(out.shape, dtype=data.dtype)
        for r, b, roi in each_roi(rois, 5, n):
            sm = self._samples(roi, self._trans(ins, r), h, w)
            x0, x1, y0, y1, dx, dy = self._corners(sm)
            ch = sm["chan"]
            fm = data[b]
            terms = ((y0, x0, (1 - dx) * (1 - dy)), (y1, x0, (1 - dx) * dy), (y0, x1, dx * (1 - dy)), (y1, x1, dx * dy))
            val = 0
            for yy, xx, ww in terms:
                val = val + fm[xp.asarray(ch), xp.asarray(yy), xp.asarray(xx)] * xp.asarray(
                    (ww * sm["valid"]).astype(data.dtype))
            count = sm["valid"].sum(axis=(3, 4))
            out[r] = val.sum(axis=(3, 4)) / xp.asarray(np.maximum(count, 1).astype(data.dtype))
            cnt[r] = xp.asarray(count.astype(data.dtype))
        return [out, cnt]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0]] + list(in_data) + [out_data[1]]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        data, rois = ins[0], ins[1]
        n, _c, h, w = data.shape
        g = xp.zeros(data.shape, dtype=data.dtype)
        gt = None if self.param.no_trans else xp.zeros(ins[2].shape, dtype=ins[2].dtype)
        ts = self.param.trans_std
        for r, b, roi in each_roi(rois, 5, n):
            sm = self._samples(roi, self._trans(ins, r), h, w)
            x0, x1, y0, y1, dx, dy = self._corners(sm)
            ch = xp.asarray(sm["chan"])
            count = outs[1][r]
            diff = xp.where(count > 0, ogs[0][r] / xp.maximum(count, 1), 0)[..., None, None]
            v = xp.asarray(sm["valid"].astype(data.dtype))
            corners = ((y0, x0, (1 - dx) * (1 - dy)), (y1, x0, (1 - dx) * dy), (y0, x1, dx * (1 - dy)),
                       (y1, x1, dx * dy))
            for yy, xx, ww in corners:
                xp.add.at(g[b], (ch, xp.asarray(yy), xp.asarray(xx)), diff * v * xp.asarray(ww.astype(data.dtype)))
            if gt is None:
                continue
            fm = data[b]
            u00, u01 = fm[ch, xp.asarray(y0), xp.asarray(x0)], fm[ch, xp.asarray(y1), xp.asarray(x0)]
            u10, u11 = fm[ch, xp.asarray(y0), xp.asarray(x1)], fm[ch, xp.asarray(y1), xp.asarray(x1)]
            ddx, ddy = xp.asarray(dx.astype(data.dtype)), xp.asarray(dy.astype(data.dtype))
            gx = (u11 * ddy + u10 * (1 - ddy) - u01 * ddy - u00 * (1 - ddy)) * ts * diff * v * sm["rw"]
            gy = (u11 * ddx + u01 * (1 - ddx) - u10 * ddx - u00 * (1 - ddx)) * ts * diff * v * sm["rh"]
            cls, pi, pj = (xp.asarray(sm[key]) for key in ("cls", "pi", "pj"))
            xp.add.at(gt[r], (2 * cls, pi, pj), gx.sum(axis=(3, 4)))
            xp.add.at(gt[r], (2 * cls + 1, pi, pj), gy.sum(axis=(3, 4)))
        grads = [g, xp.zeros(rois.shape, dtype=rois.dtype)]
        return grads if gt is None else grads + [gt]


def register(registry: Any) -> None:
    _register(registry, {"DeformablePSROIPooling": DeformablePSROIPoolingProp})
