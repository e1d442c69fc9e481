"""Row_sparse gradients in Gluon (``Embedding(sparse_grad=True)``, ``Parameter(grad_stype=
'row_sparse')``), checked side by side with MXNet 1.9.1: the gradient holds the looked-up
rows, and the Trainer's update is lazy (only those rows change, momentum and weight decay
included), imperative and hybridized alike."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, gluon, nd

# MXNet 1.9.1's weights after two steps of the script below (rows 0, 1, 2, 7)
MXNET_ROWS = [[0.5, 0.5, 0.5, 0.5],
              [0.49855, 0.20865, -0.08125, -0.37115],
              [0.49855, -0.08125, -0.66105, -1.24085],
              [0.49855, 0.20865, -0.08125, -0.37115]]


@pytest.mark.parametrize("hybridize", [False, True])
def test_embedding_sparse_grad_and_lazy_sgd_as_mxnet(hybridize: bool) -> None:
    net = gluon.nn.Embedding(10, 4, sparse_grad=True)
    net.initialize(mx.init.Constant(0.5))
    if hybridize:
        net.hybridize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    x = nd.array([1, 2, 2, 7])
    for _ in range(2):
        with autograd.record():
            y = (net(x) * nd.arange(4).reshape((1, 4))).sum()
        y.backward()
        g = net.weight.grad()
        assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [1, 2, 7]
        np.testing.assert_allclose(g.asnumpy()[[1, 2, 7]], [[0, 1, 2, 3], [0, 2, 4, 6], [0, 1, 2, 3]])
        tr.step(1)
    np.testing.assert_allclose(net.weight.data().asnumpy()[[0, 1, 2, 7]], MXNET_ROWS, rtol=1e-5)
    assert (net.weight.data().asnumpy()[[3, 4, 5, 6, 8, 9]] == 0.5).all()   # rows never looked up


def test_row_sparse_grad_parameter_zero_grad_and_add() -> None:
    p = gluon.Parameter("w", shape=(3, 2), grad_stype="row_sparse", grad_req="add")
    p.initialize(mx.init.One())
    assert p.grad().stype == "row_sparse"
    p.zero_grad()
    assert p.grad().indices.asnumpy().tolist() == []        # MXNet: no stored rows
    for rows in ([0], [2, 0]):
        with autograd.record():
            y = nd.take(p.data(), nd.array(rows)).sum()
        y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), [[2, 2], [0, 0], [1, 1]])
    with pytest.raises(mx.PlexnetError, match="row_sparse"):
        gluon.Parameter("s", shape=(2,), stype="row_sparse")  # sparse weights stay refused
