"""Imperative operator invocation: ``nd.<Op>(...)`` and NDArray arithmetic.

Two paths, one semantics:

* SimpleOps (unary/binary, the bulk of arithmetic) take a short path: output shape from
  the op's shape function, then one engine push calling the op's function.
* Every other operator goes through its ``OperatorProperty``: argument binding, shape
  and type inference (errors raised here, at the call), resource requests and an
  ``Operator`` from the registry for the array's context.
"""
from __future__ import annotations

import numbers
import os
from typing import Any, Sequence

import numpy as np

from ..autograd.state import STATE as _AG
from ..autograd.tape import check_inplace, record_op, record_simple
from .. import engine as _engine_mod
from ..base import PlexnetError, ShapeError
from ..context import current_context
from ..engine.base import FnProperty
from ..operator.calling import split_positional
from ..operator.contract import OpContext, OperatorProperty, OpReqType
from ..operator.simple_op import EnvArguments, SimpleOp
from ..operator.params import ParamError
from ..plugins import registries
from ..resource import get as _resources
from .ndarray import NDArray, _new

__all__ = ["invoke", "_invoke", "_binary", "_unary"]

_WRITE = OpReqType.write
_default_infer_type = OperatorProperty.infer_type


def _check_input_types(name: str, prop: Any, expected: Sequence[Any], inputs: Sequence[Any]) -> None:
    """MXNet's infer_type rule in imperative calls: an input whose dtype differs from
    what the operator requires is an error naming the operator and the arguments
    (no silent promotion)."""
    for i, (t, x) in enumerate(zip(expected, inputs)):
        if t is not None and np.dtype(t) != x._data.dtype:
            from ..executor.graph import InferTypeError
            names = prop.list_arguments()
            given = ", ".join(f"{n}={y._data.dtype.name}" for n, y in zip(names, inputs))
            raise InferTypeError(f"{name}: argument {names[i]!r} has dtype {x._data.dtype.name}, the operator "
                                 f"requires {np.dtype(t).name} (input types: {given}); plexnet, like MXNet, "
                                 f"does not promote: cast the inputs first (astype)")
_INLINE = FnProperty.INLINE
#: element-wise results up to this size may run on the calling thread (FnProperty.INLINE)
INLINE_MAX_BYTES = int(os.environ.get("PLEXNET_INLINE_MAX_BYTES", 1 << 16))


def _elementwise_prop(result: Any, ctx: Any) -> int:
    """INLINE for small CPU results (cheaper than a worker hand-off), else NORMAL."""
    return _INLINE if result.nbytes <= INLINE_MAX_BYTES and ctx.device_type == "cpu" else 0
_simple_cache: dict[str, tuple[SimpleOp, Any, EnvArguments]] = {}
_simple_watching: Any = None


def _ops() -> Any:
    return registries().operators


def _simple(name: str) -> tuple[SimpleOp, Any, EnvArguments]:
    """(SimpleOp, default prop, default env) for a SimpleOp-registered operator."""
    hit = _simple_cache.get(name)
    if hit is None:
        reg = _ops()
        prop = reg.create_property(name, {})
        op = getattr(type(prop), "simple", None)
        if op is None:
            raise PlexnetError(f"operator {name!r} is not a SimpleOp")
        hit = (op, prop, op.make_env(prop.param))
        global _simple_watching
        if _simple_watching is not reg:  # one listener per registry, not one per miss
            reg.add_listener(_simple_cache.clear)
            _simple_watching = reg
        _simple_cache[name] = hit
    return hit


def _check_ctx(name: str, a: NDArray, b: NDArray) -> None:
    if a._chunk.ctx != b._chunk.ctx:
        raise PlexnetError(f"{name}: operands are on different contexts ({a._chunk.ctx} and {b._chunk.ctx}); "
                           f"use as_in_context() first")


