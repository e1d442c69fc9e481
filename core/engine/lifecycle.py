"""Process life cycle of the engines: at interpreter exit, finish pending work (bounded
by ``PLEXNET_ENGINE_SHUTDOWN_TIMEOUT``), report what failed unseen or was dropped, and
start over in a forked child.

At exit, an operation error that no wait point raised is printed to stderr (operation
name, exception) and the process exits with status 1 (``os._exit`` after flushing
stdout and stderr, since an ``atexit`` handler cannot change the status otherwise; set
``PLEXNET_ENGINE_EXIT_ON_ERROR=0`` to only print). Operations that did not finish within
the timeout are named on stderr.
"""
from __future__ import annotations

import atexit
import os
import sys
import weakref
from typing import Any, Protocol

from .base import EngineOpError, _safe_str

__all__ = ["track"]


class _Tracked(Protocol):
    def _stop(self, timeout: float | None) -> list[str]: ...

    def _unreported(self) -> list[EngineOpError]: ...

    def _after_fork_in_child(self) -> None: ...


_engines: "weakref.WeakSet[Any]" = weakref.WeakSet()


def track(engine: _Tracked) -> None:
    """Shut ``engine`` down at exit and reset it after ``fork`` (weakly referenced)."""
    _engines.add(engine)


def exit_report(timeout: float) -> tuple[list[str], list[str]]:
    """Stop every engine (waiting up to ``timeout`` s each); the lines to print about
    unreported errors and about dropped operations."""
    errors: list[str] = []
    dropped: list[str] = []
    for e in list(_engines):
        try:
            left = e._stop(timeout)
            errs = e._unreported()
        except Exception:  # noqa: BLE001 - exit goes on
            continue
        kind = getattr(e, "kind", type(e).__name__)
        for err in errs:
            orig = err.original
            errors.append(f"plexnet: {kind}: operation {err.op_name!r} failed and no wait point raised it: "
                          f"{type(orig).__name__}: {_safe_str(orig)}")
        if left:
            dropped.append(f"plexnet: {kind}: shutdown timed out after {timeout:g} s "
                           f"(PLEXNET_ENGINE_SHUTDOWN_TIMEOUT); dropped: {', '.join(left)}")
    return errors, dropped


def _shutdown_all() -> None:
    try:
        timeout = float(os.environ.get("PLEXNET_ENGINE_SHUTDOWN_TIMEOUT", "60"))
    except ValueError:
        timeout = 60.0
    errors, dropped = exit_report(timeout)
    if not errors and not dropped:
        return
    try:
        sys.stdout.flush()
        sys.stderr.write("".join(line + "\n" for line in errors + dropped))
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - stdio closed
        pass
    if errors and os.environ.get("PLEXNET_ENGINE_EXIT_ON_ERROR", "1") != "0":
        os._exit(1)


def _after_fork() -> None:
    for e in list(_engines):
        e._after_fork_in_child()


atexit.register(_shutdown_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
