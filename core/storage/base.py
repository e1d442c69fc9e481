"""The storage-manager contract: handles, managers and their statistics."""
from __future__ import annotations

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

    ``raw_alloc(nbytes) -> buf`` and ``raw_free(buf)`` come from the device backend.
    """

    def __init__(self, ctx: Any, raw_alloc: Callable[[int], Any],
                 raw_free: Callable[[Any], None] | None = None) -> None:
        self.ctx = ctx
        self._raw_alloc = raw_alloc
        self._raw_free = raw_free or (lambda buf: None)
        self._stats = StorageStats()

    @abstractmethod
    def alloc(self, size: int) -> Handle:
        """A block of at least ``size`` bytes."""

    @abstractmethod
    def free(self, handle: Handle) -> None:
        """Return a block (a pooled manager keeps it for reuse)."""

    def direct_free(self, handle: Handle) -> None:
        """Return a block straight to the system, bypassing any pool."""
        s = self._stats
        s.bytes_in_use -= handle.size
        s.frees += 1
        self._raw_free(handle.buf)
        handle.buf = None

    def release_all(self) -> None:
        """Give every pooled block back to the system."""

    def stats(self) -> StorageStats:
        return StorageStats(**self._stats.__dict__)
