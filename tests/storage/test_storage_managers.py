"""Storage managers: pooling, rounding, statistics, release, direct free, out of memory,
and no reuse of a block while an engine operation still reads it."""
from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

import plexnet.storage as storage_mod
from plexnet import cpu
from plexnet.storage import (STRATEGIES, NaiveStorageManager, PooledStorageManager, Storage,
                             round_size, set_storage)

CTX = cpu()


class FakeDevice:
    """raw_alloc/raw_free with a capacity: freed-to-pool blocks still count until
    raw_free gives them back."""

    def __init__(self, capacity: int | None = None) -> None:
        self.capacity = capacity
        self.live = 0
        self.allocs: list[int] = []
        self.freed: list[Any] = []

    def raw_alloc(self, n: int) -> np.ndarray:
        if self.capacity is not None and self.live + n > self.capacity:
            raise MemoryError(f"fake device: {n} bytes do not fit")
        self.live += n
        self.allocs.append(n)
        return np.empty(n, dtype=np.uint8)

    def raw_free(self, buf: np.ndarray) -> None:
        self.live -= buf.size
        self.freed.append(buf)


def pooled(dev: FakeDevice | None = None, **kw: Any) -> tuple[PooledStorageManager, FakeDevice]:
    dev = dev or FakeDevice()
    return PooledStorageManager(CTX, dev.raw_alloc, dev.raw_free, **kw), dev


# -- pooling -----------------------------------------------------------------------------------
def test_pooled_reuses_a_freed_block_of_the_same_bucket() -> None:
    m, dev = pooled()
    h = m.alloc(1000)
    assert h.size == 1024 and h.buf.size == 1024 and h.ctx == CTX and h.manager is m
    buf = h.buf
    s = m.stats()
    assert (s.hits, s.misses, s.bytes_in_use, s.bytes_pooled, s.peak) == (0, 1, 1024, 0, 1024)
    m.free(h)
    assert h.buf is None
    s = m.stats()
    assert (s.bytes_in_use, s.bytes_pooled, s.frees) == (0, 1024, 1)
    h2 = m.alloc(900)  # rounds to the same 1024 bucket
    assert h2.buf is buf
    s = m.stats()
    assert (s.hits, s.misses, s.bytes_in_use, s.bytes_pooled, s.allocs) == (1, 1, 1024, 0, 2)
    assert dev.allocs == [1024]  # the backend was asked once


def test_pooled_different_bucket_is_a_miss_and_peak_tracks_the_maximum() -> None:
    m, dev = pooled()
    a = m.alloc(1000)
    m.free(a)
    b = m.alloc(3000)  # 4096 bucket: not served by the 1024 block
    assert b.size == 4096 and m.stats().hits == 0 and m.stats().misses == 2
    c = m.alloc(100)
    assert m.stats().peak == 4096 + 128
    m.free(b)
    m.free(c)
    s = m.stats()
    assert s.bytes_in_use == 0 and s.bytes_pooled == 1024 + 4096 + 128 and s.peak == 4096 + 128


def test_double_free_is_ignored() -> None:
    m, _ = pooled()
    h = m.alloc(10)
    m.free(h)
    m.free(h)
    s = m.stats()
    assert s.frees == 1 and s.bytes_pooled == 16 and s.bytes_in_use == 0
    assert m.alloc(10).buf is not m.alloc(10).buf  # the block was pooled once only


def test_release_all_gives_pooled_blocks_back() -> None:
    m, dev = pooled()
    hs = [m.alloc(n) for n in (10, 1000, 5000)]
    keep = m.alloc(64)
    for h in hs:
        m.free(h)
    m.release_all()
    s = m.stats()
    assert s.bytes_pooled == 0 and s.bytes_in_use == 64
    assert sorted(b.size for b in dev.freed) == [16, 1024, 8192]
    assert dev.live == 64
    m.alloc(1000)
    assert m.stats().hits == 0  # nothing left to reuse
    assert keep.buf is not None


def test_direct_free_bypasses_the_pool() -> None:
    m, dev = pooled()
    h = m.alloc(100)
    buf = h.buf
    m.direct_free(h)
    s = m.stats()
    assert s.bytes_in_use == 0 and s.bytes_pooled == 0 and s.frees == 1
    assert dev.freed == [buf] and h.buf is None
    m.direct_free(h)  # second time: nothing
    assert m.stats().frees == 1 and len(dev.freed) == 1
    assert m.alloc(100).buf is not buf


