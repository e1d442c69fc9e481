"""What the engine needs from a device, and where it gets it.

The engine sits below the device backends in the layering, so it does not import them:
a higher layer (``plexnet.backends``) registers a resolver with ``set_device_resolver``
that maps a context to an object with the ``DeviceHooks`` attributes (every
``plexnet.backends.DeviceBackend`` has them). Until one is registered, host contexts
(``cpu``, ``cpu_pinned``, ``cpu_shared``) use numpy and other devices are refused with
an ``EngineError`` naming what is missing.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Protocol

import numpy as np

from ..base import EngineError
from ..context import HOST_DEVICE_TYPES, Context

__all__ = ["DeviceHooks", "set_device_resolver", "device_hooks", "HostDevice"]


class DeviceHooks(Protocol):
    """The part of a device backend the engine uses."""

    #: the array module handed to functions in ``RunContext.xp``
    xp: Any
    #: worker threads per device for compute (the per-device engine)
    compute_workers: int
    #: worker threads per device for ``COPY_TO_GPU`` / ``COPY_FROM_GPU``
    copy_workers: int

    def activate(self, device_id: int) -> None:
        """Make ``device_id`` current on the calling thread."""

    def new_stream(self, device_id: int, kind: str = "compute") -> Any:
        """A stream for one worker (``kind``: ``"compute"`` or ``"copy"``), or None."""

    def synchronize(self, stream: Any) -> None:
        """Block until the work queued on ``stream`` is done."""


#: CPU compute workers per device when neither variable below is set: one, MXNet 1.x's
#: default (``MXNET_CPU_WORKER_NTHREADS=1``). An operator uses the other cores itself:
#: OpenBLAS's threads (``plexnet.engine.blas`` gives them all to the one awake worker) and
#: the helper-thread splits of the convolution and numba kernels. Measured on 2 cores
#: (docs/engine.md, "One CPU worker by default"): one worker against two, LeNet step 7.3
#: against 7.9 ms, MLP 1.07 against 1.20, ResNet-18 289 against 332; independent large
#: element-wise operations 10-15 % slower (numpy's loops are single-threaded).
DEFAULT_CPU_WORKERS = 1


def env_int(default: int, *names: str) -> int:
    """The first of the environment variables ``names`` that is set, as a positive int."""
    for n in names:
        v = os.environ.get(n)
        if v:
            try:
                return max(1, int(v))
            except ValueError:
                raise ValueError(f"{n} must be an integer, got {v!r}") from None
    return max(1, default)


def cpu_worker_threads() -> int:
    """CPU compute workers: ``PLEXNET_CPU_WORKER_NTHREADS``, else MXNet's
    ``MXNET_CPU_WORKER_NTHREADS``, else ``DEFAULT_CPU_WORKERS``."""
    return env_int(DEFAULT_CPU_WORKERS, "PLEXNET_CPU_WORKER_NTHREADS", "MXNET_CPU_WORKER_NTHREADS")


class HostDevice:
    """The host, on numpy: what the engine uses for CPU contexts when no resolver is
    registered (the CPU backend provides the same)."""

    xp: Any = np
    copy_workers: int = 1

    def __init__(self) -> None:
        self.compute_workers = cpu_worker_threads()

    def activate(self, device_id: int) -> None:
        pass

    def new_stream(self, device_id: int, kind: str = "compute") -> Any:
        return None

    def synchronize(self, stream: Any) -> None:
        pass


Resolver = Callable[[Context], DeviceHooks]
_resolver: Resolver | None = None
_host: HostDevice | None = None


def set_device_resolver(resolver: Resolver | None) -> None:
    """Install the function that maps a context to its ``DeviceHooks`` (it raises a
    clear error for a device that cannot be used). ``None``: back to host-only."""
    global _resolver
    _resolver = resolver


def device_hooks(ctx: Context) -> DeviceHooks:
    """The ``DeviceHooks`` of ``ctx``'s device."""
    r = _resolver
    if r is not None:
        return r(ctx)
    if ctx.device_type in HOST_DEVICE_TYPES:
        global _host
        h = _host
        if h is None:
            h = _host = HostDevice()
        return h
    raise EngineError(f"no device backend is registered with the engine for {ctx.device_type!r} "
                      f"(import plexnet.backends, or call plexnet.engine.set_device_resolver)")
