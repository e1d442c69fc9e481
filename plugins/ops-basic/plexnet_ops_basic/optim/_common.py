"""What the optimizer update operators share (not an operator module): the common
parameter fields, the property (``weight, grad`` arguments, states as auxiliary states,
one output) and the operator that runs a kernel of ``plexnet.optimizer.kernels``."""
from __future__ import annotations

from typing import Any, Callable, ClassVar

import numpy as np  # dtype arithmetic only

from plexnet.base import PlexnetError, ShapeError
from plexnet.operator import Field, Operator, OperatorProperty, OpReqType
from plexnet.optimizer import kernels

__all__ = ["lr_field", "wd_field", "rescale_field", "clip_field", "lazy_field", "momentum_field",
           "UpdateProp", "UpdateOp", "UpdateTypeError", "register_update"]

NULL, WRITE, INPLACE, ADD = (int(OpReqType.null), int(OpReqType.write), int(OpReqType.inplace),
                             int(OpReqType.add))


class UpdateTypeError(PlexnetError, TypeError):
    """Weight, gradient and states of an update operator have inconsistent dtypes."""


# -- parameter fields (MXNet's names, defaults and descriptions; one instance per class) --------------

def lr_field() -> Field:
    return Field(float, doc="learning rate")


def wd_field() -> Field:
    return Field(float, default=0.0, doc="weight decay (L2 penalty coefficient)")


def rescale_field() -> Field:
    return Field(float, default=1.0, doc="the gradient is multiplied by it first")


def clip_field() -> Field:
    return Field(float, default=-1.0, doc="clip the rescaled gradient to [-clip_gradient, clip_gradient]; "
                                          "a negative value turns clipping off (0 clips to 0, as MXNet)")


def lazy_field() -> Field:
    return Field(bool, default=True, doc="row_sparse lazy update (accepted; plexnet arrays are dense)")


def momentum_field() -> Field:
    return Field(float, default=0.0, doc="the decay rate of the momentum")


def _fmt(v: Any) -> str:
    return "unknown" if v is None else str(tuple(v))


class UpdateProp(OperatorProperty):
    """Arguments ``weight, grad``; auxiliary states ``states`` (updated in place); one
    output, the new weight. Subclasses set ``param_cls``, ``states``, ``kernel`` (a
    function of ``plexnet.optimizer.kernels``) and, for the ``mp_*`` operators, ``mp``
    (the last state is the float32 master ``weight32``; every state is float32).
    ``kernel_kwargs()`` maps the parameters to the kernel's keyword arguments."""

    states: ClassVar[tuple[str, ...]] = ()
    kernel: ClassVar[Callable[..., None] | None] = None
    mp: ClassVar[bool] = False
    #: parameters the kernel does not take
    unused: ClassVar[tuple[str, ...]] = ("lazy_update",)
    #: fixed kernel keyword arguments (e.g. ``centered=True``)
    fixed: ClassVar[dict[str, Any]] = {}
    #: parameter name -> kernel keyword, where they differ
    renamed: ClassVar[dict[str, str]] = {}
    #: kernel keyword told whether the output aliases the weight (MXNet's NAG kernel reads
    #: the weight after writing the output, so the result depends on it)
    alias_kwarg: ClassVar[str | None] = None

    def list_arguments(self) -> list[str]:
        return ["weight", "grad"]

    def list_auxiliary_states(self) -> list[str]:
        return list(self.states)

    def list_outputs(self) -> list[str]:
        return ["output"]

    def kernel_kwargs(self) -> dict[str, Any]:
        kw = {self.renamed.get(k, k): v for k, v in self.param.to_dict().items() if k not in self.unused}
        kw.update(self.fixed)
        return kw

    def infer_shape(self, in_shape: list) -> tuple[list, list, list]:
        op, names = self.op_name, self.list_arguments()
        shapes = [None if s is None else tuple(int(d) for d in s) for s in in_shape]
        known = next((s for s in shapes if s is not None), None)
        if known is not None:
            for n, s in zip(names, shapes):
                if s is not None and s != known:
                    raise ShapeError(f"{op}: argument {n!r} has shape {s}, but {names[0]!r} and {names[1]!r} "
                                     f"must have one shape (weight={_fmt(shapes[0])}, grad={_fmt(shapes[1])})")
        naux = len(self.states)
        return [known, known], [known], [known] * naux

    def infer_type(self, in_type: list) -> tuple[list, list, list]:
        op, names = self.op_name, self.list_arguments()
        types = [None if t is None else np.dtype(t) for t in in_type]
        known = next((t for t in types if t is not None), None)
        if known is not None:
            for n, t in zip(names, types):
                if t is not None and t != known:
                    raise UpdateTypeError(f"{op}: argument {n!r} has dtype {t.name}, but {names[0]!r} and "
                                          f"{names[1]!r} must have one dtype (weight={types[0]}, grad={types[1]})")
            if known.kind != "f":
                raise UpdateTypeError(f"{op}: weight and grad must be floating point, got {known.name}")
        aux = [np.dtype(np.float32)] * len(self.states) if self.mp else [known] * len(self.states)
        return [known, known], [known], aux

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        return []

    def forward_inplace_option(self, in_data: list, out_data: list) -> list:
        return [(in_data[0], out_data[0])]


