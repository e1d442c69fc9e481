"""Entry point of plexnet-ops-cudnn: registers the cuDNN implementations for ``gpu``.

Each is registered with ``impl_name='cudnn'``, priority 10 (above ops-basic's device-
generic ``xp`` implementations, priority 0) and the availability probe of ``_loader``,
so without the cuDNN frontend, the cuDNN library, CuPy or a GPU the registry skips them
(and ``force_impl(..., 'gpu', 'cudnn')`` says why). Only implementations are added:
the operator semantics (properties) stay those of plexnet-ops-basic.
"""
from __future__ import annotations

from typing import Any

from plexnet.hookspecs import hookimpl

from . import _loader

PLEXNET_API_VERSION = "1.0"


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    from . import activation, batchnorm, convolution, pooling, softmax
    for mod in (convolution, pooling, batchnorm, activation, softmax):
        mod.register(registry, _loader.available)
