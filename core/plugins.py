"""The plugin manager: loads built-in and installed plugins into plexnet's registries.

Built-in parts (the numpy CPU backend, the ``local`` kvstore, the standard optimizers)
are internal plugins registered through the same hooks as installed ones, which come
from the entry-point group ``plexnet.plugins``. Loading is lazy and idempotent: the
first use of a registry loads everything (thread-safe; a hook that itself touches the
registries sees them as loaded so far instead of deadlocking).

What is reported per plugin (``PluginRecord``, listed by ``plexnet plugins``):

``ok``
    registered; ``registered`` says what, per registry kind.
``failed``
    importing its entry point, registering it with pluggy (e.g. a misspelt hook name) or
    one of its register hooks raised, or its name is taken by another plugin. Everything
    it registered is rolled back, ``error`` says why, a ``RuntimeWarning`` names it, and
    the rest of plexnet keeps working.
``incompatible``
    its module declares a ``PLEXNET_API_VERSION`` this core cannot serve (another major
    version, or a newer minor one); it is not registered.
``disabled``
    switched off by one of the environment variables below; it is not even imported.

Environment variables (read when a manager loads):

``PLEXNET_DISABLE_PLUGIN_AUTOLOAD=1``
    load no entry-point plugins (built-ins still load); they are listed as disabled.
``PLEXNET_PLUGINS_BLOCK=a,b``
    skip the named entry-point plugins (entry-point name or distribution name).
``PLEXNET_PLUGINS_ALLOW=a,b``
    load only the named entry-point plugins (entry-point name or distribution name).
``PLEXNET_PLUGINS_ALLOW_OVERRIDE=a,b``
    let the named plugins (entry-point or distribution name) override names that the
    built-ins or the standard plugins hold (see *Precedence*).
``PLEXNET_PLUGINS_STRICT=1``
    raise the first plugin failure or name conflict (a ``PluginError``) instead of
    reporting and skipping it; useful in CI.

Precedence: the built-in parts load first, then the standard first-party plugins
(``STANDARD_DISTRIBUTIONS``, in that order), then every other plugin (by name). A name
conflict is decided by rank, not by load order (``plexnet.registry``): built-ins and
standard plugins keep their names and a third-party plugin's conflicting registration
is refused with a ``PluginConflictWarning`` naming both plugins and the name; the
refused plugin keeps its other entries. Two third-party plugins claiming one name get
neither. Alternative implementations (``register_impl`` with a priority) are not
conflicts; a plugin in ``PLEXNET_PLUGINS_ALLOW_OVERRIDE`` outranks everything.
"""
from __future__ import annotations

import importlib
import os
import threading
import traceback
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Iterable

import pluggy

from . import backends, engine, hookspecs
from . import registry as _registry
from .base import API_VERSION, PluginError, __version__
from .registry import (RANK_BUILTIN, RANK_OVERRIDE, RANK_STANDARD, RANK_THIRD_PARTY, Conflict, Registry,
                       attributing)

__all__ = ["PluginRecord", "Registries", "PlexnetPluginManager", "get_manager", "set_manager",
           "registries", "ensure_loaded", "ENTRY_POINT_GROUP", "INTERNAL_PLUGINS", "STATUSES",
           "check_api_version", "STANDARD_DISTRIBUTIONS"]

ENTRY_POINT_GROUP = "plexnet.plugins"

#: Internal plugins, registered first, in this order. A module missing from this build
#: (a part not written yet) is skipped silently; one that fails to import is reported.
INTERNAL_PLUGINS: tuple[str, ...] = (
    "plexnet.backends.cpu",
    "plexnet.operator.custom",
    "plexnet.kvstore.local",
    "plexnet.optimizer.builtin",
    "plexnet.optimizer.more",
    "plexnet.io.builtin",
    "plexnet.symbol.sparse_ops",
)

#: The first-party plugins: they load right after the built-ins, in this order, and keep
#: their names against third-party plugins (see the module docstring).
STANDARD_DISTRIBUTIONS: tuple[str, ...] = (
    "plexnet-ops-basic",
    "plexnet-ops-linalg",
    "plexnet-ops-random",
    "plexnet-ops-image",
    "plexnet-ops-contrib",
    "plexnet-ops-quantization",
    "plexnet-kvstore-dist",
    "plexnet-device-cuda",
    "plexnet-ops-cudnn",
)

