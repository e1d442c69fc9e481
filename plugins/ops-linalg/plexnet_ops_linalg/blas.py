"""BLAS-level linalg operators: ``gemm``, ``gemm2``, ``trmm``, ``trsm``, ``syrk``.

Batched over leading axes. ``gemm``/``gemm2`` take ``axis``, the axis of the matrix rows
(columns are always the last axis), as MXNet 1.9.1 does. ``trmm``/``trsm`` read only the
triangle of ``A`` named by ``lower``; their gradient with respect to ``A`` is zero outside it.
"""
from __future__ import annotations

from typing import Any

from plexnet.operator import Field, Params

from ._common import LinalgProp, T, register_all, solve_tri, tri_mask

__all__ = ["register"]


class GemmParam(Params):
    transpose_a = Field(bool, default=False, doc="multiply with the transposed of A")
    transpose_b = Field(bool, default=False, doc="multiply with the transposed of B")
    alpha = Field(float, default=1.0, doc="factor of A*B")
    beta = Field(float, default=1.0, doc="factor of C")
    axis = Field(int, default=-2, doc="axis of the matrix rows")


class Gemm2Param(Params):
    transpose_a = Field(bool, default=False, doc="multiply with the transposed of A")
    transpose_b = Field(bool, default=False, doc="multiply with the transposed of B")
    alpha = Field(float, default=1.0, doc="factor of A*B")
    axis = Field(int, default=-2, doc="axis of the matrix rows")


class TriParam(Params):
    transpose = Field(bool, default=False, doc="use the transposed of the triangular matrix")
    rightside = Field(bool, default=False, doc="the triangular matrix multiplies from the right")
    lower = Field(bool, default=True, doc="A is lower (else upper) triangular")
    alpha = Field(float, default=1.0, doc="factor of the result")


class SyrkParam(Params):
    transpose = Field(bool, default=False, doc="A^T*A instead of A*A^T")
    alpha = Field(float, default=1.0, doc="factor of the result")


