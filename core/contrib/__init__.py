"""``plexnet.contrib``: MXNet 1.x's ``mx.contrib`` namespace: the legacy
``contrib.autograd`` API, and ``contrib.ndarray`` / ``contrib.symbol`` (the contrib
operators, as ``mx.nd.contrib`` / ``mx.sym.contrib``)."""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["autograd"]


def __getattr__(name: str) -> Any:
    if name in ("ndarray", "symbol"):  # MXNet's mx.contrib.ndarray / mx.contrib.symbol: the contrib operators
        ns = importlib.import_module(f"plexnet.{name}").contrib
        globals()[name] = ns
        return ns
    if name in __all__:
        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'plexnet.contrib' has no attribute {name!r}")
