"""What every quantization operator shares: the property shape (named arguments and
outputs, ``forward(xp, ins) -> outs``), the dtype checks, reading the ``(1,)`` range
arrays, and MXNet 1.9.1's range arithmetic (``quantization_utils.h``) in float32.

MXNet's CPU build runs these operators through MKL-DNN; its reorder primitive scales in
float32, rounds half to even and saturates to the destination type, which
:func:`reorder` reproduces."""
from __future__ import annotations

from typing import Any, ClassVar, Sequence

import numpy as np

from plexnet.base import PlexnetError, ShapeError
from plexnet.operator import Operator, OperatorProperty, OpReqType, assign

__all__ = ["QuantProp", "QuantOp", "QuantTypeError", "register", "scalar", "maxabs", "reorder",
           "range_for_multiplication", "get_scale", "saturate_cast", "int_matmul", "F32", "INT8", "UINT8", "INT32",
           "K_INT8", "K_UINT8", "K_INT32", "QRANGE"]

F32, INT8, UINT8, INT32 = np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int32)

#: MXNet 1.9.1's quantized ranges (``kInt8Range``, ``kUint8Range``, ``kInt32Range``): the
#: half-level margins make ``x * 127.5 / r`` round to 127 at ``x = r``
K_INT8, K_UINT8 = np.float32(127.5), np.float32(255.5)
K_INT32 = np.float32(0x7FFFFFFF)  # 2**31 once in float32, as in MXNet
QRANGE = {INT8: K_INT8, UINT8: K_UINT8, INT32: K_INT32}
_LIMITS = {INT8: (-128, 127), UINT8: (0, 255), INT32: (-2 ** 31, 2 ** 31 - 1)}


class QuantTypeError(PlexnetError, TypeError):
    """An input of a quantization operator has a dtype the operator does not take."""


def scalar(a: Any) -> np.float32:
    """The float32 value of a ``(1,)`` range array (read on the host)."""
    host = a.get() if hasattr(a, "get") else a
    return np.float32(np.asarray(host).reshape(-1)[0])


def maxabs(a: Any, b: Any) -> np.float32:
    return np.float32(max(abs(np.float32(a)), abs(np.float32(b))))


def saturate_cast(xp: Any, v: Any, dtype: Any) -> Any:
    """Round half to even and saturate float values into ``dtype`` (MKL-DNN's conversion).
    ``v`` may be overwritten (callers pass temporaries)."""
    dtype = np.dtype(dtype)
    lo, hi = _LIMITS[dtype]
    if v.dtype == np.float64:
        r = xp.rint(v)
        return xp.clip(r, lo, hi, out=r).astype(dtype)
    r = xp.rint(v, out=v) if v.dtype == np.float32 else xp.rint(v)
    if dtype != INT32:
        return xp.clip(r, lo, hi, out=r).astype(dtype)
    # float32 cannot hold 2**31 - 1: clip below 2**31, then set what reached it
    top = r >= np.float32(2 ** 31)
    out = xp.clip(r, np.float32(lo), np.float32(2147483520.0), out=r).astype(dtype)
    out[top] = hi
    return out


def int_matmul(xp: Any, a: Any, b: Any) -> Any:
    """Exact ``a @ b`` of integer-valued matrices (int8/uint8 values, any dtype) as float64:
    float32 BLAS on slices of the inner dimension short enough (<= 512 terms of
    |x| <= 255 * 128) to stay below 2**24, the slices added in float64."""
    f = np.float32
    k = a.shape[-1]
    acc = None
    for s in range(0, k, 512):
        part = (a[..., s:s + 512].astype(f, copy=False) @ b[..., s:s + 512, :].astype(f, copy=False))
        acc = part.astype(np.float64) if acc is None else acc + part
    return acc


#: what MKL-DNN's conversion makes of NaN (0 * an infinite scale, from a zero range):
#: measured 127 (int8) and 0 (uint8); int32 takes x86's "integer indefinite"
_NAN_AS = {INT8: 127, UINT8: 0, INT32: -2 ** 31}


