"""``plexnet.gluon``: MXNet 1.x's imperative/hybrid front end.

Blocks (``block.py``) own Parameters (``parameter.py``); a ``HybridBlock`` runs
imperatively through ``plexnet.nd`` (differentiated by ``plexnet.autograd``) or, after
``hybridize()``, as one symbolic graph on the executor (``cached.py``). ``Trainer``
applies ``plexnet.optimizer`` through a KVStore. Layers are in ``gluon.nn``, losses in
``gluon.loss``, helpers in ``gluon.utils``. See ``docs/gluon.md``.
"""
from __future__ import annotations

import importlib
from typing import Any

from .block import Block, HybridBlock
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict, tensor_types
from .symbol_block import SymbolBlock
from .trainer import Trainer

__all__ = ["Block", "HybridBlock", "SymbolBlock", "Parameter", "ParameterDict", "Constant",
           "DeferredInitializationError", "Trainer", "tensor_types", "nn", "loss", "utils"]

_SUB = ("nn", "loss", "utils", "data", "rnn", "model_zoo", "contrib")


def __getattr__(name: str) -> Any:
    if name in _SUB:
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"plexnet.gluon.{name} is not available yet in plexnet") from None
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'plexnet.gluon' has no attribute {name!r}")
