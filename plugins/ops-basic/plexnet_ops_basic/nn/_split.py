"""Sharing a numpy convolution's batch chunks between the calling thread and one helper.

Why: on a 2-core CPU the engine gives an operator on its only awake worker both cores,
but only the GEMMs use them (OpenBLAS threads), and a 2-thread OpenBLAS call waits at
its end for whichever thread the host descheduled; im2col / col2im run on one core.
Sharing the batch chunks of Convolution / Deconvolution between two threads, each with
a one-thread BLAS, puts both cores on all of the work (numpy releases the GIL in its
loops and in BLAS calls), as MXNet's OpenMP loops do. The chunks are taken dynamically
(``run_items``): a thread the host deschedules takes fewer chunks instead of holding the
other up. Measured on the loaded shared host (docs/performance.md, PERF-3): LeNet conv2
forward + backward median 22-37 ms split against 83-137 ms with 2-thread BLAS.

Not for pooling, activations or FullyConnected: there the split lost to one thread (or
to 2-thread BLAS) whenever the host was loaded, because the helper sleeps between calls
and waits for a core when woken, while a sub-millisecond kernel cannot hide that.

When: only for numpy, only for work of at least ``MIN_ELEMENTS`` elements, and only
while the engine's BLAS policy (``plexnet.engine.blas``) gives the caller two threads or
more: one awake worker on a machine that other processes do not oversubscribe. While
the chunks run, both threads count as awake workers of that policy, so BLAS runs one
thread each (no oversubscription), and an OpenMP library asking for the worker share
(``threads_per_worker``) gets one thread too.

**Off by default** (``PLEXNET_OPS_BASIC_SPLIT=1`` turns it on): on an idle host (load
0.5-1, 2026-11-25 17:05) it lost to 2-thread BLAS on every step measured, alternated
in one sitting: anchor LeNet 20.6-21.8 ms with it against 16.1-17.8 ms without, Gluon
LeNet hybridized 18.3-19.6 against 14.7-15.6, imperative 27.6-28.5 against 22.9-23.1;
ResNet-18 and the MLP level. It won only on the loaded shared host it was built on.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator

import numpy as np

from plexnet.engine import blas

__all__ = ["ways", "run2", "run_items", "observe", "backed_off", "one_blas_thread", "HelperSpace", "MIN_ELEMENTS",
           "MIN_EFFICIENCY", "BACKOFF_S"]

#: below this many elements (of the largest array) a thread hand-off costs more than it gives
MIN_ELEMENTS = int(os.environ.get("PLEXNET_OPS_BASIC_SPLIT_MIN", str(1 << 16)))
_ENABLED = os.environ.get("PLEXNET_OPS_BASIC_SPLIT", "0") not in ("", "0")

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


#: a split must keep both threads busy at least this share of its wall time (their CPU
#: times / (2 x wall), averaged): two threads sharing the caches take 1.3-1.4x the CPU
#: time of one, so below about 0.7 one thread would have been as fast
MIN_EFFICIENCY = 0.7
#: after the average fell below MIN_EFFICIENCY, no split for this long (then one more try)
BACKOFF_S = 2.0
_eff = 1.0
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
    return 2 if blas.enabled() and blas.blas_threads() >= 2 else 1


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
    wall time, and the split turns itself off for ``BACKOFF_S``."""
    global _eff, _off_until
    if wall <= 0:
        return
    _eff = 0.7 * _eff + 0.3 * min(1.0, cpu / (2 * wall))
    if _eff < MIN_EFFICIENCY:
        _off_until = _now() + BACKOFF_S
        _eff = MIN_EFFICIENCY + 0.05   # the next try decides again on its own figure


def run2(first: Callable[[], Any], second: Callable[[], Any]) -> None:
    """Run ``first()`` here and ``second()`` on the helper thread, at the same time, with
    one BLAS thread each; return when both are done (re-raising the first error). Two
    callers at once (two engine workers) queue for the one helper; with ``run_items`` the
    second caller runs its items itself meanwhile."""
    blas.worker_awake()          # this thread and the helper: two more awake workers
    blas.worker_awake()          # while both run, so BLAS gives each one thread
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
        blas.worker_asleep()
        blas.worker_asleep()


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
    run2(lambda: work(0), lambda: work(1))
    if observe_overlap:
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
