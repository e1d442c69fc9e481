"""Chaos: random programs on every engine with random operation failures, failing
observers and concurrent client threads, compared with a serial replay (issue 13).

Each client thread runs its own random program over its own variables - synchronous and
asynchronous operations (completed inline or from a helper thread), some raising, some
with an observer that raises in ``on_start`` or ``on_end``, ``wait_for_var``
checkpoints - and, interleaved, read-modify-write increments of counters shared by all
clients. The serial replay of each client's program models the engine's error rules
(a failed operation poisons what it writes; an operation reading a poisoned variable is
skipped and passes the error on; a successful write cures). Checked: every value an
operation saw, every checkpoint (value or the name of the failed operation), the final
values and poison of every variable, no lost or overlapping counter update, and no hang
(each run is bounded).
"""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

import pytest
from plexnet.context import cpu
from plexnet.engine import ENGINE_TYPES, EngineOpError, FnProperty

pytestmark = pytest.mark.chaos

M = (1 << 61) - 1
N_CLIENTS = 3
N_STEPS = 2000
NV = 24
N_COUNTERS = 3
SYNC_PROPS = (FnProperty.NORMAL,) * 6 + (FnProperty.INLINE, FnProperty.INLINE, FnProperty.CPU_PRIORITIZED,
                                        FnProperty.COPY_TO_GPU, FnProperty.NO_SKIP)
RUN_TIMEOUT = 60.0


@dataclass
class Step:
    kind: str                  # op | wait | count
    reads: tuple[int, ...] = ()
    writes: tuple[int, ...] = ()
    is_async: bool = False
    how: str = ""              # async: inline | helper
    fail: str = ""             # "" | raise | start (observer on_start) | end (observer on_end)
    prop: Any = FnProperty.NORMAL
    priority: int = 0
    counter: int = 0
    inc: int = 0


def gen_client(rnd: random.Random) -> list[Step]:
    steps: list[Step] = []
    for _ in range(N_STEPS):
        r = rnd.random()
        if r < 0.05:
            steps.append(Step("wait", writes=(rnd.randrange(NV),)))
        elif r < 0.15:
            steps.append(Step("count", counter=rnd.randrange(N_COUNTERS), inc=rnd.randrange(1, 1000),
                              prop=rnd.choice((FnProperty.NORMAL, FnProperty.INLINE))))
        else:
            reads = tuple(rnd.randrange(NV) for _ in range(rnd.choice((0, 1, 1, 2, 3))))
            writes = tuple(rnd.randrange(NV) for _ in range(rnd.choice((1, 1, 1, 2))))
            fail = rnd.choices(("", "raise", "start", "end"), (88, 6, 3, 3))[0]
            is_async = rnd.random() < 0.2
            steps.append(Step("op", reads, writes, is_async, rnd.choice(("inline", "helper", "helper")),
                              fail, FnProperty.NORMAL if is_async else rnd.choice(SYNC_PROPS),
                              rnd.choice((0,) * 6 + (-1, 2))))
    return steps


def op_name(ci: int, i: int) -> str:
    return f"c{ci}_{i}"


def seen_of(state: list[int], s: Step) -> tuple[int, ...]:
    return tuple(state[v] for v in s.reads) + tuple(state[v] for v in s.writes)


def apply(state: list[int], s: Step, key: int) -> tuple[int, ...]:
    seen = seen_of(state, s)
    h = (sum(seen) * 1000003 + key * 7 + len(seen)) % M
    for k, w in enumerate(s.writes):
        state[w] = (h * (k + 3) + state[w]) % M
    return seen


def first_poison(poison: list[str | None], s: Step) -> str | None:
    """The error an engine finds first: reads not written (in order), then written
    variables that are also read (in write order) - as ``split_vars`` orders them."""
    ws = dict.fromkeys(s.writes)
    rs = dict.fromkeys(s.reads)
    for v in [v for v in rs if v not in ws] + [v for v in ws if v in rs]:
        if poison[v] is not None:
            return poison[v]
    return None


def replay(ci: int, steps: list[Step]) -> dict[str, Any]:
    state = [v * 7919 + ci + 1 for v in range(NV)]
    poison: list[str | None] = [None] * NV
    trace: dict[int, tuple[int, ...]] = {}
    waits: list[tuple[int, str, int | str]] = []
    for i, s in enumerate(steps):
        name = op_name(ci, i)
        if s.kind == "wait":
            v = s.writes[0]
            p = poison[v]
            waits.append((i, "err", p) if p is not None else (i, "ok", state[v]))
            continue
        if s.kind != "op":
            continue
        bad = None if s.prop == FnProperty.NO_SKIP else first_poison(poison, s)
        if bad is not None:
            err: str | None = bad                      # skipped: the error passes on
        elif s.fail in ("raise", "start"):
            err = name                                 # failed before doing anything
        else:
            trace[i] = apply(state, s, i)
            err = name if s.fail == "end" else None
        for w in s.writes:
            poison[w] = err
    return {"state": state, "poison": poison, "trace": trace, "waits": waits}


class ChaosObserver:
    def __init__(self, start_fail: set[str], end_fail: set[str]) -> None:
        self.start_fail = start_fail
        self.end_fail = end_fail

    def on_start(self, name: str, ctx: Any, worker: str) -> str:
        if name in self.start_fail:
            raise RuntimeError(f"observer refuses {name}")
        return name

    def on_end(self, tok: str) -> None:
        if tok in self.end_fail:
            raise RuntimeError(f"observer chokes on {tok}")


