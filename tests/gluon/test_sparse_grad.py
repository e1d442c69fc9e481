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


def test_row_sparse_parameter_as_mxnet() -> None:
    # MXNet 1.9.1's test_sparse_parameter, run side by side (same answers)
    p = gluon.Parameter("weight", shape=(10, 10), stype="row_sparse", grad_stype="row_sparse")
    p.initialize(init="xavier", ctx=[mx.cpu(0), mx.cpu(1)])
    row_id = nd.arange(0, 10, ctx=mx.cpu(1))
    assert len(p.list_grad()) == 2
    with pytest.raises(RuntimeError, match="no Trainer"):
        p.list_row_sparse_data(row_id)
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        p.data()
    gluon.Trainer([p], "sgd")
    assert len(p.list_row_sparse_data(row_id)) == 2
    w = p.row_sparse_data(row_id)
    assert w.context == mx.cpu(1) and w.shape == (10, 10) and w.stype == "row_sparse"
    assert p.var().name == "weight" and p.var().attr("__storage_type__") == "1"
    assert p.grad(mx.cpu(0)).stype == "row_sparse"
    w2 = p.row_sparse_data(nd.array([3, 1, 3], ctx=mx.cpu(0)))
    assert w2.indices.asnumpy().tolist() == [1, 3]
    full = p._check_and_get(p._data, mx.cpu(0)).asnumpy()
    np.testing.assert_array_equal(w2.asnumpy()[[1, 3]], full[[1, 3]])
    assert p._reduce().stype == "row_sparse"                 # what save_parameters writes
    assert p._data[0].stype == "row_sparse"                  # the stored value, as MXNet's
    with autograd.record():                                  # gradients flow to the weight
        y = p.row_sparse_data(row_id) * 2
    y.backward()
    assert p.grad(mx.cpu(1)).stype == "row_sparse"
    np.testing.assert_allclose(p.grad(mx.cpu(1)).asnumpy(), np.full((10, 10), 2.0))
    with pytest.raises(mx.PlexnetError, match="csr"):
        gluon.Parameter("c", shape=(2, 2), stype="csr")


def test_row_sparse_weight_lazy_update_and_save_load(tmp_path) -> None:
    p = gluon.Parameter("w", shape=(5, 2), stype="row_sparse", grad_stype="row_sparse")
    p.initialize(mx.init.One())
    tr = gluon.Trainer([p], "sgd", {"learning_rate": 0.5})
    p.grad()[:] = mx.nd.sparse.row_sparse_array((np.ones((2, 2), "f4"), [1, 3]), shape=(5, 2))
    p._data[0]._ag[0].fresh = True                            # as a backward pass would mark it
    tr.step(1)
    np.testing.assert_allclose(p.row_sparse_data(nd.arange(5)).asnumpy(), [[1, 1], [.5, .5], [1, 1], [.5, .5], [1, 1]])
    params = gluon.ParameterDict("net_")
    params.get("w0", shape=(3, 2))
    params.get("w1", shape=(3, 2), stype="row_sparse")
    params.initialize(mx.init.One(), ctx=mx.cpu())
    gluon.Trainer(params, "sgd")
    params.save(str(tmp_path / "t.params"))
    params.load(str(tmp_path / "t.params"), mx.cpu())
    np.testing.assert_allclose(params.get("w1").row_sparse_data(nd.arange(3)).asnumpy(), np.ones((3, 2)))


def test_blocks_with_row_sparse_weights_refuse_as_mxnet() -> None:
    # MXNet 1.9.1's test_sparse_symbol_block / test_sparse_hybrid_block
    data, weight, bias = mx.sym.var("data"), mx.sym.var("weight", stype="row_sparse"), mx.sym.var("bias")
    out = mx.sym.broadcast_add(mx.sym.dot(data, weight), bias)
    with pytest.raises(AssertionError, match="row_sparse"):
        gluon.SymbolBlock(out, data)
    params = gluon.ParameterDict("net_")
    params.get("weight", shape=(5, 5), stype="row_sparse", dtype="float32")
    params.get("bias", shape=(5,), dtype="float32")
    net = gluon.nn.Dense(5, params=params)
    net.initialize()
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        net(nd.ones((2, 5)))


def test_gradient_through_row_sparse_data_as_mxnet() -> None:
    # MXNet 1.9.1 (pulls the rows into the variable itself): the weight's gradient is the
    # whole gradient, row_sparse with the columns the csr stores (an explicit zero included)
    p = gluon.Parameter("w", shape=(5, 2), stype="row_sparse", grad_stype="row_sparse")
    p.initialize(mx.init.Constant(1))
    tr = gluon.Trainer([p], "sgd", {"learning_rate": 0.1})
    csr = nd.sparse.csr_matrix(([1., 0., 3.], [1, 3, 1], [0, 2, 2, 3]), shape=(3, 5))
    with autograd.record():
        w = p.row_sparse_data(nd.array([1, 3]))
        y = nd.sparse.dot(csr, w)
    assert w.indices.asnumpy().tolist() == [1, 3]
    y.backward()
    g = p.grad()
    assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [1, 3]
    np.testing.assert_allclose(g.asnumpy(), [[0, 0], [4, 4], [0, 0], [0, 0], [0, 0]])
    tr.step(1)
    np.testing.assert_allclose(p.row_sparse_data(nd.arange(5)).asnumpy(),
                               [[1, 1], [0.6, 0.6], [1, 1], [1, 1], [1, 1]], rtol=1e-6)
    # a dense gradient array: every row (MXNet: w * 2 with a dense head gradient)
    q = gluon.Parameter("q", shape=(5, 2), stype="row_sparse")
    q.initialize(mx.init.Constant(1))
    gluon.Trainer([q], "sgd")
    with autograd.record():
        y = q.row_sparse_data(nd.array([1, 3])) * 2
    y.backward()
    assert q.grad().stype == "default"
    np.testing.assert_allclose(q.grad().asnumpy(), np.full((5, 2), 2.0))


def test_contrib_sparse_embedding_as_mxnet() -> None:
    # MXNet 1.9.1: row_sparse weight and gradient; the gradient holds the looked-up rows
    # (zero or not), SGD changes only them
    net = gluon.contrib.nn.SparseEmbedding(6, 2)
    net.initialize(mx.init.Constant(0.5))
    assert (net.weight._stype, net.weight._grad_stype) == ("row_sparse", "row_sparse")
    assert repr(net) == "SparseEmbedding(6 -> 2, float32)"
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = nd.array([4, 1, 1])
    for _ in range(2):
        with autograd.record():
            y = net(x)
        assert y.stype == "default"
        y.backward(nd.array([[1, 2], [0, 0], [3, 3]]))
        g = net.weight.grad()
        assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [1, 4]
        np.testing.assert_allclose(g.asnumpy()[[1, 4]], [[3, 3], [1, 2]])
        tr.step(1)
    w = net.weight.row_sparse_data(nd.arange(6)).asnumpy()
    np.testing.assert_allclose(w, [[0.5, 0.5], [-0.1, -0.1], [0.5, 0.5], [0.5, 0.5], [0.3, 0.1], [0.5, 0.5]],
                               rtol=1e-5, atol=1e-6)
    with autograd.record():
        y = net(nd.array([2, 3]))
    y.backward(nd.zeros((2, 2)))                    # zero gradients: the rows are still stored
    assert net.weight.grad().indices.asnumpy().tolist() == [2, 3]
