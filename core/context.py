"""Device contexts: where data lives and where a function runs.

``Context`` is the static part (device type + id). ``RunContext`` is what the engine
decides at run time (the worker's stream), handed to every pushed function.
"""
from __future__ import annotations

import threading
import warnings
from typing import Any, Callable, NamedTuple

__all__ = ["Context", "RunContext", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "HOST_DEVICE_TYPES"]

#: device types whose memory is host memory (numpy arrays, no streams)
HOST_DEVICE_TYPES = frozenset(("cpu", "cpu_pinned", "cpu_shared"))


_DEFAULT_CTX_DEPRECATED = ("Context.default_ctx has been deprecated. Please use Context.current_context() "
                           "instead. Please use test_utils.set_default_context to set a default context")


class _MXClassPropertyMetaClass(type):
    """Gives ``Context`` MXNet 1.x's deprecated class property ``Context.default_ctx`` (MXNet's
    name for it: ``type(type(ctx))`` shows it)."""

    @property
    def default_ctx(cls) -> "Context":
        warnings.warn(_DEFAULT_CTX_DEPRECATED, DeprecationWarning, stacklevel=2)
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, val: "Context") -> None:
        warnings.warn(_DEFAULT_CTX_DEPRECATED, DeprecationWarning, stacklevel=2)
        _set_current(val)


class Context(metaclass=_MXClassPropertyMetaClass):
    """A device: ``Context('cpu', 0)``, ``Context('gpu', 1)``.

    Usable as a ``with`` block to set the default context, as in MXNet.
    """

    __slots__ = ("device_type", "device_id")
    device_type: str
    device_id: int
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {v: k for k, v in devtype2str.items()}
    _local = threading.local()

    def __init__(self, device_type: "str | Context", device_id: int = 0) -> None:
        if isinstance(device_type, Context):
            device_id = device_type.device_id
            device_type = device_type.device_type
        if not isinstance(device_type, str) or not device_type:
            raise ValueError(f"Context: device_type must be a non-empty string, got {device_type!r}")
        if int(device_id) < 0:
            raise ValueError(f"Context: device_id must be >= 0, got {device_id}")
        self.device_type = device_type
        self.device_id = int(device_id)

    @property
    def device_typeid(self) -> int:
        """MXNet's numeric device type (cpu=1, gpu=2, cpu_pinned=3)."""
        return self.devstr2type.get(self.device_type, 0)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Context) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self) -> "Context":
        stack = _stack()
        stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _stack().pop()

    def empty_cache(self) -> None:
        """Release every pooled block of this device back to the system."""
        for release in list(_cache_releasers):
            release(self)


def _stack() -> list[Context]:
    s = getattr(Context._local, "stack", None)
    if s is None:
        s = Context._local.stack = []
    return s


_DEFAULT = Context("cpu", 0)


def _set_current(ctx: Context) -> None:
    """Make ``ctx`` this thread's current context, as MXNet's ``Context._default_ctx.value
    = ctx`` (``Context.default_ctx = ``, ``test_utils.set_default_context``): inside a
    ``with`` block it replaces that block's context until the block exits."""
    stack = _stack()
    if stack:
        stack[-1] = ctx
    else:
        Context._local.base = ctx


def current_context() -> Context:
    """The innermost ``with ctx:`` block's context, else ``cpu(0)``."""
    s = _stack()
    return s[-1] if s else getattr(Context._local, "base", _DEFAULT)


def cpu(device_id: int = 0) -> Context:
    """The CPU context. ``device_id`` is accepted for MXNet compatibility."""
    return Context("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """Page-locked host memory (same as cpu where no GPU backend provides pinning)."""
    return Context("cpu_pinned", device_id)


def gpu(device_id: int = 0) -> Context:
    """A GPU context. Creating it always works; using it needs a GPU backend plugin
    (``plexnet-device-cuda``), else a clear error names what is missing."""
    return Context("gpu", device_id)


def num_gpus() -> int:
    """Number of GPUs the installed ``gpu`` backend sees (0 without one)."""
    count = _device_counter
    return count("gpu") if count is not None else 0


# Context is the bottom layer: the layers above that know devices and memory plug in here
# instead of being imported (plexnet.backends counts devices, plexnet.storage releases
# its pools on Context.empty_cache).
_device_counter: Callable[[str], int] | None = None
_cache_releasers: list[Callable[[Context], None]] = []


def set_device_counter(fn: Callable[[str], int] | None) -> None:
    """Install ``fn(device_type) -> number of usable devices`` (``num_gpus`` uses it)."""
    global _device_counter
    _device_counter = fn


def add_cache_releaser(fn: Callable[[Context], None]) -> None:
    """Call ``fn(ctx)`` on ``ctx.empty_cache()`` (the storage layer releases its pools)."""
    if fn not in _cache_releasers:
        _cache_releasers.append(fn)


class RunContext(NamedTuple):
    """Runtime information the engine hands to a pushed function.

    ``stream`` is the worker's device stream (``None`` on CPU); ``xp`` is the device's
    array module (numpy, cupy) so device-generic code needs no lookup; ``worker`` names
    the engine worker for profiling.
    """

    ctx: Context
    stream: Any
    xp: Any
    worker: str = "main"

    def get_stream(self) -> Any:
        return self.stream
