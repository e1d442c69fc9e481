"""``nd.zeros`` / ``nd.ones`` as MXNet 1.x's ``_zeros`` / ``_ones`` see shapes.

Outside ``mx.np_shape()`` MXNet 1.x reads a 0 dimension (and the 0-d shape ``()``) as
"unknown", so ``nd.zeros((0, 3))`` and ``nd.ones(())`` fail shape inference there
(``nd.empty``, ``nd.full`` and ``nd.array`` do not check). These are the public
functions; plexnet's own code calls ``plexnet.ndarray.ndarray.zeros``, which keeps
zero-size arrays working (gradient buffers of an empty batch, docs/operators.md).
"""
from __future__ import annotations

from typing import Any

from ..base import ShapeError
from ..util import is_np_shape
from . import ndarray as _nd

__all__ = ["zeros", "ones"]


def _check(shape: Any, op: str) -> None:
    s = (int(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
    if any(d < 0 for d in s):
        raise ShapeError(f"Operator {op}: invalid shape {s}: dimensions must be >= 0")
    if (not s or 0 in s) and not is_np_shape():
        raise ShapeError(f"Operator {op} inferring shapes failed: shape {s} has an unknown dimension "
                         f"(0, or the 0-d shape) outside numpy shape semantics; create zero-size or 0-d "
                         f"arrays under mx.np_shape()")


def zeros(shape: Any, ctx: Any = None, dtype: Any = None, **kw: Any) -> _nd.NDArray:
    """An array of zeros (``out=`` fills a given array)."""
    _check(shape, "_zeros")
    return _nd.zeros(shape, ctx, dtype, **kw)


def ones(shape: Any, ctx: Any = None, dtype: Any = None, **kw: Any) -> _nd.NDArray:
    """An array of ones (``out=`` fills a given array)."""
    _check(shape, "_ones")
    return _nd.ones(shape, ctx, dtype, **kw)
