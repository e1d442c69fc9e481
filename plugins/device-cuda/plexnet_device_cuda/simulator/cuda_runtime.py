"""The functions of the simulated ``cupy.cuda.runtime`` (device count and selection,
``memGetInfo``, synchronisation, peer access, properties, versions)."""
from __future__ import annotations

from typing import Any

from . import runtime
from .errors import CUDARuntimeError
from .hazards import all_states


def getDeviceCount() -> int:
    return runtime.RT.n


def getDevice() -> int:
    return runtime.RT.device()


def setDevice(device: int) -> None:
    runtime.RT.set_device(device)


def memGetInfo() -> tuple[int, int]:
    rt = runtime.RT
    d = rt.device()
    return rt.free_bytes(d), rt.total


def deviceSynchronize() -> None:
    rt = runtime.RT
    rt.sync_device(rt.device())


def deviceCanAccessPeer(device: int, peerDevice: int) -> int:
    return int(runtime.RT.peer and device != peerDevice)


def deviceEnablePeerAccess(peerDevice: int) -> None:
    rt = runtime.RT
    if not rt.peer:
        raise CUDARuntimeError(1)
    rt.peer_enabled.add((rt.device(), int(peerDevice)))


def runtimeGetVersion() -> int:
    return 13000


def driverGetVersion() -> int:
    return 13000


def getDeviceProperties(device: int) -> dict[str, Any]:
    rt = runtime.RT
    if not 0 <= int(device) < rt.n:
        raise CUDARuntimeError(101)
    return {"name": b"plexnet simulated GPU (host memory; SIMULATED)", "totalGlobalMem": rt.total,
            "major": 9, "minor": 0, "multiProcessorCount": 1, "warpSize": 32, "pciBusID": int(device)}


def streamSynchronize(ptr: int) -> None:
    rt = runtime.RT
    st = all_states.get(int(ptr))
    rt.sync(st if st is not None else rt.legacy[rt.device()])

