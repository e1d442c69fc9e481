"""autograd's gradients equal the symbolic executor's on the same networks.

Each network is a Symbol; the imperative side runs the same operators node by node
through ``plexnet.nd`` under ``autograd.record()`` (so the tape sees exactly what the
executor computes), then both backward with the same head gradients.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import plexnet as mx
from plexnet import autograd, nd


def run_imperative(sym: Any, values: dict[str, Any]) -> list:
    """Evaluate ``sym`` operator by operator through ``nd`` (recorded when recording)."""
    from plexnet.executor import IndexedGraph
    g = IndexedGraph(sym._outputs)
    vals: dict[int, Any] = {}
    for nid, node in enumerate(g.nodes):
        if node.op is None:
            vals[g.row_ptr[nid]] = values[node.name]
            continue
        ins = [vals[e] for e in g.inputs[nid]]
        out = getattr(nd, node.op)(*ins, **node.params())
        outs = out if isinstance(out, list) else [out]
        for k, o in enumerate(outs):
            vals[g.row_ptr[nid] + k] = o
    return [vals[e] for e in g.outputs]


def compare(sym: Any, shapes: dict[str, tuple], seed: int = 0, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    rng = np.random.RandomState(seed)
    exe = sym.simple_bind(mx.cpu(), grad_req="write", **shapes)
    vals = {}
    for name, arr in exe.arg_dict.items():
        vals[name] = rng.uniform(-1, 1, arr.shape).astype(np.float32)
        arr[:] = vals[name]
    auxv = {}
    for name, arr in exe.aux_dict.items():
        auxv[name] = (np.ones if name.endswith("var") else np.zeros)(arr.shape).astype(np.float32)
        arr[:] = auxv[name]
    outs = exe.forward(is_train=True)
    ogs = [rng.uniform(-1, 1, o.shape).astype(np.float32) for o in outs]
    exe.backward([nd.array(o) for o in ogs])
    arrays = {k: nd.array(v) for k, v in {**vals, **auxv}.items()}
    for k in vals:
        arrays[k].attach_grad()
    with autograd.record():
        iouts = run_imperative(sym, arrays)
    autograd.backward(iouts, [nd.array(o) for o in ogs])
    for o, io in zip(outs, iouts):
        np.testing.assert_allclose(io.asnumpy(), o.asnumpy(), rtol=rtol, atol=atol)
    for k in vals:
        np.testing.assert_allclose(arrays[k].grad.asnumpy(), exe.grad_dict[k].asnumpy(), rtol=rtol, atol=atol,
                                   err_msg=k)


def test_mlp() -> None:
    x = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=16, name="fc1"), act_type="relu")
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=8, name="fc2"), act_type="tanh")
    out = mx.sym.FullyConnected(h, num_hidden=4, name="fc3")
    compare(out, {"data": (5, 10)})


def test_lenet() -> None:
    x = mx.sym.Variable("data")
    c = mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, name="c1")
    c = mx.sym.Pooling(mx.sym.Activation(c, act_type="tanh"), kernel=(2, 2), stride=(2, 2), pool_type="max")
    c = mx.sym.Convolution(c, kernel=(3, 3), num_filter=6, name="c2")
    c = mx.sym.Pooling(mx.sym.Activation(c, act_type="relu"), kernel=(2, 2), stride=(2, 2), pool_type="avg")
    f = mx.sym.FullyConnected(mx.sym.Flatten(c), num_hidden=10, name="fc")
    compare(f, {"data": (2, 1, 14, 14)})


def test_resnet_basic_block() -> None:
    x = mx.sym.Variable("data")
    b = mx.sym.BatchNorm(x, fix_gamma=False, name="bn1")
    b = mx.sym.Activation(b, act_type="relu")
    b = mx.sym.Convolution(b, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, name="conv1")
    b = mx.sym.BatchNorm(b, fix_gamma=False, name="bn2")
    b = mx.sym.Activation(b, act_type="relu")
    b = mx.sym.Convolution(b, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, name="conv2")
    out = b + x
    compare(out, {"data": (2, 4, 6, 6)}, rtol=1e-3, atol=1e-4)


def test_shared_input_and_softmax_loss() -> None:
    x = mx.sym.Variable("data")
    w = mx.sym.Variable("w")
    a = mx.sym.FullyConnected(x, w, num_hidden=3, no_bias=True, name="a")
    b = mx.sym.FullyConnected(x, w, num_hidden=3, no_bias=True, name="b")
    out = mx.sym.log_softmax(a * b + a)
    compare(out, {"data": (4, 5)})


def test_lstm() -> None:
    from plexnet.plugins import registries
    if "RNN" not in registries().operators:
        pytest.skip("the RNN operator is not installed")
    x = mx.sym.Variable("data")
    out = mx.sym.RNN(x, mx.sym.Variable("params"), mx.sym.Variable("state"), mx.sym.Variable("state_cell"),
                     state_size=5, num_layers=1, mode="lstm", name="lstm")
    out = mx.sym.FullyConnected(out, num_hidden=3, flatten=False, name="fc")
    compare(out, {"data": (4, 2, 3), "state": (1, 2, 5), "state_cell": (1, 2, 5)}, rtol=1e-3, atol=1e-5)
