"""mx.contrib.amp: op lists, graph conversion (against MXNet 1.9.1 fixtures recorded by
fixtures/make_mxnet_amp.py), dynamic loss scaling and float16 training."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, gluon
from plexnet.contrib import amp
from plexnet.contrib.amp import convert as amp_convert
from plexnet.contrib.amp.amp import _restore
from plexnet.symbol.node import topo_sort

FIX = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "mxnet_amp.json")))
KNOWN = set(mx.symbol.node.op_registry().list_operators())


@pytest.fixture
def amp_on():
    amp.init()
    try:
        yield
    finally:
        _restore()


def _nodes_of(outputs):
    """MXNet's JSON node list (op, name, attrs, inputs) of a graph, without serialising it."""
    nodes = topo_sort(outputs)
    idx = {id(n): i for i, n in enumerate(nodes)}
    return [["null" if n.op is None else n.op, n.name, dict(n.attrs), [[idx[id(e[0])], e[1]] for e in n.inputs]]
            for n in nodes]


# -- lists ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_lists_are_mxnets_restricted_to_plexnet_ops(dtype):
    ref = FIX["lists"][dtype]
    assert amp.list_lp16_ops(dtype) == [o for o in ref["lp16"] if o in KNOWN]
    assert amp.list_fp32_ops(dtype) == [o for o in ref["fp32"] if o in KNOWN]
    assert amp.list_lp16_fp32_ops(dtype) == [o for o in ref["lp16_fp32"] if o in KNOWN]
    assert amp.list_widest_type_cast(dtype) == [o for o in ref["widest"] if o in KNOWN]
    assert amp.list_loss_output_functions(dtype) == [o for o in ref["loss"] if o in KNOWN]
    assert [list(c) for c in amp.list_conditional_fp32_ops(dtype)] == [c for c in ref["conditional_fp32"]
                                                                       if c[0] in KNOWN]
    assert amp.list_lp16_ops(dtype)  # FullyConnected/Convolution at least
    # every op runs in one mode only
    assert not set(amp.list_lp16_ops(dtype)) & set(amp.list_fp32_ops(dtype))


def test_use_fp32_params_and_bad_dtype():
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_use_fp32_params("bfloat16") == {
        k: v for k, v in FIX["lists"]["bfloat16"]["use_fp32_params"].items() if k in KNOWN}
    assert amp.list_lp16_ops(np.float16) == amp.list_lp16_ops("float16")
    with pytest.raises(AssertionError, match="float64"):
        amp.list_lp16_ops("float64")


# -- convert_symbol -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(FIX["graphs"]))
def test_convert_symbol_matches_mxnet(name):
    g = FIX["graphs"][name]
    sym = mx.sym.load_json(g["input"])
    out = amp.convert_symbol(sym, **g["kwargs"])
    got = [[n["op"], n["name"], n.get("attrs", {}), [i[:2] for i in n["inputs"]]]
           for n in json.loads(out.tojson(remove_amp_cast=False))["nodes"]]
    assert got == g["float16"]
    # MXNet's tojson drops the casts again by default
    assert json.loads(out.tojson())["nodes"][0]["name"] == "data"
    assert not any(n["op"] in ("amp_cast", "amp_multicast") for n in json.loads(out.tojson())["nodes"])


@pytest.mark.parametrize("name", sorted(FIX["graphs"]))
def test_bfloat16_graph_structure_matches_mxnet(name):
    g = FIX["graphs"][name]
    sym = mx.sym.load_json(g["input"])
    kw = dict(g["kwargs"])
    outs = amp_convert._convert_graph(sym, "bfloat16", amp.list_lp16_ops("bfloat16"), amp.list_fp32_ops("bfloat16"),
                                      amp.list_conditional_fp32_ops("bfloat16"), kw.get("excluded_sym_names", []),
                                      kw.get("data_names"), kw.get("cast_optional_params", False))
    assert _nodes_of(outs) == g["bfloat16"]


def test_convert_symbol_bfloat16_refused_naming_it():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2)
    with pytest.raises(TypeError, match="bfloat16"):
        amp.convert_symbol(sym, target_dtype="bfloat16")
    with pytest.raises(AssertionError, match="float64"):
        amp.convert_symbol(sym, target_dtype="float64")