#: register hook -> registry attribute of ``Registries``. The operators hook receives the
#: registry itself (argument ``registry``), the others its ``register`` method.
_REGISTER_HOOKS = {
    "plexnet_register_device_backends": "backends",
    "plexnet_register_operators": "operators",
    "plexnet_register_kvstores": "kvstores",
    "plexnet_register_optimizers": "optimizers",
    "plexnet_register_data_iters": "data_iters",
}

STATUSES = ("ok", "failed", "incompatible", "disabled")


@dataclass
class PluginRecord:
    """What ``plexnet plugins`` reports about one plugin."""

    name: str
    module: str
    version: str | None = None
    distribution: str | None = None
    builtin: bool = False
    status: str = "ok"  # ok | failed | incompatible | disabled
    error: str | None = None
    traceback: str | None = None
    registered: dict[str, list[str]] = field(default_factory=dict)
    rank: int = RANK_THIRD_PARTY
    conflicts: list[str] = field(default_factory=list)

    @property
    def standard(self) -> bool:
        """A first-party plugin (its distribution is in ``STANDARD_DISTRIBUTIONS``)."""
        return _canon(self.distribution) in _STANDARD_CANON

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("name", "module", "version", "distribution", "builtin",
                                             "standard", "status", "error", "registered", "conflicts")}

    def origin(self) -> str:
        """Where the plugin comes from, for messages."""
        if self.distribution:
            return f"distribution {self.distribution}" + (f" {self.version}" if self.version else "")
        return "built-in" if self.builtin else f"module {self.module}"


class Registries:
    """The registries one plugin manager fills."""

    def __init__(self) -> None:
        from .operator.registry import OpRegistry
        self.backends: Registry[Any] = Registry("device backend")
        self.operators = OpRegistry()
        self.kvstores: Registry[Any] = Registry("kvstore type")
        self.optimizers: Registry[Any] = Registry("optimizer")
        self.data_iters: Registry[Any] = Registry("data iterator")

    def all(self) -> dict[str, Any]:
        return {"backends": self.backends, "operators": self.operators, "kvstores": self.kvstores,
                "optimizers": self.optimizers, "data_iters": self.data_iters}


def check_api_version(declared: Any, provided: str = API_VERSION) -> str | None:
    """Why a plugin declaring ``PLEXNET_API_VERSION = declared`` cannot be loaded by a core
    providing ``provided``; None when it can (same major, minor not newer)."""
    try:
        parts = str(declared).strip().split(".")
        major, minor = int(parts[0]), int(parts[1]) if len(parts) > 1 and parts[1] else 0
    except (ValueError, IndexError):
        return f"declares PLEXNET_API_VERSION={declared!r}, which is not 'MAJOR.MINOR'"
    pmajor, pminor = (int(x) for x in provided.split(".")[:2])
    if major != pmajor:
        return (f"targets plexnet plugin API {declared}, this plexnet provides {provided} "
                f"(major versions differ); install a matching version of the plugin or of plexnet")
    if minor > pminor:
        return (f"needs plexnet plugin API >= {declared}, this plexnet provides {provided}; "
                f"upgrade plexnet")
    return None


