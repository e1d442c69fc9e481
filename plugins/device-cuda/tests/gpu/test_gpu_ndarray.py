"""NDArrays on gpu contexts: creation, arithmetic, copies between contexts, storage,
random numbers, engines. Runs on a real GPU and under the CuPy simulator."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from _gpu_suite import device_of, needs_two, randn, simulated_only

pytestmark = pytest.mark.timeout(60)


def test_chain_of_gpu_ops_and_copy_back_without_explicit_sync():
    a = mx.nd.ones((256, 256), ctx=mx.gpu(0))
    for _ in range(50):
        a = a * 1.01 + 0.5
    expect = np.ones((256, 256), "f4")
    for _ in range(50):
        expect = expect * 1.01 + 0.5
    np.testing.assert_allclose(a.asnumpy(), expect, rtol=1e-5)


def test_host_device_copies_roundtrip():
    x = randn(33, 17)
    g = mx.nd.array(x, ctx=mx.gpu(0))
    back = g.copyto(mx.cpu())
    np.testing.assert_array_equal(back.asnumpy(), x)
    g2 = g.as_in_context(mx.gpu(0))
    assert g2 is g


@pytest.mark.parametrize("dev", [0, pytest.param(1, marks=needs_two)])
def test_arrays_and_results_live_on_their_device(dev):
    ctx = mx.gpu(dev)
    a = mx.nd.array(np.arange(12).reshape(3, 4), ctx=ctx)
    b = mx.nd.ones((3, 4), ctx=ctx)
    outs = [a + b, a * 2, mx.nd.dot(a, b.T), mx.nd.sum(a, axis=1), a.astype("float64"), a[1:3], -a,
            mx.nd.relu(a - 5), a.reshape((4, 3))]
    for o in outs:
        assert o.context == ctx
        assert device_of(o) == dev, o
    np.testing.assert_allclose(outs[2].asnumpy(), np.arange(12).reshape(3, 4) @ np.ones((4, 3)))
    np.testing.assert_allclose(outs[3].asnumpy(), np.arange(12).reshape(3, 4).sum(1))


@needs_two
def test_copies_between_cpu_gpu0_gpu1():
    x = randn(6, 7)
    c = mx.nd.array(x)
    g0 = c.copyto(mx.gpu(0))
    g1 = g0.copyto(mx.gpu(1))
    g1b = g1.as_in_context(mx.gpu(1))
    assert g1b is g1
    back0 = g1.as_in_context(mx.gpu(0))
    back = back0.as_in_context(mx.cpu())
    assert (device_of(g0), device_of(g1), device_of(back0)) == (0, 1, 0)
    np.testing.assert_array_equal(back.asnumpy(), x)
    np.testing.assert_array_equal(g1.asnumpy(), x)
    # into an existing array, from a non-contiguous view, with a dtype conversion
    dst = mx.nd.zeros((6, 3), ctx=mx.gpu(1), dtype="float64")
    g0[:, 2:5].copyto(dst)
    np.testing.assert_allclose(dst.asnumpy(), x[:, 2:5])
    assert dst.dtype == np.float64 and device_of(dst) == 1
    # arithmetic after a peer copy stays on the target device
    s = (g1 * 2 + g0.as_in_context(mx.gpu(1))).asnumpy()
    np.testing.assert_allclose(s, 3 * x, rtol=1e-6)


def test_two_contexts_on_one_gpu_share_the_device():
    x = randn(4, 4)
    a = mx.nd.array(x, ctx=mx.gpu(0))
    b = a.copyto(mx.gpu(0))
    assert b is not a and device_of(b) == 0
    b += 1
    np.testing.assert_allclose(a.asnumpy(), x)
    np.testing.assert_allclose(b.asnumpy(), x + 1)


@pytest.mark.parametrize("dev", [0, pytest.param(1, marks=needs_two)])
def test_setitem_and_indexing_on_gpu(dev):
    ctx = mx.gpu(dev)
    e = mx.nd.array(np.arange(20).reshape(4, 5), ctx=ctx)
    e[1:2] = np.full((1, 5), 9.0)          # host values: an upload on a copy worker
    e[3] = 7                                # a scalar
    e[0, 1:3] = mx.nd.array([[5, 6]], ctx=ctx).reshape((2,))
    idx = mx.nd.array([0, 2], ctx=ctx)
    picked = e[idx]                         # advanced indexing with an NDArray key
    rows = e[[1, 3]]                        # ... and with a list
    expect = np.arange(20, dtype="f4").reshape(4, 5)
    expect[1], expect[3], expect[0, 1:3] = 9, 7, [5, 6]
    np.testing.assert_array_equal(e.asnumpy(), expect)
    np.testing.assert_array_equal(picked.asnumpy(), expect[[0, 2]])
    np.testing.assert_array_equal(rows.asnumpy(), expect[[1, 3]])
    assert device_of(picked) == dev and device_of(rows) == dev


def test_storage_stats_on_gpu():
    st = mx.storage.get()
    before = st.stats(mx.gpu(0)).bytes_in_use
    a = mx.nd.zeros((1024, 1024), ctx=mx.gpu(0))
    a.wait_to_read()
    assert st.stats(mx.gpu(0)).bytes_in_use >= before + 4 * 1024 * 1024
    del a
    mx.nd.waitall()
    assert st.stats(mx.gpu(0)).bytes_pooled >= 4 * 1024 * 1024


def test_storage_release_returns_device_memory():
    from plexnet.backends import get_backend
    be = get_backend("gpu")
    st = mx.storage.get()
    a = mx.nd.zeros((2048, 1024), ctx=mx.gpu(0))   # 8 MiB from the pool
    a.wait_to_read()
    del a
    mx.nd.waitall()
    assert st.stats(mx.gpu(0)).bytes_pooled >= 8 << 20
    free_pooled, total = be.memory_info(0)
    mx.gpu(0).empty_cache()
    assert st.stats(mx.gpu(0)).bytes_pooled == 0
    free_released, total2 = be.memory_info(0)
    assert total2 == total and free_released > free_pooled
    # a block of the same size is a miss now (the pool was emptied)
    misses = st.stats(mx.gpu(0)).misses
    b = mx.nd.zeros((2048, 1024), ctx=mx.gpu(0))
    b.wait_to_read()
    assert st.stats(mx.gpu(0)).misses == misses + 1


def test_gpu_random_reproducible():
    mx.random.seed(7)
    a = mx.nd.random.uniform(shape=(10,), ctx=mx.gpu(0)).asnumpy()
    mx.random.seed(7)
    b = mx.nd.random.uniform(shape=(10,), ctx=mx.gpu(0)).asnumpy()
    np.testing.assert_array_equal(a, b)


def test_gpu_random_samplers_dtypes_and_devices():
    mx.random.seed(11)
    u = mx.nd.random.uniform(-1, 1, shape=(200,), ctx=mx.gpu(0))
    n = mx.nd.random.normal(0, 1, shape=(200,), ctx=mx.gpu(0), dtype="float64")
    r = mx.nd.random.randint(0, 5, shape=(200,), ctx=mx.gpu(0))
    assert u.dtype == np.float32 and n.dtype == np.float64 and r.dtype == np.int32
    uh, rh = u.asnumpy(), r.asnumpy()
    assert -1 <= uh.min() and uh.max() < 1 and 0 <= rh.min() and rh.max() < 5
    assert len(np.unique(rh)) == 5
    if mx.num_gpus() >= 2:
        mx.random.seed(11)
        u1 = mx.nd.random.uniform(-1, 1, shape=(200,), ctx=mx.gpu(1))
        assert device_of(u1) == 1
        assert not np.array_equal(u1.asnumpy(), uh)  # each device has its own stream


def test_dlpack_roundtrip_is_zero_copy():
    a = mx.nd.array(randn(3, 4), ctx=mx.gpu(0))
    b = mx.nd.from_dlpack(a)
    assert b.context == mx.gpu(0)
    np.testing.assert_array_equal(b.asnumpy(), a.asnumpy())


@pytest.mark.parametrize("dev", [0, pytest.param(1, marks=needs_two)])
def test_every_engine_runs_gpu_work_on_its_device(engine_kind, dev):
    ctx = mx.gpu(dev)
    x = randn(8, 8)
    a = mx.nd.array(x, ctx=ctx)
    for _ in range(5):
        a = a * 0.5 + 1
    expect = x.copy()
    for _ in range(5):
        expect = expect * 0.5 + 1
    assert device_of(a) == dev
    other = a.copyto(mx.gpu(1 - dev) if mx.num_gpus() >= 2 else mx.cpu())
    np.testing.assert_allclose(other.asnumpy(), expect, rtol=1e-6)
    np.testing.assert_allclose(a.asnumpy(), expect, rtol=1e-6)


@simulated_only
def test_out_of_memory_is_a_memory_error_after_release_and_retry():
    """A cudaMalloc failure (CUDARuntimeError in CuPy) reaches the storage manager as a
    MemoryError: it releases its pools, retries, then explains (simulated device: 2 GiB)."""
    from plexnet.backends import get_backend
    total = get_backend("gpu").memory_info(0)[1]
    with pytest.raises(MemoryError, match=r"out of memory on gpu\(0\).*retried once"):
        mx.nd.empty((total // 4 + 1024,), ctx=mx.gpu(0))   # more bytes than the device has
    a = mx.nd.ones((16,), ctx=mx.gpu(0))                    # the device still works
    assert a.asnumpy().sum() == 16


@simulated_only
def test_cupy_pool_cache_is_released_before_a_raw_allocation_fails(cp):
    """Blocks cached by CuPy's own pool count against the device: the backend frees them
    before it reports a full device."""
    from plexnet.backends import get_backend
    be = get_backend("gpu")
    free, total = be.memory_info(0)
    with cp.cuda.Device(0):
        tmp = cp.empty((free - (64 << 20),), cp.uint8)  # CuPy's pool takes most of the device
        del tmp                                           # ... and keeps it cached
        assert cp.get_default_memory_pool().free_bytes() > 0
    buf = be.raw_alloc(128 << 20, 0)                      # needs the cached memory back
    assert buf.nbytes == 128 << 20
    assert cp.get_default_memory_pool().free_bytes() == 0
