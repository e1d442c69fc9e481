"""The ``gpu`` DeviceBackend.

Memory: raw blocks come from ``cudaMalloc`` (``cupy.cuda.Memory``) and are pooled by
plexnet's ``PooledStorageManager``, so GPU memory shows up in ``plexnet.storage`` stats
and ``release_all`` really returns it. Temporaries CuPy creates inside kernels still use
CuPy's own pool; ``release_all`` empties that too.

Streams: each engine worker gets its own non-blocking stream, made current on the worker
thread, so a chain of GPU ops is queued asynchronously and only wait points
synchronise. One compute worker per device (the default) keeps every compute op of a
device on one stream: stream order then equals engine order, which is what makes
reusing a freed block safe without events. Copy workers synchronise their stream before
an operation completes, since their results are consumed on other streams.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from plexnet.backends import DeviceBackend

from . import cupy_loader
from .rng import CupyGenerator


class CUDABackend(DeviceBackend):
    device_type = "gpu"

    def __init__(self) -> None:
        self.unavailable_reason = cupy_loader.reason
        self.xp = cupy_loader.cupy if cupy_loader.available else None
        self.compute_workers = int(os.environ.get("PLEXNET_GPU_WORKER_NSTREAMS", "1"))
        self.copy_workers = int(os.environ.get("PLEXNET_GPU_COPY_NTHREADS", "1"))

    def num_devices(self) -> int:
        return int(self.xp.cuda.runtime.getDeviceCount()) if self.xp is not None else 0

    def _check(self, device_id: int) -> None:
        n = self.num_devices()
        if not 0 <= device_id < n:
            from plexnet.backends import DeviceUnavailable
            raise DeviceUnavailable(f"gpu({device_id}) does not exist: {n} GPU(s) visible")

    # -- memory -----------------------------------------------------------------------
    def raw_alloc(self, nbytes: int, device_id: int) -> Any:
        cp = self.xp
        self._check(device_id)
        with cp.cuda.Device(device_id):
            try:
                mem = cp.cuda.Memory(max(int(nbytes), 1))
            except cp.cuda.memory.OutOfMemoryError as e:
                raise MemoryError(str(e)) from None
            return cp.ndarray((max(int(nbytes), 1),), np.uint8, memptr=cp.cuda.MemoryPointer(mem, 0))

    def raw_free(self, buf: Any, device_id: int) -> None:
        del buf  # cudaFree happens when the last reference goes

    def release_cached(self) -> None:
        self.xp.get_default_memory_pool().free_all_blocks()

    def memory_info(self, device_id: int) -> tuple[int, int] | None:
        with self.xp.cuda.Device(device_id):
            free, total = self.xp.cuda.runtime.memGetInfo()
        return int(free), int(total)

    # -- streams ------------------------------------------------------------------------
    def activate(self, device_id: int) -> None:
        self._check(device_id)
        self.xp.cuda.Device(device_id).use()

    def new_stream(self, device_id: int, kind: str = "compute") -> Any:
        s = self.xp.cuda.Stream(non_blocking=True)
        s.use()  # called on the worker thread: CuPy's current stream is per thread
        return s

    def synchronize(self, stream: Any) -> None:
        if stream is not None:
            stream.synchronize()

    # -- data ------------------------------------------------------------------------------
    def to_host(self, arr: Any, stream: Any = None) -> Any:
        out = self.xp.asnumpy(arr, stream=stream)
        if stream is not None:
            stream.synchronize()
        return out

    def from_host(self, src: Any, dst: Any, stream: Any = None) -> None:
        dst.set(np.ascontiguousarray(src, dtype=dst.dtype), stream=stream) if dst.flags.c_contiguous \
            else dst.__setitem__(Ellipsis, self.xp.asarray(src))
        if stream is not None:
            stream.synchronize()

    def copy(self, src: Any, dst: Any, stream: Any = None) -> None:
        if isinstance(src, np.ndarray):
            self.from_host(src, dst, stream)
            return
        if isinstance(dst, np.ndarray):
            dst[...] = self.to_host(src, stream)
            return
        dst[...] = src  # device to device (peer copy when they differ)

    def rng(self, seed: int, device_id: int) -> Any:
        with self.xp.cuda.Device(device_id):
            return CupyGenerator(self.xp, seed)
