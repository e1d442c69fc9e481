"""``DeformableConvolution`` and ``ModulatedDeformableConvolution`` (deformable ConvNets v1
and v2), 2-D NCHW, with backward to data, offsets, mask, weight and bias.

Every kernel tap ``k = (i, j)`` of output position ``(y, x)`` reads the input at
``(y*stride - pad + i*dilate + offset_h, x*stride - pad + j*dilate + offset_w)``
bilinearly, with MXNet's border rules, which differ between the two operators (see
``_sample_plan``), the offsets of the
channel's deformable group taken from ``offset`` (``(N, 2*K*dg, Ho, Wo)``, ordered
``[group][tap][h, w]``); the modulated version multiplies each sample by ``mask``
(``(N, K*dg, Ho, Wo)``). The sampled columns then meet the weights as in a grouped
convolution. Written as gathers and one matrix product per group."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, Params, Shape

from ._common import FnProp, register as _register

__all__ = ["register"]


class DeformConvParam(Params):
    kernel = Field(Shape, doc="kernel size (h, w)")
    stride = Field(Shape, default=Shape(()), doc="stride (h, w); default 1")
    dilate = Field(Shape, default=Shape(()), doc="dilation (h, w); default 1")
    pad = Field(Shape, default=Shape(()), doc="zero padding (h, w); default 0")
    num_filter = Field(int, low=1, doc="output channels")
    num_group = Field(int, default=1, low=1, doc="convolution groups")
    num_deformable_group = Field(int, default=1, low=1, doc="groups of channels sharing offsets")
    workspace = Field(int, default=1024, low=0, doc="accepted (MXNet's workspace limit)")
    no_bias = Field(bool, default=False, doc="no bias term")
    layout = Field(str, default=None, optional=True, choices=("NCHW",), doc="only NCHW")


class ModulatedDeformConvParam(DeformConvParam):
    im2col_step = Field(int, default=64, low=1, doc="accepted (MXNet's batching of im2col)")


def _pair(v: tuple, default: int) -> tuple[int, int]:
    return (default, default) if not v else (v[0], v[0]) if len(v) == 1 else (v[0], v[1])


class DeformConvProp(FnProp):
    """Deformable convolution (v1)."""

    param_cls = DeformConvParam
    modulated = False

    def list_arguments(self):  # type: ignore[no-untyped-def]
        args = ["data", "offset"] + (["mask"] if self.modulated else []) + ["weight"]
        return args if self.param.no_bias else args + ["bias"]

    def _geom(self, d: tuple) -> tuple:
        p = self.param
        kh, kw = _pair(p.kernel, 1)
        sh, sw = _pair(p.stride, 1)
        dh, dw = _pair(p.dilate, 1)
        ph, pw = _pair(p.pad, 0)
        ho = (d[2] + 2 * ph - dh * (kh - 1) - 1) // sh + 1
        wo = (d[3] + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        return kh, kw, sh, sw, dh, dw, ph, pw, ho, wo

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        d = in_shape[0]
        names = self.list_arguments()
        if d is None:
            return list(in_shape), [None], []
        p = self.param
        d = tuple(d)
        if len(d) != 4 or len(p.kernel) != 2:
            raise self.error("only 2-D deformable convolution (NCHW data, 2-D kernel)", in_shape)
        kh, kw, *_, ho, wo = self._geom(d)
        dg, g = p.num_deformable_group, p.num_group
        if d[1] % g or d[1] % dg or p.num_filter % g:
            raise self.error(f"channels {d[1]} and num_filter {p.num_filter} must divide by num_group {g}; "
                             f"channels by num_deformable_group {dg}", in_shape)
        want = {"data": d, "offset": (d[0], 2 * kh * kw * dg, ho, wo), "mask": (d[0], kh * kw * dg, ho, wo),
                "weight": (p.num_filter, d[1] // g, kh, kw), "bias": (p.num_filter,)}
        shapes = []
        for n, s in zip(names, in_shape):
            # a 0 in a given shape is an unknown dim (gluon's deferred in_channels)
            if s is not None and (len(s) != len(want[n]) or any(a and a != b for a, b in zip(s, want[n]))):
                raise self.error(f"argument {n!r} must have shape {want[n]}", in_shape)
            shapes.append(want[n])
        return shapes, [(d[0], p.num_filter, ho, wo)], []

    def _split(self, ins: Any) -> tuple:
        x, off = ins[0], ins[1]
        mask = ins[2] if self.modulated else None
        w = ins[3 if self.modulated else 2]
        b = None if self.param.no_bias else ins[-1]
        return x, off, mask, w, b

    def _positions(self, xp: Any, x: Any, off: Any) -> tuple[Any, Any, int, int, int]:
        """Sample positions (N, dg, K, Ho, Wo) of every tap."""
        n = x.shape[0]
        kh, kw, sh, sw, dh, dw, ph, pw, ho, wo = self._geom(x.shape)
        dg = self.param.num_deformable_group
        k = kh * kw
        o = off.reshape(n, dg, k, 2, ho, wo)
        ki, kj = np.divmod(np.arange(k), kw)
        base_h = (np.arange(ho) * sh - ph)[None, :, None] + (ki * dh)[:, None, None]  # (K, Ho, 1)
        base_w = (np.arange(wo) * sw - pw)[None, None, :] + (kj * dw)[:, None, None]  # (K, 1, Wo)
        return (xp.asarray(base_h.astype(x.dtype)) + o[:, :, :, 0], xp.asarray(base_w.astype(x.dtype)) + o[:, :, :, 1],
                k, ho, wo)

    def _sample_plan(self, xp: Any, x: Any, off: Any, rule: str = "forward") -> dict[str, Any]:
        """Corner indices, weights and validity of every sample. MXNet's v1 operator samples
        where ``0 <= h < H`` and clamps at the last row/column (``rule='forward'``, also
        for the data gradient; its offset gradient likewise with ``0 <= h <= H``,
        ``rule='coordinate'``); the modulated (v2) operator samples where ``-1 < h < H``
        with every out-of-map corner reading 0."""
        h, w = x.shape[2:]
        hs, ws, k, ho, wo = self._positions(xp, x, off)
        if self.modulated:
            valid, clamp = (hs > -1) & (ws > -1) & (hs < h) & (ws < w), False
        elif rule == "forward":
            valid, clamp = (hs >= 0) & (ws >= 0) & (hs < h) & (ws < w), True
        else:
            valid, clamp = (hs >= 0) & (ws >= 0) & (hs <= h) & (ws <= w), True
        h0, w0 = xp.floor(hs).astype(np.int64), xp.floor(ws).astype(np.int64)
        if clamp:
            th, tw = h0 >= h - 1, w0 >= w - 1
            h0, w0 = xp.where(th, h - 1, h0), xp.where(tw, w - 1, w0)
            lh, lw = xp.where(th, 0, hs - h0), xp.where(tw, 0, ws - w0)
            h1, w1 = xp.where(th, h - 1, h0 + 1), xp.where(tw, w - 1, w0 + 1)
        else:
            lh, lw, h1, w1 = hs - h0, ws - w0, h0 + 1, w0 + 1
        corners = []
        for yy, xx, wt, dy, dx in ((h0, w0, (1 - lh) * (1 - lw), 0, 0), (h0, w1, (1 - lh) * lw, 0, 1),
                                   (h1, w0, lh * (1 - lw), 1, 0), (h1, w1, lh * lw, 1, 1)):
            ok = valid & (yy >= 0) & (yy <= h - 1) & (xx >= 0) & (xx <= w - 1)
            corners.append((xp.clip(yy, 0, h - 1), xp.clip(xx, 0, w - 1), wt * ok, ok, dy, dx))
        return {"corners": corners, "lh": lh, "lw": lw, "k": k, "ho": ho, "wo": wo}

    def _columns(self, xp: Any, x: Any, plan: dict[str, Any]) -> Any:
        """Sampled values (N, C, K, Ho, Wo) (before the mask)."""
        n, c = x.shape[:2]
        dg = self.param.num_deformable_group
        cpg = c // dg
        cols = 0
        ni = xp.arange(n)[:, None, None, None, None, None]
        ci = xp.arange(c).reshape(1, dg, cpg, 1, 1, 1)
        for yy, xx, wt, _ok, _dy, _dx in plan["corners"]:
            v = x[ni, ci, yy[:, :, None], xx[:, :, None]]  # (N, dg, cpg, K, Ho, Wo)
            cols = cols + v * wt[:, :, None]
        return cols.reshape(n, c, plan["k"], plan["ho"], plan["wo"])

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        x, off, mask, w, b = self._split(ins)
        plan = self._sample_plan(xp, x, off)
        cols = self._columns(xp, x, plan)
        if mask is not None:
            cols = self._apply_mask(xp, cols, mask, x.shape[1])
        out = self._matmul(xp, cols, w)
        if b is not None:
            out = out + b.reshape(1, -1, 1, 1)
        return [out]

    def _apply_mask(self, xp: Any, cols: Any, mask: Any, c: int) -> Any:
        n, _c, k, ho, wo = cols.shape
        dg = self.param.num_deformable_group
        m = mask.reshape(n, dg, 1, k, ho, wo)
        return (cols.reshape(n, dg, c // dg, k, ho, wo) * m).reshape(cols.shape)

    def _matmul(self, xp: Any, cols: Any, w: Any) -> Any:
        n, c, k, ho, wo = cols.shape
        g = self.param.num_group
        f = w.shape[0]
        cg = cols.reshape(n, g, (c // g) * k, ho * wo)
        wg = w.reshape(g, f // g, (c // g) * k)
        out = xp.einsum("gfk,ngkl->ngfl", wg, cg)
        return out.reshape(n, f, ho, wo)

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        x, off, mask, w, b = self._split(ins)
        n, c, h, wd = x.shape
        g, dg = self.param.num_group, self.param.num_deformable_group
        f = w.shape[0]
        plan = self._sample_plan(xp, x, off)
        k, ho, wo = plan["k"], plan["ho"], plan["wo"]
        raw = self._columns(xp, x, plan)
        cols = raw if mask is None else self._apply_mask(xp, raw, mask, c)
        og = ogs[0].reshape(n, g, f // g, ho * wo)
        # weight and bias
        gw = xp.einsum("ngfl,ngkl->gfk", og, cols.reshape(n, g, (c // g) * k, ho * wo)).reshape(w.shape)
        # gradient of the (masked) columns
        dcols = xp.einsum("gfk,ngfl->ngkl", w.reshape(g, f // g, (c // g) * k), og).reshape(n, c, k, ho, wo)
        dmask = None
        if mask is not None:
            dmask = (dcols * raw).reshape(n, dg, c // dg, k, ho, wo).sum(axis=2).reshape(mask.shape)
            dcols = self._apply_mask(xp, dcols, mask, c)
        d5 = dcols.reshape(n, dg, c // dg, k, ho, wo)
        gx = xp.zeros(x.shape, dtype=x.dtype)
        ni = xp.arange(n)[:, None, None, None, None, None]
        ci = xp.arange(c).reshape(1, dg, c // dg, 1, 1, 1)
        for yy, xx, wt, _ok, _dy, _dx in plan["corners"]:  # the data gradient: the forward's weights
            xp.add.at(gx, (ni, ci, yy[:, :, None], xx[:, :, None]), d5 * wt[:, :, None])
        coord = self._sample_plan(xp, x, off, "coordinate")
        goff_h = 0
        goff_w = 0
        lh, lw = coord["lh"], coord["lw"]
        for yy, xx, _wt, ok, dy, dx in coord["corners"]:
            yb, xb = yy[:, :, None], xx[:, :, None]
            v = (x[ni, ci, yb, xb] * d5).sum(axis=2) * ok  # (N, dg, K, Ho, Wo)
            goff_h = goff_h + v * ((lw if dx else 1 - lw) * (1 if dy else -1))
            goff_w = goff_w + v * ((lh if dy else 1 - lh) * (1 if dx else -1))
        goff = xp.stack([goff_h, goff_w], axis=3).reshape(off.shape)
        grads = [gx, goff] + ([dmask] if dmask is not None else []) + [gw]
        if b is not None:
            grads.append(ogs[0].sum(axis=(0, 2, 3)))
        return grads


class ModulatedDeformConvProp(DeformConvProp):
    """Modulated deformable convolution (v2): samples scaled by ``mask``."""

    param_cls = ModulatedDeformConvParam
    modulated = True


def register(registry: Any) -> None:
    _register(registry, {"DeformableConvolution": DeformConvProp,
                         "ModulatedDeformableConvolution": ModulatedDeformConvProp})
