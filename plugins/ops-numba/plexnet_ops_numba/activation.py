"""Activation through numba kernels (``_actkern``) where they beat numpy: relu forward, and
the gradients of relu, tanh and sigmoid (one pass instead of numpy's two or three).
ResNet-18 CIFAR has 17 relu Activations, LeNet three tanh (docs/ops-numba.md has the
figures).

ops-basic runs: the other activation types, tanh and sigmoid forward (numpy's SIMD
``tanh`` beats numba's call into libm), ``add`` to the output in forward, arrays that
overlap other than exactly (``dx`` is ``dy``, ``y`` is ``x``), non-contiguous arrays,
dtypes other than float32/float64, small arrays (``MIN_ELEMENTS``). Results are
bit-equal to ops-basic's (same operations in the same order)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet_ops_basic.nn.activation import ActivationOp

from . import _base
from ._base import ADD, NULL, NumbaOp

#: the activation types whose gradient has a kernel (``<type>_grad``)
GRADIENTS = ("relu", "tanh", "sigmoid")


def _same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same buffer (same start and size)."""
    return a.ctypes.data == b.ctypes.data and a.size == b.size


class NumbaActivationOp(NumbaOp):
    fallback = ActivationOp

    def _kernels(self, ctx: Any, arrays: list) -> Any:
        if ctx.xp is not np or not _base.ok_arrays(arrays):
            return None
        return _base.kernels("_actkern")

    def forward(self, ctx, in_data, req, out_data, aux_states):
        x, y = in_data[0], out_data[0]
        K = (self._kernels(ctx, [x, y]) if self.p.act_type == "relu" and req[0] not in (NULL, ADD)
             else None)
        if K is None:
            return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)
        if _same(x, y):
            K.relu_inplace(y.reshape(-1))
        elif np.may_share_memory(x, y):
            return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)
        else:
            K.relu(x.reshape(-1), y.reshape(-1))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        act = self.p.act_type
        dy, y, dx = out_grad[0], out_data[0], in_grad[0]
        K = self._kernels(ctx, [dy, y, dx]) if act in GRADIENTS and req[0] != NULL else None
        if K is None or np.may_share_memory(dx, y):
            return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        add = req[0] == ADD
        if _same(dx, dy) and not add:
            getattr(K, act + "_grad_inplace")(dx.reshape(-1), y.reshape(-1))
        elif np.may_share_memory(dx, dy):
            return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        else:
            getattr(K, act + "_grad")(dy.reshape(-1), y.reshape(-1), dx.reshape(-1), add)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("Activation", "cpu", lambda prop, ctx: NumbaActivationOp(prop), impl_name="numba",
                           priority=5, available=available)
