"""The same-host data plane: Unix-domain sockets plus shared memory, beside Ray.

Ray on these machines costs about 1 ms per actor call and writes fresh object-store
pages at under 1 GB/s, so pushes and pulls between processes of one host bypass it
(Ray still starts the servers, carries control calls, heartbeats and failure signals):

* Each server listens on ``<job dir>/s<i>.sock`` (a Unix socket: reachable from this
  host only, mode 0700 directory) inside the server actor's event loop and keeps every
  stored slice of ``>= SHM_MIN_BYTES`` in a file of the job directory under
  ``/dev/shm``.
* A push of a big slice is written by the worker into its own shared push slot for that
  slice (the local sum goes there directly), then a small message names it; the server
  merges from the slot and acknowledges, after which the worker may reuse the slot.
* A pull is a small message; the server answers when the value is ready and the worker
  copies straight from the server's shared store into the outputs (``dist_sync``: the
  value can not change before this worker pushes again). Small slices, compressed
  pushes and ``dist_async`` pulls travel inline in the messages.

Messages are a fixed header, a JSON description and raw array bytes: nothing is
unpickled. The launcher removes the job directory at the end.
"""
from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import mmap
import os
import socket
import struct
import threading
import time
from concurrent.futures import Future
from typing import Any, Sequence

import numpy as np

from plexnet.kvstore.base import KVStoreError
from plexnet.optimizer._plain import to_plain

from .server import ServerCore, ServerError
from .transport import PullHandle

__all__ = ["SHM_MIN_BYTES", "slot_name", "store_name", "ShmAllocator", "DataPlaneServer", "DataPlaneClient"]

SHM_MIN_BYTES = int(os.environ.get("PLEXNET_KVSTORE_SHM_MIN_BYTES", str(64 * 1024)))
_HDR = struct.Struct("<4sB3xIIQ")  # magic, op, req id, meta length, data length
_MAGIC = b"PXKV"
OP_PUSH, OP_PULL, OP_REPLY = 1, 2, 3


def _h(skey: tuple) -> str:
    return hashlib.sha1(json.dumps(to_plain(list(skey))).encode()).hexdigest()[:20]


def store_name(directory: str, server: int, skey: tuple) -> str:
    return os.path.join(directory, f"s{server}-{_h(skey)}.store")


def slot_name(directory: str, rank: int, server: int, skey: tuple) -> str:
    return os.path.join(directory, f"w{rank}-s{server}-{_h(skey)}.push")


def _map(path: str, nbytes: int, create: bool, writable: bool) -> mmap.mmap:
    if create:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.ftruncate(fd, nbytes)
            return mmap.mmap(fd, nbytes)
        finally:
            os.close(fd)
    fd = os.open(path, os.O_RDWR if writable else os.O_RDONLY)
    try:
        return mmap.mmap(fd, nbytes, access=mmap.ACCESS_WRITE if writable else mmap.ACCESS_READ)
    finally:
        os.close(fd)


class ShmAllocator:
    """``ServerCore.alloc``: big slices live in shared files, small ones in memory."""

    def __init__(self, directory: str, server: int) -> None:
        self.directory = directory
        self.server = server
        self.maps: dict[tuple, mmap.mmap] = {}

    def __call__(self, skey: tuple, n: int, dtype: Any) -> np.ndarray:
        dt = np.dtype(dtype)
        if n * dt.itemsize < SHM_MIN_BYTES:
            return np.empty(n, dt)
        m = _map(store_name(self.directory, self.server, skey), n * dt.itemsize, True, True)
        self.maps[skey] = m
        return np.frombuffer(m, dt, n)

    def is_shared(self, skey: tuple) -> bool:
        return skey in self.maps


def _pack(op: int, req: int, meta: dict, arrays: Sequence[np.ndarray] = ()) -> list[Any]:
    m = json.dumps(meta).encode()
    data = [memoryview(np.ascontiguousarray(a)).cast("B") for a in arrays]
    return [_HDR.pack(_MAGIC, op, req, len(m), sum(d.nbytes for d in data)), m, *data]


