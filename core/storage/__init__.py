"""Storage (``plexnet.storage``): one manager per device, created through its backend.

``get().alloc(size, ctx)`` returns a ``Handle``; ``free`` returns it to the pool,
``direct_free`` gives it straight back to the system. The manager kind comes from
``PLEXNET_STORAGE_MANAGER`` (``pooled`` default, ``naive``) and the pool's rounding from
``PLEXNET_MEM_POOL_ROUND`` (``round``, ``power2``, ``exact``), with
``PLEXNET_MEM_POOL_PAGE_SIZE`` (bytes, default 4096) and ``PLEXNET_MEM_POOL_ROUND_CUTOFF``
(bytes, default 1 MiB: below it ``round`` uses powers of two). A device backend may
bring its own manager (``DeviceBackend.create_storage_manager``).

NDArrays free their storage through ``Engine.push_delete`` so a block is never reused
while an operation still reads it. When the device is out of memory, the pools are
released and the allocation retried once; then a ``MemoryError`` says what was asked and
what plexnet held (``plexnet.storage.oom``).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable

from ..context import add_cache_releaser
from ..env import env_int
from . import oom
from .base import Handle, StorageManager, StorageStats
from .naive import NaiveStorageManager
from .pooled import STRATEGIES, PooledStorageManager, round_size

__all__ = ["Handle", "StorageManager", "StorageStats", "NaiveStorageManager", "PooledStorageManager",
           "Storage", "get", "set_storage", "round_size", "STRATEGIES", "set_backend_resolver"]

#: context -> device backend (``raw_alloc``/``raw_free``/``create_storage_manager``);
#: installed by ``plexnet.backends``, a layer above this one
_backend_resolver: Callable[[Any], Any] | None = None


def set_backend_resolver(resolver: Callable[[Any], Any] | None) -> None:
    """Install the function that maps a context to its device backend."""
    global _backend_resolver
    _backend_resolver = resolver

KINDS = ("pooled", "naive")


def _env_int(name: str, default: int) -> int:
    return env_int(name, default, "an integer number of bytes")


class Storage:
    """The process-wide set of per-device managers."""

    def __init__(self, kind: str | None = None, strategy: str | None = None, *,
                 page: int | None = None, cutoff: int | None = None) -> None:
        self.kind = (kind or os.environ.get("PLEXNET_STORAGE_MANAGER") or "pooled").strip().lower()
        if self.kind not in KINDS:
            raise ValueError(f"PLEXNET_STORAGE_MANAGER must be 'pooled' or 'naive', got {self.kind!r}")
        self.strategy = (strategy or os.environ.get("PLEXNET_MEM_POOL_ROUND") or "round").strip().lower()
        if self.strategy not in STRATEGIES:
            raise ValueError(f"PLEXNET_MEM_POOL_ROUND must be one of {', '.join(STRATEGIES)}, "
                             f"got {self.strategy!r}")
        self.page = page if page is not None else _env_int("PLEXNET_MEM_POOL_PAGE_SIZE", 4096)
        self.cutoff = cutoff if cutoff is not None else _env_int("PLEXNET_MEM_POOL_ROUND_CUTOFF", 1 << 20)
        self._managers: dict[Any, StorageManager] = {}
        self._lock = threading.Lock()

    def manager(self, ctx: Any) -> StorageManager:
        """The manager of ``ctx`` (created on first use)."""
        m = self._managers.get(ctx)
        if m is None:
            with self._lock:
                m = self._managers.get(ctx)
                if m is None:
                    m = self._managers[ctx] = self._create(ctx)
        return m

    def _create(self, ctx: Any) -> StorageManager:
        if _backend_resolver is None:
            raise RuntimeError("plexnet.storage: no device backend resolver is installed "
                               "(import plexnet, which sets it up through plexnet.backends)")
        b = _backend_resolver(ctx)
        custom = b.create_storage_manager(ctx.device_id)
        if custom is not None:
            return custom  # type: ignore[no-any-return]  # a backend's own StorageManager
        did = ctx.device_id
        alloc = lambda n: b.raw_alloc(n, did)  # noqa: E731
        free = lambda buf: b.raw_free(buf, did)  # noqa: E731
        if self.kind == "naive":
            return NaiveStorageManager(ctx, alloc, free)
        return PooledStorageManager(ctx, alloc, free, strategy=self.strategy, page=self.page,
                                    cutoff=self.cutoff)

    def alloc(self, size: int, ctx: Any) -> Handle:
        """A block of at least ``size`` bytes on ``ctx``."""
        return self.manager(ctx).alloc(size)

    def free(self, handle: Handle) -> None:
        """Give a block back to its manager (pooled for reuse)."""
        handle.manager.free(handle)

    def direct_free(self, handle: Handle) -> None:
        """Give a block straight back to the system, bypassing the pool."""
        handle.manager.direct_free(handle)

    def release_all(self, ctx: Any = None) -> None:
        """Release pooled blocks of ``ctx`` (every device when None)."""
        for c, m in list(self._managers.items()):
            if ctx is None or c == ctx:
                m.release_all()

    def stats(self, ctx: Any) -> StorageStats:
        """A snapshot of ``ctx``'s counters."""
        return self.manager(ctx).stats()

    def all_stats(self) -> dict[Any, StorageStats]:
        """Counters of every device that has a manager."""
        return {c: m.stats() for c, m in list(self._managers.items())}


_storage: Storage | None = None
_storage_lock = threading.Lock()


def get() -> Storage:
    """The process-wide ``Storage``."""
    global _storage
    s = _storage
    if s is None:
        with _storage_lock:
            if _storage is None:
                _storage = Storage()
            s = _storage
    return s


def set_storage(storage: Storage | None) -> Storage | None:
    """Replace the process-wide ``Storage`` (``None``: recreate from the environment on
    next use); returns the previous one. Blocks of the old one stay valid."""
    global _storage
    with _storage_lock:
        old, _storage = _storage, storage
    return old


def _release_pools(ctx: Any) -> None:
    get().release_all(ctx)


# Context.empty_cache and the out-of-memory retry release the process-wide pools
add_cache_releaser(_release_pools)
oom.add_releaser(_release_pools)
