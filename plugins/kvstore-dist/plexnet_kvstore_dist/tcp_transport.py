"""The multi-host data plane: one direct TCP connection per worker-server pair, beside Ray.

Ray starts the servers, carries control calls, heartbeats and failure signals; pushes
and pulls between hosts go over plain TCP instead of Ray calls (which cost ~1 ms each and
copy through the object store):

* Each server listens on its Ray node's IP address (an ephemeral port) inside the server
  actor's event loop, with non-blocking sockets (``add_reader``/``add_writer``):
  received slices land with ``recv_into`` straight in per-key numpy buffers, and pull
  replies are sent with ``sendmsg`` from the stored arrays without a copy (``dist_sync``:
  a stored value can not change before the puller pushes again; ``dist_async`` replies
  are copies).
* A worker opens one connection per server (``TCP_NODELAY``, keep-alive) and proves it
  belongs to the job with a token it got through Ray (``hello``). Pushes are sent at once
  with ``sendmsg`` from the worker's arrays; a reader thread ``recv_into``'s replies
  straight into fresh numpy arrays. A push may carry the pull behind it (``then_pull``,
  the meta's ``p``: a request id and ``[key, part, version]`` items): the server answers
  it as a pull once the push is applied, from the push that completes the round.
* Frames: a fixed header (magic, version, op, flags, request id, meta length, data
  length, CRC-32 of header and meta), a JSON meta (per item: key, part, round, dtype,
  element count) and the raw bytes. Lengths are checked against the items before any
  buffer is allocated; ``PLEXNET_KVSTORE_TCP_CHECKSUM=1`` adds a CRC-32 of the data
  (off by default: TCP checksums every segment and CRC-32 costs ~1.3 ms per 4 MiB here).
* No hang: sockets poll with a 1 s timeout; a frame that makes no progress for
  ``PLEXNET_KVSTORE_TCP_STALL_TIMEOUT`` s (default 30) fails, as does a peer closing
  mid-frame, with the peer named. A worker's connection closing without its goodbye
  frame stops the job at once (the worker died or its host is unreachable).
"""
from __future__ import annotations

import asyncio
import collections
import itertools
import os
import secrets
import socket
import struct
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Sequence

import numpy as np

from plexnet.kvstore.base import KVStoreError

from .server import ServerCore, ServerError
from .shm_transport import DataPlaneClient, _ShmPull, _err_text, _skey

__all__ = ["FrameError", "pack_frame", "parse_header", "parse_meta", "item_specs", "TcpDataPlaneServer",
           "TcpDataPlaneClient", "stall_timeout"]

from .tcp_frames import (  # noqa: F401  (re-exported: the transport's frame format)
    MAGIC, VERSION, _HDR, OP_HELLO, OP_PUSH, OP_PULL, OP_REPLY, OP_BYE, _OPS,
    FLAG_DATA_CRC, MAX_META, MAX_META_UNAUTH, MAX_DATA, _POLL, _STAGE, _IOV, _KINDS, FrameError,
    stall_timeout, _want_crc, _bytes_of, pack_frame, parse_header, parse_meta, item_specs, _data_crc, _tune)

# -- server side (inside the server actor's event loop) ---------------------------------------------

class TcpDataPlaneServer:
    """Serves pushes and pulls of one ``ServerCore`` to workers on other hosts."""

    def __init__(self, core: ServerCore, host: str | None = None) -> None:
        self.core = core
        self.host = host or os.environ.get("PLEXNET_KVSTORE_TCP_HOST") or _node_ip()
        self.token = secrets.token_hex(16)
        self.sock: socket.socket | None = None
        self.port = 0
        self.conns: set[_ServerConn] = set()
        self.stall = stall_timeout()
        self.crc = _want_crc()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> tuple[str, int]:
        if self.sock is None:
            self.loop = asyncio.get_running_loop()
            s = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((self.host, 0))
            s.listen(128)
            s.setblocking(False)
            self.sock, self.port = s, s.getsockname()[1]
            self.loop.add_reader(s.fileno(), self._accept)
            self.loop.call_later(1.0, self._watch)
        return self.host, self.port

    def _accept(self) -> None:
        assert self.sock is not None
        try:
            conn, addr = self.sock.accept()
        except (BlockingIOError, InterruptedError):
            return
        conn.setblocking(False)
        _tune(conn)
        self.conns.add(_ServerConn(self, conn, f"{addr[0]}:{addr[1]}"))

    def _watch(self) -> None:
        """Fail frames that stopped making progress (a hung or unreachable worker)."""
        now = time.monotonic()
        for c in list(self.conns):
            c.check_stall(now, self.stall)
        if self.sock is not None and self.loop is not None:
            self.loop.call_later(1.0, self._watch)

    def close(self) -> None:
        for c in list(self.conns):
            c.close()
        if self.sock is not None and self.loop is not None:
            self.loop.remove_reader(self.sock.fileno())
            self.sock.close()
            self.sock = None


