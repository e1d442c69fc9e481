"""Simulated device memory: host buffers standing in for allocations (``Memory``,
pooled, unowned), ``MemoryPointer``, and the default memory pools with their
accounting against the simulated device's size."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import runtime
from .devices import Device
from .errors import CUDARuntimeError, NotSimulatedError
from .streams import Stream, current_stream

if TYPE_CHECKING:
    from .hazards import SState


def as_bytes(buf: np.ndarray) -> np.ndarray:
    """The bytes of a (contiguous) buffer as a 1-D uint8 view."""
    if buf.ndim == 1 and buf.dtype == np.uint8:
        return buf
    return buf.reshape(-1, order="A").view(np.uint8)


class BaseMemory:
    """Device memory: a host buffer standing in for it, its device, and the ordering
    record of the last write / reads since (the hazard checker's unit)."""

    __slots__ = ("_buf", "size", "device_id", "_w", "_r", "_n", "_rt", "__weakref__")

    def _init(self, buf: np.ndarray, size: int, dev: int) -> None:
        self._rt = runtime.RT
        self._buf = buf
        self.size = int(size)
        self.device_id = int(dev)
        self._w: tuple[SState, int] | None = None
        self._r: dict[SState, int] | None = None
        self._n = 0

    @property
    def ptr(self) -> int:
        return int(self._buf.__array_interface__["data"][0]) if self._buf is not None else 0

    @property
    def device(self) -> Device:
        return Device(self.device_id)

    def __int__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.size} bytes on simulated device {self.device_id}>"


class Memory(BaseMemory):
    """``cupy.cuda.Memory(size)``: a direct ``cudaMalloc`` on the current device (not
    pooled; a full device raises ``CUDARuntimeError`` cudaErrorMemoryAllocation, as
    ``runtime.malloc`` does)."""

    __slots__ = ()

    def __init__(self, size: int) -> None:
        rt = runtime.RT
        d = rt.device()
        size = int(size)
        with rt.lock:
            if size > rt.free_bytes(d):
                raise CUDARuntimeError(2)
            rt.raw_used[d] += size
        self._init(np.empty(max(size, 1), np.uint8), size, d)
        self._n = size
        rt.stats["malloc"] += 1

    def __del__(self) -> None:
        rt = getattr(self, "_rt", None)
        n = getattr(self, "_n", 0)
        if n and rt is not None and self.device_id < rt.n:
            with rt.lock:
                rt.raw_used[self.device_id] -= n
            self._n = 0


class PooledMemory(BaseMemory):
    """An allocation of the (simulated) default memory pool: every array an operation
    creates. Freed to the pool's cache when the last array using it goes."""

    __slots__ = ()

    def __init__(self, buf: np.ndarray, dev: int) -> None:
        self._init(buf, buf.nbytes, dev)
        self._n = self._rt.pool_alloc(dev, buf.nbytes) if buf.nbytes else 0

    def __del__(self) -> None:
        n = getattr(self, "_n", 0)
        rt = getattr(self, "_rt", None)
        if n and rt is not None and self.device_id < rt.n:
            rt.pool_release(self.device_id, n)
            self._n = 0


class UnownedMemory(BaseMemory):
    """``cupy.cuda.UnownedMemory(ptr, size, owner, device_id)``: only for simulated
    buffers (``owner`` must be a simulated ``cupy.ndarray`` or ``BaseMemory``)."""

    __slots__ = ("_owner",)

    def __init__(self, ptr: int, size: int, owner: Any, device_id: int = -1) -> None:
        from .arrays import ndarray  # arrays imports this module
        base = owner._m if isinstance(owner, ndarray) else owner
        if not isinstance(base, BaseMemory):
            raise NotSimulatedError("UnownedMemory: the simulator can only wrap memory of simulated arrays")
        off = int(ptr) - base.ptr
        self._init(as_bytes(base._buf)[off:off + int(size)], size, base.device_id)
        self._rt = base._rt
        self._owner = owner
        self._w, self._r = base._w, base._r


