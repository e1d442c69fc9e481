"""Plugin entry point: registers ``dist_sync``, ``dist_device_sync`` and ``dist_async``.

Ray is imported only when such a kvstore is created, so that ``plexnet plugins`` works
(and reports the reason) where Ray is missing.
"""
from __future__ import annotations

from typing import Any

from plexnet import hookimpl

PLEXNET_API_VERSION = "1.0"

# MXNet accepts any name with "dist" (sync unless "_async"; "device": sum on the devices);
# these are the spellings its scripts use (cifar10_dist.py: kv.create('dist'))
DIST_TYPES = ("dist_sync", "dist_device_sync", "dist_async", "dist", "dist_sync_device", "dist_device_async")


def create_dist(name: str) -> Any:
    try:
        import ray  # noqa: F401
    except ImportError as e:
        raise ImportError(f"kvstore type {name!r} needs Ray: pip install 'ray>=2.9' ({e})") from e
    from .worker import KVStoreDist
    return KVStoreDist(name)


@hookimpl
def plexnet_register_kvstores(register: Any) -> None:
    for name in DIST_TYPES:
        register(name, create_dist)
