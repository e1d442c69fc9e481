"""``mx.util``: MXNet 1.9.1's NumPy-shape switch (``is_np_shape``, ``set_np_shape``,
``np_shape``, ``use_np_shape``).

Under NumPy shape semantics (off by default, per thread as in MXNet) shape inference
reports an unknown dimension as -1 (legacy: 0) and a wholly unknown shape as ``None``
(legacy: ``()``), and reads -1 in given shapes as unknown. The rest of the NumPy interface
(``mx.np``/``npx``, ``is_np_array``) is not part of plexnet.
"""
from __future__ import annotations

import functools
import inspect
import os
import threading
from typing import Any, Callable, TypeVar

__all__ = ["is_np_shape", "set_np_shape", "np_shape", "use_np_shape", "getenv", "setenv"]

_F = TypeVar("_F")
_state = threading.local()


def is_np_shape() -> bool:
    """Whether NumPy shape semantics is active in this thread."""
    return bool(getattr(_state, "np_shape", False))


def set_np_shape(active: bool) -> bool:
    """Switch NumPy shape semantics on or off in this thread; returns the previous state."""
    prev = is_np_shape()
    _state.np_shape = bool(active)
    return prev


class _NumpyShapeScope:
    """``with`` scope that sets NumPy shape semantics and restores the previous state."""

    def __init__(self, is_np_shape: bool) -> None:  # noqa: FBT001 (MXNet's signature)
        self._enter_is_np_shape = bool(is_np_shape)
        self._prev_is_np_shape: bool | None = None

    def __enter__(self) -> _NumpyShapeScope:
        self._prev_is_np_shape = set_np_shape(self._enter_is_np_shape)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._prev_is_np_shape is not None and self._prev_is_np_shape != self._enter_is_np_shape:
            set_np_shape(self._prev_is_np_shape)


def np_shape(active: bool = True) -> _NumpyShapeScope:
    """A scope (``with mx.np_shape():``) with NumPy shape semantics on (or off)."""
    return _NumpyShapeScope(active)


def use_np_shape(func: _F) -> _F:
    """Decorate a function (or every method of a class) to run with NumPy shape semantics on."""
    if inspect.isclass(func):
        for name, method in inspect.getmembers(func, predicate=lambda m: inspect.isfunction(m) or
                                                 inspect.ismethod(m)):
            setattr(func, name, use_np_shape(method))
        return func
    if not callable(func):
        raise TypeError(f"use_np_shape can only decorate classes and callable objects, got {type(func).__name__}")
    f: Callable[..., Any] = func

    @functools.wraps(f)
    def _with_np_shape(*args: Any, **kwargs: Any) -> Any:
        with np_shape(active=True):
            return f(*args, **kwargs)

    return _with_np_shape  # type: ignore[return-value]


def getenv(name: str) -> str | None:
    """An environment variable's value, None when unset (MXNet reads its C runtime's
    environment; plexnet has only the process environment)."""
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set an environment variable (``None`` unsets it), as MXNet's ``util.setenv``."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
