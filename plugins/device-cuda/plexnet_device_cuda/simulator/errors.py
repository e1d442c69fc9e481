"""The simulator's errors and warnings (CuPy's, and its own stream-hazard ones), and
the messages for names and arguments CuPy would refuse."""
from __future__ import annotations

from typing import Any

import numpy as np

from .snapshot import CUPY_VERSION, RUNTIME_ERRORS


class StreamHazardError(RuntimeError):
    """Simulated race: memory used on a stream (or the host) before the stream that
    last wrote (or read) it was synchronised with it. On a GPU this reads stale data."""


class StreamHazardWarning(RuntimeWarning):
    """``StreamHazardError`` downgraded by ``PLEXNET_CUDA_SIMULATE_HAZARDS=warn``."""


class PerformanceWarning(RuntimeWarning):
    """CuPy's ``cupy._util.PerformanceWarning`` (peer access activated automatically)."""


class NotSimulatedError(NotImplementedError):
    """A CuPy feature that exists but cannot be simulated on the host."""


_STATUS_MESSAGES = {v["status"]: v["message"] for v in RUNTIME_ERRORS.values()}


class CUDARuntimeError(RuntimeError):
    """``cupy.cuda.runtime.CUDARuntimeError`` with CuPy's message for the status."""

    def __init__(self, status: int) -> None:
        self.status = int(status)
        super().__init__(_STATUS_MESSAGES.get(self.status, f"cudaError {self.status}"))

    def __reduce__(self) -> Any:
        return (type(self), (self.status,))


class OutOfMemoryError(MemoryError):
    """``cupy.cuda.memory.OutOfMemoryError`` (raised by the memory pool)."""

    def __init__(self, size: int, total: int, limit: int = 0) -> None:
        self._size, self._total, self._limit = size, total, limit
        if limit == 0:
            msg = "Out of memory allocating {:,} bytes".format(size)
            if total != -1:
                msg += " (allocated so far: {:,} bytes).".format(total)
        else:
            msg = ("Out of memory allocating {:,} bytes (allocated so far: {:,} bytes, "
                   "limit set to: {:,} bytes).".format(size, total, limit))
        super().__init__(msg)

    def __reduce__(self) -> Any:
        return (type(self), (self._size, self._total, self._limit))


HOST_HINT = (" [CuPy simulator: a host numpy.ndarray cannot be used where CuPy needs a device array; "
             "copy it with cupy.asarray() first]")


def unsupported(arg: Any) -> TypeError:
    """CuPy's ``TypeError`` for an argument it cannot use (a host array: with a hint)."""
    return TypeError(f"Unsupported type {type(arg)}" + (HOST_HINT if isinstance(arg, np.ndarray) else ""))


def not_simulated(what: str) -> AttributeError:
    """For a CuPy name the simulator does not provide."""
    return AttributeError(f"{what} exists in CuPy {CUPY_VERSION} but is not provided by plexnet's CuPy simulator")


def no_such(modname: str, name: str) -> AttributeError:
    """For a name CuPy's module ``modname`` does not have (saying so when numpy has it)."""
    hint = ""
    base = modname.split(".", 1)[1] if "." in modname else ""
    npmod: Any = np
    for part in [p for p in base.split(".") if p]:
        npmod = getattr(npmod, part, None)
    if npmod is not None and hasattr(npmod, name):
        hint = (f" (numpy{'.' + base if base else ''}.{name} exists, but CuPy {CUPY_VERSION} has no "
                f"{modname}.{name}: code that needs it cannot run on a GPU)")
    return AttributeError(f"module '{modname}' has no attribute '{name}'{hint}")