class MemoryPointer:
    """``cupy.cuda.MemoryPointer(mem, offset)``."""

    __slots__ = ("mem", "ptr", "device_id")

    def __init__(self, mem: BaseMemory, offset: int) -> None:
        if not isinstance(mem, BaseMemory):
            raise TypeError(f"Argument 'mem' has incorrect type (expected cupy.cuda.memory.BaseMemory, "
                            f"got {type(mem).__name__})")
        self.mem = mem
        self.ptr = mem.ptr + int(offset)
        self.device_id = mem.device_id

    @property
    def device(self) -> Device:
        return Device(self.device_id)

    def __int__(self) -> int:
        return self.ptr

    def __add__(self, offset: int) -> "MemoryPointer":
        return MemoryPointer(self.mem, self.ptr - self.mem.ptr + int(offset))

    __radd__ = __add__

    def __sub__(self, offset: int) -> "MemoryPointer":
        return self + (-int(offset))

    def __repr__(self) -> str:
        return f"<MemoryPointer 0x{self.ptr:x} device={self.device_id} mem={self.mem!r}>"

    def _raw(self, name: str) -> Any:
        raise NotSimulatedError(f"MemoryPointer.{name}: raw-pointer copies are not simulated; "
                                f"use cupy.ndarray views over the memory")

    def copy_from_device(self, *a: Any, **k: Any) -> Any:
        return self._raw("copy_from_device")

    copy_from_device_async = copy_from_host = copy_from_host_async = copy_from = copy_from_async = \
        copy_to_host = copy_to_host_async = copy_from_device

    def memset_async(self, value: int, size: int, stream: Any = None) -> None:
        rt = runtime.RT
        off = self.ptr - self.mem.ptr
        st = rt.state_of(stream if stream is not None else current_stream(), self.device_id)
        rt.record(st, "memset_async", (), (self.mem,))
        as_bytes(self.mem._buf)[off:off + int(size)] = int(value)

    def memset(self, value: int, size: int) -> None:
        self.memset_async(value, size, Stream.null)
        rt = runtime.RT
        rt.sync(rt.legacy[self.device_id])


class MemoryPool:
    """``cupy.get_default_memory_pool()``: accounting of every array an operation makes
    (per device; methods answer for the current device, as CuPy's)."""

    def malloc(self, size: int) -> MemoryPointer:
        buf = np.empty(max(int(size), 1), np.uint8)
        return MemoryPointer(PooledMemory(buf, runtime.RT.device()), 0)

    def used_bytes(self) -> int:
        rt = runtime.RT
        return rt.pool_used[rt.device()]

    def free_bytes(self) -> int:
        rt = runtime.RT
        return sum(k * v for k, v in rt.pool_free[rt.device()].items())

    def total_bytes(self) -> int:
        return self.used_bytes() + self.free_bytes()

    def n_free_blocks(self) -> int:
        rt = runtime.RT
        return sum(rt.pool_free[rt.device()].values())

    def free_all_blocks(self, stream: Any = None) -> None:
        rt = runtime.RT
        with rt.lock:
            for c in rt.pool_free:
                c.clear()

    free_all_free = free_all_blocks

    def set_limit(self, size: int | None = None, fraction: float | None = None) -> None:
        rt = runtime.RT
        if fraction is not None:
            size = int(rt.total * float(fraction))
        rt.pool_limit[rt.device()] = int(size or 0)

    def get_limit(self) -> int:
        rt = runtime.RT
        return rt.pool_limit[rt.device()]


class PinnedMemoryPool:
    def free_all_blocks(self) -> None:
        pass

    def n_free_blocks(self) -> int:
        return 0

    def used_bytes(self) -> int:
        return 0

    def total_bytes(self) -> int:
        return 0


_pool = MemoryPool()
_pinned_pool = PinnedMemoryPool()


def get_default_memory_pool() -> MemoryPool:
    return _pool


def get_default_pinned_memory_pool() -> PinnedMemoryPool:
    return _pinned_pool


def alloc(size: int) -> MemoryPointer:
    return _pool.malloc(size)
