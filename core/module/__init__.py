"""``plexnet.mod`` / ``plexnet.module``: the symbolic training front end (MXNet 1.x
``mx.mod``): ``Module`` binds a symbol to devices and trains it with ``fit``."""
from __future__ import annotations

from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .executor_group import DataParallelExecutorGroup
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ["BaseModule", "Module", "DataParallelExecutorGroup", "BucketingModule", "SequentialModule",
           "PythonModule", "PythonLossModule"]
