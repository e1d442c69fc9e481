"""Guarded CuPy import that keeps the reason it failed (Chainer's pattern).

``PLEXNET_CUDA_SIMULATE=<n>`` replaces CuPy by plexnet's CuPy simulator (the
``simulator`` package: numpy on the host, CuPy's namespace and rules, ``n`` simulated
devices) *instead of importing CuPy*: ``simulated`` is then True and ``note`` says so,
so that ``plexnet plugins`` and the backend report the devices as SIMULATED. Without
the variable nothing changes.
"""
from __future__ import annotations

import os
from typing import Any

cupy: Any = None
reason: str | None = None
#: True when ``cupy`` is the simulator (PLEXNET_CUDA_SIMULATE), never real CuPy
simulated = False
#: a line describing the simulation (None when CuPy is real or missing)
note: str | None = None

_SIM_ENV = "PLEXNET_CUDA_SIMULATE"


def _simulated_devices() -> int:
    v = os.environ.get(_SIM_ENV, "").strip().lower()
    if v in ("", "0", "false", "no", "off"):
        return 0
    from .simulator import requested_devices
    return requested_devices()


try:
    _n_sim = _simulated_devices()
except ValueError as e:
    _n_sim = -1
    reason = str(e)

if _n_sim > 0:
    from . import simulator as _simulator
    _simulator.reset(_n_sim)
    cupy = _simulator.cupy
    simulated = True
    note = (f"SIMULATED on the host by plexnet's CuPy simulator ({_SIM_ENV}={os.environ.get(_SIM_ENV)}: "
            f"{_n_sim} simulated device(s), numpy behind CuPy {_simulator.CUPY_VERSION}'s namespace); "
            f"no GPU is used, so this verifies plumbing and host/device discipline, not GPU results or speed")
elif _n_sim == 0:
    try:
        import cupy  # type: ignore[no-redef]
        try:
            _n = cupy.cuda.runtime.getDeviceCount()
            if _n < 1:
                reason = "CuPy is installed but sees no CUDA device"
        except Exception as e:  # noqa: BLE001 - no driver / no device
            reason = f"CuPy is installed but CUDA is not usable: {type(e).__name__}: {e}"
    except ImportError as e:
        reason = (f"CuPy is not installed ({e}); pip install the CuPy wheel for your CUDA, e.g. cupy-cuda13x "
                  f"or cupy-cuda12x")
    except Exception as e:  # noqa: BLE001 - broken CUDA libraries
        reason = f"importing CuPy failed: {type(e).__name__}: {e}"

available = reason is None and cupy is not None