def test_convert_symbol_list_errors_name_the_ops():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2)
    with pytest.raises(AssertionError, match="FullyConnected"):
        amp.convert_symbol(sym, target_dtype_ops=["FullyConnected"], fp32_ops=["FullyConnected"])
    with pytest.raises(AssertionError, match="no_such_op"):
        amp.convert_symbol(sym, target_dtype_ops=["no_such_op"])
    with pytest.raises(AssertionError, match="conditional_fp32_ops"):
        amp.convert_symbol(sym, conditional_fp32_ops=[("Activation", "act_type")])
    with pytest.raises(AssertionError, match="Symbol"):
        amp.convert_symbol("not a symbol")


def _mlp_sym():
    d = mx.sym.var("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(d, num_hidden=8, name="fc1"), act_type="relu", name="r")
    return mx.sym.FullyConnected(h, num_hidden=3, name="fc2")


def test_convert_model_casts_params_and_computes_close_to_float64():
    rng = np.random.RandomState(0)
    sym = _mlp_sym()
    shapes = dict(zip(sym.list_arguments(), sym.infer_shape(data=(5, 4))[0]))
    args = {k: mx.nd.array(rng.uniform(-1, 1, shapes[k])) for k in shapes if k != "data"}
    ref_args = {k: v.asnumpy().astype(np.float64) for k, v in args.items()}
    x = rng.uniform(-1, 1, (5, 4))
    out, arg_params, aux_params = amp.convert_model(sym, dict(args), {}, cast_optional_params=True)
    assert aux_params == {}
    for k in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"):
        assert arg_params[k].dtype == np.float16, k
        assert out.attr_dict()[k]["__dtype__"] == "2"
    exe = out.bind(mx.cpu(), {"data": mx.nd.array(x), **arg_params})
    y = exe.forward()[0]
    assert y.dtype == np.float32  # cast back at the output
    h = np.maximum(x @ ref_args["fc1_weight"].T + ref_args["fc1_bias"], 0)
    ref = h @ ref_args["fc2_weight"].T + ref_args["fc2_bias"]
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=2e-2, atol=2e-2)
    # without cast_optional_params the parameters stay float32 behind casts
    out2, p2, _ = amp.convert_model(sym, dict(args), {})
    assert all(v.dtype == np.float32 for v in p2.values())
    assert out2.attr_dict()["fc1_weight"]["__dtype__"] == "0"
    with pytest.raises(ValueError, match="excluded_sym_names"):
        amp.convert_model(sym, dict(args), {}, excluded_sym_names="fc1")
    with pytest.raises(AssertionError, match="dict"):
        amp.convert_model(sym, [], {})


def test_convert_hybrid_block():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(8, activation="relu", in_units=4), gluon.nn.BatchNorm(in_channels=8),
                gluon.nn.Dense(3, in_units=8))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (6, 4)))
    with pytest.raises(RuntimeError, match="hybridize"):
        amp.convert_hybrid_block(net)
    net.hybridize()
    ref = net(x).asnumpy()
    conv = amp.convert_hybrid_block(net, cast_optional_params=True)
    assert isinstance(conv, gluon.SymbolBlock)
    dtypes = {k.split("_", 1)[1]: p.dtype for k, p in conv.collect_params().items()}
    assert dtypes["dense0_weight"] == np.float16 and dtypes["dense1_weight"] == np.float16
    assert dtypes["batchnorm0_gamma"] == np.float32 and dtypes["batchnorm0_running_mean"] == np.float32
    y = conv(x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=2e-2, atol=2e-2)
    with pytest.raises(AssertionError, match="HybridBlock"):
        amp.convert_hybrid_block(gluon.nn.Sequential())


