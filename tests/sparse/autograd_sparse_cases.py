"""Sparse storage under autograd: cases run on MXNet 1.9.1 (fixtures/gen_autograd_sparse_fixtures.py)
and on plexnet (test_autograd_sparse_mxnet.py). Each case takes the module (``mxnet`` or
``plexnet``) and returns ``(y, grad)``: the recorded result (or None) and the gradient array."""
from __future__ import annotations

from typing import Any, Callable


def _csr(mx: Any) -> Any:   # an explicit zero at (0, 3): MXNet's sparse dot backward keeps its row
    return mx.nd.sparse.csr_matrix(([1., 0., 3.], [1, 3, 1], [0, 2, 2, 3]), shape=(3, 5))


def _c(mx: Any) -> Any:
    return mx.nd.sparse.csr_matrix(([1., 2., 3.], [1, 0, 2], [0, 1, 2, 3]), shape=(3, 3))


def _r(mx: Any) -> Any:
    return mx.nd.array([[0, 1], [0, 0], [2, 3]]).tostype("row_sparse")


def _run(mx: Any, x: Any, f: Callable[[Any], Any], stype: Any = None, req: str = "write", n: int = 1,
         og: Any = None) -> tuple:
    x.attach_grad(grad_req=req, stype=stype)
    y = None
    for _ in range(n):
        with mx.autograd.record():
            y = f(x)
        y.backward(None if og is None else mx.nd.array(og))
    return y, x.grad


def _w(mx: Any) -> Any:
    return mx.nd.arange(10).reshape((5, 2))


def _emb(mx: Any, sparse: bool, req: str = "write", stype: Any = "row_sparse", n: int = 1,
         og: Any = ((1, 2), (0, 0), (3, 3))) -> tuple:
    nd = mx.nd
    idx = nd.array([4, 1, 1])
    if sparse:
        f = lambda w: nd.contrib.SparseEmbedding(idx, w, input_dim=6, output_dim=2)
    else:
        f = lambda w: nd.Embedding(idx, w, input_dim=6, output_dim=2, sparse_grad=True)
    return _run(mx, nd.arange(12).reshape((6, 2)), f, stype, req, n, og)


