"""The built-in CPU backend on numpy (an internal plugin, registered by hook)."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..engine.devices import cpu_worker_threads
from ..hookspecs import hookimpl
from . import DeviceBackend

__all__ = ["CPUBackend"]


class CPUBackend(DeviceBackend):
    device_type = "cpu"
    xp = np

    def __init__(self) -> None:
        # one worker by default, as MXNet (devices.DEFAULT_CPU_WORKERS says why): operators
        # use the other cores through BLAS threads and their helper-thread splits
        self.compute_workers = cpu_worker_threads()
        # malloc already pools small blocks; going through plexnet's pool costs more
        self.small_alloc_bytes = int(os.environ.get("PLEXNET_CPU_SMALL_ALLOC", 4096))

    def raw_alloc(self, nbytes: int, device_id: int) -> Any:
        return np.empty(max(int(nbytes), 1), dtype=np.uint8)

    def rng(self, seed: int, device_id: int) -> Any:
        return np.random.Generator(np.random.PCG64(seed))

    def to_host(self, arr: Any, stream: Any = None) -> Any:
        return np.array(arr, copy=True)

    def memory_info(self, device_id: int) -> tuple[int, int] | None:
        try:
            pages, avail = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_AVPHYS_PAGES")
            size = os.sysconf("SC_PAGE_SIZE")
            return avail * size, pages * size
        except (ValueError, OSError, AttributeError):  # pragma: no cover
            return None


@hookimpl
def plexnet_register_device_backends(register: Any) -> None:
    register("cpu", CPUBackend())
