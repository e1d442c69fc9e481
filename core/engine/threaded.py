"""The threaded dependency engines: ``ThreadedEngine`` and ``ThreadedEnginePerDevice``.

Both schedule with MXNet's ``ThreadedVar`` algorithm (see ``var.py``) and run ready
operations on worker threads; they differ in how workers are pooled:

* ``ThreadedEngine`` (MXNet's ``ThreadedEnginePooled``): one pool shared by every
  context, ``PLEXNET_CPU_WORKER_NTHREADS`` workers (default: CPU count).
* ``ThreadedEnginePerDevice`` (the default): per device a pool of compute workers (for
  CPU ``backend.compute_workers``; for other devices one worker per stream, each with its
  own ``backend.new_stream(id, 'compute')``), separate copy workers for
  ``COPY_TO_GPU``/``COPY_FROM_GPU`` and a pool for ``CPU_PRIORITIZED`` /
  ``GPU_PRIORITIZED`` operations. Pools are created on first use of a context.

Differences from MXNet, on purpose:

* Pushing is thread-safe: every scheduling step runs under one engine-wide re-entrant
  lock (re-entrant because a garbage-collected NDArray may call ``push_delete`` from a
  finalizer at any allocation, even inside the engine).
* ``push_delete`` on a variable with nothing pending runs the delete function at once on
  the calling thread (the NDArray garbage-collection fast path). On a busy variable it
  queues a marker that acts as the variable's last write; the thread that finishes the
  last operation before it runs the delete function right away (no operation record, no
  worker hop). Only a ``push_delete`` made from a finalizer while the same thread is
  inside the engine's bookkeeping becomes a ``DELETE_VAR`` operation run by a worker.
* Priority orders ready operations inside one pool: higher first, FIFO among equals.

Workers park on a private lock when their pool's queue is empty and are woken only when
one is parked *and* the new work is not about to be taken by the worker that produced it
(a chain of dependent operations stays on one worker without thread hand-offs).
"""
from __future__ import annotations

import atexit
import heapq
import itertools
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Sequence
from typing import Any

from ..base import EngineError
from ..context import HOST_DEVICE_TYPES as _CPU_TYPES, Context
from .base import (AsyncFn, Engine, EngineOpError, FnProperty, Opr, SyncFn, Var, _fn_name, _tls,
                   check_not_in_engine, mark_engine_thread, pending_error, raise_unreported, split_vars)
from .runctx import run_context, stream_syncer as _stream_syncer
from .var import DEAD, DELETING, ThreadedVar, _Op

__all__ = ["ThreadedEngine", "ThreadedEnginePerDevice", "ThreadedVar"]

_NORMAL = FnProperty.NORMAL
_ASYNC = int(FnProperty.ASYNC)
_DELETE_VAR = int(FnProperty.DELETE_VAR)
_INLINE = int(FnProperty.INLINE)
_NOSKIP = frozenset((int(FnProperty.DELETE_VAR), int(FnProperty.NO_SKIP)))
_COPY = frozenset((int(FnProperty.COPY_FROM_GPU), int(FnProperty.COPY_TO_GPU)))
_NPROPS = len(FnProperty)

_allocate_lock = threading.Lock
_sleep = time.sleep
get_ident = threading.get_ident


def _env_int(default: int, *names: str) -> int:
    for n in names:
        v = os.environ.get(n)
        if v:
            try:
                return max(1, int(v))
            except ValueError:
                raise ValueError(f"{n} must be an integer, got {v!r}") from None
    return max(1, default)


def _noop(rctx: Any) -> None:
    pass


def _lock_contended(lock: Any) -> None:
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


_SEQ = (tuple, list)


def _norm(c: Sequence[Var], m: Sequence[Var]) -> tuple[tuple, tuple]:
    """``split_vars`` with the common small cases done without building dicts."""
    if c.__class__ not in _SEQ or m.__class__ not in _SEQ:
        return split_vars(tuple(c), tuple(m))       # sets, generators, ...
    if not c:
        if len(m) < 2:
            return (), tuple(m)
        if len(m) == 2 and m[0] is not m[1]:
            return (), tuple(m)
    elif len(m) == 1:
        x = m[0]
        if len(c) == 1:
            if c[0] is x:
                return (), tuple(m)
            return tuple(c), tuple(m)
        if len(c) == 2:
            a, b = c
            if a is not b and a is not x and b is not x:
                return tuple(c), tuple(m)
    elif not m and len(c) == 1:
        return tuple(c), ()
    return split_vars(c, m)


class _Worker:
    __slots__ = ("sem", "name", "thread", "rcs", "active")

    def __init__(self, name: str) -> None:
        self.name = name
        self.sem = _allocate_lock()
        self.sem.acquire()          # held while running; a waker releases it
        self.thread: threading.Thread | None = None
        self.rcs: dict = {}         # ThreadedEngine: RunContext per context
        self.active: Any = None     # ThreadedEngine: device made current last


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
        self.lock = _allocate_lock()
        self.lock.acquire()
        self.err: EngineOpError | None = None