def _cases() -> dict[str, Callable[[Any], tuple]]:
    c: dict[str, Callable[[Any], tuple]] = {}
    for st in (None, "default", "row_sparse", "csr"):
        c[f"attach_{st}"] = lambda mx, st=st: (None, _attach(mx, st))
    c["attach_csr_var"] = lambda mx: (None, _attach_var(mx, _c(mx)))
    c["attach_rsp_var"] = lambda mx: (None, _attach_var(mx, _r(mx)))
    # sparse dot: the row_sparse gradient holds the columns the csr stores
    for name, f in (("spdot", lambda mx: lambda w: mx.nd.sparse.dot(_csr(mx), w)),
                    ("nddot", lambda mx: lambda w: mx.nd.dot(_csr(mx), w))):
        for st in (None, "row_sparse"):
            c[f"{name}_{st}_write2"] = lambda mx, f=f, st=st: _run(mx, _w(mx), f(mx), st, "write", 2)
        c[f"{name}_default_add2"] = lambda mx, f=f: _run(mx, _w(mx), f(mx), None, "add", 2)
    c["spdot_rsp_zero_og"] = lambda mx: _run(mx, _w(mx), lambda w: mx.nd.sparse.dot(_csr(mx), w), "row_sparse",
                                             og=[[0, 0], [0, 0], [0, 0]])
    c["spdot_rsp_og"] = lambda mx: _run(mx, _w(mx), lambda w: mx.nd.sparse.dot(_csr(mx), w), "row_sparse",
                                        og=[[0, 0], [1, 1], [1, 1]])
    c["spdot_transpose_a"] = lambda mx: _run(mx, mx.nd.ones((3, 2)),
                                             lambda w: mx.nd.sparse.dot(_csr(mx), w, transpose_a=True), "row_sparse")
    c["spdot_plus_dense"] = lambda mx: _run(mx, _w(mx), lambda w: mx.nd.sparse.dot(_csr(mx), w).sum() + (w * 0).sum(),
                                            "row_sparse")
    c["spdot_twice"] = lambda mx: _run(mx, _w(mx), lambda w: mx.nd.sparse.dot(_csr(mx), w)
                                       + mx.nd.sparse.dot(_csr(mx)[0:2], w).sum(), "row_sparse")
    # a dense gradient into sparse buffers: cast keeping the non-zero rows / entries
    c["dense_into_rsp"] = lambda mx: _run(mx, mx.nd.array([[1, 2], [0, 0], [3, 4]]), lambda w: w * w, "row_sparse",
                                          n=2)
    c["dense_into_csr"] = lambda mx: _run(mx, mx.nd.array([[1, 2], [0, 0], [3, 4]]), lambda w: w * w, "csr")
    # Embedding(sparse_grad=True) / contrib.SparseEmbedding: the looked-up rows, zero or not
    c["embedding_sparse_grad"] = lambda mx: _emb(mx, False, n=2)
    c["sparse_embedding"] = lambda mx: _emb(mx, True)
    c["sparse_embedding_zero_og"] = lambda mx: _emb(mx, True, og=((0, 0), (0, 0), (0, 0)))
    # operators on sparse variables: results keep MXNet's storage types, gradients as MXNet's
    unary = {
        "mul2": lambda mx, a: a * 2, "div2": lambda mx, a: a / 2, "plus1": lambda mx, a: a + 1,
        "sqrt": lambda mx, a: mx.nd.sqrt(a), "square": lambda mx, a: mx.nd.square(a),
        "relu": lambda mx, a: mx.nd.relu(a), "negative": lambda mx, a: mx.nd.negative(a),
        "abs": lambda mx, a: mx.nd.abs(a), "sin": lambda mx, a: mx.nd.sin(a), "exp": lambda mx, a: mx.nd.exp(a),
        "tostype_default": lambda mx, a: a.tostype("default"),
        "cast_storage_default": lambda mx, a: mx.nd.cast_storage(a, "default"),
        "add_self": lambda mx, a: a + a, "mul_self": lambda mx, a: a * a, "sub_self": lambda mx, a: a - a,
        "elemwise_add": lambda mx, a: mx.nd.elemwise_add(a, a), "elemwise_mul": lambda mx, a: mx.nd.elemwise_mul(a, a),
        "sum": lambda mx, a: mx.nd.sum(a), "copy": lambda mx, a: a.copy(), "identity": lambda mx, a: mx.nd.identity(a),
        "clip": lambda mx, a: mx.nd.clip(a, -1, 2), "zeros_like": lambda mx, a: mx.nd.zeros_like(a),
        "pow2": lambda mx, a: a ** 2, "rpow": lambda mx, a: 2 ** a,
        "abs_builtin": lambda mx, a: abs(a), "neg": lambda mx, a: -a, "mean": lambda mx, a: mx.nd.mean(a),
        "norm": lambda mx, a: mx.nd.norm(a), "rdiv": lambda mx, a: 2 / (a + 1),
        "sum_axis0": lambda mx, a: mx.nd.sum(a, axis=0), "where": lambda mx, a: mx.nd.where(a, a, a),
    }
    for vname, make in (("csr", _c), ("rsp", _r)):
        for oname, f in unary.items():
            c[f"{vname}_{oname}"] = lambda mx, make=make, f=f: _run(mx, make(mx), lambda a: f(mx, a))
        c[f"{vname}_mul2_dense_grad"] = lambda mx, make=make: _run(mx, make(mx), lambda a: a * 2, "default")
    c["csr_dot"] = lambda mx: _run(mx, _c(mx), lambda a: mx.nd.sparse.dot(a, mx.nd.ones((3, 2))))
    c["csr_dot_transpose_a"] = lambda mx: _run(mx, _c(mx), lambda a: mx.nd.sparse.dot(a, mx.nd.ones((3, 2)),
                                                                                       transpose_a=True))
    c["rsp_dot"] = lambda mx: _run(mx, _r(mx), lambda a: mx.nd.sparse.dot(a, mx.nd.ones((2, 2))))
    c["csr_mul_dense"] = lambda mx: _run(mx, _c(mx), lambda a: a * mx.nd.ones((3, 3)) * 2)
    c["rsp_mul_dense"] = lambda mx: _run(mx, _r(mx), lambda a: a * (mx.nd.ones((3, 2)) * 2))
    c["rsp_retain"] = lambda mx: _run(mx, _r(mx), lambda a: mx.nd.sparse.retain(a, mx.nd.array([0, 1])))
    c["rsp_retain_duplicate_ids"] = lambda mx: _run(
        mx, mx.nd.array([[1, 0], [0, 0], [2, 3]]).tostype("row_sparse"),
        lambda a: mx.nd.sparse.retain(a, mx.nd.array([0, 0, 2], dtype="int64")).sum(), "row_sparse")
    # MXNet's sparse tutorial: Y = dot(X, W) + b, W.attach_grad(stype='row_sparse')
    c["tutorial_dot_plus_bias"] = lambda mx: _run(
        mx, mx.nd.arange(20).reshape((10, 2)),
        lambda w: mx.nd.dot(mx.nd.sparse.csr_matrix(([6., 7., 8., 9.], [0, 4, 1, 0], [0, 2, 3, 4]), shape=(3, 10)),
                            w) + mx.nd.zeros((3, 1)), "row_sparse")
    c["csr_slice"] = lambda mx: _run(mx, _c(mx), lambda a: mx.nd.slice(a, begin=(0,), end=(2,)))
    c["csr_getitem"] = lambda mx: _run(mx, _c(mx), lambda a: a[0:2])
    c["csr_broadcast_mul"] = lambda mx: _run(mx, _c(mx), lambda a: mx.nd.broadcast_mul(a, mx.nd.array([[1.], [2.], [3.]])))
    c["csr_concat"] = lambda mx: _run(mx, _c(mx), lambda a: mx.nd.concat(a, a, dim=0))
    c["csr_astype"] = lambda mx: _run(mx, _c(mx), lambda a: a.astype("float64"))
    c["rsp_add_n"] = lambda mx: _run(mx, _r(mx), lambda a: mx.nd.add_n(a, a))
    dense = lambda mx: mx.nd.array([[0, 1], [2, 0]])
    c["dense_tostype_csr"] = lambda mx: _run(mx, dense(mx), lambda a: a.tostype("csr"))
    c["dense_tostype_rsp"] = lambda mx: _run(mx, dense(mx), lambda a: a.tostype("row_sparse"))
    c["dense_tostype_rsp_mul2"] = lambda mx: _run(mx, dense(mx), lambda a: a.tostype("row_sparse") * 2)
    c["dense_cast_storage_rsp"] = lambda mx: _run(mx, dense(mx), lambda a: mx.nd.cast_storage(a, "row_sparse"))
    c["dense_tostype_csr_rsp_grad"] = lambda mx: _run(mx, dense(mx), lambda a: a.tostype("csr"), "row_sparse")
    c["dense_csr_mul2_csr_grad"] = lambda mx: _run(mx, dense(mx), lambda a: a.tostype("csr") * 2, "csr")
    c["autograd_grad_rsp_variable"] = _grad_fn
    c["rsp_head_gradient"] = _rsp_head
    c["rsp_grad_3d"] = lambda mx: _run(mx, mx.nd.arange(24).reshape((2, 3, 4)), lambda a: a * a, "row_sparse")
    c["spdot_retain_graph_twice"] = _retain_twice
    # Embedding over a row_sparse weight (Gluon's contrib SparseEmbedding path): ids not stored read zeros
    c["rsp_weight_embedding_forward"] = lambda mx: (None, mx.nd.Embedding(
        mx.nd.array([[4, 1], [2, 5]]), _rsp_weight(mx), input_dim=6, output_dim=2))
    c["rsp_weight_embedding_sparse_grad"] = lambda mx: _run(
        mx, _rsp_weight(mx), lambda w: mx.nd.Embedding(mx.nd.array([4, 1, 1, 2]), w, input_dim=6, output_dim=2,
                                                       sparse_grad=True), og=[[1, 2], [0, 0], [3, 3], [1, 1]])
    c["rsp_weight_embedding_dense_grad"] = lambda mx: _run(
        mx, _rsp_weight(mx), lambda w: mx.nd.Embedding(mx.nd.array([4, 1, 1, 2]), w, input_dim=6, output_dim=2),
        "default", og=[[1, 2], [0, 0], [3, 3], [1, 1]])
    c["rsp_weight_sparse_embedding"] = lambda mx: _run(
        mx, _rsp_weight(mx), lambda w: mx.nd.contrib.SparseEmbedding(mx.nd.array([[4, 1], [1, 2]]), w, input_dim=6,
                                                                     output_dim=2) * 2)
    c["linear_model_lazy_sgd_3_steps"] = _linear_model
    c["embedding_lazy_sgd_3_steps"] = _embedding_model
    # MXNet 1.9.1 refuses these (plexnet computes them: docs/sparse.md "Autograd")
    c["spdot_rsp_add"] = lambda mx: _run(mx, _w(mx), lambda w: mx.nd.sparse.dot(_csr(mx), w), "row_sparse", "add", 2)
    c["dense_into_rsp_add"] = lambda mx: _run(mx, mx.nd.array([[1, 2], [0, 0], [3, 4]]), lambda w: w * 3,
                                              "row_sparse", "add", 2)
    c["embedding_sparse_grad_add"] = lambda mx: _emb(mx, False, "add", n=2)
    c["embedding_sparse_grad_dense_buffer"] = lambda mx: _emb(mx, False, stype=None)
    return c


