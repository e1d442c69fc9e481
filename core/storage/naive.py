"""NaiveStorageManager: every alloc asks the backend, every free gives back."""
from __future__ import annotations

from .base import Handle, StorageManager
from .oom import alloc_or_raise

__all__ = ["NaiveStorageManager"]


class NaiveStorageManager(StorageManager):
    def alloc(self, size: int) -> Handle:
        size = max(int(size), 1)
        buf = alloc_or_raise(self, size)
        s = self._stats
        s.misses += 1
        s.allocs += 1
        s.bytes_in_use += size
        if s.bytes_in_use > s.peak:
            s.peak = s.bytes_in_use
        return Handle(buf, size, self.ctx, self)

    def free(self, handle: Handle) -> None:
        self.direct_free(handle)
