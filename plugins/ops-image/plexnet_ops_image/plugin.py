"""Entry point of plexnet-ops-image."""
from __future__ import annotations

from typing import Any

from plexnet.hookspecs import hookimpl

from . import color, geometry, resize

PLEXNET_API_VERSION = "1.0"


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    for mod in (geometry, color, resize):
        mod.register(registry)