# -- loss scaling -------------------------------------------------------------------------------------
def test_loss_scaler_sequence_matches_mxnet():
    ls = amp.LossScaler()
    ls._scale_seq_len = 3
    w = gluon.Parameter("w", shape=(2,))
    w.initialize()
    seq = []
    for step in range(12):
        w.grad()[:] = np.inf if step in (4, 5) else 1.0
        seq.append([ls.has_overflow([w]), ls.loss_scale])
    assert seq == FIX["loss_scaler"]
    ls2 = amp.LossScaler()
    w.grad()[:] = np.nan
    assert ls2.has_overflow([w]) and ls2._next_loss_scale == 2.0 ** 15
    ls2._loss_scale = ls2._next_loss_scale = 2.0 ** 24
    ls2._scale_seq_len = 1
    w.grad()[:] = 0
    ls2.has_overflow([w])
    assert ls2._next_loss_scale == 2.0 ** 24  # capped


def test_init_trainer_and_scale_loss_errors():
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    tr = gluon.Trainer(net.collect_params(), "sgd")
    with pytest.raises(AssertionError, match="init_trainer"):
        with amp.scale_loss(mx.nd.ones((1,)), tr):
            pass
    with pytest.raises(AssertionError, match=r"amp\.init\(\)"):
        amp.init_trainer(tr)


def test_init_refuses_bfloat16_and_bad_dtype():
    with pytest.raises(TypeError, match="bfloat16"):
        amp.init("bfloat16")
    with pytest.raises(AssertionError, match="int8"):
        amp.init("int8")
    assert mx.nd.FullyConnected.__name__ == "FullyConnected"


def test_init_patches_operators(amp_on):
    x = mx.nd.array(np.random.rand(4, 3))
    w, b = mx.nd.ones((2, 3)), mx.nd.zeros((2,))
    y = mx.nd.FullyConnected(x, w, b, num_hidden=2)
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy().sum(1, keepdims=True).repeat(2, 1), rtol=1e-3)
    assert mx.nd.exp(y).dtype == np.float32                                    # fp32 op
    assert mx.nd.Activation(y, act_type="softrelu").dtype == np.float32        # conditional, matched
    assert mx.nd.Activation(y, act_type="relu").dtype == np.float16            # conditional, not matched
    assert mx.nd.elemwise_add(y, mx.nd.ones((4, 2))).dtype == np.float32       # widest type
    assert mx.nd.elemwise_add(y, y).dtype == np.float16
    s = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    assert s.list_arguments() == ["data", "fc_weight", "fc_bias"]
    ops = [n.op for n in topo_sort(s._outputs)]
    assert ops.count("amp_cast") == 3
    assert s.infer_type(data=np.float32, fc_weight=np.float32, fc_bias=np.float32)[1] == [np.float16]
    assert s.infer_shape(data=(4, 3))[0] == [(4, 3), (2, 3), (2,)]
    amp.init("bfloat16")  # a second init does nothing, as MXNet's
    with pytest.raises(TypeError, match="Gluon Trainer"):
        amp.init_trainer(mx.optimizer.SGD())
    with pytest.raises(TypeError, match="Gluon Trainer"):
        amp.unscale("trainer")


def test_loss_output_grad_scale(amp_on):
    x = mx.nd.array([[1.0, 2.0, 0.5]])
    x.attach_grad()
    label = mx.nd.array([1])
    with autograd.record():
        out = mx.nd.SoftmaxOutput(x, label)
    out.backward()
    p = np.exp([1.0, 2.0, 0.5]) / np.exp([1.0, 2.0, 0.5]).sum()
    np.testing.assert_allclose(x.grad.asnumpy()[0], (p - [0, 1, 0]) * 2.0 ** 16, rtol=1e-4)


def _mlp():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(16, activation="relu"), gluon.nn.Dense(2))
    net.initialize(mx.init.Xavier(), force_reinit=True)
    return net


def test_amp_float16_training_converges(amp_on):
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (64, 4)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.float32)
    net = _mlp()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    amp.init_trainer(trainer)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    xs, ys = mx.nd.array(X), mx.nd.array(y)
    losses = []
    for _ in range(40):
        with autograd.record():
            out = net(xs)
            assert out.dtype == np.float16
            loss = loss_fn(out, ys)  # log_softmax is a float32 op: the loss is float32
            assert loss.dtype == np.float32
            with amp.scale_loss(loss, trainer) as scaled:
                autograd.backward(scaled)
        trainer.step(len(X))
        losses.append(float(loss.mean().asscalar()))
    acc = (net(xs).asnumpy().argmax(1) == y).mean()
    assert losses[-1] < 0.5 * losses[0] and acc > 0.9, (losses[0], losses[-1], acc)
    # float16 gradients of 2**16 * loss overflow at first: the scaler halves until they fit
    scale = trainer._amp_loss_scaler.loss_scale
    assert scale < 2.0 ** 16 and np.log2(scale) == int(np.log2(scale))


