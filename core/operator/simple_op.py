"""SimpleOp: one registration for a unary or binary operator gives both the NDArray
and the Symbol operator (MXNet's ``MXNET_REGISTER_SIMPLE_OP``).

::

    SimpleOp("smooth_l1") \\
        .set_function(smooth_l1_forward, SimpleOpInplaceOption.kNoInplace) \\
        .set_gradient(smooth_l1_grad, SimpleOpInplaceOption.kInplaceOutIn, kind="in_data") \\
        .set_enable_scalar(True) \\
        .describe("Smooth L1 loss") \\
        .register(registry)

Function signatures (arrays are raw device arrays; ``ctx`` is the ``RunContext``, whose
``xp`` is the array module; write through ``assign(ret, req, value)``)::

    unary  forward   f(src, env, ret, req, ctx)
    binary forward   f(lhs, rhs, env, ret, req, ctx)
    unary  gradient  kind "out_grad":  g(out_grad, env, in_grad, req, ctx)
                     kind "out_value": g(out_grad, out_value, env, in_grad, req, ctx)
                     kind "in_data":   g(out_grad, in_data0, env, in_grad, req, ctx)
    binary gradient  kind "out_grad":  g(out_grad, env, lhs_grad, rhs_grad, req_lhs, req_rhs, ctx)
                     kind "out_value": g(out_grad, out_value, env, lhs_grad, rhs_grad, req_lhs, req_rhs, ctx)
                     kind "in_data":   g(out_grad, lhs, rhs, env, lhs_grad, rhs_grad, req_lhs, req_rhs, ctx)
    unary  shape     s(src_shape, env) -> out_shape      (default: same shape)
    binary shape     s(lhs_shape, rhs_shape, env) -> out_shape  (default: shapes must be equal)

The gradient *kind* says what backward needs besides the head gradient; the executor
keeps only that alive (``declare_backward_dependency``).
"""
from __future__ import annotations

from enum import IntEnum
from typing import Any, Callable, Sequence

from ..base import ShapeError
from .contract import OpContext, Operator, OperatorProperty, OpReqType, uniform_types
from .params import Field, Params

__all__ = ["SimpleOp", "SimpleOpInplaceOption", "EnvArguments", "GRAD_KINDS"]

GRAD_KINDS = ("out_grad", "out_value", "in_data")


class SimpleOpInplaceOption(IntEnum):
    kNoInplace = 0
    kInplaceInOut = 1
    kInplaceOutIn = 2
    kInplaceLhsOut = 3
    kInplaceOutLhs = 4


class EnvArguments:
    """Extra arguments of a SimpleOp call: ``scalar``, ``kwargs`` (the parsed Params or
    None) and ``resource`` (requested resources, in order)."""

    __slots__ = ("scalar", "kwargs", "resource")

    def __init__(self, scalar: float = 0.0, kwargs: Any = None, resource: Sequence[Any] = ()) -> None:
        self.scalar = scalar
        self.kwargs = kwargs
        self.resource = resource