def reorder(xp: Any, x: Any, scale: Any, dtype: Any) -> Any:
    """MKL-DNN's reorder with an output scale: ``saturate(rint(float32(x) * scale))``."""
    scale = np.float32(scale)
    out = saturate_cast(xp, x.astype(np.float32, copy=False) * scale, dtype)
    if not np.isfinite(scale):  # a zero range: x * inf saturates, 0 * inf is NaN
        out[x == 0] = _NAN_AS[np.dtype(dtype)]
    return out


def get_scale(dtype: Any, lo: Any, hi: Any) -> np.float32:
    """Quantized levels per real unit of an int8/uint8 array whose range is ``[lo, hi]``."""
    return np.float32(QRANGE[np.dtype(dtype)] / maxabs(lo, hi))


def range_for_multiplication(a_min: Any, a_max: Any, b_min: Any, b_max: Any,
                             all_sign: bool) -> tuple[np.float32, np.float32]:
    """The int32 range of a product of two quantized arrays (MXNet's
    ``QuantizationRangeForMultiplication``, float32 in its order): each range per level,
    ``a`` over 127, ``b`` over 127 (``all_sign``, S8S8) or 255 (S8U8), times 2**31."""
    la = np.float32(maxabs(a_min, a_max) / np.float32(127.0))
    lb = np.float32(maxabs(b_min, b_max) / np.float32(127.0 if all_sign else 255.0))
    hi = np.float32(np.float32(la * lb) * np.float32(2 ** 31))
    return np.float32(-hi), hi


