"""NDArray <-> numpy at the boundary of ``mx.image`` (the work happens in numpy/OpenCV)."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_np", "as_nd"]


def as_np(x: Any) -> np.ndarray:
    """A numpy view/copy of an NDArray, numpy array or nested sequence."""
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return np.asarray(x)


def as_nd(a: np.ndarray, out: Any = None) -> Any:
    """An NDArray holding ``a`` (copied into ``out`` when given, which is returned)."""
    from ..io.base import to_ndarray
    if out is not None:
        if tuple(out.shape) != a.shape:
            raise ValueError(f"out has shape {tuple(out.shape)}, the result {a.shape}")
        out[:] = a.astype(out.dtype, copy=False)
        return out
    a = np.ascontiguousarray(a)
    return to_ndarray(a if a.flags.writeable else a.copy(), owned=False)
