"""Entry point of plexnet-ops-quantization."""
from __future__ import annotations

from typing import Any

from plexnet.hookspecs import hookimpl

from . import calibrate, elemwise, layers, linear, quantize

PLEXNET_API_VERSION = "1.0"


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    for mod in (quantize, linear, layers, elemwise, calibrate):
        mod.register(registry)
