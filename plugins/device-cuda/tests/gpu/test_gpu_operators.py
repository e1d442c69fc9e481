"""Operator implementations on gpu: the registry's choice (cuDNN where it is usable, else
ops-basic's xp implementations), the results against the CPU, and the simulator's own
report (``plexnet plugins`` says SIMULATED; cuDNN is unavailable and hands over)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import plexnet as mx
from plexnet.plugins import registries

from _gpu_suite import SIMULATED, TOL, device_of, randn, simulated_only

pytestmark = pytest.mark.timeout(60)

CUDNN_OPS = ["Convolution", "Pooling", "BatchNorm", "Activation", "softmax", "SoftmaxActivation"]


def _cudnn():
    return pytest.importorskip("plexnet_ops_cudnn", reason="plexnet-ops-cudnn is not installed")


def test_nn_operators_on_gpu_match_cpu():
    x = randn(2, 3, 6, 6)
    w = randn(4, 3, 3, 3, seed=1) * 0.3
    b = randn(4, seed=2)
    gamma, beta = np.abs(randn(4, seed=3)) + 0.5, randn(4, seed=4)

    def run(ctx):
        X, W, B = (mx.nd.array(a, ctx=ctx) for a in (x, w, b))
        c = mx.nd.Convolution(X, W, B, kernel=(3, 3), num_filter=4, pad=(1, 1))
        mm, mv = mx.nd.zeros((4,), ctx=ctx), mx.nd.ones((4,), ctx=ctx)
        bn = mx.nd.BatchNorm(c, mx.nd.array(gamma, ctx=ctx), mx.nd.array(beta, ctx=ctx), mm, mv,
                             fix_gamma=False, use_global_stats=True)
        outs = [c, bn, mx.nd.Activation(bn, act_type="tanh"), mx.nd.Activation(bn, act_type="relu"),
                mx.nd.Pooling(bn, kernel=(2, 2), stride=(2, 2), pool_type="max"),
                mx.nd.Pooling(bn, kernel=(2, 2), stride=(2, 2), pool_type="avg"),
                mx.nd.softmax(c.reshape((2, -1)), axis=-1), mx.nd.SoftmaxActivation(c.reshape((2, -1)))]
        if ctx.device_type == "gpu":
            assert all(device_of(o) == ctx.device_id for o in outs)
        return [o.asnumpy() for o in outs]

    for i, (g, c) in enumerate(zip(run(mx.gpu(0)), run(mx.cpu()))):
        np.testing.assert_allclose(g, c, err_msg=f"output {i}", **TOL)


def test_every_cudnn_operator_has_a_runnable_gpu_implementation():
    _cudnn()
    ops = registries().operators
    for name in CUDNN_OPS:
        rec = ops.select_impl(name, "gpu")
        assert rec.impl_name in ("cudnn", "xp"), (name, rec)


@simulated_only
def test_cudnn_reports_unavailable_under_simulation_and_hands_over_to_xp():
    plexnet_ops_cudnn = _cudnn()
    st = plexnet_ops_cudnn.status()
    assert st["available"] is False
    assert "SIMULATED" in st["reason"] and "xp" in st["reason"]
    ops = registries().operators
    for name in CUDNN_OPS:
        assert ops.select_impl(name, "gpu").impl_name == "xp", name
    before = {k: v for k, v in plexnet_ops_cudnn.stats().items() if k.endswith(".cudnn")}
    x = mx.nd.array(randn(1, 2, 5, 5), ctx=mx.gpu(0))
    w = mx.nd.array(randn(3, 2, 3, 3, seed=1), ctx=mx.gpu(0))
    y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=3, no_bias=True)
    assert y.asnumpy().shape == (1, 3, 3, 3)
    after = {k: v for k, v in plexnet_ops_cudnn.stats().items() if k.endswith(".cudnn")}
    assert after == before  # nothing ran through cuDNN


@simulated_only
def test_forcing_cudnn_under_simulation_is_a_clear_error():
    _cudnn()
    ops = registries().operators
    ops.force_impl("Convolution", "gpu", "cudnn")
    try:
        x = mx.nd.ones((1, 1, 4, 4), ctx=mx.gpu(0))
        w = mx.nd.ones((1, 1, 3, 3), ctx=mx.gpu(0))
        # never a silent fallback: the error names the operator, the implementation and
        # its plugin (plexnet_ops_cudnn.status() has the reason: SIMULATED)
        with pytest.raises(Exception, match="(?s)Convolution.*cudnn.*ops_cudnn.*not available"):
            mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=1, no_bias=True).asnumpy()
    finally:
        ops.force_impl("Convolution", "gpu", None)


@simulated_only
def test_plexnet_plugins_says_the_gpu_is_simulated(capsys):
    from plexnet import cli
    assert cli.main(["plugins"]) == 0
    table = capsys.readouterr().out
    line = [ln for ln in table.splitlines() if ln.strip().startswith("gpu (from")]
    assert line and "available (SIMULATED on the host" in line[0]
    assert cli.main(["plugins", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    gpu = [d for d in rep["devices"] if d["device_type"] == "gpu"][0]
    assert gpu["available"] is True and gpu["note"].startswith("SIMULATED")
    cpu = [d for d in rep["devices"] if d["device_type"] == "cpu"][0]
    assert "note" not in cpu


@simulated_only
def test_the_backend_array_module_is_the_simulator(cp):
    from plexnet.backends import get_backend
    be = get_backend("gpu")
    assert be.simulated and be.xp is cp and "SIMULATED" in cp.__plexnet_simulator__
    assert SIMULATED
    a = mx.nd.ones((3,), ctx=mx.gpu(0))
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(a._data)