def _inline_specs(arrays: Sequence[np.ndarray]) -> list[list]:
    return [[int(a.size), a.dtype.str] for a in arrays]


def _split(data: Any, specs: Sequence[Sequence]) -> list[np.ndarray]:
    out, off = [], 0
    for n, dt in specs:
        d = np.dtype(dt)
        out.append(np.frombuffer(data, d, int(n), off))
        off += int(n) * d.itemsize
    return out


def _skey(x: Sequence) -> tuple:
    return (x[0], int(x[1]))


# -- server side (inside the server actor's event loop) ---------------------------------------------

class DataPlaneServer:
    """Serves pushes and pulls of one ``ServerCore`` on a Unix socket."""

    def __init__(self, core: ServerCore, directory: str, alloc: ShmAllocator) -> None:
        self.core = core
        self.directory = directory
        self.alloc = alloc
        self.path = os.path.join(directory, f"s{core.server_id}.sock")
        self.slots: dict[tuple, np.ndarray] = {}
        self.server: asyncio.AbstractServer | None = None

    async def start(self) -> str:
        if self.server is None:
            if os.path.exists(self.path):
                os.unlink(self.path)
            loop = asyncio.get_running_loop()
            self.server = await loop.create_unix_server(lambda: _ServerProtocol(self), path=self.path)
            os.chmod(self.path, 0o600)
        return self.path

    def slot(self, rank: int, skey: tuple, n: int, dt: str) -> np.ndarray:
        key = (rank, skey)
        a = self.slots.get(key)
        d = np.dtype(dt)
        if a is None or a.size != n or a.dtype != d:
            m = _map(slot_name(self.directory, rank, self.core.server_id, skey), n * d.itemsize, False, False)
            a = self.slots[key] = np.frombuffer(m, d, n)
        return a


def _err_text(e: BaseException) -> str:
    return str(e) if isinstance(e, (ServerError, KVStoreError)) else f"{type(e).__name__}: {e}"


class _ServerProtocol(asyncio.Protocol):
    """One worker connection: parses messages from a buffer (no coroutine per read),
    answers ready pulls at once and parks the others."""

    def __init__(self, dp: DataPlaneServer) -> None:
        self.dp = dp
        self.core = dp.core
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.core.drop_waits(self)
        self.transport = None

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        off = 0
        n = len(buf)
        try:
            while n - off >= _HDR.size:
                magic, op, req, mlen, dlen = _HDR.unpack_from(buf, off)
                if magic != _MAGIC:
                    raise ServerError("bad message")
                end = off + _HDR.size + mlen + dlen
                if end > n:
                    break
                mstart = off + _HDR.size
                meta = json.loads(bytes(buf[mstart:mstart + mlen]))
                payload = bytes(buf[mstart + mlen:end]) if dlen else b""
                off = end
                if op == OP_PUSH:
                    self._push(req, meta, payload)
                elif op == OP_PULL:
                    self._pull(req, meta)
                else:
                    raise ServerError(f"unknown op {op}")
        except Exception:  # noqa: BLE001 - a broken peer: drop it
            if self.transport is not None:
                self.transport.close()
            return
        finally:
            if off:
                del buf[:off]

    def _send(self, req: int, meta: dict, arrays: Sequence[np.ndarray] = ()) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.writelines(_pack(OP_REPLY, req, meta, arrays))

    def _push(self, req: int, meta: dict, payload: bytes) -> None:
        try:
            rank = int(meta["r"])
            inline = _split(payload, meta.get("d", ()))
            items: list[tuple[tuple, Any]] = []
            for it in meta["it"]:
                skey, kind = _skey(it[0]), it[1]
                if kind == "s":
                    items.append((skey, self.dp.slot(rank, skey, int(it[2]), it[3])))
                elif kind == "i":
                    items.append((skey, inline[int(it[2])]))
                elif kind == "q":
                    items.append((skey, ("2bit", float(it[3]), int(it[4]), inline[int(it[2])])))
                else:
                    raise ServerError(f"unknown push item kind {kind!r}")
            self.core.push_now(rank, items, borrowed=True)
        except Exception as e:  # noqa: BLE001
            self._send(req, {"err": _err_text(e)})
            return
        if meta.get("a"):
            self._send(req, {})

    def _reply_pull(self, req: int, items: list, arrays: list) -> None:
        out, inline = [], []
        shared_ok = self.core.mode == "sync"
        for (skey, _), a in zip(items, arrays):
            if shared_ok and self.dp.alloc.is_shared(skey):
                out.append(["s", int(a.size), a.dtype.str])
            else:
                out.append(["i", len(inline)])
                inline.append(a)
        self._send(req, {"it": out, "d": _inline_specs(inline)}, inline)

    def _pull(self, req: int, meta: dict) -> None:
        try:
            rank = int(meta["r"])
            items = [(_skey(it[0]), int(it[1])) for it in meta["it"]]
            arrays = self.core.pull_ready(rank, items)
        except Exception as e:  # noqa: BLE001
            self._send(req, {"err": _err_text(e)})
            return
        if arrays is not None:
            self._reply_pull(req, items, arrays)
            return

        def answer(res: list | None, err: BaseException | None) -> None:
            if err is not None:
                self._send(req, {"err": _err_text(err)})
            elif res is not None:
                self._reply_pull(req, items, res)

        # answered from the push that completes its rounds (no task per waiting pull)
        self.core.wait_pull(rank, items, answer, owner=self)


