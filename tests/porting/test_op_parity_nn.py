"""Operator behaviour that MXNet 1.9.1's tests/python/unittest/test_operator.py relies on
(values checked against MXNet 1.9.1 with the mxvenv; see docs/porting-operators.md)."""
import numpy as np

import plexnet as mx


def test_shape_params_accept_numpy_integers():
    # test_deconvolution passes kernel=tuple(2 * np.array(pad) + 1): a tuple of np.int64
    kernel = tuple(2 * np.array((1, 1)) + 1)
    s = mx.sym.Convolution(mx.sym.var("x"), kernel=kernel, num_filter=2, no_bias=True)
    assert s.list_attr()["kernel"] == "(3, 3)"
    y = mx.nd.Convolution(mx.nd.ones((1, 1, 5, 5)), mx.nd.ones((2, 1, 3, 3)), kernel=kernel,
                          num_filter=2, no_bias=True)
    assert y.shape == (1, 2, 3, 3)


def test_deconvolution_target_shape_ignores_pad_and_adj():
    d = mx.sym.Deconvolution(mx.sym.var("data"), kernel=(3, 3), stride=(2, 2), pad=(99, 99),
                             adj=(101, 101), num_filter=5, target_shape=(8, 8))
    _, out, _ = d.infer_shape(data=(2, 3, 4, 4))
    assert out[0] == (2, 5, 8, 8)
    d1 = mx.sym.Deconvolution(mx.sym.var("data"), kernel=(3,), stride=(2,), pad=(99,),
                              adj=(101,), num_filter=5, target_shape=(8,))
    assert d1.infer_shape(data=(2, 3, 4))[1][0] == (2, 5, 8)


def test_deconvolution_adj_still_checked_without_target_shape():
    import pytest
    with pytest.raises(Exception, match="adj"):
        mx.sym.Deconvolution(mx.sym.var("data"), kernel=(3, 3), stride=(2, 2), adj=(2, 2), num_filter=5)


def test_sync_batchnorm_outputs_batch_variance_in_training():
    # MXNet 1.9.1: SyncBatchNorm's third output is the variance, BatchNorm's the inverse std
    rng = np.random.RandomState(0)
    x = mx.nd.array(rng.uniform(size=(24, 3, 4)))
    g = mx.nd.array(rng.uniform(size=3)); b = g.copy()
    x.attach_grad(); g.attach_grad()
    with mx.autograd.record():
        out, mean, var = mx.nd.contrib.SyncBatchNorm(x, g, b, mx.nd.zeros(3), mx.nd.ones(3), fix_gamma=False,
                                                     output_mean_var=True, key="k", eps=1e-5)
        out.backward(mx.nd.ones_like(out))
    xn = x.asnumpy()
    np.testing.assert_allclose(mean.asnumpy(), xn.mean(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_allclose(var.asnumpy(), xn.var(axis=(0, 2)), rtol=1e-4)
    # gradient is BatchNorm's (unaffected by the variance output)
    x2 = mx.nd.array(xn); g2 = mx.nd.array(g.asnumpy()); x2.attach_grad(); g2.attach_grad()
    with mx.autograd.record():
        o2 = mx.nd.BatchNorm(x2, g2, b, mx.nd.zeros(3), mx.nd.ones(3), fix_gamma=False, eps=1e-5)
        o2.backward(mx.nd.ones_like(o2))
    np.testing.assert_allclose(x.grad.asnumpy(), x2.grad.asnumpy(), rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(g.grad.asnumpy(), g2.grad.asnumpy(), rtol=1e-3, atol=1e-5)
    with mx.autograd.record():
        _, _, inv = mx.nd.BatchNorm(x, g, b, mx.nd.zeros(3), mx.nd.ones(3), fix_gamma=False,
                                    output_mean_var=True, eps=1e-5)
    np.testing.assert_allclose(inv.asnumpy(), 1 / np.sqrt(xn.var(axis=(0, 2)) + 1e-5), rtol=1e-4)


def test_scalar_parameter_defaults_to_one():
    # MXNet 1.9.1: scalar ops' `scalar` defaults to 1 (test_unary_math_operators: smooth_l1(x))
    x = mx.nd.array([-2, -0.5, 0.3, 1.5])
    np.testing.assert_allclose(mx.nd.smooth_l1(x).asnumpy(), [1.5, 0.125, 0.045, 1.0], rtol=1e-6)
    np.testing.assert_allclose(mx.nd._internal._plus_scalar(mx.nd.array([2., 3.])).asnumpy(), [3., 4.])
    np.testing.assert_allclose(mx.nd._internal._rdiv_scalar(mx.nd.array([2., 4.])).asnumpy(), [0.5, 0.25])


def test_backward_gather_nd_accumulates_repeated_indices():
    data = mx.nd.array([2., 3., 0.])
    idx = mx.nd.array([[1, 1, 0], [1, 1, 0]], dtype="int32")
    np.testing.assert_array_equal(mx.nd._internal._backward_gather_nd(data, idx, shape=(2, 2)).asnumpy(),
                                  [[0, 0], [0, 5]])  # MXNet 1.9.1
    np.testing.assert_array_equal(mx.nd.scatter_nd(data, idx, shape=(2, 2)).asnumpy()[0], [0, 0])
    x = mx.nd.arange(24).reshape((2, 3, 4))
    i = mx.nd.array([[1, 0, 1], [2, 1, 2]], dtype="int32")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.gather_nd(x, i)
    y.backward(y)
    np.testing.assert_array_equal(mx.nd._internal._backward_gather_nd(y, i, shape=x.shape).asnumpy(),
                                  x.grad.asnumpy())
