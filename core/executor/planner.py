"""Static memory planning (MXNet's ``PlanMemory`` pass, plus an arena packer).

Planning runs over the whole schedule (forward, then backward), in three steps.

1. **Liveness.** Every internal entry is *defined* by the node that first writes it and
   *last used* by the last node that reads it (or adds into it). Graph outputs stay
   alive to the end. A forward value that a backward node needs therefore lives until
   that backward node; one that backward does not need dies with its last forward
   reader.
2. **In place.** Walking the schedule, an output takes over the storage of an input
   when the operator allows it (``forward_inplace_option`` / ``backward_inplace_option``
   and sum nodes), the input is internal, not a graph output, read by nobody after this
   node and only once by it, and both have the same dtype and byte size. Entries chained
   this way form one *storage group* whose lifetime is the union of theirs.
3. **Co-sharing.** Groups whose lifetimes do not overlap share memory:

   * ``pool`` -- MXNet's ``GraphAllocator``: walking the schedule, a group takes the
     smallest free block at least as large (within ``match_range``), else the largest
     smaller one, which grows, else a new block; blocks are freed after their group's
     last use. Each block is one storage handle.
   * ``arena`` -- greedy by size (as TensorFlow Lite's arena planner): groups, largest
     first, are placed at the lowest offset of one arena where they overlap no placed
     group that is alive at the same time. Graph outputs get blocks of their own.

   ``auto`` (default, ``PLEXNET_EXEC_MEMORY_STRATEGY``) keeps whichever needs less.

With planning off every internal entry gets a block of its own. ``Plan.verify()`` checks
that no two simultaneously live entries overlap in memory.
"""
from __future__ import annotations

import bisect
from typing import Sequence

from ..operator.contract import OpReqType
from .gradient import ExecEntry, ExecNode

__all__ = ["Plan", "plan_memory", "PlanError", "STRATEGIES", "ALIGN"]

STRATEGIES = ("auto", "pool", "arena")
#: byte alignment of entries inside the arena
ALIGN = 64


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


class PlanError(AssertionError):
    """The plan violates a liveness invariant (a bug; raised by ``Plan.verify``)."""


class Plan:
    """Where every internal entry lives.

    ``unit[eid]`` is the storage unit (one allocation; -1 for external entries) and
    ``offset[eid]`` the byte offset in it; ``unit_sizes`` the bytes of every unit.
    ``defined``/``last_use`` are schedule steps; ``inplace_of[eid]`` is the input whose
    storage the entry took over (-1 if none); ``group[eid]`` the storage group.
    """

    def __init__(self, n_entries: int, n_steps: int) -> None:
        self.unit = [-1] * n_entries
        self.offset = [0] * n_entries
        self.unit_sizes: list[int] = []
        self.defined = [-1] * n_entries
        self.last_use = [-1] * n_entries
        self.inplace_of = [-1] * n_entries
        self.group = [-1] * n_entries
        self.n_steps = n_steps
        self.enabled = True
        self.strategy = "none"
        self.naive_bytes = 0
        self.peak_live_bytes = 0
        #: figures of every strategy that was tried
        self.alternatives: dict[str, int] = {}

    # compatibility names (one unit per block in the ``pool`` strategy)
    @property
    def storage(self) -> list[int]:
        return self.unit

    @property
    def block_sizes(self) -> list[int]:
        return self.unit_sizes

    @property
    def planned_bytes(self) -> int:
        return sum(self.unit_sizes)

    @property
    def num_blocks(self) -> int:
        return len(self.unit_sizes)

    @property
    def num_inplace(self) -> int:
        return sum(1 for x in self.inplace_of if x >= 0)

    def entries_of_unit(self, u: int) -> list[int]:
        return [e for e, s in enumerate(self.unit) if s == u]

    def verify(self, entries: Sequence[ExecEntry]) -> None:
        """Raise ``PlanError`` if two entries that are alive at the same step overlap in
        memory (an in-place hand-over at one step, to the same bytes, is the only allowed
        contact) or if an entry does not fit in its unit."""
        by_unit: dict[int, list[int]] = {}
        for e, u in enumerate(self.unit):
            if u < 0:
                continue
            by_unit.setdefault(u, []).append(e)
            if self.offset[e] + entries[e].nbytes > self.unit_sizes[u]:
                raise PlanError(f"entry {entries[e].name} ({entries[e].nbytes} bytes at offset {self.offset[e]}) "
                                f"does not fit unit {u} of {self.unit_sizes[u]} bytes")
            if self.defined[e] < 0:
                raise PlanError(f"entry {entries[e].name} has storage but is never written")
        for u, es in by_unit.items():
            for i in range(len(es)):
                a = es[i]
                lo_a, hi_a = self.defined[a], self.last_use[a]
                sa, ea = self.offset[a], self.offset[a] + entries[a].nbytes
                for j in range(i + 1, len(es)):
                    c = es[j]
                    lo_c, hi_c = self.defined[c], self.last_use[c]
                    if hi_a < lo_c or hi_c < lo_a:
                        continue  # never alive at the same time
                    sc, ec = self.offset[c], self.offset[c] + entries[c].nbytes
                    if ea <= sc or ec <= sa:
                        continue  # disjoint bytes
                    if (hi_a == lo_c and self.inplace_of[c] == a) or (hi_c == lo_a and self.inplace_of[a] == c):
                        if sa == sc:
                            continue  # in-place hand-over
                    raise PlanError(f"entries {entries[a].name} [{lo_a}, {hi_a}] and {entries[c].name} "
                                    f"[{lo_c}, {hi_c}] overlap in unit {u} while both are alive")


