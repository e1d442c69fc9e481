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
    monkeypatch.setattr(backends.get_backend(cpu()), "compute_workers", 2)   # the default is one
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


@pytest.fixture
def idle_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core budget with no worker awake, nothing lent, two cores, an idle host."""
    monkeypatch.setattr(blas, "_busy_machine", lambda: False)
    monkeypatch.setattr(blas, "_ncpu", 2)
    monkeypatch.setattr(blas, "_awake", 0)
    monkeypatch.setattr(blas, "_lent", 0)
    monkeypatch.setattr(blas, "_cap", 2)
    monkeypatch.setattr(blas, "_setters", [])        # the library's own count stays as it is


def test_a_core_is_lent_only_while_one_is_idle(idle_budget: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "_awake", 1)           # the caller, an engine worker
    assert blas.can_lend() and blas.lend_core()
    assert blas._lent == 1 and blas.blas_threads() == 1     # caller and helper: one each
    assert not blas.can_lend() and not blas.lend_core()     # no third core
    blas.return_core()
    assert blas._lent == 0 and blas.blas_threads() == 2
    monkeypatch.setattr(blas, "_awake", 2)           # the other worker runs too
    assert not blas.lend_core()
    monkeypatch.setattr(blas, "_awake", 0)           # a caller outside the engine (NaiveEngine)
    assert blas.lend_core()
    blas.return_core()
    monkeypatch.setattr(blas, "_busy_machine", lambda: True)
    assert not blas.lend_core()                      # other processes hold the cores


def test_a_woken_worker_waits_for_a_lent_core(idle_budget: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker woken while a split holds the second core waits until the core comes back
    (instead of three threads on two cores); without a return it gives up after
    CORE_WAIT_S."""
    monkeypatch.setattr(blas, "_awake", 1)
    assert blas.lend_core()
    blas._awake = 2                                  # the other worker was just woken
    done = threading.Event()

    def worker() -> None:
        blas.wait_for_core()
        done.set()
    t = threading.Thread(target=worker, daemon=True)
    t.start()
    assert not done.wait(0.05)
    blas.return_core()
    assert done.wait(5)
    t.join(5)
    monkeypatch.setattr(blas, "CORE_WAIT_S", 0.05)
    assert blas.lend_core() is False                 # two awake: nothing to lend
    blas._awake = 1
    assert blas.lend_core()
    blas._awake = 2
    start = time.monotonic()
    blas.wait_for_core()                             # never returned: bounded wait
    assert 0.04 <= time.monotonic() - start < 2
    blas.return_core()


def test_nothing_lent_means_no_wait(idle_budget: None) -> None:
    start = time.monotonic()
    for _ in range(1000):
        blas.wait_for_core()
    assert time.monotonic() - start < 1


def test_split_policy_keeps_blas_on_one_thread_in_the_workers(idle_budget: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "POLICY", "split")
    monkeypatch.setattr(blas, "_current", 2)
    with blas._lock:
        blas._awake = 1
        blas._apply()
    assert blas.blas_threads() == 1
    with blas._lock:
        blas._awake = 0
        blas._apply()
    assert blas.blas_threads() == 2                  # idle: the library's own count for other code
    monkeypatch.setattr(blas, "POLICY", "blas")
    with blas._lock:
        blas._awake = 1
        blas._apply()
    assert blas.blas_threads() == 2


