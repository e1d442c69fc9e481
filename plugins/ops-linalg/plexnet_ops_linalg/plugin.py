"""Entry point of plexnet-ops-linalg: registers every operator of the family."""
from __future__ import annotations

from typing import Any

from plexnet.hookspecs import hookimpl

from . import blas, diag, factor, inverse

PLEXNET_API_VERSION = "1.0"


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    for mod in (blas, factor, inverse, diag):
        mod.register(registry)
