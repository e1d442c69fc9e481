"""Entry point of plexnet-ops-basic: every module of the package that defines
``register(registry)`` registers its operators here."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from plexnet.hookspecs import hookimpl

import plexnet_ops_basic

PLEXNET_API_VERSION = "1.0"


def operator_modules() -> list[str]:
    """Modules of this package that register operators (sorted for a stable order)."""
    names = []
    for m in pkgutil.walk_packages(plexnet_ops_basic.__path__, "plexnet_ops_basic."):
        if m.name.rsplit(".", 1)[1] not in ("plugin",) and not m.name.rsplit(".", 1)[1].startswith("_"):
            names.append(m.name)
    return sorted(names)


@hookimpl
def plexnet_register_operators(registry: Any) -> None:
    for name in operator_modules():
        mod = importlib.import_module(name)
        reg = getattr(mod, "register", None)
        if callable(reg):
            reg(registry)
