"""The plugin manager: loads built-in and installed plugins into plexnet's registries.

Built-in parts (the numpy CPU backend, the ``local`` kvstore, the standard optimizers)
are internal plugins registered through the same hooks as installed ones, which come
from the entry-point group ``plexnet.plugins``. Loading is lazy and idempotent: the
first use of a registry loads everything.

Environment variables:

``PLEXNET_DISABLE_PLUGIN_AUTOLOAD=1``
    load no entry-point plugins (built-ins still load).
``PLEXNET_PLUGINS_BLOCK=a,b``
    skip the named entry-point plugins.
``PLEXNET_PLUGINS_ALLOW=a,b``
    load only the named entry-point plugins.
``PLEXNET_PLUGINS_STRICT=1``
    raise the first plugin failure instead of reporting and skipping it.
"""
from __future__ import annotations

import importlib
import os
import threading
import traceback
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Iterable

import pluggy

from . import hookspecs
from .base import API_VERSION, PluginError
from .registry import Registry, attributing

__all__ = ["PluginRecord", "Registries", "PlexnetPluginManager", "get_manager", "registries",
           "ensure_loaded", "ENTRY_POINT_GROUP", "INTERNAL_PLUGINS"]

ENTRY_POINT_GROUP = "plexnet.plugins"

#: Internal plugins, registered first, in this order.
INTERNAL_PLUGINS: tuple[str, ...] = (
    "plexnet.backends.cpu",
    "plexnet.kvstore.local",
    "plexnet.optimizer.builtin",
    "plexnet.io.builtin",
)

_REGISTER_HOOKS = {
    "plexnet_register_device_backends": "backends",
    "plexnet_register_operators": "operators",
    "plexnet_register_kvstores": "kvstores",
    "plexnet_register_optimizers": "optimizers",
    "plexnet_register_data_iters": "data_iters",
}


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

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("name", "module", "version", "distribution", "builtin",
                                             "status", "error", "registered")}


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


