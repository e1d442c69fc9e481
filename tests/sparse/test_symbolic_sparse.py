"""Symbolic sparse storage: mx.sym.sparse, storage types in bind/simple_bind, the sparse
executor's forward/backward, check_symbolic_* with sparse inputs, and clear errors for bad
storage types (docs/sparse.md, "Symbolic sparse storage")."""
import json

import numpy as np
import pytest

import plexnet as mx
from plexnet.base import PlexnetError
from plexnet.test_utils import (assert_almost_equal, check_numeric_gradient, check_symbolic_backward,
                                check_symbolic_forward, rand_ndarray)

CSR = np.array([[0, 1.5, 0, 0, 2], [0, 0, 0, 0, 0], [3, 0, 0, 0, 0], [0, 0, 0, 1, 0]], dtype=np.float32)
W = (np.arange(15, dtype=np.float32).reshape(5, 3) - 7) / 4


def test_namespace_has_mxnets_72_names_and_dense_nodes():
    names = [n for n in dir(mx.sym.sparse) if not n.startswith("_")]
    assert len(names) == 72 and mx.symbol.sparse is mx.sym.sparse
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    s = mx.sym.sparse.ElementWiseSum(a, b)
    assert json.loads(s.tojson())["nodes"][-1]["op"] == "add_n" and s.name.startswith("elementwisesum")
    r = mx.sym.sparse.retain(a, b)
    assert json.loads(r.tojson())["nodes"][-1]["op"] == "_sparse_retain" and r.name.startswith("retain")
    assert r.list_arguments() == ["a", "b"]


def test_variable_stype_attribute():
    assert mx.sym.Variable("x", stype="csr").list_attr() == {"__storage_type__": "2"}
    assert mx.sym.Variable("x", stype="row_sparse").list_attr() == {"__storage_type__": "1"}
    with pytest.raises(ValueError, match="Variable 'x': unknown storage type 'dense'"):
        mx.sym.Variable("x", stype="dense")


def test_simple_bind_storage_types():
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    e = mx.sym.sparse.dot(x, w).simple_bind(mx.cpu(), x=(4, 5), w=(5, 3), stype_dict={"w": "row_sparse"})
    assert {k: v.stype for k, v in e.arg_dict.items()} == {"x": "csr", "w": "row_sparse"}
    assert {k: v.stype for k, v in e.grad_dict.items()} == {"x": "default", "w": "row_sparse"}
    assert isinstance(e, mx.executor.Executor)   # as every MXNet executor
    assert e.outputs[0].stype == "default"


def test_bind_keeps_sparse_args_and_runs_sparse_kernels():
    x, w = mx.sym.Variable("x"), mx.sym.Variable("w")
    xs = mx.nd.array(CSR).tostype("csr")
    e = mx.sym.sparse.dot(x, w, transpose_a=True).bind(mx.cpu(), {"x": xs, "w": mx.nd.array(W[:4])})
    assert e.arg_dict["x"].stype == "csr"
    o = e.forward()[0]
    assert o.stype == "row_sparse" and o.indices.asnumpy().tolist() == [0, 1, 3, 4]
    assert_almost_equal(o.asnumpy(), CSR.T @ W[:4])


def test_dot_backward_row_sparse_gradient_rows():
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    e = mx.sym.sparse.dot(x, w).simple_bind(mx.cpu(), x=(4, 5), w=(5, 3))
    e.arg_dict["x"][:] = mx.nd.array(CSR).tostype("csr")
    e.arg_dict["w"][:] = mx.nd.array(W)
    out = e.forward(is_train=True)[0]
    assert_almost_equal(out.asnumpy(), CSR @ W, rtol=1e-5, atol=1e-6)
    og = np.ones((4, 3), np.float32)
    og[0] = 0  # rows 1 and 4 of the gradient are zero, but the csr uses those columns: kept (MXNet)
    e.backward(mx.nd.array(og))
    g = e.grad_dict["w"]
    assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [0, 1, 3, 4]
    assert_almost_equal(g.asnumpy(), CSR.T @ og)


def test_embedding_sparse_grad():
    d = mx.sym.Variable("d")
    for y in (mx.sym.Embedding(d, input_dim=6, output_dim=2, sparse_grad=True, name="emb"),):
        e = y.simple_bind(mx.cpu(), grad_req={"d": "null", "emb_weight": "write"}, d=(4,))
        e.arg_dict["d"][:] = mx.nd.array([5, 1, 1, 0])
        e.arg_dict["emb_weight"][:] = mx.nd.array(np.arange(12, dtype=np.float32).reshape(6, 2))
        e.forward(is_train=True)
        e.backward(mx.nd.ones((4, 2)))
        g = e.grad_dict["emb_weight"]
        assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [0, 1, 5]
        assert g.asnumpy()[:, 0].tolist() == [1, 2, 0, 0, 0, 1]


