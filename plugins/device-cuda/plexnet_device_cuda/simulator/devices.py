"""``cupy.cuda.Device`` of the simulator (the current device is per thread, 0 on a new
thread, as in CUDA)."""
from __future__ import annotations

from typing import Any

from . import runtime
from .errors import CUDARuntimeError


class Device:
    """``cupy.cuda.Device(id)``: ``use()``, context manager (restores the previous
    device), ``synchronize()``, ``mem_info``."""

    def __init__(self, device: Any = None) -> None:
        self.id = runtime.RT.device() if device is None else int(device)
        self._prev: list[int] = []

    def use(self) -> None:
        runtime.RT.set_device(self.id)

    def __enter__(self) -> "Device":
        rt = runtime.RT
        self._prev.append(rt.device())
        rt.set_device(self.id)
        return self

    def __exit__(self, *exc: Any) -> None:
        runtime.RT.tls.dev = self._prev.pop()

    def synchronize(self) -> None:
        rt = runtime.RT
        if not 0 <= self.id < rt.n:
            raise CUDARuntimeError(101)
        rt.sync_device(self.id)

    @property
    def mem_info(self) -> tuple[int, int]:
        rt = runtime.RT
        return rt.free_bytes(self.id), rt.total

    @property
    def compute_capability(self) -> str:
        return "90"

    @property
    def attributes(self) -> dict[str, int]:
        return {"MultiProcessorCount": 1}

    def __int__(self) -> int:
        return self.id

    def __index__(self) -> int:
        return self.id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("sim-device", self.id))

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


def get_device_id() -> int:
    return runtime.RT.device()
