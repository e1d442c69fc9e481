"""Static memory planning (MXNet's ``PlanMemory`` pass with its ``GraphAllocator``).

The planner walks the whole schedule (forward, then backward) once and gives every
internal entry a *storage block*:

* **in place**: an output may take over the block of an input when the operator allows
  it (``forward_inplace_option`` / ``backward_inplace_option``, sum nodes), the input is
  internal, not a graph output, read by nobody after this node (and only once by it),
  and both have the same dtype and byte size;
* **co-sharing**: otherwise the output gets a block released earlier (its last reader
  has run): the smallest free block at least as large within ``match_range``, else the
  largest smaller one, which grows; else a new block;
* a block is released after the node that last reads (or adds into) the entries that
  live on it; graph outputs are never released.

Liveness spans the whole forward+backward schedule, so a forward value that backward
needs stays alive until that backward node has run, and values backward does not need
are reused at once. With planning off, every internal entry gets its own block.
``Plan.verify()`` checks that no two simultaneously live entries share a block.
"""
from __future__ import annotations

import bisect
from typing import Sequence

from ..operator.contract import OpReqType
from .gradient import ExecEntry, ExecNode

__all__ = ["Plan", "plan_memory", "PlanError"]


class PlanError(AssertionError):
    """The plan violates a liveness invariant (a bug; raised by ``Plan.verify``)."""


class Plan:
    """Result of planning: ``storage[eid]`` (block id, -1 for external entries) and
    ``block_sizes``; ``defined``/``last_use`` steps per entry; ``inplace_of[eid]`` the
    input whose block the entry took over (-1 if none)."""

    def __init__(self, n_entries: int, n_steps: int) -> None:
        self.storage = [-1] * n_entries
        self.block_sizes: list[int] = []
        self.defined = [-1] * n_entries
        self.last_use = [-1] * n_entries
        self.inplace_of = [-1] * n_entries
        self.n_steps = n_steps
        self.enabled = True
        self.naive_bytes = 0

    @property
    def planned_bytes(self) -> int:
        return sum(self.block_sizes)

    @property
    def num_blocks(self) -> int:
        return len(self.block_sizes)

    @property
    def num_inplace(self) -> int:
        return sum(1 for x in self.inplace_of if x >= 0)

    def entries_of_block(self, b: int) -> list[int]:
        return [e for e, s in enumerate(self.storage) if s == b]

    def verify(self, entries: Sequence[ExecEntry] | None = None) -> None:
        """Raise ``PlanError`` if two entries whose lifetimes overlap share a block
        (an in-place hand-over at a single step is the only allowed contact), or if a
        block is smaller than an entry on it."""
        by_block: dict[int, list[int]] = {}
        for e, b in enumerate(self.storage):
            if b >= 0:
                by_block.setdefault(b, []).append(e)
                if entries is not None and entries[e].nbytes > self.block_sizes[b]:
                    raise PlanError(f"entry {e} ({entries[e].nbytes} bytes) on block {b} of "
                                    f"{self.block_sizes[b]} bytes")
        for b, es in by_block.items():
            es.sort(key=lambda e: (self.defined[e], self.last_use[e]))
            for i in range(len(es)):
                for j in range(i + 1, len(es)):
                    a, c = es[i], es[j]
                    lo_a, hi_a = self.defined[a], self.last_use[a]
                    lo_c, hi_c = self.defined[c], self.last_use[c]
                    if hi_a < lo_c or hi_c < lo_a:
                        continue
                    if hi_a == lo_c and self.inplace_of[c] == a:
                        continue
                    if hi_c == lo_a and self.inplace_of[a] == c:
                        continue
                    raise PlanError(f"entries {a} [{lo_a}, {hi_a}] and {c} [{lo_c}, {hi_c}] are live at the "
                                    f"same time on block {b}")


