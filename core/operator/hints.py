"""What to tell a user whose operator is missing: the distribution to install, or the
names they probably meant.

Operators come from plugins, so a core installed alone has none: ``mx.nd.relu`` then
says ``mx.nd.relu needs an operator plugin: pip install plexnet-ops-basic`` (the table
of which standard distribution provides which name is generated into
``_known_ops.py`` by ``tools/gen_known_ops.py``). A misspelt name gets ``did you mean``
suggestions from the registered operators (``difflib``).
"""
from __future__ import annotations

import difflib
from typing import Any, Iterable

from ..registry import RANK_BUILTIN, Registry
from ._known_ops import KNOWN_OPERATORS

__all__ = ["providing_distribution", "missing_operator_message", "missing_method_message",
           "missing_fluent_message", "not_installed_message", "suggest", "DEFAULT_DISTRIBUTION"]

#: what to install when nothing else is known: the standard operator family
DEFAULT_DISTRIBUTION = "plexnet-ops-basic"

_BY_NAME: dict[str, str] = {n: d for d, names in KNOWN_OPERATORS.items() for n in names}


def providing_distribution(name: str) -> str | None:
    """The standard distribution that registers operator ``name`` (``None`` if none does)."""
    return _BY_NAME.get(name) or _BY_NAME.get("_" + name)


def not_installed_message(name: str) -> str | None:
    """For the operator registry's errors: what to install for a standard operator
    ``name``, without naming the (possibly internal) operator; ``None`` if unknown."""
    dist = providing_distribution(name)
    if dist is None:
        return None
    return (f"this operation needs an operator plugin that is not installed: pip install {dist} "
            f"(`plexnet plugins` lists what is installed)")


#: array attributes computed by an operator of another name (``a.T`` is ``transpose``)
_METHOD_OPS = {"T": "transpose"}


def missing_method_message(cls_name: str, name: str, registry: Registry[Any] | None = None) -> str:
    """The ``AttributeError`` text for ``NDArray.<name>`` / ``Symbol.<name>`` (operator
    methods): the distribution to install when a standard one provides it, or when no
    operator plugin is loaded at all; else Python's usual message."""
    dist = providing_distribution(_METHOD_OPS.get(name, name))
    if dist is None and registry is not None and not any(registry.rank(n) > RANK_BUILTIN for n in registry):
        dist = DEFAULT_DISTRIBUTION
    if dist is not None:
        return f"{cls_name}.{name} needs an operator plugin: pip install {dist}"
    return f"{cls_name!r} object has no attribute {name!r}"


def missing_fluent_message(qualname: str, op: str) -> str:
    """The error of an operator method (``NDArray.sum``) or helper whose operator ``op``
    is not registered: the distribution to install when a standard one provides it."""
    dist = providing_distribution(op)
    if dist is not None:
        return f"{qualname} needs an operator plugin: pip install {dist}"
    return (f"{qualname}: operator {op!r} is not registered (is the plugin that provides it installed? "
            f"`plexnet plugins` lists what is)")


def suggest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` close matches of ``name`` among ``candidates`` (case-insensitive)."""
    cands = [c for c in set(candidates) if not c.startswith("__")]
    lower: dict[str, str] = {}
    for c in sorted(cands):
        lower.setdefault(c.lower(), c)
    hits = difflib.get_close_matches(name.lower(), list(lower), n=n, cutoff=0.75)
    return [lower[h] for h in hits]


def missing_operator_message(qualname: str, name: str, registry: Registry[Any],
                             extra: Iterable[str] = ()) -> str:
    """The message for ``qualname`` (e.g. ``"mx.nd.relu"``) when ``registry`` (the
    operator registry) has no operator ``name``; ``extra`` are further valid names of the
    namespace, for suggestions."""
    dist = providing_distribution(name)
    if dist is not None:
        return f"{qualname} needs an operator plugin: pip install {dist}"
    registered = list(registry)
    close = suggest(name, registered + list(extra) + list(_BY_NAME))
    if close:
        return f"{qualname} does not exist; did you mean {', '.join(close)}?"
    if not any(registry.rank(n) > RANK_BUILTIN for n in registered):
        return (f"{qualname} does not exist, and no operator plugin is installed: "
                f"pip install {DEFAULT_DISTRIBUTION} (`plexnet plugins` lists what is installed)")
    return (f"{qualname} does not exist: no installed plugin registers an operator {name!r} "
            f"(`plexnet plugins` lists what is installed)")
