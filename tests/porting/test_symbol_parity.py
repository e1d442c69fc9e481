"""MXNet 1.9.1 Symbol behaviours found by running MXNet's own test_symbol.py."""
import re

import pytest

import plexnet as mx
from plexnet.base import NotImplementedForSymbol


def test_bool_of_symbol_raises():
    with pytest.raises(NotImplementedForSymbol):
        bool(mx.sym.Variable("x"))


def test_operator_lr_wd_mult_become_hidden_attributes():
    data = mx.sym.Variable("data", lr_mult=0.2)
    fc = mx.sym.FullyConnected(data=data, name="fc1", num_hidden=8, wd_mult=0.3, lr_mult=2)
    attrs = fc.attr_dict()
    # values checked against MXNet 1.9.1
    assert attrs["fc1"] == {"__lr_mult__": "2", "lr_mult": "2", "__wd_mult__": "0.3", "wd_mult": "0.3",
                            "num_hidden": "8"}
    assert attrs["fc1_weight"]["__wd_mult__"] == "0.3"
    assert attrs["fc1_bias"]["__lr_mult__"] == "2"
    assert attrs["data"] == {"__lr_mult__": "0.2", "lr_mult": "0.2"}
    # not operator parameters: the graph still binds and runs
    exe = fc.simple_bind(mx.cpu(), data=(2, 3))
    assert exe.forward()[0].shape == (2, 8)
    back = mx.sym.load_json(fc.tojson())
    assert back.attr_dict()["fc1"]["__wd_mult__"] == "0.3"


def test_dunder_keywords_are_attributes_not_parameters():
    s = mx.sym.Activation(data=mx.sym.Variable("data"), act_type="relu", __layout__="TNC", name="act")
    # MXNet 1.9.1: {'act_type': 'relu', '__layout__': 'TNC'} (no un-hidden 'layout' copy)
    assert s.list_attr() == {"act_type": "relu", "__layout__": "TNC"}
    x = mx.sym.Variable("x", shape=(2, 3), lr_mult=2)
    assert x.attr_dict()["x"] == {"__shape__": "(2, 3)", "__lr_mult__": "2", "lr_mult": "2"}


def test_backward_of_executor_without_gradients_is_a_no_op():
    s = mx.sym.relu(mx.sym.Variable("data"))
    exe = s.simple_bind(mx.cpu(), data=(2, 3), grad_req="null")
    exe.forward(is_train=True)
    exe.backward([mx.nd.ones((2, 3))])
    assert exe.outputs[0].shape == (2, 3)


def test_base_mx_real_t():
    import numpy as np
    assert mx.base.mx_real_t is np.float32
    out = mx.sym.FullyConnected(data=mx.sym.Variable("data"), name="fc1", num_hidden=4)
    arg_types, out_types, _ = out.infer_type(data=mx.base.mx_real_t)
    assert out_types == [np.float32] and arg_types == [np.float32] * 3


def test_identity_with_attr_like_rhs_backward_infer():
    # MXNet's test_infer_shape.test_backward_infer; values recorded with MXNet 1.9.1
    w, wshift, data = mx.sym.Variable("weight"), mx.sym.Variable("wshift", shape=(1,)), mx.sym.Variable("data")
    wt = mx.symbol._internal._identity_with_attr_like_rhs(mx.sym.broadcast_add(w, wshift), w)
    net = mx.sym.FullyConnected(data=data, weight=wt, num_hidden=11, no_bias=True)
    arg_shapes, _, _ = net.infer_shape(data=(7, 100))
    assert dict(zip(net.list_arguments(), arg_shapes))["weight"] == (11, 100)
    ex = net.simple_bind(mx.cpu(), data=(7, 100))
    ex.arg_dict["weight"][:] = 1
    ex.arg_dict["wshift"][:] = 0.5
    ex.arg_dict["data"][:] = 1
    assert ex.forward(is_train=True)[0][0, :3].asnumpy().tolist() == [150, 150, 150]
    ex.backward(mx.nd.ones((7, 11)))
    assert ex.grad_dict["weight"][0, :3].asnumpy().tolist() == [7, 7, 7]
    assert ex.grad_dict["wshift"].asnumpy().tolist() == [7700]


