"""Pooling ``max``, ``avg`` and ``sum`` (1-D, 2-D, 3-D; any kernel, stride, pad;
``valid`` / ``full`` / ``same`` conventions; ``count_include_pad``) forward and backward
through numba kernels (``_poolkern``), with ops-basic's results.

ops-basic's numpy implementation makes one whole-tensor strided pass per window offset
(and, for max backward, a compare and a mask per offset plus a zeroing pass); here one
pass reads the input once. LeNet's max 2x2/2 on (64, 20, 24, 24): forward 0.40 -> 0.08 ms,
backward 0.87 -> ~0.3 ms (docs/ops-numba.md). Other 1-D and 2-D geometries (3x3/2 and
3x3/1 of ResNet-50, SqueezeNet, DenseNet, Inception; max, avg and sum) run on flat phase
planes (``_phaseplanes``), 3-D ones on ``_poolkern``'s generic kernels (max only).

ops-basic runs: ``lp`` pooling, one window covering the whole input (global pooling:
numpy's reductions are as fast, and its pairwise sums are kept), 3-D avg / sum,
channels-last layouts, dtypes other than float32/float64, non-contiguous arrays."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet_ops_basic.nn.pooling import PoolGeom, PoolingOp

from . import _base
from ._base import ADD, NULL, NumbaOp

_MODES = {"max": 0, "avg": 1, "sum": 2}
#: 3-D avg / sum pooling through the generic kernels (1-D and 2-D take the flat phase
#: planes): measured slower than ops-basic's vectorised slice additions (3x3/1 avg on
#: (16, 64, 28, 28): 4.0 against 3.0 ms forward), as the generic kernels' short rows
#: do not vectorise; kept for the tests and for geometries where that changes
GENERIC_SUMS = False
_ONES = {dt: np.ones((1, 1, 1), dtype=dt) for dt in _base.DTYPES}


class _Plan:
    """Per data shape: the 3-D geometry the kernels take, or ``ok = False`` (ops-basic)."""

    __slots__ = ("ok", "g", "k", "s", "p", "ext", "padded", "in3", "out3", "tiles", "pool2x2", "flat")

    def __init__(self, param: Any, dshape: tuple) -> None:
        self.ok = False
        if len(dshape) not in (3, 4, 5) or param.pool_type not in _MODES:
            return
        g = self.g = PoolGeom(param, dshape)
        if g.whole:
            return
        lead = 3 - g.nd
        self.k = (1,) * lead + tuple(int(v) for v in g.kernel)
        self.s = (1,) * lead + tuple(int(v) for v in g.stride)
        self.p = (0,) * lead + tuple(int(v) for v in g.pad)
        self.ext = (1,) * lead + tuple(int(v) for v in g.ext)
        self.padded = bool(g.needs_pad)
        nc = int(dshape[0]) * int(dshape[1])
        self.in3 = (nc,) + (1,) * lead + tuple(int(v) for v in g.in_sp)
        self.out3 = (nc,) + (1,) * lead + tuple(int(v) for v in g.out_sp)
        self.tiles = bool(g.tiles)
        self.pool2x2 = self.tiles and g.nd == 2 and tuple(g.kernel) == (2, 2)
        #: 1-D / 2-D: the flat phase-plane kernels (``_phaseplanes``): (kh, kw, sh, sw, ph,
        #: pw, PH, PW), or None
        self.flat = None
        if g.nd <= 2 and not self.pool2x2:
            (kh, kw), (sh, sw), (ph, pw) = self.k[1:], self.s[1:], self.p[1:]
            (H, W), (OH, OW) = self.in3[2:], self.out3[2:]
            PW = max(OW + (kw - 1) // sw, (pw + W - 1) // sw + 1)
            PH = max(OH + (kh - 1) // sh, (ph + H - 1) // sh + 1) + 1   # a row for the last run's overhang
            self.flat = (kh, kw, sh, sw, ph, pw, PH, PW)
        self.ok = param.pool_type == "max" or self.pool2x2 or self.flat is not None or GENERIC_SUMS


class NumbaPoolingOp(NumbaOp):
    fallback = PoolingOp

    def __init__(self, prop: Any) -> None:
        super().__init__(prop)
        self._plans: dict = {}
        self.mode = _MODES.get(self.p.pool_type, -1)

    def plan(self, dshape: tuple) -> _Plan:
        pl = self._plans.get(dshape)
        if pl is None:
            pl = self._plans[dshape] = _Plan(self.p, dshape)
        return pl

    def _div(self, pl: _Plan, dtype: Any) -> Any:
        if self.mode != 1:
            return _ONES[np.dtype(dtype)]
        return pl.g.divisor(np, self.p.count_include_pad is not False, dtype).reshape(pl.out3[1:])

    def _runs(self, arrays: list) -> bool:
        p = self.p
        return (self.mode >= 0 and (p.layout is None or p.layout.startswith("NC"))
                and _base.ok_arrays(arrays))

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == NULL:
            return
        x, y = in_data[0], out_data[0]
        pl = self.plan(tuple(x.shape)) if self._runs([x, y]) else None
        K = _base.kernels("_poolkern") if pl is not None and pl.ok else None
        if K is None:
            return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)
        add = req[0] == ADD
        dt = x.dtype.type
        if pl.pool2x2:
            nc = pl.in3[0]
            K.pool2x2_forward(x.reshape((nc,) + pl.in3[2:]), y.reshape((nc,) + pl.out3[2:]), self.mode,
                              self._div(pl, x.dtype)[0], add, dt(0))
            return
        if pl.flat is not None:
            F = _base.kernels("_phaseplanes")
            if F is not None:
                nc = pl.in3[0]
                F.pool_forward(x.reshape((nc,) + pl.in3[2:]), y.reshape((nc,) + pl.out3[2:]), *pl.flat, self.mode,
                               self._div(pl, x.dtype)[0], add, dt(0), dt(-np.inf))
                return
        if not (self.mode == 0 or GENERIC_SUMS):
            return self.xp_op.forward(ctx, in_data, req, out_data, aux_states)
        K.pool_forward(x.reshape(pl.in3), y.reshape(pl.out3), pl.k, pl.s, pl.p, pl.ext, pl.padded, self.mode,
                       self._div(pl, x.dtype), add, dt(0), dt(-np.inf))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        if req[0] == NULL:
            return
        dy, dx = out_grad[0], in_grad[0]
        mx = self.mode == 0
        arrays = [dy, dx] + ([in_data[0], out_data[0]] if mx else [])
        pl = self.plan(tuple(dx.shape)) if self._runs(arrays) else None
        K = _base.kernels("_poolkern") if pl is not None and pl.ok else None
        if K is None:
            return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        add = req[0] == ADD
        dt = dx.dtype.type
        zero, ninf = dt(0), dt(-np.inf)
        dy3, dx3 = dy.reshape(pl.out3), dx.reshape(pl.in3)
        x3 = in_data[0].reshape(pl.in3) if mx else dx3    # avg/sum: an unused stand-in
        y3 = out_data[0].reshape(pl.out3) if mx else dy3
        if pl.pool2x2:
            nc = pl.in3[0]
            sh2, sh3 = (nc,) + pl.in3[2:], (nc,) + pl.out3[2:]
            K.pool2x2_backward(x3.reshape(sh2), y3.reshape(sh3), dy3.reshape(sh3), dx3.reshape(sh2), self.mode,
                               self._div(pl, dx.dtype)[0], add, zero)
            return
        div = self._div(pl, dx.dtype)
        if pl.flat is not None:
            F = _base.kernels("_phaseplanes")
            if F is not None:
                nc = pl.in3[0]
                sh2, sh3 = (nc,) + pl.in3[2:], (nc,) + pl.out3[2:]
                F.pool_backward(x3.reshape(sh2), y3.reshape(sh3), dy3.reshape(sh3), dx3.reshape(sh2), *pl.flat,
                                self.mode, div[0], add, zero, ninf)
                return
        if not (mx or GENERIC_SUMS):
            return self.xp_op.backward(ctx, out_grad, in_data, out_data, req, in_grad, aux_states)
        if pl.tiles:
            K.pool_backward_tiles(x3, y3, dy3, dx3, pl.k, self.mode, div, add, zero)
            return
        K.pool_backward(x3, y3, dy3, dx3, pl.k, pl.s, pl.p, pl.ext, pl.padded, self.mode, div, add, zero, ninf)


def register(registry: Any, available: Any) -> None:
    registry.register_impl("Pooling", "cpu", lambda prop, ctx: NumbaPoolingOp(prop), impl_name="numba",
                           priority=5, available=available)
