"""Reading ``PLEXNET_*`` settings from the environment (unset or blank: the default)."""
from __future__ import annotations

import os

__all__ = ["env_flag", "env_int"]


def env_flag(name: str, default: bool) -> bool:
    """A boolean setting: anything but ``0``, ``false``, ``no``, ``off`` is true."""
    v = os.environ.get(name, "").strip().lower()
    if not v:
        return default
    return v not in ("0", "false", "no", "off")


def env_int(name: str, default: int, what: str = "an integer") -> int:
    """An integer setting; ``what`` describes it in the error for a non-integer value."""
    v = os.environ.get(name, "").strip()
    if not v:
        return default
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"{name} must be {what}, got {v!r}") from None