class _Pool:
    """Ready operations of one pool and the workers serving it."""

    __slots__ = ("q", "heap", "parked", "stop", "workers", "label", "ctx", "kind",
                 "stream_kind", "fixed_rc", "__weakref__")

    def __init__(self, label: str, ctx: Context | None, kind: str, stream_kind: str | None,
                 fixed_rc: bool) -> None:
        self.q: deque = deque()         # ready operations of priority 0, FIFO
        self.heap: list = []            # ready operations of other priorities
        self.parked: list = []          # workers waiting for work
        self.stop = False
        self.workers: list[_Worker] = []
        self.label = label
        self.ctx = ctx
        self.kind = kind
        self.stream_kind = stream_kind  # None: no device stream (CPU)
        self.fixed_rc = fixed_rc        # one RunContext per worker (per-device pools)

    def __repr__(self) -> str:
        return f"<pool {self.label}: {len(self.workers)} workers, {len(self.q) + len(self.heap)} ready>"


class _ThreadedBase(Engine):
    """The scheduling machinery shared by both threaded engines."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._all_cv = threading.Condition(self._lock)
        self._pool_lock = threading.RLock()
        self._pending = 0          # pushed, not finished
        self._nwait = 0            # threads inside wait_for_all
        self._errors: list[EngineOpError] = []   # every unreported error
        self._seq = itertools.count()
        self._pools: dict[Any, _Pool] = {}
        #: device_type -> device_id -> [pool per FnProperty]; read without a lock
        self._fast: dict[str, dict[int, list]] = {}
        self._inline_rc: dict[str, dict[int, Any]] = {}
        self._pusher_rc: dict[tuple[str, int], Any] = {}
        self._dqfree: list[deque] = []     # empty variable queues for reuse
        self._todo: list[ThreadedVar] = []   # variables whose delete function is due
        self.observers = ()                # an instance attribute: faster to test
        _engines.add(self)

    # -- pools (subclasses decide the layout) ------------------------------------------
    def _pool_of(self, ctx: Context, prop: int) -> _Pool:
        try:
            p = self._fast[ctx.device_type][ctx.device_id][prop]
            if p is not None:
                return p
        except (KeyError, AttributeError):
            pass
        return self._make_pool(ctx, prop)

    def _make_pool(self, ctx: Context, prop: int) -> _Pool:
        raise NotImplementedError

    def _remember(self, ctx: Context, prop: int, pool: _Pool) -> None:
        row = self._fast.setdefault(ctx.device_type, {}).setdefault(ctx.device_id, [None] * _NPROPS)
        row[int(prop)] = pool

    def _start_pool(self, key: Any, label: str, ctx: Context | None, kind: str, n: int,
                    stream_kind: str | None, fixed_rc: bool) -> _Pool:
        """Create a pool and its ``n`` workers; device setup errors are raised here."""
        pool = _Pool(label, ctx, kind, stream_kind, fixed_rc)
        started = []
        for i in range(n):
            w = _Worker(f"{label}/{i}")
            ev = threading.Event()
            box: list = [None, ev]
            t = threading.Thread(target=_worker_main, args=(weakref.ref(self), pool, w, box),
                                 name=f"plexnet-engine {w.name}", daemon=True)
            w.thread = t
            pool.workers.append(w)
            t.start()
            started.append(box)
        for box in started:
            box[1].wait()
        errs = [b[0] for b in started if b[0] is not None]
        if errs:
            self._stop_pools([pool])
            raise errs[0]
        self._pools[key] = pool
        return pool

    # -- pushing -----------------------------------------------------------------------
    def new_var(self) -> ThreadedVar:
        return ThreadedVar()

    def push_async(self, fn: AsyncFn, ctx: Context, const_vars: Sequence[Var] = (),
                   mutate_vars: Sequence[Var] = (), prop: FnProperty = _NORMAL,
                   priority: int = 0, name: str | None = None) -> None:
        if const_vars or mutate_vars.__class__ is not tuple or len(mutate_vars) != 1:
            c, m = _norm(const_vars, mutate_vars)
            self._push(fn, ctx, c, m, prop, priority, name or "op", False)
        else:
            self._push(fn, ctx, (), mutate_vars, prop, priority, name or "op", False)

    def push_sync(self, fn: SyncFn, ctx: Context, const_vars: Sequence[Var] = (),
                  mutate_vars: Sequence[Var] = (), prop: FnProperty = _NORMAL,
                  priority: int = 0, name: str | None = None) -> None:
        # The hottest entry point (every imperative NDArray operation): ``_push`` is inlined
        # here ON PURPOSE for synchronous functions, to save a Python call per operation on
        # the tiny-op path. This duplication is intentional -- do not merge the two; keep
        # them in step when changing either.
        if const_vars or mutate_vars.__class__ is not tuple or len(mutate_vars) != 1:
            c, m = _norm(const_vars, mutate_vars)
        else:
            c, m = (), mutate_vars
        try:
            pool = self._fast[ctx.device_type][ctx.device_id][prop]
            if pool is None:
                pool = self._make_pool(ctx, prop)
        except (KeyError, AttributeError, TypeError, IndexError):
            pool = self._pool_of(ctx, int(prop))
        op = _Op(fn, c, m, prop, priority, name, pool, ctx, True)
        wait = 0
        inline = False
        lock = self._lock
        if not lock.acquire(False):
            _lock_contended(lock)
        try:
            for v in c:
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
            for v in m:
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
            elif prop == _INLINE:
                inline = True
            elif priority:
                heapq.heappush(pool.heap, (-priority, next(self._seq), op))
                if pool.parked:
                    pool.parked.pop().sem.release()
            else:
                pool.q.append(op)
                if pool.parked:
                    pool.parked.pop().sem.release()
        finally:
            lock.release()
        if inline:  # FnProperty.INLINE and ready: no worker hand-off
            self._run_inline(op, ctx)

    def _run_inline(self, op: _Op, ctx: Context) -> None:
        """Run a ready INLINE operation on the pushing thread (the lean path of
        ``_execute``: no observers, nothing to skip)."""
        key = (ctx.device_type, ctx.device_id)
        rc = self._pusher_rc.get(key)
        if rc is None:
            rc = self._pusher_rc[key] = run_context(ctx, "pusher")
        if self.observers or self._errors:
            with mark_engine_thread():
                self._execute(op, rc, "pusher", None)
            return
        tls = _tls
        depth = getattr(tls, "depth", 0)
        tls.depth = depth + 1
        try:
            op.fn(rc)
        except BaseException as e:
            tls.depth = depth
            self._fail(op, e, None)
            return
        tls.depth = depth
        self._finish(op, None, None)

    def push(self, opr: Opr, ctx: Context, priority: int = 0) -> None:
        if opr.deleted:
            raise EngineError(f"operation {opr.name!r} was deleted")
        self._push(opr.fn, ctx, opr.const_vars, opr.mutate_vars, opr.prop, priority, opr.name, False)

    def _push(self, fn: Any, ctx: Context, c: tuple, m: tuple, prop: Any, pri: int,
              name: Any, sync: bool) -> None:
        """Register an operation on its variables; dispatch it if every one grants it.

        ``push_sync`` carries an intentional inlined copy of this for synchronous
        functions (the hot path): a change here belongs there too."""
        try:
            pool = self._fast[ctx.device_type][ctx.device_id][prop]
            if pool is None:
                pool = self._make_pool(ctx, prop)
        except (KeyError, AttributeError, TypeError, IndexError):
            pool = self._pool_of(ctx, int(prop))
        op = _Op(fn, c, m, prop, pri, name, pool, ctx, sync)
        if not sync:
            op.eng = self
            op.done = False
            op.tok = None
            op.runner = None
        wait = 0
        lock = self._lock
        if not lock.acquire(False):
            _lock_contended(lock)
        try:
            for v in c:
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
            for v in m:
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
                return
            if prop == _ASYNC:
                pass                                 # run below, on this thread
            elif pri:
                heapq.heappush(pool.heap, (-pri, next(self._seq), op))
                if pool.parked:
                    pool.parked.pop().sem.release()
                return
            else:
                pool.q.append(op)
                if pool.parked:
                    pool.parked.pop().sem.release()
                return
        finally:
            lock.release()
        # MXNet runs a ready ASYNC operation right on the pushing thread: it only
        # launches work that completes elsewhere, so a worker hop would be pure cost.
        with mark_engine_thread():
            self._execute(op, run_context(ctx, "pusher"), "pusher", None)

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
        raise EngineError(f"operation {self._name(op)!r} uses a variable that was deleted")

    def _dispatch(self, op: _Op, mypool: _Pool | None) -> None:
        """Hand a ready operation to its pool (under the lock). A worker of ``mypool``
        (the one finishing an operation) takes the next ready one itself, so a parked
        worker is only woken for work beyond that."""
        pool = op.pool
        if op.pri:
            heapq.heappush(pool.heap, (-op.pri, next(self._seq), op))
        else:
            pool.q.append(op)
        if pool.parked and (pool is not mypool or len(pool.q) + len(pool.heap) > 1):
            pool.parked.pop().sem.release()

    def _release(self, v: ThreadedVar, mypool: _Pool | None) -> None:
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
                    # inline _dispatch: this is every step of a dependency chain
                    pool = op.pool
                    if op.pri:
                        heapq.heappush(pool.heap, (-op.pri, next(self._seq), op))
                    else:
                        pool.q.append(op)
                    if pool.parked and (pool is not mypool or len(pool.q) + len(pool.heap) > 1):
                        pool.parked.pop().sem.release()
                break
            else:                                    # a read
                if v.writing:
                    return
                q.popleft()
                v.readers += 1
                op.wait -= 1
                if not op.wait:
                    pool = op.pool                   # inline _dispatch
                    if op.pri:
                        heapq.heappush(pool.heap, (-op.pri, next(self._seq), op))
                    else:
                        pool.q.append(op)
                    if pool.parked and (pool is not mypool or len(pool.q) + len(pool.heap) > 1):
                        pool.parked.pop().sem.release()
        if not q:
            # recycle the emptied queue: one allocation (and GC object) less per
            # variable that ever had to wait
            v.queue = None
            if len(self._dqfree) < 512:
                self._dqfree.append(q)

    # -- finishing ---------------------------------------------------------------------
    def _finish(self, op: _Op, err: EngineOpError | None, mypool: _Pool | None,
                new_error: bool = False) -> None:
        """Release ``op``'s variables; store ``err`` (None on success) on its mutated ones."""
        lock = self._lock
        if not lock.acquire(False):
            _lock_contended(lock)
        try:
            if new_error:
                self._errors.append(err)  # type: ignore[arg-type]
            for v in op.c:
                v.readers -= 1
                if not v.readers and v.queue:
                    self._release(v, mypool)
            if op.prop != _DELETE_VAR:
                for v in op.m:
                    v.error = err
                    v.writing = False
                    if v.queue:
                        self._release(v, mypool)
            else:
                for v in op.m:
                    v.error = err
                    v.deleted = DEAD                 # stays "writing" for ever
                    q = v.queue
                    if q is not None:
                        v.queue = None
                        while q:                     # only waiters can be left
                            w = q.popleft()
                            if w.__class__ is not _Op:
                                w.err = err
                                w.lock.release()
            self._pending -= 1
            if not self._pending and self._nwait:
                self._all_cv.notify_all()
            due = self._todo.pop() if self._todo else None
        finally:
            lock.release()
        if due is not None:
            self._run_deletes(due)

    def _run_deletes(self, v: ThreadedVar | None = None, on_worker: bool = False) -> None:
        """Run the delete functions of variables whose last operation just finished (on
        this thread, outside the lock, as push_delete's fast path does), then retire
        them. ``v``: one already taken off ``_todo`` by the caller; ``on_worker``: this
        is a worker thread (already marked as running engine functions)."""
        lock = self._lock
        while True:
            if v is None:
                if not lock.acquire(False):
                    _lock_contended(lock)
                try:
                    if not self._todo:
                        return
                    v = self._todo.pop()
                finally:
                    lock.release()
            fn, ctx = v.dfn, v.dctx
            v.dfn = v.dctx = None
            if on_worker and not self.observers:
                err = None
                try:
                    rc = self._inline_rc[ctx.device_type][ctx.device_id]
                except KeyError:
                    rc = self._rc_inline(ctx)
                try:
                    fn(rc)
                except BaseException as e:
                    err = self._delete_failed(e)
            else:
                err = self._run_delete_fn(fn, ctx, "inline")
            if not lock.acquire(False):
                _lock_contended(lock)
            try:
                v.error = err
                v.deleted = DEAD
                q = v.queue
                if q is not None:
                    v.queue = None
                    while q:                         # waiters queued after push_delete
                        w = q.popleft()
                        w.err = err
                        w.lock.release()
                self._pending -= 1
                if not self._pending and self._nwait:
                    self._all_cv.notify_all()
                v = self._todo.pop() if self._todo else None
            finally:
                lock.release()
            if v is None:
                return

    def _rc_inline(self, ctx: Context) -> Any:
        rc = self._inline_rc.setdefault(ctx.device_type, {})[ctx.device_id] = run_context(ctx, "inline")
        return rc

    def _delete_failed(self, e: BaseException) -> EngineOpError:
        err = EngineOpError("delete_var", e)
        err.__cause__ = e
        with self._lock:
            self._errors.append(err)
        return err

    def _run_delete_fn(self, fn: Any, ctx: Context, wname: str) -> EngineOpError | None:
        """``fn(rctx)`` marked as running on the engine; a failure is recorded and returned."""
        err = None
        obs = self.observers
        toks = [o.on_start("delete_var", ctx, wname) for o in obs] if obs else None
        try:
            rc = self._inline_rc[ctx.device_type][ctx.device_id]
        except KeyError:
            rc = self._rc_inline(ctx)
        depth = getattr(_tls, "depth", 0)       # mark_engine_thread(), cheaper
        _tls.depth = depth + 1
        try:
            fn(rc)
        except BaseException as e:
            err = self._delete_failed(e)
        finally:
            _tls.depth = depth
        if toks is not None:
            _end(obs, toks)
        return err

    def _fail(self, op: _Op, exc: BaseException, mypool: _Pool | None) -> None:
        err = exc if isinstance(exc, EngineOpError) else EngineOpError(self._name(op), exc)
        if err is not exc:
            err.__cause__ = exc
        self._finish(op, err, mypool, True)

    def _skip(self, op: _Op, mypool: _Pool | None) -> bool:
        """Skip ``op`` if one of its variables holds an unreported error."""
        if op.prop in _NOSKIP:
            return False
        err = pending_error(op.c) or pending_error(op.m)
        if err is None:
            return False
        if not op.sync:
            op.done = True
        self._finish(op, err, mypool)
        return True

    def _complete_async(self, op: _Op, exc: BaseException | None) -> None:
        ws = getattr(_wtls, "sync", None)  # None on host workers: the common case first
        if ws is not None and exc is None and op.runner == get_ident():
            # completed on the worker running it (an executor segment...): its device
            # work must be done first, as for synchronous functions (see stream_syncer)
            try:
                ws[0](ws[1])
            except BaseException as e:  # noqa: BLE001 - a device error fails the operation
                exc = e
        if op.tok is not None:
            obs, toks = op.tok
            op.tok = None
            _end(obs, toks)
        mypool = op.runpool if op.runner == get_ident() else None
        if exc is None:
            self._finish(op, None, mypool)
        else:
            self._fail(op, exc, mypool)

    @staticmethod
    def _name(op: _Op) -> str:
        return op.name or _fn_name(op.fn)

    def _execute(self, op: _Op, rc: Any, wname: str, mypool: _Pool | None) -> None:
        """Run one ready operation: the general path (skips, observers, async)."""
        if self._errors and self._skip(op, mypool):
            return
        obs = self.observers
        toks = [o.on_start(self._name(op), op.ctx, wname) for o in obs] if obs else None
        if op.sync:
            try:
                op.fn(rc)
                if rc.stream is not None:  # device work is done before the operation is
                    sync = _stream_syncer(rc)
                    if sync is not None:
                        sync(rc.stream)
            except BaseException as e:
                if toks is not None:
                    _end(obs, toks)
                self._fail(op, e, mypool)
                return
            if toks is not None:
                _end(obs, toks)
            self._finish(op, None, mypool)
            return
        if toks is not None:
            op.tok = (obs, toks)
        # on_complete called on this thread while fn runs: the worker takes the next
        # ready operation itself once fn returns, so _finish need not wake another one
        op.runner = get_ident()
        op.runpool = mypool
        try:
            op.fn(rc, op.on_complete)
        except BaseException as e:
            self._async_raised(op, e, mypool)

    def _async_raised(self, op: _Op, e: BaseException, mypool: _Pool | None) -> None:
        """An asynchronous function raised instead of returning."""
        if op.done:
            # completed, then raised: the dependents may already run; report it at the
            # next wait_for_all.
            err = EngineOpError(self._name(op), e)
            err.__cause__ = e
            with self._lock:
                self._errors.append(err)
            return
        op.done = True
        if op.tok is not None:
            _end(*op.tok)
            op.tok = None
        self._fail(op, e, mypool)

    # -- deleting ----------------------------------------------------------------------
    def push_delete(self, fn: SyncFn | None, ctx: Context, var: Var) -> None:
        lock = self._lock
        if fn is not None and lock._is_owned():  # type: ignore[attr-defined]
            # A finalizer that the garbage collector ran in the middle of this engine's
            # own bookkeeping (the lock is ours already): do not run user code under the
            # engine lock, hand the delete to a worker as a DELETE_VAR operation.
            return self._push_delete_op(fn, ctx, var)
        if not lock.acquire(False):
            _lock_contended(lock)
        try:
            if var.deleted:  # type: ignore[attr-defined]
                raise EngineError("push_delete: the variable was already deleted")
            if var.writing or var.readers or var.queue:  # type: ignore[attr-defined]
                # Queue the delete as the variable's last write: a marker (no operation
                # record). The thread finishing the last operation before it runs ``fn``.
                var.deleted = DELETING  # type: ignore[attr-defined]
                var.dfn = fn or _noop  # type: ignore[attr-defined]
                var.dctx = ctx  # type: ignore[attr-defined]
                q = var.queue  # type: ignore[attr-defined]
                if q is None:
                    q = var.queue = self._dqfree.pop() if self._dqfree else deque()  # type: ignore[attr-defined]
                q.append(_DELETE_MARK)
                self._pending += 1
                return
            var.deleted = DEAD  # type: ignore[attr-defined]
            var.writing = True  # type: ignore[attr-defined]
        finally:
            lock.release()
        # Fast path (NDArray garbage collection): nothing pending, free right here.
        var.error = self._run_delete_fn(fn, ctx, "inline") if fn is not None else None  # type: ignore[attr-defined]

    def _push_delete_op(self, fn: SyncFn, ctx: Context, var: Var) -> None:
        """push_delete as a DELETE_VAR operation run by a worker of ``ctx``."""
        pool = self._pool_of(ctx, _DELETE_VAR)
        lock = self._lock
        if not lock.acquire(False):
            _lock_contended(lock)
        try:
            if var.deleted:  # type: ignore[attr-defined]
                raise EngineError("push_delete: the variable was already deleted")
            var.deleted = DELETING  # type: ignore[attr-defined]
            op = _Op(fn, (), (var,), FnProperty.DELETE_VAR, 0, "delete_var", pool, ctx, True)
            self._pending += 1
            if var.writing or var.readers or var.queue:  # type: ignore[attr-defined]
                op.wait = 1                          # a write after everything pending
                q = var.queue  # type: ignore[attr-defined]
                if q is None:
                    q = var.queue = self._dqfree.pop() if self._dqfree else deque()  # type: ignore[attr-defined]
                q.append(op)
            else:
                var.writing = True  # type: ignore[attr-defined]
                self._dispatch(op, None)
        finally:
            lock.release()

    # -- waiting -----------------------------------------------------------------------
    def wait_for_var(self, var: Var) -> None:
        check_not_in_engine("wait_for_var")
        lock = self._lock
        waiter = None
        if not lock.acquire(False):
            _lock_contended(lock)
        try:
            if var.deleted != DEAD and (var.writing or var.readers or var.queue):  # type: ignore[attr-defined]
                waiter = _Waiter()
                q = var.queue  # type: ignore[attr-defined]
                if q is None:
                    q = var.queue = self._dqfree.pop() if self._dqfree else deque()  # type: ignore[attr-defined]
                q.append(waiter)
            else:
                err = var.error  # type: ignore[attr-defined]
        finally:
            lock.release()
        if waiter is not None:
            waiter.lock.acquire()
            err = waiter.err           # the error as it was when the waiter's turn came
        if err is not None:
            with lock:
                if var.error is err:  # type: ignore[attr-defined]
                    var.error = None  # type: ignore[attr-defined]
                try:
                    self._errors.remove(err)
                except ValueError:
                    pass
            if not err.reported:
                raise err.report()

    def _wait_idle(self, timeout: float | None = None) -> bool:
        lock = self._lock
        if self._todo:
            self._run_deletes()
        with lock:
            if timeout is None:
                while self._pending:
                    self._nwait += 1
                    try:
                        self._all_cv.wait()
                    finally:
                        self._nwait -= 1
                return True
            self._nwait += 1
            try:
                return self._all_cv.wait_for(lambda: not self._pending, timeout)
            finally:
                self._nwait -= 1

    def wait_for_all(self) -> None:
        check_not_in_engine("wait_for_all")
        self._wait_idle()
        with self._lock:
            errs, self._errors = self._errors, []
        raise_unreported(errs)

    # -- life cycle --------------------------------------------------------------------
    def shutdown(self, timeout: float | None = None) -> None:
        """Wait for pending operations (errors stay stored), then stop every worker.

        The engine stays usable: the next push starts fresh pools."""
        check_not_in_engine("shutdown")
        idle = self._wait_idle(timeout)
        with self._pool_lock:
            pools = list(self._pools.values())
            self._pools.clear()
            self._fast = {}
            self._reset_pools()
        self._stop_pools(pools, join=idle)      # busy workers (timed out) are not joined

    def _reset_pools(self) -> None:
        pass

    def _stop_pools(self, pools: list[_Pool], join: bool = False) -> None:
        with self._lock:
            for p in pools:
                p.stop = True
                while p.parked:
                    p.parked.pop().sem.release()
        if join:
            me = threading.current_thread()
            for p in pools:
                for w in p.workers:
                    if w.thread is not None and w.thread is not me:
                        w.thread.join(timeout=5.0)

    def _after_fork_in_child(self) -> None:
        """Worker threads do not survive ``fork``: start over with fresh locks and pools.
        Operations pending in the parent are not run in the child."""
        self._lock = threading.RLock()
        self._all_cv = threading.Condition(self._lock)
        self._pool_lock = threading.RLock()
        self._pending = 0
        self._nwait = 0
        self._pools = {}
        self._fast = {}
        self._reset_pools()

    def stats(self) -> dict[str, Any]:
        """Pools and pending count (for debugging and the CLI)."""
        with self._lock:
            return {"kind": self.kind, "pending": self._pending,
                    "unreported_errors": len(self._errors),
                    "pools": {p.label: {"workers": len(p.workers), "ready": len(p.q) + len(p.heap),
                                        "parked": len(p.parked)} for p in self._pools.values()}}


