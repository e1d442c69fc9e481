"""Scheduling state of the threaded engines: variables and operation records.

This is MXNet's ``ThreadedVar`` algorithm (``src/engine/threaded_engine.h``), with the
per-variable linked list of ``VersionedVarBlock`` replaced by a ``deque``:

* a variable is *free*, *read by n operations* (``readers``) or *written* (``writing``);
* an operation that cannot be granted a variable right away waits in that variable's
  FIFO ``queue``: the entry is the operation itself (a write if the variable is in
  ``op.m``, else a read; no per-entry allocation) or a ``wait_for_var`` waiter;
* a read is granted when no write is running and nobody waits before it, so consecutive
  reads run concurrently; a write is granted when the variable is free and nobody waits
  before it, so writes run alone and in push order;
* when an operation finishes, each of its variables grants the head of its queue: every
  leading read (until the next write), or one write, or releases a ``wait_for_var``
  waiter once everything pushed before it has finished, or (for a ``push_delete`` marker,
  which acts as a final write) hands the variable to the finishing thread to run the
  delete function and retire it;
* an operation is ready when every variable has granted it (``op.wait`` reaches 0).

Invariant: the head of a non-empty queue is blocked, so a new request queues behind it.
All of it runs under the engine's one lock (see ``scheduler.py``).
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Any

from .base import EngineOpError, Var

__all__ = ["ThreadedVar"]

#: values of ``ThreadedVar.deleted``
ALIVE = 0
DELETING = 1   # push_delete was called, its function has not run yet
DEAD = 2       # the delete function ran; the variable is retired


class ThreadedVar(Var):
    """A variable of the threaded engines.

    A retired variable keeps ``writing = True`` for ever, so every later request takes
    the slow path, where ``deleted`` is checked (the fast path stays two tests).
    """

    __slots__ = ("readers", "writing", "queue", "error", "deleted", "dfn", "dctx")

    readers: int
    writing: bool
    queue: "deque[Any] | None"
    error: Any
    deleted: int
    dfn: Any
    dctx: Any

    def __init__(self) -> None:
        self.readers = 0            # granted reads not yet finished
        self.writing = False        # a granted write not yet finished
        self.queue = None           # deque of waiting requests, created on first need
        self.error = None           # EngineOpError stored by the last write (or None)
        self.deleted = ALIVE
        # dfn, dctx: push_delete's function and context while DELETING (set then only)

    def busy(self) -> bool:
        """True while an operation pushed on this variable has not finished."""
        return bool(self.writing or self.readers or self.queue)

    def __repr__(self) -> str:
        state = ("dead" if self.deleted == DEAD else "writing" if self.writing
                 else f"read by {self.readers}" if self.readers else "free")
        n = len(self.queue) if self.queue else 0
        return f"<ThreadedVar {state}, {n} waiting>"


class _Op:
    """One pushed operation (the only allocation per push besides queue entries).

    Asynchronous operations also get ``eng``, ``done``, ``tok`` and ``runner`` at push;
    ``wait`` is set when a variable does not grant it at once, ``runpool`` when it runs."""

    __slots__ = ("fn", "c", "m", "rw", "prop", "pri", "name", "pool", "ctx", "sync", "wait",
                 "eng", "tok", "done", "runner", "runpool")

    fn: Any
    c: "tuple[ThreadedVar, ...]"
    m: "tuple[ThreadedVar, ...]"
    rw: "tuple[ThreadedVar, ...]"
    prop: Any
    pri: int
    name: str | None
    pool: Any
    ctx: Any
    sync: bool
    wait: int
    eng: Any
    tok: Any
    done: bool
    runner: int | None
    runpool: Any

    def __init__(self, fn: Any, c: "tuple[ThreadedVar, ...]", m: "tuple[ThreadedVar, ...]",
                 rw: "tuple[ThreadedVar, ...]", prop: Any, pri: int, name: str | None, pool: Any,
                 ctx: Any, sync: bool) -> None:
        self.fn = fn
        self.c = c
        self.m = m
        self.rw = rw        # mutated variables also read: a poisoned one stops the operation
        self.prop = prop
        self.pri = pri
        self.name = name
        self.pool = pool
        self.ctx = ctx
        self.sync = sync

    def on_complete(self, exc: BaseException | None = None) -> None:
        """The callback handed to asynchronous functions (callable from any thread,
        exactly once: a second call raises ``EngineError``, also reported by the next
        ``wait_for_all``)."""
        if self.done:
            self.eng._completed_twice(self)
            return
        self.done = True
        self.eng._complete_async(self, exc)


class _DeleteMark:
    """The queue entry of a pending ``push_delete`` (one shared instance)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<delete>"


_DELETE_MARK = _DeleteMark()


class _Waiter:
    """A ``wait_for_var`` call queued on a variable: released (with the variable's error
    at that moment) once everything pushed on the variable before it has finished."""

    __slots__ = ("lock", "err")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.err: EngineOpError | None = None
