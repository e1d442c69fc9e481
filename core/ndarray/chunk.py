"""Chunk: the storage block and engine variable behind one or more NDArray views."""
from __future__ import annotations

from typing import Any

from .. import engine as _engine_mod
from .. import storage as _storage_mod
from ..context import Context
from ..storage import Storage as _Storage

__all__ = ["Chunk", "PooledChunk", "alloc_chunk"]


class Chunk:
    """The engine ``var`` that orders every operation on one buffer, plus what keeps the
    buffer alive.

    Small CPU buffers (below the backend's ``small_alloc_bytes``) and external buffers
    (DLPack, numpy views) are plain reference-counted arrays: every pushed function
    holds a reference to the arrays it touches, so memory cannot be reused while an
    operation still reads it, and nothing has to go through the engine on release.
    Pooled blocks use ``PooledChunk``, which returns the block through
    ``Engine.push_delete`` once pending operations are done.
    """

    __slots__ = ("handle", "var", "ctx", "engine", "ext", "__weakref__")

    def __init__(self, handle: Any, ctx: Context, eng: Any, ext: Any = None) -> None:
        self.handle = handle
        self.ctx = ctx
        self.engine = eng
        self.var = eng.new_var()
        self.ext = ext  # keeps an external (DLPack / numpy) buffer alive



class PooledChunk(Chunk):
    """A chunk whose block came from a storage manager."""

    __slots__ = ()

    def __del__(self) -> None:
        h = self.handle
        # the current engine: after ``engine.set_engine`` the variable's pending operations
        # are the new engine's (the old one was drained before the switch)
        eng: Any = _engine_mod._engine or self.engine
        try:
            eng.push_delete(lambda _rc, h=h: h.manager.free(h), self.ctx, self.var)
        except Exception:  # noqa: BLE001 - interpreter shutdown / engine gone
            pass


def alloc_chunk(nbytes: int, ctx: Context) -> PooledChunk:
    """A chunk of ``nbytes`` from the context's storage manager."""
    st = _storage_mod._storage
    m = st._managers.get(ctx) if st is not None and st.__class__ is _Storage else None
    # the manager straight from the process-wide Storage's table when it has one (what
    # Storage.alloc does, without its two calls); anything else through Storage.alloc
    handle = m.alloc(nbytes) if m is not None else _storage_mod.get().alloc(nbytes, ctx)
    return PooledChunk(handle, ctx, _engine_mod._engine or _engine_mod.get())