def _rsp_weight(mx: Any) -> Any:
    return mx.nd.array([[0, 0], [1, 2], [0, 0], [0, 0], [3, 4], [0, 0]]).tostype("row_sparse")


def _grad_fn(mx: Any) -> tuple:
    w = _w(mx)
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.sparse.dot(_csr(mx), w)
    return y, mx.autograd.grad(y, [w])[0]     # MXNet: in the variable's gradient storage type


def _rsp_head(mx: Any) -> tuple:
    r = _r(mx)
    r.attach_grad()
    with mx.autograd.record():
        y = r * 2
    y.backward(mx.nd.array([[1, 1], [1, 1], [0, 0]]).tostype("row_sparse"))
    return y, r.grad


def _retain_twice(mx: Any) -> tuple:
    w = _w(mx)
    w.attach_grad(stype="row_sparse")
    with mx.autograd.record():
        y = mx.nd.sparse.dot(_csr(mx), w)
    y.backward(retain_graph=True)
    y.backward(mx.nd.ones((3, 2)) * 2)
    return y, w.grad


def _linear_model(mx: Any) -> tuple:
    """A sparse linear regression trained imperatively: row_sparse gradient, lazy SGD."""
    nd = mx.nd
    csr = nd.sparse.csr_matrix(([1., 2., 0.5, -1., 3.], [0, 3, 3, 5, 1], [0, 2, 2, 4, 5]), shape=(4, 6))
    label = nd.array([[1.], [0.], [2.], [-1.]])
    w = nd.arange(6).reshape((6, 1)) * 0.1
    w.attach_grad(stype="row_sparse")
    for _ in range(3):
        with mx.autograd.record():
            loss = nd.square(nd.sparse.dot(csr, w) - label).sum()
        loss.backward()
        nd.sparse.sgd_update(w, w.grad, lr=0.05, wd=0.01, out=w)
    return loss, w


