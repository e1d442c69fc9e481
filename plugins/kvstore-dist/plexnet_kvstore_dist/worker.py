"""``KVStoreDist``: the worker side of ``dist_sync``, ``dist_device_sync``, ``dist_async``.

A push sums the values of each key locally (on the CPU, or for ``dist_device_sync``
on the devices through a local ``device`` kvstore), optionally 2-bit compresses them,
and sends every key of a server in one call per server; it is one engine operation that
finishes as soon as the data is handed to the transport. A pull is one asynchronous
engine operation: one call per server carrying, per key, how many pushes this worker
made (so that the server answers with the value that includes them), completed by a
receiver thread that copies the slices into the outputs. Pushes and pulls of different
keys overlap; a pull of a key waits for the pushes of that key before it (engine order).

Small pushes and pulls (up to ``PLEXNET_KVSTORE_SMALL_BYTES``, default 64 KiB, CPU
arrays) run on the calling thread when their variables are free (``FnProperty.INLINE``
/ ``ASYNC``): a worker hand-off costs more than sending a few bytes. When the last pull
of a key came right after its push (the usual push, pull, push, pull loop), a small
``dist_sync`` push over TCP asks the server to answer the pull along with it
(``Transport.push(then_pull=...)``) and the pull that follows takes that answer: one
frame per step instead of two. A push that no pull follows costs only an unused reply.
"""
from __future__ import annotations

import json
import os
import queue
import threading
import uuid
from collections import defaultdict
from typing import Any, Callable, Sequence

import numpy as np

from plexnet import engine as _engine
from plexnet.engine import FnProperty
from plexnet.base import ShapeError
from plexnet.context import Context
from plexnet.kvstore.base import KVStoreBase, KVStoreError, KVStoreKeyError, bigarray_bound
from plexnet.kvstore.compression import quantize_2bit
from plexnet.profiler import SERVER_COMMAND

from . import config
from .partition import Part, plan

__all__ = ["KVStoreDist", "DIST_TYPES"]

# MXNet accepts any name with "dist" (sync unless "_async"; "device": sum on the devices);
# these are the spellings its scripts use (cifar10_dist.py: kv.create('dist'))
DIST_TYPES = ("dist_sync", "dist_device_sync", "dist_async", "dist", "dist_sync_device", "dist_device_async")
_CPU = ("cpu", "cpu_pinned", "cpu_shared")
_CPU0 = Context("cpu", 0)
#: pushes and pulls up to this many bytes run on the calling thread when ready
SMALL_BYTES = int(os.environ.get("PLEXNET_KVSTORE_SMALL_BYTES", str(64 * 1024)))


class _Key:
    __slots__ = ("key", "shape", "dtype", "size", "parts", "var", "count", "sendbuf", "residuals", "stage",
                 "nbytes", "calls", "pulled_at", "follow")

    def __init__(self, key: Any, shape: tuple, dtype: Any, parts: list[Part]) -> None:
        self.key = key
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(shape, dtype=np.int64)) if shape else 1
        self.parts = parts
        self.var = _engine.get().new_var()
        self.count = 0                      # pushes made by this worker
        self.sendbuf: np.ndarray | None = None
        self.residuals: dict[int, np.ndarray] = {}
        self.stage: dict[int, Any] = {}     # CPU copies of device values
        self.nbytes = self.size * self.dtype.itemsize
        self.calls = 0                      # push calls (at call time, unlike count)
        self.pulled_at = 0                  # ``calls`` at the last pull call
        self.follow = False                 # the last pull came right after one push


class _Receiver:
    """One thread that finishes pulls in order: wait for the servers, copy, complete."""

    def __init__(self, name: str) -> None:
        self.q: queue.Queue = queue.Queue()
        self.t = threading.Thread(target=self._run, name=name, daemon=True)
        self.t.start()

    def submit(self, job: Callable[[], None]) -> None:
        self.q.put(job)

    def _run(self) -> None:
        while True:
            job = self.q.get()
            if job is None:
                return
            job()

    def stop(self) -> None:
        self.q.put(None)


