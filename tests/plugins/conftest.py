"""Fixtures for plugin-system tests: every test works in a fresh, empty plugin manager
(no built-ins, no installed entry points) with the plugin environment variables unset."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

# the suite runs with --import-mode=importlib: make plugin_testlib (beside this file) importable
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

from plexnet.plugins import PlexnetPluginManager

PLUGIN_ENV = ("PLEXNET_DISABLE_PLUGIN_AUTOLOAD", "PLEXNET_PLUGINS_BLOCK", "PLEXNET_PLUGINS_ALLOW",
              "PLEXNET_PLUGINS_STRICT", "PLEXNET_FORCE_IMPL", "PLEXNET_PLUGINS_ALLOW_OVERRIDE")


@pytest.fixture(autouse=True)
def clean_plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in PLUGIN_ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def pm() -> PlexnetPluginManager:
    """An empty manager that never loads installed plugins."""
    return PlexnetPluginManager(internal=False, entry_points=False)


@pytest.fixture
def ep_pm(monkeypatch: pytest.MonkeyPatch):
    """``ep_pm(*fake_entry_points)``: a manager (no built-ins) whose entry points are the
    given fakes instead of the installed ones."""
    def make(*eps: Any) -> PlexnetPluginManager:
        monkeypatch.setattr("plexnet.plugins._entry_points", lambda: list(eps))
        return PlexnetPluginManager(internal=False, entry_points=True)
    return make
