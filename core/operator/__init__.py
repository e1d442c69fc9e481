"""Operators: the contract (``Operator``, ``OperatorProperty``, ``OpReqType``), typed
parameters, the registry, SimpleOp, and MXNet's Python ``CustomOp`` API.

``plexnet.operator.CustomOp`` / ``CustomOpProp`` / ``register`` behave as
``mxnet.operator``'s.
"""
from __future__ import annotations

from typing import Any

from ..registry import registries
from .contract import OpContext, Operator, OperatorProperty, OpReqType, assign
from .params import Field, ParamError, Params, Shape

__all__ = ["OpContext", "Operator", "OperatorProperty", "OpReqType", "assign", "Field", "Params",
           "ParamError", "Shape", "CustomOp", "CustomOpProp", "register", "PythonOp", "NumpyOp", "NDArrayOp",
           "get_all_registered_operators", "get_operator_arguments", "OperatorArguments"]


def __getattr__(name: str) -> Any:
    if name in ("CustomOp", "CustomOpProp", "register", "get_custom_prop"):
        from . import custom
        return getattr(custom, name)
    if name in ("PythonOp", "NumpyOp", "NDArrayOp"):  # MXNet's deprecated Python operators
        from . import legacy
        return getattr(legacy, name)
    if name == "get_all_registered_operators":
        return get_all_registered_operators
    if name in ("get_operator_arguments", "OperatorArguments"):
        from . import arguments
        return getattr(arguments, name)
    if name == "array":  # MXNet's module imports nd.array under this name
        import importlib
        return importlib.import_module("plexnet.ndarray").array
    raise AttributeError(f"module 'plexnet.operator' has no attribute {name!r}")


def get_all_registered_operators() -> list[str]:
    """Names of every registered operator (aliases included), as MXNet's function."""
    return sorted(registries().operators)  # the process-wide registries (the plugin manager fills them)
