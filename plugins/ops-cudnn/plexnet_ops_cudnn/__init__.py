"""plexnet-ops-cudnn: cuDNN implementations (through NVIDIA's cuDNN frontend Python API,
``import cudnn``) of Convolution, Pooling (avg/sum), BatchNorm, Activation and softmax
for ``gpu`` contexts.

Importing this package never fails: without the frontend, cuDNN, CuPy or a GPU the
implementations are registered as unavailable and ``status()`` says why.
"""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def status() -> dict[str, Any]:
    """Whether the cuDNN implementations can run here, and why not."""
    from . import _loader
    return _loader.status()


def stats() -> dict[str, int]:
    """Counters: graphs built, cache hits, executions per operator and path
    (``Convolution.forward.cudnn``, ``Convolution.forward.xp`` ...)."""
    from . import _fe
    return _fe.stats()


def fallback_reasons() -> dict[str, str]:
    """Why each graph that could not be built fell back to the xp implementation."""
    from . import _fe
    return _fe.fallback_reasons()


def clear_cache() -> None:
    """Drop every cached cuDNN graph and execution plan."""
    from . import _fe
    _fe.CACHE.clear()
