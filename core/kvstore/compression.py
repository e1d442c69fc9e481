"""2-bit gradient compression with residual (MXNet's ``set_gradient_compression``).

Each element of ``residual + grad`` becomes one of {+t, 0, -t} (t = threshold): +t when
it is ``>= t``, -t when ``<= -t``, else 0; what was not sent stays in the residual and
is added to the next push of the same key. Four elements pack into one byte, element
``4j + m`` in bits ``7-2m..6-2m`` of byte ``j`` with code ``0b11`` for +t and ``0b10``
for -t (MXNet's layout within each 32-bit word). Functions take the array module ``xp``
so that they run on numpy or CuPy arrays.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["quantize_2bit", "dequantize_2bit", "roundtrip_2bit", "packed_size"]

_TABLES: dict[float, np.ndarray] = {}


def packed_size(n: int) -> int:
    """Bytes that hold ``n`` 2-bit codes."""
    return (n + 3) // 4


def quantize_2bit(xp: Any, grad: Any, residual: Any, threshold: float) -> Any:
    """Add ``grad`` to ``residual`` (in place), return the packed uint8 codes and leave
    the unsent remainder in ``residual``."""
    r = residual.reshape(-1)
    r += grad.reshape(-1)
    pos = r >= threshold
    neg = r <= -threshold
    r -= pos * threshold
    r += neg * threshold
    codes = pos.astype(xp.uint8) * 3 + neg.astype(xp.uint8) * 2
    n = codes.size
    pad = (-n) % 4
    if pad:
        codes = xp.concatenate([codes, xp.zeros(pad, dtype=xp.uint8)])
    c = codes.reshape(-1, 4)
    return (c[:, 0] << 6) | (c[:, 1] << 4) | (c[:, 2] << 2) | c[:, 3]


def _table(xp: Any, threshold: float, dtype: Any) -> Any:
    t = _TABLES.get(threshold)
    if t is None:
        b = np.arange(256, dtype=np.uint8)
        codes = np.stack([(b >> 6) & 3, (b >> 4) & 3, (b >> 2) & 3, b & 3], axis=1)
        t = np.where(codes == 3, threshold, np.where(codes == 2, -threshold, 0.0))
        _TABLES[threshold] = t
    return xp.asarray(t.astype(dtype, copy=False))


def dequantize_2bit(xp: Any, packed: Any, n: int, threshold: float, dtype: Any = np.float32) -> Any:
    """The ``n`` values {+t, 0, -t} that ``packed`` encodes (a new flat array)."""
    vals = _table(xp, threshold, dtype)[packed.reshape(-1)]
    return vals.reshape(-1)[:n]


def roundtrip_2bit(xp: Any, grad: Any, residual: Any, threshold: float, out: Any) -> None:
    """``out = dequantize(quantize(grad))`` without packing (for in-process reduction);
    ``residual`` is updated as by ``quantize_2bit``."""
    r = residual.reshape(-1)
    o = out.reshape(-1)
    r += grad.reshape(-1)
    o[...] = (r >= threshold) * threshold
    o -= (r <= -threshold) * threshold
    r -= o
