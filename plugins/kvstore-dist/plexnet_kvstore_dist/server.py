"""The parameter-server logic, independent of the transport.

``ServerCore`` holds the slices of keys that live on one server and implements the
protocol as coroutines (one event loop, no locks): ``init``, ``push``, ``pull``,
``barrier``, ``set_optimizer``, membership (``hello``, ``heartbeat``, ``leave``,
``worker_failed``) and checkpoints. The Ray actor in ``ray_transport.py`` forwards
its methods here; another transport (MPI, raw sockets) can do the same.

Consistency:

* ``sync`` (``dist_sync``): the n-th push of a key from each worker belongs to round
  n. A round completes when every worker has pushed into it; then the sum is applied
  (optimizer update, or the stored value is replaced by it). A pull carries, per key,
  how many pushes the worker has made, and waits until that many rounds completed, so
  a worker always reads the result of its own pushes (and everyone else's of the same
  round). Pushes return at once; a worker may run ahead into later rounds.
* ``async`` (``dist_async``): every push is applied when it arrives (an optimizer is
  required, as in MXNet); a pull waits only until the worker's own pushes are applied.

Failures: every wait has a timeout; a dead worker (reported by the launcher, or silent
for ``heartbeat_timeout`` seconds) fails the whole job: pending and later calls raise
``ServerError`` naming it. A worker that leaves (finished) while a round still misses
its push makes the waits on that round fail at once ("uneven pushes").
"""
from __future__ import annotations

import asyncio
import glob
import json
import os
import re
import time
from collections import deque
from typing import Any, Callable

import numpy as np

from plexnet.fileio import atomic_open
from plexnet.kvstore.compression import dequantize_2bit
from plexnet.optimizer import Updater, from_config
from plexnet.optimizer._plain import from_plain, to_plain

__all__ = ["ServerCore", "ServerError", "checkpoint_path", "choose_restore_round", "describe_restore"]

_CKPT_FORMAT = "plexnet-kvstore-server-checkpoint/1"
_CKPT_RE = re.compile(r"server-(\d+)-of-(\d+)\.r(\d+)\.npz$")
_FROZEN_DELAY_S = 1.0
_FROZEN_RE = re.compile(r"server-(\d+)-of-(\d+)\.frozen\.npz$")


class ServerError(Exception):
    """A protocol error or a job failure, raised to the calling worker."""


def checkpoint_path(directory: str, server_id: int, num_servers: int, rnd: int) -> str:
    return os.path.join(directory, f"server-{server_id}-of-{num_servers}.r{rnd:08d}.npz")


def frozen_path(directory: str, server_id: int, num_servers: int) -> str:
    """Checkpoint of a server none of whose keys was ever pushed (e.g. only
    ``fixed_param_names`` layers): valid for any restore round."""
    return os.path.join(directory, f"server-{server_id}-of-{num_servers}.frozen.npz")


def describe_restore(directory: str | None, num_servers: int) -> tuple[int | None, str]:
    """``(round, message)``: the newest round for which every one of ``num_servers``
    servers has a checkpoint in ``directory`` (a server holding only never-pushed keys
    counts for every round), or ``(None, why none is usable)``; ``(None, "")`` when no
    directory is configured. Checkpoints of another number of servers are an error."""
    if not directory:
        return None, ""
    have: dict[int, set[int]] = {}
    per_server: dict[int, list[int]] = {}
    frozen: set[int] = set()
    for f in glob.glob(os.path.join(directory, "server-*-of-*.npz")):
        m = _CKPT_RE.search(f) or _FROZEN_RE.search(f)
        if not m:
            continue
        sid, n = int(m.group(1)), int(m.group(2))
        if n != num_servers:
            raise ServerError(f"checkpoint directory {directory} holds checkpoints of {n} servers; this job "
                              f"has {num_servers} (use the same number of servers to resume)")
        if m.re is _FROZEN_RE:
            frozen.add(sid)
            continue
        rnd = int(m.group(3))
        have.setdefault(rnd, set()).add(sid)
        per_server.setdefault(sid, []).append(rnd)
    full = [r for r, sids in have.items() if len(sids | frozen) == num_servers]
    if full:
        return max(full), ""
    if not have:
        return None, (f"no checkpoint in {directory}: starting from round 0" if not frozen else
                      f"no checkpoint with pushed keys in {directory}: starting from round 0")
    listing = "; ".join(f"server {sid}: {sorted(per_server.get(sid, []))}" for sid in range(num_servers))
    return None, (f"no usable checkpoint in {directory}: no round that every server has ({listing}); "
                  f"starting from round 0")


