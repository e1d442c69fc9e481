"""Symbolic sparse cases run on MXNet 1.9.1 (fixtures/gen_symbolic_sparse_fixtures.py records
them) and on plexnet (test_symbolic_sparse_mxnet.py compares). Each case takes the ``mx``
module and returns a JSON-able dict: storage types, dense values, row ids."""
import json

import numpy as np

CSR = np.array([[0, 1.5, 0, 0, 2], [0, 0, 0, 0, 0], [3, 0, 0, 0, 0], [0, 0, 0, 1, 0]], dtype=np.float32)
W = (np.arange(15, dtype=np.float32).reshape(5, 3) - 7) / 4
RSP = np.array([[1, 2], [0, 0], [3, -4], [0, 0]], dtype=np.float32)
RSP2 = np.array([[0, 0], [5, 6], [-1, 1], [0, 0]], dtype=np.float32)


def _st(d):
    return {k: (None if v is None else v.stype) for k, v in d.items()}


def _val(a):
    return a.asnumpy().tolist()


def _rows(a):
    return a.indices.asnumpy().tolist() if a.stype == "row_sparse" else None


def names(mx):
    with mx.name.NameManager():  # node names count from 0 whatever ran before
        return _names(mx)


def _names(mx):
    out = {}
    for n in sorted(x for x in dir(mx.sym.sparse) if not x.startswith("_") and callable(getattr(mx.sym.sparse, x))):
        if n[0].isupper() and n not in ("ElementWiseSum", "Embedding", "FullyConnected", "LinearRegressionOutput",
                                        "LogisticRegressionOutput", "MAERegressionOutput"):
            continue  # helper classes of MXNet's generated module
        out[n] = True
    simple = {}
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    for n in ("abs", "relu", "sigmoid", "stop_gradient", "make_loss", "zeros_like", "sum", "mean", "norm"):
        s = getattr(mx.sym.sparse, n)(a)
        simple[n] = [json.loads(s.tojson())["nodes"][-1]["op"], s.name]
    for n in ("elemwise_add", "broadcast_minus", "broadcast_plus", "dot", "retain", "ElementWiseSum", "add_n",
              "concat"):
        s = getattr(mx.sym.sparse, n)(a, b)
        simple[n] = [json.loads(s.tojson())["nodes"][-1]["op"], s.name]
    s = mx.sym.sparse.slice(a, begin=(0,), end=(1,))
    simple["slice"] = [json.loads(s.tojson())["nodes"][-1]["op"], s.name]
    s = mx.sym.sparse.cast_storage(a, stype="csr")
    simple["cast_storage"] = [json.loads(s.tojson())["nodes"][-1]["op"], s.name]
    return {"names": sorted(out), "nodes": simple,
            "var_attr": mx.sym.Variable("x", stype="csr").list_attr(),
            "var_attr_rsp": mx.sym.Variable("x", stype="row_sparse").list_attr()}


