"""BLAS threads follow the number of awake CPU workers (``core/engine/blas.py``)."""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from plexnet.context import cpu
from plexnet.engine import blas


def library_threads() -> int:
    """What the BLAS library itself reports (not our bookkeeping)."""
    libs = blas._libs or []
    return min(int(lib.num_threads) for lib in libs)


pytestmark = pytest.mark.skipif(not blas.enabled(), reason="no controllable multi-threaded BLAS here")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["ThreadedEngine", "ThreadedEnginePerDevice"])
def test_two_busy_workers_share_the_cores_one_gets_them_all(kind: str, new_engine: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "_busy_machine", lambda: False)    # whatever else runs here
    monkeypatch.setenv("PLEXNET_CPU_WORKER_NTHREADS", "2")
    monkeypatch.setenv("MXNET_CPU_WORKER_NTHREADS", "2")
    from plexnet import backends
    backends._resolved.pop("cpu", None)             # re-read the worker count
    eng = new_engine(kind)
    cap = blas._cap
    seen: dict[str, int] = {}
    started, release = threading.Event(), threading.Event()

    def hold(rc: Any) -> None:
        started.set()
        release.wait(10)

    def probe(name: str) -> Any:
        def fn(rc: Any) -> None:
            seen[name] = library_threads()
        return fn
    eng.push_sync(lambda rc: None, cpu(), (), (eng.new_var(),))   # start the pool
    eng.wait_for_all()
    time.sleep(0.2)                                 # both workers park
    eng.push_sync(probe("alone"), cpu(), (), (eng.new_var(),))
    eng.wait_for_all()
    eng.push_sync(hold, cpu(), (), (eng.new_var(),))
    assert started.wait(10)
    eng.push_sync(probe("shared"), cpu(), (), (eng.new_var(),))
    deadline = time.monotonic() + 10
    while "shared" not in seen and time.monotonic() < deadline:
        time.sleep(0.01)
    release.set()
    eng.wait_for_all()
    backends._resolved.pop("cpu", None)
    assert seen["alone"] == cap
    assert seen["shared"] == max(1, cap // 2)


@pytest.mark.timeout(30)
def test_idle_engine_gives_blas_every_thread(new_engine: Any) -> None:
    eng = new_engine("ThreadedEnginePerDevice")
    for _ in range(20):
        eng.push_sync(lambda rc: None, cpu(), (), (eng.new_var(),))
    eng.wait_for_all()
    eng.shutdown()
    assert library_threads() == blas._cap == blas.blas_threads()


@pytest.mark.timeout(30)
def test_loaded_machine_gets_one_blas_thread_per_worker(new_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "_busy_machine", lambda: True)
    eng = new_engine("ThreadedEnginePerDevice")
    eng.push_sync(lambda rc: None, cpu(), (), (eng.new_var(),))
    eng.wait_for_all()
    time.sleep(0.2)                                 # workers park
    seen: list[int] = []
    eng.push_sync(lambda rc: seen.append(library_threads()), cpu(), (), (eng.new_var(),))
    eng.wait_for_all()
    assert seen == [1]


def test_without_proc_stat_the_load_average_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "_load_busy", blas._load_busy)       # restored afterwards
    monkeypatch.setattr(blas, "_cpu_sample", lambda: None)
    monkeypatch.setattr(blas, "_load_checked", -10.0)
    monkeypatch.setattr(blas.os, "getloadavg", lambda: (blas._ncpu + 3.0, 0.0, 0.0))
    assert blas._busy_machine()
    monkeypatch.setattr(blas, "_load_checked", -10.0)
    monkeypatch.setattr(blas.os, "getloadavg", lambda: (blas._ncpu * 1.0, 0.0, 0.0))
    assert not blas._busy_machine()


def _fake_clock(monkeypatch: pytest.MonkeyPatch, samples: list) -> list:
    """``_busy_machine`` fed (time, machine busy s, own CPU s) samples one per call."""
    now = [0.0]
    monkeypatch.setattr(blas, "_load_busy", False)
    monkeypatch.setattr(blas, "_load_checked", -10.0)
    monkeypatch.setattr(blas, "_cpu_prev", None)
    monkeypatch.setattr(blas.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(blas.time, "monotonic", lambda: now[0])
    it = iter(samples)

    def sample() -> tuple[float, float]:
        t, busy, own = next(it)
        now[0] = t
        return busy, own
    monkeypatch.setattr(blas, "_cpu_sample", sample)
    return now


def test_other_processes_cpu_makes_the_machine_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Busy = the machine's CPU time less this process's, per second, above
    FOREIGN_BUSY_CORES; this process's own threads (BLAS spinning included) never count."""
    now = _fake_clock(monkeypatch, [(0.0, 100.0, 10.0),      # baseline
                                     (1.0, 102.0, 12.0),      # 2 cores busy, all ours
                                     (2.0, 103.9, 13.0),      # 0.9 cores of others
                                     (3.0, 105.1, 14.0),      # 0.2 cores of others
                                     (20.0, 140.0, 15.0)])    # stale baseline: verdict kept
    verdicts = []
    for t in (0.0, 1.0, 2.0, 3.0, 20.0):
        now[0] = t
        blas._load_checked = -10.0
        verdicts.append(blas._busy_machine())
    assert verdicts == [False, False, True, False, False]


def test_busy_verdict_is_cached_for_a_window(monkeypatch: pytest.MonkeyPatch) -> None:
    now = _fake_clock(monkeypatch, [(0.0, 100.0, 0.0), (1.0, 101.0, 0.0)])
    assert not blas._busy_machine()          # baseline (load average 0)
    now[0] = 1.0
    assert blas._busy_machine()              # one core of others
    now[0] = 1.0 + blas.BUSY_WINDOW / 2
    assert blas._busy_machine()              # within the window: no new sample taken