def _end(obs: Sequence[Any], toks: Sequence[Any]) -> None:
    for o, t in zip(obs, toks):
        o.on_end(t)


# -- worker threads ----------------------------------------------------------------------
def _worker_main(engine_ref: Any, pool: _Pool, w: _Worker, box: list) -> None:
    eng = engine_ref()
    try:
        rc = _setup_worker(pool, w) if pool.fixed_rc else None
    except BaseException as e:
        box[0] = e
        box[1].set()
        return
    box[1].set()
    if eng is None:
        return
    with mark_engine_thread():
        _loop(eng, pool, w, rc)


def _setup_worker(pool: _Pool, w: _Worker) -> Any:
    """The worker's RunContext: its device made current and its own stream."""
    ctx = pool.ctx
    stream = None
    if pool.stream_kind is not None:
        from ..backends import get_backend
        b = get_backend(ctx)
        b.activate(ctx.device_id)
        stream = b.new_stream(ctx.device_id, pool.stream_kind)
    return run_context(ctx, w.name, stream)


def _shared_rc(w: _Worker, ctx: Context) -> Any:
    """ThreadedEngine: a worker's RunContext for ``ctx`` (stream made on first use)."""
    dev = (ctx.device_type, ctx.device_id)
    if ctx.device_type in _CPU_TYPES:
        rc = w.rcs.get(dev)
        if rc is None:
            rc = w.rcs[dev] = run_context(ctx, w.name)
        return rc
    from ..backends import get_backend
    b = get_backend(ctx)
    if w.active != dev:
        b.activate(ctx.device_id)
        w.active = dev
    rc = w.rcs.get(dev)
    if rc is None:
        rc = w.rcs[dev] = run_context(ctx, w.name, b.new_stream(ctx.device_id, "compute"))
    return rc