class SimpleOp:
    """Builder for a SimpleOp registration (chainable setters, then ``register``)."""

    def __init__(self, name: str, nin: int = 1) -> None:
        if nin not in (1, 2):
            raise ValueError(f"SimpleOp {name!r}: nin must be 1 or 2, got {nin}")
        self.name = name
        self.nin = nin
        self.shape_fn: Callable[..., tuple[Any, ...]] | None = None
        self.function: Callable[..., None] | None = None
        self.inplace = SimpleOpInplaceOption.kNoInplace
        self.gradient: Callable[..., None] | None = None
        self.grad_kind: str | None = None
        self.grad_inplace = SimpleOpInplaceOption.kNoInplace
        self.enable_scalar = False
        self.param_cls: type[Params] | None = None
        self.resources: list[Any] = []
        self.doc = ""
        self.aliases: tuple[str, ...] = ()
        self.type_fn: Callable[..., Any] | None = None

    # -- MXNet's registration chain ------------------------------------------------------
    def set_shape_function(self, fn: Callable[..., tuple[Any, ...]]) -> "SimpleOp":
        self.shape_fn = fn
        return self

    def set_function(self, fn: Callable[..., None],
                     inplace: SimpleOpInplaceOption = SimpleOpInplaceOption.kNoInplace) -> "SimpleOp":
        self.function = fn
        self.inplace = SimpleOpInplaceOption(inplace)
        return self

    def set_gradient(self, fn: Callable[..., None],
                     inplace: SimpleOpInplaceOption = SimpleOpInplaceOption.kNoInplace,
                     kind: str = "out_grad") -> "SimpleOp":
        if kind not in GRAD_KINDS:
            raise ValueError(f"SimpleOp {self.name!r}: gradient kind must be one of {GRAD_KINDS}, got {kind!r}")
        self.gradient = fn
        self.grad_inplace = SimpleOpInplaceOption(inplace)
        self.grad_kind = kind
        return self

    def set_enable_scalar(self, enable: bool = True) -> "SimpleOp":
        if enable and self.param_cls is not None:
            raise ValueError(f"SimpleOp {self.name!r}: scalar and kwargs cannot both be enabled")
        self.enable_scalar = enable
        return self

    def set_enable_kwargs(self, param_cls: type[Params]) -> "SimpleOp":
        """Enable keyword arguments, parsed by ``param_cls`` into ``env.kwargs``."""
        if self.enable_scalar:
            raise ValueError(f"SimpleOp {self.name!r}: scalar and kwargs cannot both be enabled")
        self.param_cls = param_cls
        return self

    def set_resource_request(self, req: Any) -> "SimpleOp":
        self.resources = list(req) if isinstance(req, (list, tuple)) else [req]
        return self

    def set_type_function(self, fn: Callable[..., Any]) -> "SimpleOp":
        """``fn(*in_dtypes) -> out_dtype`` (default: the first input's dtype)."""
        self.type_fn = fn
        return self

    def set_aliases(self, *names: str) -> "SimpleOp":
        self.aliases = names
        return self

    def describe(self, doc: str) -> "SimpleOp":
        self.doc = doc
        return self

    # -- derived pieces ---------------------------------------------------------------------
    def out_shape(self, shapes: Sequence[tuple[Any, ...]], env: EnvArguments) -> tuple[Any, ...]:
        """Output shape for known input shapes (raises ShapeError on a conflict)."""
        if self.shape_fn is not None:
            try:
                return tuple(self.shape_fn(*shapes, env))
            except ShapeError:
                raise
            except (ValueError, TypeError) as e:
                raise ShapeError(f"{self.name}: {e} (input shapes {[tuple(s) for s in shapes]})") from None
        if self.nin == 2 and tuple(shapes[0]) != tuple(shapes[1]):
            raise ShapeError(f"{self.name}: lhs shape {tuple(shapes[0])} and rhs shape {tuple(shapes[1])} "
                             f"must be equal")
        return tuple(shapes[0])

    def make_env(self, param: Any, resources: Sequence[Any] = ()) -> EnvArguments:
        if self.enable_scalar:
            return EnvArguments(param.scalar, None, resources)
        return EnvArguments(0.0, param, resources)

    def register(self, registry: Any) -> type[OperatorProperty]:
        """Register the operator (property + device-generic implementation)."""
        if self.function is None:
            raise ValueError(f"SimpleOp {self.name!r}: set_function was not called")
        prop_cls = _make_property(self)
        registry.register_property(self.name, prop_cls, aliases=self.aliases)
        registry.register_impl(self.name, "*", lambda prop, ctx: SimpleOperator(self, prop.param),
                               impl_name="simple_op")
        return prop_cls


class _ScalarParam(Params):
    scalar = Field(float, default=1.0, doc="the scalar operand (MXNet 1.9.1 default: 1)")
    # MXNet 1.9 writes is_int into symbol JSON for scalar ops; accepted and ignored
    is_int = Field(bool, default=True, doc="MXNet 1.9 compatibility; no effect")


