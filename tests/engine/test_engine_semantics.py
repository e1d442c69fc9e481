"""Guarantees of every engine: ordering, errors, deletion, waiting, priority, observers."""
from __future__ import annotations

import gc
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import plexnet.engine as engine_mod
import pytest
from plexnet.base import EngineError
from plexnet.context import Context, cpu
from plexnet.engine import EngineOpError, FnProperty, in_engine_thread


class Gate:
    """An operation body that blocks until ``open()`` (holds a variable busy)."""

    def __init__(self) -> None:
        self.ev = threading.Event()
        self.entered = threading.Event()

    def __call__(self, rctx: Any) -> None:
        self.entered.set()
        assert self.ev.wait(20), "gate never opened"

    def open(self) -> None:
        self.ev.set()


def failing(msg: str = "boom") -> Callable[[Any], None]:
    def explode(rctx: Any) -> None:
        raise ValueError(msg)
    return explode


# -- ordering -------------------------------------------------------------------------------
@pytest.mark.timeout(30)
def test_writes_run_in_push_order_and_reads_see_them(eng: Any) -> None:
    v = eng.new_var()
    out: list = []
    seen: list = []
    for i in range(200):
        eng.push_sync(lambda rc, i=i: out.append(i), cpu(), (), (v,))
        if i % 10 == 0:
            eng.push_sync(lambda rc, i=i: seen.append((i, out[-1])), cpu(), (v,), ())
    eng.wait_for_var(v)
    assert out == list(range(200))
    assert sorted(seen) == [(i, i) for i in range(0, 200, 10)]


def two_worker_engine(new_engine: Any, kind: str, monkeypatch: Any) -> Any:
    if kind == "ThreadedEngine":
        return new_engine(kind, num_workers=2)
    from plexnet.backends import get_backend
    monkeypatch.setattr(get_backend(cpu()), "compute_workers", 2)
    return new_engine(kind)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["ThreadedEngine", "ThreadedEnginePerDevice"])
def test_reads_run_concurrently(new_engine: Any, kind: str, monkeypatch: Any) -> None:
    """Two reads of one variable overlap (a barrier only two running reads can pass)."""
    e = two_worker_engine(new_engine, kind, monkeypatch)
    v = e.new_var()
    barrier = threading.Barrier(2, timeout=10)
    ok: list = []
    for _ in range(2):
        e.push_sync(lambda rc: ok.append(barrier.wait() is not None), cpu(), (v,), ())
    e.wait_for_all()
    assert ok == [True, True]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["ThreadedEngine", "ThreadedEnginePerDevice"])
def test_independent_ops_run_in_parallel(new_engine: Any, kind: str, monkeypatch: Any) -> None:
    """Independent operations use both workers (each waits for the other to start)."""
    e = two_worker_engine(new_engine, kind, monkeypatch)
    started = [threading.Event(), threading.Event()]
    ok: list = []

    def op(rc: Any, i: int) -> None:
        started[i].set()
        ok.append(started[1 - i].wait(10))
    for i in range(2):
        e.push_sync(lambda rc, i=i: op(rc, i), cpu(), (), (e.new_var(),))
    e.wait_for_all()
    assert ok == [True, True]


@pytest.mark.timeout(30)
def test_write_waits_for_reads_and_later_reads_wait_for_write(teng: Any) -> None:
    v = teng.new_var()
    g = Gate()
    log: list = []
    teng.push_sync(g, cpu(), (v,), ())
    teng.push_sync(lambda rc: log.append("w"), cpu(), (), (v,))
    teng.push_sync(lambda rc: log.append("r"), cpu(), (v,), ())
    assert g.entered.wait(10)
    time.sleep(0.05)
    assert log == []
    g.open()
    teng.wait_for_var(v)
    assert log == ["w", "r"]