def test_grad_req_add_on_row_sparse_gradient():
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    y = mx.sym.sparse.dot(x, w)
    g = mx.nd.sparse.zeros("row_sparse", (5, 3))
    e = y.bind(mx.cpu(), {"x": mx.nd.array(CSR).tostype("csr"), "w": mx.nd.array(W)}, args_grad={"w": g},
               grad_req={"x": "null", "w": "add"})
    for _ in range(2):
        e.forward(is_train=True)
        e.backward(mx.nd.ones((4, 3)))
    assert g.stype == "row_sparse"
    assert_almost_equal(g.asnumpy(), 2 * CSR.T @ np.ones((4, 3), np.float32))


def test_inference_and_training_agree_and_storage_fallback():
    r = mx.sym.Variable("r", stype="row_sparse")
    y = mx.sym.sparse.sum(mx.sym.sparse.exp(r) * 2, axis=1)  # no sparse kernel: dense fallback
    a = rand_ndarray((4, 3), "row_sparse", density=0.5)
    e = y.bind(mx.cpu(), {"r": a}, args_grad={"r": mx.nd.zeros((4, 3))})
    inf = e.forward()[0].asnumpy()
    tr = e.forward(is_train=True)[0].asnumpy()
    assert_almost_equal(inf, tr)
    assert_almost_equal(inf, (np.exp(a.asnumpy()) * 2).sum(axis=1))
    e.backward(mx.nd.ones((4,)))
    assert_almost_equal(e.grad_dict["r"].asnumpy(), 2 * np.exp(a.asnumpy()), rtol=1e-5)


def test_check_symbolic_helpers_with_sparse_inputs():
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    y = mx.sym.sparse.dot(x, w)
    xs = mx.nd.array(CSR).tostype("csr")
    outs = check_symbolic_forward(y, {"x": xs, "w": W}, [CSR @ W])
    assert outs[0].stype == "default"
    og = np.ones((4, 3), np.float32)
    grads = check_symbolic_backward(y, {"x": xs, "w": W}, [og], {"w": CSR.T @ og}, grad_req={"x": "null", "w": "write"},
                                    grad_stypes={"w": "row_sparse"})
    assert grads["w"].stype == "row_sparse"
    r = mx.sym.Variable("r", stype="row_sparse")
    check_numeric_gradient(mx.sym.sparse.square(r), {"r": rand_ndarray((3, 4), "row_sparse", density=0.5)},
                           grad_stype_dict={"r": "row_sparse"})


def test_retain_symbolic_forward_backward():
    r, i = mx.sym.Variable("r"), mx.sym.Variable("i")
    a = mx.nd.array([[1, 2], [0, 0], [3, 4], [5, 6]]).tostype("row_sparse")
    g = mx.nd.zeros((4, 2))
    e = mx.sym.sparse.retain(r, i).bind(mx.cpu(), {"r": a, "i": mx.nd.array([0, 3], dtype="int64")},
                                        args_grad={"r": g}, grad_req={"r": "write", "i": "null"})
    o = e.forward()[0]
    assert o.stype == "row_sparse" and o.asnumpy().tolist() == [[1, 2], [0, 0], [0, 0], [5, 6]]
    e.forward(is_train=True)
    e.backward(mx.nd.ones((4, 2)))
    assert g.asnumpy().tolist() == [[1, 1], [0, 0], [0, 0], [1, 1]]


def test_dense_graphs_keep_the_dense_executor():
    x = mx.sym.Variable("x")
    e = mx.sym.relu(x).simple_bind(mx.cpu(), x=(2, 2))
    assert type(e).__name__ == "Executor"
    e = mx.sym.relu(x).simple_bind(mx.cpu(), x=(2, 2), stype_dict={"x": "csr"})
    assert type(e).__name__ == "SparseExecutor" and e.outputs[0].stype == "csr"


# -- failures name the operator, the argument and the storage type ------------------------------------------

def test_retain_of_dense_data_is_refused():
    r, i = mx.sym.Variable("r"), mx.sym.Variable("i")
    y = mx.sym.sparse.retain(r, i)
    with pytest.raises(PlexnetError, match=r"_sparse_retain .*argument 'data' has storage type default"):
        y.bind(mx.cpu(), {"r": mx.nd.ones((3, 2)), "i": mx.nd.array([0]).tostype("row_sparse")})


