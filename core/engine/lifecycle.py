"""Process life cycle of the engines: at interpreter exit, finish pending work (bounded
by ``PLEXNET_ENGINE_SHUTDOWN_TIMEOUT``), report what failed unseen or was dropped, and
start over in a forked child.

At exit, an operation error that no wait point raised is printed to stderr (operation
name, exception) and the process exits with status 1 (``os._exit`` after flushing
stdout and stderr, since an ``atexit`` handler cannot change the status otherwise; set
``PLEXNET_ENGINE_EXIT_ON_ERROR=0`` to only print). Operations that did not finish within
the timeout are named on stderr.

An exit caused by Ctrl-C (an unhandled ``KeyboardInterrupt``) does not drain the backlog:
the user asked to stop, so queued operations are dropped (one line on stderr says how many)
and only the running ones may finish (``INTERRUPT_GRACE_S``: a worker still inside a compiled
library while the interpreter finalises can abort the process), as MXNet's script exits
within a fraction of a second. Before (session 8) the exit drained the backlog for up to
``PLEXNET_ENGINE_SHUTDOWN_TIMEOUT`` (60 s) while the terminal looked hung.
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


#: after Ctrl-C, how long the running operations may take to return (the queued ones are dropped)
INTERRUPT_GRACE_S = 2.0


def _interrupted() -> bool:
    """Whether the interpreter exits because of an unhandled KeyboardInterrupt (Ctrl-C):
    Python sets ``sys.last_type`` when it prints the uncaught exception. Not in an
    interactive session, where it stays set from an earlier command's interrupt."""
    last = getattr(sys, "last_type", None)
    return isinstance(last, type) and issubclass(last, KeyboardInterrupt) and not hasattr(sys, "ps1")


def _shutdown_all() -> None:
    try:
        timeout = float(os.environ.get("PLEXNET_ENGINE_SHUTDOWN_TIMEOUT", "60"))
    except ValueError:
        timeout = 60.0
    if _interrupted():
        n = 0
        for e in list(_engines):
            stop = getattr(e, "_interrupt", None)   # engines with worker threads (NaiveEngine: none)
            try:
                n += stop(INTERRUPT_GRACE_S) if stop is not None else 0
            except Exception:  # noqa: BLE001 - exit goes on
                continue
        if n:
            try:
                sys.stderr.write(f"plexnet: interrupted; {n} pending engine operation(s) dropped\n")
                sys.stderr.flush()
            except Exception:  # noqa: BLE001 - stderr closed
                pass
        return
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
