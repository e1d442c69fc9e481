"""``sum``, ``mean``, ``nansum`` and ``norm`` in MXNet's summation order for every length (``_sumkern``).

ops-basic sums in MXNet's order (sequential, Kahan-compensated; the L2 norm by the scaled
``nrm2`` reducer; ``tensor/_kahan.py``) with a numpy loop over the reduced elements, which
it takes only for reductions of up to 64 elements; longer ones fall to numpy's pairwise
sums there. This implementation runs those through a compiled loop, so that with the
plugin installed every float32 / float64 sum, mean and norm is MXNet's bit for bit,
whatever the size. No size threshold applies (results must not depend on an array's
size): the first long reduction of a process imports numba. A sequential sum is
latency-bound: about 1 ns per element, 20x numpy's pairwise sum over one long axis and
about MXNet's own speed."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet_ops_basic.tensor._kahan import FLOATS, as_rows
from plexnet_ops_basic.tensor.reduce import NormOp, ReduceOp

from . import _base


def _compiled(xp: Any, x: Any, axes: tuple[int, ...], kernel: str, *extra: Any, absolute: bool = False) -> Any | None:
    """``_sumkern.<kernel>(rows, out, *extra)`` over the columns of ``x`` seen as ``(K, M)``
    rows (of ``|x|`` when ``absolute``); None where it does not apply or numba cannot load."""
    if xp is not np or x.dtype not in FLOATS or x.size == 0:
        return None
    K = _base.kernels("_sumkern")
    if K is None:
        return None
    rows = as_rows(x, axes)
    out = np.empty(rows.shape[1], dtype=x.dtype)
    getattr(K, kernel)(np.abs(rows) if absolute else rows, out, *extra)
    return out


class NumbaReduceOp(ReduceOp):
    def ordered_sum(self, xp: Any, x: Any, axes: tuple[int, ...], mean: bool, skip_nan: bool = False) -> Any | None:
        v = super().ordered_sum(xp, x, axes, mean, skip_nan)
        if v is not None:
            return v
        v = _compiled(xp, x, axes, "kahan_rows", skip_nan)
        if v is not None and mean:
            v /= x.dtype.type(x.size // max(v.size, 1))
        return v


class NumbaNormOp(NormOp):
    def ordered_norm(self, xp: Any, x: Any, axes: tuple[int, ...], order: int) -> Any | None:
        v = super().ordered_norm(xp, x, axes, order)
        if v is not None:
            return v
        return _compiled(xp, x, axes, "kahan_rows", False, absolute=True) if order == 1 else _compiled(
            xp, x, axes, "nrm2_rows")


def register(registry: Any, available: Any) -> None:
    for name in ("sum", "mean", "nansum"):
        registry.register_impl(name, "cpu", lambda prop, ctx: NumbaReduceOp(prop), impl_name="numba", priority=5,
                               available=available)
    registry.register_impl("norm", "cpu", lambda prop, ctx: NumbaNormOp(prop), impl_name="numba", priority=5,
                           available=available)
