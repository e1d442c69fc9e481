"""The plugin manager: attribution, failure isolation, rollback, conflicts, versions,
disabling through the environment."""
from __future__ import annotations

import threading
import types
from typing import Any

import pytest

from plexnet import hookimpl
from plexnet.base import API_VERSION, PluginError
from plexnet.plugins import PlexnetPluginManager, check_api_version
from plexnet.registry import PluginConflictWarning

from plugin_testlib import FakeEntryPoint, ThrowawayKVStore, ThrowawayPlugin, ThrowawayProp, kv_plugin

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


# -- registration and attribution ------------------------------------------------------------
def test_throwaway_plugin_registers_operator_and_kvstore(pm: PlexnetPluginManager) -> None:
    rec = pm.add_plugin(ThrowawayPlugin(), "throwaway")
    pm.load()
    assert rec.status == "ok", rec.error
    regs = pm.registries
    assert "ThrowawayOp" in regs.operators
    assert regs.operators.owner("ThrowawayOp") == "throwaway"
    assert regs.operators.property_class("ThrowawayOp").op_name == "ThrowawayOp"
    assert regs.operators.select_impl("ThrowawayOp", "cpu").impl_name == "generic"
    assert regs.kvstores["throwaway"] is ThrowawayKVStore
    assert regs.kvstores.owner("throwaway") == "throwaway"
    assert rec.registered == {"operators": ["ThrowawayOp"], "kvstores": ["throwaway"]}
    assert rec.version == "9.9"  # taken from the plugin's __version__
    (d,) = pm.report()
    assert d["name"] == "throwaway" and d["status"] == "ok" and d["error"] is None


def test_fresh_manager_is_empty(pm: PlexnetPluginManager) -> None:
    pm.load()
    assert pm.report() == []
    assert all(len(r) == 0 for r in pm.registries.all().values())


def test_add_plugin_after_load_registers_at_once(pm: PlexnetPluginManager) -> None:
    pm.load()
    rec = pm.add_plugin(kv_plugin("late"), "late")
    assert rec.status == "ok"
    assert "late" in pm.registries.kvstores


def test_load_is_idempotent(pm: PlexnetPluginManager) -> None:
    calls = []

    class Counting:
        @hookimpl
        def plexnet_register_kvstores(self, register: Any) -> None:
            calls.append(1)
            register("counted", ThrowawayKVStore)

    pm.add_plugin(Counting(), "counting")
    for _ in range(3):
        pm.load()
    assert calls == [1]


def test_hook_may_take_fewer_arguments_than_its_spec(pm: PlexnetPluginManager) -> None:
    seen = []

    class NoArgs:
        @hookimpl
        def plexnet_register_kvstores(self) -> None:
            seen.append("called")

    assert pm.add_plugin(NoArgs(), "noargs").status == "ok"
    pm.load()
    assert seen == ["called"]


@pytest.mark.timeout(30)
def test_concurrent_loads_register_once(pm: PlexnetPluginManager) -> None:
    calls = []
    gate = threading.Event()

    class Slow:
        @hookimpl
        def plexnet_register_kvstores(self, register: Any) -> None:
            calls.append(1)
            gate.wait(2)
            register("slow", ThrowawayKVStore)

    pm.add_plugin(Slow(), "slow")
    seen = []
    threads = [threading.Thread(target=lambda: seen.append("slow" in pm.load().registries.kvstores))
               for _ in range(4)]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(10)
    assert calls == [1]
    assert seen == [True] * 4  # nobody returned before the registries were filled


@pytest.mark.timeout(30)
def test_hook_touching_the_manager_does_not_deadlock(pm: PlexnetPluginManager) -> None:
    class Reentrant:
        @hookimpl
        def plexnet_register_kvstores(self, register: Any) -> None:
            assert pm.load() is pm  # sees the registries as loaded so far
            register("reentrant", ThrowawayKVStore)

    pm.add_plugin(Reentrant(), "reentrant")
    pm.load()
    assert "reentrant" in pm.registries.kvstores


