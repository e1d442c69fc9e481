"""Worker pools of the threaded engines: ready queues and the threads serving them.

A pool holds ready operations (a deque for priority 0, the cheap path; a heap for other
priorities) and its workers. Workers park on a private lock when the queue is empty and
are woken only when one is parked *and* the new work is not about to be taken by the
worker that produced it (a chain of dependent operations stays on one worker without
thread hand-offs; see ``Scheduler._dispatch``).
"""
from __future__ import annotations

import heapq
import threading
import weakref
from collections import deque
from typing import Any

from ..context import HOST_DEVICE_TYPES, Context, RunContext
from .base import mark_engine_thread
from .blas import wait_for_core, worker_asleep, worker_awake
from .devices import device_hooks
from .runctx import run_context, stream_syncer
from .runner import Runner, report_escape, worker_stream
from .scheduler import lock_contended
from .var import _Op

__all__ = ["Pool", "Worker", "start_workers"]


class Worker:
    """One worker thread's state."""

    __slots__ = ("sem", "name", "thread", "rcs", "active", "cur")

    def __init__(self, name: str) -> None:
        self.name = name
        self.sem = threading.Lock()
        self.sem.acquire()          # held while running; a waker releases it
        self.thread: threading.Thread | None = None
        self.rcs: dict[tuple[str, int], RunContext] = {}   # shared pool: RunContext per device
        self.active: tuple[str, int] | None = None          # shared pool: device made current last
        self.cur: _Op | None = None     # the operation running now (named if exit times out)


class Pool:
    """Ready operations of one pool and the workers serving it."""

    __slots__ = ("q", "heap", "parked", "stop", "drop", "workers", "label", "ctx", "kind",
                 "stream_kind", "fixed_rc", "host", "__weakref__")

    def __init__(self, label: str, ctx: Context | None, kind: str, stream_kind: str | None,
                 fixed_rc: bool) -> None:
        self.q: deque[_Op] = deque()    # ready operations of priority 0, FIFO
        self.heap: list[tuple[int, int, _Op]] = []   # ready operations of other priorities
        self.parked: list[Worker] = []  # workers waiting for work
        self.stop = False
        self.drop = False               # exiting after Ctrl-C: workers run nothing more
        self.workers: list[Worker] = []
        self.label = label
        self.ctx = ctx
        self.kind = kind
        self.stream_kind = stream_kind  # None: no device stream (CPU)
        self.fixed_rc = fixed_rc        # one RunContext per worker (per-device pools)
        #: host workers: their number awake sets the BLAS thread count (blas.py)
        self.host = ctx is None or ctx.device_type in HOST_DEVICE_TYPES

    def wake(self) -> None:
        """Wake one parked worker (under the engine lock). A host worker counts as awake
        from here, not from when it gets the CPU back, so the BLAS thread count is set
        before the work it was woken for starts."""
        w = self.parked.pop()
        if self.host:
            worker_awake()
        w.sem.release()

    def __repr__(self) -> str:
        return f"<pool {self.label}: {len(self.workers)} workers, {len(self.q) + len(self.heap)} ready>"


def start_workers(eng: Runner, pool: Pool, n: int) -> list[BaseException]:
    """Start ``n`` workers for ``pool``; wait until each has set its device up and
    return the setup errors (none started when the list is not empty: stop the pool)."""
    started = []
    for i in range(n):
        w = Worker(f"{pool.label}/{i}")
        box: list[Any] = [None, threading.Event()]
        t = threading.Thread(target=_worker_main, args=(weakref.ref(eng), pool, w, box),
                             name=f"plexnet-engine {w.name}", daemon=True)
        w.thread = t
        pool.workers.append(w)
        t.start()
        started.append(box)
    for box in started:
        box[1].wait()
    return [b[0] for b in started if b[0] is not None]


