"""``plexnet.contrib``: MXNet 1.x's ``mx.contrib`` namespace (so far its legacy
``contrib.autograd`` API)."""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["autograd"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'plexnet.contrib' has no attribute {name!r}")