def test_overflow_skips_update_and_halves_scale_then_grows(amp_on):
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer)
    scaler = trainer._amp_loss_scaler
    scaler._scale_seq_len = 3
    scaler._loss_scale = scaler._next_loss_scale = 1024.0  # float16 gradients of 2**16 would overflow
    x = mx.nd.ones((2, 3))

    def step(inject_inf=False):
        with autograd.record():
            loss = mx.nd.cast(net(x), dtype="float32").sum()
            with amp.scale_loss(loss, trainer) as scaled:
                autograd.backward(scaled)
        if inject_inf:
            net.weight.grad()[0, 0] = np.inf
        before = net.weight.data().asnumpy().copy()
        trainer.step(1)
        return before, net.weight.data().asnumpy()

    b, a = step()
    assert not np.allclose(a, b) and scaler.loss_scale == 1024.0
    b, a = step(inject_inf=True)
    np.testing.assert_array_equal(a, b)  # update skipped
    assert scaler._next_loss_scale == 512.0
    b, a = step()
    assert scaler.loss_scale == 512.0
    # the gradient was divided by the (new) loss scale: an SGD step of lr * 1 * batch(2)
    np.testing.assert_allclose(b - a, 0.1 * 2 * np.ones((2, 3)), rtol=1e-3)
    step()
    step()  # 3 clean steps in a row at 512
    assert scaler._next_loss_scale == 1024.0


def test_unscale(amp_on):
    net = gluon.nn.Dense(1, in_units=2)
    net.initialize(mx.init.One())
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    amp.init_trainer(trainer)
    trainer._amp_loss_scaler._loss_scale = trainer._amp_loss_scaler._next_loss_scale = 1024.0
    x = mx.nd.ones((1, 2))
    with autograd.record():
        loss = mx.nd.cast(net(x), dtype="float32").sum()
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)
    np.testing.assert_allclose(net.weight.grad().asnumpy(), 1024.0 * np.ones((1, 2)))
    amp.unscale(trainer)
    np.testing.assert_allclose(net.weight.grad().asnumpy(), np.ones((1, 2)))
    assert trainer._scale == 1.0
    trainer.step(1)
    np.testing.assert_allclose(net.weight.data().asnumpy(), np.zeros((1, 2)), atol=1e-6)
    with amp.scale_loss([loss, loss], trainer) as scaled:
        assert len(scaled) == 2 and float(scaled[0].asscalar()) == pytest.approx(2 * 1024.0)


def test_init_symbol_graph_matches_mxnet(amp_on):
    ref = FIX["init_symbol"]
    with mx.name.NameManager():
        d = mx.sym.var("data")
        s = mx.sym.FullyConnected(d, num_hidden=2, name="fc")
        a = mx.sym.Activation(s, act_type="softrelu", name="act")
        e = mx.sym.elemwise_add(a, s, name="add")
        c = mx.sym.concat(e, d, dim=1, name="cat")
    assert c.list_arguments() == ref["arguments"]
    assert c.get_internals().list_outputs() == ref["internals"]
    got = [[n["op"], n["name"], n.get("attrs", {}), [i[:2] for i in n["inputs"]]]
           for n in json.loads(c.tojson(remove_amp_cast=False))["nodes"]]
    assert got == ref["nodes"]


# -- properties of convert_symbol ------------------------------------------------------------------------
from hypothesis import given, settings, strategies as st  # noqa: E402

_LAYERS = st.lists(st.sampled_from(["fc", "relu", "softrelu", "exp", "residual", "tanh"]), min_size=1, max_size=6)


