"""Hook specifications: the contract between the plexnet core and its plugins.

A plugin is a module (or object) with functions decorated by ``plexnet.hookimpl`` whose
names match the specs below, advertised through the entry-point group
``plexnet.plugins``::

    [project.entry-points."plexnet.plugins"]
    myops = "myops.plugin"

Every ``plexnet_register_*`` hook receives a ``register`` callable (or a registry) and
must only call it; it runs once per process, the first time plexnet needs its
registries. Whatever a hook registers is recorded under the plugin's name, so that
conflicts and failures name the plugin. If the hook raises, everything that plugin
registered in that hook is rolled back, the plugin is reported as failed (see
``plexnet plugins``) and the rest of plexnet keeps working.

A plugin module may set ``PLEXNET_API_VERSION = "1.0"``; a different major version than
``plexnet.base.API_VERSION``, or a newer minor one, is reported as ``incompatible`` and
the plugin is not registered. ``docs/plugins.md`` is the guide for plugin authors.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from .operator.registry import OpRegistry

NAME = "plexnet"
hookspec = pluggy.HookspecMarker(NAME)
hookimpl = pluggy.HookimplMarker(NAME)


@hookspec
def plexnet_register_operators(registry: "OpRegistry") -> None:
    """Register operator semantics and implementations.

    Call ``registry.register_property(name, PropertyClass)`` once per operator name
    (semantics: parameters, arguments, shape/type inference, backward dependencies,
    in-place options) and ``registry.register_impl(name, device_type, factory,
    priority=..., impl_name=...)`` for each implementation. ``device_type`` may be
    ``"*"`` for device-generic code written against ``xp``. Registering a property name
    that another plugin already registered is an error naming both plugins; adding an
    implementation to another plugin's operator is allowed (that is what alternative
    implementations are), but two implementations with one ``impl_name`` for one device
    type conflict. SimpleOps register with
    ``plexnet.operator.simple_op.SimpleOp(name)....register(registry)``.
    """


@hookspec
def plexnet_register_device_backends(register: Callable[[Any], None]) -> None:
    """Register device backends: ``register(device_type, backend)`` with a
    ``plexnet.backends.DeviceBackend`` whose ``device_type`` matches.

    A backend owns one device type (``"cpu"``, ``"gpu"``, ...): its array module ``xp``,
    device discovery, raw allocation for the storage managers, streams, copies and
    random generators. A backend whose hardware or libraries are missing should still
    register, with ``is_available()`` False and ``unavailable_reason`` set, so that using
    its device raises a clear error and ``plexnet plugins`` shows why.
    """


@hookspec
def plexnet_register_kvstores(register: Callable[..., None]) -> None:
    """Register KVStore types: ``register(name, factory)`` where ``factory(name: str)``
    returns a ``plexnet.kvstore.KVStoreBase``. ``name`` is what ``plexnet.kv.create``
    accepts; a factory may serve several names (``dist_sync``, ``dist_async``)."""


@hookspec
def plexnet_register_optimizers(register: Callable[..., None]) -> None:
    """Register optimizers: ``register(name, cls)`` with a subclass of
    ``plexnet.optimizer.Optimizer``; ``name`` (lower case) is what
    ``plexnet.optimizer.create(name)`` accepts."""


@hookspec
def plexnet_register_data_iters(register: Callable[..., None]) -> None:
    """Register data iterators: ``register(name, cls)`` with a subclass of
    ``plexnet.io.DataIter``; it becomes ``plexnet.io.<name>``."""


@hookspec
def plexnet_engine_observers() -> Sequence[Any]:  # type: ignore[empty-body]  # a specification
    """Return objects that observe engine operations (a profiler).

    Each observer has ``on_start(name: str, ctx, worker: str) -> Any`` and
    ``on_end(token: Any) -> None``; ``on_start``'s result is handed to ``on_end``.
    They are called on the engine's worker threads around every operation, so they
    must be fast and thread-safe. Collected when an engine starts and whenever
    ``plexnet.engine.refresh_observers()`` is called.
    """