@pytest.mark.timeout(30)
def test_dependency_lists_of_any_iterable(eng: Any) -> None:
    a, b = eng.new_var(), eng.new_var()
    out: list = []
    eng.push_sync(lambda rc: out.append(1), cpu(), (x for x in [a]), {b})
    eng.push_sync(lambda rc: out.append(2), cpu(), [a, a], [b])
    eng.push_async(lambda rc, done: (out.append(3), done()), cpu(), iter([b]), (v for v in [a, a]))
    eng.push_sync(lambda rc: out.append(4), cpu(), [], [a, b, a])
    eng.push_sync(lambda rc: out.append(5), cpu(), mutate_vars=[b])
    eng.wait_for_all()
    assert out == [1, 2, 3, 4, 5]


@pytest.mark.timeout(30)
def test_var_both_read_and_mutated_counts_as_mutated(eng: Any) -> None:
    v = eng.new_var()
    out: list = []
    for i in range(50):
        eng.push_sync(lambda rc, i=i: out.append(i), cpu(), (v, v), (v, v))
    eng.wait_for_all()
    assert out == list(range(50))


@pytest.mark.timeout(60)
def test_many_threads_push_concurrently(teng: Any) -> None:
    """Each thread's writes to its own variable and to a shared one keep its push order."""
    nthreads, n = 6, 1500
    shared = teng.new_var()
    shared_log: list = []
    own = [teng.new_var() for _ in range(nthreads)]
    counters = [0] * nthreads
    bad: list = []
    ro = teng.new_var()
    ro_val = [42]

    def own_op(rc: Any, t: int, k: int) -> None:
        if counters[t] != k:
            bad.append((t, k, counters[t]))
        counters[t] = k + 1

    def pusher(t: int) -> None:
        for k in range(n):
            teng.push_sync(lambda rc, k=k: own_op(rc, t, k), cpu(t % 2), (ro,), (own[t],))
            if k % 3 == 0:
                teng.push_sync(lambda rc, k=k: shared_log.append((t, k)), cpu(), (own[t],), (shared,),
                               priority=k % 4)
            if k % 7 == 0:
                teng.push_sync(lambda rc: bad.append("ro") if ro_val != [42] else None, cpu(), (ro, own[t]), ())
    threads = [threading.Thread(target=pusher, args=(t,)) for t in range(nthreads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    teng.wait_for_all()
    assert not bad
    assert counters == [n] * nthreads
    for t in range(nthreads):
        mine = [k for tt, k in shared_log if tt == t]
        assert mine == list(range(0, n, 3))


@pytest.mark.timeout(30)
def test_push_from_inside_an_engine_function(teng: Any) -> None:
    v, w = teng.new_var(), teng.new_var()
    out: list = []

    def outer(rc: Any) -> None:
        teng.push_sync(lambda rc: out.append("inner"), cpu(), (v,), (w,))
        out.append("outer")
    teng.push_sync(outer, cpu(), (), (v,))
    teng.wait_for_all()
    assert out == ["outer", "inner"]


# -- pre-built operators ----------------------------------------------------------------------
@pytest.mark.timeout(30)
def test_new_operator_push_delete_operator(eng: Any) -> None:
    a, b = eng.new_var(), eng.new_var()
    out: list = []

    def fn(rc: Any, done: Callable) -> None:
        out.append(len(out))
        done()
    op = eng.new_operator(fn, [a], [b, b], name="acc")
    assert op.mutate_vars == (b,) and op.const_vars == (a,)
    for _ in range(100):
        eng.push(op, cpu())
    eng.wait_for_all()
    eng.delete_operator(op)
    assert out == list(range(100))
    with pytest.raises(EngineError):
        eng.push(op, cpu())


# -- asynchronous functions -------------------------------------------------------------------
@pytest.mark.timeout(30)
def test_async_op_runs_until_on_complete_from_another_thread(eng: Any) -> None:
    v = eng.new_var()
    log: list = []

    def afn(rc: Any, done: Callable) -> None:
        def later() -> None:
            log.append("async body")
            done()
        threading.Timer(0.05, later).start()
    eng.push_async(afn, cpu(), (), (v,), name="timer")
    eng.push_sync(lambda rc: log.append("after"), cpu(), (v,), ())
    eng.wait_for_all()
    assert log == ["async body", "after"]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("prop", [FnProperty.NORMAL, FnProperty.ASYNC])
def test_async_on_complete_with_exception(eng: Any, prop: FnProperty) -> None:
    v, w = eng.new_var(), eng.new_var()
    ran: list = []

    def afn(rc: Any, done: Callable) -> None:
        try:
            raise KeyError("async failure")
        except KeyError as e:
            threading.Thread(target=done, args=(e,)).start()
    eng.push_async(afn, cpu(), (), (v,), prop, name="async-op")
    eng.push_sync(lambda rc: ran.append(1), cpu(), (v,), (w,), name="dependent")
    with pytest.raises(EngineOpError) as ei:
        eng.wait_for_var(w)
    assert ei.value.op_name == "async-op"
    assert isinstance(ei.value.__cause__, KeyError)
    assert ran == []
    eng.wait_for_all()          # already raised through w: nothing left to raise


@pytest.mark.timeout(30)
def test_async_fn_raising_before_completion(eng: Any) -> None:
    v = eng.new_var()

    def afn(rc: Any, done: Callable) -> None:
        raise RuntimeError("early")
    eng.push_async(afn, cpu(), (), (v,), name="early")
    with pytest.raises(EngineOpError, match="early"):
        eng.wait_for_var(v)


# -- errors -----------------------------------------------------------------------------------
@pytest.mark.timeout(30)
def test_error_stored_propagated_and_kept_until_rewritten(eng: Any) -> None:
    a, b, c = eng.new_var(), eng.new_var(), eng.new_var()
    ran: list = []
    eng.push_sync(failing("bad value"), cpu(), (), (a,), name="producer")
    eng.push_sync(lambda rc: ran.append("b"), cpu(), (a,), (b,), name="consumer")
    eng.push_sync(lambda rc: ran.append("c"), cpu(), (b,), (c,), name="consumer2")
    with pytest.raises(EngineOpError) as ei:
        eng.wait_for_var(c)
    err = ei.value
    assert err.op_name == "producer" and "bad value" in str(err)
    assert isinstance(err.__cause__, ValueError)
    tb = "".join(traceback.format_exception(err.__cause__))
    assert "explode" in tb                       # the original traceback is kept
    assert ran == []                             # dependents were skipped
    for v in (c, a, b, c):                       # poisoned: every read raises the original
        with pytest.raises(EngineOpError) as ei:
            eng.wait_for_var(v)
        assert ei.value is err
    eng.wait_for_all()                           # raised at a read: nothing unreported left
    # still poisoned: a reader pushed after the report is skipped too
    eng.push_sync(lambda rc: ran.append("again"), cpu(), (a,), (b,))
    with pytest.raises(EngineOpError):
        eng.wait_for_var(b)
    assert ran == []
    # a successful pure write cures the variable; readers run again
    eng.push_sync(lambda rc: ran.append("rewrite"), cpu(), (), (a,))
    eng.push_sync(lambda rc: ran.append("again"), cpu(), (a,), (b,))
    eng.wait_for_var(b)
    eng.wait_for_var(a)
    assert ran == ["rewrite", "again"]


@pytest.mark.timeout(30)
def test_wait_for_all_raises_first_error_once(eng: Any) -> None:
    a, b = eng.new_var(), eng.new_var()
    eng.push_sync(failing("first"), cpu(), (), (a,), name="f1")
    eng.push_sync(lambda rc: None, cpu(), (a,), (b,), name="dep")    # serialised after f1
    eng.push_sync(failing("second"), cpu(), (), (b,), name="f2", prop=FnProperty.NO_SKIP)
    with pytest.raises(EngineOpError) as ei:
        eng.wait_for_all()
    assert ei.value.op_name == "f1"
    eng.wait_for_all()                           # the rest were marked reported
    with pytest.raises(EngineOpError, match="second"):
        eng.wait_for_var(b)                      # but b stays poisoned by f2
    out: list = []
    eng.push_sync(lambda rc: out.append(1), cpu(), (a, b), ())
    eng.wait_for_all()
    assert out == []                             # its inputs are poisoned: not run


@pytest.mark.timeout(30)
def test_no_skip_and_delete_ops_run_despite_errors(eng: Any) -> None:
    a = eng.new_var()
    ran: list = []
    eng.push_sync(failing(), cpu(), (), (a,), name="fails")
    eng.push_sync(lambda rc: ran.append("noskip"), cpu(), (a,), (), prop=FnProperty.NO_SKIP)
    eng.push_sync(lambda rc: ran.append("skipped"), cpu(), (a,), ())
    eng.push_delete(lambda rc: ran.append("deleted"), cpu(), a)
    with pytest.raises(EngineOpError):
        eng.wait_for_all()
    assert ran == ["noskip", "deleted"]


@pytest.mark.timeout(30)
def test_successful_no_skip_write_clears_var_error_like_naive(eng: Any) -> None:
    a = eng.new_var()
    eng.push_sync(failing(), cpu(), (), (a,), name="fails")
    eng.push_sync(lambda rc: None, cpu(), (a,), (a,), prop=FnProperty.NO_SKIP)
    eng.wait_for_var(a)                          # the var's error was overwritten
    with pytest.raises(EngineOpError):
        eng.wait_for_all()                       # but it is still unreported globally


@pytest.mark.timeout(30)
def test_engine_op_error_passed_through_on_complete(eng: Any) -> None:
    a = eng.new_var()
    inner = EngineOpError("inner-op", ZeroDivisionError("x"))

    def afn(rc: Any, done: Callable) -> None:
        done(inner)
    eng.push_async(afn, cpu(), (), (a,), name="outer")
    with pytest.raises(EngineOpError) as ei:
        eng.wait_for_var(a)
    assert ei.value is inner


# -- deletion ---------------------------------------------------------------------------------
@pytest.mark.timeout(30)
def test_deferred_delete_runs_after_pending_ops(eng: Any) -> None:
    v = eng.new_var()
    log: list = []
    if eng.kind == "NaiveEngine":
        for i in range(3):
            eng.push_sync(lambda rc, i=i: log.append(i), cpu(), (v,), ())
        eng.push_delete(lambda rc: log.append("del"), cpu(), v)
        assert log == [0, 1, 2, "del"]
    else:
        g = Gate()
        eng.push_sync(g, cpu(), (), (v,))
        for i in range(3):
            eng.push_sync(lambda rc, i=i: log.append(i), cpu(), (v,), ())
        eng.push_delete(lambda rc: log.append("del"), cpu(), v)
        time.sleep(0.05)
        assert log == []                         # not yet: ops still pending
        with pytest.raises(EngineError):
            eng.push_sync(lambda rc: log.append("bad"), cpu(), (v,), ())
        g.open()
        eng.wait_for_all()
        assert sorted(log[:3]) == [0, 1, 2] and log[3] == "del"
    with pytest.raises(EngineError):
        eng.push_sync(lambda rc: None, cpu(), (), (v,))
    with pytest.raises(EngineError):
        eng.push_delete(None, cpu(), v)
    eng.wait_for_var(v)                          # a dead variable does not block


@pytest.mark.timeout(30)
def test_delete_of_idle_var_runs_inline(teng: Any) -> None:
    v = teng.new_var()
    teng.push_sync(lambda rc: None, cpu(), (), (v,))
    teng.wait_for_var(v)
    where: list = []
    teng.push_delete(lambda rc: where.append((threading.get_ident(), in_engine_thread())), cpu(), v)
    assert where == [(threading.get_ident(), True)]      # ran before push_delete returned
    w = teng.new_var()
    teng.push_delete(None, cpu(), w)                     # fn may be None
    with pytest.raises(EngineError):
        teng.push_sync(lambda rc: None, cpu(), (w,), ())


@pytest.mark.timeout(30)
def test_delete_called_under_the_engine_lock_is_deferred(teng: Any) -> None:
    """A finalizer run by the garbage collector inside the engine's bookkeeping calls
    push_delete with the engine lock held: the delete goes to a worker, not inline."""
    v = teng.new_var()
    where: list = []
    with teng._lock:
        teng.push_delete(lambda rc: where.append(threading.get_ident()), cpu(), v)
        assert where == []
    teng.wait_for_all()
    assert where and where[0] != threading.get_ident()
    with pytest.raises(EngineError):
        teng.push_sync(lambda rc: None, cpu(), (v,), ())


@pytest.mark.timeout(30)
def test_failed_push_on_deleted_var_leaves_no_trace(teng: Any) -> None:
    a, b, dead = teng.new_var(), teng.new_var(), teng.new_var()
    teng.push_delete(None, cpu(), dead)
    g = Gate()
    teng.push_sync(g, cpu(), (), (b,))           # b busy: the bad push would queue on b
    with pytest.raises(EngineError):
        teng.push_sync(lambda rc: None, cpu(), (a, b), (dead,))
    with pytest.raises(EngineError):
        teng.push_sync(lambda rc: None, cpu(), (a, dead), (b,))
    g.open()
    out: list = []
    teng.push_sync(lambda rc: out.append(1), cpu(), (), (a,))
    teng.push_sync(lambda rc: out.append(2), cpu(), (), (b,))
    teng.wait_for_all()
    assert sorted(out) == [1, 2]


@pytest.mark.timeout(30)
def test_delete_fn_error_is_reported(eng: Any) -> None:
    v = eng.new_var()
    eng.push_delete(failing("free failed"), cpu(), v)
    with pytest.raises(EngineOpError, match="free failed") as ei:
        eng.wait_for_all()
    assert ei.value.op_name == "delete_var"


@pytest.mark.timeout(60)
def test_delete_from_finalizers_does_not_deadlock(teng: Any) -> None:
    """NDArray-like owners free their variable from ``__del__``, also when the cyclic
    garbage collector runs them in the middle of the engine's own bookkeeping."""
    freed: list = []

    class Owner:
        def __init__(self) -> None:
            self.var = teng.new_var()
            self.me = self                      # a cycle: only the collector frees it

        def __del__(self) -> None:
            teng.push_delete(lambda rc: freed.append(1), cpu(), self.var)

    old = gc.get_threshold()
    gc.set_threshold(50, 5, 5)
    try:
        keep = teng.new_var()
        n = 0
        for i in range(3000):
            o = Owner()
            teng.push_sync(lambda rc, o=o: None, cpu(), (keep,), (o.var,))
            if i % 100 == 0:
                teng.push_sync(lambda rc: gc.collect(0), cpu(), (), (keep,))
            n += 1
            del o
        gc.collect()
        teng.wait_for_all()
    finally:
        gc.set_threshold(*old)
    gc.collect()
    teng.wait_for_all()
    assert len(freed) == n


# -- waiting ----------------------------------------------------------------------------------
@pytest.mark.timeout(30)
def test_wait_for_var_waits_for_reads_too(teng: Any) -> None:
    v = teng.new_var()
    g = Gate()
    teng.push_sync(g, cpu(), (v,), ())
    assert g.entered.wait(10)
    threading.Timer(0.1, g.open).start()
    t = time.perf_counter()
    teng.wait_for_var(v)
    assert g.ev.is_set() and time.perf_counter() - t > 0.05


@pytest.mark.timeout(30)
def test_wait_for_var_reports_error_of_ops_pushed_before_it(teng: Any) -> None:
    """A write pushed after the wait (and succeeding) must not hide the error of the
    operation the wait was waiting for."""
    v = teng.new_var()
    g = Gate()
    teng.push_sync(g, cpu(), (), (v,))
    teng.push_sync(failing("earlier"), cpu(), (), (v,), name="earlier")
    got: list = []

    def waiter() -> None:
        try:
            teng.wait_for_var(v)
            got.append(None)
        except EngineOpError as e:
            got.append(e)
    t = threading.Thread(target=waiter)
    t.start()
    deadline = time.time() + 10
    while len(v.queue or ()) < 2 and time.time() < deadline:   # the waiter is queued
        time.sleep(0.001)
    teng.push_sync(lambda rc: None, cpu(), (), (v,), prop=FnProperty.NO_SKIP, name="later")
    g.open()
    t.join(10)
    assert len(got) == 1 and isinstance(got[0], EngineOpError) and got[0].op_name == "earlier"
    teng.wait_for_all()                          # reported through the wait already


@pytest.mark.timeout(30)
def test_wait_inside_engine_fn_raises_engine_error(eng: Any) -> None:
    v, w = eng.new_var(), eng.new_var()
    caught: list = []

    def fn(rc: Any) -> None:
        for call in (lambda: eng.wait_for_var(v), eng.wait_for_all):
            try:
                call()
            except EngineError as e:
                caught.append(type(e))
        eng.wait_for_var(v)                      # uncaught: becomes the op's error
    eng.push_sync(fn, cpu(), (), (w,), name="waits")
    with pytest.raises(EngineOpError) as ei:
        eng.wait_for_all()
    assert caught == [EngineError, EngineError]
    assert isinstance(ei.value.__cause__, EngineError)


@pytest.mark.timeout(30)
def test_waits_on_idle_engine_return(eng: Any) -> None:
    eng.wait_for_all()
    eng.wait_for_var(eng.new_var())
    eng.wait_for_all()


@pytest.mark.timeout(30)
def test_wait_for_var_on_var_being_deleted(teng: Any) -> None:
    v = teng.new_var()
    g = Gate()
    teng.push_sync(g, cpu(), (), (v,))
    freed: list = []
    teng.push_delete(lambda rc: freed.append(1), cpu(), v)
    threading.Timer(0.05, g.open).start()
    teng.wait_for_var(v)
    assert freed == [1]


# -- priority ---------------------------------------------------------------------------------
@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["ThreadedEngine", "ThreadedEnginePerDevice"])
def test_priority_orders_ready_ops(new_engine: Any, kind: str, monkeypatch: Any) -> None:
    if kind == "ThreadedEngine":
        e = new_engine(kind, num_workers=1)
    else:
        from plexnet.backends import get_backend
        monkeypatch.setattr(get_backend(cpu()), "compute_workers", 1)
        e = new_engine(kind)
    g = Gate()
    e.push_sync(g, cpu(), (), (e.new_var(),))    # occupies the only worker
    assert g.entered.wait(10)
    order: list = []
    pris = [0, 5, -2, 5, 1, 0, -2, 9, 0]
    for i, p in enumerate(pris):
        e.push_sync(lambda rc, i=i: order.append(i), cpu(), (), (e.new_var(),), priority=p)
    g.open()
    e.wait_for_all()
    expect = sorted(range(len(pris)), key=lambda i: (-pris[i], i))
    assert order == expect


# -- observers --------------------------------------------------------------------------------
class Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started: list = []
        self.ended: list = []

    def on_start(self, name: str, ctx: Any, worker: str) -> Any:
        with self.lock:
            self.started.append((name, ctx, worker))
            return len(self.started) - 1

    def on_end(self, tok: Any) -> None:
        with self.lock:
            self.ended.append(tok)


@pytest.mark.timeout(30)
def test_observers_called_around_each_op(eng: Any) -> None:
    rec = Recorder()
    eng.set_observers([rec])
    v = eng.new_var()
    eng.push_sync(lambda rc: None, cpu(), (), (v,), name="s1")

    def afn(rc: Any, done: Callable) -> None:
        threading.Timer(0.01, done).start()
    eng.push_async(afn, cpu(), (), (v,), name="a1")
    eng.push_sync(lambda rc: None, cpu(1), (v,), ())
    eng.wait_for_all()
    names = [s[0] for s in rec.started]
    assert names[:2] == ["s1", "a1"] and len(names) == 3
    assert "<lambda>" in names[2]               # unnamed: the function's name
    assert sorted(rec.ended) == [0, 1, 2]
    assert rec.started[2][1] == cpu(1)
    assert all(isinstance(s[2], str) and s[2] for s in rec.started)
    eng.set_observers([])
    eng.push_sync(lambda rc: None, cpu(), (), (v,))
    eng.wait_for_all()
    assert len(rec.started) == 3


# -- run contexts, pools, devices -------------------------------------------------------------
@pytest.mark.timeout(30)
def test_run_context(eng: Any) -> None:
    got: list = []
    eng.push_sync(lambda rc: got.append(rc), cpu(1), (), (eng.new_var(),))
    eng.wait_for_all()
    rc = got[0]
    assert rc.ctx == cpu(1) and rc.stream is None and rc.xp.__name__ == "numpy" and rc.worker


class FakeDevice:
    """A GPU-like backend: streams per worker, activation per thread."""

    device_type = "fakegpu"
    compute_workers = 2
    copy_workers = 1
    unavailable_reason = None

    def __init__(self) -> None:
        import numpy as np
        self.xp = np
        self.lock = threading.Lock()
        self.streams: list = []
        self.active: dict = {}

    def is_available(self) -> bool:
        return True

    def activate(self, device_id: int) -> None:
        self.active[threading.get_ident()] = device_id

    def new_stream(self, device_id: int, kind: str = "compute") -> Any:
        with self.lock:
            s = (kind, device_id, len(self.streams))
            self.streams.append(s)
            return s


@pytest.fixture
def fake_device() -> Any:
    from plexnet import backends
    dev = FakeDevice()
    backends._resolved["fakegpu"] = dev
    try:
        yield dev
    finally:
        backends._resolved.pop("fakegpu", None)


@pytest.mark.timeout(30)
def test_per_device_pools_streams_and_copy_workers(new_engine: Any, fake_device: FakeDevice) -> None:
    e = new_engine("ThreadedEnginePerDevice")
    ctx = Context("fakegpu", 1)
    seen: list = []
    lock = threading.Lock()

    def rec(rc: Any) -> None:
        with lock:
            seen.append((rc.stream, rc.worker, fake_device.active.get(threading.get_ident())))
        time.sleep(0.002)
    vs = [e.new_var() for _ in range(40)]
    for v in vs:
        e.push_sync(rec, ctx, (), (v,))
    e.push_sync(rec, ctx, (), (e.new_var(),), FnProperty.COPY_TO_GPU)
    e.push_sync(rec, ctx, (), (e.new_var(),), FnProperty.COPY_FROM_GPU)
    e.wait_for_all()
    compute = {s for s, w, a in seen if s[0] == "compute"}
    copy = {s for s, w, a in seen if s[0] == "copy"}
    assert len(compute) <= 2 and len(copy) == 1
    assert all(a == 1 for s, w, a in seen)             # every worker activated device 1
    assert all(s[1] == 1 for s, w, a in seen)
    assert any("copy" in w for s, w, a in seen)
    # one stream per worker, made once
    assert len(fake_device.streams) == 3


@pytest.mark.timeout(30)
def test_shared_pool_activates_devices(new_engine: Any, fake_device: FakeDevice) -> None:
    e = new_engine("ThreadedEngine", num_workers=1)
    seen: list = []
    for dev in (0, 1, 0):
        e.push_sync(lambda rc, dev=dev: seen.append((dev, rc.stream, fake_device.active[threading.get_ident()])),
                    Context("fakegpu", dev), (), (e.new_var(),))
        e.wait_for_all()
    assert [s[2] for s in seen] == [0, 1, 0]
    assert seen[0][1] == seen[2][1] != seen[1][1]


@pytest.mark.timeout(30)
def test_unknown_device_raises_at_push(teng: Any) -> None:
    from plexnet.backends import DeviceUnavailable
    with pytest.raises(DeviceUnavailable):
        teng.push_sync(lambda rc: None, Context("nosuchdevice", 0), (), (teng.new_var(),))
    teng.wait_for_all()


# -- life cycle -------------------------------------------------------------------------------
@pytest.mark.timeout(30)
def test_shutdown_then_reuse(teng: Any) -> None:
    v = teng.new_var()
    out: list = []
    teng.push_sync(lambda rc: out.append(1), cpu(), (), (v,))
    teng.shutdown()
    assert out == [1]
    teng.push_sync(lambda rc: out.append(2), cpu(), (), (v,))
    teng.wait_for_all()
    assert out == [1, 2]


@pytest.mark.timeout(30)
def test_shutdown_stops_workers(new_engine: Any) -> None:
    e = new_engine("ThreadedEnginePerDevice")
    e.push_sync(lambda rc: None, cpu(), (), (e.new_var(),))
    e.wait_for_all()
    threads = [w.thread for p in e._pools.values() for w in p.workers]
    assert threads and all(t.is_alive() for t in threads)
    e.shutdown()
    for t in threads:
        t.join(5)
    assert not any(t.is_alive() for t in threads)


@pytest.mark.timeout(60)
def test_engine_in_forked_child(teng: Any) -> None:
    import multiprocessing as mp
    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork")
    teng.push_sync(lambda rc: None, cpu(), (), (teng.new_var(),))
    teng.wait_for_all()

    def child(q: Any) -> None:
        out: list = []
        v = teng.new_var()
        for i in range(10):
            teng.push_sync(lambda rc, i=i: out.append(i), cpu(), (), (v,))
        teng.wait_for_all()
        q.put(out)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    assert q.get(timeout=30) == list(range(10))
    p.join(30)
    assert p.exitcode == 0


@pytest.mark.timeout(30)
def test_process_wide_engine_selection(monkeypatch: Any) -> None:
    for kind in engine_mod.ENGINE_TYPES:
        monkeypatch.setenv("PLEXNET_ENGINE_TYPE", kind)
        e = engine_mod.create()
        assert e.kind == kind
        e.shutdown()
    monkeypatch.delenv("PLEXNET_ENGINE_TYPE")
    monkeypatch.delenv("MXNET_ENGINE_TYPE", raising=False)
    e = engine_mod.create()
    assert e.kind == "ThreadedEnginePerDevice"
    e.shutdown()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["ThreadedEngine", "ThreadedEnginePerDevice"])
