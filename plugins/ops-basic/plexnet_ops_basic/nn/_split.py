"""Sharing an operator's work between the calling thread and one helper thread.

Why: on a 2-core CPU an operator alone on the engine would use one core for everything
but OpenBLAS's threaded GEMMs. Sharing the batch chunks of Convolution / Deconvolution
(and FullyConnected's rows, ops-numba's Winograd and BatchNorm passes) between two
threads, each with a one-thread BLAS, puts both cores on all of the work (numpy and
numba release the GIL in their loops and BLAS calls), as MXNet's OpenMP loops do. The
chunks are taken dynamically (``run_items``): a thread the host deschedules takes fewer
chunks instead of holding the other up. Measured on the loaded shared host
(docs/performance.md, PERF-3): LeNet conv2 forward + backward median 22-37 ms split
against 83-137 ms with 2-thread BLAS.

Not for pooling, activations or small products: the helper sleeps between calls and
waits for a core when woken, which a sub-millisecond kernel cannot hide.

When: only for numpy, only for work of at least ``MIN_ELEMENTS`` elements, and only
while the engine lends the caller a second core (``plexnet.engine.blas.lend_core``: no
other worker awake, no other process keeping the machine busy). While the chunks run,
BLAS runs one thread in each, and an OpenMP library asking for the worker share
(``threads_per_worker``) gets one thread too.

**Off by default for the convolutions** (``PLEXNET_OPS_BASIC_SPLIT=1`` turns it on; on
by default only under the engine's opt-in ``PLEXNET_CPU_POLICY=split``, where BLAS runs
one thread in the workers). Beside two-thread BLAS it lost on an idle host (2026-11-25:
anchor LeNet 20.6-21.8 ms against 16.1-17.8 ms without; in one process on 2026-12-07,
LeNet 17.0 ms with it against 13.6 without, ResNet-18 level: 540 against 554).
ops-numba's Winograd and BatchNorm splits ask with ``always=True`` and run whenever a
core is lent.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

import numpy as np

from plexnet.engine import blas

__all__ = ["ways", "run2", "run_items", "observe", "backed_off", "one_blas_thread", "HelperSpace", "MIN_ELEMENTS",
           "MIN_EFFICIENCY", "BACKOFF_S", "MAX_BACKOFF_S", "WINDOW", "WARMUP"]

#: below this many elements (of the largest array) a thread hand-off costs more than it gives
MIN_ELEMENTS = int(os.environ.get("PLEXNET_OPS_BASIC_SPLIT_MIN", str(1 << 16)))
_ENABLED = os.environ.get("PLEXNET_OPS_BASIC_SPLIT", "1" if blas.POLICY == "split" else "0") not in ("", "0")

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_tls = threading.local()


def _helper() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(1, thread_name_prefix="plexnet-ops-split",
                                           initializer=_mark_helper)
    return _pool


def _mark_helper() -> None:
    _tls.helper = True
    np.seterr(all="ignore")   # it runs operators' halves: silent as the engine's threads


#: a split must keep both threads busy at least this share of its wall time (their CPU
#: times / (2 x wall), over the last ``WINDOW`` splits): two threads sharing the caches
#: take 1.3-1.4x the CPU time of one, so below about 0.7 one thread would have been as fast
MIN_EFFICIENCY = 0.7
#: splits judged together, weighted by their wall time: a few short or first-call splits
#: (the helper thread starting, fresh pages) overlap at 0.4-0.5 however free the second
#: core is, and judged one by one (an average that moved 0.3 per split) they turned every
#: split off for BACKOFF_S at the start of a run (2026-12-07: LeNet steps 17-18 ms
#: against 12.5-13 with the splits on)
WINDOW = 8
#: after the window's figure fell below MIN_EFFICIENCY, no split for this long (then
#: WINDOW more splits decide again); doubled on each failure in a row up to
#: ``MAX_BACKOFF_S``, back to this after a window that passed: a GC pause or a burst of
#: Python on another thread spoils a window now and then, and a flat two seconds off cost
#: whole benchmark runs their splits, while a busy host stays found out
BACKOFF_S = 0.25
MAX_BACKOFF_S = 4.0
_backoff = BACKOFF_S
#: a process's first splits are not judged: the helper thread starts and every shape's
#: buffers fault their pages in (both threads at once, which the kernel serialises), so
#: they overlap at 0.5-0.6 whatever the load
WARMUP = 16
_window: deque[tuple[float, float]] = deque(maxlen=WINDOW)
_seen = 0
_off_until = 0.0
_now = time.monotonic


def ways(xp: Any, n: int, elements: int, always: bool = False) -> int:
    """2 when a kernel over ``n`` batch items (``elements`` in its largest array) should
    be shared with the helper thread, else 1. ``always``: whether or not the split is
    turned on for the convolutions (``PLEXNET_OPS_BASIC_SPLIT``): a caller whose work is
    not GEMMs (another plugin's compiled loops, which have no threads of their own) asks
    only whether a second core is free."""
    if (not (_ENABLED or always) or xp is not np or n < 2 or elements < MIN_ELEMENTS
            or getattr(_tls, "helper", False) or getattr(_tls, "inside", False)
            or _now() < _off_until):
        return 1
    return 2 if blas.can_lend() else 1


def backed_off(xp: Any) -> bool:
    """True while the self-check (``observe``) found no second core for the split: then
    a 2-thread BLAS call would not find one either (measured: LeNet conv2 on 2 BLAS
    threads at load 2.5-4, median 84-212 ms against 31-47 ms on one), so the caller
    should run on one BLAS thread (``one_blas_thread``)."""
    return _ENABLED and xp is np and _now() < _off_until and blas.enabled() and blas.blas_threads() >= 2


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread for the calling thread's work (counted as two more awake
    workers of the engine's policy, as ``run2`` does)."""
    blas.worker_awake()
    blas.worker_awake()
    try:
        yield
    finally:
        blas.worker_asleep()
        blas.worker_asleep()


def observe(cpu: float, wall: float) -> None:
    """Record one split's CPU seconds (both threads) and wall seconds. The load average
    cannot tell an idle host running this process from a busy one (this process's own
    threads count in it), so the split checks itself: where the helper waits for a core
    when woken, or either thread is descheduled, the threads' CPU time falls behind the
    wall time; when over the last ``WINDOW`` splits it stays below ``MIN_EFFICIENCY`` of
    two cores, the split turns itself off for a while (``BACKOFF_S``, doubled per failure
    in a row)."""
    global _off_until, _seen, _backoff
    if wall <= 0:
        return
    _seen += 1
    if _seen <= WARMUP:
        return
    _window.append((min(cpu, 2 * wall), wall))
    if len(_window) < WINDOW:
        return
    busy = sum(c for c, _ in _window)
    span = sum(w for _, w in _window)
    if busy < MIN_EFFICIENCY * 2 * span:
        _off_until = _now() + _backoff
        _backoff = min(MAX_BACKOFF_S, 2 * _backoff)
        _window.clear()
    else:
        _backoff = BACKOFF_S


def run2(first: Callable[[], Any], second: Callable[[], Any]) -> bool:
    """Run ``first()`` here and ``second()`` on the helper thread, at the same time, with
    one BLAS thread each, on a core the engine lends (``blas.lend_core``); return when
    both are done (re-raising the first error). Where no core is free (another worker
    woke, another caller holds the helper's core) both run here, one after the other.
    Returns whether the helper took part."""
    if not blas.lend_core():
        first()
        second()
        return False
    _tls.inside = True
    try:
        try:
            fut = _helper().submit(second)
        except RuntimeError:     # the interpreter is exiting: the pool takes no new work
            fut = None
        try:
            first()
        finally:
            err = fut.exception() if fut is not None else None
        if err is not None:
            raise err
        if fut is None:
            second()             # here, after first: the same work, on one thread
    finally:
        _tls.inside = False
        blas.return_core()
    return fut is not None


def run_items(count: int, fn: Callable[[int, int], Any], observe_overlap: bool = True) -> list[int]:
    """``fn(i, slot)`` for every ``i < count``, taken in order by this thread (slot 0)
    and the helper (slot 1) as each becomes free (dynamic scheduling: a thread the host
    deschedules takes fewer items instead of holding the other up). Returns how many
    items each slot ran. ``observe_overlap=False`` keeps this split out of the self-check
    (``observe``): a caller's first call for a shape, whose fresh buffers fault in their
    pages in both threads at once (the kernel serialises those), overlaps poorly however
    free the second core is."""
    nxt = itertools.count()
    done = [0, 0]
    cpu = [0.0, 0.0]

    def work(slot: int) -> None:
        c0 = time.thread_time()
        try:
            for i in nxt:
                if i >= count:
                    return
                fn(i, slot)
                done[slot] += 1
        finally:
            cpu[slot] = time.thread_time() - c0
    t0 = time.perf_counter()
    shared = run2(lambda: work(0), lambda: work(1))
    if observe_overlap and shared:
        observe(cpu[0] + cpu[1], time.perf_counter() - t0)
    return done


class HelperSpace:
    """The helper thread's temp space (the ``kTempSpace`` resource's ``get_space``
    contract): one buffer per helper thread that grows to the largest request and is
    reused; the chunks that run on the helper use it instead of the operator's resource,
    which the calling thread is using at the same time."""

    def get_space(self, shape: Any, dtype: Any = np.float32) -> Any:
        dtype = np.dtype(dtype)
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        buf = getattr(_tls, "space", None)
        if buf is None or buf.size < n:
            buf = _tls.space = np.empty(max(n, 1), dtype=np.uint8)
        return buf[:n].view(dtype).reshape(shape)


def _after_fork() -> None:
    global _pool, _pool_lock
    _pool = None                 # the helper thread did not survive the fork
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
