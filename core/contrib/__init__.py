"""``plexnet.contrib``: MXNet 1.x's ``mx.contrib`` namespace: the legacy
``contrib.autograd`` API, ``contrib.io.DataLoaderIter`` (a gluon DataLoader as a DataIter),
``contrib.text`` (vocabulary and token embeddings), ``contrib.amp`` (automatic mixed
precision), ``contrib.tensorboard`` (LogMetricsCallback), ``contrib.svrg_optimization`` (SVRGModule), and
``contrib.ndarray`` / ``contrib.symbol`` (aliases ``contrib.nd`` /
``contrib.sym``, as MXNet's; the contrib operators, as ``mx.nd.contrib`` / ``mx.sym.contrib``)."""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["autograd", "io", "text", "svrg_optimization", "amp", "tensorboard"]

_NAMESPACES = {"ndarray": "ndarray", "nd": "ndarray", "symbol": "symbol", "sym": "symbol"}


def __getattr__(name: str) -> Any:
    if name in _NAMESPACES:  # MXNet's mx.contrib.ndarray / .symbol (also .nd / .sym): the contrib operators
        ns = importlib.import_module(f"plexnet.{_NAMESPACES[name]}").contrib
        globals()[name] = ns
        return ns
    if name in __all__:
        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'plexnet.contrib' has no attribute {name!r}")
