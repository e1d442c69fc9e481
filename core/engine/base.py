"""The dependency-engine contract shared by every engine.

An engine runs pushed functions respecting one rule: *two functions that both touch a
variable, at least one of them mutating it, run in push order*. Reads of a variable may
run concurrently. Everything here is thread-safe: any thread may push (MXNet's engine
was single-pusher only).

Errors: an exception raised by a pushed function (or an observer around it) is stored on
the variables it mutates, which are then *poisoned*: every ``wait_for_var`` on them raises
that error, until an operation writes them successfully. An operation that reads a
poisoned variable is not run and passes the same error on to the variables it mutates
(``FnProperty.DELETE_VAR``/``NO_SKIP`` operations always run). An operation that only
writes a poisoned variable (without reading it) runs and, when it succeeds, cures it.
``wait_for_all`` raises the first error not raised yet, naming the operation, with the
original exception as ``__cause__``.

Floating-point exceptions: pushed functions run with numpy's error handling set to ignore
(``mark_engine_thread``), as MXNet's kernels, which never warn: ``nd.log(0)`` is ``-inf``
without a ``RuntimeWarning`` (which ``-W error`` would turn into the operation's error).
The pushing thread's own numpy settings are untouched.
"""
from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from enum import IntEnum
from typing import Any, Callable, Sequence

import numpy as np

from ..base import EngineError, PlexnetError
from ..context import Context, RunContext

__all__ = ["FnProperty", "Var", "Opr", "Engine", "EngineOpError", "SyncFn", "AsyncFn",
           "in_engine_thread", "mark_engine_thread", "as_op_error", "poison_of", "raise_poison",
           "split_vars"]

SyncFn = Callable[[RunContext], None]
#: ``fn(run_ctx, on_complete)``; call ``on_complete()`` when done, or
#: ``on_complete(exc)`` to report a failure, from any thread.
AsyncFn = Callable[[RunContext, Callable[..., None]], None]


class FnProperty(IntEnum):
    """Scheduling hints, as MXNet's ``FnProperty``."""

    NORMAL = 0
    COPY_FROM_GPU = 1
    COPY_TO_GPU = 2
    CPU_PRIORITIZED = 3
    ASYNC = 4
    DELETE_VAR = 5
    GPU_PRIORITIZED = 6
    NO_SKIP = 7
    #: plexnet addition: a cheap CPU function that the engine may run right away on the
    #: pushing thread when every variable it names is free at push time (otherwise it is
    #: queued as NORMAL). A worker hand-off costs more than such a function; NDArray uses
    #: it for small element-wise operations.
    INLINE = 8


class EngineOpError(PlexnetError):
    """Raised at a wait point for an exception that happened inside a pushed function.

    ``op_name`` names the operation, ``__cause__`` is the original exception (with its
    traceback).
    """

    def __init__(self, op_name: str, original: BaseException) -> None:
        super().__init__(f"operation {op_name!r} failed: {type(original).__name__}: {_safe_str(original)}")
        self.op_name = op_name
        self.original = original
        #: set once raised at a wait point; a reported error no longer skips operations
        self.reported = False

    def report(self) -> "EngineOpError":
        self.reported = True
        return self


def _safe_str(e: BaseException) -> str:
    """``str(e)``, or a stand-in when the exception's ``__str__`` itself raises."""
    try:
        return str(e)
    except BaseException as inner:  # noqa: BLE001 - an error message must never fail
        return f"<str() of the exception raised {type(inner).__name__}>"


class EngineIndexError(EngineOpError, IndexError):
    """An ``EngineOpError`` caused by an ``IndexError``: MXNet 1.9.1 raises ``IndexError``
    for out-of-bounds indices (e.g. ``gather_nd``), so ``except IndexError`` catches it too."""


def _root_cause(exc: BaseException) -> BaseException:
    for _ in range(16):  # bounded: wrapped errors nest a few levels at most
        nxt = getattr(exc, "original", None) or exc.__cause__
        if nxt is None or nxt is exc:
            break
        exc = nxt
    return exc


