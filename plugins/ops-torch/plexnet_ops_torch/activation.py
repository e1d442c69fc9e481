"""Activation ``relu`` through ATen's vectorised, multi-threaded kernels (backward from
the output: ``threshold_backward``, one pass instead of numpy's mask and product).
``sigmoid`` and ``tanh`` are implemented too but not chosen by default (``TYPES``):
numpy's SIMD ``tanh`` was faster than torch's here; the other activation types run the
ops-basic implementation."""
from __future__ import annotations

from typing import Any

from plexnet_ops_basic.nn.activation import ActivationOp

from . import _base
from ._base import ADD, NULL, T, TorchOp

#: the activation types this implementation takes (the others run ops-basic's)
TYPES = ("relu",)


class TorchActivationOp(TorchOp):
    fallback = ActivationOp
    types = TYPES

    def supports(self, ctx, arrays):
        return self.p.act_type in self.types and _base.ok_arrays(arrays)

    def torch_forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == NULL:
            return
        torch = _base.torch
        x, o = T(in_data[0]), T(out_data[0])
        act = self.p.act_type
        if req[0] == ADD:
            o.add_(torch.relu(x) if act == "relu" else torch.sigmoid(x) if act == "sigmoid" else torch.tanh(x))
        elif act == "relu":
            torch.clamp_min(x, 0, out=o)
        elif act == "sigmoid":
            torch.sigmoid(x, out=o)
        else:
            torch.tanh(x, out=o)

    def torch_backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == NULL:
            return
        aten = _base.torch.ops.aten
        dy, y = T(out_grad[0]), T(out_data[0])
        act = self.p.act_type
        dx = T(in_grad[0])
        if req[0] == ADD:
            g = (aten.threshold_backward(dy, y, 0) if act == "relu" else
                 aten.sigmoid_backward(dy, y) if act == "sigmoid" else aten.tanh_backward(dy, y))
            dx.add_(g)
        elif act == "relu":
            aten.threshold_backward.grad_input(dy, y, 0, grad_input=dx)
        elif act == "sigmoid":
            aten.sigmoid_backward.grad_input(dy, y, grad_input=dx)
        else:
            aten.tanh_backward.grad_input(dy, y, grad_input=dx)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("Activation", "cpu", lambda prop, ctx: TorchActivationOp(prop), impl_name="torch",
                           priority=10, available=available)