# -- failing plugins are reported and skipped ------------------------------------------------
def test_broken_entry_point_is_reported_by_name_and_skipped(ep_pm) -> None:
    good = FakeEntryPoint("good", obj=ThrowawayPlugin())
    broken = FakeEntryPoint("broken", exc=ImportError("No module named 'missing_dependency'"))
    pm = ep_pm(broken, good)
    with pytest.warns(RuntimeWarning, match=r"'broken'.*missing_dependency"):
        pm.load()
    rec = pm.records["broken"]
    assert rec.status == "failed"
    assert "ImportError" in rec.error and "missing_dependency" in rec.error
    assert rec.traceback and "ImportError" in rec.traceback
    assert rec.module == "fake_broken.plugin"
    assert rec.distribution == "plexnet-fake-broken" and rec.version == "1.0"
    assert rec.registered == {}
    # the rest keeps working
    assert pm.records["good"].status == "ok"
    assert pm.records["good"].distribution == "plexnet-fake-good"
    assert "ThrowawayOp" in pm.registries.operators
    assert [f.name for f in pm.failures()] == ["broken"]


def test_entry_point_raising_any_exception_is_skipped(ep_pm) -> None:
    pm = ep_pm(FakeEntryPoint("weird", exc=ZeroDivisionError("at import")),
               FakeEntryPoint("fine", obj=kv_plugin("fine")))
    pm.load()
    assert pm.records["weird"].status == "failed"
    assert "ZeroDivisionError: at import" in pm.records["weird"].error
    assert "fine" in pm.registries.kvstores


def test_misspelt_hook_name_fails_that_plugin_only(pm: PlexnetPluginManager) -> None:
    class Typo:
        @hookimpl
        def plexnet_register_kvstore(self, register: Any) -> None:  # no such hook
            register("typo", ThrowawayKVStore)

    pm.add_plugin(Typo(), "typo")
    pm.add_plugin(kv_plugin("ok"), "ok")
    pm.load()
    assert pm.records["typo"].status == "failed"
    assert "plexnet_register_kvstore" in pm.records["typo"].error
    assert pm.pm.get_plugin("typo") is None
    assert pm.records["ok"].status == "ok"


def test_hook_raising_half_way_is_rolled_back(pm: PlexnetPluginManager) -> None:
    class HalfWay:
        @hookimpl
        def plexnet_register_operators(self, registry: Any) -> None:
            registry.register_property("HalfOp", ThrowawayProp)
            registry.register_impl("HalfOp", "*", lambda p, c: None)
            # an alternative implementation of another plugin's operator, too
            registry.register_impl("ThrowawayOp", "cpu", lambda p, c: None, impl_name="half", priority=5)

        @hookimpl
        def plexnet_register_kvstores(self, register: Any) -> None:
            register("half_a", ThrowawayKVStore)
            register("half_b", ThrowawayKVStore)
            raise RuntimeError("disk on fire")

    pm.add_plugin(ThrowawayPlugin(), "throwaway")
    rec = pm.add_plugin(HalfWay(), "halfway")
    with pytest.warns(RuntimeWarning, match="halfway"):
        pm.load()
    assert rec.status == "failed"
    assert "RuntimeError: disk on fire" in rec.error
    regs = pm.registries
    assert "HalfOp" not in regs.operators and regs.operators.implementations("HalfOp") == []
    assert [r.impl_name for r in regs.operators.implementations("ThrowawayOp")] == ["generic"]
    assert "half_a" not in regs.kvstores and "half_b" not in regs.kvstores
    assert all(r.by_plugin("halfway") == [] for r in regs.all().values())
    assert pm.pm.get_plugin("halfway") is None  # its hooks are gone too
    # the other plugin is untouched
    assert "ThrowawayOp" in regs.operators and "throwaway" in regs.kvstores
    assert pm.records["throwaway"].status == "ok"


def test_module_plugin_failing_after_some_registrations(pm: PlexnetPluginManager) -> None:
    rec = pm.add_plugin(kv_plugin("a", "b", "c", fail_after=2), "partial")
    pm.load()
    assert rec.status == "failed" and "boom after 2" in rec.error
    assert list(pm.registries.kvstores) == []


# -- conflicts ---------------------------------------------------------------------------------
def test_duplicate_kvstore_name_is_refused_naming_both(pm: PlexnetPluginManager) -> None:
    # equal (third-party) rank: the name is contested and goes to neither; the rest stays
    pm.add_plugin(kv_plugin("shared"), "first_plugin")
    rec = pm.add_plugin(kv_plugin("other", "shared"), "second_plugin")
    with pytest.warns(PluginConflictWarning, match="first_plugin.*second_plugin"):
        pm.load()
    assert rec.status == "ok"
    assert "shared" not in pm.registries.kvstores
    assert pm.registries.kvstores.owner("other") == "second_plugin"
    assert any("'shared'" in c for c in rec.conflicts)


