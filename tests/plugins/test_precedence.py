"""Plugin precedence: standard plugins load first and keep their names whatever the load
order or the distribution names; conflicts are refused with a warning naming both
plugins and the name; overriding is an explicit opt-in."""
from __future__ import annotations

import itertools
import types
from typing import Any

import pytest

from plexnet import hookimpl
from plexnet.base import PluginError
from plexnet.plugins import STANDARD_DISTRIBUTIONS, PlexnetPluginManager
from plexnet.registry import PluginConflictWarning, attributing

from plugin_testlib import FakeEntryPoint, IdentityOp, ThrowawayProp

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


class OtherProp(ThrowawayProp):
    """Another plugin's idea of the operator."""


def op_plugin(tag: str, *ops: str, prop: type = ThrowawayProp) -> Any:
    """A module-like plugin registering ``ops`` (property + a '*' impl tagged ``tag``)."""
    mod = types.ModuleType(f"plugin_{tag}")

    @hookimpl
    def plexnet_register_operators(registry: Any) -> None:
        for op in ops:
            registry.register_property(op, prop)
            registry.register_impl(op, "*", lambda p, c, t=tag: IdentityOp(t), impl_name="default")
    mod.plexnet_register_operators = plexnet_register_operators
    return mod


STD = ("ops_basic", "plexnet-ops-basic", op_plugin("std", "relu", "dot"))
DUP = ("dupop", "plexnet-dupop", op_plugin("dup", "relu", "dupop_only", prop=OtherProp))
AAA = ("aaa", "aaa-first-by-name", op_plugin("aaa", "relu", "aaa_only", prop=OtherProp))


def _holder(pm: PlexnetPluginManager, op: str) -> tuple[str | None, list[str]]:
    ops = pm.registries.operators
    return ops.owner(op), [r.plugin for r in ops.implementations(op)]


@pytest.mark.parametrize("order", list(itertools.permutations([STD, DUP, AAA])))
def test_standard_plugin_wins_in_every_order(pm: PlexnetPluginManager, order) -> None:
    recs = {}
    with pytest.warns(PluginConflictWarning):
        for name, dist, mod in order:
            recs[name] = pm.add_plugin(mod, name, distribution=dist)
        pm.load()
    assert _holder(pm, "relu") == ("ops_basic", ["ops_basic"])
    assert pm.registries.operators.property_class("relu").__mro__[1] is ThrowawayProp
    # nobody is removed: every plugin keeps what did not conflict
    assert all(r.status == "ok" for r in recs.values())
    assert {"dot", "dupop_only", "aaa_only"} <= set(pm.registries.operators)
    assert any("'relu'" in c and "ops_basic" in c for c in recs["dupop"].conflicts)


@pytest.mark.parametrize("order", list(itertools.permutations([STD, DUP, AAA])))
def test_same_outcome_after_loading(pm: PlexnetPluginManager, order) -> None:
    """Plugins added one by one after load() end in the same state."""
    pm.load()
    with pytest.warns(PluginConflictWarning):
        for name, dist, mod in order:
            pm.add_plugin(mod, name, distribution=dist)
    assert _holder(pm, "relu") == ("ops_basic", ["ops_basic"])
    assert {"dot", "dupop_only", "aaa_only"} <= set(pm.registries.operators)


@pytest.mark.parametrize("first", [DUP, AAA])
def test_two_third_party_plugins_get_neither(pm: PlexnetPluginManager, first) -> None:
    second = AAA if first is DUP else DUP
    with pytest.warns(PluginConflictWarning, match="neither"):
        for name, dist, mod in (first, second):
            pm.add_plugin(mod, name, distribution=dist)
        pm.load()
    assert "relu" not in pm.registries.operators
    assert pm.registries.operators.implementations("relu") == []
    assert {"dupop_only", "aaa_only"} <= set(pm.registries.operators)


def test_conflict_warning_names_both_plugins_and_the_operator(pm: PlexnetPluginManager) -> None:
    pm.add_plugin(STD[2], "ops_basic", distribution="plexnet-ops-basic")
    with pytest.warns(PluginConflictWarning) as w:
        pm.add_plugin(DUP[2], "dupop", distribution="plexnet-dupop")
        pm.load()
    (msg,) = {str(x.message) for x in w if issubclass(x.category, PluginConflictWarning)}
    assert "operator 'relu'" in msg and "'ops_basic'" in msg and "'dupop'" in msg
    assert "PLEXNET_PLUGINS_ALLOW_OVERRIDE=dupop" in msg


@pytest.mark.parametrize("order", list(itertools.permutations([STD, DUP])))
def test_allow_override_environment(pm: PlexnetPluginManager, monkeypatch: pytest.MonkeyPatch, order) -> None:
    monkeypatch.setenv("PLEXNET_PLUGINS_ALLOW_OVERRIDE", "plexnet-dupop")
    with pytest.warns(PluginConflictWarning, match="dupop"):
        for name, dist, mod in order:
            pm.add_plugin(mod, name, distribution=dist)
        pm.load()
    assert _holder(pm, "relu") == ("dupop", ["dupop"])
    assert pm.registries.operators.property_class("relu").__mro__[1] is OtherProp
    assert "dot" in pm.registries.operators  # ops_basic keeps the rest


