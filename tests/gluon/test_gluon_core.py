"""gluon core: Parameter, ParameterDict, Block, HybridBlock (hybridized == imperative),
export/imports, Trainer."""
from __future__ import annotations

import numpy as np
import pytest

import plexnet as mx
from plexnet import autograd, gluon, nd
from plexnet.gluon import nn


def _mlp() -> nn.HybridSequential:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(16, activation="relu"), nn.Dense(8, activation="tanh"), nn.Dense(4))
    return net


def _lenet() -> nn.HybridSequential:
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, activation="tanh"), nn.MaxPool2D(), nn.Conv2D(6, 3), nn.BatchNorm(),
                nn.Activation("relu"), nn.AvgPool2D(), nn.Flatten(), nn.Dense(10))
    return net


def test_parameter_lifecycle_and_errors() -> None:
    p = gluon.Parameter("w", shape=(2, 0), allow_deferred_init=True, init=mx.init.One())
    with pytest.raises(RuntimeError, match="has not been initialized"):
        p.data()
    p.initialize(ctx=mx.cpu())
    with pytest.raises(gluon.DeferredInitializationError, match="deferred"):
        p.data()
    p.shape = (2, 3)
    p._finish_deferred_init()
    np.testing.assert_allclose(p.data().asnumpy(), np.ones((2, 3)))
    assert p.grad().shape == (2, 3) and p.list_ctx() == [mx.cpu()]
    p.set_data(nd.ones((2, 3)) * 5)
    np.testing.assert_allclose(p.list_data()[0].asnumpy(), 5)
    p.grad()[:] = 1
    p.zero_grad()
    np.testing.assert_allclose(p.list_grad()[0].asnumpy(), 0)
    with pytest.raises(ValueError, match="incompatible"):
        p.shape = (3, 3)
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    with pytest.raises(mx.PlexnetError, match="csr"):
        gluon.Parameter("s", shape=(2,), stype="csr")
    p.cast("float64")
    assert p.data().dtype == np.float64
    c = gluon.Constant("c", nd.array([1., 2.]))
    c.initialize()
    np.testing.assert_allclose(c.data().asnumpy(), [1., 2.])
    assert c.grad_req == "null"


def test_parameter_dict_prefix_select_and_sharing() -> None:
    net = _mlp()
    names = list(net.collect_params().keys())
    assert names[0].endswith("dense0_weight") and names[0].startswith(net.prefix)
    assert all(n.endswith("bias") for n in net.collect_params(".*bias").keys())
    assert len(net.collect_params(".*weight|.*bias")) == 6
    shared = nn.Dense(16, params=net[0].params)
    assert shared.weight is net[0].weight
    pd = gluon.ParameterDict("x_")
    a = pd.get("w", shape=(2, 0))
    assert pd.get("w", shape=(2, 5)) is a and a.shape == (2, 5)
    with pytest.raises(mx.PlexnetError, match="does not match"):
        pd.get("w", shape=(3, 5))


