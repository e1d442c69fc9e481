"""BLAS threads coordinated with the engine's CPU workers (through ``threadpoolctl``).

numpy's BLAS (OpenBLAS) runs a GEMM on as many threads as there are cores, and its
thread count is one setting for the whole process. Two engine workers each calling a
threaded GEMM would ask for twice the cores (oversubscription: both slow down, and on a
loaded machine far more); a BLAS forced to one thread leaves cores idle when only one
worker computes. So the engine keeps the count of CPU workers that are awake (not
parked waiting for work) and sets BLAS threads to ``max(1, cap // awake)``, where
``cap`` is the library's thread count at start (the core count, or what
``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` said): one awake worker gets every core,
two share them. When other processes (or the hypervisor: steal time) use more than half
a core, awake workers get one BLAS thread each: measured here, multi-threaded GEMMs whose
threads other processes keep descheduling cost far more than they give (issue 17: a
ResNet-18 step 1.8 s with one BLAS thread against 4-5 s without; an MLP step 3.6-36 ms
with two BLAS threads against 2.8-3.4 ms with one while a test run shared the 2 cores).
"Other processes" is measured directly, every half second: the machine's busy CPU time
(``/proc/stat``, steal included) less this process's own (``os.times``); the 1-minute
load average, the fallback where ``/proc/stat`` is missing, reacts too late and counts
this process's own threads.
The setting changes only when the number of awake workers changes - when a worker parks
or is woken, not per operation - through a library handle found once.

A worker counts as awake from the moment it is woken (by the thread that hands it work),
so the count is set before that work starts. A GEMM already running keeps the thread
count it started with; the next call picks up the new one. Only OpenBLAS on pthreads
(numpy's wheels) is coordinated: there the count is process-wide; with an OpenMP or MKL
BLAS it is per calling thread and this scheme does not apply.
``PLEXNET_BLAS_COORDINATION=0`` turns it off (BLAS keeps its own setting); so does a
missing ``threadpoolctl``.

**Lent cores.** An operator that can share its work with a helper thread (the
convolutions' and the numba kernels' splits, ``plexnet_ops_basic.nn._split``) borrows the
idle core first: ``lend_core`` grants it while the awake workers and the cores already
lent leave one free and other processes do not keep the machine busy, and BLAS then runs
one thread in each of the two; ``return_core`` gives it back. A worker woken while its
core is lent waits for it (``wait_for_core``, at most ``CORE_WAIT_S``) instead of making
three threads on two cores. ``PLEXNET_CPU_POLICY=split`` (opt-in; it lost on the MLP and
LeNet steps, docs/engine.md) keeps BLAS on one thread whenever a worker is awake and gives
the idle core only to splits (FullyConnected splits too).

**OpenBLAS's idle threads** spin for about 0.1 s after a threaded GEMM, a core taken from
whatever runs next; ``_short_spin`` shortens that once, at import.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

try:
    from threadpoolctl import ThreadpoolController as _Controller
except ImportError:  # pragma: no cover - a core dependency; without it, no coordination
    _Controller = None

__all__ = ["worker_awake", "worker_asleep", "blas_threads", "threads_per_worker", "enabled",
           "lend_core", "return_core", "can_lend", "wait_for_core", "POLICY", "CORE_WAIT_S"]

#: "blas" (default): BLAS threads ``cap // awake``, a core lent to a split where one is
#: idle; "split": one BLAS thread in the workers, the idle core only ever lent to splits
POLICY = os.environ.get("PLEXNET_CPU_POLICY", "blas").strip().lower() or "blas"
if POLICY not in ("split", "blas"):
    raise ValueError(f"PLEXNET_CPU_POLICY must be 'split' or 'blas', got {POLICY!r}")
#: longest a woken worker waits for a lent core to come back (a split runs milliseconds)
CORE_WAIT_S = 0.25

_lock = threading.Lock()
_cond = threading.Condition(_lock)
_awake = 0
_lent = 0                          # cores lent to operators' helper threads
_libs: list[Any] | None = None     # threadpoolctl controllers of the BLAS libraries
_setters: list[Any] = []           # their process-wide set_num_threads
_cap = 1
_current = 0
_ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
_load_checked = -10.0
_load_busy = False
#: seconds between two samples of the machine's CPU use (the busy verdict holds meanwhile)
BUSY_WINDOW = 0.5
#: cores that other processes (or steal) must use for the machine to count as busy
FOREIGN_BUSY_CORES = 0.5
_cpu_prev: tuple[float, float, float] | None = None   # (monotonic time, machine busy s, own CPU s)
try:
    _TICKS = float(os.sysconf("SC_CLK_TCK"))
except (AttributeError, ValueError, OSError):  # pragma: no cover - not a POSIX system
    _TICKS = 100.0


def _setup() -> list[Any]:
    """Find the BLAS libraries once (threadpoolctl scans the loaded shared objects).
    Under the lock: two workers starting at once must not both read the thread count,
    the second after the first changed it (it then took 1 for the cap, and coordination
    and every split were off for the process)."""
    with _lock:
        return _libs if _libs is not None else _find_libraries()


def _find_libraries() -> list[Any]:
    global _libs, _cap, _current, _setters
    libs: list[Any] = []
    if os.environ.get("PLEXNET_BLAS_COORDINATION", "1") != "0":
        try:
            found = list(_Controller().select(user_api="blas").lib_controllers) if _Controller else []
        except Exception:  # noqa: BLE001 - not installed, or an unknown BLAS: no coordination
            found = []
        # OpenBLAS on pthreads (numpy's wheels): one process-wide count. With OpenMP or
        # MKL the count is per calling thread, which this global scheme does not fit.
        libs = [lib for lib in found
                if lib.internal_api == "openblas" and getattr(lib, "threading_layer", "") == "pthreads"]
    # threadpoolctl (>= 3.6) lets only one "controlling" Python thread change OpenBLAS's
    # count; the engine serialises its own changes under _lock, so it calls the setter
    # that applies unconditionally where threadpoolctl has it.
    _setters = [getattr(lib, "_real_set_num_threads", lib.set_num_threads) for lib in libs]
    if libs:
        _cap = max(1, max(int(lib.num_threads) for lib in libs))
        _current = _cap
        for lib in libs:
            _short_spin(lib)
    _libs = libs
    return libs


#: how long OpenBLAS's idle threads spin before they sleep, as OpenBLAS counts it
#: (``OPENBLAS_THREAD_TIMEOUT``: 2**n CPU cycles; its default 28 is about 0.1 s here)
SPIN_TIMEOUT = int(os.environ.get("PLEXNET_OPENBLAS_THREAD_TIMEOUT", "22"))


def _short_spin(lib: Any) -> bool:
    """Make OpenBLAS's idle threads sleep after about 1.5 ms of spinning instead of 0.1 s.

    After a two-thread GEMM, numpy's OpenBLAS keeps its idle thread spinning (with
    sched_yield) for ``2**28`` cycles: a core taken from the helper-thread splits and the
    other worker for 0.1 s (docs/performance.md, session 6; ``bench/blas_spin_bench.py``).
    OpenBLAS reads ``OPENBLAS_THREAD_TIMEOUT`` when its thread pool starts, which happens
    when numpy loads it, before plexnet can set the variable. So: set it, have OpenBLAS
    re-read its environment (``openblas_read_env``) and restart its pool
    (``blas_thread_shutdown_``, ``blas_thread_init``: the new pool reads the timeout), then
    put the environment back. Measured (CPU burnt in a 200 ms sleep after a GEMM): 105 ms
    at OpenBLAS's 2**28, 5 ms at the 2**22 chosen (1 ms at 2**18); a 128 x 784 x 256 GEMM
    0.32-0.33 ms back to back at every setting. Left alone where the user set ``OPENBLAS_THREAD_TIMEOUT``, where
    ``PLEXNET_OPENBLAS_THREAD_TIMEOUT=0``, and where the library lacks either entry point.
    Runs once, when plexnet's engine module is imported (before any plexnet thread runs a
    GEMM): restarting the pool under a GEMM in flight on another thread is not safe."""
    if SPIN_TIMEOUT <= 0 or "OPENBLAS_THREAD_TIMEOUT" in os.environ:
        return False
    try:
        import ctypes
        handle = ctypes.CDLL(lib.filepath)
        read_env, shutdown = handle.openblas_read_env, handle.blas_thread_shutdown_
        start = handle.blas_thread_init
    except (OSError, AttributeError):
        return False
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(max(4, min(30, SPIN_TIMEOUT)))
    try:
        read_env()
        shutdown()
        start()             # the pool reads the timeout here
    finally:
        del os.environ["OPENBLAS_THREAD_TIMEOUT"]
        read_env()          # the other settings as they were; the pool keeps its timeout
    return True


def enabled() -> bool:
    """True when BLAS threads follow the engine's workers."""
    return bool(_libs) and _cap > 1


