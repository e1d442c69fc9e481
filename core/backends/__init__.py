"""Device backends: what a device type provides to the core.

A backend (registered through ``plexnet_register_device_backends``) owns one device
type. The core asks it for the array module, raw memory for the storage managers,
streams for the engine's workers, copies and random generators; everything else
(scheduling, pooling, dependency tracking) stays in the core.
"""
from __future__ import annotations

from typing import Any

from ..base import PlexnetError
from .. import context as _context
from .. import storage as _storage
from ..engine import devices as _engine_devices
from ..registry import registries

__all__ = ["DeviceBackend", "find_backend", "get_backend", "DeviceUnavailable"]


class DeviceUnavailable(PlexnetError):
    """A context names a device type that no installed backend can serve."""


class DeviceBackend:
    """Base class of device backends. Override what your device needs."""

    #: the device type this backend serves, e.g. ``"cpu"``
    device_type: str = ""
    #: the array module (numpy, cupy) that device-generic operators use
    xp: Any = None
    #: why ``is_available()`` is False, shown by ``plexnet plugins``
    unavailable_reason: str | None = None
    #: a remark shown by ``plexnet plugins`` next to an available device (e.g. that the
    #: device is simulated on the host)
    status_note: str | None = None
    #: engine worker threads per device for compute (the per-device engine reads it)
    compute_workers: int = 1
    #: engine worker threads per device for copies
    copy_workers: int = 1
    #: arrays up to this many bytes come from ``xp.empty`` instead of the storage pool
    #: (plain reference counting keeps them alive while operations use them)
    small_alloc_bytes: int = 0

    def is_available(self) -> bool:
        return self.unavailable_reason is None

    def num_devices(self) -> int:
        return 1

    # -- memory ---------------------------------------------------------------------------
    def raw_alloc(self, nbytes: int, device_id: int) -> Any:
        """A 1-D uint8 array of ``nbytes`` on the device; raise ``MemoryError`` if out."""
        raise NotImplementedError

    def raw_free(self, buf: Any, device_id: int) -> None:
        """Give ``buf`` back to the system (drop the reference by default)."""

    def create_storage_manager(self, device_id: int) -> Any | None:
        """A device-specific ``StorageManager``, or None to use the core's pooled one."""
        return None

    # -- streams -------------------------------------------------------------------------
    def new_stream(self, device_id: int, kind: str = "compute") -> Any:
        """A stream for one engine worker (``kind`` is ``"compute"`` or ``"copy"``)."""
        return None

    def synchronize(self, stream: Any) -> None:
        """Block until work queued on ``stream`` is done."""

    def activate(self, device_id: int) -> None:
        """Make ``device_id`` current on the calling thread (workers call it once)."""

    # -- data ----------------------------------------------------------------------------
    def to_host(self, arr: Any, stream: Any = None) -> Any:
        """A numpy copy of the device array ``arr``."""
        import numpy as np
        return np.array(arr, copy=True)

    def from_host(self, src: Any, dst: Any, stream: Any = None) -> None:
        """Copy numpy array ``src`` into device array ``dst`` (same shape)."""
        dst[...] = src

    def copy(self, src: Any, dst: Any, stream: Any = None) -> None:
        """Copy between two arrays of this device (or this device and the host)."""
        dst[...] = src

    def rng(self, seed: int, device_id: int) -> Any:
        """A random generator with numpy's ``Generator`` methods on this device."""
        raise NotImplementedError

    def memory_info(self, device_id: int) -> tuple[int, int] | None:
        """``(free, total)`` bytes of device memory, or None when unknown."""
        return None


def find_backend(device_type: str) -> DeviceBackend | None:
    """The backend registered for ``device_type`` (plugins are loaded on first use)."""
    return registries().backends.get(device_type)


_resolved: dict[str, DeviceBackend] = {}


def get_backend(ctx: Any) -> DeviceBackend:
    """The backend for a context or device type; a clear error if it cannot be used."""
    dt = ctx if isinstance(ctx, str) else ctx.device_type
    b = _resolved.get(dt)
    if b is not None:
        return b
    if dt == "cpu_pinned" or dt == "cpu_shared":
        b = find_backend(dt) or find_backend("cpu")
    else:
        b = find_backend(dt)
    if b is None:
        hint = " (install plexnet-device-cuda and CuPy)" if dt == "gpu" else ""
        raise DeviceUnavailable(f"no device backend is installed for {dt!r}{hint}; "
                                f"`plexnet plugins` lists the installed ones")
    if not b.is_available():
        raise DeviceUnavailable(f"device type {dt!r} is not usable here: {b.unavailable_reason}")
    _resolved[dt] = b
    return b


def _reset_cache() -> None:
    _resolved.clear()


def _count_devices(device_type: str) -> int:
    b = find_backend(device_type)
    return b.num_devices() if b is not None and b.is_available() else 0


# The engine, the storage managers and Context sit below the backends: they learn how to
# reach a device through these hooks.
_engine_devices.set_device_resolver(get_backend)
_storage.set_backend_resolver(get_backend)
_context.set_device_counter(_count_devices)