_wtls = threading.local()  # per worker: (synchronize, stream) of its current RunContext


def _loop(eng: _ThreadedBase, pool: _Pool, w: _Worker, rc: Any) -> None:
    q = pool.q
    heap = pool.heap
    popleft = q.popleft
    finish = eng._finish
    release = eng._release
    lock = eng._lock
    todo = eng._todo
    fixed = rc is not None
    sync = _stream_syncer(rc) if fixed else None
    _wtls.sync = (sync, rc.stream) if sync is not None else None
    last_ctx = None
    wname = w.name
    me = get_ident()
    while True:
        if heap:
            op = _pop_prio(eng, pool)
        else:
            try:
                op = popleft()
            except IndexError:
                op = None
        if op is None:
            if not _park(eng, pool, w):
                return
            continue
        if not fixed:
            ctx = op.ctx
            if ctx is not last_ctx:
                try:
                    rc = _shared_rc(w, ctx)
                    sync = _stream_syncer(rc)
                    _wtls.sync = (sync, rc.stream) if sync is not None else None
                except BaseException as e:
                    eng._fail(op, e, pool)
                    op = None
                    continue
                last_ctx = ctx
        if op.sync and not eng._errors and not eng.observers:
            # the hot path: a plain synchronous function, no stored errors, no observers
            try:
                op.fn(rc)
                if sync is not None:
                    sync(rc.stream)
            except BaseException as e:
                eng._fail(op, e, pool)
            else:
                if op.prop == _DELETE_VAR:
                    finish(op, None, pool)
                else:
                    # eng._finish(op, None, pool) inlined (keep the two in step)
                    if not lock.acquire(False):
                        _lock_contended(lock)
                    try:
                        for v in op.c:
                            v.readers -= 1
                            if not v.readers and v.queue:
                                release(v, pool)
                        for v in op.m:
                            v.error = None
                            v.writing = False
                            if v.queue:
                                release(v, pool)
                        eng._pending -= 1
                        if not eng._pending and eng._nwait:
                            eng._all_cv.notify_all()
                        due = todo.pop() if todo else None
                    finally:
                        lock.release()
                    if due is not None:
                        eng._run_deletes(due, True)
        elif not op.sync and not eng._errors and not eng.observers:
            # an asynchronous function (see _execute, the general path)
            op.runner = me
            op.runpool = pool
            try:
                op.fn(rc, op.on_complete)
            except BaseException as e:
                eng._async_raised(op, e, pool)
        else:
            eng._execute(op, rc, wname, pool)
        op = None          # drop the closure now, outside the engine lock


