"""Operators that exist only for MXNet's sparse storage: ``_sparse_retain``
(``sym.sparse.retain``), ``_sparse_adagrad_update`` (``sym.sparse.adagrad_update``) and
``_square_sum`` (``sum(square(x))`` in one operator; row_sparse in, row_sparse out for
``axis=1, keepdims=True``).

Registered as a built-in plugin (``plexnet.plugins.BUILTIN_MODULES``) so that symbols
can hold them. On sparse arrays the symbolic executor runs the sparse kernels
(``nd.sparse.retain``, the lazy AdaGrad of ``core/ndarray/sparse/optim.py``); the dense
implementations below are what a graph bound to dense arrays runs:

* ``_sparse_retain(data, indices)``: the rows of ``data`` listed in ``indices``, zeros
  elsewhere; the gradient of ``data`` is the head gradient on those rows (MXNet's
  ``_backward_sparse_retain``), ``indices`` gets none.
* ``_sparse_adagrad_update(weight, grad, history)``: as MXNet 1.9.1, only row_sparse
  gradients are supported; a dense one is refused naming the operator.
* ``_scatter_elemwise_div(lhs, rhs)``, ``_scatter_plus_scalar(data, scalar)``,
  ``_scatter_minus_scalar(data, scalar)``: ``lhs / rhs``, ``data + scalar``, ``data - scalar``
  on the stored entries of a csr/row_sparse first input (row_sparse only for the division; the
  structure is kept), densely otherwise.
* ``_square_sum(data, axis, keepdims, exclude)``: ``sum(data**2)`` over ``axis``; gradient
  ``2 * data * head gradient``. On a row_sparse array with ``axis=1, keepdims=True`` the
  NDArray call returns row_sparse (the input's rows), as MXNet's.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..base import PlexnetError, ShapeError
from ..hookspecs import hookimpl
from ..operator.contract import OpContext, Operator, OperatorProperty, OpReqType, assign
from ..operator.params import Field, Params, Shape
from ..operator.simple_op import SimpleOp

__all__ = ["RetainProp", "AdagradProp", "SquareSumProp", "SCATTER_OPS"]

#: MXNet's ``_scatter_*`` operators: dense semantics of the plain operator; on a sparse first
#: input only its stored entries change (the result keeps its structure)
SCATTER_OPS = ("_scatter_elemwise_div", "_scatter_plus_scalar", "_scatter_minus_scalar")


class RetainProp(OperatorProperty):
    """``_sparse_retain(data, indices)``: keep the rows of ``data`` whose ids are in
    ``indices`` (MXNet's ``sparse.retain``); other rows are zero."""

    free_dtype_inputs = (1,)

    def list_arguments(self) -> list[str]:
        return ["data", "indices"]

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        data, idx = in_shape
        if idx is not None and len(idx) != 1:
            raise ShapeError(f"_sparse_retain: indices must be 1-D, got shape {tuple(idx)}")
        return [data, idx], [data], []

    def infer_type(self, in_type: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        data, idx = in_type
        return [data, idx if idx is not None else np.dtype(np.int64)], [data], []

    def declare_backward_dependency(self, out_grad: list[int], in_data: list[int],
                                    out_data: list[int]) -> list[int]:
        return list(out_grad) + [in_data[1]]


class _RetainOp(Operator):
    def forward(self, ctx: OpContext, in_data: Sequence[Any], req: Sequence[OpReqType],
                out_data: Sequence[Any], aux_states: Sequence[Any]) -> None:
        data, idx = in_data
        keep = np.zeros(data.shape[0], dtype=bool)
        keep[np.asarray(idx).astype(np.int64)] = True
        res = data * keep.reshape((-1,) + (1,) * (data.ndim - 1)).astype(data.dtype)
        assign(out_data[0], req[0], res)

    def backward(self, ctx: OpContext, out_grad: Sequence[Any], in_data: Sequence[Any],
                 out_data: Sequence[Any], req: Sequence[OpReqType], in_grad: Sequence[Any],
                 aux_states: Sequence[Any]) -> None:
        og, idx = out_grad[0], in_data[1]
        keep = np.zeros(og.shape[0], dtype=bool)
        keep[np.asarray(idx).astype(np.int64)] = True
        assign(in_grad[0], req[0], og * keep.reshape((-1,) + (1,) * (og.ndim - 1)).astype(og.dtype))
        if req[1] in (OpReqType.write, OpReqType.inplace):
            in_grad[1][...] = 0


class AdagradParam(Params):
    lr = Field(float, doc="learning rate")
    epsilon = Field(float, default=1e-7, doc="added to the denominator")
    wd = Field(float, default=0.0, doc="weight decay (MXNet's sparse AdaGrad supports only 0)")
    rescale_grad = Field(float, default=1.0, doc="the gradient is multiplied by it first")
    clip_gradient = Field(float, default=-1.0, doc="clip to [-clip_gradient, clip_gradient]; negative: off")


class AdagradProp(OperatorProperty):
    """MXNet's sparse AdaGrad update (``sparse.adagrad_update``): ``history += g**2``;
    ``weight -= lr * g / (sqrt(history) + epsilon)`` on the rows of a row_sparse ``grad``."""

    param_cls = AdagradParam

    def list_arguments(self) -> list[str]:
        return ["weight", "grad", "history"]


class _AdagradDense(Operator):
    def forward(self, ctx: OpContext, in_data: Sequence[Any], req: Sequence[OpReqType],
                out_data: Sequence[Any], aux_states: Sequence[Any]) -> None:
        # MXNet 1.9.1: "Operator not implemented: operator = _sparse_adagrad_update" for dense grads
        raise PlexnetError("_sparse_adagrad_update: argument 'grad' has storage type default; the operator "
                           "takes only a row_sparse gradient (MXNet's sparse AdaGrad). Bind a row_sparse "
                           "array for it, or use mx.optimizer.AdaGrad for dense gradients")


class SquareSumParam(Params):
    axis = Field(Shape, default=None, doc="the axes to reduce (None: all)")
    keepdims = Field(bool, default=False, doc="keep the reduced axes with size 1")
    exclude = Field(bool, default=False, doc="reduce over the axes not in axis")


def _reduced(param: Any, ndim: int) -> tuple[int, ...]:
    ax = tuple(range(ndim)) if param.axis is None else tuple(int(a) % ndim for a in param.axis)
    return tuple(i for i in range(ndim) if i not in ax) if param.exclude else ax


class SquareSumProp(OperatorProperty):
    """``_square_sum(data)``: ``sum(data**2)`` over ``axis`` (MXNet's sparse-aware fused form)."""

    param_cls = SquareSumParam

    def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        s = in_shape[0]
        if s is None:
            return [None], [None], []
        ax = _reduced(self.param, len(s))
        if self.param.keepdims:
            out = tuple(1 if i in ax else d for i, d in enumerate(s))
        else:
            out = tuple(d for i, d in enumerate(s) if i not in ax) or (1,)
        return [tuple(s)], [out], []

    def declare_backward_dependency(self, out_grad: list[int], in_data: list[int],
                                    out_data: list[int]) -> list[int]:
        return list(out_grad) + list(in_data)


class _SquareSumOp(Operator):
    def __init__(self, param: Any) -> None:
        self.param = param

    def forward(self, ctx: OpContext, in_data: Sequence[Any], req: Sequence[OpReqType],
                out_data: Sequence[Any], aux_states: Sequence[Any]) -> None:
        x = in_data[0]
        res = (x * x).sum(axis=_reduced(self.param, x.ndim), keepdims=True)
        assign(out_data[0], req[0], res.reshape(out_data[0].shape))

    def backward(self, ctx: OpContext, out_grad: Sequence[Any], in_data: Sequence[Any],
                 out_data: Sequence[Any], req: Sequence[OpReqType], in_grad: Sequence[Any],
                 aux_states: Sequence[Any]) -> None:
        x = in_data[0]
        ax = _reduced(self.param, x.ndim)
        og = out_grad[0].reshape(tuple(1 if i in ax else d for i, d in enumerate(x.shape)))
        assign(in_grad[0], req[0], 2 * x * og)


def _square_sum_sparse(fn: Any, data: Any = None, axis: Any = None, keepdims: Any = False, exclude: Any = False,
                       out: Any = None, **kw: Any) -> Any:
    """row_sparse in, row_sparse out for a row-wise sum that keeps its dims (MXNet's kernel)."""
    from ..ndarray.sparse import RowSparseNDArray, row_sparse_array
    ax = (axis,) if isinstance(axis, (int, np.integer)) else axis
    if (not isinstance(data, RowSparseNDArray) or data.ndim != 2 or out is not None or exclude
            or ax is None or tuple(int(a) % 2 for a in ax) != (1,) or not keepdims):
        return NotImplemented
    vals = data.data.asnumpy()
    return row_sparse_array(((vals * vals).sum(axis=1, keepdims=True), data.indices.asnumpy()),
                            shape=(data.shape[0], 1), ctx=data.context, dtype=data.dtype)


def _quadratic_sparse(fn: Any, data: Any = None, a: Any = 0.0, b: Any = 0.0, c: Any = 0.0, out: Any = None,
                      **kw: Any) -> Any:
    """``a*x**2 + b*x + c`` keeps a csr/row_sparse structure when ``c == 0`` (MXNet's kernel)."""
    from ..ndarray.sparse import BaseSparseNDArray
    if not isinstance(data, BaseSparseNDArray) or float(c) != 0 or out is not None:
        return NotImplemented
    res = data.copy()
    d = res.data
    d[:] = fn(d, a=a, b=b, c=0.0)
    return res


def _scatter_sparse(kind: str) -> Any:
    def impl(fn: Any, lhs: Any = None, rhs: Any = None, scalar: Any = None, out: Any = None, **kw: Any) -> Any:
        from ..ndarray.sparse import BaseSparseNDArray, RowSparseNDArray
        if not isinstance(lhs, BaseSparseNDArray) or out is not None:
            return NotImplemented
        if kind == "div" and not isinstance(lhs, RowSparseNDArray):
            return NotImplemented  # MXNet: a csr lhs falls back to the dense division
        res = lhs.copy()
        d = res.data
        if kind == "div":
            other = rhs.tostype("default") if isinstance(rhs, BaseSparseNDArray) else rhs
            d[:] = d.asnumpy() / other.asnumpy()[lhs.indices.asnumpy()]
        else:
            s = float(scalar if scalar is not None else kw.get("scalar", 0.0))
            d[:] = d + (s if kind == "plus" else -s)
        return res
    return impl


def _register_scatter(registry: Any) -> None:
    def div(lhs: Any, rhs: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
        assign(ret, req, lhs / rhs)

    def div_grad(og: Any, lhs: Any, rhs: Any, env: Any, lg: Any, rg: Any, lreq: Any, rreq: Any, ctx: Any) -> None:
        assign(lg, lreq, og / rhs)
        assign(rg, rreq, -og * lhs / (rhs * rhs))

    def plus(x: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
        assign(ret, req, x + np.asarray(env.scalar, dtype=x.dtype))

    def minus(x: Any, env: Any, ret: Any, req: Any, ctx: Any) -> None:
        assign(ret, req, x - np.asarray(env.scalar, dtype=x.dtype))

    def ident(og: Any, env: Any, ig: Any, req: Any, ctx: Any) -> None:
        assign(ig, req, og)

    SimpleOp("_scatter_elemwise_div", 2).set_function(div).set_gradient(div_grad, kind="in_data") \
        .describe("lhs / rhs; a sparse lhs keeps its structure").register(registry)
    SimpleOp("_scatter_plus_scalar", 1).set_function(plus).set_gradient(ident).set_enable_scalar(True) \
        .describe("data + scalar on the stored entries of a sparse data").register(registry)
    SimpleOp("_scatter_minus_scalar", 1).set_function(minus).set_gradient(ident).set_enable_scalar(True) \
        .describe("data - scalar on the stored entries of a sparse data").register(registry)


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    registry.register_property("_sparse_retain", RetainProp)
    registry.register_property("_sparse_adagrad_update", AdagradProp)
    # host (numpy) implementations: the sparse kernels they stand in for run on the host too
    registry.register_impl("_sparse_retain", "cpu", lambda prop, ctx: _RetainOp(), impl_name="numpy")
    registry.register_impl("_sparse_adagrad_update", "cpu", lambda prop, ctx: _AdagradDense(), impl_name="numpy")
    registry.register_property("_square_sum", SquareSumProp)
    registry.register_impl("_square_sum", "*", lambda prop, ctx: _SquareSumOp(prop.param), impl_name="xp")
    from ..ndarray.sparse.ops import IMPLS  # the NDArray call's sparse kernel (nd._internal._square_sum)
    IMPLS.setdefault("_square_sum", _square_sum_sparse)
    IMPLS.setdefault("_contrib_quadratic", _quadratic_sparse)
    _register_scatter(registry)
    for name, kind in zip(SCATTER_OPS, ("div", "plus", "minus")):
        IMPLS.setdefault(name, _scatter_sparse(kind))
