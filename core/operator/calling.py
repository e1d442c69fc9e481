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

__all__ = ["positional_params", "is_varargs", "split_positional", "static_input_names"]


def static_input_names(prop_cls: Any) -> list[str] | None:
    """The array inputs of the generated signature: ``list_arguments()`` (and auxiliary
    states) of a property whose parameters are at their defaults (a required one is
    ``None``), as MXNet's static signature lists them (``FullyConnected``: data, weight,
    bias); ``None`` when the property needs real parameters to list them."""
    pcls = prop_cls.param_cls
    try:
        prop = prop_cls()
        if pcls is not None:
            prop.param = types.SimpleNamespace(**{
                n: (None if f.default is REQUIRED else f.default) for n, f in pcls._fields.items()})
        names = list(prop.list_arguments()) + list(prop.list_auxiliary_states())
    except Exception:  # noqa: BLE001 - a property that needs real parameters to list them
        return None
    names = [n for n in names if isinstance(n, str) and n.isidentifier()]
    return names or None


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
    out`` for ``sym``). ``None`` in an input slot of the static signature (or before
    another array) is a skipped optional input (``FullyConnected(x, w, None, 2)``); a
    ``None`` parameter means the default. Raises ``ParamError`` naming the operator for too many values or a value
    given twice."""
    n = len(args)
    i = 0
    arrays: list[Any] = []
    slots: int | None = None
    while i < n:
        a = args[i]
        if is_array(a):
            arrays.append(a)
            i += 1
            continue
        if a is not None:
            break
        if slots is None:
            slots = len(static_input_names(prop_cls) or ())
        if i < slots or any(is_array(b) for b in args[i + 1:]):
            i += 1  # a skipped optional input (FullyConnected(x, w, None, ...))
        else:
            break
    rest = list(args[i:])
    if not rest:
        return arrays
    if is_varargs(prop_cls):
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