def _cpu_sample() -> tuple[float, float] | None:
    """(the machine's busy CPU seconds so far, steal included; this process's CPU
    seconds), or None where ``/proc/stat`` cannot be read."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
        # cpu user nice system idle iowait irq softirq steal ...
        ticks = [int(x) for x in fields[1:9]]
        busy = sum(ticks) - ticks[3] - ticks[4]
    except (OSError, ValueError, IndexError):
        return None
    own = os.times()
    return busy / _TICKS, own.user + own.system


def _load_average_busy() -> bool:
    try:
        return os.getloadavg()[0] > _ncpu + 0.5
    except OSError:  # pragma: no cover - no load average on this platform
        return False


def _busy_machine() -> bool:
    """True when others keep the cores busy: other processes (or the hypervisor) used more
    than ``FOREIGN_BUSY_CORES`` cores since the last sample (taken at most every
    ``BUSY_WINDOW`` seconds; a sample older than a few windows only starts a new one).
    This process's own workers and BLAS threads never count. Without ``/proc/stat``: the
    1-minute load average above the cores + 0.5."""
    global _load_checked, _load_busy, _cpu_prev
    now = time.monotonic()
    if now - _load_checked < BUSY_WINDOW:
        return _load_busy
    _load_checked = now
    sample = _cpu_sample()
    if sample is None:
        _load_busy = _load_average_busy()
        return _load_busy
    prev, _cpu_prev = _cpu_prev, (now, sample[0], sample[1])
    if prev is None or now - prev[0] > 4 * BUSY_WINDOW:
        # no recent baseline (first call, or the engine sat idle): keep the last verdict
        # (not busy on the first call: the load average would count this process's own
        # threads and a minute of whatever ran before it, so a script started right after
        # another heavy one ran its first seconds on one BLAS thread)
        return _load_busy
    foreign = ((sample[0] - prev[1]) - (sample[1] - prev[2])) / (now - prev[0])
    _load_busy = foreign > FOREIGN_BUSY_CORES
    return _load_busy


def _apply() -> None:
    """Under ``_lock``: set the BLAS thread count for ``_awake`` workers if it changed."""
    global _current
    if _awake + _lent <= 0:
        n = _cap
    elif POLICY == "split":
        n = 1               # the second core goes to helper threads, never to OpenBLAS's pool
    elif _busy_machine():
        n = 1               # straggling BLAS threads on a loaded machine cost more than they give
    else:
        n = max(1, _cap // (_awake + 2 * _lent))   # a split: its caller and helper, one each
    if n != _current:
        _current = n
        for set_threads in _setters:
            try:
                set_threads(n)
            except Exception:  # noqa: BLE001 - a library that refuses keeps its setting
                pass


def worker_awake() -> None:
    """A CPU worker started or was woken to run operations."""
    global _awake
    if not _libs or _cap <= 1:
        return
    with _lock:
        _awake += 1
        _apply()


def worker_asleep() -> None:
    """A CPU worker parked (no work) or stopped."""
    global _awake
    if not _libs or _cap <= 1:
        return
    with _lock:
        _awake = max(0, _awake - 1)
        _apply()


def _may_lend() -> bool:
    # the caller itself takes a core even where it is not an engine worker (NaiveEngine)
    return max(_awake, 1) + _lent < _ncpu and not _busy_machine()


def can_lend() -> bool:
    """Whether ``lend_core`` would grant a core now (a hint, without the lock)."""
    return bool(_libs) and _cap > 1 and _may_lend()


def lend_core() -> bool:
    """Take one idle core for an operator's helper thread (the caller runs on its own):
    True when granted, and then ``return_core`` must follow. Refused while the awake
    workers and the cores already lent leave none free, while other processes keep the
    machine busy, and where BLAS is not coordinated (its own threads may hold the cores)."""
    global _lent
    if not _libs or _cap <= 1:
        return False
    with _lock:
        if not _may_lend():
            return False
        _lent += 1
        _apply()
    return True


def return_core() -> None:
    """Give back a core ``lend_core`` granted; wakes the workers waiting for it."""
    global _lent
    with _lock:
        _lent = max(0, _lent - 1)
        _apply()
        _cond.notify_all()


def wait_for_core() -> None:
    """Called by a CPU worker that was just woken: while a helper thread holds the core
    this worker would run on (awake workers + lent cores above the cores), wait for it to
    come back, at most ``CORE_WAIT_S``. Returns at once when nothing is lent."""
    if not _lent:
        return
    with _lock:
        deadline = time.monotonic() + CORE_WAIT_S
        while _lent and _awake + _lent > _ncpu:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            _cond.wait(left)


def blas_threads() -> int:
    """The BLAS thread count set now (the library's own when coordination is off)."""
    return _current if _libs else 0


def threads_per_worker() -> int:
    """The CPU threads an operator on an awake worker may give its own thread pool (an
    OpenMP library such as torch's): the cores shared among the awake workers, at least
    one. Unlike ``blas_threads`` it has no busy-machine rule: measured on the torch plugin
    (docs/performance.md), two OpenMP threads still win for heavy convolutions on a loaded
    host, while two workers each running a two-thread team oversubscribe the cores."""
    return max(1, _ncpu // max(1, _awake))


def _after_fork() -> None:
    global _lock, _cond, _awake, _lent
    _lock = threading.Lock()
    _cond = threading.Condition(_lock)
    _awake = 0          # the workers and helper threads did not survive the fork
    _lent = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


# The libraries are found (and OpenBLAS's idle-thread timeout shortened: _short_spin) at
# import, the one moment no plexnet thread can be inside a GEMM.
_setup()
_busy_machine()     # the first CPU sample: the baseline the engine's first verdict compares against
