"""``sum`` and ``mean`` in MXNet's summation order for every length (``_sumkern``).

ops-basic sums in MXNet's order (sequential, Kahan-compensated, ``tensor/_kahan.py``) with
a numpy loop over the reduced elements, which it takes only for reductions of up to 64
elements; longer ones fall to numpy's pairwise sum there. This implementation runs those
through a compiled loop, so that with the plugin installed every float32 / float64 sum and
mean is MXNet's bit for bit, whatever the size. No size threshold applies (results must
not depend on an array's size): the first long reduction of a process imports numba.
A sequential sum is latency-bound: about 1 ns per element, 20x numpy's pairwise sum over
one long axis and about MXNet's own speed."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet_ops_basic.tensor._kahan import FLOATS, as_rows
from plexnet_ops_basic.tensor.reduce import ReduceOp

from . import _base


class NumbaReduceOp(ReduceOp):
    def ordered_sum(self, xp: Any, x: Any, axes: tuple[int, ...], mean: bool) -> Any | None:
        v = super().ordered_sum(xp, x, axes, mean)
        if v is not None or xp is not np or x.dtype not in FLOATS or x.size == 0:
            return v
        K = _base.kernels("_sumkern")
        if K is None:
            return None
        rows = as_rows(x, axes)
        out = np.empty(rows.shape[1], dtype=x.dtype)
        K.kahan_rows(rows, out)
        if mean:
            out /= x.dtype.type(rows.shape[0])
        return out


def register(registry: Any, available: Any) -> None:
    for name in ("sum", "mean"):
        registry.register_impl(name, "cpu", lambda prop, ctx: NumbaReduceOp(prop), impl_name="numba", priority=5,
                               available=available)
