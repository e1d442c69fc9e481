"""Factorizations: ``potrf`` (Cholesky), ``potri`` (inverse from a Cholesky factor),
``gelqf`` (LQ), ``syevd`` (symmetric eigendecomposition), batched.

Conventions as MXNet 1.9.1: ``potrf`` reads the lower triangle and returns L with
``A = L L^T`` (``lower=False``: the upper triangle, U with ``A = U^T U``); its gradient is
the symmetric one. ``potri`` takes L (``lower=False``: U). ``gelqf`` returns ``(Q, L)`` with
``A = L Q`` and LAPACK's signs (those of a Householder QR of ``A^T``). ``syevd`` returns
``(U, L)`` with ``U A = diag(L) U``, eigenvalues ascending and every row of U scaled so
its entry of largest magnitude is positive.
"""
from __future__ import annotations

from typing import Any

from plexnet.base import PlexnetError
from plexnet.operator import Field, Params

from ._common import LinalgProp, T, register_all, solve_tri

__all__ = ["register"]


def _phi(xp: Any, x: Any) -> Any:
    """Lower triangle with the diagonal halved."""
    return xp.tril(x) - 0.5 * x * xp.eye(x.shape[-1], dtype=x.dtype)


def _copyltu(xp: Any, x: Any) -> Any:
    """The symmetric matrix whose lower triangle is that of ``x``."""
    low = xp.tril(x, -1)
    return low + T(low) + x * xp.eye(x.shape[-1], dtype=x.dtype)


def _sym(x: Any) -> Any:
    return 0.5 * (x + T(x))


def _tri_inv(xp: Any, l: Any) -> Any:
    """Inverse of lower-triangular matrices (batched)."""
    eye = xp.broadcast_to(xp.eye(l.shape[-1], dtype=l.dtype), l.shape)
    return solve_tri(xp, l, eye, lower=True)


class LowerParam(Params):
    lower = Field(bool, default=True, doc="the factor is lower (else upper) triangular")


class _Square(LinalgProp):
    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_square(shapes)
        return [tuple(shapes[0])]


class PotrfProp(_Square):
    """Cholesky factorization ``A = L L^T`` of symmetric positive-definite matrices, batched."""
    param_cls = LowerParam

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        a = ins[0] if self.param.lower else T(ins[0])  # upper: U = (chol of the upper triangle)^T
        try:
            chol = xp.linalg.cholesky(a)
            return [chol if self.param.lower else T(chol)]
        except Exception as e:  # numpy/CuPy LinAlgError
            raise PlexnetError(f"{self.op_name}: Cholesky factorization of A with shape {a.shape} failed: the "
                               f"input is not symmetric positive definite ({e})") from None

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        l, dl = (outs[0], ogs[0]) if self.param.lower else (T(outs[0]), T(ogs[0]))
        li = _tri_inv(xp, l)
        s = xp.matmul(T(li), xp.matmul(_phi(xp, xp.matmul(T(l), dl)), li))
        return [_sym(s)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], out_data[0]]


class PotriProp(_Square):
    """``(L L^T)^-1`` from lower-triangular Cholesky factors L (``lower=False``:
    ``(U^T U)^-1`` from upper-triangular U), batched."""
    param_cls = LowerParam

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        li = _tri_inv(xp, ins[0] if self.param.lower else T(ins[0]))
        return [xp.matmul(T(li), li)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        a = ins[0] if self.param.lower else T(ins[0])
        l, out, g = xp.tril(a), outs[0], ogs[0]
        dm = -xp.matmul(out, xp.matmul(g, out))
        gl = xp.tril(xp.matmul(dm + T(dm), l))
        return [gl if self.param.lower else T(gl)]


class GelqfProp(LinalgProp):
    """LQ factorization ``A = L Q`` (Q row-orthonormal, L lower triangular) of matrices with
    no more rows than columns, batched. Outputs ``(Q, L)``."""

    outputs = ("output0", "output1")   # Q, L: nnvm's default names, as MXNet's

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_ndim(shapes, 0, 2)
        a = tuple(shapes[0])
        if a[-2] > a[-1]:
            raise self.error(f"argument 'A' must have no more rows than columns, got shape {a}", shapes)
        return [a, a[:-2] + (a[-2], a[-2])]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        q, r = (xp.asarray(a) for a in xp.linalg.qr(T(ins[0])))
        return [T(q), T(r)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        q, l = outs
        dq, dl = ogs
        m = xp.matmul(T(l), dl) - xp.matmul(dq, T(q))
        rhs = dq + xp.matmul(_copyltu(xp, m), q)
        return [xp.linalg.solve(T(l), rhs)]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return list(out_grad) + list(out_data)


class SyevdProp(LinalgProp):
    """Eigendecomposition of symmetric matrices: ``U A = diag(L) U``, eigenvalues ascending,
    rows of U the eigenvectors. Outputs ``(U, L)``; batched."""

    outputs = ("output0", "output1")   # U, L: nnvm's default names, as MXNet's

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_square(shapes)
        a = tuple(shapes[0])
        return [a, a[:-1]]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        w, v = (xp.asarray(a) for a in xp.linalg.eigh(ins[0]))
        u = T(v)
        idx = xp.argmax(xp.abs(u), axis=-1)[..., None]
        sign = xp.where(xp.take_along_axis(u, idx, axis=-1) < 0, -1.0, 1.0).astype(u.dtype)
        return [u * sign, w]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        u, w = outs
        du, dw = ogs
        n = w.shape[-1]
        diff = w[..., None, :] - w[..., :, None]  # w_j - w_i
        eye = xp.eye(n, dtype=u.dtype)
        f = xp.where(eye > 0, 0.0, 1.0 / xp.where(eye > 0, 1.0, diff)).astype(u.dtype)
        v, dv = T(u), T(du)
        inner = f * xp.matmul(T(v), dv) + dw[..., None] * eye
        return [_sym(xp.matmul(v, xp.matmul(inner, T(v))))]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return list(out_grad) + list(out_data)


def register(registry: Any) -> None:
    register_all(registry, {"potrf": PotrfProp, "potri": PotriProp, "gelqf": GelqfProp, "syevd": SyevdProp})
