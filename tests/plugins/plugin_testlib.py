"""Throwaway plugins and fake entry points for the plugin-system tests."""
from __future__ import annotations

import types
from typing import Any

from plexnet import hookimpl
from plexnet.operator import Operator, OperatorProperty


class FakeEntryPoint:
    """Stands in for ``importlib.metadata.EntryPoint``: ``load()`` returns ``obj`` or
    raises ``exc``; ``loads`` counts calls."""

    def __init__(self, name: str, obj: Any = None, exc: BaseException | None = None,
                 dist: str | None = None, version: str = "1.0") -> None:
        self.name = name
        self.value = f"fake_{name}.plugin"
        self.group = "plexnet.plugins"
        self.dist = types.SimpleNamespace(name=dist or f"plexnet-fake-{name}", version=version)
        self.obj, self.exc, self.loads = obj, exc, 0

    def load(self) -> Any:
        self.loads += 1
        if self.exc is not None:
            raise self.exc
        return self.obj


class ThrowawayProp(OperatorProperty):
    """An operator that returns its input."""


class IdentityOp(Operator):
    def __init__(self, tag: str = "generic") -> None:
        self.tag = tag

    def forward(self, ctx, in_data, req, out_data, aux_states):  # pragma: no cover - not run here
        out_data[0][...] = in_data[0]


class ThrowawayKVStore:
    def __init__(self, name: str) -> None:
        self.type = name


class ThrowawayPlugin:
    """Registers one operator (with a device-generic implementation) and one kvstore."""

    __version__ = "9.9"

    def __init__(self, op: str = "ThrowawayOp", kv: str = "throwaway") -> None:
        self.op, self.kv = op, kv

    @hookimpl
    def plexnet_register_operators(self, registry: Any) -> None:
        registry.register_property(self.op, ThrowawayProp)
        registry.register_impl(self.op, "*", lambda prop, ctx: IdentityOp(), impl_name="generic")

    @hookimpl
    def plexnet_register_kvstores(self, register: Any) -> None:
        register(self.kv, ThrowawayKVStore)


def kv_plugin(*names: str, fail_after: int | None = None) -> Any:
    """A module-like plugin registering kvstore ``names``; raises after ``fail_after`` of them."""
    mod = types.ModuleType(f"kvplugin_{'_'.join(names) or 'none'}")

    @hookimpl
    def plexnet_register_kvstores(register: Any) -> None:
        for i, n in enumerate(names):
            if fail_after is not None and i == fail_after:
                raise RuntimeError(f"boom after {fail_after}")
            register(n, ThrowawayKVStore)
    mod.plexnet_register_kvstores = plexnet_register_kvstores
    return mod