def run_client(eng: Any, ci: int, steps: list[Step], vars_: list[Any], counters: list[Any],
               shared: dict[str, Any], helper: Any) -> dict[str, Any]:
    state = [v * 7919 + ci + 1 for v in range(NV)]
    trace: dict[int, tuple[int, ...]] = {}
    waits: list[tuple[int, str, int | str]] = []
    for i, s in enumerate(steps):
        name = op_name(ci, i)
        if s.kind == "wait":
            try:
                eng.wait_for_var(vars_[s.writes[0]])
                waits.append((i, "ok", state[s.writes[0]]))
            except EngineOpError as e:
                waits.append((i, "err", e.op_name))
            continue
        if s.kind == "count":
            def incr(rc: Any, k: int = s.counter, inc: int = s.inc) -> None:
                if shared["busy"][k]:
                    shared["overlaps"].append(k)
                shared["busy"][k] = True
                x = shared["counts"][k]
                time.sleep(0)                       # invite other threads in
                shared["counts"][k] = x + inc
                shared["busy"][k] = False
            eng.push_sync(incr, cpu(), (counters[s.counter],), (counters[s.counter],), s.prop, 0, f"count{ci}")
            continue
        cv = [vars_[v] for v in s.reads]
        mv = [vars_[v] for v in s.writes]

        def body(i: int = i, s: Step = s) -> None:
            if s.fail == "raise":
                raise ValueError(f"injected failure in {op_name(ci, i)}")
            trace[i] = apply(state, s, i)
        if not s.is_async:
            eng.push_sync(lambda rc, body=body: body(), cpu(), cv, mv, s.prop, s.priority, name)
            continue

        def afn(rc: Any, done: Callable[..., None], body: Callable[[], None] = body, how: str = s.how) -> None:
            def finish() -> None:
                try:
                    body()
                except ValueError as e:
                    done(e)
                    return
                done()
            if how == "inline":
                finish()
            else:
                helper.q.put(finish)
        eng.push_async(afn, cpu(), cv, mv, s.prop, s.priority, name)
    return {"state": state, "trace": trace, "waits": waits}


def final_view(eng: Any, vars_: list[Any], res: dict[str, Any]) -> tuple[list[int | None], list[str | None]]:
    """Values of clean variables and the poison of each, read through the engine."""
    values: list[int | None] = []
    poison: list[str | None] = []
    for v, x in zip(vars_, res["state"]):
        try:
            eng.wait_for_var(v)
            values.append(x)
            poison.append(None)
        except EngineOpError as e:
            values.append(None)
            poison.append(e.op_name)
    return values, poison


def run_chaos(kind: str, seed: int, new_engine: Callable[[str], Any], helper: Any) -> None:
    rnd = random.Random(seed)
    programs = [gen_client(rnd) for _ in range(N_CLIENTS)]
    start_fail = {op_name(ci, i) for ci, p in enumerate(programs) for i, s in enumerate(p) if s.fail == "start"}
    end_fail = {op_name(ci, i) for ci, p in enumerate(programs) for i, s in enumerate(p) if s.fail == "end"}
    eng = new_engine(kind)
    eng.set_observers([ChaosObserver(start_fail, end_fail)])
    shared: dict[str, Any] = {"counts": [0] * N_COUNTERS, "busy": [False] * N_COUNTERS, "overlaps": []}
    counters = [eng.new_var() for _ in range(N_COUNTERS)]
    varsets = [[eng.new_var() for _ in range(NV)] for _ in range(N_CLIENTS)]
    results: list[Any] = [None] * N_CLIENTS
    crashes: list[BaseException] = []

    def client(ci: int) -> None:
        try:
            results[ci] = run_client(eng, ci, programs[ci], varsets[ci], counters, shared, helper)
        except BaseException as e:  # noqa: BLE001 - reported below
            crashes.append(e)
    threads = [threading.Thread(target=client, args=(ci,), daemon=True) for ci in range(N_CLIENTS)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + RUN_TIMEOUT
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), f"{kind} seed {seed}: a client hung"
    assert not crashes, crashes
    done = threading.Event()
    errors: list[str] = []

    def settle() -> None:
        for _ in range(N_CLIENTS * N_STEPS):        # raises each unreported error once
            try:
                eng.wait_for_all()
                break
            except EngineOpError as e:
                errors.append(e.op_name)
        done.set()
    threading.Thread(target=settle, daemon=True).start()
    assert done.wait(RUN_TIMEOUT), f"{kind} seed {seed}: wait_for_all hung"

    mismatches = []
    for ci in range(N_CLIENTS):
        want = replay(ci, programs[ci])
        got = results[ci]
        values, poison = final_view(eng, varsets[ci], got)
        want_values = [x if p is None else None for x, p in zip(want["state"], want["poison"])]
        for what, g, w in (("trace", got["trace"], want["trace"]), ("waits", got["waits"], want["waits"]),
                           ("poison", poison, want["poison"]), ("values", values, want_values)):
            if g != w:
                mismatches.append(f"client {ci}: {what}")
    expect = [0] * N_COUNTERS
    for p in programs:
        for s in p:
            if s.kind == "count":
                expect[s.counter] += s.inc
    assert shared["counts"] == expect, f"{kind} seed {seed}: lost counter updates"
    assert not shared["overlaps"], f"{kind} seed {seed}: overlapping writes {shared['overlaps'][:5]}"
    assert not mismatches, f"{kind} seed {seed}: differs from the serial replay: {mismatches}"
    assert any(s.fail for p in programs for s in p)  # the chaos happened
    eng.set_observers([])


@pytest.mark.timeout(180)
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("kind", ENGINE_TYPES)
def test_chaos_matches_serial_replay(kind: str, seed: int, new_engine: Callable[[str], Any], helper: Any) -> None:
    run_chaos(kind, seed, new_engine, helper)
