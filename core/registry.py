"""Named registries that remember which plugin registered what.

Every registry a hook fills (operators, device backends, kvstore types, optimizers,
data iterators) is a ``Registry``: entries are attributed to the plugin being loaded
(``attributing``), and a plugin that fails half-way is rolled back with
``remove_plugin``.

**Precedence.** Each plugin loads at a *rank* (``RANK_*``, lower wins): plugins the user
allowed to override (``PLEXNET_PLUGINS_ALLOW_OVERRIDE``), then the built-in parts, then
the standard first-party plugins, then third-party plugins. When a plugin registers a
name another plugin already holds, the registry arbitrates by rank, never by load order:

* the newcomer ranks lower (a larger number): its registration is *refused*;
* the newcomer ranks higher: it *replaces* the entry (the other plugin keeps the rest);
* equal rank: the first keeps it for trusted ranks (built-in, standard, override); for
  third-party plugins the name is *contested* and goes to neither, so the outcome does
  not depend on which was found first.

Every conflict is a ``PluginConflictWarning`` naming the kind, the name and both
plugins, and is kept in ``Registry.conflicts``. A plugin whose registration is refused
keeps working with its other entries. Under strict loading a conflict raises
``PluginError`` instead. Code outside plugin loading (``"<user>"``) that registers a
taken name gets a ``PluginError`` unless it passes ``override=True``.

``ClassRegistry`` is the simpler MXNet ``mx.registry`` pattern that ``mx.metric`` and
``mx.init`` use: subclasses of one base class registered under lower-cased names, and
``create`` from a name, an instance, a config dict or a JSON string.
"""
from __future__ import annotations

import json
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Generic, Iterator, TypeVar

from .base import PluginError

__all__ = ["Registry", "ClassRegistry", "current_plugin", "current_rank", "attributing", "Conflict",
           "PluginConflictWarning", "RANK_OVERRIDE", "RANK_BUILTIN", "RANK_STANDARD",
           "RANK_THIRD_PARTY", "RANK_NAMES", "USER", "registries", "set_registries_loader"]

T = TypeVar("T")
_attr = threading.local()

#: Precedence ranks (lower wins). ``USER`` registrations rank like an allowed override.
RANK_OVERRIDE, RANK_BUILTIN, RANK_STANDARD, RANK_THIRD_PARTY = 0, 1, 2, 3
RANK_NAMES = {RANK_OVERRIDE: "allowed to override", RANK_BUILTIN: "built-in",
              RANK_STANDARD: "standard", RANK_THIRD_PARTY: "third-party"}
USER = "<user>"


class PluginConflictWarning(RuntimeWarning):
    """Two plugins registered one name; the message names both and says who keeps it."""


@dataclass(frozen=True)
class Conflict:
    """One arbitrated name conflict: ``outcome`` is ``refused`` (``kept`` holds the name,
    ``other`` was refused), ``replaced`` (``kept`` displaced ``other``) or ``contested``
    (neither ``kept`` nor ``other`` holds it)."""

    kind: str
    name: str
    kept: str
    other: str
    outcome: str
    message: str

    def involves(self, plugin: str) -> bool:
        return plugin in (self.kept, self.other)


def current_plugin() -> str:
    """Name of the plugin whose hook is running (``"<user>"`` outside plugin loading)."""
    return getattr(_attr, "name", USER)


def current_rank() -> int:
    """Precedence rank of the registering plugin (``RANK_OVERRIDE`` for user code)."""
    return int(getattr(_attr, "rank", RANK_OVERRIDE))


def _strict() -> bool:
    return bool(getattr(_attr, "strict", False))


