"""Embedding, MXNet 1.x semantics: ``out[..., :] = weight[clip(int(data), 0,
input_dim - 1)]``; output shape ``data.shape + (output_dim,)``.

The weight gradient is a scatter-add of the head gradient rows (``scatter_add_rows``); the
indices get a zero gradient. ``sparse_grad`` is accepted but the gradient is dense.
"""
from __future__ import annotations

import numpy as np  # dtype handling only

from plexnet.operator import Field, Operator, OperatorProperty, OpReqType, Params

from ..tensor._common import take_in_range
from ..tensor.indexing import scatter_add_rows
from ._common import shape_assign, writes


class EmbeddingParam(Params):
    input_dim = Field(int, low=1, doc="vocabulary size")
    output_dim = Field(int, low=1, doc="embedding size")
    dtype = Field("dtype", default="float32", doc="type of weight and output")
    sparse_grad = Field(bool, default=False, doc="row_sparse gradient in MXNet (dense here)")


class EmbeddingOp(Operator):
    def __init__(self, param: EmbeddingParam) -> None:
        self.p = param

    def _idx(self, xp, data):
        idx = data.astype(np.int64) if data.dtype.kind != "i" or data.dtype != np.int64 else data
        return xp.clip(idx, 0, self.p.input_dim - 1)

    def forward(self, ctx, in_data, req, out_data, aux_states):
        if req[0] == OpReqType.null:
            return
        xp = ctx.xp
        idx = self._idx(xp, in_data[0])
        w = in_data[1]
        out = out_data[0]
        if writes(req[0]):
            take_in_range(xp, w, idx.reshape(-1), 0, out.reshape(-1, self.p.output_dim))
        else:
            out += take_in_range(xp, w, idx, 0)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):
        xp = ctx.xp
        if writes(req[0]):
            in_grad[0][...] = 0
        if req[1] == OpReqType.null:
            return
        idx = self._idx(xp, in_data[0]).reshape(-1)
        dy = out_grad[0].reshape(-1, self.p.output_dim)
        dw = in_grad[1]
        if writes(req[1]):
            dw[...] = 0
        scatter_add_rows(xp, dw, idx, dy)


class EmbeddingProp(OperatorProperty):
    param_cls = EmbeddingParam

    def list_arguments(self):
        return ["data", "weight"]

    def infer_shape(self, in_shape):
        p = self.param
        shapes = [None if s is None else tuple(int(v) for v in s) for s in in_shape]
        shape_assign(self.op_name, shapes, 1, self.list_arguments(), (p.input_dim, p.output_dim))
        d = shapes[0]
        return shapes, [None if d is None else d + (p.output_dim,)], []

    def infer_type(self, in_type):
        if in_type[0] is None:  # as MXNet ("First input must have specified type")
            raise TypeError(f"{self.op_name}: the type of input 'data' (the indices) must be known; give it "
                            f"(type_dict / infer_type(data=...)) or a __dtype__ attribute")
        wt = in_type[1] if in_type[1] is not None else np.dtype(self.param.dtype)
        return [in_type[0], wt], [wt], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0]]


def register(registry):
    registry.register_property("Embedding", EmbeddingProp)
    registry.register_impl("Embedding", "*", lambda prop, ctx: EmbeddingOp(prop.param), impl_name="xp")
