"""Gradient conventions at ties and poles where MXNet 1.9.1 differs from the textbook
(found by ``tools/mxnet_differential.py --grads``; values printed by MXNet 1.9.1), and
the regression outputs' tolerance of unknown arguments (MXNet's ``InitAllowUnknown``)."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx

TIE = np.array([[0, 1, 1, -1], [2, 2, 0, -2], [0.5, -0.5, 0, 3]], "f4")


def _grad(name: str, *arrays: np.ndarray) -> list[np.ndarray]:
    xs = [mx.nd.array(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(*xs)
    head = np.arange(1, y.size + 1, dtype="f4").reshape(y.shape) / y.size
    y.backward(mx.nd.array(head))
    return [x.grad.asnumpy() for x in xs]


def test_mae_regression_gradient_is_minus_one_where_output_equals_label() -> None:
    label = np.array([[0, 1, 2, -1], [2, 1, 0, 2], [0.5, 0.5, 0, 3]], "f4")
    g, gl = _grad("MAERegressionOutput", TIE, label)
    expected = np.full((3, 4), -0.25, "f4")
    expected[1, 1] = 0.25          # the only place where output > label
    np.testing.assert_array_equal(g, expected)
    np.testing.assert_array_equal(gl, 0)


def test_gammaln_gradient_is_plus_inf_at_the_poles() -> None:
    (g,) = _grad("gammaln", TIE)
    assert np.isposinf(g[0, 0]) and np.isposinf(g[0, 3]) and np.isposinf(g[1, 2]) and np.isposinf(g[1, 3])
    np.testing.assert_allclose(g[2], [-1.4726, 0.0304, np.inf, 0.9228], rtol=1e-3)


def test_gamma_gradient_at_zero_and_the_negative_integers() -> None:
    (g,) = _grad("gamma", TIE)
    assert np.isposinf(g[0, 0]) and np.isposinf(g[1, 2]) and np.isposinf(g[2, 2])
    assert np.isnan(g[0, 3]) and np.isnan(g[1, 3])
    np.testing.assert_allclose(g[1, :2], [0.1762, 0.2114], rtol=1e-3)


def test_regression_outputs_ignore_unknown_arguments() -> None:
    a = mx.nd.array(np.arange(12).reshape(3, 4))
    b = mx.nd.ones((3, 4))
    for name in ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"):
        out = getattr(mx.nd, name)(a, b, axis=0, foo=3)
        assert out.shape == (3, 4)
    s = mx.sym.LinearRegressionOutput(mx.sym.var("a"), mx.sym.var("b"), axis=0)
    assert s.list_arguments() == ["a", "b"]


def test_selu_gradient_is_mxnets_lambda_times_output_plus_alpha() -> None:
    # MXNet 1.9.1: LeakyReLU(act_type='selu') backward is lambda * (y + alpha) where y <= 0
    # (not the derivative lambda * alpha * exp(x)); printed by MXNet for these inputs
    x = mx.nd.array([-1.0, -0.2, -3.0, 0.3])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LeakyReLU(x, act_type="selu")
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [0.590423, 1.4232521, 0.00283098, 1.050701], rtol=1e-5,
                               atol=1e-6)


def test_l2_norm_gradient_is_nan_where_the_norm_is_zero() -> None:
    # MXNet 1.9.1: x / norm(x), 0 / 0 for a zero row; L1's gradient there is sign(0) = 0
    x = mx.nd.array([[0, 0, 0], [1, 2, 2]])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.norm(x, ord=2, axis=1)
    y.backward()
    g = x.grad.asnumpy()
    assert np.isnan(g[0]).all()
    np.testing.assert_allclose(g[1], [1 / 3, 2 / 3, 2 / 3], rtol=1e-6)
    with mx.autograd.record():
        y = mx.nd.norm(x, ord=1, axis=1)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[0, 0, 0], [1, 1, 1]])


def test_backward_with_no_input_requiring_gradients_is_refused() -> None:
    # MXNet: "There are no inputs in computation graph that require gradients."
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad(grad_req="null")
    with mx.autograd.record():
        y = x * 2
    with pytest.raises(mx.base.MXNetError, match="require gradients"):
        y.backward()


@pytest.mark.parametrize("name", ["all_finite", "multi_all_finite", "argmax_channel", "khatri_rao", "shuffle"])
def test_operators_without_a_gradient_in_mxnet_refuse_backward(name: str) -> None:
    # MXNet 1.9.1 registers no FGradient for these: "Operator ... is non-differentiable"
    x = mx.nd.array(np.random.RandomState(0).uniform(0.1, 0.9, (3, 4)))
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(x)
    with pytest.raises(mx.base.MXNetError, match="non-differentiable"):
        y.backward()
