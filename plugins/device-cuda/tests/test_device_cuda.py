"""The gpu backend: registration everywhere. Behaviour on a device lives in ``gpu/`` (a
suite written once against ``mx.gpu(...)``: it runs on a real GPU, and in CI on the CuPy
simulator through ``test_simulated_gpu_suite.py``)."""
import pytest

import plexnet as mx
from plexnet.backends import DeviceUnavailable

try:
    from plexnet_device_cuda import cupy_loader
except ImportError:  # plugin not installed in this environment
    cupy_loader = None

pytestmark = pytest.mark.timeout(120)
needs_plugin = pytest.mark.skipif(cupy_loader is None, reason="plexnet-device-cuda is not installed")


@needs_plugin
def test_plugin_registers_and_reports_reason_without_gpu():
    rec = {r["name"]: r for r in mx.plugins.get_manager().report()}["device_cuda"]
    assert rec["status"] == "ok"
    assert rec["registered"]["backends"] == ["gpu"]
    if not cupy_loader.available:
        with pytest.raises(DeviceUnavailable, match="gpu"):
            mx.nd.zeros((2,), ctx=mx.gpu(0))
        assert mx.num_gpus() == 0


@needs_plugin
def test_simulation_is_off_unless_asked():
    """Without PLEXNET_CUDA_SIMULATE the loader never hands out the simulator."""
    import os
    if os.environ.get("PLEXNET_CUDA_SIMULATE", "").strip().lower() in ("", "0", "false", "no", "off"):
        assert not cupy_loader.simulated
        assert cupy_loader.note is None
        from plexnet.backends import find_backend
        b = find_backend("gpu")
        assert b.status_note is None and not b.simulated
        if cupy_loader.cupy is not None:
            assert not hasattr(cupy_loader.cupy, "__plexnet_simulator__")
