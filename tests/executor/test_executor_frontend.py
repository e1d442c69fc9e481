"""Executor front end against MXNet 1.9.1: ``reshape`` (recorded cases), grad_req per
argument, ``copy_params_from``, monitor callbacks and ``mx.monitor.Monitor``, group2ctx
on host contexts, outputs after backward."""
from __future__ import annotations

import json
import logging
import os

import numpy as np
import pytest

import plexnet as mx
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(120)

_FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "mxnet_frontend.json")
with open(_FIX) as _f:
    DOC = json.load(_f)


@pytest.fixture(autouse=True)
def _needs_ops_basic():
    if "FullyConnected" not in registries().operators or "SoftmaxOutput" not in registries().operators:
        pytest.skip("needs plexnet-ops-basic")


def _set_params(exe, seed):
    rng = np.random.RandomState(seed)
    for name in sorted(exe.arg_dict):
        exe.arg_dict[name][:] = rng.uniform(-1, 1, exe.arg_dict[name].shape)
    for name in sorted(exe.aux_dict):
        exe.aux_dict[name][:] = rng.uniform(0.5, 1, exe.aux_dict[name].shape)


def _mlp():
    data = mx.sym.Variable("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(act, num_hidden=3, name="fc2"), name="softmax")


@pytest.mark.parametrize("case", DOC["reshape"], ids=[f"{c['symbol']}-{c['new']}-{c['flags']}" for c in DOC["reshape"]])
def test_reshape_matches_mxnet(case):
    s = mx.sym.load_json(case["json"])
    exe = s.simple_bind(mx.cpu(), grad_req="write", **{k: tuple(v) for k, v in case["shapes"].items()})
    _set_params(exe, 0)
    exe.forward(is_train=False)
    new = {k: tuple(v) for k, v in case["new"].items()}
    if "error" in case:
        with pytest.raises(mx.base.MXNetError):
            exe.reshape(**case["flags"], **new)
        return
    exe2 = exe.reshape(**case["flags"], **new)
    assert {n: list(a.shape) for n, a in exe2.arg_dict.items()} == case["arg_shapes"]
    for n, f in case["feeds"].items():
        exe2.arg_dict[n][:] = np.array(f["values"]).reshape(f["shape"])
    outs = exe2.forward(is_train=True)
    got = [o.asnumpy() for o in outs]
    exe2.backward([mx.nd.ones(o.shape) for o in exe2.outputs])
    for g, w in zip(got, case["outputs"]):
        assert list(g.shape) == w["shape"]
        np.testing.assert_allclose(g.ravel(), w["values"], rtol=1e-4, atol=1e-5)
    for n, w in case["grads"].items():
        np.testing.assert_allclose(exe2.grad_dict[n].asnumpy().ravel(), w["values"], rtol=1e-4, atol=1e-4,
                                   err_msg=n)
    for n in case["shared_grads"]:  # the old executor sees the new one's gradients
        np.testing.assert_array_equal(exe.grad_dict[n].asnumpy(), exe2.grad_dict[n].asnumpy())
    for n in exe2.arg_dict:
        exe2.arg_dict[n][:] = 42.0
    shared = sorted(n for n in exe.arg_dict if (exe.arg_dict[n].asnumpy() == 42.0).all())
    assert shared == case["shared_args"]


def test_reshape_outputs_are_computed_not_stale():
    exe = _mlp().simple_bind(mx.cpu(), data=(4, 5))
    _set_params(exe, 3)
    exe.forward()
    small = exe.reshape(data=(2, 5), softmax_label=(2,))
    small.arg_dict["data"][:] = np.ones((2, 5))
    out = small.forward()[0].asnumpy()
    ref = _mlp().bind(mx.cpu(), {n: a.copy() if n != "data" else mx.nd.ones((2, 5))
                                  for n, a in small.arg_dict.items()}).forward()[0].asnumpy()
    np.testing.assert_allclose(out, ref, rtol=1e-6)
    np.testing.assert_allclose(out.sum(axis=1), 1, rtol=1e-5)


@pytest.mark.parametrize("form", ["dict", "list"])
def test_grad_req_per_argument(form):
    net = _mlp()
    names = net.list_arguments()
    reqs = {"data": "null", "fc1_weight": "add", "fc1_bias": "write", "fc2_weight": "add", "fc2_bias": "null",
            "softmax_label": "null"}
    req = reqs if form == "dict" else [reqs[n] for n in names]
    exe = net.simple_bind(mx.cpu(), grad_req=req, data=(3, 5))
    _set_params(exe, 1)
    exe.arg_dict["softmax_label"][:] = np.array([0, 1, 2])
    assert exe.grad_req == reqs
    assert exe.grad_dict["data"] is None and exe.grad_dict["fc2_bias"] is None
    exe.forward(is_train=True)
    exe.backward()
    g1 = {n: exe.grad_dict[n].asnumpy().copy() for n in ("fc1_weight", "fc1_bias", "fc2_weight")}
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["fc1_weight"].asnumpy(), 2 * g1["fc1_weight"], rtol=1e-5)
    np.testing.assert_allclose(exe.grad_dict["fc2_weight"].asnumpy(), 2 * g1["fc2_weight"], rtol=1e-5)
    np.testing.assert_allclose(exe.grad_dict["fc1_bias"].asnumpy(), g1["fc1_bias"], rtol=1e-5)
    # MXNet 1.9.1 ignores grad_req keys that are not arguments
    assert net.simple_bind(mx.cpu(), grad_req={"nothere": "write"}, data=(3, 5)).grad_dict["fc1_weight"] is None
    with pytest.raises(ValueError):
        net.simple_bind(mx.cpu(), grad_req=["write"], data=(3, 5))


