"""``plexnet.executor``: the symbolic graph executor.

``Symbol.simple_bind`` / ``Symbol.bind`` return an ``Executor``. The package holds the
indexed graph and inference (``graph``), the gradient graph (``gradient``), the memory
planner (``planner``), bulk execution (``bulk``) and the executor itself
(``executor``). See ``docs/executor.md``.
"""
from __future__ import annotations

from .executor import Executor
from .graph import IndexedGraph, infer_shapes, infer_types
from .planner import Plan, PlanError, plan_memory

__all__ = ["Executor", "IndexedGraph", "infer_shapes", "infer_types", "Plan", "PlanError", "plan_memory"]