def test_identity_with_attr_like_rhs_imperative():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym._internal._identity_with_attr_like_rhs(a, b, name="id")
    assert s.infer_shape_partial(b=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert s.infer_type(b="float16")[1][0].__name__ == "float16"
    x, y = mx.nd.array([[1, 2, 3]]), mx.nd.zeros((1, 3))
    x.attach_grad()
    y.attach_grad()
    with mx.autograd.record():
        o = mx.nd._internal._identity_with_attr_like_rhs(x, y)
    o.backward(mx.nd.array([[5, 6, 7]]))
    assert o.asnumpy().tolist() == [[1, 2, 3]]
    assert x.grad.asnumpy().tolist() == [[5, 6, 7]] and y.grad.asnumpy().tolist() == [[0, 0, 0]]
    with pytest.raises(mx.MXNetError):
        mx.nd._internal._identity_with_attr_like_rhs(x, mx.nd.zeros((2, 3)))


def _arg_shapes(sym, partial=False):
    shapes = (sym.infer_shape_partial() if partial else sym.infer_shape())[0]
    return dict(zip(sym.list_arguments(), shapes))


def test_incomplete_infer_through_slicechannel_and_convolution():
    # MXNet's test_infer_shape.test_incomplete_infer (values as MXNet 1.9.1)
    a = mx.sym.Variable("a", shape=(0, 10))
    d = mx.sym.SliceChannel(data=a, num_outputs=10, axis=1, squeeze_axis=True)[1] + mx.sym.Variable("c", shape=(5,))
    assert _arg_shapes(d)["a"] == (5, 10)
    a = mx.sym.Variable("a", shape=(0, 15, 0))
    d = mx.sym.SliceChannel(data=a, num_outputs=3, squeeze_axis=False)[1] + mx.sym.Variable("c", shape=(3, 5, 2))
    assert _arg_shapes(d)["a"] == (3, 15, 2)
    a = mx.sym.Variable("a", shape=(0, 0, 6))
    d = mx.sym.SliceChannel(data=a, num_outputs=2, axis=-1)[0] + mx.sym.Variable("c", shape=(4, 7, 3))
    assert _arg_shapes(d)["a"] == (4, 7, 6)
    a = mx.sym.Variable("a", shape=(0, 10, 0, 0))
    b = mx.sym.Convolution(data=a, num_filter=21, kernel=(3, 3), dilate=(1, 1), pad=(1, 1))
    assert _arg_shapes(b + mx.sym.Variable("c", shape=(5, 21, 32, 32)))["a"] == (5, 10, 32, 32)
    a = mx.sym.Variable("a", shape=(0, 10, 0))  # dilated 1-d kernel: 20 + 2 * (3 - 1) = 24
    b = mx.sym.Convolution(data=a, num_filter=4, kernel=(3,), dilate=(2,))
    assert _arg_shapes(b + mx.sym.Variable("c", shape=(5, 4, 20)))["a"] == (5, 10, 24)


def test_slice_assign_operators_in_graphs():
    # sym._internal._slice_assign / _crop_assign (+ _scalar): values as MXNet 1.9.1
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym._internal._slice_assign(a, b, begin=(0, 1), end=(2, 3))
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape(a=(3, 4)) == ([(3, 4), (2, 2)], [(3, 4)], [])
    ex = s.simple_bind(mx.cpu(), a=(3, 4), b=(2, 2), grad_req="null")
    ex.arg_dict["a"][:] = 1
    ex.arg_dict["b"][:] = 5
    assert ex.forward()[0].asnumpy().tolist() == [[1, 5, 5, 1], [1, 5, 5, 1], [1, 1, 1, 1]]
    s2 = mx.sym._internal._crop_assign_scalar(a, scalar=7, begin=(None, 1), end=(None, None), step=(None, 2))
    ex = s2.simple_bind(mx.cpu(), a=(3, 4), grad_req="null")
    ex.arg_dict["a"][:] = 1
    assert ex.forward()[0].asnumpy().tolist() == [[1, 7, 1, 7]] * 3
    with pytest.raises(mx.MXNetError):
        s.infer_shape(a=(3, 4), b=(3, 3))
    with pytest.raises(mx.MXNetError, match="_slice_assign is non-differentiable"):
        s.simple_bind(mx.cpu(), a=(3, 4), b=(2, 2))
    x = mx.nd.ones((2, 3))
    assert mx.nd._internal._slice_assign(x, mx.nd.zeros((1, 2)), begin=(1, 0), end=(2, 2), out=x) is x
    assert x.asnumpy().tolist() == [[1, 1, 1], [0, 0, 1]]


def test_namespaced_operators_are_named_as_mxnet_exposes_them():
    """MXNet hints a node's name with the function's own name: sym.contrib.boolean_mask
    makes boolean_mask0 (not _contrib_boolean_mask0), sym.linalg_gemm2 linalg_gemm20."""
    a = mx.sym.Variable("a")
    with mx.name.NameManager():
        assert mx.sym.contrib.boolean_mask(a, a).name == "boolean_mask0"
        assert mx.sym.linalg.gemm2(a, a).name == "gemm20"
        assert mx.sym.linalg_gemm2(a, a).name == "linalg_gemm20"
        assert mx.sym.image.to_tensor(a).name == "to_tensor0"
        assert mx.sym.contrib.BilinearResize2D(a, height=2, width=2).name == "bilinearresize2d0"
        assert mx.sym.random.uniform().name == "_random_uniform0"
        assert mx.sym._internal._plus(a, a).name == "_plus0"
        assert mx.sym.contrib.boolean_mask(a, a, name="m").name == "m"


@pytest.mark.parametrize("stmt, alias", [("a += b", "+="), ("a -= 1", "-="), ("a *= 2", "*="), ("a /= 2", "/=")])
def test_inplace_arithmetic_on_symbol_raises_as_mxnet(stmt: str, alias: str) -> None:
    # MXNet 1.9.1: NotImplementedForSymbol("... (namely operator "+=") ... only available in NDArray.")
    env = {"a": mx.sym.Variable("a"), "b": mx.sym.Variable("b")}
    with pytest.raises(NotImplementedForSymbol, match=re.escape(f'namely operator "{alias}"')):
        exec(stmt, env)
    assert env["a"].name == "a"                  # unchanged
