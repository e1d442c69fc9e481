"""MXNet's calling convention for generated operator functions (``nd.<op>``, ``sym.<op>``).

MXNet 1.x generates ``clip(data=None, a_min=_Null, a_max=_Null, out=None, name=None,
**kwargs)``: the array inputs first, then the parameters in the order the operator's
parameter struct declares them, then ``out`` and ``name``. Operators with a variable
number of inputs (``num_args``: ``Concat``, ``add_n``, ``stack``), ``Custom`` and operators
without parameters take ``(*data, **kwargs)``: every positional value is an input.

``split_positional`` applies that convention to a call's positional values, so
``nd.clip(x, 0, 1)``, ``nd.one_hot(i, 3)`` and ``nd.reshape(x, (2, 3))`` work as in MXNet.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import types

from .params import REQUIRED, ParamError

__all__ = ["positional_params", "is_varargs", "split_positional", "static_input_names", "signature_input_names"]


def _input_names_with(prop_cls: Any, over: dict[str, Any]) -> list[str] | None:
    """``list_arguments()`` + auxiliary states of a property whose parameters are at their
    defaults (a required one is ``None``) except ``over``; None when it cannot list them so."""
    pcls = prop_cls.param_cls
    try:
        prop = prop_cls()
        if pcls is not None:
            vals = {n: (None if f.default is REQUIRED else f.default) for n, f in pcls._fields.items()}
            vals.update(over)
            prop.param = types.SimpleNamespace(**vals)
        names = list(prop.list_arguments()) + list(prop.list_auxiliary_states())
    except Exception:  # noqa: BLE001 - a property that needs real parameters to list them
        return None
    return [n for n in names if isinstance(n, str) and n.isidentifier()]  # [] for an operator without inputs


def static_input_names(prop_cls: Any) -> list[str] | None:
    """The array inputs of a property whose parameters are at their defaults
    (``FullyConnected``: data, weight, bias); ``None`` when the property needs real
    parameters to list them."""
    return _input_names_with(prop_cls, {})


_sig_inputs: dict[type, list[str] | None] = {}


def signature_input_names(prop_cls: Any) -> list[str] | None:
    """Every array input MXNet's generated signature lists, optional ones included
    (``softmax``: data, length; ``LeakyReLU``: data, gamma; ``RNN``: ..., state_cell,
    sequence_length): the inputs at the default parameters merged with those of each
    variant that switches the boolean parameters on and picks each choice of a choice
    parameter. A property may state the list itself (``signature_inputs``) where a variant
    its parameters refuse would add an input (log_softmax has no ``length``)."""
    if prop_cls in _sig_inputs:
        return _sig_inputs[prop_cls]
    declared = getattr(prop_cls, "signature_inputs", None)
    names = list(declared) if declared is not None else static_input_names(prop_cls)
    pcls = prop_cls.param_cls
    if declared is None and names is not None and pcls is not None:
        flags = [n for n, f in pcls._fields.items() if f.type is bool]
        variants = []
        for v in (True, False):  # no_bias=False adds bias, use_length=True adds length ...
            base = dict.fromkeys(flags, v)
            variants += [base] + [dict(base, **{n: c}) for n, f in pcls._fields.items() if f.choices
                                  for c in f.choices]
        for over in variants:
            got = _input_names_with(prop_cls, over)
            if got:
                names = _merge_names(names, got)
    _sig_inputs[prop_cls] = names
    return names


def _merge_names(base: list[str], extra: list[str]) -> list[str]:
    """``base`` with the names of ``extra`` it lacks, each placed after its predecessor in ``extra``."""
    out = list(base)
    for j, n in enumerate(extra):
        if n not in out:
            prev = [m for m in extra[:j] if m in out]
            out.insert(out.index(prev[-1]) + 1 if prev else 0, n)
    return out


def is_varargs(prop_cls: Any) -> bool:
    """True for operators whose generated function is ``(*data, **kwargs)``."""
    pcls = prop_cls.param_cls
    return pcls is None or "num_args" in pcls._fields


def positional_params(prop_cls: Any) -> list[str]:
    """The parameter names a caller may pass positionally after the array inputs, in
    MXNet's order (the parameter struct's declaration order)."""
    if is_varargs(prop_cls):
        return []
    return list(prop_cls.param_cls._fields)


def split_positional(op: str, prop_cls: Any, args: Sequence[Any], kwargs: dict[str, Any],
                     is_array: Callable[[Any], bool], tail: Sequence[str] = ("out", "name")) -> list[Any]:
    """Split positional ``args`` into array inputs (returned) and parameters (moved into
    ``kwargs``, as are the trailing ``tail`` names: ``out, name`` for ``nd``, ``name, attr,
    out`` for ``sym``), as MXNet's generated functions bind them: the first positions are
    the array inputs of the signature (``signature_input_names``, optional ones included:
    ``softmax(data, length, axis, ...)``), where ``None`` skips an optional input
    (``FullyConnected(x, w, None, 2)``) and anything else but an array is refused (MXNet:
    ``softmax(x, 0)`` puts 0 into ``length``); the parameters follow, a ``None`` meaning the
    default. Raises ``ParamError`` naming the operator for a non-array in an input slot, too
    many values or a value given twice."""
    n = len(args)
    i = 0
    arrays: list[Any] = []
    # an operator without parameters and with fixed inputs (abs, relu, ones_like, ...):
    # MXNet's function is ``abs(data, out, name)``, so an array after the inputs is ``out``
    fixed = prop_cls.param_cls is None and prop_cls.op_name != "Custom" and bool(signature_input_names(prop_cls))
    slots = signature_input_names(prop_cls) if fixed or not is_varargs(prop_cls) else None
    nslots = len(slots) if slots else 0
    while i < n:
        a = args[i]
        if is_array(a) and not (fixed and i >= nslots):
            arrays.append(a)
            i += 1
            continue
        if i < nslots:
            if a is None:  # a skipped optional input
                i += 1
                continue
            assert slots is not None
            raise ParamError(f"{op}: positional argument {i + 1} ({type(a).__name__} {str(a)[:40]}) is in the slot "
                             f"of array input {slots[i]!r}; MXNet's signature takes the inputs "
                             f"({', '.join(slots)}) before the parameters: pass parameters by keyword")
        if a is None and any(is_array(b) for b in args[i + 1:]):
            i += 1  # a skipped input before another array
            continue
        break
    rest = list(args[i:])
    if not rest:
        return arrays
    if is_varargs(prop_cls) and not fixed:
        bad = ", ".join(type(a).__name__ for a in rest)
        raise ParamError(f"{op}: takes its inputs positionally and its parameters by keyword; got "
                         f"non-array positional value(s) of type {bad}")
    names = positional_params(prop_cls) + list(tail)
    if len(rest) > len(names):
        raise ParamError(f"{op}: too many positional arguments ({len(arrays)} arrays and {len(rest)} more); "
                         f"after the inputs it takes {', '.join(names)}")
    for k, v in zip(names, rest):
        if v is None:
            continue
        if k in kwargs and kwargs[k] is not None:
            raise ParamError(f"{op}: argument {k!r} given both positionally and by keyword")
        kwargs[k] = v
    return arrays
