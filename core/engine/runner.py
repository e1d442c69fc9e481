"""Running one ready operation of the threaded engines: observers, error capture,
skipping operations whose inputs failed, and completion of asynchronous functions.

``Runner._execute`` is the only place an operation's function is called, whether on a
worker thread, on the pushing thread (ready ``INLINE`` / ``ASYNC`` operations) or
nested inside another operation.
"""
from __future__ import annotations

import threading
from typing import Any

from ..context import Context, RunContext
from .base import EngineOpError, FnProperty, mark_engine_thread, pending_error
from .runctx import run_context, stream_syncer
from .scheduler import Scheduler, _end, _op_name
from .var import _Op

__all__ = ["Runner", "worker_stream"]

_NOSKIP = frozenset((int(FnProperty.DELETE_VAR), int(FnProperty.NO_SKIP)))
get_ident = threading.get_ident

#: per worker thread: (synchronize, stream) of its current RunContext, or None (host)
worker_stream = threading.local()


class Runner(Scheduler):
    """Calls operation functions and turns what they do into bookkeeping."""

    def _execute(self, op: _Op, rc: RunContext, wname: str, mypool: Any) -> None:
        """Run one ready operation (on the calling thread)."""
        if self._errors and self._skip(op, mypool):
            return
        obs = self.observers
        toks = [o.on_start(_op_name(op), op.ctx, wname) for o in obs] if obs else None
        if op.sync:
            try:
                op.fn(rc)
                if rc.stream is not None:  # device work is done before the operation is
                    sync = stream_syncer(rc)
                    if sync is not None:
                        sync(rc.stream)
            except BaseException as e:
                if toks is not None:
                    _end(obs, toks)
                self._fail(op, e, mypool)
                return
            if toks is not None:
                _end(obs, toks)
            self._finish(op, None, mypool)
            return
        if toks is not None:
            op.tok = (obs, toks)
        # on_complete called on this thread while fn runs: the worker takes the next
        # ready operation itself once fn returns, so _finish need not wake another one
        op.runner = get_ident()
        op.runpool = mypool
        try:
            op.fn(rc, op.on_complete)
        except BaseException as e:
            self._async_raised(op, e, mypool)

    def _run_here(self, op: _Op, ctx: Context) -> None:
        """Run a ready ``INLINE`` / ``ASYNC`` operation on the pushing thread."""
        with mark_engine_thread():
            self._execute(op, run_context(ctx, "pusher"), "pusher", None)

    def _fail(self, op: _Op, exc: BaseException, mypool: Any) -> None:
        err = exc if isinstance(exc, EngineOpError) else EngineOpError(_op_name(op), exc)
        if err is not exc:
            err.__cause__ = exc
        self._finish(op, err, mypool, True)

    def _skip(self, op: _Op, mypool: Any) -> bool:
        """Skip ``op`` if one of its variables holds an unreported error."""
        if op.prop in _NOSKIP:
            return False
        err = pending_error(op.c) or pending_error(op.m)
        if err is None:
            return False
        if not op.sync:
            op.done = True
        self._finish(op, err, mypool)
        return True

    def _complete_async(self, op: _Op, exc: BaseException | None) -> None:
        """``on_complete(exc)`` of an asynchronous operation (any thread)."""
        ws = getattr(worker_stream, "sync", None)  # None on host workers: the common case
        if ws is not None and exc is None and op.runner == get_ident():
            # completed on the worker running it (an executor segment...): its device
            # work must be done first, as for synchronous functions (see stream_syncer)
            try:
                ws[0](ws[1])
            except BaseException as e:  # noqa: BLE001 - a device error fails the operation
                exc = e
        if op.tok is not None:
            obs, toks = op.tok
            op.tok = None
            _end(obs, toks)
        mypool = op.runpool if op.runner == get_ident() else None
        if exc is None:
            self._finish(op, None, mypool)
        else:
            self._fail(op, exc, mypool)

    def _async_raised(self, op: _Op, e: BaseException, mypool: Any) -> None:
        """An asynchronous function raised instead of returning."""
        if op.done:
            # completed, then raised: the dependents may already run; report it at the
            # next wait_for_all.
            err = EngineOpError(_op_name(op), e)
            err.__cause__ = e
            with self._lock:
                self._errors.append(err)
            return
        op.done = True
        if op.tok is not None:
            _end(*op.tok)
            op.tok = None
        self._fail(op, e, mypool)
