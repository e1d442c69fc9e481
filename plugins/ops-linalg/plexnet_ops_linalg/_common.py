"""The shape of every linalg operator: a forward and a backward written as functions of
``xp`` arrays, batched over leading dimensions (not an operator module).

An operator subclasses :class:`LinalgProp` and gives ``arguments``/``outputs``,
``out_shapes(shapes)`` (which checks the input shapes and names operator, argument and
shapes on error), ``forward(xp, ins) -> outs`` and ``backward(xp, ins, outs, ogs) ->
grads``. :class:`LinalgOp` runs them and honours ``req``. MXNet registers the family as
``_linalg_<name>`` with the flat alias ``linalg_<name>``; :func:`register_all` does too.
"""
from __future__ import annotations

from typing import Any, ClassVar, Sequence

import numpy as np

from plexnet.base import ShapeError
from plexnet.operator import Operator, OperatorProperty, OpReqType, assign

__all__ = ["LinalgProp", "LinalgOp", "register_all", "T", "fmt", "ShapeError", "tri_mask", "solve_tri"]

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def T(x: Any) -> Any:
    """Transpose of the trailing two axes (a view)."""
    return x.swapaxes(-1, -2)


def fmt(shapes: Sequence[Any], names: Sequence[str]) -> str:
    return ", ".join(f"{n}={None if s is None else tuple(s)}" for n, s in zip(names, shapes))


def tri_mask(xp: Any, x: Any, lower: bool) -> Any:
    """The lower (or upper) triangle of ``x``, diagonal included."""
    return xp.tril(x) if lower else xp.triu(x)


def _scipy_linalg(xp: Any) -> Any:
    """``scipy.linalg`` for numpy, ``cupyx.scipy.linalg`` for CuPy, or None (not installed,
    plexnet's CuPy simulator)."""
    try:
        if xp is np:
            import scipy.linalg as sl
            return sl
        if getattr(xp, "__name__", "") == "cupy" and getattr(xp, "__plexnet_simulator__", None) is None:
            import cupyx.scipy.linalg as csl  # type: ignore[import-not-found]
            return csl
    except ImportError:
        pass
    return None


def solve_tri(xp: Any, a: Any, b: Any, lower: bool, trans: bool = False) -> Any:
    """Solve ``tri(a) x = b`` (``tri(a)^T x = b`` with ``trans``) for batched ``a`` (..., n, n)
    and ``b`` (..., n, k), reading only the ``lower`` (or upper) triangle of ``a``. Uses a
    triangular solver (LAPACK trtrs through scipy / cupyx) when there is one: several times
    faster than a general solve; else ``xp.linalg.solve`` on the masked matrix."""
    sl = _scipy_linalg(xp)
    if sl is None:
        t = tri_mask(xp, a, lower)
        return xp.linalg.solve(T(t) if trans else t, b)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a3 = xp.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    b3 = xp.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    out = xp.empty(b3.shape, dtype=np.result_type(a.dtype, b.dtype))
    for i in range(a3.shape[0]):
        out[i] = sl.solve_triangular(a3[i], b3[i], lower=lower, trans=1 if trans else 0, check_finite=False)
    return out.reshape(batch + b.shape[-2:])


class LinalgProp(OperatorProperty):
    """Base of the linalg properties: MXNet's argument names and float32/float64 only."""

    arguments: ClassVar[tuple[str, ...]] = ("A",)
    outputs: ClassVar[tuple[str, ...]] = ("output",)

    def list_arguments(self) -> list[str]:
        return list(self.arguments)

    def list_outputs(self) -> list[str]:
        return list(self.outputs)

    def error(self, what: str, shapes: Sequence[Any]) -> ShapeError:
        return ShapeError(f"{self.op_name}: {what} (input shapes: {fmt(shapes, self.arguments)})")

    def need_ndim(self, shapes: Sequence[Any], idx: int, low: int) -> None:
        s = shapes[idx]
        if len(s) < low:
            raise self.error(f"argument {self.arguments[idx]!r} must have at least {low} dimensions, "
                             f"got shape {tuple(s)}", shapes)

    def need_square(self, shapes: Sequence[Any], idx: int = 0) -> None:
        self.need_ndim(shapes, idx, 2)
        s = shapes[idx]
        if s[-1] != s[-2]:
            raise self.error(f"argument {self.arguments[idx]!r} must hold square matrices, got shape "
                             f"{tuple(s)}", shapes)

    def same_batch(self, shapes: Sequence[Any], i: int, j: int, nbatch: int | None = None) -> None:
        a, b = shapes[i], shapes[j]
        k = len(a) - 2 if nbatch is None else nbatch
        if len(a) != len(b) or tuple(a[:k]) != tuple(b[:k]):
            raise self.error(f"arguments {self.arguments[i]!r} and {self.arguments[j]!r} must have the same "
                             f"number of dimensions and batch dimensions", shapes)

    def out_shapes(self, shapes: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
        raise NotImplementedError

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        if any(s is None for s in in_shape):
            return list(in_shape), [None] * len(self.outputs), []
        shapes = [tuple(int(d) for d in s) for s in in_shape]
        return shapes, self.out_shapes(shapes), []

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        known = next((t for t in in_type if t is not None), None)
        if known is not None and np.dtype(known) not in FLOATS:
            from plexnet.executor.graph import InferTypeError  # only on this error path
            raise InferTypeError(f"{self.op_name}: this operation only supports float32 and float64, got "
                                 f"{np.dtype(known).name} for argument {self.arguments[in_type.index(known)]!r}")
        return [known] * len(in_type), [known] * len(self.outputs), []

    def declare_backward_dependency(self, out_grad, in_data, out_data):  # type: ignore[no-untyped-def]
        return list(out_grad) + list(in_data) + list(out_data)

    # -- math: subclasses override -----------------------------------------------------------
    def forward(self, xp: Any, ins: Sequence[Any]) -> Sequence[Any]:
        raise NotImplementedError

    def backward(self, xp: Any, ins: Sequence[Any], outs: Sequence[Any], ogs: Sequence[Any]) -> Sequence[Any]:
        raise NotImplementedError


class LinalgOp(Operator):
    """Runs a :class:`LinalgProp`'s functions; results are cast to the output dtype."""

    def __init__(self, prop: LinalgProp) -> None:
        self.prop = prop

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        if all(r == OpReqType.null for r in req):
            return
        res = self.prop.forward(ctx.xp, in_data)
        for o, r, v in zip(out_data, req, res):
            if o.size:
                assign(o, r, v.astype(o.dtype, copy=False) if hasattr(v, "astype") else v)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        if all(r == OpReqType.null for r in req):
            return
        xp = ctx.xp
        ogs = [g if g is not None else xp.zeros_like(o) for g, o in zip(out_grad, out_data)]
        res = self.prop.backward(xp, in_data, out_data, ogs)
        for g, r, v in zip(in_grad, req, res):
            if g.size:
                assign(g, r, v.astype(g.dtype, copy=False))


def register_all(registry: Any, props: dict[str, type[LinalgProp]]) -> None:
    """Register ``_linalg_<name>`` (alias ``linalg_<name>``) for each ``name: Prop``."""
    for name, cls in props.items():
        op = "_linalg_" + name
        registry.register_property(op, cls, aliases=("linalg_" + name,))
        registry.register_impl(op, "*", lambda prop, ctx: LinalgOp(prop), impl_name="xp")
