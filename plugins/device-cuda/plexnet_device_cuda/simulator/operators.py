"""``cupy.ndarray``'s operators and numpy dispatch protocols: both go through the
simulated ``cupy`` namespace (``a + b`` is ``cupy.add(a, b)``; a numpy ufunc or function
applied to a simulated array calls CuPy's of the same name), so they are installed on
``ndarray`` once the namespace exists."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .arrays import ndarray
from .namespace import cupy
from .snapshot import MODULES
from .ufuncs import ufunc as ufunc_cls


def _array_ufunc(self: ndarray, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    name = ufunc.__name__
    try:
        cp_ufunc = getattr(cupy, name) if name in MODULES["cupy"] else None
    except AttributeError:
        return NotImplemented
    if cp_ufunc is None or not callable(cp_ufunc):
        return NotImplemented
    if "out" in kwargs:
        out = kwargs["out"]
        if isinstance(out, tuple):
            if len(out) != 1:
                raise ValueError("The 'out' parameter must have exactly one array value")
            kwargs["out"] = out[0]
    if name in ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal"):
        inputs = tuple(x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x for x in inputs)
    if method == "__call__":
        return cp_ufunc(*inputs, **kwargs)
    if method in ("reduce", "accumulate", "reduceat", "outer", "at") and isinstance(cp_ufunc, ufunc_cls):
        return getattr(cp_ufunc, method)(*inputs, **kwargs)
    return NotImplemented


def _array_function(self: ndarray, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    try:
        mod: Any = cupy
        for part in func.__module__.split(".")[1:]:
            mod = getattr(mod, part)
        cupy_func = getattr(mod, func.__name__)
    except AttributeError:
        return NotImplemented
    if cupy_func is func:
        return NotImplemented
    for t in types:
        if t is not ndarray and t is not np.ndarray:
            return NotImplemented
    return cupy_func(*args, **kwargs)


_BINARY_OPS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
               "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
               "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
               "rshift": "right_shift", "divmod": "divmod"}
_COMPARE_OPS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal",
                "ne": "not_equal"}
_UNARY_OPS = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}


def _defer(other: Any) -> bool:
    """CuPy's ``_should_use_rop``: let an operand of higher ``__array_priority__`` (that is
    not a cupy.ndarray) handle the operator."""
    return type(other) is not ndarray and getattr(other, "__array_priority__", 0) > ndarray.__array_priority__


def _binary(fname: str) -> tuple[Callable, Callable, Callable]:
    def op(self: ndarray, other: Any) -> Any:
        if _defer(other):
            return NotImplemented
        return getattr(cupy, fname)(self, other)

    def rop(self: ndarray, other: Any) -> Any:
        if _defer(other):
            return NotImplemented
        return getattr(cupy, fname)(other, self)

    def iop(self: ndarray, other: Any) -> Any:
        if _defer(other):
            return NotImplemented
        getattr(cupy, fname)(self, other, out=self)
        return self
    return op, rop, iop


def install() -> None:
    """Set the operators and numpy protocols on ``ndarray`` (once, when the package is
    imported)."""
    ndarray.__array_ufunc__ = _array_ufunc  # type: ignore[attr-defined]
    ndarray.__array_function__ = _array_function  # type: ignore[attr-defined]
    for short, fname in _BINARY_OPS.items():
        op, rop, iop = _binary(fname)
        setattr(ndarray, f"__{short}__", op)
        setattr(ndarray, f"__r{short}__", rop)
        if short != "divmod":
            setattr(ndarray, f"__i{short}__", iop)
    for short, fname in _COMPARE_OPS.items():
        op, _rop, _iop = _binary(fname)
        setattr(ndarray, f"__{short}__", op)
    for short, fname in _UNARY_OPS.items():
        setattr(ndarray, f"__{short}__", (lambda f: lambda self: getattr(cupy, f)(self))(fname))
