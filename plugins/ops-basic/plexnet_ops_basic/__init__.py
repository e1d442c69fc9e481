"""plexnet-ops-basic: the standard operator family, device-generic through ``xp``."""
from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # ``DeviceUnsupported``: raised by an operator that cannot run on a device (README, "GPU notes")
    if name == "DeviceUnsupported":
        from .tensor._common import DeviceUnsupported
        return DeviceUnsupported
    raise AttributeError(f"module 'plexnet_ops_basic' has no attribute {name!r}")
