"""MXNet 1.x symbol JSON: round trips, MXNet-made fixtures, and our JSON in MXNet."""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest

import plexnet as mx
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")

sym = mx.sym
MXNET_PY = os.environ.get("PLEXNET_MXNET_PYTHON", "/work/mxvenv/bin/python")


def _needs(*ops: str) -> None:
    reg = mx.plugins.registries().operators
    missing = [o for o in ops if o not in reg]
    if missing:
        pytest.skip(f"operators not registered (plexnet-ops-basic): {missing}")


def toy_net():
    data = sym.Variable("data", shape=(0, 6), lr_mult=0.5)
    fc = sym.XTFullyConnected(data, num_hidden=4, name="fc1")
    act = sym.XTActivation(fc, act_type="relu", name="relu1")
    bn = sym.XTBatchNorm(act, eps=1e-4, name="bn")
    parts = sym.XTSliceChannel(bn, num_outputs=2, name="sc")
    s = sym.XTadd(parts[0], parts[1], name="add")
    return sym.Group([sym.XTSoftmaxOutput(sym.XTConcat(s, parts[1], name="cat"), name="softmax"), parts[1]])


@pytest.mark.timeout(30)
def test_round_trip_toy_graph(tmp_path):
    net = toy_net()
    text = net.tojson()
    doc = json.loads(text)
    assert doc["attrs"] == {"mxnet_version": ["int", 10901]}
    assert [n["name"] for n in doc["nodes"] if n["op"] == "null"] == \
        [doc["nodes"][i]["name"] for i in doc["arg_nodes"]]
    bn = next(n for n in doc["nodes"] if n["name"] == "bn")
    assert [i[2] for i in bn["inputs"]] == [0, 0, 0, 1, 1]  # aux inputs carry version 1
    assert doc["node_row_ptr"][-1] == sum(3 if n["op"] == "XTBatchNorm" else 2 if n["op"] == "XTSliceChannel" else 1
                                          for n in doc["nodes"])
    back = sym.load_json(text)
    assert back.tojson() == text
    for f in ("list_arguments", "list_auxiliary_states", "list_outputs", "list_inputs"):
        assert getattr(back, f)() == getattr(net, f)()
    assert back.infer_shape(data=(4, 6)) == net.infer_shape(data=(4, 6))
    assert back.attr_dict() == net.attr_dict()
    fname = tmp_path / "net-symbol.json"
    net.save(str(fname))
    assert sym.load(str(fname)).tojson() == text


@pytest.mark.timeout(30)
def test_load_errors_are_clear():
    with pytest.raises(Exception, match="not valid JSON"):
        sym.load_json("{nope")
    doc = json.loads(toy_net().tojson())
    doc["nodes"][3]["op"] = "NoSuchOp"
    with pytest.raises(Exception, match="NoSuchOp"):
        sym.load_json(json.dumps(doc))


@pytest.mark.timeout(30)
def test_old_format_and_unknown_params_load():
    old = {"nodes": [{"op": "null", "param": {}, "name": "x", "inputs": [], "backward_source_id": -1},
                     {"op": "XTActivation", "param": {"act_type": "tanh"}, "attr": {"ctx_group": "g1"}, "name": "t",
                      "inputs": [[0, 0]], "backward_source_id": -1}],
           "arg_nodes": [0], "heads": [[1, 0]]}
    s = sym.load_json(json.dumps(old))
    assert s.list_arguments() == ["x"] and s.attr("act_type") == "tanh" and s.attr("__ctx_group__") == "g1"
    new = json.loads(s.tojson())
    new["nodes"][1]["attrs"]["cudnn_off"] = "1"  # a parameter this implementation does not have
    with pytest.warns(RuntimeWarning, match="cudnn_off"):
        s2 = sym.load_json(json.dumps(new))
    assert "cudnn_off" not in s2.list_attr()