class _Group:
    __slots__ = ("gid", "size", "lo", "hi", "pinned", "entries")

    def __init__(self, gid: int) -> None:
        self.gid = gid
        self.size = 0
        self.lo = 1 << 60
        self.hi = -1
        self.pinned = False
        self.entries: list[int] = []


def _liveness(entries: Sequence[ExecEntry], schedule: Sequence[ExecNode], plan: Plan) -> list[int]:
    """Fill ``defined``/``last_use``; return reference counts (reads + later adds)."""
    n = len(entries)
    refc = [0] * n
    defined, last = plan.defined, plan.last_use
    for step, node in enumerate(schedule):
        for e in node.reads:
            refc[e] += 1
            last[e] = step
        for e, req in node.writes:
            if defined[e] < 0:
                if req == OpReqType.add and not entries[e].external:
                    raise PlanError(f"entry {entries[e].name} is first written with req 'add' by {node.name}")
                defined[e] = step
                if last[e] < step:
                    last[e] = step
            else:
                refc[e] += 1  # a later 'add' reads and writes it
                last[e] = step
    for e, ent in enumerate(entries):
        if ent.pinned and not ent.external:
            last[e] = len(schedule)
    return refc


def _inplace_groups(entries: Sequence[ExecEntry], schedule: Sequence[ExecNode], plan: Plan, refc: list[int],
                    enable: bool) -> list[_Group]:
    """Decide in-place hand-overs; return the storage groups of internal entries."""
    internal = [not e.external for e in entries]
    defined = plan.defined
    group = plan.group
    groups: list[_Group] = []
    live = [False] * len(entries)
    refc = list(refc)

    def new_group(e: int) -> None:
        g = _Group(len(groups))
        groups.append(g)
        group[e] = g.gid

    for step, node in enumerate(schedule):
        taken: set[int] = set()
        for e, _req in node.writes:
            if defined[e] != step or not internal[e] or group[e] >= 0:
                continue
            if enable:
                for i, o in node.inplace:
                    if o != e or i in taken or not internal[i] or group[i] < 0 or not live[i] or entries[i].pinned:
                        continue
                    if refc[i] != 1 or node.reads.count(i) != 1:
                        continue
                    if entries[i].nbytes != entries[e].nbytes or entries[i].dtype != entries[e].dtype:
                        continue
                    group[e] = group[i]
                    plan.inplace_of[e] = i
                    taken.add(i)
                    break
            if group[e] < 0:
                new_group(e)
            live[e] = True
        for e in node.reads:
            refc[e] -= 1
            if refc[e] == 0:
                live[e] = False
        for e, _req in node.writes:
            if defined[e] != step and internal[e]:
                refc[e] -= 1
                if refc[e] == 0:
                    live[e] = False
    for e, gid in enumerate(group):
        if gid < 0:
            continue
        g = groups[gid]
        g.entries.append(e)
        g.size = max(g.size, entries[e].nbytes)
        g.lo = min(g.lo, plan.defined[e])
        g.hi = max(g.hi, plan.last_use[e])
        g.pinned = g.pinned or entries[e].pinned
    return groups


