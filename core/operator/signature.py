"""Real signatures for the generated operator functions (``nd.<op>``, ``sym.<op>``).

The functions themselves take ``(*args, **kwargs)`` and apply MXNet's calling convention
(``plexnet.operator.calling``); ``operator_signature`` describes that convention for one
operator as an ``inspect.Signature``, set as the function's ``__signature__``, so that
``help(mx.nd.FullyConnected)``, ``inspect.signature`` and IDEs show the parameters::

    FullyConnected(data=None, weight=None, bias=None, num_hidden=<required>,
                   no_bias=False, flatten=True, out=None, name=None) -> NDArray

Array inputs come first (every input MXNet's signature lists, optional ones included:
``calling.signature_input_names``), then the parameter struct's fields in declaration order (positional
as in MXNet), then the namespace's trailing names. Operators with a variable number of
inputs (``Concat``, ``add_n``) or without a parameter struct get ``(*data, ...)`` with
their parameters keyword-only.
"""
from __future__ import annotations

import inspect
from typing import Any

from .calling import is_varargs, signature_input_names
from .params import REQUIRED

__all__ = ["operator_signature", "REQUIRED_PARAMETER", "TAILS"]

#: trailing keyword names per namespace, in MXNet's order
TAILS: dict[str, tuple[str, ...]] = {"nd": ("out", "name"), "sym": ("name", "attr", "out")}
_RETURNS = {"nd": "NDArray", "sym": "Symbol"}


class _Required:
    """Default shown for a parameter without one: ``num_hidden=<required>``."""

    def __repr__(self) -> str:
        return "<required>"


REQUIRED_PARAMETER = _Required()


def _input_names(prop_cls: Any) -> list[str]:
    """The array inputs of MXNet's signature (``calling.signature_input_names``, optional
    ones included); ``["data"]`` when they cannot be worked out."""
    names = signature_input_names(prop_cls)
    return ["data"] if names is None else names  # none: an operator that creates (zeros, random_uniform)


def operator_signature(prop_cls: Any, namespace: str = "nd") -> inspect.Signature:
    """The signature of ``mx.<namespace>.<op>`` for the operator property class ``prop_cls``."""
    P = inspect.Parameter
    tail = TAILS.get(namespace, ("out", "name"))
    params: list[inspect.Parameter] = []
    fields = dict(prop_cls.param_cls._fields) if prop_cls.param_cls is not None else {}
    # (*data) only for a variable number of inputs; an operator without parameters
    # still has named inputs (MXNet: ``relu(data=None, out=None, name=None)``)
    varargs = is_varargs(prop_cls) and ("num_args" in fields or prop_cls.op_name == "Custom")
    kind: inspect._ParameterKind
    if varargs:
        params.append(P("data", P.VAR_POSITIONAL))
        fields.pop("num_args", None)  # set from the number of inputs
        kind = P.KEYWORD_ONLY
    else:
        for n in _input_names(prop_cls):
            params.append(P(n, P.POSITIONAL_OR_KEYWORD, default=None))
        kind = P.POSITIONAL_OR_KEYWORD
    taken = {p.name for p in params}
    for n, f in fields.items():
        if n in taken or not n.isidentifier():
            continue
        default = REQUIRED_PARAMETER if f.default is REQUIRED else f.default
        ann: Any = inspect.Parameter.empty
        if isinstance(f.type, type):  # builtins as themselves, others by name (short help)
            ann = f.type if f.type.__module__ == "builtins" else f.type.__name__
        params.append(P(n, kind, default=default, annotation=ann))
        taken.add(n)
    for n in tail:
        if n not in taken:
            params.append(P(n, kind, default=None))
            taken.add(n)
    if varargs:
        params.append(P("kwargs", P.VAR_KEYWORD))
    return inspect.Signature(params, return_annotation=_RETURNS.get(namespace, inspect.Signature.empty))
