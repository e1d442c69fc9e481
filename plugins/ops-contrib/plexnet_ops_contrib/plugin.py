"""Entry point of plexnet-ops-contrib."""
from __future__ import annotations

from typing import Any

from plexnet.hookspecs import hookimpl

from . import (adamw, aliases, attention, bbox, control_flow, deformable, deformconv, elemwise, fft, hawkes, masking,
               multi_update, multibox, norm, proposal, psroi, resample, rroi)

PLEXNET_API_VERSION = "1.0"


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    for mod in (elemwise, bbox, resample, fft, attention, multibox, psroi, norm, proposal, rroi, hawkes,
                deformable, deformconv, adamw, multi_update, aliases, control_flow, masking):
        mod.register(registry)