def test_adagrad_with_dense_grad_is_refused():
    w, g, h = (mx.sym.Variable(n) for n in ("w", "g", "h"))
    y = mx.sym.sparse.adagrad_update(w, g, h, lr=0.1)
    with pytest.raises(PlexnetError, match=r"_sparse_adagrad_update .*argument 'grad' has storage type default"):
        y.bind(mx.cpu(), {"w": mx.nd.ones((3, 2)).tostype("row_sparse"), "g": mx.nd.ones((3, 2)),
                          "h": mx.nd.ones((3, 2))})
    with pytest.raises(PlexnetError, match=r"_sparse_adagrad_update: argument 'grad' has storage type default"):
        y.bind(mx.cpu(), {"w": mx.nd.ones((3, 2)), "g": mx.nd.ones((3, 2)), "h": mx.nd.ones((3, 2))}).forward()[0].asnumpy()


def test_adagrad_symbolic_with_row_sparse_grad():
    w, g, h = (mx.sym.Variable(n) for n in ("w", "g", "h"))
    y = mx.sym.sparse.adagrad_update(w, g, h, lr=0.5)
    grad = mx.nd.array([[0, 0], [2, 2], [0, 0]]).tostype("row_sparse")
    e = y.bind(mx.cpu(), {"w": mx.nd.ones((3, 2)), "g": grad, "h": mx.nd.zeros((3, 2))})
    out = e.forward()[0].asnumpy()
    assert out[0].tolist() == [1, 1] and out[2].tolist() == [1, 1]
    assert_almost_equal(out[1], np.full(2, 1 - 0.5 * 2 / (2 + 1e-7)))


def test_cast_storage_between_sparse_types_is_refused():
    x = mx.sym.Variable("x", stype="csr")
    y = mx.sym.sparse.cast_storage(x, stype="row_sparse")
    with pytest.raises(PlexnetError, match=r"cast_storage .*argument 'data' has storage type csr"):
        y.simple_bind(mx.cpu(), x=(3, 3))


def test_bad_stype_dict():
    x = mx.sym.Variable("x")
    with pytest.raises(PlexnetError, match=r"stype_dict\['x'\]: unknown storage type 'sparse'"):
        mx.sym.relu(x).simple_bind(mx.cpu(), x=(2, 2), stype_dict={"x": "sparse"})
    with pytest.raises(ValueError, match="stype_dict key 'y' is not an input"):
        mx.sym.relu(x).simple_bind(mx.cpu(), x=(2, 2), stype_dict={"y": "csr"})


def test_reshape_of_sparse_executor_is_refused():
    x = mx.sym.Variable("x", stype="csr")
    e = mx.sym.relu(x).simple_bind(mx.cpu(), x=(2, 2))
    with pytest.raises(PlexnetError, match="reshape: not supported for executors with sparse"):
        e.reshape(x=(3, 2))


def test_batchnorm_fix_gamma_with_sparse_input_is_refused():
    d = mx.sym.Variable("data", stype="row_sparse")
    args = [mx.nd.ones((2, 3)).tostype("row_sparse"), mx.nd.ones(3), mx.nd.zeros(3)]
    aux = [mx.nd.zeros(3), mx.nd.ones(3)]
    with pytest.raises(PlexnetError, match=r"BatchNorm .*fix_gamma=True is not supported for sparse inputs"):
        mx.sym.BatchNorm(d, fix_gamma=True).bind(mx.cpu(), args=args, aux_states=aux)
    e = mx.sym.BatchNorm(d, fix_gamma=False).bind(mx.cpu(), args=args, aux_states=aux)
    assert e.forward()[0].shape == (2, 3)


def test_contrib_sparse_embedding_row_sparse_grad():
    d = mx.sym.Variable("d")
    y = mx.sym.contrib.SparseEmbedding(d, input_dim=5, output_dim=2, deterministic=True, name="e")
    e = y.simple_bind(mx.cpu(), grad_req={"d": "null", "e_weight": "write"}, d=(3,))
    assert e.grad_dict["e_weight"].stype == "row_sparse" and e.arg_dict["e_weight"].stype == "default"
    e.arg_dict["d"][:] = mx.nd.array([4, 0, 4])
    e.forward(is_train=True)
    e.backward(mx.nd.ones((3, 2)))
    g = e.grad_dict["e_weight"]
    assert g.indices.asnumpy().tolist() == [0, 4] and g.asnumpy()[:, 0].tolist() == [1, 0, 0, 0, 2]