class PlexnetPluginManager:
    """pluggy manager plus registries, failure isolation and reporting.

    ``PlexnetPluginManager(internal=False, entry_points=False)`` gives an empty manager
    for tests: register throwaway plugins with ``add_plugin`` and call ``load()``.
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
        self._lock = threading.RLock()

    # -- collecting plugins -------------------------------------------------------------
    def add_plugin(self, plugin: Any, name: str, *, version: str | None = None,
                   distribution: str | None = None, builtin: bool = False) -> PluginRecord:
        """Queue a plugin object/module for registration (before or after ``load``)."""
        rec = PluginRecord(name=name, module=getattr(plugin, "__name__", type(plugin).__name__),
                           version=version, distribution=distribution, builtin=builtin)
        if name in self.records and self.records[name].status != "disabled":
            other = self.records[name]
            rec.status, rec.error = "failed", (
                f"plugin name {name!r} is already taken by {other.module!r} "
                f"({other.distribution or 'built-in'}); {rec.module!r} is skipped")
            self.records[f"{name} ({rec.module})"] = rec
            return rec
        self.records[name] = rec
        self._pending.append((name, plugin, rec))
        if self._loaded:
            self._register_pending()
        return rec

    def _collect_internal(self) -> None:
        for modname in INTERNAL_PLUGINS:
            rec_name = modname.rsplit(".", 1)[0].split(".", 1)[1] + ":" + modname.rsplit(".", 1)[1]
            try:
                mod = importlib.import_module(modname)
            except ImportError as e:
                if e.name and modname.startswith(e.name):  # part not present in this build
                    continue
                self._fail(PluginRecord(rec_name, modname, builtin=True), e)
                continue
            except Exception as e:  # noqa: BLE001 - report and go on
                self._fail(PluginRecord(rec_name, modname, builtin=True), e)
                continue
            self.add_plugin(mod, rec_name, builtin=True)

    def _collect_entry_points(self) -> None:
        if os.environ.get("PLEXNET_DISABLE_PLUGIN_AUTOLOAD", "") not in ("", "0"):
            return
        block = _names(os.environ.get("PLEXNET_PLUGINS_BLOCK", ""))
        allow = _names(os.environ.get("PLEXNET_PLUGINS_ALLOW", ""))
        for ep in sorted(_entry_points(), key=lambda e: e.name):
            dist = getattr(ep, "dist", None)
            rec = PluginRecord(name=ep.name, module=ep.value,
                               version=getattr(dist, "version", None),
                               distribution=getattr(dist, "name", None))
            if ep.name in block or (allow and ep.name not in allow):
                rec.status = "disabled"
                rec.error = "disabled by PLEXNET_PLUGINS_BLOCK" if ep.name in block else \
                    "not in PLEXNET_PLUGINS_ALLOW"
                self.records.setdefault(ep.name, rec)
                continue
            try:
                plugin = ep.load()
            except Exception as e:  # noqa: BLE001
                self._fail(rec, e)
                continue
            self.add_plugin(plugin, ep.name, version=rec.version, distribution=rec.distribution)

    # -- loading --------------------------------------------------------------------------
    def load(self) -> "PlexnetPluginManager":
        """Collect and register every plugin once; later calls return at once."""
        if self._loaded:
            return self
        with self._lock:
            if self._loaded:
                return self
            if self._use_internal:
                self._collect_internal()
            if self._use_entry_points:
                self._collect_entry_points()
            self._loaded = True
            self._register_pending()
        return self

    def _register_pending(self) -> None:
        while self._pending:
            name, plugin, rec = self._pending.pop(0)
            self._register_one(name, plugin, rec)

    def _register_one(self, name: str, plugin: Any, rec: PluginRecord) -> None:
        declared = getattr(plugin, "PLEXNET_API_VERSION", None)
        if declared is not None and str(declared).split(".")[0] != API_VERSION.split(".")[0]:
            rec.status = "incompatible"
            rec.error = (f"plugin {name!r} targets plexnet plugin API {declared}, this core "
                         f"provides {API_VERSION}; upgrade the plugin or plexnet")
            return
        try:
            self.pm.register(plugin, name=name)
            self.pm.check_pending()
        except Exception as e:  # noqa: BLE001
            if self.pm.is_registered(plugin):
                self.pm.unregister(plugin)
            self._fail(rec, e)
            return
        regs = self.registries.all()
        try:
            with attributing(name):
                for hook_name, reg_name in _REGISTER_HOOKS.items():
                    reg = regs[reg_name]
                    arg = reg if reg_name == "operators" else reg.register
                    argname = "registry" if reg_name == "operators" else "register"
                    for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                        if impl.plugin_name == name:
                            impl.function(**{argname: arg})
        except Exception as e:  # noqa: BLE001 - isolate the plugin
            for reg in regs.values():
                reg.remove_plugin(name)
            self.pm.unregister(plugin)
            self._fail(rec, e)
            return
        rec.registered = {k: v for k, v in ((k, r.by_plugin(name)) for k, r in regs.items()) if v}

    def _fail(self, rec: PluginRecord, err: BaseException) -> None:
        rec.status = "failed"
        rec.error = f"{type(err).__name__}: {err}"
        rec.traceback = "".join(traceback.format_exception(type(err), err, err.__traceback__))
        self.records[rec.name] = rec
        if os.environ.get("PLEXNET_PLUGINS_STRICT", "") not in ("", "0"):
            raise PluginError(f"plugin {rec.name!r} ({rec.module}) failed: {rec.error}") from err
        import warnings
        warnings.warn(f"plexnet: plugin {rec.name!r} ({rec.module}) failed to load and is skipped: "
                      f"{rec.error}", RuntimeWarning, stacklevel=3)

    # -- queries ----------------------------------------------------------------------------
    def report(self) -> list[dict[str, Any]]:
        """One dict per plugin: name, version, status, error, what it registered."""
        self.load()
        return [r.as_dict() for r in self.records.values()]

    def failures(self) -> list[PluginRecord]:
        return [r for r in self.records.values() if r.status in ("failed", "incompatible")]

    @property
    def hook(self) -> Any:
        return self.pm.hook


def _names(s: str) -> set[str]:
    return {x.strip() for x in s.split(",") if x.strip()}


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
    """Replace the process-wide manager (tests, embedding); ``None`` resets lazily."""
    global _manager
    with _manager_lock:
        _manager = manager


def registries() -> Registries:
    """The process-wide registries, plugins loaded."""
    return get_manager().registries


def ensure_loaded() -> None:
    get_manager()
