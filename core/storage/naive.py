"""NaiveStorageManager: every alloc asks the backend, every free gives back."""
from __future__ import annotations

from .base import Handle, StorageManager
from .oom import alloc_or_raise

__all__ = ["NaiveStorageManager"]


class NaiveStorageManager(StorageManager):
    """No pool: ``alloc`` calls ``raw_alloc`` (every allocation is a miss), ``free`` is
    ``direct_free``. Useful to find use-after-free bugs and to compare with the pool."""

    def alloc(self, size: int) -> Handle:
        size = max(int(size), 1)
        buf = alloc_or_raise(self, size)
        self._count_alloc(size, hit=False)
        return Handle(buf, size, self.ctx, self)

    def free(self, handle: Handle) -> None:
        self.direct_free(handle)
