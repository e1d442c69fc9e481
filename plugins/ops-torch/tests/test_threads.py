"""torch's OpenMP pool follows the engine's share of the cores per worker thread."""
from __future__ import annotations

import threading

import pytest

from plexnet_ops_torch import _base

torch = pytest.importorskip("torch")


def _threads_seen_in_new_thread(share: int, monkeypatch) -> int:
    monkeypatch.setattr(_base, "threads_per_worker", lambda: share)
    seen: list[int] = []

    def work() -> None:
        _base.sync_threads()
        seen.append(torch.get_num_threads())

    t = threading.Thread(target=work)
    t.start()
    t.join(timeout=30)
    assert not t.is_alive()
    return seen[0]


def test_two_awake_workers_get_one_thread_each(monkeypatch):
    assert _base.load()
    before = torch.get_num_threads()
    try:
        assert _threads_seen_in_new_thread(1, monkeypatch) == 1
        assert _threads_seen_in_new_thread(2, monkeypatch) == 2
    finally:
        torch.set_num_threads(before)


def test_share_is_set_once_per_thread(monkeypatch):
    assert _base.load()
    calls: list[int] = []
    monkeypatch.setattr(_base, "threads_per_worker", lambda: 1)
    real = torch.set_num_threads
    before = torch.get_num_threads()
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (calls.append(n), real(n)))

    def work() -> None:
        for _ in range(5):
            _base.sync_threads()

    t = threading.Thread(target=work)
    t.start()
    t.join(timeout=30)
    real(before)
    assert calls == [1]


def test_engine_share_follows_awake_workers(monkeypatch):
    """threads_per_worker: every core for one awake worker (or none), the cores shared
    among several, at least one each; no busy-machine rule (unlike blas_threads)."""
    from plexnet.engine import blas
    monkeypatch.setattr(blas, "_ncpu", 4)
    for awake, share in ((0, 4), (1, 4), (2, 2), (3, 1), (8, 1)):
        monkeypatch.setattr(blas, "_awake", awake)
        assert blas.threads_per_worker() == share, awake
    monkeypatch.setattr(blas, "_busy_machine", lambda: True)
    monkeypatch.setattr(blas, "_awake", 1)
    assert blas.threads_per_worker() == 4


def test_small_networks_never_import_torch():
    """The probe finds torch without importing it, and a call is checked before torch is
    loaded: LeNet's first layer (one input channel, a 737K-element output) and its 2x2/2
    pooling run ops-basic, so a fresh process training them never loads torch (it used
    to, in a worker, stalling the engine for the import)."""
    import subprocess
    import sys
    code = (
        "import sys, numpy as np, plexnet as mx\n"
        "from plexnet.plugins import registries\n"
        "x = mx.sym.Variable('data')\n"
        "h = mx.sym.Activation(mx.sym.Convolution(x, kernel=(5, 5), num_filter=20), act_type='tanh')\n"
        "h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type='max')\n"
        "y = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3), name='sm')\n"
        "ex = y.simple_bind(mx.cpu(), data=(64, 1, 28, 28))\n"
        "ex.forward(is_train=True); ex.backward(); mx.nd.waitall()\n"
        "impl = registries().operators.select_impl('Convolution', 'cpu')\n"
        "assert impl.impl_name == 'torch', impl\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"
