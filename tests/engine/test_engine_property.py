"""Randomised programs on every engine must give exactly what a serial replay gives.

A program is a list of steps over ``NV`` integer variables: synchronous and asynchronous
operations (some completed from a helper thread or a ``threading.Timer``), pre-built
operators pushed many times, ``wait_for_var`` checkpoints, ``push_delete`` of variables
near the end and pushes that wrongly use a deleted variable (they must raise
``EngineError`` and leave no trace). Every operation records the values it saw, so a
read that ran before the write it depends on (or after a later one) is caught even when
the final state happens to agree.
"""
from __future__ import annotations

import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plexnet.base import EngineError
from plexnet.context import cpu
from plexnet.engine import FnProperty

M = (1 << 61) - 1
CTXS = (cpu(0), cpu(1))
SYNC_PROPS = (FnProperty.NORMAL,) * 8 + (FnProperty.CPU_PRIORITIZED, FnProperty.COPY_TO_GPU,
                                        FnProperty.COPY_FROM_GPU, FnProperty.NO_SKIP,
                                        FnProperty.INLINE, FnProperty.INLINE)
ASYNC_PROPS = (FnProperty.NORMAL,) * 4 + (FnProperty.ASYNC, FnProperty.CPU_PRIORITIZED)
PRIORITIES = (0,) * 12 + (-3, -1, 1, 2, 7)


@dataclass
class Step:
    kind: str                       # sync | async | opr | wait | delete | bad
    reads: tuple = ()
    writes: tuple = ()
    prop: Any = FnProperty.NORMAL
    priority: int = 0
    ctx: int = 0
    how: str = ""                   # async: inline | helper | timer
    opr: int = -1                   # opr: index of the pre-built operator
    use_new_operator: bool = False


@dataclass
class Program:
    nv: int
    steps: list
    oprs: list = field(default_factory=list)    # (reads, writes, prop) per operator


def gen_program(seed: int, n_ops: int = 5000, nv: int = 60) -> Program:
    rnd = random.Random(seed)
    alive = list(range(nv))
    oprs = []
    for _ in range(4):
        vs = rnd.sample(range(nv), 3)
        oprs.append(((vs[0],), (vs[1], vs[2]) if rnd.random() < 0.5 else (vs[1],),
                     rnd.choice((FnProperty.NORMAL, FnProperty.CPU_PRIORITIZED))))
    opr_vars = {v for r, w, _ in oprs for v in r + w}
    deletable = [v for v in range(nv) if v not in opr_vars]
    span = range(int(n_ops * 0.85), n_ops)
    to_delete = rnd.sample(deletable, min(6, len(deletable), len(span)))
    delete_at = sorted(rnd.sample(span, len(to_delete)))
    steps: list[Step] = []
    deleted: list[int] = []
    # a hot subset makes long dependency chains and read groups likely
    hot = rnd.sample(range(nv), 8)

    def pick(k: int) -> tuple:
        pool = hot if rnd.random() < 0.4 else alive
        pool = [v for v in pool if v in alive_set] or sorted(alive_set)
        return tuple(rnd.choice(pool) for _ in range(k))

    alive_set = set(alive)
    i = 0
    while i < n_ops:
        if delete_at and i >= delete_at[0]:
            delete_at.pop(0)
            v = to_delete.pop()
            if v in alive_set:
                alive_set.discard(v)
                deleted.append(v)
                steps.append(Step("delete", writes=(v,), ctx=rnd.randrange(2)))
                if rnd.random() < 0.7:
                    # a push naming the deleted variable, possibly after live ones (the
                    # engine must undo what it registered on those)
                    live = pick(rnd.randrange(3))
                    if rnd.random() < 0.5:
                        steps.append(Step("bad", reads=live, writes=(v,)))
                    else:
                        steps.append(Step("bad", reads=live + (v,), writes=pick(1)))
            continue
        r = rnd.random()
        if r < 0.04:
            steps.append(Step("wait", writes=pick(1)))
            continue
        if r < 0.12:
            steps.append(Step("opr", opr=rnd.randrange(len(oprs)), ctx=rnd.randrange(2),
                              priority=rnd.choice(PRIORITIES)))
            i += 1
            continue
        nr = rnd.choice((0, 1, 1, 2, 2, 3, 4))
        nw = rnd.choice((0, 1, 1, 1, 1, 2, 3)) if nr else rnd.choice((1, 1, 2))
        reads, writes = pick(nr), pick(nw)
        if rnd.random() < 0.2:
            kind = "async"
            how = rnd.choice(("inline", "helper", "helper", "helper", "timer")
                             if rnd.random() < 0.05 else ("inline", "helper", "helper"))
            prop = rnd.choice(ASYNC_PROPS)
        else:
            kind, how, prop = "sync", "", rnd.choice(SYNC_PROPS)
        steps.append(Step(kind, reads, writes, prop, rnd.choice(PRIORITIES), rnd.randrange(2), how,
                          use_new_operator=rnd.random() < 0.05))
        i += 1
    return Program(nv, steps, oprs)


class World:
    """The state a program computes, and what every operation saw."""

    def __init__(self, prog: Program) -> None:
        self.state = [v * 7919 + 1 for v in range(prog.nv)]
        self.trace: dict[int, tuple] = {}
        self.opr_trace: list[list] = [[] for _ in prog.oprs]
        self.waits: list[tuple] = []
        self.deleted: dict[int, int] = {}

    def apply(self, key: int, reads: tuple, writes: tuple, sink: Callable[[tuple], None]) -> None:
        st_ = self.state
        seen = tuple(st_[v] for v in reads) + tuple(st_[v] for v in writes)
        sink(seen)
        h = (sum(seen) * 1000003 + key * 7 + len(seen)) % M
        for k, w in enumerate(writes):
            st_[w] = (h * (k + 3) + st_[w]) % M

    def result(self, deleted: set) -> tuple:
        return ([x for v, x in enumerate(self.state) if v not in deleted], self.trace, self.opr_trace,
                self.waits, self.deleted)