class SimpleOperator(Operator):
    """Runs a SimpleOp's function and gradient through the Operator contract."""

    __slots__ = ("op", "param")

    def __init__(self, op: SimpleOp, param: Any) -> None:
        self.op = op
        self.param = param

    def forward(self, ctx: OpContext, in_data: Sequence[Any], req: Sequence[OpReqType],
                out_data: Sequence[Any], aux_states: Sequence[Any]) -> None:
        env = self.op.make_env(self.param, ctx.requested)
        self.op.function(*in_data, env, out_data[0], req[0], ctx.run_ctx)  # type: ignore[misc]

    def backward(self, ctx: OpContext, out_grad: Sequence[Any], in_data: Sequence[Any],
                 out_data: Sequence[Any], req: Sequence[OpReqType], in_grad: Sequence[Any],
                 aux_states: Sequence[Any]) -> None:
        op = self.op
        if op.gradient is None:
            raise NotImplementedError(f"operator {op.name!r} has no gradient")
        env = op.make_env(self.param, ctx.requested)
        kind = op.grad_kind
        extra: tuple[Any, ...] = ()
        if kind == "out_value":
            extra = (out_data[0],)
        elif kind == "in_data":
            extra = tuple(in_data)
        if op.nin == 1:
            op.gradient(out_grad[0], *extra, env, in_grad[0], req[0], ctx.run_ctx)
        else:
            op.gradient(out_grad[0], *extra, env, in_grad[0], in_grad[1], req[0], req[1], ctx.run_ctx)


def _make_property(op: SimpleOp) -> type[OperatorProperty]:
    args = ["data"] if op.nin == 1 else ["lhs", "rhs"]
    param_cls = _ScalarParam if op.enable_scalar else op.param_cls
    I = SimpleOpInplaceOption

    class SimpleOpProp(OperatorProperty):
        simple = op

        def list_arguments(self) -> list[str]:
            return list(args)

        def infer_shape(self, in_shape: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
            if op.nin == 2 and op.shape_fn is None:
                known = next((s for s in in_shape if s is not None), None)
                ins = [tuple(s) if s is not None else known for s in in_shape]
                if known is None:
                    return ins, [None], []
                return ins, [op.out_shape(ins, op.make_env(self.param))], []  # type: ignore[arg-type]  # known is not None
            if any(s is None for s in in_shape):
                return list(in_shape), [None], []
            return [tuple(s) for s in in_shape], [op.out_shape(in_shape, op.make_env(self.param))], []

        def infer_type(self, in_type: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
            ins, known = uniform_types(in_type)  # MXNet's ElemwiseType: no silent promotion
            if op.type_fn is not None and all(t is not None for t in ins):
                return ins, [op.type_fn(*ins)], []
            return ins, [known], []

        def forward_resource(self, in_shape: list[Any]) -> list[Any]:
            return list(op.resources)

        def backward_resource(self, in_shape: list[Any]) -> list[Any]:
            return list(op.resources)

        def declare_backward_dependency(self, out_grad: list[Any], in_data: list[Any],
                                        out_data: list[Any]) -> list[Any]:
            if op.grad_kind == "out_value":
                return [out_grad[0], out_data[0]]
            if op.grad_kind == "in_data":
                return [out_grad[0], *in_data]
            return [out_grad[0]]

        def forward_inplace_option(self, in_data: list[Any], out_data: list[Any]) -> list[Any]:
            if op.inplace in (I.kInplaceInOut, I.kInplaceLhsOut):
                return [(in_data[0], out_data[0])]
            return []

        def backward_inplace_option(self, out_grad: list[Any], in_data: list[Any], out_data: list[Any],
                                    in_grad: list[Any]) -> list[Any]:
            if op.grad_inplace in (I.kInplaceOutIn, I.kInplaceOutLhs):
                return [(out_grad[0], in_grad[0])]
            return []

    SimpleOpProp.param_cls = param_cls
    SimpleOpProp.__name__ = SimpleOpProp.__qualname__ = f"SimpleOpProp_{op.name}"
    SimpleOpProp.__doc__ = op.doc
    return SimpleOpProp
