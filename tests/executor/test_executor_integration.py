"""Integration with plexnet-ops-basic: numerical gradients of graphs built from the
standard operators (float64), and the anchor-bench networks. Skipped when an operator
is not registered."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from gradcheck import check_graph_gradients

sym = mx.sym


def _needs(*ops: str) -> None:
    reg = mx.plugins.registries().operators
    missing = [o for o in ops if o not in reg]
    if missing:
        pytest.skip(f"operators not registered (plexnet-ops-basic): {missing}")


@pytest.mark.timeout(120)
def test_mlp_standard_ops():
    _needs("FullyConnected", "Activation", "SoftmaxOutput")
    data = sym.Variable("data")
    h = sym.FullyConnected(data, num_hidden=6, name="fc1")
    h = sym.Activation(h, act_type="relu", name="relu1")
    h = sym.FullyConnected(h, num_hidden=5, name="fc2")
    h = sym.Activation(h, act_type="tanh", name="tanh2")
    h = sym.FullyConnected(h, num_hidden=3, name="fc3")
    net = sym.SoftmaxOutput(h, name="softmax")
    label = np.array([0, 2, 1, 1], dtype=np.float64)
    check_graph_gradients(net, {"data": (4, 7)}, fixed={"softmax_label": label}, loss_label="softmax_label",
                          wrt=["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc3_weight", "fc3_bias"])


@pytest.mark.timeout(300)
def test_cnn_batchnorm_pooling_standard_ops():
    _needs("Convolution", "BatchNorm", "Activation", "Pooling", "Flatten", "FullyConnected", "SoftmaxOutput")
    data = sym.Variable("data")
    h = sym.Convolution(data, kernel=(3, 3), num_filter=3, pad=(1, 1), name="conv1")
    h = sym.BatchNorm(h, fix_gamma=False, name="bn1")
    h = sym.Activation(h, act_type="tanh", name="act1")
    h = sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool1")
    h = sym.Convolution(h, kernel=(2, 2), num_filter=2, name="conv2")
    h = sym.Pooling(h, kernel=(2, 2), stride=(1, 1), pool_type="max", name="pool2")
    h = sym.Flatten(h, name="flat")
    h = sym.FullyConnected(h, num_hidden=3, name="fc")
    net = sym.SoftmaxOutput(h, name="softmax")
    label = np.array([2, 0], dtype=np.float64)
    check_graph_gradients(net, {"data": (2, 2, 6, 6)}, fixed={"softmax_label": label}, loss_label="softmax_label",
                          wrt=["data", "conv1_weight", "conv1_bias", "bn1_gamma", "bn1_beta", "conv2_weight",
                               "fc_weight"], rtol=1e-4, atol=1e-7)


@pytest.mark.timeout(120)
def test_residual_block_with_plus_standard_ops():
    _needs("Convolution", "BatchNorm", "Activation", "elemwise_add")
    data = sym.Variable("data")
    h = sym.Convolution(data, kernel=(3, 3), num_filter=2, pad=(1, 1), no_bias=True, name="c1")
    h = sym.BatchNorm(h, fix_gamma=False, name="b1")
    h = sym.Activation(h, act_type="tanh", name="a1")
    h = sym.Convolution(h, kernel=(3, 3), num_filter=2, pad=(1, 1), no_bias=True, name="c2")
    out = sym.Activation(h + data, act_type="sigmoid", name="out")
    check_graph_gradients(out, {"data": (2, 2, 4, 4)}, rtol=1e-4, atol=1e-7)


@pytest.mark.timeout(120)
def test_multi_output_standard_ops():
    _needs("SliceChannel", "FullyConnected", "elemwise_mul", "_plus_scalar", "Activation")
    data = sym.Variable("data")
    parts = sym.SliceChannel(data, num_outputs=2, axis=1, name="split")
    a = sym.FullyConnected(parts[0], num_hidden=3, name="fa")
    b = parts[1] * parts[0] + 1.0
    net = sym.Group([a, sym.Activation(b, act_type="tanh", name="tb"), parts[1]])
    check_graph_gradients(net, {"data": (2, 4)})


@pytest.mark.timeout(300)
@pytest.mark.parametrize("which", ["mlp", "lenet"])
def test_anchor_networks_train(which):
    """The anchor-bench networks bind, plan and learn (loss goes down)."""
    _needs("FullyConnected", "Activation", "SoftmaxOutput", "Convolution", "Pooling", "Flatten")
    data = sym.Variable("data")
    if which == "mlp":
        h = sym.Activation(sym.FullyConnected(data, num_hidden=32, name="fc1"), act_type="relu")
        h = sym.FullyConnected(h, num_hidden=10, name="fc2")
        shape, lr = (32, 20), 0.5
    else:
        h = sym.Convolution(data, kernel=(5, 5), num_filter=4, name="conv1")
        h = sym.Activation(h, act_type="tanh")
        h = sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
        h = sym.Flatten(h)
        h = sym.FullyConnected(h, num_hidden=10, name="fc1")
        shape, lr = (16, 1, 12, 12), 0.5
    net = sym.SoftmaxOutput(h, name="softmax")
    exe = net.simple_bind(mx.cpu(), data=shape)
    rng = np.random.RandomState(0)
    for name, arr in exe.arg_dict.items():
        if name not in ("data", "softmax_label"):
            arr[:] = rng.uniform(-0.1, 0.1, arr.shape)
    X = rng.rand(*shape).astype("f4")
    Y = rng.randint(0, 10, shape[0]).astype("f4")
    exe.arg_dict["data"][:] = X
    exe.arg_dict["softmax_label"][:] = Y
    params = [n for n in exe.arg_dict if n not in ("data", "softmax_label")]

    def loss() -> float:
        p = exe.forward(is_train=False)[0].asnumpy()
        return float(-np.log(p[np.arange(len(Y)), Y.astype(int)] + 1e-12).mean())

    before = loss()
    for _ in range(60):
        exe.forward(is_train=True)
        exe.backward()
        for n in params:
            w = exe.arg_dict[n]
            w -= lr / shape[0] * exe.grad_dict[n]
    assert loss() < before * 0.8
    r = exe.memory_report()
    assert r["planned_bytes"] < r["naive_bytes"]
    exe.plan.verify(exe.exec_graph.entries)