def _chain(layers):
    x = mx.sym.var("data")
    prev = x
    for i, kind in enumerate(layers):
        if kind == "fc":
            y = mx.sym.FullyConnected(prev, num_hidden=4, name=f"fc{i}")
        elif kind in ("relu", "softrelu"):
            y = mx.sym.Activation(prev, act_type=kind, name=f"act{i}")
        elif kind == "exp":
            y = mx.sym.exp(mx.sym.clip(prev, -2, 2, name=f"clip{i}"), name=f"exp{i}")
        elif kind == "tanh":
            y = mx.sym.tanh(prev, name=f"tanh{i}")
        else:
            y = mx.sym.elemwise_add(prev, mx.sym.relu(prev, name=f"r{i}"), name=f"add{i}")
        prev = y
    return mx.sym.FullyConnected(prev, num_hidden=3, name="out")


@settings(max_examples=25, deadline=None)
@given(_LAYERS)
def test_convert_symbol_properties(layers):
    sym = _chain(layers)
    out = amp.convert_symbol(sym, data_names=["data"])
    # removing the casts gives back the original graph (parameters gain __dtype__ only)
    strip = [[n["op"], n["name"], {k: v for k, v in n.get("attrs", {}).items() if k != "__dtype__"}, n["inputs"]]
             for n in json.loads(out.tojson())["nodes"]]
    orig = [[n["op"], n["name"], n.get("attrs", {}), n["inputs"]] for n in json.loads(sym.tojson())["nodes"]]
    assert strip == orig
    # low-precision ops read float16, float32 ops float32, and the graph outputs float32
    types = dict(zip(out.get_internals().list_outputs(),
                     out.get_internals().infer_type(data=np.float32)[1]))
    for n in topo_sort(out._outputs):
        if n.op == "FullyConnected":
            assert all(types[e[0].output_name(e[1])] == np.float16 for e in n.inputs), n.name
        if n.op == "exp" or (n.op == "Activation" and n.attrs["act_type"] == "softrelu"):
            assert types[n.inputs[0][0].output_name(n.inputs[0][1])] == np.float32, n.name
    assert out.infer_type(data=np.float32)[1] == [np.float32]
    # and it computes what the float32 graph computes, to float16 precision
    rng = np.random.RandomState(len(layers))
    shapes = dict(zip(sym.list_arguments(), sym.infer_shape(data=(3, 5))[0]))
    args = {k: mx.nd.array(rng.uniform(-0.5, 0.5, s)) for k, s in shapes.items()}
    ref = sym.bind(mx.cpu(), dict(args)).forward()[0].asnumpy()
    got = out.bind(mx.cpu(), dict(args)).forward()[0].asnumpy()
    np.testing.assert_allclose(got, ref, rtol=3e-2, atol=3e-2)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=30), st.integers(1, 4))
def test_loss_scaler_invariants(overflows, seq_len):
    ls = amp.LossScaler()
    ls._scale_seq_len = seq_len
    w = gluon.Parameter("w", shape=(1,))
    w.initialize()
    clean = 0
    for bad in overflows:
        w.grad()[:] = np.inf if bad else 0.5
        prev_next = ls._next_loss_scale
        assert ls.has_overflow([w]) == bad
        assert ls.loss_scale == prev_next  # a step uses the scale the previous check decided
        clean = 0 if bad else clean + 1
        if bad:
            assert ls._next_loss_scale == ls.loss_scale / 2
        elif clean % seq_len == 0:
            assert ls._next_loss_scale == min(2.0 ** 24, ls.loss_scale * 2)
        else:
            assert ls._next_loss_scale == ls.loss_scale
        assert np.log2(ls._next_loss_scale) == int(np.log2(ls._next_loss_scale)) <= 24


def test_init_with_unknown_op_names_it_and_patches_nothing():
    f = mx.nd.FullyConnected
    with pytest.raises(AttributeError, match="no_such_op"):
        amp.init(fp32_ops=["no_such_op"])
    assert mx.nd.FullyConnected is f or mx.nd.FullyConnected.__name__ == "FullyConnected"
    assert not getattr(mx.nd.FullyConnected, "__amp_wrapped__", False)
    assert mx.nd.FullyConnected(mx.nd.ones((1, 2)), mx.nd.ones((1, 2)), no_bias=True, num_hidden=1).dtype == np.float32