class KVStoreDist(KVStoreBase):
    """A worker's handle on a distributed kvstore (see the module docstring)."""

    def __init__(self, name: str, transport: Any = None) -> None:
        name = name.lower()
        if name not in DIST_TYPES:
            raise ValueError(f"unknown dist kvstore type {name!r}; choose one of {DIST_TYPES}")
        super().__init__(name)
        self._sync = "_async" not in name
        self._device = "device" in name
        self._transport = transport if transport is not None else _connect("sync" if self._sync else "async")
        self._keys: dict[Any, _Key] = {}
        self._local: Any = None
        self._receiver: _Receiver | None = None
        self._server_optimizer = False
        self._closed = False
        import atexit
        atexit.register(self.close)
        if getattr(self._transport, "launched", False):
            if self.rank == 0:
                self._transport.command("set_mode", "sync" if self._sync else "async")
            self._transport.barrier()

    # -- identity ---------------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return self._transport.rank

    @property
    def num_workers(self) -> int:
        return self._transport.num_workers

    @property
    def num_servers(self) -> int:
        return self._transport.num_servers

    @property
    def resumed_round(self) -> int:
        """Rounds completed before this job started, restored from the servers'
        checkpoints (0 for a fresh job): a resumed training loop skips that many steps."""
        return int(self._transport.info.get("restored_round", 0))

    def barrier(self) -> None:
        """Wait for every worker (raises on timeout or when a peer died)."""
        self._transport.barrier()

    def get_num_dead_node(self, node_id: int = 0, timeout: int = 60) -> int:
        try:
            self._transport.check()
        except KVStoreError:
            return 1
        return 0

    def server_info(self) -> list[dict]:
        """Each server's state (keys, completed rounds, counters, failure)."""
        return self._transport.command("info")

    def checkpoint(self) -> int:
        """Collective: every worker calls it; the servers write a checkpoint now (into
        ``PLEXNET_KVSTORE_CHECKPOINT_DIR``). Returns the checkpoint's round."""
        _engine.get().wait_for_all()
        self.barrier()
        rnd = 0
        if self.rank == 0:
            rnd = min(self._transport.command("checkpoint"))
        self.barrier()
        return rnd

    def close(self) -> None:
        """Finish pending operations and leave the job (also done at exit)."""
        if self._closed:
            return
        self._closed = True
        try:
            _engine.get().wait_for_all()
        except Exception:  # noqa: BLE001 - errors were reported at their wait points
            pass
        if self._receiver is not None:
            self._receiver.stop()
        self._transport.close()

    # -- updates -----------------------------------------------------------------------------------
    def set_optimizer(self, optimizer: Any) -> None:
        """Run ``optimizer`` on the servers (sent as plain data: its registered name and
        attributes as JSON; user optimizers must be registered on the servers too)."""
        from plexnet.optimizer import Optimizer
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"set_optimizer expects an mx.optimizer.Optimizer, got {type(optimizer).__name__}")
        cfg = json.dumps(optimizer.get_config())
        self._optimizer = optimizer
        if self.rank == 0:
            self._transport.command("set_optimizer", cfg)
        self._transport.barrier()
        self._server_optimizer = True

    def _send_command_to_servers(self, head: int, body: str) -> Any:
        """Send a command to every server: the profiler's ``profile_process='server'``
        calls (``plexnet.profiler.SERVER_COMMAND``) run on each server's profiler and
        return what each gave (file names for ``dump``)."""
        if head != SERVER_COMMAND:
            raise KVStoreError(f"{self.type}: server command {head} is not one plexnet's servers take "
                               f"(known: {SERVER_COMMAND}, the profiler's); optimizers go through set_optimizer()")
        return self._transport.command("profiler", body)

    def _set_updater(self, updater: Any) -> None:
        raise KVStoreError(f"{self.type}: updates run on the servers; use set_optimizer() with a registered "
                           f"optimizer (updater functions are code and are not sent to servers)")

    set_updater = _set_updater

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        raise KVStoreError(f"{self.type}: optimizer states live on the servers and are saved in their "
                           f"checkpoints (PLEXNET_KVSTORE_CHECKPOINT_DIR, kv.checkpoint())")

    def load_optimizer_states(self, fname: str) -> None:
        raise KVStoreError(f"{self.type}: servers restore optimizer states from their checkpoints when a job is "
                           f"restarted with the same PLEXNET_KVSTORE_CHECKPOINT_DIR")

    # -- init ------------------------------------------------------------------------------------------
    def _init_impl(self, items: Sequence[tuple[Any, Any]]) -> None:
        self._transport.check()
        for k, _ in items:
            if k in self._keys:
                raise KVStoreKeyError(f"init: key {k!r} is already initialised; a key can be initialised once")
        bound = bigarray_bound()
        infos = []
        for k, v in items:
            shape = tuple(v.shape)
            size = int(np.prod(shape, dtype=np.int64)) if shape else 1
            infos.append(_Key(k, shape, v.dtype, plan(k, size, self.num_servers, bound)))
        if self.rank == 0:
            per_server: dict[int, list] = defaultdict(list)
            for info, (_, v) in zip(infos, items):
                flat = np.ascontiguousarray(v.asnumpy()).reshape(-1)
                for p in info.parts:
                    per_server[p.server].append((p.skey, flat[p.lo:p.hi]))
            self._transport.init(dict(per_server))
        for info in infos:
            self._keys[info.key] = info
        self._transport.barrier()

    def _info(self, k: Any, what: str) -> _Key:
        info = self._keys.get(k)
        if info is None:
            raise KVStoreKeyError(f"{what}: key {k!r} has not been initialised; call kv.init({k!r}, value) first")
        return info

    # -- push ------------------------------------------------------------------------------------------
    def _push_impl(self, pairs: Sequence[tuple[Any, list[Any]]], priority: int) -> None:
        self._transport.check()
        work = []
        reads: list[Any] = []
        nbytes = 0
        ahead = self._sync and getattr(self._transport, "pulls_ahead", False)
        for k, vals in pairs:
            info = self._info(k, "push")
            for v in vals:
                if tuple(v.shape) != info.shape:
                    raise ShapeError(f"push: key {k!r} holds shape {info.shape}, the pushed value has shape "
                                     f"{tuple(v.shape)}")
            srcs = self._host_sources(info, vals, priority)
            work.append((info, [s._data for s in srcs]))
            reads += [s._chunk.var for s in srcs]
            nbytes += info.nbytes * len(srcs)
            ahead = ahead and info.follow
            info.calls += 1
        small = _small(self._transport, nbytes, [s for _, vals in pairs for s in vals])
        ahead = ahead and small
        thr = self._compression["threshold"] if self._compression["type"] == "2bit" else None
        transport = self._transport

        def fn(rc: Any) -> None:
            per_server: dict[int, list] = defaultdict(list)
            pulls: dict[int, list] = defaultdict(list)
            for info, arrays in work:
                flats = [_flat(a, info.dtype) for a in arrays]
                for i, p in enumerate(info.parts):
                    n = p.hi - p.lo
                    if thr is not None:
                        res = info.residuals.get(i)
                        if res is None:
                            res = info.residuals[i] = np.zeros(n, info.dtype)
                        piece = _sum_piece(info, flats, p)
                        payload: Any = ("2bit", thr, n, quantize_2bit(np, piece, res, thr))
                    else:
                        slot = transport.send_buffer(p.server, p.skey, n, info.dtype)
                        if slot is not None:  # shared memory: sum straight into the slot
                            _sum_into(flats, p.lo, p.hi, slot)
                            payload = ("slot", slot)
                        else:
                            payload = _sum_piece(info, flats, p)
                    per_server[p.server].append((p.skey, payload))
                info.count += 1
                if ahead:
                    for p in info.parts:
                        pulls[p.server].append((p.skey, info.count))
            for s, items in per_server.items():
                if ahead:
                    transport.push(s, items, then_pull=pulls[s])
                else:
                    transport.push(s, items)

        _engine.get().push_sync(fn, _CPU0, reads, [info.var for info, _ in work],
                                prop=FnProperty.INLINE if small else FnProperty.NORMAL, priority=priority,
                                name="kvstore_dist_push")

    def _host_sources(self, info: _Key, vals: list[Any], priority: int) -> list[Any]:
        """NDArrays on the CPU whose sum is what to send."""
        if all(v.context.device_type in _CPU for v in vals):
            return vals
        from plexnet.ndarray import empty
        if self._device and len(vals) > 1:  # sum on the devices first, copy the sum once
            local = self._local_store()
            if info.key not in local._entries:
                local.init(info.key, vals[0])
            local.push(info.key, vals, priority=priority)
            st = info.stage.get(-1)
            if st is None:
                st = info.stage[-1] = empty(info.shape, _CPU0, info.dtype)
            local.pull(info.key, out=st, priority=priority)
            return [st]
        out = []
        for i, v in enumerate(vals):
            if v.context.device_type in _CPU:
                out.append(v)
                continue
            st = info.stage.get(i)
            if st is None:
                st = info.stage[i] = empty(info.shape, _CPU0, v.dtype)
            v.copyto(st)
            out.append(st)
        return out

    def _ensure_receiver(self) -> _Receiver:
        if self._receiver is None:
            self._receiver = _Receiver(f"plexnet-kv-recv-{self.rank}")
        return self._receiver

    def _local_store(self) -> Any:
        if self._local is None:
            from plexnet.kvstore.local import KVStoreLocal
            self._local = KVStoreLocal("local_allreduce_device")
            self._local._key_kind = self._key_kind
        return self._local

    # -- pull --------------------------------------------------------------------------------------------
    def _pull_impl(self, pairs: Sequence[tuple[Any, list[Any]]], priority: int) -> None:
        self._transport.check()
        work = []
        nbytes = 0
        for k, outs in pairs:
            info = self._info(k, "pull")
            for o in outs:
                if tuple(o.shape) != info.shape:
                    raise ShapeError(f"pull: key {k!r} holds shape {info.shape}, out has shape {tuple(o.shape)}")
            work.append((info, outs))
            nbytes += info.nbytes * len(outs)
        for info, _ in work:  # learn the push, pull, push, pull pattern (see the module docstring)
            info.follow = info.calls == info.pulled_at + 1
            info.pulled_at = info.calls
        small = _small(self._transport, nbytes, [o for _, outs in pairs for o in outs])
        transport = self._transport

        def fn(rc: Any, on_complete: Callable[..., None]) -> None:
            try:
                per_server: dict[int, list] = defaultdict(list)
                dests: dict[int, list] = defaultdict(list)
                where = []  # (server, index in that server's reply, info, part)
                for info, outs in work:
                    flat = _direct_out(info, outs)
                    for p in info.parts:
                        where.append((p.server, len(per_server[p.server]), info, p))
                        per_server[p.server].append((p.skey, info.count))
                        dests[p.server].append(None if flat is None else flat[p.lo:p.hi])
                servers = list(per_server)
                handles = [transport.pull(s, per_server[s], dests[s]) for s in servers]
            except BaseException as e:  # noqa: BLE001
                on_complete(e)
                return

            def complete(results: list, err: BaseException | None) -> None:
                if err is None:
                    try:
                        _scatter(work, where, dict(zip(servers, results)), dests)
                    except BaseException as e:  # noqa: BLE001
                        err = e
                if err is not None:
                    on_complete(err)
                else:
                    on_complete()

            if transport.when_done(handles, complete):
                return

            def finish() -> None:
                try:
                    results = transport.wait(handles)
                except BaseException as e:  # noqa: BLE001
                    complete([], e)
                    return
                complete(results, None)

            self._ensure_receiver().submit(finish)

        reads = [info.var for info, _ in work]
        writes = [o._chunk.var for _, outs in work for o in outs]
        _engine.get().push_async(fn, _CPU0, reads, writes, prop=FnProperty.ASYNC if small else FnProperty.NORMAL,
                                 priority=priority, name="kvstore_dist_pull")