def _pop_prio(eng: _ThreadedBase, pool: _Pool) -> Any:
    lock = eng._lock
    if not lock.acquire(False):
        _lock_contended(lock)
    try:
        heap = pool.heap
        if heap and (heap[0][0] < 0 or not pool.q):
            return heapq.heappop(heap)[2]
        if pool.q:
            return pool.q.popleft()
        return None
    finally:
        lock.release()


def _park(eng: _ThreadedBase, pool: _Pool, w: _Worker) -> bool:
    """Sleep until woken; False when the pool is stopping."""
    lock = eng._lock
    if not lock.acquire(False):
        _lock_contended(lock)
    try:
        if pool.q or pool.heap:
            return True
        if pool.stop:
            return False
        pool.parked.append(w)
    finally:
        lock.release()
    w.sem.acquire()
    return True


# -- the two engines ---------------------------------------------------------------------
class ThreadedEngine(_ThreadedBase):
    """One worker pool shared by every context (MXNet's ``ThreadedEnginePooled``).

    ``PLEXNET_CPU_WORKER_NTHREADS`` (or ``MXNET_CPU_WORKER_NTHREADS``) workers, default
    the CPU count. Priority hints only order the shared queue.
    """

    kind = "ThreadedEngine"

    def __init__(self, num_workers: int | None = None) -> None:
        super().__init__()
        self.num_workers = num_workers or _env_int(os.cpu_count() or 1, "PLEXNET_CPU_WORKER_NTHREADS",
                                                   "MXNET_CPU_WORKER_NTHREADS")
        self._shared: _Pool | None = None
        self._known: set[str] = set()

    def _reset_pools(self) -> None:
        self._shared = None

    def _make_pool(self, ctx: Context, prop: int) -> _Pool:
        dt = ctx.device_type
        if dt not in self._known:
            from ..backends import get_backend
            get_backend(ctx)                    # a clear error for unusable devices
            self._known.add(dt)
        with self._pool_lock:
            pool = self._shared
            if pool is None:
                pool = self._shared = self._start_pool("shared", "threaded", None, "shared",
                                                       self.num_workers, None, False)
            self._remember(ctx, prop, pool)
            return pool


