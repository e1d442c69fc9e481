"""The Symbol API: composition, naming, listing, attributes, inference."""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import plexnet as mx
from plexnet.base import ShapeError
from plexnet.symbol import NameManager, Prefix, AttrScope

sym = mx.sym


def net_fc_bn():
    data = sym.Variable("data")
    fc = sym.XTFullyConnected(data, num_hidden=4, name="fc1")
    act = sym.XTActivation(fc, act_type="relu", name="relu1")
    bn = sym.XTBatchNorm(act, name="bn")
    return sym.XTSoftmaxOutput(bn, name="softmax")


@pytest.mark.timeout(30)
def test_aliases_and_module_functions():
    assert mx.sym is mx.symbol
    assert sym.var is sym.Variable
    assert callable(sym.XTFullyConnected)
    assert "XTFullyConnected" in dir(sym)
    with pytest.raises(AttributeError, match="no operator|does not exist"):
        sym.NoSuchOperatorAnywhere


@pytest.mark.timeout(30)
def test_automatic_argument_names():
    net = net_fc_bn()
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "bn_gamma", "bn_beta", "softmax_label"]
    assert net.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert net.list_outputs() == ["softmax_output"]
    assert net.list_inputs() == ["data", "fc1_weight", "fc1_bias", "bn_gamma", "bn_beta", "bn_moving_mean",
                                 "bn_moving_var", "softmax_label"]
    assert net.name == "softmax"


@pytest.mark.timeout(30)
def test_auto_node_names_like_namemanager():
    with NameManager():
        a = sym.XTFullyConnected(sym.Variable("x"), num_hidden=2)
        b = sym.XTFullyConnected(a, num_hidden=2)
        c = sym.XTActivation(b, act_type="tanh")
    assert (a.name, b.name, c.name) == ("xtfullyconnected0", "xtfullyconnected1", "xtactivation0")
    assert b.list_arguments() == ["x", "xtfullyconnected0_weight", "xtfullyconnected0_bias",
                                  "xtfullyconnected1_weight", "xtfullyconnected1_bias"]
    with Prefix("net1_"):
        d = sym.XTFullyConnected(sym.Variable("y"), num_hidden=2, name="fc")
    assert d.name == "net1_fc" and "net1_fc_weight" in d.list_arguments()
    # missing data becomes a variable too
    with NameManager():
        atom = sym.XTFullyConnected(num_hidden=3)
    assert atom.list_arguments() == ["xtfullyconnected0_data", "xtfullyconnected0_weight", "xtfullyconnected0_bias"]


@pytest.mark.timeout(30)
def test_inputs_by_keyword_and_positional_errors():
    w = sym.Variable("w")
    fc = sym.XTFullyConnected(data=sym.Variable("d"), weight=w, num_hidden=3, no_bias=True, name="f")
    assert fc.list_arguments() == ["d", "w"]
    with pytest.raises(Exception, match="unknown input"):
        sym.XTFullyConnected(sym.Variable("d"), wieght=w, num_hidden=3)
    # MXNet's generated signature: parameters follow the inputs (data, weight, bias) positionally
    assert sym.XTFullyConnected(sym.Variable("d"), None, None, 3).attr("num_hidden") == "3"
    with pytest.raises(Exception, match="slot of array input 'weight'"):
        sym.XTFullyConnected(sym.Variable("d"), 3)
    with pytest.raises(Exception, match="too many positional"):
        sym.XTFullyConnected(sym.Variable("d"), None, None, 3, True, True, "n", None, None, 1)
    with pytest.raises(Exception, match="positionally and by keyword"):
        sym.XTFullyConnected(sym.Variable("d"), None, None, 3, num_hidden=4)
    with pytest.raises(Exception, match="num_hidden"):
        sym.XTFullyConnected(sym.Variable("d"))
    # variadic operator: num_args filled in
    c = sym.XTConcat(sym.Variable("a"), sym.Variable("b"), sym.Variable("c"), name="cat")
    assert c.list_arguments() == ["a", "b", "c"] and c.attr("num_args") == "3"


@pytest.mark.timeout(30)
def test_composition_by_call():
    net = net_fc_bn()
    x = sym.Variable("x")
    net2 = net(data=sym.XTsquare(x, name="sq"))
    assert net2.list_arguments()[0] == "x"
    assert net.list_arguments()[0] == "data"  # the original is unchanged
    a = sym.XTFullyConnected(num_hidden=2, name="g")
    b = a(sym.Variable("q"))  # positional: list_arguments order
    assert b.list_arguments() == ["q", "g_weight", "g_bias"]
    c = a(g_data=sym.Variable("r"), name="renamed")
    assert c.list_arguments()[0] == "r" and c.name == "renamed"
    with pytest.raises(Exception, match="matches no input"):
        a(nonexistent=x)


