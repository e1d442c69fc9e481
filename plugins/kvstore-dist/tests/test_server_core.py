"""The server protocol without any transport (plain asyncio, no Ray needed)."""
import asyncio
import json
import re
import time

import numpy as np
import pytest

import plexnet as mx
from plexnet_kvstore_dist.partition import plan, server_of
from plexnet_kvstore_dist.server import ServerCore, ServerError, choose_restore_round

pytestmark = pytest.mark.timeout(60)


def run(coro):
    return asyncio.run(coro)


def test_partition_small_and_big():
    assert plan(3, 10, 4, 1000) == plan(3, 10, 4, 1000)
    (p,) = plan("w", 10, 4, 1000)
    assert p.server == server_of("w", 4) and (p.lo, p.hi) == (0, 10)
    parts = plan(5, 1003, 3, 1000)
    assert [(q.server, q.lo, q.hi) for q in parts] == [(0, 0, 335), (1, 335, 669), (2, 669, 1003)]
    assert len(plan(5, 10 ** 7, 1, 1000)) == 1
    # string keys hash stably (not with Python's per-process randomised hash)
    import zlib
    assert server_of("fc1_weight", 7) == zlib.crc32(b"fc1_weight") % 7


def sgd_json(lr=0.1):
    return json.dumps(mx.optimizer.SGD(learning_rate=lr).get_config())


def test_sync_rounds_merge_and_update():
    async def go():
        s = ServerCore(0, 1, 2, "sync", timeout=5, heartbeat_timeout=0)
        await s.init(0, [((1, 0), np.zeros(4, np.float32))])
        await s.set_optimizer(sgd_json())
        await s.push(0, [((1, 0), np.ones(4, np.float32))])
        assert s.pull_ready(0, [((1, 0), 1)]) is None  # round 1 misses worker 1
        waiter = asyncio.create_task(s.pull(0, [((1, 0), 1)]))
        await asyncio.sleep(0.05)
        assert not waiter.done()
        await s.push(1, [((1, 0), np.full(4, 3, np.float32))])
        (w,) = await waiter
        np.testing.assert_allclose(w, -0.4)
        # worker 0 may run ahead: its second push goes to round 2
        await s.push(0, [((1, 0), np.ones(4, np.float32))])
        await s.push(0, [((1, 0), np.ones(4, np.float32))])
        assert len(s.pending[(1, 0)]) == 2
        await s.push(1, [((1, 0), np.ones(4, np.float32))])
        await s.push(1, [((1, 0), np.ones(4, np.float32))])
        (w,) = await s.pull(1, [((1, 0), 3)])
        np.testing.assert_allclose(w, -0.8)
    run(go())


def test_sync_without_optimizer_replaces_with_sum():
    async def go():
        s = ServerCore(0, 1, 2, "sync", timeout=5, heartbeat_timeout=0)
        await s.init(0, [(("k", 0), np.full(3, 7.0))])
        await s.push(0, [(("k", 0), np.ones(3))])
        await s.push(1, [(("k", 0), np.ones(3) * 2)])
        (v,) = await s.pull(0, [(("k", 0), 1)])
        np.testing.assert_array_equal(v, 3)
    run(go())


def test_uneven_pushes_fail_clearly():
    async def go():
        s = ServerCore(0, 1, 2, "sync", timeout=0.5, heartbeat_timeout=0)
        await s.init(0, [((1, 0), np.zeros(2))])
        await s.push(0, [((1, 0), np.ones(2))])
        with pytest.raises(ServerError, match=r"timed out .* none yet from \[1\]"):
            await s.pull(0, [((1, 0), 1)])
        await s.leave(1)
        with pytest.raises(ServerError, match="finished without pushing key 1"):
            await s.pull(0, [((1, 0), 1)])
    run(go())


def test_wait_pull_is_answered_by_the_completing_push():
    """A waiting pull (``wait_pull``) gets its answer from inside the push that
    completes the round: no task, no turn of the event loop."""
    async def go():
        s = ServerCore(0, 1, 2, "sync", timeout=5, heartbeat_timeout=0)
        await s.init(0, [((1, 0), np.zeros(3))])
        got = []
        s.push_now(0, [((1, 0), np.ones(3))])
        assert s.pull_ready(0, [((1, 0), 1)]) is None
        s.wait_pull(0, [((1, 0), 1)], lambda res, err: got.append((res, err)))
        s.push_now(0, [((1, 0), np.ones(3))])  # worker 0 runs ahead: round 2, not ours
        assert got == [] and len(s.waits) == 1
        s.push_now(1, [((1, 0), np.full(3, 2.0))])
        assert len(got) == 1 and got[0][1] is None  # answered within push_now
        np.testing.assert_array_equal(got[0][0][0], 3)
        assert s.waits == []
        # dropped with its connection: never answered
        s.wait_pull(0, [((1, 0), 3)], lambda res, err: got.append((res, err)), owner="conn")
        s.drop_waits("conn")
        s.push_now(1, [((1, 0), np.ones(3))])
        assert len(got) == 1 and s.waits == []
    run(go())