def _small(transport: Any, nbytes: int, arrays: list[Any]) -> bool:
    """Run on the calling thread (when ready): a few bytes of CPU arrays, and no send in
    progress that the caller would wait for (a big push going out on an engine worker)."""
    if nbytes > SMALL_BYTES or any(a.context.device_type not in _CPU for a in arrays):
        return False
    sending = getattr(transport, "sending", None)
    return sending is None or not sending()


def _flat(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A flat view of ``a`` (a contiguous copy in ``dtype`` only when needed)."""
    if a.dtype == dtype and a.flags.c_contiguous:
        return a.reshape(-1)
    return np.ascontiguousarray(a, dtype=dtype).reshape(-1)


def _sum_into(flats: list[np.ndarray], lo: int, hi: int, out: np.ndarray) -> None:
    if len(flats) == 1:
        np.copyto(out, flats[0][lo:hi])
        return
    np.add(flats[0][lo:hi], flats[1][lo:hi], out=out)
    for f in flats[2:]:
        np.add(out, f[lo:hi], out=out)


def _sum_piece(info: _Key, flats: list[np.ndarray], p: Part) -> np.ndarray:
    """Elements ``[p.lo, p.hi)`` of the sum: a view for one value, else summed into the
    key's send buffer (the transport copies it before the buffer is reused)."""
    if len(flats) == 1:
        return flats[0][p.lo:p.hi]
    if info.sendbuf is None:
        info.sendbuf = np.empty(info.size, info.dtype)
    out = info.sendbuf[p.lo:p.hi]
    _sum_into(flats, p.lo, p.hi, out)
    return out


def _direct_out(info: _Key, outs: list[Any]) -> np.ndarray | None:
    """The flat host buffer of a pull's only output, which a transport may receive into."""
    if len(outs) != 1:
        return None
    d = outs[0]._data
    if outs[0].context.device_type not in _CPU or not d.flags.c_contiguous or d.dtype != info.dtype:
        return None
    return d.reshape(-1)


def _scatter(work: list, where: list, results: dict[int, list], dests: dict[int, list]) -> None:
    """Copy the pulled slices into every output (not those received in place: a result
    that is the destination view the pull offered)."""
    by_key: dict[int, list] = defaultdict(list)
    for s, idx, info, p in where:
        arr = results[s][idx]
        by_key[id(info)].append((p, None if arr is dests[s][idx] else arr))
    for info, outs in work:
        pieces = by_key[id(info)]
        for o in outs:
            d = o._data
            if o.context.device_type in _CPU and d.flags.c_contiguous:
                flat = d.reshape(-1)
                for p, arr in pieces:
                    if arr is not None:
                        flat[p.lo:p.hi] = arr
            else:
                full = np.empty(info.size, info.dtype)
                for p, arr in pieces:
                    full[p.lo:p.hi] = arr if arr is not None else _first_flat(outs)[p.lo:p.hi]
                if o.context.device_type in _CPU:
                    d[...] = full.reshape(info.shape)
                else:
                    from plexnet.backends import get_backend
                    get_backend(o.context).from_host(full.reshape(info.shape), d)


def _first_flat(outs: list[Any]) -> np.ndarray:
    """The flat host buffer of the output a slice was received into (``_direct_out``)."""
    return outs[0]._data.reshape(-1)


def _connect(mode: str) -> Any:
    """The transport for this process: join the launcher's job, or (no launcher) start a
    private one-worker job with ``PLEXNET_NUM_SERVERS`` servers (default 1)."""
    from . import ray_transport as rt
    import os
    import ray
    env = config.job_env()
    if env is not None:
        if not ray.is_initialized():
            ray.init(address=env.address or "auto", namespace=env.namespace, log_to_driver=False,
                     configure_logging=True, logging_level="WARNING")
        t = rt.RayTransport.connect(env.job, env.rank, env.num_workers, env.num_servers, env.namespace,
                                    wait_timeout=config.wait_timeout())
        t.launched = True
        return t
    if not ray.is_initialized():
        rt.local_ray_init()
    ns = ray.get_runtime_context().namespace
    job = "solo-" + uuid.uuid4().hex[:8]
    num_servers = int(os.environ.get("PLEXNET_NUM_SERVERS", "1"))
    job_dir = rt.make_job_dir(job)
    servers = rt.start_servers(job, num_servers, 1, mode, namespace=ns, shm_dir=job_dir, **config.server_settings())
    t = rt.RayTransport(job, 0, 1, servers, owned=True, wait_timeout=config.wait_timeout())
    t.job_dir = job_dir
    return t