# -- worker side ------------------------------------------------------------------------------------

class _Conn:
    """One worker's connection to one server: requests go out under a lock, a reader
    thread matches replies to futures. Pushes without shared slots get no reply unless
    they fail (``on_error``)."""

    def __init__(self, path: str, server: int, on_lost: Any, on_error: Any) -> None:
        self.server = server
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.send_lock = threading.Lock()
        self.plock = threading.Lock()
        self.pending: dict[int, tuple[Future, Any]] = {}
        self.ids = itertools.count(1)
        self.on_lost = on_lost
        self.on_error = on_error
        self.closed = False
        self.rbuf = bytearray(1 << 16)
        self.rview = memoryview(self.rbuf)
        self.r0 = self.r1 = 0
        self.t = threading.Thread(target=self._read, name=f"plexnet-kv-conn-{server}", daemon=True)
        self.t.start()

    def request(self, op: int, meta: dict, arrays: Sequence[np.ndarray] = (), on_reply: Any = None,
                reply: bool = True) -> Future | None:
        fut: Future | None = Future() if reply else None
        parts = _pack(op, 0, meta, arrays)
        with self.send_lock:
            with self.plock:
                if self.closed:
                    raise KVStoreError(f"the connection to kvstore server {self.server} is closed")
                req = next(self.ids)
                if fut is not None:
                    self.pending[req] = (fut, on_reply)
            h = _HDR.unpack(parts[0])
            parts[0] = _HDR.pack(h[0], h[1], req, h[3], h[4])
            try:
                self._send(parts)
            except OSError as e:
                with self.plock:
                    self.pending.pop(req, None)
                raise KVStoreError(f"kvstore server {self.server} is unreachable: its connection failed ({e})") from e
        return fut

    def _send(self, parts: list) -> None:
        views = [memoryview(p).cast("B") for p in parts]
        while views:
            n = self.sock.sendmsg(views)
            while views and n >= views[0].nbytes:
                n -= views[0].nbytes
                views.pop(0)
            if views and n:
                views[0] = views[0][n:]

    def _read_exact(self, n: int) -> Any:
        """``n`` bytes from the socket, through a read buffer (few system calls)."""
        have = self.r1 - self.r0
        if n <= have:
            out = bytes(self.rview[self.r0:self.r0 + n])
            self.r0 += n
            return out
        if n > len(self.rbuf) // 2:  # big payload: straight into its own buffer
            out = bytearray(n)
            ov = memoryview(out)
            ov[:have] = self.rview[self.r0:self.r1]
            self.r0 = self.r1 = 0
            got = have
            while got < n:
                k = self.sock.recv_into(ov[got:], n - got)
                if k == 0:
                    raise ConnectionError("closed")
                got += k
            return out
        if self.r0:  # compact
            self.rview[:have] = self.rview[self.r0:self.r1]
            self.r0, self.r1 = 0, have
        while self.r1 - self.r0 < n:
            k = self.sock.recv_into(self.rview[self.r1:], len(self.rbuf) - self.r1)
            if k == 0:
                raise ConnectionError("closed")
            self.r1 += k
        out = bytes(self.rview[self.r0:self.r0 + n])
        self.r0 += n
        return out

    def _read(self) -> None:
        try:
            while True:
                magic, op, req, mlen, dlen = _HDR.unpack(self._read_exact(_HDR.size))
                meta = json.loads(self._read_exact(mlen)) if mlen else {}
                data = self._read_exact(dlen) if dlen else b""
                with self.plock:
                    fut, on_reply = self.pending.pop(req, (None, None))
                if fut is None:
                    if "err" in meta:
                        self.on_error(self.server, meta["err"])
                    continue
                if "err" in meta:
                    fut.set_exception(KVStoreError(meta["err"]))
                    continue
                try:
                    res = on_reply(meta, data) if on_reply is not None else None
                except BaseException as e:  # noqa: BLE001
                    fut.set_exception(e)
                    continue
                fut.set_result(res)
        except (ConnectionError, OSError, struct.error):
            pass
        with self.plock:
            self.closed = True
            pend, self.pending = self.pending, {}
        err = self.on_lost(self.server)
        for fut, _ in pend.values():
            if not fut.done():
                fut.set_exception(err)

    def close(self) -> None:
        with self.plock:
            self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class _ShmPull(PullHandle):
    __slots__ = ("fut", "server")

    def __init__(self, fut: Future, server: int) -> None:
        self.fut, self.server = fut, server

    def result(self, timeout: float) -> list[Any]:
        return self.fut.result(timeout)