def simple_bind_stypes(mx):
    x = mx.sym.Variable("x", stype="csr")
    w = mx.sym.Variable("w", stype="row_sparse")
    res = {}
    e = mx.sym.sparse.dot(x, w).simple_bind(mx.cpu(), x=(4, 5), w=(5, 3))
    res["dot_csr_rsp"] = [_st(e.arg_dict), _st(e.grad_dict), e.outputs[0].stype]
    w2 = mx.sym.Variable("w2")
    e = mx.sym.sparse.dot(x, w2).simple_bind(mx.cpu(), x=(4, 5), w2=(5, 3))
    res["dot_csr_dns"] = [_st(e.arg_dict), _st(e.grad_dict), e.outputs[0].stype]
    e = mx.sym.sparse.dot(x, w2).simple_bind(mx.cpu(), x=(4, 5), w2=(5, 3), stype_dict={"w2": "row_sparse"})
    res["dot_stype_dict"] = [_st(e.arg_dict), _st(e.grad_dict), e.outputs[0].stype]
    e = mx.sym.sparse.dot(x, w2, transpose_a=True).simple_bind(mx.cpu(), x=(4, 5), w2=(4, 3))
    res["dot_csr_T"] = [_st(e.arg_dict), e.outputs[0].stype]
    d = mx.sym.Variable("d")
    e = mx.sym.Embedding(d, input_dim=10, output_dim=3, sparse_grad=True, name="emb").simple_bind(mx.cpu(), d=(4,))
    res["embedding_sparse_grad"] = [_st(e.arg_dict), _st(e.grad_dict), e.outputs[0].stype]
    e = mx.sym.sparse.Embedding(d, input_dim=10, output_dim=3, name="emb").simple_bind(mx.cpu(), d=(4,))
    res["sparse_embedding"] = [_st(e.arg_dict), _st(e.grad_dict)]
    r = mx.sym.Variable("r", stype="row_sparse")
    for op in ("relu", "exp", "abs", "sigmoid", "square", "zeros_like"):
        for v in (x, r):
            e = getattr(mx.sym.sparse, op)(v).simple_bind(mx.cpu(), **{v.name: (4, 5)})
            res[f"{op}_{v.name}"] = e.outputs[0].stype
    r2 = mx.sym.Variable("r2", stype="row_sparse")
    e = mx.sym.sparse.elemwise_add(r, r2).simple_bind(mx.cpu(), r=(4, 5), r2=(4, 5))
    res["rsp_add_rsp"] = e.outputs[0].stype
    e = mx.sym.sparse.elemwise_mul(r, w2).simple_bind(mx.cpu(), r=(4, 5), w2=(4, 5))
    res["rsp_mul_dns"] = e.outputs[0].stype
    e = mx.sym.sparse.add_n(r, r2).simple_bind(mx.cpu(), r=(4, 5), r2=(4, 5))
    res["add_n_rsp"] = e.outputs[0].stype
    e = mx.sym.sparse.retain(r, mx.sym.Variable("i")).simple_bind(mx.cpu(), grad_req="null", r=(4, 5), i=(2,))
    res["retain"] = [_st(e.arg_dict), e.outputs[0].stype]
    return res


def simple_bind_grad_stypes(mx):
    """Gradient storage types simple_bind gives (MXNet's backward storage inference)."""
    res = {}
    for st in ("csr", "row_sparse"):
        x = mx.sym.Variable("x", stype=st)
        for op in ("relu", "square", "abs", "negative", "sqrt", "sin", "exp", "sigmoid", "zeros_like", "make_loss",
                   "stop_gradient"):
            e = getattr(mx.sym.sparse, op)(x).simple_bind(mx.cpu(), x=(4, 5))
            res[f"{st}_{op}"] = e.grad_dict["x"].stype
        for name, f in (("mul_scalar", lambda v: v * 2), ("div_scalar", lambda v: v / 2),
                        ("plus_scalar", lambda v: v + 1), ("clip", lambda v: mx.sym.sparse.clip(v, -1, 1)),
                        ("sum", lambda v: mx.sym.sparse.sum(v)),
                        ("cast", lambda v: mx.sym.sparse.cast_storage(v, stype="default")),
                        ("relu_twice", lambda v: mx.sym.sparse.relu(v) + mx.sym.sparse.square(v)),
                        ("relu_and_exp", lambda v: mx.sym.sparse.relu(v) + mx.sym.sparse.exp(v))):
            e = f(x).simple_bind(mx.cpu(), x=(4, 5))
            res[f"{st}_{name}"] = e.grad_dict["x"].stype
        y, d = mx.sym.Variable("y", stype=st), mx.sym.Variable("d")
        for op in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "broadcast_add", "broadcast_mul"):
            e = getattr(mx.sym.sparse, op)(x, y).simple_bind(mx.cpu(), x=(4, 5), y=(4, 5))
            res[f"{st}_{op}"] = [e.grad_dict["x"].stype, e.grad_dict["y"].stype]
            e = getattr(mx.sym.sparse, op)(x, d).simple_bind(mx.cpu(), x=(4, 5), d=(4, 5))
            res[f"{st}_{op}_dns"] = [e.grad_dict["x"].stype, e.grad_dict["d"].stype]
    r, r2 = mx.sym.Variable("r", stype="row_sparse"), mx.sym.Variable("r2", stype="row_sparse")
    res["add_n"] = mx.sym.sparse.add_n(r, r2).simple_bind(mx.cpu(), r=(4, 5), r2=(4, 5)).grad_dict["r"].stype
    c, w = mx.sym.Variable("c", stype="csr"), mx.sym.Variable("w")
    res["dot_T"] = mx.sym.sparse.dot(c, w, transpose_a=True).simple_bind(mx.cpu(), c=(4, 5), w=(4, 3)).grad_dict[
        "w"].stype
    e = mx.sym.sparse.dot(mx.sym.Variable("dd"), c).simple_bind(mx.cpu(), dd=(3, 4), c=(4, 5))
    res["dns_csr"] = [e.grad_dict["dd"].stype, e.grad_dict["c"].stype]
    e = mx.sym.sparse.dot(c, w).simple_bind(mx.cpu(), c=(4, 5), w=(5, 3))
    res["dot_csr_w"] = e.grad_dict["w"].stype
    e = (mx.sym.sparse.dot(c, w) + mx.sym.sparse.dot(mx.sym.Variable("c2", stype="csr"), w)).simple_bind(
        mx.cpu(), c=(4, 5), c2=(4, 5), w=(5, 3))
    res["dot_twice"] = e.grad_dict["w"].stype
    e = mx.sym._internal._square_sum(r, axis=1, keepdims=True).simple_bind(mx.cpu(), r=(4, 5))
    res["square_sum"] = e.grad_dict["r"].stype
    return res


