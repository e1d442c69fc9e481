"""Operators as methods (MXNet's "fluent" methods): ``x.sum(axis=1)``, ``s.exp()``.

MXNet 1.9.1 gives ``NDArray`` and ``Symbol`` one method per common operator, each
``op.<name>(self, *args, **kwargs)``. They are generated here from one table and
installed on both classes; a method whose operator no installed plugin provides raises
the registry's error naming the operator (as ``nd.<name>`` would).
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["FLUENT_METHODS", "install_fluent"]

#: method name -> operator name, exactly MXNet 1.9.1's list for NDArray and Symbol
FLUENT_METHODS: dict[str, str] = {name: name for name in (
    "zeros_like ones_like broadcast_axes repeat pad swapaxes split slice slice_axis slice_like take "
    "one_hot pick sort topk argsort argmax argmax_channel argmin clip abs sign shape_array size_array tile "
    "transpose flip depth_to_space space_to_depth sum nansum prod nanprod mean max min norm round rint fix "
    "floor ceil trunc sin cos tan arcsin arccos arctan degrees radians sinh cosh tanh arcsinh arccosh "
    "arctanh exp expm1 log log10 log2 log1p sqrt rsqrt cbrt rcbrt square reciprocal relu sigmoid softmax "
    "log_softmax softmin broadcast_like reshape_like").split()}


def _fluent(name: str, op: str, lookup: Callable[[str], Any], kind: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        fn = lookup(op)
        if fn is None:
            from .hints import missing_fluent_message
            from .registry import OperatorNotFound
            raise OperatorNotFound(missing_fluent_message(f"{kind}.{name}", op))
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"Convenience fluent method for :py:func:`{op}`: the arguments are the same as "
                      f"for ``{op}``, with this {kind} as the first input.")
    return method


def install_fluent(cls: type, lookup: Callable[[str], Any], kind: str) -> None:
    """Give ``cls`` every fluent method it does not define itself; ``lookup(op)`` returns
    the operator function (``nd.<op>`` or ``sym.<op>``) or None."""
    for name, op in FLUENT_METHODS.items():
        if name not in cls.__dict__:
            setattr(cls, name, _fluent(name, op, lookup, kind))
