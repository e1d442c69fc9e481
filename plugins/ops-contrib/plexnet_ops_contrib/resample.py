"""Resampling: ``AdaptiveAvgPooling2D``, ``BilinearResize2D``, ``ROIAlign`` (NCHW), with
backward. Pooling and resizing are separable: pooling is two small averaging matrices
applied to the height and width axes (``out = Ph @ x @ Pw^T``; backward with the
transposes), resizing two gathers with weights (backward: the matching scatter-adds).

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


def _interp_index(n_out: int, n_in: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each output position: the two source indices and the weight of the second."""
    o = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = o * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
    else:
        src = np.maximum((o + 0.5) * (n_in / n_out) - 0.5, 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, src - lo


def _lerp(xp: Any, x: Any, axis: int, idx: tuple[np.ndarray, np.ndarray, np.ndarray]) -> Any:
    """Linear interpolation of ``x`` along ``axis`` (gathers: two reads per output)."""
    lo, hi, w = idx
    shape = [1] * x.ndim
    shape[axis] = len(w)
    wt = xp.asarray(w.reshape(shape).astype(x.dtype))
    return xp.take(x, xp.asarray(lo), axis=axis) * (1 - wt) + xp.take(x, xp.asarray(hi), axis=axis) * wt


def _lerp_grad(xp: Any, g: Any, axis: int, idx: tuple[np.ndarray, np.ndarray, np.ndarray], n_in: int) -> Any:
    """Adjoint of ``_lerp``: scatter-add the weighted gradient back to the source positions."""
    lo, hi, w = idx
    shape = [1] * g.ndim
    shape[axis] = len(w)
    wt = xp.asarray(w.reshape(shape).astype(g.dtype))
    moved = xp.moveaxis(g, axis, 0)
    out = xp.zeros((n_in,) + moved.shape[1:], dtype=g.dtype)
    xp.add.at(out, xp.asarray(lo), xp.moveaxis(g * (1 - wt), axis, 0))
    xp.add.at(out, xp.asarray(hi), xp.moveaxis(g * wt, axis, 0))
    return xp.moveaxis(out, 0, axis)


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

    def _idx(self, d: tuple, like: tuple | None) -> tuple:
        oh, ow = self._out_hw(d, like)
        ac = self.param.align_corners
        return _interp_index(oh, d[2], ac), _interp_index(ow, d[3], ac)

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        ih, iw = self._idx(ins[0].shape, ins[1].shape if len(ins) > 1 else None)
        return [_lerp(xp, _lerp(xp, ins[0], 2, ih), 3, iw)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        d = ins[0].shape
        ih, iw = self._idx(d, ins[1].shape if len(ins) > 1 else None)
        g = [_lerp_grad(xp, _lerp_grad(xp, ogs[0], 3, iw, d[3]), 2, ih, d[2])]
        return g + ([xp.zeros(ins[1].shape, dtype=ins[1].dtype)] if len(ins) > 1 else [])


class ROIAlignParam(Params):
    pooled_size = Field(Shape, doc="(height, width) of the output")
    spatial_scale = Field(float, doc="scale from roi coordinates to the feature map")
    sample_ratio = Field(int, default=-1, doc="samples per bin side (<= 0: adaptive)")
    position_sensitive = Field(bool, default=False, doc="position-sensitive channel groups")
    aligned = Field(bool, default=False, doc="half-pixel offset (Detectron2's aligned ROIAlign)")


class RoiProp(FnProp):
    """Pooling over regions of interest: NCHW ``data`` and ``rois`` of ``roi_width`` values."""

    arguments = ("data", "rois")
    roi_width = 5

    def _pooled(self) -> tuple[int, int]:
        s = tuple(self.param.pooled_size)
        return (s[0], s[0]) if len(s) == 1 else (s[0], s[1])

    def check_inputs(self, shapes: Any) -> None:
        d, r = shapes
        if len(d) != 4:
            raise self.error("data must be 4-D (N, C, H, W)", shapes)
        if len(r) != 2 or r[1] != self.roi_width:
            raise self.error(f"rois must have shape (num_rois, {self.roi_width})", shapes)


class ROIAlignProp(RoiProp):
    """Region-of-interest align (Mask R-CNN) of NCHW ``data`` over ``rois`` (R, 5)."""

    param_cls = ROIAlignParam

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.check_inputs(shapes)
        d, r = shapes
        ph, pw = self._pooled()
        c = d[1]
        if self.param.position_sensitive:
            if c % (ph * pw):
                raise self.error(f"position_sensitive needs channels divisible by {ph * pw}", shapes)
            c //= ph * pw
        return [(r[0], c, ph, pw)]

    def _axis(self, start: np.ndarray, size: np.ndarray, grid: np.ndarray, n_bins: int, limit: int) -> tuple:
        """Sample positions of every roi along one axis, padded to the largest grid:
        (lo, hi, frac, valid), each (R, n_bins * max_grid)."""
        g_max = int(grid.max()) if grid.size else 1
        b = size / n_bins
        a = np.arange(g_max)
        pos = (start[:, None, None] + np.arange(n_bins)[None, :, None] * b[:, None, None]
               + (a[None, None, :] + 0.5) * (b / grid)[:, None, None])
        valid = (a[None, None, :] < grid[:, None, None]) & (pos >= -1.0) & (pos <= limit)
        pos = np.maximum(pos, 0.0)
        lo = np.floor(pos).astype(np.int64)
        top = lo >= limit - 1
        lo = np.where(top, limit - 1, lo)
        hi = np.where(top, limit - 1, lo + 1)
        frac = np.where(top, 0.0, pos - lo)
        r = len(start)
        return lo.reshape(r, -1), hi.reshape(r, -1), frac.reshape(r, -1), valid.reshape(r, -1), g_max

    def _plan(self, rois: np.ndarray, h: int, w: int) -> tuple:
        """Batch index, the four bilinear (y, x, weight) terms for every roi and sample, and the grids."""
        p = self.param
        ph, pw = self._pooled()
        off = 0.5 if p.aligned else 0.0
        b = rois[:, 0].astype(np.int64)
        x1, y1, x2, y2 = (rois[:, k] * p.spatial_scale - off for k in range(1, 5))
        rw, rh = x2 - x1, y2 - y1
        if not p.aligned:
            rw, rh = np.maximum(rw, 1.0), np.maximum(rh, 1.0)
        if p.sample_ratio > 0:
            gh = gw = np.full(len(rois), p.sample_ratio)
        else:
            gh, gw = np.ceil(rh / ph).astype(np.int64), np.ceil(rw / pw).astype(np.int64)
        gh, gw = np.maximum(gh, 1), np.maximum(gw, 1)
        ylo, yhi, fy, vy, g_h = self._axis(y1, rh, gh, ph, h)
        xlo, xhi, fx, vx, g_w = self._axis(x1, rw, gw, pw, w)
        norm = (vy[:, :, None] & vx[:, None, :]) / (gh * gw).astype(np.float64)[:, None, None]
        terms = [(ylo, xlo, (1 - fy)[:, :, None] * (1 - fx)[:, None, :]),
                 (ylo, xhi, (1 - fy)[:, :, None] * fx[:, None, :]),
                 (yhi, xlo, fy[:, :, None] * (1 - fx)[:, None, :]),
                 (yhi, xhi, fy[:, :, None] * fx[:, None, :])]
        return b, [(yy, xx, ww * norm) for yy, xx, ww in terms], g_h, g_w

    def _channels(self, c_out: int) -> tuple:
        """Index arrays (bin row, bin col, input channel) of shape (c_out, ph, pw) for position sensitivity."""
        ph, pw = self._pooled()
        c = np.arange(c_out)[:, None, None]
        i, j = np.arange(ph)[None, :, None], np.arange(pw)[None, None, :]
        return np.broadcast_to(i, (c_out, ph, pw)), np.broadcast_to(j, (c_out, ph, pw)), (c * ph + i) * pw + j

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        data, rois = ins
        n, c, h, w = data.shape
        ph, pw = self._pooled()
        r_host = np.asarray(rois.get() if hasattr(rois, "get") else rois, dtype=np.float64).reshape(-1, 5)
        c_out = c // (ph * pw) if self.param.position_sensitive else c
        if len(r_host) == 0:
            return [xp.zeros((0, c_out, ph, pw), dtype=data.dtype)]
        b, terms, g_h, g_w = self._plan(r_host, h, w)
        ok = (b >= 0) & (b < n)
        bi = xp.asarray(np.where(ok, b, 0))[:, None, None]
        acc = 0
        for yy, xx, ww in terms:  # gathered (R, ph*g_h, pw*g_w, C)
            vals = data[bi, :, xp.asarray(yy)[:, :, None], xp.asarray(xx)[:, None, :]]
            acc = acc + vals * xp.asarray((ww * ok[:, None, None])[..., None].astype(data.dtype))
        pooled = acc.reshape(len(r_host), ph, g_h, pw, g_w, c).sum(axis=(2, 4))  # (R, ph, pw, C)
        if self.param.position_sensitive:
            i, j, ch = (xp.asarray(a) for a in self._channels(c_out))
            return [pooled[:, i, j, ch]]
        return [pooled.transpose(0, 3, 1, 2)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        data, rois = ins
        n, c, h, w = data.shape
        ph, pw = self._pooled()
        g = xp.zeros(data.shape, dtype=data.dtype)
        r_host = np.asarray(rois.get() if hasattr(rois, "get") else rois, dtype=np.float64).reshape(-1, 5)
        if len(r_host) == 0:
            return [g, xp.zeros(rois.shape, dtype=rois.dtype)]
        b, terms, g_h, g_w = self._plan(r_host, h, w)
        ok = (b >= 0) & (b < n)
        og = ogs[0]
        if self.param.position_sensitive:
            full = xp.zeros((len(r_host), ph, pw, c), dtype=og.dtype)
            i, j, ch = (xp.asarray(a) for a in self._channels(og.shape[1]))
            full[:, i, j, ch] = og
        else:
            full = og.transpose(0, 2, 3, 1)
        spread = xp.broadcast_to(full[:, :, None, :, None, :], (len(r_host), ph, g_h, pw, g_w, c))
        spread = spread.reshape(len(r_host), ph * g_h, pw * g_w, c)
        bi = xp.asarray(np.where(ok, b, 0))[:, None, None]
        for yy, xx, ww in terms:
            wt = xp.asarray((ww * ok[:, None, None])[..., None].astype(data.dtype))
            xp.add.at(g, (bi, slice(None), xp.asarray(yy)[:, :, None], xp.asarray(xx)[:, None, :]), spread * wt)
        return [g, xp.zeros(rois.shape, dtype=rois.dtype)]


def register(registry: Any) -> None:
    _register(registry, {"AdaptiveAvgPooling2D": AdaptiveAvgPooling2DProp, "BilinearResize2D": BilinearResize2DProp,
                         "ROIAlign": ROIAlignProp})
