"""Guarded CuPy import that keeps the reason it failed (Chainer's pattern)."""
from __future__ import annotations

from typing import Any

cupy: Any = None
reason: str | None = None
try:
    import cupy  # type: ignore[no-redef]
    try:
        _n = cupy.cuda.runtime.getDeviceCount()
        if _n < 1:
            reason = "CuPy is installed but sees no CUDA device"
    except Exception as e:  # noqa: BLE001 - no driver / no device
        reason = f"CuPy is installed but CUDA is not usable: {type(e).__name__}: {e}"
except ImportError as e:
    reason = f"CuPy is not installed ({e}); pip install the CuPy wheel for your CUDA, e.g. cupy-cuda13x or cupy-cuda12x"
except Exception as e:  # noqa: BLE001 - broken CUDA libraries
    reason = f"importing CuPy failed: {type(e).__name__}: {e}"

available = reason is None