def test_duplicate_operator_name_is_refused_naming_both(pm: PlexnetPluginManager) -> None:
    pm.add_plugin(ThrowawayPlugin(op="Conv", kv="kv1"), "ops_a", distribution="plexnet-ops-basic")
    rec = pm.add_plugin(ThrowawayPlugin(op="Conv", kv="kv2"), "ops_b")
    with pytest.warns(PluginConflictWarning) as w:
        pm.load()
    msg = str(w[0].message)
    assert "'ops_a'" in msg and "'ops_b'" in msg and "'Conv'" in msg and "refused" in msg
    assert rec.status == "ok"
    assert pm.registries.operators.owner("Conv") == "ops_a"
    assert [r.plugin for r in pm.registries.operators.implementations("Conv")] == ["ops_a"]
    assert "kv2" in pm.registries.kvstores  # the refused plugin keeps its other entries


def test_same_impl_name_twice_is_refused_naming_both(pm: PlexnetPluginManager) -> None:
    class Alt:
        @hookimpl
        def plexnet_register_operators(self, registry: Any) -> None:
            registry.register_impl("ThrowawayOp", "*", lambda p, c: None, impl_name="generic")

    pm.add_plugin(ThrowawayPlugin(), "base_ops", distribution="plexnet-ops-basic")
    rec = pm.add_plugin(Alt(), "alt_ops")
    with pytest.warns(PluginConflictWarning, match="'base_ops'.*'alt_ops'.*generic|generic.*'base_ops'.*'alt_ops'"):
        pm.load()
    assert rec.status == "ok"
    assert [r.plugin for r in pm.registries.operators.implementations("ThrowawayOp")] == ["base_ops"]


def test_duplicate_plugin_name_skips_the_second(pm: PlexnetPluginManager) -> None:
    pm.add_plugin(kv_plugin("x"), "dup")
    rec = pm.add_plugin(kv_plugin("y"), "dup")
    pm.load()
    assert rec.status == "failed" and "dup" in rec.error
    assert pm.records["dup"].status == "ok"  # the first keeps its record
    assert "x" in pm.registries.kvstores and "y" not in pm.registries.kvstores
    assert len(pm.report()) == 2


def test_two_entry_points_with_one_name(ep_pm) -> None:
    pm = ep_pm(FakeEntryPoint("same", obj=kv_plugin("one"), dist="dist-one"),
               FakeEntryPoint("same", obj=kv_plugin("two"), dist="dist-two"))
    pm.load()
    statuses = sorted(r["status"] for r in pm.report())
    assert statuses == ["failed", "ok"]
    (bad,) = pm.failures()
    assert "dist-one" in bad.error and "dist-two" in bad.error


def test_one_module_under_two_names_keeps_the_first(pm: PlexnetPluginManager) -> None:
    mod = kv_plugin("once")
    pm.add_plugin(mod, "name1")
    rec = pm.add_plugin(mod, "name2")
    pm.load()
    assert rec.status == "failed"
    assert pm.records["name1"].status == "ok"
    assert pm.pm.get_plugin("name1") is mod  # the failed second registration did not remove it
    assert "once" in pm.registries.kvstores


def test_remove_plugin(pm: PlexnetPluginManager) -> None:
    pm.add_plugin(ThrowawayPlugin(), "throwaway")
    pm.load()
    pm.remove_plugin("throwaway")
    assert "ThrowawayOp" not in pm.registries.operators and "throwaway" not in pm.registries.kvstores
    assert pm.report() == []


# -- API versions -------------------------------------------------------------------------------
def _versioned(version: Any) -> types.ModuleType:
    mod = kv_plugin("versioned")
    mod.PLEXNET_API_VERSION = version
    return mod


@pytest.mark.parametrize("declared", [API_VERSION, API_VERSION.split(".")[0], API_VERSION.split(".")[0] + ".0"])
def test_matching_api_version_loads(pm: PlexnetPluginManager, declared: str) -> None:
    rec = pm.add_plugin(_versioned(declared), "versioned")
    pm.load()
    assert rec.status == "ok"


@pytest.mark.parametrize("declared", ["0.9", "2.0", "99", "1.99", "not-a-version", ""])
def test_api_version_mismatch_is_incompatible(pm: PlexnetPluginManager, declared: str) -> None:
    rec = pm.add_plugin(_versioned(declared), "versioned")
    with pytest.warns(RuntimeWarning, match="incompatible"):
        pm.load()
    assert rec.status == "incompatible"
    assert "versioned" in rec.error and API_VERSION in rec.error or "MAJOR.MINOR" in rec.error
    assert "versioned" not in pm.registries.kvstores
    assert pm.pm.get_plugin("versioned") is None
    assert rec in pm.failures()


