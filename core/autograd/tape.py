"""Moved: the tape is ``plexnet.tape`` (below the arrays, which record on it); this name
is kept so that existing imports work."""
from __future__ import annotations

from ..tape.nodes import *  # noqa: F401,F403
from ..tape.nodes import INLINE_MAX_BYTES, __all__  # noqa: F401
