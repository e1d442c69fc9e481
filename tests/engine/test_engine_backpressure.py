"""Backpressure (core/engine/scheduler.py ``MAX_PENDING``): a thread outside the engine
that runs ahead of the workers waits for them, softly (never a hang, never a deadlock)."""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from plexnet.context import cpu
from plexnet.engine import scheduler

THREADED = ["ThreadedEngine", "ThreadedEnginePerDevice"]


@pytest.fixture(params=THREADED)
def teng(request: pytest.FixtureRequest, new_engine: Any) -> Any:
    return new_engine(request.param)


@pytest.mark.timeout(60)
def test_a_pusher_running_ahead_waits_for_the_workers(teng: Any) -> None:
    v = teng.new_var()
    seen: list[int] = []
    for _ in range(400):
        teng.push_sync(lambda rc: time.sleep(0.0002), cpu(), (), (v,))
        seen.append(teng._pending)
    teng.wait_for_all()
    assert scheduler.MAX_PENDING > 0
    assert max(seen) <= scheduler.MAX_PENDING + 1, max(seen)


@pytest.mark.timeout(60)
def test_a_slow_backlog_that_drains_keeps_the_pusher_waiting(teng: Any, monkeypatch: Any) -> None:
    """Operations slower than THROTTLE_S per backlog (a loaded host) still finish one after
    another: the pusher keeps waiting instead of running ahead (and growing the memory)."""
    monkeypatch.setattr(scheduler, "THROTTLE_S", 0.05)
    v = teng.new_var()
    seen: list[int] = []
    for _ in range(3 * scheduler.MAX_PENDING):
        teng.push_sync(lambda rc: time.sleep(0.004), cpu(), (), (v,))   # a backlog: 0.13 s per wait
        seen.append(teng._pending)
    teng.wait_for_all()
    assert max(seen) <= scheduler.MAX_PENDING + 1, max(seen)
    assert time.monotonic() >= teng._throttle_off_until   # never paused


@pytest.mark.timeout(60)
def test_a_backlog_that_does_not_drain_never_blocks_pushes(teng: Any, monkeypatch: Any) -> None:
    """An operation waiting on something outside the engine holds the backlog: a push
    waits at most THROTTLE_S once, then pushes go on unthrottled."""
    monkeypatch.setattr(scheduler, "THROTTLE_S", 0.2)
    gate = threading.Event()
    v, w = teng.new_var(), teng.new_var()
    teng.push_sync(lambda rc: gate.wait(30), cpu(), (), (v,))
    t0 = time.monotonic()
    for _ in range(3 * scheduler.MAX_PENDING):
        teng.push_sync(lambda rc: None, cpu(), (v,), (w,))     # all behind the gate
    pushed_in = time.monotonic() - t0
    gate.set()
    teng.wait_for_all()
    assert pushed_in < 2.0, pushed_in


@pytest.mark.timeout(60)
def test_pushes_from_inside_the_engine_are_never_held(teng: Any) -> None:
    v, w = teng.new_var(), teng.new_var()
    count = 3 * scheduler.MAX_PENDING
    done = threading.Event()

    def outer(rc: Any) -> None:
        t0 = time.monotonic()
        for _ in range(count):
            teng.push_sync(lambda rc: time.sleep(0.0001), cpu(), (), (w,))
        done.elapsed = time.monotonic() - t0  # type: ignore[attr-defined]
        done.set()
    teng.push_sync(outer, cpu(), (), (v,))
    assert done.wait(30)
    teng.wait_for_all()
    assert done.elapsed < scheduler.THROTTLE_S  # type: ignore[attr-defined]


@pytest.mark.timeout(60)
def test_helper_threads_are_never_held(teng: Any) -> None:
    """Only the main thread is held: a helper thread (a kvstore receiver, a data loader)
    may push what the pending operations wait for."""
    gate = threading.Event()
    v, w = teng.new_var(), teng.new_var()
    teng.push_sync(lambda rc: gate.wait(30), cpu(), (), (v,))
    took: list[float] = []

    def helper() -> None:
        t0 = time.monotonic()
        for _ in range(3 * scheduler.MAX_PENDING):
            teng.push_sync(lambda rc: None, cpu(), (v,), (w,))     # all behind the gate
        took.append(time.monotonic() - t0)
    t = threading.Thread(target=helper)
    t.start()
    t.join(30)
    gate.set()
    teng.wait_for_all()
    assert took and took[0] < scheduler.THROTTLE_S, took


@pytest.mark.timeout(60)
def test_operations_that_compute_slowly_keep_the_pusher_waiting(teng: Any, monkeypatch: Any) -> None:
    """Nothing finishes within THROTTLE_S, but the workers are computing (a loaded host):
    no pause, the pusher stays bounded (before: the pause let a Gluon loop on a busy machine
    push 13,000 operations ahead and grow to 15 GB)."""
    monkeypatch.setattr(scheduler, "THROTTLE_S", 0.05)

    def spin(rc: Any) -> None:
        t = time.thread_time()
        while time.thread_time() - t < 0.08:   # CPU work longer than THROTTLE_S
            pass
    v = teng.new_var()
    seen: list[int] = []
    for _ in range(scheduler.MAX_PENDING + 8):
        teng.push_sync(spin, cpu(), (), (v,))
        seen.append(teng._pending)
    teng.wait_for_all()
    assert max(seen) <= scheduler.MAX_PENDING + 1, max(seen)
    assert time.monotonic() >= teng._throttle_off_until   # never paused