def _csr(mx):
    return mx.nd.array(CSR).tostype("csr")


def dot_forward_backward(mx):
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w", stype="row_sparse")
    y = mx.sym.sparse.dot(x, w)
    e = y.simple_bind(mx.cpu(), x=(4, 5), w=(5, 3))
    e.arg_dict["x"][:] = _csr(mx)
    e.arg_dict["w"][:] = mx.nd.array(W).tostype("row_sparse")
    inf = _val(e.forward()[0])
    e.forward(is_train=True)
    e.backward(mx.nd.ones((4, 3)) * 0.5)
    g = e.grad_dict["w"]
    return {"infer": inf, "train": _val(e.outputs[0]), "grad": _val(g), "grad_stype": g.stype, "grad_rows": _rows(g)}


def dot_zero_grad_rows(mx):
    """Rows MXNet's dot backward keeps even where the head gradient makes them zero."""
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    y = mx.sym.sparse.dot(x, w)
    e = y.simple_bind(mx.cpu(), x=(4, 5), w=(5, 3))
    e.arg_dict["x"][:] = _csr(mx)
    e.arg_dict["w"][:] = mx.nd.array(W)
    e.forward(is_train=True)
    og = np.ones((4, 3), np.float32)
    og[0] = 0
    e.backward(mx.nd.array(og))
    g = e.grad_dict["w"]
    return {"grad": _val(g), "grad_stype": g.stype, "grad_rows": _rows(g)}


def dot_forward_stype(mx):
    """``forward_stype`` decides dot's output storage whatever the inputs' (MXNet 1.9.1)."""
    res = {}
    b = W[:, :2]
    for ls in ("default", "csr"):
        for rs in ("default", "row_sparse"):
            for fs in ("default", "csr", "row_sparse", None):
                lhs, rhs = mx.sym.Variable("l", stype=ls), mx.sym.Variable("r", stype=rs)
                kw = {} if fs is None else {"forward_stype": fs}
                e = mx.sym.sparse.dot(lhs, rhs, **kw).bind(mx.cpu(), {"l": mx.nd.array(CSR).tostype(ls),
                                                                      "r": mx.nd.array(b).tostype(rs)})
                o = e.forward()[0]
                res[f"{ls}_{rs}_{fs}"] = {"stype": o.stype, "out": _val(o)}
    return res


def dot_transpose_forward(mx):
    x, w = mx.sym.Variable("x", stype="csr"), mx.sym.Variable("w")
    e = mx.sym.sparse.dot(x, w, transpose_a=True).bind(mx.cpu(), {"x": _csr(mx), "w": mx.nd.array(W[:4])})
    o = e.forward()[0]
    return {"out": _val(o), "stype": o.stype, "rows": _rows(o)}