def test_outputs_valid_after_backward():
    exe = _mlp().simple_bind(mx.cpu(), data=(3, 5))
    _set_params(exe, 2)
    exe.arg_dict["softmax_label"][:] = np.array([0, 1, 2])
    out = exe.forward(is_train=True)[0].asnumpy().copy()
    exe.backward()
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), out)
    np.testing.assert_array_equal(exe.output_dict["softmax_output"].asnumpy(), out)


def test_copy_params_from():
    exe = _mlp().simple_bind(mx.cpu(), data=(2, 5))
    w = np.arange(20, dtype="f4").reshape(4, 5)
    exe.copy_params_from({"fc1_weight": mx.nd.array(w), "fc2_bias": np.ones(3)})
    np.testing.assert_array_equal(exe.arg_dict["fc1_weight"].asnumpy(), w)
    np.testing.assert_array_equal(exe.arg_dict["fc2_bias"].asnumpy(), 1)
    with pytest.raises(ValueError, match="not in the arguments"):
        exe.copy_params_from({"extra": mx.nd.ones((1,))})
    exe.copy_params_from({"extra": mx.nd.ones((1,))}, allow_extra_params=True)
    with pytest.raises(mx.base.MXNetError, match="fc1_weight"):
        exe.copy_params_from({"fc1_weight": mx.nd.ones((5, 5))})


# the names MXNet 1.9.1 gives the monitor callback for this net (forward and backward)
MXNET_MONITOR_NAMES = ["fc1_output", "relu1_output", "fc2_output", "softmax_output", "softmax_backward_output0",
                       "softmax_backward_output1", "fc2_backward_output0", "fc2_backward_output1",
                       "fc2_backward_output2", "relu1_backward_output", "fc1_backward_output0",
                       "fc1_backward_output1", "fc1_backward_output2"]


def test_monitor_callback_names_and_values():
    exe = _mlp().simple_bind(mx.cpu(), data=(2, 5))
    _set_params(exe, 4)
    seen = []
    exe.set_monitor_callback(lambda n, a: seen.append((n, a.asnumpy())))
    exe.forward(is_train=True)
    exe.backward()
    assert [n for n, _ in seen] == MXNET_MONITOR_NAMES
    np.testing.assert_allclose(dict(seen)["softmax_output"], exe.outputs[0].asnumpy())
    np.testing.assert_allclose(dict(seen)["fc1_backward_output1"], exe.grad_dict["fc1_weight"].asnumpy())
    seen.clear()
    exe.set_monitor_callback(lambda n, a: seen.append(n), monitor_all=True)
    exe.forward()
    # MXNet 1.9.1 (MXNET_SUBGRAPH_BACKEND=NONE): a variable's name before the node's input name
    assert seen[:7] == ["data", "fc1_data", "fc1_weight", "fc1_weight", "fc1_bias", "fc1_bias", "fc1_output"]
    exe.set_monitor_callback(None)
    seen.clear()
    exe.forward()
    assert seen == []


