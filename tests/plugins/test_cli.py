"""The ``plexnet`` command: ``plexnet plugins [--json]`` and the subcommand table."""
from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

import plexnet.cli as cli
from plexnet import hookimpl, plugins
from plexnet.backends import DeviceBackend
from plexnet.plugins import PlexnetPluginManager

from plugin_testlib import FakeEntryPoint, ThrowawayPlugin, kv_plugin

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


class MissingGPU(DeviceBackend):
    device_type = "fakegpu"
    unavailable_reason = "no fake GPU here"


class DevicePlugin:
    @hookimpl
    def plexnet_register_device_backends(self, register: Any) -> None:
        register("fakegpu", MissingGPU())


@pytest.fixture
def installed(ep_pm) -> Iterator[PlexnetPluginManager]:
    """A process-wide manager made of throwaway plugins only (restored afterwards)."""
    pm = ep_pm(FakeEntryPoint("good", obj=ThrowawayPlugin(), version="2.1"),
               FakeEntryPoint("broken", exc=ImportError("No module named 'torch_but_older'")))
    pm.add_plugin(DevicePlugin(), "devices")
    old = plugins._manager
    plugins.set_manager(pm)
    try:
        yield pm
    finally:
        plugins.set_manager(old)


def test_plugins_json(installed: PlexnetPluginManager, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["plugins", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"plexnet_version", "api_version", "plugins", "devices", "forced_implementations",
                        "load_error", "warnings"}
    assert out["warnings"] == []
    assert out["load_error"] is None
    by_name = {p["name"]: p for p in out["plugins"]}
    assert set(by_name) == {"good", "broken", "devices"}
    for p in out["plugins"]:
        assert set(p) == {"name", "module", "version", "distribution", "builtin", "standard", "status",
                          "error", "registered", "conflicts"}
        assert p["status"] in plugins.STATUSES
    good = by_name["good"]
    assert good["status"] == "ok" and good["version"] == "2.1"
    assert good["distribution"] == "plexnet-fake-good"
    assert good["registered"] == {"operators": ["ThrowawayOp"], "kvstores": ["throwaway"]}
    broken = by_name["broken"]
    assert broken["status"] == "failed" and "torch_but_older" in broken["error"]
    assert broken["registered"] == {}
    assert out["devices"] == [{"device_type": "fakegpu", "plugin": "devices", "available": False,
                               "reason": "no fake GPU here"}]


def test_plugins_json_verbose_has_tracebacks(installed, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["plugins", "--json", "-v"]) == 0
    out = json.loads(capsys.readouterr().out)
    tb = {p["name"]: p["traceback"] for p in out["plugins"]}
    assert "ImportError" in tb["broken"] and tb["good"] is None


def test_plugins_table(installed, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "PLUGIN" in out and "STATUS" in out
    assert "good" in out and "2.1" in out and "operators (1): ThrowawayOp" in out
    assert "kvstores (1): throwaway" in out
    assert "broken" in out and "failed" in out and "torch_but_older" in out
    assert "fakegpu" in out and "no fake GPU here" in out


def test_plugins_check_exit_status(installed, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["plugins", "--check"]) == 1
    capsys.readouterr()


def test_plugins_disabled_shown(ep_pm, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("PLEXNET_PLUGINS_BLOCK", "off")
    pm = ep_pm(FakeEntryPoint("off", obj=kv_plugin("off")))
    old = plugins._manager
    plugins.set_manager(pm)
    try:
        assert cli.main(["plugins", "--json", "--check"]) == 1  # no operator plugin: flagged
    finally:
        plugins.set_manager(old)
    (p,) = json.loads(capsys.readouterr().out)["plugins"]
    assert p["status"] == "disabled" and "PLEXNET_PLUGINS_BLOCK" in p["error"]


def test_help_and_unknown_command(capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("plugins", "demo", "launch"):
        assert name in out
    assert cli.main(["plugin"]) == 2
    assert "did you mean 'plugins'" in capsys.readouterr().err
    assert cli.main(["plugins", "--help"]) == 0
    assert "--json" in capsys.readouterr().out


def test_missing_subcommand_module_gives_a_clear_message(monkeypatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(cli, "_SUBCOMMANDS", dict(cli._SUBCOMMANDS))
    cli.register_subcommand("ghost", "plexnet_no_such_plugin.cmd:main", help="a ghost",
                            install_hint="pip install plexnet-no-such-plugin")
    assert cli.main(["ghost", "--flag"]) == 1
    err = capsys.readouterr().err
    assert "plexnet ghost" in err and "plexnet_no_such_plugin" in err
    assert "pip install plexnet-no-such-plugin" in err


def test_broken_subcommand_module_reports_its_error(monkeypatch, tmp_path, capsys) -> None:
    (tmp_path / "broken_cmd_mod.py").write_text("import plexnet_missing_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "_SUBCOMMANDS", dict(cli._SUBCOMMANDS))
    cli.register_subcommand("broken", "broken_cmd_mod:main")
    assert cli.main(["broken"]) == 1
    err = capsys.readouterr().err
    assert "importing 'broken_cmd_mod' failed" in err and "plexnet_missing_dependency_xyz" in err


def test_registered_subcommand_receives_its_arguments(monkeypatch, tmp_path) -> None:
    (tmp_path / "echo_cmd_mod.py").write_text(
        "seen = []\ndef main(argv):\n    seen.append(list(argv))\n    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "_SUBCOMMANDS", dict(cli._SUBCOMMANDS))
    cli.register_subcommand("echo", "echo_cmd_mod:main", help="echo")
    assert cli.main(["echo", "-n", "2", "python", "train.py", "--lr", "0.1"]) == 3
    import echo_cmd_mod
    assert echo_cmd_mod.seen == [["-n", "2", "python", "train.py", "--lr", "0.1"]]
    with pytest.raises(ValueError, match="already registered"):
        cli.register_subcommand("echo", "x:y")
    cli.register_subcommand("echo", lambda argv: 0, replace=True)
    assert cli.main(["echo"]) == 0


def test_demo_and_launch_are_known() -> None:
    subs = cli.subcommands()
    assert subs["demo"].target == "plexnet.demo:main"
    assert subs["launch"].target == "plexnet_kvstore_dist.launch:main"


# -- conventions: python -m plexnet, -V, --json on stdout, -o FILE, exit statuses ----------
def test_version_flags(capsys: pytest.CaptureFixture) -> None:
    from plexnet.base import __version__
    for flag in ("-V", "--version"):
        assert cli.main([flag]) == 0
        assert capsys.readouterr().out.strip().startswith(f"plexnet {__version__}")


def test_python_dash_m_plexnet() -> None:
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "plexnet", "--version"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("plexnet ")
    r = subprocess.run([sys.executable, "-m", "plexnet", "no-such-command"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "unknown command" in r.stderr


def test_exit_statuses_follow_pip(capsys: pytest.CaptureFixture) -> None:
    assert cli.main([]) == 0                      # help
    assert cli.main(["--bogus-option"]) == 2      # usage
    assert cli.main(["plugins", "--bogus"]) == 2  # argparse usage error inside a command
    capsys.readouterr()


def test_plugins_json_is_only_json_and_output_writes_a_file(installed, tmp_path, capsys) -> None:
    target = tmp_path / "report.json"
    assert cli.main(["plugins", "-o", str(target)]) == 0
    out = capsys.readouterr().out
    assert "PLUGIN" in out  # the table on stdout, the JSON in the file
    assert json.loads(target.read_text())["plugins"]
    assert cli.main(["plugins", "--json", "--output", str(tmp_path / "b.json")]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((tmp_path / "b.json").read_text())


@pytest.fixture
def core_alone() -> Iterator[PlexnetPluginManager]:
    """The process-wide manager with the built-ins only: plexnet without any plugin."""
    pm = PlexnetPluginManager(entry_points=False)
    old = plugins._manager
    plugins.set_manager(pm)
    try:
        yield pm
    finally:
        plugins.set_manager(old)


def test_plugins_flags_missing_operator_plugin(core_alone, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "no operator plugin is installed" in out and "pip install plexnet-ops-basic" in out
    assert cli.main(["plugins", "--check", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["warnings"]


def test_core_alone_errors_name_the_distribution(core_alone) -> None:
    import plexnet as mx
    with pytest.raises(AttributeError, match=r"^mx\.nd\.relu needs an operator plugin: pip install plexnet-ops-basic$"):
        mx.nd.relu
    with pytest.raises(AttributeError, match="mx.sym.FullyConnected needs an operator plugin: pip install plexnet-ops-basic"):
        mx.sym.FullyConnected
    # what `a + b` runs into (asked of the registry: nd caches its operators per process)
    with pytest.raises(Exception, match="pip install plexnet-ops-basic") as e:
        mx.plugins.registries().operators.property_class("broadcast_add")
    assert "broadcast_add" not in str(e.value)


def test_core_alone_unknown_name_says_no_operator_plugin(core_alone) -> None:
    import plexnet as mx
    with pytest.raises(AttributeError, match="no operator plugin is installed: pip install plexnet-ops-basic"):
        mx.nd.qqqqzzzz


def test_demo_without_operators_is_one_line(core_alone, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["demo", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install plexnet-ops-basic" in err and "Traceback" not in err


def test_did_you_mean_for_misspelt_operators(installed) -> None:
    import plexnet as mx
    with pytest.raises(AttributeError, match="mx.nd.ThrowawayOpp does not exist; did you mean ThrowawayOp"):
        mx.nd.ThrowawayOpp
    with pytest.raises(AttributeError, match="did you mean ThrowawayOp"):
        mx.sym.throwawayop_


def test_did_you_mean_suggests_standard_names() -> None:
    from plexnet.operator.hints import suggest
    assert suggest("FullyConected", ["FullyConnected", "Convolution"]) == ["FullyConnected"]
    assert suggest("zzzz", ["FullyConnected"]) == []


def test_plugins_table_shows_conflicts(ep_pm, capsys: pytest.CaptureFixture) -> None:
    pm = ep_pm(FakeEntryPoint("aaa_dup", obj=ThrowawayPlugin(op="Conv", kv="k1"), dist="aaa-dup"),
               FakeEntryPoint("ops_basic", obj=ThrowawayPlugin(op="Conv", kv="k2"), dist="plexnet-ops-basic"))
    old = plugins._manager
    plugins.set_manager(pm)
    try:
        with pytest.warns(RuntimeWarning):
            assert cli.main(["plugins"]) == 0
    finally:
        plugins.set_manager(old)
    out = " ".join(capsys.readouterr().out.split())  # the table wraps to the terminal width
    assert "ops_basic [standard]" in out and "Name conflicts" in out
    assert "operator 'Conv' is registered by both plugin 'ops_basic' and plugin 'aaa_dup'" in out


def test_core_alone_methods_name_the_distribution(core_alone) -> None:
    import plexnet as mx
    a = mx.nd.zeros((2,))
    with pytest.raises(Exception, match=r"^NDArray\.sum needs an operator plugin: pip install plexnet-ops-basic$"):
        a.sum()
    assert not hasattr(a, "no_such_method")  # still an AttributeError


def test_operator_functions_cached_before_a_new_manager_are_dropped() -> None:
    """nd/sym operator functions built under one plugin manager are not served after
    plugins.set_manager replaced it (they were, when a test had used them first)."""
    import plexnet as mx
    assert callable(mx.sym.FullyConnected) and callable(mx.nd.relu)   # cached now
    pm = PlexnetPluginManager(entry_points=False)
    old = plugins._manager
    plugins.set_manager(pm)
    try:
        with pytest.raises(AttributeError, match="needs an operator plugin"):
            mx.sym.FullyConnected
        with pytest.raises(AttributeError, match="needs an operator plugin"):
            mx.nd.relu
    finally:
        plugins.set_manager(old)
    assert callable(mx.sym.FullyConnected)
