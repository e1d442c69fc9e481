"""Bulk pushes for a backward pass: the gradient computations of consecutive tape nodes
pushed as one engine operation, as MXNet bulks its imperative backward.

A backward walk pushes one operation per node (and a few copies and fills). Each push
costs the calling thread a scheduler round trip and the engine worker a hand-off; for an
imperative Gluon step those are a third of the main thread's time. While a ``Bulk`` is
active on a thread (``active``), the tape's own pushes (``pusher()``) are collected
instead, and ``flush`` pushes them as operations of up to ``max_nodes`` calls each, with
the union of their variables (a variable read after an earlier call of the operation
wrote it is only written), in the order they were collected.

Rules that keep this safe:

* only synchronous calls on one device are collected; anything else flushes first;
* whoever pushes to the engine outside the tape (a hybridized graph's executor, user
  code in ``autograd.Function``) must ``flush`` first: the walk does that for every node
  that is not a plain operator node;
* an array whose memory a collected call uses must stay alive until ``flush``: the walk
  hands every gradient buffer to ``keep``, and frees the graph only after the last flush
  (a pooled block freed earlier would be handed to another array while still to be used);
* a failure in a call poisons every array the operation writes (as a bulk segment of the
  executor does) and names the call in the error.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from ..base import PlexnetError
from ..engine import get as _engine
from ..engine.base import FnProperty

__all__ = ["Bulk", "active", "pusher", "segment_vars"]

_tls = threading.local()
_SYNC_PROPS = (FnProperty.NORMAL, FnProperty.INLINE)


def active() -> "Bulk | None":
    """The bulk collecting this thread's tape pushes, if any."""
    return getattr(_tls, "bulk", None)


def pusher() -> Any:
    """Where the tape pushes: the active bulk, else the engine."""
    b = getattr(_tls, "bulk", None)
    return b if b is not None else _engine()


def segment_vars(items: Sequence[tuple]) -> tuple[list, list]:
    """``(reads, writes)`` of consecutive ``(name, call, read_vars, write_vars, ...)``
    items run as one operation: a read counts only before an earlier item wrote the
    variable (a later read of it is internal)."""
    reads: list[Any] = []
    writes: list[Any] = []
    # engine variables compare by identity (Var defines no __eq__): sets of them, not of ids;
    # a variable read twice is listed once (the engine would drop the repeat anyway)
    written: set[Any] = set()
    seen: set[Any] = set()
    for it in items:
        for v in it[2]:
            if v not in written and v not in seen:
                seen.add(v)
                reads.append(v)
        w = it[3]
        if w:
            writes.extend(w)
            written.update(w)
    return reads, writes


class Bulk:
    """Collects a thread's tape pushes (see the module docstring). Use as a context
    manager: entering makes it the thread's active bulk, leaving flushes it."""

    def __init__(self, max_nodes: int = 15) -> None:
        self.max_nodes = max(1, int(max_nodes))
        self.items: list[tuple] = []
        self.ctx: Any = None
        self.alive: list[Any] = []
        self._prev: Bulk | None = None

    def __enter__(self) -> "Bulk":
        self._prev = active()
        _tls.bulk = self
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.flush()
        finally:
            _tls.bulk = self._prev

    def keep(self, arrays: Sequence[Any]) -> None:
        """Keep ``arrays`` alive until the next flush (their memory may be in use)."""
        self.alive.extend(arrays)

    # the engine's push signatures, so that the tape's code pushes through either
    def push_sync(self, fn: Callable[[Any], None], ctx: Any, const_vars: Sequence[Any] = (),
                  mutate_vars: Sequence[Any] = (), prop: FnProperty = FnProperty.NORMAL, priority: int = 0,
                  name: str | None = None) -> None:
        if prop not in _SYNC_PROPS or (self.items and ctx is not self.ctx and ctx != self.ctx):
            self.flush()
            if prop not in _SYNC_PROPS:
                _engine().push_sync(fn, ctx, const_vars, mutate_vars, prop, priority, name)
                return
        self.ctx = ctx
        self.items.append((name or "op", fn, tuple(const_vars), tuple(mutate_vars)))
        if len(self.items) >= self.max_nodes:
            self.flush()

    def push_async(self, fn: Any, ctx: Any, const_vars: Sequence[Any] = (), mutate_vars: Sequence[Any] = (),
                   prop: FnProperty = FnProperty.NORMAL, priority: int = 0, name: str | None = None) -> None:
        self.flush()
        _engine().push_async(fn, ctx, const_vars, mutate_vars, prop, priority, name)

    def flush(self) -> None:
        """Push what was collected (one operation) and release the kept arrays."""
        items, self.items = self.items, []
        try:
            if len(items) == 1:
                name, fn, reads, writes = items[0]
                _engine().push_sync(fn, self.ctx, reads, writes, FnProperty.NORMAL, 0, name)
            elif items:
                reads, writes = segment_vars(items)
                names = [it[0] for it in items]
                calls = [it[1] for it in items]

                def run(rc: Any) -> None:
                    i = 0
                    try:
                        for c in calls:
                            c(rc)
                            i += 1
                    except Exception as e:  # noqa: BLE001 - say which call failed
                        raise PlexnetError(f"autograd backward failed in {names[i]!r}: {type(e).__name__}: {e}") \
                            from e
                _engine().push_sync(run, self.ctx, reads, writes, FnProperty.NORMAL, 0,
                                    f"backward:{names[0]}..{names[-1]}")
        finally:
            self.alive = []
