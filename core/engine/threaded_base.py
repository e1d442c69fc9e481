"""What both threaded engines share: the push API, pool bookkeeping and shutdown.

Subclasses decide the pool layout (``_make_pool``): ``ThreadedEngine`` (``pooled.py``)
one pool for everything, ``ThreadedEnginePerDevice`` (``per_device.py``) pools per
device and kind of work.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from ..base import EngineError
from ..context import Context
from .base import (AsyncFn, Engine, FnProperty, Opr, SyncFn, Var, VarLists, _tls, check_not_in_engine,
                   prefixed_name, split_vars)
from .lifecycle import track
from .runner import Runner
from .scheduler import MAX_PENDING, _op_name
from .var import ThreadedVar, _Op
from .workers import Pool, start_workers, stop_workers

__all__ = ["ThreadedBase"]

#: backpressure holds only the main thread (the script's loop that runs ahead): a helper
#: thread (a kvstore receiver completing a pull, a data loader) may push what the pending
#: operations wait for, and holding it would stall them until the wait runs out
_MAIN = threading.main_thread()

_NORMAL = FnProperty.NORMAL
_NPROPS = len(FnProperty)
_SEQ = (tuple, list)
_LOOKUP_MISS = (KeyError, AttributeError, TypeError, IndexError)


def _norm(c: Sequence[Var], m: Sequence[Var]) -> VarLists:
    """``split_vars`` with the common small cases done without building dicts."""
    if c.__class__ not in _SEQ or m.__class__ not in _SEQ:
        return split_vars(tuple(c), tuple(m))       # sets, generators, ...
    if not c:
        if len(m) < 2 or (len(m) == 2 and m[0] is not m[1]):
            return (), tuple(m), ()
    elif len(m) == 1:
        x = m[0]
        if len(c) == 1:
            if c[0] is x:                          # a += 1: read and written
                t = tuple(m)
                return (), t, t
            return tuple(c), tuple(m), ()
        if len(c) == 2:
            a, b = c
            if a is not b and a is not x and b is not x:
                return tuple(c), tuple(m), ()
        elif len(c) == 3:                          # data, weight, bias -> out
            a, b, d = c
            if a is not b and a is not d and b is not d and a is not x and b is not x and d is not x:
                return tuple(c), tuple(m), ()
    elif not m and len(c) == 1:
        return tuple(c), (), ()
    return split_vars(c, m)


class ThreadedBase(Runner, Engine):
    """The scheduling machinery shared by both threaded engines."""

    def __init__(self) -> None:
        super().__init__()
        self._pool_lock = threading.RLock()
        self._pools: dict[Any, Pool] = {}
        #: device_type -> device_id -> [pool per FnProperty]; read without a lock
        self._fast: dict[str, dict[int, list[Pool | None]]] = {}
        track(self)

    # -- pools (subclasses decide the layout) ------------------------------------------
    def _pool_of(self, ctx: Context, prop: int) -> Pool:
        try:
            p = self._fast[ctx.device_type][ctx.device_id][prop]
            if p is not None:
                return p
        except _LOOKUP_MISS:
            pass
        return self._make_pool(ctx, prop)

    def _make_pool(self, ctx: Context, prop: int) -> Pool:
        raise NotImplementedError

    def _remember(self, ctx: Context, prop: int, pool: Pool) -> None:
        row = self._fast.setdefault(ctx.device_type, {}).setdefault(ctx.device_id, [None] * _NPROPS)
        row[int(prop)] = pool

    def _start_pool(self, key: Any, label: str, ctx: Context | None, kind: str, n: int,
                    stream_kind: str | None, fixed_rc: bool) -> Pool:
        """Create a pool and its ``n`` workers; device setup errors are raised here."""
        pool = Pool(label, ctx, kind, stream_kind, fixed_rc)
        errs = start_workers(self, pool, n)
        if errs:
            stop_workers(self, [pool], False)
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
            c, m, rw = _norm(const_vars, mutate_vars)
            self._push(fn, ctx, c, m, rw, prop, priority, name or "op", False)
        else:
            self._push(fn, ctx, (), mutate_vars, (), prop, priority, name or "op", False)

    def push_sync(self, fn: SyncFn, ctx: Context, const_vars: Sequence[Var] = (),
                  mutate_vars: Sequence[Var] = (), prop: FnProperty = _NORMAL,
                  priority: int = 0, name: str | None = None) -> None:
        if const_vars or mutate_vars.__class__ is not tuple or len(mutate_vars) != 1:
            c, m, rw = _norm(const_vars, mutate_vars)
            self._push(fn, ctx, c, m, rw, prop, priority, name, True)
        else:
            self._push(fn, ctx, (), mutate_vars, (), prop, priority, name, True)

    def push(self, opr: Opr, ctx: Context, priority: int = 0) -> None:
        if opr.deleted:
            raise EngineError(f"operation {opr.name!r} was deleted")
        self._push(opr.fn, ctx, opr.const_vars, opr.mutate_vars, opr.rw_vars, opr.prop, priority, opr.name,
                   False)

    def _push(self, fn: Any, ctx: Context, c: Sequence[Var], m: Sequence[Var], rw: Sequence[Var],
              prop: Any, pri: int, name: str | None, sync: bool) -> None:
        """Build the operation record (dependency lists normalised) and submit it."""
        try:
            pool = self._fast[ctx.device_type][ctx.device_id][prop]
            if pool is None:
                pool = self._make_pool(ctx, prop)
        except _LOOKUP_MISS:
            pool = self._pool_of(ctx, int(prop))
        if getattr(_tls, "prefix", None) is not None:      # inside an op_name_prefix block
            name = prefixed_name(name, fn)
        op = _Op(fn, c, m, rw, prop, pri, name, pool, ctx, sync)  # type: ignore[arg-type]
        if not sync:
            op.eng = self
            op.done = False
            op.tok = None
            op.runner = None
        if self._submit(op):
            self._run_here(op, ctx)
        elif (MAX_PENDING and self._pending > MAX_PENDING and threading.current_thread() is _MAIN
              and not getattr(_tls, "depth", 0)):
            self._throttle()

    # -- life cycle --------------------------------------------------------------------
    def shutdown(self, timeout: float | None = None) -> None:
        """Wait for pending operations (errors stay stored), then stop every worker.

        The engine stays usable: the next push starts fresh pools."""
        self._stop(timeout)

    def _stop(self, timeout: float | None) -> list[str]:
        """``shutdown``; returns what did not finish within ``timeout`` seconds."""
        check_not_in_engine("shutdown")
        idle = self._wait_idle(timeout)
        dropped = [] if idle else self._unfinished()
        with self._pool_lock:
            pools = list(self._pools.values())
            self._pools.clear()
            self._fast = {}
            self._reset_pools()
        stop_workers(self, pools, join=idle)      # busy workers (timed out) are not joined
        return dropped

    def _work_clock(self) -> float:
        # the workers' CPU clocks (parked ones do not advance; read without the pool lock:
        # a stale answer only moves the next check by THROTTLE_S)
        total = 0.0
        for p in list(self._pools.values()):
            for w in p.workers:
                t = w.thread
                if t is not None and t.ident is not None:
                    try:
                        total += time.clock_gettime(time.pthread_getcpuclockid(t.ident))
                    except (AttributeError, OSError):   # no per-thread clocks here
                        pass
        return total

    def _interrupt(self, grace: float) -> int:
        """Exit after Ctrl-C (``lifecycle``): drop every ready operation, stop the workers
        once their current operation returns (waiting for those at most ``grace`` s, so that
        no worker is inside a compiled library while the interpreter finalises), and return
        how many pending operations were dropped."""
        with self._lock:
            pools = list(self._pools.values())
            dropped = self._pending
            for p in pools:
                p.drop = True       # operations made ready from now on are not run either
                p.q.clear()
                p.heap.clear()
        stop_workers(self, pools, join=False)
        deadline = time.monotonic() + grace
        while any(w.cur is not None for p in pools for w in p.workers) and time.monotonic() < deadline:
            time.sleep(0.005)
        return dropped

    def _unfinished(self) -> list[str]:
        with self._lock:
            pools = list(self._pools.values())
            running = [f"{_op_name(w.cur)} (running on {w.name})" for p in pools for w in p.workers
                       if w.cur is not None]
            ready = [_op_name(op) for p in pools for op in list(p.q) + [h[2] for h in p.heap]]
            rest = self._pending - len(running) - len(ready)
        return running + ready + ([f"{rest} more waiting for their inputs"] if rest > 0 else [])

    def _reset_pools(self) -> None:
        pass

    def _after_fork_in_child(self) -> None:
        """Worker threads do not survive ``fork``: start over with fresh locks and pools.
        Operations pending in the parent are not run in the child."""
        self._reset_state()
        self._pool_lock = threading.RLock()
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
