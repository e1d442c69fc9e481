"""Every hook is a documented contract (datasette's test_docs, adapted): its docstring
names each parameter, and docs/plugins.md shows its exact signature."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from plexnet import hookspecs

HOOKS = sorted(n for n, f in vars(hookspecs).items()
               if n.startswith("plexnet_") and callable(f) and hasattr(f, "plexnet_spec"))
DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def test_there_are_hooks() -> None:
    assert "plexnet_register_operators" in HOOKS and "plexnet_engine_observers" in HOOKS


@pytest.mark.parametrize("name", HOOKS)
def test_hookspec_docstring_names_every_parameter(name: str) -> None:
    fn = getattr(hookspecs, name)
    doc = inspect.getdoc(fn)
    assert doc and len(doc) > 40, f"{name} has no real docstring"
    for param in inspect.signature(fn).parameters:
        assert re.search(rf"\b{re.escape(param)}\b", doc), f"{name}'s docstring does not mention {param!r}"


@pytest.mark.parametrize("name", HOOKS)
def test_hook_is_documented_with_its_signature(name: str) -> None:
    params = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
    text = DOCS.read_text()
    assert f"{name}({params})" in text, f"docs/plugins.md lacks `{name}({params})`"


def test_every_register_hook_feeds_a_registry() -> None:
    from plexnet.plugins import _REGISTER_HOOKS, Registries
    register_hooks = {h for h in HOOKS if h.startswith("plexnet_register_")}
    assert register_hooks == set(_REGISTER_HOOKS)
    assert set(_REGISTER_HOOKS.values()) <= set(Registries().all())
