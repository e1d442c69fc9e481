"""Moved: the per-thread recording/training flags are ``plexnet.tape.STATE`` (the tape sits
below the arrays); this name is kept so that existing imports work."""
from __future__ import annotations

from ..tape.state import STATE

__all__ = ["STATE"]