def _pool_strategy(groups: list[_Group], n_steps: int, match_range: float) -> tuple[list[int], list[int]]:
    """MXNet's GraphAllocator over groups; returns (unit per group, unit sizes)."""
    sizes: list[int] = []
    free: list[tuple[int, int]] = []
    unit = [-1] * len(groups)
    by_def: dict[int, list[_Group]] = {}
    by_end: dict[int, list[_Group]] = {}
    for g in groups:
        by_def.setdefault(g.lo, []).append(g)
        if not g.pinned:
            by_end.setdefault(g.hi, []).append(g)
    for step in range(n_steps + 1):
        for g in by_def.get(step, ()):
            nbytes = g.size
            b = -1
            if free and match_range > 0:
                i = bisect.bisect_left(free, (nbytes, -1))
                if i < len(free) and free[i][0] <= nbytes * match_range:
                    b = free.pop(i)[1]
                elif i > 0 and free[i - 1][0] * match_range >= nbytes:
                    b = free.pop(i - 1)[1]
                    sizes[b] = nbytes  # grow it
            if b < 0:
                sizes.append(nbytes)
                b = len(sizes) - 1
            unit[g.gid] = b
        for g in by_end.get(step, ()):
            bisect.insort(free, (sizes[unit[g.gid]], unit[g.gid]))
    return unit, sizes


#: a group with more simultaneously-alive, already placed groups than this goes on top
#: of them (the skyline) instead of into the lowest gap (first fit)
ARENA_EXACT_CONFLICTS = 256


class _Skyline:
    """Over schedule steps: range "raise to at least v" and range max, O(log T) each
    (segment tree, iterative; tags are never pushed down because values only grow)."""

    __slots__ = ("size", "mx", "tag")

    def __init__(self, n_steps: int) -> None:
        size = 1
        while size < n_steps + 2:
            size *= 2
        self.size = size
        self.mx = [0] * (2 * size)
        self.tag = [0] * (2 * size)

    def raise_to(self, lo: int, hi: int, v: int) -> None:
        mx, tag = self.mx, self.tag
        l, r = lo + self.size, hi + self.size + 1
        l0, r0 = l, r - 1
        while l < r:
            if l & 1:
                if tag[l] < v:
                    tag[l] = v
                if mx[l] < v:
                    mx[l] = v
                l += 1
            if r & 1:
                r -= 1
                if tag[r] < v:
                    tag[r] = v
                if mx[r] < v:
                    mx[r] = v
            l >>= 1
            r >>= 1
        for i in (l0 >> 1, r0 >> 1):
            while i:  # no early exit: a canonical node on this path already holds v
                if mx[i] < v:
                    mx[i] = v
                i >>= 1

    def top(self, lo: int, hi: int) -> int:
        mx, tag = self.mx, self.tag
        l, r = lo + self.size, hi + self.size + 1
        best = 0
        for i in (l >> 1, (r - 1) >> 1):
            while i:
                if tag[i] > best:
                    best = tag[i]
                i >>= 1
        while l < r:
            if l & 1:
                if mx[l] > best:
                    best = mx[l]
                l += 1
            if r & 1:
                r -= 1
                if mx[r] > best:
                    best = mx[r]
            l >>= 1
            r >>= 1
        return best


class _Intervals:
    """Placed groups by schedule interval: which ones overlap ``[lo, hi]``, up to a limit.

    Those alive at ``lo`` are found by stabbing a segment tree over steps, those starting
    in ``(lo, hi]`` by bisecting a list sorted by start: O(log T + k) per query."""

    def __init__(self, n_steps: int) -> None:
        size = 1
        while size < n_steps + 2:
            size *= 2
        self.size = size
        self.at: dict[int, list[int]] = {}
        self.starts: list[tuple[int, int]] = []

    def add(self, idx: int, lo: int, hi: int) -> None:
        at = self.at
        l, r = lo + self.size, hi + self.size + 1
        while l < r:
            if l & 1:
                at.setdefault(l, []).append(idx)
                l += 1
            if r & 1:
                r -= 1
                at.setdefault(r, []).append(idx)
            l >>= 1
            r >>= 1
        bisect.insort(self.starts, (lo, idx))

    def overlapping(self, lo: int, hi: int, limit: int) -> list[int] | None:
        """Ids overlapping ``[lo, hi]``; None when there are more than ``limit``."""
        out: list[int] = []
        i = lo + self.size
        at = self.at
        while i:
            got = at.get(i)
            if got:
                out.extend(got)
                if len(out) > limit:
                    return None
            i >>= 1
        starts = self.starts
        j = bisect.bisect_right(starts, (lo, 1 << 62))
        end = bisect.bisect_right(starts, (hi, 1 << 62), lo=j)
        if len(out) + end - j > limit:
            return None
        out.extend(idx for _, idx in starts[j:end])
        return out


