import numpy as np
import pytest

from opcheck import REQS, check_forward, check_gradient, check_req, infer_shapes, run_backward


@pytest.mark.parametrize("dshape", [(5,), (2, 3), (2, 2, 3)])
def test_forward_backward(dshape, rng):
    kw = dict(input_dim=6, output_dim=3, dtype="float64")
    idx = rng.integers(0, 6, dshape).astype("f8")
    w = rng.standard_normal((6, 3))
    check_forward("Embedding", [idx, w], kw, w[idx.astype(int)])
    check_gradient("Embedding", [idx, w], kw, wrt=["weight"])
    dy = rng.standard_normal(dshape + (3,))
    g = run_backward("Embedding", [idx, w], kw, out_grads=[dy])
    exp = np.zeros_like(w)
    for i, row in zip(idx.reshape(-1).astype(int), dy.reshape(-1, 3)):
        exp[i] += row
    np.testing.assert_allclose(g[1], exp, rtol=1e-12)
    np.testing.assert_array_equal(g[0], 0)


def test_clip_and_truncate():
    w = np.arange(40.0).reshape(10, 4).astype("f4")
    out = check_forward("Embedding", [np.array([[-1.0, 12.0, 3.7]]), w], dict(input_dim=10, output_dim=4),
                        w[[0, 9, 3]][None])
    assert out[0].dtype == np.float32


def test_int_indices():
    w = np.arange(12.0).reshape(6, 2).astype("f4")
    check_forward("Embedding", [np.array([5, 0, 2], dtype="int32"), w], dict(input_dim=6, output_dim=2), w[[5, 0, 2]])


@pytest.mark.parametrize("req", REQS)
def test_req(req, rng):
    kw = dict(input_dim=5, output_dim=2, dtype="float64")
    check_req("Embedding", [np.array([[1.0, 1.0, 4.0], [0.0, 2.0, 1.0]]), rng.standard_normal((5, 2))], kw, req=req)


def test_infer_shape():
    ins, outs, _ = infer_shapes("Embedding", dict(input_dim=10, output_dim=4), data=(2, 3))
    assert ins == [(2, 3), (10, 4)] and outs == [(2, 3, 4)]
