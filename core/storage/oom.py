"""The out-of-memory path shared by the managers: release pools, retry, then explain."""
from __future__ import annotations

from typing import Any


def alloc_or_raise(manager: Any, size: int) -> Any:
    """``raw_alloc(size)``; on failure release every pool of the device and retry once,
    then raise a ``MemoryError`` saying what was asked and what is held."""
    try:
        return manager._raw_alloc(size)
    except MemoryError:
        pass
    from . import get
    get().release_all(manager.ctx)
    try:
        return manager._raw_alloc(size)
    except MemoryError:
        st = manager.stats()
        raise MemoryError(
            f"out of memory on {manager.ctx}: asked for {size} bytes ({size / 2**20:.1f} MiB); "
            f"plexnet holds {st.bytes_in_use} bytes in use and {st.bytes_pooled} pooled "
            f"(pools were released and the allocation retried)") from None
