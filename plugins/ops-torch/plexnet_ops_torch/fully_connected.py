"""FullyConnected through ``addmm`` / ``mm`` (MKL's GEMM in torch's CPU build), with the
bias folded into the forward GEMM and accumulating gradients (``req='add'``) added by
the GEMM itself (``addmm_``), so no temporaries."""
from __future__ import annotations

from typing import Any

from plexnet_ops_basic.nn.fully_connected import FullyConnectedOp

from . import _base
from ._base import ADD, NULL, T, TorchOp


class TorchFullyConnectedOp(TorchOp):
    fallback = FullyConnectedOp

    def _2d(self, x: Any) -> Any:
        return x.reshape(x.shape[0], -1) if self.p.flatten else x.reshape(-1, x.shape[-1])

    def torch_forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == NULL:
            return
        torch = _base.torch
        x = T(self._2d(in_data[0]))
        wt = T(in_data[1]).t()
        o = T(out_data[0].reshape(x.shape[0], self.p.num_hidden))
        if req[0] == ADD:
            o.addmm_(x, wt)
            if not self.p.no_bias:
                o.add_(T(in_data[2]))
        elif self.p.no_bias:
            torch.mm(x, wt, out=o)
        else:
            torch.addmm(T(in_data[2]), x, wt, out=o)

    def torch_backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        torch = _base.torch
        x = T(self._2d(in_data[0]))
        dy = T(out_grad[0].reshape(x.shape[0], self.p.num_hidden))
        if req[1] != NULL:
            dw = T(in_grad[1])
            if req[1] == ADD:
                dw.addmm_(dy.t(), x)
            else:
                torch.mm(dy.t(), x, out=dw)
        if not self.p.no_bias and req[2] != NULL:
            db = T(in_grad[2])
            if req[2] == ADD:
                db.add_(dy.sum(0))
            else:
                torch.sum(dy, 0, out=db)
        if req[0] != NULL:
            dx = T(in_grad[0].reshape(x.shape))
            w = T(in_data[1])
            if req[0] == ADD:
                dx.addmm_(dy, w)
            else:
                torch.mm(dy, w, out=dx)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("FullyConnected", "cpu", lambda prop, ctx: TorchFullyConnectedOp(prop),
                           impl_name="torch", priority=10, available=available)
