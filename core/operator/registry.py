"""The operator registry: semantics once per name, implementations per device type.

``register_property(name, PropertyClass)`` fixes what an operator *is*;
``register_impl(name, device_type, factory, priority=, impl_name=)`` adds a way to *run*
it (``factory(prop, ctx) -> Operator``). For a context the registry picks the forced
implementation if the user set one (``force_impl`` or ``PLEXNET_FORCE_IMPL``), else the
available implementation with the highest priority for that device type, where
``device_type="*"`` (device-generic ``xp`` code) matches every device; at equal priority
an implementation for the exact device type wins over a ``"*"`` one, then the one
registered first. A forced implementation that is missing or unavailable is an error,
never a silent fallback. Selections are cached until the registry changes or
``force_impl`` is called.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable, NamedTuple

from ..base import PlexnetError, PluginError
from .. import registry as _registries_module
from ..registry import USER, Registry, arbitrate, current_plugin, current_rank, registries
from .contract import Operator, OperatorProperty
from .hints import not_installed_message

__all__ = ["OpRegistry", "ImplRecord", "OperatorNotFound", "OpFunctionCache", "parse_force_impl"]


class OperatorNotFound(PlexnetError, AttributeError):
    """No operator (or no implementation for a device) is registered under a name."""


class ImplRecord(NamedTuple):
    op_name: str
    device_type: str
    factory: Callable[[OperatorProperty, Any], Operator]
    priority: int
    impl_name: str
    plugin: str
    available: Callable[[], bool] | None
    rank: int = 0

    def is_available(self) -> bool:
        return self.available is None or bool(self.available())

    def availability(self) -> tuple[bool, str | None]:
        """``(available, reason)``; an ``available()`` that raises counts as unavailable."""
        if self.available is None:
            return True, None
        try:
            ok = bool(self.available())
        except Exception as e:  # noqa: BLE001 - a broken probe means "not usable here"
            return False, f"available() raised {type(e).__name__}: {e}"
        if ok:
            return True, None
        why = getattr(self.available, "reason", None)  # optional: the probe says why
        try:
            why = why() if callable(why) else why
        except Exception:  # noqa: BLE001 - the reason is only for the message
            why = None
        return False, str(why) if why else "available() returned False"


class OpRegistry(Registry[type]):
    """Registry of ``OperatorProperty`` classes plus their implementations."""

    def __init__(self) -> None:
        super().__init__("operator")
        self._impls: dict[str, list[ImplRecord]] = {}
        self._aliases: dict[str, str] = {}
        self._refused: dict[str, set[str]] = {}  # plugin -> operator names it lost
        self._forced: dict[tuple[str, str], str] = {}
        self._op_cache: dict[tuple[Any, ...], Operator] = {}
        self._prop_cache: dict[tuple[Any, ...], OperatorProperty] = {}
        self._select_cache: dict[tuple[str, str], ImplRecord] = {}
        self._gen = 0
        self._cache_lock = threading.Lock()
        self.add_listener(self._clear_caches)
        self._forced.update(parse_force_impl(os.environ.get("PLEXNET_FORCE_IMPL", "")))

    # -- registration ------------------------------------------------------------------------
    def register_property(self, name: str, prop_cls: type[OperatorProperty],
                          aliases: tuple[str, ...] = (), *, override: bool = False) -> type[OperatorProperty]:
        """Register the semantics of operator ``name`` (and optional aliases).

        A name another plugin holds is arbitrated by precedence (``plexnet.registry``);
        when this registration loses, the plugin's later ``register_impl`` calls for the
        name are dropped too (they were written for its own semantics). ``override=True``
        lets user code (not a plugin hook) replace an operator."""
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, OperatorProperty)):
            raise PluginError(f"operator {name!r}: {prop_cls!r} is not an OperatorProperty subclass")
        cls = prop_cls
        if prop_cls.op_name != name:  # keep the docstring: it becomes nd.<name>.__doc__
            cls = type(prop_cls.__name__, (prop_cls,), {"op_name": name, "__doc__": prop_cls.__doc__})
        plugin = current_plugin()
        if not self.claim(name, cls, override=override):
            self._refused.setdefault(plugin, set()).add(name)
            return cls
        for a in aliases:
            if self.claim(a, cls, override=override):
                self._aliases[a] = name
        return cls

    def register_impl(self, name: str, device_type: str, factory: Callable[[OperatorProperty, Any], Operator],
                      *, priority: int = 0, impl_name: str = "default",
                      available: Callable[[], bool] | None = None) -> None:
        """Add an implementation of ``name`` for ``device_type`` (``"*"``: any device).

        ``available`` is an optional probe called when an implementation is chosen; False
        skips it (or, when forced, raises). A probe may carry a ``reason`` attribute (a
        string, or a callable returning one) that the error and ``plexnet plugins`` show."""
        if not isinstance(device_type, str) or not device_type:
            raise PluginError(f"operator {name!r}: device_type must be a non-empty string such as "
                              f"'cpu', 'gpu' or '*', got {device_type!r}")
        if not callable(factory):
            raise PluginError(f"operator {name!r}: implementation factory {factory!r} is not callable")
        name = self._aliases.get(name, name)
        plugin, rank = current_plugin(), current_rank()
        if name in self._refused.get(plugin, ()):
            return  # its operator lost a conflict (already warned): the impl has no semantics here
        with self._lock:
            lst = self._impls.setdefault(name, [])
            for r in list(lst):
                if r.device_type == device_type and r.impl_name == impl_name:
                    if plugin == r.plugin or plugin == USER:
                        raise PluginError(
                            f"implementation {impl_name!r} of operator {name!r} for {device_type!r} is "
                            f"registered by both plugin {r.plugin!r} and plugin {plugin!r}; give one "
                            f"another impl_name")
                    outcome = arbitrate(f"implementation {impl_name!r} for {device_type!r} of operator",
                                        name, r.plugin, r.rank, log=self.conflicts)
                    if outcome == "refuse":
                        return
                    lst.remove(r)
                    if outcome == "contest":
                        self._changed()
                        return
            lst.append(ImplRecord(name, device_type, factory, int(priority), impl_name, plugin, available,
                                  rank))
            # highest priority first; at equal priority the exact device type before "*";
            # the sort is stable, so then registration order
            lst.sort(key=lambda r: (-r.priority, r.device_type == "*"))
        self._changed()

    def _displace(self, name: str, plugin: str) -> None:
        """``plugin`` lost operator ``name``: drop its implementations and aliases of it."""
        super()._displace(name, plugin)
        self._refused.setdefault(plugin, set()).add(name)
        if name in self._impls:
            self._impls[name] = [r for r in self._impls[name] if r.plugin != plugin]
            if not self._impls[name]:
                del self._impls[name]
        for a in [a for a, target in self._aliases.items() if target == name and self.owner(a) == plugin]:
            super()._displace(a, plugin)
            del self._aliases[a]

    def remove_plugin(self, plugin: str) -> list[str]:
        with self._lock:
            self._refused.pop(plugin, None)
            for name in list(self._impls):
                self._impls[name] = [r for r in self._impls[name] if r.plugin != plugin]
                if not self._impls[name]:
                    del self._impls[name]
            names = super().remove_plugin(plugin)
            for a in [a for a in self._aliases if a in names]:
                del self._aliases[a]
        self._changed()
        return names

    def by_plugin(self, plugin: str) -> list[str]:
        props = super().by_plugin(plugin)
        extra = sorted(f"{r.op_name}[{r.device_type}:{r.impl_name}]" for lst in self._impls.values()
                       for r in lst if r.plugin == plugin and r.op_name not in props)
        return props + extra

    # -- lookup ---------------------------------------------------------------------------------
    def canonical(self, name: str) -> str:
        return self._aliases.get(name, name)

    def property_class(self, name: str) -> type[OperatorProperty]:
        cls = self.get(name)
        if cls is None:
            raise OperatorNotFound(not_registered_message(name))
        return cls

    def function_doc(self, name: str, fallback: str) -> str:
        """The docstring of the ``nd.<name>`` / ``sym.<name>`` function: the property's
        doc (``fallback`` without one) and its parameters."""
        cls = self.property_class(name)
        pdoc = cls.param_cls.doc() if cls.param_cls is not None else ""
        return (cls.__doc__ or fallback) + ("\n\nParameters\n----------\n" + pdoc if pdoc else "")

    def create_property(self, name: str, kwargs: dict[str, Any] | None = None) -> OperatorProperty:
        """A property instance for ``name`` initialised with ``kwargs`` (cached when hashable)."""
        kwargs = kwargs or {}
        try:
            key: tuple[Any, ...] | None = (name, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            key = None
        if key is not None:
            p = self._prop_cache.get(key)
            if p is not None:
                return p
        prop = self.property_class(name)()
        prop.init(dict(kwargs))
        if key is not None and prop.is_stateless():
            self._prop_cache[key] = prop
        return prop

    def implementations(self, name: str) -> list[ImplRecord]:
        return list(self._impls.get(self.canonical(name), ()))

    def force_impl(self, name: str, device_type: str, impl_name: str | None) -> None:
        """Always use ``impl_name`` for ``name`` on ``device_type`` (``None`` clears)."""
        name = self.canonical(name)
        if impl_name is None:
            self._forced.pop((name, device_type), None)
        else:
            self._forced[(name, device_type)] = impl_name
        self._clear_caches()

    def forced(self) -> dict[tuple[str, str], str]:
        """Every forced choice: ``{(op, device_type): impl_name}``."""
        return dict(self._forced)

    def forced_impl(self, name: str, device_type: str) -> str | None:
        """The implementation name forced for ``name`` on ``device_type``, if any."""
        name = self.canonical(name)
        forced = self._forced.get((name, device_type))
        if forced is None:
            for (op, dev), impl in list(self._forced.items()):
                if dev == device_type and self.canonical(op) == name:
                    return impl
        return forced

    def select_impl(self, name: str, device_type: str) -> ImplRecord:
        """The implementation used for ``name`` on ``device_type``."""
        name = self.canonical(name)
        key = (name, device_type)
        rec = self._select_cache.get(key)
        if rec is not None:
            return rec
        gen = self._gen
        rec = self._select(name, device_type)
        with self._cache_lock:
            if gen == self._gen:  # the registry did not change meanwhile
                self._select_cache[key] = rec
        return rec

    def _select(self, name: str, device_type: str) -> ImplRecord:
        cands = [r for r in self._impls.get(name, ()) if r.device_type in (device_type, "*")]
        forced = self.forced_impl(name, device_type)
        if forced is not None:
            for r in cands:
                if r.impl_name == forced:
                    ok, why = r.availability()
                    if not ok:
                        raise OperatorNotFound(
                            f"operator {name!r}: forced implementation {forced!r} for {device_type!r} "
                            f"(plugin {r.plugin!r}) is not available here: {why}")
                    return r
            raise OperatorNotFound(f"operator {name!r}: forced implementation {forced!r} for {device_type!r} "
                                   f"is not registered; have: {[r.impl_name for r in cands]}")
        reasons = []
        for r in cands:  # sorted by priority, highest first
            ok, why = r.availability()
            if ok:
                return r
            reasons.append(f"{r.impl_name} (plugin {r.plugin!r}): {why}")
        if not cands:
            if name not in self:
                raise OperatorNotFound(not_registered_message(name))
            raise OperatorNotFound(f"operator {name!r} has no implementation for device type {device_type!r}")
        raise OperatorNotFound(f"operator {name!r}: no implementation for {device_type!r} is available: "
                               + "; ".join(reasons))

    def create_operator(self, prop: OperatorProperty, ctx: Any) -> Operator:
        rec = self.select_impl(prop.op_name, ctx.device_type)
        if not prop.is_stateless():
            return rec.factory(prop, ctx)
        key = (prop.op_name, type(prop), prop.param, ctx, rec.impl_name)
        op = self._op_cache.get(key)
        if op is None:
            op = rec.factory(prop, ctx)
            with self._cache_lock:
                self._op_cache[key] = op
        return op

    def list_operators(self) -> list[str]:
        return sorted(self)

    def _clear_caches(self) -> None:
        self._op_cache = {}
        self._prop_cache = {}
        self._select_cache = {}
        self._gen += 1


def not_registered_message(name: str) -> str:
    """Why operator ``name`` cannot be used: what to install when a standard plugin
    provides it (without the internal operator name), else that it is not registered."""
    return not_installed_message(name) or (f"operator {name!r} is not registered (is the plugin that "
                                           f"provides it installed? `plexnet plugins` lists what is)")


def parse_force_impl(spec: str) -> dict[tuple[str, str], str]:
    """Parse ``PLEXNET_FORCE_IMPL``: comma-separated ``OP:DEVICE=IMPL`` entries, e.g.
    ``Convolution:gpu=cudnn,Pooling:gpu=xp``."""
    out: dict[tuple[str, str], str] = {}
    for item in (x.strip() for x in spec.split(",")):
        if not item:
            continue
        try:
            lhs, impl = item.split("=")
            op, dev = lhs.split(":")
        except ValueError:
            raise PluginError(f"PLEXNET_FORCE_IMPL entry {item!r} is not OP:DEVICE=IMPL "
                              f"(e.g. Convolution:gpu=cudnn)") from None
        op, dev, impl = op.strip(), dev.strip(), impl.strip()
        if not (op and dev and impl):
            raise PluginError(f"PLEXNET_FORCE_IMPL entry {item!r} is not OP:DEVICE=IMPL "
                              f"(e.g. Convolution:gpu=cudnn)")
        out[(op, dev)] = impl
    return out


class OpFunctionCache:
    """The ``nd.<op>`` / ``sym.<op>`` functions: ``make(name)`` builds one per registered
    operator on first use; all are dropped whenever the operator registry changes or is
    replaced (a new plugin manager, ``plugins.set_manager``)."""

    def __init__(self, make: Callable[[str], Any]) -> None:
        self._make = make
        self._fns: dict[str, Any] = {}
        self._watching: Any = None  # the registry whose changes clear the cache
        self._generation = _registries_module.generation

    def get(self, name: str) -> Any | None:
        """The function of operator ``name``, or None when no operator has that name."""
        if self._generation != _registries_module.generation:
            self._fns.clear()
            self._generation = _registries_module.generation
        fn = self._fns.get(name)
        if fn is None:
            reg = registries().operators
            if name not in reg:
                return None
            if self._watching is not reg:  # one listener per registry, not one per miss
                reg.add_listener(self._fns.clear)
                self._watching = reg
            fn = self._fns[name] = self._make(name)
        return fn
