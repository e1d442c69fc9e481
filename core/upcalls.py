"""Up-calls: the few places where a lower layer runs code of a higher one.

A layer never imports the layers above it (``docs/layers.md``). Two array methods need
the layer above the arrays all the same: ``NDArray.backward`` runs autograd's backward
pass and ``Symbol.bind``/``simple_bind`` make an executor. They ask for the
implementation here by name (``get``); the higher layer hands it in with ``provide`` when
it is imported. Submodules load lazily (``import plexnet`` stays cheap), so the
composition root, ``plexnet/__init__.py``, also names the module that provides each
up-call (``declare``): the first ``get`` of an up-call nobody has provided yet imports
that module, which provides it.
"""
from __future__ import annotations

import importlib
from typing import Any

from .base import PlexnetError

__all__ = ["declare", "provide", "get", "BACKWARD", "EXECUTOR"]

#: ``(heads, head_grads, variables, retain_graph, train_mode) -> gradients or None``
#: (``plexnet.autograd``'s ``run_backward``); ``NDArray.backward`` calls it
BACKWARD = "autograd.backward"
#: the ``Executor`` class (``bind``, ``simple_bind``); ``Symbol.bind``/``simple_bind`` use it
EXECUTOR = "executor.Executor"

_impls: dict[str, Any] = {}
_providers: dict[str, str] = {}


def declare(name: str, module: str) -> None:
    """Name the module that provides up-call ``name`` when it is imported."""
    _providers[name] = module


def provide(name: str, impl: Any) -> None:
    """Install the implementation of up-call ``name`` (the providing module does, on import)."""
    _impls[name] = impl


def get(name: str) -> Any:
    """The implementation of up-call ``name``, importing its declared provider on first use."""
    impl = _impls.get(name)
    if impl is None:
        module = _providers.get(name)
        if module is None:
            raise PlexnetError(f"up-call {name!r}: nothing provides it and no providing module is declared")
        importlib.import_module(module)
        impl = _impls.get(name)
        if impl is None:
            raise PlexnetError(f"up-call {name!r}: importing {module} did not provide it")
    return impl
