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


def test_load_check_reads_the_load_average(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "_load_busy", blas._load_busy)       # restored afterwards
    monkeypatch.setattr(blas, "_load_checked", -10.0)
    monkeypatch.setattr(blas.os, "getloadavg", lambda: (blas._ncpu + 3.0, 0.0, 0.0))
    assert blas._busy_machine()
    monkeypatch.setattr(blas, "_load_checked", -10.0)
    monkeypatch.setattr(blas.os, "getloadavg", lambda: (blas._ncpu * 1.0, 0.0, 0.0))
    assert not blas._busy_machine()
