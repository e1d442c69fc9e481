"""``ThreadedEngine``: one worker pool shared by every context (MXNet's
``ThreadedEnginePooled``)."""
from __future__ import annotations

from ..context import Context
from .devices import cpu_worker_threads, device_hooks
from .threaded_base import ThreadedBase
from .workers import Pool

__all__ = ["ThreadedEngine"]


class ThreadedEngine(ThreadedBase):
    """One worker pool shared by every context (MXNet's ``ThreadedEnginePooled``).

    ``PLEXNET_CPU_WORKER_NTHREADS`` (or ``MXNET_CPU_WORKER_NTHREADS``) workers, default
    one (``devices.DEFAULT_CPU_WORKERS``, as MXNet). Priority hints only order the
    shared queue. A worker makes a stream per device the first time it runs an operation
    there and activates the device when it changes.
    """

    kind = "ThreadedEngine"

    def __init__(self, num_workers: int | None = None) -> None:
        super().__init__()
        self.num_workers = num_workers or cpu_worker_threads()
        self._shared: Pool | None = None
        self._known: set[str] = set()

    def _reset_pools(self) -> None:
        self._shared = None

    def _make_pool(self, ctx: Context, prop: int) -> Pool:
        dt = ctx.device_type
        if dt not in self._known:
            device_hooks(ctx)                    # a clear error for unusable devices
            self._known.add(dt)
        with self._pool_lock:
            pool = self._shared
            if pool is None:
                pool = self._shared = self._start_pool("shared", "threaded", None, "shared",
                                                       self.num_workers, None, False)
            self._remember(ctx, prop, pool)
            return pool
