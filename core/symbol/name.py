"""Automatic names for symbols (MXNet's ``mx.name``): ``NameManager`` and ``Prefix``.

An operator created without ``name=`` is called ``<hint><n>``, where ``hint`` is the
lower-cased operator name and ``n`` counts per hint (``fullyconnected0``,
``fullyconnected1`` ...). ``with NameManager():`` starts fresh counters;
``with Prefix('net1_'):`` prefixes every name, given or automatic.
"""
from __future__ import annotations

import threading
from typing import Any

__all__ = ["NameManager", "Prefix", "current"]

_local = threading.local()


class _NameManagerMeta(type):
    """``NameManager.current`` as MXNet's class property: this thread's manager, settable."""

    @property
    def current(cls) -> "NameManager":
        return current()

    @current.setter
    def current(cls, val: "NameManager") -> None:
        _local.current = val


class NameManager(metaclass=_NameManagerMeta):
    """Hands out unique names per hint; usable as a ``with`` block."""

    def __init__(self) -> None:
        self._counter: dict[str, int] = {}
        self._old: NameManager | None = None

    def get(self, name: str | None, hint: str) -> str:
        """``name`` if given, else ``hint`` followed by a per-hint counter."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self) -> "NameManager":
        self._old = current()
        _local.current = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _local.current = self._old

    # MXNet API: ``NameManager.current`` is a class-level accessor
    @staticmethod
    def current_manager() -> "NameManager":
        return current()


class Prefix(NameManager):
    """Every name (given or automatic) gets ``prefix`` in front."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        return self._prefix + super().get(name, hint)


def current() -> NameManager:
    """The innermost active manager of this thread; each thread starts with its own (as
    MXNet: automatic names count per thread)."""
    m = getattr(_local, "current", None)
    if m is None:
        m = _local.current = NameManager()
    return m
