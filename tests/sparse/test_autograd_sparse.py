"""Sparse storage under autograd: argument checks, mark_variables with sparse gradient arrays,
recorded sparse results (values are checked against MXNet 1.9.1 in test_autograd_sparse_mxnet.py)."""
import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, nd

sp = nd.sparse


def test_attach_grad_bad_stype_names_the_argument():
    x = nd.ones((2, 2))
    with pytest.raises(ValueError, match="attach_grad: stype must be None, 'default', 'row_sparse' or 'csr'"):
        x.attach_grad(stype="sparse")
    with pytest.raises(mx.base.ShapeError, match="attach_grad: stype='csr' needs a 2-D array"):
        nd.ones((3,)).attach_grad(stype="csr")


def test_attach_grad_null_and_sparse_default():
    x = nd.ones((2, 2))
    x.attach_grad(grad_req="null", stype="row_sparse")
    assert x.grad is None
    c = sp.csr_matrix(([1.], [0], [0, 1, 1]), shape=(2, 2))
    c.attach_grad()                                  # None: the array's own storage type (zeros_like)
    assert c.grad.stype == "csr" and c.grad.indices.asnumpy().tolist() == []
    c.attach_grad(stype="default")
    assert c.grad.stype == "default"


def test_mark_variables_with_sparse_gradients():
    csr = sp.csr_matrix(([1., 2.], [0, 2], [0, 1, 2]), shape=(2, 4))
    w = nd.ones((4, 3))
    g = sp.zeros("row_sparse", (4, 3))
    autograd.mark_variables([w], [g])
    with autograd.record():
        y = nd.dot(csr, w)
    y.backward()
    assert w.grad is g and g.indices.asnumpy().tolist() == [0, 2]
    np.testing.assert_allclose(g.asnumpy(), [[1] * 3, [0] * 3, [2] * 3, [0] * 3])


def test_recorded_sparse_results_keep_their_storage_and_values():
    r = nd.array([[0, 1], [0, 0], [2, 3]]).tostype("row_sparse")
    r.attach_grad()
    with autograd.record():
        a = r * 3
        b = nd.relu(a)
        c = b.tostype("default")
        y = c.sum()
    assert (a.stype, b.stype, c.stype) == ("row_sparse", "row_sparse", "default")
    np.testing.assert_allclose(b.asnumpy(), 3 * np.array([[0, 1], [0, 0], [2, 3]]))
    y.backward()                 # 3 where relu passes, 0 elsewhere: the non-zero rows are kept (MXNet)
    assert r.grad.stype == "row_sparse" and r.grad.indices.asnumpy().tolist() == [0, 2]
    np.testing.assert_allclose(r.grad.asnumpy(), [[0, 3], [0, 0], [3, 3]])


def test_unrecorded_when_no_argument_is_in_the_graph():
    csr = sp.csr_matrix(([1.], [0], [0, 1, 1]), shape=(2, 2))
    with autograd.record():
        y = csr * 2                                  # nothing marked: sparse kernel, no tape
        z = nd.sparse.dot(csr, nd.ones((2, 2)), transpose_a=True)
    assert y.stype == "csr" and y._ag is None
    assert z.stype == "row_sparse" and z._ag is None


def test_autograd_grad_of_a_sparse_variable_has_its_gradient_storage_type():
    w = nd.ones((3, 2))
    w.attach_grad(stype="row_sparse")
    csr = sp.csr_matrix(([2.], [1], [0, 1]), shape=(1, 3))
    with autograd.record():
        y = sp.dot(csr, w)
    (g,) = autograd.grad(y, [w])
    assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [1]   # MXNet 1.9.1
    np.testing.assert_allclose(g.asnumpy(), [[0, 0], [2, 2], [0, 0]])
    assert w.grad.indices.asnumpy().tolist() == []                          # left alone


def test_sparse_variable_as_its_own_head():
    r = nd.array([[0, 1], [0, 0]]).tostype("row_sparse")
    r.attach_grad(stype="row_sparse")
    r.backward()
    np.testing.assert_allclose(r.grad.asnumpy(), np.ones((2, 2)))