class PlexnetPluginManager:
    """pluggy manager plus registries, failure isolation and reporting.

    ``PlexnetPluginManager(internal=False, entry_points=False)`` gives an empty manager
    for tests: register throwaway plugins with ``add_plugin`` (before or after ``load()``)
    and call ``load()``.
    """

    def __init__(self, *, internal: bool = True, entry_points: bool = True) -> None:
        self.pm = pluggy.PluginManager(hookspecs.NAME)
        self.pm.add_hookspecs(hookspecs)
        self.registries = Registries()
        self.records: dict[str, PluginRecord] = {}
        self._pending: list[tuple[str, Any, PluginRecord]] = []
        self._use_internal = internal
        self._use_entry_points = entry_points
        self._loaded = False
        self._loading = False
        self._load_error: BaseException | None = None
        self._lock = threading.RLock()
        self._override: set[str] = set()

    # -- precedence -----------------------------------------------------------------------
    def allow_override(self, *names: str) -> None:
        """Let the named plugins (plugin, entry-point or distribution names) override
        names held by built-ins and standard plugins; applies to plugins added later
        (``PLEXNET_PLUGINS_ALLOW_OVERRIDE`` does the same from the environment)."""
        self._override.update(_canon(n) for n in names)

    def _rank_of(self, rec: PluginRecord) -> int:
        ids = {_canon(rec.name), _canon(rec.distribution)}
        if ids & (self._override | {_canon(n) for n in _names(os.environ.get("PLEXNET_PLUGINS_ALLOW_OVERRIDE", ""))}):
            return RANK_OVERRIDE
        if rec.builtin:
            return RANK_BUILTIN
        return RANK_STANDARD if rec.standard else RANK_THIRD_PARTY

    # -- collecting plugins -------------------------------------------------------------
    def add_plugin(self, plugin: Any, name: str, *, version: str | None = None,
                   distribution: str | None = None, builtin: bool = False) -> PluginRecord:
        """Queue a plugin object/module for registration; after ``load()`` it is
        registered at once. Returns its record (check ``status``)."""
        with self._lock:
            rec = PluginRecord(name=name, module=_module_name(plugin),
                               version=version if version is not None else _plugin_version(plugin, builtin),
                               distribution=distribution, builtin=builtin)
            rec.rank = self._rank_of(rec)
            other = self.records.get(name)
            if other is not None and other.status != "disabled":
                self._fail(rec, PluginError(
                    f"plugin name {name!r} is claimed by both {other.module!r} ({other.origin()}) and "
                    f"{rec.module!r} ({rec.origin()}); the second one is skipped"), with_traceback=False)
                return rec
            self.records[name] = rec
            self._pending.append((name, plugin, rec))
            if self._loaded and not self._loading:
                self._register_pending()
            return rec

    def _collect_internal(self) -> None:
        for modname in INTERNAL_PLUGINS:
            pkg, leaf = modname.rsplit(".", 1)
            rec_name = pkg.split(".", 1)[1] + ":" + leaf if "." in pkg else leaf
            try:
                mod = importlib.import_module(modname)
            except ImportError as e:
                if e.name and (modname == e.name or modname.startswith(e.name + ".")):
                    continue  # part not present in this build
                self._fail(PluginRecord(rec_name, modname, version=__version__, builtin=True), e)
                continue
            except Exception as e:  # noqa: BLE001 - report and go on
                self._fail(PluginRecord(rec_name, modname, version=__version__, builtin=True), e)
                continue
            self.add_plugin(mod, rec_name, builtin=True)

    def _collect_entry_points(self) -> None:
        autoload_off = _flag("PLEXNET_DISABLE_PLUGIN_AUTOLOAD")
        block = _names(os.environ.get("PLEXNET_PLUGINS_BLOCK", ""))
        allow = _names(os.environ.get("PLEXNET_PLUGINS_ALLOW", ""))
        seen: set[tuple[str, str, Any]] = set()
        for ep in sorted(_entry_points(), key=_load_order):
            dist = getattr(ep, "dist", None)
            key = (ep.name, ep.value, getattr(dist, "name", None))
            if key in seen:  # one distribution visible twice on sys.path
                continue
            seen.add(key)
            rec = PluginRecord(name=ep.name, module=ep.value,
                               version=getattr(dist, "version", None),
                               distribution=getattr(dist, "name", None))
            ids = {ep.name} | ({rec.distribution} if rec.distribution else set())
            reason = None
            if autoload_off:
                reason = "disabled by PLEXNET_DISABLE_PLUGIN_AUTOLOAD"
            elif ids & block:
                reason = "disabled by PLEXNET_PLUGINS_BLOCK"
            elif allow and not ids & allow:
                reason = "not in PLEXNET_PLUGINS_ALLOW"
            if reason is not None:
                rec.status, rec.error = "disabled", reason
                self.records.setdefault(ep.name, rec)
                continue
            if ep.name in self.records and self.records[ep.name].status != "disabled":
                other = self.records[ep.name]
                self._fail(rec, PluginError(
                    f"plugin name {ep.name!r} is claimed by both {other.module!r} ({other.origin()}) and "
                    f"{rec.module!r} ({rec.origin()}); the second one is skipped"), with_traceback=False)
                continue
            try:
                plugin = ep.load()
            except Exception as e:  # noqa: BLE001 - report by name and skip
                self._fail(rec, e)
                continue
            self.add_plugin(plugin, ep.name, version=rec.version, distribution=rec.distribution)

    # -- loading --------------------------------------------------------------------------
    def load(self) -> "PlexnetPluginManager":
        """Collect and register every plugin once; later calls return at once.

        In strict mode (``PLEXNET_PLUGINS_STRICT=1``) a plugin failure raises here, and
        again on every later call, instead of being skipped."""
        if self._loaded and self._load_error is None:
            return self
        with self._lock:
            if self._loading:  # a hook touching the registries while they are filled
                return self
            if not self._loaded:
                self._loading = True
                try:
                    if self._use_internal:
                        self._collect_internal()
                    if self._use_entry_points:
                        self._collect_entry_points()
                    self._register_pending()
                except PluginError as e:
                    self._load_error = e
                    raise
                finally:
                    self._loading = False
                    self._loaded = True
            elif self._load_error is not None:
                raise PluginError(f"plugin loading failed (strict mode): {self._load_error}") \
                    from self._load_error
        return self

    def _register_pending(self) -> None:
        # by precedence rank (stable): winners register first, so messages name the holder
        self._pending.sort(key=lambda p: p[2].rank)
        while self._pending:
            name, plugin, rec = self._pending.pop(0)
            self._register_one(name, plugin, rec)

    def _register_one(self, name: str, plugin: Any, rec: PluginRecord) -> None:
        declared = getattr(plugin, "PLEXNET_API_VERSION", None)
        if declared is not None:
            why = check_api_version(declared)
            if why is not None:
                self._fail(rec, PluginError(f"plugin {name!r} {why}"), status="incompatible",
                           with_traceback=False)
                return
        try:
            self.pm.register(plugin, name=name)
            self.pm.check_pending()
        except Exception as e:  # noqa: BLE001 - e.g. a hook name without a spec
            if self.pm.get_plugin(name) is plugin:
                self.pm.unregister(name=name)
            self._fail(rec, e)
            return
        regs = self.registries.all()
        try:
            with attributing(name, rank=rec.rank, strict=_flag("PLEXNET_PLUGINS_STRICT")):
                for hook_name, reg_name in _REGISTER_HOOKS.items():
                    reg = regs[reg_name]
                    arg = reg if reg_name == "operators" else reg.register
                    for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                        if impl.plugin_name != name:
                            continue
                        if impl.hookwrapper or getattr(impl, "wrapper", False):
                            raise PluginError(f"{hook_name} of plugin {name!r} is a hook wrapper; "
                                              f"register hooks must be plain hook implementations")
                        # pluggy lets an implementation take fewer arguments than its spec
                        impl.function(**{a: arg for a in impl.argnames})
        except Exception as e:  # noqa: BLE001 - isolate the plugin: roll back, report, go on
            for reg in regs.values():
                reg.remove_plugin(name)
            if self.pm.get_plugin(name) is plugin:
                self.pm.unregister(name=name)
            self._fail(rec, e)
            return
        rec.status, rec.error = "ok", None
        self._refresh_records()

    def _refresh_records(self) -> None:
        """Recompute what each loaded plugin holds: a later plugin may have displaced
        (or contested) names of an earlier one."""
        regs = self.registries.all()
        for r in self.records.values():
            if r.status != "ok":
                continue
            r.registered = {k: v for k, v in ((k, g.by_plugin(r.name)) for k, g in regs.items()) if v}
            r.conflicts = [c.message for c in self.conflicts() if c.involves(r.name)]

    def conflicts(self) -> list[Conflict]:
        """Every name conflict the registries arbitrated, in order."""
        return [c for reg in self.registries.all().values() for c in reg.conflicts]

    def _fail(self, rec: PluginRecord, err: BaseException, *, status: str = "failed",
              with_traceback: bool = True) -> None:
        rec.status = status
        rec.error = str(err) if isinstance(err, PluginError) else f"{type(err).__name__}: {err}"
        if with_traceback:
            rec.traceback = "".join(traceback.format_exception(type(err), err, err.__traceback__))
        key = rec.name
        if self.records.get(key, rec) is not rec and self.records[key].status != "disabled":
            key = f"{rec.name} ({rec.module})"  # keep the record of the plugin that owns the name
        self.records[key] = rec
        if _flag("PLEXNET_PLUGINS_STRICT"):
            raise PluginError(f"plugin {rec.name!r} ({rec.module}) {status}: {rec.error}") from err
        what = "is incompatible and is skipped" if status == "incompatible" else "failed to load and is skipped"
        warnings.warn(f"plexnet: plugin {rec.name!r} ({rec.module}) {what}: {rec.error}",
                      RuntimeWarning, stacklevel=2)

    # -- removing ---------------------------------------------------------------------------
    def remove_plugin(self, name: str) -> None:
        """Unregister plugin ``name`` and drop everything it registered."""
        with self._lock:
            for reg in self.registries.all().values():
                reg.remove_plugin(name)
            if self.pm.get_plugin(name) is not None:
                self.pm.unregister(name=name)
            self._pending = [p for p in self._pending if p[0] != name]
            self.records.pop(name, None)
            self._refresh_records()

    # -- queries ----------------------------------------------------------------------------
    def report(self) -> list[dict[str, Any]]:
        """One dict per plugin: name, module, version, distribution, builtin, status,
        error, and what it registered (registry kind -> names)."""
        self.load()
        return [r.as_dict() for r in self.records.values()]

    def failures(self) -> list[PluginRecord]:
        return [r for r in self.records.values() if r.status in ("failed", "incompatible")]

    @property
    def hook(self) -> Any:
        return self.pm.hook


