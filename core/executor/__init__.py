"""``plexnet.executor``: the symbolic graph executor.

``Symbol.simple_bind`` / ``Symbol.bind`` return an ``Executor`` (an up-call: the symbols
sit below, ``plexnet.upcalls``). The package holds the gradient graph (``gradient``), the memory
planner (``planner``), bulk execution (``bulk``) and the executor itself
(``executor``). See ``docs/executor.md``.
"""
from __future__ import annotations

from .. import upcalls
from ..symbol.graph import IndexedGraph, infer_shapes, infer_types
from .executor import Executor
from .dynamic import DynamicExecutor
from .planner import Plan, PlanError, plan_memory
from .sparse_exec import SparseExecutor

Executor.register(SparseExecutor)   # isinstance(exe, mx.executor.Executor), as every MXNet executor

upcalls.provide(upcalls.EXECUTOR, Executor)

__all__ = ["Executor", "DynamicExecutor", "IndexedGraph", "infer_shapes", "infer_types", "Plan", "PlanError",
           "plan_memory"]
