"""Gradients of composed graphs against central differences (float64), grad_req
write/add/null, auxiliary state updates, head gradients."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from gradcheck import bind_f64, check_graph_gradients, randomize

sym = mx.sym


def mlp(act="relu"):
    data = sym.Variable("data")
    h = sym.XTFullyConnected(data, num_hidden=5, name="fc1")
    h = sym.XTActivation(h, act_type=act, name="act1")
    h = sym.XTFullyConnected(h, num_hidden=4, name="fc2")
    h = sym.XTActivation(h, act_type="tanh", name="act2")
    h = sym.XTFullyConnected(h, num_hidden=3, name="fc3")
    return sym.XTSoftmaxOutput(h, name="softmax")


def small_cnn():
    data = sym.Variable("data")
    h = sym.XTConvolution(data, kernel=(3, 3), num_filter=3, pad=(1, 1), name="conv1")
    h = sym.XTBatchNorm(h, name="bn1")
    h = sym.XTActivation(h, act_type="tanh", name="act1")
    h = sym.XTPooling(h, kernel=(2, 2), pool_type="max", name="pool1")
    h = sym.XTConvolution(h, kernel=(2, 2), num_filter=2, stride=(1, 1), name="conv2")
    h = sym.XTPooling(h, kernel=(1, 1), pool_type="avg", name="pool2")
    h = sym.XTFlatten(h, name="flat")
    h = sym.XTFullyConnected(h, num_hidden=3, name="fc")
    return sym.XTSoftmaxOutput(h, name="softmax")


def residual_block():
    data = sym.Variable("data")
    h = sym.XTFullyConnected(data, num_hidden=4, name="fc1")
    h = sym.XTActivation(h, act_type="tanh", name="act1")
    h = sym.XTFullyConnected(h, num_hidden=4, name="fc2")
    s = sym.XTadd(h, data, name="add")
    out = sym.XTActivation(s, act_type="sigmoid", name="out")
    return out


@pytest.mark.timeout(60)
def test_mlp_gradients_with_loss():
    label = np.array([0, 2, 1, 2], dtype=np.float64)
    check_graph_gradients(mlp(), {"data": (4, 6)}, fixed={"softmax_label": label}, loss_label="softmax_label",
                          rtol=1e-5, atol=1e-8)


@pytest.mark.timeout(60)
def test_mlp_gradients_planning_off_and_no_bulk():
    label = np.array([1, 0, 2], dtype=np.float64)
    check_graph_gradients(mlp("sigmoid"), {"data": (3, 5)}, fixed={"softmax_label": label},
                          loss_label="softmax_label", plan_memory=False, bulk_exec=False)


@pytest.mark.timeout(120)
def test_small_cnn_with_batchnorm_and_pooling():
    label = np.array([0, 2], dtype=np.float64)
    check_graph_gradients(small_cnn(), {"data": (2, 2, 6, 6)}, fixed={"softmax_label": label},
                          loss_label="softmax_label", rtol=1e-4, atol=1e-7)


@pytest.mark.timeout(60)
def test_residual_block_gradient_accumulation():
    exe = check_graph_gradients(residual_block(), {"data": (3, 4)})
    # data feeds two consumers: its gradient is accumulated (write, then add)
    xg = exe.exec_graph
    writers = [(xn.name, r.name) for xn in xg.backward for e, r in xn.writes
               if xg.entries[e].name == "data_grad"]
    assert sorted(r for _, r in writers) == ["add", "write"]


@pytest.mark.timeout(60)
def test_multi_output_graph():
    data = sym.Variable("data")
    parts = sym.XTSliceChannel(data, num_outputs=3, name="split")
    a = sym.XTFullyConnected(parts[0], num_hidden=2, name="fa")
    b = sym.XTmul(parts[1], parts[2], name="mul")       # in_data gradient kind
    c = sym.XTexp(parts[1], name="exp")                 # out_value gradient kind; parts[1] used twice
    d = sym.XTsquare(b, name="sq")
    net = sym.Group([a, sym.XTadd(c, d, name="cd"), parts[2]])
    assert net.list_outputs() == ["fa_output", "cd_output", "split_output2"]
    check_graph_gradients(net, {"data": (2, 6)})


@pytest.mark.timeout(60)
def test_unused_output_gets_zero_gradient():
    data = sym.Variable("data")
    parts = sym.XTSliceChannel(data, num_outputs=2, name="split")
    net = sym.XTFullyConnected(parts[1], num_hidden=3, name="fc")
    exe = check_graph_gradients(net, {"data": (2, 4)})
    g = exe.grad_dict["data"].asnumpy()
    assert np.all(g[:, :2] == 0) and np.any(g[:, 2:] != 0)


@pytest.mark.timeout(60)
def test_shared_weight_and_same_input_twice():
    x = sym.Variable("x")
    w = sym.Variable("w")
    h1 = sym.XTFullyConnected(x, weight=w, num_hidden=3, no_bias=True, name="f1")
    h2 = sym.XTFullyConnected(h1, weight=w, num_hidden=3, no_bias=True, name="f2")
    net = sym.XTadd(sym.XTmul(h2, h2, name="sq"), h1, name="out")  # h2 read twice by one node
    check_graph_gradients(net, {"x": (2, 3)})


@pytest.mark.timeout(60)
def test_head_gradient_on_internal_value():
    data = sym.Variable("data")
    h = sym.XTFullyConnected(data, num_hidden=3, name="fc1")
    t = sym.XTActivation(h, act_type="tanh", name="t")
    net = sym.Group([h, t, data])  # fc1 output is both an output and consumed
    check_graph_gradients(net, {"data": (2, 3)})


@pytest.mark.timeout(60)
def test_grad_req_add_and_null():
    net = residual_block()
    rng = np.random.RandomState(1)
    reqs = {"data": "null", "fc1_weight": "add", "fc1_bias": "write", "fc2_weight": "add", "fc2_bias": "null"}
    ref = bind_f64(net, {"data": (3, 4)}, grad_req="write")
    vals = randomize(ref, rng)
    exe = bind_f64(net, {"data": (3, 4)}, grad_req=reqs)
    randomize(exe, rng, vals)
    assert exe.grad_dict["data"] is None and exe.grad_dict["fc2_bias"] is None
    og = rng.uniform(-1, 1, (3, 4))
    ref.forward(is_train=True)
    ref.backward(mx.nd.array(og, dtype="float64"))
    want = {k: v.asnumpy() for k, v in ref.grad_dict.items()}
    init = {k: rng.uniform(-1, 1, v.shape) for k, v in exe.grad_dict.items() if v is not None}
    for k, v in init.items():
        exe.grad_dict[k][:] = v
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward(mx.nd.array(og, dtype="float64"))
    np.testing.assert_allclose(exe.grad_dict["fc1_weight"].asnumpy(), init["fc1_weight"] + 2 * want["fc1_weight"],
                               rtol=1e-12)
    np.testing.assert_allclose(exe.grad_dict["fc2_weight"].asnumpy(), init["fc2_weight"] + 2 * want["fc2_weight"],
                               rtol=1e-12)
    np.testing.assert_allclose(exe.grad_dict["fc1_bias"].asnumpy(), want["fc1_bias"], rtol=1e-12)


@pytest.mark.timeout(60)
def test_grad_req_add_with_accumulating_argument():
    x = sym.Variable("x")
    net = sym.XTadd(sym.XTsquare(x, name="sq"), sym.XTexp(x, name="e"), name="out")
    exe = bind_f64(net, {"x": (5,)}, grad_req="add")
    xv = np.linspace(-1, 1, 5)
    exe.arg_dict["x"][:] = xv
    exe.grad_dict["x"][:] = 10.0
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((5,), dtype="float64"))
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), 10 + 2 * xv + np.exp(xv), rtol=1e-12)


@pytest.mark.timeout(60)
def test_argument_not_reaching_output_gets_zero_grad():
    x = sym.Variable("x")
    y = sym.Variable("y")
    net = sym.Group([sym.XTsquare(x, name="sq"), y])
    exe = bind_f64(net, {"x": (3,), "y": (2,)})
    exe.grad_dict["y"][:] = 5
    exe.arg_dict["x"][:] = [1, 2, 3]
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((3,), dtype="float64"), mx.nd.array([7, 8], dtype="float64")])
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), [2, 4, 6])
    np.testing.assert_allclose(exe.grad_dict["y"].asnumpy(), [7, 8])  # head gradient of a variable output


@pytest.mark.timeout(60)
def test_default_head_gradient_is_ones():
    x = sym.Variable("x")
    net = sym.XTsquare(x, name="sq")
    exe = bind_f64(net, {"x": (3,)})
    exe.arg_dict["x"][:] = [1, 2, 3]
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), [2, 4, 6])
    exe.backward(mx.nd.array([1, 0, 2], dtype="float64"))
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), [2, 0, 12])
    exe.backward()  # back to ones
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), [2, 4, 6])


@pytest.mark.timeout(60)
def test_loss_output_needs_no_head_gradient():
    exe = bind_f64(mlp(), {"data": (2, 3)})
    assert exe.exec_graph.head_grads == {}
    assert exe.memory_report()["head_grad_bytes"] == 0


@pytest.mark.timeout(60)
def test_batchnorm_aux_updates_only_in_training():
    data = sym.Variable("data")
    net = sym.XTBatchNorm(data, momentum=0.5, name="bn")
    assert net.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    exe = bind_f64(net, {"data": (4, 3)})
    rng = np.random.RandomState(0)
    x = rng.randn(4, 3) + 3
    exe.arg_dict["data"][:] = x
    exe.arg_dict["bn_gamma"][:] = 1
    exe.arg_dict["bn_beta"][:] = 0
    exe.aux_dict["bn_moving_mean"][:] = 0
    exe.aux_dict["bn_moving_var"][:] = 1
    exe.forward(is_train=False)
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), 0)
    out_inf = exe.outputs[0].asnumpy()
    np.testing.assert_allclose(out_inf, x / np.sqrt(1 + 1e-3), rtol=1e-12)
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), 0.5 * x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(exe.aux_dict["bn_moving_var"].asnumpy(), 0.5 + 0.5 * x.var(0), rtol=1e-12)
    exe.forward(is_train=True)
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), 0.75 * x.mean(0), rtol=1e-12)


@pytest.mark.timeout(60)
def test_dropout_mask_kept_for_backward():
    data = sym.Variable("data")
    net = sym.XTDropout(data, p=0.5, name="drop")
    exe = bind_f64(net, {"data": (50,)})
    exe.arg_dict["data"][:] = 3.0
    out = exe.forward(is_train=True)[0].asnumpy()
    exe.backward(mx.nd.ones((50,), dtype="float64"))
    g = exe.grad_dict["data"].asnumpy()
    np.testing.assert_allclose(g, out / 3.0)
    assert 0 < (out == 0).sum() < 50
    np.testing.assert_allclose(exe.forward(is_train=False)[0].asnumpy(), 3.0)