def test_check_api_version() -> None:
    assert check_api_version("1.0", "1.3") is None
    assert check_api_version("1.3", "1.3") is None
    assert "upgrade plexnet" in check_api_version("1.4", "1.3")
    assert "major" in check_api_version("2.0", "1.3")


# -- environment variables ----------------------------------------------------------------------
def test_disable_autoload_lists_entry_points_as_disabled(ep_pm, monkeypatch: pytest.MonkeyPatch) -> None:
    a = FakeEntryPoint("a", obj=kv_plugin("a"))
    b = FakeEntryPoint("b", exc=ImportError("should never be imported"))
    monkeypatch.setenv("PLEXNET_DISABLE_PLUGIN_AUTOLOAD", "1")
    pm = ep_pm(a, b)
    pm.add_plugin(kv_plugin("direct"), "direct")  # explicitly added plugins still load
    pm.load()
    assert a.loads == 0 and b.loads == 0
    assert pm.records["a"].status == "disabled" and pm.records["b"].status == "disabled"
    assert "PLEXNET_DISABLE_PLUGIN_AUTOLOAD" in pm.records["a"].error
    assert list(pm.registries.kvstores) == ["direct"]
    assert pm.failures() == []


@pytest.mark.parametrize("value", ["0", "", "false"])
def test_disable_autoload_off_values(ep_pm, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("PLEXNET_DISABLE_PLUGIN_AUTOLOAD", value)
    pm = ep_pm(FakeEntryPoint("a", obj=kv_plugin("a")))
    pm.load()
    assert pm.records["a"].status == "ok"


def test_block_list(ep_pm, monkeypatch: pytest.MonkeyPatch) -> None:
    a = FakeEntryPoint("a", obj=kv_plugin("a"))
    b = FakeEntryPoint("b", obj=kv_plugin("b"))
    c = FakeEntryPoint("c", obj=kv_plugin("c"), dist="plexnet-c")
    monkeypatch.setenv("PLEXNET_PLUGINS_BLOCK", " b , plexnet-c")  # entry-point or distribution name
    pm = ep_pm(a, b, c)
    pm.load()
    assert pm.records["a"].status == "ok"
    assert pm.records["b"].status == "disabled" and b.loads == 0
    assert pm.records["c"].status == "disabled" and c.loads == 0
    assert "PLEXNET_PLUGINS_BLOCK" in pm.records["b"].error
    assert list(pm.registries.kvstores) == ["a"]


def test_allow_list(ep_pm, monkeypatch: pytest.MonkeyPatch) -> None:
    a = FakeEntryPoint("a", obj=kv_plugin("a"))
    b = FakeEntryPoint("b", obj=kv_plugin("b"))
    monkeypatch.setenv("PLEXNET_PLUGINS_ALLOW", "a")
    pm = ep_pm(a, b)
    pm.load()
    assert pm.records["a"].status == "ok"
    assert pm.records["b"].status == "disabled" and b.loads == 0
    assert "PLEXNET_PLUGINS_ALLOW" in pm.records["b"].error


def test_strict_mode_raises_the_failure(ep_pm, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLEXNET_PLUGINS_STRICT", "1")
    pm = ep_pm(FakeEntryPoint("broken", exc=ImportError("nope")))
    with pytest.raises(PluginError, match="'broken'.*nope"):
        pm.load()
    with pytest.raises(PluginError, match="broken"):  # and keeps saying so
        pm.load()


def test_strict_mode_raises_on_incompatible(pm: PlexnetPluginManager, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLEXNET_PLUGINS_STRICT", "1")
    pm.add_plugin(_versioned("7.0"), "future")
    with pytest.raises(PluginError, match="future"):
        pm.load()


def test_internal_plugins_are_skipped_by_flag(pm: PlexnetPluginManager) -> None:
    pm.load()
    assert "cpu" not in pm.registries.backends


def test_internal_plugins_register_through_the_same_hooks() -> None:
    m = PlexnetPluginManager(internal=True, entry_points=False)
    m.load()
    rec = m.records["backends:cpu"]
    assert rec.builtin and rec.status == "ok" and rec.registered == {"backends": ["cpu"]}
    assert m.registries.backends.owner("cpu") == "backends:cpu"
