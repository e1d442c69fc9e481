"""MXNet 1.9's ``TestStore``: a stateless kvstore used by tests (``kv.create('teststore')``).

It stores nothing: ``broadcast`` copies a value into the outputs and ``pushpull`` sums the
values of one key (over devices) into the outputs, or back into the values. It cannot
run an optimizer (``is_capable('optimizer')`` is False), so a Trainer using it updates
on the workers. ``init`` only checks the keys (plexnet's Trainer initialises every store).
"""
from __future__ import annotations

from typing import Any

from .base import KVStoreBase

__all__ = ["TestStore"]


@KVStoreBase.register
class TestStore(KVStoreBase):
    """A key-value store for testing (MXNet's ``mxnet.kvstore.base.TestStore``)."""

    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        super().__init__("teststore")

    @staticmethod
    def is_capable(capability: str) -> bool:  # type: ignore[override]  # a staticmethod in MXNet too
        if capability.lower() == "optimizer":
            return False
        raise ValueError(f"Unknown capability: {capability}")

    def _init_impl(self, items: Any) -> None:
        """Nothing is stored."""

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        for o in out if isinstance(out, list) else [out]:
            o[:] = value

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        values = value if isinstance(value, (list, tuple)) else [value]
        ctx = values[0].context
        reduced = values[0] if len(values) == 1 else sum(v.as_in_context(ctx) for v in values)
        targets = values if out is None else (out if isinstance(out, list) else [out])
        for t in targets:
            if t is not reduced:
                t[:] = reduced

    def _push_impl(self, pairs: Any, priority: int) -> None:
        raise NotImplementedError("TestStore supports broadcast and pushpull only (as MXNet's)")

    def _pull_impl(self, pairs: Any, priority: int) -> None:
        raise NotImplementedError("TestStore supports broadcast and pushpull only (as MXNet's)")

    def set_optimizer(self, optimizer: Any) -> None:
        raise NotImplementedError("TestStore cannot run an optimizer")