@pytest.mark.timeout(30)
def test_group_indexing_iteration_internals_children():
    data = sym.Variable("data")
    sc = sym.XTSliceChannel(data, num_outputs=3, name="sc")
    assert sc.list_outputs() == ["sc_output0", "sc_output1", "sc_output2"]
    assert len(sc) == 3 and [s.name for s in sc] == ["sc"] * 3
    assert sc[1].list_outputs() == ["sc_output1"] and sc[-1].list_outputs() == ["sc_output2"]
    assert sc["sc_output2"].list_outputs() == ["sc_output2"]
    with pytest.raises(IndexError):
        sc[3]
    with pytest.raises(ValueError):
        sc["nope"]
    g = sym.Group([sc[0], sc[2]])
    assert g.list_outputs() == ["sc_output0", "sc_output2"] and g.name is None
    net = net_fc_bn()
    internals = net.get_internals()
    assert internals.list_outputs() == ["data", "fc1_weight", "fc1_bias", "fc1_output", "relu1_output", "bn_gamma",
                                        "bn_beta", "bn_moving_mean", "bn_moving_var", "bn_output", "softmax_label",
                                        "softmax_output"]
    fc1 = internals["fc1_output"]
    assert fc1.list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    assert net.get_children().list_outputs() == ["bn_output", "softmax_label"]
    assert data.get_children() is None
    assert repr(net) == "<Symbol softmax>" and repr(g) == "<Symbol group [sc, sc]>"


@pytest.mark.timeout(30)
def test_attributes():
    data = sym.Variable("data", attr={"mood": "angry"}, shape=(2, 3), lr_mult=2.0, wd_mult=0, dtype="float16",
                        init="zeros", __extra__="1")
    assert data.attr("mood") == "angry"
    assert data.attr("__shape__") == "(2, 3)"
    assert data.list_attr()["lr_mult"] == "2.0" and data.list_attr()["__lr_mult__"] == "2.0"
    assert data.attr("__dtype__") == "2" and data.attr("__init__") == "zeros"
    with pytest.raises(ValueError, match="double underscores"):
        sym.Variable("bad", foo="1")
    with AttrScope(ctx_group="dev1"):
        fc = sym.XTFullyConnected(data, num_hidden=4, name="fc1")
    assert fc.attr("__ctx_group__") == "dev1" and fc.attr("ctx_group") == "dev1"
    assert fc.attr("num_hidden") == "4"
    assert fc.list_attr()["num_hidden"] == "4"
    fc._set_attr(__note__="x")
    assert fc.attr("__note__") == "x"
    d = fc.attr_dict()
    assert d["fc1"]["num_hidden"] == "4" and d["data"]["mood"] == "angry"
    assert d["fc1_weight"]["__ctx_group__"] == "dev1"  # automatic variables get the node's attributes
    fc._set_attr(num_hidden="5")  # a parameter: the operator is re-created
    assert fc.infer_shape(data=(2, 3))[1] == [(2, 5)]
    with pytest.raises(Exception):
        fc._set_attr(num_hidden="zero")
    assert fc.attr("num_hidden") == "5"


@pytest.mark.timeout(30)
def test_infer_shape_full_partial_and_errors():
    net = net_fc_bn()
    arg, out, aux = net.infer_shape(data=(2, 3))
    assert arg == [(2, 3), (4, 3), (4,), (4,), (4,), (2,)] and out == [(2, 4)] and aux == [(4,), (4,)]
    assert net.infer_shape((2, 3)) == (arg, out, aux)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert net.infer_shape() == (None, None, None)
        assert w and "Cannot decide shape" in str(w[0].message)
    arg, out, aux = net.infer_shape_partial(softmax_label=(2,))
    assert arg == [(), (), (), (), (), (2,)] and out == [()]  # MXNet 1.x: () = unknown
    # backward inference: a weight's shape alone does not give the batch, but
    # the data shape given through a Variable attribute does
    x = sym.Variable("x", shape=(5, 7))
    assert sym.XTFullyConnected(x, num_hidden=2, name="f").infer_shape()[1] == [(5, 2)]
    with pytest.raises(ShapeError) as ei:
        net.infer_shape(data=(2, 3), fc1_weight=(5, 3))
    msg = str(ei.value)
    assert "fc1" in msg and "(5, 3)" in msg and "(4, 3)" in msg
    with pytest.raises(ValueError, match="not an input"):
        net.infer_shape(nothere=(1,))
    # elementwise: the shape flows from the other operand (and backwards)
    a, b = sym.Variable("a"), sym.Variable("b")
    s = sym.XTadd(a, sym.XTsquare(b, name="sq"), name="add")
    assert s.infer_shape(a=(3, 2)) == ([(3, 2), (3, 2)], [(3, 2)], [])


@pytest.mark.timeout(30)
def test_infer_type():
    net = net_fc_bn()
    arg, out, aux = net.infer_type(data="float64")
    assert all(t is np.float64 for t in arg + out + aux)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert net.infer_type() == (None, None, None)
    v = sym.Variable("v", dtype="float16")
    assert sym.XTsquare(v, name="sq").infer_type()[1] == [np.float16]
    arg, out, aux = net.infer_type_partial()
    assert arg == [None] * 6


