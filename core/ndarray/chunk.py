"""Chunk: the storage block and engine variable behind one or more NDArray views."""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .. import engine as _engine_mod
from .. import storage as _storage_mod
from ..context import Context
from ..storage import PooledStorageManager as _Pooled
from ..storage import Storage as _Storage

__all__ = ["Chunk", "PooledChunk", "alloc_chunk", "pooled_view"]


class Chunk:
    """The engine ``var`` that orders every operation on one buffer, plus what keeps the
    buffer alive.

    Small CPU buffers (below the backend's ``small_alloc_bytes``) and external buffers
    (DLPack, numpy views) are plain reference-counted arrays: every pushed function
    holds a reference to the arrays it touches, so memory cannot be reused while an
    operation still reads it, and nothing has to go through the engine on release.
    New host arrays from the default pool are reference-counted the same way: their
    block goes back to the pool when its last view dies (``pooled_view``). Other pooled
    blocks (other devices, an executor's planned memory) use ``PooledChunk``, which
    returns the block through ``Engine.push_delete`` once pending operations are done.
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


def _give_back(block: Any) -> None:
    h = block.handle
    try:
        h.manager.free(h)
    except Exception:  # noqa: BLE001 - interpreter shutdown
        pass


#: block size -> a ctypes array type over pooled blocks of that size whose instances, the
#: base of every view of the block, give the block back to its pool when they die
_BLOCK_TYPES: dict[int, type] = {}


def pooled_view(nbytes: int, ctx: Context, dt: np.dtype, shape: tuple) -> Any:
    """A numpy array of ``shape`` and ``dt`` on a block of the context's pool, or None where
    the context's storage is not the process-wide default pool of host memory.

    The block goes back to the pool when the last view of it dies, as the memory of a small
    array goes back to ``malloc``: every pushed function holds the raw arrays it touches, so
    no operation can still use a block that was given back. This costs no engine operation
    (``PooledChunk`` pushes a delete per array) and no variable to retire, and a numpy view
    handed out (``asnumpy`` of a host array is zero-copy) keeps its memory."""
    st = _storage_mod._storage
    m = st._managers.get(ctx) if st is not None and st.__class__ is _Storage else None
    if m is None or m.__class__ is not _Pooled:
        return None
    h = m.alloc(nbytes)
    buf = h.buf
    if buf.__class__ is not np.ndarray:  # a backend whose blocks are not host numpy arrays
        m.free(h)
        return None
    t: Any = _BLOCK_TYPES.get(h.size)
    if t is None:
        t = _BLOCK_TYPES[h.size] = type("PoolBlock", (ctypes.c_char * h.size,), {"__del__": _give_back})
    block = t.from_buffer(buf)
    block.handle = h
    return np.frombuffer(block, dt, nbytes // dt.itemsize).reshape(shape)