def _binary(name: str, scalar_name: str, a: NDArray, o: Any, reflect: bool = False,
            out: NDArray | None = None) -> NDArray:
    """``a <op> o`` for NDArray or scalar ``o`` (``reflect``: ``o <op> a``).

    The hottest path of the imperative API: keep it free of avoidable calls."""
    cls = o.__class__
    if cls is NDArray:
        hit = _simple_cache.get(name) or _simple(name)
        op, env = hit[0], hit[2]
        if reflect:
            a, o = o, a
        ac, oc = a._chunk, o._chunk
        ctx = ac.ctx
        if oc.ctx is not ctx and oc.ctx != ctx:
            _check_ctx(name, a, o)
        ad, od = a._data, o._data
        if ad.dtype != od.dtype:  # MXNet's ElemwiseType: no silent promotion
            _check_input_types(name, hit[1], [ad.dtype] * 2, [a, o])
        shape = ad.shape
        if shape != od.shape:
            shape = op.out_shape((shape, od.shape), env)
        if out is None:
            out = _new(shape, ctx, ad.dtype)
        elif out._data.shape != shape:
            raise ShapeError(f"{name}: in-place result shape {shape} differs from the target's {out.shape}")
        elif _AG.recording:
            check_inplace(out, name)
        fn, rd = op.function, out._data
        ac.engine.push_sync(lambda rc: fn(ad, od, env, rd, _WRITE, rc), ctx,
                            (ac.var, oc.var), (out._chunk.var,), _elementwise_prop(rd, ctx), 0, name)
        if _AG.recording:
            record_simple(op, env, (a, o), out)
        return out
    if cls is float or cls is int or isinstance(o, (numbers.Number, np.generic)):
        hit = _simple_cache.get(scalar_name) or _simple(scalar_name)
        op = hit[0]
        env = EnvArguments(float(o), None, ())
        ac = a._chunk
        ctx, ad = ac.ctx, a._data
        if out is None:
            out = _new(ad.shape, ctx, ad.dtype)
        elif _AG.recording:
            check_inplace(out, scalar_name)
        fn, rd = op.function, out._data
        ac.engine.push_sync(lambda rc: fn(ad, env, rd, _WRITE, rc), ctx,
                            (ac.var,), (out._chunk.var,), _elementwise_prop(rd, ctx), 0, scalar_name)
        if _AG.recording:
            record_simple(op, env, (a,), out)
        return out
    if isinstance(o, (np.ndarray, list, tuple)):
        from .ndarray import array
        return _binary(name, scalar_name, a, array(o, ctx=a.context, dtype=a.dtype), reflect, out)
    return NotImplemented


def _unary(name: str, a: NDArray) -> NDArray:
    op, _prop, env = _simple(name)
    out = _new(op.out_shape((a._data.shape,), env), a._chunk.ctx, a._data.dtype)
    fn, ad, rd = op.function, a._data, out._data
    ctx = a._chunk.ctx
    a._chunk.engine.push_sync(lambda rc: fn(ad, env, rd, _WRITE, rc), ctx,
                              (a._chunk.var,), (out._chunk.var,), _elementwise_prop(rd, ctx), 0, name)
    if _AG.recording:
        record_simple(op, env, (a,), out)
    return out


# -- generic path ---------------------------------------------------------------------------------------

def _bind_inputs(name: str, prop: Any, args: Sequence[NDArray], arr_kwargs: dict[str, NDArray]) -> list[NDArray]:
    names = prop.list_arguments() + prop.list_auxiliary_states()
    if len(args) > len(names):
        raise PlexnetError(f"{name}: takes {len(names)} array arguments ({', '.join(names)}), got {len(args)}")
    bound: dict[str, NDArray] = dict(zip(names, args))
    for k, v in arr_kwargs.items():
        if k not in names:
            raise PlexnetError(f"{name}: unknown array argument {k!r}; arguments are {', '.join(names)}")
        if k in bound:
            raise PlexnetError(f"{name}: array argument {k!r} given twice")
        bound[k] = v
    missing = [n for n in names if n not in bound]
    if missing:
        raise PlexnetError(f"{name}: missing array argument(s) {', '.join(map(repr, missing))} "
                           f"(arguments: {', '.join(names)})")
    return [bound[n] for n in names]


def _is_nd(a: Any) -> bool:
    return isinstance(a, NDArray)


