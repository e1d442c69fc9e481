"""``ThreadedEnginePerDevice`` (the default): worker pools per device and kind of work."""
from __future__ import annotations

import os

from ..context import HOST_DEVICE_TYPES, Context
from .base import FnProperty
from .devices import device_hooks, env_int
from .threaded_base import ThreadedBase
from .workers import Pool

__all__ = ["ThreadedEnginePerDevice"]

_COPY = frozenset((int(FnProperty.COPY_FROM_GPU), int(FnProperty.COPY_TO_GPU)))


class ThreadedEnginePerDevice(ThreadedBase):
    """Worker pools per device (MXNet's ``ThreadedEnginePerDevice``), the default.

    * CPU contexts: ``backend.compute_workers`` workers (``PLEXNET_CPU_WORKER_NTHREADS``,
      default one, as MXNet: ``devices.DEFAULT_CPU_WORKERS``) and
      ``PLEXNET_CPU_PRIORITY_NTHREADS`` (default min(4, CPUs)) workers for
      ``CPU_PRIORITIZED`` operations.
    * Other devices (GPU): ``backend.compute_workers`` workers, one stream each;
      ``backend.copy_workers`` workers for ``COPY_TO_GPU``/``COPY_FROM_GPU``; and
      ``PLEXNET_GPU_PRIORITY_NTHREADS`` (default 1) for ``GPU_PRIORITIZED``. Every
      worker calls ``backend.activate(id)`` and makes its stream when it starts.
    """

    kind = "ThreadedEnginePerDevice"

    def _make_pool(self, ctx: Context, prop: int) -> Pool:
        b = device_hooks(ctx)                       # raises for an unusable device
        dt, did = ctx.device_type, ctx.device_id
        prop = int(prop)
        stream_kind: str | None
        if dt in HOST_DEVICE_TYPES:
            if prop == FnProperty.CPU_PRIORITIZED:
                kind, n = "priority", env_int(min(4, os.cpu_count() or 1), "PLEXNET_CPU_PRIORITY_NTHREADS",
                                              "MXNET_CPU_PRIORITY_NTHREADS")
            else:
                kind, n = "compute", int(getattr(b, "compute_workers", 1) or 1)
            stream_kind = None
        else:
            if prop in _COPY:
                kind, n, stream_kind = "copy", int(getattr(b, "copy_workers", 1) or 1), "copy"
            elif prop == FnProperty.GPU_PRIORITIZED:
                kind, n, stream_kind = "priority", env_int(1, "PLEXNET_GPU_PRIORITY_NTHREADS"), "compute"
            else:
                kind, n, stream_kind = "compute", int(getattr(b, "compute_workers", 1) or 1), "compute"
        key = (dt, did, kind)
        ctx = Context(dt, did)
        with self._pool_lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = self._start_pool(key, f"{ctx}/{kind}", ctx, kind, max(1, n), stream_kind, True)
            self._remember(ctx, prop, pool)
            return pool
