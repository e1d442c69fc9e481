"""Named registries that remember which plugin registered what.

Every registry a hook fills (operators, device backends, kvstore types, optimizers,
data iterators) is a ``Registry``: entries are attributed to the plugin being loaded, a
second plugin claiming a taken name is a ``PluginError`` naming both, and a plugin
that fails half-way is rolled back with ``remove_plugin``.

``ClassRegistry`` is the simpler MXNet ``mx.registry`` pattern that ``mx.metric`` and
``mx.init`` use: subclasses of one base class registered under lower-cased names, and
``create`` from a name, an instance, a config dict or a JSON string.
"""
from __future__ import annotations

import json
import threading
from typing import Any, Callable, Generic, Iterator, TypeVar

from .base import PluginError

__all__ = ["Registry", "ClassRegistry", "current_plugin", "attributing"]

T = TypeVar("T")
_attr = threading.local()


def current_plugin() -> str:
    """Name of the plugin whose hook is running (``"<user>"`` outside plugin loading)."""
    return getattr(_attr, "name", "<user>")


class attributing:
    """``with attributing("plugin"):`` attributes registrations to a plugin."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        self.prev = current_plugin()
        _attr.name = self.name

    def __exit__(self, *exc: Any) -> None:
        _attr.name = self.prev


class Registry(Generic[T]):
    """A name -> object map with per-entry owner and change listeners."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._owner: dict[str, str] = {}
        self._lock = threading.RLock()
        self._listeners: list[Callable[[], None]] = []

    def register(self, name: str, obj: T) -> T:
        """Add ``obj`` under ``name``; a name owned by another plugin is an error."""
        if not isinstance(name, str) or not name:
            raise PluginError(f"{self.kind} name must be a non-empty string, got {name!r}")
        plugin = current_plugin()
        with self._lock:
            if name in self._items:
                other = self._owner[name]
                if other == plugin:
                    raise PluginError(f"{self.kind} {name!r} is registered twice by plugin {plugin!r}")
                raise PluginError(
                    f"{self.kind} {name!r} is registered by both plugin {other!r} and plugin "
                    f"{plugin!r}; rename one, or (operators) register an alternative implementation "
                    f"with register_impl and a priority")
            self._items[name] = obj
            self._owner[name] = plugin
        self._changed()
        return obj

    def unregister(self, name: str) -> None:
        with self._lock:
            self._items.pop(name, None)
            self._owner.pop(name, None)
        self._changed()

    def remove_plugin(self, plugin: str) -> list[str]:
        """Drop everything ``plugin`` registered (rollback after a failed hook)."""
        with self._lock:
            names = [n for n, p in self._owner.items() if p == plugin]
            for n in names:
                del self._items[n]
                del self._owner[n]
        if names:
            self._changed()
        return names

    def by_plugin(self, plugin: str) -> list[str]:
        with self._lock:
            return sorted(n for n, p in self._owner.items() if p == plugin)

    def owner(self, name: str) -> str | None:
        return self._owner.get(name)

    def get(self, name: str, default: Any = None) -> T | Any:
        return self._items.get(name, default)

    def __getitem__(self, name: str) -> T:
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[tuple[str, T]]:
        return list(self._items.items())

    def add_listener(self, fn: Callable[[], None]) -> None:
        """Call ``fn()`` after every change (caches keyed on the registry use this)."""
        self._listeners.append(fn)

    def _changed(self) -> None:
        for fn in self._listeners:
            fn()


class ClassRegistry:
    """Subclasses of ``base`` by lower-cased name, with MXNet's ``register`` / ``alias``
    decorators and ``create``. ``kind`` names the thing in messages and is the keyword
    ``create`` reads the name from; ``accepts`` and ``known`` complete its error messages
    (``"{kind} must be {accepts}, got ..."``, ``"...; {known}: a, b"``)."""

    def __init__(self, base: type, kind: str, accepts: str, known: str = "known") -> None:
        self.base = base
        self.kind = kind
        self.accepts = accepts
        self.known = known
        self.classes: dict[str, type] = {}

    def register(self, klass: type) -> type:
        if not (isinstance(klass, type) and issubclass(klass, self.base)):
            raise TypeError(f"can only register subclasses of {self.base.__name__}, got {klass!r}")
        self.classes[klass.__name__.lower()] = klass
        return klass

    def alias(self, *aliases: str) -> Callable[[type], type]:
        def reg(klass: type) -> type:
            for name in aliases:
                self.classes[name.lower()] = klass
            return klass
        return reg

    def create(self, *args: Any, **kwargs: Any) -> Any:
        """An instance from a name (``args[0]`` or the ``kind`` keyword; further arguments
        go to the class), an instance (returned as is), a config dict, or a JSON string
        (``'["name", {kwargs}]'`` or ``'{"kind": "name", ...}'``)."""
        if args:
            name, args = args[0], args[1:]
        else:
            name = kwargs.pop(self.kind)
        if isinstance(name, self.base):
            if args or kwargs:
                raise ValueError(f"{self.kind} is already an instance; additional arguments are invalid")
            return name
        if isinstance(name, dict):
            return self.create(**name)
        if not isinstance(name, str):
            raise TypeError(f"{self.kind} must be {self.accepts}, got {name!r}")
        if name.startswith("["):
            name, kw = json.loads(name)
            return self.create(name, **kw)
        if name.startswith("{"):
            return self.create(**json.loads(name))
        key = name.lower()
        if key not in self.classes:
            raise ValueError(f"{self.kind} {name!r} is not registered; {self.known}: "
                             f"{', '.join(sorted(self.classes))}")
        return self.classes[key](*args, **kwargs)