def _canon(name: str | None) -> str:
    """Distribution names compare like pip does (PEP 503: case, ``-``, ``_``, ``.``)."""
    return (name or "").strip().lower().replace("_", "-").replace(".", "-")


_STANDARD_CANON = {_canon(d) for d in STANDARD_DISTRIBUTIONS}


def _load_order(ep: Any) -> tuple[int, str, str]:
    """Standard plugins first (in declared order), then the others by name."""
    dist = _canon(getattr(getattr(ep, "dist", None), "name", None))
    std = [_canon(d) for d in STANDARD_DISTRIBUTIONS]
    return (std.index(dist) if dist in std else len(std), ep.name, ep.value)


def _flag(var: str) -> bool:
    return os.environ.get(var, "").strip().lower() not in ("", "0", "false", "no", "off")


def _names(s: str) -> set[str]:
    return {x.strip() for x in s.split(",") if x.strip()}


def _module_name(plugin: Any) -> str:
    name = getattr(plugin, "__name__", None)
    if isinstance(name, str):
        return name
    cls = type(plugin)
    return f"{cls.__module__}.{cls.__qualname__}"


def _plugin_version(plugin: Any, builtin: bool) -> str | None:
    if builtin:
        return __version__
    v = getattr(plugin, "__version__", None)
    return str(v) if v is not None else None


