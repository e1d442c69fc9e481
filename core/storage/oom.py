"""The out-of-memory path shared by the managers: release pools, retry, then explain."""
from __future__ import annotations

from typing import Any, Callable

#: more pools to release before the retry: ``fn(ctx)``; the process-wide ``Storage``
#: (``plexnet.storage``, which imports this module) adds its own
_releasers: list[Callable[[Any], None]] = []


def add_releaser(fn: Callable[[Any], None]) -> None:
    """Also call ``fn(ctx)`` to release pooled memory of ``ctx`` when an allocation fails."""
    if fn not in _releasers:
        _releasers.append(fn)


def alloc_or_raise(manager: Any, size: int, asked: int | None = None) -> Any:
    """``raw_alloc(size)``; on ``MemoryError`` give every pooled block of the device back
    (this manager's pool, and the pools of the process-wide ``Storage`` for its context)
    and retry once; if that fails too, raise a ``MemoryError`` saying what was asked
    (``asked``: the size before rounding) and what plexnet held."""
    try:
        return manager._raw_alloc(size)
    except MemoryError:
        pass
    before = manager.stats()
    manager.release_all()
    for release in list(_releasers):
        try:
            release(manager.ctx)
        except ValueError:  # a bad PLEXNET_STORAGE_* setting: reported where storage is created
            pass
    try:
        return manager._raw_alloc(size)
    except MemoryError as e:
        asked = size if asked is None else int(asked)
        rounded = f" (rounded to {size} bytes)" if size != asked else ""
        detail = f"; the device said: {e}" if str(e) else ""
        raise MemoryError(
            f"out of memory on {manager.ctx}: asked for {asked} bytes ({asked / 2**20:.1f} MiB){rounded}; "
            f"plexnet held {before.bytes_in_use} bytes in use and {before.bytes_pooled} bytes pooled, "
            f"peak {before.peak} bytes; the pools were released and the allocation retried once"
            f"{detail}") from None