def test_wait_pull_failures():
    """Uneven pushes, a failed job and the timeout answer a waiting pull with the error
    the coroutine ``pull`` raises."""
    async def go():
        s = ServerCore(0, 1, 2, "sync", timeout=5, heartbeat_timeout=0)
        await s.init(0, [((1, 0), np.zeros(2)), ((2, 0), np.zeros(2))])
        got = []
        s.push_now(0, [((1, 0), np.ones(2)), ((2, 0), np.ones(2))])
        s.wait_pull(0, [((1, 0), 1)], lambda res, err: got.append(err))
        s._poll_waits(time.monotonic() + 10)  # past its deadline
        assert len(got) == 1 and re.search(r"timed out .* none yet from \[1\]", str(got[0]))
        s.wait_pull(0, [((1, 0), 1)], lambda res, err: got.append(err))
        await s.leave(1)
        assert len(got) == 2 and "finished without pushing key 1" in str(got[1])
        s2 = ServerCore(0, 1, 2, "sync", timeout=5, heartbeat_timeout=0)
        await s2.init(0, [((1, 0), np.zeros(2))])
        s2.wait_pull(0, [((1, 0), 1)], lambda res, err: got.append(err))
        s2.fail("worker 1 died (killed by signal 9); the job is stopped")
        assert len(got) == 3 and isinstance(got[2], ServerError) and "signal 9" in str(got[2])
    run(go())


def test_dead_worker_fails_waiters_and_later_calls():
    async def go():
        s = ServerCore(0, 1, 2, "sync", timeout=30, heartbeat_timeout=0.3)
        await s.init(0, [((1, 0), np.zeros(2))])
        await s.heartbeat(1)
        await s.push(0, [((1, 0), np.ones(2))])
        t0 = asyncio.get_running_loop().time()
        with pytest.raises(ServerError, match="worker 1 sent no heartbeat"):
            await s.pull(0, [((1, 0), 1)])
        assert asyncio.get_running_loop().time() - t0 < 5
        with pytest.raises(ServerError, match="worker 1"):
            await s.push(0, [((1, 0), np.ones(2))])
        s2 = ServerCore(0, 1, 2, "sync", timeout=30, heartbeat_timeout=0)
        await s2.worker_failed(1, "killed by signal 9")
        with pytest.raises(ServerError, match="worker 1 died \\(killed by signal 9\\)"):
            await s2.barrier(0, 1)
    run(go())


def test_async_applies_each_push():
    async def go():
        s = ServerCore(0, 1, 2, "async", timeout=5, heartbeat_timeout=0)
        await s.init(0, [((1, 0), np.zeros(2, np.float32))])
        with pytest.raises(ServerError, match="needs an optimizer"):
            await s.push(0, [((1, 0), np.ones(2, np.float32))])
        await s.set_optimizer(sgd_json(1.0))
        await s.push(0, [((1, 0), np.ones(2, np.float32))])
        (w,) = await s.pull(0, [((1, 0), 1)])
        np.testing.assert_allclose(w, -1)
        await s.push(1, [((1, 0), np.ones(2, np.float32))])
        (w,) = await s.pull(0, [((1, 0), 1)])
        np.testing.assert_allclose(w, -2)
    run(go())


def test_barrier():
    async def go():
        s = ServerCore(0, 1, 3, "sync", timeout=0.5, heartbeat_timeout=0)
        a = asyncio.create_task(s.barrier(0, 1))
        b = asyncio.create_task(s.barrier(1, 1))
        await asyncio.sleep(0.05)
        assert not a.done()
        await s.barrier(2, 1)
        await a
        await b
        with pytest.raises(ServerError, match=r"barrier 2: workers \[1, 2\] have not arrived"):
            await s.barrier(0, 2)
    run(go())


def test_checkpoint_and_restore(tmp_path):
    d = str(tmp_path)

    async def go():
        s = ServerCore(0, 2, 1, "sync", checkpoint_dir=d, checkpoint_every=2, heartbeat_timeout=0)
        await s.init(0, [((1, 0), np.zeros(3, np.float32)), (("b", 1), np.ones(2, np.float32))])
        await s.set_optimizer(json.dumps(mx.optimizer.Adam(learning_rate=0.1).get_config()))
        for _ in range(5):
            await s.push(0, [((1, 0), np.ones(3, np.float32)), (("b", 1), np.ones(2, np.float32))])
        return {k: v.copy() for k, v in s.store.items()}, s
    store, s = run(go())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["server-0-of-2.r00000002.npz", "server-0-of-2.r00000004.npz"]
    assert choose_restore_round(d, 2) is None  # server 1 wrote nothing
    (tmp_path / "server-1-of-2.r00000004.npz").write_bytes((tmp_path / "server-0-of-2.r00000004.npz").read_bytes())
    assert choose_restore_round(d, 2) == 4
    with pytest.raises(ServerError, match="2 servers"):
        choose_restore_round(d, 3)

    async def resume():
        r = ServerCore(0, 2, 1, "sync", checkpoint_dir=d, restore_round=4, heartbeat_timeout=0)
        assert r.restored_round == 4 and r.updater is not None
        await r.init(0, [((1, 0), np.full(3, 99, np.float32))])  # ignored: resumed
        await r.set_optimizer(json.dumps(mx.optimizer.Adam(learning_rate=0.1).get_config()))
        await r.push(0, [((1, 0), np.ones(3, np.float32)), (("b", 1), np.ones(2, np.float32))])
        (w,) = await r.pull(0, [((1, 0), 1)])  # version counts restart in the new job
        return w, r.updater.optimizer.num_update
    w, n = run(resume())
    np.testing.assert_allclose(w, store[(1, 0)], rtol=1e-6)  # the 5th update replayed on the restored state
    assert n == 5