class _Pool:
    """Free blocks ordered by size (MXNet's ``GraphAllocator`` free list)."""

    def __init__(self, sizes: list[int], match_range: float) -> None:
        self.sizes = sizes
        self.free: list[tuple[int, int]] = []  # (size, block)
        self.match = match_range

    def request(self, nbytes: int) -> int:
        free = self.free
        if free and self.match > 0:
            i = bisect.bisect_left(free, (nbytes, -1))
            if i < len(free) and free[i][0] <= nbytes * self.match:
                return free.pop(i)[1]
            if i > 0 and free[i - 1][0] * self.match >= nbytes:
                size, b = free.pop(i - 1)
                self.sizes[b] = nbytes  # grow it
                return b
        self.sizes.append(nbytes)
        return len(self.sizes) - 1

    def release(self, b: int) -> None:
        bisect.insort(self.free, (self.sizes[b], b))


def plan_memory(entries: Sequence[ExecEntry], schedule: Sequence[ExecNode], enable: bool = True,
                match_range: float = 16.0) -> Plan:
    """Plan the internal entries of ``schedule`` (see the module docstring)."""
    n = len(entries)
    plan = Plan(n, len(schedule))
    plan.enabled = enable
    internal = [not e.external for e in entries]
    plan.naive_bytes = sum(e.nbytes for e in entries if not e.external)
    # definition steps and reference counts
    refc = [0] * n
    defined = plan.defined
    last = plan.last_use
    for step, node in enumerate(schedule):
        for e in node.reads:
            refc[e] += 1
            last[e] = step
        for e, req in node.writes:
            if defined[e] < 0:
                if req == OpReqType.add and internal[e]:
                    raise PlanError(f"entry {entries[e].name} is first written with req 'add' by {node.name}")
                defined[e] = step
                if last[e] < step:
                    last[e] = step
            else:
                refc[e] += 1  # a later 'add' is a read-modify-write use
                last[e] = step
    for e, ent in enumerate(entries):
        if ent.pinned:
            last[e] = len(schedule)
        if defined[e] < 0 and ent.kind in ("arg", "aux", "head_grad"):
            defined[e] = -1
    sizes: list[int] = []
    pool = _Pool(sizes, match_range if enable else 0.0)
    storage = plan.storage
    live_on: list[int] = []       # live entries per block
    pinned_block: list[bool] = []

    def take_new(e: int) -> None:
        b = pool.request(entries[e].nbytes)
        while len(live_on) < len(sizes):
            live_on.append(0)
            pinned_block.append(False)
        storage[e] = b
        live_on[b] = 1
        if entries[e].pinned:
            pinned_block[b] = True

    def release(e: int) -> None:
        b = storage[e]
        live_on[b] -= 1
        if live_on[b] == 0 and not pinned_block[b]:
            pool.release(b)

    for step, node in enumerate(schedule):
        # 1. storage for the entries this node defines
        taken: set[int] = set()
        for e, req in node.writes:
            if defined[e] != step or not internal[e] or storage[e] >= 0:
                continue
            if enable:
                for i, o in node.inplace:
                    if o != e or i in taken or not internal[i] or storage[i] < 0 or entries[i].pinned:
                        continue
                    if refc[i] != 1 or node.reads.count(i) != 1:
                        continue
                    if entries[i].nbytes != entries[e].nbytes or entries[i].dtype != entries[e].dtype:
                        continue
                    b = storage[i]
                    if live_on[b] != 1:
                        continue
                    storage[e] = b
                    live_on[b] += 1
                    if entries[e].pinned:
                        pinned_block[b] = True
                    plan.inplace_of[e] = i
                    taken.add(i)
                    break
            if storage[e] < 0:
                take_new(e)
        # 2. release what this node was the last to use
        for e in node.reads:
            refc[e] -= 1
            if refc[e] == 0 and internal[e] and not entries[e].pinned and storage[e] >= 0:
                release(e)
        for e, req in node.writes:
            if defined[e] == step:
                if refc[e] == 0 and internal[e] and not entries[e].pinned and storage[e] >= 0:
                    release(e)
            elif internal[e]:
                refc[e] -= 1
                if refc[e] == 0 and not entries[e].pinned and storage[e] >= 0:
                    release(e)
    plan.block_sizes = sizes
    return plan
