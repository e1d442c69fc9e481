"""Contrib-operator behaviour that MXNet 1.9.1's test_operator.py relies on (checked
against MXNet 1.9.1 with the mxvenv; see docs/porting-operators.md)."""
import numpy as np

import plexnet as mx


def test_contrib_ndarray_and_symbol_namespaces():
    from plexnet.contrib import ndarray, symbol
    assert ndarray.CTCLoss is mx.nd.contrib.CTCLoss
    assert symbol.index_copy is mx.sym.contrib.index_copy
    assert mx.contrib.ndarray is mx.nd.contrib


def test_index_copy_accepts_an_integer_index():
    x = mx.nd.zeros((5, 3))
    t = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    x.attach_grad(); t.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.index_copy(x, mx.nd.array([0, 4, 2], dtype=np.int64), t)
    out.backward()
    np.testing.assert_array_equal(out.asnumpy(), [[1, 2, 3], [0, 0, 0], [7, 8, 9], [0, 0, 0], [4, 5, 6]])
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0] * 3, [1] * 3, [0] * 3, [1] * 3, [0] * 3])
    np.testing.assert_array_equal(t.grad.asnumpy(), np.ones((3, 3)))
    s = mx.sym.contrib.index_copy(mx.sym.var("a"), mx.sym.var("i"), mx.sym.var("b"))
    args, outs, _ = s.infer_type(a="float32", i="int64", b="float32")
    assert [np.dtype(t) for t in args] == [np.float32, np.int64, np.float32] and outs == [np.float32]