def as_op_error(op_name: str, exc: BaseException) -> EngineOpError:
    """``exc`` as the ``EngineOpError`` of operation ``op_name`` (cause: ``exc``)."""
    if isinstance(exc, EngineOpError):
        return exc
    cls = EngineIndexError if isinstance(_root_cause(exc), IndexError) else EngineOpError
    err = cls(op_name, exc)
    err.__cause__ = exc
    return err


def poison_of(vars_: Sequence["Var"]) -> "EngineOpError | None":
    """The error of the first poisoned variable among ``vars_`` (None if all are clean)."""
    for v in vars_:
        e: EngineOpError | None = v.error  # type: ignore[attr-defined]
        if e is not None:
            return e
    return None


def raise_poison(err: EngineOpError) -> None:
    """Raise a poisoned variable's error at a read (marks it reported; the traceback
    restarts at this read, the original one stays on ``__cause__``)."""
    err.reported = True
    raise err.with_traceback(None)


def raise_unreported(errors: Sequence[EngineOpError]) -> None:
    """``wait_for_all``'s end: raise the first of ``errors`` not yet reported (the
    other unreported ones count as reported with it)."""
    errs = [e for e in errors if not e.reported]
    if errs:
        for e in errs[1:]:
            e.report()
        raise errs[0].report()


class Var:
    """An engine variable: a token standing for a resource that functions read or
    mutate. Engines subclass it to keep their scheduling state."""

    __slots__ = ("__weakref__",)


class Opr:
    """A pre-built operation (``new_operator``) that can be pushed many times."""

    __slots__ = ("fn", "const_vars", "mutate_vars", "rw_vars", "prop", "name", "deleted")

    def __init__(self, fn: AsyncFn, const_vars: Sequence[Var], mutate_vars: Sequence[Var],
                 prop: FnProperty, name: str | None, rw_vars: Sequence[Var] = ()) -> None:
        self.fn = fn
        self.const_vars = tuple(const_vars)
        self.mutate_vars = tuple(mutate_vars)
        self.rw_vars = tuple(rw_vars)       # mutated variables that are read as well
        self.prop = prop
        self.name = name
        self.deleted = False


_tls = threading.local()


def in_engine_thread() -> bool:
    """True while the current thread runs a function pushed to an engine."""
    return getattr(_tls, "depth", 0) > 0


class mark_engine_thread:
    """``with mark_engine_thread():`` around running a pushed function: marks the thread
    and, on the outermost entry, ignores numpy's floating-point errors until the exit
    (module docstring; about 1 us, once per worker loop and per operation run inline)."""

    __slots__ = ()

    def __enter__(self) -> None:
        depth = getattr(_tls, "depth", 0)
        if depth == 0:
            quiet = np.errstate(all="ignore")
            quiet.__enter__()
            _tls.quiet = quiet
        _tls.depth = depth + 1

    def __exit__(self, *exc: Any) -> None:
        _tls.depth -= 1
        if _tls.depth == 0:
            quiet, _tls.quiet = _tls.quiet, None
            quiet.__exit__(None, None, None)


class op_name_prefix:
    """``with op_name_prefix('MyOp::'):`` names every operation this thread pushes
    ``'MyOp::<name>'`` (a custom operator's callbacks: MXNet's profiler reports the
    operations they run as ``'MyOp::_zeros'`` under "Custom Operator")."""

    __slots__ = ("prefix", "old")

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.old: str | None = None

    def __enter__(self) -> None:
        self.old = getattr(_tls, "prefix", None)
        _tls.prefix = self.prefix

    def __exit__(self, *exc: Any) -> None:
        _tls.prefix = self.old


def prefixed_name(name: str | None, fn: Any) -> str | None:
    """``name`` with this thread's ``op_name_prefix`` (unchanged without one)."""
    pre: str | None = getattr(_tls, "prefix", None)
    if pre is None:
        return name
    return pre + (name or str(getattr(fn, "__name__", "op")))


