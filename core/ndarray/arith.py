"""Operator functions that MXNet 1.x defines in Python rather than as registered operators:
arithmetic and comparison that accept an NDArray or a scalar on either side
(``nd.maximum(2, x)``, ``nd.power(x, 3)``, ``nd.equal(2, 2) -> 1``), and the creation
functions ``eye``/``linspace``/``histogram``/``split_v2``/``onehot_encode`` over their
``_``-prefixed operators.

Array-array calls broadcast (``broadcast_*``); array-scalar calls use the ``_*_scalar``
operators, the reflected ones (``_rminus_scalar``, ``_lesser_scalar`` for ``greater``...)
when the scalar is on the left; scalar-scalar calls return a Python number, as MXNet.
"""
from __future__ import annotations

import numbers
import operator as _pyop
from typing import Any, Callable

import numpy as np

from .invoke import _binary, invoke
from .ndarray import NDArray

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum", "minimum",
           "hypot", "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and",
           "logical_or", "logical_xor", "eye", "linspace", "histogram", "split_v2", "onehot_encode"]


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) and not isinstance(x, NDArray)


def _ufunc(lhs: Any, rhs: Any, array_op: str, scalar_op: str, rscalar_op: str | None,
           pyfn: Callable[[Any, Any], Any]) -> Any:
    """MXNet's ``_ufunc_helper``: dispatch on which side is a scalar."""
    if _is_scalar(lhs):
        if _is_scalar(rhs):
            return pyfn(lhs, rhs)
        if not isinstance(rhs, NDArray):
            raise TypeError(f"type {type(rhs).__name__} not supported")
        return _binary(array_op, rscalar_op or scalar_op, rhs, float(lhs))
    if not isinstance(lhs, NDArray):
        raise TypeError(f"type {type(lhs).__name__} not supported")
    if _is_scalar(rhs):
        return _binary(array_op, scalar_op, lhs, float(rhs))
    if isinstance(rhs, NDArray):
        return _binary(array_op, scalar_op, lhs, rhs)
    raise TypeError(f"type {type(rhs).__name__} not supported")


def _cmp(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], int]:
    return lambda x, y: 1 if fn(x, y) else 0


def _mod(x: Any, y: Any) -> Any:
    return x % y


def add(lhs: Any, rhs: Any) -> Any:
    """``lhs + rhs`` with broadcasting; either side may be a scalar."""
    return _ufunc(lhs, rhs, "broadcast_add", "_plus_scalar", None, _pyop.add)


def subtract(lhs: Any, rhs: Any) -> Any:
    """``lhs - rhs`` with broadcasting; either side may be a scalar."""
    return _ufunc(lhs, rhs, "broadcast_sub", "_minus_scalar", "_rminus_scalar", _pyop.sub)


def multiply(lhs: Any, rhs: Any) -> Any:
    """``lhs * rhs`` with broadcasting; either side may be a scalar."""
    return _ufunc(lhs, rhs, "broadcast_mul", "_mul_scalar", None, _pyop.mul)


def divide(lhs: Any, rhs: Any) -> Any:
    """``lhs / rhs`` with broadcasting; either side may be a scalar."""
    return _ufunc(lhs, rhs, "broadcast_div", "_div_scalar", "_rdiv_scalar", _pyop.truediv)


true_divide = divide


def modulo(lhs: Any, rhs: Any) -> Any:
    """``lhs mod rhs`` (sign of the divisor) with broadcasting; either side may be a scalar."""
    return _ufunc(lhs, rhs, "broadcast_mod", "_mod_scalar", "_rmod_scalar", _mod)


def power(base: Any, exp: Any) -> Any:
    """``base ** exp`` with broadcasting; either side may be a scalar."""
    return _ufunc(base, exp, "broadcast_power", "_power_scalar", "_rpower_scalar", _pyop.pow)


def maximum(lhs: Any, rhs: Any) -> Any:
    """Element-wise maximum with broadcasting; either side may be a scalar."""
    return _ufunc(lhs, rhs, "broadcast_maximum", "_maximum_scalar", None, lambda x, y: x if x > y else y)


def minimum(lhs: Any, rhs: Any) -> Any:
    """Element-wise minimum with broadcasting; either side may be a scalar."""
    return _ufunc(lhs, rhs, "broadcast_minimum", "_minimum_scalar", None, lambda x, y: x if x < y else y)


def hypot(lhs: Any, rhs: Any) -> Any:
    """``sqrt(lhs**2 + rhs**2)`` with broadcasting; either side may be a scalar."""
    return _ufunc(lhs, rhs, "broadcast_hypot", "_hypot_scalar", None, lambda x, y: float(np.hypot(x, y)))


