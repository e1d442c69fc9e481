"""The operator contract: ``Operator`` (an implementation) and ``OperatorProperty``
(the semantics), as in MXNet's ``operator.h``.

Arrays handed to ``forward``/``backward`` are raw device arrays (numpy or cupy
ndarrays: the ``TBlob`` role), already allocated with the inferred shapes. Write results
through ``assign(out, req, value)`` or honour ``req`` yourself.
"""
from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Sequence

from ..base import ShapeError
from ..registry import registries
from .params import Params

if TYPE_CHECKING:  # pragma: no cover
    from ..context import Context, RunContext
    from ..resource import Resource, ResourceRequest

__all__ = ["OpReqType", "assign", "OpContext", "Operator", "OperatorProperty", "ShapeList",
           "uniform_types"]

ShapeList = list  # list[tuple[int, ...] | None]


class OpReqType(IntEnum):
    """How an operator writes an output: not at all, overwrite, overwrite where the
    output shares the input's memory, or accumulate (``+=``)."""

    null = 0
    write = 1
    inplace = 2
    add = 3

    @classmethod
    def parse(cls, v: "OpReqType | str | int") -> "OpReqType":
        if isinstance(v, str):
            try:
                return {"null": cls.null, "write": cls.write, "inplace": cls.inplace,
                        "add": cls.add}[v]
            except KeyError:
                raise ValueError(f"grad_req/req must be one of 'null', 'write', 'inplace', 'add'; "
                                 f"got {v!r}") from None
        return cls(v)


kNullOp, kWriteTo, kWriteInplace, kAddTo = OpReqType.null, OpReqType.write, OpReqType.inplace, OpReqType.add


def assign(out: Any, req: OpReqType, value: Any) -> None:
    """``ASSIGN_DISPATCH``: store ``value`` into ``out`` according to ``req``."""
    if req == OpReqType.null:
        return
    if req == OpReqType.add:
        out += value
    elif value is not out:
        out[...] = value


class OpContext(NamedTuple):
    """What an operator gets at run time: phase, run context and its resources."""

    is_train: bool
    run_ctx: "RunContext"
    requested: Sequence["Resource"] = ()

    @property
    def xp(self) -> Any:
        """The array module of the device the operator runs on."""
        return self.run_ctx.xp


class Operator:
    """An implementation of an operator for one context.

    An operator whose work finishes later on another thread (MXNet's Python CustomOp,
    an operator waiting on an external library) sets ``is_async = True`` and implements
    ``forward_async``/``backward_async``, which get an ``on_complete(exc=None)`` callback;
    callers push it with ``Engine.push_async`` so that no engine worker blocks on it.
    """

    is_async = False

    def forward_async(self, ctx: OpContext, in_data: Sequence[Any], req: Sequence[OpReqType],
                      out_data: Sequence[Any], aux_states: Sequence[Any], on_complete: Any) -> None:
        raise NotImplementedError

    def backward_async(self, ctx: OpContext, out_grad: Sequence[Any], in_data: Sequence[Any],
                       out_data: Sequence[Any], req: Sequence[OpReqType], in_grad: Sequence[Any],
                       aux_states: Sequence[Any], on_complete: Any) -> None:
        raise NotImplementedError

    def forward(self, ctx: OpContext, in_data: Sequence[Any], req: Sequence[OpReqType],
                out_data: Sequence[Any], aux_states: Sequence[Any]) -> None:
        raise NotImplementedError

    def backward(self, ctx: OpContext, out_grad: Sequence[Any], in_data: Sequence[Any],
                 out_data: Sequence[Any], req: Sequence[OpReqType], in_grad: Sequence[Any],
                 aux_states: Sequence[Any]) -> None:
        """Compute ``in_grad``. Only the arrays named by the property's
        ``declare_backward_dependency`` are guaranteed valid; others may be ``None``."""
        raise NotImplementedError(f"{type(self).__name__} has no backward")


def uniform_types(in_type: Sequence[Any], free: Sequence[int] = ()) -> tuple[list[Any], Any]:
    """MXNet's uniform-type rule: ``(input types, the type)`` where every input but those
    in ``free`` gets the first known type among them (a ``free`` input keeps its own,
    or takes that type when unknown). Mismatches are left for the caller to report."""
    known = next((t for i, t in enumerate(in_type) if t is not None and i not in free), None)
    if known is None:
        known = next((t for t in in_type if t is not None), None)
    ins = [t if (i in free and t is not None) or known is None else known for i, t in enumerate(in_type)]
    return ins, known