def embedding_sparse_grad(mx):
    d = mx.sym.Variable("d")
    y = mx.sym.Embedding(d, input_dim=6, output_dim=2, sparse_grad=True, name="emb")
    e = y.simple_bind(mx.cpu(), grad_req={"d": "null", "emb_weight": "write"}, d=(5,))
    e.arg_dict["d"][:] = mx.nd.array([1, 4, 4, 0, 1])
    e.arg_dict["emb_weight"][:] = mx.nd.array(np.arange(12, dtype=np.float32).reshape(6, 2))
    out = _val(e.forward(is_train=True)[0])
    og = np.arange(10, dtype=np.float32).reshape(5, 2)
    og[3] = 0
    e.backward(mx.nd.array(og))
    g = e.grad_dict["emb_weight"]
    return {"out": out, "grad": _val(g), "grad_stype": g.stype, "grad_rows": _rows(g)}


def rsp_unary_grad(mx):
    """square / negative / abs of a row_sparse argument, gradients bound row_sparse."""
    res = {}
    for op in ("square", "negative", "abs", "sqrt"):
        r = mx.sym.Variable("r", stype="row_sparse")
        y = getattr(mx.sym.sparse, op)(r)
        a = mx.nd.array(np.abs(RSP) if op == "sqrt" else RSP).tostype("row_sparse")
        g = mx.nd.sparse.zeros("row_sparse", RSP.shape)
        e = y.bind(mx.cpu(), args=[a], args_grad=[g])
        e.forward(is_train=True)
        o = e.outputs[0]
        e.backward(mx.nd.ones(RSP.shape) * 2)
        res[op] = {"out": _val(o), "stype": o.stype, "grad": _val(g), "grad_stype": g.stype, "grad_rows": _rows(g)}
    return res


def rsp_binary(mx):
    res = {}
    for op in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"):
        a, b = mx.sym.Variable("a", stype="row_sparse"), mx.sym.Variable("b", stype="row_sparse")
        y = getattr(mx.sym.sparse, op)(a, b)
        av = mx.nd.array(RSP).tostype("row_sparse")
        bv = mx.nd.array(RSP2 + (1 if op == "elemwise_div" else 0)).tostype("row_sparse")
        e = y.bind(mx.cpu(), {"a": av, "b": bv})
        o = e.forward()[0]
        res[op] = {"out": _val(o), "stype": o.stype}
    a, b, c = (mx.sym.Variable(n, stype="row_sparse") for n in "abc")
    e = mx.sym.sparse.add_n(a, b, c).bind(mx.cpu(), {"a": mx.nd.array(RSP).tostype("row_sparse"),
                                                   "b": mx.nd.array(RSP2).tostype("row_sparse"),
                                                   "c": mx.nd.array(RSP).tostype("row_sparse")})
    o = e.forward()[0]
    res["add_n"] = {"out": _val(o), "stype": o.stype}
    return res


def retain_forward(mx):
    """(MXNet 1.9.1 cannot bind retain's backward: "Operator not implemented: _backward_sparse_retain".)"""
    r, i = mx.sym.Variable("r", stype="row_sparse"), mx.sym.Variable("i")
    y = mx.sym.sparse.retain(r, i)
    a = mx.nd.array(RSP).tostype("row_sparse")
    e = y.bind(mx.cpu(), args={"r": a, "i": mx.nd.array([0, 1], dtype="int64")})
    o = e.forward()[0]
    return {"out": _val(o), "stype": o.stype, "rows": _rows(o)}


def csr_ops(mx):
    res = {}
    x = mx.sym.Variable("x", stype="csr")
    for name, sym in (("slice", mx.sym.sparse.slice(x, begin=(1,), end=(4,))),
                      ("mul_scalar", x * 3), ("plus_scalar", x + 1), ("relu", mx.sym.sparse.relu(x)),
                      ("cast_default", mx.sym.sparse.cast_storage(x, stype="default")),
                      ("clip", mx.sym.sparse.clip(x, a_min=-1, a_max=1.6)),
                      ("sum", mx.sym.sparse.sum(x, axis=1)),
                      ("abs_exp", mx.sym.sparse.exp(mx.sym.sparse.abs(x)))):
        o = sym.bind(mx.cpu(), {"x": _csr(mx)}).forward()[0]
        res[name] = {"out": _val(o), "stype": o.stype}
    d = mx.sym.Variable("d")
    o = mx.sym.sparse.cast_storage(d, stype="csr").bind(mx.cpu(), {"d": mx.nd.array(CSR)}).forward()[0]
    res["dense_to_csr"] = {"out": _val(o), "stype": o.stype, "indices": o.indices.asnumpy().tolist(),
                           "indptr": o.indptr.asnumpy().tolist()}
    return res


