"""The engine's observer hook: who watches operations start and end.

An observer has ``on_start(name, ctx, worker) -> token`` and ``on_end(token)``; the
engines call them around every operation (see ``Engine.set_observers``). Higher layers
subscribe by registering a *source*, a function returning the observers they want
installed right now: the profiler registers one (its recorder while it runs), the plugin
manager another (the ``plexnet_engine_observers`` hook). ``plexnet.engine.
refresh_observers()`` asks every source and installs the union on the process-wide
engine; a source calls it when its answer changes (the profiler on ``set_state``).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Protocol

__all__ = ["EngineObserver", "ObserverSource", "add_observer_source", "remove_observer_source",
           "collect_observers", "start_observers", "end_observers"]


class EngineObserver(Protocol):
    """What the engines call around each operation (on worker threads: be fast and
    thread-safe). An exception an observer raises fails that operation."""

    def on_start(self, name: str, ctx: Any, worker: str) -> Any: ...

    def on_end(self, token: Any) -> None: ...


ObserverSource = Callable[[], Iterable[Any]]

_sources: list[ObserverSource] = []
_lock = threading.Lock()


def add_observer_source(source: ObserverSource) -> None:
    """Subscribe: ``source()`` is asked for observers at every refresh (once per
    function object, however often it is added)."""
    with _lock:
        if source not in _sources:
            _sources.append(source)


def remove_observer_source(source: ObserverSource) -> None:
    """Unsubscribe ``source`` (no error when it was not subscribed)."""
    with _lock:
        if source in _sources:
            _sources.remove(source)


def collect_observers() -> list[Any]:
    """The observers every source wants now, in subscription order. A source that
    raises contributes none (observers are optional; the others still count)."""
    with _lock:
        sources = list(_sources)
    obs: list[Any] = []
    for s in sources:
        try:
            obs.extend(s() or ())
        except Exception:  # noqa: BLE001 - a broken source must not stop the engine
            pass
    return obs


def start_observers(obs: tuple[Any, ...], name: str, ctx: Any,
                    wname: str) -> tuple[list[Any], BaseException | None]:
    """``on_start`` of every observer; when one raises, the ones already started are
    ended and the exception is returned (the operation fails with it)."""
    toks: list[Any] = []
    for o in obs:
        try:
            toks.append(o.on_start(name, ctx, wname))
        except BaseException as e:  # noqa: BLE001 - becomes the operation's error
            end_observers(obs, toks)
            return toks, e
    return toks, None


def end_observers(obs: tuple[Any, ...], toks: list[Any]) -> BaseException | None:
    """``on_end`` of every started observer (all of them, whatever raises); the first
    exception raised, if any."""
    first = None
    for o, t in zip(obs, toks):
        try:
            o.on_end(t)
        except BaseException as e:  # noqa: BLE001 - becomes the operation's error
            if first is None:
                first = e
    return first
