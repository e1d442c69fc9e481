"""Dependency bookkeeping of the threaded engines (MXNet's ``ThreadedVar`` algorithm).

``Scheduler`` owns the engine-wide lock and everything it guards: registering a pushed
operation on its variables (``_submit``), granting waiting requests when an operation
finishes (``_release`` / ``_finish``), ``wait_for_var`` / ``wait_for_all`` and
``push_delete``. It knows nothing of threads: ready operations go to a ``pool`` object
(``q``, ``heap``, ``parked``) that ``workers.py`` serves. See ``var.py`` for the state
machine of one variable.

One engine-wide re-entrant lock guards all of it (re-entrant because a garbage-collected
NDArray may call ``push_delete`` from a finalizer at any allocation, even inside the
engine's bookkeeping).
"""
from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
import weakref
from collections import deque
from typing import Any, Callable

from ..base import EngineError
from ..context import Context, RunContext
from .base import (EngineOpError, FnProperty, SyncFn, Var, _fn_name, _tls, as_op_error,
                   check_not_in_engine, raise_poison, raise_unreported)
from .observers import end_observers, start_observers
from .runctx import run_context
from .var import _DELETE_MARK, DEAD, DELETING, ThreadedVar, _Op, _Waiter

__all__ = ["Scheduler", "lock_contended"]

_DELETE_VAR = int(FnProperty.DELETE_VAR)
_INLINE = int(FnProperty.INLINE)
_ASYNC = int(FnProperty.ASYNC)
_sleep = time.sleep


def lock_contended(lock: Any) -> None:
    """Take the engine lock when another thread holds it.

    The holder can only be a thread that lost the GIL inside the engine's bookkeeping.
    Never block on the lock itself: a thread woken from a blocking acquire owns the lock
    *before* it has the GIL back, so the next thread needing the lock blocks too, and so
    on - a lock convoy with two context switches per operation (measured: thousands per
    second, doubling the per-operation cost). Handing the GIL over until the holder has
    left its critical section keeps the lock only ever taken by a running thread.
    """
    while not lock.acquire(False):
        _sleep(0)


def _noop(rctx: RunContext) -> None:
    pass


#: backpressure: the main thread pushing while more than ``MAX_PENDING`` operations are
#: pending waits (at most ``THROTTLE_S``) until ``RESUME_PENDING`` are left.
#: Unbounded, a Gluon LeNet loop pushed 20 steps (~1,000 operations) in 23 ms and every
#: output was a fresh array; with the storage pool primed by 25 warm-up steps the same
#: loop took 18.0 instead of 23.7 ms per step, so cold memory is the likely cost (bounded:
#: 18-21 ms, unbounded 24-31 ms). ``PLEXNET_ENGINE_MAX_PENDING=0`` turns it off.
MAX_PENDING = int(os.environ.get("PLEXNET_ENGINE_MAX_PENDING", "64"))
RESUME_PENDING = MAX_PENDING // 2
THROTTLE_S = 0.5
#: after a wait ran out (a backlog that does not drain: an operation waiting on another
#: process, say), no throttling for this long, so pushes never crawl behind it
THROTTLE_PAUSE_S = 5.0
#: a backlog that did not shrink in THROTTLE_S is stalled where the workers used less CPU meanwhile
STALL_CPU_SHARE = 0.1


class Scheduler:
    """Variables, pending count, stored errors and deferred deletes, under one lock."""

    observers: tuple[Any, ...]

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._all_cv = threading.Condition(self._lock)
        self._pending = 0          # pushed, not finished
        self._nwait = 0            # threads inside wait_for_all
        self._nthrottle = 0        # pushing threads held back by backpressure
        self._throttle_off_until = 0.0
        self._errors: list[EngineOpError] = []   # every unreported error
        self._seq = itertools.count()
        self._inline_rc: dict[str, dict[int, RunContext]] = {}
        self._dqfree: list[deque[Any]] = []      # empty variable queues for reuse
        self._todo: list[ThreadedVar] = []       # variables whose delete function is due
        #: id -> weak reference of every poisoned variable (its error set); empty on the
        #: common path, where no operation needs the skip check
        self._poisoned: dict[int, weakref.ref[ThreadedVar]] = {}
        self.observers = ()                      # an instance attribute: faster to test

    def _reset_state(self) -> None:
        """Fresh locks and counters (the child side of ``fork``)."""
        self._lock = threading.RLock()
        self._all_cv = threading.Condition(self._lock)
        self._pending = 0
        self._nwait = 0
        self._nthrottle = 0

    # -- registering -------------------------------------------------------------------
    def _enqueue(self, v: ThreadedVar, entry: Any) -> None:
        """Append ``entry`` to ``v``'s waiting queue (made or recycled on first need)."""
        q = v.queue
        if q is None:
            q = v.queue = self._dqfree.pop() if self._dqfree else deque()
        q.append(entry)

    def _submit(self, op: _Op) -> bool:
        """Register ``op`` on its variables and hand it to its pool if every variable
        grants it now. True: it is ready and runs on the calling thread instead (a ready
        ``INLINE`` synchronous or ``ASYNC`` asynchronous operation)."""
        wait = 0
        lock = self._lock
        if not lock.acquire(False):
            lock_contended(lock)
        try:
            # _enqueue inlined: busy variables are the common case of a thread running ahead
            for v in op.c:
                if v.writing or v.queue:
                    if v.deleted:
                        self._abort(op, v)
                    q = v.queue
                    if q is None:
                        q = v.queue = self._dqfree.pop() if self._dqfree else deque()
                    q.append(op)
                    wait += 1
                else:
                    v.readers += 1
            for v in op.m:
                if v.writing or v.readers or v.queue:
                    if v.deleted:
                        self._abort(op, v)
                    q = v.queue
                    if q is None:
                        q = v.queue = self._dqfree.pop() if self._dqfree else deque()
                    q.append(op)
                    wait += 1
                else:
                    v.writing = True
            self._pending += 1
            if wait:
                op.wait = wait
                return False
            if op.prop == (_INLINE if op.sync else _ASYNC):
                return True
            self._dispatch(op, None)
            return False
        finally:
            lock.release()

    def _abort(self, op: _Op, bad: ThreadedVar) -> None:
        """A push named a deleted variable: undo what it registered, then raise."""
        for v, write in itertools.chain(((v, False) for v in op.c), ((v, True) for v in op.m)):
            if v is bad:
                break
            q = v.queue
            if q and q[-1] is op:
                q.pop()
            elif not write:
                v.readers -= 1
                if not v.readers and q:
                    self._release(v, None)
            else:
                v.writing = False
                if q:
                    self._release(v, None)
        raise EngineError(f"operation {_op_name(op)!r} uses a variable that was deleted")

    def _dispatch(self, op: _Op, mypool: Any) -> None:
        """Hand a ready operation to its pool (under the lock). A worker of ``mypool``
        (the one finishing an operation) takes the next ready one itself, so a parked
        worker is only woken for work beyond that."""
        pool = op.pool
        if op.pri:
            heapq.heappush(pool.heap, (-op.pri, next(self._seq), op))
        else:
            pool.q.append(op)
        if pool.parked and (pool is not mypool or len(pool.q) + len(pool.heap) > 1):
            pool.wake()

    def _release(self, v: ThreadedVar, mypool: Any) -> None:
        """Grant the head of ``v``'s queue what ``v``'s state now allows (under the lock)."""
        q = v.queue
        while q:
            op = q[0]
            if op.__class__ is not _Op:
                if v.writing or v.readers:
                    return
                if op is _DELETE_MARK:               # push_delete's turn: run it after
                    q.popleft()                      # the lock is released (_run_deletes)
                    v.writing = True                 # retired: blocks whatever follows
                    self._todo.append(v)
                    if q:
                        return
                    break
                q.popleft()                          # a wait_for_var waiter
                op.err = v.error
                op.lock.release()
            elif v in op.m:                          # a write
                if v.writing or v.readers:
                    return
                q.popleft()
                v.writing = True
                op.wait -= 1
                if not op.wait:
                    self._dispatch(op, mypool)
                break
            else:                                    # a read
                if v.writing:
                    return
                q.popleft()
                v.readers += 1
                op.wait -= 1
                if not op.wait:
                    self._dispatch(op, mypool)
        if not q:
            # recycle the emptied queue: one allocation (and GC object) less per
            # variable that ever had to wait
            v.queue = None
            if len(self._dqfree) < 512 and q is not None:
                self._dqfree.append(q)

    # -- finishing ---------------------------------------------------------------------
    def _finish(self, op: _Op, err: EngineOpError | None, mypool: Any,
                new_error: bool = False) -> None:
        """Release ``op``'s variables; store ``err`` (None on success) on its mutated ones."""
        lock = self._lock
        if not lock.acquire(False):
            lock_contended(lock)
        try:
            if new_error and err is not None:
                self._errors.append(err)
            for v in op.c:
                v.readers -= 1
                if not v.readers and v.queue:
                    self._release(v, mypool)
            if op.prop != _DELETE_VAR:
                for v in op.m:
                    if v.error is not err:
                        self._set_error(v, err)
                    v.writing = False
                    if v.queue:
                        self._release(v, mypool)
            else:
                for v in op.m:
                    self._retire(v, err)
            self._pending -= 1
            if (not self._pending and self._nwait) or (self._nthrottle and self._pending <= RESUME_PENDING):
                self._all_cv.notify_all()
            due = self._todo.pop() if self._todo else None
        finally:
            lock.release()
        if due is not None:
            self._run_deletes(due)

    def _set_error(self, v: ThreadedVar, err: EngineOpError | None) -> None:
        """Poison ``v`` with ``err``, or cure it (``None``), keeping ``_poisoned``."""
        v.error = err
        k = id(v)
        if err is None:
            self._poisoned.pop(k, None)
        elif k not in self._poisoned:
            poisoned = self._poisoned
            self._poisoned[k] = weakref.ref(v, lambda _r: poisoned.pop(k, None))

    def _retire(self, v: ThreadedVar, err: EngineOpError | None) -> None:
        """``v``'s delete function ran (under the lock): it stays "writing" for ever;
        release the ``wait_for_var`` waiters queued after ``push_delete``."""
        if v.error is not None:
            self._set_error(v, None)
        v.error = err
        v.deleted = DEAD
        q = v.queue
        if q is not None:
            v.queue = None
            while q:                                 # only waiters can be left
                w = q.popleft()
                if w.__class__ is _Waiter:
                    w.err = err
                    w.lock.release()

    # -- deleting ----------------------------------------------------------------------
    def push_delete(self, fn: SyncFn | None, ctx: Context, var: Var) -> None:
        """See ``Engine.push_delete``: at once when ``var`` is idle, else queued as its
        last write (a marker; the thread finishing the operation before it runs ``fn``)."""
        v: ThreadedVar = var  # type: ignore[assignment]
        lock = self._lock
        if fn is not None and lock._is_owned():  # type: ignore[attr-defined]
            # A finalizer that the garbage collector ran in the middle of this engine's
            # own bookkeeping (the lock is ours already): do not run user code under the
            # engine lock, hand the delete to a worker as a DELETE_VAR operation.
            self._push_delete_op(fn, ctx, v)
            return
        if not lock.acquire(False):
            lock_contended(lock)
        try:
            if v.deleted:
                raise EngineError("push_delete: the variable was already deleted")
            if v.writing or v.readers or v.queue:
                v.deleted = DELETING
                v.dfn = fn or _noop
                v.dctx = ctx
                self._enqueue(v, _DELETE_MARK)
                self._pending += 1
                return
            v.deleted = DEAD
            v.writing = True
            if v.error is not None:
                self._set_error(v, None)
        finally:
            lock.release()
        # Fast path (NDArray garbage collection): nothing pending, free right here.
        v.error = self._run_delete_fn(fn, ctx) if fn is not None else None

    def _push_delete_op(self, fn: SyncFn, ctx: Context, v: ThreadedVar) -> None:
        """push_delete as a DELETE_VAR operation run by a worker of ``ctx``."""
        pool = self._pool_of(ctx, _DELETE_VAR)
        lock = self._lock
        if not lock.acquire(False):
            lock_contended(lock)
        try:
            if v.deleted:
                raise EngineError("push_delete: the variable was already deleted")
            v.deleted = DELETING
            op = _Op(fn, (), (v,), (), FnProperty.DELETE_VAR, 0, "delete_var", pool, ctx, True)
            self._pending += 1
            if v.writing or v.readers or v.queue:
                op.wait = 1                          # a write after everything pending
                self._enqueue(v, op)
            else:
                v.writing = True
                self._dispatch(op, None)
        finally:
            lock.release()

    def _pool_of(self, ctx: Context, prop: int) -> Any:
        raise NotImplementedError

    def _run_deletes(self, v: ThreadedVar | None = None) -> None:
        """Run the delete functions of variables whose last operation just finished (on
        this thread, outside the lock, as push_delete's fast path does), then retire
        them. ``v``: one already taken off ``_todo`` by the caller."""
        lock = self._lock
        while True:
            if v is None:
                if not lock.acquire(False):
                    lock_contended(lock)
                try:
                    if not self._todo:
                        return
                    v = self._todo.pop()
                finally:
                    lock.release()
            fn, ctx = v.dfn, v.dctx
            v.dfn = v.dctx = None
            err = self._run_delete_fn(fn, ctx)
            if not lock.acquire(False):
                lock_contended(lock)
            try:
                self._retire(v, err)
                self._pending -= 1
                if (not self._pending and self._nwait) or (self._nthrottle and self._pending <= RESUME_PENDING):
                    self._all_cv.notify_all()
                v = self._todo.pop() if self._todo else None
            finally:
                lock.release()
            if v is None:
                return

    def _run_delete_fn(self, fn: Callable[[RunContext], None], ctx: Context) -> EngineOpError | None:
        """``fn(rctx)`` marked as running on the engine; a failure is recorded and returned."""
        exc = None
        obs = self.observers
        toks = None
        if obs:
            toks, exc = start_observers(obs, "delete_var", ctx, "inline")
        if exc is None:
            depth = getattr(_tls, "depth", 0)       # mark_engine_thread(), cheaper
            _tls.depth = depth + 1
            try:
                try:
                    rc = self._inline_rc[ctx.device_type][ctx.device_id]
                except KeyError:
                    rc = run_context(ctx, "inline")
                    self._inline_rc.setdefault(ctx.device_type, {})[ctx.device_id] = rc
                fn(rc)
            except BaseException as e:  # noqa: BLE001 - reported at the next wait
                exc = e
            finally:
                _tls.depth = depth
            if toks is not None:
                exc = end_observers(obs, toks) or exc
        if exc is None:
            return None
        err = as_op_error("delete_var", exc)
        with self._lock:
            self._errors.append(err)
        return err

    # -- waiting -----------------------------------------------------------------------
    def wait_for_var(self, var: Var) -> None:
        """See ``Engine.wait_for_var``."""
        check_not_in_engine("wait_for_var")
        v: ThreadedVar = var  # type: ignore[assignment]
        lock = self._lock
        waiter = None
        err: EngineOpError | None = None
        if not lock.acquire(False):
            lock_contended(lock)
        try:
            if v.deleted != DEAD and (v.writing or v.readers or v.queue):
                waiter = _Waiter()
                self._enqueue(v, waiter)
            else:
                err = v.error
        finally:
            lock.release()
        if waiter is not None:
            waiter.lock.acquire()
            err = waiter.err           # the error as it was when the waiter's turn came
        if err is not None:
            if not err.reported:
                with lock:
                    try:
                        self._errors.remove(err)
                    except ValueError:
                        pass
            raise_poison(err)

    def _throttle(self) -> None:
        """Backpressure on a pushing thread (see ``MAX_PENDING``): wait until the pending
        operations drop to ``RESUME_PENDING`` unless the backlog is stalled (no progress and
        no worker CPU in ``THROTTLE_S``: an operation waiting outside the engine)."""
        if time.monotonic() < self._throttle_off_until:
            return
        with self._lock:
            if self._pending <= MAX_PENDING:
                return
            self._nthrottle += 1
            try:
                # a backlog that drains or computes, however slowly (a loaded host), keeps the
                # pusher waiting; only a stalled one (nothing finished, the workers used
                # almost no CPU: a wait outside the engine) pauses throttling (docs/engine.md)
                left, clock = self._pending, self._work_clock()
                while not self._all_cv.wait_for(lambda: self._pending <= RESUME_PENDING, THROTTLE_S):
                    now = self._work_clock()
                    if self._pending >= left and now - clock < STALL_CPU_SHARE * THROTTLE_S:
                        self._throttle_off_until = time.monotonic() + THROTTLE_PAUSE_S
                        break
                    left, clock = self._pending, now
            finally:
                self._nthrottle -= 1

    def _work_clock(self) -> float:
        """CPU seconds the engine's worker threads have used so far (engines with worker
        threads measure it; 0 here: every backlog that does not shrink is a stall)."""
        return 0.0

    def _wait_idle(self, timeout: float | None = None) -> bool:
        if self._todo:
            self._run_deletes()
        with self._lock:
            self._nwait += 1
            try:
                if timeout is None:
                    while self._pending:
                        self._all_cv.wait()
                    return True
                return self._all_cv.wait_for(lambda: not self._pending, timeout)
            finally:
                self._nwait -= 1

    def _unreported(self) -> list[EngineOpError]:
        """Errors no wait point has raised yet (for the exit report)."""
        with self._lock:
            return [e for e in self._errors if not e.reported]

    def _unfinished(self) -> list[str]:
        """What is still pending, for the exit report of a timed-out shutdown."""
        return [f"{self._pending} operation(s)"] if self._pending else []

    def wait_for_all(self) -> None:
        """See ``Engine.wait_for_all``."""
        check_not_in_engine("wait_for_all")
        self._wait_idle()
        with self._lock:
            errs, self._errors = self._errors, []
        raise_unreported(errs)


def _op_name(op: _Op) -> str:
    return str(op.name or _fn_name(op.fn))