def equal(lhs: Any, rhs: Any) -> Any:
    """1 where ``lhs == rhs`` else 0 (in the input's dtype)."""
    return _ufunc(lhs, rhs, "broadcast_equal", "_equal_scalar", None, _cmp(_pyop.eq))


def not_equal(lhs: Any, rhs: Any) -> Any:
    """1 where ``lhs != rhs`` else 0."""
    return _ufunc(lhs, rhs, "broadcast_not_equal", "_not_equal_scalar", None, _cmp(_pyop.ne))


def greater(lhs: Any, rhs: Any) -> Any:
    """1 where ``lhs > rhs`` else 0."""
    return _ufunc(lhs, rhs, "broadcast_greater", "_greater_scalar", "_lesser_scalar", _cmp(_pyop.gt))


def greater_equal(lhs: Any, rhs: Any) -> Any:
    """1 where ``lhs >= rhs`` else 0."""
    return _ufunc(lhs, rhs, "broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar",
                  _cmp(_pyop.ge))


def lesser(lhs: Any, rhs: Any) -> Any:
    """1 where ``lhs < rhs`` else 0."""
    return _ufunc(lhs, rhs, "broadcast_lesser", "_lesser_scalar", "_greater_scalar", _cmp(_pyop.lt))


def lesser_equal(lhs: Any, rhs: Any) -> Any:
    """1 where ``lhs <= rhs`` else 0."""
    return _ufunc(lhs, rhs, "broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar",
                  _cmp(_pyop.le))


def logical_and(lhs: Any, rhs: Any) -> Any:
    """1 where both are non-zero else 0."""
    return _ufunc(lhs, rhs, "broadcast_logical_and", "_logical_and_scalar", None, _cmp(lambda x, y: x and y))


def logical_or(lhs: Any, rhs: Any) -> Any:
    """1 where either is non-zero else 0."""
    return _ufunc(lhs, rhs, "broadcast_logical_or", "_logical_or_scalar", None, _cmp(lambda x, y: x or y))


def logical_xor(lhs: Any, rhs: Any) -> Any:
    """1 where exactly one is non-zero else 0."""
    return _ufunc(lhs, rhs, "broadcast_logical_xor", "_logical_xor_scalar", None,
                  _cmp(lambda x, y: bool(x) != bool(y)))


def eye(N: int, M: int = 0, k: int = 0, ctx: Any = None, dtype: Any = None, **kwargs: Any) -> NDArray:
    """A 2-D array with ones on the k-th diagonal (operator ``_eye``)."""
    return invoke("_eye", (), dict(N=N, M=M, k=k, ctx=ctx, dtype=dtype or "float32", **kwargs))


def linspace(start: float, stop: float, num: int, endpoint: bool = True, ctx: Any = None, dtype: Any = None,
             **kwargs: Any) -> NDArray:
    """``num`` evenly spaced values from ``start`` to ``stop`` (operator ``_linspace``)."""
    return invoke("_linspace", (), dict(start=start, stop=stop, num=num, endpoint=endpoint, ctx=ctx,
                                        dtype=dtype or "float32", **kwargs))


def histogram(a: NDArray, bins: Any = 10, range: Any = None) -> Any:  # noqa: A002 - MXNet's name
    """``(counts, bin_edges)``: ``bins`` an int (with ``range``) or an NDArray of edges."""
    if isinstance(bins, NDArray):
        return invoke("_histogram", (a, bins), {})
    if isinstance(bins, int):
        if range is None:
            raise ValueError("histogram: null range is not supported in symbol mode; give range=(lo, hi)")
        return invoke("_histogram", (a,), {"bin_cnt": bins, "range": tuple(range)})
    raise ValueError("histogram: bins argument should be either an integer or an NDArray")


def split_v2(ary: NDArray, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> Any:
    """Split into sections (an int: equal parts) or at the given indices (operator ``_split_v2``)."""
    kw: dict[str, Any]
    if isinstance(indices_or_sections, int):
        kw = {"sections": indices_or_sections}
    else:
        kw = {"indices": (0,) + tuple(indices_or_sections)}
    return invoke("_split_v2", (ary,), dict(kw, axis=axis, squeeze_axis=squeeze_axis))


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """One-hot rows of ``indices`` written into ``out`` (legacy; ``one_hot`` is the operator)."""
    return invoke("_onehot_encode", (indices, out), {"out": out})