class DataPlaneClient:
    """A worker's side of the data plane (used by ``RayTransport`` when the servers run
    on this host)."""

    def __init__(self, transport: Any, directory: str, sockets: Sequence[str]) -> None:
        self.t = transport
        self.rank = transport.rank
        self.directory = directory
        self.conns = [_Conn(p, i, self._lost, self._error) for i, p in enumerate(sockets)]
        self.slots: dict[tuple, np.ndarray] = {}
        self.slot_busy: dict[tuple, Future] = {}
        self.stores: dict[tuple, np.ndarray] = {}
        self.push_futs: list[tuple[int, Future]] = []
        self.inflight: dict[Future, float] = {}
        self.lock = threading.Lock()

    def _lost(self, server: int) -> KVStoreError:
        err = KVStoreError(f"lost the connection to kvstore server {server} (it died or stopped); the job can not "
                           f"go on. Restart it: servers resume from their last checkpoint when "
                           f"PLEXNET_KVSTORE_CHECKPOINT_DIR is set")
        if not self.t._closed:
            self.t._set_failure(err)
        return err

    def _error(self, server: int, msg: str) -> None:
        self.t._set_failure(KVStoreError(msg))

    def sending(self) -> bool:
        """Whether a connection is in the middle of sending (a send now would wait for it)."""
        return any(c.send_lock.locked() for c in self.conns)

    # -- push ---------------------------------------------------------------------------------------
    def send_buffer(self, server: int, skey: tuple, n: int, dtype: Any) -> np.ndarray | None:
        """A shared slot to write a pushed slice into (None: send it inline). Waits until
        the server has consumed the previous push from this slot."""
        dt = np.dtype(dtype)
        if n * dt.itemsize < SHM_MIN_BYTES:
            return None
        key = (server, skey)
        busy = self.slot_busy.pop(key, None)
        if busy is not None:
            busy.result(self.t.wait_timeout)
        a = self.slots.get(key)
        if a is None or a.size != n or a.dtype != dt:
            m = _map(slot_name(self.directory, self.rank, server, skey), n * dt.itemsize, True, True)
            a = self.slots[key] = np.frombuffer(m, dt, n)
        return a

    def push(self, server: int, items: list[tuple[tuple, Any]]) -> None:
        meta_items, inline = [], []
        slots_used = []
        for skey, payload in items:
            sk = [skey[0], skey[1]]
            if isinstance(payload, tuple):
                kind = payload[0]
                if kind == "slot":
                    a = payload[1]
                    meta_items.append([sk, "s", int(a.size), a.dtype.str])
                    slots_used.append((server, skey))
                elif kind == "2bit":
                    _, thr, n, packed = payload
                    meta_items.append([sk, "q", len(inline), float(thr), int(n)])
                    inline.append(packed)
                else:
                    raise ValueError(kind)
            else:
                meta_items.append([sk, "i", len(inline)])
                inline.append(payload)
        meta: dict[str, Any] = {"r": self.rank, "it": meta_items, "d": _inline_specs(inline)}
        if slots_used:
            meta["a"] = 1  # acknowledge: the slots may be reused after it
        fut = self.conns[server].request(OP_PUSH, meta, inline, reply=bool(slots_used))
        if fut is None:
            return
        for k in slots_used:
            self.slot_busy[k] = fut
        with self.lock:
            self.push_futs.append((server, fut))
            if len(self.push_futs) > 64:
                self._collect_locked()

    def _collect_locked(self) -> None:
        keep = []
        for s, f in self.push_futs:
            if f.done():
                e = f.exception()
                if e is not None:
                    self.t._set_failure(e if isinstance(e, KVStoreError) else KVStoreError(str(e)))
            else:
                keep.append((s, f))
        self.push_futs = keep

    def track(self, fut: Future) -> None:
        """Remember an in-flight pull so that ``expire`` can fail it."""
        now = time.monotonic()
        with self.lock:
            self.inflight[fut] = now
        fut.add_done_callback(self._untrack)

    def _untrack(self, fut: Future) -> None:
        with self.lock:
            self.inflight.pop(fut, None)

    def expire(self, timeout: float, failure: BaseException | None) -> None:
        """Fail pulls older than ``timeout`` (a backstop: servers time out first), or all
        of them once the job failed."""
        now = time.monotonic()
        with self.lock:
            items = list(self.inflight.items())
        for fut, t0 in items:
            if failure is not None:
                err: BaseException = failure
            elif now - t0 > timeout:
                err = KVStoreError(f"worker {self.rank}: no answer from the kvstore servers within {timeout:.0f} s")
            else:
                continue
            try:
                fut.set_exception(err)
            except Exception:  # noqa: BLE001 - finished meanwhile
                pass

    def collect(self, wait: float = 0.0) -> None:
        with self.lock:
            futs = list(self.push_futs)
        for _, f in futs:
            try:
                f.result(wait)
            except Exception:  # noqa: BLE001 - recorded below
                pass
        with self.lock:
            self._collect_locked()

    # -- pull ---------------------------------------------------------------------------------------
    def _store(self, server: int, skey: tuple, n: int, dt: str) -> np.ndarray:
        key = (server, skey)
        a = self.stores.get(key)
        d = np.dtype(dt)
        if a is None or a.size != n or a.dtype != d:
            m = _map(store_name(self.directory, server, skey), n * d.itemsize, False, False)
            a = self.stores[key] = np.frombuffer(m, d, n)
        return a

    def pull(self, server: int, items: list[tuple[tuple, int]]) -> PullHandle:
        skeys = [s for s, _ in items]

        def on_reply(meta: dict, data: Any) -> list[np.ndarray]:
            inline = _split(data, meta.get("d", []))
            out = []
            for skey, it in zip(skeys, meta["it"]):
                if it[0] == "s":
                    out.append(self._store(server, skey, int(it[1]), it[2]))
                else:
                    out.append(inline[int(it[1])])
            return out

        fut = self.conns[server].request(OP_PULL, {"r": self.rank, "it": [[[s[0], s[1]], v] for s, v in items]},
                                         (), on_reply)
        return _ShmPull(fut, server)

    def close(self) -> None:
        for c in self.conns:
            c.close()
