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