class OperatorProperty:
    """Semantics of an operator: parameters, arguments, inference, dependencies.

    Subclasses set ``param_cls`` (a ``Params`` struct) and override what differs from
    the defaults below. The registry sets ``op_name``. Instances are created per use
    with ``init(kwargs)``.
    """

    op_name: ClassVar[str] = ""
    param_cls: ClassVar[type[Params] | None] = None
    #: keyword arguments accepted besides the param struct (e.g. MXNet's ``name``)
    extra_kwargs: ClassVar[tuple[str, ...]] = ()
    #: indices of arguments whose dtype need not match the others' (the default
    #: ``infer_type`` leaves them alone: e.g. ``broadcast_like``'s ``rhs``, read for its shape)
    free_dtype_inputs: ClassVar[tuple[int, ...]] = ()

    def __init__(self) -> None:
        self.param: Any = None

    # -- parameters ------------------------------------------------------------------------
    def init(self, kwargs: dict[str, Any]) -> None:
        """Parse keyword arguments (values or MXNet strings) into ``self.param``."""
        if self.param_cls is not None:
            self.param = self.param_cls.parse(self.op_name, kwargs, ignore=self.extra_kwargs)
        # else: as MXNet, an operator without a parameter struct ignores keyword arguments
        # (``nd.broadcast_add(a, b, axis=0)`` runs; MXNet's SVRGModule relies on it)

    def get_params(self) -> dict[str, str]:
        """Parameters in MXNet's string form."""
        return self.param.to_strings() if self.param is not None else {}

    # -- signature ---------------------------------------------------------------------------
    def list_arguments(self) -> list[str]:
        return ["data"]

    def list_outputs(self) -> list[str]:
        return ["output"]

    @staticmethod
    def default_output_names(n: int) -> list[str]:
        """nnvm's names for ``n`` outputs (hidden ones counted) of an operator that lists
        none of its own, as MXNet shows them: ``output`` for one, else ``output0``, ``output1`` ..."""
        return ["output"] if n == 1 else [f"output{i}" for i in range(n)]

    def list_auxiliary_states(self) -> list[str]:
        return []

    def num_outputs(self) -> int:
        return len(self.list_outputs())

    def num_visible_outputs(self) -> int:
        return self.num_outputs()

    # -- inference ----------------------------------------------------------------------------
    def infer_shape(self, in_shape: ShapeList[Any]) -> tuple[ShapeList[Any], ShapeList[Any], ShapeList[Any]]:
        """Return ``(in_shapes, out_shapes, aux_shapes)``.

        ``in_shape`` entries are tuples or ``None`` (unknown). Fill in what can be
        deduced; leave ``None`` where information is missing; raise ``ShapeError`` naming
        the operator and the shapes on a conflict. Default: every input and output has the
        shape of the first known input.
        """
        known = next((s for s in in_shape if s is not None), None)
        for i, s in enumerate(in_shape):
            if s is not None and known is not None and tuple(s) != tuple(known):
                raise ShapeError(f"{self.op_name}: input {self.list_arguments()[i]!r} has shape "
                                 f"{tuple(s)}, expected {tuple(known)} (all inputs: {in_shape})")
        ins = [known if s is None else tuple(s) for s in in_shape]
        return ins, [known] * self.num_outputs(), [known] * len(self.list_auxiliary_states())

    def infer_type(self, in_type: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
        """Return ``(in_types, out_types, aux_types)`` as numpy dtypes (``None`` unknown).

        Default, MXNet's rule for operators that state none ("This layer requires uniform
        type"): every input, output and auxiliary state has the first known input's type.
        An input given another type is reported by the caller (symbolic inference and
        the imperative call both compare what is returned here with what was given):
        plexnet never promotes silently. Inputs listed in ``free_dtype_inputs`` (read
        for their shape only) keep their own type."""
        ins, known = uniform_types(in_type, self.free_dtype_inputs)
        return ins, [known] * self.num_outputs(), [known] * len(self.list_auxiliary_states())

    # -- resources ------------------------------------------------------------------------------
    def forward_resource(self, in_shape: ShapeList[Any]) -> list["ResourceRequest"]:
        return []

    def backward_resource(self, in_shape: ShapeList[Any]) -> list["ResourceRequest"]:
        return []

    # -- memory planning hints -------------------------------------------------------------------
    def declare_backward_dependency(self, out_grad: list[int], in_data: list[int],
                                    out_data: list[int]) -> list[int]:
        """Ids (from the three lists) that ``backward`` reads. Default: all of them."""
        return list(out_grad) + list(in_data) + list(out_data)

    def forward_inplace_option(self, in_data: list[int], out_data: list[int]) -> list[tuple[int, int]]:
        """``(in_id, out_id)`` pairs that may share memory in forward (a hint)."""
        return []

    def backward_inplace_option(self, out_grad: list[int], in_data: list[int], out_data: list[int],
                                in_grad: list[int]) -> list[tuple[int, int]]:
        """``(id, in_grad_id)`` pairs that may share memory in backward (a hint)."""
        return []

    def need_top_grad(self) -> bool:
        """False for loss layers whose backward ignores the head gradient."""
        return True

    # -- implementation ---------------------------------------------------------------------------
    def create_operator(self, ctx: "Context") -> Operator:
        """An ``Operator`` for ``ctx``, chosen from the registry's implementations."""
        op: Operator = registries().operators.create_operator(self, ctx)
        return op

    def is_stateless(self) -> bool:
        """True if one Operator instance may be shared by every call with equal params."""
        return True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.op_name} {self.get_params()}>"