def fc_rsp_weight(mx):
    data, w = mx.sym.Variable("data"), mx.sym.Variable("w", stype="row_sparse")
    fc = mx.sym.sparse.FullyConnected(data, weight=w, num_hidden=3, no_bias=True)
    e = fc.simple_bind(mx.cpu(), data=(2, 5))
    e.arg_dict["data"][:] = mx.nd.array(CSR[[0, 2]])
    e.arg_dict["w"][:] = mx.nd.array(W.T).tostype("row_sparse")
    o = e.forward(is_train=True)[0]
    e.backward(mx.nd.ones((2, 3)))
    return {"out": _val(o), "arg": _st(e.arg_dict), "grad": _st(e.grad_dict), "w_grad": _val(e.grad_dict["w"])}


def linear_classification(mx):
    """MXNet's sparse linear classification, symbolic: dot(csr, row_sparse weight) + bias,
    LogisticRegressionOutput, executor forward/backward, lazy sgd_update on the rows of the
    row_sparse gradient; 4 steps."""
    rng = np.random.RandomState(3)
    X = (rng.rand(8, 10) < 0.3) * rng.rand(8, 10)
    Y = (X.sum(axis=1) > 1).astype(np.float32)
    data = mx.sym.Variable("data", stype="csr")
    weight = mx.sym.Variable("weight", stype="row_sparse")
    bias = mx.sym.Variable("bias")
    label = mx.sym.Variable("softmax_label")
    out = mx.sym.broadcast_add(mx.sym.sparse.dot(data, weight), bias)
    net = mx.sym.LogisticRegressionOutput(out, label=label)
    e = net.simple_bind(mx.cpu(), data=(4, 10), weight=(10, 1), bias=(1,), softmax_label=(4, 1),
                        grad_req={"data": "null", "weight": "write", "bias": "write", "softmax_label": "null"})
    e.arg_dict["weight"][:] = mx.nd.array(np.linspace(-0.5, 0.5, 10).reshape(10, 1)).tostype("row_sparse")
    losses, rows = [], []
    for step in range(4):
        lo = (step % 2) * 4
        e.arg_dict["data"][:] = mx.nd.array(X[lo:lo + 4]).tostype("csr")
        e.arg_dict["softmax_label"][:] = mx.nd.array(Y[lo:lo + 4].reshape(4, 1))
        p = e.forward(is_train=True)[0].asnumpy()
        losses.append(float(-np.mean(Y[lo:lo + 4] * np.log(p[:, 0] + 1e-7)
                                     + (1 - Y[lo:lo + 4]) * np.log(1 - p[:, 0] + 1e-7))))
        e.backward()
        g = e.grad_dict["weight"]
        rows.append(_rows(g))
        mx.nd.sparse.sgd_update(e.arg_dict["weight"], g, lr=0.5, wd=0.01, out=e.arg_dict["weight"])
        mx.nd.sgd_update(e.arg_dict["bias"], e.grad_dict["bias"], lr=0.5, out=e.arg_dict["bias"])
    return {"losses": losses, "rows": rows, "weight": _val(e.arg_dict["weight"]),
            "weight_stype": e.arg_dict["weight"].stype, "bias": _val(e.arg_dict["bias"])}


