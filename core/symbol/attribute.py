"""Attribute scopes (MXNet's ``mx.AttrScope``): ``with AttrScope(ctx_group='dev1'):``
attaches ``__ctx_group__='dev1'`` to every symbol created inside the block."""
from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any, ClassVar

__all__ = ["AttrScope", "current"]

_local = threading.local()


class _AttrScopeMeta(type):
    """``AttrScope.current`` as MXNet's class property: this thread's scope, settable."""

    @property
    def current(cls) -> "AttrScope":
        return current()

    @current.setter
    def current(cls, val: "AttrScope") -> None:
        _local.current = val


class AttrScope(metaclass=_AttrScopeMeta):
    """Attributes (strings) given to every symbol created within the ``with`` block.
    Keys are kept as given (MXNet's ``_attr``); the symbol layer stores MXNet's hidden
    keys (``ctx_group``, ``lr_mult``, ...) as ``__key__`` when it attaches them."""

    #: times each control-flow subgraph name was used (MXNet's ``AttrScope._subgraph_names``;
    #: ``sym.contrib.cond(..., name='c')`` makes ``c_then0``, ``c_then1``, ...)
    _subgraph_names: ClassVar[defaultdict] = defaultdict(int)

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError(f"AttrScope: attribute {k!r} must be a string, got {type(v).__name__}")
        self._attr = dict(kwargs)
        self._old: AttrScope | None = None

    def get(self, attr: dict[str, str] | None) -> dict[str, str]:
        """The scope's attributes updated with ``attr`` (``attr`` wins)."""
        if not self._attr:
            return dict(attr) if attr else {}
        out = dict(self._attr)
        if attr:
            out.update(attr)
        return out

    def __enter__(self) -> "AttrScope":
        self._old = current()
        merged = dict(self._old._attr)
        merged.update(self._attr)
        self._attr = merged
        _local.current = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _local.current = self._old


_default = AttrScope()


def current() -> AttrScope:
    return getattr(_local, "current", None) or _default
