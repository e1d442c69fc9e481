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

from ..tape import STATE as _AG
from ..tape import check_inplace, record_op, record_simple
from .. import engine as _engine_mod
from ..base import InferTypeError, PlexnetError, ShapeError
from ..context import current_context
from ..engine.base import FnProperty
from ..operator.calling import split_positional
from ..operator.contract import OpContext, OperatorProperty, OpReqType
from ..operator.simple_op import EnvArguments
from ..operator.params import ParamError
from ..plugins import registries
from ..resource import get as _resources
from .. import registry as _registry_mod
from ..util import _state as _np_state
from ..util import is_np_shape
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
            names = prop.list_arguments()
            given = ", ".join(f"{n}={y._data.dtype.name}" for n, y in zip(names, inputs))
            raise InferTypeError(f"{name}: argument {names[i]!r} has dtype {x._data.dtype.name}, the operator "
                                 f"requires {np.dtype(t).name} (input types: {given}); plexnet, like MXNet, "
                                 f"does not promote: cast the inputs first (astype)")
_INLINE, _NORMAL = FnProperty.INLINE, FnProperty.NORMAL
#: element-wise results up to this size may run on the calling thread (FnProperty.INLINE)
INLINE_MAX_BYTES = int(os.environ.get("PLEXNET_INLINE_MAX_BYTES", 1 << 16))


def _elementwise_prop(result: Any, ctx: Any) -> FnProperty:
    """INLINE for small CPU results (cheaper than a worker hand-off), else NORMAL."""
    return _INLINE if result.nbytes <= INLINE_MAX_BYTES and ctx.device_type == "cpu" else _NORMAL
#: name -> (SimpleOp with its function set, default property, default env)
_simple_cache: dict[str, tuple[Any, Any, EnvArguments]] = {}
_simple_watching: Any = None


def _ops() -> Any:
    return registries().operators


#: (operator registry, plexnet.registry.generation when it was read): the registry without
#: the plugin manager's calls while no manager was replaced
_reg_seen: list = [None, -1]


def _ops_now() -> Any:
    g = _registry_mod.generation
    reg = _ops()
    _reg_seen[:] = [reg, g]
    return reg


