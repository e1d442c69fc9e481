"""Storage (``plexnet.storage``): one manager per device, created through its backend.

``get().alloc(size, ctx)`` returns a ``Handle``; ``free`` returns it to the pool. The
manager kind comes from ``PLEXNET_STORAGE_MANAGER`` (``pooled`` default, ``naive``) and
the pool's rounding from ``PLEXNET_MEM_POOL_ROUND`` (``round``, ``power2``, ``exact``).
NDArrays free their storage through ``Engine.push_delete`` so a block is never reused
while an operation still reads it.
"""
from __future__ import annotations

import os
import threading
from typing import Any

from .base import Handle, StorageManager, StorageStats
from .naive import NaiveStorageManager
from .pooled import PooledStorageManager, round_size

__all__ = ["Handle", "StorageManager", "StorageStats", "NaiveStorageManager", "PooledStorageManager",
           "Storage", "get", "round_size"]


class Storage:
    """The process-wide set of per-device managers."""

    def __init__(self, kind: str | None = None, strategy: str | None = None) -> None:
        self.kind = (kind or os.environ.get("PLEXNET_STORAGE_MANAGER", "pooled")).lower()
        if self.kind not in ("pooled", "naive"):
            raise ValueError(f"PLEXNET_STORAGE_MANAGER must be 'pooled' or 'naive', got {self.kind!r}")
        self.strategy = strategy or os.environ.get("PLEXNET_MEM_POOL_ROUND", "round")
        self._managers: dict[Any, StorageManager] = {}
        self._lock = threading.Lock()

    def manager(self, ctx: Any) -> StorageManager:
        m = self._managers.get(ctx)
        if m is None:
            with self._lock:
                m = self._managers.get(ctx)
                if m is None:
                    m = self._managers[ctx] = self._create(ctx)
        return m

    def _create(self, ctx: Any) -> StorageManager:
        from ..backends import get_backend
        b = get_backend(ctx)
        custom = b.create_storage_manager(ctx.device_id)
        if custom is not None:
            return custom
        did = ctx.device_id
        alloc = lambda n: b.raw_alloc(n, did)  # noqa: E731
        free = lambda buf: b.raw_free(buf, did)  # noqa: E731
        if self.kind == "naive":
            return NaiveStorageManager(ctx, alloc, free)
        return PooledStorageManager(ctx, alloc, free, strategy=self.strategy)

    def alloc(self, size: int, ctx: Any) -> Handle:
        return self.manager(ctx).alloc(size)

    def free(self, handle: Handle) -> None:
        handle.manager.free(handle)

    def direct_free(self, handle: Handle) -> None:
        handle.manager.direct_free(handle)

    def release_all(self, ctx: Any = None) -> None:
        """Release pooled blocks of ``ctx`` (every device when None)."""
        for c, m in list(self._managers.items()):
            if ctx is None or c == ctx:
                m.release_all()

    def stats(self, ctx: Any) -> StorageStats:
        return self.manager(ctx).stats()


_storage: Storage | None = None


def get() -> Storage:
    """The process-wide ``Storage``."""
    global _storage
    if _storage is None:
        _storage = Storage()
    return _storage