class QuantProp(OperatorProperty):
    """A quantization operator: ``arguments``/``outputs`` name its inputs and outputs;
    subclasses give ``out_shapes``, ``out_types`` (after :meth:`check_types`) and ``forward``."""

    arguments: ClassVar[tuple[str, ...]] = ("data",)
    outputs: ClassVar[tuple[str, ...]] = ("output", "min_output", "max_output")
    #: allowed dtypes of each non-range input (index -> dtypes); range inputs are float32
    data_types: ClassVar[dict[int, tuple[np.dtype, ...]]] = {0: (INT8, UINT8)}
    #: indices of the ``(1,)`` float32 range inputs (default: every input not in data_types)
    range_inputs: ClassVar[tuple[int, ...] | None] = None
    #: MXNet 1.9.1 gives most of these operators zero gradients (``MakeZeroGradNodes``, so
    #: that a recorded quantized graph can run backward); the others set this False
    differentiable: ClassVar[bool] = True

    def list_arguments(self) -> list[str]:
        return list(self.arguments)

    def list_outputs(self) -> list[str]:
        return list(self.outputs)

    def _ranges(self) -> list[int]:
        if self.range_inputs is not None:
            return list(self.range_inputs)
        return [i for i in range(len(self.list_arguments())) if i not in self.data_types]

    # -- errors ---------------------------------------------------------------------------------
    def shape_error(self, what: str, shapes: Sequence[Any]) -> ShapeError:
        names = self.list_arguments()
        listed = ", ".join(f"{n}={None if s is None else tuple(s)}" for n, s in zip(names, shapes))
        return ShapeError(f"{self.op_name}: {what} (input shapes: {listed})")

    def type_error(self, index: int, got: Any, allowed: Sequence[Any]) -> QuantTypeError:
        name = self.list_arguments()[index]
        return QuantTypeError(f"{self.op_name}: argument {name!r} has dtype {np.dtype(got).name}, expected "
                              f"{' or '.join(np.dtype(a).name for a in allowed)}")

    # -- inference ------------------------------------------------------------------------------
    def out_shapes(self, shapes: list[tuple]) -> list[tuple]:
        return [shapes[0], (1,), (1,)]

    def infer_shape(self, in_shape):  # type: ignore[no-untyped-def]
        shapes = [None if s is None else tuple(int(d) for d in s) for s in in_shape]
        for i in self._ranges():
            if i < len(shapes):
                if shapes[i] is None:
                    shapes[i] = (1,)
                elif shapes[i] != (1,):
                    raise self.shape_error(f"range input {self.list_arguments()[i]!r} must have shape (1,), "
                                           f"got {shapes[i]}", shapes)
        if shapes and shapes[0] is not None:
            shapes = self.fill_shapes(shapes)
        if any(s is None for s in shapes):
            return shapes, [None] * len(self.list_outputs()), [None] * len(self.list_auxiliary_states())
        outs = self.out_shapes(shapes)
        return shapes, outs, self.aux_shapes(shapes)

    def aux_shapes(self, shapes: list[tuple]) -> list[tuple]:
        return []

    def fill_shapes(self, shapes: list[Any]) -> list[Any]:
        """Shapes of parameter inputs (weights, bias) deduced from the data's; default none."""
        return shapes

    def declare_backward_dependency(self, out_grad: list[int], in_data: list[int],
                                    out_data: list[int]) -> list[int]:
        return []  # the gradients are zeros

    def check_types(self, in_type: list[Any]) -> list[Any]:
        """Input types with the range inputs set to float32; raises on a dtype not allowed."""
        types = [None if t is None else np.dtype(t) for t in in_type]
        for i, allowed in self.data_types.items():
            if i >= len(types):
                continue
            if types[i] is None and len(allowed) == 1:
                types[i] = allowed[0]  # a weight or bias takes its only type
            elif types[i] is not None and types[i] not in allowed:
                raise self.type_error(i, types[i], allowed)
        for i in self._ranges():
            if i < len(types):
                if types[i] is None:
                    types[i] = F32
                elif types[i] != F32:
                    raise self.type_error(i, types[i], (F32,))
        return types

    def out_types(self, types: list[Any]) -> list[Any]:
        return [types[0], F32, F32]

    def infer_type(self, in_type):  # type: ignore[no-untyped-def]
        types = self.check_types(list(in_type))
        if any(types[i] is None for i in self.data_types if i < len(types)):
            return types, [None] * len(self.list_outputs()), [F32] * len(self.list_auxiliary_states())
        return types, self.out_types(types), [F32] * len(self.list_auxiliary_states())

    # -- computation ----------------------------------------------------------------------------
    def forward(self, xp: Any, ins: Sequence[Any], outs: Sequence[Any]) -> Sequence[Any]:
        """The outputs' values for the inputs (aux states appended to ``ins``); ``outs``
        are the allocated outputs (their dtypes decide the result types)."""
        raise PlexnetError(f"{type(self).__name__} defines no forward")


class QuantOp(Operator):
    """Runs a :class:`QuantProp` and writes its results according to ``req``."""

    def __init__(self, prop: QuantProp) -> None:
        self.prop = prop

    def forward(self, ctx, in_data, req, out_data, aux_states):  # type: ignore[no-untyped-def]
        if all(r == OpReqType.null for r in req):
            return
        xp = ctx.xp
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a zero range: MXNet's inf scales
            results = self.prop.forward(xp, list(in_data) + list(aux_states), out_data)
        for o, r, v in zip(out_data, req, results):
            if not hasattr(v, "shape") or v.shape != o.shape:
                v = xp.asarray(v, dtype=o.dtype).reshape(o.shape)
            assign(o, r, v.astype(o.dtype, copy=False))

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux_states):  # type: ignore[no-untyped-def]
        """Zero gradients, as MXNet's ``MakeZeroGradNodes`` (non-differentiable
        properties never get here: autograd and the executor refuse them first)."""
        for g, r in zip(in_grad, req):
            if g is not None and r in (OpReqType.write, OpReqType.inplace):
                g[...] = 0


def register(registry: Any, props: dict[str, type[QuantProp]]) -> None:
    """Register ``_contrib_<name>`` for each ``name: Prop`` with the ``xp`` implementation."""
    for name, cls in props.items():
        op = "_contrib_" + name
        registry.register_property(op, cls)
        registry.register_impl(op, "*", lambda prop, ctx: QuantOp(prop), impl_name="xp")
