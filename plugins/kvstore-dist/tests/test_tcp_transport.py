"""The TCP data plane without Ray: a ``ServerCore`` served by ``TcpDataPlaneServer`` in an
event-loop thread, ``TcpDataPlaneClient``s as workers, and raw sockets as broken peers."""
import asyncio
import json
import socket
import struct
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plexnet as mx
from plexnet.kvstore.base import KVStoreError
from plexnet_kvstore_dist import tcp_transport as tt
from plexnet_kvstore_dist.ray_transport import choose_plane
from plexnet_kvstore_dist.server import ServerCore

pytestmark = pytest.mark.timeout(60)


class LoopThread:
    """An asyncio loop in a thread running one server shard with the TCP data plane."""

    def __init__(self, num_workers=2, mode="sync"):
        self.loop = asyncio.new_event_loop()
        self.t = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.t.start()
        self.core = self.call(lambda: ServerCore(0, 1, num_workers, mode, timeout=10, heartbeat_timeout=0))
        self.plane = self.call(lambda: tt.TcpDataPlaneServer(self.core, host="127.0.0.1"))
        self.addr = self.run(self.plane.start())

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def call(self, fn):
        async def go():
            return fn()
        return self.run(go())

    def stop(self):
        self.call(self.plane.close)
        self.call(self.core.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.t.join(5)
        self.loop.close()


class FakeTransport:
    """What the data-plane client needs of ``RayTransport``."""

    def __init__(self, rank):
        self.rank, self._closed, self.failure, self.wait_timeout = rank, False, None, 10

    def _set_failure(self, err):
        if self.failure is None:
            self.failure = err


def client(srv, rank, token=None):
    t = FakeTransport(rank)
    return t, tt.TcpDataPlaneClient(t, [srv.addr], [token or srv.plane.token])


@pytest.fixture
def srv(monkeypatch):
    monkeypatch.setenv("PLEXNET_KVSTORE_TCP_STALL_TIMEOUT", "1")
    s = LoopThread()
    yield s
    s.stop()


def _wait_for(pred, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_push_pull_bitwise(srv, dtype):
    """Two workers push, both pull the sum: bit for bit what numpy gives."""
    rng = np.random.default_rng(1)
    shapes = {(7, 0): 1, (8, 0): 1 << 18, (9, 0): 0}  # a scalar-sized, a 1 MiB, an empty slice
    init = {k: rng.standard_normal(n).astype(dtype) for k, n in shapes.items()}
    srv.run(srv.core.init(0, list(init.items())))
    (t0, c0), (t1, c1) = client(srv, 0), client(srv, 1)
    try:
        for step in range(1, 4):
            g0 = {k: rng.standard_normal(n).astype(dtype) for k, n in shapes.items()}
            g1 = {k: rng.standard_normal(n).astype(dtype) for k, n in shapes.items()}
            c0.push(0, list(g0.items()))
            c1.push(0, list(g1.items()))
            for c in (c0, c1):
                got = c.pull(0, [(k, step) for k in shapes]).result(10)
                for k, a in zip(shapes, got):
                    want = g0[k] + g1[k]
                    assert a.dtype == want.dtype and a.shape == want.shape
                    assert a.tobytes() == want.tobytes(), k
        assert t0.failure is None and t1.failure is None
    finally:
        c0.close()
        c1.close()


def test_sgd_over_tcp_equals_local_store(srv):
    """With an optimizer on the server, what comes back equals the local kvstore, bit for bit."""
    sgd = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01)
    srv.run(srv.core.init(0, [((3, 0), np.ones(1000, np.float32))]))
    srv.run(srv.core.set_optimizer(json.dumps(sgd.get_config())))
    local = mx.kv.create("local")
    local.init(3, mx.nd.ones((1000,)))
    local.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01))
    out = mx.nd.zeros((1000,))
    (_, c0), (_, c1) = client(srv, 0), client(srv, 1)
    rng = np.random.default_rng(2)
    try:
        for step in range(1, 4):
            g0, g1 = (rng.standard_normal(1000).astype(np.float32) for _ in range(2))
            c0.push(0, [((3, 0), g0)])
            c1.push(0, [((3, 0), g1)])
            (a,) = c0.pull(0, [((3, 0), step)]).result(10)
            local.push(3, mx.nd.array(g0 + g1))
            local.pull(3, out=out)
            assert a.tobytes() == out.asnumpy().tobytes()
    finally:
        c0.close()
        c1.close()


