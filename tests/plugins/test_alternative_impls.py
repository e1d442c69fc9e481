"""Several implementations of one operator: priorities, availability, forcing."""
from __future__ import annotations

from typing import Any

import pytest

from plexnet import hookimpl
from plexnet.base import PluginError
from plexnet.operator.registry import OperatorNotFound, OpRegistry, parse_force_impl
from plexnet.plugins import PlexnetPluginManager

from plugin_testlib import IdentityOp, ThrowawayPlugin, ThrowawayProp


class FastCPU:
    """Adds a higher-priority CPU implementation to another plugin's operator."""

    def __init__(self, available: Any = None, priority: int = 10) -> None:
        self.available, self.priority = available, priority

    @hookimpl
    def plexnet_register_operators(self, registry: Any) -> None:
        registry.register_impl("ThrowawayOp", "cpu", lambda prop, ctx: IdentityOp("fast"),
                               priority=self.priority, impl_name="fast", available=self.available)


@pytest.fixture
def ops(pm: PlexnetPluginManager) -> tuple[PlexnetPluginManager, OpRegistry]:
    pm.add_plugin(ThrowawayPlugin(), "base_ops")
    return pm, pm.registries.operators


def test_priority_selects_per_device(ops) -> None:
    pm, reg = ops
    rec = pm.add_plugin(FastCPU(), "fast_ops")
    pm.load()
    assert rec.status == "ok"
    assert rec.registered == {"operators": ["ThrowawayOp[cpu:fast]"]}
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "fast"
    assert reg.select_impl("ThrowawayOp", "cpu").plugin == "fast_ops"
    assert reg.select_impl("ThrowawayOp", "gpu").impl_name == "generic"  # "*" serves every device
    assert [r.impl_name for r in reg.implementations("ThrowawayOp")] == ["fast", "generic"]


def test_lower_priority_alternative_is_not_chosen(ops) -> None:
    pm, reg = ops
    pm.add_plugin(FastCPU(priority=-1), "slow_ops")
    pm.load()
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "generic"


def test_equal_priority_prefers_the_exact_device(ops) -> None:
    pm, reg = ops
    pm.add_plugin(FastCPU(priority=0), "same_prio")
    pm.load()
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "fast"


def test_unavailable_implementation_falls_back(ops) -> None:
    pm, reg = ops
    pm.add_plugin(FastCPU(available=lambda: False), "fast_ops")
    pm.load()
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "generic"


def test_availability_probe_that_raises_counts_as_unavailable(ops) -> None:
    pm, reg = ops

    def probe() -> bool:
        raise OSError("libfast.so not found")
    pm.add_plugin(FastCPU(available=probe), "fast_ops")
    pm.load()
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "generic"
    reg.force_impl("ThrowawayOp", "cpu", "fast")
    with pytest.raises(OperatorNotFound, match="libfast.so not found"):
        reg.select_impl("ThrowawayOp", "cpu")


def test_no_available_implementation_explains(pm: PlexnetPluginManager) -> None:
    class Only:
        @hookimpl
        def plexnet_register_operators(self, registry: Any) -> None:
            registry.register_property("Lonely", ThrowawayProp)
            registry.register_impl("Lonely", "gpu", lambda p, c: None, impl_name="cuda",
                                   available=lambda: False)
    pm.add_plugin(Only(), "only")
    reg = pm.load().registries.operators
    with pytest.raises(OperatorNotFound, match="cuda"):
        reg.select_impl("Lonely", "gpu")
    with pytest.raises(OperatorNotFound, match="no implementation for device type 'cpu'"):
        reg.select_impl("Lonely", "cpu")
    with pytest.raises(OperatorNotFound, match="not registered"):
        reg.select_impl("Nope", "cpu")


def test_force_impl(ops) -> None:
    pm, reg = ops
    pm.add_plugin(FastCPU(), "fast_ops")
    pm.load()
    reg.force_impl("ThrowawayOp", "cpu", "generic")
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "generic"
    assert reg.forced() == {("ThrowawayOp", "cpu"): "generic"}
    reg.force_impl("ThrowawayOp", "cpu", None)
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "fast"


def test_forcing_an_unavailable_implementation_is_an_error(ops) -> None:
    pm, reg = ops
    pm.add_plugin(FastCPU(available=lambda: False), "fast_ops")
    pm.load()
    reg.force_impl("ThrowawayOp", "cpu", "fast")
    with pytest.raises(OperatorNotFound, match="forced implementation 'fast'.*not available"):
        reg.select_impl("ThrowawayOp", "cpu")


def test_probe_reason_is_shown_when_forcing_an_unavailable_implementation(ops) -> None:
    pm, reg = ops

    def probe() -> bool:
        return False
    probe.reason = lambda: "libfast.so needs AVX-512"  # type: ignore[attr-defined]
    pm.add_plugin(FastCPU(available=probe), "fast_ops")
    pm.load()
    reg.force_impl("ThrowawayOp", "cpu", "fast")
    with pytest.raises(OperatorNotFound, match="not available here: libfast.so needs AVX-512"):
        reg.select_impl("ThrowawayOp", "cpu")


def test_forcing_an_unknown_implementation_is_an_error(ops) -> None:
    pm, reg = ops
    pm.load()
    reg.force_impl("ThrowawayOp", "cpu", "cudnn")
    with pytest.raises(OperatorNotFound, match="'cudnn'.*have: \\['generic'\\]"):
        reg.select_impl("ThrowawayOp", "cpu")


def test_force_through_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLEXNET_FORCE_IMPL", "ThrowawayOp:cpu=generic, Other:gpu=cudnn")
    pm = PlexnetPluginManager(internal=False, entry_points=False)
    pm.add_plugin(ThrowawayPlugin(), "base_ops")
    pm.add_plugin(FastCPU(), "fast_ops")
    reg = pm.load().registries.operators
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "generic"
    assert reg.forced() == {("ThrowawayOp", "cpu"): "generic", ("Other", "gpu"): "cudnn"}


@pytest.mark.parametrize("bad", ["Convolution=cudnn", "Convolution:gpu", "a:b:c=d", ":gpu=x"])
def test_bad_force_spec_is_a_clear_error(bad: str) -> None:
    with pytest.raises(PluginError, match="OP:DEVICE=IMPL"):
        parse_force_impl(bad)


def test_selection_cache_follows_registry_changes(ops) -> None:
    pm, reg = ops
    pm.load()
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "generic"
    pm.add_plugin(FastCPU(), "fast_ops")  # registered after the first selection
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "fast"
    pm.remove_plugin("fast_ops")
    assert reg.select_impl("ThrowawayOp", "cpu").impl_name == "generic"


def test_create_operator_uses_the_selected_implementation(ops) -> None:
    from plexnet import cpu
    pm, reg = ops
    pm.add_plugin(FastCPU(), "fast_ops")
    pm.load()
    prop = reg.create_property("ThrowawayOp")
    assert reg.create_operator(prop, cpu()).tag == "fast"
    reg.force_impl("ThrowawayOp", "cpu", "generic")
    assert reg.create_operator(prop, cpu()).tag == "generic"


def test_register_impl_validates(pm: PlexnetPluginManager) -> None:
    reg = pm.registries.operators
    with pytest.raises(PluginError, match="device_type"):
        reg.register_impl("X", "", lambda p, c: None)
    with pytest.raises(PluginError, match="not callable"):
        reg.register_impl("X", "cpu", "not a factory")  # type: ignore[arg-type]
