"""Pooling ``max``, ``avg`` and ``sum`` (1-D as 2-D, 2-D, 3-D; global_pool; ``valid`` and
``full`` conventions) through ATen's pooling kernels. ``full`` is torch's ``ceil_mode``;
where torch's output size differs from MXNet's (torch drops a last window that starts in
the padding), where the padding exceeds half the kernel, for ``lp`` pooling, other dtypes
or layouts, the ops-basic implementation runs. Max-pooling backward recomputes the
argmax (torch's CPU kernel, like MXNet's, takes the first maximum of a window).
Windows that tile the input without overlap, or one window over all of it, also run
ops-basic's implementation: its strided slices and reductions are faster there."""
from __future__ import annotations

import math
from typing import Any

from plexnet_ops_basic.nn.pooling import PoolGeom, PoolingOp

from . import _base
from ._base import NULL, T, TorchOp, store


def _torch_out(i: int, k: int, s: int, p: int, ceil: bool) -> int:
    if not ceil:
        return (i + 2 * p - k) // s + 1
    o = math.ceil((i + 2 * p - k) / s) + 1
    if (o - 1) * s >= i + p:
        o -= 1
    return o


class TorchPoolingOp(TorchOp):
    fallback = PoolingOp

    def __init__(self, prop: Any) -> None:
        super().__init__(prop)
        self._plans: dict = {}

    def plan(self, dshape: tuple) -> tuple | None:
        """``(nd, kernel, stride, pad, ceil)`` torch runs for this data shape (1-D as 2-D),
        or None when it would not match MXNet."""
        pl = self._plans.get(dshape, False)
        if pl is not False:
            return pl
        p = self.p
        pl = None
        g = PoolGeom(p, dshape) if len(dshape) in (3, 4, 5) else None
        # windows that tile the input without overlap (LeNet's 2x2/2) or cover all of it:
        # ops-basic's strided slices / reductions beat torch's NCHW kernels there
        if p.pool_type in ("max", "avg", "sum") and g is not None and not (g.tiles or g.whole):
            ceil = p.pooling_convention == "full" and not p.global_pool
            k, s, pd = list(g.kernel), list(g.stride), list(g.pad)
            fits = all(2 * a <= b for a, b in zip(pd, k)) and all(
                _torch_out(i, a, b, c, ceil) == o for i, a, b, c, o in zip(g.in_sp, k, s, pd, g.out_sp))
            if fits:
                if len(k) == 1:
                    k, s, pd = k + [1], s + [1], pd + [0]
                pl = (len(g.in_sp), k, s, pd, ceil)
        self._plans[dshape] = pl
        return pl

    def supports(self, ctx, arrays):
        p = self.p
        return (p.layout is None or p.layout.startswith("NC")) and _base.ok_arrays(arrays)

    def takes(self, data: Any) -> bool:
        return data is None or self.plan(tuple(data.shape)) is not None

    def _avg_args(self, pl: tuple) -> tuple:
        _nd, k, s, pd, ceil = pl
        if self.p.pool_type == "sum":
            return k, s, pd, ceil, True, 1
        return k, s, pd, ceil, self.p.count_include_pad is not False, None

    def torch_forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == NULL:
            return
        x = in_data[0]
        pl = self.plan(tuple(x.shape))
        if pl is None:
            return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)
        torch = _base.torch
        nd, k, s, pd, ceil = pl
        tx = T(x)
        if nd == 1:
            tx = tx.unsqueeze(-1)
        dims = len(k)
        if self.p.pool_type == "max":
            fn = torch.max_pool2d if dims == 2 else torch.max_pool3d
            y = fn(tx, k, s, pd, 1, ceil)
        else:
            fn = torch.ops.aten.avg_pool2d if dims == 2 else torch.ops.aten.avg_pool3d
            y = fn(tx, *self._avg_args(pl))
        store(out_data[0], req[0], y.squeeze(-1) if nd == 1 else y)

    def torch_backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == NULL:
            return
        dx = in_grad[0]
        pl = self.plan(tuple(dx.shape))
        if pl is None:
            return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        aten = _base.torch.ops.aten
        nd, k, s, pd, ceil = pl
        dims = len(k)
        dy = T(out_grad[0])
        if nd == 1:
            dy = dy.unsqueeze(-1)
        if self.p.pool_type == "max":
            tx = T(in_data[0])
            if nd == 1:
                tx = tx.unsqueeze(-1)
            fwd = aten.max_pool2d_with_indices if dims == 2 else aten.max_pool3d_with_indices
            bwd = aten.max_pool2d_with_indices_backward if dims == 2 else aten.max_pool3d_with_indices_backward
            _y, idx = fwd(tx, k, s, pd, [1] * dims, ceil)
            g = bwd(dy, tx, k, s, pd, [1] * dims, ceil, idx)
        else:
            # avg/sum backward reads only the input's shape: dx's array stands in for it
            tmpl = T(dx)
            if nd == 1:
                tmpl = tmpl.unsqueeze(-1)
            bwd = aten.avg_pool2d_backward if dims == 2 else aten.avg_pool3d_backward
            g = bwd(dy, tmpl, *self._avg_args(pl))
        store(dx, req[0], g.squeeze(-1) if nd == 1 else g)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("Pooling", "cpu", lambda prop, ctx: TorchPoolingOp(prop), impl_name="torch",
                           priority=10, available=available)
