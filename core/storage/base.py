"""The storage-manager contract: handles, managers and their statistics."""
from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Handle", "StorageStats", "StorageManager"]


class Handle:
    """A block of device memory: ``buf`` is a 1-D uint8 array of at least ``size`` bytes."""

    __slots__ = ("buf", "size", "ctx", "manager", "__weakref__")

    def __init__(self, buf: Any, size: int, ctx: Any, manager: "StorageManager") -> None:
        self.buf = buf
        self.size = size
        self.ctx = ctx
        self.manager = manager

    def __repr__(self) -> str:
        return f"<Handle {self.size} bytes on {self.ctx}>"


@dataclass
class StorageStats:
    """Counters of one manager (bytes are rounded block sizes)."""

    bytes_in_use: int = 0
    bytes_pooled: int = 0
    hits: int = 0
    misses: int = 0
    peak: int = 0
    allocs: int = 0
    frees: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class StorageManager(ABC):
    """Allocates and recycles blocks on one device.

    ``raw_alloc(nbytes) -> buf`` and ``raw_free(buf)`` come from the device backend;
    ``raw_alloc`` raises ``MemoryError`` when the device is out of memory (see
    ``plexnet.storage.oom``). Managers are thread-safe: engine workers free blocks while
    the pushing thread allocates.
    """

    def __init__(self, ctx: Any, raw_alloc: Callable[[int], Any],
                 raw_free: Callable[[Any], None] | None = None) -> None:
        self.ctx = ctx
        self._raw_alloc = raw_alloc
        self._raw_free = raw_free or (lambda buf: None)
        self._stats = StorageStats()
        self._lock = threading.Lock()

    @abstractmethod
    def alloc(self, size: int) -> Handle:
        """A block of at least ``size`` bytes."""

    @abstractmethod
    def free(self, handle: Handle) -> None:
        """Return a block (a pooled manager keeps it for reuse)."""

    def direct_free(self, handle: Handle) -> None:
        """Return a block straight to the system, bypassing any pool (a second free of
        the same handle is ignored)."""
        with self._lock:
            buf = handle.buf
            if buf is None:
                return
            handle.buf = None
            s = self._stats
            s.bytes_in_use -= handle.size
            s.frees += 1
        self._raw_free(buf)

    def release_all(self) -> None:
        """Give every pooled block back to the system."""

    def stats(self) -> StorageStats:
        """A snapshot of the counters."""
        with self._lock:
            return StorageStats(**self._stats.__dict__)

    def _count_alloc(self, nbytes: int, hit: bool) -> None:
        """Update the counters for a block of ``nbytes`` handed out (caller holds no lock)."""
        with self._lock:
            s = self._stats
            s.allocs += 1
            if hit:
                s.hits += 1
            else:
                s.misses += 1
            s.bytes_in_use += nbytes
            if s.bytes_in_use > s.peak:
                s.peak = s.bytes_in_use
