"""Issue 13, points 5 and 10: server checkpoints are atomic, honour the umask, and are
written however the keys are pushed (no Ray needed: the server core runs in asyncio)."""
import asyncio
import json
import os
import stat

import numpy as np
import pytest

import plexnet as mx
from plexnet.fileio import TMP_SUFFIX
from plexnet_kvstore_dist.server import ServerCore, choose_restore_round

pytestmark = pytest.mark.timeout(60)


def sgd_json(lr=0.1):
    return json.dumps(mx.optimizer.SGD(learning_rate=lr).get_config())


def _server(d, **kw):
    kw.setdefault("checkpoint_every", 2)
    return ServerCore(0, 1, 1, "sync", checkpoint_dir=d, heartbeat_timeout=0, **kw)


def test_server_checkpoint_atomic_and_umask(tmp_path, monkeypatch):
    d = str(tmp_path)
    old_mask = os.umask(0o022)
    try:
        async def go():
            s = _server(d)
            await s.init(0, [((1, 0), np.zeros(3, np.float32))])
            for _ in range(2):
                await s.push(0, [((1, 0), np.ones(3, np.float32))])
            path = os.path.join(d, "server-0-of-1.r00000002.npz")
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o644  # was 0600 (mkstemp-like)
            before = open(path, "rb").read()

            def boom(fd):
                raise OSError(28, "No space left on device (injected)")

            monkeypatch.setattr(os, "fsync", boom)
            with pytest.raises(OSError, match="injected"):
                s.save_checkpoint(2)
            monkeypatch.undo()
            assert open(path, "rb").read() == before
            assert not [n for n in os.listdir(d) if n.endswith(TMP_SUFFIX) or n.endswith(".tmp")]
        asyncio.run(go())
    finally:
        os.umask(old_mask)


def test_checkpoint_with_frozen_keys_and_unequal_pushes(tmp_path):
    """A key initialised but never pushed (fixed_param_names) and a key pushed half as
    often must not stop checkpoints; the relaunch restores every key."""
    d = str(tmp_path)

    async def go():
        s = _server(d)
        await s.init(0, [(("frozen", 0), np.full(2, 7, np.float32)), (("w", 0), np.zeros(3, np.float32)),
                         (("b", 0), np.zeros(1, np.float32))])
        await s.set_optimizer(sgd_json())
        for step in range(5):
            items = [(("w", 0), np.ones(3, np.float32))]
            if step % 2 == 0:
                items.append((("b", 0), np.ones(1, np.float32)))
            await s.push(0, items)
        return {k: v.copy() for k, v in s.store.items()}
    store = asyncio.run(go())
    names = sorted(os.listdir(d))
    # step 2: w at 2, b at 1 (b may still come: no checkpoint); step 4: w 4, b 2: unequal
    assert names == ["server-0-of-1.r00000004.npz"], names
    assert choose_restore_round(d, 1) == 4

    async def resume():
        r = ServerCore(0, 1, 1, "sync", checkpoint_dir=d, restore_round=4, heartbeat_timeout=0)
        assert r.restored_round == 4
        np.testing.assert_allclose(r.store[("frozen", 0)], 7)
        np.testing.assert_allclose(r.store[("w", 0)], -0.4, rtol=1e-6)  # 4 rounds of lr 0.1
        np.testing.assert_allclose(r.store[("b", 0)], -0.2, rtol=1e-6)  # 2 rounds at step 4
        assert r.rounds[("b", 0)] == 2 and r.rounds[("frozen", 0)] == 0
    asyncio.run(resume())
    np.testing.assert_allclose(store[("w", 0)], -0.5, rtol=1e-6)


def test_frozen_only_server_does_not_block_restore(tmp_path):
    """With 2 servers, one holding only frozen keys: a common restore round exists."""
    d = str(tmp_path)

    async def go():
        s0 = ServerCore(0, 2, 1, "sync", checkpoint_dir=d, checkpoint_every=2, heartbeat_timeout=0)
        s1 = ServerCore(1, 2, 1, "sync", checkpoint_dir=d, checkpoint_every=2, heartbeat_timeout=0)
        await s0.init(0, [(("w", 0), np.zeros(3, np.float32))])
        await s1.init(0, [(("frozen", 0), np.full(2, 7, np.float32))])
        await s1.heartbeat(0)  # starts the monitor, which checkpoints s1's never-pushed key
        for _ in range(3):
            await s0.push(0, [(("w", 0), np.ones(3, np.float32))])
        for _ in range(100):
            if os.path.exists(os.path.join(d, "server-1-of-2.frozen.npz")):
                break
            await asyncio.sleep(0.05)
        s0._monitor_task and s0._monitor_task.cancel()
        s1._monitor_task.cancel()
    asyncio.run(go())
    assert choose_restore_round(d, 2) == 2

    async def resume():
        r1 = ServerCore(1, 2, 1, "sync", checkpoint_dir=d, restore_round=2, heartbeat_timeout=0)
        np.testing.assert_allclose(r1.store[("frozen", 0)], 7)
    asyncio.run(resume())


def test_no_usable_checkpoint_is_explained(tmp_path):
    from plexnet_kvstore_dist.server import describe_restore
    d = str(tmp_path)
    rnd, msg = describe_restore(d, 2)
    assert rnd is None and "no checkpoint" in msg and d in msg
    (tmp_path / "server-0-of-2.r00000004.npz").write_bytes(b"x")
    (tmp_path / "server-1-of-2.r00000006.npz").write_bytes(b"x")
    rnd, msg = describe_restore(d, 2)
    assert rnd is None and "no round that every server has" in msg and "server 0: [4]" in msg
    rnd, msg = describe_restore(None, 2)
    assert rnd is None and msg == ""


def test_unreadable_checkpoint_is_named(tmp_path):
    from plexnet_kvstore_dist.server import ServerError
    (tmp_path / "server-0-of-1.r00000002.npz").write_bytes(b"not a zip file")
    with pytest.raises(ServerError, match=r"server-0-of-1\.r00000002\.npz: unreadable kvstore checkpoint"):
        ServerCore(0, 1, 1, "sync", checkpoint_dir=str(tmp_path), restore_round=2, heartbeat_timeout=0)
