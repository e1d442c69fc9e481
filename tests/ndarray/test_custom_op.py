"""MXNet-style Python custom operators through nd.Custom."""
import numpy as np
import pytest

import plexnet as mx

nd = mx.nd
pytestmark = pytest.mark.timeout(60)


class Sqr(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()  # NDArray API is usable inside a custom op
        self.assign(out_data[0], req[0], mx.nd.array(x * x))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])


@mx.operator.register("test_sqr")
class SqrProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1"):
        super().__init__(need_top_grad=True)
        self.scale = float(scale)

    def list_arguments(self):
        return ["data"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        assert shapes == [[2, 3]]
        return Sqr()


def test_forward_values():
    x = np.arange(6, dtype="f4").reshape(2, 3)
    y = nd.Custom(nd.array(x), op_type="test_sqr", scale=2)
    np.testing.assert_array_equal(y.asnumpy(), x * x)


def test_many_custom_ops_in_flight_do_not_deadlock():
    xs = [nd.array(np.full((2, 3), i, "f4")) for i in range(20)]
    ys = [nd.Custom(x, op_type="test_sqr") for x in xs]
    for i, y in enumerate(ys):
        assert y.asnumpy()[0, 0] == i * i


def test_unknown_op_type_is_a_clear_error():
    with pytest.raises(mx.operator.ParamError, match="not_registered.*test_sqr"):
        nd.Custom(nd.ones((2, 3)), op_type="not_registered")


def test_prop_sees_string_kwargs():
    prop = mx.plugins.registries().operators.create_property("Custom", {"op_type": "test_sqr", "scale": 3})
    assert prop.user.scale == 3.0
    assert prop.get_params() == {"op_type": "test_sqr", "scale": "3"}
