"""``Correlation`` (FlowNet's correlation layer), MXNet 1.x semantics.

Both inputs ``(N, C, H, W)`` are zero-padded by ``pad_size``; for every output position
``(i, j)`` (top-left ``y1 = i*stride1 + max_displacement``, likewise ``x1``) and every
displacement ``(dy, dx)`` in ``[-r, r]*stride2`` (``r = max_displacement // stride2``), the
output channel ``(dy/stride2 + r) * (2r+1) + dx/stride2 + r`` holds
``sum over a kernel_size^2 window and the channels of a(y1+h, x1+w) * b(y1+h+dy, x1+w+dx)``
(``|a - b|`` without ``is_multiply``), divided by ``kernel_size^2 * C``. Vectorised over
positions: one strided slice per (displacement, window offset).
"""
from __future__ import annotations

import math
from typing import Any

from plexnet.operator import Field, Params

from plexnet_ops_basic.tensor._fn import FnProp, register_fn

__all__ = ["register"]


class CorrelationParam(Params):
    kernel_size = Field(int, default=1, low=1, doc="window size (odd)")
    max_displacement = Field(int, default=1, low=0, doc="largest displacement")
    stride1 = Field(int, default=1, low=1, doc="stride of the output positions")
    stride2 = Field(int, default=1, low=1, doc="stride of the displacements")
    pad_size = Field(int, default=0, low=0, doc="zero padding of both inputs")
    is_multiply = Field(bool, default=True, doc="products (else absolute differences)")


class CorrelationProp(FnProp):
    """Correlation of two feature maps (see the module docstring)."""
    param_cls = CorrelationParam
    arguments = ("data1", "data2")
    deps = ("out_grad", "in_data")

    def _geom(self, s: tuple) -> tuple[int, int, int, int, int]:
        p = self.param
        kr = (p.kernel_size - 1) // 2
        border = p.max_displacement + kr
        hp, wp = s[2] + 2 * p.pad_size, s[3] + 2 * p.pad_size
        oh = int(math.ceil((hp - 2 * border) / p.stride1))
        ow = int(math.ceil((wp - 2 * border) / p.stride1))
        r = p.max_displacement // p.stride2
        return oh, ow, r, hp, wp

    def shapes(self, ins: list) -> tuple[list, list]:
        a, b = ins
        if len(a) != 4 or a != b:
            raise self.error(f"data1 and data2 must be 4-D of one shape, got {a} and {b}")
        oh, ow, r, _, _ = self._geom(a)
        if oh < 1 or ow < 1:
            raise self.error(f"inputs of shape {a} are too small for max_displacement={self.param.max_displacement}, "
                             f"kernel_size={self.param.kernel_size}, pad_size={self.param.pad_size}")
        return ins, [(a[0], (2 * r + 1) ** 2, oh, ow)]

    def _plan(self, s: tuple) -> tuple:
        p = self.param
        oh, ow, r, hp, wp = self._geom(s)
        span_h, span_w = (oh - 1) * p.stride1 + 1, (ow - 1) * p.stride1 + 1
        md = p.max_displacement
        for ci, (dy, dx) in enumerate((dy, dx) for dy in range(-r, r + 1) for dx in range(-r, r + 1)):
            for h in range(p.kernel_size):
                for w in range(p.kernel_size):
                    y1, x1 = md + h, md + w
                    y2, x2 = y1 + dy * p.stride2, x1 + dx * p.stride2
                    yield ci, (slice(y1, y1 + span_h, p.stride1), slice(x1, x1 + span_w, p.stride1)), \
                        (slice(y2, y2 + span_h, p.stride1), slice(x2, x2 + span_w, p.stride1))

    def _pad(self, xp: Any, x: Any) -> Any:
        q = self.param.pad_size
        return xp.pad(x, ((0, 0), (0, 0), (q, q), (q, q))) if q else x

    def _norm(self, c: int) -> float:
        return float(self.param.kernel_size ** 2 * c)

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        a, b = (self._pad(xp, x) for x in ins)
        n, c = a.shape[:2]
        oh, ow, r, _, _ = self._geom(ins[0].shape)
        out = xp.zeros((n, (2 * r + 1) ** 2, oh, ow), dtype=a.dtype)
        for ci, ka, kb in self._plan(ins[0].shape):
            pa, pb = a[:, :, ka[0], ka[1]], b[:, :, kb[0], kb[1]]
            out[:, ci] += (pa * pb).sum(axis=1) if self.param.is_multiply else xp.abs(pa - pb).sum(axis=1)
        return [out / self._norm(c)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        a, b = (self._pad(xp, x) for x in ins)
        n, c = a.shape[:2]
        ga, gb = xp.zeros_like(a), xp.zeros_like(b)
        g = ogs[0] / self._norm(c)
        for ci, ka, kb in self._plan(ins[0].shape):
            gc = g[:, ci:ci + 1]
            pa, pb = a[:, :, ka[0], ka[1]], b[:, :, kb[0], kb[1]]
            if self.param.is_multiply:
                ga[:, :, ka[0], ka[1]] += gc * pb
                gb[:, :, kb[0], kb[1]] += gc * pa
            else:
                # MXNet: sign = 1 where a - b >= 0 (ties included), else -1
                sgn = xp.where(pa >= pb, gc, -gc)
                ga[:, :, ka[0], ka[1]] += sgn
                gb[:, :, kb[0], kb[1]] -= sgn
        q = self.param.pad_size
        if q:
            ga, gb = ga[:, :, q:-q, q:-q], gb[:, :, q:-q, q:-q]
        return [ga, gb]


def register(registry: Any) -> None:
    register_fn(registry, "Correlation", CorrelationProp)