def test_naive_manager_never_pools() -> None:
    dev = FakeDevice()
    m = NaiveStorageManager(CTX, dev.raw_alloc, dev.raw_free)
    h = m.alloc(1000)
    assert h.size == 1000  # no rounding
    m.free(h)
    assert len(dev.freed) == 1 and dev.live == 0
    h2 = m.alloc(1000)
    s = m.stats()
    assert (s.hits, s.misses, s.allocs, s.frees, s.bytes_pooled, s.bytes_in_use, s.peak) == \
        (0, 2, 2, 1, 0, 1000, 1000)
    m.release_all()  # nothing to do
    assert h2.buf is not None


def test_zero_byte_allocation_gets_a_block() -> None:
    m, _ = pooled()
    assert m.alloc(0).size == 1
    n = NaiveStorageManager(CTX, FakeDevice().raw_alloc)
    assert n.alloc(0).size == 1


@pytest.mark.timeout(60)
def test_pooled_manager_is_thread_safe() -> None:
    m, dev = pooled()
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(500):
                hs = [m.alloc(int(n)) for n in rng.integers(1, 20000, 4)]
                for h in hs:
                    m.free(h)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    s = m.stats()
    assert s.allocs == s.frees == 4 * 500 * 4
    assert s.bytes_in_use == 0 and s.hits + s.misses == s.allocs
    assert s.bytes_pooled == dev.live  # everything the device handed out is in the pool


# -- rounding ------------------------------------------------------------------------------------
def test_rounding_strategies() -> None:
    assert round_size(1000) == 1024
    assert round_size(1, "round") == 1
    assert round_size((1 << 20) + 1, "round") == (1 << 20) + 4096  # above the cutoff: pages
    assert round_size((1 << 20) + 1, "power2") == 1 << 21
    assert round_size(1000, "exact") == 1000
    assert round_size(5000, "exact") == 8192
    assert round_size(5000, "round", page=1000, cutoff=100) == 5000
    assert round_size(5001, "round", page=1000, cutoff=100) == 6000


def test_unknown_strategy_is_rejected_everywhere() -> None:
    with pytest.raises(ValueError, match="bogus"):
        round_size(10, "bogus")
    with pytest.raises(ValueError, match="bogus"):
        PooledStorageManager(CTX, FakeDevice().raw_alloc, strategy="bogus")
    with pytest.raises(ValueError, match="PLEXNET_MEM_POOL_ROUND"):
        Storage(strategy="bogus")
    with pytest.raises(ValueError, match="PLEXNET_STORAGE_MANAGER"):
        Storage(kind="fancy")


@settings(max_examples=300, deadline=None)
@given(size=hst.integers(0, 1 << 26), strategy=hst.sampled_from(STRATEGIES))
def test_rounding_properties(size: int, strategy: str) -> None:
    r = round_size(size, strategy)
    assert r >= max(size, 1)
    if strategy == "power2" or (strategy == "round" and size <= 1 << 20):
        assert r & (r - 1) == 0 and r < 2 * max(size, 1)
    elif size > 4096:
        assert r % 4096 == 0 and r - size < 4096
    assert round_size(r, strategy) == r  # a bucket size is its own bucket


@pytest.mark.parametrize("strategy,sizes,hits", [
    ("round", [1000, 600], 1),      # both in the 1024 bucket
    ("power2", [5000, 7000], 1),    # both 8192
    ("exact", [1000, 600], 0),      # no sharing
])
def test_pool_sharing_depends_on_strategy(strategy: str, sizes: list[int], hits: int) -> None:
    m, _ = pooled(strategy=strategy)
    m.free(m.alloc(sizes[0]))
    m.alloc(sizes[1])
    assert m.stats().hits == hits


def test_storage_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLEXNET_STORAGE_MANAGER", "naive")
    monkeypatch.setenv("PLEXNET_MEM_POOL_ROUND", "power2")
    monkeypatch.setenv("PLEXNET_MEM_POOL_PAGE_SIZE", "512")
    monkeypatch.setenv("PLEXNET_MEM_POOL_ROUND_CUTOFF", "2048")
    st = Storage()
    assert (st.kind, st.strategy, st.page, st.cutoff) == ("naive", "power2", 512, 2048)
    assert isinstance(st.manager(CTX), NaiveStorageManager)
    monkeypatch.setenv("PLEXNET_MEM_POOL_PAGE_SIZE", "big")
    with pytest.raises(ValueError, match="PLEXNET_MEM_POOL_PAGE_SIZE"):
        Storage()