def stop_workers(eng: Runner, pools: list[Pool], join: bool) -> None:
    """Tell ``pools``' workers to exit once their queues are empty; wait for them when
    ``join`` (busy workers of a timed-out shutdown are not joined)."""
    with eng._lock:
        for p in pools:
            p.stop = True
            while p.parked:
                p.wake()
    if join:
        me = threading.current_thread()
        for p in pools:
            for w in p.workers:
                if w.thread is not None and w.thread is not me:
                    w.thread.join(timeout=5.0)


def _worker_main(engine_ref: Any, pool: Pool, w: Worker, box: list[Any]) -> None:
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
    if pool.host:
        worker_awake()
    try:
        with mark_engine_thread():
            _loop(eng, pool, w, rc)
    finally:
        if pool.host:
            worker_asleep()


def _setup_worker(pool: Pool, w: Worker) -> RunContext:
    """The worker's RunContext: its device made current and its own stream."""
    ctx = pool.ctx
    assert ctx is not None
    stream = None
    if pool.stream_kind is not None:
        b = device_hooks(ctx)
        b.activate(ctx.device_id)
        stream = b.new_stream(ctx.device_id, pool.stream_kind)
    return run_context(ctx, w.name, stream)


def _shared_rc(w: Worker, ctx: Context) -> RunContext:
    """Shared pool: a worker's RunContext for ``ctx`` (stream made on first use)."""
    dev = (ctx.device_type, ctx.device_id)
    if ctx.device_type in HOST_DEVICE_TYPES:
        rc = w.rcs.get(dev)
        if rc is None:
            rc = w.rcs[dev] = run_context(ctx, w.name)
        return rc
    b = device_hooks(ctx)
    if w.active != dev:
        b.activate(ctx.device_id)
        w.active = dev
    rc = w.rcs.get(dev)
    if rc is None:
        rc = w.rcs[dev] = run_context(ctx, w.name, b.new_stream(ctx.device_id, "compute"))
    return rc


def _use_rc(rc: RunContext) -> None:
    sync = stream_syncer(rc)
    worker_stream.sync = (sync, rc.stream) if sync is not None else None


def _loop(eng: Runner, pool: Pool, w: Worker, rc: RunContext | None) -> None:
    q = pool.q
    heap = pool.heap
    popleft = q.popleft
    execute = eng._execute
    wname = w.name
    last_ctx = None
    if rc is not None:
        _use_rc(rc)
    op: _Op | None
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
        if pool.drop:
            return
        if not pool.fixed_rc and op.ctx is not last_ctx:
            try:
                rc = _shared_rc(w, op.ctx)
                _use_rc(rc)
            except BaseException as e:
                eng._fail(op, e, pool)
                op = None
                continue
            last_ctx = op.ctx
        w.cur = op
        try:
            execute(op, rc, wname, pool)  # type: ignore[arg-type]
        except BaseException as e:  # noqa: BLE001 - _execute does not raise; never let a worker die
            report_escape(f"worker {wname} running {op.name!r}", e)
        w.cur = op = None  # drop the closure now, outside the engine lock


def _pop_prio(eng: Runner, pool: Pool) -> _Op | None:
    lock = eng._lock
    if not lock.acquire(False):
        lock_contended(lock)
    try:
        heap = pool.heap
        if heap and (heap[0][0] < 0 or not pool.q):
            return heapq.heappop(heap)[2]
        if pool.q:
            return pool.q.popleft()
        return None
    finally:
        lock.release()


def _park(eng: Runner, pool: Pool, w: Worker) -> bool:
    """Sleep until woken; False when the pool is stopping."""
    lock = eng._lock
    if not lock.acquire(False):
        lock_contended(lock)
    try:
        if pool.q or pool.heap:
            return True
        if pool.stop:
            return False
        pool.parked.append(w)
    finally:
        lock.release()
    if pool.host:
        worker_asleep()
    w.sem.acquire()             # the waker counted this worker awake again
    if pool.host:
        wait_for_core()         # a split may hold the core this worker would take (blas.py)
    return True