def test_init_with_custom_lists(amp_on_custom):
    y = mx.nd.FullyConnected(mx.nd.ones((1, 2)), mx.nd.ones((1, 2)), no_bias=True, num_hidden=1)
    assert y.dtype == np.float32  # FullyConnected not in the given target_precision_ops
    assert mx.nd.relu(mx.nd.ones((2,))).dtype == np.float16
    assert mx.nd.exp(mx.nd.ones((2,), dtype="float16")).dtype == np.float16  # the fp32 list was replaced


@pytest.fixture
def amp_on_custom():
    amp.init(target_precision_ops=["relu"], fp32_ops=["sqrt"], conditional_fp32_ops=[])
    try:
        yield
    finally:
        _restore()


def test_out_argument_is_written(amp_on):
    out = mx.nd.zeros((1, 1), dtype="float16")
    mx.nd.FullyConnected(mx.nd.ones((1, 2)), mx.nd.ones((1, 2)), no_bias=True, num_hidden=1, out=out)
    assert out.asnumpy()[0, 0] == 2.0


def test_default_lists_skip_operators_of_plugins_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in lists name MXNet's operators, some from plugins a user may not have
    (ops-contrib's MultiBox*): init() wraps those present; a user-given name must exist."""
    from plexnet.contrib.amp import amp as amp_mod
    monkeypatch.setattr(amp_mod, "list_lp16_ops", lambda kind: ["FullyConnected", "_contrib_NotInstalledOp"])
    try:
        amp.init()
        out = mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), no_bias=True, num_hidden=4)
        assert out.dtype == np.float16
    finally:
        _restore()
    with pytest.raises(AttributeError, match="_contrib_NotInstalledOp"):
        amp.init(target_precision_ops=["_contrib_NotInstalledOp"])
    assert mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), no_bias=True,
                                num_hidden=4).dtype == np.float32


def test_convert_bucketing_module_converts_every_bucket_and_the_parameters():
    # as MXNet 1.9.1's amp.convert_bucketing_module (checked side by side: the same bucket
    # keys, float16 parameters with cast_optional_params; MXNet's CPU FullyConnected then
    # refuses float16, plexnet runs it)
    import numpy as np
    import plexnet as mx
    from plexnet.contrib import amp

    def sym_gen(key):
        h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=8, name="fc1")
        h = mx.sym.FullyConnected(mx.sym.Activation(h, act_type="relu"), num_hidden=4, name="fc2")
        return mx.sym.SoftmaxOutput(h, name="softmax"), ("data",), ("softmax_label",)
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=10, context=mx.cpu())
    mod.bind(data_shapes=[("data", (2, 10))], label_shapes=[("softmax_label", (2,))])
    mod.init_params(mx.init.Uniform(0.5))
    mod.switch_bucket(5, [("data", (5, 10))], [("softmax_label", (5,))])
    x = mx.nd.array(np.arange(20).reshape(2, 10) / 20.0)
    batch = mx.io.DataBatch([x], [mx.nd.array([0, 1])], bucket_key=10, provide_data=[("data", (2, 10))],
                            provide_label=[("softmax_label", (2,))])
    mod.switch_bucket(10, [("data", (2, 10))], [("softmax_label", (2,))])
    mod.forward(batch, is_train=False)
    ref = mod.get_outputs()[0].asnumpy()
    res = amp.convert_bucketing_module(mod, "float16", cast_optional_params=True)
    assert amp.amp.convert_bucketing_module is amp.convert_bucketing_module   # MXNet's spelling too
    assert sorted(res._buckets) == [5, 10]
    args, _aux = res._curr_module._arg_params, res._curr_module._aux_params
    assert {k: v.dtype for k, v in args.items()} == {k: np.float16 for k in
                                                     ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")}
    res.bind(data_shapes=[("data", (2, 10))], label_shapes=[("softmax_label", (2,))], for_training=False)
    res.forward(batch, is_train=False)
    out = res.get_outputs()[0].asnumpy()
    np.testing.assert_allclose(out, ref, atol=2e-3)
    with pytest.raises(AssertionError, match="bucketing module"):
        amp.convert_bucketing_module(mod.symbol)
