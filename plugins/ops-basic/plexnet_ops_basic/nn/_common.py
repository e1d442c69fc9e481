"""Helpers shared by the neural-network operators (not an operator module)."""
from __future__ import annotations

from typing import Any, Sequence

from plexnet.base import ShapeError
from plexnet.operator import OperatorProperty, OpReqType, assign

__all__ = ["assign", "OpReqType", "shape_assign", "ShapeError", "writes", "accumulate", "fmt_shape",
           "prod", "check_ndim", "HiddenOutputProp"]


def prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def fmt_shape(s: Any) -> str:
    return "None" if s is None else str(tuple(s))


def shape_assign(op: str, shapes: list, idx: int, names: Sequence[str], want: Any) -> None:
    """``SHAPE_ASSIGN_CHECK``: fill ``shapes[idx]`` with ``want`` or check it agrees; a 0
    on either side is an unknown dimension (MXNet 1.x's partial shapes: ``__shape__=(3, 0)``)
    that the other fills."""
    if want is None:
        return
    want = tuple(int(x) for x in want)
    have = shapes[idx]
    if have is None:
        shapes[idx] = want
    elif tuple(have) != want:
        if len(have) == len(want) and all(h == w or h == 0 or w == 0 for h, w in zip(have, want)):
            shapes[idx] = tuple(w if h == 0 else h for h, w in zip(have, want))
            return
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
    """``assign(out, req, value)`` (which broadcasts ``value`` for write too); ``xp`` is unused."""
    assign(out, req, value)


class HiddenOutputProp(OperatorProperty):
    """One data input; outputs ``output`` (data's shape) and a hidden second output named
    ``hidden`` that backward reads (Dropout's ``mask``, LRN's ``tmp_norm``,
    L2Normalization's ``norm``). Subclasses give ``hidden_shape(d)``, which also checks
    the data shape ``d``."""

    hidden = ""

    def list_outputs(self):
        return ["output", self.hidden]

    def num_visible_outputs(self):
        return 1

    def hidden_shape(self, d):
        raise NotImplementedError

    def infer_shape(self, in_shape):
        d = None if in_shape[0] is None else tuple(int(v) for v in in_shape[0])
        if d is None:
            return [d], [None, None], []
        return [d], [d, self.hidden_shape(d)], []