def test_compressed_push_over_tcp(srv):
    from plexnet.kvstore.compression import quantize_2bit
    srv.run(srv.core.init(0, [((1, 0), np.zeros(10, np.float32))]))
    (_, c0), (_, c1) = client(srv, 0), client(srv, 1)
    try:
        g = np.linspace(-1, 1, 10).astype(np.float32)
        for c in (c0, c1):
            res = np.zeros(10, np.float32)
            c.push(0, [((1, 0), ("2bit", 0.5, 10, quantize_2bit(np, g, res, 0.5)))])
        (a,) = c0.pull(0, [((1, 0), 1)]).result(10)
        np.testing.assert_array_equal(a, 2 * np.where(g >= 0.5, 0.5, np.where(g <= -0.5, -0.5, 0)))
    finally:
        c0.close()
        c1.close()


def _count_requests(c):
    """Count the frames ``c`` sends, by op."""
    conn = c.conns[0]
    orig, counts = conn.request, {}

    def request(op, *a, **k):
        counts[op] = counts.get(op, 0) + 1
        return orig(op, *a, **k)
    conn.request = request
    return counts


def test_push_then_pull_is_one_frame(srv):
    """A push with ``then_pull`` is answered as a pull once its round completes; the
    pull of exactly those items takes that answer without a frame of its own. Pulls of
    other items, and answers no pull takes, change nothing."""
    srv.run(srv.core.init(0, [((5, 0), np.zeros(3, np.float32)), ((6, 0), np.zeros(2, np.float32))]))
    (t0, c0), (t1, c1) = client(srv, 0), client(srv, 1)
    n0 = _count_requests(c0)
    try:
        for step in range(1, 4):
            g0, g1 = np.full(3, step, np.float32), np.full(3, 10 * step, np.float32)
            c0.push(0, [((5, 0), g0)], then_pull=[((5, 0), step)])
            c1.push(0, [((5, 0), g1)], then_pull=[((5, 0), step)])
            for c in (c0, c1):
                (a,) = c.pull(0, [((5, 0), step)]).result(10)
                np.testing.assert_array_equal(a, g0 + g1)
        assert n0 == {tt.OP_PUSH: 3}  # no pull request went out
        # an answer nobody takes (two pushes, then a pull of the later round) is harmless
        for rnd in (1, 2):
            c0.push(0, [((6, 0), np.ones(2, np.float32))], then_pull=[((6, 0), 1)] if rnd == 1 else None)
            c1.push(0, [((6, 0), np.ones(2, np.float32))])
        (a,) = c0.pull(0, [((6, 0), 2)]).result(10)
        np.testing.assert_array_equal(a, 2)
        assert n0[tt.OP_PULL] == 1
        assert t0.failure is None and t1.failure is None
    finally:
        c0.close()
        c1.close()


def test_push_error_fails_the_pull_behind_it(srv):
    (t0, c0) = client(srv, 0)
    try:
        c0.push(0, [(("nope", 0), np.ones(2, np.float32))], then_pull=[(("nope", 0), 1)])
        h = c0.pull(0, [(("nope", 0), 1)])
        with pytest.raises(KVStoreError, match="not initialised"):
            h.result(10)
        assert _wait_for(lambda: t0.failure is not None) and "not initialised" in str(t0.failure)
    finally:
        c0.close()


def test_server_errors_come_back_named(srv):
    srv.run(srv.core.init(0, [((1, 0), np.zeros(4, np.float32))]))
    t0, c0 = client(srv, 0)
    try:
        with pytest.raises(KVStoreError, match="key 5 is not initialised"):
            c0.pull(0, [((5, 0), 1)]).result(10)
        c0.push(0, [((1, 0), np.zeros(4, np.float64))])  # wrong dtype: reported asynchronously
        assert _wait_for(lambda: t0.failure is not None)
        assert "holds float32" in str(t0.failure) and "worker 0" in str(t0.failure)
    finally:
        c0.close()


def test_wrong_token_is_refused(srv):
    with pytest.raises(KVStoreError, match="refused the connection.*token"):
        client(srv, 0, token="0" * 32)
    assert srv.core.failure is None  # strangers do not stop the job


def _raw(srv):
    s = socket.create_connection(srv.addr, timeout=5)
    return s


def _hello(s, srv, rank=1):
    s.sendall(b"".join(tt.pack_frame(tt.OP_HELLO, 0, {"r": rank, "token": srv.plane.token})))
    head = s.recv(tt._HDR.size, socket.MSG_WAITALL)
    mlen = tt._HDR.unpack(head)[5]
    s.recv(mlen, socket.MSG_WAITALL)


