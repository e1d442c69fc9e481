"""RunContext construction shared by the engines (cached per context and worker)."""
from __future__ import annotations

from typing import Any, Callable

from ..context import Context, RunContext
from .devices import device_hooks

__all__ = ["run_context", "stream_syncer"]

_cache: dict[tuple[Context, str, Any], RunContext] = {}
_syncers: dict[int, Callable[[Any], None] | None] = {}


def run_context(ctx: Context, worker: str, stream: Any = None) -> RunContext:
    """The RunContext for ``ctx`` on ``worker`` (``xp`` from the device)."""
    key = (ctx, worker, id(stream) if stream is not None else None)
    rc = _cache.get(key)
    if rc is None:
        rc = _cache[key] = RunContext(ctx, stream, device_hooks(ctx).xp, worker)
    return rc


def stream_syncer(rc: RunContext | None) -> Callable[[Any], None] | None:
    """The device's ``synchronize`` for a RunContext with a device stream, else None.

    A function that enqueues device work returns before the device has done it; the
    engine would then treat the operation as finished and let other streams (copy
    workers, the host's ``asnumpy``, a reused storage block) use its outputs. As MXNet
    does after every GPU operator (``PushFCompute``: ``rctx.get_stream<gpu>()->Wait()``),
    the engines wait for the stream before they complete the operation."""
    if rc is None or rc.stream is None:
        return None
    k = id(rc)  # RunContexts live in _cache for good: their ids are stable
    try:
        return _syncers[k]
    except KeyError:
        pass
    try:
        s = getattr(device_hooks(rc.ctx), "synchronize", None)
    except Exception:  # noqa: BLE001 - an unusable device fails its operations elsewhere
        return None
    if _cache.get((rc.ctx, rc.worker, id(rc.stream))) is rc:
        _syncers[k] = s
    return s