def test_square_sum_and_quadratic_keep_sparse_storage():
    a = mx.nd.array([[1, 2], [0, 0], [3, -4]]).tostype("row_sparse")
    o = mx.nd._internal._square_sum(a, axis=1, keepdims=True)
    assert o.stype == "row_sparse" and o.asnumpy().ravel().tolist() == [5, 0, 25]
    assert mx.nd._internal._square_sum(a, axis=0).stype == "default"
    c = mx.nd.array([[0, 2], [1, 0]]).tostype("csr")
    q = mx.nd.contrib.quadratic(c, a=1, b=1, c=0)
    assert q.stype == "csr" and q.asnumpy().tolist() == [[0, 6], [2, 0]]
    assert mx.nd.contrib.quadratic(c, a=1, b=1, c=1).stype == "default"
    x = mx.sym.Variable("x", stype="csr")
    o = mx.sym.contrib.quadratic(x, a=1, b=1).bind(mx.cpu(), {"x": c}).forward()[0]
    assert o.stype == "csr" and o.asnumpy().tolist() == [[0, 6], [2, 0]]


def test_module_row_sparse_weight_fit_and_checkpoint(tmp_path):
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    it = mx.io.LibSVMIter(data_libsvm=os.path.join(here, "fixtures", "data.libsvm"), data_shape=(10,), batch_size=3)
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", shape=(10, 1), stype="row_sparse", init=mx.init.Constant(0.05))
    b = mx.sym.Variable("bias", shape=(1,))
    net = mx.sym.LogisticRegressionOutput(mx.sym.broadcast_add(mx.sym.sparse.dot(x, w), b),
                                          label=mx.sym.Variable("softmax_label"))
    mod = mx.mod.Module(net, data_names=["data"], label_names=["softmax_label"])
    mod.fit(it, num_epoch=3, kvstore=mx.kv.create("local"), optimizer="sgd",
            optimizer_params={"learning_rate": 0.5}, eval_metric="mse", initializer=mx.init.Constant(0.05),
            sparse_row_id_fn=lambda batch: {"weight": batch.data[0].indices})
    args, _ = mod.get_params()
    assert args["weight"].stype == "row_sparse"
    wv = args["weight"].asnumpy().ravel()
    assert np.allclose(wv[6:], 0.05) and not np.allclose(wv[:6], 0.05)  # columns 6.. never used: untouched
    prefix = str(tmp_path / "lc")
    mod.save_checkpoint(prefix, 3)
    _, arg, _ = mx.model.load_checkpoint(prefix, 3)
    assert arg["weight"].stype == "row_sparse" and np.allclose(arg["weight"].asnumpy().ravel(), wv)


def test_prepare_without_kvstore_warns():
    x = mx.sym.Variable("data", stype="csr")
    w = mx.sym.Variable("weight", shape=(4, 1), stype="row_sparse")
    net = mx.sym.sparse.dot(x, w)
    mod = mx.mod.Module(net, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 4))])
    mod.init_params(initializer=mx.init.Constant(0.1))
    mod.init_optimizer(kvstore=None)
    batch = mx.io.DataBatch([mx.nd.ones((2, 4)).tostype("csr")])
    with pytest.warns(UserWarning, match="not updated in the KVStore"):
        mod.prepare(batch, sparse_row_id_fn=lambda b: {"weight": mx.nd.array([0], dtype="int64")})


def test_dynamic_shape_operator_after_sparse_input():
    x, m = mx.sym.Variable("x", stype="row_sparse"), mx.sym.Variable("m")
    y = mx.sym.contrib.boolean_mask(mx.sym.sparse.square(x), m)
    a = mx.nd.array([[1, 2], [0, 0], [3, 4]]).tostype("row_sparse")
    e = y.bind(mx.cpu(), {"x": a, "m": mx.nd.array([1, 0, 1])}, args_grad={"x": mx.nd.zeros((3, 2))},
               grad_req={"x": "write", "m": "null"})
    assert e.forward()[0].asnumpy().tolist() == [[1, 4], [9, 16]]
    e.forward(is_train=True)
    e.backward(mx.nd.ones((2, 2)))
    assert e.grad_dict["x"].asnumpy().tolist() == [[2, 4], [0, 0], [6, 8]]


def test_sparse_executor_has_the_executor_inspection_methods():
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    exe = (mx.sym.sparse.dot(x, w) + 1).simple_bind(mx.cpu(), x=(4, 5), w=(5, 3), stype_dict={"x": "csr"})
    assert exe.get_optimized_symbol().list_arguments() == ["x", "w"]
    assert isinstance(exe.memory_report(), dict)
