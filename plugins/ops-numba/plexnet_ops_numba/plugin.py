"""Entry point of plexnet-ops-numba: registers the numba implementations for ``cpu``.

Each is registered with ``impl_name='numba'``, priority 5 (above ops-basic's ``xp``
implementations, priority 0; below ops-torch's, 10) and the probe ``_base.available``, so
without numba the registry skips them; ``PLEXNET_FORCE_IMPL=Pooling:cpu=xp`` picks the
numpy one back. Only implementations are added: the semantics (properties) stay those
of plexnet-ops-basic."""
from __future__ import annotations

from typing import Any

from plexnet.hookspecs import hookimpl

from . import _base

PLEXNET_API_VERSION = "1.0"


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    from . import activation, batch_norm, convolution, layer_norm, pooling, reduce
    for mod in (pooling, convolution, batch_norm, activation, reduce, layer_norm):
        mod.register(registry, _base.available)