@pytest.mark.timeout(30)
def test_arithmetic_uses_mxnet_operator_names():
    reg = mx.plugins.registries().operators
    need = ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_plus_scalar", "_minus_scalar",
            "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar", "_power", "_power_scalar",
            "_rpower_scalar", "_mod", "_mod_scalar", "_rmod_scalar", "_equal", "_greater_scalar", "abs"]
    missing = [n for n in need if n not in reg]
    if missing:
        pytest.skip(f"operators not registered (plexnet-ops-basic): {missing}")
    x, y = sym.Variable("x"), sym.Variable("y")
    import json
    cases = {
        "add": (x + y, "elemwise_add", "_plus0"), "sub": (x - y, "elemwise_sub", "_minus0"),
        "mul": (x * y, "elemwise_mul", "_mul0"), "div": (x / y, "elemwise_div", "_div0"),
        "adds": (x + 1.0, "_plus_scalar", "_plusscalar0"), "radds": (1 + x, "_plus_scalar", "_plusscalar0"),
        "subs": (x - 1, "_minus_scalar", "_minusscalar0"), "rsubs": (2.0 - x, "_rminus_scalar", "_rminusscalar0"),
        "muls": (x * 2, "_mul_scalar", "_mulscalar0"), "rmuls": (2 * x, "_mul_scalar", "_mulscalar0"),
        "divs": (x / 2, "_div_scalar", "_divscalar0"), "rdivs": (2 / x, "_rdiv_scalar", "_rdivscalar0"),
        "pow": (x ** y, "_power", "_power0"), "pows": (x ** 2, "_power_scalar", "_powerscalar0"),
        "rpows": (2 ** x, "_rpower_scalar", "_rpower_scalar0"), "mod": (x % y, "_mod", "_mod0"),
        "mods": (x % 2, "_mod_scalar", "_modscalar0"), "rmods": (2 % x, "_rmod_scalar", "_rmodscalar0"),
        "neg": (-x, "_mul_scalar", "_mulscalar0"), "eq": (x == y, "_equal", "_equal0"),
        "gts": (x > 1, "_greater_scalar", "_greater_scalar0"), "rgts": (1 < x, "_greater_scalar", "_greater_scalar0"),
        "abs": (abs(x), "abs", "abs0"),
    }
    for key, (s, op, nm) in cases.items():
        with NameManager():
            s = s.__copy__()
        node = json.loads(s.tojson())["nodes"][-1]
        assert node["op"] == op, key
    with NameManager():
        s = x + 1.0
    assert s.name == "_plusscalar0" and s.attr("scalar") == "1.0"
    with NameManager():
        assert (-x).attr("scalar") == "-1.0"
    # values: symbol arithmetic evaluates like numpy
    xv, yv = np.array([1.0, 2.0, 3.0]), np.array([0.5, 4.0, -1.0])
    expr = (x * y + 2.0) / (x + 1) - 3 ** (x / 3) + abs(y)
    exe = expr.bind(mx.cpu(), {"x": mx.nd.array(xv), "y": mx.nd.array(yv)}, grad_req="null")
    want = (xv * yv + 2.0) / (xv + 1) - 3 ** (xv / 3) + abs(yv)
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), want, rtol=1e-5)


@pytest.mark.timeout(30)
def test_operator_methods_and_pickle():
    x = sym.Variable("x")
    s = x.XTsquare(name="sq")  # any operator as a method
    assert s.list_arguments() == ["x"]
    with pytest.raises(AttributeError):
        x.no_such_method
    net = net_fc_bn()
    back = pickle.loads(pickle.dumps(net))
    assert back.tojson() == net.tojson()
    assert net.__copy__().tojson() == net.tojson()


@pytest.mark.timeout(30)
def test_third_party_operator_appears_in_sym():
    from plexnet.operator import OperatorProperty, Operator
    from plexnet.plugins import get_manager

    class P(OperatorProperty):
        pass

    class O(Operator):
        def forward(self, ctx, in_data, req, out_data, aux):
            out_data[0][...] = in_data[0] + 1

    class Plugin:
        @mx.hookimpl
        def plexnet_register_operators(self, registry):
            registry.register_property("ThirdPartyPlusOne", P)
            registry.register_impl("ThirdPartyPlusOne", "*", lambda prop, ctx: O())

    mgr = get_manager()
    mgr.add_plugin(Plugin(), "third-party-test-plugin")
    try:
        s = sym.ThirdPartyPlusOne(sym.Variable("x"), name="p")
        exe = s.bind(mx.cpu(), {"x": mx.nd.array([1.0, 2.0])}, grad_req="null")
        np.testing.assert_allclose(exe.forward()[0].asnumpy(), [2.0, 3.0])
    finally:
        mgr.remove_plugin("third-party-test-plugin")
    with pytest.raises(AttributeError):
        sym.ThirdPartyPlusOne
