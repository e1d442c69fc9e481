"""The ``gpu`` DeviceBackend.

Memory: raw blocks come from ``cudaMalloc`` (``cupy.cuda.Memory``) and are pooled by
plexnet's ``PooledStorageManager``, so GPU memory shows up in ``plexnet.storage`` stats
and ``release_all`` really returns it. Temporaries CuPy creates inside kernels still use
CuPy's own pool; ``release_cached`` empties it, and ``raw_alloc`` does so once before
reporting a full device.

Streams: each engine worker gets its own non-blocking stream, made current on the worker
thread (with its device). The engine waits for a worker's stream before it completes an
operation (``synchronize``, as MXNet waits after every GPU operator), so an operation's
outputs are ready whenever the engine says so: for copy workers (their own streams), for
``asnumpy`` on the host (the legacy default stream does not wait for non-blocking
streams), and for a storage block that is freed and reused on another stream.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from plexnet.backends import DeviceBackend

from . import cupy_loader
from .rng import CupyGenerator

#: cudaError_t cudaErrorMemoryAllocation
_CUDA_ERROR_MEMORY_ALLOCATION = 2


class CUDABackend(DeviceBackend):
    device_type = "gpu"

    def __init__(self) -> None:
        self.unavailable_reason = cupy_loader.reason
        self.xp = cupy_loader.cupy if cupy_loader.available else None
        #: True when ``xp`` is plexnet's CuPy simulator (PLEXNET_CUDA_SIMULATE), not CuPy
        self.simulated = bool(cupy_loader.simulated)
        #: shown by ``plexnet plugins`` next to the device's availability
        self.status_note = cupy_loader.note
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
    def _malloc(self, n: int) -> Any:
        """``cupy.cuda.Memory(n)`` (a plain cudaMalloc on the current device); None when
        the device is full. A full device raises ``CUDARuntimeError``
        (cudaErrorMemoryAllocation) there, not ``OutOfMemoryError`` (that one comes from
        CuPy's memory pool)."""
        cp = self.xp
        try:
            return cp.cuda.Memory(n)
        except cp.cuda.memory.OutOfMemoryError:
            return None
        except cp.cuda.runtime.CUDARuntimeError as e:
            if getattr(e, "status", None) == _CUDA_ERROR_MEMORY_ALLOCATION:
                return None
            raise

    def raw_alloc(self, nbytes: int, device_id: int) -> Any:
        cp = self.xp
        self._check(device_id)
        n = max(int(nbytes), 1)
        with cp.cuda.Device(device_id):
            mem = self._malloc(n)
            if mem is None:
                # blocks cached by CuPy's own pool (temporaries of operators) count against
                # the device too: give them back and try once more before the storage
                # manager's release-and-retry sees a MemoryError
                cp.get_default_memory_pool().free_all_blocks()
                mem = self._malloc(n)
            if mem is None:
                free, total = cp.cuda.runtime.memGetInfo()
                raise MemoryError(f"cudaMalloc of {n} bytes failed on gpu({device_id}) "
                                  f"({free} of {total} bytes free)")
            return cp.ndarray((n,), np.uint8, memptr=cp.cuda.MemoryPointer(mem, 0))

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
        # a stream belongs to the device current when it is made; ``use`` makes it the
        # calling (worker) thread's current stream of that device (CuPy keeps one per
        # thread and device)
        with self.xp.cuda.Device(device_id):
            s = self.xp.cuda.Stream(non_blocking=True)
            s.use()
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
        cp = self.xp
        sd, dd = src.device.id, dst.device.id
        if sd == dd:
            dst[...] = src
            return
        # Between devices CuPy copies with cudaMemcpyAsync only when both arrays are
        # contiguous with one dtype and layout; anything else is a kernel that needs peer
        # access (ValueError "Peer access is unavailable" on machines without it). So make
        # the source contiguous on its own device, copy bytes, convert on the target.
        if not src.flags.c_contiguous:
            with cp.cuda.Device(sd):
                src = cp.ascontiguousarray(src)
                cp.cuda.get_current_stream().synchronize()
        with cp.cuda.Device(dd):
            if dst.flags.c_contiguous and dst.dtype == src.dtype:
                dst[...] = src
            else:
                tmp = cp.empty(src.shape, src.dtype)
                tmp[...] = src
                dst[...] = tmp

    def rng(self, seed: int, device_id: int) -> Any:
        with self.xp.cuda.Device(device_id):
            return CupyGenerator(self.xp, seed)