def run_serial(prog: Program) -> tuple:
    w = World(prog)
    gone: set = set()
    for i, s in enumerate(prog.steps):
        if s.kind in ("sync", "async"):
            w.apply(i, s.reads, s.writes, lambda seen, i=i: w.trace.__setitem__(i, seen))
        elif s.kind == "opr":
            r, wr, _ = prog.oprs[s.opr]
            w.apply(-1 - s.opr, r, wr, w.opr_trace[s.opr].append)
        elif s.kind == "wait":
            w.waits.append((i, w.state[s.writes[0]]))
        elif s.kind == "delete":
            w.deleted[s.writes[0]] = w.state[s.writes[0]]
            gone.add(s.writes[0])
    return w.result(gone)


def run_engine(eng: Any, prog: Program, helper: Any) -> tuple:
    w = World(prog)
    vars_ = [eng.new_var() for _ in range(prog.nv)]
    gone: set = set()

    def opr_fn(j: int) -> Callable:
        r, wr, _ = prog.oprs[j]
        sink = w.opr_trace[j].append

        def fn(rctx: Any, on_complete: Callable) -> None:
            w.apply(-1 - j, r, wr, sink)
            on_complete()
        return fn
    oprs = [eng.new_operator(opr_fn(j), [vars_[v] for v in r], [vars_[v] for v in wr], prop, name=f"opr{j}")
            for j, (r, wr, prop) in enumerate(prog.oprs)]

    for i, s in enumerate(prog.steps):
        cv = [vars_[v] for v in s.reads]
        mv = [vars_[v] for v in s.writes]
        if s.kind == "sync":
            def fn(rctx: Any, i: int = i, s: Step = s) -> None:
                w.apply(i, s.reads, s.writes, lambda seen: w.trace.__setitem__(i, seen))
            if s.use_new_operator:
                def afn(rctx: Any, done: Callable, fn: Callable = fn) -> None:
                    fn(rctx)
                    done()
                op = eng.new_operator(afn, cv, mv, s.prop, name=f"op{i}")
                eng.push(op, CTXS[s.ctx], s.priority)
                eng.delete_operator(op)
            else:
                eng.push_sync(fn, CTXS[s.ctx], cv, mv, s.prop, s.priority, f"op{i}")
        elif s.kind == "async":
            def body(i: int = i, s: Step = s) -> None:
                w.apply(i, s.reads, s.writes, lambda seen: w.trace.__setitem__(i, seen))

            def afn(rctx: Any, done: Callable, body: Callable = body, how: str = s.how) -> None:
                if how == "inline":
                    body()
                    done()
                elif how == "helper":
                    helper.q.put(lambda: (body(), done()))
                else:
                    threading.Timer(0.0005, lambda: (body(), done())).start()
            eng.push_async(afn, CTXS[s.ctx], cv, mv, s.prop, s.priority, f"op{i}")
        elif s.kind == "opr":
            eng.push(oprs[s.opr], CTXS[s.ctx], s.priority)
        elif s.kind == "wait":
            eng.wait_for_var(mv[0])
            w.waits.append((i, w.state[s.writes[0]]))
        elif s.kind == "delete":
            v = s.writes[0]
            eng.push_delete(lambda rctx, v=v: w.deleted.__setitem__(v, w.state[v]), CTXS[s.ctx], mv[0])
            gone.add(v)
        elif s.kind == "bad":
            with pytest.raises(EngineError):
                eng.push_sync(lambda rctx: pytest.fail("ran an operation on a deleted variable"),
                              cpu(), cv, mv, name=f"bad{i}")
    eng.wait_for_all()
    for o in oprs:
        eng.delete_operator(o)
    return w.result(gone)


def check(eng: Any, prog: Program, helper: Any) -> None:
    want = run_serial(prog)
    got = run_engine(eng, prog, helper)
    names = ("final state", "values seen by operations", "values seen by pre-built operators",
             "values at wait_for_var", "values at push_delete")
    for name, g, e in zip(names, got, want):
        assert g == e, f"{name} differ from the serial replay"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(10))
def test_random_program_matches_serial_replay(eng: Any, helper: Any, seed: int) -> None:
    prog = gen_program(seed)
    assert sum(s.kind in ("sync", "async", "opr") for s in prog.steps) >= 5000
    check(eng, prog, helper)


@pytest.mark.timeout(120)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 400), nv=st.integers(8, 60))
def test_random_small_programs(teng: Any, helper: Any, seed: int, n: int, nv: int) -> None:
    """Smaller programs from hypothesis (it reports the failing seed when one breaks)."""
    check(teng, gen_program(seed, n, nv), helper)


@pytest.fixture
def fine_switching() -> Any:
    """Switch threads every few microseconds instead of every 5 ms, so that workers,
    pusher and helper interleave inside the engine's bookkeeping."""
    import sys
    old = sys.getswitchinterval()
    sys.setswitchinterval(5e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", [100, 101])
def test_random_program_with_fine_thread_switching(teng: Any, helper: Any, fine_switching: Any,
                                                   seed: int) -> None:
    check(teng, gen_program(seed), helper)
