"""PooledStorageManager: freed blocks are kept in size buckets and reused.

Like MXNet's pooled managers, requests are rounded so that nearby sizes share a
bucket: ``round`` (default) rounds small blocks up to a power of two and larger ones to a
multiple of ``page`` bytes, ``power2`` rounds everything to a power of two, ``exact``
keeps sizes as asked (page-rounded).
"""
from __future__ import annotations

import threading

from .base import Handle, StorageManager
from .oom import alloc_or_raise

__all__ = ["PooledStorageManager", "round_size"]


def round_size(size: int, strategy: str = "round", page: int = 4096, cutoff: int = 1 << 20) -> int:
    """The bucket size for a request of ``size`` bytes."""
    size = max(int(size), 1)
    if strategy == "exact":
        return -(-size // page) * page if size > page else size
    if strategy == "power2" or size <= cutoff:
        return 1 << (size - 1).bit_length()
    if strategy == "round":
        return -(-size // page) * page
    raise ValueError(f"unknown pool rounding strategy {strategy!r} (round, power2, exact)")


class PooledStorageManager(StorageManager):
    def __init__(self, ctx, raw_alloc, raw_free=None, *, strategy: str = "round", page: int = 4096,
                 cutoff: int = 1 << 20) -> None:
        super().__init__(ctx, raw_alloc, raw_free)
        round_size(1, strategy)  # validate
        self.strategy, self.page, self.cutoff = strategy, page, cutoff
        self._pool: dict[int, list] = {}
        self._lock = threading.Lock()

    def alloc(self, size: int) -> Handle:
        rsize = round_size(size, self.strategy, self.page, self.cutoff)
        s = self._stats
        with self._lock:
            bucket = self._pool.get(rsize)
            if bucket:
                buf = bucket.pop()
                s.hits += 1
                s.bytes_pooled -= rsize
            else:
                buf = None
        if buf is None:
            buf = alloc_or_raise(self, rsize)
            with self._lock:
                s.misses += 1
        with self._lock:
            s.allocs += 1
            s.bytes_in_use += rsize
            if s.bytes_in_use > s.peak:
                s.peak = s.bytes_in_use
        return Handle(buf, rsize, self.ctx, self)

    def free(self, handle: Handle) -> None:
        buf = handle.buf
        if buf is None:
            return
        handle.buf = None
        s = self._stats
        with self._lock:
            s.frees += 1
            s.bytes_in_use -= handle.size
            s.bytes_pooled += handle.size
            self._pool.setdefault(handle.size, []).append(buf)

    def release_all(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, {}
            self._stats.bytes_pooled = 0
        for bufs in pool.values():
            for b in bufs:
                self._raw_free(b)
