"""``dot`` and ``batch_dot`` (MXNet's ``dot-inl.h``).

``dot`` follows MXNet's N-D rule: the lhs is viewed as a matrix ``(prod(l[:-1]), l[-1])``
(``transpose_a``: ``(l[0], prod(l[1:]))`` transposed), the rhs as ``(r[0], prod(r[1:]))``
(``transpose_b``: ``(prod(r[:-1]), r[-1])`` transposed); the output shape is the lhs's
free dims followed by the rhs's free dims. Two vectors give shape ``(1,)``.
``batch_dot`` multiplies matching leading (batch) dims, no broadcasting (as MXNet).

With ``req=write`` and contiguous arrays the products go straight into the output
through ``xp.dot(..., out=)`` / ``xp.matmul(..., out=)`` (BLAS, no temporaries).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plexnet.operator import Field, OperatorProperty, Params

from ._common import ADD, NULL, XpOperator, prod, register_op, shape_error, store

__all__ = ["register", "dot_shape", "batch_dot_shape"]


class DotParam(Params):
    transpose_a = Field(bool, default=False, doc="transpose the lhs first")
    transpose_b = Field(bool, default=False, doc="transpose the rhs first")
    forward_stype = Field(str, default=None, optional=True, choices=("default", "csr", "row_sparse"),
                          doc="storage type of the output (only 'default' storage exists here)")


def _fmt(s: tuple) -> str:
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


def dot_plan(op: str, l: tuple, r: tuple, ta: bool, tb: bool) -> tuple[tuple, tuple, tuple]:
    """``(lhs 2-D shape, rhs 2-D shape, output shape)`` (2-D shapes before transposition)."""
    if len(l) == 0 or len(r) == 0:
        raise shape_error(op, f"inputs must have at least one dim, got lhs {_fmt(l)} and rhs {_fmt(r)}")
    if len(l) == 1 and len(r) == 1:
        if ta or tb:
            raise shape_error(op, f"cannot transpose vectors (lhs {_fmt(l)}, rhs {_fmt(r)})")
        if l[0] != r[0]:
            raise shape_error(op, f"shape mismatch: lhs {_fmt(l)} X rhs {_fmt(r)}")
        return (1, l[0]), (r[0], 1), (1,)
    if ta:
        l2, lfree = (l[0], prod(l[1:])), (l[1:] if len(l) > 1 else ())
        lk = l[0]
    else:
        l2, lfree = (prod(l[:-1]), l[-1]), (l[:-1] if len(l) > 1 else ())
        lk = l[-1]
    if len(l) == 1:
        l2 = (1, l[0]) if not ta else (l[0], 1)
    if tb:
        r2, rfree = (prod(r[:-1]), r[-1]), (r[:-1] if len(r) > 1 else ())
        rk = r[-1]
    else:
        r2, rfree = (r[0], prod(r[1:])), (r[1:] if len(r) > 1 else ())
        rk = r[0]
    if len(r) == 1:
        r2 = (r[0], 1) if not tb else (1, r[0])
    if lk != rk:
        raise shape_error(op, f"shape mismatch: lhs {_fmt(l)} X rhs {_fmt(r)} (transpose_a={ta}, "
                              f"transpose_b={tb}): reduction sizes {lk} and {rk} differ")
    return l2, r2, tuple(lfree) + tuple(rfree)


def dot_shape(op: str, l: tuple, r: tuple, ta: bool, tb: bool) -> tuple:
    return dot_plan(op, l, r, ta, tb)[2]


def batch_dot_shape(op: str, l: tuple, r: tuple, ta: bool, tb: bool) -> tuple:
    if len(l) < 3 or len(l) != len(r):
        raise shape_error(op, f"lhs and rhs must have the same number (>= 3) of dims, got lhs {_fmt(l)} "
                              f"and rhs {_fmt(r)}")
    if l[:-2] != r[:-2]:
        raise shape_error(op, f"the leading batch dims must be equal: lhs {_fmt(l)} X rhs {_fmt(r)}")
    m, kl = (l[-1], l[-2]) if ta else (l[-2], l[-1])
    kr, n = (r[-1], r[-2]) if tb else (r[-2], r[-1])
    if kl != kr:
        raise shape_error(op, f"shape mismatch: lhs {_fmt(l)} X rhs {_fmt(r)} (transpose_a={ta}, "
                              f"transpose_b={tb}): reduction sizes {kl} and {kr} differ")
    return tuple(l[:-2]) + (m, n)


class _DotPropBase(OperatorProperty):
    param_cls = DotParam
    shape_fn = staticmethod(dot_shape)

    def list_arguments(self) -> list[str]:
        return ["lhs", "rhs"]

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        l, r = in_shape
        if l is None or r is None:
            return list(in_shape), [None], []
        l, r = tuple(l), tuple(r)
        return [l, r], [self.shape_fn(self.op_name, l, r, self.param.transpose_a, self.param.transpose_b)], []

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        known = next((t for t in in_type if t is not None), None)
        return [known, known], [known], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return list(out_grad) + list(in_data)


class DotProp(_DotPropBase):
    """Dot product of two arrays (MXNet's N-D rule)."""


class BatchDotProp(_DotPropBase):
    """Batched matrix product over matching leading dims."""
    shape_fn = staticmethod(batch_dot_shape)


def _view(arr: Any, shape: tuple) -> Any:
    """``arr`` reshaped as a view, or None when that would copy."""
    if arr.flags.c_contiguous:
        return arr.reshape(shape)
    return None


def _into(xp: Any, fn: Any, a: Any, b: Any, out: Any, req: Any, shape2: tuple) -> None:
    """``out (req)= fn(a, b)`` where ``out`` viewed as ``shape2`` is the product's shape."""
    if req == NULL:
        return
    if req != ADD:
        v = _view(out, shape2)
        if v is not None and v.dtype == np.result_type(a.dtype, b.dtype):
            fn(a, b, out=v)
            return
    store(xp, out, req, fn(a, b).reshape(out.shape))


class DotOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp = ctx.xp
        lhs, rhs = in_data
        p = self.param
        l2, r2, _ = dot_plan("dot", lhs.shape, rhs.shape, p.transpose_a, p.transpose_b)
        a = lhs.reshape(l2)
        b = rhs.reshape(r2)
        a = a.T if p.transpose_a else a
        b = b.T if p.transpose_b else b
        _into(xp, xp.dot, a, b, out_data[0], req[0], (a.shape[0], b.shape[1]))

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp = ctx.xp
        lhs, rhs = in_data
        p = self.param
        ta, tb = p.transpose_a, p.transpose_b
        l2, r2, _ = dot_plan("dot", lhs.shape, rhs.shape, ta, tb)
        A2, B2 = lhs.reshape(l2), rhs.reshape(r2)
        A = A2.T if ta else A2
        B = B2.T if tb else B2
        G = out_grad[0].reshape(A.shape[0], B.shape[1])
        # C = A B:  dA = G B^T, dB = A^T G; then undo the transposes
        if ta:
            _into(xp, xp.dot, B, G.T, in_grad[0], req[0], l2)
        else:
            _into(xp, xp.dot, G, B.T, in_grad[0], req[0], l2)
        if tb:
            _into(xp, xp.dot, G.T, A, in_grad[1], req[1], r2)
        else:
            _into(xp, xp.dot, A.T, G, in_grad[1], req[1], r2)


def _swap(x: Any) -> Any:
    return x.swapaxes(-1, -2)


class BatchDotOp(XpOperator):
    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux: Any) -> None:
        xp = ctx.xp
        lhs, rhs = in_data
        p = self.param
        a = _swap(lhs) if p.transpose_a else lhs
        b = _swap(rhs) if p.transpose_b else rhs
        out = out_data[0]
        _into(xp, xp.matmul, a, b, out, req[0], out.shape)

    def backward(self, ctx: Any, out_grad: Any, in_data: Any, out_data: Any, req: Any, in_grad: Any,
                 aux: Any) -> None:
        xp = ctx.xp
        lhs, rhs = in_data
        p = self.param
        A = _swap(lhs) if p.transpose_a else lhs
        B = _swap(rhs) if p.transpose_b else rhs
        G = out_grad[0]
        if p.transpose_a:
            _into(xp, xp.matmul, B, _swap(G), in_grad[0], req[0], lhs.shape)
        else:
            _into(xp, xp.matmul, G, _swap(B), in_grad[0], req[0], lhs.shape)
        if p.transpose_b:
            _into(xp, xp.matmul, _swap(G), A, in_grad[1], req[1], rhs.shape)
        else:
            _into(xp, xp.matmul, _swap(A), G, in_grad[1], req[1], rhs.shape)


def register(registry: Any) -> None:
    register_op(registry, "dot", DotProp, DotOp)
    register_op(registry, "batch_dot", BatchDotProp, BatchDotOp)
