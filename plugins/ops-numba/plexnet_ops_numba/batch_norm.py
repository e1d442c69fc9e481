"""BatchNorm's training passes (batch statistics) through numba kernels (``_bnkern``), with
ops-basic's semantics: MXNet's moving-statistics update in forward, the inverse standard
deviation as the third output, ``fix_gamma``, every req.

ops-basic's numpy version makes five to eight whole-array passes each way; these kernels
make three (forward: the statistics, then the normalised output; backward: the two sums,
then the data gradient); two threads take half the channels each from
``SPLIT_MIN_ELEMENTS`` while the engine leaves a second core free. ResNet-18 CIFAR's 20
BatchNorms (batch 32): docs/ops-numba.md.

ops-basic runs: inference and ``use_global_stats`` (one pass there already), a channel
axis other than 1, dtypes other than float32/float64, non-contiguous arrays, ``add`` to
the output, small arrays (``MIN_ELEMENTS``). Results equal ops-basic's to float32
rounding (float64 sums here, float32 pairwise sums there)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet_ops_basic.nn import _split
from plexnet_ops_basic.nn._normcore import store
from plexnet_ops_basic.nn.batch_norm import BatchNormOp, update_moving

from . import _base
from ._base import ADD, NULL, NumbaOp


#: elements below which the passes stay on one thread (so: all of ResNet-18 CIFAR's). The
#: passes are memory-bound and short (0.3-0.7 ms for 2M float32): in a training step the
#: two halves overlapped at 0.4-0.7 of two cores, and the split's self-check
#: (``_split.observe``) then turned every split off for seconds, the convolutions' too
#: (ResNet-18 step, synchronous: 860 ms with BatchNorm split, 490-510 ms without)
SPLIT_MIN_ELEMENTS = 1 << 24


def _over_channels(c: int, elements: int, run: Any, observe: bool = True) -> None:
    """``run(c0, c1)`` over the channels: two halves on this thread and ops-basic's helper
    thread while a second core is free (and the pass is big enough), else all here.
    ``observe``: whether the split counts in the split's self-check (not for the first
    call of a shape: see ``winograd._first_call``)."""
    if c >= 2 and elements >= SPLIT_MIN_ELEMENTS and _split.ways(np, c, elements, always=True) == 2:
        half = c // 2
        _split.run_items(2, lambda i, slot: run(0, half) if i == 0 else run(half, c), observe)
    else:
        run(0, c)


class NumbaBatchNormOp(NumbaOp):
    fallback = BatchNormOp

    def __init__(self, prop: Any) -> None:
        super().__init__(prop)
        self._seen: set = set()   # (pass, shape) already run: later splits count in the self-check

    def _warm(self, key: tuple) -> bool:
        warm = key in self._seen
        self._seen.add(key)
        return warm

    def _view(self, ctx: Any, x: Any, arrays: list) -> Any:
        """``x`` as (N, C, S), or None where ops-basic runs."""
        p = self.p
        if (ctx.xp is not np or not ctx.is_train or p.use_global_stats or x.ndim < 2
                or p.axis % x.ndim != 1 or not _base.ok_arrays(arrays)):
            return None
        if _base.kernels("_bnkern") is None:
            return None
        return (x.shape[0], x.shape[1], x.size // max(x.shape[0] * x.shape[1], 1))

    def forward(self, ctx, in_data, req, out_data, aux_states):
        x, gamma, beta = in_data
        shape = None if req[0] in (NULL, ADD) else self._view(ctx, x, [x, gamma, beta, out_data[0]] + list(aux_states))
        if shape is None or shape[0] * shape[2] == 0:
            return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)
        K = _base.kernels("_bnkern")
        p = self.p
        C = shape[1]
        x3, y3 = x.reshape(shape), out_data[0].reshape(shape)
        mean64, var64 = np.empty(C), np.empty(C)
        obs = self._warm(("forward", x.shape))
        _over_channels(C, x.size, lambda c0, c1: K.channel_stats(x3, mean64, var64, c0, c1), obs)
        mean, var = mean64.astype(x.dtype), var64.astype(x.dtype)
        invstd = 1.0 / np.sqrt(var + p.eps)
        scale = (invstd if p.fix_gamma else gamma * invstd).astype(x.dtype, copy=False)
        _over_channels(C, x.size, lambda c0, c1: K.normalize(x3, y3, mean, scale, beta, c0, c1), obs)
        store(np, out_data[1], req[1], mean)
        store(np, out_data[2], req[2], invstd.astype(out_data[2].dtype, copy=False))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        x, gamma = in_data[0], in_data[1]
        dy = out_grad[0]
        mean, invstd = out_data[1], out_data[2]
        arrays = [x, dy, gamma, mean, invstd] + ([in_grad[0]] if req[0] != NULL else [])
        shape = self._view(ctx, x, arrays)
        if shape is None or shape[0] * shape[2] == 0:
            return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        K = _base.kernels("_bnkern")
        p = self.p
        C = shape[1]
        m = shape[0] * shape[2]
        update_moving(np, p, aux_states, mean, invstd)   # in backward, as MXNet (ops-basic's docstring)
        x3, dy3 = x.reshape(shape), dy.reshape(shape)
        sum_dy, sum_dy_xc = np.empty(C), np.empty(C)
        obs = self._warm(("backward", x.shape))
        _over_channels(C, x.size, lambda c0, c1: K.gradient_sums(x3, dy3, mean, sum_dy, sum_dy_xc, c0, c1), obs)
        dbeta = sum_dy.astype(x.dtype)
        dgamma = (sum_dy_xc * invstd).astype(x.dtype)   # sum of dy * xhat
        if req[0] != NULL:
            # dx = k dy - xhat k dgamma / m - k dbeta / m, with k = gamma * invstd
            k = (invstd if p.fix_gamma else gamma * invstd).astype(x.dtype, copy=False)
            b = (-k * invstd * dgamma / m).astype(x.dtype)
            e = (-k * dbeta / m).astype(x.dtype)
            dx3 = in_grad[0].reshape(shape)
            add = req[0] == ADD
            _over_channels(C, x.size, lambda c0, c1: K.data_gradient(x3, dy3, dx3, mean, k, b, e, add, c0, c1),
                           obs)
        if req[1] != NULL:
            store(np, in_grad[1], req[1], np.zeros_like(dgamma) if p.fix_gamma else dgamma)
        store(np, in_grad[2], req[2], dbeta)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("BatchNorm", "cpu", lambda prop, ctx: NumbaBatchNormOp(prop), impl_name="numba",
                           priority=5, available=available)
