"""Attributes and composition details MXNet code relies on: AttrScope, NameManager and
Prefix, lr_mult/wd_mult, __shape__/__dtype__/__layout__ hints, attributes given to input
variables on composition (PReLU's gamma), legacy JSON keys, a Custom operator's shape
inference filling unknown inputs."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import plexnet as mx
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(60)


def _ops(*names):
    missing = [n for n in names if n not in registries().operators]
    if missing:
        pytest.skip(f"needs operators {missing}")


def test_attr_scope_name_manager_prefix():
    _ops("FullyConnected")
    with mx.AttrScope(ctx_group="g1", lr_mult="0.5"):
        a = mx.sym.Variable("a")
        with mx.AttrScope(wd_mult="2"):
            fc = mx.sym.FullyConnected(a, num_hidden=2, name="fc")
    assert a.attr("ctx_group") == "g1" and a.attr("__lr_mult__") == "0.5"
    assert fc.attr("__wd_mult__") == "2" and fc.attr("__ctx_group__") == "g1"
    d = fc.attr_dict()
    assert d["fc"]["__lr_mult__"] == "0.5" and d["fc_weight"]["__wd_mult__"] == "2"
    with mx.name.NameManager():
        s1 = mx.sym.FullyConnected(a, num_hidden=2)
        s2 = mx.sym.FullyConnected(a, num_hidden=2)
    assert (s1.name, s2.name) == ("fullyconnected0", "fullyconnected1")
    with mx.name.Prefix("net1_"):
        s3 = mx.sym.FullyConnected(a, num_hidden=2, name="fc")
    assert s3.name == "net1_fc" and "net1_fc_weight" in s3.list_arguments()
    v = mx.sym.Variable("w", lr_mult=2.0, wd_mult=0.0, shape=(3, 4), dtype="float16", init=mx.init.One())
    assert v.attr("__lr_mult__") == "2.0" and v.attr("__wd_mult__") == "0.0"
    assert v.attr("__shape__") == "(3, 4)" and v.attr("__dtype__") == "2"
    with pytest.raises(ValueError, match="double underscores"):
        mx.sym.Variable("bad", foo="1")
    lay = mx.sym.Variable("x", __layout__="NCHW")
    assert lay.attr("__layout__") == "NCHW"


def test_shape_and_dtype_hints_feed_inference():
    _ops("FullyConnected")
    x = mx.sym.Variable("x", shape=(5, 7), dtype="float64")
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    assert fc.infer_shape()[1] == [(5, 3)]
    assert fc.infer_type()[1] == [np.float64]
    exe = fc.simple_bind(mx.cpu())
    assert exe.arg_dict["fc_weight"].shape == (3, 7) and exe.arg_dict["x"].dtype == np.float64


def test_prelu_gamma_initialised_to_quarter():
    _ops("LeakyReLU")
    s = mx.sym.LeakyReLU(mx.sym.Variable("x"), act_type="prelu", name="p")
    gamma_attrs = s.attr_dict()["p_gamma"]
    assert gamma_attrs["__init__"] == '["Constant", {"value": 0.25}]'
    mod = mx.mod.Module(s, data_names=["x"], label_names=None)
    mod.bind(data_shapes=[("x", (2, 3, 4))])
    mod.init_params(mx.init.Xavier())
    np.testing.assert_array_equal(mod.get_params()[0]["p_gamma"].asnumpy(), [0.25] * 3)
    g = mx.sym.Variable("g", init=mx.init.One())  # a user's own init wins
    mx.sym.LeakyReLU(mx.sym.Variable("x"), g, act_type="prelu")
    assert json.loads(g.attr("__init__"))[0] == "one"
    assert "__init__" not in mx.sym.LeakyReLU(mx.sym.Variable("x"), act_type="leaky").attr_dict().get("x", {})


def test_legacy_json_keys_load():
    _ops("FullyConnected")
    legacy = {  # MXNet 0.8: "param" for operator parameters, "attr" for user attributes
        "nodes": [{"op": "null", "name": "data", "param": {}, "inputs": [], "backward_source_id": -1,
                   "attr": {"ctx_group": "stage1"}},
                  {"op": "null", "name": "fc_weight", "param": {}, "inputs": [], "backward_source_id": -1},
                  {"op": "null", "name": "fc_bias", "param": {}, "inputs": [], "backward_source_id": -1},
                  {"op": "FullyConnected", "name": "fc", "param": {"no_bias": "False", "num_hidden": "4"},
                   "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1, "attr": {"lr_mult": "3"}}],
        "arg_nodes": [0, 1, 2], "heads": [[3, 0]]}
    s = mx.sym.load_json(json.dumps(legacy))
    assert s.list_arguments() == ["data", "fc_weight", "fc_bias"]
    assert s.attr("__lr_mult__") == "3" and s.attr_dict()["data"]["ctx_group"] == "stage1"
    assert s.infer_shape(data=(2, 6))[1] == [(2, 4)]
    again = json.loads(s.tojson())
    assert again["attrs"]["mxnet_version"] == ["int", 10901]
    assert again["nodes"][3]["attrs"]["num_hidden"] == "4"


def test_simple_bind_infers_custom_op_label_shape():
    _ops("FullyConnected")

    class Softmax(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            x = in_data[0].asnumpy()
            y = np.exp(x - x.max(axis=1, keepdims=True))
            self.assign(out_data[0], req[0], mx.nd.array(y / y.sum(axis=1, keepdims=True)))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            lab = in_data[1].asnumpy().astype(int)
            y = out_data[0].asnumpy()
            y[np.arange(lab.shape[0]), lab] -= 1.0
            self.assign(in_grad[0], req[0], mx.nd.array(y))

    @mx.operator.register("fe_softmax_label_infer")
    class SoftmaxProp(mx.operator.CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=False)

        def list_arguments(self):
            return ["data", "label"]

        def infer_shape(self, in_shape):
            return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return Softmax()

    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    net = mx.sym.Custom(fc, name="softmax", op_type="fe_softmax_label_infer")
    exe = net.simple_bind(mx.cpu(), data=(4, 5))
    assert exe.arg_dict["softmax_label"].shape == (4,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert net.infer_shape(data=(4, 5))[0][-1] == (4,)
    exe.arg_dict["softmax_label"][:] = np.array([0, 1, 2, 0])
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy().sum(axis=1), 1, rtol=1e-5)