def test_worker_dying_mid_frame_stops_the_job(srv):
    """A worker whose connection closes mid-frame is named; waiting pulls fail at once."""
    srv.run(srv.core.init(0, [((1, 0), np.zeros(1 << 16, np.float32))]))
    t0, c0 = client(srv, 0)
    try:
        c0.push(0, [((1, 0), np.ones(1 << 16, np.float32))])
        h = c0.pull(0, [((1, 0), 1)])  # waits for worker 1's push
        s = _raw(srv)
        _hello(s, srv, rank=1)
        frame = b"".join(tt.pack_frame(tt.OP_PUSH, 1, {"it": [[1, 0, 1, "i", "<f4", 1 << 16]]},
                                       [np.ones(1 << 16, np.float32)]))
        s.sendall(frame[:len(frame) // 2])
        s.close()
        t = time.monotonic()
        with pytest.raises(KVStoreError, match=r"worker 1 died.*mid-frame \(\d+ of \d+ bytes"):
            h.result(10)
        assert time.monotonic() - t < 5
    finally:
        c0.close()


def test_worker_vanishing_without_goodbye_stops_the_job(srv):
    srv.run(srv.core.init(0, [((1, 0), np.zeros(4, np.float32))]))
    s = _raw(srv)
    _hello(s, srv, rank=1)
    s.close()
    assert _wait_for(lambda: srv.core.failure is not None)
    assert "worker 1 died" in srv.core.failure and "without its goodbye" in srv.core.failure


def test_clean_goodbye_does_not_fail(srv):
    _, c0 = client(srv, 0)
    c0.close()
    time.sleep(0.2)
    assert srv.core.failure is None


def test_stalled_worker_frame_times_out(srv):
    s = _raw(srv)
    _hello(s, srv, rank=1)
    s.sendall(b"".join(tt.pack_frame(tt.OP_PULL, 1, {"it": [[1, 0, 1]]}))[:10])
    try:
        assert _wait_for(lambda: srv.core.failure is not None, 6)
        assert "worker 1" in srv.core.failure and "stalled" in srv.core.failure
    finally:
        s.close()


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=1, max_size=200))
def test_garbage_from_a_stranger_is_refused_with_a_clear_error(garbage):
    srv = _SHARED["srv"]
    s = _raw(srv)
    try:
        s.sendall(garbage)
        s.shutdown(socket.SHUT_WR)
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    if len(garbage) >= tt._HDR.size:  # a whole header arrived: it must have been judged
        assert b"bad frame from an unidentified peer" in data or b"before hello" in data or b"token" in data, data
    assert srv.core.failure is None


_SHARED = {}


@pytest.fixture(scope="module", autouse=True)
def _shared_server():
    s = LoopThread()
    _SHARED["srv"] = s
    yield
    s.stop()


class FakeServer:
    """A listening socket that plays a broken server to a real client."""

    def __init__(self, reply):
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(1)
        self.addr = self.ls.getsockname()
        self.reply = reply
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        c, _ = self.ls.accept()
        with c:
            head = c.recv(tt._HDR.size, socket.MSG_WAITALL)
            c.recv(tt._HDR.unpack(head)[5], socket.MSG_WAITALL)
            c.sendall(b"".join(tt.pack_frame(tt.OP_REPLY, 0, {"server": 0})))
            head = c.recv(tt._HDR.size, socket.MSG_WAITALL)  # the pull
            req, mlen = tt._HDR.unpack(head)[4:6]
            c.recv(mlen, socket.MSG_WAITALL)
            self.reply(c, req)
            time.sleep(3)

    def close(self):
        self.ls.close()


def _pull_against(reply, stall="1"):
    fs = FakeServer(reply)
    t = FakeTransport(0)
    import os
    old = os.environ.get("PLEXNET_KVSTORE_TCP_STALL_TIMEOUT")
    os.environ["PLEXNET_KVSTORE_TCP_STALL_TIMEOUT"] = stall
    try:
        c = tt.TcpDataPlaneClient(t, [fs.addr], ["x"])
    finally:
        if old is None:
            del os.environ["PLEXNET_KVSTORE_TCP_STALL_TIMEOUT"]
        else:
            os.environ["PLEXNET_KVSTORE_TCP_STALL_TIMEOUT"] = old
    try:
        with pytest.raises(KVStoreError) as ei:
            c.pull(0, [((1, 0), 1)]).result(10)
        return str(ei.value), t
    finally:
        c.close()
        fs.close()


def _reply_frame(req, n=1000, **kw):
    return b"".join(tt.pack_frame(tt.OP_REPLY, req, {"d": [["<f4", n]]}, [np.ones(n, np.float32)], **kw))


def test_server_closing_mid_frame_is_named():
    msg, t = _pull_against(lambda c, req: c.sendall(_reply_frame(req)[:2000]) or c.close())
    assert "kvstore server 0 (127.0.0.1:" in msg and "mid-frame (2000 of 4" in msg, msg
    assert t.failure is not None


def test_server_dying_between_frames_is_named():
    msg, t = _pull_against(lambda c, req: c.close())
    assert "lost the connection to kvstore server 0 (127.0.0.1:" in msg and "died or stopped" in msg, msg
    assert t.failure is not None