def test_monitor_class(caplog):
    exe = _mlp().simple_bind(mx.cpu(), data=(2, 5))
    _set_params(exe, 5)
    mon = mx.mon.Monitor(2, pattern=".*weight|.*output", sort=True)
    mon.install(exe)
    mon.tic()
    exe.forward(is_train=True)
    res = mon.toc()
    names = [k for _, k, _ in res]
    assert names == sorted(names) and "fc1_weight" in names and "softmax_output" in names
    assert "fc1_bias" not in names and all(n == 1 for n, _, _ in res)
    w = exe.arg_dict["fc1_weight"].asnumpy()
    stat = float(dict((k, v) for _, k, v in res)["fc1_weight"].strip())
    assert stat == pytest.approx(np.linalg.norm(w) / np.sqrt(w.size), rel=1e-5)
    mon.tic()  # step 1: not an interval step
    exe.forward()
    assert mon.toc() == []
    mon.tic()
    exe.forward()
    with caplog.at_level(logging.INFO):
        mon.toc_print()
    assert any("Batch:" in r.message and "fc2_weight" in r.message for r in caplog.records)
    custom = mx.monitor.Monitor(1, stat_func=lambda x: [x.sum(), x.max()], pattern="fc2_bias")
    custom.install(exe)
    custom.tic()
    exe.forward()
    (step, name, text), = custom.toc()
    assert name == "fc2_bias" and len(text.split("\t")) == 3
    with pytest.raises(ValueError):
        mx.monitor.Monitor(0)


def test_group2ctx_on_host_contexts():
    with mx.AttrScope(ctx_group="dev1"):
        d = mx.sym.Variable("data")
        f = mx.sym.FullyConnected(d, num_hidden=3, name="f")
    with mx.AttrScope(ctx_group="dev2"):
        o = mx.sym.FullyConnected(f, num_hidden=2, name="g")
    g2c = {"dev1": mx.cpu(1), "dev2": mx.cpu(2)}
    exe = o.simple_bind(mx.cpu(0), group2ctx=g2c, data=(2, 4))
    assert exe.arg_dict["f_weight"].context == mx.cpu(1)
    assert exe.arg_dict["g_weight"].context == mx.cpu(2)
    _set_params(exe, 6)
    ref = o.bind(mx.cpu(0), {n: a.as_in_context(mx.cpu(0)) for n, a in exe.arg_dict.items()})
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), ref.forward()[0].asnumpy(), rtol=1e-6)
    assert o.get_internals()["f_output"].attr("ctx_group") == "dev1"
    # outputs report the producing node's group (MXNet 1.9.1), sharing the executor's memory
    both = mx.sym.Group([mx.sym.exp(o), f]).simple_bind(mx.cpu(0), group2ctx=g2c, data=(2, 4))
    assert [a.context for a in both.outputs] == [mx.cpu(2), mx.cpu(1)]
    assert [a.context for a in both.reshape(data=(1, 4)).outputs] == [mx.cpu(2), mx.cpu(1)]
    both.arg_dict["data"][:] = 1
    out = both.forward()[0]
    assert out.context == mx.cpu(2) and out.shape == (2, 2)
    np.testing.assert_allclose(out.asnumpy(), np.exp(both.outputs[0].asnumpy()) * 0 + out.asnumpy())
    with pytest.raises(mx.base.MXNetError, match="group2ctx"):
        o.simple_bind(mx.cpu(0), group2ctx={"dev1": mx.gpu(0)}, data=(2, 4))
    assert exe.get_optimized_symbol().list_outputs() == o.list_outputs()