def _simple(name: str) -> tuple[Any, Any, EnvArguments]:
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
            check_inplace(out, name, (a, o))
        fn, rd = op.function, out._data
        _engine_mod.get().push_sync(lambda rc: fn(ad, od, env, rd, _WRITE, rc), ctx,
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
            check_inplace(out, scalar_name, (a,))
        fn, rd = op.function, out._data
        _engine_mod.get().push_sync(lambda rc: fn(ad, env, rd, _WRITE, rc), ctx,
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
    _engine_mod.get().push_sync(lambda rc: fn(ad, env, rd, _WRITE, rc), ctx,
                                (a._chunk.var,), (out._chunk.var,), _elementwise_prop(rd, ctx), 0, name)
    if _AG.recording:
        record_simple(op, env, (a,), out)
    return out


# -- generic path ---------------------------------------------------------------------------------------
#
# What does not change from call to call is computed once (``_Plan``): per operator and
# parameters, the property (parameters parsed), the binding of the arrays to its arguments
# and the ``Operator`` per context (stateless operators); per input signature (shapes and
# dtypes), the inferred output shapes and types, the checks' verdict and the resource
# requests. Stateful operators (RNN, Custom), unhashable parameters and calls that fail
# take the uncached path (``_invoke_uncached``), which does all of it per call.

def _bind_order(name: str, names: Sequence[str], n_pos: int, arr_names: Sequence[str]) -> list[int]:
    """For each argument (and auxiliary state) of the operator, the index of the array that
    feeds it among ``positional arrays + keyword arrays`` (errors name the operator)."""
    if n_pos > len(names):
        raise PlexnetError(f"{name}: takes {len(names)} array arguments ({', '.join(names)}), got {n_pos}")
    bound: dict[str, int] = {n: i for i, n in enumerate(names[:n_pos])}
    for j, k in enumerate(arr_names):
        if k not in names:
            raise PlexnetError(f"{name}: unknown array argument {k!r}; arguments are {', '.join(names)}")
        if k in bound:
            raise PlexnetError(f"{name}: array argument {k!r} given twice")
        bound[k] = n_pos + j
    missing = [n for n in names if n not in bound]
    if missing:
        raise PlexnetError(f"{name}: missing array argument(s) {', '.join(map(repr, missing))} "
                           f"(arguments: {', '.join(names)})")
    return [bound[n] for n in names]


def _is_nd(a: Any) -> bool:
    return isinstance(a, NDArray)


class _Sig:
    """What one input signature (shapes, dtypes) gives: output shapes and types, resource
    requests, and whether the call is small enough to run on the calling thread."""

    __slots__ = ("oshapes", "otypes", "reqs", "nbytes")

    def __init__(self, oshapes: list[tuple], otypes: list[np.dtype], reqs: list[Any], nbytes: int) -> None:
        self.oshapes, self.otypes, self.reqs, self.nbytes = oshapes, otypes, reqs, nbytes


def _infer(name: str, prop: Any, inputs: Sequence[NDArray], n_args: int) -> _Sig:
    """Shape and type inference of one call, with MXNet's checks (errors name the operator)."""
    in_shapes = [x._data.shape for x in inputs[:n_args]]
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
                    raise InferTypeError(f"{name}: auxiliary state {a!r} has dtype {x._data.dtype.name}, "
                                     f"expected {np.dtype(t).name}")
    oshapes = [tuple(s) for s in oshapes]
    otypes = [np.dtype(t if t is not None else np.float32) for t in otypes]
    # inputs and outputs bound the work of every operator (a GEMM's too: see docs/frontend.md)
    nbytes = sum(x._data.nbytes for x in inputs) + sum(t.itemsize * _prod(s) for s, t in zip(oshapes, otypes))
    return _Sig(oshapes, otypes, list(prop.forward_resource(in_shapes)), nbytes)


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _run(name: str, prop: Any, op: Any, ctx: Any, inputs: Sequence[NDArray], n_args: int, sig: _Sig,
         out: Any, mutated: Sequence[int], nvis: int) -> Any:
    """Allocate (or check ``out=``), push the forward and record it: the per-call part."""
    if out is None and len(inputs) == n_args and not sig.reqs and not mutated and not op.is_async:
        # the common call (new outputs, no auxiliary states, resources or mutated inputs):
        # the general code below with each list built in one pass
        outs = []
        out_data = []
        writes = []
        for s, t in zip(sig.oshapes, sig.otypes):
            o = _new(s, ctx, t)
            outs.append(o)
            out_data.append(o._data)
            writes.append(o._chunk.var)
        req = [_WRITE] * len(outs)
        in_data = []
        reads = []
        for x in inputs:
            in_data.append(x._data)
            reads.append(x._chunk.var)
        is_train = _AG.training

        def run1(rc: Any) -> None:
            op.forward(OpContext(is_train, rc, []), in_data, req, out_data, [])
        small = sig.nbytes <= INLINE_MAX_BYTES and ctx.device_type == "cpu"
        _engine_mod.get().push_sync(run1, ctx, reads, writes, _INLINE if small else _NORMAL, 0, name)
        if _AG.recording:
            record_op(prop, op, inputs, n_args, outs, nvis)
        return outs[0] if nvis == 1 else outs[:nvis]
    oshapes = sig.oshapes
    if out is not None:
        outs = [out] if isinstance(out, NDArray) else list(out)
        if _AG.recording:
            for o in outs:
                check_inplace(o, name)
        for o, s in zip(outs, oshapes):
            if o._data.shape != s:
                raise ShapeError(f"{name}: out= array has shape {o.shape}, the result has {s}")
        if len(outs) < len(oshapes):  # hidden outputs still need space
            outs += [_new(s, ctx, t) for s, t in zip(oshapes[len(outs):], sig.otypes[len(outs):])]
    else:
        outs = [_new(s, ctx, t) for s, t in zip(oshapes, sig.otypes)]
    out_data = [o._data for o in outs]
    req = [_WRITE] * len(outs)
    # auxiliary states are read as well as written: a poisoned one stops the operator
    reads = [x._chunk.var for x in inputs]
    writes = [o._chunk.var for o in outs]
    if len(inputs) > n_args:
        in_data = [x._data for x in inputs[:n_args]]
        aux_data = [x._data for x in inputs[n_args:]]
        writes += [x._chunk.var for x in inputs[n_args:]]
    else:
        in_data, aux_data = [x._data for x in inputs], []
    if sig.reqs:
        res = _resources()
        requested = [res.request(ctx, r) for r in sig.reqs]
        writes += [r.var for r in requested]
    else:
        requested = []
    if mutated:  # inputs an operator updates in place (MXNet's FMutateInputs)
        writes += [inputs[i]._chunk.var for i in mutated]
    is_train = _AG.training
    if op.is_async:
        def run_async(rc: Any, on_complete: Any) -> None:
            op.forward_async(OpContext(is_train, rc, requested), in_data, req, out_data, aux_data, on_complete)
        _engine_mod.get().push_async(run_async, ctx, reads, writes, _NORMAL, 0, name)
    else:
        def run(rc: Any) -> None:
            op.forward(OpContext(is_train, rc, requested), in_data, req, out_data, aux_data)
        # small CPU work runs on the calling thread when its inputs are ready (as element-wise ops do)
        small = sig.nbytes <= INLINE_MAX_BYTES and ctx.device_type == "cpu"
        _engine_mod.get().push_sync(run, ctx, reads, writes, _INLINE if small else _NORMAL, 0, name)
    if _AG.recording:
        record_op(prop, op, inputs, n_args, outs, nvis)
    if out is not None:
        return out
    return outs[0] if nvis == 1 else outs[:nvis]


def _context_of(name: str, inputs: Sequence[NDArray], ctx_kw: Any) -> Any:
    if not inputs:
        return ctx_kw or current_context()
    ctx = inputs[0]._chunk.ctx
    for x in inputs[1:]:
        c = x._chunk.ctx
        if c is not ctx and c != ctx:
            raise PlexnetError(f"{name}: inputs are on different contexts ({ctx} and {c})")
    return ctx


def _mutated(prop: Any) -> list[int]:
    m = getattr(prop, "mutate_inputs", None)
    return list(m()) if m is not None else []


class _Plan:
    """One operator with one set of parameters (stateless): see the comment above."""

    __slots__ = ("prop", "n_args", "order", "nvis", "mutated", "ops", "sigs", "last")

    def __init__(self, prop: Any, order: list[int] | None, mutated: list[int]) -> None:
        self.prop = prop
        self.n_args = len(prop.list_arguments())
        self.order = order  # None: the arrays come in argument order already
        self.nvis = prop.num_visible_outputs()
        self.mutated = mutated
        self.ops: dict[Any, Any] = {}
        self.sigs: dict[tuple, _Sig] = {}
        self.last: tuple[Any, Any] = (None, None)  # (context, operator) of the last call: no hashing


#: (operator, number of positional arrays, keyword arrays' names, parameters) -> _Plan,
#: or None for calls that always take the uncached path; cleared when the registry changes
_plans: dict[tuple, _Plan | None] = {}
_plans_registry: Any = None
_MAX_PLANS = 4096
_MAX_SIGS = 64


def _plans_for(reg: Any) -> dict[tuple, _Plan | None]:
    global _plans_registry
    if reg is not _plans_registry:  # a new registry (tests swap managers): plans start over
        _plans.clear()
        reg.add_listener(_plans.clear)
        _plans_registry = reg
    return _plans


def _make_plan(reg: Any, name: str, n_pos: int, arr_names: tuple, params: dict[str, Any]) -> _Plan | None:
    cls = reg.property_class(name)
    pcls = cls.param_cls
    if pcls is not None and "num_args" in pcls._fields and "num_args" not in params:
        params["num_args"] = n_pos + len(arr_names)
    prop = reg.create_property(name, params)
    if not prop.is_stateless():
        return None
    names = prop.list_arguments() + prop.list_auxiliary_states()
    order = _bind_order(name, names, n_pos, arr_names)
    return _Plan(prop, None if order == list(range(len(names))) else order, _mutated(prop))


def invoke(name: str, args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None) -> Any:
    """Run operator ``name`` imperatively, called as MXNet's generated functions are:
    NDArray inputs positionally or by argument name, then parameters positionally (in
    the operator's declaration order) or by keyword; ``out=`` writes into given arrays
    and returns them; ``name=`` is accepted and ignored (symbol compatibility)."""
    for a in args:
        if a.__class__ is not NDArray and not isinstance(a, NDArray):  # positional parameters, None inputs
            kwargs = dict(kwargs or {})
            args = split_positional(name, _ops().property_class(name), args, kwargs, _is_nd)
            break
    out = ctx_kw = None
    items: list[tuple] = []
    arr_names: tuple = ()
    arr_vals: list[NDArray] = []
    if kwargs:
        for k, v in kwargs.items():
            if k == "out":
                out = v
            elif v.__class__ is NDArray or isinstance(v, NDArray):
                arr_names += (k,)
                arr_vals.append(v)
            elif k == "ctx":
                ctx_kw = v
            elif k != "name":
                items.append((k, v.__class__, v))
    reg = _reg_seen[0] if _reg_seen[1] == _registry_mod.generation else _ops_now()
    plans = _plans if reg is _plans_registry else _plans_for(reg)
    key = (name, len(args), arr_names, *items)
    try:
        plan = plans[key]
    except KeyError:
        if len(plans) >= _MAX_PLANS:
            plans.clear()
        try:
            plan = plans[key] = _make_plan(reg, name, len(args), arr_names, {k: v for k, _c, v in items})
        except PlexnetError:
            # every positional value an array, more than the inputs: MXNet binds the next
            # positions to the parameters, then ``out`` (``nd.abs(x, y)`` writes into y)
            kw = dict(kwargs or {})
            rest = split_positional(name, reg.property_class(name), args, kw, _is_nd)
            if len(rest) == len(args):
                raise
            return invoke(name, rest, kw)
    except TypeError:  # an unhashable parameter (a list): nothing to key on
        plan = None
    if plan is None:
        return _invoke_uncached(reg, name, args, arr_names, arr_vals, items, out, ctx_kw)
    if arr_vals:
        src = [*args, *arr_vals]
        inputs: Sequence[NDArray] = [src[i] for i in plan.order] if plan.order is not None else src
    elif plan.order is not None:
        inputs = [args[i] for i in plan.order]
    else:
        inputs = args
    if inputs:
        ctx = inputs[0]._chunk.ctx
        # np_shape changes what a 0 in a shape means (zero-size vs. unknown): part of the key
        sk: list = [_np_state.__dict__.get("np_shape", False)]
        for x in inputs:
            c = x._chunk.ctx
            if c is not ctx and c != ctx:
                _context_of(name, inputs, ctx_kw)  # raises: inputs on different contexts
            d = x._data
            sk.append(d.shape)
            sk.append(d.dtype)
        sig_key = tuple(sk)
    else:
        ctx = ctx_kw or current_context()
        sig_key = (is_np_shape(),)
    sig = plan.sigs.get(sig_key)
    if sig is None:
        sig = _infer(name, plan.prop, inputs, plan.n_args)
        if len(plan.sigs) >= _MAX_SIGS:
            plan.sigs.clear()
        plan.sigs[sig_key] = sig
    last = plan.last
    if last[0] is ctx:
        op = last[1]
    else:
        op = plan.ops.get(ctx)
        if op is None:
            op = plan.ops[ctx] = plan.prop.create_operator(ctx)
        plan.last = (ctx, op)
    return _run(name, plan.prop, op, ctx, inputs, plan.n_args, sig, out, plan.mutated, plan.nvis)


def _invoke_uncached(reg: Any, name: str, args: Sequence[NDArray], arr_names: tuple, arr_vals: list[NDArray],
                     items: list[tuple], out: Any, ctx_kw: Any) -> Any:
    """The generic path doing everything per call (stateful operators, unhashable parameters)."""
    params = {k: v for k, _c, v in items}
    cls = reg.property_class(name)
    pcls = cls.param_cls
    if pcls is not None and "num_args" in pcls._fields and "num_args" not in params:
        params["num_args"] = len(args) + len(arr_names)
    prop = reg.create_property(name, params)
    names = prop.list_arguments() + prop.list_auxiliary_states()
    src = [*args, *arr_vals]
    inputs = [src[i] for i in _bind_order(name, names, len(args), arr_names)]
    ctx = _context_of(name, inputs, ctx_kw)
    n_args = len(prop.list_arguments())
    sig = _infer(name, prop, inputs, n_args)
    return _run(name, prop, prop.create_operator(ctx), ctx, inputs, n_args, sig, out, _mutated(prop),
                prop.num_visible_outputs())


def _invoke(name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    return invoke(name, args, kwargs)


def make_op_function(name: str) -> Any:
    """The ``nd.<name>`` function for a registered operator."""
    def fn(*args: Any, **kwargs: Any) -> Any:
        return invoke(name, args, kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn._invoke_direct = invoke  # type: ignore[attr-defined]  # fn(*a, **kw) is invoke(name, a, kw)
    fn.__doc__ = _ops().function_doc(name, f"The {name} operator.")
    from ..operator.signature import operator_signature  # help() and IDEs show the parameters
    fn.__signature__ = operator_signature(_ops().property_class(name), "nd")  # type: ignore[attr-defined]
    return fn


__all__ += ["make_op_function", "ParamError"]
