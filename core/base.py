"""Errors and version constants shared by every part of plexnet."""
from __future__ import annotations

__all__ = ["PlexnetError", "MXNetError", "ShapeError", "PluginError", "EngineError",
           "__version__", "API_VERSION"]

__version__ = "0.1.0"
#: Version of the plugin-facing API (hookspecs, registries, contracts). Plugins declare
#: the major version they were written for; a different major is reported, not loaded.
API_VERSION = "1.0"


class PlexnetError(Exception):
    """Base class of every error plexnet raises on purpose."""


#: MXNet scripts catch ``mx.base.MXNetError``; keep the name.
MXNetError = PlexnetError


class ShapeError(PlexnetError, ValueError):
    """Shapes of an operator's inputs are inconsistent or cannot be inferred."""


class PluginError(PlexnetError):
    """A plugin failed to load or to register, or two plugins conflict."""


class EngineError(PlexnetError):
    """Misuse of the dependency engine (e.g. waiting from inside an engine function)."""