class _GemmBase(LinalgProp):
    """out = alpha * op(A) * op(B) (+ beta * C)."""

    def _axis(self, ndim: int, shapes: Any) -> int:
        ax = self.param.axis
        if not -ndim <= ax < ndim or ax % ndim == ndim - 1:
            raise self.error(f"axis {ax} is out of range or is the column axis for {ndim}-d inputs", shapes)
        return ax % ndim

    def _moved(self, s: tuple, ax: int) -> tuple:
        lst = list(s)
        lst.append(lst.pop(ax))  # rows, then columns last: move rows to -2
        lst[-1], lst[-2] = lst[-2], lst[-1]
        return tuple(lst)

    def _unmove(self, s: tuple, ax: int) -> tuple:
        lst = list(s)
        rows = lst.pop(-2)
        lst.insert(ax, rows)
        return tuple(lst)

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        p = self.param
        for i in range(len(shapes)):
            self.need_ndim(shapes, i, 2)
        nd = len(shapes[0])
        if any(len(s) != nd for s in shapes):
            raise self.error("all inputs must have the same number of dimensions", shapes)
        ax = self._axis(nd, shapes)
        a, b = self._moved(shapes[0], ax), self._moved(shapes[1], ax)
        if a[:-2] != b[:-2]:
            raise self.error("A and B must have the same batch dimensions", shapes)
        k_a = a[-2] if p.transpose_a else a[-1]
        k_b = b[-1] if p.transpose_b else b[-2]
        if k_a != k_b:
            raise self.error(f"incompatible matrix dimensions for multiplication ({k_a} vs. {k_b})", shapes)
        m = a[-1] if p.transpose_a else a[-2]
        n = b[-2] if p.transpose_b else b[-1]
        out = self._unmove(a[:-2] + (m, n), ax)
        if len(shapes) == 3 and tuple(shapes[2]) != out:
            raise self.error(f"argument 'C' must have shape {out}", shapes)
        return [out]

    def _to_rows(self, xp: Any, x: Any) -> Any:
        return xp.moveaxis(x, self.param.axis % x.ndim, -2)

    def _from_rows(self, xp: Any, x: Any) -> Any:
        return xp.moveaxis(x, -2, self.param.axis % x.ndim)

    def _ops(self, xp: Any, ins: Any) -> tuple[Any, Any]:
        p = self.param
        a, b = self._to_rows(xp, ins[0]), self._to_rows(xp, ins[1])
        return (T(a) if p.transpose_a else a), (T(b) if p.transpose_b else b)

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        a, b = self._ops(xp, ins)
        out = xp.matmul(a, b) * self.param.alpha
        if len(ins) == 3:
            out = out + self.param.beta * self._to_rows(xp, ins[2])
        return [self._from_rows(xp, out)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        p = self.param
        a, b = self._ops(xp, ins)
        g = self._to_rows(xp, ogs[0]) * p.alpha
        da = xp.matmul(b, T(g)) if p.transpose_a else xp.matmul(g, T(b))
        db = xp.matmul(T(g), a) if p.transpose_b else xp.matmul(T(a), g)
        res = [self._from_rows(xp, da), self._from_rows(xp, db)]
        if len(ins) == 3:
            res.append(ogs[0] * p.beta)
        return res


class GemmProp(_GemmBase):
    """General matrix multiplication and accumulation: ``alpha * op(A) * op(B) + beta * C``
    on the trailing two axes (rows at ``axis``), batched over the others."""

    param_cls = GemmParam
    arguments = ("A", "B", "C")


class Gemm2Prop(_GemmBase):
    """General matrix multiplication: ``alpha * op(A) * op(B)``, batched."""

    param_cls = Gemm2Param
    arguments = ("A", "B")


class _TriBase(LinalgProp):
    param_cls = TriParam
    arguments = ("A", "B")

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_square(shapes, 0)
        self.need_ndim(shapes, 1, 2)
        self.same_batch(shapes, 0, 1)
        a, b = shapes
        k = b[-1] if self.param.rightside else b[-2]
        if a[-1] != k:
            raise self.error(f"the triangular matrix has size {a[-1]}, B has {k} "
                             f"{'columns' if self.param.rightside else 'rows'}", shapes)
        return [tuple(b)]

    def _op(self, xp: Any, a: Any) -> Any:
        t = tri_mask(xp, a, self.param.lower)
        return T(t) if self.param.transpose else t

    def _grad_a(self, xp: Any, dop: Any) -> Any:
        """Gradient of op(tri(A)) mapped back to A."""
        return tri_mask(xp, T(dop) if self.param.transpose else dop, self.param.lower)


class TrmmProp(_TriBase):
    """Triangular matrix multiplication: ``alpha * op(A) * B`` (or ``alpha * B * op(A)``
    with ``rightside``), A triangular, batched."""

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        m, b = self._op(xp, ins[0]), ins[1]
        out = xp.matmul(b, m) if self.param.rightside else xp.matmul(m, b)
        return [out * self.param.alpha]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        m, b, g = self._op(xp, ins[0]), ins[1], ogs[0] * self.param.alpha
        if self.param.rightside:
            dm, db = xp.matmul(T(b), g), xp.matmul(g, T(m))
        else:
            dm, db = xp.matmul(g, T(b)), xp.matmul(T(m), g)
        return [self._grad_a(xp, dm), db]


class TrsmProp(_TriBase):
    """Solves ``op(A) * X = alpha * B`` (or ``X * op(A) = alpha * B`` with ``rightside``)
    for X, A triangular, batched."""

    def _solve(self, xp: Any, a: Any, b: Any, transposed: bool) -> Any:
        """Solve ``op(A) x = b`` (``op(A)^T x = b`` when ``transposed``)."""
        return solve_tri(xp, a, b, self.param.lower, trans=self.param.transpose != transposed)

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        a, b = ins[0], ins[1] * self.param.alpha
        if self.param.rightside:  # X op(A) = B  <=>  op(A)^T X^T = B^T
            return [T(self._solve(xp, a, T(b), True))]
        return [self._solve(xp, a, b, False)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        a, x, g = ins[0], outs[0], ogs[0]
        if self.param.rightside:
            gb = T(self._solve(xp, a, T(g), False))  # G * op(A)^-T
            dm = -xp.matmul(T(x), gb)
        else:
            gb = self._solve(xp, a, g, True)  # op(A)^-T * G
            dm = -xp.matmul(gb, T(x))
        return [self._grad_a(xp, dm), gb * self.param.alpha]


class SyrkProp(LinalgProp):
    """Symmetric rank-k update: ``alpha * A * A^T`` (``alpha * A^T * A`` with
    ``transpose``), batched."""

    param_cls = SyrkParam

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_ndim(shapes, 0, 2)
        a = shapes[0]
        k = a[-1] if self.param.transpose else a[-2]
        return [tuple(a[:-2]) + (k, k)]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        a = ins[0]
        out = xp.matmul(T(a), a) if self.param.transpose else xp.matmul(a, T(a))
        return [out * self.param.alpha]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        a, g = ins[0], ogs[0] * self.param.alpha
        gs = g + T(g)
        return [xp.matmul(a, gs) if self.param.transpose else xp.matmul(gs, a)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], in_data[0]]


def register(registry: Any) -> None:
    register_all(registry, {"gemm": GemmProp, "gemm2": Gemm2Prop, "trmm": TrmmProp, "trsm": TrsmProp,
                            "syrk": SyrkProp})
