"""Entry point of plexnet-ops-random: registers the samplers and the densities."""
from __future__ import annotations

from typing import Any

from plexnet.hookspecs import hookimpl

from . import multinomial, pdf, samplers, unique_zipfian

PLEXNET_API_VERSION = "1.0"


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    for mod in (samplers, multinomial, pdf, unique_zipfian):
        mod.register(registry)