class attributing:
    """``with attributing("plugin", rank=RANK_THIRD_PARTY):`` attributes registrations to
    a plugin of that precedence rank; ``strict`` makes conflicts raise."""

    def __init__(self, name: str, rank: int = RANK_THIRD_PARTY, strict: bool = False) -> None:
        self.name, self.rank, self.strict = name, rank, strict
        self.prev: tuple[Any, Any, Any] = (None, None, None)

    def __enter__(self) -> None:
        self.prev = (getattr(_attr, "name", None), getattr(_attr, "rank", None),
                     getattr(_attr, "strict", None))
        _attr.name, _attr.rank, _attr.strict = self.name, self.rank, self.strict

    def __exit__(self, *exc: Any) -> None:
        for key, val in zip(("name", "rank", "strict"), self.prev):
            if val is None:
                if hasattr(_attr, key):
                    delattr(_attr, key)
            else:
                setattr(_attr, key, val)


def arbitrate(kind: str, name: str, owner: str, owner_rank: int, *, override: bool = False,
              log: list[Conflict] | None = None) -> str:
    """Decide a claim on ``name`` (held by ``owner`` at ``owner_rank``) by the plugin now
    registering: ``"replace"``, ``"refuse"`` or ``"contest"``. Warns (or raises under
    strict loading / for user code) and appends the ``Conflict`` to ``log``."""
    plugin, rank = current_plugin(), current_rank()
    if plugin == owner:
        raise PluginError(f"{kind} {name!r} is registered twice by plugin {plugin!r}")
    both = f"{kind} {name!r} is registered by both plugin {owner!r} and plugin {plugin!r}"
    if plugin == USER:
        if override:
            outcome, why = "replace", "user code replaced it (override=True)"
        else:
            raise PluginError(f"{both}; pass override=True to replace it, or (operators) register "
                              f"an alternative implementation with register_impl and a priority")
    elif rank < owner_rank:
        outcome = "replace"
        why = f"{plugin!r} ({RANK_NAMES[rank]}) takes precedence over {owner!r} ({RANK_NAMES[owner_rank]})"
    elif rank > owner_rank or rank < RANK_THIRD_PARTY:
        outcome = "refuse"
        why = (f"{owner!r} ({RANK_NAMES[owner_rank]}) keeps it and {plugin!r}'s registration is refused; "
               f"set PLEXNET_PLUGINS_ALLOW_OVERRIDE={plugin} to let {plugin!r} override it, or "
               f"(operators) register an alternative implementation with register_impl and a priority")
    else:
        outcome = "contest"
        why = (f"two third-party plugins claim it, so neither gets it (the outcome must not depend on "
               f"load order); set PLEXNET_PLUGINS_ALLOW_OVERRIDE={owner} or ={plugin} to choose")
    msg = f"{both}: {why}"
    if _strict() and outcome != "replace":
        raise PluginError(msg)
    kept, other = (plugin, owner) if outcome == "replace" else (owner, plugin)
    if log is not None:
        log.append(Conflict(kind, name, kept, other, outcome + "d", msg))
    if plugin != USER or outcome != "replace":
        warnings.warn(f"plexnet: {msg}", PluginConflictWarning, stacklevel=4)
    return outcome


_loader: Callable[[], Any] | None = None


def set_registries_loader(loader: Callable[[], Any] | None) -> None:
    """Install the function that returns the process-wide registries, plugins loaded.

    The plugin manager (``plexnet.plugins``, a layer above) installs it when imported,
    so that the layers below it (device backends, operator contracts) reach the
    registries without importing upward."""
    global _loader
    _loader = loader


#: bumped whenever the process-wide registries are replaced (a new plugin manager): caches
#: built from the old ones compare it and drop their entries
generation = 0


def registries_replaced() -> None:
    """The plugin manager (and so every registry) was replaced: derived caches are stale."""
    global generation
    generation += 1


def registries() -> Any:
    """The process-wide registries (``plexnet.plugins.Registries``), plugins loaded."""
    loader = _loader
    if loader is None:
        raise PluginError("plexnet's plugin manager is not set up: import plexnet (or plexnet.plugins) first")
    return loader()


class NotRegisteredError(ValueError, AssertionError):
    """An unknown name given to a registry's ``create``: a ValueError (MXNet's optimizer
    registry) and an AssertionError (MXNet's initializer and metric registries assert it)."""