def _entry_points() -> Iterable[metadata.EntryPoint]:
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


_manager: PlexnetPluginManager | None = None
_manager_lock = threading.Lock()


def get_manager() -> PlexnetPluginManager:
    """The process-wide plugin manager (created and loaded on first use)."""
    global _manager
    m = _manager
    if m is None:
        with _manager_lock:
            if _manager is None:
                _manager = PlexnetPluginManager()
            m = _manager
    return m.load()


def set_manager(manager: PlexnetPluginManager | None) -> None:
    """Replace the process-wide manager (tests, embedding); ``None`` resets lazily.

    Caches derived from the registries (resolved device backends) are dropped."""
    global _manager
    with _manager_lock:
        _manager = manager
    backends._reset_cache()
    _registry.registries_replaced()  # nd/sym operator functions of the old registries


def _plugin_engine_observers() -> list[Any]:
    """The engine observers plugins return from ``plexnet_engine_observers`` (the
    engine asks through the source subscribed below; loading plugins if needed)."""
    return [o for lst in get_manager().hook.plexnet_engine_observers() for o in lst or ()]


engine.add_observer_source(_plugin_engine_observers)


def registries() -> Registries:
    """The process-wide registries, plugins loaded."""
    return get_manager().registries


def ensure_loaded() -> None:
    get_manager()


# the layers below the plugin manager reach the registries through plexnet.registry
_registry.set_registries_loader(registries)
