"""``_slice_assign`` / ``_slice_assign_scalar`` (aliases ``_crop_assign`` /
``_crop_assign_scalar``): a copy of the input with ``[begin:end:step]`` replaced by an
array or a scalar (what MXNet's ``x[a:b] = y`` runs). As MXNet 1.9.1 they register no
gradient: binding them with gradients is refused (``differentiable = False``).
"""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field

from ._fn import FnProp, register_fn
from .indexing import SliceParam, slice_key

__all__ = ["register"]


class SliceAssignProp(FnProp):
    """``lhs`` with ``lhs[begin:end:step] = rhs`` (``rhs`` shaped like that slice)."""
    param_cls = SliceParam
    arguments = ("lhs", "rhs")
    deps = ()
    differentiable = False

    def _key(self, shape: tuple) -> tuple[tuple, tuple]:
        p = self.param
        return slice_key(self.op_name, tuple(shape), p.begin, p.end, p.step)

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        lhs = tuple(in_shape[0]) if in_shape[0] is not None else None
        rhs = tuple(in_shape[1]) if in_shape[1] is not None else None
        if lhs is None:
            return [None, rhs], [None], []
        want = self._key(lhs)[1]
        if rhs is not None and rhs != want:
            raise self.error(f"rhs of shape {rhs} does not match the slice {want} of lhs shape {lhs} "
                             f"(begin={tuple(self.param.begin)}, end={tuple(self.param.end)})")
        return [lhs, want], [lhs], []

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        out = ins[0].copy()
        out[self._key(out.shape)[0]] = ins[1]
        return [out]


class SliceAssignScalarParam(SliceParam):
    scalar = Field(float, default=0.0, doc="the value written into the slice")
    field_order = ("scalar", "begin", "end", "step")  # MXNet's declaration (positional) order


class SliceAssignScalarProp(FnProp):
    """``data`` with ``data[begin:end:step] = scalar``."""
    param_cls = SliceAssignScalarParam
    deps = ()
    differentiable = False

    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        p, out = self.param, ins[0].copy()
        out[slice_key(self.op_name, out.shape, p.begin, p.end, p.step)[0]] = p.scalar
        return [out]

    def shapes(self, ins: list) -> tuple[list, list]:
        p = self.param
        slice_key(self.op_name, tuple(ins[0]), p.begin, p.end, p.step)  # validates the range
        return ins, [ins[0]]


def register(registry: Any) -> None:
    register_fn(registry, "_slice_assign", SliceAssignProp, ("_crop_assign",))
    register_fn(registry, "_slice_assign_scalar", SliceAssignScalarProp, ("_crop_assign_scalar",))
