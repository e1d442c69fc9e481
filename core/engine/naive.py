"""NaiveEngine: every operation runs on the thread that pushed it, before the push
returns.

For debugging: a failure shows up right where it was pushed, in a debugger too. It uses
the threaded engines' scheduler (``scheduler.py``) and runner (``runner.py``), so errors,
poisoning and ordering are exactly theirs, with the pushing thread as the only worker:

* a push registers the operation on its variables; once they grant it, the pushing
  thread runs it. When another thread's operation holds a variable, the push waits for
  it: pushes from several threads are serialised per variable as on the threaded engines
  (two threads doing ``a += 1`` on one array lose no update);
* an operation pushed from inside a running operation is queued on this thread and runs
  right after the outer one returns (it could not run earlier anyway: the outer one may
  hold its variables). Nesting is thus a loop, not a recursion: 500 nested pushes are
  fine;
* a push returns once everything it caused on this thread - nested pushes, the
  completion of an asynchronous function - has finished.
"""
from __future__ import annotations

import heapq
import threading
from collections import deque
from typing import Any, Sequence

from ..base import EngineError
from ..context import HOST_DEVICE_TYPES, Context, RunContext
from .base import (AsyncFn, Engine, EngineOpError, FnProperty, Opr, SyncFn, Var, check_not_in_engine,
                   mark_engine_thread, prefixed_name, split_vars)
from .devices import device_hooks
from .lifecycle import track
from .runctx import run_context, stream_syncer
from .runner import Runner, worker_stream
from .scheduler import lock_contended
from .var import ThreadedVar, _Op

__all__ = ["NaiveEngine"]

_DELETE_VAR = int(FnProperty.DELETE_VAR)


class _Inbox:
    """One pushing thread's operations: to the scheduler it looks like a worker pool
    (``q``, ``heap``, ``parked``) whose only worker is that thread."""

    __slots__ = ("q", "heap", "parked", "sem", "owned", "running", "rcs")

    def __init__(self) -> None:
        self.q: deque[_Op] = deque()
        self.heap: list[tuple[int, int, _Op]] = []
        self.parked: list[_Inbox] = []   # [self] while the thread sleeps
        self.sem = threading.Lock()     # the thread sleeps on it while its work waits
        self.sem.acquire()
        self.owned = 0                  # operations pushed here, not finished (engine lock)
        self.running = 0                # > 0 while this thread runs operations
        self.rcs: dict[Context, RunContext] = {}   # per device with streams

    def wake(self) -> None:
        """Wake the thread (under the engine lock)."""
        self.parked.pop().sem.release()


