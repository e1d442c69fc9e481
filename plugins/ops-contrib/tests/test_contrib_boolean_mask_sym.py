"""Symbolic ``boolean_mask`` (``_contrib_boolean_mask``): a run-time output shape, run by
the dynamic executor (bind, simple_bind, backward, hybridized Gluon, MXNet's JSON).
Expected values are MXNet 1.9.1's (same graphs run there)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import plexnet as mx

MXNET_JSON = json.dumps({
    "nodes": [{"op": "null", "name": "d", "inputs": []},
              {"op": "_mul_scalar", "name": "_mulscalar0", "attrs": {"scalar": "2"}, "inputs": [[0, 0, 0]]},
              {"op": "null", "name": "i", "inputs": []},
              {"op": "_contrib_boolean_mask", "name": "boolean_mask0", "inputs": [[1, 0, 0], [2, 0, 0]]}],
    "arg_nodes": [0, 2], "node_row_ptr": [0, 1, 2, 3, 4], "heads": [[3, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10901]}})


def _net() -> mx.sym.Symbol:
    return mx.sym.contrib.boolean_mask(mx.sym.var("d") * 2, mx.sym.var("i"))


def test_shape_inference_leaves_the_output_unknown_as_mxnet() -> None:
    arg, out, aux = _net().infer_shape_partial(d=(5, 3), i=(5,))
    assert arg == [(5, 3), (5,)] and out == [()] and aux == []
    with pytest.raises(mx.base.ShapeError, match=r"_contrib_boolean_mask: index must be 1-D"):
        _net().infer_shape_partial(d=(5, 3), i=(4,))


def test_bind_forward_backward() -> None:
    d = mx.nd.array(np.arange(15).reshape(5, 3))
    i = mx.nd.array([1, 0, 1, 0, 0])
    gd = mx.nd.zeros((5, 3))
    ex = _net().bind(mx.cpu(), {"d": d, "i": i}, args_grad={"d": gd}, grad_req={"d": "write", "i": "null"})
    out = ex.forward(is_train=True)[0]
    np.testing.assert_array_equal(out.asnumpy(), [[0, 2, 4], [12, 14, 16]])
    ex.backward(mx.nd.ones(out.shape) * 3)
    np.testing.assert_array_equal(gd.asnumpy(), [[6] * 3, [0] * 3, [6] * 3, [0] * 3, [0] * 3])
    # another mask: another output shape from the same executor
    out = ex.forward(is_train=False, i=mx.nd.array([0, 1, 1, 1, 1]))[0]
    assert out.shape == (4, 3) and ex.output_dict[ex._out_names[0]].shape == (4, 3)


def test_simple_bind_through_layers_and_gradients_of_parameters() -> None:
    net = mx.sym.sum(mx.sym.contrib.boolean_mask(mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=4, name="fc"),
                                                 mx.sym.var("m")))
    ex = net.simple_bind(mx.cpu(), x=(6, 3), m=(6,))
    ex.arg_dict["x"][:] = 1
    ex.arg_dict["fc_weight"][:] = 0.5
    ex.arg_dict["m"][:] = mx.nd.array([1, 1, 0, 0, 0, 1])
    assert ex.forward(is_train=True)[0].asscalar() == 18.0
    ex.backward()
    np.testing.assert_array_equal(ex.grad_dict["fc_weight"].asnumpy(), np.full((4, 3), 3.0))
    np.testing.assert_array_equal(ex.grad_dict["fc_bias"].asnumpy(), np.full(4, 3.0))


def test_hybridized_block_with_boolean_mask() -> None:
    class Masked(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, i):  # type: ignore[no-untyped-def]
            return F.contrib.boolean_mask(x * 2, i)

    b = Masked()
    b.hybridize()
    x = mx.nd.ones((5, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = b(x, mx.nd.array([1, 0, 1, 0, 1]))
    y.backward()
    assert y.shape == (3, 3)
    np.testing.assert_array_equal(x.grad.asnumpy()[:, 0], [2, 0, 2, 0, 2])
    assert b(x, mx.nd.array([1, 1, 1, 1, 1])).shape == (5, 3)


def test_mxnet_json_loads_and_runs() -> None:
    s = mx.sym.load_json(MXNET_JSON)
    assert s.list_arguments() == ["d", "i"]
    ex = s.bind(mx.cpu(), {"d": mx.nd.ones((3, 2)), "i": mx.nd.array([0, 0, 1])})
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), [[2, 2]])


def test_axis_other_than_zero_is_refused() -> None:
    with pytest.raises(mx.base.ShapeError, match="axis=1 is not supported"):
        mx.sym.contrib.boolean_mask(mx.sym.var("d"), mx.sym.var("i"), axis=1).infer_shape_partial(d=(2, 3), i=(3,))
