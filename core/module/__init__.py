"""``plexnet.mod`` / ``plexnet.module``: the symbolic training front end (MXNet 1.x
``mx.mod``): ``Module`` binds a symbol to devices and trains it with ``fit``."""
from __future__ import annotations

from .base_module import BaseModule
from .executor_group import DataParallelExecutorGroup
from .module import Module

__all__ = ["BaseModule", "Module", "DataParallelExecutorGroup"]
