"""``_sample_unique_zipfian``: MXNet 1.9.1's candidate sampler (``unique_sample_op``) behind
``nd.contrib.rand_zipfian``-style sampled softmax: per batch row, ``num_sampled`` distinct
classes drawn from the log-uniform (Zipfian) distribution
``P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)``, in draw order, and the number of
draws (trials) each row needed. Outputs are int64, as MXNet's."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from plexnet.operator import OpReqType, Params, assign

from ._common import Field, ParamError, SamplerOp, SamplerProp, Shape

__all__ = ["register"]


class UniqueZipfianParam(Params):
    range_max = Field(int, doc="the number of possible classes")
    shape = Field(Shape, default=Shape(()), doc="(batch_size, num_sampled)")

    def __post_init__(self, op: str) -> None:
        if len(self.shape) != 2:
            raise ParamError(f"{op}: shape must be 2-D (batch_size, num_sampled), got {tuple(self.shape)}")
        if not 0 <= self.shape[1] <= self.range_max:
            raise ParamError(f"{op}: num_sampled ({self.shape[1]}) must be in [0, range_max={self.range_max}]")


class UniqueZipfianProp(SamplerProp):
    """Outputs ``(samples (batch, num_sampled), trials (batch,))``, both int64."""

    param_cls = UniqueZipfianParam

    def list_outputs(self):  # type: ignore[no-untyped-def]
        return ["output", "trials"]

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        b, n = self.param.shape
        return [], [(b, n), (b,)], []

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        return [], [np.dtype(np.int64), np.dtype(np.int64)], []

    def sample(self, rng: Any) -> tuple[np.ndarray, np.ndarray]:
        b, n = self.param.shape
        log_range = math.log(self.param.range_max + 1)
        out = np.empty((b, n), np.int64)
        trials = np.zeros((b,), np.int64)
        for i in range(b):
            seen: dict[int, None] = {}  # insertion-ordered: the samples in draw order
            tries = 0
            while len(seen) < n:
                # draw in blocks; exp(u * log(range_max + 1)) - 1 truncated has MXNet's distribution
                block = max(64, 2 * (n - len(seen)))
                vals = (np.exp(rng.random(block) * log_range) - 1).astype(np.int64)
                for k, v in enumerate(vals.tolist()):
                    if v not in seen:
                        seen[v] = None
                        if len(seen) == n:
                            tries += k + 1
                            break
                else:
                    tries += block
            out[i] = np.fromiter(seen, np.int64, n)
            trials[i] = tries
        return out, trials


class UniqueZipfianOp(SamplerOp):
    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        samples, trials = self.prop.sample(ctx.requested[0].get_random())  # type: ignore[attr-defined]
        xp = ctx.xp
        if req[0] != OpReqType.null:
            assign(out_data[0], req[0], xp.asarray(samples))
        if req[1] != OpReqType.null:
            assign(out_data[1], req[1], xp.asarray(trials))


def register(registry: Any) -> None:
    registry.register_property("_sample_unique_zipfian", UniqueZipfianProp)
    registry.register_impl("_sample_unique_zipfian", "*", lambda prop, ctx: UniqueZipfianOp(prop), impl_name="xp")