class Registry(Generic[T]):
    """A name -> object map with per-entry owner and rank, and change listeners."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._owner: dict[str, str] = {}
        self._rank: dict[str, int] = {}
        self._contested: dict[str, int] = {}  # name -> rank at which it is contested
        self._lock = threading.RLock()
        self._listeners: list[Callable[[], None]] = []
        self.conflicts: list[Conflict] = []

    def register(self, name: str, obj: T, *, override: bool = False) -> T:
        """Add ``obj`` under ``name``; a name held by another plugin is arbitrated by rank
        (see the module docstring). Returns ``obj`` whether or not it was accepted."""
        self.claim(name, obj, override=override)
        return obj

    def claim(self, name: str, obj: T, *, override: bool = False) -> bool:
        """``register`` that says whether ``obj`` now holds ``name``."""
        if not isinstance(name, str) or not name:
            raise PluginError(f"{self.kind} name must be a non-empty string, got {name!r}")
        plugin, rank = current_plugin(), current_rank()
        with self._lock:
            contested = self._contested.get(name)
            if contested is not None and rank >= contested and plugin != USER:
                self._contested_again(name, plugin)
                return False
            if name in self._items:
                outcome = arbitrate(self.kind, name, self._owner[name], self._rank[name],
                                    override=override, log=self.conflicts)
                if outcome == "refuse":
                    return False
                loser = self._owner[name]
                self._displace(name, loser)
                if outcome == "contest":
                    self._contested[name] = rank
                    self._changed()
                    return False
            self._contested.pop(name, None)
            self._items[name] = obj
            self._owner[name] = plugin
            self._rank[name] = rank
        self._changed()
        return True

    def _contested_again(self, name: str, plugin: str) -> None:
        msg = (f"{self.kind} {name!r} is contested by third-party plugins, so {plugin!r}'s registration "
               f"is refused as well; set PLEXNET_PLUGINS_ALLOW_OVERRIDE={plugin} to choose it")
        if _strict():
            raise PluginError(msg)
        self.conflicts.append(Conflict(self.kind, name, "", plugin, "contested", msg))
        warnings.warn(f"plexnet: {msg}", PluginConflictWarning, stacklevel=4)

    def _displace(self, name: str, plugin: str) -> None:
        """Drop ``name`` held by ``plugin`` after a lost conflict (subclasses drop more)."""
        self._items.pop(name, None)
        self._owner.pop(name, None)
        self._rank.pop(name, None)

    def unregister(self, name: str) -> None:
        with self._lock:
            self._items.pop(name, None)
            self._owner.pop(name, None)
            self._rank.pop(name, None)
        self._changed()

    def remove_plugin(self, plugin: str) -> list[str]:
        """Drop everything ``plugin`` registered (rollback after a failed hook)."""
        with self._lock:
            names = [n for n, p in self._owner.items() if p == plugin]
            for n in names:
                del self._items[n]
                del self._owner[n]
                self._rank.pop(n, None)
            self.conflicts = [c for c in self.conflicts if not c.involves(plugin)]
        if names:
            self._changed()
        return names

    def by_plugin(self, plugin: str) -> list[str]:
        with self._lock:
            return sorted(n for n, p in self._owner.items() if p == plugin)

    def owner(self, name: str) -> str | None:
        return self._owner.get(name)

    def rank(self, name: str) -> int:
        """Precedence rank of the plugin holding ``name`` (``RANK_THIRD_PARTY`` if unknown)."""
        return self._rank.get(name, RANK_THIRD_PARTY)

    def conflicts_of(self, plugin: str) -> list[Conflict]:
        """The conflicts ``plugin`` took part in."""
        return [c for c in self.conflicts if c.involves(plugin)]

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
            raise NotRegisteredError(f"{self.kind} {name!r} is not registered; {self.known}: "
                                     f"{', '.join(sorted(self.classes))}")
        return self.classes[key](*args, **kwargs)
