"""Loading numba, the availability probe, and the base class of every numba operator
(the ops-basic implementation as its fallback for every case the kernels do not cover)."""
from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from types import ModuleType
from typing import Any, Callable, Sequence

import numpy as np

from plexnet.operator import Operator, OpReqType

NULL, WRITE, INPLACE, ADD = OpReqType.null, OpReqType.write, OpReqType.inplace, OpReqType.add
#: dtypes the kernels are compiled for (others run the ops-basic implementation)
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

_kernels: dict[str, ModuleType | None] = {}
_reason: str | None = None
_lock = threading.Lock()
#: ``PLEXNET_NUMBA_DISABLE=1`` makes the probe say no (every call runs ops-basic)
_DISABLED = os.environ.get("PLEXNET_NUMBA_DISABLE", "") not in ("", "0")


def kernels(name: str) -> ModuleType | None:
    """The kernel module ``plexnet_ops_numba.<name>`` (imported once: importing numba and
    loading the cached machine code takes 0.3-1 s, which a script that never pools or
    convolves on the CPU should not pay); None, with ``reason()``, when numba cannot be
    imported."""
    global _reason
    if name in _kernels:
        return _kernels[name]
    with _lock:
        if name not in _kernels:
            mod = None
            try:
                mod = importlib.import_module(f"plexnet_ops_numba.{name}")
            except Exception as e:  # noqa: BLE001 - any import failure makes the plugin unavailable
                _reason = f"numba kernels cannot be loaded ({type(e).__name__}: {e}); pip install numba"
            _kernels[name] = mod
    return _kernels[name]


def available() -> bool:
    """The registry's availability probe: numba is installed (found without importing it)
    and not disabled, and no kernel module failed to load."""
    if _DISABLED or _reason is not None:
        return False
    return importlib.util.find_spec("numba") is not None


def _why() -> str | None:
    if _DISABLED:
        return "disabled by PLEXNET_NUMBA_DISABLE"
    if _reason is not None:
        return _reason
    return None if importlib.util.find_spec("numba") is not None else "numba is not installed; pip install numba"


available.reason = _why  # type: ignore[attr-defined]


#: calls whose largest array is smaller run ops-basic's numpy code: there the kernels save
#: microseconds, while importing numba and loading the cached kernels costs 0.3-0.8 s once
#: per process (the demo's LeNet on 8x8 digits: 2.2 s of training with numba against 1.4 s
#: without); ``PLEXNET_NUMBA_MIN_ELEMENTS`` changes it (0: always numba)
MIN_ELEMENTS = int(os.environ.get("PLEXNET_NUMBA_MIN_ELEMENTS", 1 << 16))


def ok_arrays(arrays: Sequence[Any]) -> bool:
    """Every array (None skipped) is a C-contiguous numpy float32/float64 array, all of
    one dtype, and the largest has at least ``MIN_ELEMENTS`` elements."""
    dt = None
    biggest = 0
    for a in arrays:
        if a is None:
            continue
        if type(a) is not np.ndarray or a.dtype not in DTYPES or not a.flags.c_contiguous:
            return False
        if dt is None:
            dt = a.dtype
        elif a.dtype != dt:
            return False
        biggest = max(biggest, a.size)
    return dt is not None and biggest >= MIN_ELEMENTS


class NumbaOp(Operator):
    """An operator that runs numba kernels where it can and the ops-basic (xp)
    implementation ``fallback(param)`` otherwise (decided per call)."""

    #: builds the ops-basic operator from the property's parameters
    fallback: Callable[[Any], Operator]

    def __init__(self, prop: Any) -> None:
        self.prop = prop
        self.p = prop.param
        self._xp: Operator | None = None

    @property
    def xp_op(self) -> Operator:
        if self._xp is None:
            self._xp = type(self).fallback(self.p)
        return self._xp