def _node_ip() -> str:
    try:
        import ray
        return ray.util.get_node_ip_address()
    except Exception:  # noqa: BLE001 - outside Ray
        return "127.0.0.1"


class _ServerConn:
    """One worker connection: a frame parser fed by ``recv_into`` (header, meta, then the
    data straight into per-key buffers) and a queue of buffers waiting for ``sendmsg``."""

    def __init__(self, plane: TcpDataPlaneServer, sock: socket.socket, addr: str) -> None:
        self.plane = plane
        self.core = plane.core
        self.sock = sock
        self.fd = sock.fileno()
        self.addr = addr
        self.loop = plane.loop
        assert self.loop is not None
        self.rank: int | None = None
        self._peer: str | None = None
        self.crc = plane.crc
        self.bye = False
        self.closed = False
        self.bufs: dict[tuple, np.ndarray] = {}
        self.owned = False
        self.sview = memoryview(bytearray(_STAGE))
        self.seq: dict[tuple, int] = {}
        self.wq: collections.deque = collections.deque()
        self._frame_start()
        self.loop.add_reader(self.fd, self._readable)

    @property
    def peer(self) -> str:
        if self._peer is None:  # built once per identity, not per frame
            who = f"worker {self.rank}" if self.rank is not None else "an unidentified peer"
            self._peer = f"{who} ({self.addr})"
        return self._peer

    # -- reading ------------------------------------------------------------------------------------
    def _frame_start(self) -> None:
        self.hbuf = bytearray(_HDR.size)
        self.targets: list[memoryview] = [memoryview(self.hbuf)]
        self.phase = 0          # 0 header, 1 meta, 2 data
        self.ti = 0
        self.off = 0
        self.got = 0
        self.need = _HDR.size
        self.progress = time.monotonic()

    def check_stall(self, now: float, limit: float) -> None:
        if not self.closed and (self.got or self.phase) and now - self.progress > limit:
            self._fatal(FrameError(f"{self.peer} stalled for {now - self.progress:.0f} s in the middle of a frame "
                                   f"({self.got} of {self.need} bytes) to kvstore server {self.core.server_id}"))

    def _readable(self) -> None:
        budget = 16 << 20  # then let the loop serve others
        try:
            while budget > 0 and not self.closed:
                view = self.targets[self.ti][self.off:]
                small = len(view) < _STAGE // 2  # headers, metas, small payloads: one read for several
                try:
                    k = self.sock.recv_into(self.sview if small else view)
                except (BlockingIOError, InterruptedError):
                    return
                if k == 0:
                    self._eof()
                    return
                budget -= k
                self.progress = time.monotonic()
                if small:
                    self._feed(k)
                    if k < _STAGE:  # drained: spare the system call that would say so
                        return
                else:
                    self._advance(k)
        except FrameError as e:
            self._fatal(e)
        except OSError as e:
            self._lost(f"a socket error ({e})")

    def _feed(self, k: int) -> None:
        """Hand ``k`` staged bytes to the frame parser."""
        pos = 0
        while pos < k and not self.closed:
            t = self.targets[self.ti]
            n = min(k - pos, len(t) - self.off)
            t[self.off:self.off + n] = self.sview[pos:pos + n]
            pos += n
            self._advance(n)

    def _advance(self, k: int) -> None:
        """``k`` more bytes are in the current target."""
        self.off += k
        self.got += k
        if self.off < len(self.targets[self.ti]):
            return
        self.ti += 1
        self.off = 0
        if self.ti == len(self.targets):
            self._part_done()

    def _part_done(self) -> None:
        if self.phase == 0:
            op, flags, req, mlen, dlen, crc = parse_header(
                self.hbuf, self.peer, MAX_META if self.rank is not None else MAX_META_UNAUTH)
            self.hdr = (op, flags, req, mlen, dlen, crc)
            self.need = _HDR.size + mlen + dlen
            self.mbuf = bytearray(mlen)
            self.phase, self.ti, self.off = 1, 0, 0
            self.targets = [memoryview(self.mbuf)]
            if mlen:
                return
        if self.phase == 1:
            op, flags, req, mlen, dlen, crc = self.hdr
            meta = parse_meta(self.hbuf, self.mbuf, crc, self.peer)
            self.meta = meta
            if self.rank is None and op != OP_HELLO:
                raise FrameError(f"bad frame from {self.peer}: {_OPS[op]} before hello")
            self.arrays = self._data_targets(op, meta, dlen)
            self.phase, self.ti, self.off = 2, 0, 0
            self.targets = [memoryview(a).cast("B") for a in self.arrays if a.nbytes]
            if self.targets:
                return
        op, flags, req = self.hdr[:3]
        meta, arrays = self.meta, self.arrays
        self._frame_start()
        if flags & FLAG_DATA_CRC and _data_crc(arrays) != meta.get("crc"):
            raise FrameError(f"bad {_OPS[op]} frame from {self.peer}: data checksum mismatch")
        self._dispatch(op, req, meta, arrays)

    def _data_targets(self, op: int, meta: dict, dlen: int) -> list[np.ndarray]:
        if op == OP_PUSH:
            try:
                specs = [(it[4], it[5]) for it in meta["it"]]
            except (KeyError, TypeError, IndexError) as e:
                raise FrameError(f"bad push frame from {self.peer}: bad items ({e!r})") from None
            specs_ok = item_specs(specs, dlen, self.peer, "push")
            store = self.core.store
            try:
                skeys = [_skey(it[:2]) for it in meta["it"]]
            except (TypeError, ValueError, IndexError) as e:
                raise FrameError(f"bad push frame from {self.peer}: bad key ({e!r})") from None
            # usually each value lands in a buffer the server keeps (no copy); anything odd
            # goes to scratch buffers and the server core copies and judges it
            self.owned = all(it[3] == "i" and sk in store and store[sk].dtype == d and store[sk].size == n
                             for it, sk, (d, n) in zip(meta["it"], skeys, specs_ok))
            if self.owned:
                return [self.core.take_buffer(sk) for sk in skeys]
            out = []
            for sk, (d, n) in zip(skeys, specs_ok):
                a = self.bufs.get((sk, d.str, n))
                if a is None:
                    a = self.bufs[(sk, d.str, n)] = np.empty(n, d)
                out.append(a)
            return out
        if dlen:
            raise FrameError(f"bad {_OPS[op]} frame from {self.peer}: carries {dlen} data bytes, expected none")
        return []

    def _dispatch(self, op: int, req: int, meta: dict, arrays: list[np.ndarray]) -> None:
        if op == OP_HELLO:
            import hmac
            tok = meta.get("token")
            if not isinstance(tok, str) or not hmac.compare_digest(tok, self.plane.token):
                raise FrameError(f"{self.peer} did not show the job's token; connection refused")
            r = meta.get("r")
            if not isinstance(r, int) or not 0 <= r < self.core.num_workers:
                raise FrameError(f"bad hello from {self.peer}: rank {r!r}")
            self.rank = r
            self._peer = None
            self._send(pack_frame(OP_REPLY, req, {"server": self.core.server_id}))
        elif op == OP_PUSH:
            self._push(req, meta, arrays)
        elif op == OP_PULL:
            self._pull(req, meta)
        elif op == OP_BYE:
            self.bye = True
            self._send(pack_frame(OP_REPLY, req, {}))
        else:
            raise FrameError(f"bad frame from {self.peer}: a worker does not send {_OPS[op]}")

    def _push(self, req: int, meta: dict, arrays: list[np.ndarray]) -> None:
        then = meta.get("p")  # [request id, items]: answer as a pull once the push is applied
        try:
            rank = self.rank
            items: list[tuple[tuple, Any]] = []
            for it, a in zip(meta["it"], arrays):
                skey, rnd, kind = _skey(it[:2]), int(it[2]), it[3]
                want = self.seq.get(skey, 0) + 1
                self.seq[skey] = rnd
                if rnd != want:
                    raise ServerError(f"push of key {skey[0]!r} from {self.peer}: round {rnd} arrived, expected "
                                      f"{want} (frames lost or reordered)")
                st = self.core.store.get(skey)
                if kind == "i":
                    if st is not None and a.dtype != st.dtype:
                        raise ServerError(f"push: key {skey[0]!r} holds {st.dtype} on server {self.core.server_id}, "
                                          f"{self.peer} sent {a.dtype}")
                    items.append((skey, a))
                elif kind == "q":
                    items.append((skey, ("2bit", float(it[6]), int(it[7]), a)))
                else:
                    raise ServerError(f"unknown push item kind {kind!r}")
            owned = self.owned
            self.core.push_now(rank, items, borrowed=not owned, owned=owned)  # type: ignore[arg-type]
        except Exception as e:  # noqa: BLE001
            self._send(pack_frame(OP_REPLY, req, {"err": _err_text(e)}))
            if then is not None:  # the pull behind it fails too (the worker fails the job on the first)
                try:
                    self._send(pack_frame(OP_REPLY, int(then[0]), {"err": _err_text(e)}))
                except (TypeError, ValueError, IndexError):
                    pass
            return
        if then is not None:
            try:
                preq, pits = int(then[0]), then[1]
            except (TypeError, ValueError, IndexError, KeyError) as e:
                raise FrameError(f"bad push frame from {self.peer}: bad pull request ({e!r})") from None
            self._pull(preq, {"it": pits})

    def _reply_pull(self, req: int, arrays: Sequence[np.ndarray]) -> None:
        arrays = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
        self._send(pack_frame(OP_REPLY, req, {"d": [[a.dtype.str, int(a.size)] for a in arrays]}, arrays,
                              crc=self.crc))

    def _pull(self, req: int, meta: dict) -> None:
        try:
            rank = self.rank
            items = [(_skey(it[:2]), int(it[2])) for it in meta["it"]]
            arrays = self.core.pull_ready(rank, items)  # type: ignore[arg-type]
            if arrays is None:  # answered from the push that completes its rounds
                self.core.wait_pull(rank, items, lambda res, err: self._answer(req, res, err),  # type: ignore[arg-type]
                                    owner=self)
                return
        except Exception as e:  # noqa: BLE001
            self._send(pack_frame(OP_REPLY, req, {"err": _err_text(e)}))
            return
        self._reply_pull(req, arrays)

    def _answer(self, req: int, arrays: list[np.ndarray] | None, err: BaseException | None) -> None:
        if self.closed:
            return
        if err is not None:
            self._send(pack_frame(OP_REPLY, req, {"err": _err_text(err)}))
        elif arrays is not None:
            self._reply_pull(req, arrays)

    # -- writing ------------------------------------------------------------------------------------
    def _send(self, parts: list[Any]) -> None:
        if self.closed:
            return
        if self.wq:  # behind queued bytes: the writer callback sends them in order
            self.wq.extend(memoryview(p).cast("B") for p in parts)
            return
        n = 0
        if len(parts) <= _IOV:  # the usual case: all of it in one system call, no queue
            try:
                n = self.sock.sendmsg(parts)
            except (BlockingIOError, InterruptedError):
                n = 0
            except OSError as e:
                self._lost(f"a socket error while sending ({e})")
                return
        views = collections.deque(memoryview(p).cast("B") for p in parts)
        while views and n >= len(views[0]):
            n -= len(views.popleft())
        if not views:
            return
        if n:
            views[0] = views[0][n:]
        self.wq = views
        self._writable()

    def _writable(self) -> None:
        try:
            while self.wq:
                views = list(itertools.islice(self.wq, _IOV))
                try:
                    n = self.sock.sendmsg(views)
                except (BlockingIOError, InterruptedError):
                    break
                while self.wq and n >= len(self.wq[0]):
                    n -= len(self.wq.popleft())
                if n:
                    self.wq[0] = self.wq[0][n:]
        except OSError as e:
            self._lost(f"a socket error while sending ({e})")
            return
        if self.wq:
            self.loop.add_writer(self.fd, self._writable)  # type: ignore[union-attr]
        else:
            self.loop.remove_writer(self.fd)  # type: ignore[union-attr]

    # -- ends ----------------------------------------------------------------------------------------
    def _eof(self) -> None:
        if self.got:
            self._lost(f"closed the connection mid-frame ({self.got} of {self.need} bytes received)")
        elif not self.bye:
            self._lost("closed the connection without its goodbye")
        else:
            self.close()

    def _lost(self, what: str) -> None:
        if self.rank is not None and not self.bye:
            self.core.fail(f"worker {self.rank} died or its host became unreachable: its data connection to "
                           f"kvstore server {self.core.server_id} (from {self.addr}) {what}; the job is stopped")
        self.close()

    def _fatal(self, e: FrameError) -> None:
        """A broken frame: an identified worker's stream can not be trusted any more (its
        pushes are lost), so the job fails; strangers are just dropped."""
        if self.rank is not None and not self.bye:
            self.core.fail(f"kvstore server {self.core.server_id}: {e}; the job is stopped")
        else:
            try:
                self.sock.send(b"".join(pack_frame(OP_REPLY, 0, {"err": str(e)})))
            except OSError:
                pass
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.core.drop_waits(self)
        try:
            self.loop.remove_reader(self.fd)  # type: ignore[union-attr]
            self.loop.remove_writer(self.fd)  # type: ignore[union-attr]
        except (ValueError, OSError):
            pass
        self.sock.close()
        self.plane.conns.discard(self)