def _embedding_model(mx: Any) -> tuple:
    """Embedding(sparse_grad=True) + a dense layer trained imperatively (lazy SGD on the
    embedding, plain SGD on the dense weight)."""
    nd = mx.nd
    emb = nd.arange(24).reshape((8, 3)) * 0.05
    dense = nd.array([[0.5], [-0.25], [1.0]])
    emb.attach_grad(stype="row_sparse")
    dense.attach_grad()
    idx = nd.array([[1, 5], [5, 7]])
    for _ in range(3):
        with mx.autograd.record():
            h = nd.Embedding(idx, emb, input_dim=8, output_dim=3, sparse_grad=True).sum(axis=1)
            loss = nd.square(nd.dot(h, dense) - 1).sum()
        loss.backward()
        nd.sparse.sgd_update(emb, emb.grad, lr=0.1, out=emb)
        nd.sgd_update(dense, dense.grad, lr=0.1, out=dense)
    return loss, emb


def _attach(mx: Any, st: Any) -> Any:
    x = mx.nd.ones((3, 2))
    x.attach_grad(stype=st)
    return x.grad


def _attach_var(mx: Any, x: Any) -> Any:
    x.attach_grad()
    return x.grad


CASES = _cases()
#: cases where MXNet 1.9.1 raises and plexnet computes a gradient (docs/sparse.md "Autograd")
MXNET_REFUSES = {"csr_astype", "spdot_rsp_add", "dense_into_rsp_add", "embedding_sparse_grad_add",
                 "embedding_sparse_grad_dense_buffer"}
