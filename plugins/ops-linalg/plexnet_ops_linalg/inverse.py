"""``inverse``, ``det``, ``slogdet`` of square matrices, batched. ``det``/``slogdet`` of a
single matrix have shape ``(1,)``, as in MXNet 1.9.1."""
from __future__ import annotations

from typing import Any

from ._common import LinalgProp, T, register_all

__all__ = ["register"]


def _batch(shape: tuple) -> tuple:
    return tuple(shape[:-2]) or (1,)


class InverseProp(LinalgProp):
    """Inverse of square matrices, batched."""

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_square(shapes)
        return [tuple(shapes[0])]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [xp.linalg.inv(ins[0])]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        inv = outs[0]
        return [-xp.matmul(T(inv), xp.matmul(ogs[0], T(inv)))]

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return [out_grad[0], out_data[0]]


class DetProp(LinalgProp):
    """Determinant of square matrices, batched."""

    outputs = ("output0",)   # MXNet's det has hidden LU outputs: nnvm names the visible one output0

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_square(shapes)
        return [_batch(shapes[0])]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        return [xp.linalg.det(ins[0]).reshape(_batch(ins[0].shape))]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        a = ins[0]
        scale = (ogs[0] * outs[0]).reshape(a.shape[:-2] + (1, 1))
        return [scale * T(xp.linalg.inv(a))]


class SlogdetProp(LinalgProp):
    """Sign and natural log of the absolute determinant, batched. Outputs ``(sign, logdet)``."""

    outputs = ("output0", "output1")   # sign, log|det|: nnvm's default names, as MXNet's

    def out_shapes(self, shapes):  # type: ignore[no-untyped-def]
        self.need_square(shapes)
        b = _batch(shapes[0])
        return [b, b]

    def forward(self, xp, ins):  # type: ignore[no-untyped-def]
        sign, logdet = (xp.asarray(a) for a in xp.linalg.slogdet(ins[0]))
        b = _batch(ins[0].shape)
        return [sign.reshape(b), logdet.reshape(b)]

    def backward(self, xp, ins, outs, ogs):  # type: ignore[no-untyped-def]
        a = ins[0]
        return [ogs[1].reshape(a.shape[:-2] + (1, 1)) * T(xp.linalg.inv(a))]


def register(registry: Any) -> None:
    register_all(registry, {"inverse": InverseProp, "det": DetProp, "slogdet": SlogdetProp})
