"""plexnet: the MXNet 1.x system architecture as a plugin framework.

``import plexnet as mx`` gives MXNet 1.x's Python API names. Submodules load lazily so
that ``import plexnet`` stays cheap; plugins load on first use of a registry.
"""
from __future__ import annotations

import importlib
from typing import Any

from .base import API_VERSION, MXNetError, PlexnetError, __version__
from .context import Context, RunContext, cpu, cpu_pinned, current_context, gpu, num_gpus
from .hookspecs import hookimpl
# the plugin manager wires the layers below it (registries, device backends, storage) by
# hooks when imported; plugins themselves still load lazily, on first use
from . import plugins as _plugins  # noqa: E402,F401,I001
from . import upcalls as _upcalls  # noqa: E402,I001

# the up-calls of the arrays into the layers above them, and the modules that provide them
# (loaded on first use, like every submodule): NDArray.backward, Symbol.bind/simple_bind
_upcalls.declare(_upcalls.BACKWARD, f"{__name__}.autograd")
_upcalls.declare(_upcalls.EXECUTOR, f"{__name__}.executor")

__all__ = ["__version__", "API_VERSION", "PlexnetError", "MXNetError", "Context", "RunContext", "cpu",
           "gpu", "cpu_pinned", "current_context", "num_gpus", "hookimpl"]

# MXNet-compatible module aliases -> real module
_LAZY = {
    "nd": "ndarray", "ndarray": "ndarray", "sym": "symbol", "symbol": "symbol",
    "kv": "kvstore", "kvstore": "kvstore", "io": "io", "mod": "module", "module": "module",
    "metric": "metric", "init": "initializer", "initializer": "initializer",
    "optimizer": "optimizer", "opt": "optimizer", "lr_scheduler": "lr_scheduler",
    "random": "random", "rnd": "random", "operator": "operator", "profiler": "profiler",
    "engine": "engine", "storage": "storage", "resource": "resource", "executor": "executor",
    "test_utils": "test_utils", "callback": "callback", "model": "model", "recordio": "recordio",
    "monitor": "monitor", "mon": "monitor", "visualization": "visualization", "viz": "visualization", "rnn": "rnn",
    "plugins": "plugins", "hookspecs": "hookspecs", "context": "context", "base": "base",
    "backends": "backends", "registry": "registry", "autograd": "autograd", "gluon": "gluon", "contrib": "contrib",
    "name": "symbol.name", "attribute": "symbol.attribute", "datasets": "datasets", "demo": "demo",
    "image": "image", "img": "image", "util": "util", "runtime": "runtime", "log": "log",
    "libinfo": "libinfo",
}

_ATTRS = {"AttrScope": ("symbol.attribute", "AttrScope"),
          **{n: ("util", n) for n in ("is_np_shape", "set_np_shape", "np_shape", "use_np_shape")}}

def __getattr__(name: str) -> Any:
    if name in _ATTRS:
        mod, attr = _ATTRS[name]
        return getattr(importlib.import_module(f"{__name__}.{mod}"), attr)
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'plexnet' has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{target}")
    globals()[name] = module
    return module

def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

def waitall() -> None:
    """Wait for every pushed operation (``mx.nd.waitall``)."""
    from . import engine
    engine.get().wait_for_all()



def _profiler_autostart() -> None:
    """MXNet's profiler autostart: the engine does not import the profiler (it sits
    below it), so load it here when asked; it subscribes to the engine and records."""
    import os
    v = os.environ.get("PLEXNET_PROFILER_AUTOSTART", os.environ.get("MXNET_PROFILER_AUTOSTART", ""))
    if v.strip() in ("1", "true", "True"):
        importlib.import_module(f"{__name__}.profiler")


_profiler_autostart()
