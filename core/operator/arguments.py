"""``mx.operator.get_operator_arguments``: an operator's arguments as MXNet describes them.

MXNet reads them from the C registry (``MXSymbolGetAtomicSymbolInfo``): the array inputs
first (``NDArray-or-Symbol``, ``NDArray-or-Symbol[]`` for a variable number), then the
parameter struct's fields with dmlc's type strings (``"int, optional, default='1'"``,
``"{'relu', 'sigmoid'}, required"``, ``"Shape(tuple), optional, default=[]"``). Here the
same strings are written from the parameter ``Field`` declarations.
"""
from __future__ import annotations

from collections import namedtuple

from ..base import PlexnetError
from ..registry import registries
from .calling import is_varargs, signature_input_names
from .hints import missing_fluent_message, providing_distribution
from .params import REQUIRED, Field, Shape
from .registry import OperatorNotFound

__all__ = ["OperatorArguments", "get_operator_arguments"]

OperatorArguments = namedtuple("OperatorArguments", ["narg", "names", "types"])

#: the name of the variable-length input where it is not ``data`` (MXNet's key_var_num_args)
_VARARG_NAMES = {"add_n": "args"}


def _default_text(f: Field) -> str:
    d = f.default
    if d is None:
        return "'None'" if f.choices or f.type in (int, str, "dtype") else "None"
    if f.type is bool:
        return "1" if d else "0"
    if f.type is Shape:
        return "[" + ",".join(str(x) for x in d) + "]"
    if f.type is int:
        return str(d) if f.low is not None and f.low >= 0 else f"'{d}'"
    if f.type is float:
        return f"{float(d):g}"
    return f"'{d}'"


def _type_text(f: Field) -> str:
    """dmlc's description of one parameter field."""
    if f.choices:
        items = sorted(repr(c) for c in f.choices if c is not None)
        if f.optional:
            items.insert(0, "None")
        base = "{" + ", ".join(items) + "}"
        return base + (", required" if f.default is REQUIRED else ",optional, default=" + _default_text(f))
    if f.type is bool:
        base = "boolean"
    elif f.type is int:
        base = "int (non-negative)" if f.low is not None and f.low >= 0 else "int"
    elif f.type is float:
        base = "float"
    elif f.type is Shape:
        base = "Shape(tuple)"
    else:
        base = "string"
    if f.optional and f.type is not str:
        base = ("Shape" if f.type is Shape else base) + " or None"
    if f.default is REQUIRED:
        return base + ", required"
    return base + ", optional, default=" + _default_text(f)


def get_operator_arguments(op_name: str) -> OperatorArguments:
    """The number, names and type descriptions of ``op_name``'s arguments (inputs, then
    parameters), as MXNet's ``mx.operator.get_operator_arguments``."""
    ops = registries().operators
    try:
        prop_cls = ops[op_name]
    except KeyError:
        if providing_distribution(op_name) is not None:  # a standard operator, its plugin missing
            raise OperatorNotFound(missing_fluent_message("get_operator_arguments", op_name)) from None
        raise PlexnetError(f"get_operator_arguments: no operator named {op_name!r}") from None
    fields: dict[str, Field] = dict(prop_cls.param_cls._fields) if prop_cls.param_cls is not None else {}
    names: list[str] = []
    types: list[str] = []
    if prop_cls.op_name == "Custom":
        names, types = ["data", "op_type"], ["NDArray-or-Symbol[]", "string"]
    elif is_varargs(prop_cls) and ("num_args" in fields or not signature_input_names(prop_cls)):
        names.append(_VARARG_NAMES.get(prop_cls.op_name, "data"))
        types.append("NDArray-or-Symbol[]")
        if prop_cls.op_name in _VARARG_NAMES:  # add_n: num_args is set from the inputs, not listed
            fields.pop("num_args", None)
    else:
        for n in signature_input_names(prop_cls) or []:
            names.append(n)
            types.append("NDArray-or-Symbol")
    for n, f in fields.items():
        if n in names:
            continue
        names.append(n)
        types.append(_type_text(f))
    return OperatorArguments(len(names), names, types)
