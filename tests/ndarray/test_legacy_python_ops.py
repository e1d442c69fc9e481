"""MXNet's deprecated ``NumpyOp`` / ``NDArrayOp`` / ``PythonOp`` (on ``Custom``) and
``mx.operator.get_all_registered_operators``."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import plexnet as mx

pytestmark = pytest.mark.timeout(60)


class Square(mx.operator.NumpyOp):
    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] ** 2

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = 2 * in_data[0] * out_grad[0]


class PairSum(mx.operator.NDArrayOp):
    def list_arguments(self):
        return ["a", "b"]

    def list_outputs(self):
        return ["sum", "diff"]

    def infer_shape(self, in_shape):
        return [in_shape[0], in_shape[0]], [in_shape[0], in_shape[0]]

    def forward(self, in_data, out_data):
        out_data[0][:] = in_data[0] + in_data[1]
        out_data[1][:] = in_data[0] - in_data[1]

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_grad[0] + out_grad[1]
        in_grad[1][:] = out_grad[0] - out_grad[1]


def test_numpy_op_forward_backward():
    with pytest.warns(DeprecationWarning, match="NumpyOp has been deprecated"):
        op = Square()
    s = op(mx.sym.Variable("x"), name="sq")
    assert s.list_outputs() == ["sq_output"]
    exe = s.simple_bind(mx.cpu(), x=(3,))
    exe.arg_dict["x"][:] = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(exe.forward(is_train=True)[0].asnumpy(), [1, 4, 9])
    exe.backward(mx.nd.array([1.0, 1.0, 0.5]))
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), [2, -4, 3])


def test_ndarray_op_with_two_inputs_and_outputs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        s = PairSum().get_symbol(mx.sym.Variable("a"), mx.sym.Variable("b"), name="ps")
    assert s.list_arguments() == ["a", "b"] and len(s.list_outputs()) == 2
    exe = s.bind(mx.cpu(), {"a": mx.nd.array([1.0, 2.0]), "b": mx.nd.array([3.0, 5.0])},
                 args_grad={"a": mx.nd.zeros((2,)), "b": mx.nd.zeros((2,))})
    outs = exe.forward(is_train=True)
    np.testing.assert_allclose(outs[0].asnumpy(), [4, 7])
    np.testing.assert_allclose(outs[1].asnumpy(), [-2, -3])
    exe.backward([mx.nd.ones((2,)), mx.nd.ones((2,)) * 2])
    np.testing.assert_allclose(exe.grad_dict["a"].asnumpy(), [3, 3])
    np.testing.assert_allclose(exe.grad_dict["b"].asnumpy(), [-1, -1])


def test_registered_operator_list():
    names = mx.operator.get_all_registered_operators()
    assert "Custom" in names and names == sorted(names)
    assert mx.operator.array is mx.nd.array