def check_not_in_engine(what: str) -> None:
    if getattr(_tls, "depth", 0) > 0:
        raise EngineError(f"{what} was called from inside a function running on the engine; this would "
                          f"deadlock. Declare the variable as a dependency of the pushed function instead.")


VarLists = tuple[tuple[Var, ...], tuple[Var, ...], tuple[Var, ...]]


def split_vars(const_vars: Sequence[Var], mutate_vars: Sequence[Var]) -> VarLists:
    """Normalise dependency lists to ``(reads, writes, read_writes)``: a variable both
    read and mutated counts as mutated (and is listed in ``read_writes`` too, since a
    poisoned one must stop the operation); duplicates are dropped (order kept)."""
    m = tuple(dict.fromkeys(mutate_vars))
    if not const_vars:
        return (), m, ()
    ms = set(m)
    cs = dict.fromkeys(const_vars)
    c = tuple(v for v in cs if v not in ms)
    rw = tuple(v for v in m if v in cs) if len(c) != len(cs) else ()
    return c, m, rw


class Engine(ABC):
    """Interface of every engine (see the module docstring for the guarantees)."""

    #: name used by ``PLEXNET_ENGINE_TYPE``
    kind: str = ""

    @abstractmethod
    def new_var(self) -> Var:
        """A fresh variable (cheap)."""

    @abstractmethod
    def push_async(self, fn: AsyncFn, ctx: Context, const_vars: Sequence[Var] = (),
                   mutate_vars: Sequence[Var] = (), prop: FnProperty = FnProperty.NORMAL,
                   priority: int = 0, name: str | None = None) -> None:
        """Schedule ``fn(run_ctx, on_complete)``; it counts as running until
        ``on_complete`` is called (possibly from another thread)."""

    def push_sync(self, fn: SyncFn, ctx: Context, const_vars: Sequence[Var] = (),
                  mutate_vars: Sequence[Var] = (), prop: FnProperty = FnProperty.NORMAL,
                  priority: int = 0, name: str | None = None) -> None:
        """Schedule ``fn(run_ctx)``; done when it returns."""
        def run(rctx: RunContext, on_complete: Callable[..., None]) -> None:
            fn(rctx)
            on_complete()
        self.push_async(run, ctx, const_vars, mutate_vars, prop, priority, name or _fn_name(fn))

    @abstractmethod
    def push_delete(self, fn: SyncFn | None, ctx: Context, var: Var) -> None:
        """Run ``fn(run_ctx)`` (e.g. free memory) once every operation pushed so far on
        ``var`` has finished, then retire ``var``; using it afterwards is an error."""

    def new_operator(self, fn: AsyncFn, const_vars: Sequence[Var], mutate_vars: Sequence[Var],
                     prop: FnProperty = FnProperty.NORMAL, name: str | None = None) -> Opr:
        """Pre-build an operation to push many times with ``push``."""
        c, m, rw = split_vars(const_vars, mutate_vars)
        return Opr(fn, c, m, prop, name or _fn_name(fn), rw)

    def push(self, opr: Opr, ctx: Context, priority: int = 0) -> None:
        """Push a pre-built operation."""
        if opr.deleted:
            raise EngineError(f"operation {opr.name!r} was deleted")
        self.push_async(opr.fn, ctx, opr.const_vars + opr.rw_vars, opr.mutate_vars, opr.prop, priority, opr.name)

    def delete_operator(self, opr: Opr) -> None:
        """Forget a pre-built operation once its pushes have finished."""
        opr.deleted = True

    @abstractmethod
    def wait_for_var(self, var: Var) -> None:
        """Block until every operation pushed so far that touches ``var`` has finished;
        raise its stored error, if any."""

    @abstractmethod
    def wait_for_all(self) -> None:
        """Block until every pushed operation has finished; raise the first error not
        yet raised."""

    def shutdown(self) -> None:
        """Finish pending work and stop worker threads."""
        self.wait_for_all()

    def set_observers(self, observers: Sequence[Any]) -> None:
        """Install profiler observers (see ``hookspecs.plexnet_engine_observers``)."""
        self.observers = tuple(observers)

    observers: tuple[Any, ...] = ()


def _fn_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