def _fixture(name: str) -> tuple:
    with open(os.path.join(FIXTURES, f"{name}-expected.json")) as f:
        expected = json.load(f)
    return os.path.join(FIXTURES, f"{name}-symbol.json"), expected


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name,ops", [
    ("mxnet_mlp", ("FullyConnected", "Activation", "SoftmaxOutput")),
    ("mxnet_cnn_bn", ("Convolution", "BatchNorm", "Activation", "Pooling", "Flatten", "FullyConnected",
                      "SoftmaxOutput")),
])
def test_load_mxnet_fixture(name, ops):
    _needs(*ops)
    fname, exp = _fixture(name)
    net = sym.load(fname)
    assert net.list_arguments() == exp["arguments"]
    assert net.list_auxiliary_states() == exp["auxiliary_states"]
    assert net.list_outputs() == exp["outputs"]
    arg, out, aux = net.infer_shape(**{k: tuple(v) for k, v in exp["inputs"].items()})
    assert [list(s) for s in arg] == exp["arg_shapes"]
    assert [list(s) for s in out] == exp["out_shapes"]
    assert [list(s) for s in aux] == exp["aux_shapes"]
    # what we write back has MXNet's structure: same nodes, ops, inputs and heads
    with open(fname) as f:
        theirs = json.load(f)
    ours = json.loads(net.tojson())
    assert [(n["op"], n["name"], n["inputs"]) for n in ours["nodes"]] == \
        [(n["op"], n["name"], n["inputs"]) for n in theirs["nodes"]]
    assert ours["heads"] == theirs["heads"] and ours["arg_nodes"] == theirs["arg_nodes"]
    # (node_row_ptr is not compared: MXNet's MKLDNN build gives max Pooling a hidden
    # workspace output; row pointers are derived from the operators on load anyway)
    for a, b in zip(ours["nodes"], theirs["nodes"]):
        assert a.get("attrs", {}) == b.get("attrs", {}), a["name"]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name,ops", [
    ("mxnet_mlp", ("FullyConnected", "Activation", "SoftmaxOutput")),
    ("mxnet_cnn_bn", ("Convolution", "BatchNorm", "Activation", "Pooling", "Flatten", "FullyConnected",
                      "SoftmaxOutput")),
])
def test_mxnet_fixture_runs_like_mxnet(name, ops):
    """Integration: the loaded graph with MXNet's parameters computes MXNet's outputs,
    gradients and BatchNorm statistics (operators from plexnet-ops-basic)."""
    _needs(*ops)
    fname, exp = _fixture(name)
    net = sym.load(fname)
    params = mx.nd.load(os.path.join(FIXTURES, f"{name}-0000.params"))
    shapes = {k: tuple(v) for k, v in exp["inputs"].items()}
    exe = net.simple_bind(mx.cpu(), grad_req="write", **shapes)
    exe.copy_params_from({k[4:]: v for k, v in params.items() if k.startswith("arg:")},
                         {k[4:]: v for k, v in params.items() if k.startswith("aux:")})
    for k, v in exp["input_values"].items():
        exe.arg_dict[k][:] = np.array(v, dtype=np.float32)
    out_inf = exe.forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(out_inf, np.array(exp["output_inference"]), rtol=1e-4, atol=1e-5)
    out_train = exe.forward(is_train=True)[0].asnumpy()
    np.testing.assert_allclose(out_train, np.array(exp["output_training"]), rtol=1e-4, atol=1e-5)
    # moving statistics: the training forward leaves them alone and the backward moves them
    # (momentum 0.9) by the batch mean of BatchNorm's input, as MXNet 1.9.1's CPU BatchNorm
    bns = [n for n in exp["auxiliary_states"] if n.endswith("_moving_mean")]
    for bn in bns:
        np.testing.assert_array_equal(exe.aux_dict[bn].asnumpy(), params[f"aux:{bn}"].asnumpy())
    exe.backward()
    for bn in bns:
        node = bn[:-len("_moving_mean")]
        x_sym = net.get_internals()[net.get_internals().list_outputs().index(f"{node}_output")].get_children()[0]
        if x_sym.list_auxiliary_states():
            continue  # its input depends on another BatchNorm's mode
        xe = x_sym.bind(mx.cpu(), {k: exe.arg_dict[k] for k in x_sym.list_arguments()}, grad_req="null")
        batch_mean = xe.forward(is_train=False)[0].asnumpy().mean(axis=(0, 2, 3))
        m0 = params[f"aux:{bn}"].asnumpy()
        np.testing.assert_allclose(exe.aux_dict[bn].asnumpy(), 0.9 * m0 + 0.1 * batch_mean, rtol=1e-4, atol=1e-6)
    for k, v in exp["grads"].items():
        np.testing.assert_allclose(exe.grad_dict[k].asnumpy(), np.array(v), rtol=1e-3, atol=1e-5, err_msg=k)


def _mxnet_available() -> bool:
    return os.path.exists(MXNET_PY)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(not _mxnet_available(), reason="MXNet 1.9.1 venv not available")
def test_our_json_loads_in_mxnet(tmp_path):
    """Symbols written here load in Apache MXNet 1.9.1 with the same arguments, outputs
    and inferred shapes."""
    _needs("FullyConnected", "Activation", "SoftmaxOutput", "Convolution", "BatchNorm", "Pooling", "Flatten",
           "elemwise_add", "_plus_scalar", "_mul_scalar", "SliceChannel", "Concat")
    data = sym.Variable("data")
    h = sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv1")
    h = sym.BatchNorm(h, fix_gamma=False, name="bn1")
    h = sym.Activation(h, act_type="relu", name="relu1")
    parts = sym.SliceChannel(h, num_outputs=2, name="split")
    h = sym.Concat(parts[0] + parts[1], parts[1] * 2.0, dim=1, name="cat")
    h = sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    h = (sym.Flatten(h, name="flat") + 1.0) - 0.5
    h = sym.FullyConnected(h, num_hidden=5, name="fc")
    net = sym.SoftmaxOutput(h, name="softmax")
    f = tmp_path / "ours-symbol.json"
    net.save(str(f))
    arg, out, aux = net.infer_shape(data=(2, 3, 8, 8))
    script = (
        "import json, sys, mxnet as mx\n"
        f"s = mx.sym.load({str(f)!r})\n"
        "a, o, x = s.infer_shape(data=(2, 3, 8, 8))\n"
        "print(json.dumps({'args': s.list_arguments(), 'aux': s.list_auxiliary_states(), 'outs': s.list_outputs(),"
        " 'a': a, 'o': o, 'x': x, 'json': s.tojson()}))\n")
    env = dict(os.environ, MXNET_SUBGRAPH_BACKEND="NONE")
    r = subprocess.run([MXNET_PY, "-c", script], capture_output=True, text=True, timeout=240, env=env)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res["args"] == net.list_arguments()
    assert res["aux"] == net.list_auxiliary_states()
    assert res["outs"] == net.list_outputs()
    assert [tuple(s) for s in res["a"]] == arg and [tuple(s) for s in res["o"]] == out
    assert [tuple(s) for s in res["x"]] == aux
    # and what MXNet writes back loads here again
    again = sym.load_json(res["json"])
    assert again.list_arguments() == net.list_arguments()
