"""Resampling: ``AdaptiveAvgPooling2D``, ``BilinearResize2D``, ``ROIAlign`` (NCHW), with
backward. Pooling and resizing are separable, so each is two small matrices applied to
the height and width axes (``out = Rh @ x @ Rw^T``; backward with the transposes).

* AdaptiveAvgPooling2D: output cell ``i`` averages input rows ``floor(i*H/oh)`` to
  ``ceil((i+1)*H/oh)``; ``output_size`` one value (square) or ``(oh, ow)``.
* BilinearResize2D: ``align_corners`` maps corner pixels onto corner pixels, otherwise
  pixel centres (``(o + 0.5) * in/out - 0.5``, clamped at 0); size from ``height``/
  ``width``, ``scale_*``, ``like``, or the ``odd_scale``/``to_even_*``/``to_odd_*`` modes.
* ROIAlign: rois ``(R, 5)`` as ``[batch, x1, y1, x2, y2]`` in image coordinates
  (scaled by ``spatial_scale``); each output bin averages ``sample_ratio``^2 bilinear
  samples (adaptive ``ceil(roi/bin)`` when <= 0); ``aligned`` shifts by half a pixel
  (and allows rois under one pixel); ``position_sensitive`` reads channel group
  ``(c * ph + i) * pw + j`` for bin ``(i, j)``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape

from ._common import FnProp, register as _register

__all__ = ["register"]


def _pool_matrix(n_out: int, n_in: int) -> np.ndarray:
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        s, e = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        m[i, s:e] = 1.0 / (e - s)
    return m


def _interp_matrix(n_out: int, n_in: int, align_corners: bool) -> np.ndarray:
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        if align_corners:
            src = o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            src = max((o + 0.5) * n_in / n_out - 0.5, 0.0)
        lo = min(int(math.floor(src)), n_in - 1)
        hi = min(lo + 1, n_in - 1)
        w = src - lo
        m[o, lo] += 1 - w
        m[o, hi] += w
    return m


def _separable(xp: Any, x: Any, mh: np.ndarray, mw: np.ndarray) -> Any:
    rh, rw = xp.asarray(mh.astype(x.dtype)), xp.asarray(mw.astype(x.dtype))
    return xp.matmul(xp.matmul(rh, x), rw.T)


class AdaptivePoolParam(Params):
    output_size = Field(Shape, default=Shape(()), doc="(height, width) or one value; () means 1")


class AdaptiveAvgPooling2DProp(FnProp):
    """Average pooling to a fixed ``output_size`` of NCHW data."""

    param_cls = AdaptivePoolParam

    def _size(self) -> tuple[int, int]:
        s = tuple(self.param.output_size)
        return (1, 1) if not s else (s[0], s[0]) if len(s) == 1 else (s[0], s[1])

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d = shapes[0]
        if len(d) != 4:
            raise self.error("data must be 4-D (N, C, H, W)", shapes)
        return [d[:2] + self._size()]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]

    def _mats(self, h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
        oh, ow = self._size()
        return _pool_matrix(oh, h), _pool_matrix(ow, w)

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        mh, mw = self._mats(*ins[0].shape[2:])
        return [_separable(xp, ins[0], mh, mw)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        mh, mw = self._mats(*ins[0].shape[2:])
        return [_separable(xp, ogs[0], mh.T, mw.T)]


MODES = ("size", "like", "odd_scale", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up")


class BilinearResizeParam(Params):
    height = Field(int, default=1, doc="output height (mode 'size')")
    width = Field(int, default=1, doc="output width (mode 'size')")
    scale_height = Field(float, default=None, optional=True, doc="height factor instead of height")
    scale_width = Field(float, default=None, optional=True, doc="width factor instead of width")
    mode = Field(str, default="size", choices=MODES, doc="how the output size is found")
    align_corners = Field(bool, default=True, doc="map corner pixels onto corner pixels")


class BilinearResize2DProp(FnProp):
    """Bilinear resize of NCHW data (``like``: to the size of a second input)."""

    param_cls = BilinearResizeParam

    def list_arguments(self):  # type: ignore[no-untyped-def]
        return ["data", "like"] if self.param.mode == "like" else ["data"]

    def _out_hw(self, d: tuple, like: tuple | None) -> tuple[int, int]:
        p = self.param
        h, w = d[2], d[3]
        if p.mode == "like":
            return like[2], like[3]
        if p.mode == "size":
            oh = int(h * p.scale_height) if p.scale_height is not None else p.height
            ow = int(w * p.scale_width) if p.scale_width is not None else p.width
            return oh, ow
        if p.mode == "odd_scale":
            sh = p.scale_height if p.scale_height is not None else 1.0
            sw = p.scale_width if p.scale_width is not None else 1.0
            return (int((h - 1) * sh + 1) if h % 2 else int(h * sh)), (int((w - 1) * sw + 1) if w % 2 else int(w * sw))
        even = p.mode.startswith("to_even")
        step = -1 if p.mode.endswith("down") else 1
        return tuple(v if (v % 2 == 0) == even else v + step for v in (h, w))  # type: ignore[return-value]

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d = shapes[0]
        if len(d) != 4:
            raise self.error("data must be 4-D (N, C, H, W)", shapes)
        oh, ow = self._out_hw(d, shapes[1] if len(shapes) > 1 else None)
        if oh < 1 or ow < 1:
            raise self.error(f"the output size ({oh}, {ow}) must be positive", shapes)
        return [d[:2] + (oh, ow)]

    def _mats(self, d: tuple, like: tuple | None) -> tuple[np.ndarray, np.ndarray]:
        oh, ow = self._out_hw(d, like)
        ac = self.param.align_corners
        return _interp_matrix(oh, d[2], ac), _interp_matrix(ow, d[3], ac)

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        mh, mw = self._mats(ins[0].shape, ins[1].shape if len(ins) > 1 else None)
        return [_separable(xp, ins[0], mh, mw)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        mh, mw = self._mats(ins[0].shape, ins[1].shape if len(ins) > 1 else None)
        g = [_separable(xp, ogs[0], mh.T, mw.T)]
        return g + ([xp.zeros(ins[1].shape, dtype=ins[1].dtype)] if len(ins) > 1 else [])


class ROIAlignParam(Params):
    pooled_size = Field(Shape, doc="(height, width) of the output")
    spatial_scale = Field(float, doc="scale from roi coordinates to the feature map")
    sample_ratio = Field(int, default=-1, doc="samples per bin side (<= 0: adaptive)")
    position_sensitive = Field(bool, default=False, doc="position-sensitive channel groups")
    aligned = Field(bool, default=False, doc="half-pixel offset (Detectron2's aligned ROIAlign)")


class ROIAlignProp(FnProp):
    """Region-of-interest align (Mask R-CNN) of NCHW ``data`` over ``rois`` (R, 5)."""

    param_cls = ROIAlignParam
    arguments = ("data", "rois")

    def _pooled(self) -> tuple[int, int]:
        s = tuple(self.param.pooled_size)
        return (s[0], s[0]) if len(s) == 1 else (s[0], s[1])

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d, r = shapes
        if len(d) != 4:
            raise self.error("data must be 4-D (N, C, H, W)", shapes)
        if len(r) != 2 or r[1] != 5:
            raise self.error("rois must have shape (num_rois, 5)", shapes)
        ph, pw = self._pooled()
        c = d[1]
        if self.param.position_sensitive:
            if c % (ph * pw):
                raise self.error(f"position_sensitive needs channels divisible by {ph * pw}", shapes)
            c //= ph * pw
        return [(r[0], c, ph, pw)]

    def _samples(self, xp: Any, roi: np.ndarray, h: int, w: int) -> tuple:
        """Per-axis sample positions of one roi: (y lo, y hi, y weight, valid) likewise x, and counts."""
        p = self.param
        ph, pw = self._pooled()
        off = 0.5 if p.aligned else 0.0
        x1, y1, x2, y2 = (float(v) * p.spatial_scale - off for v in roi[1:5])
        rw, rh = x2 - x1, y2 - y1
        if not p.aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = p.sample_ratio if p.sample_ratio > 0 else int(math.ceil(rh / ph))
        gw = p.sample_ratio if p.sample_ratio > 0 else int(math.ceil(rw / pw))
        gh, gw = max(gh, 1), max(gw, 1)

        def axis(start: float, b: float, g: int, n_bins: int, size: int) -> tuple:
            pos = start + np.arange(n_bins)[:, None] * b + (np.arange(g)[None, :] + 0.5) * b / g
            pos = pos.ravel()
            valid = (pos >= -1.0) & (pos <= size)
            pos = np.maximum(pos, 0.0)
            lo = np.floor(pos).astype(np.int64)
            top = lo >= size - 1
            lo = np.where(top, size - 1, lo)
            hi = np.where(top, size - 1, lo + 1)
            pos = np.where(top, lo, pos)
            frac = pos - lo
            return lo, hi, frac, valid
        return axis(y1, bh, gh, ph, h), axis(x1, bw, gw, pw, w), gh, gw

    def _weights(self, xp: Any, roi: np.ndarray, h: int, w: int, dtype: Any) -> tuple:
        (ylo, yhi, fy, vy), (xlo, xhi, fx, vx), gh, gw = self._samples(xp, roi, h, w)
        v = (vy[:, None] & vx[None, :]).astype(np.float64)
        terms = [(ylo, xlo, (1 - fy)[:, None] * (1 - fx)[None, :]), (ylo, xhi, (1 - fy)[:, None] * fx[None, :]),
                 (yhi, xlo, fy[:, None] * (1 - fx)[None, :]), (yhi, xhi, fy[:, None] * fx[None, :])]
        return [(xp.asarray(yy), xp.asarray(xx), xp.asarray((ww * v / (gh * gw)).astype(dtype)))
                for yy, xx, ww in terms], gh, gw

    def _channels(self, c_out: int) -> np.ndarray:
        """Input channel of output channel c for bin (i, j): (C, ph, pw) index array."""
        ph, pw = self._pooled()
        c = np.arange(c_out)[:, None, None]
        return (c * ph + np.arange(ph)[None, :, None]) * pw + np.arange(pw)[None, None, :]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        data, rois = ins
        n, c, h, w = data.shape
        ph, pw = self._pooled()
        r_host = np.asarray(rois.get() if hasattr(rois, "get") else rois, dtype=np.float64)
        c_out = c // (ph * pw) if self.param.position_sensitive else c
        out = xp.zeros((len(r_host), c_out, ph, pw), dtype=data.dtype)
        for k, roi in enumerate(r_host):
            b = int(roi[0])
            if not 0 <= b < n:
                continue
            terms, gh, gw = self._weights(xp, roi, h, w, data.dtype)
            fm = data[b]
            acc = 0
            for yy, xx, ww in terms:
                acc = acc + fm[:, yy[:, None], xx[None, :]] * ww  # (C, ph*gh, pw*gw)
            pooled = acc.reshape(c, ph, gh, pw, gw).sum(axis=(2, 4))
            if self.param.position_sensitive:
                ch = xp.asarray(self._channels(c_out))
                pooled = pooled[ch, xp.arange(ph)[None, :, None], xp.arange(pw)[None, None, :]]
            out[k] = pooled
        return [out]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        data, rois = ins
        n, c, h, w = data.shape
        ph, pw = self._pooled()
        g = xp.zeros(data.shape, dtype=data.dtype)
        r_host = np.asarray(rois.get() if hasattr(rois, "get") else rois, dtype=np.float64)
        for k, roi in enumerate(r_host):
            b = int(roi[0])
            if not 0 <= b < n:
                continue
            terms, gh, gw = self._weights(xp, roi, h, w, data.dtype)
            og = ogs[0][k]
            if self.param.position_sensitive:
                full = xp.zeros((c, ph, pw), dtype=og.dtype)
                full[xp.asarray(self._channels(og.shape[0])), xp.arange(ph)[None, :, None],
                     xp.arange(pw)[None, None, :]] = og
                og = full
            spread = xp.broadcast_to(og[:, :, None, :, None], (c, ph, gh, pw, gw)).reshape(c, ph * gh, pw * gw)
            for yy, xx, ww in terms:
                yi = xp.broadcast_to(yy[:, None], ww.shape)
                xi = xp.broadcast_to(xx[None, :], ww.shape)
                xp.add.at(g[b], (slice(None), yi, xi), spread * ww)
        return [g, xp.zeros(rois.shape, dtype=rois.dtype)]


def register(registry: Any) -> None:
    _register(registry, {"AdaptiveAvgPooling2D": AdaptiveAvgPooling2DProp, "BilinearResize2D": BilinearResize2DProp,
                         "ROIAlign": ROIAlignProp})
