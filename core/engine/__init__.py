"""The dependency engine (``plexnet.engine``).

``get()`` returns the process-wide engine, chosen by ``PLEXNET_ENGINE_TYPE`` (or MXNet's
``MXNET_ENGINE_TYPE``): ``NaiveEngine`` (synchronous, for debugging), ``ThreadedEngine``
(one worker pool) or ``ThreadedEnginePerDevice`` (default: worker pools per device).
"""
from __future__ import annotations

import os
import threading
from typing import Any

from .base import (AsyncFn, Engine, EngineOpError, FnProperty, Opr, SyncFn, Var,
                   in_engine_thread, op_name_prefix)
from .devices import DeviceHooks, set_device_resolver
from .naive import NaiveEngine
from .observers import (EngineObserver, add_observer_source, collect_observers, end_observers,
                        remove_observer_source, start_observers)
from .threaded import ThreadedEngine, ThreadedEnginePerDevice

__all__ = ["Engine", "EngineOpError", "FnProperty", "Opr", "Var", "SyncFn", "AsyncFn", "get",
           "set_engine", "create", "ENGINE_TYPES", "in_engine_thread", "refresh_observers",
           "add_observer_source", "remove_observer_source", "EngineObserver", "DeviceHooks",
           "set_device_resolver", "NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice",
           "op_name_prefix", "start_observers", "end_observers"]

DEFAULT_ENGINE = "ThreadedEnginePerDevice"
_engine: Engine | None = None
_lock = threading.Lock()


def _engine_types() -> dict[str, type[Engine]]:
    return {"NaiveEngine": NaiveEngine, "ThreadedEngine": ThreadedEngine,
            "ThreadedEnginePerDevice": ThreadedEnginePerDevice}


ENGINE_TYPES = ("NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice")


def create(kind: str | None = None) -> Engine:
    """A new engine of ``kind`` (default from the environment)."""
    kind = kind or os.environ.get("PLEXNET_ENGINE_TYPE") or os.environ.get("MXNET_ENGINE_TYPE") or DEFAULT_ENGINE
    types = _engine_types()
    if kind not in types:
        raise ValueError(f"unknown engine type {kind!r}; choose one of {', '.join(ENGINE_TYPES)}")
    return types[kind]()


def get() -> Engine:
    """The process-wide engine (created on first use)."""
    e = _engine
    if e is not None:
        return e
    with _lock:
        e = _engine
        if e is None:
            e = create()
            _set(e)
        return e


def _set(e: Engine) -> None:
    global _engine
    _engine = e
    refresh_observers()


def set_engine(kind: str | Engine) -> Engine:
    """Switch the process-wide engine (waits for the old one to finish first)."""
    new = kind if isinstance(kind, Engine) else create(kind)
    with _lock:
        old = _engine
        if old is not None:
            try:
                old.wait_for_all()
            finally:
                old.shutdown()
        _set(new)
    return new


def refresh_observers() -> None:
    """Install on the process-wide engine the observers that every subscribed source
    (``add_observer_source``: the profiler, the plugin manager's
    ``plexnet_engine_observers`` hook) wants now."""
    e = _engine
    if e is not None:
        e.set_observers(collect_observers())


class bulk:
    """``with engine.bulk(n):`` MXNet's bulk-size hint (kept for compatibility; the
    executor bulks consecutive operations itself, see ``PLEXNET_EXEC_BULK``)."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __enter__(self) -> "bulk":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass
