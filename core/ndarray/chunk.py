"""Chunk: the storage block and engine variable behind one or more NDArray views."""
from __future__ import annotations

from typing import Any

from .. import engine as _engine_mod
from .. import storage as _storage_mod
from ..context import Context

__all__ = ["Chunk", "alloc_chunk"]


class Chunk:
    """Owns a storage ``Handle`` (or an external buffer) and the engine ``var`` that
    orders every operation on it. When the last view goes away the block is freed
    through ``Engine.push_delete``, i.e. only after pending operations are done."""

    __slots__ = ("handle", "var", "ctx", "engine", "ext", "__weakref__")

    def __init__(self, handle: Any, ctx: Context, eng: Any, ext: Any = None) -> None:
        self.handle = handle
        self.ctx = ctx
        self.engine = eng
        self.var = eng.new_var()
        self.ext = ext  # keeps an external (DLPack / numpy) buffer alive

    def __del__(self) -> None:
        h = self.handle
        try:
            if h is not None:
                self.engine.push_delete(lambda _rc, h=h: h.manager.free(h), self.ctx, self.var)
            else:
                self.engine.push_delete(None, self.ctx, self.var)
        except Exception:  # noqa: BLE001 - interpreter shutdown / engine gone
            pass


def alloc_chunk(nbytes: int, ctx: Context) -> Chunk:
    """A chunk of ``nbytes`` from the context's storage manager."""
    handle = _storage_mod.get().alloc(nbytes, ctx)
    return Chunk(handle, ctx, _engine_mod.get())
