"""``plexnet.kv`` / ``plexnet.kvstore``: key-value stores for data-parallel training.

``create(name)`` builds a kvstore of a registered type: the built-in single-machine
types (``local``, ``local_update_cpu``, ``local_allreduce_cpu``,
``local_allreduce_device``, ``device``; see ``plexnet.kvstore.local``) and those of
installed plugins, e.g. ``dist_sync`` / ``dist_device_sync`` / ``dist_async`` from
``plexnet-kvstore-dist``. See ``docs/kvstore.md``.
"""
from __future__ import annotations


from .base import KVStoreBase, KVStoreError, KVStoreKeyError, UnknownKVStoreTypeError, bigarray_bound

__all__ = ["create", "KVStoreBase", "KVStore", "KVStoreError", "KVStoreKeyError", "list_types",
           "bigarray_bound"]

#: MXNet's class name; every plexnet kvstore is an instance of it
KVStore = KVStoreBase


def list_types() -> list[str]:
    """Every kvstore type name ``create`` accepts."""
    from ..plugins import registries
    return sorted(set(registries().kvstores) | set(KVStoreBase.kv_registry))


def create(name: str = "local") -> KVStoreBase:
    """A new kvstore of type ``name`` (case-insensitive), e.g. ``'local'``, ``'device'``,
    ``'dist_sync'``."""
    if not isinstance(name, str):
        raise TypeError(f"kvstore type must be a string, got {type(name).__name__}")
    key = name.lower()
    if key in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[key]()
    from ..plugins import registries
    factory = registries().kvstores.get(key)
    if factory is None:
        hint = ""
        if key.startswith("dist"):
            hint = (" The distributed types come from the plexnet-kvstore-dist plugin "
                    "(pip install plugins/kvstore-dist); `plexnet plugins` shows whether it loaded.")
        raise UnknownKVStoreTypeError(f"unknown kvstore type {name!r}; available: {', '.join(list_types())}.{hint}")
    kv = factory(key)
    if not isinstance(kv, KVStoreBase):
        raise TypeError(f"kvstore factory for {key!r} returned {type(kv).__name__}, not a KVStoreBase")
    return kv


from . import teststore as _teststore  # noqa: E402,F401 - registers MXNet's 'teststore'
