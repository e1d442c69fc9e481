"""Helpers shared by the neural-network operators (not an operator module)."""
from __future__ import annotations

from typing import Any, Sequence

from plexnet.base import ShapeError
from plexnet.operator import OpReqType, assign

__all__ = ["assign", "OpReqType", "shape_assign", "ShapeError", "writes", "accumulate", "fmt_shape",
           "prod", "check_ndim"]


def prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def fmt_shape(s: Any) -> str:
    return "None" if s is None else str(tuple(s))


def shape_assign(op: str, shapes: list, idx: int, names: Sequence[str], want: Any) -> None:
    """``SHAPE_ASSIGN_CHECK``: fill ``shapes[idx]`` with ``want`` or check it agrees."""
    if want is None:
        return
    want = tuple(int(x) for x in want)
    have = shapes[idx]
    if have is None:
        shapes[idx] = want
    elif tuple(have) != want:
        raise ShapeError(f"{op}: argument {names[idx]!r} has shape {fmt_shape(have)}, expected {want}"
                         f" (input shapes: {', '.join(f'{n}={fmt_shape(s)}' for n, s in zip(names, shapes))})")


def check_ndim(op: str, name: str, shape: Any, ndims: Sequence[int], hint: str = "") -> None:
    if shape is not None and len(shape) not in ndims:
        raise ShapeError(f"{op}: argument {name!r} must have {' or '.join(map(str, ndims))} dimensions, "
                         f"got shape {fmt_shape(shape)}{hint}")


def writes(req: OpReqType) -> bool:
    """True when ``req`` overwrites (write or inplace)."""
    return req == OpReqType.write or req == OpReqType.inplace


def accumulate(xp: Any, out: Any, req: OpReqType, value: Any) -> None:
    """``assign`` that also accepts a broadcastable ``value`` for write."""
    if req == OpReqType.null:
        return
    if req == OpReqType.add:
        out += value
    elif value is not out:
        out[...] = value
