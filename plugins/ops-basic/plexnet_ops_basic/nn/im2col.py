"""``im2col`` and ``col2im``, MXNet 1.x semantics: ``(N, C, *spatial)`` <-> ``(N, C*prod(kernel),
L)`` where ``L`` is the number of sliding-window positions (stride, dilate, pad per axis;
1-D to 3-D). ``col2im`` sums overlapping windows; each is the other's gradient.
"""
from __future__ import annotations

import itertools
from typing import Any

from plexnet.operator import Field, Params, Shape
from plexnet.operator.params import ParamError

from plexnet_ops_basic.tensor._fn import FnProp, register_fn

__all__ = ["register"]


class Im2colParam(Params):
    kernel = Field(Shape, doc="window size per spatial axis")
    stride = Field(Shape, default=Shape(()), doc="default 1 per axis")
    dilate = Field(Shape, default=Shape(()), doc="default 1 per axis")
    pad = Field(Shape, default=Shape(()), doc="default 0 per axis")

    def __post_init__(self, op: str) -> None:
        k = len(self.kernel)
        if not 1 <= k <= 3 or any(v is None or v < 1 for v in self.kernel):
            raise ParamError(f"{op}: argument 'kernel'={tuple(self.kernel)} must have 1 to 3 positive sizes")
        for name, default, low in (("stride", 1, 1), ("dilate", 1, 1), ("pad", 0, 0)):
            v = tuple(getattr(self, name)) or (default,) * k
            if len(v) != k or any(x < low for x in v):
                raise ParamError(f"{op}: argument {name!r}={tuple(getattr(self, name))} must have {k} values >= {low}")
            object.__setattr__(self, name, Shape(v))


class Col2imParam(Im2colParam):
    output_size = Field(Shape, doc="spatial shape of the image")
    #: MXNet's declaration order (positional parameters of nd/sym.col2im)
    field_order = ("output_size",)


def _positions(p: Im2colParam, spatial: tuple) -> tuple[int, ...]:
    return tuple((s + 2 * q - (d * (k - 1) + 1)) // st + 1
                 for s, k, st, d, q in zip(spatial, p.kernel, p.stride, p.dilate, p.pad))


def _windows(p: Im2colParam, out: tuple) -> Any:
    """For each kernel offset, the strided slices of the padded image it reads."""
    for off in itertools.product(*(range(k) for k in p.kernel)):
        yield tuple(slice(o * d, o * d + (n - 1) * st + 1, st) for o, d, n, st in zip(off, p.dilate, out, p.stride))


def _pad(xp: Any, x: Any, p: Im2colParam) -> Any:
    if not any(p.pad):
        return x
    return xp.pad(x, ((0, 0), (0, 0)) + tuple((q, q) for q in p.pad))


def im2col(xp: Any, x: Any, p: Im2colParam) -> Any:
    n, c = x.shape[:2]
    out = _positions(p, x.shape[2:])
    xpad = _pad(xp, x, p)
    cols = xp.stack([xpad[(slice(None), slice(None)) + win] for win in _windows(p, out)], axis=2)
    return cols.reshape(n, -1, int(_prod(out)))  # (N, C, K, *out) -> (N, C*K, L): channel-major as MXNet


def col2im(xp: Any, cols: Any, spatial: tuple, p: Im2colParam) -> Any:
    n = cols.shape[0]
    k = int(_prod(p.kernel))
    c = cols.shape[1] // k
    out = _positions(p, spatial)
    img = xp.zeros((n, c) + tuple(s + 2 * q for s, q in zip(spatial, p.pad)), dtype=cols.dtype)
    cols = cols.reshape((n, c, k) + out)
    for i, win in enumerate(_windows(p, out)):
        img[(slice(None), slice(None)) + win] += cols[:, :, i]
    if any(p.pad):
        img = img[(slice(None), slice(None)) + tuple(slice(q, q + s) for q, s in zip(p.pad, spatial))]
    return img


def _prod(v: Any) -> int:
    r = 1
    for x in v:
        r *= int(x)
    return r


class Im2colProp(FnProp):
    """Sliding windows of the image as columns: ``(N, C*prod(kernel), L)``."""
    param_cls = Im2colParam
    deps = ("out_grad", "in_data")

    def shapes(self, ins: list) -> tuple[list, list]:
        d = ins[0]
        if len(d) != 2 + len(self.param.kernel):
            raise self.error(f"data of shape {d} must have {2 + len(self.param.kernel)} dims for kernel "
                             f"{tuple(self.param.kernel)}")
        out = _positions(self.param, d[2:])
        if min(out) < 1:
            raise self.error(f"kernel {tuple(self.param.kernel)} (dilate {tuple(self.param.dilate)}, pad "
                             f"{tuple(self.param.pad)}) does not fit data of shape {d}")
        return ins, [(d[0], d[1] * _prod(self.param.kernel), _prod(out))]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [im2col(xp, ins[0], self.param)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [col2im(xp, ogs[0], ins[0].shape[2:], self.param)]


class Col2imProp(FnProp):
    """Sum columns back into an image of ``output_size`` (the inverse layout of im2col)."""
    param_cls = Col2imParam
    deps = ("out_grad",)

    def shapes(self, ins: list) -> tuple[list, list]:
        d, p = ins[0], self.param
        if len(p.output_size) != len(p.kernel):
            raise self.error(f"output_size {tuple(p.output_size)} must have as many dims as kernel {tuple(p.kernel)}")
        k, n_pos = _prod(p.kernel), _prod(_positions(p, tuple(p.output_size)))
        if len(d) != 3 or d[1] % k or d[2] != n_pos:
            raise self.error(f"data of shape {d} must be (N, C*{k}, {n_pos}) for kernel {tuple(p.kernel)} and "
                             f"output_size {tuple(p.output_size)}")
        return ins, [(d[0], d[1] // k) + tuple(p.output_size)]

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        return [col2im(xp, ins[0], tuple(self.param.output_size), self.param)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        return [im2col(xp, ogs[0], self.param)]


def register(registry: Any) -> None:
    register_fn(registry, "im2col", Im2colProp)
    register_fn(registry, "col2im", Col2imProp)