# -- the Storage facade ---------------------------------------------------------------------------
def test_storage_facade_on_cpu() -> None:
    st = Storage(kind="pooled", strategy="round")
    m = st.manager(CTX)
    assert isinstance(m, PooledStorageManager) and st.manager(CTX) is m
    h = st.alloc(3000, CTX)
    assert h.buf.dtype == np.uint8 and h.buf.size >= 3000
    buf = h.buf
    st.free(h)
    h2 = st.alloc(3000, CTX)
    assert h2.buf is buf and st.stats(CTX).hits == 1
    st.direct_free(h2)
    st.free(st.alloc(10, CTX))
    st.release_all(CTX)
    s = st.stats(CTX)
    assert s.bytes_in_use == 0 and s.bytes_pooled == 0
    assert st.all_stats()[CTX] == s


def test_process_wide_storage_can_be_replaced() -> None:
    mine = Storage(kind="naive")
    old = set_storage(mine)
    try:
        assert storage_mod.get() is mine
    finally:
        set_storage(old)


# -- out of memory -----------------------------------------------------------------------------------
def test_out_of_memory_releases_the_pool_and_retries() -> None:
    m, dev = pooled(FakeDevice(capacity=4096))
    a = m.alloc(2048)
    m.free(a)                       # pooled: the device still counts it
    b = m.alloc(1024)
    m.free(b)
    assert dev.live == 3072
    c = m.alloc(4000)               # 4096 does not fit until the pool is released
    assert c.size == 4096
    assert dev.live == 4096 and len(dev.freed) == 2
    s = m.stats()
    assert s.bytes_pooled == 0 and s.bytes_in_use == 4096 and s.misses == 3


def test_out_of_memory_after_retry_explains_what_is_held() -> None:
    m, dev = pooled(FakeDevice(capacity=10_000))
    live = m.alloc(5000)            # 8192 bytes in use
    with pytest.raises(MemoryError) as ei:
        m.alloc(3000)               # 4096 more never fits
    msg = str(ei.value)
    assert "3000 bytes" in msg and "rounded to 4096" in msg
    assert "8192 bytes in use" in msg and "cpu(0)" in msg and "retried" in msg
    assert live.buf is not None and m.stats().bytes_in_use == 8192


def test_always_failing_backend_naive() -> None:
    calls = []

    def raw_alloc(n: int) -> Any:
        calls.append(n)
        raise MemoryError("device is full")
    m = NaiveStorageManager(CTX, raw_alloc)
    with pytest.raises(MemoryError, match=r"asked for 12345 bytes.*0 bytes in use.*device is full"):
        m.alloc(12345)
    assert calls == [12345, 12345]  # tried, pools released, retried once
    assert m.stats().allocs == 0


def test_out_of_memory_message_reports_pooled_bytes_before_release() -> None:
    attempts = []

    def raw_alloc(n: int) -> Any:
        attempts.append(n)
        if n > 100:
            raise MemoryError()
        return np.empty(n, np.uint8)
    m = PooledStorageManager(CTX, raw_alloc)
    m.free(m.alloc(64))
    with pytest.raises(MemoryError, match="0 bytes in use and 64 bytes pooled"):
        m.alloc(1000)
    assert m.stats().bytes_pooled == 0


# -- no reuse while an operation reads the block ---------------------------------------------------
@pytest.mark.timeout(60)
def test_block_is_not_reused_while_an_engine_op_reads_it(engine_kind) -> None:
    eng = engine_kind
    if eng.kind == "NaiveEngine":
        pytest.skip("NaiveEngine runs each operation to completion at push time, so no op can be "
                    "running while the next allocation happens")
    st = Storage(kind="pooled")
    h = st.alloc(4096, CTX)
    buf = h.buf
    var = eng.new_var()
    release, started = threading.Event(), threading.Event()
    seen: list[int] = []

    def reader(_rctx: Any) -> None:
        started.set()
        assert release.wait(30), "test never released the reader"
        seen.append(int(buf[0]))

    buf[0] = 7
    eng.push_sync(reader, CTX, const_vars=[var], mutate_vars=[], name="slow_reader")
    assert started.wait(30)
    eng.push_delete(lambda _rctx: st.free(h), CTX, var)
    h2 = st.alloc(4096, CTX)         # while the reader still runs
    assert h2.buf is not buf and not np.shares_memory(h2.buf, buf)
    assert h.buf is buf              # not freed yet
    h2.buf[0] = 99                   # writing the new block cannot disturb the reader
    release.set()
    eng.wait_for_all()
    assert seen == [7]
    assert h.buf is None             # the deferred free ran
    h3 = st.alloc(4096, CTX)
    assert h3.buf is buf             # and only now the block is reused
