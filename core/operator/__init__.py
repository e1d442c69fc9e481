"""Operators: the contract (``Operator``, ``OperatorProperty``, ``OpReqType``), typed
parameters, the registry, SimpleOp, and MXNet's Python ``CustomOp`` API.

``plexnet.operator.CustomOp`` / ``CustomOpProp`` / ``register`` behave as
``mxnet.operator``'s.
"""
from __future__ import annotations

from typing import Any

from .contract import OpContext, Operator, OperatorProperty, OpReqType, assign
from .params import Field, ParamError, Params, Shape

__all__ = ["OpContext", "Operator", "OperatorProperty", "OpReqType", "assign", "Field", "Params",
           "ParamError", "Shape", "CustomOp", "CustomOpProp", "register"]


def __getattr__(name: str) -> Any:
    if name in ("CustomOp", "CustomOpProp", "register", "get_custom_prop"):
        from . import custom
        return getattr(custom, name)
    raise AttributeError(f"module 'plexnet.operator' has no attribute {name!r}")
