"""NaiveEngine: runs every function at push time on the pushing thread.

For debugging: a failure shows up right where it was pushed in a debugger, and the
ordering guarantee holds trivially. Errors are still stored on variables and raised at
wait points, so programs behave the same as on the threaded engines.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

from ..base import EngineError
from ..context import HOST_DEVICE_TYPES as _HOST_TYPES, Context
from .base import (AsyncFn, Engine, EngineOpError, FnProperty, Var, check_not_in_engine,
                   mark_engine_thread, pending_error, raise_unreported, split_vars, SyncFn)
from .devices import device_hooks
from .runctx import run_context, stream_syncer

__all__ = ["NaiveEngine"]


class NaiveVar(Var):
    __slots__ = ("error", "deleted")

    def __init__(self) -> None:
        self.error: EngineOpError | None = None
        self.deleted = False


class NaiveEngine(Engine):
    kind = "NaiveEngine"

    def __init__(self) -> None:
        self._errors: list[EngineOpError] = []
        self._lock = threading.RLock()
        self._tls = threading.local()

    def _active(self) -> list[Context]:
        """Device contexts of the operations running on this thread (nested pushes)."""
        st = getattr(self._tls, "active", None)
        if st is None:
            st = self._tls.active = []
        return st

    def _device_rc(self, ctx: Context) -> Any:
        """The RunContext for ``ctx`` on the pushing thread. For a device with streams
        (GPU) the device is made current on this thread first, as an engine worker of
        that device would (else gpu(1) operations would run on the thread's current
        device), with one stream per thread and device."""
        if ctx.device_type in _HOST_TYPES:
            return run_context(ctx, "naive")
        b = device_hooks(ctx)
        b.activate(ctx.device_id)
        rcs = getattr(self._tls, "rcs", None)
        if rcs is None:
            rcs = self._tls.rcs = {}
        rc = rcs.get(ctx)
        if rc is None:
            rc = rcs[ctx] = run_context(ctx, f"naive/{threading.current_thread().name}",
                                        b.new_stream(ctx.device_id, "compute"))
        return rc

    def new_var(self) -> NaiveVar:
        return NaiveVar()

    def push_async(self, fn: AsyncFn, ctx: Context, const_vars: Sequence[Var] = (),
                   mutate_vars: Sequence[Var] = (), prop: FnProperty = FnProperty.NORMAL,
                   priority: int = 0, name: str | None = None) -> None:
        c, m = split_vars(const_vars, mutate_vars)
        for v in c + m:
            if v.deleted:  # type: ignore[attr-defined]
                raise EngineError(f"operation {name!r} uses a variable that was deleted")
        # not under a lock: an async function may push more work from its own thread
        self._run(fn, ctx, c, m, prop, name or "op")

    def _run(self, fn: AsyncFn, ctx: Context, c: tuple[Var, ...], m: tuple[Var, ...], prop: FnProperty, name: str) -> None:
        err = None
        if prop not in (FnProperty.DELETE_VAR, FnProperty.NO_SKIP):
            err = pending_error(c + m)
        if err is None:
            done = threading.Lock()  # released by on_complete (cheaper than an Event)
            done.acquire()
            box: list[BaseException | None] = [None]

            def on_complete(exc: BaseException | None = None) -> None:
                box[0] = exc
                done.release()

            obs = self.observers
            tokens = [o.on_start(name, ctx, "naive") for o in obs] if obs else ()
            # a delete only frees memory: it may run from a finalizer in the middle of
            # another operation, so it must not switch this thread's device
            device = prop != FnProperty.DELETE_VAR and ctx.device_type not in _HOST_TYPES
            stack = self._active() if device else None
            pushed = False
            try:
                rc = self._device_rc(ctx) if device else run_context(ctx, "naive")
                if stack is not None:
                    stack.append(ctx)
                    pushed = True
                with mark_engine_thread():
                    fn(rc, on_complete)
                done.acquire()
                sync = stream_syncer(rc)  # device work done before the operation is
                if sync is not None:
                    sync(rc.stream)
            except BaseException as e:  # noqa: BLE001 - stored and raised at the wait point
                box[0] = e
            if pushed:
                stack.pop()  # type: ignore[union-attr]
                if stack:  # a nested push (from inside an operation): give its device back
                    try:
                        device_hooks(stack[-1]).activate(stack[-1].device_id)
                    except BaseException:  # noqa: BLE001 - reported by that operation
                        pass
            for o, t in zip(obs, tokens):
                o.on_end(t)
            if box[0] is not None:
                err = box[0] if isinstance(box[0], EngineOpError) else EngineOpError(name, box[0])
                err.__cause__ = box[0] if err is not box[0] else err.__cause__
                with self._lock:
                    self._errors.append(err)
        for v in m:
            v.error = err
        if prop == FnProperty.DELETE_VAR:
            for v in m:
                v.deleted = True

    def push_delete(self, fn: SyncFn | None, ctx: Context, var: Var) -> None:
        def run(rctx: Any, on_complete: Callable[..., None]) -> None:
            if fn is not None:
                fn(rctx)
            on_complete()
        self.push_async(run, ctx, (), (var,), FnProperty.DELETE_VAR, 0, "delete_var")

    def wait_for_var(self, var: Var) -> None:
        check_not_in_engine("wait_for_var")
        err = var.error  # type: ignore[attr-defined]
        if err is not None:
            var.error = None  # type: ignore[attr-defined]
            with self._lock:
                if err in self._errors:
                    self._errors.remove(err)
            if not err.reported:
                raise err.report()

    def wait_for_all(self) -> None:
        check_not_in_engine("wait_for_all")
        with self._lock:
            errs, self._errors = self._errors, []
        raise_unreported(errs)