def test_dot_of_a_constant_csr_never_densifies_it():
    # a (10^6 x 10^6) csr: a dense copy would need 4 TB; the recorded dot and its backward
    # work on the compact arrays (CsrDotNode), as MXNet's sparse dot
    n = 10 ** 6
    csr = sp.csr_matrix(([1., 2., 3.], [5, 999_999, 5], [0, 2] + [2] * (n - 2) + [3]), shape=(n, n))
    w = nd.ones((n, 2))
    w.attach_grad(stype="row_sparse")
    with autograd.record():
        y = sp.dot(csr, w)
    np.testing.assert_allclose(y[0].asnumpy(), [3, 3])
    y.backward()
    assert w.grad.indices.asnumpy().tolist() == [5, 999_999]
    np.testing.assert_allclose(w.grad.data.asnumpy(), [[4, 4], [2, 2]])
    v = nd.ones((n, 2))
    v.attach_grad(grad_req="add")                   # csr.T x v: the gradient csr @ dy, accumulated
    for _ in range(2):
        with autograd.record():
            z = sp.dot(csr, v, transpose_a=True)
        assert z.stype == "row_sparse"
        z.backward()
    g = v.grad.asnumpy()
    np.testing.assert_allclose(g[[0, n - 1]], [[6, 6], [6, 6]])
    assert g[1:n - 1].sum() == 0


@pytest.mark.parametrize("path", ["embedding", "dot", "row_sparse_data"])
def test_row_sparse_gradients_allocate_no_weight_sized_buffer(monkeypatch, path):
    # MXNet's sparse backward writes only the rows; so does plexnet's walk (deferred row
    # contributions): no dense buffer of the weight's shape is made during backward
    import sys
    from plexnet import gluon
    bwd = sys.modules["plexnet.autograd.backward"]
    sag = sys.modules["plexnet.ndarray.sparse.autograd"]
    shapes = []
    for mod in (bwd, sag):
        orig = mod._new
        monkeypatch.setattr(mod, "_new", lambda shape, ctx, dt, orig=orig: shapes.append(tuple(shape)) or
                            orig(shape, ctx, dt))
    idx = nd.array([3, 1, 3])
    if path == "row_sparse_data":
        net = gluon.contrib.nn.SparseEmbedding(50, 4)
        net.initialize(mx.init.One())
        gluon.Trainer(net.collect_params(), "sgd")
        with autograd.record():
            y = net(idx)
        y.backward()
        g = net.weight.grad()
    else:
        w = nd.ones((50, 4))
        w.attach_grad(stype="row_sparse")
        csr = sp.csr_matrix(([1., 2., 3.], [3, 1, 3], [0, 1, 2, 3]), shape=(3, 50))
        with autograd.record():
            y = nd.Embedding(idx, w, input_dim=50, output_dim=4, sparse_grad=True) if path == "embedding" \
                else sp.dot(csr, w)
        y.backward()
        g = w.grad
    assert (50, 4) not in shapes
    assert g.stype == "row_sparse" and g.indices.asnumpy().tolist() == [1, 3]
    want = [[1] * 4, [2] * 4] if path != "dot" else [[2] * 4, [4] * 4]
    np.testing.assert_allclose(g.data.asnumpy(), want)


def test_embedding_over_a_row_sparse_weight_is_one_node_without_a_dense_weight():
    # forward reads the compact rows (no dense copy of the weight); the tape holds one
    # EmbeddingNode whose backward is the looked-up rows
    from plexnet.ndarray.sparse.embedding import EmbeddingNode
    w = nd.array([[0, 0], [1, 2], [0, 0], [3, 4]]).tostype("row_sparse")
    w.attach_grad()
    dense_copies = []
    orig = type(w)._dense
    type(w)._dense = lambda self: dense_copies.append(self.shape) or orig(self)
    try:
        with autograd.record():
            y = nd.Embedding(nd.array([3, 2, 3]), w, input_dim=4, output_dim=2, sparse_grad=True)
        assert isinstance(y._ag[0], EmbeddingNode) and dense_copies == []
        np.testing.assert_allclose(y.asnumpy(), [[3, 4], [0, 0], [3, 4]])
        y.backward()
    finally:
        type(w)._dense = orig
    assert w.grad.stype == "row_sparse" and w.grad.indices.asnumpy().tolist() == [2, 3]
    np.testing.assert_allclose(w.grad.data.asnumpy(), [[1, 1], [2, 2]])
