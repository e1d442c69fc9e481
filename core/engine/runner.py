"""Running one ready operation: observers, error capture, skipping operations whose
inputs are poisoned, and completion of asynchronous functions.

``Runner._execute`` is the only place an operation's function is called, whether on a
worker thread, on the pushing thread (ready ``INLINE`` / ``ASYNC`` operations, every
operation of the ``NaiveEngine``) or for a nested push. Whatever the function, an
observer or a stream synchronisation raises - even an exception whose ``__str__``
raises - becomes that operation's error: the operation completes and the calling
thread (a worker) lives on.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

from ..base import EngineError
from ..context import Context, RunContext
from .base import EngineOpError, FnProperty, _safe_str, as_op_error, mark_engine_thread
from .observers import end_observers, start_observers
from .runctx import run_context, stream_syncer
from .scheduler import Scheduler, _op_name
from .var import _Op

__all__ = ["Runner", "worker_stream", "report_escape"]

_NOSKIP = frozenset((int(FnProperty.DELETE_VAR), int(FnProperty.NO_SKIP)))
get_ident = threading.get_ident

#: per worker thread: (synchronize, stream) of its current RunContext, or None (host)
worker_stream = threading.local()


class Runner(Scheduler):
    """Calls operation functions and turns what they do into bookkeeping."""

    def _execute(self, op: _Op, rc: RunContext, wname: str, mypool: Any) -> None:
        """Run one ready operation on the calling thread; never raises."""
        if self._poisoned and self._skip(op, mypool):
            return
        obs = self.observers
        toks = None
        if obs:
            toks, exc = start_observers(obs, _op_name(op), op.ctx, wname)
            if exc is not None:
                if not op.sync:
                    op.done = True
                self._fail(op, exc, mypool)
                return
        if op.sync:
            exc = None
            try:
                op.fn(rc)
                if rc.stream is not None:  # device work is done before the operation is
                    sync = stream_syncer(rc)
                    if sync is not None:
                        sync(rc.stream)
            except BaseException as e:  # noqa: BLE001 - stored on the outputs
                exc = e
            if toks is not None:
                end_exc = end_observers(obs, toks)
                exc = exc or end_exc
            if exc is None:
                self._finish(op, None, mypool)
            else:
                self._fail(op, exc, mypool)
            return
        if toks is not None:
            op.tok = (obs, toks)
        # on_complete called on this thread while fn runs: the worker takes the next
        # ready operation itself once fn returns, so _finish need not wake another one
        op.runner = get_ident()
        op.runpool = mypool
        try:
            op.fn(rc, op.on_complete)
        except BaseException as e:  # noqa: BLE001 - stored on the outputs
            self._async_raised(op, e, mypool)

    def _run_here(self, op: _Op, ctx: Context) -> None:
        """Run a ready ``INLINE`` / ``ASYNC`` operation on the pushing thread."""
        with mark_engine_thread():
            self._execute(op, run_context(ctx, "pusher"), "pusher", None)

    def _fail(self, op: _Op, exc: BaseException, mypool: Any) -> None:
        try:
            err = as_op_error(_op_name(op), exc)
        except BaseException as e:  # noqa: BLE001 - e.g. MemoryError: still complete the op
            err = EngineOpError(_op_name(op), e)
        self._finish(op, err, mypool, True)

    def _skip(self, op: _Op, mypool: Any) -> bool:
        """Do not run ``op`` when a variable it reads is poisoned: pass the error on."""
        if op.prop in _NOSKIP:
            return False
        err = None
        for v in op.c:
            if v.error is not None:
                err = v.error
                break
        else:
            for v in op.rw:
                if v.error is not None:
                    err = v.error
                    break
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
            end_exc = end_observers(obs, toks)
            exc = exc or end_exc
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
            self._record(as_op_error(_op_name(op), e))
            return
        op.done = True
        if op.tok is not None:
            end_observers(*op.tok)
            op.tok = None
        self._fail(op, e, mypool)

    def _completed_twice(self, op: _Op) -> None:
        """A second ``on_complete``: a programming error in the asynchronous function.
        Raised to its caller and reported by the next ``wait_for_all``."""
        exc = EngineError(f"operation {_op_name(op)!r}: on_complete was called more than once")
        self._record(as_op_error(_op_name(op), exc))
        raise exc

    def _record(self, err: EngineOpError) -> None:
        with self._lock:
            self._errors.append(err)


def report_escape(where: str, e: BaseException) -> None:
    """Last resort of a worker loop: something escaped the bookkeeping itself (a bug);
    say so on stderr and keep the thread alive."""
    try:
        sys.stderr.write(f"plexnet engine: internal error in {where}: {type(e).__name__}: {_safe_str(e)}\n")
    except BaseException:  # noqa: BLE001 - stderr closed at exit
        pass
