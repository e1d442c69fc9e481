"""Entry point: registers the ``gpu`` backend. Without CuPy or CUDA it still registers,
unavailable, so ``plexnet plugins`` says why and ``gpu(0)`` raises a clear error."""
from __future__ import annotations

from typing import Any

from plexnet import hookimpl

from .backend import CUDABackend

PLEXNET_API_VERSION = "1.0"


@hookimpl
def plexnet_register_device_backends(register: Any) -> None:
    register("gpu", CUDABackend())
