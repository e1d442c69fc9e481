"""``_sample_multinomial`` (alias ``sample_multinomial``): category indices drawn from the
probabilities in the last axis of ``data``; with ``get_prob`` also the log-probability of
each draw, whose gradient (``1/p`` at the drawn category, accumulated) flows back to
``data`` as in MXNet 1.9.1 (the REINFORCE use)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import OpReqType, Params, assign

from ._common import Field, SamplerOp, SamplerProp, Shape, out_dtype

__all__ = ["register"]


class MultinomialParam(Params):
    shape = Field(Shape, default=Shape(()), doc="draws per distribution")
    get_prob = Field(bool, default=False, doc="also output the log-probability of each draw")
    dtype = Field(str, default="int32", choices=("float16", "float32", "float64", "int32", "uint8"),
                  doc="dtype of the drawn indices")


class MultinomialProp(SamplerProp):
    """Draws category indices from the distributions in the last axis of ``data``:
    output shape ``data.shape[:-1] + shape``."""

    param_cls = MultinomialParam
    arguments = ("data",)

    def list_outputs(self):  # type: ignore[no-untyped-def]
        return ["output", "prob"] if self.param.get_prob else ["output"]

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        d = in_shape[0]
        if d is None:
            return [None], [None] * self.num_outputs(), []
        if len(d) < 1 or d[-1] < 1:
            raise self.shape_error("argument 'data' must have a non-empty last axis of probabilities", in_shape)
        out = (tuple(d[:-1]) + tuple(self.param.shape)) or (1,)
        return [tuple(d)], [out] * self.num_outputs(), []

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        t = in_type[0]
        outs = [out_dtype(self.param.dtype)] + ([t if t is not None else np.float32] if self.param.get_prob else [])
        return [t], outs, []

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return list(out_grad) + list(in_data) + list(out_data)

    def draw(self, rng, xp, in_data, out):  # type: ignore[no-untyped-def]
        p = in_data[0]
        k = p.shape[-1]
        rows = p.reshape(-1, k).astype(np.float64)
        n = int(np.prod(self.param.shape, dtype=np.int64)) if len(self.param.shape) else 1
        u = xp.asarray(rng.random((rows.shape[0], n)))
        if k <= 64:  # few categories: count the cdf entries at or below each draw, column by column
            total = xp.zeros((rows.shape[0], 1))  # (numpy's cumsum along a short axis is slow)
            for j in range(k):  # summed in cumsum's order, so the last cdf entry is exactly 1
                total = total + rows[:, j:j + 1]
            running = xp.zeros((rows.shape[0], 1))
            idx = xp.zeros(u.shape, dtype=np.int64)
            for j in range(k):
                running = running + rows[:, j:j + 1]
                idx += u >= running / total  # as MXNet: relative to the row's total
        else:  # one sorted search over all rows: row r's cdf and draws are shifted by r
            cdf = rows.cumsum(axis=1)
            cdf = cdf / cdf[:, -1:]
            off = xp.arange(rows.shape[0], dtype=np.float64)[:, None]
            pos = xp.searchsorted((cdf + off).ravel(), (u + off).ravel(), side="right").reshape(u.shape)
            idx = pos - (off * k).astype(pos.dtype)
        return xp.minimum(idx, k - 1).reshape(out.shape)


class MultinomialOp(SamplerOp):
    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        super().forward(ctx, in_data, req, out_data, aux_states)
        if len(out_data) > 1 and req[1] != OpReqType.null:
            assign(out_data[1], req[1], self._logp(ctx.xp, in_data[0], out_data[0]).astype(out_data[1].dtype))

    @staticmethod
    def _gather(xp: Any, p: Any, idx: Any) -> tuple[Any, Any]:
        k = p.shape[-1]
        rows = p.reshape(-1, k)
        flat = idx.reshape(rows.shape[0], -1).astype(np.int64)
        return rows, flat

    def _logp(self, xp: Any, p: Any, idx: Any) -> Any:
        rows, flat = self._gather(xp, p, idx)
        return xp.log(xp.take_along_axis(rows, flat, axis=1)).reshape(idx.shape)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        if req[0] == OpReqType.null:
            return
        xp, p = ctx.xp, in_data[0]
        g = xp.zeros(p.shape, dtype=np.float64)
        if len(out_grad) > 1 and out_grad[1] is not None:
            rows, flat = self._gather(xp, p, out_data[0])
            contrib = out_grad[1].reshape(flat.shape).astype(np.float64) / xp.take_along_axis(rows, flat, axis=1)
            lin = (xp.arange(rows.shape[0])[:, None] * rows.shape[1] + flat).ravel()
            g = xp.bincount(lin, weights=contrib.ravel(), minlength=rows.size).reshape(p.shape)
        assign(in_grad[0], req[0], g.astype(in_grad[0].dtype))


def register(registry: Any) -> None:
    registry.register_property("_sample_multinomial", MultinomialProp, aliases=("sample_multinomial",))
    registry.register_impl("_sample_multinomial", "*", lambda prop, ctx: MultinomialOp(prop), impl_name="xp")