def _arena_strategy(groups: list[_Group], n_steps: int | None = None) -> tuple[list[int], list[int], list[int]]:
    """Greedy-by-size offsets in one arena (unit 0); pinned groups get units of their
    own. Returns (unit per group, offset per group, unit sizes).

    Each group, largest first, goes to the lowest offset where it overlaps no placed
    group alive at the same time (first fit among those). Finding them is O(log T + k)
    (``_Intervals``); a group with more than ``ARENA_EXACT_CONFLICTS`` of them is put on
    top of them all (``_Skyline``, O(log T)), so a long chain of values kept for the
    backward pass (every one alive at once) plans in O(n log n), not O(n^2)."""
    unit = [-1] * len(groups)
    offset = [0] * len(groups)
    sizes: list[int] = [0]
    if n_steps is None:
        n_steps = max((g.hi for g in groups), default=0) + 1
    n_steps = max(n_steps, max((g.hi for g in groups), default=0) + 1)
    placed: list[tuple[int, int]] = []  # (offset, end) per placement index
    live = _Intervals(n_steps)
    sky = _Skyline(n_steps)
    order = sorted((g for g in groups if not g.pinned), key=lambda g: (-g.size, g.lo, g.gid))
    arena = 0
    for g in order:
        need = _align(g.size)
        ids = live.overlapping(g.lo, g.hi, ARENA_EXACT_CONFLICTS)
        if ids is None:
            best = sky.top(g.lo, g.hi)
        else:
            best = 0
            for o, e in sorted(placed[i] for i in ids):
                if o - best >= need:
                    break
                if e > best:
                    best = e
        unit[g.gid] = 0
        offset[g.gid] = best
        live.add(len(placed), g.lo, g.hi)
        placed.append((best, best + need))
        sky.raise_to(g.lo, g.hi, best + need)
        arena = max(arena, best + need)
    sizes[0] = arena
    for g in groups:
        if g.pinned:
            sizes.append(g.size)
            unit[g.gid] = len(sizes) - 1
    return unit, offset, sizes


def plan_memory(entries: Sequence[ExecEntry], schedule: Sequence[ExecNode], enable: bool = True,
                match_range: float = 16.0, strategy: str = "auto") -> Plan:
    """Plan the internal entries of ``schedule`` (see the module docstring)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"memory strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    plan = Plan(len(entries), len(schedule))
    plan.enabled = enable
    plan.naive_bytes = sum(e.nbytes for e in entries if not e.external)
    refc = _liveness(entries, schedule, plan)
    groups = _inplace_groups(entries, schedule, plan, refc, enable)
    # peak of simultaneously live storage groups: a lower bound for any co-sharing of
    # these groups (in-place hand-overs counted once)
    delta = [0] * (len(schedule) + 2)
    for g in groups:
        delta[g.lo] += g.size
        delta[g.hi + 1] -= g.size
    cur = 0
    for d in delta:
        cur += d
        plan.peak_live_bytes = max(plan.peak_live_bytes, cur)
    if not enable:
        plan.strategy = "none"
        for g in groups:
            plan.unit_sizes.append(g.size)
            for e in g.entries:
                plan.unit[e] = len(plan.unit_sizes) - 1
        return plan
    choice: tuple[str, list[int], list[int], list[int]] | None = None
    if strategy in ("auto", "pool"):
        u, s = _pool_strategy(groups, len(schedule), match_range)
        plan.alternatives["pool"] = sum(s)
        choice = ("pool", u, [0] * len(groups), s)
    if strategy in ("auto", "arena"):
        u, o, s = _arena_strategy(groups, len(schedule))
        plan.alternatives["arena"] = sum(s)
        if choice is None or sum(s) < sum(choice[3]):
            choice = ("arena", u, o, s)
    assert choice is not None
    plan.strategy, gunit, goff, plan.unit_sizes = choice[0], choice[1], choice[2], choice[3]
    for g in groups:
        for e in g.entries:
            plan.unit[e] = gunit[g.gid]
            plan.offset[e] = goff[g.gid]
    return plan
