"""When BatchNorm's moving statistics move, as MXNet 1.9.1's CPU operator (the values in the
comments were printed by MXNet 1.9.1 for the same calls; docs/porting-operators.md): not in a
training forward, once per backward (twice for a graph kept with retain_graph), never in a
training-mode forward without backward; the symbolic executor likewise."""
from __future__ import annotations

import numpy as np

import plexnet as mx
from plexnet import autograd, nd


def _bn():
    b = mx.gluon.nn.BatchNorm(in_channels=2)
    b.initialize()
    return b


def _stats(b):
    return b.running_mean.data().asnumpy(), b.running_var.data().asnumpy()


def test_gluon_batchnorm_moves_its_statistics_in_backward() -> None:
    b = _bn()
    x = nd.array([[1.0, 2.0], [3.0, 6.0]])
    x.attach_grad()
    with autograd.record():
        y = b(x)
    m, v = _stats(b)
    np.testing.assert_array_equal(m, [0, 0])                 # MXNet: [0. 0.] [1. 1.]
    np.testing.assert_array_equal(v, [1, 1])
    y.backward()
    m, v = _stats(b)
    np.testing.assert_allclose(m, [0.2, 0.4], rtol=1e-6)      # MXNet: [0.2 0.4] [1. 1.3]
    np.testing.assert_allclose(v, [1.0, 1.3], rtol=1e-6)
    with autograd.record():
        y = b(x)
    y.backward(retain_graph=True)
    y.backward()
    m, v = _stats(b)
    np.testing.assert_allclose(m, [0.542, 1.084], rtol=1e-6)  # MXNet: two more updates
    np.testing.assert_allclose(v, [1.0, 1.813], rtol=1e-6)
    with autograd.train_mode():                                # a training forward, no backward
        b(x)
    np.testing.assert_allclose(_stats(b)[0], [0.542, 1.084], rtol=1e-6)


def test_executor_batchnorm_moves_its_statistics_in_backward() -> None:
    s = mx.sym.BatchNorm(mx.sym.var("data"), name="bn", fix_gamma=False)
    exe = s.simple_bind(mx.cpu(), data=(2, 2))
    exe.arg_dict["data"][:] = nd.array([[1.0, 2.0], [3.0, 6.0]])
    exe.arg_dict["bn_gamma"][:] = 1
    exe.forward(is_train=True)
    np.testing.assert_array_equal(exe.aux_dict["bn_moving_mean"].asnumpy(), [0, 0])
    exe.backward(nd.ones((2, 2)))
    np.testing.assert_allclose(exe.aux_dict["bn_moving_mean"].asnumpy(), [0.2, 0.4], rtol=1e-6)
    np.testing.assert_allclose(exe.aux_dict["bn_moving_var"].asnumpy(), [0.1, 0.4], rtol=1e-6)