def test_exit_runs_pending_work_and_does_not_hang(kind: str) -> None:
    import subprocess
    import sys
    code = (
        "import time, sys\n"
        "from plexnet import engine\n"
        "from plexnet.context import cpu\n"
        "e = engine.get()\n"
        "v = e.new_var()\n"
        "e.push_sync(lambda rc: time.sleep(0.2), cpu(), (), (v,))\n"
        "e.push_sync(lambda rc: print('done', flush=True), cpu(), (v,), ())\n"
        "w = engine.create('ThreadedEngine')\n"           # a second, idle engine
        "w.push_sync(lambda rc: None, cpu(), (), (w.new_var(),))\n"
    )
    env = dict(__import__("os").environ, PLEXNET_ENGINE_TYPE=kind)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"


# -- FnProperty.INLINE (plexnet addition) -------------------------------------------------------
@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["ThreadedEngine", "ThreadedEnginePerDevice"])
def test_inline_runs_on_pusher_when_ready_and_queues_otherwise(kind):
    import threading as _th
    from plexnet import cpu, engine as _eng
    from plexnet.engine import EngineOpError, FnProperty
    e = _eng.create(kind)
    try:
        v = e.new_var()
        seen = []
        e.push_sync(lambda rc: seen.append(_th.get_ident()), cpu(), (), (v,), FnProperty.INLINE)
        assert seen == [_th.get_ident()]  # ran at once, on this thread
        gate = _th.Event()
        e.push_sync(lambda rc: gate.wait(5), cpu(), (), (v,))
        e.push_sync(lambda rc: seen.append(_th.get_ident()), cpu(), (), (v,), FnProperty.INLINE)
        assert len(seen) == 1  # v busy: queued behind the blocked op, not run inline
        gate.set()
        e.wait_for_var(v)
        assert len(seen) == 2 and seen[1] != _th.get_ident()

        def boom(rc):
            raise ValueError("inline boom")
        w = e.new_var()
        e.push_sync(boom, cpu(), (), (w,), FnProperty.INLINE, name="boomop")  # must not raise here
        ran = []
        e.push_sync(lambda rc: ran.append(1), cpu(), (w,), (e.new_var(),), FnProperty.INLINE)
        assert ran == []  # dependant skipped
        with pytest.raises(EngineOpError, match="boomop.*inline boom"):
            e.wait_for_var(w)
    finally:
        e.shutdown()
