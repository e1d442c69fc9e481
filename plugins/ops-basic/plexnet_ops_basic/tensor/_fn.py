"""A compact way to write an operator as two pure functions (not an operator module).

``FnProp`` subclasses state the signature (``arguments``, ``outputs``), shape and type
inference and which arrays backward reads (``deps``: a subset of ``"out_grad"``,
``"in_data"``, ``"out_data"``); ``compute(xp, ins)`` returns the outputs and
``gradient(xp, ogs, ins, outs)`` the input gradients (``None``: zero). ``FnOp`` stores
results honouring every ``req``. Used by the many small operators whose work is a few
``xp`` calls, so that each one is only its semantics.
"""
from __future__ import annotations

from typing import Any, ClassVar, Sequence

import numpy as np

from plexnet.operator import OperatorProperty
from plexnet.operator.contract import uniform_types

from ._common import NULL, XpOperator, fill_zero, register_op, shape_error, store

__all__ = ["FnProp", "FnOp", "register_fn", "known", "as_dtype"]


def known(shapes: Sequence[Any]) -> bool:
    return all(s is not None for s in shapes)


class FnProp(OperatorProperty):
    """Semantics of a function-style operator (see the module docstring)."""

    arguments: ClassVar[tuple[str, ...]] = ("data",)
    outputs: ClassVar[tuple[str, ...]] = ("output",)
    deps: ClassVar[tuple[str, ...]] = ("out_grad", "in_data", "out_data")
    #: (input index, output index) pairs that may share memory in forward
    inplace: ClassVar[tuple[tuple[int, int], ...]] = ()

    def list_arguments(self) -> list[str]:
        return list(self.arguments)

    def list_outputs(self) -> list[str]:
        return list(self.outputs)

    def error(self, msg: str) -> Exception:
        return shape_error(self.op_name, msg)

    def shapes(self, ins: list) -> tuple[list, list]:
        """``(input shapes, output shapes)`` from known input shapes (all given)."""
        return ins, [ins[0]] * len(self.list_outputs())

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        ins = [tuple(s) if s is not None else None for s in in_shape]
        if not known(ins):
            return ins, [None] * len(self.list_outputs()), []
        i, o = self.shapes(ins)
        return [tuple(s) for s in i], [tuple(s) if s is not None else None for s in o], []

    def out_types(self, in_types: list) -> list:
        t = next((t for t in in_types if t is not None), None)
        return [t] * len(self.list_outputs())

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        ins, _ = uniform_types(in_type, self.free_dtype_inputs)  # no silent promotion
        return ins, self.out_types(ins), []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        d = {"out_grad": out_grad, "in_data": in_data, "out_data": out_data}
        return [i for k in self.deps for i in d[k]]

    def forward_inplace_option(self, in_data: list, out_data: list) -> list:
        return [(in_data[i], out_data[o]) for i, o in self.inplace]

    # -- the computation ---------------------------------------------------------------------------------
    def compute(self, xp: Any, ins: list, ctx: Any) -> list:
        raise NotImplementedError

    def gradient(self, xp: Any, ogs: list, ins: list, outs: list, ctx: Any) -> list:
        raise NotImplementedError(f"{self.op_name} has no gradient")


class FnOp(XpOperator):
    """Runs ``prop.compute`` / ``prop.gradient`` and stores per ``req``."""

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if all(r == NULL for r in req):
            return
        xp = ctx.xp
        res = self.prop.compute(xp, list(in_data), ctx)
        for o, r, v in zip(out_data, req, res):
            if r != NULL:
                store(xp, o, r, v)

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if all(r == NULL for r in req):
            return
        xp = ctx.xp
        res = self.prop.gradient(xp, list(out_grad), list(in_data), list(out_data), ctx)
        for g, r, v in zip(in_grad, req, res):
            if r == NULL:
                continue
            if v is None:
                fill_zero(g, r)
            else:
                if v.shape != g.shape and v.size == g.size:  # a flattened gradient (axis=None)
                    v = v.reshape(g.shape)
                store(xp, g, r, v)


def register_fn(registry: Any, name: str, prop_cls: type[FnProp], aliases: Sequence[str] = ()) -> None:
    register_op(registry, name, prop_cls, FnOp, aliases)


def as_dtype(t: Any) -> Any:
    return None if t is None else np.dtype(t)

