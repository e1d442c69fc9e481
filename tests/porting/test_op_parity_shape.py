"""Symbol/executor behaviour that MXNet 1.9.1's test_operator.py relies on (checked
against MXNet 1.9.1 with the mxvenv; see docs/porting-operators.md)."""
import numpy as np
import pytest

import plexnet as mx


@pytest.mark.parametrize("src,codes,reverse,dst", [
    ((2, 3, 5, 5), (0, -1), False, (2, 75)),
    ((2, 4, 5, 3), (-1, 2, 2, 1), False, (30, 2, 2, 1)),
    ((2, 3, 5, 6), (-3, -1), False, (6, 30)),
    ((64, 1, 2, 3), (-4, 16, -1, -2), False, (16, 4, 1, 2, 3)),
    ((2, 3, 5, 5), (0, -1), True, (5, 30)),
    ((1, 2, 3, 64), (-2, -1, 16, -4), True, (1, 2, 3, 4, 16)),
])
def test_reshape_infers_one_unknown_input_dim_from_the_output(src, codes, reverse, dst):
    # MXNet's ReverseReshapeInferShape: reshape(data) + ones(dst) with one 0 dim in data
    for i in range(len(src)):
        held = tuple(0 if j == i else d for j, d in enumerate(src))
        net = mx.sym.elemwise_add(mx.sym.var("data").reshape(codes, reverse=reverse), mx.sym.ones(shape=dst))
        ins, outs, _ = net.infer_shape(data=held)
        assert ins[0] == src and outs[0] == dst


def test_reshape_two_unknown_dims_stay_unknown():
    net = mx.sym.elemwise_add(mx.sym.var("data").reshape((0, -1)), mx.sym.ones(shape=(2, 75)))
    ins, _, _ = net.infer_shape_partial(data=(2, 0, 0, 5))
    assert ins[0] == (2, 0, 0, 5)


def test_explicit_none_of_an_optional_parameter_is_kept():
    s = mx.sym.slice_axis(mx.sym.var("x"), axis=0, begin=1, end=None)
    assert s.list_attr()["end"] == "None"
    assert s.infer_shape(x=(3, 4))[1][0] == (2, 4)
    x = np.arange(12.0).reshape(3, 4)
    exe = s.bind(mx.cpu(), {"x": mx.nd.array(x)})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), x[1:])


def test_grad_req_dict_ignores_names_that_are_not_arguments():
    # MXNet's test_convolution_independent_gradients passes 'b' for a no_bias convolution
    conv = mx.sym.Convolution(mx.sym.var("x"), mx.sym.var("w"), None, num_filter=2, kernel=(3,), no_bias=True)
    args = {"x": mx.nd.ones((1, 2, 5)), "w": mx.nd.ones((2, 2, 3))}
    grads = {"x": mx.nd.zeros((1, 2, 5)), "w": mx.nd.zeros((2, 2, 3))}
    exe = conv.bind(mx.cpu(), args, args_grad=grads, grad_req={"x": "write", "w": "add", "b": "null"})
    exe.forward(is_train=True)
    exe.backward(exe.outputs[0])
    assert grads["w"].asnumpy().sum() == 216.0


def test_simple_bind_ignores_keywords_that_name_no_input():
    # MXNet's test_take passes the operator's parameters to simple_bind
    s = mx.sym.take(mx.sym.var("a"), mx.sym.var("i"), axis=0)
    exe = s.simple_bind(mx.cpu(), a=(3, 4), i=(2,), axis=0, mode="clip", zz=(5,))
    assert exe.outputs[0].shape == (2, 4)
