"""BatchNorm through ``aten::native_batch_norm`` and its backward (channel axis 1,
float32/float64; other axes run the ops-basic implementation).

MXNet's semantics are kept where torch's differ: the moving statistics are updated here
(``moving = moving * momentum + batch * (1 - momentum)`` with the *biased* batch
variance; torch would use ``1 - momentum`` and the unbiased one), the third output holds
the inverse standard deviation, and ``fix_gamma`` normalises with gamma = 1 and gives
gamma a zero gradient without writing into the gamma array."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet_ops_basic.nn.batch_norm import BatchNormOp, update_moving

from . import _base
from ._base import NULL, WRITE, INPLACE, T, TorchOp, store


class TorchBatchNormOp(TorchOp):
    fallback = BatchNormOp

    def __init__(self, prop: Any) -> None:
        super().__init__(prop)
        self._ones: dict = {}

    def supports(self, ctx, arrays):
        x = arrays[0]
        return (x is not None and x.ndim >= 2 and self.p.axis % x.ndim == 1 and x.shape[1] > 0
                and x.size > 0 and _base.ok_arrays(arrays))

    def _gamma(self, gamma: Any) -> Any:
        if not self.p.fix_gamma:
            return T(gamma)
        key = (gamma.shape, gamma.dtype.str)
        one = self._ones.get(key)
        if one is None:
            one = self._ones[key] = _base.torch.ones(gamma.shape, dtype=T(gamma).dtype)
        return one

    def _batch_stats(self, ctx) -> bool:
        return ctx.is_train and not self.p.use_global_stats

    def torch_forward(self, ctx, in_data, req, out_data, aux_states):
        p = self.p
        x, gamma, beta = in_data
        mm, mv = aux_states
        if mm.dtype != x.dtype or mv.dtype != x.dtype:
            return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)
        aten = _base.torch.ops.aten
        tx, tg, tb = T(x), self._gamma(gamma), T(beta)
        if self._batch_stats(ctx):
            if req[0] in (WRITE, INPLACE):
                o = T(out_data[0])
                _y, tmean, tinv = aten.native_batch_norm.out(tx, tg, tb, None, None, True, 0.0, p.eps, out=o,
                                                             save_mean=_base.torch.empty(0, dtype=o.dtype),
                                                             save_invstd=_base.torch.empty(0, dtype=o.dtype))
            else:
                y, tmean, tinv = aten.native_batch_norm(tx, tg, tb, None, None, True, 0.0, p.eps)
                store(out_data[0], req[0], y)
            mean = tmean.numpy()
            invstd = tinv.numpy()
        else:
            y, _m, _v = aten.native_batch_norm(tx, tg, tb, T(mm), T(mv), False, 0.0, p.eps)
            store(out_data[0], req[0], y)
            mean = mm
            invstd = (1.0 / np.sqrt(mv + p.eps)).astype(x.dtype, copy=False)
        store_np(out_data[1], req[1], mean)
        store_np(out_data[2], req[2], invstd)

    def torch_backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        p = self.p
        x, gamma = in_data[0], in_data[1]
        need = [req[0] != NULL, req[1] != NULL and not p.fix_gamma, req[2] != NULL]
        if self._batch_stats(ctx):   # the moving statistics move in backward, as MXNet's (ops-basic)
            update_moving(np, p, aux_states, out_data[1], out_data[2])
        if any(need):
            aten = _base.torch.ops.aten
            if self._batch_stats(ctx):
                stats = (None, None, T(out_data[1]), T(out_data[2]), True)
            else:
                mm, mv = aux_states
                if mm.dtype != x.dtype or mv.dtype != x.dtype:
                    return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
                stats = (T(mm), T(mv), None, None, False)
            grads = aten.native_batch_norm_backward(T(out_grad[0]), T(x), self._gamma(gamma), *stats, p.eps, need)
            for i, g in enumerate(grads):
                if need[i]:
                    store(in_grad[i], req[i], g)
        if p.fix_gamma and req[1] != NULL:
            store_np(in_grad[1], req[1], 0)


def store_np(out: Any, req: Any, value: Any) -> None:
    if req == NULL:
        return
    if req in (WRITE, INPLACE):
        np.copyto(out, value, casting="unsafe")
    else:
        out += value


def register(registry: Any, available: Any) -> None:
    registry.register_impl("BatchNorm", "cpu", lambda prop, ctx: TorchBatchNormOp(prop), impl_name="torch",
                           priority=10, available=available)
