"""Shared state of the GPU suite: is a gpu backend usable here, is it simulated, marks."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx

try:
    from plexnet_device_cuda import cupy_loader
except ImportError:  # plugin not installed
    cupy_loader = None

GPU_OK = cupy_loader is not None and cupy_loader.available
SIMULATED = bool(cupy_loader is not None and cupy_loader.simulated)
WHY = ("plexnet-device-cuda is not installed" if cupy_loader is None
       else f"no usable GPU: {cupy_loader.reason}")


def num_gpus() -> int:
    return mx.num_gpus() if GPU_OK else 0


#: tolerances against the CPU: the simulator computes with numpy (as the CPU does); a real
#: GPU sums in other orders and may use other algorithms
TOL = dict(rtol=1e-5, atol=1e-6) if SIMULATED else dict(rtol=2e-3, atol=2e-4)

simulated_only = pytest.mark.skipif(not SIMULATED, reason="checks plexnet's CuPy simulator (PLEXNET_CUDA_SIMULATE)")
needs_two = pytest.mark.skipif(num_gpus() < 2, reason="needs two GPUs")


def device_of(a: "mx.nd.NDArray") -> int:
    """The device id the data of ``a`` really lives on (CuPy's ``ndarray.device``)."""
    a.wait_to_read()
    return int(a._data.device.id)


def randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)