def _ptr(a: Any) -> int:
    iface = getattr(a, "__cuda_array_interface__", None) or a.__array_interface__
    return iface["data"][0]


def _same(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same array (object or identical view of one buffer)."""
    if a is b:
        return True
    try:
        return a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype and _ptr(a) == _ptr(b)
    except (AttributeError, KeyError, TypeError):
        return False


def _overlaps(xp: Any, a: Any, others: Any) -> bool:
    may = getattr(xp, "may_share_memory", None)
    if may is None:
        return True
    return any(may(a, o) for o in others)


def _store(xp: Any, out: Any, req: int, value: Any) -> None:
    if req == ADD:
        xp.add(out, value, out=out, casting="unsafe")
    elif req != NULL and value is not out:
        xp.copyto(out, value, casting="unsafe")


class UpdateOp(Operator):
    """Runs the property's kernel: states in place, the new weight into the output
    according to ``req``. With ``out`` aliasing ``weight`` (``out=weight``, or
    ``req='inplace'``) the weight is updated where it is; otherwise ``weight`` is not
    modified. ``req='null'`` still updates the states (MXNet's kernels do)."""

    def __init__(self, prop: UpdateProp) -> None:
        self.kernel = type(prop).kernel
        self.kw = prop.kernel_kwargs()
        self.mp = prop.mp
        self.alias_kwarg = prop.alias_kwarg

    def forward(self, ctx: Any, in_data: Any, req: Any, out_data: Any, aux_states: Any) -> None:
        xp = ctx.xp
        w, g = in_data[0], in_data[1]
        out, r = out_data[0], int(req[0])
        states = list(aux_states)
        kernel, kw = self.kernel, self.kw
        aliased = self.mp or r == INPLACE or (r != NULL and _same(out, w))
        if self.alias_kwarg is not None:
            kw = {**kw, self.alias_kwarg: aliased}
        if self.mp:  # the master copy is updated where it is, the output gets it rounded
            w32 = states.pop()
            if r in (WRITE, INPLACE):
                kernels.multi_precision(kernel, xp, out, g, states, w32, **kw)
            else:
                kernel(xp, w32, g, states, **kw)
                _store(xp, out, r, w32)
            return
        if aliased and r != ADD:
            kernel(xp, out, g, states, **kw)
        elif r == WRITE and not _overlaps(xp, out, [w, g] + states):
            xp.copyto(out, w)
            kernel(xp, out, g, states, **kw)
        else:
            tmp = w.copy()
            kernel(xp, tmp, g, states, **kw)
            _store(xp, out, r, tmp)


def register_update(registry: Any, name: str, prop_cls: type[UpdateProp]) -> None:
    """Register an update operator with the device-generic ``xp`` implementation."""
    registry.register_property(name, prop_cls)
    registry.register_impl(name, "*", lambda prop, ctx: UpdateOp(prop), impl_name="xp")
