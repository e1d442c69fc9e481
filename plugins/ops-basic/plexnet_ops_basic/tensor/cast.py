"""``Cast`` (``cast``): convert to another dtype; the gradient is cast back to the
input's dtype. Float to integer truncates toward zero (C casts, as MXNet)."""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, OperatorProperty, Params

from ._common import NULL, XpOperator, register_op, store

__all__ = ["register", "CAST_DTYPES"]

#: MXNet's list without bfloat16 (numpy has no bfloat16)
CAST_DTYPES = ("bool", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


class CastParam(Params):
    dtype = Field("dtype", choices=CAST_DTYPES, doc="output dtype")


class CastProp(OperatorProperty):
    """Convert the data type."""
    param_cls = CastParam
    backfill_shapes = True  # the input takes the output's shape in symbolic inference (MXNet's ElemwiseShape)

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        return [in_type[0]], [np.dtype(self.param.dtype)], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return list(out_grad)


class CastOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        if req[0] != NULL:
            store(ctx.xp, out_data[0], req[0], in_data[0])

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        if req[0] != NULL:
            store(ctx.xp, in_grad[0], req[0], out_grad[0])


def register(registry: Any) -> None:
    register_op(registry, "Cast", CastProp, CastOp, ("cast",))
