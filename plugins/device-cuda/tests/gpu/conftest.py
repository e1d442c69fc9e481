"""The GPU suite of plexnet-device-cuda, written once against ``mx.gpu(...)``.

It runs wherever the ``gpu`` backend is usable: on a real GPU (CuPy), and in CI under
plexnet's CuPy simulator, which ``../test_simulated_gpu_suite.py`` starts in a
subprocess with ``PLEXNET_CUDA_SIMULATE=2``. Elsewhere every test here is skipped with
the backend's reason (``_gpu_suite.WHY``). Helpers and marks live in ``_gpu_suite.py``.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Iterator

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _gpu_suite  # noqa: E402


@pytest.fixture(autouse=True)
def _gpu_or_skip() -> None:
    if not _gpu_suite.GPU_OK:
        pytest.skip(_gpu_suite.WHY)


@pytest.fixture(autouse=True)
def _full_fp32(monkeypatch: pytest.MonkeyPatch) -> None:
    """cuDNN (where it runs) without TF32, so results compare with the CPU."""
    monkeypatch.setenv("PLEXNET_CUDNN_ALLOW_TF32", "0")


@pytest.fixture
def cp() -> Any:
    """The gpu backend's array module (CuPy, or the simulator)."""
    return _gpu_suite.cupy_loader.cupy


@pytest.fixture(params=["ThreadedEnginePerDevice", "ThreadedEngine", "NaiveEngine"])
def engine_kind(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each engine in turn as the process-wide engine (restored afterwards)."""
    from plexnet import engine
    old = engine.get().kind
    engine.set_engine(request.param)
    try:
        yield request.param
    finally:
        engine.get().wait_for_all()
        engine.set_engine(old)