# -- worker side ------------------------------------------------------------------------------------

class _TcpConn:
    """One worker's connection to one server: requests are sent under a lock with
    ``sendmsg``; a reader thread receives replies straight into numpy arrays and
    completes their futures. Pushes get no reply unless they fail (``on_error``)."""

    def __init__(self, addr: tuple[str, int], server: int, rank: int, token: str, on_lost: Callable,
                 on_error: Callable, connect_timeout: float = 30.0) -> None:
        self.server = server
        self.peer = f"kvstore server {server} ({addr[0]}:{addr[1]})"
        self.stall = stall_timeout()
        try:
            self.sock = socket.create_connection(addr, timeout=connect_timeout)
        except OSError as e:
            raise KVStoreError(f"worker {rank}: can not connect to {self.peer}: {e}") from e
        _tune(self.sock)
        # blocking, with the bound in the kernel (SO_RCVTIMEO/SO_SNDTIMEO): one system call
        # per receive or send, where a Python-level timeout would poll() before each
        self.sock.settimeout(None)
        tv = struct.pack("ll", int(_POLL), int((_POLL % 1) * 1e6))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
        self.stage = bytearray(_STAGE)
        self.sview = memoryview(self.stage)
        self.s0 = self.s1 = 0
        self.pool: dict[tuple[str, int], list[np.ndarray]] = {}
        self.pool_lock = threading.Lock()
        self.send_lock = threading.Lock()
        self.plock = threading.Lock()
        self.pending: dict[int, tuple[Future, int, Any]] = {}
        self.ids = itertools.count(1)
        self.on_lost, self.on_error = on_lost, on_error
        self.closed = False
        self.crc = _want_crc()
        try:
            self._send(pack_frame(OP_HELLO, 0, {"r": rank, "token": token}))
            op, _, _, meta, _ = self._read_frame(expect_data=lambda m, n, r: [], deadline=connect_timeout)
        except KVStoreError:
            self.sock.close()
            raise
        if "err" in meta:
            self.sock.close()
            raise KVStoreError(f"worker {rank}: {self.peer} refused the connection: {meta['err']}")
        self.t = threading.Thread(target=self._read, name=f"plexnet-kv-tcp-{server}", daemon=True)
        self.t.start()

    # -- sending ------------------------------------------------------------------------------------
    def request(self, op: int, meta: dict, arrays: Sequence[np.ndarray] = (), nitems: int = 0,
                reply: bool = True, dests: Sequence[Any] | None = None,
                then_pull: list | None = None) -> Future | None:
        """Send a frame; returns the future of its reply (None with ``reply=False``).
        ``then_pull`` (a push's ``[key, part, version]`` items): the server also answers
        them as a pull once the push is applied, and the future of that answer is
        returned instead (one frame, one system call and one server wake-up for both)."""
        fut: Future | None = Future() if reply or then_pull is not None else None
        with self.send_lock:
            with self.plock:
                if self.closed:
                    raise KVStoreError(f"the connection to {self.peer} is closed")
                req = next(self.ids) & 0xFFFFFFFF
                key = req
                if then_pull is not None:
                    key = next(self.ids) & 0xFFFFFFFF
                    meta = dict(meta, p=[key, then_pull])
                    nitems = len(then_pull)
                if fut is not None:
                    self.pending[key] = (fut, nitems, dests)
            try:
                self._send(pack_frame(op, req, meta, arrays, crc=self.crc and op == OP_PUSH))
            except (OSError, KVStoreError) as e:
                with self.plock:
                    self.pending.pop(key, None)
                err = e if isinstance(e, KVStoreError) else \
                    KVStoreError(f"{self.peer} is unreachable: its connection failed ({e})")
                raise err from e
        return fut

    def _send(self, parts: list[Any]) -> None:
        n = 0
        if len(parts) <= _IOV:  # the usual case: all of it in one system call
            try:
                n = self.sock.sendmsg(parts)
            except (BlockingIOError, TimeoutError, socket.timeout):
                n = 0
            if n == sum(len(p) for p in parts):
                return
        views = collections.deque(memoryview(p).cast("B") for p in parts)
        while views and n >= len(views[0]):
            n -= len(views.popleft())
        if n:
            views[0] = views[0][n:]
        last = time.monotonic()
        while views:
            try:
                n = self.sock.sendmsg(list(itertools.islice(views, _IOV)))
            except (BlockingIOError, TimeoutError, socket.timeout):
                if time.monotonic() - last > self.stall:
                    raise KVStoreError(f"sending to {self.peer} made no progress for {self.stall:.0f} s "
                                       f"(PLEXNET_KVSTORE_TCP_STALL_TIMEOUT)") from None
                continue
            last = time.monotonic()
            while views and n >= len(views[0]):
                n -= len(views.popleft())
            if n:
                views[0] = views[0][n:]

    # -- receiving ----------------------------------------------------------------------------------
    def _recv_into(self, view: memoryview, at_boundary: bool, deadline: float | None, got: int, need: int) -> None:
        """Fill ``view``: small reads go through a staging buffer (a header, its meta and a
        small payload usually arrive in one system call), big ones straight into ``view``."""
        off = self._unstage(view, 0)
        last = time.monotonic()
        while off < len(view):
            small = len(view) - off < _STAGE // 2
            try:
                k = self.sock.recv_into(self.sview if small else view[off:])
            except (BlockingIOError, TimeoutError, socket.timeout):
                if self.closed:
                    raise ConnectionAbortedError("closed") from None
                now = time.monotonic()
                if deadline is not None and now - last > deadline:
                    raise FrameError(f"no answer from {self.peer} within {deadline:.0f} s") from None
                if not (at_boundary and off == 0) and now - last > self.stall:
                    raise FrameError(f"{self.peer} stalled for {self.stall:.0f} s in the middle of a frame "
                                     f"({got + off} of {need} bytes)") from None
                continue
            if k == 0:
                if at_boundary and off == 0:
                    raise ConnectionResetError("closed between frames")
                raise FrameError(f"{self.peer} closed the connection mid-frame ({got + off} of {need} bytes "
                                 f"received)")
            last = time.monotonic()
            if small:
                self.s0, self.s1 = 0, k
                off = self._unstage(view, off)
            else:
                off += k

    def _unstage(self, view: memoryview, off: int) -> int:
        """Copy staged bytes into ``view[off:]``; returns the new offset."""
        k = min(self.s1 - self.s0, len(view) - off)
        if k > 0:
            view[off:off + k] = self.sview[self.s0:self.s0 + k]
            self.s0 += k
            off += k
        return off

    def _read_frame(self, expect_data: Callable[[dict, int, int], list[np.ndarray]],
                    deadline: float | None = None) -> tuple[int, int, int, dict, list[np.ndarray]]:
        head = bytearray(_HDR.size)
        self._recv_into(memoryview(head), True, deadline, 0, _HDR.size)
        op, flags, req, mlen, dlen, crc = parse_header(head, self.peer)
        need = _HDR.size + mlen + dlen
        meta_b = bytearray(mlen)
        self._recv_into(memoryview(meta_b), False, deadline, _HDR.size, need)
        meta = parse_meta(head, meta_b, crc, self.peer)
        if op != OP_REPLY:
            raise FrameError(f"bad frame from {self.peer}: a server does not send {_OPS[op]}")
        arrays = expect_data(meta, dlen, req) if dlen or meta.get("d") else []
        got = _HDR.size + mlen
        for a in arrays:
            v = memoryview(a).cast("B")
            if len(v):
                self._recv_into(v, False, deadline, got, need)
            got += len(v)
        if flags & FLAG_DATA_CRC and _data_crc(arrays) != meta.get("crc"):
            raise FrameError(f"bad reply from {self.peer}: data checksum mismatch")
        return op, flags, req, meta, arrays

    def _read(self) -> None:
        err: BaseException | None = None
        try:
            while True:
                def expect(meta: dict, dlen: int, req: int) -> list[np.ndarray]:
                    if "err" in meta:
                        if dlen:
                            raise FrameError(f"bad reply from {self.peer}: an error with {dlen} data bytes")
                        return []
                    specs = item_specs(meta.get("d", ()), dlen, self.peer, "reply")
                    with self.plock:
                        dests = self.pending.get(req, (None, 0, None))[2]
                    if dests is None or len(dests) != len(specs):
                        dests = [None] * len(specs)
                    # straight into the caller's output where it offered one that fits
                    return [o if o is not None and o.dtype == d and o.size == n else self._take(d, n)
                            for (d, n), o in zip(specs, dests)]

                op, flags, req, meta, arrays = self._read_frame(expect)
                with self.plock:
                    fut, nitems, _ = self.pending.pop(req, (None, 0, None))
                if fut is None:
                    if "err" in meta:
                        self.on_error(self.server, meta["err"])
                    elif arrays:
                        raise FrameError(f"bad reply from {self.peer}: request {req} is not pending")
                    continue
                if "err" in meta:
                    fut.set_exception(KVStoreError(str(meta["err"])))
                elif len(arrays) != nitems:
                    raise FrameError(f"bad reply from {self.peer}: {len(arrays)} arrays for {nitems} pulled items")
                else:
                    fut.set_result(arrays)
        except FrameError as e:
            err = e
        except (ConnectionError, OSError, struct.error) as e:
            err = None if self.closed else e
        with self.plock:
            was_closed = self.closed
            self.closed = True
            pend, self.pending = self.pending, {}
        try:
            self.sock.close()
        except OSError:
            pass
        exc = self.on_lost(self.server, err if not was_closed else None, self.peer)
        for fut, _, _ in pend.values():
            if not fut.done():
                fut.set_exception(exc)

    def _take(self, d: np.dtype, n: int) -> np.ndarray:
        """A receive buffer: a recycled one (no fresh pages to fault in) or a new one."""
        with self.pool_lock:
            free = self.pool.get((d.str, n))
            if free:
                return free.pop()
        return np.empty(n, d)

    def recycle(self, arrays: Sequence[np.ndarray]) -> None:
        """Give back received arrays once their contents were copied out."""
        with self.pool_lock:
            for a in arrays:
                if a.base is not None:  # a caller's output, not ours
                    continue
                free = self.pool.setdefault((a.dtype.str, a.size), [])
                if len(free) < 4:
                    free.append(a)

    def bye(self, timeout: float) -> None:
        """Say goodbye (the server then knows the close is not a crash) and wait for its
        answer, so that every push before it has been applied."""
        try:
            fut = self.request(OP_BYE, {})
            if fut is not None:
                fut.result(timeout)
        except Exception:  # noqa: BLE001 - best effort at shutdown
            pass

    def close(self) -> None:
        with self.plock:
            self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class TcpDataPlaneClient(DataPlaneClient):
    """A worker's side of the TCP data plane (used by ``RayTransport`` when a server is
    on another host, or with ``PLEXNET_KVSTORE_TRANSPORT=tcp``). Shares the push-error
    collection and pull expiry of the shared-memory client."""

    kind = "tcp"

    def __init__(self, transport: Any, addrs: Sequence[tuple[str, int]], tokens: Sequence[str]) -> None:
        self.t = transport
        self.rank = transport.rank
        self.conns: list[Any] = [_TcpConn((str(a[0]), int(a[1])), i, self.rank, tok, self._lost, self._error)
                                 for i, (a, tok) in enumerate(zip(addrs, tokens))]
        self.rounds: dict[tuple, int] = {}
        #: (server, skeys) -> (versions, future): pull answers a push asked for (push's then_pull)
        self.ahead: dict[tuple, tuple[tuple, Future]] = {}
        self.push_futs: list[tuple[int, Future]] = []
        self.inflight: dict[Future, float] = {}
        self.lock = threading.Lock()

    def _lost(self, server: int, why: BaseException | None = None,  # type: ignore[override]
              peer: str = "") -> KVStoreError:
        if isinstance(why, FrameError):
            err = KVStoreError(f"worker {self.rank}: {why}; the job can not go on")
        else:
            detail = f" ({why})" if why is not None else ""
            who = peer or f"kvstore server {server}"
            err = KVStoreError(f"lost the connection to {who}{detail} (it died or stopped); the job can not go on. "
                               f"Restart it: servers resume from their last checkpoint "
                               f"when PLEXNET_KVSTORE_CHECKPOINT_DIR is set")
        if not self.t._closed:
            self.t._set_failure(err)
        return err

    def send_buffer(self, server: int, skey: tuple, n: int, dtype: Any) -> None:
        return None

    def recycle(self, server: int, arrays: Sequence[np.ndarray]) -> None:
        """Pulled arrays of ``server`` whose values were copied out: reused for later replies."""
        self.conns[server].recycle(arrays)

    def push(self, server: int, items: list[tuple[tuple, Any]],
             then_pull: list[tuple[tuple, int]] | None = None) -> None:
        """Send a push. ``then_pull`` (``(skey, version)`` items): ask the server to answer
        them as a pull right after applying the push; a ``pull`` of exactly these items
        that follows takes that answer instead of sending its own request."""
        meta_items, arrays = [], []
        for skey, payload in items:
            rk = (server, skey)
            rnd = self.rounds[rk] = self.rounds.get(rk, 0) + 1
            if isinstance(payload, tuple):
                if payload[0] != "2bit":
                    raise ValueError(f"the tcp transport does not send {payload[0]!r} payloads")
                _, thr, n, packed = payload
                packed = np.ascontiguousarray(packed)
                meta_items.append([skey[0], skey[1], rnd, "q", packed.dtype.str, int(packed.size), float(thr), int(n)])
                arrays.append(packed)
            else:
                a = np.ascontiguousarray(payload).reshape(-1)
                meta_items.append([skey[0], skey[1], rnd, "i", a.dtype.str, int(a.size)])
                arrays.append(a)
        if then_pull is None:
            self.conns[server].request(OP_PUSH, {"it": meta_items}, arrays, reply=False)
            return
        key = (server, tuple(s for s, _ in then_pull))
        fut = self.conns[server].request(OP_PUSH, {"it": meta_items}, arrays, reply=False,
                                         then_pull=[[s[0], s[1], v] for s, v in then_pull])
        # one answer kept per (server, keys): a newer push of the same keys replaces it
        self.ahead[key] = (tuple(v for _, v in then_pull), fut)

    def pull(self, server: int, items: list[tuple[tuple, int]], dests: Sequence[Any] | None = None) -> _ShmPull:
        """``dests``: per item, a flat array to receive the value into (or None)."""
        if self.ahead:
            got = self.ahead.pop((server, tuple(s for s, _ in items)), None)
            if got is not None and got[0] == tuple(v for _, v in items):
                return _ShmPull(got[1], server)  # the push asked for it already
        fut = self.conns[server].request(OP_PULL, {"it": [[s[0], s[1], v] for s, v in items]}, nitems=len(items),
                                         dests=dests)
        return _ShmPull(fut, server)

    def close(self) -> None:
        for c in self.conns:
            c.bye(5.0)
        for c in self.conns:
            c.close()
