"""``Pad`` (``pad``): pad the spatial axes of a 4-D or 5-D array, MXNet 1.x semantics.

``pad_width`` holds ``(before, after)`` for every axis; the batch and channel pairs must be
zero. Modes: ``constant`` (``constant_value``), ``edge`` (repeat the border) and
``reflect`` (mirror without repeating the border; a pad must be smaller than its axis).
Each output position maps to one input position per axis; backward sums the gradient
back over that map (edge and reflect send several outputs to one input).
"""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, Params, Shape
from plexnet.operator.params import ParamError

from ._fn import FnProp, register_fn
from .indexing import scatter_add

__all__ = ["register"]


class PadParam(Params):
    mode = Field(str, default="constant", choices=("constant", "edge", "reflect"), doc="padding mode")
    pad_width = Field(Shape, doc="(before, after) per axis; the first four entries must be 0")
    constant_value = Field(float, default=0.0, doc="value of constant padding")

    def __post_init__(self, op: str) -> None:
        pw = tuple(self.pad_width)
        if len(pw) not in (8, 10) or any(p is None or p < 0 for p in pw):
            raise ParamError(f"{op}: argument 'pad_width'={pw} must hold 8 (4-D) or 10 (5-D) non-negative values")
        if any(pw[:4]):
            raise ParamError(f"{op}: argument 'pad_width'={pw}: the batch and channel axes cannot be padded "
                             f"(the first four values must be 0)")


class PadProp(FnProp):
    """Pad the spatial axes (see the module docstring)."""
    param_cls = PadParam
    deps = ("out_grad", "in_data")  # the input's shape

    def _pairs(self, s: tuple) -> list[tuple[int, int]]:
        pw = tuple(self.param.pad_width)
        if len(pw) != 2 * len(s):
            raise self.error(f"argument 'pad_width' has {len(pw)} values; data of shape {s} needs {2 * len(s)} "
                             f"(only 4-D and 5-D data can be padded)")
        pairs = [(pw[2 * i], pw[2 * i + 1]) for i in range(len(s))]
        if self.param.mode == "reflect":
            for d, (b, a) in zip(s, pairs):
                if b >= d or a >= d:
                    raise self.error(f"reflect padding {pw} must be smaller than each padded axis of data {s}")
        return pairs

    def shapes(self, ins: list) -> tuple[list, list]:
        s = ins[0]
        return ins, [tuple(d + b + a for d, (b, a) in zip(s, self._pairs(s)))]

    def _maps(self, xp: Any, s: tuple) -> tuple[list, Any]:
        """Per axis the input position of each output position; and the valid mask
        (constant mode: False in the padding)."""
        maps, valid = [], None
        for ax, (d, (b, a)) in enumerate(zip(s, self._pairs(s))):
            j = xp.arange(d + b + a) - b
            if self.param.mode == "edge":
                j = xp.clip(j, 0, d - 1)
            elif self.param.mode == "reflect":
                period = 2 * (d - 1) if d > 1 else 1
                j = xp.abs(xp.mod(j, period))
                j = xp.where(j >= d, period - j, j)
            elif b or a:
                ok = (j >= 0) & (j < d)
                shape = [1] * len(s)
                shape[ax] = j.shape[0]
                ok = ok.reshape(shape)
                valid = ok if valid is None else valid & ok
                j = xp.clip(j, 0, max(d - 1, 0))
            maps.append(j)
        return maps, valid

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        x = ins[0]
        pairs = self._pairs(x.shape)
        mode = self.param.mode
        if mode == "constant":  # numpy's modes are MXNet's (reflect: no repeated border)
            return [xp.pad(x, pairs, mode="constant", constant_values=self.param.constant_value)]
        return [xp.pad(x, pairs, mode=mode)]

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        g = ogs[0]
        maps, valid = self._maps(xp, ins[0].shape)
        if valid is not None:
            g = g * valid
        gi = xp.zeros(ins[0].shape, dtype=g.dtype)
        scatter_add(xp, gi, xp.ix_(*maps), g)
        return [gi]


def register(registry: Any) -> None:
    register_fn(registry, "Pad", PadProp, ("pad",))
