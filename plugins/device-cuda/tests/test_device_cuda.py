"""The gpu backend: registration everywhere; behaviour only where a GPU is present."""
import numpy as np
import pytest

import plexnet as mx
from plexnet.backends import DeviceUnavailable

try:
    from plexnet_device_cuda import cupy_loader
except ImportError:  # plugin not installed in this environment
    cupy_loader = None

pytestmark = pytest.mark.timeout(120)
needs_plugin = pytest.mark.skipif(cupy_loader is None, reason="plexnet-device-cuda is not installed")
needs_gpu = pytest.mark.skipif(cupy_loader is None or not cupy_loader.available,
                               reason=f"no usable GPU: {getattr(cupy_loader, 'reason', 'plugin missing')}")


@needs_plugin
def test_plugin_registers_and_reports_reason_without_gpu():
    rec = {r["name"]: r for r in mx.plugins.get_manager().report()}["device_cuda"]
    assert rec["status"] == "ok"
    assert rec["registered"]["backends"] == ["gpu"]
    if not cupy_loader.available:
        with pytest.raises(DeviceUnavailable, match="gpu"):
            mx.nd.zeros((2,), ctx=mx.gpu(0))
        assert mx.num_gpus() == 0


@needs_gpu
def test_chain_of_gpu_ops_and_copy_back_without_explicit_sync():
    a = mx.nd.ones((256, 256), ctx=mx.gpu(0))
    for _ in range(50):
        a = a * 1.01 + 0.5
    expect = np.ones((256, 256), "f4")
    for _ in range(50):
        expect = expect * 1.01 + 0.5
    np.testing.assert_allclose(a.asnumpy(), expect, rtol=1e-5)


@needs_gpu
def test_host_device_copies_roundtrip():
    x = np.random.rand(33, 17).astype("f4")
    g = mx.nd.array(x, ctx=mx.gpu(0))
    back = g.copyto(mx.cpu())
    np.testing.assert_array_equal(back.asnumpy(), x)
    g2 = g.as_in_context(mx.gpu(0))
    assert g2 is g


@needs_gpu
def test_storage_stats_on_gpu():
    st = mx.storage.get()
    before = st.stats(mx.gpu(0)).bytes_in_use
    a = mx.nd.zeros((1024, 1024), ctx=mx.gpu(0))
    a.wait_to_read()
    assert st.stats(mx.gpu(0)).bytes_in_use >= before + 4 * 1024 * 1024
    del a
    mx.nd.waitall()
    assert st.stats(mx.gpu(0)).bytes_pooled >= 4 * 1024 * 1024


@needs_gpu
def test_gpu_random_reproducible():
    mx.random.seed(7)
    a = mx.nd.random.uniform(shape=(10,), ctx=mx.gpu(0)).asnumpy()
    mx.random.seed(7)
    b = mx.nd.random.uniform(shape=(10,), ctx=mx.gpu(0)).asnumpy()
    np.testing.assert_array_equal(a, b)