def test_transport_mode_is_checked(monkeypatch):
    from plexnet_kvstore_dist.ray_transport import transport_mode
    monkeypatch.setenv("PLEXNET_KVSTORE_TRANSPORT", "TCP")
    assert transport_mode() == "tcp"
    monkeypatch.delenv("PLEXNET_KVSTORE_TRANSPORT")
    assert transport_mode() == "auto"
    monkeypatch.setenv("PLEXNET_KVSTORE_TRANSPORT", "rdma")
    with pytest.raises(KVStoreError, match="PLEXNET_KVSTORE_TRANSPORT='rdma': choose one of auto, shm, tcp, ray"):
        transport_mode()


def test_server_stalling_mid_frame_times_out():
    t0 = time.monotonic()
    msg, _ = _pull_against(lambda c, req: c.sendall(_reply_frame(req)[:100]))
    assert "stalled for 1 s in the middle of a frame" in msg, msg
    assert time.monotonic() - t0 < 8


@pytest.mark.parametrize("corrupt,expect", [
    (lambda f: b"XXXX" + f[4:], "magic"),
    (lambda f: f[:4] + b"\x09" + f[5:], "protocol version 9"),
    (lambda f: f[:tt._HDR.size] + b"}" + f[tt._HDR.size + 1:], "checksum mismatch"),
    (lambda f: f[:16] + struct.pack("<Q", 7) + f[24:], "header/meta checksum"),
])
def test_corrupt_replies_give_clear_errors(corrupt, expect):
    msg, _ = _pull_against(lambda c, req: c.sendall(corrupt(_reply_frame(req))))
    assert "bad frame from kvstore server 0" in msg and expect in msg, msg


def test_reply_lengths_must_match_the_items():
    def lie(c, req):  # describes 1000 floats, carries 10
        good = tt.pack_frame(tt.OP_REPLY, req, {"d": [["<f4", 1000]]}, [np.ones(10, np.float32)])
        c.sendall(b"".join(good))
    msg, _ = _pull_against(lie)
    assert "its arrays hold 4000 bytes but the header says 40" in msg, msg


def test_data_checksum_catches_flipped_bits():
    def flip(c, req):
        f = bytearray(_reply_frame(req, crc=True))
        f[-1] ^= 1
        c.sendall(bytes(f))
    msg, _ = _pull_against(flip)
    assert "data checksum mismatch" in msg, msg


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["<f4", "<f8", "<i8", "|u1", "<f2"]), st.integers(0, 50)), max_size=5),
       st.integers(0, 2 ** 32 - 1))
def test_frames_round_trip(specs, req):
    arrays = [np.arange(n).astype(dt) for dt, n in specs]
    frame = b"".join(tt.pack_frame(tt.OP_REPLY, req, {"d": [[a.dtype.str, a.size] for a in arrays]}, arrays))
    op, flags, r, mlen, dlen, crc = tt.parse_header(frame[:tt._HDR.size], "p")
    assert (op, r) == (tt.OP_REPLY, req)
    meta = tt.parse_meta(frame[:tt._HDR.size], frame[tt._HDR.size:tt._HDR.size + mlen], crc, "p")
    got = tt.item_specs(meta["d"], dlen, "p", "reply")
    assert [(d.str, n) for d, n in got] == [(a.dtype.str, a.size) for a in arrays]
    assert frame[tt._HDR.size + mlen:] == b"".join(a.tobytes() for a in arrays)


def test_item_specs_refuse_objects_and_negative_sizes():
    for bad in ([["|O", 1]], [["<f4", -1]], [["nope", 1]], [[1]], "x"):
        with pytest.raises(tt.FrameError, match="bad array description"):
            tt.item_specs(bad, 0, "p", "reply")


def test_plane_selection():
    here = {"server_id": 0, "socket": "/s", "shm_dir": "/d", "host_nonce": "a", "tcp": ["10.0.0.2", 5], "token": "t"}
    away = dict(here, server_id=1)
    local = {0: True, 1: False}

    def is_local(i):
        return local[i["server_id"]]

    assert choose_plane([here], "auto", is_local) == "shm"
    assert choose_plane([here, away], "auto", is_local) == "tcp"  # one server on another host
    assert choose_plane([here], "tcp", is_local) == "tcp"
    assert choose_plane([here, away], "ray", is_local) == "ray"
    with pytest.raises(KVStoreError, match=r"servers \[1\] are not on this host"):
        choose_plane([here, away], "shm", is_local)
    with pytest.raises(KVStoreError, match="without the TCP data plane"):
        choose_plane([dict(here, tcp=None)], "tcp", is_local)
    assert choose_plane([dict(away, tcp=None)], "auto", is_local) == "ray"
