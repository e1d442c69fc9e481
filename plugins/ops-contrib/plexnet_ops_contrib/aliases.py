"""MXNet's ``_contrib_`` names of operators another plugin owns: ``_contrib_CTCLoss`` and
``_contrib_ctc_loss`` are MXNet's aliases of ``CTCLoss`` (plexnet-ops-basic).

They are registered only when the target is (the standard plugins load in order, so
ops-basic's operators are there when this hook runs); the property class is the target's,
and the implementation is looked up on the target when an operator is created, so every
implementation of ``CTCLoss`` (and a forced one) serves the aliases too. Without
ops-basic this plugin installs and loads as before, without the aliases.
"""
from __future__ import annotations

from typing import Any

__all__ = ["ALIASES", "register"]

#: alias -> operator registered by another plugin
ALIASES: dict[str, str] = {"_contrib_CTCLoss": "CTCLoss", "_contrib_ctc_loss": "CTCLoss"}


def register(registry: Any) -> None:
    for alias, target in ALIASES.items():
        cls = registry.get(target)
        if cls is None:
            continue

        def factory(prop: Any, ctx: Any, target: str = target) -> Any:
            return registry.select_impl(target, ctx.device_type).factory(prop, ctx)

        registry.register_property(alias, cls)
        registry.register_impl(alias, "*", factory, impl_name="alias")
