"""``mx.libinfo`` (MXNet 1.9.1's ``mxnet/libinfo.py``): where the native library, its C
headers and the TVM op config are.

plexnet is pure Python: it ships no ``libmxnet``, no C headers and no TVM op config, so
each lookup answers what MXNet answers when nothing is found (a RuntimeError listing
what was looked for), unless the caller points at a file or folder through MXNet's
environment variables (``MXNET_LIBRARY_PATH``, ``MXNET_INCLUDE_PATH``,
``MXNET_CONF_PATH``), which are honoured as in MXNet.
"""
from __future__ import annotations

import logging
import os
from typing import Callable

from .base import __version__

__all__ = ["find_lib_path", "find_include_path", "find_conf_path", "__version__"]


def _from_env(var: str, check: Callable[[str], bool]) -> str | None:
    """The absolute path in ``var`` when it names an existing file/folder (MXNet's rule:
    a relative path is warned about and ignored)."""
    path = os.environ.get(var)
    if not path:
        return None
    if not check(path):
        logging.warning("%s '%s' doesn't exist", var, path)
        return None
    if not os.path.isabs(path):
        logging.warning("%s should be an absolute path, instead of: %s", var, path)
        return None
    return path


def find_lib_path(prefix: str = "libmxnet") -> list[str]:
    """Paths of the native library ``prefix``: ``MXNET_LIBRARY_PATH`` when set, else a
    RuntimeError (plexnet has no native library)."""
    path = _from_env("MXNET_LIBRARY_PATH", os.path.isfile)
    if path:
        return [path]
    raise RuntimeError(f"Cannot find the MXNet library.\nplexnet is pure Python and ships no {prefix}; "
                       f"set MXNET_LIBRARY_PATH to use one")


def find_include_path() -> str:
    """The C header folder: ``MXNET_INCLUDE_PATH`` when set, else a RuntimeError (plexnet
    has no C API and so no headers)."""
    path = _from_env("MXNET_INCLUDE_PATH", os.path.isdir)
    if path:
        return path
    raise RuntimeError("Cannot find the MXNet include path: plexnet is pure Python and has no C API headers; "
                       "set MXNET_INCLUDE_PATH to use an MXNet include folder\n")


def find_conf_path(prefix: str = "tvmop") -> list[str]:
    """The TVM op config: ``MXNET_CONF_PATH`` when set, else a RuntimeError (no TVM ops)."""
    path = _from_env("MXNET_CONF_PATH", os.path.isfile)
    if path:
        return [path]
    raise RuntimeError(f"Cannot find the TVM op config.\nplexnet has no TVM operators ({prefix}.conf); "
                       f"set MXNET_CONF_PATH to use one")
