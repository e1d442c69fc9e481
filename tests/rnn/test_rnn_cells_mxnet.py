"""``mx.rnn`` cells against MXNet 1.9.1 (recorded by
``tests/fixtures/make_mxnet_rnn_fixtures.py``): the same cell code unrolled here gives
the same argument/output names, state info, unpacked weight names and outputs."""
from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import plexnet as mx
from plexnet.plugins import registries

pytestmark = pytest.mark.timeout(120)

_FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "mxnet_rnn.json")
with open(_FIX) as _f:
    DOC = json.load(_f)


@pytest.fixture(autouse=True)
def _needs_ops():
    ops = registries().operators
    if any(n not in ops for n in ("FullyConnected", "SliceChannel", "RNN", "where", "reverse")):
        pytest.skip("needs plexnet-ops-basic")


def _make_cell(code):
    env = {"mx": mx}
    *stmts, last = code.split("; ")
    for s in stmts:
        exec(s, env)
    return eval(last, env)


@pytest.mark.parametrize("case", DOC["cases"], ids=[f"{c['key']}-merge{c['merge']}" for c in DOC["cases"]])
def test_cell_matches_mxnet(case):
    with mx.name.NameManager():  # automatic names as in the recording's fresh counters
        _check_cell(case)


def _check_cell(case):
    cell = _make_cell(case["code"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outputs, states = cell.unroll(3, mx.sym.Variable("data"), layout=case["layout"],
                                      merge_outputs=case["merge"])
    if isinstance(outputs, list):
        outputs = mx.sym.Group(outputs)
    flat = []
    for s in states:
        flat.extend(s if isinstance(s, list) else [s])
    net = mx.sym.Group([outputs] + flat) if flat else outputs
    assert net.list_arguments() == case["arguments"]
    assert net.list_outputs() == case["outputs_names"]
    info = [{k: list(v) if isinstance(v, tuple) else v for k, v in i.items()} for i in cell.state_info]
    assert info == case["state_info"]
    exe = net.simple_bind(mx.cpu(), data=tuple(case["shape"]), grad_req="null")
    rng = np.random.RandomState(0)
    args = {}
    for name in sorted(exe.arg_dict):
        v = rng.uniform(-0.5, 0.5, exe.arg_dict[name].shape).astype("float32")
        exe.arg_dict[name][:] = v
        args[name] = v
    outs = exe.forward(is_train=False)
    assert [list(o.shape) for o in outs] == case["out_shapes"]
    for o, want in zip(outs, case["outputs"]):
        np.testing.assert_allclose(o.asnumpy().ravel(), want, rtol=1e-4, atol=1e-5)
    arg_params = {k: mx.nd.array(v) for k, v in args.items() if k != "data"}
    unpacked = cell.unpack_weights(arg_params)
    assert {k: list(v.shape) for k, v in sorted(unpacked.items())} == case["unpacked"]
    for k, want in case["unpacked_values"].items():
        np.testing.assert_allclose(unpacked[k].asnumpy().ravel()[:6], want, rtol=1e-6, atol=1e-7)
    repacked = cell.pack_weights(unpacked)
    for k, v in arg_params.items():
        np.testing.assert_array_equal(repacked[k].asnumpy(), v.asnumpy())


def test_encode_sentences_matches_mxnet():
    e = DOC["encode"]
    coded, vocab = mx.rnn.encode_sentences(e["sentences"], invalid_label=0, start_label=0)
    assert coded == e["coded"] and vocab == e["vocab"]
    more, vocab2 = mx.rnn.encode_sentences([["a", "zz"]], vocab=dict(vocab), unknown_token="<unk>")
    assert more[0][0] == vocab["a"] and vocab2["<unk>"] == more[0][1]
    with pytest.raises(KeyError, match="Unknown token"):
        mx.rnn.encode_sentences([["zz"]], vocab=dict(vocab))


def test_fused_cell_unfuse_gives_the_same_network():
    fused = mx.rnn.FusedRNNCell(4, num_layers=2, mode="gru", prefix="g_")
    data = mx.sym.Variable("data")
    out_f, _ = fused.unroll(3, data, layout="TNC", merge_outputs=True)
    stack = fused.unfuse()
    out_u, _ = stack.unroll(3, data, layout="TNC", merge_outputs=True)
    ef = out_f.simple_bind(mx.cpu(), data=(3, 2, 5), grad_req="null")
    eu = out_u.simple_bind(mx.cpu(), data=(3, 2, 5), grad_req="null")
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (3, 2, 5)).astype("float32")
    packed = mx.nd.array(rng.uniform(-0.5, 0.5, ef.arg_dict["g_parameters"].shape))
    ef.arg_dict["g_parameters"][:] = packed
    ef.arg_dict["data"][:] = x
    for name, v in stack.pack_weights(fused.unpack_weights({"g_parameters": packed})).items():
        eu.arg_dict[name][:] = v
    eu.arg_dict["data"][:] = x
    np.testing.assert_allclose(ef.forward()[0].asnumpy(), eu.forward()[0].asnumpy(), rtol=1e-4, atol=1e-5)


def test_fused_rnn_initializer_sets_forget_bias():
    cell = mx.rnn.FusedRNNCell(3, num_layers=1, mode="lstm", prefix="f_", forget_bias=2.0)
    out, _ = cell.unroll(2, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
    mod = mx.mod.Module(out, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (2, 4, 6))])
    mod.init_params(mx.init.Xavier())
    args = cell.unpack_weights(mod.get_params()[0])
    np.testing.assert_array_equal(args["f_l0_i2h_f_bias"].asnumpy(), [2, 2, 2])
    np.testing.assert_array_equal(args["f_l0_h2h_i_bias"].asnumpy(), [0, 0, 0])
    assert np.abs(args["f_l0_i2h_i_weight"].asnumpy()).sum() > 0


def test_cell_errors():
    with pytest.raises(NotImplementedError, match="unroll"):
        mx.rnn.FusedRNNCell(3)(mx.sym.Variable("x"), [])
    with pytest.raises(ValueError, match="zoneout"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(3))
    base = mx.rnn.LSTMCell(3)
    mx.rnn.DropoutCell(0.5)  # fine
    mx.rnn.ResidualCell(base)
    with pytest.raises(RuntimeError, match="modifier"):
        base.begin_state()
    with pytest.raises(ValueError, match="inputs=None"):
        mx.rnn.LSTMCell(3).unroll(2, None)
    with pytest.raises(ValueError, match="mode"):
        mx.rnn.FusedRNNCell(3, mode="bogus")
    states = mx.rnn.GRUCell(4, prefix="g_").begin_state(func=mx.sym.Variable)
    assert states[0].name == "g_begin_state_0" and states[0].attr("__layout__") == "NC"