def choose_restore_round(directory: str | None, num_servers: int) -> int | None:
    """The round ``describe_restore`` picks (None when there is none)."""
    return describe_restore(directory, num_servers)[0]


class _Round:
    __slots__ = ("ranks", "first", "sum")

    def __init__(self) -> None:
        self.ranks: set[int] = set()
        self.first: np.ndarray | None = None
        self.sum: np.ndarray | None = None


class _PullWait:
    """A pull waiting for its rounds, answered by a callback (``ServerCore.wait_pull``)."""

    __slots__ = ("items", "ready", "describe", "impossible", "reply", "owner", "deadline")

    def __init__(self, items: list, ready: Callable[[], bool], describe: Callable[[], str],
                 impossible: Callable[[], str | None] | None, reply: Callable, owner: Any, deadline: float) -> None:
        self.items, self.ready, self.describe, self.impossible = items, ready, describe, impossible
        self.reply, self.owner, self.deadline = reply, owner, deadline


class ServerCore:
    """One server's state and protocol (see the module docstring)."""

    def __init__(self, server_id: int, num_servers: int, num_workers: int, mode: str = "sync", *,
                 timeout: float = 120.0, heartbeat_timeout: float = 10.0, checkpoint_dir: str | None = None,
                 checkpoint_every: int = 10, checkpoint_seconds: float = 30.0,
                 restore_round: int | None = None,
                 alloc: Callable[[tuple, int, Any], np.ndarray] | None = None) -> None:
        if mode not in ("sync", "async"):
            raise ValueError(f"mode must be 'sync' or 'async', got {mode!r}")
        self.server_id = server_id
        self.num_servers = num_servers
        self.num_workers = num_workers
        self.mode = mode
        self.timeout = float(timeout)
        self.heartbeat_timeout = float(heartbeat_timeout)
        self.checkpoint_dir = checkpoint_dir
        self.checkpoint_every = int(checkpoint_every)
        self.checkpoint_seconds = float(checkpoint_seconds)
        #: allocates a key's stored slice (the shared-memory data plane maps it in workers)
        self.alloc = alloc or (lambda skey, n, dtype: np.empty(n, dtype))
        self.store: dict[tuple, np.ndarray] = {}
        self.rounds: dict[tuple, int] = {}
        self.pending: dict[tuple, deque[_Round]] = {}
        self.free_bufs: dict[tuple, list[np.ndarray]] = {}
        self.applied: dict[tuple, int] = {}
        self.updater: Updater | None = None
        self.restored_keys: set[tuple] = set()
        self.base: dict[tuple, int] = {}  # rounds completed before this job (resumed keys)
        self.restored_round = 0
        self.failure: str | None = None
        self.left: set[int] = set()
        self.last_seen: dict[int, float] = {}
        self.barrier_arrivals: dict[int, set[int]] = {}
        self.barrier_done = -1
        self.last_checkpoint = 0
        self.last_checkpoint_time = time.monotonic()
        self.dirty = False
        self.open_rounds = 0  # rounds some (not all) workers pushed: no checkpoint meanwhile
        self.completed_since_ckpt = False
        self.init_time: float | None = None
        self.stats = {"pushes": 0, "pulls": 0, "rounds": 0, "checkpoints": 0}
        self._changed: asyncio.Event | None = None
        self.waits: list[_PullWait] = []  # direct pull waits (wait_pull)
        self._monitor_task: asyncio.Task | None = None
        if restore_round is not None:
            path = checkpoint_path(checkpoint_dir or ".", server_id, num_servers, restore_round)
            frozen = frozen_path(checkpoint_dir or ".", server_id, num_servers)
            self.restore(path if os.path.exists(path) or not os.path.exists(frozen) else frozen)
            self.restored_round = self.last_checkpoint = int(restore_round)

    # -- waiting ------------------------------------------------------------------------------
    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        if self._monitor_task is None:
            self._monitor_task = asyncio.get_running_loop().create_task(self._monitor())
        return self._changed

    def close(self) -> None:
        """Stop the heartbeat/checkpoint monitor (call on the server's loop); a loop stopped
        with the task still pending would report it destroyed at exit."""
        task, self._monitor_task = self._monitor_task, None
        if task is not None:
            task.cancel()

    def _notify(self) -> None:
        if self.waits:
            self._poll_waits()
        ev = self._changed
        if ev is not None:
            self._changed = asyncio.Event()
            ev.set()

    def fail(self, reason: str) -> None:
        """Fail the job: every pending and later call raises ``reason``."""
        if self.failure is None:
            self.failure = reason
        self._notify()

    def _check(self) -> None:
        if self.failure is not None:
            raise ServerError(self.failure)

    async def _wait_until(self, pred: Callable[[], bool], describe: Callable[[], str],
                          impossible: Callable[[], str | None] | None = None) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while True:
            self._check()
            if pred():
                return
            if impossible is not None:
                why = impossible()
                if why:
                    raise ServerError(why)
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise ServerError(f"server {self.server_id}: timed out after {self.timeout:.0f} s waiting for "
                                  f"{describe()}")
            ev = self._event()
            try:
                await asyncio.wait_for(ev.wait(), min(remaining, 1.0))
            except asyncio.TimeoutError:
                pass

    async def _monitor(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            self.check_heartbeats()
            if self.waits:
                self._poll_waits(time.monotonic())
            self._maybe_checkpoint_frozen()
            if (self.mode == "async" and self.checkpoint_dir and self.dirty
                    and time.monotonic() - self.last_checkpoint_time >= self.checkpoint_seconds):
                self.save_checkpoint(sum(self.rounds.values()))

    def check_heartbeats(self) -> None:
        if self.failure is not None or self.heartbeat_timeout <= 0:
            return
        now = time.monotonic()
        for rank, t in list(self.last_seen.items()):
            if rank not in self.left and now - t > self.heartbeat_timeout:
                self.fail(f"worker {rank} sent no heartbeat for {now - t:.1f} s (killed or hung); the job "
                          f"is stopped")
                return

    # -- membership -----------------------------------------------------------------------------
    async def hello(self, rank: int) -> dict[str, Any]:
        self._event()
        self._check()
        self.last_seen[rank] = time.monotonic()
        return {"server_id": self.server_id, "mode": self.mode, "num_workers": self.num_workers,
                "restored_round": self.restored_round}

    async def heartbeat(self, rank: int) -> str | None:
        """Record that ``rank`` is alive; returns the job failure, if any."""
        self._event()
        self.last_seen[rank] = time.monotonic()
        return self.failure

    async def leave(self, rank: int) -> None:
        """``rank`` finished (closed its kvstore or exited cleanly)."""
        self.left.add(rank)
        self.last_seen.pop(rank, None)
        self._notify()

    async def worker_failed(self, rank: int, reason: str) -> None:
        """The launcher saw worker ``rank`` die."""
        if rank in self.left and "exit code 0" in reason:
            return
        self.fail(f"worker {rank} died ({reason}); the job is stopped")

    async def ping(self) -> int:
        return self.server_id

    async def info(self) -> dict[str, Any]:
        return {"server_id": self.server_id, "pid": os.getpid(), "mode": self.mode, "keys": len(self.store),
                "failure": self.failure,
                "restored_round": self.restored_round, "rounds": sorted(set(self.rounds.values())),
                "stats": dict(self.stats), "left": sorted(self.left)}

    # -- data -------------------------------------------------------------------------------------
    async def init(self, rank: int, items: list[tuple[tuple, np.ndarray]]) -> None:
        self._check()
        for skey, arr in items:
            if skey in self.store:
                if skey in self.restored_keys:
                    continue  # resumed from a checkpoint: keep the checkpointed value
                raise ServerError(f"init: key {skey[0]!r} is already initialised on server {self.server_id}")
            src = np.asarray(arr).reshape(-1)
            dst = self.alloc(skey, src.size, src.dtype)
            np.copyto(dst, src)
            self.store[skey] = dst
            self.rounds[skey] = 0
        self.init_time = time.monotonic()  # the monitor checkpoints keys nobody pushes
        self._notify()

    async def set_mode(self, mode: str) -> None:
        """``'sync'`` or ``'async'``, as the workers' kvstore type says (before any push)."""
        if mode not in ("sync", "async"):
            raise ServerError(f"unknown mode {mode!r}")
        if mode != self.mode:
            if self.stats["pushes"]:
                raise ServerError(f"server {self.server_id} already runs in {self.mode} mode; a job can not mix "
                                  f"dist_sync and dist_async kvstores")
            self.mode = mode

    async def set_optimizer(self, config_json: str) -> None:
        """Install the optimizer from its plain-data config (JSON); a server resumed from
        a checkpoint keeps its restored states and update counters."""
        self._check()
        opt = from_config(json.loads(config_json))
        if self.updater is not None and self.restored_keys:
            old = self.updater.optimizer
            for attr in ("num_update", "_all_index_update_counts", "_current_device"):
                if hasattr(old, attr):
                    setattr(opt, attr, getattr(old, attr))
            opt._index_update_count = opt._all_index_update_counts.setdefault(opt._current_device, {})
            self.updater.optimizer = opt
        else:
            self.updater = Updater(opt)

    def _decode(self, skey: tuple, data: Any) -> np.ndarray:
        store = self.store[skey]
        if isinstance(data, tuple):
            kind, threshold, n, packed = data
            if kind != "2bit":
                raise ServerError(f"unknown payload kind {kind!r}")
            if n != store.size:
                raise ServerError(f"push: key {skey[0]!r} slice has {store.size} elements, got {n}")
            return dequantize_2bit(np, packed, n, threshold, store.dtype)
        g = data.reshape(-1)
        if g.size != store.size:
            raise ServerError(f"push: key {skey[0]!r} slice has {store.size} elements on server "
                              f"{self.server_id}, got {g.size}")
        return g

    async def push(self, rank: int, items: list[tuple[tuple, Any]], borrowed: bool = False) -> None:
        """Merge (sync) or apply (async) pushed values. ``borrowed``: the arrays belong to
        the sender and may change once this returns, so nothing keeps a reference."""
        self.push_now(rank, items, borrowed)

    def push_now(self, rank: int, items: list[tuple[tuple, Any]], borrowed: bool = False,
                 owned: bool = False) -> None:
        """``push`` without the coroutine (it never waits). ``owned``: the arrays came from
        ``take_buffer`` and now belong to the server (summed into, then reused)."""
        self._check()
        self.stats["pushes"] += 1
        for skey, data in items:
            if skey not in self.store:
                raise ServerError(f"push: key {skey[0]!r} is not initialised on server {self.server_id}")
            g = self._decode(skey, data)
            if self.mode == "sync":
                raw = not isinstance(data, tuple)
                self._add_to_round(skey, rank, g, borrowed and raw, owned and raw)
            else:
                if self.updater is None:
                    raise ServerError("dist_async needs an optimizer on the servers: call kv.set_optimizer() "
                                      "before pushing")
                self.updater(skey[0], g, self.store[skey])
                if owned and not isinstance(data, tuple):
                    self.free_bufs.setdefault(skey, []).append(g)
                self.applied[(skey, rank)] = self.applied.get((skey, rank), 0) + 1
                self.rounds[skey] += 1
                self.dirty = True
        if self.completed_since_ckpt:  # after the whole message: its keys belong to one step
            self._maybe_checkpoint()
        self._notify()

    def _buf(self, skey: tuple) -> np.ndarray:
        bufs = self.free_bufs.setdefault(skey, [])
        return bufs.pop() if bufs else np.empty(self.store[skey].size, self.store[skey].dtype)

    def take_buffer(self, skey: tuple) -> np.ndarray:
        """A buffer of ``skey``'s size and dtype for a transport to receive a push into,
        handed back with ``push_now(..., owned=True)``."""
        return self._buf(skey)

    def _add_to_round(self, skey: tuple, rank: int, g: np.ndarray, borrowed: bool = False,
                      owned: bool = False) -> None:
        q = self.pending.setdefault(skey, deque())
        for r in q:
            if rank not in r.ranks:
                break
        else:
            r = _Round()
            q.append(r)
            self.open_rounds += 1
        r.ranks.add(rank)
        if r.first is None and r.sum is None:
            if owned:  # the round sums into it; back to the pool when it completes
                r.sum = g
            elif borrowed:
                r.sum = self._buf(skey)
                np.copyto(r.sum, g)
            else:
                r.first = g
        elif r.sum is None:
            buf = self._buf(skey)
            np.add(r.first, g, out=buf)
            r.sum, r.first = buf, None
        else:
            r.sum += g
        if owned and r.sum is not g:
            self.free_bufs.setdefault(skey, []).append(g)
        while q and len(q[0].ranks) >= self.num_workers:
            self._complete(skey, q.popleft())

    def _complete(self, skey: tuple, r: _Round) -> None:
        total = r.sum if r.sum is not None else r.first
        store = self.store[skey]
        if self.updater is not None:
            self.updater(skey[0], total, store)
        else:
            np.copyto(store, total)
        if r.sum is not None:
            self.free_bufs.setdefault(skey, []).append(r.sum)
        self.rounds[skey] += 1
        self.open_rounds -= 1
        self.stats["rounds"] += 1
        self.dirty = True
        self.completed_since_ckpt = True

    def _round_status(self, skey: tuple, need: int) -> tuple[set[int], set[int]]:
        """(ranks that pushed, ranks missing) for round ``need`` of ``skey`` (1-based)."""
        idx = need - self.rounds[skey] - 1
        q = self.pending.get(skey, ())
        got = set(q[idx].ranks) if 0 <= idx < len(q) else set()
        return got, set(range(self.num_workers)) - got

    def pull_ready(self, rank: int, items: list[tuple[tuple, int]]) -> list[np.ndarray] | None:
        """The pulled arrays if they are ready now, else None (then await ``pull``)."""
        self._check()
        store = self.store
        for skey, _ in items:
            if skey not in store:
                raise ServerError(f"pull: key {skey[0]!r} is not initialised on server {self.server_id}")
        if self.mode == "sync":
            base, rounds = self.base, self.rounds
            if all(rounds[s] - base.get(s, 0) >= v for s, v in items):
                self.stats["pulls"] += 1
                return [store[s] for s, _ in items]
            return None
        if all(self.applied.get((s, rank), 0) >= v for s, v in items):
            self.stats["pulls"] += 1
            return [store[s].copy() for s, _ in items]
        return None

    def _pull_conditions(self, rank: int, items: list[tuple[tuple, int]]
                         ) -> tuple[Callable[[], bool], Callable[[], str], Callable[[], str | None] | None]:
        """``(ready, describe, impossible)`` of a pull that is not ready yet."""
        if self.mode != "sync":
            def ready_async() -> bool:
                return all(self.applied.get((s, rank), 0) >= v for s, v in items)

            return ready_async, lambda: f"worker {rank}'s own pushes to be applied", None
        base = self.base

        def ready() -> bool:
            return all(self.rounds[s] - base.get(s, 0) >= v for s, v in items)

        def first_waiting() -> tuple[tuple, int]:
            return next((s, v) for s, v in items if self.rounds[s] - base.get(s, 0) < v)

        def describe() -> str:
            s, v = first_waiting()
            got, missing = self._round_status(s, self.rounds[s] + 1)
            return (f"dist_sync round {self.rounds[s] + 1} of key {s[0]!r} (worker {rank} needs round "
                    f"{v + base.get(s, 0)}): "
                    f"pushes from workers {sorted(got)}, none yet from {sorted(missing)}; every worker must "
                    f"push each key equally often")

        def impossible() -> str | None:
            s, v = first_waiting()
            got, missing = self._round_status(s, self.rounds[s] + 1)
            gone = missing & self.left
            if gone:
                return (f"dist_sync: worker(s) {sorted(gone)} finished without pushing key {s[0]!r} for round "
                        f"{self.rounds[s] + 1}, which worker {rank} waits for: the workers pushed this key "
                        f"unequally often")
            return None

        return ready, describe, impossible

    def _pulled(self, items: list[tuple[tuple, int]]) -> list[np.ndarray]:
        if self.mode == "sync":  # a stored value can not change before the puller pushes again
            return [self.store[s] for s, _ in items]
        return [self.store[s].copy() for s, _ in items]

    async def pull(self, rank: int, items: list[tuple[tuple, int]]) -> list[np.ndarray]:
        ready_now = self.pull_ready(rank, items)
        if ready_now is not None:
            return ready_now
        self.stats["pulls"] += 1
        ready, describe, impossible = self._pull_conditions(rank, items)
        await self._wait_until(ready, describe, impossible)
        return self._pulled(items)

    def wait_pull(self, rank: int, items: list[tuple[tuple, int]],
                  reply: Callable[[list[np.ndarray] | None, BaseException | None], None], owner: Any = None) -> None:
        """``pull`` without a coroutine, for a pull that ``pull_ready`` found not ready:
        ``reply(arrays, None)`` is called from the push that completes it (no task, no
        extra turn of the event loop), ``reply(None, error)`` on a job failure, an
        impossible wait ("uneven pushes") or after the timeout. ``drop_waits(owner)``
        forgets the waits of a closed connection."""
        self.stats["pulls"] += 1
        ready, describe, impossible = self._pull_conditions(rank, items)
        self.waits.append(_PullWait(items, ready, describe, impossible, reply, owner,
                                    time.monotonic() + self.timeout))
        self._event()  # the monitor enforces the timeout

    def drop_waits(self, owner: Any) -> None:
        self.waits = [w for w in self.waits if w.owner is not owner]

    def _poll_waits(self, now: float | None = None) -> None:
        """Answer the direct pull waits that can be answered (``now``: also time them out)."""
        waits, self.waits = self.waits, []
        keep = []
        for w in waits:
            res: list[np.ndarray] | None = None
            err: BaseException | None = None
            try:
                self._check()
                if w.ready():
                    res = self._pulled(w.items)
                else:
                    why = w.impossible() if w.impossible is not None else None
                    if why:
                        raise ServerError(why)
                    if now is not None and now > w.deadline:
                        raise ServerError(f"server {self.server_id}: timed out after {self.timeout:.0f} s waiting "
                                          f"for {w.describe()}")
                    keep.append(w)
                    continue
            except Exception as e:  # noqa: BLE001 - sent to the worker
                err = e
            try:
                w.reply(res, err)
            except Exception:  # noqa: BLE001 - a reply that can not be sent: its connection failed itself
                pass
        self.waits[:0] = keep  # before those registered by the replies

    async def barrier(self, rank: int, gen: int) -> None:
        self._check()
        arrived = self.barrier_arrivals.setdefault(gen, set())
        arrived.add(rank)
        self._notify()

        def done() -> bool:
            return self.barrier_done >= gen or len(self.barrier_arrivals.get(gen, ())) >= self.num_workers

        def missing() -> set[int]:
            return set(range(self.num_workers)) - self.barrier_arrivals.get(gen, set())

        def impossible() -> str | None:
            gone = missing() & self.left
            return f"barrier {gen}: worker(s) {sorted(gone)} finished without reaching it" if gone else None

        await self._wait_until(done, lambda: f"barrier {gen}: workers {sorted(missing())} have not arrived",
                               impossible)
        if self.barrier_done < gen:
            self.barrier_done = gen
            self.barrier_arrivals = {g: s for g, s in self.barrier_arrivals.items() if g > gen}

    # -- checkpoints ----------------------------------------------------------------------------
    def _maybe_checkpoint(self) -> None:
        """Checkpoint (sync mode) at a quiet moment, no round half pushed, once the leading
        key passed a multiple of ``checkpoint_every`` rounds. Keys never pushed (frozen
        layers) do not count. Pushed keys must stand at one round (the same step for all)
        or, when keys are pushed unequally often, differ by more than one round (one
        round apart may be a step whose remaining keys are still to come)."""
        if not self.checkpoint_dir or self.checkpoint_every <= 0 or self.mode != "sync":
            return
        if self.open_rounds:
            return
        active = [r for r in self.rounds.values() if r > 0]
        if not active:
            return
        r, low = max(active), min(active)
        last, every = self.last_checkpoint, self.checkpoint_every
        if r > last and r // every > last // every and (r == low or r - low > 1):
            self.save_checkpoint(r)

    def _maybe_checkpoint_frozen(self) -> None:
        """Keys initialised but never pushed (``fixed_param_names``) get a checkpoint too,
        written once the inits have settled (no init for ``_FROZEN_DELAY_S``), so a
        server holding only such keys does not keep the job from resuming."""
        t = self.init_time
        if (t is None or not self.checkpoint_dir or self.mode != "sync" or any(self.rounds.values())
                or time.monotonic() - t < _FROZEN_DELAY_S):
            return
        self.init_time = None
        self.save_checkpoint(0)

    async def checkpoint(self) -> int:
        """Write a checkpoint now (returns its round)."""
        r = max(self.rounds.values()) if self.mode == "sync" and self.rounds else sum(self.rounds.values())
        self.save_checkpoint(r)
        return r

    def save_checkpoint(self, rnd: int) -> str | None:
        """Weights and optimizer states (npz + JSON, no pickle), written atomically; the
        two newest checkpoints are kept."""
        if not self.checkpoint_dir:
            return None
        os.makedirs(self.checkpoint_dir, exist_ok=True)
        arrays: dict[str, np.ndarray] = {}
        keys = []
        for i, (skey, arr) in enumerate(self.store.items()):
            arrays[f"k{i}"] = arr
            keys.append([to_plain(skey), f"k{i}", int(self.rounds.get(skey, 0))])
        if self.updater is not None:
            arrays["optimizer"] = np.frombuffer(self.updater.get_states(dump_optimizer=True), np.uint8)
        meta = {"format": _CKPT_FORMAT, "server_id": self.server_id, "num_servers": self.num_servers,
                "mode": self.mode, "round": rnd, "keys": keys}
        arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
        frozen = frozen_path(self.checkpoint_dir, self.server_id, self.num_servers)
        if rnd == 0 and not any(self.rounds.values()):
            path = frozen
        else:
            path = checkpoint_path(self.checkpoint_dir, self.server_id, self.num_servers, rnd)
        with atomic_open(path) as f:  # old or new file, never half; honours the umask
            np.savez(f, **arrays)
        if path != frozen:  # a pushed key: the frozen checkpoint no longer tells the state
            try:
                os.remove(frozen)
            except OSError:
                pass
        self.last_checkpoint = rnd
        self.last_checkpoint_time = time.monotonic()
        self.completed_since_ckpt = False
        self.dirty = False
        self.stats["checkpoints"] += 1
        pattern = f"server-{self.server_id}-of-{self.num_servers}.r*.npz"
        mine = sorted(glob.glob(os.path.join(self.checkpoint_dir, pattern)))
        for old in mine[:-2]:
            try:
                os.remove(old)
            except OSError:
                pass
        return path

    def restore(self, path: str) -> None:
        """Load a checkpoint; an unreadable one is a ``ServerError`` naming the file."""
        try:
            self._restore(path)
        except ServerError:
            raise
        except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
            raise ServerError(f"{path}: unreadable kvstore checkpoint ({type(e).__name__}: {e}); remove it or "
                              f"point --checkpoint-dir elsewhere") from None

    def _restore(self, path: str) -> None:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["__meta__"]).decode())
            if meta.get("format") != _CKPT_FORMAT:
                raise ServerError(f"{path}: not a plexnet kvstore checkpoint")
            if meta["server_id"] != self.server_id or meta["num_servers"] != self.num_servers:
                raise ServerError(f"{path}: written by server {meta['server_id']} of {meta['num_servers']}")
            for skey_plain, name, rnd in meta["keys"]:
                skey = from_plain(skey_plain)
                skey = tuple(skey) if isinstance(skey, list) else skey
                src = z[name]
                self.store[skey] = self.alloc(skey, src.size, src.dtype)
                np.copyto(self.store[skey], src)
                self.rounds[skey] = rnd if self.mode == "sync" else 0
                self.base[skey] = self.rounds[skey]
                self.restored_keys.add(skey)
            if "optimizer" in z.files:
                u = Updater(from_config({"type": "sgd", "attrs": {}}))
                u.set_states(bytes(z["optimizer"]))
                self.updater = u
        self.restored_round = int(meta["round"])
        self.last_checkpoint = self.restored_round
