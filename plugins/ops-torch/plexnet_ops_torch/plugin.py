"""Entry point of plexnet-ops-torch: registers the torch implementations for ``cpu``.

Each is registered with ``impl_name='torch'``, priority 10 (above ops-basic's ``xp``
implementations, priority 0) and the probe ``_base.available``, so without torch the
registry skips them (and ``PLEXNET_FORCE_IMPL=Convolution:cpu=torch`` says why);
``PLEXNET_FORCE_IMPL=Convolution:cpu=xp`` picks the numpy one back. Only
implementations are added: the semantics (properties) stay those of plexnet-ops-basic.
"""
from __future__ import annotations

from typing import Any

from plexnet.hookspecs import hookimpl

from . import _base

PLEXNET_API_VERSION = "1.0"


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    from . import activation, batch_norm, convolution, pooling
    for mod in (convolution, batch_norm, activation, pooling):
        mod.register(registry, _base.available)