def square_sum(mx):
    a = mx.nd.array(RSP).tostype("row_sparse")
    res = {}
    for axis, keep in ((1, True), (1, False), (0, True)):
        o = mx.nd._internal._square_sum(a, axis=axis, keepdims=keep)
        res[f"nd_{axis}_{keep}"] = {"out": _val(o), "stype": o.stype}
    r = mx.sym.Variable("data", stype="row_sparse")
    y = mx.sym._internal._square_sum(r, axis=1, keepdims=True)
    g = mx.nd.sparse.zeros("row_sparse", RSP.shape)
    e = y.bind(mx.cpu(), args=[a], args_grad=[g])
    o = e.forward(is_train=True)[0]
    # MXNet's kernel needs a head gradient with the input's rows
    e.backward(mx.nd.array([[2], [0], [3], [0]]).tostype("row_sparse"))
    res["sym"] = {"out": _val(o), "stype": o.stype, "grad": _val(g), "grad_stype": g.stype}
    return res


def scatter_ops(mx):
    """MXNet's internal ``_scatter_*`` operators: a sparse first input keeps its structure."""
    res = {}
    for st in ("row_sparse", "csr", "default"):
        a = mx.nd.array(RSP).tostype(st)
        lhs = mx.sym.Variable("lhs", stype=st)
        for name, sym in (("plus", mx.sym._internal._scatter_plus_scalar(lhs, 9)),
                          ("minus", mx.sym._internal._scatter_minus_scalar(lhs, 2)),
                          ("div", mx.sym._internal._scatter_elemwise_div(lhs, mx.sym.Variable("rhs")))):
            args = {"lhs": a, "rhs": mx.nd.array(RSP2 + 2)} if name == "div" else {"lhs": a}
            o = sym.bind(mx.cpu(), args).forward()[0]
            res[f"{st}_{name}"] = {"stype": o.stype, "out": _val(o)}
        o = mx.nd._internal._scatter_plus_scalar(a, scalar=1.5)
        res[f"{st}_nd_plus"] = {"stype": o.stype, "out": _val(o)}
    return res


def module_linear_classification(mx):
    """MXNet's example/sparse/linear_classification with Module: LibSVMIter csr batches, a
    row_sparse weight, ``sym.sparse.dot``, a 'local' kvstore updating with SGD, and
    ``prepare(batch, sparse_row_id_fn=...)`` pulling the rows each batch uses; 3 epochs."""
    import os
    nf = 10
    it = mx.io.LibSVMIter(data_libsvm=os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                                                   "data.libsvm"), data_shape=(nf,), batch_size=3)
    x = mx.symbol.Variable("data", stype="csr")
    weight = mx.symbol.Variable("weight", shape=(nf, 1), stype="row_sparse")
    bias = mx.symbol.Variable("bias", shape=(1,))
    pred = mx.symbol.broadcast_add(mx.symbol.sparse.dot(x, weight), bias)
    model = mx.sym.LogisticRegressionOutput(data=pred, label=mx.symbol.Variable("softmax_label"))
    mod = mx.mod.Module(symbol=model, data_names=["data"], label_names=["softmax_label"])
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(initializer=mx.init.Constant(0.05))
    sgd = mx.optimizer.SGD(momentum=0.0, clip_gradient=5.0, learning_rate=0.5, rescale_grad=1.0 / 3, wd=0.01)
    mod.init_optimizer(optimizer=sgd, kvstore=mx.kv.create("local"))
    metric = mx.metric.create(["mse"])
    mse, stypes = [], []
    for _epoch in range(3):
        metric.reset()
        for batch in it:
            mod.prepare(batch, sparse_row_id_fn=lambda b: {"weight": b.data[0].indices})
            mod.forward_backward(batch)
            stypes.append([batch.data[0].stype, mod._exec_group.grad_arrays[0][0].stype])
            mod.update()
            mod.update_metric(metric, batch.label)
        mse.append(float(metric.get()[1][0]))
        it.reset()
    args, _ = mod.get_params()
    return {"mse": mse, "stypes": stypes, "weight": _val(args["weight"]), "weight_stype": args["weight"].stype,
            "bias": _val(args["bias"])}


CASES = [names, simple_bind_stypes, simple_bind_grad_stypes, dot_forward_backward, dot_zero_grad_rows, dot_forward_stype, dot_transpose_forward,
         embedding_sparse_grad, rsp_unary_grad, rsp_binary, retain_forward, csr_ops, fc_rsp_weight,
         linear_classification, square_sum, scatter_ops,
         module_linear_classification]