def test_libraries_are_found_once_under_concurrent_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers starting at once: one scan of the libraries (a second scan after the
    first worker changed the thread count read 1 as the cap and turned coordination off)."""
    calls = []

    def slow_find() -> list:
        calls.append(1)
        time.sleep(0.05)
        blas._libs = []
        return []
    monkeypatch.setattr(blas, "_libs", None)
    monkeypatch.setattr(blas, "_find_libraries", slow_find)
    threads = [threading.Thread(target=blas._setup) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert calls == [1]


def test_openblas_idle_threads_sleep_soon_after_a_gemm() -> None:
    """Imported with plexnet, OpenBLAS's idle threads spin about 2**SPIN_TIMEOUT cycles
    after a threaded GEMM instead of 2**28 (0.1 s of a core), and the environment is left
    as it was."""
    import os

    import numpy as np
    if "OPENBLAS_THREAD_TIMEOUT" in os.environ or blas.SPIN_TIMEOUT <= 0 or blas._cap < 2:
        pytest.skip("the user's own OpenBLAS timeout, or one thread")
    assert "OPENBLAS_THREAD_TIMEOUT" not in os.environ
    a = np.ones((512, 512), np.float32)
    from threadpoolctl import threadpool_limits
    burnt = []
    with threadpool_limits(blas._cap, user_api="blas"):
        for _ in range(3):
            a @ a
            t0 = time.process_time()
            time.sleep(0.2)
            burnt.append(time.process_time() - t0)
    assert min(burnt) < 0.05, burnt                  # 0.1 s with OpenBLAS's default


def test_first_verdict_ignores_a_stale_load_average(monkeypatch: pytest.MonkeyPatch) -> None:
    """With /proc/stat the first verdict is "not busy" whatever the load average says (it
    counts this process's threads and the minute before it started); the next sample
    decides on what other processes really used."""
    now = _fake_clock(monkeypatch, [(0.0, 100.0, 0.0), (1.0, 101.9, 0.1)])
    monkeypatch.setattr(blas.os, "getloadavg", lambda: (blas._ncpu + 5.0, 0.0, 0.0))
    assert not blas._busy_machine()
    now[0] = 1.0
    assert blas._busy_machine()              # 1.8 cores of others


@pytest.mark.timeout(60)
def test_splits_and_woken_workers_finish_and_give_every_core_back(new_engine: Any,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Operators that share work with the helper thread run beside short operators on the
    threaded engine: everything finishes (woken workers wait for lent cores at most
    CORE_WAIT_S, never for good), every lent core comes back, and the workers park."""
    pytest.importorskip("plexnet_ops_basic")
    from plexnet_ops_basic.nn import _split
    monkeypatch.setattr(blas, "_busy_machine", lambda: False)
    monkeypatch.setattr(_split, "MIN_EFFICIENCY", 0.0)     # never back off on this host
    eng = new_engine("ThreadedEnginePerDevice")
    done: list[int] = []
    lock = threading.Lock()

    def spin(seconds: float) -> None:
        t = time.thread_time()
        while time.thread_time() - t < seconds:
            pass

    def shared(rc: Any) -> None:
        _split.run_items(4, lambda i, slot: spin(0.002))
        with lock:
            done.append(1)

    def short(rc: Any) -> None:
        spin(0.0002)
        with lock:
            done.append(0)
    for i in range(60):
        eng.push_sync(shared if i % 3 == 0 else short, cpu(), (), (eng.new_var(),))
    eng.wait_for_all()
    assert len(done) == 60 and sum(done) == 20
    assert blas._lent == 0
    deadline = time.monotonic() + 5
    while blas._awake and time.monotonic() < deadline:
        time.sleep(0.01)
    assert blas._awake == 0


def test_cpu_worker_count_defaults_to_one_as_mxnet(monkeypatch: pytest.MonkeyPatch) -> None:
    from plexnet.engine.devices import DEFAULT_CPU_WORKERS, cpu_worker_threads
    monkeypatch.delenv("PLEXNET_CPU_WORKER_NTHREADS", raising=False)
    monkeypatch.delenv("MXNET_CPU_WORKER_NTHREADS", raising=False)
    assert DEFAULT_CPU_WORKERS == 1 and cpu_worker_threads() == 1
    monkeypatch.setenv("MXNET_CPU_WORKER_NTHREADS", "3")       # MXNet's name is read too
    assert cpu_worker_threads() == 3
    monkeypatch.setenv("PLEXNET_CPU_WORKER_NTHREADS", "2")     # plexnet's wins
    assert cpu_worker_threads() == 2
    monkeypatch.setenv("PLEXNET_CPU_WORKER_NTHREADS", "0")     # at least one
    assert cpu_worker_threads() == 1
    monkeypatch.setenv("PLEXNET_CPU_WORKER_NTHREADS", "two")
    with pytest.raises(ValueError, match="PLEXNET_CPU_WORKER_NTHREADS"):
        cpu_worker_threads()
