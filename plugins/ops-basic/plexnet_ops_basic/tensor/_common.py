"""Helpers shared by the tensor operator modules (device-generic through ``xp``)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plexnet.base import ShapeError
from plexnet.operator import Operator, OperatorProperty, OpReqType

__all__ = ["NULL", "WRITE", "INPLACE", "ADD", "store", "accumulate", "sum_to", "norm_axis",
           "norm_axes", "shape_error", "XpOperator", "OneInputProp", "register_op", "prod", "special",
           "fill_zero", "dtype_name"]

# OpReqType values as plain ints: cheap to compare on the NDArray fast path.
NULL, WRITE, INPLACE, ADD = int(OpReqType.null), int(OpReqType.write), int(OpReqType.inplace), int(OpReqType.add)


def store(xp: Any, out: Any, req: Any, value: Any) -> None:
    """``ASSIGN_DISPATCH`` that also broadcasts ``value`` and casts it to ``out``'s dtype
    (a float result into an integer output truncates, as MXNet's ``DType`` casts do)."""
    if req == ADD:
        xp.add(out, value, out=out, casting="unsafe")
    elif req and value is not out:
        xp.copyto(out, value, casting="unsafe")


def accumulate(xp: Any, out: Any, value: Any) -> None:
    xp.add(out, value, out=out, casting="unsafe")


def fill_zero(out: Any, req: Any) -> None:
    """Zero gradient: write zeros (``add`` leaves ``out`` as it is)."""
    if req and req != ADD:
        out[...] = 0


def prod(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def sum_to(xp: Any, g: Any, shape: Sequence[int]) -> Any:
    """Sum ``g`` over the axes that were broadcast to reach ``g.shape`` from ``shape``."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and g.shape[lead + i] != 1)
    return g.sum(axis=axes).reshape(shape) if axes else g.reshape(shape)


def shape_error(op: str, msg: str) -> ShapeError:
    return ShapeError(f"{op}: {msg}")


def norm_axis(op: str, axis: int, ndim: int, arg: str = "axis", shape: Any = None) -> int:
    """A non-negative axis for an array of ``ndim`` dims (ShapeError when out of range)."""
    if not -ndim <= axis < ndim:
        what = f"input shape {tuple(shape)}" if shape is not None else f"a {ndim}-d input"
        raise shape_error(op, f"argument {arg!r}={axis} is out of range for {what} "
                              f"(allowed: [{-ndim}, {ndim - 1}])")
    return axis % ndim


def norm_axes(op: str, axes: Sequence[int], ndim: int, arg: str = "axis", shape: Any = None) -> tuple[int, ...]:
    out = tuple(norm_axis(op, a, ndim, arg, shape) for a in axes)
    if len(set(out)) != len(out):
        raise shape_error(op, f"argument {arg!r}={tuple(axes)} repeats an axis")
    return out


def dtype_name(dt: Any) -> str:
    return np.dtype(dt).name


class XpOperator(Operator):
    """Base of the device-generic operators: keeps the property and its params."""

    __slots__ = ("prop", "param")

    def __init__(self, prop: OperatorProperty) -> None:
        self.prop = prop
        self.param = prop.param


class OneInputProp(OperatorProperty):
    """One input, one output of shape ``out_shape(s)`` (``s``: the input's shape as a
    tuple); backward needs only the output gradient."""

    def out_shape(self, s: tuple) -> tuple:
        raise NotImplementedError

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        s = in_shape[0]
        if s is None:
            return [None], [None], []
        s = tuple(s)
        return [s], [tuple(self.out_shape(s))], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return list(out_grad)


def register_op(registry: Any, name: str, prop_cls: type[OperatorProperty], op_cls: Callable[..., Operator],
                aliases: Sequence[str] = ()) -> None:
    """Register semantics plus the device-generic ``xp`` implementation."""
    registry.register_property(name, prop_cls, aliases=tuple(aliases))
    registry.register_impl(name, "*", lambda prop, ctx: op_cls(prop), impl_name="xp")


_special_cache: dict[tuple[str, str], Any] = {}


def special(xp: Any, name: str) -> Any:
    """``scipy.special.NAME`` for numpy, ``cupyx.scipy.special.NAME`` for CuPy, or None."""
    key = (getattr(xp, "__name__", str(xp)), name)
    if key not in _special_cache:
        fn = None
        try:
            if key[0] == "cupy":
                import cupyx.scipy.special as sp  # type: ignore[import-not-found]
            else:
                import scipy.special as sp  # type: ignore[import-not-found]
            fn = getattr(sp, name, None)
        except Exception:  # noqa: BLE001 - optional dependency
            fn = None
        _special_cache[key] = fn
    return _special_cache[key]