class NaiveEngine(Runner, Engine):
    """Synchronous engine: see the module docstring."""

    kind = "NaiveEngine"

    def __init__(self) -> None:
        super().__init__()
        self._tls = threading.local()
        track(self)

    def _box(self) -> _Inbox:
        b: _Inbox | None = getattr(self._tls, "box", None)
        if b is None:
            b = self._tls.box = _Inbox()
        return b

    def new_var(self) -> ThreadedVar:
        return ThreadedVar()

    # -- pushing -----------------------------------------------------------------------
    def push_async(self, fn: AsyncFn, ctx: Context, const_vars: Sequence[Var] = (),
                   mutate_vars: Sequence[Var] = (), prop: FnProperty = FnProperty.NORMAL,
                   priority: int = 0, name: str | None = None) -> None:
        self._push(fn, ctx, *split_vars(const_vars, mutate_vars), prop, name or "op", False)

    def push_sync(self, fn: SyncFn, ctx: Context, const_vars: Sequence[Var] = (),
                  mutate_vars: Sequence[Var] = (), prop: FnProperty = FnProperty.NORMAL,
                  priority: int = 0, name: str | None = None) -> None:
        self._push(fn, ctx, *split_vars(const_vars, mutate_vars), prop, name, True)

    def push(self, opr: Opr, ctx: Context, priority: int = 0) -> None:
        if opr.deleted:
            raise EngineError(f"operation {opr.name!r} was deleted")
        self._push(opr.fn, ctx, opr.const_vars, opr.mutate_vars, opr.rw_vars, opr.prop, opr.name, False)

    def _push(self, fn: Any, ctx: Context, c: tuple[Var, ...], m: tuple[Var, ...], rw: tuple[Var, ...],
              prop: FnProperty, name: str | None, sync: bool) -> None:
        box = self._box()
        name = prefixed_name(name, fn)
        op = _Op(fn, c, m, rw, prop, 0, name, box, ctx, sync)  # type: ignore[arg-type]
        if not sync:
            op.eng = self
            op.done = False
            op.tok = None
            op.runner = None
        with self._lock:
            box.owned += 1
        try:
            here = self._submit(op)
        except BaseException:
            with self._lock:
                box.owned -= 1
            raise
        if here:                    # ready INLINE / ASYNC: like any other ready operation
            with self._lock:
                box.q.append(op)
        if not box.running:
            self._drain(box)

    def _pool_of(self, ctx: Context, prop: int) -> Any:
        """The pool of a ``DELETE_VAR`` operation made by a finalizer (engine lock held):
        this thread, which runs it at its next push or wait."""
        box = self._box()
        box.owned += 1
        return box

    # -- running -----------------------------------------------------------------------
    def _drain(self, box: _Inbox) -> None:
        """Run this thread's operations as they become ready, until none is left."""
        lock = self._lock
        saved = getattr(worker_stream, "sync", None)
        box.running += 1
        try:
            while True:
                if not lock.acquire(False):
                    lock_contended(lock)
                try:
                    if box.q:
                        op: _Op | None = box.q.popleft()
                    elif box.heap:
                        op = heapq.heappop(box.heap)[2]
                    elif not box.owned:
                        return
                    else:
                        op = None
                        box.parked.append(box)
                finally:
                    lock.release()
                if op is None:
                    box.sem.acquire()   # woken by a grant or the last completion
                    continue
                self._run(op, box)
        finally:
            box.running -= 1
            worker_stream.sync = saved

    def _run(self, op: _Op, box: _Inbox) -> None:
        ctx = op.ctx
        try:
            if op.prop != _DELETE_VAR and ctx.device_type not in HOST_DEVICE_TYPES:
                # a delete only frees memory: it must not switch this thread's device
                rc = self._device_rc(ctx, box)
            else:
                rc = run_context(ctx, "naive")
            sync = stream_syncer(rc)
            worker_stream.sync = (sync, rc.stream) if sync is not None else None
        except BaseException as e:  # noqa: BLE001 - an unusable device fails the operation
            if not op.sync:
                op.done = True
            self._fail(op, e, box)
            return
        with mark_engine_thread():
            self._execute(op, rc, "naive", box)

    def _device_rc(self, ctx: Context, box: _Inbox) -> RunContext:
        """For a device with streams (GPU): make it current on this thread, as an engine
        worker of that device would, with one stream per thread and device."""
        b = device_hooks(ctx)
        b.activate(ctx.device_id)
        rc = box.rcs.get(ctx)
        if rc is None:
            rc = box.rcs[ctx] = run_context(ctx, f"naive/{threading.current_thread().name}",
                                            b.new_stream(ctx.device_id, "compute"))
        return rc

    def _finish(self, op: _Op, err: EngineOpError | None, mypool: Any, new_error: bool = False) -> None:
        super()._finish(op, err, mypool, new_error)
        box: _Inbox = op.pool
        lock = self._lock
        if not lock.acquire(False):
            lock_contended(lock)
        try:
            box.owned -= 1
            if not box.owned and box.parked:
                box.wake()
        finally:
            lock.release()

    # -- waiting -----------------------------------------------------------------------
    def _own_work(self) -> None:
        box = self._box()
        if box.owned and not box.running:
            self._drain(box)

    def wait_for_var(self, var: Var) -> None:
        check_not_in_engine("wait_for_var")
        self._own_work()
        super().wait_for_var(var)

    def wait_for_all(self) -> None:
        check_not_in_engine("wait_for_all")
        self._own_work()
        super().wait_for_all()

    def shutdown(self, timeout: float | None = None) -> None:
        """Wait (up to ``timeout`` seconds) for other threads' operations; nothing to
        stop (errors stay stored)."""
        self._stop(timeout)

    def _stop(self, timeout: float | None) -> list[str]:
        check_not_in_engine("shutdown")
        self._own_work()
        return [] if self._wait_idle(timeout) else self._unfinished()

    def _after_fork_in_child(self) -> None:
        self._reset_state()
        self._tls = threading.local()