def invoke(name: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None) -> Any:
    """Run operator ``name`` imperatively, called as MXNet's generated functions are:
    NDArray inputs positionally or by argument name, then parameters positionally (in
    the operator's declaration order) or by keyword; ``out=`` writes into given arrays
    and returns them; ``name=`` is accepted and ignored (symbol compatibility)."""
    kwargs = dict(kwargs or {})
    reg = _ops()
    cls = reg.property_class(name)
    # MXNet's generated signature: inputs, then parameters in declaration order, out, name
    args = split_positional(name, cls, args, kwargs, _is_nd)
    out = kwargs.pop("out", None)
    kwargs.pop("name", None)
    ctx_kw = kwargs.pop("ctx", None)
    arr_kwargs = {k: v for k, v in kwargs.items() if isinstance(v, NDArray)}
    params = {k: v for k, v in kwargs.items() if k not in arr_kwargs}
    pcls = cls.param_cls
    if pcls is not None and "num_args" in pcls._fields and "num_args" not in params:
        params["num_args"] = len(args) + len(arr_kwargs)
    prop = reg.create_property(name, params)
    inputs = _bind_inputs(name, prop, args, arr_kwargs)
    n_args = len(prop.list_arguments())
    if inputs:
        ctx = inputs[0]._chunk.ctx
        for x in inputs[1:]:
            if x._chunk.ctx != ctx:
                raise PlexnetError(f"{name}: inputs are on different contexts ({ctx} and {x._chunk.ctx})")
    else:
        ctx = ctx_kw or current_context()
    in_shapes = [x.shape for x in inputs[:n_args]]
    ishapes, oshapes, ashapes = prop.infer_shape(list(in_shapes))
    if any(s is None for s in oshapes):
        raise ShapeError(f"{name}: cannot infer output shapes from input shapes {in_shapes}")
    for i, (s, x) in enumerate(zip(ishapes, inputs)):
        if s is not None and tuple(s) != x.shape:
            raise ShapeError(f"{name}: argument {(prop.list_arguments() + prop.list_auxiliary_states())[i]!r} "
                             f"has shape {x.shape}, expected {tuple(s)}")
    aux_names = prop.list_auxiliary_states()
    for a, s, x in zip(aux_names, ashapes, inputs[n_args:]):
        if s is not None and tuple(s) != x.shape:
            raise ShapeError(f"{name}: auxiliary state {a!r} has shape {x.shape}, expected {tuple(s)}")
    _itypes, otypes, atypes = prop.infer_type([x._data.dtype for x in inputs[:n_args]])
    _check_input_types(name, prop, _itypes, inputs[:n_args])
    if type(prop).infer_type is not _default_infer_type:  # the operator states its aux dtypes
        for a, t, x in zip(aux_names, atypes, inputs[n_args:]):
            if t is not None and np.dtype(t) != x._data.dtype:
                from ..executor.graph import InferTypeError
                raise InferTypeError(f"{name}: auxiliary state {a!r} has dtype {x._data.dtype.name}, "
                                     f"expected {np.dtype(t).name}")
    if out is not None:
        outs = [out] if isinstance(out, NDArray) else list(out)
        if _AG.recording:
            for o in outs:
                check_inplace(o, name)
        for o, s in zip(outs, oshapes):
            if o.shape != tuple(s):
                raise ShapeError(f"{name}: out= array has shape {o.shape}, the result has {tuple(s)}")
        if len(outs) < len(oshapes):  # hidden outputs still need space
            outs += [_new(tuple(s), ctx, np.dtype(t or np.float32)) for s, t in zip(oshapes[len(outs):],
                                                                                  otypes[len(outs):])]
    else:
        outs = [_new(tuple(s), ctx, np.dtype(t if t is not None else np.float32)) for s, t in zip(oshapes, otypes)]
    requested = [_resources().request(ctx, r) for r in prop.forward_resource(in_shapes)]
    op = prop.create_operator(ctx)
    is_train = _AG.training
    in_data = [x._data for x in inputs[:n_args]]
    aux_data = [x._data for x in inputs[n_args:]]
    out_data = [o._data for o in outs]
    req = [_WRITE] * len(outs)

    # auxiliary states are read as well as written: a poisoned one stops the operator
    reads = [x._chunk.var for x in inputs]
    writes = [o._chunk.var for o in outs] + [x._chunk.var for x in inputs[n_args:]] + [r.var for r in requested]
    mutated = getattr(prop, "mutate_inputs", None)  # inputs an operator updates in place (MXNet's FMutateInputs)
    if mutated is not None:
        writes += [inputs[i]._chunk.var for i in mutated()]
    if op.is_async:
        def run_async(rc: Any, on_complete: Any) -> None:
            op.forward_async(OpContext(is_train, rc, requested), in_data, req, out_data, aux_data, on_complete)
        _engine_mod.get().push_async(run_async, ctx, reads, writes, 0, 0, name)
    else:
        def run(rc: Any) -> None:
            op.forward(OpContext(is_train, rc, requested), in_data, req, out_data, aux_data)
        _engine_mod.get().push_sync(run, ctx, reads, writes, 0, 0, name)
    if _AG.recording:
        record_op(prop, op, inputs, n_args, outs)
    nvis = prop.num_visible_outputs()
    if out is not None:
        return out
    return outs[0] if nvis == 1 else outs[:nvis]


def _invoke(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    return invoke(name, args, kwargs)


def make_op_function(name: str) -> Any:
    """The ``nd.<name>`` function for a registered operator."""
    def fn(*args: Any, **kwargs: Any) -> Any:
        return invoke(name, args, kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _ops().function_doc(name, f"The {name} operator.")
    from ..operator.signature import operator_signature  # help() and IDEs show the parameters
    fn.__signature__ = operator_signature(_ops().property_class(name), "nd")  # type: ignore[attr-defined]
    return fn


__all__ += ["make_op_function", "ParamError"]
