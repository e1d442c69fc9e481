"""The interleaved attention matmuls of MXNet 1.9.1's transformer support, with backward.
Projections arrive interleaved per head: self-attention ``queries_keys_values`` is
``(L, B, H * 3 * D)`` viewed as ``(L, B, H, 3, D)`` (q, k, v per head); encoder-decoder
``keys_values`` is ``(L, B, H * 2 * D)`` viewed as ``(L, B, H, 2, D)``. Scores are
``(B * H, Lq, Lk)`` with queries scaled by ``1/sqrt(D)``; value outputs ``(Lq, B, H * D)``.
"""
from __future__ import annotations

import math
from typing import Any

from plexnet.operator import Field, Params

from ._common import FnProp, register as _register

__all__ = ["register"]


class HeadsParam(Params):
    heads = Field(int, low=1, doc="number of attention heads")


def _split(x: Any, heads: int, parts: int) -> list[Any]:
    """``(L, B, H*parts*D)`` -> ``parts`` arrays ``(B*H, L, D)``."""
    L, B, E = x.shape
    d = E // (heads * parts)
    v = x.reshape(L, B, heads, parts, d).transpose(3, 1, 2, 0, 4).reshape(parts, B * heads, L, d)
    return [v[i] for i in range(parts)]


def _merge(xp: Any, parts: list[Any], heads: int) -> Any:
    """Inverse of ``_split``: ``parts`` arrays ``(B*H, L, D)`` -> ``(L, B, H*parts*D)``."""
    bh, L, d = parts[0].shape
    st = xp.stack(parts, axis=0).reshape(len(parts), bh // heads, heads, L, d)
    return st.transpose(3, 1, 2, 0, 4).reshape(L, bh // heads, heads * len(parts) * d)


def _to_lbe(x: Any, heads: int) -> Any:
    """``(B*H, L, D)`` -> ``(L, B, H*D)``."""
    bh, L, d = x.shape
    return x.reshape(bh // heads, heads, L, d).transpose(2, 0, 1, 3).reshape(L, bh // heads, heads * d)


class _AttProp(FnProp):
    param_cls = HeadsParam

    def check(self, shapes: Any, idx: int, parts: int) -> int:
        s = shapes[idx]
        if len(s) != 3 or s[2] % (self.param.heads * parts):
            raise self.error(f"argument {self.list_arguments()[idx]!r} must be (length, batch, heads * {parts} * "
                             f"head_dim) with heads={self.param.heads}", shapes)
        return s[2] // (self.param.heads * parts)


class SelfAttQKProp(_AttProp):
    """Scaled ``q @ k^T`` per batch and head from interleaved ``queries_keys_values``."""

    arguments = ("queries_keys_values",)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.check(shapes, 0, 3)
        L, B, _ = shapes[0]
        return [(B * self.param.heads, L, L)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        q, k, _v = _split(ins[0], self.param.heads, 3)
        return [xp.matmul(q / math.sqrt(q.shape[-1]), k.swapaxes(1, 2))]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        q, k, v = _split(ins[0], self.param.heads, 3)
        s = 1 / math.sqrt(q.shape[-1])
        g = ogs[0]
        return [_merge(xp, [xp.matmul(g, k) * s, xp.matmul(g.swapaxes(1, 2), q) * s, xp.zeros_like(v)],
                       self.param.heads)]


class SelfAttValAttProp(_AttProp):
    """``attention @ v`` per batch and head from interleaved ``queries_keys_values``."""

    arguments = ("queries_keys_values", "attention")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d = self.check(shapes, 0, 3)
        L, B, _ = shapes[0]
        if tuple(shapes[1]) != (B * self.param.heads, L, L):
            raise self.error(f"attention must have shape {(B * self.param.heads, L, L)}", shapes)
        return [(L, B, self.param.heads * d)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        _q, _k, v = _split(ins[0], self.param.heads, 3)
        return [_to_lbe(xp.matmul(ins[1], v), self.param.heads)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        q, _k, v = _split(ins[0], self.param.heads, 3)
        g = _split(ogs[0], self.param.heads, 1)[0]  # (B*H, L, D)
        dv = xp.matmul(ins[1].swapaxes(1, 2), g)
        datt = xp.matmul(g, v.swapaxes(1, 2))
        return [_merge(xp, [xp.zeros_like(q), xp.zeros_like(q), dv], self.param.heads), datt]


class EncDecQKProp(_AttProp):
    """Scaled ``q @ k^T`` per batch and head; keys interleaved with values."""

    arguments = ("queries", "keys_values")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        dq = self.check(shapes, 0, 1)
        dk = self.check(shapes, 1, 2)
        (Lq, B, _), (Lk, B2, _) = shapes
        if dq != dk or B != B2:
            raise self.error("queries and keys_values must agree in batch and head size", shapes)
        return [(B * self.param.heads, Lq, Lk)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        q = _split(ins[0], self.param.heads, 1)[0]
        k, _v = _split(ins[1], self.param.heads, 2)
        return [xp.matmul(q / math.sqrt(q.shape[-1]), k.swapaxes(1, 2))]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        q = _split(ins[0], self.param.heads, 1)[0]
        k, v = _split(ins[1], self.param.heads, 2)
        s, g = 1 / math.sqrt(q.shape[-1]), ogs[0]
        return [_to_lbe(xp.matmul(g, k) * s, self.param.heads),
                _merge(xp, [xp.matmul(g.swapaxes(1, 2), q) * s, xp.zeros_like(v)], self.param.heads)]


class EncDecValAttProp(_AttProp):
    """``attention @ v`` per batch and head; values interleaved with keys."""

    arguments = ("keys_values", "attention")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        d = self.check(shapes, 0, 2)
        Lk, B, _ = shapes[0]
        a = shapes[1]
        if len(a) != 3 or a[0] != B * self.param.heads or a[2] != Lk:
            raise self.error(f"attention must have shape ({B * self.param.heads}, query length, {Lk})", shapes)
        return [(a[1], B, self.param.heads * d)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        _k, v = _split(ins[0], self.param.heads, 2)
        return [_to_lbe(xp.matmul(ins[1], v), self.param.heads)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        k, v = _split(ins[0], self.param.heads, 2)
        g = _split(ogs[0], self.param.heads, 1)[0]
        return [_merge(xp, [xp.zeros_like(k), xp.matmul(ins[1].swapaxes(1, 2), g)], self.param.heads),
                xp.matmul(g, v.swapaxes(1, 2))]


def register(registry: Any) -> None:
    _register(registry, {"interleaved_matmul_selfatt_qk": SelfAttQKProp,
                         "interleaved_matmul_selfatt_valatt": SelfAttValAttProp,
                         "interleaved_matmul_encdec_qk": EncDecQKProp,
                         "interleaved_matmul_encdec_valatt": EncDecValAttProp})