class ThreadedEnginePerDevice(_ThreadedBase):
    """Worker pools per device (MXNet's ``ThreadedEnginePerDevice``), the default.

    * CPU contexts: ``backend.compute_workers`` workers (``PLEXNET_CPU_WORKER_NTHREADS``,
      default CPU count) and ``PLEXNET_CPU_PRIORITY_NTHREADS`` (default min(4, CPUs))
      workers for ``CPU_PRIORITIZED`` operations.
    * Other devices (GPU): ``backend.compute_workers`` workers, one stream each;
      ``backend.copy_workers`` workers for ``COPY_TO_GPU``/``COPY_FROM_GPU``; and
      ``PLEXNET_GPU_PRIORITY_NTHREADS`` (default 1) for ``GPU_PRIORITIZED``. Every
      worker calls ``backend.activate(id)`` and makes its stream when it starts.
    """

    kind = "ThreadedEnginePerDevice"

    def _make_pool(self, ctx: Context, prop: int) -> _Pool:
        from ..backends import get_backend
        b = get_backend(ctx)                        # raises DeviceUnavailable
        dt, did = ctx.device_type, ctx.device_id
        prop = int(prop)
        if dt in _CPU_TYPES:
            if prop == FnProperty.CPU_PRIORITIZED:
                kind, n = "priority", _env_int(min(4, os.cpu_count() or 1), "PLEXNET_CPU_PRIORITY_NTHREADS",
                                               "MXNET_CPU_PRIORITY_NTHREADS")
            else:
                kind, n = "compute", int(getattr(b, "compute_workers", 1) or 1)
            stream_kind = None
        else:
            if prop in _COPY:
                kind, n, stream_kind = "copy", int(getattr(b, "copy_workers", 1) or 1), "copy"
            elif prop == FnProperty.GPU_PRIORITIZED:
                kind, n, stream_kind = "priority", _env_int(1, "PLEXNET_GPU_PRIORITY_NTHREADS"), "compute"
            else:
                kind, n, stream_kind = "compute", int(getattr(b, "compute_workers", 1) or 1), "compute"
        key = (dt, did, kind)
        ctx = Context(dt, did)
        with self._pool_lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = self._start_pool(key, f"{ctx}/{kind}", ctx, kind, max(1, n), stream_kind, True)
            self._remember(ctx, prop, pool)
            return pool


# -- process life cycle ------------------------------------------------------------------
_engines: weakref.WeakSet[_ThreadedBase] = weakref.WeakSet()


def _shutdown_all() -> None:
    """At interpreter exit: let pending work finish (bounded), then stop the workers."""
    timeout = float(os.environ.get("PLEXNET_ENGINE_SHUTDOWN_TIMEOUT", "60"))
    for e in list(_engines):
        try:
            e.shutdown(timeout)
        except Exception:
            pass


def _after_fork() -> None:
    for e in list(_engines):
        e._after_fork_in_child()


atexit.register(_shutdown_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
