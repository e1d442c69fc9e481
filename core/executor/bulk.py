"""Bulk execution: consecutive nodes of one device pushed as one engine operation.

Each node becomes a small closure (``call(run_ctx)``) built at bind time with its
operator, array lists, ``req`` list and resources. A *segment* is up to ``max_nodes``
consecutive closures run by one engine function; it reads the engine variables of every
array its nodes read and mutates those of every array they write (including the
resources they use), so the engine orders segments against each other and against the
user's NDArray operations (``w -= lr * g`` after ``backward`` waits for the segment that
writes ``g``, the next ``forward`` waits for that update). With bulking off, every node
is its own engine operation.

Environment (read at bind time), as MXNet's ``MXNET_EXEC_BULK_EXEC_*``:

``PLEXNET_EXEC_BULK_EXEC_TRAIN`` (1)        bulk when the executor is bound for training
``PLEXNET_EXEC_BULK_EXEC_INFERENCE`` (1)    bulk when bound for inference only
``PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD`` / ``_BWD`` (defaults:
``PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN``, 15)   segment size in training
``PLEXNET_EXEC_BULK_EXEC_MAX_NODE_INFERENCE`` (0: no limit)   segment size in inference
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..base import PlexnetError
from ..env import env_flag, env_int
from ..tape.bulk import segment_vars

__all__ = ["Segment", "make_segments", "bulk_settings", "env_flag", "env_int"]


def bulk_settings(training: bool, bulk: bool | None) -> tuple[bool, int, int]:
    """``(enabled, max forward nodes, max backward nodes)`` per segment (0: no limit)."""
    if training:
        on = env_flag("PLEXNET_EXEC_BULK_EXEC_TRAIN", True) if bulk is None else bool(bulk)
        base = env_int("PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", 15)
        fwd = env_int("PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD", base)
        bwd = env_int("PLEXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD", base)
        return on, fwd, bwd
    on = env_flag("PLEXNET_EXEC_BULK_EXEC_INFERENCE", True) if bulk is None else bool(bulk)
    n = env_int("PLEXNET_EXEC_BULK_EXEC_MAX_NODE_INFERENCE", 0)
    return on, n, n


class Segment:
    """Consecutive node closures pushed as one engine operation. An *asynchronous*
    segment holds a single operator that completes through a callback (``is_async``
    operators such as ``Custom``)."""

    __slots__ = ("names", "calls", "reads", "writes", "opr", "is_async")

    def __init__(self, names: list[str], calls: list[Callable[..., None]], reads: list[Any],
                 writes: list[Any], is_async: bool = False) -> None:
        self.names = names
        self.calls = tuple(calls)
        self.reads = reads
        self.writes = writes
        self.opr: Any = None
        self.is_async = is_async

    def build(self, engine: Any, phase: str) -> Any:
        calls = self.calls
        names = self.names
        if self.is_async:
            call = calls[0]
            name = names[0]

            def run(rc: Any, on_complete: Callable[..., None]) -> None:
                def done(exc: BaseException | None = None) -> None:
                    if exc is None:
                        on_complete()
                    else:
                        err = _node_error(phase, name, exc)
                        err.__cause__ = exc
                        on_complete(err)
                try:
                    call(rc, done)
                except Exception as e:  # noqa: BLE001
                    raise _node_error(phase, name, e) from e
        elif len(calls) == 1:
            call = calls[0]
            name = names[0]

            def run(rc: Any, on_complete: Callable[..., None]) -> None:
                try:
                    call(rc)
                except Exception as e:  # noqa: BLE001 - say which node failed
                    raise _node_error(phase, name, e) from e
                on_complete()
        else:
            def run(rc: Any, on_complete: Callable[..., None]) -> None:
                i = 0
                try:
                    for c in calls:
                        c(rc)
                        i += 1
                except Exception as e:  # noqa: BLE001
                    raise _node_error(phase, names[i], e) from e
                on_complete()
        # self.reads holds only what the segment reads from before it (see _seg); one it
        # also writes goes in both lists, so the engine skips the segment when that variable
        # is poisoned instead of curing it (executor memory units hold several entries)
        ws = list(dict.fromkeys(self.writes))
        rs = list(dict.fromkeys(self.reads))
        label = f"{phase}:{names[0]}" + (f"..{names[-1]}" if len(names) > 1 else "")
        self.opr = engine.new_operator(run, rs, ws, name=label)
        return self.opr


def _node_error(phase: str, name: str, e: BaseException) -> PlexnetError:
    return PlexnetError(f"executor {phase} failed in node {name!r}: {type(e).__name__}: {e}")


def make_segments(items: Sequence[tuple], enabled: bool, max_nodes: int) -> list[Segment]:
    """Group ``(name, call, read_vars, write_vars, is_async)`` items into segments:
    consecutive synchronous items, at most ``max_nodes`` (0: no limit) per segment when
    bulking is enabled, one per segment otherwise; an asynchronous item always alone."""
    segs: list[Segment] = []
    cur: list[tuple] = []
    limit = max_nodes if (enabled and max_nodes > 0) else (1 if not enabled else max(len(items), 1))
    for it in items:
        if len(it) > 4 and it[4]:
            if cur:
                segs.append(_seg(cur))
                cur = []
            segs.append(_seg([it], is_async=True))
            continue
        cur.append(it)
        if len(cur) >= limit:
            segs.append(_seg(cur))
            cur = []
    if cur:
        segs.append(_seg(cur))
    return segs


def _seg(items: list[tuple], is_async: bool = False) -> Segment:
    reads, writes = segment_vars(items)
    return Segment([it[0] for it in items], [it[1] for it in items], reads, writes, is_async)