@pytest.mark.parametrize("make,shape", [(_mlp, (5, 10)), (_lenet, (2, 1, 12, 12))])
def test_hybridized_equals_imperative(make, shape) -> None:
    rng = np.random.RandomState(0)
    x = nd.array(rng.rand(*shape))
    net = make()
    net.initialize(mx.init.Xavier())
    net(x)  # finish deferred init
    params = net.collect_params()
    snap = {k: v.data().asnumpy().copy() for k, v in params.items()}
    results = []
    for hyb in (False, True):
        for k, v in params.items():
            v.set_data(nd.array(snap[k]))
        net.hybridize(hyb)
        with autograd.record():
            y = net(x)
            loss = (y * y).sum()
        loss.backward()
        results.append((y.asnumpy(), {k: v.grad().asnumpy().copy() for k, v in params.items()
                                      if v.grad_req != "null"},
                        {k: v.data().asnumpy().copy() for k, v in params.items()}))
    (y0, g0, d0), (y1, g1, d1) = results
    np.testing.assert_allclose(y1, y0, rtol=1e-5, atol=1e-6)
    for k in g0:
        np.testing.assert_allclose(g1[k], g0[k], rtol=1e-4, atol=1e-6, err_msg=k)
    for k in d0:  # running statistics too
        np.testing.assert_allclose(d1[k], d0[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_hybridized_graph_called_twice_before_backward() -> None:
    net = _mlp()
    net.initialize()
    net.hybridize()
    a, b = nd.array(np.random.rand(3, 10)), nd.array(np.random.rand(3, 10))
    with autograd.record():
        loss = (net(a) * 2).sum() + (net(b) * 3).sum()
    loss.backward()
    g = net[0].weight.grad().asnumpy().copy()
    net.hybridize(False)
    with autograd.record():
        loss = (net(a) * 2).sum() + (net(b) * 3).sum()
    loss.backward()
    np.testing.assert_allclose(g, net[0].weight.grad().asnumpy(), rtol=1e-5, atol=1e-6)


def test_gradient_to_input_through_hybridized_block() -> None:
    net = _mlp()
    net.initialize()
    x = nd.array(np.random.rand(2, 10))
    x.attach_grad()
    with autograd.record():
        y = net(x).sum()
    y.backward()
    gi = x.grad.asnumpy().copy()
    net.hybridize()
    with autograd.record():
        y = net(x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), gi, rtol=1e-5, atol=1e-6)


def test_export_imports_round_trip(tmp_path) -> None:
    net = _lenet()
    net.initialize()
    x = nd.array(np.random.rand(2, 1, 12, 12))
    net.hybridize()
    with autograd.record():  # moves BN statistics
        net(x)
    want = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "lenet"), epoch=3)
    assert params_file.endswith("lenet-0003.params")
    loaded = nd.load(params_file)
    assert any(k.startswith("aux:") and k.endswith("running_mean") for k in loaded)
    blk = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(blk(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    # and through Module
    sym, args, auxs = mx.model.load_checkpoint(str(tmp_path / "lenet"), 3)
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind([("data", x.shape)], for_training=False)
    mod.set_params(args, auxs)
    mod.forward(mx.io.DataBatch([x]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_export_needs_a_forward_first() -> None:
    with pytest.raises(RuntimeError, match="hybridize"):
        _mlp().export("/tmp/never")


def test_save_load_parameters(tmp_path) -> None:
    net = _mlp()
    net.initialize()
    x = nd.array(np.random.rand(2, 10))
    want = net(x).asnumpy()
    f = str(tmp_path / "mlp.params")
    net.save_parameters(f)
    assert sorted(nd.load(f)) == sorted(f"{i}.{w}" for i in range(3) for w in ("weight", "bias"))
    net2 = _mlp()
    net2.load_parameters(f)
    np.testing.assert_allclose(net2(x).asnumpy(), want, rtol=1e-6)
    net3 = nn.HybridSequential()
    with net3.name_scope():
        net3.add(nn.Dense(16), nn.Dense(8))
    with pytest.raises(mx.PlexnetError, match="not present"):
        net3.load_parameters(f)
    net3.load_parameters(f, ignore_extra=True)


def test_hooks_children_and_repr() -> None:
    net = _mlp()
    net.initialize()
    seen = []
    h = net.register_forward_hook(lambda blk, i, o: seen.append(o.shape))
    pre = net.register_forward_pre_hook(lambda blk, i: seen.append("pre"))
    net(nd.ones((2, 10)))
    h.detach()
    pre.detach()
    net(nd.ones((2, 10)))
    assert seen == ["pre", (2, 4)]
    assert "Dense(10 -> 16, Activation(relu))" in repr(net)
    with pytest.raises(ValueError, match="HybridSequential"):
        nn.HybridSequential().add(nn.Sequential())
    names = []
    net.apply(lambda b: names.append(type(b).__name__))
    assert names[-1] == "HybridSequential" and names.count("Dense") == 3


@pytest.mark.parametrize("kvstore,update_on_kvstore", [("device", None), ("local", True), ("local", False),
                                                       (None, None)])
def test_trainer_matches_manual_sgd(kvstore, update_on_kvstore) -> None:
    net = _mlp()
    net.initialize(ctx=[mx.cpu(0), mx.cpu(1)] if kvstore == "local" else mx.cpu())
    ctxs = net[0].weight.list_ctx()
    x = nd.array(np.random.rand(4, 10))
    net(x.as_in_context(ctxs[0]))
    before = {k: v.data(ctxs[0]).asnumpy().copy() for k, v in net.collect_params().items()}
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5, "wd": 0.0}, kvstore=kvstore,
                       update_on_kvstore=update_on_kvstore)
    grads = {}
    with autograd.record():
        losses = [(net(part) ** 2).sum() for part in gluon.utils.split_and_load(x, ctxs)]
    autograd.backward(losses)
    for k, v in net.collect_params().items():
        grads[k] = sum(g.asnumpy() for g in v.list_grad())
    tr.step(4)
    for k, v in net.collect_params().items():
        for d in v.list_data():
            np.testing.assert_allclose(d.asnumpy(), before[k] - 0.5 * grads[k] / 4, rtol=1e-4, atol=1e-6,
                                       err_msg=k)
    assert tr.learning_rate == 0.5
    tr.set_learning_rate(0.1)
    assert tr.learning_rate == 0.1


def test_trainer_stale_gradient_and_states(tmp_path) -> None:
    net = _mlp()
    net.initialize()
    tr = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    x = nd.ones((2, 10))
    with autograd.record():
        y = net(x).sum()
    y.backward()
    tr.step(2)
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        tr.step(2)
    tr.step(2, ignore_stale_grad=True)
    f = str(tmp_path / "t.states")
    tr.save_states(f)
    tr2 = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    tr2.load_states(f)
    assert tr2.optimizer.num_update == tr.optimizer.num_update


# "_"-names are helpers (contrib.svrg_optimization's _svrgoptimizer wraps another optimizer and
# registers itself only once that module is imported): not standalone optimizers
@pytest.mark.parametrize("name", [n for n in mx.optimizer.list_optimizers() if n != "test" and not n.startswith("_")])
def test_trainer_runs_every_optimizer(name) -> None:
    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize()
    before = net.weight.data().asnumpy().copy()
    # GroupAdaGrad takes 2-D weights only (MXNet asserts the same): the bias stays out
    params = net.collect_params(".*weight" if name == "groupadagrad" else None)
    tr = gluon.Trainer(params, name, {"learning_rate": 0.1})
    with autograd.record():
        loss = (net(nd.ones((2, 4))) ** 2).sum()
    loss.backward()
    tr.step(2)
    after = net.weight.data().asnumpy()
    assert np.all(np.isfinite(after)) and not np.allclose(after, before), name


def test_lr_mult_and_grad_req_add() -> None:
    net = nn.Dense(2, in_units=2, use_bias=False)
    net.initialize(mx.init.One())
    net.weight.lr_mult = 0.0
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    with autograd.record():
        net(nd.ones((1, 2))).sum().backward()
    tr.step(1)
    np.testing.assert_allclose(net.weight.data().asnumpy(), 1.0)  # lr_mult 0: unchanged
    net.weight.grad_req = "add"
    net.weight.zero_grad()
    for _ in range(2):
        with autograd.record():
            net(nd.ones((1, 2))).sum().backward()
    np.testing.assert_allclose(net.weight.grad().asnumpy(), 2.0)


@pytest.mark.parametrize("order", ["block_first", "block_last"])
def test_hybridized_parameter_also_used_outside_the_block(order) -> None:
    """The executor writes parameter gradients in place; another use of the parameter
    in the same graph must still be added, whichever runs first in backward."""
    results = []
    for hyb in (False, True):
        net = nn.Dense(3, in_units=4)
        net.initialize(mx.init.One())
        net.hybridize(hyb)
        x = nd.array(np.arange(8).reshape(2, 4))
        with autograd.record():
            w = net.weight.data()
            if order == "block_first":
                loss = (net(x) ** 2).sum() + (w * 3).sum()
            else:
                loss = (w * 3).sum() + (net(x) ** 2).sum()
        loss.backward()
        results.append(net.weight.grad().asnumpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5)


def test_autograd_grad_through_hybridized_block_leaves_param_grad_alone() -> None:
    net = nn.Dense(3, in_units=4)
    net.initialize(mx.init.One())
    net.hybridize()
    x = nd.ones((2, 4))
    net.weight.grad()[:] = 7
    with autograd.record():
        y = (net(x) ** 2).sum()
    gw = autograd.grad(y, [net.weight.data()])[0]
    np.testing.assert_allclose(net.weight.grad().asnumpy(), 7.0)
    net.hybridize(False)
    with autograd.record():
        y = (net(x) ** 2).sum()
    gw2 = autograd.grad(y, [net.weight.data()])[0]
    np.testing.assert_allclose(gw.asnumpy(), gw2.asnumpy(), rtol=1e-6)


def test_hybridized_grad_req_add_accumulates() -> None:
    net = nn.Dense(3, in_units=4)
    net.initialize(mx.init.One())
    net.collect_params().setattr("grad_req", "add")
    net.hybridize()
    x = nd.ones((2, 4))
    for _ in range(3):
        with autograd.record():
            y = net(x).sum()
        y.backward()
    np.testing.assert_allclose(net.weight.grad().asnumpy(), 3 * 2.0)


@pytest.mark.parametrize("hybrid", [False, True])
def test_backward_inside_record_block(hybrid) -> None:
    """MXNet's tutorials call backward inside ``with autograd.record():``."""
    net = _mlp()
    net.initialize()
    net.hybridize(hybrid)
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x, y = nd.array(np.random.rand(4, 10)), nd.array([0, 1, 2, 3])
    for _ in range(2):
        with autograd.record():
            loss = loss_fn(net(x), y)
            loss.backward()
        tr.step(4)
    assert np.isfinite(net[0].weight.data().asnumpy()).all()



def _dense_chain(mx, prefix, *in_units):
    net = mx.gluon.nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(*[mx.gluon.nn.Dense(2, in_units=u) for u in in_units])
    net.initialize()
    return net


def test_load_errors_are_mxnets_exception_types(tmp_path) -> None:
    """MXNet 1.9.1 asserts a missing or incompatible saved parameter (AssertionError) and
    raises ValueError for one the block lacks; plexnet's errors are those types too."""
    import plexnet as mx
    small, big = str(tmp_path / "small.params"), str(tmp_path / "big.params")
    _dense_chain(mx, "s_", 3).save_parameters(small)
    _dense_chain(mx, "s_", 3, 2).save_parameters(big)
    with pytest.raises(AssertionError, match="is missing in file"):
        _dense_chain(mx, "s_", 3, 2).load_parameters(small)
    with pytest.raises(ValueError, match="is not present in"):
        _dense_chain(mx, "s_", 3).load_parameters(big)
    with pytest.raises(AssertionError, match="shape incompatible"):
        _dense_chain(mx, "s_", 4).load_parameters(small)


def test_registry_and_shape_errors_are_assertion_errors_too() -> None:
    """MXNet 1.9.1 asserts an unknown initializer / metric name and a parameter shape that
    does not fit; plexnet's ValueErrors are AssertionErrors as well."""
    import plexnet as mx
    for make in (lambda: mx.init.create("nonsense"), lambda: mx.metric.create("nonsense")):
        with pytest.raises(AssertionError, match="not registered"):
            make()
    with pytest.raises(ValueError, match="Cannot find optimizer"):   # MXNet's ValueError
        mx.optimizer.create("nonsense")
    p = mx.gluon.Parameter("w", shape=(2,))
    p.initialize()
    with pytest.raises(AssertionError, match="incompatible"):
        p.set_data(mx.nd.ones((3,)))
