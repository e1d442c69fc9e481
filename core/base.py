"""Errors and version constants shared by every part of plexnet."""
from __future__ import annotations

import ctypes
import os
import platform
from typing import Any

import numpy as np

__all__ = ["PlexnetError", "MXNetError", "NotImplementedForSymbol", "py_str", "ShapeError", "InferTypeError",
           "PluginError", "EngineError", "__version__", "API_VERSION", "mx_real_t", "numeric_types", "integer_types",
           "string_types", "data_dir", "data_dir_default", "mx_int", "mx_uint", "mx_int64", "mx_float",
           "mx_float_p", "c_str", "c_str_array", "c_array", "c_array_buf"]

__version__ = "0.1.0"
#: Version of the plugin-facing API (hookspecs, registries, contracts). Plugins declare
#: the major version they were written for; a different major is reported, not loaded.
API_VERSION = "1.0"
#: MXNet's default real type (``mx.base.mx_real_t``), as in ``mxnet/base.py``
mx_real_t = np.float32
#: MXNet's ``base`` type tuples, which user code imports (gluon/style_transfer/net.py)
numeric_types = (float, int, np.generic)
integer_types = (int, np.int32, np.int64)
string_types = (str,)
#: MXNet's ctypes aliases (``mxnet/base.py``): plexnet has no C library, but scripts build
#: ctypes arrays with them (``c_array(mx_float, ...)``, MXNet's own docstring example)
mx_int = ctypes.c_int
mx_uint = ctypes.c_uint
mx_int64 = ctypes.c_int64
mx_float = ctypes.c_float
mx_float_p = ctypes.POINTER(mx_float)


def c_str(string: str) -> ctypes.c_char_p:
    """A ctypes ``char *`` of a Python string (MXNet's ``base.c_str``)."""
    return ctypes.c_char_p(string.encode("utf-8"))


def c_str_array(strings: Any) -> Any:
    """A ctypes ``const char **`` of Python strings (MXNet's ``base.c_str_array``)."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode("utf-8") for s in strings]
    return arr


def c_array(ctype: Any, values: Any) -> Any:
    """A ctypes array of ``ctype`` holding ``values`` (MXNet's ``base.c_array``)."""
    out = (ctype * len(values))()
    out[:] = values
    return out


def c_array_buf(ctype: Any, buf: Any) -> Any:
    """A ctypes array of ``ctype`` over a Python buffer (MXNet's ``base.c_array_buf``)."""
    return (ctype * len(buf)).from_buffer(buf)


class PlexnetError(RuntimeError):
    """Base class of every error plexnet raises on purpose. A ``RuntimeError``, as MXNet's
    ``MXNetError`` is (scripts catch ``RuntimeError`` around MXNet calls)."""


#: MXNet scripts catch ``mx.base.MXNetError``; keep the name.
MXNetError = PlexnetError


def py_str(x: Any) -> str:
    """A ``str`` from ``bytes`` (MXNet's C strings) or ``str``; MXNet's ``base.py_str``."""
    return x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else str(x)


def _as_list(obj: Any) -> Any:
    """``obj`` itself when it is a list or tuple, else ``[obj]`` (MXNet's ``base._as_list``,
    which MXNet's own tests import)."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


class NotImplementedForSymbol(PlexnetError):
    """An NDArray-only function called on a Symbol (MXNet's ``NotImplementedForSymbol``)."""

    def __init__(self, function: Any, alias: str | None, *args: Any) -> None:
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]  # type: ignore[assignment]  # a list, as MXNet's

    def __str__(self) -> str:
        msg = f"Function {self.function}"
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += f" with arguments ({', '.join(self.args)})"
        return msg + " is not implemented for Symbol and only available in NDArray."


class ShapeError(PlexnetError, ValueError):
    """Shapes of an operator's inputs are inconsistent or cannot be inferred."""


class InferTypeError(PlexnetError, TypeError):
    """Data types of an operator's inputs are inconsistent (symbolic inference and
    imperative calls raise it alike)."""


class FileOpenError(PlexnetError, FileNotFoundError):
    """A file to read does not exist: an ``MXNetError``, as MXNet's (``Open "<path>": No
    such file or directory``), and still a ``FileNotFoundError`` for code that catches that."""


def open_for_read(path: Any, mode: str = "rb", **kwargs: Any) -> Any:
    """``open(path, mode, **kwargs)``; a missing file raises ``FileOpenError`` naming it."""
    try:
        return open(path, mode, **kwargs)
    except FileNotFoundError as e:
        raise file_open_error(path, e) from e


def file_open_error(path: Any, e: OSError) -> FileOpenError:
    """The ``FileOpenError`` for ``e``, raised while opening ``path``."""
    name = os.fspath(path)
    err = FileOpenError(f'Open "{name}": {e.strerror or e}')
    err.errno, err.strerror, err.filename = e.errno, e.strerror, name
    return err


class PluginError(PlexnetError):
    """A plugin failed to load or to register, or two plugins conflict."""


class EngineError(PlexnetError):
    """Misuse of the dependency engine (e.g. waiting from inside an engine function)."""


def data_dir_default() -> str:
    """MXNet's default data directory: ``%APPDATA%/mxnet`` on Windows, else ``~/.mxnet``."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """Where downloads (model zoo weights, embeddings) go: ``$MXNET_HOME``, else
    ``data_dir_default()`` (MXNet's ``base.data_dir``)."""
    return os.getenv("MXNET_HOME", data_dir_default())