def test_allow_override_method(pm: PlexnetPluginManager) -> None:
    pm.allow_override("dupop")
    pm.add_plugin(STD[2], "ops_basic", distribution="plexnet-ops-basic")
    with pytest.warns(PluginConflictWarning):
        pm.add_plugin(DUP[2], "dupop", distribution="plexnet-dupop")
        pm.load()
    assert _holder(pm, "relu") == ("dupop", ["dupop"])


def test_alternative_implementation_at_a_priority_is_not_a_conflict(pm: PlexnetPluginManager) -> None:
    alt = types.ModuleType("alt")

    @hookimpl
    def plexnet_register_operators(registry: Any) -> None:
        registry.register_impl("relu", "cpu", lambda p, c: IdentityOp("fast"), impl_name="fast", priority=10)
    alt.plexnet_register_operators = plexnet_register_operators
    pm.add_plugin(alt, "alt")
    pm.add_plugin(STD[2], "ops_basic", distribution="plexnet-ops-basic")
    pm.load()
    assert pm.conflicts() == []
    assert pm.registries.operators.select_impl("relu", "cpu").plugin == "alt"
    assert pm.registries.operators.owner("relu") == "ops_basic"


def test_user_code_overrides_explicitly(pm: PlexnetPluginManager) -> None:
    pm.add_plugin(STD[2], "ops_basic", distribution="plexnet-ops-basic")
    pm.load()
    ops = pm.registries.operators
    with pytest.raises(PluginError, match="override=True"):
        ops.register_property("relu", OtherProp)
    ops.register_property("relu", OtherProp, override=True)
    assert ops.owner("relu") == "<user>"
    assert ops.implementations("relu") == []  # ops_basic's impl belonged to its semantics


def test_strict_mode_raises_on_conflict(pm: PlexnetPluginManager, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLEXNET_PLUGINS_STRICT", "1")
    pm.add_plugin(STD[2], "ops_basic", distribution="plexnet-ops-basic")
    pm.add_plugin(DUP[2], "dupop", distribution="plexnet-dupop")
    with pytest.raises(PluginError, match="relu"):
        pm.load()
    assert pm.registries.operators.owner("relu") == "ops_basic"


def test_builtins_outrank_standard_plugins(pm: PlexnetPluginManager) -> None:
    pm.add_plugin(DUP[2], "standard_dup", distribution="plexnet-ops-linalg")
    pm.add_plugin(op_plugin("core", "relu"), "core_part", builtin=True)
    with pytest.warns(PluginConflictWarning):
        pm.load()
    assert pm.registries.operators.owner("relu") == "core_part"


def test_entry_points_load_standard_first_whatever_the_names(ep_pm) -> None:
    seen: list[str] = []

    def tracer(name: str) -> Any:
        mod = types.ModuleType(name)

        @hookimpl
        def plexnet_register_kvstores(register: Any) -> None:
            seen.append(name)
        mod.plexnet_register_kvstores = plexnet_register_kvstores
        return mod

    eps = [FakeEntryPoint("aaa_evil", obj=tracer("aaa_evil"), dist="aaa-evil"),
           FakeEntryPoint("zz_cudnn", obj=tracer("zz_cudnn"), dist="plexnet-ops-cudnn"),
           FakeEntryPoint("ops_basic", obj=tracer("ops_basic"), dist="plexnet_ops_basic")]
    pm = ep_pm(*eps)
    pm.load()
    assert seen == ["ops_basic", "zz_cudnn", "aaa_evil"]
    assert pm.records["ops_basic"].standard and not pm.records["aaa_evil"].standard


def test_refused_entry_point_plugin_keeps_other_names(ep_pm) -> None:
    pm = ep_pm(FakeEntryPoint("aaa_dupop", obj=DUP[2], dist="aaa-dupop"),
               FakeEntryPoint("ops_basic", obj=STD[2], dist="plexnet-ops-basic"))
    with pytest.warns(PluginConflictWarning):
        pm.load()
    assert _holder(pm, "relu") == ("ops_basic", ["ops_basic"])
    assert pm.records["aaa_dupop"].status == "ok"
    assert pm.records["aaa_dupop"].registered["operators"] == ["dupop_only"]


def test_standard_distributions_declared() -> None:
    assert STANDARD_DISTRIBUTIONS[0] == "plexnet-ops-basic"
    assert {"plexnet-ops-linalg", "plexnet-ops-random", "plexnet-ops-image", "plexnet-ops-contrib",
            "plexnet-kvstore-dist", "plexnet-device-cuda", "plexnet-ops-cudnn"} <= set(STANDARD_DISTRIBUTIONS)


def test_attributing_restores_the_outer_plugin() -> None:
    from plexnet.registry import current_plugin, current_rank
    with attributing("outer", rank=2):
        with attributing("inner", rank=3):
            assert (current_plugin(), current_rank()) == ("inner", 3)
        assert (current_plugin(), current_rank()) == ("outer", 2)
    assert current_plugin() == "<user>"
