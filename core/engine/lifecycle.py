"""Process life cycle of the threaded engines: stop them at interpreter exit (bounded by
``PLEXNET_ENGINE_SHUTDOWN_TIMEOUT``) and start them over in a forked child."""
from __future__ import annotations

import atexit
import os
import weakref
from typing import Any, Protocol

__all__ = ["track"]


class _Tracked(Protocol):
    def shutdown(self, timeout: float | None = None) -> None: ...

    def _after_fork_in_child(self) -> None: ...


_engines: "weakref.WeakSet[Any]" = weakref.WeakSet()


def track(engine: _Tracked) -> None:
    """Shut ``engine`` down at exit and reset it after ``fork`` (weakly referenced)."""
    _engines.add(engine)


def _shutdown_all() -> None:
    """At interpreter exit: let pending work finish (bounded), then stop the workers."""
    timeout = float(os.environ.get("PLEXNET_ENGINE_SHUTDOWN_TIMEOUT", "60"))
    for e in list(_engines):
        try:
            e.shutdown(timeout)
        except Exception:  # noqa: BLE001 - exit goes on
            pass


def _after_fork() -> None:
    for e in list(_engines):
        e._after_fork_in_child()


atexit.register(_shutdown_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
