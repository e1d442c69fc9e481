"""Python custom operators (``sym.Custom``, asynchronous) inside bound graphs."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from gradcheck import check_graph_gradients

sym = mx.sym


@mx.operator.register("xt_scaled_square")
class ScaledSquareProp(mx.operator.CustomOpProp):
    def __init__(self, factor="1.0"):
        super().__init__(need_top_grad=True)
        self.factor = float(factor)

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return ScaledSquare(self.factor)


class ScaledSquare(mx.operator.CustomOp):
    def __init__(self, factor):
        self.factor = factor

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        self.assign(out_data[0], req[0], mx.nd.array(self.factor * x * x, dtype=x.dtype))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        x = in_data[0].asnumpy()
        g = out_grad[0].asnumpy()
        self.assign(in_grad[0], req[0], mx.nd.array(2 * self.factor * x * g, dtype=x.dtype))


def _net():
    data = sym.Variable("data")
    h = sym.XTFullyConnected(data, num_hidden=4, name="fc1")
    h = sym.Custom(h, op_type="xt_scaled_square", factor=0.5, name="csq")
    h = sym.XTActivation(h, act_type="tanh", name="t")
    return sym.XTFullyConnected(h, num_hidden=2, name="fc2")


@pytest.mark.timeout(60)
def test_custom_op_in_graph_gradients():
    net = _net()
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"]
    exe = check_graph_gradients(net, {"data": (3, 5)})
    r = exe.memory_report()
    # the asynchronous custom operator is a segment of its own in each direction
    assert r["forward_segments"] == 3 and r["backward_segments"] == 3


@pytest.mark.timeout(60)
def test_custom_op_json_round_trip():
    net = _net()
    back = sym.load_json(net.tojson())
    assert back.tojson() == net.tojson()
    exe = back.simple_bind(mx.cpu(), data=(2, 5))
    exe.arg_dict["data"][:] = 1.0
    exe.arg_dict["fc1_weight"][:] = 0.1
    out = exe.forward()[0].asnumpy()
    assert out.shape == (2, 2) and np.all(np.isfinite(out))
