"""MXNet's summation order for ``sum``, ``mean`` and ``norm`` (float32 / float64 on the CPU).

MXNet 1.9.1 reduces every output sequentially over its reduced elements, in row-major
order of the reduced axes, with Kahan compensation in the input's dtype and the
compensation reset wherever the running sum is infinite (mshadow's ``red::sum``)::

    y = x - r ; t = s + y ; r = 0 if isinf(t) else (t - s) - y ; s = t

``mean`` divides that sum by the count. numpy's pairwise summation rounds otherwise (a
sum over 10 elements differed from MXNet's in 47 % of outputs, over 1,000 in 76 %).

Its L2 ``norm`` is the scaled ``nrm2`` reducer (a running maximum ``scale``; the sum of
squares restarts as ``1 + ssq * (scale / a) * (scale / a)`` when ``a = |x|`` exceeds it and
grows by ``(a / scale) * (a / scale)`` otherwise; ``scale * sqrt(ssq)`` at the end), its L1
norm the compensated sum of ``|x|``.

Here the loop runs over the reduced elements and each step is vectorised over the
outputs, so it is cheap where the reduced length is short (a loss's mean over classes,
a sum over a small axis): up to ``KAHAN_MAX`` reduced elements and ``KAHAN_MAX_ELEMENTS``
in all. Longer reductions need a compiled loop (``plexnet-ops-numba`` registers one);
without it they keep numpy's pairwise sum, within an ulp or two of MXNet's.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["KAHAN_MAX", "KAHAN_MAX_ELEMENTS", "FLOATS", "as_rows", "kahan_rows", "nan_kahan_rows", "nrm2_rows",
           "mxnet_sum", "mxnet_norm"]

#: longest reduction the numpy loop takes (one step of five ufuncs per reduced element)
KAHAN_MAX = 64
#: most input elements the numpy loop takes
KAHAN_MAX_ELEMENTS = 1 << 20
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def as_rows(x: Any, axes: Sequence[int]) -> Any:
    """``x`` as a C-contiguous ``(K, M)`` array: row ``k`` holds the ``k``-th reduced
    element (row-major over ``axes``) of every output (row-major over the other axes)."""
    axes = tuple(sorted(axes))
    keep = tuple(a for a in range(x.ndim) if a not in axes)
    K = 1
    for a in axes:
        K *= x.shape[a]
    return np.ascontiguousarray(x.transpose(axes + keep)).reshape(K, -1)


def _compensated(rows: Any, reset_at_inf: bool, skip_nan: bool) -> Any:
    """The loop behind ``kahan_rows`` / ``nan_kahan_rows``: column sums of ``rows`` down
    its rows, compensated, optionally resetting the compensation where the running sum is
    infinite and leaving NaN elements out (sum and compensation unchanged)."""
    s = np.zeros(rows.shape[1], dtype=rows.dtype)
    r = np.zeros_like(s)
    with np.errstate(over="ignore", invalid="ignore"):
        for row in rows:
            y = row - r
            t = s + y
            nr = t - s
            nr -= y
            if reset_at_inf:
                nr[np.isinf(t)] = 0
            if skip_nan:
                keep = ~np.isnan(row)
                np.copyto(s, t, where=keep)
                np.copyto(r, nr, where=keep)
            else:
                s, r = t, nr
    return s


def kahan_rows(rows: Any) -> Any:
    """The compensated sums of the columns of ``rows`` (``(K, M)``), MXNet's order. The
    reset at infinity is needed only when a running sum went infinite, which the final
    sums show (an infinite running sum never becomes finite again): rerun with it then."""
    s = _compensated(rows, False, False)
    if not np.isfinite(s).all():
        s = _compensated(rows, True, False)
    return s


def nan_kahan_rows(rows: Any) -> Any:
    """``nansum``'s compensated sums of the columns of ``rows``: MXNet's ``red::nansum``
    skips NaN elements (sum and compensation unchanged). MXNet's has no reset at infinity
    (``nansum([inf, 1])`` is NaN there, a kernel bug); this one keeps ``sum``'s reset, so
    an infinite sum stays infinite (docs/porting.md)."""
    return _compensated(rows, True, True)


def nrm2_rows(rows: Any) -> Any:
    """MXNet's scaled L2 norms of the columns of ``rows`` (``(K, M)``), its order."""
    one = rows.dtype.type(1)
    ssq = np.zeros(rows.shape[1], dtype=rows.dtype)
    scale = np.zeros_like(ssq)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        for row in rows:
            a = np.abs(row)
            nonzero = a != 0
            grow = nonzero & (scale < a)
            q = scale / a
            restarted = ssq * q
            restarted *= q
            restarted += one
            p = a / scale
            p *= p
            p += ssq
            np.copyto(ssq, p, where=nonzero)
            np.copyto(ssq, restarted, where=grow)
            np.copyto(scale, a, where=grow)
        return scale * np.sqrt(ssq)


def _short(x: Any, axes: Sequence[int]) -> bool:
    """The numpy loop applies: a float numpy array, not empty, within the limits."""
    if x.dtype not in FLOATS or x.size == 0 or x.size > KAHAN_MAX_ELEMENTS:
        return False
    K = 1
    for a in axes:
        K *= x.shape[a]
    return K <= KAHAN_MAX


def mxnet_norm(xp: Any, x: Any, axes: Sequence[int], order: int) -> Any | None:
    """MXNet's ``norm`` (``order`` 1 or 2) of ``x`` over ``axes`` (shaped as the kept axes,
    row-major), or None where the numpy loop does not apply."""
    if xp is not np or not _short(x, axes):
        return None
    rows = as_rows(x, axes)
    return kahan_rows(np.abs(rows)) if order == 1 else nrm2_rows(rows)


def mxnet_sum(xp: Any, x: Any, axes: Sequence[int], mean: bool, skip_nan: bool = False) -> Any | None:
    """``sum`` (``mean``; ``nansum`` with ``skip_nan``) of ``x`` over ``axes`` in MXNet's
    order, shaped as the kept axes (row-major), or None where the numpy loop does not apply
    (another array module or dtype, an empty input, a reduction longer than the limits)."""
    if xp is not np or not _short(x, axes):
        return None
    rows = as_rows(x, axes)
    s = nan_kahan_rows(rows) if skip_nan else kahan_rows(rows)
    if mean:
        s /= x.dtype.type(rows.shape[0])
    return s
