"""RunContext construction shared by the engines (cached per context and worker)."""
from __future__ import annotations

from typing import Any

from ..context import Context, RunContext

_cache: dict[tuple[Context, str, Any], RunContext] = {}


def run_context(ctx: Context, worker: str, stream: Any = None) -> RunContext:
    """The RunContext for ``ctx`` on ``worker`` (``xp`` from the device backend)."""
    key = (ctx, worker, id(stream) if stream is not None else None)
    rc = _cache.get(key)
    if rc is None:
        from ..backends import get_backend
        rc = _cache[key] = RunContext(ctx, stream, get_backend(ctx).xp, worker)
    return rc


def stream_syncer(rc: RunContext | None) -> Any:
    """``backend.synchronize`` for a RunContext with a device stream, else None.

    A function that enqueues device work returns before the device has done it; the
    engine would then treat the operation as finished and let other streams (copy
    workers, the host's ``asnumpy``, a reused storage block) use its outputs. As MXNet
    does after every GPU operator (``PushFCompute``: ``rctx.get_stream<gpu>()->Wait()``),
    the engines wait for the stream before they complete the operation."""
    if rc is None or rc.stream is None:
        return None
    from ..backends import get_backend
    try:
        return getattr(get_backend(rc.ctx), "synchronize", None)
    except Exception:  # noqa: BLE001 - an unusable backend fails its operations elsewhere
        return None
