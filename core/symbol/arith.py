"""Symbol functions that MXNet 1.x defines in Python over ``_``-prefixed operators:
``power``/``hypot`` with a symbol or a number on either side (two numbers give a
number), and the creation functions ``arange``, ``full``, ``eye``, ``linspace`` plus
``histogram`` (``sym.split_v2`` is ``Symbol.split_v2``, in the package)."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .symbol import Symbol, create

__all__ = ["power", "hypot", "arange", "full", "eye", "linspace", "histogram"]


def _num(x: Any) -> bool:
    return isinstance(x, (numbers.Number, np.generic))


def _named(kwargs: dict[str, Any], name: str | None) -> dict[str, Any]:
    if name is not None:
        kwargs["name"] = name
    return kwargs


def power(base: Any, exp: Any, name: str | None = None) -> Any:
    """``base ** exp`` (``_Power``, ``_PowerScalar`` or ``_RPowerScalar``)."""
    if isinstance(base, Symbol) and isinstance(exp, Symbol):
        return create("_Power", (base, exp), _named({}, name))
    if isinstance(base, Symbol) and _num(exp):
        return create("_PowerScalar", (base,), _named({"scalar": float(exp)}, name))
    if _num(base) and isinstance(exp, Symbol):
        return create("_RPowerScalar", (exp,), _named({"scalar": float(base)}, name))
    if _num(base) and _num(exp):
        return base ** exp
    raise TypeError(f"types ({type(base).__name__}, {type(exp).__name__}) not supported")


def hypot(left: Any, right: Any, name: str | None = None) -> Any:
    """``sqrt(left**2 + right**2)`` (``_Hypot`` or ``_HypotScalar``)."""
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return create("_Hypot", (left, right), _named({}, name))
    if isinstance(left, Symbol) and _num(right):
        return create("_HypotScalar", (left,), _named({"scalar": float(right)}, name))
    if _num(left) and isinstance(right, Symbol):
        return create("_HypotScalar", (right,), _named({"scalar": float(left)}, name))
    if _num(left) and _num(right):
        return np.hypot(left, right)  # a numpy float64, as MXNet
    raise TypeError(f"types ({type(left).__name__}, {type(right).__name__}) not supported")


def arange(start: float, stop: float | None = None, step: float = 1.0, repeat: int = 1, infer_range: bool = False,
           name: str | None = None, dtype: Any = None) -> Symbol:
    """Evenly spaced values in ``[start, stop)`` (operator ``_arange``)."""
    return create("_arange", (), _named(dict(start=start, stop=stop, step=step, repeat=repeat,
                                             infer_range=infer_range, dtype=dtype or "float32"), name))


def full(shape: Any, val: float, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A symbol filled with ``val`` (operator ``_full``)."""
    return create("_full", (), dict(kwargs, shape=shape, dtype=dtype or "float32", value=float(val)))


def eye(N: int, M: int = 0, k: int = 0, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Ones on the k-th diagonal (operator ``_eye``)."""
    return create("_eye", (), dict(kwargs, N=N, M=M, k=k, dtype=dtype or "float32"))


def linspace(start: float, stop: float, num: int, endpoint: bool = True, name: str | None = None,
             dtype: Any = None) -> Symbol:
    """``num`` evenly spaced values (operator ``_linspace``)."""
    return create("_linspace", (), _named(dict(start=start, stop=stop, num=num, endpoint=endpoint,
                                               dtype=dtype or "float32"), name))


def histogram(a: Symbol, bins: Any = 10, range: Any = None, **kwargs: Any) -> Symbol:  # noqa: A002
    """``(counts, bin_edges)`` of ``a`` (operator ``_histogram``)."""
    if isinstance(bins, Symbol):
        return create("_histogram", (a, bins), kwargs)
    if isinstance(bins, int):
        if range is None:
            raise ValueError("histogram: null range is not supported in symbol mode; give range=(lo, hi)")
        return create("_histogram", (a,), dict(kwargs, bin_cnt=bins, range=tuple(range)))
    raise ValueError("histogram: bins argument should be either an integer or a Symbol")

