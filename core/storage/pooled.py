"""PooledStorageManager: freed blocks are kept in size buckets and reused.

Like MXNet's pooled managers, requests are rounded so that nearby sizes share a
bucket: ``round`` (default) rounds small blocks (up to ``cutoff`` bytes) up to a power of
two and larger ones to a multiple of ``page`` bytes, ``power2`` rounds everything to a
power of two, ``exact`` keeps sizes as asked (larger than a page: page-rounded).
"""
from __future__ import annotations

from typing import Any, Callable

from .base import Handle, StorageManager
from .oom import alloc_or_raise

__all__ = ["PooledStorageManager", "round_size", "STRATEGIES"]

STRATEGIES = ("round", "power2", "exact")


def round_size(size: int, strategy: str = "round", page: int = 4096, cutoff: int = 1 << 20) -> int:
    """The bucket size for a request of ``size`` bytes."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown pool rounding strategy {strategy!r} (round, power2, exact)")
    size = max(int(size), 1)
    if strategy == "exact":
        return -(-size // page) * page if size > page else size
    if strategy == "power2" or size <= cutoff:
        return 1 << (size - 1).bit_length()
    return -(-size // page) * page


class PooledStorageManager(StorageManager):
    """Keeps freed blocks per rounded size; ``alloc`` of the same bucket reuses one.

    Blocks stay pooled until ``release_all`` (also run automatically when an allocation
    fails, see ``plexnet.storage.oom``)."""

    def __init__(self, ctx: Any, raw_alloc: Callable[[int], Any], raw_free: Callable[[Any], None] | None = None,
                 *, strategy: str = "round", page: int = 4096, cutoff: int = 1 << 20) -> None:
        super().__init__(ctx, raw_alloc, raw_free)
        if int(page) < 1 or int(cutoff) < 0:
            raise ValueError(f"pool page ({page}) must be >= 1 and cutoff ({cutoff}) >= 0")
        round_size(1, strategy)  # validate
        self.strategy, self.page, self.cutoff = strategy, int(page), int(cutoff)
        self._pool: dict[int, list[Any]] = {}

    def round(self, size: int) -> int:
        """The block size a request of ``size`` bytes gets."""
        return round_size(size, self.strategy, self.page, self.cutoff)

    def alloc(self, size: int) -> Handle:
        if self.strategy == "round" and 0 < size <= self.cutoff and size.__class__ is int:
            rsize = 1 << (size - 1).bit_length()  # round_size's case for the common request
        else:
            rsize = round_size(size, self.strategy, self.page, self.cutoff)
        with self._lock:
            bucket = self._pool.get(rsize)
            if bucket:  # a pooled block: taken and counted under one lock (the hot path)
                buf = bucket.pop()
                s = self._stats
                s.bytes_pooled -= rsize
                s.allocs += 1
                s.hits += 1
                s.bytes_in_use += rsize
                if s.bytes_in_use > s.peak:
                    s.peak = s.bytes_in_use
                return Handle(buf, rsize, self.ctx, self)
        buf = alloc_or_raise(self, rsize, asked=size)
        self._count_alloc(rsize, hit=False)
        return Handle(buf, rsize, self.ctx, self)

    def free(self, handle: Handle) -> None:
        with self._lock:
            buf = handle.buf
            if buf is None:  # already freed
                return
            handle.buf = None
            s = self._stats
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
